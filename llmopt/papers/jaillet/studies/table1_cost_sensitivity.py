"""J Table 1 under several batch-time models: how much of the MC-Benchmark / MC-SF gap the cost model explains.

The committed Table 1 reproduction (``results/jaillet/table1``) gets MC-Benchmark / MC-SF = 1.352 against the
paper's 1.447. This study reruns the same setting — 1,000 LMSYS requests from
``lmsys_chat_1m_words_in256_out256.csv`` (``trace_workload(seed, n=1000, rate=50, on_bad_row="drop")``, so
requests, arrivals and β randomness are redrawn per seed, as the suite does), the eight algorithms of
``J52_POLICIES``, the continuous engine, every schedule re-verified by the checker's continuous-time mode — under
batch-time models of different shapes:

* ``fitted``: the default Vidur-style fit (``make_cost_model()``);
* ``fitted, no context``, ``fitted, no per-request``, ``fitted, no prefill attention``: the fit with one term set to
  0 (``dataclasses.replace``), and ``fitted, tokens only`` with all three at 0 (weights GEMMs and all-reduce only);
* ``roofline``: ``llama2-70b-a100-tp2-roofline`` (a lower bound, efficiencies 1);
* ``constant``: every batch takes MC-SF's mean batch time under ``fitted`` on the same seeds (pooled: MC-SF's busy
  seconds over its iterations), so that its latencies are on the same scale;
* ``released code``: the batch-time formula of the paper's released simulator (public repository
  ``anonymouspeople111/neurips2025-code``, files ``MC-SF.py`` / ``alpha-greedy.py``): per batch
  ``44.6 ms + 0.52 ms · jobs + 0.0027 ms · Σ context + 0.378 ms · Σ prompt tokens of the new prompts``, where a
  job is a prompt or a decode token and a decode job's context counts only the tokens it has *generated* (its prompt
  excluded). Our engine gives the cost model the decode context *with* the prompts (``Σ (s_j + a_j)``), so the
  prompts of the decoding requests are subtracted at the trace's mean prompt (42.84 words) per decode request,
  ``max(D, C − 42.84·D)``; ``released code, prompt in context`` keeps ``C`` whole (the two bracket the exact value).

A second table takes the released code apart on the MC-Benchmark / MC-SF ratio: batch times (``fitted`` or
``released code``) × token accounting (``o``: a request runs ``o`` iterations, ours; ``o + 1``: the released code's
prompt iteration plus ``o`` decode iterations, emulated by ``o_i + 1``) × outputs (as staged, or the long outputs
thinned as in the ``alpha-loop-sensitivity`` study: rows with output > 45 words kept with probability 0.45,
output median 75 → 36 words).

    llmopt study run table1-cost-sensitivity --seeds 0-49 --out results/jaillet/table1
    llmopt study run table1-cost-sensitivity --quick      # seeds 0, 1

writes the Markdown report ``cost_sensitivity.md`` and, beside it, a CSV with one row per (table, model,
outputs, tokens, seed, algorithm).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import ConstantCostModel, load_cost_model, make_cost_model
from llmopt.engine.discrete import EvictionLoopError
from llmopt.model.timed_instance import TimedInstance
from llmopt.opt.studies import StudyError, run_main, study_command
from llmopt.papers.jaillet.released_cost import ReleasedCodeCostModel
from llmopt.papers.jaillet.suites import J52_POLICIES, LMSYS_TRACE
from llmopt.policies import make_policy_spec
from llmopt.verify.timed import check_timed_schedule
from llmopt.workloads.traces import Trace, load_trace, sample_instance
from llmopt.workloads.traces.data import data_dir, trace_workload
from llmopt.workloads.traces.sampling import thin_long_outputs

#: J Table 1 (L726–737): mean and std of the average latency (s) over 50 runs, n = 1,000, λ = 50.
PAPER: dict[str, tuple[float, float]] = {
    "mc-sf": (32.112, 0.354),
    "mc-benchmark": (46.472, 0.310),
    "alpha-protection:alpha=0.3": (51.933, 0.324),
    "alpha-protection:alpha=0.25": (51.046, 0.351),
    "alpha-protection:alpha=0.2,beta=0.2": (50.401, 0.343),
    "alpha-protection:alpha=0.2,beta=0.1": (50.395, 0.360),
    "alpha-protection:alpha=0.1,beta=0.2": (53.393, 1.457),
    "alpha-protection:alpha=0.1,beta=0.1": (50.862, 0.946),
}
SHORT = {
    "mc-sf": "MC-SF", "mc-benchmark": "MC-Benchmark",
    "alpha-protection:alpha=0.3": "α = 0.3", "alpha-protection:alpha=0.25": "α = 0.25",
    "alpha-protection:alpha=0.2,beta=0.2": "α = 0.2, β = 0.2",
    "alpha-protection:alpha=0.2,beta=0.1": "α = 0.2, β = 0.1",
    "alpha-protection:alpha=0.1,beta=0.2": "α = 0.1, β = 0.2",
    "alpha-protection:alpha=0.1,beta=0.1": "α = 0.1, β = 0.1",
}
PAPER_GAP_RATIO = PAPER["mc-benchmark"][0] / PAPER["mc-sf"][0]  # 1.447
N_REQUESTS = 1000
RATE = 50.0


def cost_models(constant_s: float) -> dict[str, tuple[Any, str]]:
    """Model key → (cost model, what it is). ``constant_s``: the constant model's seconds per iteration."""
    fit = load_cost_model()
    return {
        "fitted": (make_cost_model(), "the default fit (llama2-70b-a100-tp2)"),
        "fitted, no context": (dataclasses.replace(fit, per_context_token=0.0, name="fitted-no-context"),
                               "decode attention (KV reads) set to 0"),
        "fitted, no per-request": (dataclasses.replace(fit, per_request=0.0, name="fitted-no-per-request"),
                                   "the calibrated per-sequence constant (0.32 ms) set to 0"),
        "fitted, no prefill attention": (dataclasses.replace(fit, per_prefill_sq=0.0, name="fitted-no-prefill-sq"),
                                         "the Σ s² prefill-attention term set to 0"),
        "fitted, tokens only": (dataclasses.replace(fit, per_context_token=0.0, per_request=0.0, per_prefill_sq=0.0,
                                                    name="fitted-tokens-only"),
                                "only the weight GEMMs and all-reduces (hinges in the batch's tokens)"),
        "roofline": (make_cost_model("llama2-70b-a100-tp2-roofline"), "first-principles lower bound"),
        "constant": (ConstantCostModel(constant_s, name="constant"),
                     f"{constant_s * 1000:.3f} ms per batch = MC-SF's mean batch time under `fitted`, same seeds"),
        "released code": (ReleasedCodeCostModel(), "J's released simulator, prompts of decoders subtracted at 42.84"),
        "released code, prompt in context": (ReleasedCodeCostModel(name="released-code-ctx-with-prompt",
                                                                   prompt_in_context=0.0),
                                             "the same with the decode context taken whole"),
    }


def plus_one(instance: TimedInstance) -> TimedInstance:
    """Every output one token longer (the released code's separate prompt iteration)."""
    return dataclasses.replace(instance, requests=tuple(dataclasses.replace(r, output=r.output + 1)
                                                        for r in instance.requests))


_THINNED: list[Trace] = []


def instance_for(seed: int, outputs: str = "staged", tokens: str = "o") -> TimedInstance:
    """The Table 1 instance of ``seed`` (``trace_workload``), or the thinned trace's, with ``o`` or ``o + 1``."""
    if outputs == "staged":
        inst = trace_workload(seed, n=N_REQUESTS, rate=RATE, on_bad_row="drop")
    else:
        if not _THINNED:
            staged = load_trace(data_dir() / "traces" / LMSYS_TRACE, "lmsys", M=16_492, on_bad_row="drop")
            _THINNED.append(thin_long_outputs(staged))
        inst = sample_instance(_THINNED[0], N_REQUESTS, seed, rate=RATE)
    return plus_one(inst) if tokens == "o+1" else inst


def run_one(instance: TimedInstance, spec: str, seed: int, cost: Any) -> dict[str, Any]:
    """One policy on one instance: simulated, re-verified (as ``llmopt/bench/trace_task.py``), summarised."""
    row: dict[str, Any] = {"algorithm": spec, "status": None, "verified": False, "latency_s": None,
                           "evictions": None, "recomputed": None, "iterations": None, "busy_s": None,
                           "makespan_s": None}
    try:
        sched = simulate_continuous(instance, make_policy_spec(spec, seed=seed), cost)
    except EvictionLoopError as exc:
        row.update(status="eviction-loop", evictions=exc.evictions, recomputed=exc.recomputed_tokens,
                   iterations=exc.t)
        return row
    check = check_timed_schedule(instance, sched.starts, sched.batch_start, sched.batch_duration, cost,
                                 evictions=sched.evictions)
    mean = sched.mean_latency
    verified = bool(check.ok) and check.mean_latency is not None and mean is not None and \
        abs(check.mean_latency - mean) <= 1e-9 * max(1.0, mean)
    row.update(status="ok" if verified else "rejected", verified=verified,
               latency_s=check.mean_latency if verified else None, evictions=len(sched.evictions),
               recomputed=sched.recomputed_tokens, iterations=sched.iterations,
               busy_s=float(np.sum(sched.batch_duration)), makespan_s=sched.makespan)
    return row


def run_grid(table: str, model: str, cost: Any, seeds: Sequence[int], policies: Sequence[str],
             outputs: str = "staged", tokens: str = "o",
             seconds_per_iteration: float | None = None) -> list[dict[str, Any]]:
    rows = []
    for seed in seeds:
        inst = instance_for(seed, outputs, tokens)
        for spec in policies:
            row = {"table": table, "model": model, "outputs": outputs, "tokens": tokens, "seed": seed,
                   "seconds_per_iteration": seconds_per_iteration, **run_one(inst, spec, seed, cost)}
            rows.append(row)
    return rows


# --- aggregation -----------------------------------------------------------------------------------------------

def latencies(rows: Iterable[dict[str, Any]], model: str, spec: str, table: str = "models", outputs: str = "staged",
              tokens: str = "o") -> list[float]:
    """Mean latencies of the completed, verified runs of one cell (seed order)."""
    return [float(r["latency_s"]) for r in rows if r["table"] == table and r["model"] == model
            and r["outputs"] == outputs and r["tokens"] == tokens and r["algorithm"] == spec
            and r["latency_s"] is not None and r["latency_s"] != ""]


def loops(rows: Iterable[dict[str, Any]], model: str, spec: str) -> int:
    return sum(1 for r in rows if r["table"] == "models" and r["model"] == model and r["algorithm"] == spec
               and r["status"] == "eviction-loop")


def pooled_batch_s(rows: Iterable[dict[str, Any]], model: str, spec: str) -> float:
    """Busy seconds over iterations, pooled over the completed runs of one (model, algorithm)."""
    sel = [r for r in rows if r["table"] == "models" and r["model"] == model and r["algorithm"] == spec
           and r["busy_s"] not in (None, "")]
    return sum(float(r["busy_s"]) for r in sel) / sum(int(r["iterations"]) for r in sel)


def mean_iterations(rows: Iterable[dict[str, Any]], model: str, spec: str) -> float:
    sel = [int(r["iterations"]) for r in rows if r["table"] == "models" and r["model"] == model
           and r["algorithm"] == spec and r["busy_s"] not in (None, "")]
    return sum(sel) / len(sel)


def gap_ratio(rows: Sequence[dict[str, Any]], model: str, table: str = "models", outputs: str = "staged",
              tokens: str = "o") -> float:
    """MC-Benchmark / MC-SF: ratio of the two mean latencies (as the committed NOTES compute it)."""
    sf = latencies(rows, model, "mc-sf", table, outputs, tokens)
    mb = latencies(rows, model, "mc-benchmark", table, outputs, tokens)
    return statistics.fmean(mb) / statistics.fmean(sf)


def per_seed_gap(rows: Sequence[dict[str, Any]], model: str, table: str = "models", outputs: str = "staged",
                 tokens: str = "o") -> list[float]:
    def by_seed(spec: str) -> dict[int, float]:
        return {int(r["seed"]): float(r["latency_s"]) for r in rows if r["table"] == table and r["model"] == model
                and r["outputs"] == outputs and r["tokens"] == tokens and r["algorithm"] == spec
                and r["latency_s"] not in (None, "")}
    sf, mb = by_seed("mc-sf"), by_seed("mc-benchmark")
    return [mb[s] / sf[s] for s in sorted(sf) if s in mb]


def fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def report_text(rows: list[dict[str, Any]], models: dict[str, tuple[Any, str]], seeds: Sequence[int], command: str,
           loads: tuple[tuple[float, float, float], tuple[float, float, float]], wall_s: float) -> str:
    names = list(models)
    fitted_gap = gap_ratio(rows, "fitted")
    paper_gap = PAPER_GAP_RATIO
    verified = sum(1 for r in rows if r["status"] == "ok")
    rejected = sum(1 for r in rows if r["status"] == "rejected")
    looped = sum(1 for r in rows if r["status"] == "eviction-loop")
    la0, la1 = loads
    out = [
        "# J Table 1 under several batch-time models (issue 24, item 4)", "",
        f"Command: `{command}` — {wall_s:.0f} s wall on this shared 2-core machine (load average "
        f"{la0[0]:.2f} / {la0[1]:.2f} / {la0[2]:.2f} at the start, {la1[0]:.2f} / {la1[1]:.2f} / {la1[2]:.2f} at the "
        f"end; Python {platform.python_version()}). Setting of `results/jaillet/table1`: 1,000 requests of "
        f"`{LMSYS_TRACE}` per seed (`trace_workload(seed, n=1000, rate=50, on_bad_row=\"drop\")`: requests, Poisson "
        f"arrivals at λ = 50 /s and β randomness redrawn per seed), M = 16,492, seeds 0…{seeds[-1]} "
        f"({len(seeds)} runs per cell), continuous engine. Every completed schedule was re-verified by the checker's "
        f"continuous-time mode with the model it ran under: {verified:,} verified, {rejected} rejected, "
        f"{looped:,} runs stopped by the loop guard. Per-run numbers: `{Path(CSV_NAME).name}` beside this file.", "",
        "Batch-time models:", "",
    ]
    out += [f"* **{k}** — {desc}" for k, (_, desc) in models.items()]
    out += ["", "## MC-Benchmark / MC-SF per model", "",
            f"Paper 46.472 / 32.112 = **{paper_gap:.3f}**; ours under `fitted` **{fitted_gap:.3f}**, so the gap to "
            f"explain is {paper_gap - fitted_gap:+.3f}. \"Share of the gap\" = (ratio − {fitted_gap:.3f}) / "
            f"({paper_gap:.3f} − {fitted_gap:.3f}): 1 means the model alone closes the gap, > 1 overshoots. "
            "\"β rows / MC-SF\": the mean over the four β-clearing configurations of their ratio to MC-SF. Batch (ms): "
            "busy seconds over iterations, pooled over the runs.", "",
            "| model | MC-SF mean (s) | MC-Benchmark mean (s) | MC-Benchmark / MC-SF | per-seed ratio min – max "
            "| share of the gap | β rows / MC-SF | MC-SF batch (ms) | MC-Benchmark batch (ms) | MC-SF iterations | "
            "MC-Benchmark iterations |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in names:
        g = gap_ratio(rows, m)
        ps = per_seed_gap(rows, m)
        out.append(
            f"| {m} | {fmt(statistics.fmean(latencies(rows, m, 'mc-sf')))} | "
            f"{fmt(statistics.fmean(latencies(rows, m, 'mc-benchmark')))} | {g:.3f} | {min(ps):.3f} – {max(ps):.3f} | "
            f"{(g - fitted_gap) / (paper_gap - fitted_gap):+.2f} | {beta_cluster(rows, m):.3f} | "
            f"{pooled_batch_s(rows, m, 'mc-sf') * 1000:.1f} | {pooled_batch_s(rows, m, 'mc-benchmark') * 1000:.1f} | "
            f"{mean_iterations(rows, m, 'mc-sf'):.0f} | {mean_iterations(rows, m, 'mc-benchmark'):.0f} |")
    out.append(f"| *paper* | 32.112 | 46.472 | {paper_gap:.3f} | – | +1.00 | {PAPER_BETA_CLUSTER:.3f} "
               "| – | – | – | – |")

    out += ["", "## Ratio to MC-SF per algorithm and model", "",
            "Mean latency of the runs that completed ÷ MC-SF's mean latency (all runs), as in the committed NOTES "
            "(the α-greedy rows with loops average the easier draws: survivor bias). Loops: runs stopped by the loop "
            "guard, out of " + str(len(seeds)) + ".", "",
            "| algorithm | paper | " + " | ".join(names) + " |",
            "|---|---|" + "---|" * len(names)]
    for spec in J52_POLICIES:
        cells = []
        for m in names:
            lat = latencies(rows, m, spec)
            sf = statistics.fmean(latencies(rows, m, "mc-sf"))
            lp = loops(rows, m, spec)
            cell = fmt(statistics.fmean(lat) / sf) if lat else "–"
            cells.append(cell + (f" ({lp} loop{'s' if lp > 1 else ''})" if lp else ""))
        out.append(f"| {SHORT[spec]} | {PAPER[spec][0] / PAPER['mc-sf'][0]:.3f} | " + " | ".join(cells) + " |")

    out += ["", "## Mean latency (s) ± std over runs per algorithm and model", "",
            "| algorithm | paper | " + " | ".join(names) + " |",
            "|---|---|" + "---|" * len(names)]
    for spec in J52_POLICIES:
        cells = []
        for m in names:
            lat = latencies(rows, m, spec)
            cells.append(f"{statistics.fmean(lat):.2f} ± {statistics.stdev(lat):.2f}" if len(lat) > 1 else
                         (f"{lat[0]:.2f}" if lat else "–"))
        out.append(f"| {SHORT[spec]} | {PAPER[spec][0]:.2f} ± {PAPER[spec][1]:.2f} | " + " | ".join(cells) + " |")

    out += ["", "## The released code taken apart (MC-Benchmark / MC-SF)", "",
            "Batch times × token accounting × outputs, on the same seeds (MC-SF and MC-Benchmark only; every "
            "schedule re-verified).", "",
            "| batch times | tokens per request | outputs | MC-SF mean (s) | MC-Benchmark mean (s) | "
            "MC-Benchmark / MC-SF | share of the gap |",
            "|---|---|---|---|---|---|---|"]
    for model, tokens, outputs in FACTORS:
        g = gap_ratio(rows, model, "factors", outputs, tokens)
        out.append(f"| {model} | {tokens} | {outputs} | "
                   f"{statistics.fmean(latencies(rows, model, 'mc-sf', 'factors', outputs, tokens)):.3f} | "
                   f"{statistics.fmean(latencies(rows, model, 'mc-benchmark', 'factors', outputs, tokens)):.3f} | "
                   f"{g:.3f} | {(g - fitted_gap) / (paper_gap - fitted_gap):+.2f} |")
    out += ["", "## What it shows", ""] + conclusions(rows, names, fitted_gap, paper_gap)
    return "\n".join(out) + "\n"


BETA_ROWS = tuple(p for p in J52_POLICIES if ",beta=" in p)


def beta_cluster(rows: Sequence[dict[str, Any]], model: str) -> float:
    """Mean over the four β-clearing configurations of (mean latency ÷ MC-SF's mean latency)."""
    sf = statistics.fmean(latencies(rows, model, "mc-sf"))
    return statistics.fmean(statistics.fmean(latencies(rows, model, p)) / sf for p in BETA_ROWS)


PAPER_BETA_CLUSTER = statistics.fmean(PAPER[p][0] / PAPER["mc-sf"][0] for p in BETA_ROWS)


def conclusions(rows: Sequence[dict[str, Any]], names: Sequence[str], fitted_gap: float,
                paper_gap: float) -> list[str]:
    """The findings, with the numbers of this run filled in."""
    g = {m: gap_ratio(rows, m) for m in names}
    lo, hi = min(g, key=g.__getitem__), max(g, key=g.__getitem__)
    share = {m: (g[m] - fitted_gap) / (paper_gap - fitted_gap) for m in names}
    fac = {(m, t, o): gap_ratio(rows, m, "factors", o, t) for m, t, o in FACTORS}
    best = max(fac, key=fac.__getitem__)
    rel, rel_ctx = "released code", "released code, prompt in context"
    ps = {m: per_seed_gap(rows, m) for m in names}
    se = statistics.stdev(ps["fitted"]) / math.sqrt(len(ps["fitted"]))
    d_tok = {m: statistics.fmean(fac[(m, "o+1", o)] - fac[(m, "o", o)] for o in ("staged", "thinned"))
             for m in ("fitted", rel)}
    d_thin = {m: statistics.fmean(fac[(m, t, "thinned")] - fac[(m, t, "staged")] for t in ("o", "o+1"))
              for m in ("fitted", rel)}
    cl = {m: beta_cluster(rows, m) for m in names}
    loops_of = {m: sum(loops(rows, m, p) for p in J52_POLICIES) for m in names}
    terms = ("fitted, no context", "fitted, no per-request", "fitted, no prefill attention", "fitted, tokens only")
    above = sum(1 for x in ps[rel] if x >= paper_gap)
    sf_rel = statistics.fmean(latencies(rows, rel, "mc-sf"))
    sf_fit = statistics.fmean(latencies(rows, "fitted", "mc-sf"))
    return [
        f"1. **The batch-time model alone moves MC-Benchmark / MC-SF over {g[lo]:.3f}–{g[hi]:.3f}** ({lo} … {hi}), "
        f"a band {(g[hi] - g[lo]) / (paper_gap - fitted_gap):.1f}× as wide as the gap to explain ({fitted_gap:.3f} → "
        f"{paper_gap:.3f}); the standard error of the `fitted` ratio over these {len(ps['fitted'])} seeds is "
        f"{se:.4f}. `constant` (latency counts iterations) overshoots the paper ({g['constant']:.3f}, share "
        f"{share['constant']:+.2f}); the roofline undershoots ({g['roofline']:.3f}, share {share['roofline']:+.2f}).",
        "2. **No single term of our fit is the cause**: " + ", ".join(
            f"{m.removeprefix('fitted, ')} {g[m]:.3f} (share {share[m]:+.2f})" for m in terms)
        + ". Removing a term leaves the ratio where it is or moves it away from the paper; the shapes that differ "
        "are whole models, not one coefficient.",
        f"3. **The paper's own batch times** (its released simulator's formula, `{rel}`) give {g[rel]:.3f} (share "
        f"{share[rel]:+.2f}; with the decoders' prompts left in the context {g[rel_ctx]:.3f}, share "
        f"{share[rel_ctx]:+.2f}). **So the batch-time model explains about {100 * share[rel]:.0f} % of the gap: "
        f"{g[rel] - fitted_gap:+.3f} of {paper_gap - fitted_gap:+.3f}.** Under it MC-SF's mean latency is "
        f"{sf_rel:.1f} s on our trace (paper 32.1 s, our `fitted` {sf_fit:.1f} s).",
        f"4. **The released code's other accounting and the output distribution add nothing measurable** (second "
        f"table): its extra prompt iteration (`o + 1`) changes the ratio by {d_tok['fitted']:+.3f} (`fitted`) / "
        f"{d_tok[rel]:+.3f} (`{rel}`), thinning the long outputs by {d_thin['fitted']:+.3f} / {d_thin[rel]:+.3f}; "
        f"the highest combination ({best[0]}, {best[1]}, {best[2]} outputs) gives {fac[best]:.3f}, "
        f"{paper_gap - fac[best]:.3f} short of the paper.",
        f"5. **The remaining {paper_gap - g[rel]:.3f} lies at the upper edge of the spread between request "
        f"samples.** Per seed "
        f"(each seed draws another 1,000 requests) the ratio ranges "
        f"{min(ps['fitted']):.3f}–{max(ps['fitted']):.3f} under `fitted` and {min(ps[rel]):.3f}–{max(ps[rel]):.3f} "
        f"under `{rel}` ({above} of {len(ps[rel])} seeds at or above {paper_gap:.3f}). The released files take their "
        "requests *and arrival times* as the first rows of a data frame built in an unreleased notebook "
        "(`dfmain.head(num_rows)`); if that frame was drawn once, the paper's 50 runs share one request sample and "
        "its 1.447 is one sample's ratio, not an average over samples (its small standard deviations, 0.31–0.36 s, "
        "fit that). Without the paper's 10,000-conversation subset this stays a possibility, not a measured cause.",
        f"6. **The β-clearing rows move more with the model than MC-Benchmark does**: their mean ratio to MC-SF "
        f"(paper {PAPER_BETA_CLUSTER:.3f}) is {cl['fitted']:.3f} under `fitted`, {cl[rel]:.3f} under `{rel}`, "
        f"{cl['roofline']:.3f} under the roofline and {cl['constant']:.3f} under `constant`. α-greedy's loops depend "
        f"on the model too (runs stopped by the loop guard, all algorithms and seeds: "
        + "; ".join(f"`{m}` {loops_of[m]}" for m in names)
        + "): batch times set how many requests arrive per iteration. These rows are comparable with the paper's "
        "only under a fixed batch-time model.",
    ]


#: (batch-time model, tokens per request, outputs) of the second table.
FACTORS: tuple[tuple[str, str, str], ...] = tuple(
    (m, t, o) for m in ("fitted", "released code") for t in ("o", "o+1") for o in ("staged", "thinned"))
CSV_NAME = "cost_sensitivity.csv"
FIELDS = ("table", "model", "outputs", "tokens", "seed", "algorithm", "status", "verified", "latency_s", "evictions",
          "recomputed", "iterations", "busy_s", "makespan_s", "seconds_per_iteration")


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else repr(r[k]) if isinstance(r[k], float) else r[k])
                        for k in FIELDS})


def read_csv(path: Path) -> list[dict[str, Any]]:
    """The rows of :func:`write_csv` (numbers as floats / ints, blanks as ``None``)."""
    out = []
    with path.open(encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            row: dict[str, Any] = dict(r)
            for k in ("latency_s", "busy_s", "makespan_s", "seconds_per_iteration"):
                row[k] = float(r[k]) if r[k] else None
            for k in ("seed", "evictions", "recomputed", "iterations"):
                row[k] = int(r[k]) if r[k] else None
            row["verified"] = r["verified"] == "True"
            out.append(row)
    return out


def constant_seconds(rows: Sequence[dict[str, Any]]) -> float:
    """MC-SF's pooled mean batch time under ``fitted`` (the constant model's seconds per iteration)."""
    return pooled_batch_s(rows, "fitted", "mc-sf")


def run_all(seeds: Sequence[int], progress: Callable[[str], None]) -> tuple[list[dict[str, Any]],
                                                                            dict[str, tuple[Any, str]]]:
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    fitted_rows = run_grid("models", "fitted", make_cost_model(), seeds, J52_POLICIES)
    rows += fitted_rows
    progress(f"fitted: {time.perf_counter() - t0:.1f} s")
    constant_s = constant_seconds(fitted_rows)
    models = cost_models(constant_s)
    for name, (cost, _) in models.items():
        if name == "fitted":
            continue
        t1 = time.perf_counter()
        rows += run_grid("models", name, cost, seeds, J52_POLICIES,
                         seconds_per_iteration=constant_s if name == "constant" else None)
        progress(f"{name}: {time.perf_counter() - t1:.1f} s")
    for name, tokens, outputs in FACTORS:
        t1 = time.perf_counter()
        rows += run_grid("factors", name, models[name][0], seeds, ("mc-sf", "mc-benchmark"), outputs, tokens)
        progress(f"factors {name} / {tokens} / {outputs}: {time.perf_counter() - t1:.1f} s")
    return rows, models


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: ``--seeds N`` (seeds 0…N−1), ``--out DIR`` (``cost_sensitivity.md`` and the CSV)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20, help="runs per cell, seeds 0…N−1 (default 20; the paper has 50)")
    ap.add_argument("--out", type=Path, required=True, help=f"folder of {REPORT_NAME} and {CSV_NAME}")
    ap.add_argument("--command", default="", help="the command line to quote in the report")
    args = ap.parse_args(argv)
    if args.seeds < 2:
        ap.error("--seeds must be at least 2")
    command = args.command or f"llmopt study run table1-cost-sensitivity --seeds 0-{args.seeds - 1}"
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    seeds = list(range(args.seeds))

    def progress(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:6.1f} s] {msg}", file=sys.stderr, flush=True)

    rows, models = run_all(seeds, progress)
    wall = time.perf_counter() - t0
    text = report_text(rows, models, seeds, command.strip(), (load0, os.getloadavg()), wall)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / REPORT_NAME).write_text(text, encoding="utf-8")
    write_csv(args.out / CSV_NAME, rows)
    progress(f"wrote {args.out / REPORT_NAME} and {args.out / CSV_NAME}")


REPORT_NAME = "cost_sensitivity.md"
OPTIONS: dict[str, str] = {}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write the report and the CSV into ``out``; ``seeds`` must be ``0 … N−1`` (default 0-19; ``quick``
    0-1); returns the files written."""
    n = len(seeds) if seeds is not None else (2 if quick else 20)
    if seeds is not None and list(seeds) != list(range(n)):
        raise StudyError("table1-cost-sensitivity runs seeds 0 … N−1: give --seeds 0-N")
    argv = ["--out", str(out), "--seeds", str(n),
            "--command", study_command("table1-cost-sensitivity", out, quick=quick, seeds=seeds)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s report and CSV (written by :func:`run`: the report needs the cost models' runs)."""
    return [str(p) for p in (Path(out) / REPORT_NAME, Path(out) / CSV_NAME) if p.exists()]
