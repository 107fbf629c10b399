"""The papers' tables and prose figures printed in README.md and ``results/*/*/README.md``, computed from the
committed results files.

Every printed number guarded here sits between two markers in its Markdown file::

    <!-- generated: NAME -->
    ...the text computed by BLOCKS[NAME].render()...
    <!-- end generated -->

A marker pair on one line (inline: the text is a phrase inside a sentence or a table cell) holds the text
exactly; a marker pair on lines of their own holds the text on the lines between them. Each block is one
function of the committed results folder (``summary.csv``, ``trials.jsonl``, a study's CSV) returning the text
exactly as printed, so regenerating a results folder and then running::

    python -m llmopt.papers.printed --write

rewrites every marked block, and ``python -m llmopt.papers.printed`` (``--check``) lists each block whose
printed text disagrees with its results file (exit status 1). ``tests/papers/test_printed_numbers.py`` runs the
check. Only the marked text is generated; the prose around it (verdicts, causes) is written by hand.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from llmopt.papers.chen import verdicts as chen_verdicts
from llmopt.papers.jaillet import verdicts as jaillet_verdicts
from llmopt.papers.verdicts import render as render_verdicts
from llmopt.papers.wang import verdicts as wang_verdicts
from llmopt.papers.wang.verdicts import scaled_dp_all_rounds as _claims_all_rounds

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"

_MARK = re.compile(r"<!-- generated: (?P<name>[a-z0-9][a-z0-9-]*) -->(?P<body>.*?)<!-- end generated -->", re.DOTALL)


# ---------------------------------------------------------------------------------------------------------------
# reading the committed results


@cache
def _csv_rows(relpath: str) -> tuple[dict[str, str], ...]:
    with (RESULTS / relpath).open(encoding="utf-8", newline="") as fh:
        return tuple(csv.DictReader(fh))


def _num(value: str) -> float:
    """A CSV cell as a float (``nan`` for an empty cell)."""
    return float(value) if value.strip() else math.nan


def _row(relpath: str, **match: str) -> dict[str, str]:
    found = [r for r in _csv_rows(relpath) if all(r[k] == v for k, v in match.items())]
    if len(found) != 1:
        raise LookupError(f"results/{relpath}: {len(found)} rows match {match}")
    return found[0]


def _policy_label(policy: str) -> str:
    """``alpha-protection:alpha=0.2,beta=0.1`` → ``α = 0.2, β = 0.1`` (J's names for the eight algorithms)."""
    names = {"mc-sf": "MC-SF", "mc-benchmark": "MC-Benchmark"}
    if policy in names:
        return names[policy]
    _, _, params = policy.partition(":")
    greek = {"alpha": "α", "beta": "β"}
    return ", ".join(f"{greek[k]} = {v}" for k, v in (p.split("=") for p in params.split(",")))


J52_POLICIES = ("mc-sf", "mc-benchmark", "alpha-protection:alpha=0.3", "alpha-protection:alpha=0.25",
                "alpha-protection:alpha=0.2,beta=0.2", "alpha-protection:alpha=0.2,beta=0.1",
                "alpha-protection:alpha=0.1,beta=0.2", "alpha-protection:alpha=0.1,beta=0.1")


# ---------------------------------------------------------------------------------------------------------------
# J §5.1 (results/jaillet/synthetic)


def jaillet_synthetic_table() -> str:
    """README, J §5.1: MC-SF against the best schedule found and the certified bound, AM1 / AM2, beside the paper.

    Returns
    -------
    str
        The Markdown table, from ``results/jaillet/synthetic/summary.csv``.
    """
    am = {w: _row("jaillet/synthetic/summary.csv", workload=f"jaillet-am{w}") for w in (1, 2)}

    def paper_not_optimal(r: dict[str, str]) -> str:
        return f"{int(r['paper_trials']) - int(r['paper_exact'])} / {r['paper_trials']}" if r["paper_exact"] else ""

    lines = ["| | AM1 ours | AM1 paper | AM2 ours | AM2 paper |", "|---|---:|---:|---:|---:|"]
    lines.append("| OPT proven | " + " | ".join(f"{am[w]['proven_optimal']} / {am[w]['trials']} | (Gurobi)"
                                                for w in (1, 2)) + " |")
    lines.append("| MC-SF / best schedule found, mean (max) — *lower* bound on the ratio | " + " | ".join(
        f"{_num(am[w]['ratio_vs_incumbent_mean']):.3f} ({_num(am[w]['ratio_vs_incumbent_max']):.3f}) | "
        f"{_num(am[w]['paper_mean']):.3f} ({_num(am[w]['paper_max']):.3f}) vs OPT" for w in (1, 2)) + " |")
    lines.append("| MC-SF / certified bound, mean — *upper* bound on the ratio | " + " | ".join(
        f"{_num(am[w]['ratio_vs_bound_mean']):.3f} | " for w in (1, 2)) + " |")
    lines.append("| MC-SF provably not optimal | " + " | ".join(
        f"{am[w]['reference_worse_than_found']} / {am[w]['trials']} | {paper_not_optimal(am[w])}" for w in (1, 2))
        + " |")
    return "\n".join(line.replace("|  |", "| |") for line in lines)


def jaillet_am1_lower() -> str:
    """README, J §5.1: MC-SF ÷ best schedule found, AM1 mean (a lower bound on its mean ratio to OPT).

    Returns
    -------
    str
        ``1.038`` from ``results/jaillet/synthetic/summary.csv``.
    """
    return f"{_num(_row('jaillet/synthetic/summary.csv', workload='jaillet-am1')['ratio_vs_incumbent_mean']):.3f}"


def _certified_trials() -> list[dict[str, Any]]:
    return [json.loads(line) for line in
            (RESULTS / "jaillet/certified/trials.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def jaillet_certified_lns() -> str:
    """README, J §5.1 certified stages: in how many trials ``lns`` found the best schedule, and its mean gain over
    the local search's schedule (``results/jaillet/certified/trials.jsonl``).

    Returns
    -------
    str
        ``394 of 400 trials, 0.5 % below the local search's on average``.
    """
    trials = _certified_trials()
    lns = sum(t["incumbent_source"] == "lns" for t in trials)
    gain = math.fsum(1 - t["incumbent"] / t["heuristic_local-search"] for t in trials) / len(trials)
    return f"{lns} of {len(trials)} trials, {100 * gain:.1f} % below the local search's on average"


def jaillet_certified_gap() -> str:
    """README, J §5.1 certified stages: MC-SF's proven excess over the best schedule, and the mean certified gap
    beside the plain suite's (``results/jaillet/certified/summary.csv``, ``results/jaillet/synthetic/summary.csv``).

    Returns
    -------
    str
        ``**≥ 4.4 % (AM1) and ≥ 3.7 % (AM2)** on average. The certified lower bound does not move: the mean
        certified gap is **31.7 % (AM1) and 33.5 % (AM2)** (32.1 / 33.7 % before)``.
    """
    cert = {w: _row("jaillet/certified/summary.csv", workload=f"jaillet-am{w}") for w in (1, 2)}
    plain = {w: _row("jaillet/synthetic/summary.csv", workload=f"jaillet-am{w}") for w in (1, 2)}
    excess = " and ".join(f"≥ {100 * (_num(cert[w]['ratio_vs_incumbent_mean']) - 1):.1f} % (AM{w})" for w in (1, 2))
    gap = " and ".join(f"{100 * _num(cert[w]['gap_mean']):.1f} % (AM{w})" for w in (1, 2))
    before = " / ".join(f"{100 * _num(plain[w]['gap_mean']):.1f}" for w in (1, 2))
    return (f"**{excess}** on average. The certified lower bound does not move: the mean certified gap is "
            f"**{gap}** ({before} % before)")


def _zone_trials(workload: str | None = None) -> list[dict[str, Any]]:
    """The ``zone-bound`` study's rows of J §5.1's 400 trials (suite ``jaillet-certified``), or of one workload."""
    rows = [json.loads(line) for line in
            (RESULTS / "jaillet/zone-bound/trials.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if r["suite"] == "jaillet-certified" and workload in (None, r["workload"])]


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def jaillet_zone_lp_ratio() -> str:
    """README, J §5.1 ``zone-lp``: the zone bound ÷ the LP bound, mean over each arrival model's trials.

    Returns
    -------
    str
        ``1.25× (AM1) / 1.27× (AM2)`` from ``results/jaillet/zone-bound/trials.jsonl``.
    """
    parts = []
    for w in (1, 2):
        rows = [r for r in _zone_trials(f"jaillet-am{w}") if r["bound_lp"]]
        parts.append(f"{math.fsum(r['bound_zone'] / r['bound_lp'] for r in rows) / len(rows):.2f}× (AM{w})")
    return " / ".join(parts)


def jaillet_zone_gap() -> str:
    """README, J §5.1 ``zone-lp``: the mean certified gap before → after the zone bound, with the median and the
    range after, per arrival model (``results/jaillet/zone-bound/trials.jsonl``).

    Returns
    -------
    str
        ``AM1 31.7 % → 14.8 % (all 200 trials; median 14.9 %, range 8.6–20.0 %), AM2 …``.
    """
    parts = []
    for w in (1, 2):
        rows = _zone_trials(f"jaillet-am{w}")
        after = sorted(r["gap_after"] for r in rows)
        mid = len(after) // 2
        median = after[mid] if len(after) % 2 else (after[mid - 1] + after[mid]) / 2
        mean_before = math.fsum(r["gap_before"] for r in rows) / len(rows)
        parts.append(f"AM{w} {_pct(mean_before)} → {_pct(math.fsum(after) / len(after))} (all {len(rows)} trials; "
                     f"median {_pct(median)}, range {100 * after[0]:.1f}–{_pct(after[-1])})")
    return ", ".join(parts)


def jaillet_zone_bracket() -> str:
    """README, J §5.1 ``zone-lp``: MC-SF's ratio to OPT bracketed by the best schedule and the certified bound
    (means over AM1's trials) after and before the zone bound, and the stage's run time over the 400 trials.

    Returns
    -------
    str
        ``[1.044, 1.23] on AM1 (means; it was [1.044, 1.53]). The stage took 21.6 s per trial on average (max
        331 s)``.
    """
    am1 = _zone_trials("jaillet-am1")

    def mean(key: str) -> float:
        return math.fsum(r["tel_mc-sf"] / r[key] for r in am1) / len(am1)

    seconds = [r["zone_s"] for r in _zone_trials()]
    return (f"[{mean('best'):.3f}, {mean('bound_after'):.2f}] on AM1 (means; it was [{mean('best'):.3f}, "
            f"{mean('bound_before'):.2f}]). The stage took {math.fsum(seconds) / len(seconds):.1f} s per trial on "
            f"average (max {max(seconds):.0f} s)")


# ---------------------------------------------------------------------------------------------------------------
# J §5.2 Table 1 (results/jaillet/table1)


def jaillet_table1() -> str:
    """README, J Table 1: mean latency of the eight algorithms over 50 seeds beside the paper's.

    Returns
    -------
    str
        The Markdown table, from the first workload of ``results/jaillet/table1/summary.csv``.
    """
    lines = ["| algorithm | ours | paper | ours ÷ MC-SF | paper ÷ MC-SF | loops |", "|---|---:|---:|---:|---:|---:|"]
    for p in J52_POLICIES:
        r = _row("jaillet/table1/summary.csv", workload="lmsys n=1000 λ=50", policy=p)
        lines.append(f"| {_policy_label(p)} | {_num(r['latency_mean']):.3f} | {_num(r['paper_mean']):.3f} | "
                     f"{_num(r['ratio_to_reference']):.3f} | {_num(r['paper_ratio_to_reference']):.3f} | "
                     f"{r['loops']}/{r['trials']} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# J Figure 3 (results/jaillet/fig3)

#: J Figure 3's slopes as printed (no unit; DIGEST I-17): MC-SF's and the best benchmark's, per λ.
FIG3_PAPER = {50: ("1/6", "1/2", "3"), 10: ("1/800", "1/100", "8")}


_T1 = "jaillet/table1/summary.csv"
_T1_ONE = "lmsys n=1000 λ=50, one request sample"


def jaillet_table1_std_ratio() -> str:
    """README, J Table 1: our latency std ÷ the paper's over the eight algorithms, lowest–highest (each seed draws
    new requests; ``results/jaillet/table1/summary.csv``).

    Returns
    -------
    str
        ``2.2–6.3×``.
    """
    ratios = [_num(r["latency_std"]) / _num(r["paper_std"]) for r in _csv_rows(_T1)
              if r["workload"] == "lmsys n=1000 λ=50" and r["paper_std"]]
    return f"{min(ratios):.1f}–{max(ratios):.1f}×"


def jaillet_table1_one_sample() -> str:
    """README, J Table 1: the latency std with one request sample and only the arrivals redrawn, the most variable
    algorithm apart (``results/jaillet/table1/summary.csv``).

    Returns
    -------
    str
        ``0.24–0.59 s for every algorithm but α = 0.1, β = 0.2 (12.0 s)``.
    """
    std = {r["policy"]: _num(r["latency_std"]) for r in _csv_rows(_T1) if r["workload"] == _T1_ONE}
    worst = max(std, key=lambda p: std[p])
    rest = [v for p, v in std.items() if p != worst]
    return (f"{min(rest):.2f}–{max(rest):.2f} s for every algorithm but {_policy_label(worst)} "
            f"({std[worst]:.1f} s)")


def jaillet_table1_resampled_ratio() -> str:
    """README, J Table 1: MC-Benchmark ÷ MC-SF with one request sample and with every seed resampled.

    Returns
    -------
    str
        ``1.353 with one sample, 1.352 resampled``.
    """
    one = _row(_T1, workload=_T1_ONE, policy="mc-benchmark")["ratio_to_reference"]
    resampled = _row(_T1, workload="lmsys n=1000 λ=50", policy="mc-benchmark")["ratio_to_reference"]
    return f"{_num(one):.3f} with one sample, {_num(resampled):.3f} resampled"


def _fig3_slopes(rate: int, policy: str) -> dict[int, float]:
    return {int(r["seed"]): _num(r["slope"]) for r in _csv_rows("jaillet/fig3/figure3_slopes.csv")
            if int(r["rate"]) == rate and r["policy"] == policy and not math.isnan(_num(r["slope"]))}


def _fig3_ratio(rate: int, policy: str) -> float:
    """Mean slope ÷ MC-SF's mean slope over the seeds both were fitted on (``figure3.md``'s *÷ MC-SF*)."""
    mine, ref = _fig3_slopes(rate, policy), _fig3_slopes(rate, "mc-sf")
    seeds = sorted(set(mine) & set(ref))
    return sum(mine[s] for s in seeds) / sum(ref[s] for s in seeds)


def jaillet_fig3_table() -> str:
    """README, J Figure 3: MC-SF's slope, the best benchmark's ratio, and the volume up to which MC-SF keeps
    the 200 s cap, per λ.

    Returns
    -------
    str
        The Markdown table, from ``results/jaillet/fig3/figure3_slopes.csv`` and ``figure3_cap.csv``.
    """
    lines = ["| λ | MC-SF slope (s per request) | best benchmark ÷ MC-SF | best α/β ÷ MC-SF | paper: best ÷ MC-SF "
             "| MC-SF below 200 s up to |", "|---|---|---|---|---|---|"]
    cap = {(int(r["rate"]), r["policy"]): int(r["within_cap_up_to"]) for r in _csv_rows("jaillet/fig3/figure3_cap.csv")
           if r["within_cap_up_to"].strip()}
    for rate in (50, 10):
        slopes = _fig3_slopes(rate, "mc-sf")
        mean = sum(slopes.values()) / len(slopes)
        benchmarks = {p: _fig3_ratio(rate, p) for p in J52_POLICIES[1:]}
        best = min(benchmarks, key=lambda p: benchmarks[p])
        best_ab = min(v for p, v in benchmarks.items() if p.startswith("alpha-protection"))
        mcsf_cap = cap[(rate, "mc-sf")]
        if all(v == mcsf_cap for (r, _), v in cap.items() if r == rate) and len([k for k in cap if k[0] == rate]) > 1:
            cap_text = f"{mcsf_cap:,} (every algorithm)"
        else:
            cap_text = f"{mcsf_cap:,} requests (J0 §8.2: 10,000)"
        mcsf_paper, best_paper, ratio_paper = FIG3_PAPER[rate]
        lines.append(f"| {rate} | {mean:.4f} (1/{1 / mean:.0f}); paper {mcsf_paper} | {benchmarks[best]:.2f} "
                     f"({_policy_label(best)}) | {best_ab:.2f} | {ratio_paper} ({best_paper} vs {mcsf_paper}) | "
                     f"{cap_text} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# J §5.2 at 10,000 requests (results/jaillet/lmsys)

_LMSYS = "jaillet/lmsys/summary.csv"


def _lmsys(rate: int, policy: str) -> dict[str, str]:
    return _row(_LMSYS, workload=f"lmsys n=10000 λ={rate}", policy=policy)


def _lmsys_mean(rate: int, alpha: str, beta: str) -> float | None:
    """Mean latency over seeds of one α / β configuration (the default ``free`` clearing), None if any seed loops."""
    r = _lmsys(rate, f"alpha-protection:alpha={alpha},beta={beta}")
    return None if int(r["loops"]) else _num(r["latency_mean"])


def jaillet_lmsys_eight() -> str:
    """``results/jaillet/lmsys/README.md``: mean latency of the eight algorithms at λ = 50 and 10 (seeds 0–4).

    Returns
    -------
    str
        The Markdown table, from ``results/jaillet/lmsys/summary.csv``.
    """
    lines = ["| algorithm | λ = 50 | ÷ MC-SF | λ = 10 | ÷ MC-SF |", "|---|---|---|---|---|"]
    for p in J52_POLICIES:
        cells = []
        for rate in (50, 10):
            r = _lmsys(rate, p)
            text = f"{_num(r['latency_mean']):.1f}"
            if p == "mc-sf":
                text += f" (std {_num(r['latency_std']):.1f})"
            if int(r["loops"]):
                text += f" ({r['loops']} of {r['trials']} seeds loop)"
            cells += [text, f"{_num(r['ratio_to_reference']):.2f}"]
        lines.append(f"| {_policy_label(p)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _argmin_alpha(rate: int, beta: str, alphas: Sequence[str]) -> tuple[str, float]:
    means = {a: _lmsys_mean(rate, a, beta) for a in alphas}
    done = {a: m for a, m in means.items() if m is not None}
    best = min(done, key=lambda a: done[a])
    return best, done[best]


_SWEEP_ALPHAS = ("0.02", "0.05", "0.08", "0.1", "0.12", "0.15", "0.18", "0.2", "0.22", "0.25", "0.3")


def _span(values: Sequence[float]) -> str:
    return f"{min(values):.1f}–{max(values):.1f}"


def jaillet_lmsys_sweeps() -> str:
    """``results/jaillet/lmsys/README.md``: the α and β sweeps (J Figures 7, 8, 10, 11) beside the paper's shapes.

    The numbers are means over seeds 0–4 of the default (``free``) clearing reading; a configuration with a
    looping seed is left out of a minimum.

    Returns
    -------
    str
        The Markdown table, from ``results/jaillet/lmsys/summary.csv``.
    """
    a50_1, m50_1 = _argmin_alpha(50, "0.1", _SWEEP_ALPHAS)
    a50_2, m50_2 = _argmin_alpha(50, "0.2", _SWEEP_ALPHAS)
    a10_1, m10_1 = _argmin_alpha(10, "0.1", _SWEEP_ALPHAS)
    a10_2, m10_2 = _argmin_alpha(10, "0.2", _SWEEP_ALPHAS)
    low_betas = ("0.02", "0.05", "0.1", "0.15", "0.2")
    flat50 = [m for b in low_betas if (m := _lmsys_mean(50, "0.1", b)) is not None]
    best_beta50 = min(low_betas, key=lambda b: _lmsys_mean(50, "0.1", b) or math.inf)
    beta10 = [_num(_lmsys(10, f"alpha-protection:alpha=0.1,beta={b}")["latency_mean"])
              for b in ("0.02", "0.05", "0.1", "0.15", "0.2", "0.25", "0.3", "0.4")]
    alpha02_10 = {f"{_num(_lmsys(10, f'alpha-protection:alpha=0.2,beta={b}')['latency_mean']):.1f}"
                  for b in ("0.02", "0.05", "0.1", "0.15", "0.2", "0.25", "0.3", "0.4", "0.5")}
    worse10 = _lmsys_mean(10, "0.05", "0.1")
    if len(alpha02_10) != 1 or worse10 is None:
        raise ValueError(f"results/{_LMSYS}: the λ = 10 sweep no longer has the shape the NOTES describe")
    lo10, hi10 = sorted([(float(a10_1), m10_1), (float(a10_2), m10_2)])
    return "\n".join([
        "| | paper | ours (all three readings) |",
        "|---|---|---|",
        f"| latency vs α, λ = 50 (Fig. 7) | minimum at α ∈ [0.15, 0.25]; degrades for α < 0.1 | minimum at "
        f"α = {a50_1} (β = 0.1: {m50_1:.1f} s) / {a50_2} (β = 0.2: {m50_2:.1f} s); α = 0.02 loops on every seed, "
        "α = 0.05 loops at β = 0.2 |",
        f"| latency vs β, λ = 50 (Fig. 8) | good for β ∈ [0.05, 0.25] | flat for β ≤ 0.2 (α = 0.1: "
        f"{_span(flat50)} s), best at β = {best_beta50}; α = 0.1, β = 0.25 near-livelock on 3 seeds, β ≥ 0.3 loops "
        "on every seed; α = 0.2: flat to β = 0.3, loops at 0.5 (3 seeds) |",
        f"| latency vs α, λ = 10 (Fig. 10) | minimum at α ∈ [0.10, 0.25]; degrades for α < 0.1 | minimum at "
        f"α = {lo10[0]:.2f}–{hi10[0]:.2f} ({_span([m10_1, m10_2])} s); α = 0.05 worse ({worse10:.1f} s), "
        "α = 0.02 loops |",
        f"| latency vs β, λ = 10 (Fig. 11) | stable for β ∈ [0.05, 0.20] | α = 0.1: flat ({_span(beta10)} s) up to "
        f"β = 0.4, one seed loops at β ≥ 0.3; α = 0.2: no clearing at all, every β {alpha02_10.pop()} s |",
    ])


def _lmsys_median(rate: int, policy: str) -> float:
    text = (RESULTS / "jaillet" / "lmsys" / "trials.jsonl").read_text(encoding="utf-8")
    values = sorted(float(r[f"latency_{policy}"]) for r in map(json.loads, text.splitlines())
                    if r["params"]["rate"] == rate)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def jaillet_lmsys_pass_cost() -> str:
    """``results/jaillet/lmsys/README.md``: how far charging every clearing pass moves the sweeps (medians over
    seeds at λ = 50).

    Returns
    -------
    str
        The parenthesis, from ``results/jaillet/lmsys/trials.jsonl``.
    """
    ab = "alpha-protection:alpha=0.1,beta=0.02"
    cd = "alpha-protection:alpha=0.05,beta=0.1"
    every = ",pass_cost=every-pass"
    return (f"λ = 50, α = 0.1, β = 0.02: {_lmsys_median(50, ab):.1f} s free vs {_lmsys_median(50, ab + every):.1f} s "
            f"every-pass, median over seeds; α = 0.05, β = 0.1: {_lmsys_median(50, cd):.1f} vs\n"
            f"{_lmsys_median(50, cd + every):.1f} s")


# ---------------------------------------------------------------------------------------------------------------
# W (results/wang/synthetic)


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
    for r in _csv_rows("wang/synthetic/lp_optima.csv"):
        if r["horizon"] == "n-literal" and r["tie"] == "index":
            per.setdefault((r["dataset"], r["method"]), []).append(-_num(r["swap_vs_lp"]))
            if r["dataset"] == "lmsys+arxiv":
                per_seed.setdefault(r["seed"], []).append(-_num(r["swap_vs_lp"]))
    synthetic = [sum(v) / len(v) for (d, _), v in per.items() if d in ("uniform", "normal", "binomial")]
    mix = [v for (d, _), vs in per.items() if d == "lmsys+arxiv" for v in vs]
    seeds = sorted(sum(v) / len(v) for v in per_seed.values())
    return (f"**LP-Swap beats Sorted-LP by {100 * min(synthetic):.1f}–{100 * max(synthetic):.1f} % on Uniform /\n"
            f"  Normal / Binomial and by {100 * sum(mix) / len(mix):.1f} % on the LMSYS + arXiv mix "
            f"({' % and '.join(f'{100 * s:.1f}' for s in seeds)} % on its two seeds)**")


# ---------------------------------------------------------------------------------------------------------------
# C (results/chen/lmsys)


def _chen_section6(setting: str, algorithm: str) -> float:
    """Mean latency over seeds at n = 2,000 of one C §6 setting (``results/chen/lmsys/figures_5_7.csv``)."""
    return _num(_row("chen/lmsys/figures_5_7.csv", setting=setting, n="2000", algorithm=algorithm)["latency_mean"])


def chen_section6_amin() -> str:
    """README, C §6: A_min ÷ H-SF at n = 2,000 in Exp. 1, Exp. 2 and Exp. 3 (x = 0.1 / 0.95 / 0.99).

    Returns
    -------
    str
        The phrase, from ``results/chen/lmsys/figures_5_7.csv``.
    """
    def r(setting: str) -> float:
        return _chen_section6(setting, "a-min") / _chen_section6(setting, "h-sf")

    xs = ("0.1", "0.95", "0.99")
    return (f"{r('exp1'):.2f}× H-SF's\n  in Exp. 1, {r('exp2'):.2f}× in Exp. 2, and "
            + " / ".join(f"{r(f'exp3 x={x}'):.2f}" for x in xs) + "× for x = " + " / ".join(xs))


def chen_section6_amax() -> str:
    """README, C §6: A_max ÷ H-SF with one shared interval, and A_max's change from x = 0.1 to x = 0.95 / 0.99.

    Returns
    -------
    str
        The phrase, from ``results/chen/lmsys/figures_5_7.csv``.
    """
    poor = _chen_section6("exp1", "a-max") / _chen_section6("exp1", "h-sf")
    worse = max(_chen_section6(f"exp3 x={x}", "a-max") for x in ("0.95", "0.99")) / _chen_section6("exp3 x=0.1",
                                                                                                    "a-max")
    return (f"A_max is poor with one shared interval ({poor:.1f}×), as C says, and it improves with bins. It does\n"
            f"  not deteriorate much at x = 0.95 / 0.99 (×{worse:.2f} vs x = 0.1)")


def chen_x01_amin() -> str:
    """``results/chen/lmsys/README.md``: A_min ÷ H-SF at n = 2,000, x = 0.1, to three decimals (the verdict's
    threshold is 1.10, and the ratio, 1.1049…, rounds onto it at two).

    Returns
    -------
    str
        The ratio of the mean latencies, from ``results/chen/lmsys/figures_5_7.csv``.
    """
    return f"{_chen_section6('exp3 x=0.1', 'a-min') / _chen_section6('exp3 x=0.1', 'h-sf'):.3f}"


def chen_m_sweep() -> str:
    """``results/chen/lmsys/README.md``: A_min ÷ H-SF in C Exp. 1 as M grows (C-like sample).

    Returns
    -------
    str
        The phrase with the continuous and the discrete engine's ratios, from ``c_like_m_sweep.csv``.
    """
    rows = [r for r in _csv_rows("chen/lmsys/c_like_m_sweep.csv") if r["setting"] == "exp1"
            and float(r["factor"]).is_integer()]
    cont = [(int(float(r["factor"])), _num(r["cont_a-min"]) / _num(r["cont_h-sf"])) for r in rows]
    disc = {int(float(r["factor"])): _num(r["disc_a-min"]) / _num(r["disc_h-sf"]) for r in rows}
    return (" / ".join(f"{v:.3f}" for _, v in cont) + " at M = " + " / ".join(str(f) for f, _ in cont)
            + f" × 16,492 (continuous), {disc[1]:.3f} … {disc[5]:.3f} (5×), {disc[6]:.3f} (6×) in the discrete engine")


# ---------------------------------------------------------------------------------------------------------------
# results/jaillet/schedule-polish


def schedule_polish_memory() -> str:
    """``results/jaillet/schedule-polish/README.md``: the memory limits of the replayed J §5.1 trials.

    Returns
    -------
    str
        ``M = 40`` if every trial has it, else the range, e.g. ``M = 30–50``.
    """
    text = (RESULTS / "jaillet" / "schedule-polish" / "trials.jsonl").read_text(encoding="utf-8")
    ms = sorted({int(json.loads(line)["M"]) for line in text.splitlines() if line.strip()})
    return f"M = {ms[0]}" if len(ms) == 1 else f"M = {ms[0]}–{ms[-1]}"


def _capacity_k12_drops() -> dict[str, float]:
    """Per algorithm: mean latency at K = 1 ÷ at K = 2 (router round-robin, λ = 50, each a mean over the seeds
    whose run did not loop, as ``claim.md``'s table)."""
    text = (RESULTS / "jaillet" / "capacity" / "trials.jsonl").read_text(encoding="utf-8")
    recs = [json.loads(line) for line in text.splitlines() if line.strip()]
    recs = [r for r in recs if r["params"]["rate"] == 50]
    out = {}
    for key in recs[0]:
        if not key.startswith("curve_") or not key.endswith("@round-robin"):
            continue
        means = {}
        for k in ("1", "2"):
            vals = [r[key][k]["mean"] for r in recs if r[key].get(k, {}).get("mean") is not None]
            means[k] = sum(vals) / len(vals)
        out[key.removeprefix("curve_").removesuffix("@round-robin")] = means["1"] / means["2"]
    return out


def jaillet_capacity_drop() -> str:
    """README and ``results/jaillet/capacity/README.md``: how much the mean latency falls from one worker to two.

    Returns
    -------
    str
        e.g. ``2.49–2.70× (MC-SF 2.70×)``.
    """
    drops = _capacity_k12_drops()
    return f"{min(drops.values()):.2f}–{max(drops.values()):.2f}× (MC-SF {drops['mc-sf']:.2f}×)"


def jaillet_capacity_queue() -> str:
    """README and ``results/jaillet/capacity/README.md``: MC-SF's and MC-Benchmark's queue per setting (seed 0).

    Returns
    -------
    str
        A Markdown table from ``results/jaillet/capacity/queue_by_k.csv``.
    """
    rows = [r for r in _csv_rows("jaillet/capacity/queue_by_k.csv")
            if r["policy"] in ("mc-sf", "mc-benchmark") and r["status"] == "ok"]
    half, end = _num(rows[0]["t_half_s"]), _num(rows[0]["t_end_s"])
    out = ["| setting | algorithm | mean latency (s) | makespan (s) | served /s | waiting at "
           f"{half:g} s | waiting at {end:g} s | (makespan − last arrival) / 2 (s) |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['setting']} | {_policy_label(r['policy'])} | {_num(r['mean_s']):.1f} | "
                   f"{_num(r['makespan_s']):.0f} | {_num(r['served_per_s']):.1f} | "
                   f"{int(r['waiting_half_window']):,} | {int(r['waiting_end_window']):,} | "
                   f"{_num(r['fluid_fcfs_s']):.1f} |")
    return "\n".join(out)


def jaillet_capacity_big_worker() -> str:
    """README and ``results/jaillet/capacity/README.md``: J0's 8 GPUs as one worker with 4× the memory.

    Returns
    -------
    str
        The mean-latency ranges over seeds 0–2 from ``results/jaillet/capacity/one_worker_4x.csv``, e.g.
        ``same batch time: MC-SF 203.1–209.1 s, the benchmarks 320.3–375.9 s; …``.
    """
    rows = _csv_rows("jaillet/capacity/one_worker_4x.csv")
    parts = []
    for setting in dict.fromkeys(r["setting"] for r in rows):
        mine = [r for r in rows if r["setting"] == setting and r["status"] == "ok"]
        loops = sum(1 for r in rows if r["setting"] == setting and r["status"] != "ok")
        mc = [_num(r["mean_s"]) for r in mine if r["policy"] == "mc-sf"]
        bench = [_num(r["mean_s"]) for r in mine if r["policy"] != "mc-sf"]
        parts.append(f"{setting.removeprefix('1 worker, 4×M, ')}: MC-SF {min(mc):.1f}–{max(mc):.1f} s, the "
                     f"benchmarks {min(bench):.1f}–{max(bench):.1f} s" + (f" ({loops} run looped)" if loops else ""))
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------------------------------
# paper policies against production schedulers (results/production/vs-papers)


def production_gain_text(latency: float, baseline: float) -> str:
    """``1 − latency ÷ baseline`` as a signed whole percentage (``+33 %``, ``−9 %``, ``0 %``).

    Parameters
    ----------
    latency, baseline : float
        Mean latencies of a policy and of the baseline it is compared with.

    Returns
    -------
    str
    """
    pct = round(100 * (1 - latency / baseline))
    return "0 %" if pct == 0 else f"{pct:+d} %".replace("-", "−")


def production_vs_papers_gain(folder: str = "production/vs-papers") -> str:
    """README, "Paper policies against production schedulers": MC-SF's gain against the papers' clairvoyant
    FCFS and against the blind vLLM / Sarathi schedulers, per trace and rate.

    Parameters
    ----------
    folder : str
        The results folder under ``results/`` (``production/vs-papers``, or ``production/vs-papers-vidur-m``
        for Vidur's KV capacity).

    Returns
    -------
    str
        The Markdown table from ``FOLDER/summary.csv`` (means over its seeds): the mean latency of FCFS, vLLM,
        Sarathi-Serve (when run) and MC-SF, MC-SF's gain ``1 − MC-SF ÷ baseline`` against FCFS and vLLM, and
        the policy ranked first.
    """
    rows = _csv_rows(f"{folder}/summary.csv")
    keys = list(dict.fromkeys((r["trace"], r["rate"]) for r in rows))
    sarathi = any(r["policy"] == "sarathi" for r in rows)
    head = "| trace | λ (/s) | FCFS (s) | vLLM (s) |" + (" Sarathi (s) |" if sarathi else "") + \
        " MC-SF (s) | MC-SF gain vs FCFS | MC-SF gain vs vLLM | first |"
    lines = [head, "|---|---:|---:|---:|" + ("---:|" if sarathi else "") + "---:|---:|---:|---|"]
    for trace, rate in keys:
        sub = {r["policy"]: r for r in rows if r["trace"] == trace and r["rate"] == rate}
        lat = {p: _num(r["latency"]) for p, r in sub.items()}
        first = next(r["label"] for r in sub.values() if r["rank"] and int(float(r["rank"])) == 1)
        cells = [trace, f"{float(rate):g}", f"{lat['fcfs']:,.1f}", f"{lat['vllm']:,.1f}"]
        if sarathi:
            cells.append(f"{lat['sarathi']:,.1f}")
        cells += [f"{lat['mc-sf']:,.1f}", production_gain_text(lat["mc-sf"], lat["fcfs"]),
                  production_gain_text(lat["mc-sf"], lat["vllm"]), first]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def production_discrete_bounds() -> str:
    """``results/production/vs-papers-discrete/README.md``: every policy's TEL beside the certified lower bound.

    Returns
    -------
    str
        The Markdown table from ``trials.jsonl``: per policy, the trials whose schedule verified, and the mean
        and maximum of TEL ÷ certified bound (an upper bound on TEL ÷ OPT) and of TEL ÷ best schedule found
        (a lower bound on it) over them.
    """
    from llmopt.papers.production.vs_papers import POLICY_INFO

    trials = [json.loads(line) for line in
              (RESULTS / "production/vs-papers-discrete/trials.jsonl").read_text(encoding="utf-8").splitlines()
              if line.strip()]
    policies = [p for p in POLICY_INFO if f"heuristic_{p}" in trials[0] or f"tel_{p}" in trials[0]]
    lines = ["| policy | knows o | verified | TEL ÷ bound mean | max | TEL ÷ best found mean | max |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for p in policies:
        ok = [t for t in trials if t.get(f"verified_{p}") and t.get(f"tel_{p}") is not None and t.get("bound")]
        label, info = POLICY_INFO[p]
        if not ok:
            lines.append(f"| {label} | {info} | 0/{len(trials)} | — | — | — | — |")
            continue
        vs_bound = [t[f"tel_{p}"] / t["bound"] for t in ok]
        vs_best = [t[f"tel_{p}"] / t["incumbent"] for t in ok]
        lines.append(f"| {label} | {info} | {len(ok)}/{len(trials)} | {sum(vs_bound) / len(ok):.3f} | "
                     f"{max(vs_bound):.3f} | {sum(vs_best) / len(ok):.3f} | {max(vs_best):.3f} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# the prose numbers of the README's J0 theory paragraph and C's bullets


def _j0_theory() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESULTS / "jaillet/j0-theory/rows.json").read_text(encoding="utf-8"))
    return data


def j0_thm62_first_m(eps: str = "1/4") -> str:
    """README, J0 theory: the smallest M at which MC-SF ÷ exact OPT passes 1/ε on Thm 6.2's family.

    Parameters
    ----------
    eps
        The family's ε as ``rows.json`` spells it.

    Returns
    -------
    str
        ``M ≥ 256 at ε = 1/4`` from ``results/jaillet/j0-theory/rows.json``.
    """
    rows = sorted((r["M"], r["TEL/OPT"], r["1/ε"]) for r in _j0_theory()["thm62"]
                  if r["policy"] == "mc-sf" and r["ε"] == eps)
    past = [m for m, ratio, inv in rows if ratio > inv]
    if not past:
        raise LookupError(f"results/jaillet/j0-theory/rows.json: MC-SF never passes 1/ε at ε = {eps}")
    return f"M ≥ {past[0]:,} at ε = {eps}"


def j0_thm62_evicting() -> str:
    """README, J0 theory: on how many of Thm 6.2's instances the evicting policy's TEL equals exact OPT.

    Returns
    -------
    str
        ``TEL = OPT on 22 of 26 instances`` (``preempt-shortest-first`` rows of ``rows.json``).
    """
    rows = [r for r in _j0_theory()["thm62"] if r["policy"] == "preempt-shortest-first"]
    return f"TEL = OPT on {sum(r['TEL'] == r['OPT'] for r in rows)} of {len(rows)} instances"


def j0_thm43_flat(n_from: int = 160) -> str:
    """README, J0 theory: MC-SF ÷ certified bound (max over seeds) on Thm 4.3's rows, and its change from
    ``n_from`` to the largest n per output distribution.

    Returns
    -------
    str
        ``MC-SF ÷ certified bound ≤ 1.54; from n = 160 to 640: +0.02 / +0.01 (uniform / two-point)``.
    """
    rows = _j0_theory()["thm43"]

    def worst(r: dict[str, Any]) -> float:
        return float(r["MC-SF / bound (mean, max)"].split(",")[1])

    n_max = max(r["n"] for r in rows)
    dists = list(dict.fromkeys(r["outputs"] for r in rows))
    at = {(r["outputs"], r["n"]): worst(r) for r in rows}
    moves = " / ".join(f"{at[d, n_max] - at[d, n_from]:+.2f}".replace("-", "−") for d in dists)
    names = " / ".join(d.split()[0] for d in dists)
    return (f"MC-SF ÷ certified bound ≤ {max(map(worst, rows)):.2f}; from n = {n_from} to {n_max}: "
            f"{moves} ({names})")


def j0_thm53_growth() -> str:
    """README, J0 theory: the fitted growth of the proven regret lower bound per 100 periods, overloaded regime.

    Returns
    -------
    str
        ``0.96 per 100 periods at s/M = 2/24 and 0.62 at s/M = 2/96`` from
        ``results/jaillet/j0-theory/large-thm53/rows.json``.
    """
    data = json.loads((RESULTS / "jaillet/j0-theory/large-thm53/rows.json").read_text(encoding="utf-8"))
    fits = {k.split()[0].removeprefix("M="): 100 * v["lo"][0] for k, v in data["thm53_fits"].items()
            if k.endswith(" overloaded")}
    first, *rest = fits.items()
    return (f"{first[1]:.2f} per 100 periods at s/M = 2/{first[0]}"
            + "".join(f" and {v:.2f} at s/M = 2/{m}" for m, v in rest))


def chen_lemma2_sample() -> str:
    """README, C: Lemma 2's fluid-limit A_min ÷ H-SF (ℓ = 1) on the staged sample's outputs, lowest–highest over
    the prompt sizes it is evaluated at, as the study behind ``results/chen/lmsys/m_sensitivity.md`` wrote it
    (:func:`llmopt.papers.chen.lmsys_study.lemma2_exp1`, which needs the staged trace; the file does not).

    Returns
    -------
    str
        ``1.464–1.605``, to the file's three decimals.

    Raises
    ------
    LookupError
        If ``m_sensitivity.md`` has no Lemma 2 sentence.
    """
    text = (RESULTS / "chen/lmsys/m_sensitivity.md").read_text(encoding="utf-8")
    head = "this sample's output distribution: E[TEL(A_min)] / TEL(H-SF) = "
    if head not in text:
        raise LookupError("results/chen/lmsys/m_sensitivity.md: no Lemma 2 values on the sample")
    sentence = text.split(head, 1)[1].split("The same for", 1)[0]
    values = re.findall(r"(\d+\.\d+) \(s = ", sentence)
    if not values:
        raise LookupError("results/chen/lmsys/m_sensitivity.md: no Lemma 2 values on the sample")
    low, high = min(values, key=float), max(values, key=float)
    return f"{low}–{high}"


def chen_figure1_lambda(us: Sequence[int] = (2, 10, 100, 1000)) -> str:
    """README, C: Figure 1's λ_max (Lemma 2's worst case, s = 0) by :func:`llmopt.papers.chen.theory.figure1_cr`.

    Returns
    -------
    str
        ``λ_max = 1.2500, 1.7249, 2.3333, 2.9239 at u = 2, 10, 100, 1000``.
    """
    from llmopt.papers.chen.theory import figure1_cr

    return (f"λ_max = {', '.join(f'{figure1_cr(u):.4f}' for u in us)} at u = "
            f"{', '.join(map(str, us))}")


def _ec1_sorted_lp(distribution: str) -> dict[str, str]:
    found = [r for r in _csv_rows("wang/synthetic/table_ec1.csv")
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
    ratios = [_num(r["bound_mean"]) / _num(r["paper"]) for r in rows]
    above = sum(int(_num(r["bound_above_paper"])) for r in rows)
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
    return " and ".join(f"{_num(r['paper']) / _num(r['tel_mean']):.1f}×" for r in rows)


def wang_lp_swap_vs_sorted_lp() -> str:
    """README, W Figure 8: LP-Swap's mean latency ÷ Sorted-LP's, the farthest from 1 over n
    (``results/wang/mixed/figure8.csv``).

    Returns
    -------
    str
        ``within 2.1 % (n = 200)``.
    """
    lat = {(int(r["n"]), r["algorithm"]): _num(r["latency_mean"]) for r in _csv_rows("wang/mixed/figure8.csv")}
    devs = {n: lat[n, "lp-swap"] / lat[n, "sorted-lp"] - 1
            for n, a in lat if a == "lp-swap" and (n, "sorted-lp") in lat}
    n = max(devs, key=lambda k: abs(devs[k]))
    return f"within {100 * abs(devs[n]):.1f} % (n = {n:,})"


def _minus(text: str) -> str:
    return text.replace("-", "−")


def _amin_section6() -> list[dict[str, str]]:
    """``readings.csv``'s C §6 rows (the staged and the C-like sample) of the ``amin-readings`` study."""
    return [r for r in _csv_rows("chen/amin-readings/readings.csv") if r["group"] != "theory"]


def chen_readings_nearest(reading: str = "certified") -> str:
    """README, C: on how many C §6 rows ``reading`` is the A_min reading nearest C's target (ties to the first
    reading listed), from ``results/chen/amin-readings/readings.csv``.

    Returns
    -------
    str
        ``7 of 10 rows``.
    """
    rows = [r for r in _amin_section6() if r["ratio"]]
    entries = list(dict.fromkeys((r["group"], r["entry"]) for r in rows))
    nearest = [min((r for r in rows if (r["group"], r["entry"]) == e),
                   key=lambda r: abs(_num(r["ratio"]) - _num(r["target"])))["reading"] for e in entries]
    return f"{nearest.count(reading)} of {len(entries)} rows"


def chen_readings_floor() -> str:
    """README, C: the lowest A_min ÷ H-SF of any reading on any C §6 row (``readings.csv``).

    Returns
    -------
    str
        ``≥ 1.06× H-SF``.
    """
    return f"≥ {min(_num(r['ratio']) for r in _amin_section6() if r['ratio']):.2f}× H-SF"


def chen_readings_guard() -> str:
    """README, C: how many small random runs that finish without A_min's cycle guard it changes, per reading and
    guard (``results/chen/amin-readings/variants.csv``).

    Returns
    -------
    str
        ``2 of 600 certified, 8 of 600 repaired small random instances; a guard on repeated states,
        `cycle_guard=repeat`: 2 and 13``.
    """
    guard = {(r["entry"], r["reading"]): r
             for r in _csv_rows("chen/amin-readings/variants.csv") if r["kind"] == "guard"}
    stale = ", ".join(f"{guard['stale', k]['changed']} of {guard['stale', k]['finished']} {k}"
                      for k in ("certified", "repaired"))
    return (f"{stale} small random instances; a guard on repeated states, `cycle_guard=repeat`: "
            f"{guard['repeat', 'certified']['changed']} and {guard['repeat', 'repaired']['changed']}")


def chen_readings_ties(reading: str = "certified") -> str:
    """README, C: how far C's per-step random ties move A_min ÷ H-SF on the C §6 rows, lowest … highest
    (``results/chen/amin-readings/variants.csv``, per step ÷ per request − 1).

    Returns
    -------
    str
        ``−3.6 … +6.4 %``.
    """
    moves = [_num(r["b"]) / _num(r["a"]) - 1 for r in _csv_rows("chen/amin-readings/variants.csv")
             if r["kind"] == "ties" and r["reading"] == reading]
    return _minus(f"{100 * min(moves):+.1f} … {100 * max(moves):+.1f} %")


# ---------------------------------------------------------------------------------------------------------------
# the registry of blocks


def opt_proofs_table(folder: str) -> Callable[[], str]:
    """The render of suite ``folder``'s proven rows with their "proof" column, from
    ``results/opt/opt-proofs/proofs.jsonl`` (:func:`llmopt.opt.studies.opt_proofs.proof_table`)."""

    def render() -> str:
        from llmopt.opt.studies.opt_proofs import proof_table

        return proof_table(folder)

    return render


def opt_proofs_counts() -> str:
    """How many proven-OPT rows rest on which proof (``results/opt/opt-proofs/proofs.jsonl``)."""
    from llmopt.opt.studies.opt_proofs import proof_counts

    return proof_counts()


def cluster_ratios_summary() -> str:
    """The README's K-worker router × policy ranges: mean ratio per (K, router) cell, min–max over the cells."""
    cells: dict[tuple[str, str, str, str], list[float]] = {}
    for r in _csv_rows("opt/cluster-ratios/rows.csv"):
        if r["ratio"]:
            cells.setdefault((r["model"], r["K"], r["policy"], r["router"]), []).append(_num(r["ratio"]))

    def span(model: str, policy: str) -> str:
        means = [math.fsum(v) / len(v) for k, v in cells.items() if (k[0], k[2]) == (model, policy)]
        return f"{min(means):.2f}–{max(means):.2f}"

    return (f"MC-SF {span('AM1', 'mc-sf')} on AM1 and {span('AM2', 'mc-sf')} on AM2, FCFS "
            f"{span('AM1', 'fcfs')} and {span('AM2', 'fcfs')} (mean per K × router cell, K = 1, 2, 4)")


def _vidur_rows() -> list[dict[str, Any]]:
    return list(json.loads((RESULTS / "perf/vidur/results.json").read_text(encoding="utf-8"))["rows"])


def _pct_span(values: Sequence[float], signed: bool = True) -> str:
    lo, hi = min(values), max(values)
    f = (lambda v: f"{100 * v:+.1f} %") if signed else (lambda v: f"{100 * v:.2f} %")
    return f(lo) if round(lo, 3) == round(hi, 3) else f"{f(lo)} … {f(hi)}"


def vidur_side_by_side() -> str:
    """The README's Vidur paragraph: agreement per scheduler with the same batch times, and speed."""
    rows = _vidur_rows()
    same = [r for r in rows if r["simulator"] == "vidur" and r.get("batch_time") == "llmopt"]
    sar = [abs(r["d_latency_mean"]) for r in same if r["scheduler"] == "sarathi"]
    vll = [r["d_latency_mean"] for r in same if r["scheduler"] == "vllm" and r["trace"] == "lmsys"]
    mixed = [abs(r["d_latency_mean"]) for r in rows if r["simulator"] == "vidur-mixed"]
    leads = sorted(r["lead"] for r in rows if r.get("lead") is not None)
    variant = [r for r in _csv_rows("perf/vidur/llmopt_variant.csv") if ":" in r["llmopt_policy"]]
    worst = {m: max(abs(_num(r[f"d_{m}_mean"])) for r in variant) for m in ("latency", "ttft", "tbt")}
    vleads = sorted(_num(r["lead"]) for r in variant)
    return (f"With Vidur fed llmopt's batch times, `sarathi` matches Vidur's Sarathi within {100 * max(sar):.2f} % "
            f"mean latency ({len(sar)} rows); the default `vllm` (mixed prefill + decode batches) does not "
            f"({_pct_span(vll)} mean latency on LMSYS), because Vidur's vLLM runs prefill-only batches that pause "
            f"the decodes — with that one rule changed inside Vidur the two agree within {100 * max(mixed):.1f} %. "
            f"`vllm:batching=prefill-first` (vLLM v0's prefill-priority batches, paused iterations in the engine) "
            f"runs them too and agrees with Vidur's vLLM within {100 * worst['latency']:.1f} % mean latency, "
            f"{100 * worst['ttft']:.1f} % TTFT and {100 * worst['tbt']:.1f} % TBT on all {len(variant)} rows "
            f"([llmopt_variant.md](results/perf/vidur/llmopt_variant.md)). llmopt is {leads[0]:.1f}–{leads[-1]:.1f}× "
            f"faster than Vidur per simulated request with the default `vllm` and `sarathi` (median "
            f"{leads[len(leads) // 2]:.1f}×, {len(leads)} Vidur runs), but only {vleads[0]:.1f}–{vleads[-1]:.1f}× with "
            "`prefill-first` (its CPU from the variant's own run, beside Vidur's from the committed one), whose "
            "every pause moves each running request: O(#running) per paused iteration.")


@dataclass(frozen=True)
class Block:
    """One generated text: its function and the files (relative to the checkout) that print it."""

    render: Callable[[], str]
    files: tuple[str, ...]
    source: str


BLOCKS: dict[str, Block] = {
    "j-verdicts": Block(lambda: render_verdicts(jaillet_verdicts.J_CLAIMS, "J"), ("README.md",),
                        "the evidence column of each row (llmopt/papers/jaillet/verdicts.py)"),
    "j0-verdicts": Block(lambda: render_verdicts(jaillet_verdicts.J0_CLAIMS, "J0"), ("README.md",),
                         "the evidence column of each row (llmopt/papers/jaillet/verdicts.py)"),
    "w-verdicts": Block(lambda: render_verdicts(wang_verdicts.CLAIMS, "W"), ("README.md",),
                        "the evidence column of each row (llmopt/papers/wang/verdicts.py)"),
    "c-verdicts": Block(lambda: render_verdicts(chen_verdicts.CLAIMS, "C"), ("README.md",),
                        "the evidence column of each row (llmopt/papers/chen/verdicts.py)"),
    "cluster-ratios-summary": Block(cluster_ratios_summary, ("README.md",), "results/opt/cluster-ratios/rows.csv"),
    "vidur-side-by-side": Block(vidur_side_by_side, ("README.md",),
                                "results/perf/vidur/results.json, llmopt_variant.csv"),
    "j-synthetic-table": Block(jaillet_synthetic_table, ("README.md",), "results/jaillet/synthetic/summary.csv"),
    "j-table1": Block(jaillet_table1, ("README.md",), "results/jaillet/table1/summary.csv"),
    "j-fig3-table": Block(jaillet_fig3_table, ("README.md",),
                          "results/jaillet/fig3/figure3_slopes.csv, figure3_cap.csv"),
    "j-lmsys-eight": Block(jaillet_lmsys_eight, ("results/jaillet/lmsys/README.md",),
                           "results/jaillet/lmsys/summary.csv"),
    "j-lmsys-sweeps": Block(jaillet_lmsys_sweeps, ("results/jaillet/lmsys/README.md",),
                            "results/jaillet/lmsys/summary.csv"),
    "j-lmsys-pass-cost": Block(jaillet_lmsys_pass_cost, ("results/jaillet/lmsys/README.md",),
                               "results/jaillet/lmsys/trials.jsonl"),
    "w-scaled-dp-rounds-notes": Block(wang_scaled_dp_rounds_notes, ("results/wang/synthetic/README.md",),
                                      "results/wang/synthetic/claims.md §2"),
    "w-short-horizon-gain": Block(wang_short_horizon_gain, ("results/wang/synthetic/README.md",),
                                  "results/wang/synthetic/lp_optima.csv"),
    "c-section6-amin": Block(chen_section6_amin, ("README.md",), "results/chen/lmsys/figures_5_7.csv"),
    "c-section6-amax": Block(chen_section6_amax, ("README.md",), "results/chen/lmsys/figures_5_7.csv"),
    "c-x01-amin": Block(chen_x01_amin, ("results/chen/lmsys/README.md",), "results/chen/lmsys/figures_5_7.csv"),
    "c-m-sweep": Block(chen_m_sweep, ("results/chen/lmsys/README.md",),
                       "results/chen/lmsys/c_like_m_sweep.csv"),
    "polish-memory": Block(schedule_polish_memory, ("results/jaillet/schedule-polish/README.md",),
                           "results/jaillet/schedule-polish/trials.jsonl"),
    "j-capacity-drop": Block(jaillet_capacity_drop, ("README.md", "results/jaillet/capacity/README.md"),
                             "results/jaillet/capacity/trials.jsonl"),
    "j-capacity-queue": Block(jaillet_capacity_queue, ("results/jaillet/capacity/README.md",),
                              "results/jaillet/capacity/queue_by_k.csv"),
    "j-capacity-big-worker": Block(jaillet_capacity_big_worker, ("README.md", "results/jaillet/capacity/README.md"),
                                   "results/jaillet/capacity/one_worker_4x.csv"),
    "production-gain": Block(production_vs_papers_gain, ("README.md", "results/production/vs-papers/README.md"),
                             "results/production/vs-papers/summary.csv"),
    "production-gain-vidur-m": Block(lambda: production_vs_papers_gain("production/vs-papers-vidur-m"),
                                     ("README.md", "results/production/vs-papers-vidur-m/README.md"),
                                     "results/production/vs-papers-vidur-m/summary.csv"),
    "production-discrete-bounds": Block(production_discrete_bounds,
                                        ("results/production/vs-papers-discrete/README.md",),
                                        "results/production/vs-papers-discrete/trials.jsonl"),
    "opt-proofs-frontier": Block(opt_proofs_table("jaillet/opt-frontier"), ("results/jaillet/opt-frontier/README.md",),
                                 "results/opt/opt-proofs/proofs.jsonl"),
    "opt-proofs-ip-scaling": Block(opt_proofs_table("jaillet/ip-scaling"), ("results/jaillet/ip-scaling/README.md",),
                                   "results/opt/opt-proofs/proofs.jsonl"),
    "opt-proofs-counts": Block(opt_proofs_counts, ("README.md",), "results/opt/opt-proofs/proofs.jsonl"),
    "j-am1-lower": Block(jaillet_am1_lower, ("README.md",), "results/jaillet/synthetic/summary.csv"),
    "j-table1-std-ratio": Block(jaillet_table1_std_ratio, ("README.md",), "results/jaillet/table1/summary.csv"),
    "j-table1-one-sample": Block(jaillet_table1_one_sample, ("README.md",), "results/jaillet/table1/summary.csv"),
    "j-table1-resampled-ratio": Block(jaillet_table1_resampled_ratio, ("README.md",),
                                      "results/jaillet/table1/summary.csv"),
    "j-zone-lp-ratio": Block(jaillet_zone_lp_ratio, ("README.md",), "results/jaillet/zone-bound/trials.jsonl"),
    "j-zone-gap": Block(jaillet_zone_gap, ("README.md",), "results/jaillet/zone-bound/trials.jsonl"),
    "j-zone-bracket": Block(jaillet_zone_bracket, ("README.md",), "results/jaillet/zone-bound/trials.jsonl"),
    "j-certified-lns": Block(jaillet_certified_lns, ("README.md",), "results/jaillet/certified/trials.jsonl"),
    "j-certified-gap": Block(jaillet_certified_gap, ("README.md",),
                             "results/jaillet/certified/summary.csv, results/jaillet/synthetic/summary.csv"),
    "j0-thm62-first-m": Block(j0_thm62_first_m, ("README.md",), "results/jaillet/j0-theory/rows.json"),
    "j0-thm62-evicting": Block(j0_thm62_evicting, ("README.md",), "results/jaillet/j0-theory/rows.json"),
    "j0-thm43-flat": Block(j0_thm43_flat, ("README.md",), "results/jaillet/j0-theory/rows.json"),
    "j0-thm53-growth": Block(j0_thm53_growth, ("README.md",), "results/jaillet/j0-theory/large-thm53/rows.json"),
    "c-readings-nearest": Block(chen_readings_nearest, ("README.md",), "results/chen/amin-readings/readings.csv"),
    "c-readings-floor": Block(chen_readings_floor, ("README.md",), "results/chen/amin-readings/readings.csv"),
    "c-readings-guard": Block(chen_readings_guard, ("README.md",), "results/chen/amin-readings/variants.csv"),
    "c-readings-ties": Block(chen_readings_ties, ("README.md",), "results/chen/amin-readings/variants.csv"),
    "c-lemma2-sample": Block(chen_lemma2_sample, ("README.md", "results/chen/lmsys/README.md"),
                             "results/chen/lmsys/m_sensitivity.md"),
    "c-figure1-lambda": Block(chen_figure1_lambda, ("README.md",), "llmopt.papers.chen.theory.figure1_cr"),
    "w-ec1-bound-span": Block(wang_ec1_bound_span, ("README.md",), "results/wang/synthetic/table_ec1.csv"),
    "w-ec1-below": Block(wang_ec1_below, ("README.md",), "results/wang/synthetic/table_ec1.csv"),
    "w-lp-swap-vs-sorted-lp": Block(wang_lp_swap_vs_sorted_lp, ("README.md",), "results/wang/mixed/figure8.csv"),
}


@dataclass(frozen=True)
class Mismatch:
    """A marked block whose printed text is not what its results give (or a block missing from its file)."""

    file: str
    line: int
    name: str
    printed: str | None
    expected: str

    def __str__(self) -> str:
        if self.printed is None:
            return f"{self.file}: block {self.name!r} not found (expected markers around it)"
        return (f"{self.file}:{self.line}: block {self.name!r} disagrees with {BLOCKS[self.name].source}:\n"
                f"  printed:  {self.printed!r}\n  expected: {self.expected!r}")


def _wrapped(body: str, text: str) -> str:
    """``text`` in the form of ``body``: on lines of its own if the markers are on lines of their own."""
    return f"\n{text}\n" if body.startswith("\n") else text


def update(path: str, text: str) -> tuple[str, list[Mismatch]]:
    """Regenerate every marked block of one file's ``text``.

    Parameters
    ----------
    path
        The file's path relative to the checkout (for messages).
    text
        Its contents.

    Returns
    -------
    tuple
        The text with every marked block regenerated, and the blocks whose printed text differed.

    Raises
    ------
    KeyError
        If a marker names a block that :data:`BLOCKS` does not define.
    """
    mismatches: list[Mismatch] = []

    def replace(m: re.Match[str]) -> str:
        name, body = m.group("name"), m.group("body")
        if name not in BLOCKS:
            line = text.count("\n", 0, m.start()) + 1
            raise KeyError(f"{path}:{line}: unknown generated block {name!r} (known: {', '.join(sorted(BLOCKS))})")
        expected = _wrapped(body, BLOCKS[name].render())
        if body != expected:
            mismatches.append(Mismatch(path, text.count("\n", 0, m.start()) + 1, name, body.strip("\n"),
                                       expected.strip("\n")))
        return f"<!-- generated: {name} -->{expected}<!-- end generated -->"

    return _MARK.sub(replace, text), mismatches


def check(root: Path = ROOT, write: bool = False) -> list[Mismatch]:
    """Compare (or rewrite) every block of :data:`BLOCKS` in every file that prints it.

    Parameters
    ----------
    root
        The checkout.
    write
        Rewrite the files whose blocks differ.

    Returns
    -------
    list of Mismatch
        The blocks that differed (before rewriting), and blocks missing from a file that should print them.
    """
    files = sorted({f for b in BLOCKS.values() for f in b.files})
    out: list[Mismatch] = []
    for rel in files:
        path = root / rel
        text = path.read_text(encoding="utf-8")
        new, mismatches = update(rel, text)
        found = {m.group("name") for m in _MARK.finditer(text)}
        out += mismatches
        out += [Mismatch(rel, 0, name, None, "") for name, b in BLOCKS.items() if rel in b.files and name not in found]
        if write and new != text:
            path.write_text(new, encoding="utf-8")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m llmopt.papers.printed [--write]``: check (or rewrite) the generated blocks; 1 if any differs."""
    ap = argparse.ArgumentParser(prog="python -m llmopt.papers.printed", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the marked blocks from the committed results")
    ap.add_argument("--check", action="store_true", help="only report the blocks that differ (the default)")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = ap.parse_args(argv)
    try:
        mismatches = check(args.root, write=args.write)
    except (KeyError, LookupError, ValueError, OSError) as exc:
        print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    for m in mismatches:
        print(("rewrote " if args.write and m.printed is not None else "") + str(m), file=sys.stderr)
    missing = [m for m in mismatches if m.printed is None]
    if args.write:
        return 1 if missing else 0
    print(f"{len(BLOCKS)} blocks, {len(mismatches)} differ from their results", file=sys.stderr)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
