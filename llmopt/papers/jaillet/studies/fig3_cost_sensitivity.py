"""J Figure 3's slope ratios under other batch-time models and output distributions.

``jaillet-fig3`` finds the best benchmark's latency slope 1.7–1.8× MC-SF's at λ = 50 (paper ≈ 3×) and
1.8× (MC-Benchmark) / 3.2× (best α/β) at λ = 10 (paper ≈ 8×). This study tests two candidate causes by
refitting the slopes with everything else fixed:

* the batch-time model: the fitted Vidur-style model (default), the same without its KV-context term,
  the first-principles roofline, and a constant (every batch as long as MC-SF's mean batch under the
  fitted model at n = 10,000 and that λ, so that the load is comparable);
* the output distribution: the staged file with its long outputs thinned (output median 75 → 36 words,
  as the ``alpha-loop-sensitivity`` study), with the fitted and with the constant model.

Every schedule is re-verified by the continuous-time checker; a run stopped by the loop guard is left
out of its seed's fit and counted.

    llmopt study run fig3-cost-sensitivity --out results/jaillet/fig3     # writes cost_sensitivity.md
    llmopt study run fig3-cost-sensitivity --quick      # seed 0, 1,000 and 2,000 requests, λ = 50
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import ConstantCostModel, load_cost_model, make_cost_model
from llmopt.engine.discrete import EvictionLoopError
from llmopt.opt.studies import StudyError, options_argv, run_main, study_command
from llmopt.papers.jaillet.fig3 import PAPER_SLOPES, display_name, fit_slope
from llmopt.papers.jaillet.suites import LMSYS_TRACE
from llmopt.policies import make_policy_spec
from llmopt.verify.timed import check_timed_schedule
from llmopt.workloads.traces import Trace, load_trace, sample_instance
from llmopt.workloads.traces.data import data_dir
from llmopt.workloads.traces.sampling import thin_long_outputs

POLICIES = ("mc-sf", "mc-benchmark", "alpha-protection:alpha=0.1,beta=0.1", "alpha-protection:alpha=0.2,beta=0.1")


def _latency(inst: Any, spec: str, seed: int, cost: Any) -> float | None:
    try:
        sched = simulate_continuous(inst, make_policy_spec(spec, seed=seed), cost)
    except EvictionLoopError:
        return None
    rep = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                               evictions=sched.evictions, stalls=sched.stalls)
    if not rep.ok or rep.mean_latency is None:
        raise RuntimeError(f"{spec}: schedule rejected: {rep.violations[:1]}")
    return rep.mean_latency


def slopes(trace: Trace, cost: Any, rate: float, seeds: int, volumes: list[int],
           policies: tuple[str, ...] = POLICIES) -> tuple[dict[str, list[float]], int]:
    """Per policy, the fitted slope of each seed (volumes that completed), and the runs lost to loops."""
    out: dict[str, list[float]] = {p: [] for p in policies}
    lost = 0
    for seed in range(seeds):
        pts: dict[str, list[tuple[int, float]]] = {p: [] for p in policies}
        for n in volumes:
            inst = sample_instance(trace, n, seed, rate=rate, M=16_492)
            for p in policies:
                lat = _latency(inst, p, seed, cost)
                if lat is None:
                    lost += 1
                else:
                    pts[p].append((n, lat))
        for p in policies:
            if len(pts[p]) >= 2:
                out[p].append(fit_slope([x for x, _ in pts[p]], [y for _, y in pts[p]]).slope)
    return out, lost


def constant_for(trace: Trace, rate: float, n: int) -> ConstantCostModel:
    """A constant model with MC-SF's mean batch time under the fitted model (``n`` requests, seed 0)."""
    s = simulate_continuous(sample_instance(trace, n, 0, rate=rate, M=16_492), make_policy_spec("mc-sf"),
                            make_cost_model())
    return ConstantCostModel(float(np.mean(s.batch_duration)), name="constant")


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: ``--seeds N``, ``--volumes``, ``--rates``, ``--out DIR`` (``cost_sensitivity.md``)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--volumes", type=int, nargs="+", default=[2000, 4000, 6000, 8000, 10000])
    ap.add_argument("--rates", type=float, nargs="+", default=[50.0, 10.0])
    ap.add_argument("--out", type=Path, default=None, help="write cost_sensitivity.md here")
    ap.add_argument("--command", default="", help="the command line to quote in the report")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    staged = load_trace(data_dir() / "traces" / LMSYS_TRACE, "lmsys", M=16_492, on_bad_row="drop")
    fitted = make_cost_model()
    no_ctx = dataclasses.replace(load_cost_model(), per_context_token=0.0, name="fitted, no context term")
    roofline = make_cost_model("llama2-70b-a100-tp2-roofline")
    thin = thin_long_outputs(staged)
    rows: list[dict[str, Any]] = []
    for rate in args.rates:
        constant = constant_for(staged, rate, max(args.volumes))
        settings = [("fitted (default)", staged, fitted), ("fitted, no context term", staged, no_ctx),
                    ("roofline", staged, roofline), (f"constant {constant.seconds_per_iteration * 1e3:.1f} ms", staged,
                                                      constant),
                    ("fitted, long outputs thinned", thin, fitted),
                    (f"constant {constant.seconds_per_iteration * 1e3:.1f} ms, long outputs thinned", thin, constant)]
        for label, trace, cost in settings:
            fitted_slopes, lost = slopes(trace, cost, rate, args.seeds, args.volumes)
            ref = float(np.mean(fitted_slopes["mc-sf"]))
            rows.append({"rate": rate, "setting": label, "mc-sf": ref, "lost": lost,
                         **{p: (float(np.mean(v)) / ref if v else None) for p, v in fitted_slopes.items()
                            if p != "mc-sf"}})
            print(f"λ = {rate:g} {label}: done ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr)
    wall = time.perf_counter() - t_start
    others = [p for p in POLICIES if p != "mc-sf"]
    lines = ["# J Figure 3's slope ratios vs the batch-time model and the output distribution", "",
             f"`{args.command or 'llmopt study run fig3-cost-sensitivity'}` (seeds {args.seeds}, volumes "
             f"{' '.join(map(str, args.volumes))}; {wall:.0f} s wall, load average "
             f"{os.getloadavg()[0]:.1f} at the end): slope = least-squares line of mean latency (s) on the number "
             f"of requests per seed (seeds 0…{args.seeds - 1}, a separate sample per volume), mean over seeds; "
             "the other columns are each algorithm's mean slope ÷ MC-SF's. Every schedule re-verified.", ""]
    for rate in args.rates:
        paper = PAPER_SLOPES.get(int(rate), {})
        ratio = paper["best"] / paper["mc-sf"] if paper else None
        lines += [f"## λ = {rate:g} /s" + (f" (paper: best benchmark ≈ {ratio:.0f}× MC-SF's slope)" if ratio else ""),
                  "", "| setting | MC-SF slope (s per request) | " + " | ".join(f"{display_name(p)} ÷ MC-SF"
                                                                        for p in others) + " | runs lost to loops |",
                  "|---|---|" + "---|" * len(others) + "---|"]
        for r in rows:
            if r["rate"] != rate:
                continue
            lines.append(f"| {r['setting']} | {r['mc-sf']:.5f} | "
                         + " | ".join("–" if r[p] is None else f"{r[p]:.2f}" for p in others) + f" | {r['lost']} |")
        lines.append("")
    text = "\n".join(lines)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "cost_sensitivity.md").write_text(text, encoding="utf-8")
    print(text)


OPTIONS = {
    "volumes": "requests per sample (default 2000 4000 6000 8000 10000; quick 1000 2000)",
    "rates": "λ values (default 50 10; quick 50)",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``cost_sensitivity.md`` into ``out``; ``seeds`` must be ``0 … N−1`` (default 0-1; ``quick``: 0);
    returns the files written."""
    n = len(seeds) if seeds is not None else (1 if quick else 2)
    if seeds is not None and list(seeds) != list(range(n)):
        raise StudyError("fig3-cost-sensitivity runs seeds 0 … N−1: give --seeds 0-N")
    opts = ({"volumes": [1000, 2000], "rates": [50.0]} if quick else {}) | dict(options)
    argv = ["--out", str(out), "--seeds", str(n), *options_argv(opts),
            "--command", study_command("fig3-cost-sensitivity", out, quick=quick, seeds=seeds, options=options)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s ``cost_sensitivity.md`` (written by :func:`run`: it needs the simulations)."""
    path = Path(out) / "cost_sensitivity.md"
    return [str(path)] if path.exists() else []
