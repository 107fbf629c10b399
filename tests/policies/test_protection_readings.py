"""α-protection under the released code's readings (llmopt.policies.protection): its admission rule, its batch
cap and the stall per extra clearing pass."""

from __future__ import annotations

import random

import pytest

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import ConstantCostModel
from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance, Request
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import make_policy_spec
from llmopt.policies.protection import AlphaProtection
from llmopt.verify.checker import check_schedule
from llmopt.verify.timed import check_timed_schedule


def _four_at_once() -> Instance:
    return Instance(24, tuple(Request(rid, 0, 4, 2) for rid in "ABCD"))


@pytest.mark.parametrize("spec,starts", [
    ("alpha-protection:alpha=0.5", {"A": 0, "B": 0, "C": 2, "D": 2}),
    ("alpha-protection:alpha=0.5,admission=released,batch_cap=3", {"A": 0, "B": 0, "C": 0, "D": 2}),
    ("alpha-protection:alpha=0.5,admission=released", {"A": 0, "B": 0, "C": 0, "D": 0}),
])
def test_released_admission_gates_on_current_usage_and_caps_the_batch(spec, starts):
    """M = 24, α = 0.5 (threshold 12), four requests s = 4, o = 2 at 0. Per prompt (default), a new prompt
    needs s + 1 = 5 tokens within 12: two start, the other two when they complete at 2. The released rule
    looks only at the current usage (0 <= 12) and admits every waiting prompt up to B jobs: B = 3 starts
    three (usage after their last batch 18 <= 24); no cap starts all four (24 <= 24, nothing to clear).

    Breakage caught: the released rule checking each prompt against (1 − α)M (it then equals the default),
    ``batch_cap`` ignored (the second case starts D at 0).
    """
    sched = simulate(_four_at_once(), make_policy_spec(spec))
    assert dict(sched.starts) == starts and not sched.evictions
    assert check_schedule(_four_at_once(), sched.starts).ok


def test_released_admission_clears_the_overflowing_batch_and_never_idles():
    """M = 20, α = 0.5, β = 1: X (s = 8, o = 10) starts at 0; Y and Z (s = 8, o = 2) arrive at 1. The current
    usage 9 <= 10 admits both, but the batch would need 10 + 9 + 9 = 28 > 20 tokens: the clearing pass takes
    the whole batch — X is evicted, Y and Z go back unstarted — and X, the FCFS head, restarts alone at 1
    (done at 11); Y and Z start at 11. The default admits Y at X's completion (10) and Z at Y's (12).

    Breakage caught: the head-alone restart dropped (nothing runs and the engine stops: no progress); the
    just-admitted prompts reported as evictions.
    """
    inst = Instance(20, (Request("X", 0, 8, 10), Request("Y", 1, 8, 2), Request("Z", 1, 8, 2)))
    policy = AlphaProtection(0.5, admission="released")
    sched = simulate(inst, policy)
    assert dict(sched.starts) == {"X": 1, "Y": 11, "Z": 11}
    assert [(e.t, e.id) for e in sched.evictions] == [(1, "X")]
    assert (policy.clearings, policy.clearing_passes) == (1, 1)
    assert check_schedule(inst, sched.starts, evictions=sched.evictions).ok
    assert dict(simulate(inst, make_policy_spec("alpha-protection:alpha=0.5")).starts) == {"X": 0, "Y": 10, "Z": 12}


def test_pass_batches_multiplies_the_stall_of_a_charged_pass():
    """The hand-traced run of ``test_protection.py`` (M = 10, α = 0, β = 0.5, seed 17, 1-s batches: the second
    clearing pass at iteration 1 is the only charged one under "extra-passes") with ``pass_batches = 3``: the
    stall is three batches, so every request finishes 3 s later than with free passes (3, 3, 6 s), and the
    checker re-derives those 3 s from the runs.

    Breakage caught: ``stall * self.pass_batches`` → ``stall`` in ``decide``.
    """
    inst = TimedInstance(10, tuple(TimedRequest(rid, 0.0, 2, 3) for rid in ("A", "B", "C")))
    spec = "alpha-protection:alpha=0,beta=0.5,seed=17,pass_cost=extra-passes,pass_batches=3"
    sched = simulate_continuous(inst, make_policy_spec(spec), ConstantCostModel(1.0))
    assert sched.latencies == {"A": 9.0, "B": 6.0, "C": 6.0} and sched.stalls == {1: 3}
    rep = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, ConstantCostModel(1.0),
                               evictions=sched.evictions, stalls=sched.stalls)
    assert rep.ok


def _random_timed(seed: int) -> TimedInstance:
    rng = random.Random(seed)
    return TimedInstance(60, tuple(TimedRequest(f"r{i}", rng.random() * 10, rng.randint(2, 9), rng.randint(3, 14))
                                   for i in range(40)))


@pytest.mark.parametrize("seed", range(6))
def test_released_admission_with_stalls_is_feasible_and_charges_every_extra_pass(seed):
    """On random instances, β = 0.3, the released rule with "extra-passes" and ``pass_batches = 2``: the checker
    accepts the schedule (stalls included), and the stalled batches number exactly 2 × (passes − clearings) —
    every pass after the first of an epoch, a clearing before admission and one after it counting as one
    epoch.

    Breakage caught: the epoch's two clearings counted as two (``self.clearings -= 1`` dropped); the passes made
    before admission left out of the epoch's stall.
    """
    inst = _random_timed(seed)
    policy = AlphaProtection(0.2, beta=0.3, seed=seed, admission="released", batch_cap=8, pass_cost="extra-passes",
                             pass_batches=2)
    cost = ConstantCostModel(0.5)
    sched = simulate_continuous(inst, policy, cost)
    rep = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                               evictions=sched.evictions, stalls=sched.stalls)
    assert rep.ok, rep.violations
    assert sum(sched.stalls.values()) == 2 * (policy.clearing_passes - policy.clearings)


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="admission"):
        AlphaProtection(0.1, admission="gate")
    with pytest.raises(ValueError, match="batch_cap"):
        AlphaProtection(0.1, admission="released", batch_cap=0)
    with pytest.raises(ValueError, match="pass_batches"):
        AlphaProtection(0.1, pass_batches=0)


def test_an_idle_worker_clearing_a_fresh_batch_loses_no_time():
    """Four prompts (s = 3, o = 2) reach an idle worker (M = 10, α = 0): the released rule admits all four (usage
    16 after the batch), and β = 0.5 passes clear until it fits — often in more than one pass. Nothing ran before,
    so there is no batch to lose: no stall, and the engine accepts the decision. Breakage caught: the stall
    charged anyway (the engine refuses a stall with nothing running)."""
    inst = TimedInstance(10, tuple(TimedRequest(rid, 0.0, 3, 2) for rid in "ABCD"))
    multi = 0
    for seed in range(10):
        policy = AlphaProtection(0.0, beta=0.5, seed=seed, admission="released", pass_cost="extra-passes")
        sched = simulate_continuous(inst, policy, ConstantCostModel(1.0))
        assert sched.complete and not sched.stalls.get(0)
        multi += policy.clearing_passes > policy.clearings
    assert multi > 0
