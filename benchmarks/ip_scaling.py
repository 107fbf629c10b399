"""How large a J §5.1-style instance can HiGHS prove optimal within a time limit?

Instances follow Arrival Model 1 (all requests at t = 0, ``s ~ U{1..5}``,
``o ~ U{1..M−s}``) with fixed ``n`` and ``M``. For each ``(M, n, seed)`` the full
hindsight pipeline runs (MC-SF/FCFS/local search → windows → IP with warm start) and
the solve time, status, incumbent, bound and gap are recorded. A series for one ``M``
stops after the first ``n`` that is not proven optimal (``--stop-after-fail``).

Results are appended to ``OUT/ip_scaling.jsonl`` as they finish (re-running skips
finished points) and summarised in ``OUT/ip_scaling.md``.

The runs reported in results/ip_scaling/README.md (two at a time, one per core)::

    python benchmarks/ip_scaling.py --M 40 --n 6 8 10 12 14 16 20 --time-limit 600 --out results/ip_scaling/M40
    python benchmarks/ip_scaling.py --M 30 50 --n 8 12 16 --time-limit 600 --out results/ip_scaling/M30_M50
    python benchmarks/ip_scaling.py --M 40 --n 24 28 --time-limit 600 --out results/ip_scaling/M40_large
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from llmopt.hindsight import solve_hindsight
from llmopt.workloads import jaillet_am1


def run_point(M: int, n: int, seed: int, time_limit: float, solver: str) -> dict:
    inst = jaillet_am1(seed, n_range=(n, n), M_range=(M, M))
    t0 = time.perf_counter()
    res = solve_hindsight(inst, solver=solver, time_limit=time_limit, seed=seed, search_evals=200)
    return {
        "M": M, "n": n, "seed": seed, "solver": solver, "time_limit": time_limit,
        "status": res.status.value, "opt": res.opt, "incumbent": res.incumbent, "bound": res.bound,
        "gap": res.gap, "mcsf": res.heuristics.get("mc-sf"), "total_s": round(time.perf_counter() - t0, 2),
        **{f"model_{k}": v for k, v in res.model_stats.items()},
    }


def write_table(records: list[dict], out: Path) -> None:
    lines = [
        "# IP solve time vs n (HiGHS, Arrival-Model-1 instances)",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. "
        "One HiGHS thread per solve. `total_s` includes heuristics, model build and solve.",
        "",
        "| M | n | seed | cols | nnz | status | OPT / incumbent | bound | gap | MC-SF TEL | total s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(records, key=lambda r: (r["M"], r["n"], r["seed"])):
        gap = "—" if r["gap"] is None else f"{100 * r['gap']:.2f}%"
        bound = "—" if r["bound"] is None else f"{r['bound']:.0f}"
        lines.append(
            f"| {r['M']} | {r['n']} | {r['seed']} | {r.get('model_cols')} | {r.get('model_nnz')} | {r['status']} "
            f"| {r['incumbent']} | {bound} | {gap} | {r['mcsf']} | {r['total_s']} |"
        )
    proven = [r for r in records if r["status"] == "optimal"]
    if proven:
        best = max(proven, key=lambda r: (r["n"], r["total_s"]))
        lines += ["", f"Largest n proven optimal: n = {best['n']} (M = {best['M']}, {best['total_s']} s, "
                  f"time limit {best['time_limit']} s)."]
    (out / "ip_scaling.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--M", type=int, nargs="+", default=[40])
    p.add_argument("--n", type=int, nargs="+", default=[6, 8, 10, 12, 14, 16, 20, 24])
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--time-limit", type=float, default=600.0)
    p.add_argument("--solver", default="highs")
    p.add_argument("--out", type=Path, default=Path("results/ip_scaling"))
    p.add_argument("--no-stop-after-fail", dest="stop_after_fail", action="store_false")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "ip_scaling.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    done = {(r["M"], r["n"], r["seed"], r["time_limit"]) for r in records}
    for M in args.M:
        failed = False
        for n in sorted(args.n):
            if failed and args.stop_after_fail:
                break
            for seed in args.seeds:
                if (M, n, seed, args.time_limit) in done:
                    failed |= any(r["status"] != "optimal" for r in records
                                  if (r["M"], r["n"], r["seed"]) == (M, n, seed))
                    continue
                rec = run_point(M, n, seed, args.time_limit, args.solver)
                records.append(rec)
                with path.open("a") as fh:
                    fh.write(json.dumps(rec) + "\n")
                print(json.dumps(rec), flush=True)
                failed |= rec["status"] != "optimal"
            write_table(records, args.out)


if __name__ == "__main__":
    main()
