"""The hindsight IP (1)–(4) against an exhaustive search written here, on tiny instances.

The exhaustive search shares no code with the simulator, the look-ahead check or the
formulation: memory is summed straight from DESIGN §1.

Soundness of its search space. Let ``U`` be the TEL of a feasible schedule (MC-SF's,
re-checked here with the independent memory model) and ``W = U − Σ o``. A schedule with
TEL ``<= U`` has total waiting ``Σ_i (k_i − a_i) <= W``, so each start lies in
``[a_i, a_i + W]``. The search enumerates exactly the wait vectors with
``Σ w_i < best`` (``best`` starts at ``W + 1`` and only decreases), i.e. branch and bound
on the total waiting, which can only discard vectors that cannot beat the incumbent.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import exhaustive_opt, is_feasible, memory_profile, random_tiny_instance, tel_of, theorem41_instance

from llmopt.engine.discrete import simulate
from llmopt.formulations.hindsight_ip import decode_starts, encode_starts, formulate, start_windows
from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus
from llmopt.policies import make_policy
from llmopt.solvers.highs import HighsSolver

SOLVER = HighsSolver()


def _mcsf_upper_bound(instance: Instance) -> int:
    sch = simulate(instance, make_policy("mc-sf"))
    assert is_feasible(instance, sch.starts), "MC-SF schedule infeasible under DESIGN §1"
    assert sch.tel == tel_of(instance, sch.starts)
    return sch.tel


def _solve_ip(instance: Instance, model, solver=SOLVER) -> tuple[float, dict[str, int]]:
    res = solver.solve(model, time_limit=60)
    assert res.status is SolveStatus.OPTIMAL, res.message
    assert res.x is not None and model.max_violation(res.x) <= 1e-6
    return float(res.objective), decode_starts(instance, model, res.x)


def _check_ip_matches(instance: Instance, opt: int, model, solver=SOLVER) -> None:
    obj, starts = _solve_ip(instance, model, solver)
    assert obj == pytest.approx(opt, abs=1e-6)
    assert is_feasible(instance, starts)
    assert tel_of(instance, starts) == opt


# --- the exhaustive search itself ---------------------------------------------------------------------


def test_exhaustive_search_on_hand_examples():
    # T-5: MC-SF 13, OPT 12 with starts (0, 1, 3, 0) (or a relabelling of the identical requests)
    t5 = Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)])
    opt, starts = exhaustive_opt(t5, 13)
    assert opt == 12
    assert sorted([starts["r0"], starts["r1"]]) == [0, 1] and sorted([starts["r2"], starts["r3"]]) == [0, 3]
    # a single request never waits
    one = Instance.from_tuples(7, [(3, 2, 5)])
    assert exhaustive_opt(one, 5) == (5, {"r0": 3})
    # two requests that cannot overlap at all: s+o = M each
    two = Instance.from_tuples(6, [(0, 3, 3), (0, 5, 1)])
    assert exhaustive_opt(two, 1 + 4)[0] == 1 + 4  # short first
    # T-17: co-running is optimal
    assert exhaustive_opt(Instance.from_tuples(10, [(0, 2, 3), (0, 2, 6)]), 9)[0] == 9


# --- IP optimum == exhaustive optimum on random tiny instances -----------------------------------


def _tiny(seed: int) -> Instance:
    return random_tiny_instance(random.Random(1000 + seed), n_range=(2, 5), M_range=(4, 10), max_arrival=3)


@pytest.mark.parametrize("seed", range(60))
def test_ip_matches_exhaustive_search(seed, mip_solver):
    inst = _tiny(seed)
    ub = _mcsf_upper_bound(inst)
    opt, _ = exhaustive_opt(inst, ub)
    assert opt <= ub
    windows = start_windows(inst, ub)
    for model in (
        formulate(inst, windows),
        formulate(inst),
        formulate(inst, windows, aggregate=False),
        formulate(inst, aggregate=False),
    ):
        _check_ip_matches(inst, opt, model, mip_solver)
    # LP relaxation (same formulation, integrality dropped) is a lower bound
    for model in (formulate(inst, windows), formulate(inst, aggregate=False)):
        lp = mip_solver.solve(model.relax())
        assert lp.status is SolveStatus.OPTIMAL
        assert not model.relax().is_mip
        assert lp.objective <= opt + 1e-6


def test_random_instances_are_interesting():
    """The random sample must contain cases where MC-SF is not optimal, arrivals differ and
    identical requests occur; otherwise the comparison above proves little."""
    insts = [_tiny(s) for s in range(60)]
    gaps = 0
    for inst in insts:
        ub = _mcsf_upper_bound(inst)
        gaps += exhaustive_opt(inst, ub)[0] < ub
    assert gaps >= 3
    assert sum(len({r.arrival for r in i.requests}) > 1 for i in insts) >= 20
    assert sum(len({(r.arrival, r.prompt, r.output) for r in i.requests}) < i.n for i in insts) >= 10


# --- paper examples -------------------------------------------------------------------------------------


def test_t5_opt_is_12():
    inst = Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)])
    ub = _mcsf_upper_bound(inst)
    assert ub == 13
    digest_opt = dict(zip(inst.ids, (0, 1, 3, 0)))
    assert memory_profile(inst, digest_opt) == [4, 5, 4, 2, 3, 4] and tel_of(inst, digest_opt) == 12
    assert exhaustive_opt(inst, ub)[0] == 12
    for model in (formulate(inst, start_windows(inst, ub)), formulate(inst), formulate(inst, aggregate=False)):
        obj, starts = _solve_ip(inst, model)
        assert obj == pytest.approx(12)
        assert is_feasible(inst, starts) and tel_of(inst, starts) == 12


def test_t6_opt_equals_hsf():
    inst = Instance.from_tuples(7, [(0, 1, 1), (0, 1, 2), (0, 1, 3), (0, 1, 4)])
    ub = _mcsf_upper_bound(inst)
    assert ub == 12
    opt, _ = exhaustive_opt(inst, ub)
    assert opt == 12
    _check_ip_matches(inst, opt, formulate(inst))
    # I_1 and I_2 of C Example EC.1: feasible with TEL 15
    for starts in ((0, 2, 0, 3), (1, 1, 0, 3)):
        s = dict(zip(inst.ids, starts))
        assert is_feasible(inst, s) and tel_of(inst, s) == 15


@pytest.mark.parametrize(("M", "mcsf", "opt"), [(16, 31, 31), (36, 89, 80), (64, 188, 142)])
def test_theorem41_opt(M, mcsf, opt):
    """DIGEST §3.1: OPT 31 (M=16), 80 (M=36), 142 (M=64); OPT <= 3.5 M."""
    inst = theorem41_instance(M)
    ub = _mcsf_upper_bound(inst)
    assert ub == mcsf
    models = [formulate(inst, start_windows(inst, ub)), formulate(inst, start_windows(inst, ub), aggregate=False)]
    if M == 16:
        models.append(formulate(inst))
        assert exhaustive_opt(inst, ub)[0] == opt
    for model in models:
        _check_ip_matches(inst, opt, model)
    assert opt <= 3.5 * M
    lp = SOLVER.solve(models[0].relax())
    assert lp.status is SolveStatus.OPTIMAL and lp.objective <= opt + 1e-6


@pytest.mark.parametrize(
    ("M", "long_start", "short_starts", "opt"),
    [(36, 17, [33] * 9 + [34] * 8 + [35], 80), (64, 31, [60] * 16 + [61] * 16, 142)],
)
def test_theorem41_digest_opt_schedules_are_feasible(M, long_start, short_starts, opt):
    """The OPT schedules listed in DIGEST §3.1 are feasible and reach the stated TEL."""
    inst = theorem41_instance(M)
    starts = dict(zip(inst.ids, [long_start] + short_starts))
    assert is_feasible(inst, starts) and tel_of(inst, starts) == opt
    model = formulate(inst, start_windows(inst, _mcsf_upper_bound(inst)))
    x = encode_starts(inst, model, starts)
    assert model.max_violation(x) == 0 and model.objective_value(x) == opt


def test_theorem41_m36_opt_schedule_shape():
    """DIGEST §3.1: an optimal schedule delays the long request (MC-SF's b = 0 is not optimal)."""
    inst = theorem41_instance(36)
    ub = _mcsf_upper_bound(inst)
    _, starts = _solve_ip(inst, formulate(inst, start_windows(inst, ub)))
    assert starts["r0"] > 0
    assert tel_of(inst, starts) == 80


def test_windowed_and_full_models_agree_on_lp_ordering():
    """Restricting start windows can only raise the LP value, never above OPT."""
    inst = Instance.from_tuples(7, [(0, 1, 2), (0, 1, 2), (1, 2, 3), (2, 1, 4), (3, 2, 1)])
    ub = _mcsf_upper_bound(inst)
    opt, _ = exhaustive_opt(inst, ub)
    lp_full = SOLVER.solve(formulate(inst).relax()).objective
    lp_win = SOLVER.solve(formulate(inst, start_windows(inst, ub)).relax()).objective
    assert lp_full <= lp_win + 1e-6 <= opt + 2e-6
    assert np.isfinite(lp_full)


def test_empty_instance_has_opt_zero():
    inst = Instance(10, ())
    assert simulate(inst, make_policy("mc-sf")).tel == 0
    model = formulate(inst)
    assert model.n_cols == 0
    assert model.objective_value(np.zeros(0)) == 0
    assert decode_starts(inst, model, np.zeros(0)) == {}


# --- the IP's rows accept exactly the feasible schedules: every start vector, latest starts included ------


@pytest.mark.parametrize("seed", range(40))
def test_ip_rows_accept_exactly_the_feasible_start_vectors(seed):
    """For n <= 3, enumerate *every* start vector in the model's windows (up to the latest start
    ``T_c − o_i``, whose memory reaches the last time ``T_c``): the IP accepts it iff the independent
    memory model of DESIGN §1 does, with objective = TEL. A model missing any memory row (e.g. the last
    one, a horizon one step short) accepts an overflowing vector here."""
    import itertools

    inst = _enumerable(seed)
    windows = start_windows(inst)
    seen = {True: 0, False: 0}
    for model in (formulate(inst, windows), formulate(inst, windows, aggregate=False)):
        ranges = [range(lo, hi + 1) for lo, hi in zip(windows.lo, windows.hi, strict=True)]
        for ks in itertools.product(*ranges):
            starts = dict(zip(inst.ids, ks, strict=True))
            x = encode_starts(inst, model, starts)
            feasible = is_feasible(inst, starts)
            seen[feasible] += 1
            assert (model.max_violation(x) == 0) == feasible, starts
            assert model.objective_value(x) == tel_of(inst, starts)
    assert seen[True]


def _enumerable(seed: int) -> Instance:
    return random_tiny_instance(random.Random(5000 + seed), n_range=(2, 3), M_range=(4, 9), max_arrival=2,
                                dup_prob=0.3)


def test_enumerated_instances_include_overflow_at_the_horizon():
    """The sample above must contain start vectors that overflow exactly at the last time T_c."""
    hits = 0
    for seed in range(40):
        inst = _enumerable(seed)
        windows = start_windows(inst)
        latest = dict(zip(inst.ids, windows.hi, strict=True))
        profile = memory_profile(inst, latest)
        hits += profile[-1] > inst.M and all(u <= inst.M for u in profile[:-1])
    assert hits >= 5


def test_latest_starts_overflow_only_at_the_horizon():
    """Hand case: both requests at their latest starts end together at T_c = 6, where memory is 4 + 4 > 7."""
    inst = Instance.from_tuples(7, [(0, 1, 3), (0, 1, 3)])
    windows = start_windows(inst)
    assert windows.hi == (3, 3) and windows.horizon == 6
    model = formulate(inst, windows)
    assert model.rows("eq3_memory").labels["t"].max() == 6
    latest = {"r0": 3, "r1": 3}
    assert not is_feasible(inst, latest)
    assert model.max_violation(encode_starts(inst, model, latest)) == pytest.approx(1.0)
