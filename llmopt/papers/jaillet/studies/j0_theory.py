"""J0's theory, measured (issue 24, part 5): Thm 6.2's adversarial family, J Thm 4.3's O(1) ratio and
J0 Thm 5.3's constant regret, with the code in :mod:`llmopt.papers.jaillet.theory`.

* **Thm 6.2**: every policy on its own adaptive instance (``t'`` from running it on the first request
  alone), TEL verified by the checker, OPT exact by enumeration (cross-checked by the hindsight IP at
  small ``M``), beside J0's closed forms; one figure of ratio vs ``M``.
* **Thm 4.3**: MC-SF on all-at-0, identical-prompt, heterogeneous-output instances as ``n`` grows, over
  the best certified lower bound (a ratio against a *bound*) and over OPT where the IP proves it.
* **Thm 5.3**: per-period i.i.d. arrivals over ``T`` periods, ``AEL(MC-SF) − OPT/n`` bracketed by the
  best verified schedule and the best certified bound, in a stable and an overloaded regime.

    llmopt study run j0-theory --out results/jaillet/j0-theory   # a few minutes on a shared 2-core machine
    llmopt study run j0-theory --large                   # larger n, T, M and more seeds (much longer)
    llmopt study run j0-theory --quick                   # Thm 6.2 only (seconds)

Writes ``thm62.md``, ``thm43.md``, ``thm53.md``, ``thm62.png``, ``thm53.png``, ``rows.json`` and
``README.md`` into the output folder; ``report(out)`` re-renders ``README.md`` from ``rows.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from llmopt.opt.hindsight import solve_hindsight
from llmopt.opt.studies import StudyError, options_argv, run_main, study_command
from llmopt.papers.jaillet.theory import (
    PreemptShortestFirst,
    energy_throughput,
    node_limited_highs,
    run_thm62,
    schedule_of,
    thm43_instance,
    thm43_point,
    thm53_instance,
    thm53_point,
    thm62_instance,
    thm62_mcsf_tel,
    thm62_opt,
    thm62_ratio_limit,
)


def _md(rows: list[dict[str, Any]]) -> str:
    head = list(rows[0])
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r.values()) + " |")
    return "\n".join(out) + "\n"


def _ms(xs: list[float]) -> str:
    """``mean ± sd`` (sd over seeds; just the value for one)."""
    if len(xs) == 1:
        return f"{xs[0]:.2f}"
    return f"{statistics.mean(xs):.2f} ± {statistics.stdev(xs):.2f}"


#: Branch-and-bound nodes of every IP this study solves (HiGHS, one thread, seed 0, no clock): the rows are the
#: same on every machine and under any load. 2,000 nodes took 0.4–6.3 s per instance on the 2-core VM under load
#: (thm43 n = 20, thm53 T = 25 and 50).
IP_NODES = 2000


# --- Thm 6.2 ----------------------------------------------------------------------------------

THM62_POLICIES: tuple[Any, ...] = ("mc-sf", "fcfs", "alpha-protection:alpha=0.1", PreemptShortestFirst())


def thm62_rows(large: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Every policy on its own instance (raw rows), a ratio table and a closed-form table."""
    grid = {Fraction(2, 5): [5, 10, 20, 25, 40, 100], Fraction(1, 3): [9, 18, 36, 54, 72, 144, 288],
            Fraction(1, 4): [16, 32, 64, 128, 256, 512, 1024], Fraction(1, 8): [64, 128, 256, 512, 1024, 2048]}
    if large:
        grid[Fraction(1, 4)] += [2048, 4096]
        grid[Fraction(1, 8)] += [4096, 8192]
    raw, ratios, closed = [], [], []
    for eps, Ms in grid.items():
        for M in Ms:
            runs = {}
            for policy in THM62_POLICIES:
                r = run_thm62(M, eps, policy)
                runs[r.policy] = r
                raw.append({"ε": str(eps), "M": M, "n": r.n, "policy": r.policy, "t'": r.t_first, "TEL": r.tel,
                            "evictions": r.evictions, "OPT": r.opt, "TEL/OPT": r.ratio, "1/ε": r.bound,
                            "limit": thm62_ratio_limit(eps)})
            mc = runs["mc-sf"]
            row: dict[str, Any] = {"ε": str(eps), "M": M, "n": mc.n, "OPT (exact)": mc.opt}
            for name, r in runs.items():
                row[f"{name}: t', TEL/OPT"] = f"{r.t_first}, {r.ratio:.3f}" + (
                    f" ({r.evictions} ev.)" if r.evictions else "")
            row |= {"1/ε": float(mc.bound), "MC-SF ≥ 1/ε": "yes" if mc.ratio >= mc.bound else "no",
                    "DESIGN limit 2m+1": thm62_ratio_limit(eps), "paper limit 1+2/ε": float(1 + 2 / eps)}
            ratios.append(row)
            closed.append({"ε": str(eps), "M": M, "MC-SF TEL": mc.tel, "closed form (DESIGN)": thm62_mcsf_tel(M, eps),
                           "A1 (paper, ≤ TEL)": mc.paper["A1"], "A2 (paper)": mc.paper["A2"], "OPT": mc.opt,
                           "A3 (paper, ≥ OPT?)": mc.paper["A3"],
                           "OPT ≤ A3 (paper)": "yes" if mc.opt <= mc.paper["A3"] else "NO",
                           "A3 (DESIGN schedule)": mc.a3_design})
        print(f"thm62 ε = {eps}: done", flush=True)
    return raw, ratios, closed


def thm62_ip_rows(large: bool) -> list[dict[str, Any]]:
    """The hindsight pipeline on the MC-SF instances, given the enumeration's schedule as a warm start."""
    cases = [(Fraction(2, 5), 25), (Fraction(1, 3), 36), (Fraction(1, 4), 64), (Fraction(1, 3), 72)]
    if large:
        cases += [(Fraction(1, 4), 128), (Fraction(1, 8), 128)]
    rows = []
    for eps, M in cases:
        inst = thm62_instance(M, eps)
        opt, starts = thm62_opt(inst)
        res = solve_hindsight(inst, schedules={"enumeration": schedule_of(inst, starts, "enumeration")},
                              bounds=("energy", "zone-lp"), solver=node_limited_highs(IP_NODES))
        rows.append({"ε": str(eps), "M": M, "n": inst.n, "enumeration OPT": opt, "pipeline status": res.status.value,
                     "pipeline OPT": res.opt if res.opt is not None else "—", "incumbent": res.incumbent,
                     "certified bound": res.bound, "certificate": res.bound_certificate, "gap": res.gap,
                     "s": round(res.runtime_s, 1)})
        print(f"thm62 IP ε = {eps}, M = {M}: {res.status.value}", flush=True)
    return rows


def thm62_figure(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for i, eps in enumerate(dict.fromkeys(r["ε"] for r in rows)):
        mc = [r for r in rows if r["ε"] == eps and r["policy"] == "mc-sf"]
        color = f"C{i}"
        ax.plot([r["M"] for r in mc], [r["TEL/OPT"] for r in mc], "o-", color=color, label=f"MC-SF, ε = {eps}")
        ax.axhline(mc[0]["1/ε"], color=color, ls=":", lw=1)
        ax.axhline(mc[0]["limit"], color=color, ls="--", lw=1)
    ps = [r for r in rows if r["policy"] == "preempt-shortest-first"]
    ax.plot([r["M"] for r in ps], [r["TEL/OPT"] for r in ps], "kx", label="preempt-shortest-first (evicts), all ε")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("M (tokens)")
    ax.set_ylabel("TEL / OPT (exact OPT)")
    ax.set_title("J0 Thm 6.2 family: dotted = 1/ε (theorem), dashed = 2m+1 (DESIGN limit)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- Thm 4.3 ----------------------------------------------------------------------------------


def thm43_point_of(dist: str, s: int, o_max: int, n: int, seed: int) -> dict[str, Any]:
    """One instance of ``thm43.md``'s grid, bracketed as the study does (the IP, node-limited, for n ≤ 20)."""
    inst = thm43_instance(n, seed, s=s, o_max=o_max, dist=dist)
    bounds = ("energy", "lp-colgen") + (("zone-lp",) if n <= 40 else ())
    p = thm43_point(inst, bounds=bounds, search_evals=200 if n <= 640 else 50,
                    ip_node_limit=IP_NODES if n <= 20 else None)
    return p | {"dist": dist, "s": s, "o_max": o_max, "seed": seed}


def thm43_row(dist: str, s: int, o_max: int, n: int, pts: list[dict[str, Any]]) -> dict[str, Any]:
    """One row of ``thm43.md`` from its instances' points (one per seed)."""
    seeds = len(pts)
    proven = [p for p in pts if p["opt"] is not None]
    return {
        "outputs": f"{dist} 1..{o_max}", "s": s, "M": pts[0]["M"], "n": n, "seeds": seeds,
        "MC-SF / bound (mean, max)": f"{statistics.mean(p['ratio_vs_bound'] for p in pts):.3f}, "
                                     f"{max(p['ratio_vs_bound'] for p in pts):.3f}",
        "bound from": ", ".join(sorted({p["bound_stage"] for p in pts})),
        "MC-SF / best schedule (mean)": statistics.mean(p["ratio_vs_best"] for p in pts),
        "MC-SF / OPT (proven/seeds)": (f"{statistics.mean(p['ratio_vs_opt'] for p in proven):.3f} "
                                       f"({len(proven)}/{seeds})" if proven else f"— (0/{seeds})"),
        "status, max (UB−LB)/UB": (", ".join(sorted({p["status"] for p in pts}))
                                   + f", {max(p['gap'] for p in pts):.1%}"),
        "MC-SF ≤ L4.4": "yes" if all(p["mcsf"] <= p["lemma44"] for p in pts) else "NO",
        "L4.7 / bound (mean)": statistics.mean(p["lemma47"] / p["bound"] for p in pts),
    }


def thm43_rows(large: bool, seeds: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    ns = [10, 20, 40, 80, 160, 320, 640] + ([1280, 2560] if large else [])
    settings = [("uniform", 2, 10), ("two-point", 2, 10)] + ([("uniform", 4, 40)] if large else [])
    raw, rows = [], []
    for dist, s, o_max in settings:
        for n in ns:
            pts = [thm43_point_of(dist, s, o_max, n, seed) for seed in range(seeds)]
            raw += pts
            rows.append(thm43_row(dist, s, o_max, n, pts))
            print(f"thm43 {dist} n = {n}: {rows[-1]['MC-SF / bound (mean, max)']}", flush=True)
    return rows, raw


# --- Thm 5.3 ----------------------------------------------------------------------------------


def thm53_point_of(T: int, regime: str, rho: float, s: int, o_max: int, M: int, seed: int) -> dict[str, Any]:
    """One instance of ``thm53.md``'s grid (``λ = ρ·μ_E`` rounded to 0.01), bracketed as the study does (the
    IP, node-limited, for n ≤ 30)."""
    lam = round(rho * energy_throughput(M, s, o_max), 2)
    B = max(4, 2 * math.ceil(lam))
    inst = thm53_instance(T, lam, seed, s=s, o_max=o_max, B=B, M=M)
    bounds = ("energy", "lp-colgen") if inst.n <= 300 else ("energy",)
    p = thm53_point(inst, T, bounds=bounds, search_evals=300, ip_node_limit=IP_NODES if inst.n <= 30 else None)
    return p | {"regime": regime, "lam": lam, "T": T, "seed": seed, "M": M, "B": B}


def thm53_row(pts: list[dict[str, Any]], rho: float) -> dict[str, Any]:
    """One row of ``thm53.md`` from its instances' points (one per seed)."""
    p0 = pts[0]
    return {
        "M": p0["M"], "regime": p0["regime"], "λ (ρ = λ/μ_E)": f"{p0['lam']} ({rho})", "T": p0["T"],
        "seeds": len(pts), "n (mean)": statistics.mean(p["n"] for p in pts),
        "MC-SF backlog at T": _ms([p["backlog"] for p in pts]),
        "AEL(MC-SF)": _ms([p["ael"] for p in pts]),
        "UB/n (best schedule)": _ms([p["ub_n"] for p in pts]),
        "LB/n (certified)": _ms([p["lb_n"] for p in pts]),
        "regret ≥ AEL − UB/n": _ms([p["regret_lo"] for p in pts]),
        "regret ≤ AEL − LB/n": _ms([p["regret_hi"] for p in pts]),
        "makespan MC-SF / best": statistics.mean(p["makespan_mcsf"] / p["makespan_ub"] for p in pts),
        "bound from, status": ", ".join(sorted({f"{p['bound_stage']} {p['status']}" for p in pts})),
        "max (UB−LB)/UB": max(p["gap"] for p in pts),
    }


def md_cells(row: dict[str, Any]) -> list[str]:
    """The cells of ``row`` as :func:`_md` prints them."""
    return [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()]


def thm53_rows(large: bool, seeds: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    Ts = [25, 50, 100, 200, 400] + ([800] if large else [])
    settings = [(2, 10, 24)] + ([(2, 10, 96)] if large else [])
    raw, rows, fits = [], [], {}
    for s, o_max, M in settings:
        mu = energy_throughput(M, s, o_max)
        for regime, rho in (("stable", 0.55), ("overloaded", 1.65)):
            lam = round(rho * mu, 2)
            for T in Ts:
                pts = [thm53_point_of(T, regime, rho, s, o_max, M, seed) for seed in range(seeds)]
                raw += pts
                rows.append(thm53_row(pts, rho))
                print(f"thm53 M = {M} {regime} T = {T}: {rows[-1]['regret ≥ AEL − UB/n']}", flush=True)
            sel = [p for p in raw if p["regime"] == regime and p["M"] == M]
            fits[f"M={M} {regime}"] = {"lo": _slope([p["T"] for p in sel], [p["regret_lo"] for p in sel]),
                                       "hi": _slope([p["T"] for p in sel], [p["regret_hi"] for p in sel]),
                                       "lam": lam, "mu_E": mu}
    return rows, raw, fits


def _slope(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope of ``ys`` on ``xs`` and its standard error."""
    n = len(xs)
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    resid = sum((y - my - b * (x - mx)) ** 2 for x, y in zip(xs, ys))
    return b, math.sqrt(resid / (n - 2) / sxx) if n > 2 else float("nan")


def thm53_figure(raw: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted({(p["M"], p["regime"]) for p in raw}, key=lambda k: (k[0], k[1] != "stable"))
    fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 4.0), squeeze=False)
    for ax, (M, regime) in zip(axes[0], keys):
        sel = [p for p in raw if p["M"] == M and p["regime"] == regime]
        Ts = sorted({p["T"] for p in sel})
        lo = [statistics.mean(p["regret_lo"] for p in sel if p["T"] == T) for T in Ts]
        hi = [statistics.mean(p["regret_hi"] for p in sel if p["T"] == T) for T in Ts]
        ax.fill_between(Ts, lo, hi, alpha=0.25, label="AEL − OPT/n lies here (mean)")
        ax.plot(Ts, lo, "o-", label="AEL − UB/n (lower side)")
        ax.plot(Ts, hi, "s--", label="AEL − LB/n (upper side)")
        ax.scatter([p["T"] for p in sel], [p["regret_lo"] for p in sel], s=8, color="k", alpha=0.5)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("T (periods)")
        ax.set_title(f"{regime}, M = {M}")
        ax.set_ylabel("per-request latency gap (steps)")
        ax.legend(fontsize=7)
    fig.suptitle("J0 Thm 5.3: MC-SF's regret bracketed by certified bounds")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- NOTES ------------------------------------------------------------------------------------


def _notes62(raw: list[dict[str, Any]], closed: list[dict[str, Any]], ip: list[dict[str, Any]]) -> list[str]:
    lines = ["## J0 Theorem 6.2: no deterministic algorithm has a constant competitive ratio", "",
             "**Paper** (J0 §6, L349–393). `s = εM`; one request `o = (1−ε)M` at 0, started by the algorithm at `t'`; "
             "`εM` requests `o = 1` at `t' + (1−2ε)M`. `TEL(A_1) ≥ (ε³/2+ε²)M² + (1−ε/2)M` (continue), "
             "`TEL(A_2) ≥ ε²M²/2 + (2−ε/2)M` (interrupt), `OPT ≤ TEL(A_3) = (ε³/2)M² + (2−3ε/2)M`, hence "
             "`CR ≥ min{2/ε, 1/ε} = 1/ε` \"when M is large enough\".", "",
             "**Measured** (`thm62.md`, `thm62.png`). Each policy on its own instance (`t'` from running it on the "
             "first request alone); every TEL verified by the checker; OPT exact by enumerating the long request's "
             "start (`thm62_opt`, proof in its docstring; equal to exhaustive search on 9 small instances in "
             "`tests/papers/test_j0_theory.py`, and to the hindsight IP, status "
             + ", ".join(sorted({r["pipeline status"] for r in ip})) + ", at "
             + ", ".join(f"ε = {r['ε']}, M = {r['M']}" for r in ip) + ").", ""]
    for eps in dict.fromkeys(r["ε"] for r in raw):
        mc = [r for r in raw if r["ε"] == eps and r["policy"] == "mc-sf"]
        ps = [r for r in raw if r["ε"] == eps and r["policy"] == "preempt-shortest-first"]
        first = next((r["M"] for r in mc if r["TEL/OPT"] >= r["1/ε"]), None)
        lines.append(f"* ε = {eps} (1/ε = {mc[0]['1/ε']:.3g}, DESIGN limit 2m+1 = {mc[0]['limit']}): MC-SF TEL/OPT "
                     + ", ".join(f"{r['TEL/OPT']:.3f} (M = {r['M']})" for r in mc)
                     + f"; first M with TEL/OPT ≥ 1/ε: {first if first is not None else 'none measured'}. "
                     f"preempt-shortest-first: {min(r['TEL/OPT'] for r in ps):.3f}–"
                     f"{max(r['TEL/OPT'] for r in ps):.3f}.")
    same = all(r["TEL"] == next(q["TEL"] for q in raw if q["ε"] == r["ε"] and q["M"] == r["M"]
                                and q["policy"] == "mc-sf") for r in raw if r["policy"] == "fcfs")
    a1_ok = sum(r["A1 (paper, ≤ TEL)"] <= r["MC-SF TEL"] for r in closed)
    cf_ok = sum(r["closed form (DESIGN)"] == r["MC-SF TEL"] for r in closed)
    a3_bad = [r for r in closed if r["OPT ≤ A3 (paper)"] == "NO"]
    alpha = [r for r in raw if r["policy"].startswith("alpha-protection")]
    psf = [r for r in raw if r["policy"] == "preempt-shortest-first"]
    alpha_diff = [r for r in alpha if r["TEL"] != next(q["TEL"] for q in raw if q["ε"] == r["ε"] and q["M"] == r["M"]
                                                      and q["policy"] == "mc-sf")]
    firsts = {eps: next((r["M"] for r in raw if r["ε"] == eps and r["policy"] == "mc-sf" and r["TEL/OPT"] >= r["1/ε"]),
                        None) for eps in dict.fromkeys(r["ε"] for r in raw)}
    lines += ["", f"FCFS = MC-SF on every instance: {'yes' if same else 'no'}; α-protection (α = 0.1) evicts "
              f"{sum(r['evictions'] for r in alpha)} times in all and differs from MC-SF on {len(alpha_diff)}/"
              f"{len(alpha)} instances (M ≤ {max((r['M'] for r in alpha_diff), default=0)}). Closed forms: J0's A_1 "
              "≤ MC-SF's TEL on "
              f"{a1_ok}/{len(closed)} instances; the exact DESIGN closed form (`thm62_mcsf_tel`) equals the simulation "
              f"on {cf_ok}/{len(closed)}; the printed `OPT ≤ TEL(A_3)` fails on {len(a3_bad)}/{len(closed)} (e.g. "
              + ", ".join(f"ε = {r['ε']}, M = {r['M']}: OPT {r['OPT']} > {r['A3 (paper, ≥ OPT?)']:.0f}"
                          for r in a3_bad[:3]) + ").", "",
              "**Verdict.** *Reproduced* for algorithms that keep the long request running (MC-SF, FCFS, "
              "α-protection here): TEL/OPT exceeds 1/ε once M is large enough, and keeps rising. Differences, each "
              "with its measured cause: (1) the ratio tends to `2m+1` with `m = ⌈1/ε⌉ − 1` (= 2/ε − 1 for ε = 1/k), "
              "not `1 + 2/ε`, and the printed `OPT ≤ TEL(A_3)` fails, mostly at large M — under DESIGN §1 a unit "
              "request peaks at `εM + 1`, so only `⌈1/ε⌉ − 1` of them fit at once, where the proof packs `1/ε`; "
              "the printed A_3 also drops the `ε²M` term of its own middle step; (2) *not reproduced* for an "
              "algorithm that evicts: preempt-shortest-first (evict the long request for the unit ones, restart it "
              f"after) has TEL = OPT on {sum(r['TEL/OPT'] == 1 for r in psf)}/{len(psf)} instances and TEL/OPT ≤ "
              f"{max(r['TEL/OPT'] for r in psf):.3f} on all — J0's `A_2` keeps the interrupted request's cache (a "
              "pause), while DESIGN's eviction discards it and latency counts to the final completion, so "
              "interrupting early costs nothing here. This does not refute the theorem (another adversary may "
              "defeat eviction), but the family proves it only for algorithms that do not evict; (3) \"M large "
              "enough\" is large: the `O(M)` terms dominate until `ε³M² ≫ M`: the first M measured with "
              "TEL/OPT ≥ 1/ε is "
              + ", ".join(f"{M} (ε = {eps})" for eps, M in firsts.items()) + ".", ""]
    return lines


def _notes43(rows: list[dict[str, Any]], raw: list[dict[str, Any]]) -> list[str]:
    lines = ["## J Theorem 4.3: MC-SF is O(1)-competitive (all at 0, identical prompts, M ≥ 2·max(s+o))", "",
             "**Paper** (J §4 L168–308). O(1), with `MC-SF ≤ (1536/M)X + 24Y` (Lemma 4.4) and `OPT ≥ X/(6M) + Y/6` "
             "(Lemma 4.7), i.e. a constant ≤ 9216; ≤ 4 for identical outputs too.", "",
             "**Measured** (`thm43.md`). `M = 2(s + o_max)`, the smallest the theorem allows. *MC-SF / bound is a "
             "ratio against a certified lower bound* (best of energy, lp-colgen, zone-lp for n ≤ 40, and the IP's "
             "MIP bound where it ran), so it is at least the true TEL/OPT; MC-SF / best schedule is at most it.", ""]
    for key in dict.fromkeys((p["dist"], p["s"], p["o_max"]) for p in raw):
        sel = [p for p in raw if (p["dist"], p["s"], p["o_max"]) == key]
        ns = sorted({p["n"] for p in sel})

        def mean_at(n: int, field: str, sel: list[dict[str, Any]] = sel) -> float:
            return statistics.mean(p[field] for p in sel if p["n"] == n)

        proven = [p for p in sel if p["opt"] is not None]
        lines.append(f"* outputs {key[0]} 1..{key[2]}, s = {key[1]}: MC-SF / bound (mean) "
                     + ", ".join(f"{mean_at(n, 'ratio_vs_bound'):.3f} (n = {n})" for n in ns)
                     + f"; max {max(p['ratio_vs_bound'] for p in sel):.3f}. MC-SF / best schedule at n = {ns[-1]}: "
                     f"{mean_at(ns[-1], 'ratio_vs_best'):.3f}. MC-SF / OPT where the IP proved OPT ({len(proven)} "
                     f"instances, n ≤ {max((p['n'] for p in proven), default=0)}): "
                     + (f"{min(p['ratio_vs_opt'] for p in proven):.3f}–{max(p['ratio_vs_opt'] for p in proven):.3f}"
                        if proven else "—")
                     + f". Change of MC-SF / bound between the two largest n: "
                       f"{mean_at(ns[-1], 'ratio_vs_bound') - mean_at(ns[-2], 'ratio_vs_bound'):+.3f}.")
    keys = list(dict.fromkeys((p["dist"], p["s"], p["o_max"]) for p in raw))
    ns_all = sorted({p["n"] for p in raw})

    def mean_ratio(key: tuple[str, int, int], n: int) -> float:
        return statistics.mean(p["ratio_vs_bound"] for p in raw if (p["dist"], p["s"], p["o_max"]) == key
                               and p["n"] == n)

    drift = max(abs(mean_ratio(k, ns_all[-1]) - mean_ratio(k, ns_all[-2])) for k in keys)
    worst = max(p["ratio_vs_bound"] for p in raw)
    best_gain = max(p["ratio_vs_best"] for p in raw) - 1
    l44 = all(p["mcsf"] <= p["lemma44"] for p in raw)
    l47 = [p["lemma47"] / p["bound"] for p in raw]
    lines += ["", f"Lemma 4.4 holds on every instance: {'yes' if l44 else 'NO'}; Lemma 4.7's bound is "
              f"{min(l47):.2f}–{max(l47):.2f} of the certified bound (valid, loose). The IP (n ≤ 20) stops after "
              f"{IP_NODES:,} branch-and-bound nodes (HiGHS, one thread, no clock), so every row is the same on any "
              "machine and under any load; `node_limit` in `thm43.md` marks an IP stopped there before proving OPT "
              "(with its gap), and every proven OPT's schedule is stored in `rows.json` (`opt_starts`) for the "
              "checker to re-verify.", "",
              ("**Verdict.** *Reproduced* as far as an experiment can: the ratio against the certified bound levels "
               f"off as n grows (it moves by at most {drift:.3f} between n = {ns_all[-2]} and {ns_all[-1]}; an "
               f"experiment cannot prove a constant, but shows no growth over a {ns_all[-1] // ns_all[0]}× range of "
               f"n), with a largest value of {worst:.3f}, far below the proven 9216." if drift < 0.05 else
               f"**Verdict.** *Not settled*: the ratio against the certified bound still moves by {drift:.3f} between "
               f"n = {ns_all[-2]} and {ns_all[-1]} (largest {worst:.3f}); larger n would be needed.")
              + f" The ratio is not 1: the best schedule found beats MC-SF by up to {best_gain:.0%} (with two output "
              "lengths, co-running long and short requests packs memory better than shortest-first), and part of the "
              "remaining ratio is the bound's own gap (the IP closes only the smallest instances).", ""]
    return lines


def _notes53(rows: list[dict[str, Any]], raw: list[dict[str, Any]], fits: dict[str, Any]) -> list[str]:
    lines = ["## J0 Theorem 5.3: constant regret of Algorithm 2 (= MC-SF) under stochastic arrivals", "",
             "**Paper** (J0 §5, L178–338; App. L701). Periods `t = 1..T`; arrivals per period i.i.d. from `D` with "
             "support `[0, B]`, mean λ; outputs i.i.d. from F, known on arrival; one prompt size s. "
             "`Regret = E[AEL(A) − OPT/n] ≤ C` independent of T, whether λ is below (stable) or above (overloaded) "
             "the processing rate μ*; no numeric C.", "",
             "**Our reading.** `D = Binomial(B, λ/B)`, `F = U{1..o_max}`, identical s; latency counted to completion "
             "(requests left at T are served after it; J0's `L_t` \"from round t to round T\" leaves this open). "
             "Regimes set by `μ_E = M / E[s·o + o(o+1)/2]`, a rate no schedule exceeds (energy argument): ρ = λ/μ_E = "
             "0.55 (stable for MC-SF: its backlog at T stays near 0) and 1.65 (overloaded for every schedule). "
             "J0 (§3, L100) takes each prompt negligible against the memory, `s/M = ε → 0`; here s/M = 2/24 ≈ 0.083 "
             "(`large-thm53/` adds M = 96, s/M ≈ 0.021). "
             f"The IP (n ≤ 30) stops after {IP_NODES:,} branch-and-bound nodes, not at a time limit, so every row "
             "is the same on any machine (`node_limit`: stopped before proving OPT). "
             "The expectation is estimated by the mean over seeds; each instance's `AEL − OPT/n` is bracketed by "
             "`AEL − UB/n` (UB: best verified schedule) and `AEL − LB/n` (LB: best certified bound).", "",
             "**Measured** (`thm53.md`, `thm53.png`).", ""]
    verdicts = []
    for key, fit in fits.items():
        sel = [p for p in raw if f"M={p['M']} {p['regime']}" == key]
        Ts = sorted({p["T"] for p in sel})

        def m(T: int, field: str, sel: list[dict[str, Any]] = sel) -> float:
            return statistics.mean(p[field] for p in sel if p["T"] == T)

        lo, hi = fit["lo"], fit["hi"]
        lines.append(f"* {key} (λ = {fit['lam']}): mean `AEL − UB/n` "
                     + ", ".join(f"{m(T, 'regret_lo'):.2f}" for T in Ts) + " and `AEL − LB/n` "
                     + ", ".join(f"{m(T, 'regret_hi'):.2f}" for T in Ts) + f" for T = {', '.join(map(str, Ts))}; "
                     f"slopes per 100 periods {100 * lo[0]:.2f} ± {100 * lo[1]:.2f} (lower side) and "
                     f"{100 * hi[0]:.2f} ± {100 * hi[1]:.2f} (upper side); LB/UB at T = {Ts[-1]}: "
                     f"{m(Ts[-1], 'lb_n') / m(Ts[-1], 'ub_n'):.2f}; makespan MC-SF / best schedule "
                     f"{statistics.mean(p['makespan_mcsf'] / p['makespan_ub'] for p in sel):.3f}.")
        if "stable" in key and lo[0] <= 2 * lo[1]:
            verdicts.append(f"{key}: *reproduced* — the lower side stays flat (slope within two standard errors of "
                            f"0) and the upper side ≤ {max(m(T, 'regret_hi') for T in Ts):.2f} at every T while AEL "
                            f"stays ≈ {m(Ts[-1], 'ael'):.1f}; the upper side creeps up only as the certified bound "
                            "loosens with n. In a stable system AEL itself is O(1), so this is the easy half.")
        elif lo[0] > 2 * lo[1]:
            verdicts.append(f"{key}: *not reproduced at these sizes* — the lower side, a measured lower bound on the "
                            f"regret, grows with T ({100 * lo[0]:.2f} ± {100 * lo[1]:.2f} per 100 periods). Measured "
                            "cause: the best schedule found finishes the same work earlier than MC-SF (makespan ratio "
                            "above), i.e. MC-SF's shortest-first prefix packs the KV cache less fully, and every "
                            "request that waits in a backlog pays for the lower throughput. Whether it levels off "
                            f"beyond T = {Ts[-1]} is open; the upper side grows like T because the certified bound is "
                            "loose.")
        else:
            verdicts.append(f"{key}: *inconclusive* — the lower side rises from {m(Ts[0], 'regret_lo'):.2f} to "
                            f"{m(Ts[-1], 'regret_lo'):.2f} but its slope ({100 * lo[0]:.2f} ± {100 * lo[1]:.2f} "
                            "per 100 periods) is within two standard errors of 0, and the upper side grows like T "
                            "because the certified bound is well below the best schedule (LB/UB above): the bracket "
                            "can neither confirm nor refute a constant C at these sizes (`--large`: longer T, more "
                            "seeds).")
    lines += ["", "**Verdict.**", ""] + [f"* {v}" for v in verdicts] + [
        "", "Longer horizons and a larger M: `llmopt study run j0-theory --large --only thm53 --seeds 0-4 --out "
        "results/jaillet/j0-theory/large-thm53` (T up to 800, M = 24 and 96).", ""]
    return lines


def notes(dump: dict[str, Any]) -> str:
    """README.md from the measured rows: per theorem the claim, the numbers and the verdict."""
    command = dump.get("command") or " ".join(["llmopt study run j0-theory", dump["argv"]]).strip()
    lines = ["# J0's theory, measured (issue 24, part 5)", "",
             f"`{command}` ({dump['seeds']} seeds per point "
             "where random; seconds per part: " + ", ".join(f"{k} {v:.0f}" for k, v in dump["seconds"].items())
             + "). Code: `llmopt/papers/jaillet/theory.py`; tests: `tests/papers/test_j0_theory.py`. Every schedule is "
             "verified by the independent checker; every bound is certified; a ratio against a bound says so.", ""]
    if "thm62" in dump:
        lines += _notes62(dump["thm62"], dump["thm62_closed"], dump["thm62_ip"])
    if "thm43" in dump:
        lines += _notes43(dump["thm43"], dump["thm43_raw"])
    if "thm53" in dump:
        lines += _notes53(dump["thm53"], dump["thm53_raw"], dump["thm53_fits"])
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: ``--out DIR``, ``--large``, ``--seeds N``, ``--only thm62,thm43,thm53``."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="output folder")
    ap.add_argument("--large", action="store_true", help="larger sizes and more seeds (tens of minutes)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per point (default 3 quick, 8 large)")
    ap.add_argument("--only", default="thm62,thm43,thm53", help="comma-separated subset of thm62,thm43,thm53")
    ap.add_argument("--command", default="", help="the command line to quote in README.md")
    args = ap.parse_args(argv)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    seeds = args.seeds or (8 if args.large else 3)
    only = set(args.only.split(","))
    dump: dict[str, Any] = {"large": args.large, "seeds": seeds, "argv": "", "command": args.command}
    took: dict[str, float] = {}
    if "thm62" in only:
        t0 = time.perf_counter()
        raw62, ratios62, closed62 = thm62_rows(args.large)
        ip62 = thm62_ip_rows(args.large)
        (out / "thm62.md").write_text(
            "# J0 Thm 6.2: the adversarial family\n\nEach policy on its own instance (t' = its start of the first "
            "request alone); TEL verified by the checker; OPT exact (enumeration of the long request's start, "
            "`thm62_opt`).\n\n" + _md(ratios62)
            + "\n## Closed forms (MC-SF's instance, t' = 0)\n\n" + _md(closed62)
            + "\n## Exact OPT cross-checked by the hindsight pipeline (MC-SF instances, enumeration schedule as a "
            "warm start)\n\n" + _md(ip62), encoding="utf-8")
        thm62_figure(raw62, out / "thm62.png")
        dump |= {"thm62": raw62, "thm62_closed": closed62, "thm62_ip": ip62}
        took["thm62"] = time.perf_counter() - t0
    if "thm43" in only:
        t0 = time.perf_counter()
        rows43, raw43 = thm43_rows(args.large, seeds)
        (out / "thm43.md").write_text("# J Thm 4.3: MC-SF on all-at-0, identical-prompt instances\n\n"
                                      + _md(rows43), encoding="utf-8")
        dump |= {"thm43": rows43, "thm43_raw": raw43}
        took["thm43"] = time.perf_counter() - t0
    if "thm53" in only:
        t0 = time.perf_counter()
        rows53, raw53, fits = thm53_rows(args.large, seeds)
        (out / "thm53.md").write_text("# J0 Thm 5.3: regret of MC-SF, bracketed\n\n" + _md(rows53)
                                      + "\n## Least-squares slope in T (per 100 periods, ± standard error)\n\n"
                                      + _md([{"setting": k, "λ": v["lam"], "μ_E": round(v["mu_E"], 3),
                                              "AEL − UB/n": f"{100 * v['lo'][0]:.2f} ± {100 * v['lo'][1]:.2f}",
                                              "AEL − LB/n": f"{100 * v['hi'][0]:.2f} ± {100 * v['hi'][1]:.2f}"}
                                             for k, v in fits.items()]), encoding="utf-8")
        thm53_figure(raw53, out / "thm53.png")
        dump |= {"thm53": rows53, "thm53_raw": raw53, "thm53_fits": fits}
        took["thm53"] = time.perf_counter() - t0
    dump["seconds"] = took
    (out / "rows.json").write_text(json.dumps(dump, indent=1, default=str), encoding="utf-8")
    (out / "README.md").write_text(notes(dump), encoding="utf-8")
    print("seconds:", {k: round(v, 1) for k, v in took.items()})


OPTIONS = {"large": "larger sizes and more seeds (tens of minutes)",
           "only": "comma-separated subset of thm62,thm43,thm53 (default all; quick thm62)"}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write the tables, figures, ``rows.json`` and ``README.md`` into ``out``; ``seeds`` must be ``0 … N−1``
    (default 3, 8 with ``large``); returns the files written."""
    argv = ["--out", str(out), "--command",
            study_command("j0-theory", out, quick=quick, seeds=seeds, options=options)]
    if seeds is not None:
        if list(seeds) != list(range(len(seeds))):
            raise StudyError("j0-theory runs seeds 0 … N−1: give --seeds 0-N")
        argv += ["--seeds", str(len(seeds))]
    opts = ({"only": "thm62"} if quick else {}) | dict(options)
    return run_main(main, out, [*argv, *options_argv(opts)])


def report(out: Path) -> list[str]:
    """Re-render ``README.md`` from ``out/rows.json``; returns it."""
    dump = json.loads((Path(out) / "rows.json").read_text(encoding="utf-8"))
    (Path(out) / "README.md").write_text(notes(dump), encoding="utf-8")
    return [str(Path(out) / "README.md")]
