"""The continuous-time checker on stalls (clearing passes that cost time, ``Decision.stall``).

A stall of ``m`` before iteration ``k`` delays its batch by exactly ``m`` decode batches of the requests
that ran when ``k``'s decision began; the checker re-derives that set from the runs (decoding in ``k``
plus evicted at ``k``) and refuses any other delay, a stall with nothing running, and a missing stall.
"""

from __future__ import annotations

import pytest
from helpers import needs_trace_data

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import ConstantCostModel, make_cost_model
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import make_policy_spec
from llmopt.verify.timed import check_timed_schedule

ONE_SECOND = ConstantCostModel(1.0)
# M = 10, α = 0, β = 0.5, seed 17: A, B, C start at 0, two passes at iteration 1 evict A (hand trace in
# tests/policies/test_protection.py); "every-pass" loses 2 s before iteration 1.
INST = TimedInstance(10, tuple(TimedRequest(rid, 0.0, 2, 3) for rid in ("A", "B", "C")))
SPEC = "alpha-protection:alpha=0,beta=0.5,seed=17,pass_cost=every-pass"


def _run():
    return simulate_continuous(INST, make_policy_spec(SPEC), ONE_SECOND)


def _check(sched, stalls, batch_start=None):
    return check_timed_schedule(INST, sched.starts, sched.batch_start if batch_start is None else batch_start,
                                sched.batch_duration, ONE_SECOND, evictions=sched.evictions, stalls=stalls)


def test_the_recorded_stall_is_accepted_and_its_json_keys_may_be_strings():
    sched = _run()
    assert sched.stalls == {1: 2} and list(sched.batch_start) == [0.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    assert _check(sched, sched.stalls).ok
    assert _check(sched, {"1": 2}).ok
    assert sched.to_dict()["stalls"] == {"1": 2}


@pytest.mark.parametrize("stalls,words", [
    ({}, "continues running requests"),  # the 2-s gap is unexplained
    ({1: 1}, "after a stall of 1.0 s"),  # too short
    ({1: 3}, "after a stall of 3.0 s"),  # too long
    ({2: 2}, "after a stall"),  # in the wrong place
    ({0: 2}, "needs 0 < iteration"),
])
def test_a_tampered_stall_is_refused(stalls, words):
    """Breakage caught: the clock check's ``if k in stall_s`` branch removed (any stall accepted as an
    idle gap), or the decode set of :func:`_stall_seconds` without the runs evicted at ``k``."""
    rep = _check(_run(), stalls)
    assert not rep.ok and any(words in v for v in rep.violations), rep.violations


def test_a_stall_counts_the_requests_evicted_at_its_iteration():
    """The lost batch is the one that did not fit: three requests (A, evicted at 1, and B, C). With a
    cost of 1 s per request the stall is 2 × 3 s, not 2 × 2 s (B and C only).

    Breakage caught: ``n_before = int(dec_n[k]) + len(gone)`` → ``int(dec_n[k])``.
    """
    from llmopt.engine.cost_model import LinearCostModel

    per_request = LinearCostModel("per-request", base=0.0, per_token=0.0, knot_1=0.0, slope_1=0.0, knot_2=0.0,
                                  slope_2=0.0, per_prefill_sq=0.0, per_context_token=0.0, per_request=1.0)
    sched = simulate_continuous(INST, make_policy_spec(SPEC), per_request)
    assert sched.stalls == {1: 2}
    assert sched.batch_start[1] - (sched.batch_start[0] + sched.batch_duration[0]) == pytest.approx(6.0)
    rep = check_timed_schedule(INST, sched.starts, sched.batch_start, sched.batch_duration, per_request,
                               evictions=sched.evictions, stalls=sched.stalls)
    assert rep.ok, rep.violations


@needs_trace_data
def test_engine_and_checker_agree_on_stalls_under_the_fitted_cost_model():
    """Cross-check on a trace run with many clearings (every pass charged): the engine times a stall from
    its running aggregates, the checker from the runs; the context-dependent fitted model makes any
    disagreement in the decode set or its KV context visible."""
    from llmopt.workloads.traces.data import trace_workload

    inst = trace_workload(1, n=1000, rate=50)
    cost = make_cost_model()
    sched = simulate_continuous(inst, make_policy_spec("alpha-protection:alpha=0.1,beta=0.02,seed=1,"
                                                       "pass_cost=every-pass"), cost)
    assert len(sched.stalls) >= 10
    rep = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                               evictions=sched.evictions, stalls=sched.stalls)
    assert rep.ok, rep.violations
    assert rep.mean_latency == pytest.approx(sched.mean_latency, rel=1e-12)
