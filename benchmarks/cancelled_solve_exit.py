"""How often ``llmopt solve`` aborts at exit after cancelling a multi-threaded HiGHS solve (issue 27).

``llmopt solve --threads 8`` (also 16, 1000) sometimes died after printing its result with
"terminate called without an active exception" (exit 134): the IP hits the time limit, llmopt
cancels it and prints, and the interpreter shuts down while HiGHS's threads are still unwinding.
``llmopt.cli.common.finish`` now leaves with ``os._exit`` (output flushed) in that case. This runs
the command ``--runs`` times per thread count on J AM1 seed 0 (n = 58, whose IP always runs into a
4 s limit) and counts the exit codes.

    python benchmarks/cancelled_solve_exit.py --runs 12 --out results/cancelled_solve_exit
"""

from __future__ import annotations

import argparse
import collections
import platform
import subprocess
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=12, help="runs per thread count")
    ap.add_argument("--threads", type=int, nargs="+", default=[8, 16, 1000])
    ap.add_argument("--out", type=Path, default=None, help="write README.md here")
    args = ap.parse_args(argv)
    from llmopt.model.instance import save_instance
    from llmopt.workloads.jaillet import jaillet_am1

    counts: dict[int, collections.Counter[int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "am1_s0.json"
        save_instance(jaillet_am1(0), path)
        for threads in args.threads:
            counts[threads] = collections.Counter()
            for _ in range(args.runs):
                code = ("import sys; from llmopt.cli.main import app; "
                        f"app(['solve', {str(path)!r}, '--threads', '{threads}', '-q', '--time-limit', '4', "
                        "'--bound', 'lp'])")
                rc = subprocess.run([sys.executable, "-c", code], capture_output=True).returncode
                counts[threads][rc] += 1
            print(f"--threads {threads}: exit codes {dict(counts[threads])}", flush=True)
    aborts = sum(c[134] + c[-6] for c in counts.values())
    total = sum(sum(c.values()) for c in counts.values())
    print(f"aborts: {aborts} of {total} runs")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        lines = ["# Exit after a cancelled multi-threaded HiGHS solve", "",
                 f"`python benchmarks/cancelled_solve_exit.py --runs {args.runs} --out {args.out}` (Python "
                 f"{platform.python_version()}, 2 cores): `llmopt solve` on J AM1 seed 0 (n = 58), `--time-limit 4 "
                 "--bound lp`, whose IP is always cancelled at its limit.", "",
                 "| --threads | runs | exit 0 | aborted (134) | other |", "|---:|---:|---:|---:|---:|"]
        for threads, c in counts.items():
            n = sum(c.values())
            lines.append(f"| {threads} | {n} | {c[0]} | {c[134] + c[-6]} | {n - c[0] - c[134] - c[-6]} |")
        lines += ["", f"Aborts: {aborts} of {total} runs.", ""]
        (args.out / "README.md").write_text("\n".join(lines))
    return 0 if aborts == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
