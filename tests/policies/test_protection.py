"""α-protection (llmopt.policies.protection): FCFS admission of simultaneous arrivals."""

from __future__ import annotations

import pytest

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import ConstantCostModel
from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance, Request
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import make_policy_spec
from llmopt.verify.checker import check_schedule


@pytest.mark.parametrize("spec,starts", [
    ("alpha-protection:alpha=0", {"c": 0, "b": 0, "a": 1, "z": 1}),
    ("alpha-protection:alpha=0.1,beta=0.5", {"c": 0, "b": 1, "a": 2, "z": 2}),
])
def test_simultaneous_arrivals_are_admitted_in_instance_order(spec, starts):
    """Three requests arrive together (s = 5, o = 1, M = 12), then ``z`` (s = 1) at 1. An admission
    needs s + 1 = 6 tokens: with α = 0 (threshold 12) two fit at once, with α = 0.1 (threshold 10.8)
    one. FCFS among equal arrivals is by position in the instance (ids run backwards here, so the
    order is not the ids'): ``c``, then ``b``, then ``a``, and ``z`` joins ``a`` (6 + 2 tokens).
    Nothing overflows, so nothing is cleared.

    Breakage caught: ``llmopt/policies/protection.py`` ``heapq.heappush(self.queue, (request.arrival,
    request.position, request))`` in ``on_arrival`` → ``(request.arrival, -request.position, request)``
    (simultaneous arrivals served last-come-first).
    """
    inst = Instance(12, (Request("c", 0, 5, 1), Request("b", 0, 5, 1), Request("a", 0, 5, 1),
                         Request("z", 1, 1, 1)))
    sched = simulate(inst, make_policy_spec(spec))
    assert dict(sched.starts) == starts
    assert not sched.evictions
    report = check_schedule(inst, sched.starts)
    assert report.ok and report.tel == sched.tel == sum(starts[r.id] + r.output - r.arrival for r in inst.requests)


def test_simultaneous_arrivals_in_continuous_time_are_fcfs_by_position():
    """The same rule in the continuous engine (1-s batches): one 7-token admission at a time in M = 8.

    Breakage caught: ``llmopt/policies/protection.py`` α-protection's arrival queue keyed by
    ``-request.position`` (last-come-first among simultaneous arrivals).
    """
    inst = TimedInstance(8, tuple(TimedRequest(rid, 2.5, 6, 1) for rid in ("r2", "r0", "r1")))
    sched = simulate_continuous(inst, make_policy_spec("alpha-protection:alpha=0"), ConstantCostModel(1.0))
    assert sched.starts == {"r2": 0, "r0": 1, "r1": 2}
    assert sched.latencies == {"r2": 1.0, "r0": 2.0, "r1": 3.0}


def _three_equal_requests() -> TimedInstance:
    return TimedInstance(10, tuple(TimedRequest(rid, 0.0, 2, 3) for rid in ("A", "B", "C")))


@pytest.mark.parametrize("pass_cost,latencies,stalls", [
    ("free", {"A": 6.0, "B": 3.0, "C": 3.0}, {}),
    ("extra-passes", {"A": 7.0, "B": 4.0, "C": 4.0}, {1: 1}),
    ("every-pass", {"A": 8.0, "B": 5.0, "C": 5.0}, {1: 2}),
])
def test_a_clearing_pass_costs_one_decode_batch(pass_cost, latencies, stalls):
    """Hand-traced (M = 10, α = 0, β = 0.5, seed 17, 1-s batches): A, B, C (s = 2, o = 3) all start at
    iteration 0 (3 + 3 + 3 <= 10). At iteration 1 the projection is 3·(2 + 1 + 1) = 12 > 10: clear.
    ``random.Random(17)`` draws 0.522, 0.807, 0.960 (pass 1 clears nobody), then 0.290, 0.766, 0.704
    (pass 2 clears A). B and C finish after iteration 2; A restarts at iteration 3 and finishes after
    iteration 5. With free passes that is latencies 3, 3, 6; with ``pass_cost="extra-passes"`` the
    second pass loses one decode batch of the three running requests (1 s) before iteration 1, so
    every request finishes 1 s later; with ``"every-pass"`` both passes do (2 s later). The checker
    re-derives the stall from the runs.

    Breakage caught: ``- (self.pass_cost == "extra-passes")`` dropped in ``decide`` (the first pass
    charged under "extra-passes" too); the engine's ``now += w.stall * batch_time(…)`` dropped.
    """
    sched = simulate_continuous(_three_equal_requests(),
                                make_policy_spec(f"alpha-protection:alpha=0,beta=0.5,seed=17,pass_cost={pass_cost}"),
                                ConstantCostModel(1.0))
    assert sched.latencies == latencies
    assert sched.stalls == stalls
    assert [(e.t, e.id) for e in sched.evictions] == [(1, "A")]
    from llmopt.verify.timed import check_timed_schedule

    rep = check_timed_schedule(_three_equal_requests(), sched.starts, sched.batch_start, sched.batch_duration,
                               ConstantCostModel(1.0), evictions=sched.evictions, stalls=sched.stalls)
    assert rep.ok and rep.mean_latency == pytest.approx(sum(latencies.values()) / 3)


def _random_timed_instance(seed: int) -> TimedInstance:
    import random

    rng = random.Random(seed)
    return TimedInstance(40, tuple(TimedRequest(f"r{i}", rng.random() * 20, rng.randint(1, 6), rng.randint(1, 12))
                                   for i in range(20)))


@pytest.mark.parametrize("spec,inst_seed,clears", [
    ("alpha-protection:alpha=0.3", 18, True),  # α-greedy clears (3 requests), always in one pass
    ("alpha-protection:alpha=0.2,beta=0.3,seed=4", None, False),  # nothing ever overflows
])
def test_pass_cost_changes_nothing_without_a_second_pass(spec, inst_seed, clears):
    """α-greedy always clears in one pass, and an epoch with nothing to clear has no pass at all: then
    ``pass_cost="extra-passes"`` gives the very same schedule as the default; ``"every-pass"`` moves
    the run that clears and only that one.

    Breakage caught: charging the first pass under "extra-passes" (``- (… == "extra-passes")``
    dropped in ``decide``) moves the first case.
    """
    inst = _random_timed_instance(inst_seed) if inst_seed is not None else \
        TimedInstance(40, tuple(TimedRequest(f"r{i}", 0.5 * i, 3, 4) for i in range(8)))
    free = simulate_continuous(inst, make_policy_spec(spec), ConstantCostModel(0.5))
    costly = simulate_continuous(inst, make_policy_spec(spec + ",pass_cost=extra-passes"), ConstantCostModel(0.5))
    every = simulate_continuous(inst, make_policy_spec(spec + ",pass_cost=every-pass"), ConstantCostModel(0.5))
    assert bool(free.evictions) is clears
    assert costly.latencies == free.latencies and not costly.stalls
    assert (every.mean_latency > free.mean_latency) is clears and bool(every.stalls) is clears


def test_the_discrete_engine_refuses_a_stall():
    """A stall needs seconds to lose: the discrete engine (clock = tokens) raises instead of ignoring it."""
    from llmopt.engine.discrete import SimulationError

    inst = Instance(10, tuple(Request(rid, 0, 2, 3) for rid in ("A", "B", "C")))
    with pytest.raises(SimulationError, match="stall"):
        simulate(inst, make_policy_spec("alpha-protection:alpha=0,beta=0.5,seed=17,pass_cost=every-pass"))
    assert simulate(inst, make_policy_spec("alpha-protection:alpha=0,beta=0.5,seed=17")).tel > 0
