"""The hindsight pipeline: heuristics, windows, IP, checker (llmopt.hindsight)."""

from __future__ import annotations

import math
import random

import pytest
from helpers import random_tiny_instance

from llmopt.checker import check_schedule
from llmopt.heuristics import local_search
from llmopt.hindsight import solve_hindsight
from llmopt.instance import Instance
from llmopt.policies import make_policy
from llmopt.result import SolveStatus
from llmopt.simulator import simulate
from llmopt.workloads import jaillet_am1


def t5() -> Instance:
    # DIGEST T-5: MC-SF 13, OPT 12 (starts (0, 1, 3, 0)).
    return Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)])


def test_t5_opt_is_proven_and_beats_mcsf():
    res = solve_hindsight(t5(), time_limit=30)
    assert res.status is SolveStatus.OPTIMAL
    assert res.opt == 12 and res.incumbent == 12
    assert res.heuristics["mc-sf"] == 13
    assert res.bound == 12 and res.gap == 0
    assert check_schedule(t5(), res.starts).tel == 12


def test_time_limited_solve_is_not_called_optimal():
    # n = 30 cannot be proven optimal in 0.5 s; the result must say so and keep a valid incumbent.
    inst = jaillet_am1(3, n_range=(30, 30), M_range=(40, 40))
    res = solve_hindsight(inst, time_limit=0.5, search_evals=20)
    assert res.status is SolveStatus.TIME_LIMIT
    assert res.opt is None
    assert res.incumbent <= res.heuristics["mc-sf"]
    assert check_schedule(inst, res.starts).tel == res.incumbent
    assert inst.total_output <= res.bound <= res.incumbent
    assert res.gap == pytest.approx((res.incumbent - res.bound) / res.incumbent)


def test_early_stop_falls_back_to_checked_lp_bound():
    # The MIP stops before its root LP; the bound must then come from the LP dual that the
    # checker re-derived (not the solver's trivial bound), and be no larger than the incumbent.
    from llmopt.bounds import lp_bound
    from llmopt.formulations.hindsight_ip import start_windows

    inst = jaillet_am1(4, n_range=(25, 25), M_range=(40, 40))
    res = solve_hindsight(inst, time_limit=0.01, search_evals=0)
    assert res.status is SolveStatus.TIME_LIMIT
    assert res.bound_certificate == "lp-dual-checked"
    lp = lp_bound(inst, start_windows(inst, min(res.heuristics.values())))
    assert lp.verified and lp.value is not None
    assert res.bound == math.ceil(lp.value - 1e-6)
    assert res.bound <= res.incumbent


def test_local_search_never_worse_and_deterministic():
    inst = jaillet_am1(5, n_range=(15, 15), M_range=(35, 35))
    start = simulate(inst, make_policy("mc-sf"))
    order = sorted(inst.ids, key=lambda i: (inst.by_id(i).output, inst.position(i)))
    a = local_search(inst, start, order, seed=1, time_budget_s=60, max_evals=50)
    b = local_search(inst, start, order, seed=1, time_budget_s=60, max_evals=50)
    assert a.tel <= start.tel
    assert a.starts == b.starts
    assert check_schedule(inst, a.starts).tel == a.tel


@pytest.mark.parametrize("seed", range(8))
def test_pipeline_matches_plain_ip_on_tiny_instances(seed):
    # The windows from heuristics must not cut off the optimum: compare with no heuristics/windows.
    from llmopt.formulations.hindsight_ip import formulate
    from llmopt.solvers import get_solver

    inst = random_tiny_instance(random.Random(1000 + seed), n_range=(3, 6))
    res = solve_hindsight(inst, time_limit=30, seed=seed)
    plain = get_solver("highs").solve(formulate(inst, aggregate=False), time_limit=30)
    assert res.status is SolveStatus.OPTIMAL and plain.status is SolveStatus.OPTIMAL
    assert res.opt == round(plain.objective)
