"""The serial schedule-generation scheme (:mod:`llmopt.opt.serial_schedule`) and the Lagrangian heuristic.

Checked against independent parts: the checker, the test helpers' memory model of DESIGN §1 (a request
fits at ``k`` iff the memory of the placed requests plus its own stays within ``M`` at every time, checked
by brute force over every earlier start), exhaustive OPT, and a hand-worked instance.

Breakages tried by hand (each made the listed tests fail; the code was restored):

1. Window read one start late (``[o // 2 + 1:…]``): ``starts_are_earliest_fits``.
2. ``window > s − k`` for ``>=`` (a request that fills ``M`` exactly is refused):
   ``starts_are_earliest_fits`` and ``hand_instance`` (``D`` waits).
3. Fallback ``last = end`` (ignoring the arrival): ``starts_are_earliest_fits`` (starts before arrival).
4. The token-steps key dropped from ``energy_order`` (arrival only): ``energy_order_is_by_token_steps``.
5. ``class_of`` built from the wrong class (``c + 1`` modulo the count): ``heuristic_gets_request_starts``.
6. The heuristic's TEL ignored (``upper`` not lowered): ``heuristic_lowers_polyak_target``.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import exhaustive_opt, memory_profile, random_tiny_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance
from llmopt.opt.serial_schedule import energy_order, serial_starts
from llmopt.opt.upper_bounds import SearchContext, find_schedule
from llmopt.policies import make_policy
from llmopt.verify.checker import check_schedule


def _fits(instance: Instance, placed: dict[str, int], rid: str, k: int) -> bool:
    """Brute force from DESIGN §1 (the helpers' memory model): does ``rid`` started at ``k`` fit beside
    ``placed``?"""
    if k < instance.by_id(rid).arrival:
        return False
    trial = {**placed, rid: k}
    sub = Instance(instance.M, tuple(instance.by_id(i) for i in trial))
    return max(memory_profile(sub, trial)) <= instance.M


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), shift=st.sampled_from([0, 7, 10**6]))
def test_starts_are_earliest_fits(seed: int, shift: int):
    """Every request starts at the first step where it fits beside those before it in the order."""
    rng = random.Random(seed)
    inst = random_tiny_instance(rng, n_range=(1, 7), M_range=(5, 14), max_arrival=6)
    inst = Instance.from_tuples(inst.M, [(r.arrival + shift, r.prompt, r.output) for r in inst.requests])
    order = list(inst.ids)
    rng.shuffle(order)
    starts = serial_starts(inst, order)
    placed: dict[str, int] = {}
    for rid in order:
        k = starts[rid]
        assert _fits(inst, placed, rid, k)
        assert not any(_fits(inst, placed, rid, j) for j in range(inst.by_id(rid).arrival, k))
        placed[rid] = k
    assert check_schedule(inst, starts).ok


def test_hand_instance():
    """M = 5, order A, B, C, D. A (a=2, s=1, o=3) starts at 2 and uses 2, 3, 4 at t = 3…5. B (a=0,
    s=1, o=2; 2, 3) backfills at 0, before A. C (a=0, s=2, o=2; 3, 4) overflows at every start before
    A ends (k = 0: 3 + 4 at t = 2; k = 1: 3 + 3; k = 2: 3 + 4 at t = 4; k = 3: 3 + 3; k = 4: 4 + 3) and
    starts at 5, A's completion. D (a=0, s=2, o=1; 3) starts at 0 beside B: 2 + 3 = 5 = M exactly."""
    inst = Instance.from_tuples(5, [(2, 1, 3), (0, 1, 2), (0, 2, 2), (0, 2, 1)])
    a, b, c, d = inst.ids
    starts = serial_starts(inst, [a, b, c, d])
    assert starts == {a: 2, b: 0, c: 5, d: 0}
    assert check_schedule(inst, starts).ok


def test_order_must_be_a_permutation():
    inst = Instance.from_tuples(5, [(0, 1, 2), (0, 1, 2)])
    with pytest.raises(ValueError, match="exactly once"):
        serial_starts(inst, [inst.ids[0]])
    with pytest.raises(ValueError, match="exactly once"):
        serial_starts(inst, [inst.ids[0], inst.ids[0]])


def test_energy_order_is_by_token_steps():
    inst = Instance.from_tuples(100, [(0, 5, 5), (3, 1, 2), (1, 1, 2), (0, 1, 9), (0, 2, 1)])
    assert [inst.by_id(i).token_steps for i in energy_order(inst)] == [3, 5, 5, 40, 54]
    assert energy_order(inst)[1:3] == [inst.ids[2], inst.ids[1]]  # equal token-steps: earlier arrival first


@pytest.mark.parametrize("seed", range(12))
def test_stages_verified_and_not_below_opt(seed: int):
    inst = random_tiny_instance(random.Random(seed), n_range=(2, 6), M_range=(5, 12), max_arrival=4)
    opt, _ = exhaustive_opt(inst, simulate(inst, make_policy("fcfs")).tel)
    energy = find_schedule("sgs-energy", inst, SearchContext())
    lag = find_schedule("sgs-lagrangian", inst, SearchContext())  # no deadline: its step budget, on any machine
    for sch in (energy, lag):
        report = check_schedule(inst, sch.starts)
        assert report.ok and report.tel == sch.tel >= opt
    assert lag.tel <= energy.tel
    assert lag.policy.startswith("sgs-lagrangian(") and "steps)" in lag.policy


def test_lagrangian_order_beats_energy_order_on_a_jaillet_instance():
    """The multipliers carry information the energy order lacks (arrivals over time). No deadline: the
    stage's step budget (it stops after 452 steps here, its step factor spent; the first better order
    came after 30), so a loaded machine cannot cut it short."""
    from llmopt.workloads import make_instance

    inst = make_instance("jaillet-am2", seed=1)
    energy = find_schedule("sgs-energy", inst, SearchContext())
    lag = find_schedule("sgs-lagrangian", inst, SearchContext())
    assert check_schedule(inst, lag.starts).ok
    assert lag.tel < energy.tel and "Lagrangian" in lag.policy


def _subgradient(inst: Instance, heuristic, upper: float):
    from llmopt.solvers.lagrangian import subgradient_bound

    # No time limit: the ascent ends by its own rules (step factor, zero subgradient, 10,000 steps), so
    # two runs compare the same way on any machine.
    horizon = max(r.arrival for r in inst.requests) + inst.total_output
    return subgradient_bound(inst, upper=upper, horizon=horizon, bucket=1, time_limit=None,
                             heuristic=heuristic, heuristic_every=1)


@pytest.mark.parametrize("seed", range(8))
def test_heuristic_gets_request_starts(seed: int):
    """The heuristic sees one start per request, in instance order, at or after its arrival, and identical
    requests (one class, one priced minimiser) get identical starts."""
    inst = random_tiny_instance(random.Random(seed), n_range=(3, 7), M_range=(5, 10), max_arrival=5)
    arrivals = np.array([r.arrival for r in inst.requests])
    seen: list[np.ndarray] = []

    def heuristic(starts: np.ndarray) -> None:
        seen.append(starts.copy())

    _subgradient(inst, heuristic, upper=float(simulate(inst, make_policy("fcfs")).tel))
    assert seen
    for starts in seen:
        assert starts.shape == (inst.n,) and (starts >= arrivals).all()
        keys: dict[tuple[int, int, int], set[int]] = {}
        for pos, r in enumerate(inst.requests):
            keys.setdefault((r.arrival, r.prompt, r.output), set()).add(int(starts[pos]))
        assert all(len(v) == 1 for v in keys.values())


def test_heuristic_gets_minimising_starts():
    """With one request there is no memory conflict: λ = 0 and its best start is its arrival."""
    inst = Instance.from_tuples(10, [(3, 2, 4)])
    seen: list[np.ndarray] = []
    _subgradient(inst, lambda s: seen.append(s.copy()), upper=4.0)
    assert seen and all(int(s[0]) == 3 for s in seen)


def test_heuristic_lowers_polyak_target():
    """A schedule TEL returned by the heuristic becomes Polyak's target, so the ascent moves differently
    from a run with a looser target; both bounds stay at or below OPT."""
    inst = random_tiny_instance(random.Random(4), n_range=(6, 6), M_range=(8, 8), max_arrival=2)
    fcfs = simulate(inst, make_policy("fcfs")).tel
    opt, _ = exhaustive_opt(inst, fcfs)
    loose = _subgradient(inst, lambda s: None, upper=float(10 * fcfs))
    tight = _subgradient(inst, lambda s: float(opt), upper=float(10 * fcfs))
    assert loose.bound <= opt + 1e-6 and tight.bound <= opt + 1e-6
    assert tight.bound > loose.bound


@pytest.mark.parametrize("name", ["sgs-energy", "sgs-lagrangian"])
def test_stages_pass_the_conformance_check(name: str):
    """Checker-verified, never below OPT, and the same schedule twice (no deadline: a step budget)."""
    from llmopt.bench.plugins.conformance import check_upper_bound

    assert check_upper_bound(name) == []


def test_sgs_lagrangian_without_deadline_runs_its_step_budget(monkeypatch):
    from llmopt.opt import serial_schedule
    from llmopt.workloads import make_instance

    monkeypatch.setattr(serial_schedule, "DEFAULT_LAGRANGIAN_STEPS", 7)
    inst = make_instance("jaillet-am2", seed=1)
    first = find_schedule("sgs-lagrangian", inst, SearchContext())
    assert first.policy.endswith("; 7 steps)")
    assert dict(find_schedule("sgs-lagrangian", inst, SearchContext()).starts) == dict(first.starts)
