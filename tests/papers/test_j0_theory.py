"""J0's theory, measured (:mod:`llmopt.papers.jaillet.theory`): Thm 6.2's family, J Thm 4.3, J0 Thm 5.3.

Exact OPTs come from :func:`helpers.exhaustive_opt` (branch and bound over start times, independent of
the simulator, the formulations and :func:`thm62_opt`'s enumeration); every schedule is checked by the
independent checker inside the functions under test.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from helpers import exhaustive_opt, is_feasible, tel_of

from llmopt.engine.discrete import Decision, simulate
from llmopt.model.instance import Instance
from llmopt.papers.jaillet.theory import (
    PreemptShortestFirst,
    energy_throughput,
    first_start,
    lemma44_upper,
    lemma47_lower,
    paper_tel_a1,
    paper_tel_a3,
    run_thm62,
    thm43_instance,
    thm43_point,
    thm53_instance,
    thm53_point,
    thm62_a3_starts,
    thm62_instance,
    thm62_mcsf_tel,
    thm62_opt,
    thm62_ratio_limit,
)
from llmopt.policies import MCSF
from llmopt.verify.checker import check_schedule

E = Fraction


class StartsLate(MCSF):
    """MC-SF that starts nothing before step ``delay`` (a deterministic algorithm with ``t' > 0``)."""

    name = "starts-late"

    def __init__(self, delay: int) -> None:
        super().__init__()
        self.delay = delay

    def decide(self, t: int) -> Decision:
        return Decision(wake_at=self.delay) if t < self.delay else super().decide(t)


def _rows(inst: Instance) -> list[tuple[str, int, int, int]]:
    return [(r.id, r.arrival, r.prompt, r.output) for r in inst.requests]


# --- Thm 6.2 ----------------------------------------------------------------------------------


def test_thm62_instance_is_the_papers():
    """s = εM; long o = (1−ε)M at 0; εM unit requests at t' + (1−2ε)M, t' found by running the policy."""
    assert _rows(thm62_instance(16, E(1, 4))) == [("long", 0, 4, 12)] + [(f"short-{i}", 8, 4, 1) for i in range(4)]
    assert _rows(thm62_instance(9, 1 / 3)) == [("long", 0, 3, 6)] + [(f"short-{i}", 3, 3, 1) for i in range(3)]
    assert first_start(16, E(1, 4), StartsLate(3)) == 3
    late = thm62_instance(16, E(1, 4), StartsLate(3))
    assert {r.arrival for r in late.requests if r.id != "long"} == {11}
    assert thm62_instance(16, E(1, 4), t_first=5).by_id("short-0").arrival == 13
    for M, eps in ((16, E(1, 2)), (10, E(1, 4)), (16, E(0)), (3, E(1, 4))):
        with pytest.raises(ValueError):
            thm62_instance(M, eps)


@pytest.mark.parametrize("M, eps, t_first", [(9, E(1, 3), 0), (18, E(1, 3), 0), (16, E(1, 4), 0), (32, E(1, 4), 0),
                                             (10, E(2, 5), 0), (15, E(2, 5), 0), (16, E(1, 4), 3),
                                             (18, E(1, 3), 2), (14, E(3, 7), 1), (16, E(1, 4), 10)])
def test_enumeration_opt_equals_exhaustive_search(M, eps, t_first):
    inst = thm62_instance(M, eps, t_first=t_first)
    a3 = thm62_a3_starts(inst)
    assert is_feasible(inst, a3)
    opt, starts = thm62_opt(inst)
    assert is_feasible(inst, starts) and tel_of(inst, starts) == opt
    assert opt == exhaustive_opt(inst, tel_of(inst, a3))[0]


@pytest.mark.parametrize("M, eps, tel, opt", [(16, E(7, 16), 74, 30), (21, E(3, 7), 118, 44)])
def test_thm62_bound_reproduced_with_exhaustive_opt(M, eps, tel, opt):
    """MC-SF (t' = 0, never evicts) on its instance: TEL/OPT >= 1/ε, OPT by exhaustive search."""
    inst = thm62_instance(M, eps)
    sched = simulate(inst, MCSF())
    assert check_schedule(inst, sched.starts).tel == sched.tel == tel
    assert exhaustive_opt(inst, tel_of(inst, thm62_a3_starts(inst)))[0] == opt
    assert tel / opt >= 1 / eps
    run = run_thm62(M, eps)
    assert (run.tel, run.opt, run.t_first) == (tel, opt, 0) and run.ratio >= run.bound


def test_thm62_needs_large_m():
    """Below some M the same family stays under 1/ε: the O(M) terms dominate while ε³M² is small."""
    inst = thm62_instance(14, E(3, 7))
    tel = simulate(inst, MCSF()).tel
    opt = exhaustive_opt(inst, tel_of(inst, thm62_a3_starts(inst)))[0]
    assert (tel, opt) == (56, 25) and tel / opt < 7 / 3


@pytest.mark.parametrize("eps, Ms", [(E(1, 3), (9, 18, 27, 36, 45)), (E(1, 4), (16, 32, 48, 64)),
                                     (E(2, 5), (5, 10, 15, 20)), (E(1, 8), (64, 128))])
def test_closed_forms_against_simulation(eps, Ms):
    for M in Ms:
        inst = thm62_instance(M, eps)
        tel = simulate(inst, MCSF()).tel
        assert thm62_mcsf_tel(M, eps) == tel  # exact under DESIGN §1
        assert paper_tel_a1(M, eps) <= tel  # J0's lower bound on a continuing algorithm holds
        assert check_schedule(inst, thm62_a3_starts(inst)).tel >= thm62_opt(inst)[0]


def test_printed_a3_is_not_an_upper_bound_under_design():
    """J0's OPT <= TEL(A_3) assumes 1/ε unit requests at once; under DESIGN only ⌈1/ε⌉ − 1 fit."""
    assert thm62_opt(thm62_instance(18, E(1, 3)))[0] == 33 == paper_tel_a3(18, E(1, 3))
    assert thm62_opt(thm62_instance(36, E(1, 3)))[0] == 84 > paper_tel_a3(36, E(1, 3)) == 78
    assert (thm62_ratio_limit(E(1, 3)), thm62_ratio_limit(E(1, 4)), thm62_ratio_limit(E(2, 5))) == (5, 7, 5)


@pytest.mark.parametrize("M, eps", [(9, E(1, 3)), (18, E(1, 3)), (16, E(1, 4)), (15, E(2, 5))])
def test_preempting_policy_defeats_the_family(M, eps):
    """Evicting the long request for the unit ones (restart semantics) reaches OPT on the family."""
    inst = thm62_instance(M, eps, PreemptShortestFirst())
    sched = simulate(inst, PreemptShortestFirst())
    report = check_schedule(inst, sched.starts, evictions=sched.evictions)
    assert report.ok and report.tel == sched.tel
    assert [e.id for e in sched.evictions] == ["long"]
    assert sched.tel == exhaustive_opt(inst, sched.tel)[0]
    assert run_thm62(M, eps, PreemptShortestFirst()).ratio == 1.0


# --- J Thm 4.3 --------------------------------------------------------------------------------


def test_thm43_instance():
    inst = thm43_instance(50, 1, s=3, o_max=7, dist="two-point")
    assert inst.M == 20 and inst.n == 50
    assert {(r.arrival, r.prompt) for r in inst.requests} == {(0, 3)} and {r.output for r in inst.requests} == {1, 7}
    assert _rows(thm43_instance(8, 2)) == _rows(thm43_instance(8, 2))
    with pytest.raises(ValueError, match="condition"):
        thm43_instance(8, 0, M=20)
    with pytest.raises(ValueError, match="unknown"):
        thm43_instance(8, 0, dist="normal")


def test_lemma_closed_forms_by_hand():
    """s = 1, o = (1, 1, 3), M = 10: vol = (2, 9), X = 2·4 + 1·(4 + 9) = 21, Y = 5."""
    inst = Instance.from_tuples(10, [(0, 1, 1), (0, 1, 1), (0, 1, 3)])
    assert lemma44_upper(inst) == pytest.approx(1536 * 21 / 10 + 24 * 5)
    assert lemma47_lower(inst) == pytest.approx(21 / 60 + 5 / 6)


@pytest.mark.parametrize("seed, dist", [(0, "uniform"), (1, "two-point")])
def test_thm43_point_brackets_exact_opt(seed, dist):
    inst = thm43_instance(6, seed, s=1, o_max=4, dist=dist)
    p = thm43_point(inst, bounds=("energy", "lp"), search_evals=20, ip_node_limit=1000)
    opt = exhaustive_opt(inst, p["mcsf"])[0]
    assert p["status"] == "optimal" and p["opt"] == opt
    assert p["bound"] <= opt <= p["ub"] <= p["mcsf"] <= p["lemma44"]
    assert p["lemma47"] <= opt
    assert p["ratio_vs_bound"] >= p["ratio_vs_opt"] >= p["ratio_vs_best"] >= 1


# --- J0 Thm 5.3 -------------------------------------------------------------------------------


def test_thm53_instance_arrivals():
    inst = thm53_instance(400, 1.5, 3, B=4)
    counts = [0] * 401
    for r in inst.requests:
        counts[r.arrival] += 1
        assert r.prompt == 2 and 1 <= r.output <= 10 and inst.M == 24
    assert counts[0] == 0 and max(counts) <= 4  # periods 1..T, support [0, B]
    assert abs(inst.n / 400 - 1.5) < 0.15
    assert _rows(inst) == _rows(thm53_instance(400, 1.5, 3, B=4))
    assert energy_throughput(24, 2, 10) == pytest.approx(24 / 33)
    with pytest.raises(ValueError):
        thm53_instance(10, 5.0, 0, B=4)


def test_thm53_point_on_a_tiny_instance():
    inst = thm53_instance(5, 1.5, 0, s=1, o_max=4, B=2, M=10)
    p = thm53_point(inst, 5, bounds=("energy", "lp"), search_evals=20, ip_node_limit=1000)
    sched = simulate(inst, MCSF())
    opt = exhaustive_opt(inst, sched.tel)[0]
    assert p["status"] == "optimal" and p["opt"] == opt
    assert p["regret_lo"] == pytest.approx(p["regret_hi"]) == pytest.approx((sched.tel - opt) / inst.n)
    assert p["ael"] == pytest.approx(sched.tel / inst.n)
    assert p["backlog"] == sum(1 for r in inst.requests if r.arrival <= 5 < sched.starts[r.id])
    assert p["makespan_mcsf"] == max(sched.completions.values())


def test_thm53_point_backlog_and_bracket_by_hand():
    """M = 10: the first request (s = 2, o = 8, from step 1) peaks at M at step 9, so the one arriving at T = 2
    (o = 7, it would still run at 9) waits until 9 under MC-SF: backlog 1, TEL 8 + 14 = 22."""
    inst = Instance.from_tuples(10, [(1, 2, 8), (2, 1, 7)])
    p = thm53_point(inst, 2, bounds=("energy",), search_evals=0)
    assert p["backlog"] == 1 and p["ael"] == 11 and p["makespan_mcsf"] == 16
    opt = exhaustive_opt(inst, 22)[0]
    assert p["lb_n"] <= opt / 2 <= p["ub_n"] <= 11
    big = thm53_instance(40, 1.2, 0)
    q = thm53_point(big, 40, bounds=("energy",), search_evals=10)
    assert q["lb_n"] < q["ub_n"] <= q["ael"] and q["bound_stage"] == "energy" and q["status"] == "not_solved"
    assert q["regret_lo"] == pytest.approx(q["ael"] - q["ub_n"])
    assert q["regret_hi"] == pytest.approx(q["ael"] - q["lb_n"])
