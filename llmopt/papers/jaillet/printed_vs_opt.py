"""J's (Jaillet et al.) §5.1 numbers against hindsight OPT printed in README.md and
``results/jaillet/*/README.md`` — MC-SF beside the best schedule found and the certified bounds — computed from
the committed results (the blocks of :data:`BLOCKS`; ``llmopt.papers.printed`` writes and checks them)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from llmopt.papers.printing import Block, num, results_text, row
from llmopt.papers.printing import jsonl as results_jsonl
from llmopt.papers.verdicts import ip_limit


def jaillet_synthetic_table() -> str:
    """README, J §5.1: MC-SF against the best schedule found and the certified bound, AM1 / AM2, beside the paper.

    Returns
    -------
    str
        The Markdown table, from ``results/jaillet/synthetic/summary.csv``.
    """
    am = {w: row("jaillet/synthetic/summary.csv", workload=f"jaillet-am{w}") for w in (1, 2)}

    def paper_not_optimal(r: dict[str, str]) -> str:
        return f"{int(r['paper_trials']) - int(r['paper_exact'])} / {r['paper_trials']}" if r["paper_exact"] else ""

    lines = ["| | AM1 ours | AM1 paper | AM2 ours | AM2 paper |", "|---|---:|---:|---:|---:|"]
    lines.append("| OPT proven | " + " | ".join(f"{am[w]['proven_optimal']} / {am[w]['trials']} | (Gurobi)"
                                                for w in (1, 2)) + " |")
    lines.append("| MC-SF / best schedule found, mean (max) — *lower* bound on the ratio | " + " | ".join(
        f"{num(am[w]['ratio_vs_incumbent_mean']):.3f} ({num(am[w]['ratio_vs_incumbent_max']):.3f}) | "
        f"{num(am[w]['paper_mean']):.3f} ({num(am[w]['paper_max']):.3f}) vs OPT" for w in (1, 2)) + " |")
    lines.append("| MC-SF / certified bound, mean — *upper* bound on the ratio | " + " | ".join(
        f"{num(am[w]['ratio_vs_bound_mean']):.3f} | " for w in (1, 2)) + " |")
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
    return f"{num(row('jaillet/synthetic/summary.csv', workload='jaillet-am1')['ratio_vs_incumbent_mean']):.3f}"


def _certified_trials() -> list[dict[str, Any]]:
    return [json.loads(line) for line in
            results_text("jaillet/certified/trials.jsonl").splitlines() if line.strip()]


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
    cert = {w: row("jaillet/certified/summary.csv", workload=f"jaillet-am{w}") for w in (1, 2)}
    plain = {w: row("jaillet/synthetic/summary.csv", workload=f"jaillet-am{w}") for w in (1, 2)}
    excess = " and ".join(f"≥ {100 * (num(cert[w]['ratio_vs_incumbent_mean']) - 1):.1f} % (AM{w})" for w in (1, 2))
    gap = " and ".join(f"{100 * num(cert[w]['gap_mean']):.1f} % (AM{w})" for w in (1, 2))
    before = " / ".join(f"{100 * num(plain[w]['gap_mean']):.1f}" for w in (1, 2))
    return (f"**{excess}** on average. The certified lower bound does not move: the mean certified gap is "
            f"**{gap}** ({before} % before)")


def _zone_trials(workload: str | None = None) -> list[dict[str, Any]]:
    """The ``zone-bound`` study's rows of J §5.1's 400 trials (suite ``jaillet-certified``), or of one workload."""
    rows = [json.loads(line) for line in
            results_text("jaillet/zone-bound/trials.jsonl").splitlines() if line.strip()]
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


def schedule_polish_memory() -> str:
    """``results/jaillet/schedule-polish/README.md``: the memory limits of the replayed J §5.1 trials.

    Returns
    -------
    str
        ``M = 40`` if every trial has it, else the range, e.g. ``M = 30–50``.
    """
    text = results_text("jaillet/schedule-polish/trials.jsonl")
    ms = sorted({int(json.loads(line)["M"]) for line in text.splitlines() if line.strip()})
    return f"M = {ms[0]}" if len(ms) == 1 else f"M = {ms[0]}–{ms[-1]}"


def _polish() -> dict[str, list[dict[str, Any]]]:
    """Per arrival model, the ``schedule-polish`` trials, each with the zone bound of the same trial
    (``bound_after`` in ``results/jaillet/zone-bound/trials.jsonl``) as ``zone_bound``."""
    zone = {(r["workload"], r["seed"]): r["bound_after"] for r in _zone_trials()}
    out: dict[str, list[dict[str, Any]]] = {}
    for r in results_jsonl("jaillet/schedule-polish/trials.jsonl"):
        out.setdefault(r["workload"], []).append({**r, "zone_bound": zone[r["workload"], r["seed"]]})
    return out


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values)


def polish_gain() -> str:
    """README, the bracket table's CP-SAT row: how far ``cp-sat-lns`` moved the stored best schedule, and how far
    the control (the same 30 ``lns`` sub-IPs without CP-SAT) moved the replayed ``lns`` schedule
    (``results/jaillet/schedule-polish/trials.jsonl``).

    Returns
    -------
    str
        ``0.32 % (AM1) / 0.22 % (AM2) below the stored best found, 336 of 400 improved (2 worse`` … ``0.30 / 0.21 %``.
    """
    trials = _polish()
    gain = " / ".join(f"{100 * _mean([(r['stored_best'] - r['final_tel']) / r['stored_best'] for r in rows]):.2f} % "
                      f"(AM{w[-1]})" for w, rows in trials.items())
    every = [r for rows in trials.values() for r in rows]
    better = sum(r["final_tel"] < r["stored_best"] for r in every)
    worse = [r for r in every if r["final_tel"] > r["stored_best"]]
    from_ip = sum(r["stored_best_source"].startswith("ip/") for r in worse)
    why = f"{from_ip} of them" if from_ip < len(worse) else "both" if from_ip == 2 else "all"
    control = " / ".join(f"{100 * _mean([(r['tel_lns'] - r['tel_lns-more']) / r['tel_lns'] for r in rows]):.2f}"
                         for rows in trials.values())
    worse_text = f" ({len(worse)} worse, {why} where the stored best came from the 5-s IP)" if worse else ""
    return (f"{gain} below the stored best found, {better} of {len(every)} improved{worse_text} — but the same 30 "
            f"extra `lns` sub-IPs without CP-SAT give {control} %")


def polish_gap(before: bool = True) -> str:
    """README, the bracket table: the mean certified gap against the zone bound over each arrival model's trials,
    with the stored best schedule → the best after ``cp-sat-lns`` (or the latter alone).

    Parameters
    ----------
    before : bool
        Print the stored best's gap too (``14.78 → 14.51 % (AM1) and …``); else ``14.51 % (AM1) / 15.34 % (AM2)``.

    Returns
    -------
    str
    """
    parts = []
    for w, rows in _polish().items():
        old = _mean([(r["stored_best"] - r["zone_bound"]) / r["stored_best"] for r in rows])
        new = _mean([(r["best_tel"] - r["zone_bound"]) / r["best_tel"] for r in rows])
        parts.append(f"{100 * old:.2f} → {100 * new:.2f} % (AM{w[-1]})" if before else f"{100 * new:.2f} % (AM{w[-1]})")
    return (" and " if before else " / ").join(parts)


def suite_wall(folder: str) -> Callable[[], str]:
    """README, J §5.1: the wall time of a committed suite run, as its ``summary.md`` records it.

    Parameters
    ----------
    folder : str
        The results folder under ``results/``, e.g. ``jaillet/synthetic``.

    Returns
    -------
    callable
        Returning e.g. ``2,063 s wall``.
    """
    def render() -> str:
        found = re.search(r"^- Wall time: ([\d.]+) s over", results_text(f"{folder}/summary.md"), re.MULTILINE)
        if not found:
            raise LookupError(f"results/{folder}/summary.md: no wall time")
        return f"{float(found.group(1)):,.0f} s wall"

    return render


#: the blocks this module prints, by name
BLOCKS: dict[str, Block] = {
    "j-polish-gain": Block(polish_gain, ("README.md",), "results/jaillet/schedule-polish/trials.jsonl"),
    "j-polish-gap": Block(polish_gap, ("README.md",),
                          "results/jaillet/schedule-polish/trials.jsonl, results/jaillet/zone-bound/trials.jsonl"),
    "j-polish-gap-final": Block(lambda: polish_gap(before=False), ("README.md",),
                                "results/jaillet/schedule-polish/trials.jsonl, zone-bound/trials.jsonl"),
    "j-synthetic-limit": Block(lambda: ip_limit("jaillet/synthetic"), ("README.md",),
                               "results/jaillet/synthetic/trials.jsonl, manifest.json"),
    "j-certified-limit": Block(lambda: ip_limit("jaillet/certified"), ("README.md",),
                               "results/jaillet/certified/trials.jsonl, manifest.json"),
    "j-synthetic-wall": Block(suite_wall("jaillet/synthetic"), ("README.md",), "results/jaillet/synthetic/summary.md"),
    "j-certified-wall": Block(suite_wall("jaillet/certified"), ("README.md",), "results/jaillet/certified/summary.md"),
    "j-synthetic-table": Block(jaillet_synthetic_table, ("README.md",), "results/jaillet/synthetic/summary.csv"),
    "polish-memory": Block(schedule_polish_memory, ("results/jaillet/schedule-polish/README.md",),
                           "results/jaillet/schedule-polish/trials.jsonl"),
    "j-am1-lower": Block(jaillet_am1_lower, ("README.md",), "results/jaillet/synthetic/summary.csv"),
    "j-zone-lp-ratio": Block(jaillet_zone_lp_ratio, ("README.md",), "results/jaillet/zone-bound/trials.jsonl"),
    "j-zone-gap": Block(jaillet_zone_gap, ("README.md",), "results/jaillet/zone-bound/trials.jsonl"),
    "j-zone-bracket": Block(jaillet_zone_bracket, ("README.md",), "results/jaillet/zone-bound/trials.jsonl"),
    "j-certified-lns": Block(jaillet_certified_lns, ("README.md",), "results/jaillet/certified/trials.jsonl"),
    "j-certified-gap": Block(jaillet_certified_gap, ("README.md",),
                             "results/jaillet/certified/summary.csv, results/jaillet/synthetic/summary.csv"),
}
