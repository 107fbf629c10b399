"""The ``capacity`` task kind: the smallest number of workers per policy × router on one trace sample.

A capacity suite (``Suite(kind="capacity")``) samples a continuous-time instance as a trace suite
does, then for every policy × router of the suite tries K = 1, 2, … up to ``suite.k_max`` workers
(:func:`llmopt.capacity.planning.plan_capacity` with ``exhaustive=True``: no monotonicity assumed)
until the suite's latency target is met, then one K more for the latency-vs-K figure. Every run
goes through the multi-worker engine with the suite's cost model and is re-verified by the
independent cluster checker. Records, per pair ``P@R``: ``workers_P@R`` (the smallest K, ``None``
if none up to ``k_max``), ``curve_P@R`` (K → ``{status, mean, p50, p90, p99, gpu_s, energy_j}`` and
the TTFT / TBT statistics ``ttft_mean … tbt_p99``), and at the smallest K ``mean_P@R``, ``p99_P@R``,
``gpu_s_P@R``, ``energy_j_P@R``.
"""

from __future__ import annotations

from typing import Any

from llmopt.bench.kinds import TaskKind
from llmopt.bench.suites import Suite, Task
from llmopt.bench.tasks import resolve_workload

__all__ = ["KIND", "pair_field", "blank_capacity_record", "fill_capacity_record"]

_PER_PAIR = ("workers", "curve", "mean", "p99", "gpu_s", "energy_j")


def pair_field(kind: str, policy: str, router: str) -> str:
    """Record field of one policy × router value, e.g. ``workers_mc-sf@round-robin``."""
    return f"{kind}_{policy}@{router}"


def blank_capacity_record(suite: Suite, task: Task) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "suite": suite.name, "kind": "capacity", "workload": task.spec.workload, "params": dict(task.spec.params),
        "seed": task.seed, "instance": None, "n": None, "M": None, "cost_model": suite.cost_model,
        "latency_target": suite.latency_target, "k_max": suite.k_max, "status": None,
    }
    for p in suite.policies:
        for r in suite.routers:
            for k in _PER_PAIR:
                rec[pair_field(k, p, r)] = None
    rec.update({"runtime_s": None, "warnings": [], "error": None})
    return rec


def fill_capacity_record(rec: dict[str, Any], suite: Suite, task: Task) -> None:
    """Search the smallest K for every policy × router of ``suite`` on the task's instance (fills ``rec``)."""
    from llmopt.capacity.planning import TARGET_STATS, LatencyTarget, plan_capacity, run_cluster
    from llmopt.engine.cost_model import make_cost_model

    instance = resolve_workload(task.spec.workload)(task.seed, **dict(task.spec.params))
    rec.update(instance=instance.name, n=instance.n, M=instance.M)
    cost = make_cost_model(suite.cost_model)
    target = LatencyTarget.parse(suite.latency_target)
    for p in suite.policies:
        for r in suite.routers:
            res, runs = plan_capacity(instance, p, r, target, cost, seed=task.seed, k_max=suite.k_max,
                                      exhaustive=True, loop_limit=suite.loop_limit)
            if res.workers is not None and res.workers < suite.k_max:  # one past the answer, for the figure
                runs.append(run_cluster(instance, p, r, res.workers + 1, cost, seed=task.seed,
                                        loop_limit=suite.loop_limit))
            rec[pair_field("workers", p, r)] = res.workers
            rec[pair_field("curve", p, r)] = {
                str(run.K): {"status": run.status, "mean": run.mean, "p50": run.p50, "p90": run.p90, "p99": run.p99,
                             "gpu_s": run.gpu_s, "energy_j": run.energy_j, "sim_s": round(run.sim_s, 3),
                             **{s: run.statistic(s) for s in TARGET_STATS if "_" in s}}
                for run in runs}
            best = next((run for run in runs if run.K == res.workers), None)
            if best is not None:
                for k in ("mean", "p99", "gpu_s", "energy_j"):
                    rec[pair_field(k, p, r)] = getattr(best, k)
            rejected = [run.K for run in runs if run.status == "rejected"]
            if rejected:
                rec["warnings"].append(f"{p} × {r}: the checker rejected the run at K = {rejected}")
    rec["status"] = "ok"


#: The ``capacity`` task kind (registered in :data:`llmopt.bench.kinds.TASK_KINDS`).
KIND = TaskKind("capacity", blank_capacity_record, fill_capacity_record,
                "llmopt.report.capacity:write_capacity_report")
