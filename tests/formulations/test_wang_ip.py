"""W's IP (4)–(7) / Relax-LP (8)–(11) (:mod:`llmopt.formulations.wang_ip`) against J's IP and exhaustive search.

DIGEST T-14 (same OPT and LP as J's IP when all arrivals are 0) and T-15 (the corrected
NP-hardness reduction needs ``M = T + 3``).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import exhaustive_opt, is_feasible, random_tiny_instance, tel_of

from llmopt.engine.discrete import simulate
from llmopt.formulations import make_formulation
from llmopt.formulations.hindsight_ip import formulate, start_windows
from llmopt.model.instance import Instance, InstanceError, Request
from llmopt.model.result import SolveStatus
from llmopt.opt.bounds import BoundContext, compute_bound
from llmopt.policies import make_policy
from llmopt.solvers.highs import HighsSolver

SOLVER = HighsSolver()


def _at_zero(seed: int) -> Instance:
    inst = random_tiny_instance(random.Random(1000 + seed), n_range=(2, 6), M_range=(5, 12))
    return Instance(inst.M, tuple(Request(r.id, 0, r.prompt, r.output) for r in inst.requests))


@pytest.mark.parametrize("seed", range(12))
def test_wang_ip_equals_jaillet_ip_and_exhaustive_opt(seed):
    inst = _at_zero(seed)
    ub = simulate(inst, make_policy("mc-sf")).tel
    opt, _ = exhaustive_opt(inst, ub)
    windows = start_windows(inst)
    w_model = make_formulation("wang-ip").build(inst, windows)
    j_model = formulate(inst, windows)
    # one binary per request (W writes x_{i,t}); J's model merges identical requests
    assert w_model.n_cols == sum(windows.hi[i] - windows.lo[i] + 1 for i in range(inst.n))
    for model in (w_model, j_model):
        res = SOLVER.solve(model, time_limit=60)
        assert res.status is SolveStatus.OPTIMAL
        assert res.objective == pytest.approx(opt, abs=1e-6)
    starts = make_formulation("wang-ip").decode(inst, w_model, SOLVER.solve(w_model, time_limit=60).x)
    assert is_feasible(inst, starts) and tel_of(inst, starts) == opt
    lp_w = SOLVER.solve(w_model.relax(), time_limit=60).objective
    lp_j = SOLVER.solve(j_model.relax(), time_limit=60).objective
    assert lp_w == pytest.approx(lp_j, rel=1e-9)
    assert lp_w <= opt + 1e-6


def test_relax_lp_bound_is_certified_and_matches_lp():
    inst = _at_zero(3)
    ctx = BoundContext(upper_bound_starts=simulate(inst, make_policy("mc-sf")).starts)
    w, j = compute_bound("wang-relax-lp", inst, ctx), compute_bound("lp", inst, ctx)
    assert w.verified and w.certificate == "lp-dual-checked"
    assert w.value == pytest.approx(j.value, rel=1e-9)


def test_arrivals_over_time_are_refused_with_the_request_named():
    inst = Instance(10, (Request("a", 0, 1, 2), Request("late", 3, 1, 2)))
    with pytest.raises(InstanceError, match="'late' arrives at 3"):
        make_formulation("wang-ip").build(inst, start_windows(inst))
    res = compute_bound("wang-relax-lp", inst)
    assert res.value is None and "arrive at the same time" in res.detail


def test_common_nonzero_arrival_is_a_time_shift():
    base = _at_zero(5)
    shifted = Instance(base.M, tuple(Request(r.id, 7, r.prompt, r.output) for r in base.requests))
    vals = []
    for inst in (base, shifted):
        model = make_formulation("wang-ip").build(inst, start_windows(inst))
        vals.append(SOLVER.solve(model, time_limit=60).objective)
    assert vals[0] == pytest.approx(vals[1], abs=1e-6)


@pytest.mark.parametrize(("M", "opt"), [(23, 9), (20, 12)])
def test_np_hardness_reduction_needs_m_equal_t_plus_3(M, opt):
    """DIGEST T-15: x = (6,7,7,6,7,7), T = 20, o_i = 1. A 3-partition gives OPT = 3m(m+1)/2 = 9
    only with M = T + 3 (each 1-token request peaks at s_i + 1); the paper's M = T gives 12."""
    xs = (6, 7, 7, 6, 7, 7)
    inst = Instance(M, tuple(Request(f"x{i}", 0, x, 1) for i, x in enumerate(xs)))
    model = make_formulation("wang-ip").build(inst, start_windows(inst))
    res = SOLVER.solve(model, time_limit=60)
    assert res.status is SolveStatus.OPTIMAL and res.objective == pytest.approx(opt)
    assert exhaustive_opt(inst, simulate(inst, make_policy("mc-sf")).tel)[0] == opt


def test_wang_model_rows_are_the_memory_rows_of_design():
    """Row (6) at time t charges s_i + t − k for a start k in [t − o_i, t − 1], nothing else."""
    inst = Instance(20, (Request("a", 0, 2, 3), Request("b", 0, 1, 2)))
    model = make_formulation("wang-ip").build(inst, start_windows(inst))
    x = np.zeros(model.n_cols)
    cols = model.cols("x")
    for j, (c, k) in enumerate(zip(cols.labels["class"], cols.labels["k"], strict=True)):
        if (c, k) in ((0, 0), (1, 1)):  # a starts at 0, b at 1
            x[cols.start + j] = 1
    rows = model.rows("eq3_memory")
    usage = dict(zip(rows.labels["t"].tolist(), (model.A @ x)[rows.slice].tolist(), strict=True))
    assert {t: u for t, u in usage.items() if u} == {1: 3, 2: 4 + 2, 3: 5 + 3}
