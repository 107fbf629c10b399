"""Sorted-LP and LP-Swap from different optima of W's Relax-LP, over the horizons W could have used.

For each instance, Relax-LP (8)–(11) is solved over each horizon of
:data:`llmopt.papers.wang.lp_optima.HORIZONS` and, on its optimal face, by each method of
:data:`~llmopt.papers.wang.lp_optima.METHODS` (primal / dual simplex vertices, IPX without
crossover, IPX with centring as the analytic-centre stand-in, the vertices that put large
prompts earliest / latest); ``ipm-full`` is IPX without crossover on the *whole* LP (every
start written out: the interior point a solver returns when nobody restricts the columns),
run for the horizon ``sum-o`` where the LP has at most ``--full-nnz`` nonzeros (minutes at 6M).
``project`` is the repository's own Sorted-LP (column generation, identical requests merged,
Δ = 1). Sorted-LP and LP-Swap then run from every solution
(:class:`~llmopt.policies.lp_order.SortedLP` with ``expected_starts``), each schedule verified
by the checker. Datasets: W's five synthetic distributions (the
``wang-synthetic`` instances, M = 100) and the W §7 LMSYS + arXiv mix (the ``wang-mixed``
instances' n-prefix as a discrete instance in iteration units, M = 16,492).

Also measured, per instance: W's observation 1 (Spearman ρ of the LP's ``y`` with ``o`` and
with ``s``), observation 2 (ρ of the position in the Sorted-LP and LP-Swap orders with ``o`` and
``s``) and the TELs of Sorted-F (Swap) and MC-SF.

    llmopt study run wang-lp-optima --quick       # seed 0, Exponential + Mixed (about 1 min)
    llmopt study run wang-lp-optima --out results/wang/synthetic   # the committed table (~1.5 h on 2 busy cores)

The full form also runs observation 1 at n = 1,000 and 2,000 (seeds 0, 1); ``report(out)`` rebuilds
``lp_optima.md`` from the folder's ``lp_optima.csv`` and ``lp_optima_obs1.csv``.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.engine.discrete import RequestView, simulate
from llmopt.model.instance import Instance, Request
from llmopt.opt.studies import run_main, study_command
from llmopt.papers.wang.lp_optima import (
    HORIZONS,
    IPM_VALUE_TOL,
    METHODS,
    face_spread,
    horizon_of,
    solve_full,
    solve_horizon_lp,
    solve_on_face,
    spearman,
)
from llmopt.policies import make_policy
from llmopt.policies.lp_order import Y_GRID, LPSwap, SortedLP, lp_order, solve_cached
from llmopt.verify.checker import check_schedule
from llmopt.workloads.wang import wang_mixed, wang_synthetic

SYNTHETIC = ("uniform", "normal", "binomial", "exponential", "mixed")
#: W Table EC.1 (Sorted-LP, Sorted-F (Swap), LP-Swap).
PAPER = {"uniform": (9763.0, 9748.3, 9771.4), "normal": (9397.3, 9416.9, 9385.3),
         "binomial": (10943.0, 10696.7, 10665.7), "exponential": (6015.7, 6016.9, 6016.0),
         "mixed": (22133.2, 22100.1, 22128.2)}
ALL_METHODS = ("project", *METHODS, "ipm-full")
#: The horizons that bound the makespan of some schedule (the others cut the LP short).
BOUNDING_HORIZONS = ("sum-o", "makespan", "makespan-literal")
#: Tie-breaks among equal y: the project's (o, position), or position only (a stable sort on y).
TIES = ("o", "index")
PRESETS = {
    "quick": {"dists": "exponential,mixed", "seeds": "0", "lmsys_seeds": "", "horizons": ",".join(HORIZONS)},
    "full": {"dists": ",".join(SYNTHETIC), "seeds": "0,1,2", "lmsys_seeds": "0,1", "horizons": ",".join(HORIZONS)},
}


def lmsys_instance(seed: int, n: int) -> Instance:
    """The W §7 mix's n-prefix as a discrete instance (iteration units, all at 0)."""
    ti = wang_mixed(seed, n=n)
    return Instance(ti.M, tuple(Request(r.id, 0, r.prompt, r.output) for r in ti.requests),
                    name=f"wang-mixed/seed={seed} n={n}")


def _given(y: np.ndarray) -> Callable[[list[RequestView], list[int], int], np.ndarray]:
    return lambda reqs, outs, M: y[[r.position for r in reqs]]


def _tel(inst: Instance, policy: Any) -> tuple[int, dict[str, int]]:
    sched = simulate(inst, policy)
    report = check_schedule(inst, sched.starts)
    if not report.ok or report.tel is None:
        raise RuntimeError(f"{inst.name}: {policy.name} schedule rejected by the checker: {report.violations[:2]}")
    return int(report.tel), dict(sched.starts)


def _rank(order: list[int] | np.ndarray, n: int) -> np.ndarray:
    rank = np.empty(n)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(n)
    return rank


def run_instance(dataset: str, seed: int, inst: Instance, horizons: list[str], full_nnz: int,
                 log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Every (horizon, method) row of one instance."""
    s = np.array([r.prompt for r in inst.requests], dtype=np.int64)
    o = np.array([r.output for r in inst.requests], dtype=np.int64)
    base: dict[str, Any] = {"dataset": dataset, "seed": seed, "n": inst.n, "M": inst.M}
    base.update(spread_max=float("nan"), spread_n=-1, spread_unique_max=float("nan"), spread_unique_n=-1)
    kinds: dict[tuple[int, int], int] = {}
    for a, b in zip(s.tolist(), o.tolist(), strict=True):
        kinds[(a, b)] = kinds.get((a, b), 0) + 1
    base["tel_sorted_f_swap"], _ = _tel(inst, make_policy("sorted-f-swap"))
    base["tel_mc_sf"], _ = _tel(inst, make_policy("mc-sf"))
    rows: list[dict[str, Any]] = []

    def add(horizon: str, T: int, literal: bool, method: str, y: np.ndarray, lp_value: float, lp_s: float,
            method_s: float, columns: int) -> None:
        grid = np.round(y / Y_GRID).astype(np.int64)
        groups: dict[int, set[tuple[int, int]]] = {}
        for g, si, oi in zip(grid.tolist(), s.tolist(), o.tolist(), strict=True):
            groups.setdefault(g, set()).add((si, oi))
        mixed_tie = sum(int((grid == g).sum()) for g, kinds in groups.items() if len(kinds) > 1)
        for tie in TIES:
            # tie "o": the project's (y, o, position); tie "index": (y, position), a stable sort on y
            y_eff = y if tie == "o" else _rank(np.lexsort((np.arange(inst.n), grid)), inst.n)
            t_lp, _ = _tel(inst, SortedLP(expected_starts=_given(y_eff)))
            swap = LPSwap(expected_starts=_given(y_eff))
            t_swap, _ = _tel(inst, swap)
            pos = {r.id: i for i, r in enumerate(inst.requests)}
            swap_order = [pos[rid] for batch in swap.last_batches for rid in batch]
            r_lp, r_swap = _rank(lp_order(y_eff, o), inst.n), _rank(swap_order, inst.n)
            rows.append({**base, "horizon": horizon, "T": T, "literal": literal, "method": method, "tie": tie,
                         "lp_value": lp_value, "lp_s": lp_s, "method_s": method_s, "columns": columns,
                         "tied_mixed": mixed_tie, "at_horizon": int((y >= T - 1e-6).sum()),
                         "rho_y_o": spearman(y, o), "rho_y_s": spearman(y, s),
                         "rho_lp_o": spearman(r_lp, o), "rho_lp_s": spearman(r_lp, s),
                         "rho_swap_o": spearman(r_swap, o), "rho_swap_s": spearman(r_swap, s),
                         "tel_sorted_lp": t_lp, "tel_lp_swap": t_swap, "swap_vs_lp": t_swap / t_lp - 1.0})
            log(f"  {dataset} seed {seed} {horizon:>16} {method:>14} tie {tie:>5}: Sorted-LP {t_lp}, LP-Swap "
                f"{t_swap} ({rows[-1]['swap_vs_lp']:+.2%}), ρ(y,o) {rows[-1]['rho_y_o']:.3f} "
                f"ρ(y,s) {rows[-1]['rho_y_s']:.3f}")

    # the repository's own Sorted-LP / LP-Swap (column generation over T̄ = Σo, merged classes, Δ = 1)
    solve_cached.cache_clear()
    t0 = time.perf_counter()
    proj = SortedLP(bucket=1)
    _tel(inst, proj)
    assert proj.last_lp is not None
    y_proj = np.array([proj.last_lp.expected_start[r.id] for r in inst.requests])
    add("sum-o", int(o.sum()), False, "project", y_proj, float(proj.last_lp.objective or 0.0),
        time.perf_counter() - t0, 0.0, proj.last_lp.columns)
    first: Any = None
    for horizon in horizons:
        T, literal = horizon_of(horizon, inst)
        lp = solve_horizon_lp(inst, T, literal, warm=first)
        first = first or lp
        log(f" {dataset} seed {seed} {horizon}: T̄ = {T}, LP {lp.value:,.3f}, {lp.rounds} rounds, "
            f"face {lp.face_req.size:,} columns, {lp.runtime_s:.1f} s")
        if horizon == "sum-o":  # how far y can move over the optimal face, request by request
            y_lo, y_hi = face_spread(lp)
            unique = np.array([kinds[(a, b)] == 1 for a, b in zip(s.tolist(), o.tolist(), strict=True)])
            spread = y_hi - y_lo
            base.update(spread_max=float(spread.max()), spread_n=int((spread > 1e-6).sum()),
                        spread_unique_max=float(spread[unique].max()) if unique.any() else 0.0,
                        spread_unique_n=int((spread[unique] > 1e-6).sum()))
            log(f" {dataset} seed {seed}: y spread over the optimal face: max {spread.max():.4f} "
                f"({base['spread_n']} requests), unique (s, o) only: max {base['spread_unique_max']:.4f} "
                f"({base['spread_unique_n']})")
        for method in METHODS:
            p = solve_on_face(lp, method)
            add(horizon, T, literal, method, p.y, p.value, lp.runtime_s, p.runtime_s, p.columns)
        hi = np.full(inst.n, T) if literal else T - o
        nnz = int(((hi + 1) * (o + 1)).sum())  # at most o_i memory entries + 1 per column
        if horizon == "sum-o" and nnz <= full_nnz:  # the whole LP, W's own horizon only (minutes at 6M nnz)
            p = solve_full(inst, T, literal, "ipm")
            if abs(p.value - lp.value) > IPM_VALUE_TOL * lp.value:
                raise RuntimeError(f"ipm-full value {p.value} != colgen optimum {lp.value}")
            add(horizon, T, literal, "ipm-full", p.y, p.value, lp.runtime_s, p.runtime_s, p.columns)
    return rows


def obs1_rows(seeds: list[int], sizes: list[int], log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Observation 1 at W §7's sizes: ρ(y, o) and ρ(y, s) of the project's Sorted-LP LP (column generation,
    ``bucket="auto"``, as the ``wang-mixed`` suite runs it) on the LMSYS + arXiv mix."""
    rows = []
    for n in sizes:
        for seed in seeds:
            inst = lmsys_instance(seed, n)
            s = np.array([r.prompt for r in inst.requests], dtype=np.int64)
            o = np.array([r.output for r in inst.requests], dtype=np.int64)
            solve_cached.cache_clear()
            pol = SortedLP()
            t0 = time.perf_counter()
            _tel(inst, pol)
            assert pol.last_lp is not None and pol.last_bucket is not None
            y = np.array([pol.last_lp.expected_start[r.id] for r in inst.requests])
            rank = _rank(lp_order(y, o), inst.n)
            rows.append({"n": n, "seed": seed, "bucket": pol.last_bucket, "rho_y_o": spearman(y, o),
                         "rho_y_s": spearman(y, s), "rho_y_w": spearman(y, s + o), "rho_lp_o": spearman(rank, o),
                         "rho_lp_s": spearman(rank, s), "seconds": time.perf_counter() - t0})
            log(f" obs 1, LMSYS + arXiv n = {n} seed {seed}: {rows[-1]}")
    return rows


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    vals = [float(r[key]) for r in rows if float(r[key]) == float(r[key])]
    return statistics.fmean(vals) if vals else float("nan")


def _ordering(tels: dict[str, float]) -> str:
    return " < ".join(sorted(tels, key=lambda k: tels[k]))


def _span(values: list[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return format(lo, fmt) if format(lo, fmt) == format(hi, fmt) else f"{format(lo, fmt)} … {format(hi, fmt)}"


def _cells(rows: list[dict[str, Any]], **match: Any) -> list[dict[str, Any]]:
    return [r for r in rows if all(r[k] == v for k, v in match.items())]


def _combos(rows: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return list(dict.fromkeys((r["horizon"], r["method"], r["tie"]) for r in rows))


def render(rows: list[dict[str, Any]], command: str, obs1: list[dict[str, Any]] | None = None) -> str:
    """The markdown report of ``rows`` (and of :func:`obs1_rows`' rows, if any)."""
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    horizons = list(dict.fromkeys(r["horizon"] for r in rows))
    methods = [m for m in ALL_METHODS if any(r["method"] == m for r in rows)]
    seeds = {d: sorted({r["seed"] for r in rows if r["dataset"] == d}) for d in datasets}
    size = {d: next(r["n"] for r in rows if r["dataset"] == d) for d in datasets}
    out = ["# Sorted-LP and LP-Swap from different optima of Relax-LP (issue 25, item 1)", "",
           f"`{command}` ({len(rows)} rows). Instances: "
           + ", ".join(f"{d} seeds {','.join(map(str, seeds[d]))} (n = {size[d]})" for d in datasets)
           + ". TEL in steps (iterations for the LMSYS + arXiv mix, discrete engine); every schedule verified by "
           "the checker. Horizons and methods: `llmopt/papers/wang/lp_optima.py`; every solution's LP value "
           "equals its horizon's optimum to 1e-6 (1e-5 for interior points; checked). Tie `o`: equal `y` broken "
           "by `(o, position)` (the project's rule); tie `index`: by position only (a stable sort on `y`). "
           "CSV: `lp_optima.csv`.", ""]

    out += ["## 1. LP-Swap vs Sorted-LP", "",
            "Δ = mean over instances of TEL(LP-Swap)/TEL(Sorted-LP) − 1 (negative: LP-Swap better), as the range over "
            "the LP methods (" + ", ".join(m for m in methods) + "). W: \"LP-Swap demonstrates significant latency "
            "reduction over its base algorithm Sorted-LP\" (§7); in Table EC.1 LP-Swap − Sorted-LP is +0.09 %, "
            "−0.13 %, −2.53 %, +0.01 %, −0.02 % (Uniform … Mixed).", "",
            "| dataset | horizon | T̄ (mean) | Sorted-LP TEL, tie o | LP-Swap TEL, tie o | Δ, tie o | "
            "Sorted-LP TEL, tie index | Δ, tie index | LP-Swap wins |", "|---|---|---|---|---|---|---|---|---|"]
    for d in datasets:
        for h in horizons:
            sel = _cells(rows, dataset=d, horizon=h)
            if not sel:
                continue
            cols = []
            for tie in TIES:
                per = [_cells(sel, method=m, tie=tie) for m in methods]
                per = [p for p in per if p]
                cols.append((_span([_mean(p, "tel_sorted_lp") for p in per], ",.1f"),
                             _span([_mean(p, "tel_lp_swap") for p in per], ",.1f"),
                             _span([_mean(p, "swap_vs_lp") for p in per], "+.2%")))
            wins = sum(r["tel_lp_swap"] < r["tel_sorted_lp"] for r in sel)
            out.append(f"| {d} | {h} | {_mean(sel, 'T'):,.0f} | {cols[0][0]} | {cols[0][1]} | {cols[0][2]} | "
                       f"{cols[1][0]} | {cols[1][2]} | {wins}/{len(sel)} |")
    best = min(rows, key=lambda r: r["swap_vs_lp"])
    out += ["", f"Largest single-instance gain of LP-Swap over Sorted-LP: {best['swap_vs_lp']:+.2%} "
            f"({best['dataset']} seed {best['seed']}, horizon {best['horizon']}, {best['method']}, tie {best['tie']}; "
            f"Sorted-LP {best['tel_sorted_lp']:,}, LP-Swap {best['tel_lp_swap']:,}).", "",
            "Per LP method, horizon `sum-o`, tie `o` (mean Δ):", "",
            "| dataset | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for d in datasets:
        cells = [_cells(rows, dataset=d, horizon="sum-o", method=m, tie="o") for m in methods]
        out.append(f"| {d} | " + " | ".join(f"{_mean(c, 'swap_vs_lp'):+.2%}" if c else "—" for c in cells) + " |")
    out.append("")

    out += ["## 2. Table EC.1's ordering", "",
            "How many (horizon, method, tie) combinations order the mean TELs of Sorted-LP, Sorted-F (Swap) and "
            "LP-Swap as W's Table EC.1 row does, and the combination-independent numbers.", "",
            "| dataset | paper's order | matches | Sorted-F (Swap) | MC-SF | Sorted-LP range | LP-Swap range |",
            "|---|---|---|---|---|---|---|"]
    for d in datasets:
        sel = _cells(rows, dataset=d)
        sf = _mean(_cells(sel, method="project", tie="o"), "tel_sorted_f_swap")
        mc = _mean(_cells(sel, method="project", tie="o"), "tel_mc_sf")
        means = [(_mean(_cells(sel, horizon=h, method=m, tie=t), "tel_sorted_lp"),
                  _mean(_cells(sel, horizon=h, method=m, tie=t), "tel_lp_swap")) for h, m, t in _combos(sel)]
        paper, ok = "—", "—"
        if d in PAPER:
            paper = _ordering(dict(zip(("Sorted-LP", "Sorted-F (Swap)", "LP-Swap"), PAPER[d], strict=True)))
            ok = f"{sum(_ordering({'Sorted-LP': a, 'Sorted-F (Swap)': sf, 'LP-Swap': b}) == paper for a, b in means)}" \
                 f"/{len(means)}"
        out.append(f"| {d} | {paper} | {ok} | {sf:,.1f} | {mc:,.1f} | {_span([a for a, _ in means], ',.1f')} | "
                   f"{_span([b for _, b in means], ',.1f')} |")
    out.append("")

    out += ["## 3. Observation 1: does the LP order follow o rather than s?", "",
            "Spearman ρ of the LP's expected start `y_i` with `o_i` and with `s_i` (mean over instances): the "
            "project's LP, the range over every optimum of the horizons that bound the makespan (`sum-o`, "
            "`makespan`, `makespan-literal`), and the truncated horizon `n-literal`. W: \"Sorted-LP consistently "
            "prioritizes requests with shorter output lengths (o_i), even when their input sizes (s_i) are "
            "substantial\": ρ(y, o) high, ρ(y, s) low. Verdict on the project LP: a difference above 0.1.", "",
            "| dataset | ρ(y, o), project LP | ρ(y, s), project LP | ρ(y, o), every optimum | ρ(y, s), every optimum | "
            "ρ(y, o) / ρ(y, s), T̄ = n | verdict |", "|---|---|---|---|---|---|---|"]
    for d in datasets:
        sel = _cells(rows, dataset=d, tie="o")
        proj = _cells(sel, method="project")
        bounded = [(h, m) for h, m, _ in _combos(sel) if h in BOUNDING_HORIZONS]
        ro = [_mean(_cells(sel, horizon=h, method=m), "rho_y_o") for h, m in bounded]
        rs = [_mean(_cells(sel, horizon=h, method=m), "rho_y_s") for h, m in bounded]
        short = _cells(sel, horizon="n-literal", method="dual-simplex")
        cut = f"{_mean(short, 'rho_y_o'):.3f} / {_mean(short, 'rho_y_s'):.3f}" if short else "—"
        po, ps = _mean(proj, "rho_y_o"), _mean(proj, "rho_y_s")
        verdict = "o dominates" if po > ps + 0.1 else ("s dominates" if ps > po + 0.1 else "neither")
        out.append(f"| {d} | {po:.3f} | {ps:.3f} | {_span(ro, '.3f')} | {_span(rs, '.3f')} | {cut} | {verdict} |")
    out.append("")

    if obs1:
        out += ["At W §7's sizes (the project's Sorted-LP LP, bucketed as in the `wang-mixed` suite, Δ = "
                "`bucket`; `lp_optima_obs1.csv`): ρ of `y` with `o`, `s` and `s + o`, and of the Sorted-LP "
                "position with `o` and `s`.", "",
                "| LMSYS + arXiv n | seeds | Δ | ρ(y, o) | ρ(y, s) | ρ(y, s + o) | ρ(pos, o) | ρ(pos, s) |",
                "|---|---|---|---|---|---|---|---|"]
        for n in sorted({r["n"] for r in obs1}):
            sel = [r for r in obs1 if r["n"] == n]
            out.append(f"| {n:,} | {len(sel)} | {_span([float(r['bucket']) for r in sel], '.0f')} | "
                       f"{_mean(sel, 'rho_y_o'):.3f} | {_mean(sel, 'rho_y_s'):.3f} | {_mean(sel, 'rho_y_w'):.3f} | "
                       f"{_mean(sel, 'rho_lp_o'):.3f} | {_mean(sel, 'rho_lp_s'):.3f} |")
        out.append("")

    out += ["## 4. Observation 2: does the swap rebalance the order toward s?", "",
            "Spearman ρ of the position in the admission order with `o` and with `s`: Sorted-LP's order against "
            "LP-Swap's (project LP, tie `o`; mean over instances). W: the swap \"counteracts this bias by considering "
            "both input and output sizes\", i.e. LP-Swap's order should follow `s` more and `o` less.", "",
            "| dataset | Sorted-LP ρ(pos, o) | LP-Swap ρ(pos, o) | Sorted-LP ρ(pos, s) | LP-Swap ρ(pos, s) | Δ TEL |",
            "|---|---|---|---|---|---|"]
    for d in datasets:
        ref = _cells(rows, dataset=d, method="project", tie="o")
        out.append(f"| {d} | {_mean(ref, 'rho_lp_o'):.3f} | {_mean(ref, 'rho_swap_o'):.3f} | "
                   f"{_mean(ref, 'rho_lp_s'):.3f} | {_mean(ref, 'rho_swap_s'):.3f} | {_mean(ref, 'swap_vs_lp'):+.2%} |")
    out.append("")

    out += ["## 5. Observation 3: LP-Swap competitive everywhere; pure swap marginally better on Mixed", "",
            "Project LP, tie `o`: LP-Swap against the best of the three Table EC.1 algorithms, and Sorted-F (Swap) "
            "against LP-Swap (mean TEL; negative: Sorted-F (Swap) better).", "",
            "| dataset | LP-Swap / best of three − 1 | Sorted-F (Swap) / LP-Swap − 1 |", "|---|---|---|"]
    for d in datasets:
        ref = _cells(rows, dataset=d, method="project", tie="o")
        a, b, c = _mean(ref, "tel_sorted_lp"), _mean(ref, "tel_lp_swap"), _mean(ref, "tel_sorted_f_swap")
        out.append(f"| {d} | {b / min(a, b, c) - 1:+.2%} | {c / b - 1:+.2%} |")
    out.append("")

    out += ["## 6. How different are the optima?", "",
            "How far each request's `y` can move over the optimal face of the `sum-o` LP (`face_spread`: the least "
            "and the largest `y_i` over all optimal solutions, 2n LPs): max over requests, and how many requests "
            "can move at all (spread > 1e-6); the same restricted to requests whose `(s, o)` no other request "
            "shares (identical requests can always trade places, which changes no schedule). Where no request "
            "can move, `y` is the same at every optimum — every vertex, every interior point, the analytic "
            "centre — so the choice of optimum cannot matter.", "",
            "| dataset | instances | y spread, max | requests that can move | unique (s, o): spread max | "
            "unique (s, o) that can move |", "|---|---|---|---|---|---|"]
    for d in datasets:
        by_seed = {r["seed"]: r for r in _cells(rows, dataset=d, horizon="sum-o", method="dual-simplex", tie="o")}
        vals = list(by_seed.values())
        out.append(f"| {d} | {len(vals)} | {max(r['spread_max'] for r in vals):.3f} | "
                   f"{_span([float(r['spread_n']) for r in vals], '.0f')} of {vals[0]['n']} | "
                   f"{max(r['spread_unique_max'] for r in vals):.3f} | "
                   f"{_span([float(r['spread_unique_n']) for r in vals], '.0f')} |")
    out += ["", "Per horizon, mean over instances: face-LP columns (the support of every optimum), requests "
            "whose `y` ties a request with a different `(s, o)` (so that the tie-break decides their order) "
            "for the dual-simplex vertex and the interior point, requests with `y = T̄` (started at the "
            "horizon), and the column-generation time.", "",
            "| dataset | horizon | face columns | mixed ties, dual simplex / ipm | y = T̄ | colgen (s) |",
            "|---|---|---|---|---|---|"]
    for d in datasets:
        for h in horizons:
            ds = _cells(rows, dataset=d, horizon=h, method="dual-simplex", tie="o")
            ip = _cells(rows, dataset=d, horizon=h, method="ipm", tie="o")
            if ds:
                out.append(f"| {d} | {h} | {_mean(ds, 'columns'):,.0f} | {_mean(ds, 'tied_mixed'):.1f} / "
                           f"{_mean(ip, 'tied_mixed'):.1f} | {_mean(ds, 'at_horizon'):.1f} | {_mean(ds, 'lp_s'):.1f} |")
    return "\n".join(out) + "\n"


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` as CSV (floats with ``repr`` precision)."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a CSV written by :func:`write_rows`, with their types back."""
    ints = {"seed", "n", "M", "T", "columns", "tied_mixed", "at_horizon", "tel_sorted_lp", "tel_lp_swap",
            "tel_sorted_f_swap", "tel_mc_sf", "bucket", "spread_n", "spread_unique_n"}
    out = []
    with path.open(newline="", encoding="utf-8") as fh:
        for raw in csv.DictReader(fh):
            row: dict[str, Any] = {}
            for key, value in raw.items():
                if key in ints:
                    row[key] = int(value)
                elif key == "literal":
                    row[key] = value == "True"
                elif key in ("dataset", "horizon", "method", "tie"):
                    row[key] = value
                else:
                    row[key] = float(value)
            out.append(row)
    return out


def _publish(text: str, rows: list[dict[str, Any]], obs1: list[dict[str, Any]], out: Path | None) -> None:
    """Print the report; with ``out``, store it and its rows there."""
    print(text)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "lp_optima.md").write_text(text, encoding="utf-8")
        write_rows(out / "lp_optima.csv", rows)
        if obs1:
            write_rows(out / "lp_optima_obs1.csv", obs1)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry (the options of :data:`OPTIONS`, ``--preset`` and ``--out DIR``)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="quick")
    ap.add_argument("--dists", help="synthetic distributions (comma-separated)")
    ap.add_argument("--seeds", help="synthetic seeds")
    ap.add_argument("--lmsys-seeds", help="seeds of the LMSYS + arXiv mix ('' for none)")
    ap.add_argument("--lmsys-n", type=int, default=200)
    ap.add_argument("--horizons")
    ap.add_argument("--obs1-n", default="", help="W §7 sizes for observation 1 with the project's LP (e.g. 1000,2000)")
    ap.add_argument("--obs1-seeds", default="0")
    ap.add_argument("--full-nnz", type=int, default=8_000_000, help="largest LP solved whole for ipm-full")
    ap.add_argument("--out", type=Path, default=None, help="write lp_optima.{md,csv} here")
    ap.add_argument("--csv", type=Path, help="also write the rows to this CSV as they are computed")
    ap.add_argument("--resume", action="store_true", help="keep the instances already in --csv, run the rest")
    ap.add_argument("--from-csv", type=Path, help="only rebuild the report from a CSV of rows")
    ap.add_argument("--command", help="the command line to quote in a report rebuilt with --from-csv")
    args = ap.parse_args(argv)
    if args.from_csv:
        rows: list[dict[str, Any]] = read_rows(args.from_csv)
        obs1_path = args.from_csv.with_name(args.from_csv.stem + "_obs1.csv")
        obs1 = read_rows(obs1_path) if obs1_path.exists() else []
        _publish(render(rows, args.command or f"wang-lp-optima from {args.from_csv}", obs1), rows, obs1, args.out)
        return
    preset = PRESETS[args.preset]
    dists = [d for d in (preset["dists"] if args.dists is None else args.dists).split(",") if d]
    seeds = [int(x) for x in (preset["seeds"] if args.seeds is None else args.seeds).split(",") if x]
    lseeds = [int(x) for x in (args.lmsys_seeds if args.lmsys_seeds is not None else preset["lmsys_seeds"]).split(",")
              if x]
    horizons = [h for h in (args.horizons or preset["horizons"]).split(",") if h]

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    rows = read_rows(args.csv) if args.resume and args.csv and args.csv.exists() else []
    done = {(r["dataset"], r["seed"]) for r in rows}
    jobs = [(d, seed) for d in dists for seed in seeds] + [("lmsys+arxiv", seed) for seed in lseeds]
    for d, seed in jobs:
        if (d, seed) in done:
            continue
        inst = lmsys_instance(seed, args.lmsys_n) if d == "lmsys+arxiv" else wang_synthetic(seed, d)
        rows += run_instance(d, seed, inst, horizons, args.full_nnz, log)
        if args.csv:
            write_rows(args.csv, rows)
    obs1 = obs1_rows([int(x) for x in args.obs1_seeds.split(",") if x],
                     [int(x) for x in args.obs1_n.split(",") if x], log)
    if args.csv and obs1:
        write_rows(args.csv.with_name(args.csv.stem + "_obs1.csv"), obs1)
    if not rows:  # observation 1 alone: its rows are in the CSV; rebuild the report with --from-csv
        return
    _publish(render(rows, args.command or f"wang-lp-optima preset {args.preset}", obs1), rows, obs1, args.out)


OPTIONS = {
    "dists": "synthetic distributions, comma-separated (default: the preset's)",
    "synthetic_seeds": "seeds of the synthetic distributions, comma-separated (default: the preset's)",
    "lmsys_seeds": "seeds of the LMSYS + arXiv mix, comma-separated ('' for none)",
    "lmsys_n": "requests of the LMSYS + arXiv instances (default 200)",
    "horizons": "Relax-LP horizons, comma-separated (default all)",
    "obs1_n": "W §7 sizes for observation 1 (default 1000,2000; quick: none)",
    "obs1_seeds": "seeds for observation 1 (default 0,1)",
    "full_nnz": "largest LP solved whole for ipm-full (default 8,000,000)",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``lp_optima.{md,csv}`` (and ``lp_optima_obs1.csv``) into ``out``; ``seeds`` are the synthetic
    seeds; returns the files written."""
    opts = dict(options)
    if seeds is not None:
        opts["synthetic_seeds"] = ",".join(str(x) for x in seeds)
    if not quick:
        opts.setdefault("obs1_n", "1000,2000")
        opts.setdefault("obs1_seeds", "0,1")
    argv = ["--out", str(out), "--preset", "quick" if quick else "full",
            "--command", study_command("wang-lp-optima", out, quick=quick, seeds=seeds, options=options)]
    for key, value in opts.items():
        flag = "--seeds" if key == "synthetic_seeds" else "--" + key.replace("_", "-")
        argv += [flag, str(value)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """Rebuild ``lp_optima.md`` from ``out``'s ``lp_optima.csv`` (and ``lp_optima_obs1.csv``); returns it."""
    out = Path(out)
    rows = read_rows(out / "lp_optima.csv")
    obs1_path = out / "lp_optima_obs1.csv"
    obs1 = read_rows(obs1_path) if obs1_path.exists() else []
    (out / "lp_optima.md").write_text(render(rows, f"wang-lp-optima, rebuilt from {out / 'lp_optima.csv'}", obs1),
                                      encoding="utf-8")
    return [str(out / "lp_optima.md")]
