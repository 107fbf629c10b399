"""The continuous-time checker (llmopt.verify.timed) on the first batch's clock.

DESIGN §2: the next epoch is the batch's end, or the next arrival if the worker is idle — so the
worker, idle before anything arrives, starts its first batch exactly at the first arrival. A first
batch that starts later (or earlier) is a clock the engine cannot produce. Every batch here takes 1 s
(:class:`~llmopt.engine.cost_model.ConstantCostModel`), so only the clock can be wrong.
"""

from __future__ import annotations

import pytest

from llmopt.engine.cost_model import ConstantCostModel
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.verify.timed import check_timed_schedule

ONE_SECOND = ConstantCostModel(1.0)


def _is_late_first_batch(message: str, start: float, arrival: float) -> bool:
    """Whether ``message`` is the checker's first-batch clock violation for these times (the start may be
    printed as a numpy scalar's repr, ``np.float64(2.0)``, or as a plain float)."""
    head = "the first batch starts at "
    tail = f" s, not at the first arrival {arrival!r} s"
    if not (message.startswith(head) and message.endswith(tail)):
        return False
    shown = message[len(head):-len(tail)]
    return shown in (repr(start), f"np.float64({start!r})")


@pytest.mark.parametrize("first_start", [1.0 + 1e-6, 1.5, 2.0, 100.0])
def test_a_first_batch_that_starts_after_the_first_arrival_is_refused(first_start):
    """``a`` (s = 1, o = 2) arrives at 1.0 s and runs in the first two batches. Started at 1.0 s the
    run is valid (latency 2 s); started any later the worker sat idle with work waiting, so the run
    is refused with one violation that names the clock — never accepted with a longer latency.

    Breakage caught: mutant timed-first-batch-late (``if not _close(float(bs[0]), first):`` →
    ``if float(bs[0]) < first and not _close(...)``, only an early first batch refused).
    """
    inst = TimedInstance(10, (TimedRequest("a", 1.0, 1, 2),))
    good = check_timed_schedule(inst, {"a": 0}, [1.0, 2.0], [1.0, 1.0], ONE_SECOND)
    assert good.ok and good.latencies == {"a": 2.0} and good.mean_latency == 2.0
    rep = check_timed_schedule(inst, {"a": 0}, [first_start, first_start + 1.0], [1.0, 1.0], ONE_SECOND)
    assert not rep.ok and rep.latencies is None and rep.mean_latency is None
    assert len(rep.violations) == 1, rep.violations
    assert _is_late_first_batch(rep.violations[0], first_start, 1.0), rep.violations


def test_the_first_batch_starts_at_the_earliest_arrival_not_the_first_listed():
    """Requests listed out of arrival order: ``b`` (3.0 s) is listed before ``a`` (2.0 s). The first
    batch must start at 2.0 s; one that starts at 3.0 s (when ``b`` arrives, ``a`` waiting since 2.0 s)
    is refused, though every request had arrived by its batch.

    Breakage caught: mutant timed-first-batch-late (``if not _close(float(bs[0]), first):`` →
    ``if float(bs[0]) < first and not _close(...)``).
    """
    inst = TimedInstance(10, (TimedRequest("b", 3.0, 1, 1), TimedRequest("a", 2.0, 1, 1)))
    good = check_timed_schedule(inst, {"a": 0, "b": 1}, [2.0, 3.0], [1.0, 1.0], ONE_SECOND)
    assert good.ok and good.latencies == {"a": 1.0, "b": 1.0}
    late = check_timed_schedule(inst, {"a": 0, "b": 0}, [3.0], [1.0], ONE_SECOND)
    assert not late.ok
    assert len(late.violations) == 1 and _is_late_first_batch(late.violations[0], 3.0, 2.0), late.violations
