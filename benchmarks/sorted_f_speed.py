"""Sorted-F Phase-1 speed: run time of :func:`llmopt.policies.sorted_f.plan_sorted_f` per selector and size.

Workload (seeded; W §7 mix, DIGEST §5.1): ``n`` requests, 80 % "LMSYS-like" — prompt
``s ~ round(LogNormal(ln 12, 1.58))`` clipped to ``[1, 200]`` (median 12, W's LMSYS
median), output ``o ~ round(LogNormal(ln 43, 1.17))`` clipped to ``[1, 250]`` — and 20 %
"arXiv-like" — ``s ~ round(Normal(2600, 500))`` clipped to ``[1000, 3800]``,
``o ~ round(LogNormal(ln 161, 1.1))`` clipped to ``[1, 1000]``; all at ``t = 0``;
``M = 16,492`` (Llama2-70B on 2×A100). Synthetic stand-ins with W's medians, not the
traces themselves.

For each ``n`` and selector the script times one full Phase 1 (the whole order, every
round), best of ``--repeat`` runs (one run for the exact DP), with ``time.perf_counter``.
The exact DP and the scaled DP are run only up to ``--dp-max-n`` / ``--scaled-max-n``
(their cost is ``O(n · k_max · M)`` per round; the table marks skipped cells). The
fitted exponent is the least-squares slope of ``log time`` against ``log n`` over the
sizes measured. "rounds" is the number of Phase-1 batches; "AEL" is Sorted-F's average
latency in iterations (discrete simulator, Phase 2 included, so it also shows what the
cheaper selectors give up).

    python benchmarks/sorted_f_speed.py            # print the table
    python benchmarks/sorted_f_speed.py --write    # also write results/perf/sorted-f-speed/README.md
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

from llmopt.bench.speed_cases import (
    SORTED_F_M,
    SORTED_F_SELECTORS,
    SORTED_F_SIZES,
    make_mix,
    phase1_rounds,
    sorted_f_ael,
)
from llmopt.policies.sorted_f import plan_sorted_f

M = SORTED_F_M
SIZES = SORTED_F_SIZES
SELECTORS = SORTED_F_SELECTORS
OUT = Path(__file__).resolve().parent.parent / "results" / "perf" / "sorted-f-speed"


def time_plan(s: np.ndarray, o: np.ndarray, phase1: str, repeat: int) -> tuple[float, int]:
    """Best wall time of ``repeat`` Phase-1 runs, and the number of rounds (batches)."""
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        plan_sorted_f(s, o, M, phase1)
        best = min(best, time.perf_counter() - t0)
    return best, phase1_rounds(s, o, phase1)


def slope(points: list[tuple[int, float]]) -> float | None:
    if len(points) < 2:
        return None
    x = np.log([p[0] for p in points])
    y = np.log([max(p[1], 1e-6) for p in points])
    return float(np.polyfit(x, y, 1)[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dp-max-n", type=int, default=500, help="largest n for the exact DP (default 500)")
    ap.add_argument("--scaled-max-n", type=int, default=500, help="largest n for the scaled DP (default 500)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", action="store_true", help=f"write {OUT / 'README.md'}")
    args = ap.parse_args(argv)

    caps = {"dp": args.dp_max_n, "scaled-dp": args.scaled_max_n}
    times: dict[tuple[str, int], str] = {}
    quality: dict[tuple[str, int], str] = {}
    points: dict[str, list[tuple[int, float]]] = {p: [] for p in SELECTORS}
    for n in args.sizes:
        s, o = make_mix(n, args.seed)
        for phase1 in SELECTORS:
            if n > caps.get(phase1, n):
                times[phase1, n] = quality[phase1, n] = "skipped"
                continue
            secs, rounds = time_plan(s, o, phase1, 1 if phase1 == "dp" else args.repeat)
            points[phase1].append((n, secs))
            times[phase1, n] = f"{secs * 1e3:,.1f}"
            quality[phase1, n] = f"{rounds} · {sorted_f_ael(s, o, phase1):,.1f}"
            print(f"n={n:5d} {phase1:10s} {times[phase1, n]} ms, rounds · AEL {quality[phase1, n]}",
                  file=sys.stderr, flush=True)

    head = " | ".join(f"n = {n}" for n in args.sizes)
    rule = "|---" * (len(args.sizes) + 1) + "|"
    lines = [f"| time (ms) | {head} | fitted exponent |", rule + "---|"]
    for phase1 in SELECTORS:
        b = slope(points[phase1])
        row = " | ".join(times[phase1, n] for n in args.sizes)
        lines.append(f"| {phase1} | {row} | {'—' if b is None else f'{b:.2f}'} |")
    lines += ["", f"| rounds · AEL | {head} |", rule]
    for phase1 in SELECTORS:
        lines.append(f"| {phase1} | " + " | ".join(quality[phase1, n] for n in args.sizes) + " |")
    table = "\n".join(lines)
    print(table)

    if args.write:
        OUT.mkdir(parents=True, exist_ok=True)
        cmd = "python benchmarks/sorted_f_speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
        text = "\n".join([
            "# Sorted-F Phase-1 speed",
            "",
            "Wall time of one full Sorted-F Phase 1 (`llmopt.policies.sorted_f.plan_sorted_f`, every round until all",
            "requests are planned) on the synthetic W §7 mix (80 % LMSYS-like, 20 % arXiv-like, all at t = 0),",
            f"M = {M:,}, seed {args.seed}; best of {args.repeat} runs (exact DP: one run). \"rounds\" = Phase-1",
            "batches; AEL = Sorted-F's average latency in iterations (discrete simulator, Phase 2 included).",
            f"The exact DP runs up to n = {args.dp_max_n}, the scaled DP (ε = 0.1, B = remaining n) up to",
            f"n = {args.scaled_max_n}. The workload and the method are in the script's docstring.",
            "",
            table,
            "",
            "Skipped cells: beyond those sizes the first round's DP table exceeds the default",
            "`DP_MAX_CELLS` = 2e9 cells (exact DP at n = 1000: k_max ≈ 420, ≈ 6e9 cells; scaled DP at",
            "n = 1000: M̂ = B/ε = 10,000, ≈ 3.3e9 cells), and the selectors refuse rather than run for minutes.",
            "Times are wall-clock on a machine shared with other jobs: millisecond entries are noisy.",
            "",
            f"Fitted exponent: least-squares slope of log time vs log n. Machine: {platform.machine()},",
            f"{platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}.",
            "",
            "Regenerate:",
            "",
            "```",
            cmd.strip(),
            "```",
            "",
        ])
        (OUT / "README.md").write_text(text, encoding="utf-8")
        print(f"wrote {OUT / 'README.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
