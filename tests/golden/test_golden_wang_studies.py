"""Golden numbers of two W studies: ``results/wang/synthetic/lp_optima.{md,csv}`` (study ``wang-lp-optima``,
:mod:`llmopt.papers.wang.studies.lp_optima`) and ``results/wang/synthetic/claims.md`` (study ``wang-claims``,
:mod:`llmopt.papers.wang.studies.claims_measured`).

Each test recomputes a few committed numbers cheaply — the smallest instance, one row — and
compares them with the committed file (integers exactly, floats to 1e-9), plus a few values
hard-coded here where the folder's NOTES.md quotes them. A failure means a change moved a published
number: if intended, regenerate the file (its header gives the command) and update the values here.
"""

from __future__ import annotations

import statistics

import pytest
from golden_support import RESULTS, highs_by_nodes, markdown_row, same

LP_CSV = RESULTS / "wang" / "synthetic" / "lp_optima.csv"
CLAIMS = RESULTS / "wang" / "synthetic" / "claims.md"
#: Fields of an lp_optima.csv row that do not depend on the clock.
LP_FIELDS = ("n", "M", "T", "literal", "lp_value", "columns", "tied_mixed", "at_horizon", "rho_y_o", "rho_y_s",
             "rho_lp_o", "rho_lp_s", "rho_swap_o", "rho_swap_s", "tel_sorted_lp", "tel_lp_swap", "swap_vs_lp",
             "tel_sorted_f_swap", "tel_mc_sf", "spread_max", "spread_n", "spread_unique_max", "spread_unique_n")


def test_lp_optima_exponential_seed0_sum_o():
    """``lp_optima.csv``, Exponential seed 0 (n = 100, the cheapest instance), horizon ``sum-o``: every LP
    method (project, simplex vertices, interior points, face extremes, IPX on the whole LP) and both
    tie-breaks — Sorted-LP 1,182 from every optimum, LP-Swap 1,211 or 1,214, Sorted-F (Swap) 1,215."""
    from llmopt.papers.wang.studies import lp_optima as bench
    committed = [r for r in bench.read_rows(LP_CSV)
                 if r["dataset"] == "exponential" and r["seed"] == 0 and r["horizon"] == "sum-o"]
    assert len(committed) == 2 * 8
    from llmopt.workloads.wang import wang_synthetic

    new = bench.run_instance("exponential", 0, wang_synthetic(0, "exponential"), ["sum-o"], 8_000_000,
                             lambda msg: None)
    key = {(r["method"], r["tie"]): r for r in new}
    for old in committed:
        fresh = key[(old["method"], old["tie"])]
        diff = [f for f in LP_FIELDS if not (same(old[f], fresh[f]) or (old[f] != old[f] and fresh[f] != fresh[f]))]
        assert not diff, (old["method"], old["tie"], {f: (old[f], fresh[f]) for f in diff})
    assert {r["tel_sorted_lp"] for r in new} == {1182}
    assert {r["tel_lp_swap"] for r in new} == {1211, 1214}
    assert {r["tel_sorted_f_swap"] for r in new} == {1215}


def test_claims_ec1_row_m16():
    """``claims.md`` §1, row ``Y = M^1.25 = 32, M = 16``: MC-SF₂ 678, 𝒜 468, MC-SF 468, OPT 457 (proven),
    ratios 1.449 and 1.484."""
    from llmopt.opt.hindsight import solve_hindsight
    from llmopt.papers.wang.studies import claims_measured as bench
    from llmopt.papers.wang.theorem_ec1 import EC1Type2First, theorem_ec1_instance
    from llmopt.policies.base import MCSF, MCSF2
    row = markdown_row(CLAIMS, ("M^1.25 = 32", "16"))
    inst = theorem_ec1_instance(16)
    tels = [bench._verified_tel(inst, p) for p in (MCSF2(), EC1Type2First(), MCSF())]
    with highs_by_nodes() as solver:  # a node limit (31–100 needed), not a wall clock: the same on any machine
        opt = solve_hindsight(inst, solver=solver)
    assert str(opt.status) == "optimal"
    assert [f"{t:,}" for t in tels] + [f"{opt.opt:,}"] == row[3:7]
    assert [f"{tels[0] / tels[1]:.3f}", f"{tels[0] / opt.opt:.3f}"] == row[7:9] == ["1.449", "1.484"]


def test_claims_scaled_dp_synthetic_eps_025_and_counterexample():
    """``claims.md`` §2: the synthetic ε = 0.25 row (selections, raw infeasible, failures, worst ratio)
    recomputed from its instances, and the smallest counterexample with ε = 0.1 (n = 2, M = 11)."""
    from llmopt.papers.wang.studies import claims_measured as bench
    row = markdown_row(CLAIMS, ("synthetic (5 distributions), n = 20, M = 100", "0.25"))
    seeds = int(row[3]) // 5
    rows = [r for r in bench.scaled_rows(seeds, ()) if r["eps"] == 0.25]
    fails = sum(r["ratio"] > 1.25 for r in rows)
    assert [str(len(rows)), str(sum(r["raw_infeasible"] for r in rows)), str(fails),
            f"{float(max(r['ratio'] for r in rows)):.3f}"] == row[3:7]
    text = CLAIMS.read_text(encoding="utf-8")
    assert "Smallest counterexample with ε = 0.1 (n = 2): M = 11, requests (s, o) = (1, 2), (8, 1)" in text


def test_claims_local_swap_uniform_n50():
    """``claims.md`` §3, row *synthetic uniform, n = 50*: rounds, first-round batch and swaps, mean and max
    swaps per round, total swaps, recomputed over the committed seeds."""
    from llmopt.papers.wang.studies import claims_measured as bench
    row = markdown_row(CLAIMS, ("synthetic uniform", "50"))
    from llmopt.workloads.wang import wang_synthetic

    stats = []
    for seed in range(int(row[2])):
        inst = wang_synthetic(seed, "uniform", n=50)
        stats.append(bench.swap_stats([r.prompt for r in inst.requests], [r.output for r in inst.requests], inst.M))
    assert [f"{statistics.fmean(s['rounds'] for s in stats):.1f}", f"{statistics.fmean(s['batch'] for s in stats):.1f}",
            f"{statistics.fmean(s['first'] for s in stats):.1f}", f"{statistics.fmean(s['mean'] for s in stats):.2f}",
            str(max(s["max"] for s in stats)), f"{statistics.fmean(s['total'] for s in stats):.1f}"] == row[3:9]


@pytest.mark.parametrize("path", [LP_CSV, RESULTS / "wang" / "synthetic" / "lp_optima.md", CLAIMS])
def test_files_exist(path):
    assert path.exists(), f"{path} is missing: regenerate it (see the module docstring)"
