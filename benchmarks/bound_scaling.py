"""Each lower-bound stage's time and value against n, with fitted exponents, and what the
completion-lag cliques add on J §5.1 trials (issue 23).

Part (a): J Arrival Model 1 instances (all at 0) with ``M = 40`` and ``n`` fixed (seed 0), the
bound stages ``lp``, ``zone-lp``, ``zone-colgen``, ``lag-lp``, ``lp-colgen``, ``lagrangian`` (which
stops when its step factor falls below 1e-6, or at the time limit) and ``energy``, each
with MC-SF's verified schedule as its context (windows, column-generation seed). A stage is not
run at larger ``n`` once it took more than ``--cap`` seconds. The exponent is the least-squares
slope of ``log(time)`` on ``log(n)`` over the points at or above ``n = 40`` that ran.

Part (b): ``--trials K`` evenly spaced seeds of each J §5.1 arrival model (the instances of
``results/jaillet-certified``): ``zone-colgen`` (= the ``zone-lp`` relaxation) and ``lag-lp`` beside
the best schedule that run found (its checker-verified TEL), so the certified gap with and without
the lag cliques.

    python benchmarks/bound_scaling.py                    # (a) up to n = 200 and (b) with 10 + 10 trials
    python benchmarks/bound_scaling.py --write            # also results/bound_scaling/README.md

Rows are appended to ``results/bound_scaling/rows.jsonl`` as they come; ``--write`` renders from it.
Times are wall-clock seconds on whatever else the machine was running (stated in the README).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics as st
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "bound_scaling"
ROWS = OUT / "rows.jsonl"
CERTIFIED = ROOT / "results" / "jaillet-certified" / "trials.jsonl"
STAGES = ("lp", "zone-lp", "zone-colgen", "lag-lp", "lp-colgen", "lagrangian", "energy")
SIZES = (10, 20, 40, 60, 80, 100, 140, 200)


def _context(inst: Any) -> Any:
    from llmopt.engine.discrete import simulate
    from llmopt.opt.bounds import BoundContext
    from llmopt.policies import make_policy
    from llmopt.verify.checker import check_schedule

    sch = simulate(inst, make_policy("mc-sf"))
    assert check_schedule(inst, sch.starts).ok
    return sch, BoundContext(upper_bound_starts=dict(sch.starts), time_limit=1800.0, max_nnz=50_000_000)


def _append(row: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with ROWS.open("a") as fh:
        fh.write(json.dumps(row) + "\n")


def _done() -> list[dict[str, Any]]:
    return [json.loads(line) for line in ROWS.read_text().splitlines()] if ROWS.exists() else []


def scaling(sizes: tuple[int, ...], cap: float) -> None:
    from llmopt.opt.bounds import compute_bound
    from llmopt.workloads.jaillet import jaillet_am1

    have = {(r["n"], r["stage"]) for r in _done() if r["part"] == "scaling"}
    slow: set[str] = {r["stage"] for r in _done() if r["part"] == "scaling" and r["seconds"] > cap}
    for n in sizes:
        inst = jaillet_am1(0, n_range=(n, n), M_range=(40, 40))
        sch, ctx = _context(inst)
        for stage in STAGES:
            if (n, stage) in have or stage in slow:
                continue
            t = time.perf_counter()
            res = compute_bound(stage, inst, ctx)
            sec = time.perf_counter() - t
            _append(dict(part="scaling", n=n, stage=stage, value=res.value, verified=res.verified, seconds=sec,
                         mcsf=sch.tel, detail=res.detail[:300]))
            print(f"n={n} {stage}: {res.value} in {sec:.1f} s", file=sys.stderr, flush=True)
            if sec > cap:
                slow.add(stage)


def trials(k: int) -> None:
    from llmopt.opt.bounds import compute_bound
    from llmopt.workloads import make_instance

    stored = [json.loads(line) for line in CERTIFIED.read_text().splitlines()]
    best = {(r["workload"], r["seed"]): r for r in stored}
    have = {(r["workload"], r["seed"]) for r in _done() if r["part"] == "trials"}
    seeds = np.linspace(0, 199, k).round().astype(int).tolist()
    # interleaved, so a stopped run covers both arrival models
    for seed, workload in ((seed, wl) for seed in seeds for wl in ("jaillet-am1", "jaillet-am2")):
        if (workload, seed) in have:
            continue
        inst = make_instance(workload, seed=seed)
        sch, ctx = _context(inst)
        row: dict[str, Any] = dict(part="trials", workload=workload, seed=seed, n=inst.n,
                                   best_found=_best_found(best[(workload, seed)]), mcsf=sch.tel)
        for stage in ("zone-colgen", "lag-lp"):
            t = time.perf_counter()
            res = compute_bound(stage, inst, ctx)
            row[stage] = res.value
            row[f"{stage}_s"] = time.perf_counter() - t
            row[f"{stage}_verified"] = res.verified
        _append(row)
        print(f"{workload} seed {seed} n={inst.n}: zone {row['zone-colgen']:.1f}, lag {row['lag-lp']:.1f}, "
              f"best {row['best_found']}", file=sys.stderr, flush=True)


def _best_found(rec: dict[str, Any]) -> int:
    """The stored run's checker-verified incumbent (its best schedule's TEL)."""
    return int(rec["incumbent"])


def _fit(points: list[tuple[int, float]]) -> float | None:
    pts = [(n, s) for n, s in points if n >= 40 and s > 0]
    if len(pts) < 2:
        return None
    x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def render(cap: float) -> str:
    rows = _done()
    sc = [r for r in rows if r["part"] == "scaling"]
    sizes = sorted({r["n"] for r in sc})
    by = {(r["n"], r["stage"]): r for r in sc}
    lines = ["# Lower-bound stages: time and value against n, and the completion-lag cliques on J §5.1", "",
             "Generated by `python benchmarks/bound_scaling.py --write` "
             f"({platform.platform()}, Python {platform.python_version()}). Times are wall-clock seconds "
             "measured while other jobs (a CP-SAT/LNS benchmark, a trace-scale run) shared the 2 cores, so "
             "they are inflated and noisy; the exponents are least-squares slopes of log(time) on log(n) "
             f"over n >= 40. A stage is not run at larger n once it took more than {cap:g} s.", "",
             "## (a) J AM1, M = 40, seed 0, n fixed: seconds (value / MC-SF's TEL)", "",
             "| stage | " + " | ".join(f"n = {n}" for n in sizes) + " | exponent |",
             "|---|" + "---:|" * (len(sizes) + 1)]
    for stage in STAGES:
        cells = []
        for n in sizes:
            r = by.get((n, stage))
            if r is None:
                cells.append("–")
            elif r["value"] is None:
                cells.append("no bound")
            else:
                cells.append(f"{r['seconds']:.2f} ({r['value'] / r['mcsf']:.3f})" + ("" if r["verified"] else " ✗"))
        fit = _fit([(n, by[(n, stage)]["seconds"]) for n in sizes if (n, stage) in by and by[(n, stage)]["value"]])
        lines.append(f"| {stage} | " + " | ".join(cells) + f" | {'–' if fit is None else f'{fit:.2f}'} |")
    tr = [r for r in rows if r["part"] == "trials"]
    if tr:
        lines += ["", "## (b) J §5.1 trials: certified gap with the zone rows and with every lag clique", "",
                  "Best found = the checker-verified incumbent of `results/jaillet-certified` (its 2026-11-23 run). "
                  "Gap = (best found − bound) / best found. Windows: MC-SF's schedule.", "",
                  "| model | trials | n (min–max) | gap, zone-colgen | gap, lag-lp | lag-lp / zone-colgen, mean (max) "
                  "| zone-colgen s, mean | lag-lp s, mean |", "|---|---:|---|---:|---:|---:|---:|---:|"]
        for wl in ("jaillet-am1", "jaillet-am2"):
            rs = [r for r in tr if r["workload"] == wl]
            if not rs:
                continue
            gz = [(r["best_found"] - r["zone-colgen"]) / r["best_found"] for r in rs]
            gl = [(r["best_found"] - r["lag-lp"]) / r["best_found"] for r in rs]
            ratio = [r["lag-lp"] / r["zone-colgen"] for r in rs]
            ns = [r["n"] for r in rs]
            lines.append(f"| {wl} | {len(rs)} | {min(ns)}–{max(ns)} | {100 * st.mean(gz):.2f} % | "
                         f"{100 * st.mean(gl):.2f} % | {st.mean(ratio):.4f} ({max(ratio):.4f}) | "
                         f"{st.mean(r['zone-colgen_s'] for r in rs):.1f} | {st.mean(r['lag-lp_s'] for r in rs):.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="n of part (a)")
    ap.add_argument("--cap", type=float, default=150.0, help="seconds after which a stage stops growing n")
    ap.add_argument("--trials", type=int, default=10, help="seeds per arrival model in part (b) (0: skip)")
    ap.add_argument("--skip-scaling", action="store_true")
    ap.add_argument("--write", action="store_true", help=f"write {OUT / 'README.md'}")
    args = ap.parse_args(argv)
    if not args.skip_scaling:
        scaling(tuple(args.sizes), args.cap)
    if args.trials:
        trials(args.trials)
    text = render(args.cap)
    print(text)
    if args.write:
        (OUT / "README.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
