"""How often ``llmopt solve`` aborts at exit after cancelling a multi-threaded HiGHS solve.

``llmopt solve --threads 8`` (also 16, 1000) sometimes died after printing its result with
"terminate called without an active exception" (exit 134): the IP hits the time limit, llmopt
cancels it and prints, and the interpreter shuts down while HiGHS's threads are still unwinding.
``llmopt.cli.common.finish`` now leaves with ``os._exit`` (output flushed) in that case. This runs
the command ``--runs`` times per thread count on J AM1 seed 0 (n = 58, whose IP always runs into a
4 s limit) and counts the exit codes.

    llmopt study run cancelled-solve-exit --out results/opt/cancelled-solve-exit     # 12 runs per thread count
    llmopt study run cancelled-solve-exit --quick       # 2 runs at --threads 8
"""

from __future__ import annotations

import argparse
import collections
import platform
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llmopt.opt.studies import StudyError, options_argv, run_main, study_command


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: ``--runs``, ``--threads``, ``--out DIR``; exit status 1 when a run aborted."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=12, help="runs per thread count")
    ap.add_argument("--threads", type=int, nargs="+", default=[8, 16, 1000])
    ap.add_argument("--out", type=Path, default=None, help="write README.md here")
    ap.add_argument("--command", default="", help="the command line to quote in the report")
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
                 f"`{args.command or 'llmopt study run cancelled-solve-exit'}` ({args.runs} runs per thread count, "
                 "Python "
                 f"{platform.python_version()}, 2 cores): `llmopt solve` on J AM1 seed 0 (n = 58), `--time-limit 4 "
                 "--bound lp`, whose IP is always cancelled at its limit.", "",
                 "| --threads | runs | exit 0 | aborted (134) | other |", "|---:|---:|---:|---:|---:|"]
        for threads, c in counts.items():
            n = sum(c.values())
            lines.append(f"| {threads} | {n} | {c[0]} | {c[134] + c[-6]} | {n - c[0] - c[134] - c[-6]} |")
        lines += ["", f"Aborts: {aborts} of {total} runs.", ""]
        (args.out / "README.md").write_text("\n".join(lines))
    return 0 if aborts == 0 else 1


OPTIONS = {"runs": "runs per thread count (default 12; quick 2)",
           "threads": "thread counts (default 8 16 1000; quick 8)"}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``README.md`` (the exit codes per thread count) into ``out``; returns it."""
    if seeds is not None:
        raise StudyError("cancelled-solve-exit takes no --seeds (J AM1 seed 0)")
    opts = ({"runs": 2, "threads": [8]} if quick else {}) | dict(options)
    argv = ["--out", str(out), *options_argv(opts),
            "--command", study_command("cancelled-solve-exit", out, quick=quick, options=options)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s ``README.md`` (written by :func:`run`)."""
    path = Path(out) / "README.md"
    return [str(path)] if path.exists() else []
