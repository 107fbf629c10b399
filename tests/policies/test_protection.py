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
