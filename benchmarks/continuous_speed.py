"""Continuous-engine throughput on the 10,000-request LMSYS trace (issue 7).

For each of J §5.2's eight algorithms and each demand level (λ = 50 and λ = 10 requests/s,
the ``jaillet-lmsys`` instances, seed 0), one :func:`llmopt.engine.continuous.simulate_continuous`
run with the Llama2-70B-on-2×A100 cost model: CPU seconds (``time.process_time``, best of
``--repeat``), simulated requests per CPU second, iterations (batches), and the CPU of the
checker's continuous-time mode on the same schedule. A run stopped by the loop guard is
timed up to the stop and marked. Also loads the trace once and reports its load time.

    python benchmarks/continuous_speed.py --out results/perf/continuous-speed

Needs the staged data (``../shared/data``, or ``LLMOPT_DATA``).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import EvictionLoopError
from llmopt.papers.jaillet.suites import J52_POLICIES, LMSYS_TRACE
from llmopt.policies import make_policy_spec
from llmopt.verify.timed import check_timed_schedule
from llmopt.workloads.traces.data import data_dir, trace_workload


def measure(n: int, rates: tuple[float, ...], repeat: int) -> tuple[list[dict[str, Any]], float]:
    from llmopt.workloads.traces import load_trace

    t0 = time.perf_counter()
    load_trace(data_dir() / "traces" / LMSYS_TRACE, "lmsys", M=16_492, on_bad_row="drop")
    load_s = time.perf_counter() - t0
    cost = make_cost_model("llama2-70b-a100-tp2")
    rows = []
    for rate in rates:
        inst = trace_workload(0, LMSYS_TRACE, n, rate=rate, format="lmsys", on_bad_row="drop")
        for spec in J52_POLICIES:
            best = float("inf")
            sched, looped = None, False
            for _ in range(repeat):
                c0 = time.process_time()
                try:
                    sched = simulate_continuous(inst, make_policy_spec(spec, seed=0), cost)
                except EvictionLoopError as exc:
                    sched, looped = exc.partial, True
                best = min(best, time.process_time() - c0)
            assert sched is not None
            chk = None
            if not looped:
                c0 = time.process_time()
                rep = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                                           evictions=sched.evictions)
                chk = time.process_time() - c0
                assert rep.ok, rep.violations[:1]
            rows.append({"rate": rate, "policy": spec, "n": n, "cpu_s": best, "requests_per_s": n / best,
                         "iterations": sched.iterations, "loop": looped, "check_cpu_s": chk,
                         "mean_latency_s": sched.mean_latency if not looped else None})
            print(f"λ={rate:g} {spec:40s} {best:6.3f} s CPU  {n / best:9.0f} req/s  {sched.iterations:6d} it"
                  + ("  LOOP" if looped else f"  check {chk:.3f} s"), flush=True)
    return rows, load_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--rates", type=float, nargs="+", default=[50.0, 10.0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    rows, load_s = measure(args.n, tuple(args.rates), args.repeat)
    if args.out is None:
        return
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps({"rows": rows, "trace_load_s": load_s,
                                                       "machine": platform.platform(),
                                                       "python": platform.python_version()}, indent=1) + "\n")
    lines = ["# Continuous engine throughput (10,000 LMSYS requests, Llama2-70B on 2×A100 cost model)", "",
             f"Command: `python benchmarks/continuous_speed.py --n {args.n} --repeat {args.repeat} --out {args.out}`. "
             f"CPU = `time.process_time` of one simulation, best of {args.repeat}; machine: {platform.platform()}, "
             f"Python {platform.python_version()}. Loading and validating `{LMSYS_TRACE}` (662,534 rows) took "
             f"{load_s:.2f} s.", "",
             "| λ (1/s) | policy | CPU (s) | requests / CPU s | iterations | checker CPU (s) | mean latency (s) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lat = "eviction loop (stopped by the guard)" if r["loop"] else f"{r['mean_latency_s']:.2f}"
        chk = "–" if r["check_cpu_s"] is None else f"{r['check_cpu_s']:.3f}"
        lines.append(f"| {r['rate']:g} | `{r['policy']}` | {r['cpu_s']:.3f} | {r['requests_per_s']:,.0f} | "
                     f"{r['iterations']:,} | {chk} | {lat} |")
    (args.out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
