"""W's claims, measured: MC-SF₂ on Thm EC.1's family, the scaled-DP counterexample, the LP-solution
hook of Sorted-LP / LP-Swap and the LP optima it is fed with, and the counted local swap."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance, Request
from llmopt.papers.wang.claims import (
    local_swap_with_count,
    scaled_dp_ratio,
    smallest_scaled_dp_counterexample,
    swap_rounds,
)
from llmopt.papers.wang.lp_optima import (
    METHODS,
    horizon_of,
    solve_full,
    solve_horizon_lp,
    solve_on_face,
)
from llmopt.papers.wang.theorem_ec1 import EC1Type2First, theorem_ec1_instance
from llmopt.policies import MCSF, make_policy
from llmopt.policies.base import MCSF2
from llmopt.policies.lp_order import LPSwap, SortedLP, lp_order, solve_cached
from llmopt.policies.sorted_f import plan_sorted_f, scaled_dp, select_local_swap
from llmopt.verify.checker import check_schedule
from llmopt.workloads.wang import wang_exponential, wang_synthetic


def _tel(inst: Instance, policy: object) -> int:
    sched = simulate(inst, policy)  # type: ignore[arg-type]
    report = check_schedule(inst, sched.starts)
    assert report.ok, report.violations
    assert report.tel == sched.tel
    return int(report.tel)


# --- MC-SF₂ and Thm EC.1 ----------------------------------------------------------------------------


def test_mcsf2_is_registered_and_orders_by_s_plus_o():
    assert isinstance(make_policy("mc-sf2"), MCSF2)
    # M = 10: a = (s 1, o 5) peaks at 6, b = (s 6, o 2) peaks at 8. MC-SF₂ (by s + o: 6 < 8) starts a
    # first, and b only once it completes within a's last steps' room (at 5); MC-SF (by o) starts b first
    # and a one step later (memory at time 2: 8 + 2 = 10).
    inst = Instance(10, (Request("a", 0, 1, 5), Request("b", 0, 6, 2)))
    assert simulate(inst, MCSF2()).starts == {"a": 0, "b": 5}
    assert simulate(inst, MCSF()).starts == {"b": 0, "a": 1}


def test_ec1_instance_construction():
    inst = theorem_ec1_instance(16)
    assert inst.M == 16 and inst.n == 16 + 32 and inst.name == "wang-ec1/M=16 Y=32"
    t1 = [r for r in inst.requests if r.id.startswith("t1-")]
    t2 = [r for r in inst.requests if r.id.startswith("t2-")]
    assert len(t1) == 16 and {(r.arrival, r.prompt, r.output) for r in t1} == {(0, 1, 3)}
    assert len(t2) == 32 and {(r.arrival, r.prompt, r.output) for r in t2} == {(0, 4, 1)}
    assert theorem_ec1_instance(16, exponent=1.5).n == 16 + 64
    assert theorem_ec1_instance(256).n == 256 + 1024
    for bad in (15, 1, 16.0):
        with pytest.raises(ValueError, match="perfect square"):
            theorem_ec1_instance(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Y must be"):
        theorem_ec1_instance(16, Y=-1)


def test_mcsf2_runs_type1_first_and_against_exact_opt():
    """M = 16, Y = 32: MC-SF₂ 678, 𝒜 (type 2 first) 468, exact OPT 457 (certified by the pipeline)."""
    from llmopt.opt.hindsight import solve_hindsight

    inst = theorem_ec1_instance(16)
    sched = simulate(inst, MCSF2())
    t1 = [k for rid, k in sched.starts.items() if rid.startswith("t1-")]
    t2 = [k for rid, k in sched.starts.items() if rid.startswith("t2-")]
    assert max(t1) < max(t2) and min(t1) == 0 < min(t2)  # type 1 (s + o = 4) goes first
    assert (_tel(inst, MCSF2()), _tel(inst, EC1Type2First())) == (678, 468)
    res = solve_hindsight(inst, time_limit=60)
    assert str(res.status) == "optimal" and res.opt == 457
    assert 678 / 457 > 678 / 468 > 1.44


def test_mcsf2_ratio_grows_on_the_corrected_family():
    """Y = M^1.25 (DIGEST I-38): TEL(MC-SF₂)/TEL(𝒜) = 1.449, 2.511, 3.590 at M = 16, 81, 256 — increasing like
    M^{1/4}; since OPT <= TEL(𝒜) these are lower bounds on MC-SF₂'s ratio to OPT."""
    ratios = {}
    for M in (16, 81, 256):
        inst = theorem_ec1_instance(M)
        ratios[M] = _tel(inst, MCSF2()) / _tel(inst, EC1Type2First())
    assert [round(ratios[M], 3) for M in (16, 81, 256)] == [1.449, 2.511, 3.590]
    assert ratios[16] < ratios[81] < ratios[256]
    for M, r in ratios.items():
        assert r > M ** 0.25 / 1.5  # grows at least like M^{1/4}
    assert ratios[256] > 3  # beyond the printed instance's limit


def test_printed_ec1_instance_ratio_stays_below_three():
    """W's Y = M^1.5: the ratio climbs toward 3 (W's arithmetic claims ≥ (2/3)√M, which it fails)."""
    ratios = {M: _tel(i, MCSF2()) / _tel(i, EC1Type2First())
              for M in (16, 36, 64) for i in [theorem_ec1_instance(M, exponent=1.5)]}
    assert [round(ratios[M], 3) for M in (16, 36, 64)] == [1.348, 1.669, 1.890]
    assert all(r < 3 for r in ratios.values())
    assert ratios[64] < (2 / 3) * math.sqrt(64)


# --- scaled DP ----------------------------------------------------------------------------------------


def test_scaled_dp_smallest_counterexample_eps_01():
    """n = 2, M = 11, ε = 0.1, B = 1 (λ = 11/10): requests (s, o) = (1, 2), (8, 1). Floored weights 2 + 8 fit
    ⌊11/1.1⌋ = 10, so the DP picks the pair (F = 3/4), which needs 12 > 11; the repair drops the heavier
    request and keeps F = 2, while F* = 1 (the second request alone): ratio 2 > 1 + ε."""
    res = scaled_dp([1, 8], [2, 1], 11, eps=0.1, B=1)
    assert res.lam == Fraction(11, 10) and res.raw == (0, 1) and res.dropped == (1,) and res.batch == (0,)
    r = scaled_dp_ratio([1, 8], [2, 1], 11, eps=0.1, B=1)
    assert r.exact == (1,) and r.ratio == 2 and r.raw_infeasible
    assert r.ratio > 1 + Fraction(1, 10)
    assert smallest_scaled_dp_counterexample(eps_values=(0.1,), n_max=2, v_max=8, M_max=11) == {
        "prompts": (1, 8), "outputs": (2, 1), "M": 11, "eps": 0.1, "B": 1, "ratio": Fraction(2),
        "lam": Fraction(11, 10), "batch": (0,), "exact": (1,)}


def test_scaled_dp_smallest_counterexample_overall():
    """The smallest over ε ∈ {0.1, 0.25, 0.5, 1}: n = 2, M = 5, (1, 2) and (3, 1), ε = 0.5, B = 1."""
    ce = smallest_scaled_dp_counterexample(n_max=2, v_max=5, M_max=5)
    assert ce is not None
    assert (ce["prompts"], ce["outputs"], ce["M"], ce["eps"], ce["B"], ce["ratio"]) == ((1, 3), (2, 1), 5, 0.5, 1, 2)
    assert smallest_scaled_dp_counterexample(n_max=2, v_max=4, M_max=4) is None  # nothing smaller


# --- the LP-solution hook and the LP optima ------------------------------------------------------------


def _small() -> Instance:
    return wang_synthetic(3, "uniform", n=14)


def test_default_sorted_lp_unchanged_by_the_hook():
    """``expected_starts=None`` is the column-generation LP; feeding that same ``y`` through the hook gives
    the same schedules (Sorted-LP and LP-Swap)."""
    inst = _small()
    solve_cached.cache_clear()
    default = SortedLP()
    base = simulate(inst, default)
    assert default.last_lp is not None and default.expected_starts is None
    y = np.array([default.last_lp.expected_start[r.id] for r in inst.requests])
    hooked = SortedLP(expected_starts=lambda reqs, outs, M: y[[r.position for r in reqs]])
    assert simulate(inst, hooked).starts == base.starts and hooked.last_lp is None
    swap = simulate(inst, LPSwap())
    assert simulate(inst, LPSwap(expected_starts=lambda reqs, outs, M: y[[r.position for r in reqs]])).starts == \
        swap.starts


def test_hook_drives_the_order():
    """A ``y`` that ranks the longest outputs first makes Sorted-LP admit them first."""
    inst = _small()
    o = np.array([r.output for r in inst.requests])
    seen: list[tuple[int, int]] = []

    def longest_first(reqs, outs, M):
        seen.append((len(reqs), M))
        return -np.array(outs, dtype=float)

    pol = SortedLP(expected_starts=longest_first)
    sched = simulate(inst, pol)
    assert seen == [(inst.n, inst.M)]
    first = min(sched.starts.values())
    started_first = {rid for rid, k in sched.starts.items() if k == first}
    assert max(o) in {r.output for r in inst.requests if r.id in started_first}
    assert list(lp_order(-o.astype(float), o))[0] == int(np.argmax(o))
    with pytest.raises(ValueError, match="expected_starts returned"):
        simulate(inst, SortedLP(expected_starts=lambda reqs, outs, M: np.zeros(len(reqs) + 1)))


def test_lp_methods_give_optimal_solutions_and_valid_orders():
    """Every method returns an optimum of the same LP (value checked) and Sorted-LP / LP-Swap from it give
    checker-verified schedules; the face LP has the full LP's optimum."""
    inst = _small()
    T, literal = horizon_of("sum-o", inst)
    assert (T, literal) == (sum(r.output for r in inst.requests), False)
    lp = solve_horizon_lp(inst, T, literal)
    solve_cached.cache_clear()
    default = SortedLP(bucket=1)
    simulate(inst, default)
    assert default.last_lp is not None and lp.value == pytest.approx(default.last_lp.objective, rel=1e-7)
    full = solve_full(inst, T, literal, "dual-simplex")
    assert full.value == pytest.approx(lp.value, rel=1e-7)
    lower = math.ceil(lp.value - 1e-6)  # the LP is a lower bound on OPT, hence on every schedule
    for method in METHODS:
        p = solve_on_face(lp, method)
        assert p.value == pytest.approx(lp.value, rel=1e-6)
        assert p.y.shape == (inst.n,) and np.isfinite(p.y).all() and (p.y >= -1e-9).all()
        for cls in (SortedLP, LPSwap):
            tel = _tel(inst, cls(expected_starts=lambda reqs, outs, M, y=p.y: y[[r.position for r in reqs]]))
            assert tel >= lower


def test_face_min_and_max_s_bracket_the_optimal_face():
    inst = wang_exponential(0, n=40)
    lp = solve_horizon_lp(inst, *horizon_of("makespan", inst))
    s = np.array([r.prompt for r in inst.requests])
    lo, hi = solve_on_face(lp, "face-min-s"), solve_on_face(lp, "face-max-s")
    for method in ("dual-simplex", "primal-simplex", "ipm"):
        y = solve_on_face(lp, method).y
        assert s @ lo.y - 1e-5 <= s @ y <= s @ hi.y + 1e-5


def test_literal_short_horizon_starts_requests_at_the_horizon():
    """With the printed reading and T̄ = n shorter than the LP's support, requests start at T̄ for free:
    the LP value drops below the completion-horizon LP and many y equal T̄."""
    inst = wang_synthetic(0, "uniform", n=30)
    T, literal = horizon_of("n-literal", inst)
    assert (T, literal) == (30, True)
    short = solve_horizon_lp(inst, T, literal)
    whole = solve_horizon_lp(inst, *horizon_of("sum-o", inst))
    assert short.value < whole.value
    y = solve_on_face(short, "dual-simplex").y
    assert (np.abs(y - T) < 1e-6).sum() >= 5


def test_unknown_horizon_and_method():
    inst = _small()
    with pytest.raises(ValueError, match="unknown horizon"):
        horizon_of("forever", inst)
    lp = solve_horizon_lp(inst, *horizon_of("sum-o", inst))
    with pytest.raises(ValueError, match="unknown LP method"):
        solve_on_face(lp, "guess")


# --- local swap with a counter ---------------------------------------------------------------------------


@pytest.mark.parametrize("dist", ["uniform", "exponential", "mixed"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_counted_local_swap_is_the_projects_selector(dist, seed):
    inst = wang_synthetic(seed, dist, n=60)
    s = [r.prompt for r in inst.requests]
    o = [r.output for r in inst.requests]
    batch, swaps = local_swap_with_count(s, o, inst.M)
    assert batch == select_local_swap(s, o, inst.M) and swaps >= 0
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(s))
    init = [int(i) for i in order[:2] if s[i] + o[i] <= inst.M]
    if init and sum(s[i] + o[i] for i in init) <= inst.M:
        assert local_swap_with_count(s, o, inst.M, initial=init, order=order)[0] == \
            select_local_swap(s, o, inst.M, initial=init, order=order)
    rounds = swap_rounds(s, o, inst.M)
    assert sum(r.batch for r in rounds) == inst.n and rounds[0].swaps == swaps
    plan = plan_sorted_f(s, o, inst.M, "swap")
    assert [len(plan)] == [sum(r.batch for r in rounds)]


def test_swap_count_hand_example():
    """M = 10, (s, o): A (1, 4), B (1, 4), C (2, 1), D (2, 1). The greedy by s + o (3, 3, 5, 5) takes C and D
    and skips A and B (6 + 5 > 10): no outside request has a smaller o, 0 swaps. Started from {A, B} with
    candidates in the order C, D, A, B: A swaps for C, then B for D — 2 swaps, same local optimum."""
    s, o = [1, 1, 2, 2], [4, 4, 1, 1]
    assert local_swap_with_count(s, o, 10) == ((2, 3), 0)
    assert local_swap_with_count(s, o, 10, initial=[0, 1], order=[2, 3, 0, 1]) == ((2, 3), 2)
