"""The continuous-time checker (llmopt.verify.timed) on hand-made runs: arrivals and the idle clock.

Every run here uses batches of exactly 1 s (:class:`~llmopt.engine.cost_model.ConstantCostModel`),
so the durations are right and only the property under test can be wrong.
"""

from __future__ import annotations

import pytest

from llmopt.engine.cost_model import ConstantCostModel
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.verify.timed import check_timed_schedule

ONE_SECOND = ConstantCostModel(1.0)


def _check(inst: TimedInstance, starts: dict[str, int], batch_start: list[float]):
    return check_timed_schedule(inst, starts, batch_start, [1.0] * len(batch_start), ONE_SECOND)


@pytest.mark.parametrize("arrival,ok", [(1.0, True), (1.0 + 1e-6, False), (1.5, False), (0.999, True)])
def test_a_request_joins_only_a_batch_that_begins_at_or_after_its_arrival(arrival, ok):
    """``a`` (s = 1, o = 3) runs in batches [0, 1), [1, 2), [2, 3); ``b`` (s = 1, o = 1) is placed in
    iteration 1, which begins at 1.0 s. Arriving at 1.0 s (or before) it may; arriving 1 µs later the
    batch began before it arrived.

    Breakage caught: ``llmopt/verify/timed.py`` ``arrival_it = np.searchsorted(bs, arrivals,
    side="left")`` → ``np.searchsorted(bs, arrivals, side="right") - 1`` (a request accepted in the
    batch that began just before its arrival).
    """
    inst = TimedInstance(10, (TimedRequest("a", 0.0, 1, 3), TimedRequest("b", arrival, 1, 1)))
    rep = _check(inst, {"a": 0, "b": 1}, [0.0, 1.0, 2.0])
    assert rep.ok is ok, rep.violations
    if ok:
        assert rep.latencies == pytest.approx({"a": 3.0, "b": 2.0 - arrival})
    else:
        assert any("before its arrival" in v for v in rep.violations), rep.violations


@pytest.mark.parametrize("resume,why", [(5.0, None), (6.0, "iteration 1: the idle worker resumes at"),
                                        (5.0 + 1e-6, "iteration 1: the idle worker resumes at"),
                                        (4.0, "before its arrival")])
def test_an_idle_worker_resumes_only_at_an_arrival(resume, why):
    """``a`` arrives at 0 and completes at 1 s; ``b`` arrives at 5 s and ``c`` at 10 s (all o = 1).
    Between them the worker is idle, so the batch of ``b`` must start at 5 s exactly: 6 s (no arrival,
    though one is still to come at 10 s) and 4 s (before ``b`` is there) are wrong.

    Breakage caught: ``llmopt/verify/timed.py`` ``if not (j < arrival_set.size and
    _close(float(arrival_set[j]), float(bs[k]))):`` → ``if j >= arrival_set.size:`` (an idle worker
    may resume at any time before the last arrival).
    """
    inst = TimedInstance(10, (TimedRequest("a", 0.0, 1, 1), TimedRequest("b", 5.0, 1, 1),
                              TimedRequest("c", 10.0, 1, 1)))
    rep = _check(inst, {"a": 0, "b": 1, "c": 2}, [0.0, resume, 10.0])
    assert rep.ok is (why is None), rep.violations
    if why is None:
        assert rep.latencies == {"a": 1.0, "b": 1.0, "c": 1.0} and rep.mean_latency == 1.0
    else:
        assert len(rep.violations) == 1 and why in rep.violations[0], rep.violations

