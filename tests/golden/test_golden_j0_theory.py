"""Golden numbers of ``results/jaillet/j0-theory``: two rows of ``thm62.md``, rows of ``thm43.md`` and ``thm53.md``
recomputed, and every stored optimal schedule re-checked.

A failure means a change moved a published number: if intended, regenerate with
``llmopt study run j0-theory --out results/jaillet/j0-theory`` (the folder's README gives the command) and
update the values here.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from golden_support import RESULTS, assert_fields, markdown_row

from llmopt.papers.jaillet.theory import run_thm62


@pytest.mark.parametrize("eps,M,opt,ratio", [("1/3", 36, 84, "2.500"), ("1/4", 256, None, "4.738")])
def test_thm62_rows(eps, M, opt, ratio):
    """ε = 1/3, M = 36 (OPT 84, above the printed A_3's 78) and ε = 1/4, M = 256 (first M past 1/ε)."""
    run = run_thm62(M, Fraction(eps), "mc-sf")
    cells = (eps, str(M), str(run.n), str(run.opt), f"{run.t_first}, {run.ratio:.3f}")
    assert markdown_row(RESULTS / "jaillet" / "j0-theory" / "thm62.md", cells)
    assert cells[4] == f"0, {ratio}"
    if opt is not None:
        assert run.opt == opt


# --- J Thm 4.3 and J0 Thm 5.3: rows recomputed, node-limited ----------------------------------------------------
#
# Every IP of these rows stops after ``IP_NODES`` branch-and-bound nodes (HiGHS, one thread, no clock), so the
# recomputed rows equal the committed ones on any machine and under any load; no assertion depends on a timer.
# Breakages caught (by hand): ``IP_NODES`` lowered to 1 (two-point n = 20 seed 0: status node_limit, bound 226
# instead of OPT 249; lowered to 200 these rows do not move); ``opt_starts`` recording MC-SF's schedule instead of
# the optimal one; the backlog at T leaving out the requests that arrive at T (``r.arrival < T``: 3 instead of 5).


J0 = RESULTS / "jaillet" / "j0-theory"
#: Fields of a committed point that a recomputation must reproduce (all but wall-clock seconds).
POINT_FIELDS_43 = ("n", "M", "mcsf", "ub", "ub_source", "bound", "certificate", "bound_stage", "status", "opt", "gap",
                   "ratio_vs_bound", "ratio_vs_best", "ratio_vs_opt", "lemma44", "lemma47", "opt_starts")
POINT_FIELDS_53 = ("n", "ael", "ub_n", "lb_n", "regret_lo", "regret_hi", "certificate", "bound_stage", "status", "gap",
                   "opt", "backlog", "ub_source", "makespan_mcsf", "makespan_ub", "opt_starts")


def _rows_json() -> dict:
    return json.loads((J0 / "rows.json").read_text(encoding="utf-8"))


def _committed(kind: str, **match) -> list[dict]:
    found = [p for p in _rows_json()[kind] if all(p[k] == v for k, v in match.items())]
    assert found, f"rows.json: no {kind} point with {match}"
    return sorted(found, key=lambda p: p["seed"])


def test_thm43_two_point_n20_row_recomputed():
    """``thm43.md``'s two-point n = 20 row (3 seeds, OPT proven by the node-limited IP on each)."""
    from llmopt.papers.jaillet.studies.j0_theory import md_cells, thm43_point_of, thm43_row

    committed = _committed("thm43_raw", dist="two-point", n=20)
    pts = [thm43_point_of("two-point", 2, 10, 20, seed) for seed in range(3)]
    for want, got in zip(committed, pts):
        assert_fields(f"j0-theory thm43 two-point n = 20 seed {want['seed']}", want, got, POINT_FIELDS_43)
    cells = md_cells(thm43_row("two-point", 2, 10, 20, pts))
    assert markdown_row(J0 / "thm43.md", tuple(cells[:4])) == cells
    assert cells[8] == "1.088 (3/3)"


def test_thm43_uniform_n20_seed0_stops_at_the_node_limit():
    """A row the IP does not close: the same incumbent, bound and status ``node_limit`` on every run."""
    from llmopt.papers.jaillet.studies.j0_theory import thm43_point_of

    want = _committed("thm43_raw", dist="uniform", n=20, seed=0)[0]
    got = thm43_point_of("uniform", 2, 10, 20, 0)
    assert_fields("j0-theory thm43 uniform n = 20 seed 0", want, got, POINT_FIELDS_43)
    assert (got["status"], got["ub"], got["bound"]) == ("node_limit", 224, 208)


def test_thm53_stable_t25_row_recomputed():
    """``thm53.md``'s stable T = 25 row (M = 24, 3 seeds, each with OPT proven)."""
    from llmopt.papers.jaillet.studies.j0_theory import md_cells, thm53_point_of, thm53_row

    committed = _committed("thm53_raw", regime="stable", T=25, M=24)
    pts = [thm53_point_of(25, "stable", 0.55, 2, 10, 24, seed) for seed in range(3)]
    for want, got in zip(committed, pts):
        assert_fields(f"j0-theory thm53 stable T = 25 seed {want['seed']}", want, got, POINT_FIELDS_53)
    cells = md_cells(thm53_row(pts, 0.55))
    assert markdown_row(J0 / "thm53.md", tuple(cells[:4])) == cells
    assert all(p["status"] == "optimal" for p in pts)


def test_every_stored_optimal_schedule_rechecked():
    """Every proven OPT in ``rows.json`` (Thm 4.3 and 5.3) comes with its schedule; the checker re-verifies it from
    the instance alone and recomputes TEL = OPT."""
    from llmopt.papers.jaillet.theory import thm43_instance, thm53_instance
    from llmopt.verify.checker import check_schedule

    dump = _rows_json()
    checked = 0
    for p in dump["thm43_raw"] + dump["thm53_raw"]:
        if p["opt"] is None:
            assert p["opt_starts"] is None
            continue
        if "dist" in p:
            inst = thm43_instance(p["n"], p["seed"], s=p["s"], o_max=p["o_max"], dist=p["dist"])
        else:
            inst = thm53_instance(p["T"], p["lam"], p["seed"], s=2, o_max=10, B=p["B"], M=p["M"])
        report = check_schedule(inst, p["opt_starts"])
        assert report.ok and report.tel == p["opt"], (p.get("dist", p.get("regime")), p["n"], p["seed"])
        checked += 1
    assert checked >= 10
