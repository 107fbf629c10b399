"""The subgradient Lagrangian bound (:mod:`llmopt.solvers.lagrangian`, stage ``lagrangian``).

Checked: never above exhaustive OPT (weak duality, through the independent checker); close to the LP
value that column generation proves (``lp-colgen``, the same Lagrangian's maximum over full windows) on
J-like instances, by a fixed number of steps (no wall clock); the subgradient is the memory the
minimising starts use (``_usage`` against a direct sum).

Breakages tried by hand (edit, run this file, revert): the subgradient's sign flipped (``μ − step·g``) —
the LP-closeness test fails (the ascent never leaves λ = 0: 0.57 of the LP); ``_usage`` one step late
(``lo = best_k + 2``) — the usage test fails; the ``− M·Δ·Σμ`` term dropped from ``L`` — the
exhaustive-OPT test fails.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import exhaustive_opt, random_tiny_instance

from llmopt.engine.discrete import simulate
from llmopt.opt.bounds import BoundContext, compute_bound
from llmopt.policies import make_policy
from llmopt.solvers.colgen import solve_lp_colgen
from llmopt.solvers.lagrangian import _usage, subgradient_bound
from llmopt.verify.certificates import check_lower_bound_certificate
from llmopt.workloads.jaillet import jaillet_am1


@pytest.mark.parametrize("seed", range(25))
def test_never_above_exhaustive_opt(seed):
    inst = random_tiny_instance(random.Random(seed), n_range=(2, 6), M_range=(5, 12))
    fcfs = simulate(inst, make_policy("fcfs"))
    opt, _ = exhaustive_opt(inst, fcfs.tel)
    res = compute_bound("lagrangian", inst, BoundContext(upper_bound_starts=dict(fcfs.starts), time_limit=5.0))
    assert res.verified and res.value is not None, res.detail
    assert res.value <= opt + 1e-6


@pytest.mark.parametrize("seed", range(3))
def test_close_to_the_lp_value(seed):
    inst = jaillet_am1(seed, n_range=(12, 12), M_range=(30, 30))
    sch = simulate(inst, make_policy("mc-sf"))
    lp = solve_lp_colgen(inst, initial_starts=dict(sch.starts))
    makespan = max(sch.starts[r.id] + r.output for r in inst.requests)
    res = subgradient_bound(inst, upper=sch.tel, horizon=makespan, bucket=1, max_iter=1500)
    assert res.bound <= lp.objective + 1e-6
    assert res.bound >= 0.98 * lp.objective, (res.bound, lp.objective)
    assert check_lower_bound_certificate(inst, (res.lam_times, res.lam_values)) == pytest.approx(res.bound,
                                                                                                rel=1e-9)


def test_usage_is_the_memory_of_the_minimising_starts():
    rng = np.random.default_rng(0)
    k = rng.integers(0, 20, 6)
    size = rng.integers(1, 3, 6).astype(float)
    s = rng.integers(1, 5, 6).astype(float)
    o = rng.integers(1, 8, 6)
    H = 30
    direct = np.zeros(H + 1)
    for kc, zc, sc, oc in zip(k, size, s, o, strict=True):
        for j in range(1, oc + 1):
            if kc + j <= H:
                direct[kc + j] += zc * (sc + j)
    np.testing.assert_allclose(_usage(k, size, s, o, H), direct)
