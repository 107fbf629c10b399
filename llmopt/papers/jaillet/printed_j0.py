"""J0's (the long version's) numbers printed in README.md and ``results/jaillet/*/README.md`` — the capacity
study and the theory rows — computed from the committed results (the blocks of :data:`BLOCKS`;
``llmopt.papers.printed`` writes and checks them)."""

from __future__ import annotations

import json
from typing import Any

from llmopt.papers.jaillet import verdicts as jaillet_verdicts
from llmopt.papers.jaillet.printed import policy_label
from llmopt.papers.printing import Block, csv_rows, num, results_text
from llmopt.papers.verdicts import render as render_verdicts


def _capacity_k12_drops() -> dict[str, float]:
    """Per algorithm: mean latency at K = 1 ÷ at K = 2 (router round-robin, λ = 50, each a mean over the seeds
    whose run did not loop, as ``claim.md``'s table)."""
    text = results_text("jaillet/capacity/trials.jsonl")
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
    rows = [r for r in csv_rows("jaillet/capacity/queue_by_k.csv")
            if r["policy"] in ("mc-sf", "mc-benchmark") and r["status"] == "ok"]
    half, end = num(rows[0]["t_half_s"]), num(rows[0]["t_end_s"])
    out = ["| setting | algorithm | mean latency (s) | makespan (s) | served /s | waiting at "
           f"{half:g} s | waiting at {end:g} s | (makespan − last arrival) / 2 (s) |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['setting']} | {policy_label(r['policy'])} | {num(r['mean_s']):.1f} | "
                   f"{num(r['makespan_s']):.0f} | {num(r['served_per_s']):.1f} | "
                   f"{int(r['waiting_half_window']):,} | {int(r['waiting_end_window']):,} | "
                   f"{num(r['fluid_fcfs_s']):.1f} |")
    return "\n".join(out)


def jaillet_capacity_big_worker() -> str:
    """README and ``results/jaillet/capacity/README.md``: J0's 8 GPUs as one worker with 4× the memory.

    Returns
    -------
    str
        The mean-latency ranges over seeds 0–2 from ``results/jaillet/capacity/one_worker_4x.csv``, e.g.
        ``same batch time: MC-SF 203.1–209.1 s, the benchmarks 320.3–375.9 s; …``.
    """
    rows = csv_rows("jaillet/capacity/one_worker_4x.csv")
    parts = []
    for setting in dict.fromkeys(r["setting"] for r in rows):
        mine = [r for r in rows if r["setting"] == setting and r["status"] == "ok"]
        loops = sum(1 for r in rows if r["setting"] == setting and r["status"] != "ok")
        mc = [num(r["mean_s"]) for r in mine if r["policy"] == "mc-sf"]
        bench = [num(r["mean_s"]) for r in mine if r["policy"] != "mc-sf"]
        parts.append(f"{setting.removeprefix('1 worker, 4×M, ')}: MC-SF {min(mc):.1f}–{max(mc):.1f} s, the "
                     f"benchmarks {min(bench):.1f}–{max(bench):.1f} s" + (f" ({loops} run looped)" if loops else ""))
    return "; ".join(parts)


def _j0_theory() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(results_text("jaillet/j0-theory/rows.json"))
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
    data = json.loads(results_text("jaillet/j0-theory/large-thm53/rows.json"))
    fits = {k.split()[0].removeprefix("M="): 100 * v["lo"][0] for k, v in data["thm53_fits"].items()
            if k.endswith(" overloaded")}
    first, *rest = fits.items()
    return (f"{first[1]:.2f} per 100 periods at s/M = 2/{first[0]}"
            + "".join(f" and {v:.2f} at s/M = 2/{m}" for m, v in rest))


#: the blocks this module prints, by name
BLOCKS: dict[str, Block] = {
    "j0-verdicts": Block(lambda: render_verdicts(jaillet_verdicts.J0_CLAIMS, "J0"), ("README.md",),
                         "the evidence column of each row (llmopt/papers/jaillet/verdicts.py)"),
    "j-capacity-drop": Block(jaillet_capacity_drop, ("README.md", "results/jaillet/capacity/README.md"),
                             "results/jaillet/capacity/trials.jsonl"),
    "j-capacity-queue": Block(jaillet_capacity_queue, ("results/jaillet/capacity/README.md",),
                              "results/jaillet/capacity/queue_by_k.csv"),
    "j-capacity-big-worker": Block(jaillet_capacity_big_worker, ("README.md", "results/jaillet/capacity/README.md"),
                                   "results/jaillet/capacity/one_worker_4x.csv"),
    "j0-thm62-first-m": Block(j0_thm62_first_m, ("README.md",), "results/jaillet/j0-theory/rows.json"),
    "j0-thm62-evicting": Block(j0_thm62_evicting, ("README.md",), "results/jaillet/j0-theory/rows.json"),
    "j0-thm43-flat": Block(j0_thm43_flat, ("README.md",), "results/jaillet/j0-theory/rows.json"),
    "j0-thm53-growth": Block(j0_thm53_growth, ("README.md",), "results/jaillet/j0-theory/large-thm53/rows.json"),
}
