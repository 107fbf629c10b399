"""Simulator speed: requests per second and CPU for MC-SF and FCFS at trace scale (issue 6).

Workloads (all seeded, so the table is reproducible):

* ``J5.1-M40`` — J §5.1 ranges: ``M = 40``, ``s ~ U{1..5}``, ``o ~ U{1..M−s}``;
* ``M16492`` — Llama2-70B on 2×A100 capacity: ``M = 16,492``, ``s ~ U{1..500}``,
  ``o ~ U{1..1000}``.

Arrival patterns: all at ``t = 0`` (the queue holds every request: the n² trap of a
step loop), and Poisson arrivals at offered memory load ``ρ`` — rate
``λ = ρ·M / mean_i(Σ_{τ=1..o_i} (s_i + τ))``, the token-steps a request occupies —
with ``ρ = 0.8`` (moderate) and ``ρ = 1.2`` (overloaded: the queue grows linearly).

CPU is ``time.process_time`` of one :func:`llmopt.engine.discrete.simulate` call, the best of
``--repeat`` runs; the exponent is the least-squares slope of ``log CPU`` against
``log n``. ``--reference N`` also times the pre-issue-6 step loop
(``tests/reference_sim.py``) at ``n = N`` for comparison, and checks it gives the same TEL.

    python benchmarks/simulator_speed.py --out results/perf/simulator-speed
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.bench.speed_cases import (
    SPEED_PATTERNS,
    SPEED_POLICIES,
    SPEED_WORKLOADS,
    make_workload,
    run_policy,
)

WORKLOADS = SPEED_WORKLOADS
PATTERNS = SPEED_PATTERNS
POLICIES = SPEED_POLICIES


def cpu_of(fn: Callable[..., Any], *args: Any, repeat: int = 1) -> tuple[float, Any]:
    """Best CPU seconds of ``fn(*args)`` over ``repeat`` runs, and its result."""
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn(*args)
        best = min(best, time.process_time() - t0)
    return best, out


def fit_exponent(ns: list[int], cpus: list[float]) -> float:
    if len(ns) < 2:
        return float("nan")
    slope, _ = np.polyfit(np.log(ns), np.log(cpus), 1)
    return float(slope)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 3000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reference", type=int, default=0, metavar="N",
                    help="also time the old step loop at n = N (slow: O(n²) when requests queue)")
    ap.add_argument("--out", type=Path, default=None, help="write summary.md and results.json here")
    args = ap.parse_args(argv)

    rows = []
    for wl in WORKLOADS:
        for pattern, load in PATTERNS.items():
            for policy in POLICIES:
                cpus = []
                for n in args.n:
                    inst = make_workload(wl, n, load)
                    cpu, sched = cpu_of(run_policy, inst, policy, repeat=args.repeat)
                    cpus.append(cpu)
                    rows.append({"workload": wl, "M": inst.M, "pattern": pattern, "policy": policy, "n": n,
                                 "cpu_s": cpu, "req_per_s": n / cpu, "tel": sched.tel, "makespan": sched.makespan})
                    print(f"{wl:9} {pattern:14} {policy:6} n={n:6} cpu={cpu:7.3f}s  {n / cpu:9.0f} req/s",
                          flush=True)
                exp = fit_exponent(args.n, cpus)
                for r in rows[-len(args.n):]:
                    r["exponent"] = exp

    ref_rows = []
    if args.reference:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from reference_sim import FCFS_KEY, MCSF_KEY, reference_simulate

        for wl in WORKLOADS:
            for pattern, load in PATTERNS.items():
                for policy, key in (("mc-sf", MCSF_KEY), ("fcfs", FCFS_KEY)):
                    inst = make_workload(wl, args.reference, load)
                    cpu_old, ref = cpu_of(reference_simulate, inst, key)
                    cpu_new, new = cpu_of(run_policy, inst, policy, repeat=args.repeat)
                    assert ref.tel == new.tel, (wl, pattern, policy)
                    ref_rows.append({"workload": wl, "pattern": pattern, "policy": policy, "n": args.reference,
                                     "old_cpu_s": cpu_old, "new_cpu_s": cpu_new, "speedup": cpu_old / cpu_new})
                    print(f"reference {wl:9} {pattern:14} {policy:6} old={cpu_old:8.2f}s new={cpu_new:.3f}s",
                          flush=True)

    if args.out:
        write_report(args, rows, ref_rows)
    return 0


def write_report(args: argparse.Namespace, rows: list[dict], ref_rows: list[dict]) -> None:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    cmd = "python benchmarks/simulator_speed.py " + " ".join(
        [f"--n {' '.join(map(str, args.n))}", f"--repeat {args.repeat}"]
        + ([f"--reference {args.reference}"] if args.reference else []) + [f"--out {out}"])
    meta = {"command": cmd, "python": platform.python_version(), "machine": platform.machine(),
            "processor": platform.processor() or "unknown", "cpus": __import__("os").cpu_count()}
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows, "reference": ref_rows}, indent=1) + "\n")

    ns = args.n
    lines = [
        "# Simulator speed at trace scale (issue 6)",
        "",
        "CPU seconds (`time.process_time`, best of "
        f"{args.repeat}) of one `llmopt.engine.discrete.simulate` call, and requests per second, for MC-SF and "
        "FCFS (MC-Benchmark). Workloads: **J5.1-M40** = J §5.1 ranges (M = 40, s ~ U{1..5}, "
        "o ~ U{1..M−s}); **M16492** = M = 16,492, s ~ U{1..500}, o ~ U{1..1000}. Arrivals: all at t = 0, "
        "or Poisson at offered memory load ρ (rate = ρ·M / mean token-steps per request; ρ = 1.2 overloads "
        "the worker, so the queue grows linearly with n). `exp.` = least-squares slope of log CPU vs log n "
        f"over n = {', '.join(map(str, ns))}.",
        "",
        f"Machine: {meta['machine']}, {meta['cpus']} cores, Python {meta['python']}. Regenerate with:",
        "",
        "```bash",
        cmd,
        "```",
        "",
        "| workload | arrivals | policy | " + " | ".join(f"CPU s n={n:,}" for n in ns) + " | "
        + " | ".join(f"req/s n={n:,}" for n in ns) + " | exp. |",
        "|---|---|---|" + "---:|" * (2 * len(ns) + 1),
    ]
    for wl in WORKLOADS:
        for pattern in PATTERNS:
            for policy in POLICIES:
                sel = [r for r in rows if (r["workload"], r["pattern"], r["policy"]) == (wl, pattern, policy)]
                sel.sort(key=lambda r: r["n"])
                lines.append(f"| {wl} | {pattern} | {policy} | " + " | ".join(f"{r['cpu_s']:.3f}" for r in sel)
                             + " | " + " | ".join(f"{r['req_per_s']:,.0f}" for r in sel)
                             + f" | {sel[0]['exponent']:.2f} |")
    worst = max((r for r in rows if r["n"] == max(ns) and r["workload"] == "M16492"), key=lambda r: r["cpu_s"],
                default=None)
    if worst is not None:
        lines += ["", f"Largest CPU at n = {max(ns):,}, M = 16,492: {worst['cpu_s']:.3f} s "
                      f"({worst['policy']}, {worst['pattern']}); target < 2 s."]
    if ref_rows:
        lines += ["", f"Old step loop (`tests/reference_sim.py`, the pre-issue-6 simulator) at n = {args.reference:,}, "
                      "same schedules (TEL asserted equal):", "",
                  "| workload | arrivals | policy | old CPU s | new CPU s | speed-up |", "|---|---|---|---:|---:|---:|"]
        for r in ref_rows:
            lines.append(f"| {r['workload']} | {r['pattern']} | {r['policy']} | {r['old_cpu_s']:.2f} | "
                         f"{r['new_cpu_s']:.4f} | {r['speedup']:,.0f}× |")
    (out / "summary.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
