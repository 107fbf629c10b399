"""The alpha-beta-readings study (llmopt.papers.jaillet.studies.alpha_beta_readings): the censored mean, the stall
in batches and the four readings' policies."""

from __future__ import annotations

import pytest

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import ConstantCostModel
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.papers.jaillet.studies import alpha_beta_readings as mod
from llmopt.policies import make_policy_spec


def test_censored_mean_keeps_the_requests_completed_by_the_limit():
    """The hand-traced run of ``tests/policies/test_protection.py`` (free passes): B and C complete at 3 s with
    latency 3, A at 6 s with latency 6. Censored at 3 s (the limit included) the mean is 3 over two requests;
    at 6 s it is the full mean 4 over three; before 3 s nothing completed.

    Breakage caught: ``c <= limit`` → ``c < limit`` (a request completing exactly at the limit left out).
    """
    inst = TimedInstance(10, tuple(TimedRequest(rid, 0.0, 2, 3) for rid in ("A", "B", "C")))
    sched = simulate_continuous(inst, make_policy_spec("alpha-protection:alpha=0,beta=0.5,seed=17"),
                                ConstantCostModel(1.0))
    assert mod.censored_mean(sched, 3.0) == (3.0, 2)
    assert mod.censored_mean(sched, 5.9) == (3.0, 2)
    assert mod.censored_mean(sched, 6.0) == (pytest.approx(sched.mean_latency), 3) and sched.mean_latency == 4.0
    assert mod.censored_mean(sched, 2.9) == (None, 0)


def test_one_second_is_the_nearest_whole_number_of_batches():
    assert mod.stall_batches(0.118) == 8 and mod.stall_batches(0.3) == 3 and mod.stall_batches(2.0) == 1
    with pytest.raises(ValueError):
        mod.stall_batches(0.0)


def test_the_four_readings_are_the_policy_options():
    """Breakage caught: a reading wired to the wrong option (e.g. the stall on without the released admission)."""
    ours = mod.make_policy("ours", 0.1, 0.02, 3, 8)
    assert (ours.admission, ours.pass_cost, ours.pass_batches, ours.batch_cap) == ("per-prompt", "free", 1, None)
    stalled = mod.make_policy("ours + 1 s stall", 0.1, 0.02, 3, 8)
    assert (stalled.admission, stalled.pass_cost, stalled.pass_batches) == ("per-prompt", "extra-passes", 8)
    rel = mod.make_policy("released admission + 1 s stall", 0.2, 0.1, 3, 9)
    assert (rel.admission, rel.batch_cap, rel.pass_cost, rel.pass_batches) == ("released", mod.RELEASED_B,
                                                                              "extra-passes", 9)
    assert (rel.alpha, rel.beta, rel.seed) == (0.2, 0.1, 3)
    free = mod.make_policy("released admission", 0.2, 0.1, 3, 9)
    assert (free.admission, free.pass_cost, free.pass_batches) == ("released", "free", 1)
