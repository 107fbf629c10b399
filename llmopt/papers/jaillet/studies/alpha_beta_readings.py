"""J's α-protection β-clearing under the readings of the authors' released code, with both latency metrics.

The α / β sweeps of ``jaillet-lmsys`` (J Figures 7, 8, 10, 11) use our reading of α-protection
(:mod:`llmopt.policies.protection`: a per-prompt check of the next iteration's usage against
``(1 − α)M``, clearing before the overflowing iteration, clearing passes free) and the mean latency of
every request. The authors' released simulator (``anonymouspeople111/neurips2025-code``,
``alpha-beta.py``; read, not copied) differs in three ways, each an option here:

* **the metric** — it stops at a ``time_limit`` and averages the latency of the requests completed
  by then (a *censored* mean: requests still waiting or running at the limit are left out). The
  limit is set in an unreleased notebook, so two are reported: the end of the arrival window (the
  last arrival) and twice it;
* **the admission rule** (``admission="released"``, ``batch_cap = B``) — if the running requests'
  current usage is at most ``(1 − α)M``, every waiting prompt joins the batch up to ``B`` jobs. B is
  not released; ``B = 136`` is the value the ``low-demand-threshold`` study fits to the paper's
  smallest loop-free α at both demand levels (``results/jaillet/lmsys/low_demand_threshold.md``);
* **the cost of a clearing pass that frees too little** — it waits 1 s before the next pass. The
  engines' stall unit is a lost decode batch, so 1 s is charged as ``pass_batches = K`` batches
  with ``K = round(1 s / median decode batch time)`` of our reading's run at α = 0.1, β = 0.1,
  seed 0, per λ (``pass_cost="extra-passes"``: the first pass of a clearing is free).

Four readings per (λ, α, β, seed): ours; ours with the 1 s stall; the released admission; the
released admission with the 1 s stall — each reported with the full and the censored means.

    llmopt study run alpha-beta-readings --out results/jaillet/lmsys   # seeds 0-2, about a minute
    llmopt study run alpha-beta-readings --quick                       # seed 0, λ = 50, 2,000 requests

writes ``alpha_beta_readings.md`` and ``alpha_beta_readings.csv`` into the output folder.
"""

from __future__ import annotations

import argparse
import csv
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.core import SimulationError
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import EvictionLoopError
from llmopt.model.timed_schedule import TimedSchedule
from llmopt.opt.studies import StudyError, options_argv, run_main, study_command
from llmopt.papers.jaillet.suites import LMSYS_TRACE
from llmopt.policies.protection import AlphaProtection
from llmopt.workloads.traces.data import trace_workload

__all__ = ["READINGS", "censored_mean", "stall_batches", "make_policy", "main", "run", "report"]

REPORT_NAME = "alpha_beta_readings.md"
CSV_NAME = "alpha_beta_readings.csv"
#: B of the released admission rule (fitted by the low-demand-threshold study; not released).
RELEASED_B = 136
#: Reading key -> (admission, stalled): the released admission rule and the 1 s stall per extra pass.
READINGS: dict[str, tuple[str, bool]] = {
    "ours": ("per-prompt", False),
    "ours + 1 s stall": ("per-prompt", True),
    "released admission": ("released", False),
    "released admission + 1 s stall": ("released", True),
}
ALPHAS = (0.1, 0.2)
BETAS = (0.02, 0.05, 0.1, 0.2)


def censored_mean(schedule: TimedSchedule, limit: float) -> tuple[float | None, int]:
    """Mean latency of the requests completed by ``limit`` seconds, and how many they are.

    The released code's metric: it stops its simulation at a time limit and averages over the requests
    completed by then. ``(None, 0)`` when none completed.
    """
    done = [schedule.latencies[rid] for rid, c in schedule.completions.items() if c <= limit]
    return (statistics.fmean(done) if done else None), len(done)


def stall_batches(median_batch_s: float, seconds: float = 1.0) -> int:
    """Decode batches that make up ``seconds`` of stall at a median batch time (at least 1)."""
    if not median_batch_s > 0:
        raise ValueError(f"median batch time must be > 0 s, got {median_batch_s!r}")
    return max(1, round(seconds / median_batch_s))


def make_policy(reading: str, alpha: float, beta: float, seed: int, k: int) -> AlphaProtection:
    """The α/β policy of ``reading`` (a key of :data:`READINGS`); ``k`` batches per charged pass."""
    admission, stalled = READINGS[reading]
    return AlphaProtection(alpha, beta, seed=seed, admission=admission,
                           batch_cap=RELEASED_B if admission == "released" else None,
                           pass_cost="extra-passes" if stalled else "free", pass_batches=k if stalled else 1)


def _run(inst: Any, policy: AlphaProtection, cost: Any) -> tuple[str, TimedSchedule | None]:
    try:
        return "ok", simulate_continuous(inst, policy, cost, max_iterations=20 * inst.total_output + 1000)
    except EvictionLoopError:
        return "loop", None
    except SimulationError as exc:
        if "made no progress by iteration" in str(exc):
            return "cap", None
        raise


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: ``--seeds N``, ``--n``, ``--rates``, ``--out DIR``, ``--command``."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--rates", type=float, nargs="+", default=[50.0, 10.0])
    ap.add_argument("--out", type=Path, default=None, help=f"write {REPORT_NAME} and {CSV_NAME} here")
    ap.add_argument("--command", default="", help="the command line to quote in the report")
    args = ap.parse_args(argv)
    cost = make_cost_model("llama2-70b-a100-tp2")
    rows: list[dict[str, Any]] = []
    ks: dict[float, tuple[int, float]] = {}
    for rate in args.rates:
        probe = _run(trace_workload(0, trace=LMSYS_TRACE, n=args.n, rate=rate), make_policy("ours", 0.1, 0.1, 0, 1),
                     cost)[1]
        if probe is None:
            raise StudyError(f"the probe run (ours, α = 0.1, β = 0.1, λ = {rate:g}) did not finish")
        med = float(statistics.median(probe.batch_duration))
        k = stall_batches(med)
        ks[rate] = (k, med)
        for seed in range(args.seeds):
            inst = trace_workload(seed, trace=LMSYS_TRACE, n=args.n, rate=rate)
            window = max(r.arrival for r in inst.requests)
            for alpha in ALPHAS:
                for beta in BETAS:
                    for reading in READINGS:
                        policy = make_policy(reading, alpha, beta, seed, k)
                        status, sched = _run(inst, policy, cost)
                        row: dict[str, Any] = {"rate": rate, "alpha": alpha, "beta": beta, "reading": reading,
                                               "seed": seed, "status": status, "k": k, "window_s": window,
                                               "clearings": policy.clearings, "passes": policy.clearing_passes,
                                               "extra_passes": policy.clearing_passes - policy.clearings}
                        if sched is not None:
                            row["mean"] = sched.mean_latency
                            row["censored_1"], row["done_1"] = censored_mean(sched, window)
                            row["censored_2"], row["done_2"] = censored_mean(sched, 2 * window)
                            row["stall_s"] = sum(
                                float(sched.batch_start[i] - sched.batch_start[i - 1] - sched.batch_duration[i - 1])
                                for i in sched.stalls if i > 0)
                        rows.append(row)
                print(f"λ = {rate:g} seed {seed}: done", flush=True)
    text = render(rows, ks, args.n, args.seeds, args.command or "llmopt study run alpha-beta-readings")
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / REPORT_NAME).write_text(text, encoding="utf-8")
        fields = ["rate", "alpha", "beta", "reading", "seed", "status", "k", "window_s", "mean", "censored_1",
                  "done_1", "censored_2", "done_2", "clearings", "passes", "extra_passes", "stall_s"]
        with (args.out / CSV_NAME).open("w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            for r in rows:
                w.writerow({k: r.get(k, "") for k in fields})


def _mean(rows: Sequence[dict[str, Any]], key: str) -> str:
    vals = [float(r[key]) for r in rows if r.get(key) is not None and r["status"] == "ok"]
    lost = sum(r["status"] != "ok" for r in rows)
    if not vals:
        return f"loop ({lost})" if lost else "–"
    return f"{statistics.fmean(vals):.1f}" + (f" ({lost} loop)" if lost else "")


def render(rows: Sequence[dict[str, Any]], ks: dict[float, tuple[int, float]], n: int, seeds: int,
           command: str) -> str:
    """The Markdown report of :func:`main`'s rows (means over seeds; a run stopped by the loop guard or the
    iteration cap is counted apart)."""
    lines = ["# α-protection β-clearing under the released code's readings", "",
             f"`{command}`: {n:,} LMSYS requests (`{LMSYS_TRACE}`), seeds 0–{seeds - 1}, Llama2-70B on 2×A100 "
             f"cost model, M = 16,492. Readings: *ours* (per-prompt admission, clearing free), the *released "
             f"admission* (gate on the current usage ≤ (1 − α)M, then every waiting prompt up to B = {RELEASED_B} "
             "jobs), each without and with the released code's *1 s stall per extra β-pass* (charged as K lost "
             "decode batches: " + "; ".join(f"λ = {r:g}: K = {k} × median batch {m:.3f} s" for r, (k, m) in
                                             ks.items()) + "). "
             "Metrics: *mean* = mean latency of every request (s); *censored* = the released code's, the mean over "
             "the requests completed by a time limit T — T = the last arrival (*T₁*) and twice it (*T₂*) — with "
             "the share of requests it keeps. Each cell is the mean over seeds; *extra passes* = clearing passes "
             "beyond one per clearing, summed over a seed's run (mean over seeds).", ""]
    for rate in sorted({r["rate"] for r in rows}, reverse=True):
        for alpha in ALPHAS:
            sub = [r for r in rows if r["rate"] == rate and r["alpha"] == alpha]
            lines += [f"## λ = {rate:g} /s, α = {alpha:g}", "",
                      "| β | reading | mean | censored T₁ (kept) | censored T₂ (kept) | clearings | extra passes |",
                      "|---|---|---|---|---|---|---|"]
            for beta in BETAS:
                for reading in READINGS:
                    cell = [r for r in sub if r["beta"] == beta and r["reading"] == reading]
                    if not cell:
                        continue
                    ok = [r for r in cell if r["status"] == "ok"]
                    kept1 = statistics.fmean(r["done_1"] for r in ok) / n if ok else None
                    kept2 = statistics.fmean(r["done_2"] for r in ok) / n if ok else None
                    lines.append(
                        f"| {beta:g} | {reading} | {_mean(cell, 'mean')} | {_mean(cell, 'censored_1')} "
                        f"({'–' if kept1 is None else f'{kept1:.0%}'}) | {_mean(cell, 'censored_2')} "
                        f"({'–' if kept2 is None else f'{kept2:.0%}'}) | "
                        f"{statistics.fmean(r['clearings'] for r in cell):.1f} | "
                        f"{statistics.fmean(r['extra_passes'] for r in cell):.1f} |")
            lines.append("")
    return "\n".join(lines) + "\n"


OPTIONS = {
    "n": "requests per run (default 10,000; quick 2,000)",
    "rates": "Poisson rates λ /s (default 50 10; quick 50)",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``alpha_beta_readings.md`` / ``.csv`` into ``out``; ``seeds`` must be ``0 … N−1`` (default 0-2;
    ``quick``: seed 0, λ = 50, 2,000 requests); returns the files written."""
    count = len(seeds) if seeds is not None else (1 if quick else 3)
    if seeds is not None and list(seeds) != list(range(count)):
        raise StudyError("alpha-beta-readings runs seeds 0 … N−1: give --seeds 0-N")
    opts = ({"n": 2000, "rates": [50.0]} if quick else {}) | dict(options)
    argv = ["--out", str(out), "--seeds", str(count), *options_argv(opts),
            "--command", study_command("alpha-beta-readings", out, quick=quick, seeds=seeds, options=options)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s ``alpha_beta_readings.md`` (written by :func:`run`: it needs the simulations)."""
    path = Path(out) / REPORT_NAME
    return [str(path)] if path.exists() else []
