"""How often α-protection greedy falls into an eviction loop, and what drives it.

J §5.2 / Table 1 report α-greedy at α = 0.3 and 0.25 without loops; on the staged LMSYS file
(`lmsys_chat_1m_words_in256_out256.csv`) our runs of the Table 1 setting loop often. This
study counts loops (runs stopped by the loop guard) over seeds, for α ∈ ``--alphas``, on

* the file as staged (output median 75 words), and
* the same file with long outputs thinned: rows with output > 45 words kept with probability
  0.45 (seeded), which brings the output median to 36 words (paper: 45; mean 70, paper 85) and leaves the
  prompt distribution nearly unchanged;

each with cleared requests re-queued at their FCFS position (``front``, our default reading)
and behind every waiting request (``back``).

    llmopt study run alpha-loop-sensitivity --out results/jaillet/lmsys     # writes loop_sensitivity.md
    llmopt study run alpha-loop-sensitivity --quick     # seeds 0-1, 300 requests
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import EvictionLoopError
from llmopt.opt.studies import StudyError, options_argv, run_main, study_command
from llmopt.papers.jaillet.suites import LMSYS_TRACE
from llmopt.policies.protection import AlphaProtection
from llmopt.workloads.traces import load_trace, sample_instance
from llmopt.workloads.traces.data import data_dir
from llmopt.workloads.traces.sampling import thin_long_outputs


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: ``--seeds N``, ``--n``, ``--rate``, ``--alphas``, ``--out DIR``."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.15, 0.21, 0.25, 0.3])
    ap.add_argument("--out", type=Path, default=None, help=f"write {REPORT_NAME} here")
    ap.add_argument("--command", default="", help="the command line to quote in the report")
    args = ap.parse_args(argv)
    cost = make_cost_model("llama2-70b-a100-tp2")
    staged = load_trace(data_dir() / "traces" / LMSYS_TRACE, "lmsys", M=16_492, on_bad_row="drop")
    traces = {"as staged": staged, "long outputs thinned": thin_long_outputs(staged)}
    lines = [
        "# α-greedy eviction loops vs the output-length distribution", "",
        f"`{args.command or 'llmopt study run alpha-loop-sensitivity'}` (n = {args.n}, λ = {args.rate:g}): "
        f"runs (seeds 0…{args.seeds - 1}, the `jaillet-table1` sampling) stopped by the loop guard, out of "
        f"{args.seeds}. File `{LMSYS_TRACE}`, zero-length rows dropped.", "",
        "| trace | output median / mean (words) | prompt mean | requeue | "
        + " | ".join(f"α = {a:g}" for a in args.alphas) + " |",
        "|---|---|---|---|" + "---|" * len(args.alphas),
    ]
    for label, tr in traces.items():
        for requeue in ("front", "back"):
            cells = []
            for a in args.alphas:
                loops = 0
                for seed in range(args.seeds):
                    inst = sample_instance(tr, args.n, seed, rate=args.rate)
                    try:
                        simulate_continuous(inst, AlphaProtection(a, requeue=requeue), cost)
                    except EvictionLoopError:
                        loops += 1
                cells.append(f"{loops}/{args.seeds}")
            row = (f"| {label} | {np.median(tr.output):g} / {tr.output.mean():.1f} | {tr.prompt.mean():.1f} | "
                   f"{requeue} | " + " | ".join(cells) + " |")
            print(row, flush=True)
            lines.append(row)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / REPORT_NAME).write_text("\n".join(lines) + "\n")


REPORT_NAME = "loop_sensitivity.md"
OPTIONS = {
    "n": "requests per run (default 1,000; quick 300)",
    "rate": "Poisson rate λ /s (default 50)",
    "alphas": "α values (default 0.15 0.21 0.25 0.3)",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``loop_sensitivity.md`` into ``out``; ``seeds`` must be ``0 … N−1`` (default 0-9; ``quick``: 0-1,
    300 requests); returns the files written."""
    count = len(seeds) if seeds is not None else (2 if quick else 10)
    if seeds is not None and list(seeds) != list(range(count)):
        raise StudyError("alpha-loop-sensitivity runs seeds 0 … N−1: give --seeds 0-N")
    opts = ({"n": 300} if quick else {}) | dict(options)
    argv = ["--out", str(out), "--seeds", str(count), *options_argv(opts),
            "--command", study_command("alpha-loop-sensitivity", out, quick=quick, seeds=seeds, options=options)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s ``loop_sensitivity.md`` (written by :func:`run`: it needs the simulations)."""
    path = Path(out) / REPORT_NAME
    return [str(path)] if path.exists() else []
