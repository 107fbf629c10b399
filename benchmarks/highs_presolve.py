"""HiGHS presolve on llmopt's LPs: seconds with presolve on and off (the ``LP_PRESOLVE`` choice).

The HiGHS adapter solves every LP with presolve off (``llmopt.solvers.highs.LP_PRESOLVE``).
This script re-measures that choice with the installed highspy on the LPs the bound stages
build: the LP relaxation of (1)–(4) (``lp``) and the explicit dual LP (22)–(24)
(``dual-lp``) of seeded Arrival-Model instances over the windows of their best
heuristic schedule, and a 2-request instance with a 2,000,000-token output (a 2M-row,
2-column LP: highspy 1.16.0's presolve ran for minutes on it without checking its time
limit).

Each solve is one call of the HiGHS adapter with the ``presolve`` option set (the adapter's
own tuning is overridden), single-threaded, its solve seconds (best of ``--repeat``),
with a ``--time-limit``; a run that hit the limit (or, for a presolve that ignores the limit,
the wall-clock ``--kill-after``, in a child process) is reported as such, never as a time.

    python benchmarks/highs_presolve.py --out results/perf/highs-presolve
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import platform
import sys
from pathlib import Path
from typing import Any

from llmopt.bench.speed_cases import presolve_instances, presolve_models
from llmopt.model.canonical import CanonicalModel
from llmopt.solvers import solver_versions


def _solve(model: CanonicalModel, presolve: str, time_limit: float, queue: Any) -> None:
    from llmopt.solvers.highs import HighsSolver

    res = HighsSolver(presolve=presolve).solve(model, time_limit=time_limit, threads=1)
    queue.put((res.runtime_s, res.status.value, res.objective))


def measure(model: CanonicalModel, presolve: str, time_limit: float, kill_after: float) -> dict[str, Any]:
    """One solve in a child process (a presolve that ignores its time limit is killed)."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_solve, args=(model, presolve, time_limit, queue))
    proc.start()
    proc.join(kill_after)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return {"seconds": None, "status": f"killed after {kill_after:.0f} s", "objective": None}
    seconds, status, objective = queue.get()
    return {"seconds": seconds, "status": status, "objective": objective}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--kill-after", type=float, default=120.0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = []
    for name, inst in presolve_instances().items():
        for kind, model in presolve_models(inst).items():
            row: dict[str, Any] = {"instance": name, "lp": kind, "rows": model.n_rows, "cols": model.n_cols,
                                   "nnz": model.nnz}
            for presolve in ("on", "off"):
                runs = [measure(model, presolve, args.time_limit, args.kill_after) for _ in range(args.repeat)]
                done = [r for r in runs if r["seconds"] is not None and r["status"] == "optimal"]
                best = min(done, key=lambda r: r["seconds"]) if done else runs[-1]
                row[f"presolve_{presolve}_s"] = best["seconds"] if done else None
                row[f"presolve_{presolve}_status"] = best["status"]
                row[f"presolve_{presolve}_objective"] = best["objective"]
            rows.append(row)
            print(json.dumps(row), flush=True)
    table = _markdown(rows)
    print(table)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "rows.json").write_text(json.dumps(rows, indent=1) + "\n")
        versions = solver_versions()
        head = (f"# HiGHS presolve on llmopt's LPs\n\nhighspy {versions.get('highs')}, Python "
                f"{platform.python_version()}, {platform.machine()}; best of {args.repeat}; single thread; "
                f"time limit {args.time_limit:.0f} s, killed after {args.kill_after:.0f} s.\n\n"
                f"    python benchmarks/highs_presolve.py --repeat {args.repeat} --time-limit {args.time_limit:g} "
                f"--kill-after {args.kill_after:g} --out {args.out}\n\n")
        (args.out / "summary.md").write_text(head + table + "\n")
    return 0


def _markdown(rows: list[dict[str, Any]]) -> str:
    def cell(row: dict[str, Any], p: str) -> str:
        s = row[f"presolve_{p}_s"]
        return f"{s:.2f}" if s is not None else row[f"presolve_{p}_status"]

    lines = ["| instance | LP | rows | cols | nnz | presolve on (s) | presolve off (s) | off / on |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        on, off = r["presolve_on_s"], r["presolve_off_s"]
        ratio = f"{off / on:.2f}" if on and off else "—"
        lines.append(f"| {r['instance']} | {r['lp']} | {r['rows']:,} | {r['cols']:,} | {r['nnz']:,} | "
                     f"{cell(r, 'on')} | {cell(r, 'off')} | {ratio} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
