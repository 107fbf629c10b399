"""Every claim of Jaillet et al. (J: §5, Table 1, Figure 3) and of its earlier version (J0: §8.2 and the
theorems) with its verdict, its number(s) read from the committed results, and its evidence (rendered into README.md
by ``llmopt.papers.printed``, blocks ``j-verdicts`` and ``j0-verdicts``).

Rows that read another study's files (``results/jaillet/capacity``, ``results/jaillet/fig3``,
``results/jaillet/j0-theory``) change when that study is re-run; the printed check then names the row's block.
"""

from __future__ import annotations

import json
from typing import Any

from llmopt.papers.printing import RESULTS, csv_rows, md_table_rows, num
from llmopt.papers.printing import row as one_row
from llmopt.papers.verdicts import Claim, Evidence

SYNTHETIC = Evidence("results/jaillet/synthetic/summary.csv", "llmopt bench run jaillet-synthetic")
TABLE1 = Evidence("results/jaillet/table1/summary.csv", "llmopt bench run jaillet-table1")
TABLE1_COST = Evidence("results/jaillet/table1/cost_sensitivity.md",
                       "llmopt study run table1-cost-sensitivity --out results/jaillet/table1 --seeds 0-49")
LOW_DEMAND = Evidence("results/jaillet/lmsys/low_demand_threshold.md",
                      "llmopt study run low-demand-threshold --out results/jaillet/lmsys")
FIG3 = Evidence("results/jaillet/fig3/figure3_slopes.csv", "llmopt bench run jaillet-fig3")
FIG3_CAP = Evidence("results/jaillet/fig3/figure3_cap.csv", "llmopt bench run jaillet-fig3")
FIG3_COST = Evidence("results/jaillet/fig3/cost_sensitivity.md",
                     "llmopt study run fig3-cost-sensitivity --out results/jaillet/fig3")
CAPACITY = Evidence("results/jaillet/capacity/summary.csv", "llmopt bench run jaillet-capacity")
CAPACITY_QUEUE = Evidence("results/jaillet/capacity/queue_by_k.csv", "llmopt bench run jaillet-capacity")
J0_THEORY = Evidence("results/jaillet/j0-theory/rows.json",
                     "llmopt study run j0-theory --out results/jaillet/j0-theory")
J0_LARGE = Evidence("results/jaillet/j0-theory/large-thm53/rows.json",
                    "llmopt study run j0-theory --out results/jaillet/j0-theory/large-thm53")
JOINT_FIT = Evidence("results/jaillet/cost-model/joint_fit.csv",
                     "llmopt study run cost-model-joint-fit --out results/jaillet/cost-model")


def _none() -> str:
    return "—"


# ---------------------------------------------------------------------------------------------------------------
# J §5.1 and Table 1


def _am(w: int) -> dict[str, str]:
    return one_row("jaillet/synthetic/summary.csv", workload=f"jaillet-am{w}")


def synthetic(w: int) -> str:
    """J §5.1 on arrival model ``w``: MC-SF ÷ the best schedule found (a lower bound on MC-SF ÷ OPT) beside the
    paper's MC-SF ÷ OPT, and the trials where MC-SF is provably not optimal."""
    r = _am(w)
    paper = f"{num(r['paper_mean']):.3f}"
    not_opt = f"{r['reference_worse_than_found']} / {r['trials']}"
    if r["paper_exact"]:
        not_opt += f" (paper {int(r['paper_trials']) - int(r['paper_exact'])} / {r['paper_trials']})"
    return (f"MC-SF ÷ best found ≥ {num(r['ratio_vs_incumbent_mean']):.3f} (paper ÷ OPT {paper}); provably not "
            f"optimal {not_opt}")


def _t1(policy: str) -> dict[str, str]:
    return one_row("jaillet/table1/summary.csv", workload="lmsys n=1000 λ=50", policy=policy)


def table1_order() -> str:
    """Table 1: MC-Benchmark ÷ MC-SF and the worst benchmark ÷ MC-SF, ours and the paper's."""
    r = _t1("mc-benchmark")
    return (f"MC-Benchmark ÷ MC-SF {num(r['ratio_to_reference']):.3f} (paper "
            f"{num(r['paper_ratio_to_reference']):.3f}); MC-SF {num(_t1('mc-sf')['latency_mean']):.1f} s (paper "
            f"{num(_t1('mc-sf')['paper_mean']):.1f} s)")


def table1_gap_share() -> str:
    """The share of the MC-Benchmark ÷ MC-SF gap that the released code's batch-time formula closes."""
    rows = {c[0]: c for c in md_table_rows("jaillet/table1/cost_sensitivity.md", "released code") if len(c) == 11}
    c = rows["released code"]
    return f"released batch-time formula: {c[3]}, share of the gap {c[5]}"


def table1_loops() -> str:
    """Table 1's runs stopped by the loop guard (α-greedy), and the smallest loop-free α on 10,000 requests, ours
    and with the released admission rule (B = 136)."""
    loops = [f"α = {a}: {_t1(f'alpha-protection:alpha={a}')['loops']}/{_t1(f'alpha-protection:alpha={a}')['trials']}"
             for a in ("0.3", "0.25")]
    rows = {c[0]: c for c in md_table_rows("jaillet/lmsys/low_demand_threshold.md", "") if len(c) == 5}

    def span(cell: str) -> str:  # "0.09 / 0.10 / 0.12" (one per seed) -> "0.09–0.12"
        seeds = cell.split(" / ")
        return seeds[0] if len(set(seeds)) == 1 else f"{min(seeds)}–{max(seeds)}"

    ours, released = rows["ours"], rows["released admission, B = 136"]
    return (f"loops {', '.join(loops)} (paper none); loop-free α at λ = 10 / λ = 50 (seeds 0–2): ours "
            f"{span(ours[2])} / {span(ours[3])}, released admission B = 136: {span(released[2])} / "
            f"{span(released[3])} (paper 0.24 / 0.21)")


# ---------------------------------------------------------------------------------------------------------------
# J Figure 3


def _fig3_slopes(rate: int, policy: str) -> dict[int, float]:
    return {int(r["seed"]): num(r["slope"]) for r in csv_rows("jaillet/fig3/figure3_slopes.csv")
            if int(r["rate"]) == rate and r["policy"] == policy and r["slope"].strip()}


def fig3_ratio(rate: int, policy: str = "mc-benchmark") -> float:
    """Mean slope of ``policy`` ÷ MC-SF's mean slope over the seeds both were fitted on."""
    mine, ref = _fig3_slopes(rate, policy), _fig3_slopes(rate, "mc-sf")
    seeds = sorted(set(mine) & set(ref))
    return sum(mine[s] for s in seeds) / sum(ref[s] for s in seeds)


def fig3_linear() -> str:
    """R² of MC-SF's latency-vs-volume line at λ = 50 (range over seeds)."""
    r2 = [num(r["r2"]) for r in csv_rows("jaillet/fig3/figure3_slopes.csv")
          if int(r["rate"]) == 50 and r["policy"] == "mc-sf" and r["r2"].strip()]
    return f"MC-SF at λ = 50: R² {min(r2):.3f}–{max(r2):.3f} over seeds"


def _cost_section(rate: int) -> dict[str, list[str]]:
    text = (RESULTS / "jaillet/fig3/cost_sensitivity.md").read_text(encoding="utf-8")
    part = text.split(f"## λ = {rate} ", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in part.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


def fig3_ratio_50() -> str:
    """Figure 3 at λ = 50: our best-benchmark ratio, and the one setting tested that reaches the paper's 3× beside
    what the same setting gives at λ = 10."""
    s50 = next(c for k, c in _cost_section(50).items() if k.startswith("constant") and k.endswith("thinned"))
    s10 = next(c for k, c in _cost_section(10).items() if k.startswith("constant") and k.endswith("thinned"))
    const = [r for r in csv_rows("jaillet/cost-model/joint_fit.csv") if r["sample"] == "thinned"
             and num(r["scale"]) == 0]
    near = min(const, key=lambda r: abs(num(r["fig3_50"]) - 3))
    return (f"MC-Benchmark ÷ MC-SF {fig3_ratio(50):.2f} (paper 3); constant batch time + thinned outputs: {s50[2]} "
            f"at λ = 50 but {s10[2]} at λ = 10 (paper 8); in the joint fit, constant {1e3 * num(near['base']):.0f} ms "
            f"+ thinned: {num(near['fig3_50']):.2f} at λ = 50, {num(near['fig3_10']):.2f} at λ = 10, Table 1 MC-SF "
            f"{num(near['t1_mcsf']):.1f} s (paper 32.1 s)")


def fig3_ratio_10() -> str:
    """Figure 3 at λ = 10: our ratio, and its range over the batch-time models and output samples tested."""
    vals = [float(c[2]) for c in _cost_section(10).values() if c[0] != "setting"]
    return f"MC-Benchmark ÷ MC-SF {fig3_ratio(10):.2f} (paper 8); {min(vals):.2f}–{max(vals):.2f} across the settings"


def joint_fit() -> str:
    """The joint grid fit of the batch-time model (``results/jaillet/cost-model/joint_fit.csv``): the best setting's
    residuals per paper number, and how many settings bring every residual within ±25 %."""
    rows = csv_rows("jaillet/cost-model/joint_fit.csv")
    best = min(rows, key=lambda r: num(r["objective"]))
    keys = ("t1_mcsf", "t1_mcb", "fig3_50", "fig3_10", "cap")
    good = sum(1 for r in rows if all(abs(num(r[f"r_{k}"])) <= 0.25 for k in keys))
    res = ", ".join(f"{num(best[f'r_{k}']):+.2f}" for k in keys).replace("-", "−")
    return (f"best of {len(rows)} settings ({best['sample']}, base' {1e3 * num(best['base']):.0f} ms, κ = "
            f"{num(best['scale']):g}): residuals {res} (Table 1 MC-SF, MC-Benchmark, Fig. 3 λ = 50, λ = 10, cap); "
            f"{good} of {len(rows)} within ±25 % on all five")


def fig3_cap() -> str:
    """J0 §8.2 / Figure 3: the largest volume at which MC-SF's mean latency stays under 200 s at λ = 50."""
    r = one_row("jaillet/fig3/figure3_cap.csv", rate="50", policy="mc-sf")
    return f"MC-SF under 200 s up to {int(r['within_cap_up_to']):,} requests (J0: 10,000)"


# ---------------------------------------------------------------------------------------------------------------
# J0


def capacity_workers() -> str:
    """J0 §8.2: workers needed at λ = 50 (every algorithm and router, every seed), and MC-SF's queue at K = 2."""
    rows = [r for r in csv_rows("jaillet/capacity/summary.csv") if "λ=50" in r["workload"]]
    lo, hi = min(int(r["workers_min"]) for r in rows), max(int(r["workers_max"]) for r in rows)
    q = one_row("jaillet/capacity/queue_by_k.csv", setting="K = 2", policy="mc-sf")
    need = f"{lo}" if lo == hi else f"{lo}–{hi}"
    return (f"{need} workers for all {len(rows)} algorithm × router pairs; MC-SF at K = 2: waiting "
            f"{int(q['waiting_half_window']):,} at {num(q['t_half_s']):g} s → {int(q['waiting_end_window']):,} at "
            f"{num(q['t_end_s']):g} s")


def _rows(evidence: Evidence) -> dict[str, Any]:
    with (RESULTS.parent / evidence.path).open(encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def thm62() -> str:
    """J0 Thm 6.2: per ε, the smallest M at which MC-SF ÷ exact OPT passes 1/ε on the adversarial family."""
    rows = [r for r in _rows(J0_THEORY)["thm62"] if r["policy"] == "mc-sf"]
    parts = []
    for eps in dict.fromkeys(r["ε"] for r in rows):
        mine = sorted((r["M"], r["TEL/OPT"], r["1/ε"]) for r in rows if r["ε"] == eps)
        past = [m for m, ratio, inv in mine if ratio > inv]
        parts.append(f"ε = {eps}: M ≥ {past[0]:,}" if past else f"ε = {eps}: not up to M = {mine[-1][0]:,}")
    return "MC-SF ÷ OPT > 1/ε from " + "; ".join(parts)


def thm43() -> str:
    """J0 Thm 4.3: MC-SF ÷ certified bound (max over seeds) at the largest n, per output distribution."""
    rows = _rows(J0_THEORY)["thm43"]
    n_max = max(r["n"] for r in rows)
    worst = max(float(r["MC-SF / bound (mean, max)"].split(",")[1]) for r in rows)
    at_max = [float(r["MC-SF / bound (mean, max)"].split(",")[1]) for r in rows if r["n"] == n_max]
    return f"MC-SF ÷ certified bound ≤ {worst:.2f} for n ≤ {n_max}; at n = {n_max}: " + \
        " / ".join(f"{v:.2f}" for v in at_max)


def thm53() -> str:
    """J0 Thm 5.3: the slope of the proven lower bound on the regret per 100 periods, per s/M and regime."""
    fits = _rows(J0_LARGE)["thm53_fits"]
    parts = [f"{key.replace('M=', 's/M = 2/')}: {100 * fit['lo'][0]:.2f}" for key, fit in fits.items()]
    return "growth of the proven regret lower bound per 100 periods (fitted slope): " + "; ".join(parts)


#: J's claims (Jaillet et al., §5), in the order the README prints them
J_CLAIMS: tuple[Claim, ...] = (
    Claim("§5.1 AM1: MC-SF near-optimal (mean ratio 1.005)", "not reproduced — unexplained",
          "a better verified schedule exists in every trial; no cause tested", lambda: synthetic(1), (SYNTHETIC,),
          ("jaillet/synthetic",)),
    Claim("§5.1 AM2: MC-SF near-optimal (mean ratio 1.047)", "reproduced", "consistent (our lower bound is below "
          "the paper's ratio; no trial proven optimal)", lambda: synthetic(2), (SYNTHETIC,),
          ("jaillet/synthetic",)),
    Claim("Table 1: MC-SF best, MC-Benchmark second, α/β behind", "reproduced", "the ordering", table1_order,
          (TABLE1,)),
    Claim("Table 1: the size of MC-SF's lead", "not reproduced — unexplained",
          "our benchmarks are closer to MC-SF; the one cause tested (the released code's batch-time formula) "
          "closes part of the gap, the rest is unexplained", table1_gap_share, (TABLE1, TABLE1_COST)),
    Claim("Table 1 / §5.2: α-greedy without eviction loops", "not reproduced — measured cause",
          "only the released code's admission rule (gate, then up to B waiting prompts) gives the paper's "
          "loop-free α at both rates", table1_loops, (TABLE1, LOW_DEMAND)),
    Claim("Figure 3: latency linear in volume at λ = 50", "reproduced", "", fig3_linear, (FIG3,)),
    Claim("Figure 3: best benchmark's slope ≈ 3× MC-SF's at λ = 50", "not reproduced — unexplained",
          "the one setting found that gives 3× (a constant batch time with thinned outputs) breaks the λ = 10 ratio "
          "and Table 1; no setting of the joint fit (last row) fits all these numbers", fig3_ratio_50,
          (FIG3, FIG3_COST, JOINT_FIT)),
    Claim("Figure 3: best benchmark's slope ≈ 8× MC-SF's at λ = 10", "not reproduced — unexplained",
          "near saturation the ratio depends on the batch-time model and the sample more than on the policies",
          fig3_ratio_10, (FIG3, FIG3_COST)),
    Claim("J0 §8.2 / Figure 3: MC-SF under 200 s up to 10,000 requests at λ = 50", "not reproduced — unexplained",
          "", fig3_cap, (FIG3_CAP,)),
    Claim("One batch-time model behind Table 1, Figure 3 at both rates and J0's cap", "not reproduced — unexplained",
          "a grid of d = base' + κ · (fitted − base) on the staged and the thinned sample, scored on all five "
          "numbers at once", joint_fit, (JOINT_FIT,)),
)

#: J0's claims (§8.2 and the theorems), in the order the README prints them
J0_CLAIMS: tuple[Claim, ...] = (
    Claim("§8.2: 8 GPUs (2 workers) serve λ = 50", "reproduced", "the number of workers; not the mechanism "
          "\"two are not overloaded\": at K = 2 the queue still grows through the arrival window", capacity_workers,
          (CAPACITY, CAPACITY_QUEUE)),
    Claim("Thm 6.2: MC-SF's ratio at least 1/ε on its adversarial family", "reproduced",
          "once M is large, against exact OPT (tending to 2m + 1, not 1 + 2/ε); an evicting policy defeats the family",
          thm62, (J0_THEORY,)),
    Claim("Thm 4.3: MC-SF's ratio is a constant", "not checkable",
          "an asymptotic bound; empirically flat against a certified bound, no measurement contradicts it", thm43,
          (J0_THEORY,)),
    Claim("Thm 5.3: constant regret", "not reproduced — measured cause",
          "holds in the stable regime; in the overloaded one a proven lower bound on the regret grows with T, "
          "less at s/M = 2/96 than at 2/24: J0 assumes s/M → 0 (two points measured, smaller s/M not run)", thm53,
          (J0_LARGE,)),
)
