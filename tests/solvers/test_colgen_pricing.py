"""Breakpoint pricing (:func:`llmopt.solvers.colgen_pricing.price_breakpoints`) against pricing every start.

``price_breakpoints`` prices a class with a short window at every start (its dense path) and the rest
by breakpoints; each test runs both paths alone (``DENSE_FACTOR`` 0: breakpoints only; huge: dense
only), since the small cases here would otherwise all take the dense path.

The reduced cost of a start is quadratic between the breakpoints of the multipliers (module
docstring of :mod:`llmopt.solvers.colgen_pricing`); the two must find the same least reduced cost for
every class, on sparse multipliers (exact LP duals), piecewise-constant ones (the bucketed master at
trace scale) and dense random ones, and column generation must reach the same LP value either way.

Breakages tried by hand (edit, run this file, revert): the breakpoints ``z − o − 2`` (where ``λ``
changes under the *end* of the run) dropped — the LP-value test fails (3 of 4 seeds); the convex
segment's vertex moved two steps early — the hypothesis test fails; the vertex candidates dropped
altogether — the hypothesis test fails. (Breakpoints at ``z − 1`` instead of ``z − 2`` are also exact:
the segments are then shifted by one and still quadratic, and the tests pass, as they should.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance
from llmopt.policies import make_policy
from llmopt.solvers.colgen import solve_lp_colgen
from llmopt.solvers.colgen_pricing import price_breakpoints, price_full


@st.composite
def pricing_cases(draw):
    n = draw(st.integers(1, 6))
    H = draw(st.integers(1, 60))
    a = np.array([draw(st.integers(0, H + 3)) for _ in range(n)])
    s = np.array([draw(st.integers(1, 20)) for _ in range(n)])
    o = np.array([draw(st.integers(1, 25)) for _ in range(n)])
    hi = a + np.array([draw(st.integers(0, 80)) for _ in range(n)])
    kind = draw(st.sampled_from(["sparse", "buckets", "dense"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "sparse":
        lam = np.where(rng.random(H + 1) < 0.15, rng.exponential(0.5, H + 1), 0.0)
    elif kind == "buckets":
        width = int(rng.integers(1, 9))
        lam = np.repeat(np.where(rng.random(H // width + 1) < 0.6, rng.exponential(0.3, H // width + 1), 0.0),
                        width)[:H + 1]
    else:
        lam = rng.exponential(0.2, H + 1)
    lam[0] = 0.0
    pi = rng.normal(5.0, 5.0, n)
    return a, s, o, hi, lam, pi


#: ``DENSE_FACTOR`` per path of :func:`price_breakpoints`.
PATHS = {"breakpoints": 0, "dense": 10**9, "mixed": 2}


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=pricing_cases())
def test_breakpoints_find_the_least_reduced_cost(path, case):
    from llmopt.solvers import colgen_pricing

    a, s, o, hi, lam, pi = case
    full = price_full(a, s, o, hi, lam, pi)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(colgen_pricing, "DENSE_FACTOR", PATHS[path])
        fast = price_breakpoints(a, s, o, hi, lam, pi)
    np.testing.assert_allclose(fast.min_rc, full.min_rc, rtol=1e-9, atol=1e-9)
    assert fast.complete and full.complete
    # best_k is a start of the class's window that attains the least reduced cost
    assert ((a <= fast.best_k) & (fast.best_k <= hi)).all()
    H = len(lam) - 1
    P = np.concatenate([np.cumsum(lam), np.full(200, lam.sum())])
    Q = np.concatenate([np.cumsum(np.arange(H + 1) * lam), np.full(200, (np.arange(H + 1) * lam).sum())])
    for c in range(len(a)):
        k = np.arange(a[c], fast.best_k[c] + 1)
        rc = (k - a[c]) + (s[c] - k) * (P[k + o[c]] - P[k]) + (Q[k + o[c]] - Q[k]) - pi[c]
        assert rc[-1] == pytest.approx(full.min_rc[c], rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=pricing_cases(), entries=st.sampled_from([1, 40, 150]))
def test_breakpoint_pricing_in_blocks_equals_one_block(path, case, entries):
    """Classes are priced in blocks of rows; a block boundary must not shift a class's window or result.
    Breakage caught: a block's rows read one class late (``slice(c0 + 1, …)``)."""
    from llmopt.solvers import colgen_pricing

    a, s, o, hi, lam, pi = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(colgen_pricing, "DENSE_FACTOR", PATHS[path])
        whole = price_breakpoints(a, s, o, hi, lam, pi)
        mp.setattr(colgen_pricing, "BLOCK_ENTRIES", entries)
        parts = price_breakpoints(a, s, o, hi, lam, pi)
    assert np.array_equal(parts.min_rc, whole.min_rc) and np.array_equal(parts.best_k, whole.best_k)
    assert np.array_equal(parts.new_class, whole.new_class) and np.array_equal(parts.new_k, whole.new_k)
    assert ((a <= parts.best_k) & (parts.best_k <= hi)).all()  # a start inside the class's window


@pytest.mark.parametrize("path", ["breakpoints", "dense"])
@pytest.mark.parametrize("seed", range(4))
def test_colgen_reaches_the_same_lp_with_either_pricing(seed, path, monkeypatch):
    from llmopt.solvers import colgen_pricing

    monkeypatch.setattr(colgen_pricing, "DENSE_FACTOR", PATHS[path])
    rng = np.random.default_rng(seed)
    M = int(rng.integers(20, 40))
    rows = [(int(rng.integers(0, 10)), int(rng.integers(1, 8)), int(rng.integers(1, M - 8))) for _ in range(25)]
    inst = Instance.from_tuples(M, rows)
    seed_starts = dict(simulate(inst, make_policy("mc-sf")).starts)
    full = solve_lp_colgen(inst, initial_starts=seed_starts, pricing="full")
    fast = solve_lp_colgen(inst, initial_starts=seed_starts, pricing="breakpoints")
    assert full.objective == pytest.approx(fast.objective, rel=1e-7)
    assert fast.bound == pytest.approx(full.bound, rel=1e-6)


def test_pricing_names_are_checked():
    inst = Instance.from_tuples(10, [(0, 1, 3)])
    with pytest.raises(ValueError, match="pricing"):
        solve_lp_colgen(inst, initial_starts={inst.requests[0].id: 0}, pricing="fastest")
    with pytest.raises(ValueError, match="breakpoint"):
        solve_lp_colgen(inst, initial_starts={inst.requests[0].id: 0}, pricing="breakpoints", columns_per_class=2)


@pytest.mark.parametrize("path", ["breakpoints", "dense"])
def test_a_passed_deadline_stops_after_the_first_block(path, monkeypatch):
    """With the deadline already past, one block is priced and the pass says it is incomplete; the
    columns it returns are those of that block, exactly as a complete pass prices them.
    Breakage caught: the deadline ignored (``complete`` stays True)."""
    from llmopt.solvers import colgen_pricing

    rng = np.random.default_rng(3)
    n, H = 12, 40
    a = rng.integers(0, 10, n)
    s, o = rng.integers(1, 6, n), rng.integers(1, 15, n)
    hi = a + 60
    lam = np.repeat(rng.exponential(0.4, H // 4 + 1), 4)[:H + 1]
    lam[0] = 0.0
    pi = np.full(n, 30.0)  # large assignment duals: most classes have a negative reduced cost
    monkeypatch.setattr(colgen_pricing, "DENSE_FACTOR", PATHS[path])
    monkeypatch.setattr(colgen_pricing, "BLOCK_ENTRIES", 8 * 70)  # a few classes per block
    whole = price_breakpoints(a, s, o, hi, lam, pi)
    cut = price_breakpoints(a, s, o, hi, lam, pi, deadline=0.0)
    assert whole.complete and not cut.complete
    assert 0 < cut.new_class.size < whole.new_class.size
    for c, k in zip(cut.new_class, cut.new_k, strict=True):
        assert cut.min_rc[c] == pytest.approx(whole.min_rc[c]) and k == whole.best_k[c]
