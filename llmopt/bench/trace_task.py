"""The ``trace`` task kind: what one task of a trace suite computes (continuous time, DESIGN §2).

A trace suite (``Suite(kind="trace")``) samples a continuous-time instance from a real
trace (:func:`llmopt.workloads.traces.data.trace_workload`), runs every policy of the suite through the continuous
engine with the suite's cost model, re-verifies every schedule with the checker's
continuous-time mode, and records per policy: the mean end-to-end latency (seconds), its
verification, whether the policy fell into an eviction loop, the recomputed tokens, the
evictions, the makespan, the peak memory, and the GPU-seconds and energy per request
(:func:`llmopt.engine.hardware.gpu_cost_per_request`: busy seconds × 2 GPUs, × 400 W). No
hindsight bound is computed here (the
bounds at trace scale are a later step).

Policies are spec strings (:func:`llmopt.policies.parse_policy_spec`), e.g.
``"alpha-protection:alpha=0.2,beta=0.1"``; a policy with a ``seed`` parameter gets the
task's seed unless its spec fixes one, so the clearing randomness varies across trials
and is reproducible.

Trace files are named relative to the data folder
(:func:`llmopt.workloads.traces.data.data_dir`).
"""

from __future__ import annotations

import time
from typing import Any

from llmopt.bench.kinds import TaskKind
from llmopt.bench.suites import Suite, Task
from llmopt.bench.tasks import resolve_workload

__all__ = ["KIND", "blank_trace_record", "fill_trace_record", "policy_field"]


def policy_field(kind: str, spec: str) -> str:
    """Record field of one policy's value, e.g. ``latency_mc-sf``."""
    return f"{kind}_{spec}"


_PER_POLICY = ("latency", "verified", "status", "recomputed", "evictions", "makespan", "peak_memory", "iterations",
               "sim_s", "latency_p50", "latency_p99", "ttft_mean", "ttft_p99", "tbt_mean", "gpu_s", "energy_j")


def blank_trace_record(suite: Suite, task: Task) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "suite": suite.name,
        "kind": "trace",
        "workload": task.spec.workload,
        "params": dict(task.spec.params),
        "seed": task.seed,
        "instance": None,
        "n": None,
        "M": None,
        "cost_model": suite.cost_model,
        "reference": suite.reference,
        "status": None,
        "tel": None,
    }
    for p in suite.policies:
        for k in _PER_POLICY:
            rec[policy_field(k, p)] = None
    rec.update({"runtime_s": None, "warnings": [], "error": None})
    return rec


def fill_trace_record(rec: dict[str, Any], suite: Suite, task: Task) -> None:
    """Simulate and verify every policy of ``suite`` on the task's instance (fills ``rec``)."""
    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.engine.discrete import EvictionLoopError
    from llmopt.engine.hardware import gpu_cost_per_request
    from llmopt.model.metrics import percentiles, timed_request_rows
    from llmopt.policies import make_policy_spec
    from llmopt.verify.timed import check_timed_run

    instance = resolve_workload(task.spec.workload)(task.seed, **dict(task.spec.params))
    rec.update(instance=instance.name, n=instance.n, M=instance.M)
    cost = make_cost_model(suite.cost_model)
    warnings: list[str] = rec["warnings"]
    for p in suite.policies:
        t0 = time.perf_counter()
        try:
            sched = simulate_continuous(instance, make_policy_spec(p, seed=task.seed), cost,
                                        loop_limit=suite.loop_limit)
        except EvictionLoopError as exc:
            rec[policy_field("status", p)] = "eviction-loop"
            rec[policy_field("recomputed", p)] = exc.recomputed_tokens
            rec[policy_field("evictions", p)] = exc.evictions
            rec[policy_field("iterations", p)] = exc.t
            rec[policy_field("sim_s", p)] = round(time.perf_counter() - t0, 3)
            warnings.append(f"policy {p}: {exc}")
            continue
        except Exception as exc:  # one failing policy must not cost the others
            rec[policy_field("status", p)] = "error"
            rec[policy_field("verified", p)] = False
            warnings.append(f"policy {p}: {type(exc).__name__}: {exc}")
            # ... but the task failed: it counts as an error (summary, exit status, --retry-errors)
            rec["error"] = rec["error"] or f"policy {p} raised {type(exc).__name__}: {exc}"
            continue
        sim_s = time.perf_counter() - t0
        check = check_timed_run(instance, sched, cost)
        mean = sched.mean_latency
        verified = bool(check.ok) and check.mean_latency is not None and mean is not None and \
            abs(check.mean_latency - mean) <= 1e-9 * max(1.0, mean)
        rec[policy_field("status", p)] = "ok" if verified else "rejected"
        rec[policy_field("verified", p)] = verified
        rec[policy_field("latency", p)] = check.mean_latency if verified else None
        rec[policy_field("recomputed", p)] = sched.recomputed_tokens
        rec[policy_field("evictions", p)] = len(sched.evictions)
        rec[policy_field("makespan", p)] = sched.makespan
        rec[policy_field("peak_memory", p)] = sched.peak_memory
        rec[policy_field("iterations", p)] = sched.iterations
        rec[policy_field("sim_s", p)] = round(sim_s, 3)
        if verified:  # what users of serving simulators read: tail latency, time to first token, between tokens
            rows = timed_request_rows(instance, sched)
            lat, ttft = percentiles(r["latency_s"] for r in rows), percentiles(r["ttft_s"] for r in rows)
            rec[policy_field("latency_p50", p)], rec[policy_field("latency_p99", p)] = lat.p50, lat.p99
            rec[policy_field("ttft_mean", p)], rec[policy_field("ttft_p99", p)] = ttft.mean, ttft.p99
            rec[policy_field("tbt_mean", p)] = percentiles(r["mean_tbt_s"] for r in rows).mean
            # per request: GPU-seconds (2 GPUs per worker) and energy at the A100's board power
            rec[policy_field("gpu_s", p)], rec[policy_field("energy_j", p)] = gpu_cost_per_request(
                sched.busy_seconds, instance.n)
        if not verified:
            why = check.violations[0] if check.violations else f"checker mean {check.mean_latency} != {mean}"
            warnings.append(f"policy {p}: schedule rejected by the checker: {why}")
    ref = rec.get(policy_field("latency", suite.reference))
    rec["tel"] = None if ref is None else ref * instance.n
    rec["status"] = rec.get(policy_field("status", suite.reference))


#: The ``trace`` task kind (registered in :data:`llmopt.bench.tasks.TASK_KINDS`).
KIND = TaskKind("trace", blank_trace_record, fill_trace_record, "llmopt.report.trace:write_trace_report")
