"""The paper policies against production schedulers, and Vidur beside llmopt: the numbers printed in README.md
and ``results/production/*/README.md``, computed from the committed results (the blocks of :data:`BLOCKS`;
``llmopt.papers.printed`` writes and checks them)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from llmopt.papers.printing import Block, csv_rows, num, results_text


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
    rows = csv_rows(f"{folder}/summary.csv")
    keys = list(dict.fromkeys((r["trace"], r["rate"]) for r in rows))
    sarathi = any(r["policy"] == "sarathi" for r in rows)
    head = "| trace | λ (/s) | FCFS (s) | vLLM (s) |" + (" Sarathi (s) |" if sarathi else "") + \
        " MC-SF (s) | MC-SF gain vs FCFS | MC-SF gain vs vLLM | first |"
    lines = [head, "|---|---:|---:|---:|" + ("---:|" if sarathi else "") + "---:|---:|---:|---|"]
    for trace, rate in keys:
        sub = {r["policy"]: r for r in rows if r["trace"] == trace and r["rate"] == rate}
        lat = {p: num(r["latency"]) for p, r in sub.items()}
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
              results_text("production/vs-papers-discrete/trials.jsonl").splitlines()
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


def _vidur_rows() -> list[dict[str, Any]]:
    return list(json.loads(results_text("perf/vidur/results.json"))["rows"])


def _pct_span(values: Sequence[float], signed: bool = True) -> str:
    lo, hi = min(values), max(values)
    f = (lambda v: f"{100 * v:+.1f} %") if signed else (lambda v: f"{100 * v:.2f} %")
    return f(lo) if round(lo, 3) == round(hi, 3) else f"{f(lo)} … {f(hi)}"


def vidur_side_by_side() -> str:
    """The README's Vidur paragraph: agreement per scheduler with the same batch times, and speed."""
    rows = _vidur_rows()
    same = [r for r in rows if r["simulator"] == "vidur" and r.get("batch_time") == "llmopt"]
    sar = [abs(r["d_latency_mean"]) for r in same if r["scheduler"] == "sarathi"]
    vll = {m: max(abs(r[f"d_{m}_mean"]) for r in same if r["scheduler"] == "vllm") for m in ("latency", "ttft", "tbt")}
    n_vll = sum(1 for r in same if r["scheduler"] == "vllm")
    mixed = [abs(r["d_latency_mean"]) for r in rows if r["simulator"] == "vidur-mixed"]
    leads = sorted(r["lead"] for r in rows if r.get("lead") is not None)
    variant = [r for r in csv_rows("perf/vidur/llmopt_variant.csv") if ":" in r["llmopt_policy"]]
    apart = [num(r["d_latency_mean"]) for r in variant if r["trace"] == "lmsys"]
    return (f"With Vidur fed llmopt's batch times, `sarathi` matches Vidur's Sarathi within {100 * max(sar):.2f} % "
            f"mean latency ({len(sar)} rows), and the default `vllm` (vLLM v0's prefill-priority batches: an "
            f"iteration that admits prompts holds only their prefills and pauses the decodes) matches Vidur's vLLM "
            f"within {100 * vll['latency']:.1f} % mean latency, {100 * vll['ttft']:.1f} % TTFT and "
            f"{100 * vll['tbt']:.1f} % TBT ({n_vll} rows). `vllm:batching=mixed` (vLLM v1-like: new prompts join the "
            f"decode batch) is another scheduler: Vidur's vLLM is {_pct_span(apart)} in mean latency against it on "
            f"LMSYS ([llmopt_variant.md](results/perf/vidur/llmopt_variant.md)), and Vidur's vLLM with that one rule "
            f"changed (`vidur-mixed`) agrees with it within {100 * max(mixed):.1f} %. llmopt is "
            f"{leads[0]:.1f}–{leads[-1]:.1f}× faster than Vidur per simulated request (median "
            f"{leads[len(leads) // 2]:.1f}×, {len(leads)} Vidur runs, both sides timed in the same run); a paused "
            "iteration costs the engine O(1) (runs count in decode iterations).")


def discrete_run() -> str:
    """``results/production/vs-papers-discrete/README.md``: the run's wall and task seconds and its mean certified
    gap, from the suite's ``summary.md`` (its "Runs" section and the gap column), e.g. ``101 s of wall time (195 s
    of task time on two workers), mean certified gap 29.9 %``."""
    text = results_text("production/vs-papers-discrete/summary.md")
    wall = re.search(r"Wall time: ([\d.]+) s", text)
    task = re.search(r"Sum of task run times: ([\d.]+) s", text)
    rows = [line.split("|") for line in text.splitlines() if line.startswith("| AM1")]
    if wall is None or task is None or len(rows) != 1:
        raise LookupError("results/production/vs-papers-discrete/summary.md: no wall time, task time or AM1 row")
    gap = float(rows[0][-3].strip().rstrip("%").strip())
    return (f"{float(wall.group(1)):.0f} s of wall time ({float(task.group(1)):.0f} s of task time on two workers), "
            f"mean certified gap {gap:.1f} %")


#: the blocks this module prints, by name
BLOCKS: dict[str, Block] = {
    "production-discrete-run": Block(discrete_run, ("results/production/vs-papers-discrete/README.md",),
                                     "results/production/vs-papers-discrete/summary.md"),
    "vidur-side-by-side": Block(vidur_side_by_side, ("README.md",),
                                "results/perf/vidur/results.json, llmopt_variant.csv"),
    "production-gain": Block(production_vs_papers_gain, ("README.md", "results/production/vs-papers/README.md"),
                             "results/production/vs-papers/summary.csv"),
    "production-gain-vidur-m": Block(lambda: production_vs_papers_gain("production/vs-papers-vidur-m"),
                                     ("README.md", "results/production/vs-papers-vidur-m/README.md"),
                                     "results/production/vs-papers-vidur-m/summary.csv"),
    "production-discrete-bounds": Block(production_discrete_bounds,
                                        ("results/production/vs-papers-discrete/README.md",),
                                        "results/production/vs-papers-discrete/trials.jsonl"),
}
