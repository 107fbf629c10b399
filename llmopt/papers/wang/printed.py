"""W's (Wang et al.) numbers printed in README.md and ``results/wang/*/README.md``, computed from the committed
results (the blocks of :data:`BLOCKS`; ``llmopt.papers.printed`` writes and checks them)."""

from __future__ import annotations

from llmopt.papers.printing import Block, csv_rows, num
from llmopt.papers.verdicts import render as render_verdicts
from llmopt.papers.wang import verdicts as wang_verdicts
from llmopt.papers.wang.verdicts import scaled_dp_all_rounds as _claims_all_rounds


def wang_scaled_dp_rounds_notes() -> str:
    """``results/wang/synthetic/README.md``: the same count, with ε = 0.1's share.

    Returns
    -------
    str
        E.g. ``287 of 4,144 selections fail, worst 2.333, and ε = 0.1 fails too (15 of 976)``.
    """
    miss, total, worst, per_eps = _claims_all_rounds()
    m01, t01 = per_eps["0.1"]
    return f"{miss} of {total:,} selections fail, worst {worst:.3f}, and ε = 0.1 fails too ({m01} of {t01:,})"


def wang_short_horizon_gain() -> str:
    """``results/wang/synthetic/README.md``: how much LP-Swap beats Sorted-LP with the too-short horizon
    ``T̄ = n`` and ties in input order (per LP method, mean over seeds; the mix per seed too).

    Returns
    -------
    str
        The bold phrase, from ``results/wang/synthetic/lp_optima.csv``.
    """
    per: dict[tuple[str, str], list[float]] = {}
    per_seed: dict[str, list[float]] = {}
    for r in csv_rows("wang/synthetic/lp_optima.csv"):
        if r["horizon"] == "n-literal" and r["tie"] == "index":
            per.setdefault((r["dataset"], r["method"]), []).append(-num(r["swap_vs_lp"]))
            if r["dataset"] == "lmsys+arxiv":
                per_seed.setdefault(r["seed"], []).append(-num(r["swap_vs_lp"]))
    synthetic = [sum(v) / len(v) for (d, _), v in per.items() if d in ("uniform", "normal", "binomial")]
    mix = [v for (d, _), vs in per.items() if d == "lmsys+arxiv" for v in vs]
    seeds = sorted(sum(v) / len(v) for v in per_seed.values())
    return (f"**LP-Swap beats Sorted-LP by {100 * min(synthetic):.1f}–{100 * max(synthetic):.1f} % on Uniform /\n"
            f"  Normal / Binomial and by {100 * sum(mix) / len(mix):.1f} % on the LMSYS + arXiv mix "
            f"({' % and '.join(f'{100 * s:.1f}' for s in seeds)} % on its two seeds)**")


def _ec1_sorted_lp(distribution: str) -> dict[str, str]:
    found = [r for r in csv_rows("wang/synthetic/table_ec1.csv")
             if r["distribution"].split()[0] == distribution and r["algorithm"] == "sorted-lp:bucket=1"]
    if len(found) != 1:
        raise LookupError(f"results/wang/synthetic/table_ec1.csv: {len(found)} Sorted-LP rows for {distribution}")
    return found[0]


def wang_ec1_bound_span() -> str:
    """README, W: the certified bound ÷ W's TEL (means per distribution) for Uniform, Normal and Binomial, and in how
    many trials the bound is above W's TEL (``results/wang/synthetic/table_ec1.csv``).

    Returns
    -------
    str
        ``3.2–4.1× above the paper's TEL (means per distribution; above it in 30 of 30 trials)``.
    """
    rows = [_ec1_sorted_lp(d) for d in ("uniform", "normal", "binomial")]
    ratios = [num(r["bound_mean"]) / num(r["paper"]) for r in rows]
    above = sum(int(num(r["bound_above_paper"])) for r in rows)
    trials = sum(int(r["trials"]) for r in rows)
    return (f"{min(ratios):.1f}–{max(ratios):.1f}× above the paper's TEL (means per distribution; above it in "
            f"{above} of {trials} trials)")


def wang_ec1_below() -> str:
    """README, W: W's TEL ÷ ours (Sorted-LP) for Exponential and Mixed (``results/wang/synthetic/table_ec1.csv``).

    Returns
    -------
    str
        ``4.7× and 2.3×``.
    """
    rows = [_ec1_sorted_lp(d) for d in ("exponential", "mixed")]
    return " and ".join(f"{num(r['paper']) / num(r['tel_mean']):.1f}×" for r in rows)


def wang_lp_swap_vs_sorted_lp() -> str:
    """README, W Figure 8: LP-Swap's mean latency ÷ Sorted-LP's, the farthest from 1 over n
    (``results/wang/mixed/figure8.csv``).

    Returns
    -------
    str
        ``within 2.1 % (n = 200)``.
    """
    lat = {(int(r["n"]), r["algorithm"]): num(r["latency_mean"]) for r in csv_rows("wang/mixed/figure8.csv")}
    devs = {n: lat[n, "lp-swap"] / lat[n, "sorted-lp"] - 1
            for n, a in lat if a == "lp-swap" and (n, "sorted-lp") in lat}
    n = max(devs, key=lambda k: abs(devs[k]))
    return f"within {100 * abs(devs[n]):.1f} % (n = {n:,})"


#: the blocks this module prints, by name
BLOCKS: dict[str, Block] = {
    "w-verdicts": Block(lambda: render_verdicts(wang_verdicts.CLAIMS, "W"), ("README.md",),
                        "the evidence column of each row (llmopt/papers/wang/verdicts.py)"),
    "w-scaled-dp-rounds-notes": Block(wang_scaled_dp_rounds_notes, ("results/wang/synthetic/README.md",),
                                      "results/wang/synthetic/claims.md §2"),
    "w-short-horizon-gain": Block(wang_short_horizon_gain, ("results/wang/synthetic/README.md",),
                                  "results/wang/synthetic/lp_optima.csv"),
    "w-ec1-bound-span": Block(wang_ec1_bound_span, ("README.md",), "results/wang/synthetic/table_ec1.csv"),
    "w-ec1-below": Block(wang_ec1_below, ("README.md",), "results/wang/synthetic/table_ec1.csv"),
    "w-lp-swap-vs-sorted-lp": Block(wang_lp_swap_vs_sorted_lp, ("README.md",), "results/wang/mixed/figure8.csv"),
}
