"""Suite ``jaillet-capacity``: J0 §8.2's GPU-count claim checked with the multi-worker engine (issue 26).

J0 §8.2 (DIGEST §4.3): "if the latency cap is set at 200 seconds, then with Algorithm 2 [MC-SF],
two linked A100 GPUs could handle up to 10,000 arrivals while remaining below this latency cap …
we need more than 8 A100 GPUs to reach the 200 seconds cap" with the benchmark algorithms; the
introduction says it of "high demand" (λ = 50). A worker here is Llama-2-70B on 2×A100 (the cost
model, M = 16,492), so the claim reads: MC-SF needs K = 1 worker, the best benchmark K > 4.

The suite samples 10,000 LMSYS arrivals at λ = 50 and 10 /s (seeds 0–2) and, for each of J's eight
Table 1 algorithms under each router, tries K = 1, 2, … workers until the mean latency is at most
200 s (:mod:`llmopt.bench.capacity_task`). :func:`capacity_claim` is its ``extra_report``:
``claim.md`` puts the measured K beside the paper's statement per demand level, and :func:`queue_report` measures
the mechanism — requests waiting and running over time at K = 1 … 4 (seed 0, λ = 50) — and J0's "8 GPUs" read as
one worker with 4× the memory (:data:`QUEUE_SETTINGS`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmopt.bench.suites import Suite, WorkloadSpec
from llmopt.papers.jaillet.fig3 import CAP_S, RATES, display_name
from llmopt.papers.jaillet.suites import J52_POLICIES, LMSYS_TRACE

__all__ = ["JAILLET_CAPACITY", "CAPACITY_ROUTERS", "QUEUE_SETTINGS", "QueueSetting", "capacity_claim", "claim_rows",
           "queue_run", "queue_report", "scaled_cost_model"]

#: Routers compared: J0's single worker generalised by the plainest router, by queue length, and by
#: MC-SF's own look-ahead check.
CAPACITY_ROUTERS = ("round-robin", "jsq", "lookahead")
#: J0 §8.2 in workers of 2 GPUs: MC-SF 1 worker; the best benchmark more than 4 ("more than 8 A100s").
PAPER_WORKERS = {"mc-sf": 1, "best benchmark": 5}

JAILLET_CAPACITY = Suite(
    name="jaillet-capacity",
    bounds=("lp",),  # unused by a capacity suite; pinned so the stored settings do not follow a default
    description="J0 §8.2: the smallest number of Llama2-70B 2×A100 workers (M = 16,492 each) each of J's eight "
                "Table 1 algorithms needs to keep the mean latency of 10,000 LMSYS arrivals at or under 200 s, "
                "λ = 50 and 10 /s, routers round-robin / join-shortest-queue / look-ahead; seeds 0–2",
    workloads=tuple(
        WorkloadSpec("trace", (0, 1, 2), {"trace": LMSYS_TRACE, "format": "lmsys", "n": 10_000, "rate": rate,
                                          "on_bad_row": "drop"}, f"lmsys n=10000 λ={rate}")
        for rate in RATES),
    policies=J52_POLICIES,
    kind="capacity",
    routers=CAPACITY_ROUTERS,
    latency_target=f"mean:{CAP_S:g}",
    k_max=16,
    extra_report="llmopt.papers.jaillet.capacity:capacity_claim",
)


def claim_rows(df: Any) -> list[dict[str, Any]]:
    """Per (workload, router): MC-SF's smallest K and the best benchmark's (smallest K over the six α / β
    configurations and MC-Benchmark), as min–max over seeds, beside J0's 1 and > 4."""
    rows = []
    for (label, router), g in df.groupby(["workload", "router"], sort=False):
        mcsf = g[g["policy"] == "mc-sf"].iloc[0]
        bench = g[g["policy"] != "mc-sf"]
        per_seed = [[int(k) if k != "—" else None for k in str(s).split()] for s in bench["workers_by_seed"]]
        best = [min((v for v in col if v is not None), default=None) for col in zip(*per_seed)] if per_seed else []
        which = sorted({str(p) for p, s in zip(bench["policy"], per_seed) for i, v in enumerate(s)
                        if v is not None and v == best[i]})
        rows.append({"workload": label, "router": router, "mc_sf": str(mcsf["workers_by_seed"]),
                     "best_benchmark": " ".join("—" if b is None else str(b) for b in best),
                     "best_by": ", ".join(display_name(p) for p in which)})
    return rows


def latency_by_k_lines(records: Sequence[Mapping[str, Any]], suite: Suite, router: str) -> list[str]:
    """Per workload, a table of the mean latency (mean over seeds, seconds) at every K tried with ``router``;
    ``loop (s/n)`` where ``s`` of ``n`` seeds hit the loop guard at that K."""
    from llmopt.bench.capacity_task import pair_field
    from llmopt.bench.store import latest_records

    recs = [r for r in latest_records([dict(r) for r in records]) if not r.get("error")]
    lines = []
    for spec in suite.workloads:
        mine = [r for r in recs if suite.label_for(r["workload"], r.get("params") or {}) == spec.label]
        ks = sorted({int(k) for r in mine for p in suite.policies
                     for k in (r.get(pair_field("curve", p, router)) or {})})
        if not ks:
            continue
        lines += ["", f"## {spec.label}: mean latency (s) by K, router {router}, mean over seeds", "",
                  "| algorithm | " + " | ".join(f"K = {k}" for k in ks) + " |", "|---|" + "---|" * len(ks)]
        for p in suite.policies:
            cells = []
            for k in ks:
                runs: list[dict[str, Any]] = [x for r in mine
                                              if (x := (r.get(pair_field("curve", p, router)) or {}).get(str(k)))]
                vals = [x["mean"] for x in runs if x.get("mean") is not None]
                loops = sum(1 for x in runs if x["status"] == "eviction-loop")
                cell = "—" if not runs else (f"{sum(vals) / len(vals):,.1f}" if vals else "")
                if loops:
                    cell = (cell + " " if vals else "") + f"loop ({loops}/{len(runs)})"
                cells.append(cell)
            lines.append(f"| {display_name(p)} | " + " | ".join(cells) + " |")
    return lines


def capacity_claim(out_dir: str | Path, suite: Suite, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ``extra_report`` of ``jaillet-capacity``: ``claim.md`` (see the module docstring)."""
    from llmopt.report.capacity import capacity_summary

    out = Path(out_dir)
    df = capacity_summary(records, suite)
    lines = ["# J0 §8.2: workers needed for a 200 s mean latency at 10,000 arrivals", "",
             "Smallest number of workers K (each Llama-2-70B on 2×A100, so 2K GPUs) per seed. J0: MC-SF needs "
             f"{PAPER_WORKERS['mc-sf']} worker (2 GPUs) at high demand; the best benchmark more than 8 GPUs, i.e. "
             f"K ≥ {PAPER_WORKERS['best benchmark']}. *Best benchmark*: the smallest K over MC-Benchmark and the six "
             "α / β configurations, per seed.", "",
             "| workload | router | MC-SF K by seed | best benchmark K by seed | attained by |",
             "|---|---|---|---|---|"]
    for row in claim_rows(df):
        lines.append(f"| {row['workload']} | {row['router']} | {row['mc_sf']} | {row['best_benchmark']} | "
                     f"{row['best_by']} |")
    lines += latency_by_k_lines(records, suite, CAPACITY_ROUTERS[0])
    (out / "claim.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["claim.md: J0 §8.2's GPU-count claim beside the measured smallest K"] + queue_report(out, suite)


# --- the mechanism: queue length over time, and J0's "8 GPUs" as one larger worker -------------------------


@dataclass(frozen=True)
class QueueSetting:
    """One panel of ``queue_over_time.png``: ``K`` round-robin workers, each with ``memory_factor`` × the suite's
    ``M`` and every batch ``speedup`` × faster than the suite's cost model says."""

    label: str
    K: int
    memory_factor: int = 1
    speedup: float = 1.0


#: K = 1 … 4 workers of M = 16,492 tokens, and J0's "8 A100 GPUs" read as one worker (J0's memory formula is
#: "80 × number of A100 GPUs") with 4× the KV cache: with the same batch-time model (the memory of 8 GPUs, the
#: speed of 2: the slow end) and with every batch 4× faster (tensor parallelism over 8 GPUs scaling perfectly:
#: the fast end; a real 8-way split adds all-reduce time, so it lies between the two).
QUEUE_SETTINGS = (*(QueueSetting(f"K = {k}", k) for k in (1, 2, 3, 4)),
                  QueueSetting("1 worker, 4×M, same batch time", 1, 4, 1.0),
                  QueueSetting("1 worker, 4×M, batch time ÷ 4", 1, 4, 4.0))
#: The grid of ``queue_over_time.csv`` (seconds).
QUEUE_STEP_S = 3.0
#: The queue study's workload: the high-demand one (λ = 50 /s), seed 0, router round-robin.
QUEUE_RATE, QUEUE_SEED, QUEUE_ROUTER = 50, 0, "round-robin"


def scaled_cost_model(cost: Any, speedup: float) -> Any:
    """``cost`` (a :class:`~llmopt.engine.cost_model.LinearCostModel`) with every batch ``speedup`` × faster:
    each time coefficient divided by ``speedup``, the knots (tokens) kept, so ``batch_time`` is divided exactly."""
    if speedup == 1:
        return cost
    from llmopt.engine.cost_model import LinearCostModel

    if not isinstance(cost, LinearCostModel):
        raise TypeError(f"scaled_cost_model: needs a LinearCostModel, got {type(cost).__name__}")
    times = ("base", "per_token", "slope_1", "slope_2", "per_prefill_sq", "per_context_token", "per_request")
    return dataclasses.replace(cost, name=f"{cost.name}/{speedup:g}",
                               **{f: getattr(cost, f) / speedup for f in times})


def queue_run(suite: Suite, setting: QueueSetting, policy: str, *, rate: int = QUEUE_RATE, seed: int = QUEUE_SEED,
              step_s: float = QUEUE_STEP_S) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Simulate ``policy`` in ``setting`` on the suite's workload at ``rate`` (``seed``), verify the run with
    the cluster checker, and count the requests waiting and running every ``step_s`` seconds up to the end
    of the last batch (:func:`llmopt.report.capacity.queue_over_time`).

    Returns
    -------
    summary : dict
        ``setting``, ``K``, ``M``, ``speedup``, ``policy``, ``mean_s``, ``makespan_s``, the last arrival
        ``window_s``, ``waiting_half_window`` / ``waiting_end_window`` (at the grid points nearest half the
        arrival window and at its end, ``t_half_s`` / ``t_end_s``), ``peak_waiting``, ``served_per_s``
        (requests ÷ makespan), ``fluid_fcfs_s`` = (makespan − last arrival) / 2 (the mean latency of a
        first-come-first-served queue that is never empty from the first arrival to the makespan: request ``j``
        of ``n`` arrives at ``j·W/n`` and completes at about ``j·makespan/n``) and ``evictions``.
    rows : list of dict
        ``setting, policy, t_s, waiting, running``, one per grid point.
    """
    import functools

    from llmopt.engine.cluster import simulate_cluster
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.engine.discrete import EvictionLoopError
    from llmopt.policies import make_policy_spec
    from llmopt.policies.routers import make_router_spec
    from llmopt.report.capacity import queue_over_time
    from llmopt.verify.cluster import check_cluster_schedule
    from llmopt.workloads import WORKLOADS

    spec = next(w for w in suite.workloads if w.params.get("rate") == rate)
    params = dict(spec.params)
    M = int(params.get("M", 16_492)) * setting.memory_factor
    inst = WORKLOADS.get(spec.workload)(seed, **(params | {"M": M}))
    cost = scaled_cost_model(make_cost_model(suite.cost_model), setting.speedup)
    try:
        sched = simulate_cluster(inst, functools.partial(make_policy_spec, policy, seed=seed),
                                 make_router_spec(QUEUE_ROUTER, seed=seed), setting.K, cost_model=cost,
                                 loop_limit=suite.loop_limit)
    except EvictionLoopError as exc:
        return {"setting": setting.label, "K": setting.K, "M": M, "speedup": setting.speedup, "policy": policy,
                "status": f"eviction loop ({exc.completed:,} of {inst.n:,} done)"}, []
    rep = check_cluster_schedule(inst, sched, cost)
    if not rep.ok:
        raise RuntimeError(f"{setting.label} {policy}: the cluster checker rejected the run: {rep.violations[:1]}")
    window = max(r.arrival for r in inst.requests)
    t_end = math.ceil(window / step_s) * step_s
    t_half = round(window / 2 / step_s) * step_s
    times = [i * step_s for i in range(int(math.ceil(sched.makespan / step_s)) + 1)]
    waiting, running = queue_over_time(inst, sched, times)
    at = dict(zip(times, waiting))
    summary = {"setting": setting.label, "K": setting.K, "M": M, "speedup": setting.speedup, "policy": policy,
               "status": "ok", "mean_s": sched.mean_latency, "makespan_s": sched.makespan, "window_s": window,
               "t_half_s": t_half, "waiting_half_window": at[t_half], "t_end_s": t_end,
               "waiting_end_window": at[t_end], "peak_waiting": max(waiting),
               "served_per_s": inst.n / sched.makespan, "fluid_fcfs_s": (sched.makespan - window) / 2,
               "evictions": sum(len(w.evictions) for w in sched.workers)}
    rows = [{"setting": setting.label, "policy": policy, "t_s": t, "waiting": wt, "running": rn}
            for t, wt, rn in zip(times, waiting, running)]
    return summary, rows


def queue_report(out_dir: str | Path, suite: Suite, *, settings: Sequence[QueueSetting] = QUEUE_SETTINGS,
                 policies: Sequence[str] | None = None, big_worker_seeds: Sequence[int] = (0, 1, 2)) -> list[str]:
    """Write ``queue_over_time.csv`` / ``.png`` and ``queue_by_k.csv`` / ``.md`` (every setting × policy, seed 0,
    λ = 50, round-robin) into ``out_dir``, and ``one_worker_4x.csv`` (the settings with more memory per worker,
    seeds ``big_worker_seeds``: ``setting, seed, policy, status, mean_s, makespan_s``); returns one line per file."""
    import csv

    from llmopt.report.capacity import plot_queue_over_time

    out = Path(out_dir)
    summaries, rows, big = [], [], []
    for setting in settings:
        for p in policies or suite.policies:
            summary, trace = queue_run(suite, setting, p)
            summaries.append(summary)
            rows += trace
            if setting.memory_factor == 1:
                continue
            for seed in big_worker_seeds:
                got = summary if seed == QUEUE_SEED else queue_run(suite, setting, p, seed=seed)[0]
                big.append({"setting": setting.label, "seed": seed, "policy": p, "status": got["status"],
                            "mean_s": got.get("mean_s", ""), "makespan_s": got.get("makespan_s", "")})
    for name, table in (("queue_over_time.csv", rows), ("queue_by_k.csv", summaries), ("one_worker_4x.csv", big)):
        if not table:
            continue
        with (out / name).open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(k for r in table for k in r)), restval="")
            writer.writeheader()
            writer.writerows(table)
    first = next(s for s in summaries if s["status"] == "ok")
    window = first["window_s"]
    plot_queue_over_time([r | {"policy": display_name(r["policy"])} for r in rows], out / "queue_over_time.png",
                         window_s=window, title=f"lmsys n=10000 λ={QUEUE_RATE}, seed {QUEUE_SEED}, router "
                         f"{QUEUE_ROUTER}: waiting (solid) and running (dotted) requests; dashed: last arrival")
    lines = [f"# Queue length over time, λ = {QUEUE_RATE}, seed {QUEUE_SEED}, router {QUEUE_ROUTER}", "",
             "Requests waiting (arrived, not running: queued or evicted) and running, summed over the workers, "
             f"every {QUEUE_STEP_S:g} s (`queue_over_time.csv`, `queue_over_time.png`). Last arrival at "
             f"{window:.1f} s. *Served /s*: requests ÷ makespan (the arrival rate is {QUEUE_RATE} /s). "
             "*4×M* settings: J0's \"8 A100 GPUs\" as one worker with 4× the KV cache "
             f"(M = {4 * 16_492:,}), with the same batch-time model or every batch 4× faster. *(makespan − last "
             "arrival) / 2*: the mean latency of a first-come-first-served queue that never empties before the "
             "makespan (request j of n arrives at j·W/n and completes at about j·makespan/n).", "",
             "| setting | algorithm | mean latency (s) | makespan (s) | served /s | waiting at "
             f"{first['t_half_s']:g} s | waiting at {first['t_end_s']:g} s | peak waiting | evictions | "
             "(makespan − last arrival) / 2 (s) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        if s["status"] != "ok":
            lines.append(f"| {s['setting']} | {display_name(s['policy'])} | {s['status']} | | | | | | | |")
            continue
        lines.append(f"| {s['setting']} | {display_name(s['policy'])} | {s['mean_s']:.1f} | {s['makespan_s']:.0f} | "
                     f"{s['served_per_s']:.1f} | {s['waiting_half_window']:,} | {s['waiting_end_window']:,} | "
                     f"{s['peak_waiting']:,} | {s['evictions']:,} | {s['fluid_fcfs_s']:.1f} |")
    if big:
        seeds = ", ".join(map(str, big_worker_seeds))
        lines += ["", f"## One worker with 4× the memory, seeds {seeds}: mean latency (s)", "",
                  "| setting | algorithm | " + " | ".join(f"seed {x}" for x in big_worker_seeds) + " |",
                  "|---|---|" + "---|" * len(big_worker_seeds)]
        for label, p in dict.fromkeys((b["setting"], b["policy"]) for b in big):
            cells = [f"{b['mean_s']:.1f}" if b["status"] == "ok" else b["status"]
                     for b in big if b["setting"] == label and b["policy"] == p]
            lines.append(f"| {label} | {display_name(p)} | " + " | ".join(cells) + " |")
    (out / "queue_by_k.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["queue_over_time.csv / .png: requests waiting and running over time per K and algorithm",
            "queue_by_k.csv / .md: makespan, served rate and queue length per setting and algorithm",
            "one_worker_4x.csv: J0's 8 GPUs as one worker with 4× the memory, seeds 0–2"]
