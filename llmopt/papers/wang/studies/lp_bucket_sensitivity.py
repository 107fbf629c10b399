"""How much the bucketed LP (``Δ > 1``) changes Sorted-LP and LP-Swap, against the exact LP (``Δ = 1``).

On n-request prefixes of the W §7 mix (LMSYS + arXiv, M = 16,492, all at 0), where the exact
Relax-LP is still solvable by column generation, it compares for each ``Δ``: the LP value (a
certified lower bound on OPT for every ``Δ``), its time, the Kendall τ between the LP order
and the ``Δ = 1`` order, and the TEL (iterations) of Sorted-LP and LP-Swap.

    llmopt study run lp-bucket-sensitivity --out results/wang/mixed   # n = 200, seeds 0-2 (about 10 min)
    llmopt study run lp-bucket-sensitivity --quick                    # seed 0, Δ = 1 and 25
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance, Request
from llmopt.opt.studies import run_main, study_command
from llmopt.policies.lp_order import LPSwap, SortedLP, lp_order, solve_cached
from llmopt.verify.checker import check_schedule
from llmopt.workloads.wang import wang_mixed


def discrete(seed: int, n: int) -> Instance:
    """The mix's n-prefix as a discrete instance (iteration units, all at 0)."""
    ti = wang_mixed(seed, n=n)
    return Instance(ti.M, tuple(Request(r.id, 0, r.prompt, r.output) for r in ti.requests), name=f"wang-mixed/{seed}")


def seed_rows(seed: int, n: int, deltas: list[int]) -> list[dict]:
    """One table row per ``Δ`` of ``deltas`` on seed ``seed``'s n-prefix (the first ``Δ`` is the reference)."""
    inst = discrete(seed, n)
    rows, ref = [], None
    o = np.array([r.output for r in inst.requests])
    for d in deltas:
        solve_cached.cache_clear()  # Sorted-LP solves the LP (timed); LP-Swap reuses it
        tels = {}
        t0 = time.perf_counter()
        sorted_lp = SortedLP(bucket=d)
        sched = simulate(inst, sorted_lp)
        lp_s = time.perf_counter() - t0
        assert check_schedule(inst, sched.starts).ok
        tels["sorted-lp"] = sched.tel
        sched = simulate(inst, LPSwap(bucket=d))
        assert check_schedule(inst, sched.starts).ok
        tels["lp-swap"] = sched.tel
        lp = sorted_lp.last_lp
        assert lp is not None
        y = np.array([lp.expected_start[r.id] for r in inst.requests])
        rank = np.empty(inst.n)
        rank[lp_order(y, o)] = np.arange(inst.n)
        if ref is None:
            ref = rank
        rows.append({"seed": seed, "delta": d, "lp": lp.objective, "status": str(lp.status), "rounds": lp.rounds,
                     "lp_s": lp_s, "tau": float(kendalltau(ref, rank).statistic), **tels})
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: ``--n``, ``--seeds 0,1,2``, ``--deltas 1,2,5,9,25``, ``--out DIR``."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--deltas", default="1,2,5,9,25")
    ap.add_argument("--out", type=Path, default=None, help="write lp_bucket.md here")
    ap.add_argument("--command", default="", help="the command line to quote in the report")
    args = ap.parse_args(argv)
    deltas = [int(d) for d in args.deltas.split(",")]
    rows = [r for s in args.seeds.split(",") for r in seed_rows(int(s), args.n, deltas)]
    lines = [f"# Bucketed LP vs the exact LP (W §7 mix, n = {args.n}, seeds {args.seeds})", "",
             f"`{args.command or f'lp-bucket-sensitivity --n {args.n} --seeds {args.seeds} --deltas {args.deltas}'}`. "
             "LP = the (bucketed) Relax-LP optimum, a certified lower bound on OPT for every Δ (LP time = Sorted-LP's "
             "planning and simulation, almost all of it the LP); τ = Kendall τ of "
             "the Sorted-LP order against Δ = 1's; TEL in iterations (discrete engine).", "",
             "| seed | Δ | LP value | LP / LP(Δ=1) | rounds | LP time (s) | τ vs Δ=1 | Sorted-LP TEL | vs Δ=1 | "
             "LP-Swap TEL | vs Δ=1 |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        base = next(b for b in rows if b["seed"] == r["seed"] and b["delta"] == deltas[0])
        lines.append(f"| {r['seed']} | {r['delta']} | {r['lp']:,.1f} | {r['lp'] / base['lp']:.4f} | {r['rounds']} | "
                     f"{r['lp_s']:.1f} | {r['tau']:.3f} | {r['sorted-lp']:,} | "
                     f"{r['sorted-lp'] / base['sorted-lp'] - 1:+.2%} | {r['lp-swap']:,} | "
                     f"{r['lp-swap'] / base['lp-swap'] - 1:+.2%} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "lp_bucket.md").write_text(text, encoding="utf-8")


OPTIONS = {"n": "requests per prefix (default 200)",
           "deltas": "bucket widths Δ, comma-separated, the first the reference (default 1,2,5,9,25)"}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``lp_bucket.md`` into ``out`` (default seeds 0-2; ``quick``: seed 0, Δ = 1 and 25); returns it."""
    chosen = list(seeds) if seeds is not None else ([0] if quick else [0, 1, 2])
    deltas = str(options.get("deltas", "1,25" if quick else "1,2,5,9,25"))
    argv = ["--out", str(out), "--seeds", ",".join(map(str, chosen)), "--deltas", deltas,
            "--n", str(options.get("n", 200)),
            "--command", study_command("lp-bucket-sensitivity", out, quick=quick, seeds=seeds, options=options)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s ``lp_bucket.md`` (written by :func:`run`: it needs the LP solves)."""
    path = Path(out) / "lp_bucket.md"
    return [str(path)] if path.exists() else []
