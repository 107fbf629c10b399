"""The checker's lower-bound certificates: weak duality, windows it derives itself, exact evaluation.

The checker recomputes ``bound(λ) = C + Σ_i min_{k∈K_i} cost_i(k) − M Σλ`` over windows it derives
from the instance and a schedule it verifies. These tests compare it with a brute-force
evaluation written here (every ``k`` of every window, straight from the formula), with hand
computations, and with the weak-duality property against feasible schedules.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance, Request
from llmopt.policies import make_policy
from llmopt.verify.certificates import (
    CertificateError,
    certificate_horizon,
    certified_windows,
    check_lower_bound_certificate,
)


def brute_force_bound(inst: Instance, lam: dict[int, float], hi: list[int]) -> float:
    """The formula evaluated at every start of every window ``a_i … hi_i``."""
    total = 0.0
    for r, h in zip(inst.requests, hi, strict=True):
        costs = [k + sum((r.prompt + tau - k) * lam.get(tau, 0.0) for tau in range(k + 1, k + r.output + 1))
                 for k in range(r.arrival, h + 1)]
        total += min(costs)
    return sum(r.output - r.arrival for r in inst.requests) + total - inst.M * sum(lam.values())


def test_zero_lambda_is_total_output():
    inst = Instance.from_tuples(10, [(0, 1, 2), (3, 2, 4), (1, 1, 1)])
    assert check_lower_bound_certificate(inst, np.zeros(5)) == pytest.approx(inst.total_output)
    assert check_lower_bound_certificate(inst, {}) == pytest.approx(inst.total_output)
    assert check_lower_bound_certificate(inst, (np.zeros(0, dtype=int), np.zeros(0))) == pytest.approx(
        inst.total_output)
    assert certificate_horizon(inst) == 3 + 7


def test_by_hand():
    # One request s=1, o=2, M=3 at 0: cost(k) = k + (1+1)·λ_{k+1} + (1+2)·λ_{k+2}.
    # Default window: T_c = 2, so k ∈ {0}. λ_1 = 1: cost(0) = 2, bound = (2 − 0) + 2 − 3·1 = 1.
    inst = Instance.from_tuples(3, [(0, 1, 2)])
    assert check_lower_bound_certificate(inst, [0.0, 1.0]) == pytest.approx(1.0)
    assert check_lower_bound_certificate(inst, {1: 1.0}) == pytest.approx(1.0)
    assert check_lower_bound_certificate(inst, ([1], [1.0])) == pytest.approx(1.0)
    # λ_2 = 0.5: cost(0) = 3·0.5 = 1.5; bound = 2 + 1.5 − 1.5 = 2 (= OPT).
    assert check_lower_bound_certificate(inst, {2: 0.5}) == pytest.approx(2.0)
    # λ beyond every window still counts in −M·Σλ (valid, weaker).
    assert check_lower_bound_certificate(inst, {50: 0.1}) == pytest.approx(2.0 - 0.3)


def test_windows_come_from_a_schedule_the_checker_verifies():
    # Two requests s=1, o=2, M=5 at 0 (peak 3 each: they cannot co-run, 3+3 > 5 at time 2).
    inst = Instance.from_tuples(5, [(0, 1, 2), (0, 1, 2)])
    lo, hi = certified_windows(inst)
    assert lo.tolist() == [0, 0] and hi.tolist() == [2, 2]  # T_c = 4
    good = {"r0": 0, "r1": 2}  # TEL 6, waits <= 6 − 4 = 2
    lo, hi = certified_windows(inst, good)
    assert hi.tolist() == [2, 2]
    tight = {"r0": 0, "r1": 2}
    lam = {2: 0.5, 3: 0.25}
    with_schedule = check_lower_bound_certificate(inst, lam, tight)
    assert with_schedule == pytest.approx(brute_force_bound(inst, lam, [2, 2]))
    # A schedule that overflows (both at 0) is not accepted as the basis of windows.
    with pytest.raises(CertificateError, match="rejected"):
        certified_windows(inst, {"r0": 0, "r1": 0})
    with pytest.raises(CertificateError, match="rejected"):
        check_lower_bound_certificate(inst, lam, {"r0": 0, "r1": 0})
    # The certificate takes no windows from the caller.
    with pytest.raises(TypeError):
        check_lower_bound_certificate(inst, lam, windows=[(0, 0), (0, 0)])  # type: ignore[call-arg]


def test_rejects_bad_multipliers_naming_the_time():
    inst = Instance.from_tuples(10, [(0, 1, 2)])
    with pytest.raises(CertificateError, match="time 3"):
        check_lower_bound_certificate(inst, [0.0, 0.1, 0.0, -0.5])
    with pytest.raises(CertificateError, match="time 2"):
        check_lower_bound_certificate(inst, {2: -1e-3})
    with pytest.raises(CertificateError, match="time 1"):
        check_lower_bound_certificate(inst, [0.0, np.nan])
    with pytest.raises(CertificateError, match="twice at time 4"):
        check_lower_bound_certificate(inst, ([4, 4], [0.1, 0.2]))
    with pytest.raises(CertificateError, match="not an integer time"):
        check_lower_bound_certificate(inst, {1.5: 0.1})
    # round-off negatives clamp to zero
    assert check_lower_bound_certificate(inst, [0.0, -1e-12]) == pytest.approx(2.0)


def test_time_origin_costs_nothing():
    """Arrivals as Unix timestamps in ms: the same bound as the instance shifted to 0, computed
    without arrays over the time axis."""
    base = [(0, 1, 3), (1, 2, 2), (1, 2, 2), (4, 1, 5)]
    lam = {2: 0.3, 3: 0.1, 6: 0.05, 9: 0.2}
    shift = 1_700_000_000_000
    small = Instance.from_tuples(8, base)
    big = Instance.from_tuples(8, [(a + shift, s, o) for a, s, o in base])
    assert check_lower_bound_certificate(big, {t + shift: v for t, v in lam.items()}) == pytest.approx(
        check_lower_bound_certificate(small, lam), abs=1e-9)
    # two bursts a year apart: windows are wide, the evaluation uses breakpoints only
    far = Instance(8, (Request("a", 0, 1, 3), Request("b", 31_536_000_000, 1, 3)))
    value = check_lower_bound_certificate(far, {2: 0.5, 31_536_000_002: 0.5})
    assert value <= 6 + 1e-9


@st.composite
def _instance_and_lambda(draw):
    M = draw(st.integers(4, 16))
    n = draw(st.integers(1, 5))
    rows = []
    for _ in range(n):
        s = draw(st.integers(1, 3))
        o = draw(st.integers(1, min(5, M - s)))
        rows.append((draw(st.integers(0, 4)), s, o))
    inst = Instance.from_tuples(M, rows)
    T = certificate_horizon(inst) + 3
    lam = draw(st.lists(st.floats(0.0, 2.0, allow_nan=False, allow_infinity=False), min_size=0, max_size=T))
    return inst, lam


@settings(max_examples=150, deadline=None)
@given(_instance_and_lambda())
def test_weak_duality_property(data):
    """Any λ >= 0 certifies a bound <= TEL of every feasible schedule (here MC-SF and FCFS)."""
    inst, lam = data
    bound = check_lower_bound_certificate(inst, lam)
    for policy in ("mc-sf", "fcfs"):
        sched = simulate(inst, make_policy(policy))
        assert bound <= sched.tel + 1e-9
        # with the windows from that schedule the bound may only rise, and stays below its TEL
        narrowed = check_lower_bound_certificate(inst, lam, sched.starts)
        assert bound - 1e-9 <= narrowed <= sched.tel + 1e-9


@settings(max_examples=200, deadline=None)
@given(_instance_and_lambda(), st.integers(0, 1))
def test_matches_brute_force(data, sparse):
    """Breakpoint and dense evaluation both equal the formula evaluated at every start."""
    inst, lam_list = data
    if sparse:  # keep a few multipliers so wide windows take the breakpoint path
        lam_list = [v if t % 4 == 1 else 0.0 for t, v in enumerate(lam_list)]
    lam = {t: v for t, v in enumerate(lam_list) if v > 0}
    _, hi = certified_windows(inst)
    expected = brute_force_bound(inst, lam, hi.tolist())
    assert check_lower_bound_certificate(inst, lam) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_wide_window_uses_breakpoints_exactly():
    # one long request makes T_c large, so the short requests' windows are far wider than the number of
    # multipliers near them: the breakpoint path runs; compare with brute force
    inst = Instance.from_tuples(20, [(0, 1, 15)] + [(1, 2, 1)] * 3 + [(2, 1, 2)])
    lam = {3: 0.7, 4: 0.2, 11: 0.4, 17: 0.1}
    _, hi = certified_windows(inst)
    assert (hi - np.array([r.arrival for r in inst.requests]) + 1)[1:].min() > 4 * len(lam) + 2
    assert check_lower_bound_certificate(inst, lam) == pytest.approx(brute_force_bound(inst, lam, hi.tolist()))


@st.composite
def _wide_windows_and_few_multipliers(draw):
    """One long request makes T_c (and so every other window) wide; a few multipliers keep the
    candidate set small, so the checker evaluates at breakpoints only."""
    M = draw(st.integers(14, 24))
    rows = [(0, 1, M - 1)]
    for _ in range(draw(st.integers(1, 3))):
        s = draw(st.integers(1, 2))
        rows.append((draw(st.integers(0, 3)), s, draw(st.integers(1, 3))))
    inst = Instance.from_tuples(M, rows)
    T = certificate_horizon(inst)
    times = draw(st.lists(st.integers(1, T + 2), min_size=1, max_size=2, unique=True))
    values = draw(st.lists(st.floats(0.5, 3.0), min_size=len(times), max_size=len(times)))
    return inst, dict(zip(times, values, strict=True))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_wide_windows_and_few_multipliers())
def test_breakpoint_path_matches_brute_force(data):
    """Guards the candidate set {τ−o−1, τ−o, τ−1, τ} of the breakpoint path: dropping any of them
    can overstate the bound (an unsound certificate)."""
    inst, lam = data
    _, hi = certified_windows(inst)
    a = np.array([r.arrival for r in inst.requests])
    assert ((hi - a + 1)[1:] > 4 * len(lam) + 2).all()  # the short requests take the breakpoint path
    assert check_lower_bound_certificate(inst, lam) == pytest.approx(brute_force_bound(inst, lam, hi.tolist()),
                                                                      rel=1e-9, abs=1e-9)


@st.composite
def _wide_windows_and_runs(draw):
    """Multipliers constant on runs (a bucketed master's or the subgradient's), positive almost everywhere,
    and windows far wider than the runs: the checker takes the run-end path (:func:`_run_candidates`)."""
    M = draw(st.integers(14, 30))
    rows = [(0, 1, M - 1), (0, 1, M - 2)]
    for _ in range(draw(st.integers(1, 4))):
        rows.append((draw(st.integers(0, 6)), draw(st.integers(1, 3)), draw(st.integers(1, 9))))
    inst = Instance.from_tuples(M, rows)
    width = draw(st.integers(2, 6))
    n_runs = draw(st.integers(2, 6))
    levels = [draw(st.sampled_from([0.0, 0.05, 0.1, 0.3, 0.7])) for _ in range(n_runs)]
    lam = {1 + j: levels[j // width] for j in range(width * n_runs) if levels[j // width] > 0}
    return inst, lam


@settings(max_examples=200, deadline=None, derandomize=True)
@given(_wide_windows_and_runs())
def test_runs_of_equal_multipliers_match_brute_force(data):
    """Breakage caught: the convex segment's vertex not evaluated (``cand += …`` dropped in
    ``_run_candidates``): the value comes out above brute force."""
    from llmopt.verify import certificates as cert_mod

    inst, lam = data
    _, hi = certified_windows(inst)
    t = np.array(sorted(lam), dtype=np.int64)
    v = np.array([lam[k] for k in sorted(lam)])
    change = cert_mod._change_points(t, v)
    wide = (hi - np.array([r.arrival for r in inst.requests]) + 1).min()
    assume(change.size < t.size or wide > 4 * change.size + 2 or not lam)  # the run path is the cheaper one
    assert check_lower_bound_certificate(inst, lam) == pytest.approx(brute_force_bound(inst, lam, hi.tolist()),
                                                                    rel=1e-9, abs=1e-9)


@st.composite
def _long_monotone_runs(draw):
    """Runs of 1–40 steps whose levels fall, rise or jump (the shapes a bucketed master and the subgradient
    produce), M up to 80 and arrivals far from 0: the convex segments of the run-end path get long, so a
    wrong vertex or a dropped run end shows."""
    M = draw(st.integers(10, 80))
    origin = draw(st.sampled_from([0, 10**6]))
    rows = []
    for _ in range(draw(st.integers(1, 3))):
        s = draw(st.integers(1, 4))
        rows.append((origin + draw(st.integers(0, 5)), s, draw(st.integers(1, M - s))))
    inst = Instance.from_tuples(M, rows)
    style = draw(st.sampled_from(["fall", "rise", "jump"]))
    T = certificate_horizon(inst)
    t, level, lam = origin + draw(st.integers(-5, 3)), draw(st.floats(0.05, 1.0)), {}
    while t < origin + T:
        length = draw(st.sampled_from([1, 2, 3, 7, 15, 40]))
        if style == "fall":
            level *= draw(st.floats(0.5, 1.0))
        elif style == "rise":
            level += draw(st.floats(0.0, 0.3))
        else:
            level = draw(st.floats(0.0, 2.0))
        lam.update({u: level for u in range(t, t + length) if level > 0})
        t += length
    return inst, lam


@settings(max_examples=150, deadline=None, derandomize=True)
@given(_long_monotone_runs())
def test_long_runs_match_brute_force(data):
    """The run-end path against the formula on long monotone runs. Breakage caught: the vertex step of
    a convex segment shifted (``step = 2 + …``) or a breakpoint moved (``change − o − 3``) overstates
    the bound."""
    inst, lam = data
    _, hi = certified_windows(inst)
    assert check_lower_bound_certificate(inst, lam) == pytest.approx(brute_force_bound(inst, lam, hi.tolist()),
                                                                      rel=1e-9, abs=1e-9)
