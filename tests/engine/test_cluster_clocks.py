"""The memory checks of a cluster worker's pausable clocks (``llmopt/engine/cluster_clocks.py``).

The clocks repeat the single-worker loops' memory checks line for line, and the K = 1 equivalence
tests of ``test_cluster.py`` run policies that never overflow, so a wrong check there shows in no
schedule. A policy that starts whatever waits overflows on purpose; the overflow must be reported at
the same step / iteration, with the same message, as by the single-worker engines (prefixed ``worker w:``
with more than one worker).

Breakages tried by hand (each applied, the tests run, reverted; each fails):

* the discrete clock checking the memory at the next step only, not up to the next event
  (``base + te * k`` → ``base + (t + 1) * k``): the overflow at time 5 of a move 0 → 8 (1 → 8 on worker 1)
  goes unseen — ``test_discrete_overflow_between_events`` (with an event-driven policy only: a step
  policy is asked every step, and every move is one step);
* the continuous clock checking the memory before the batch instead of after it (``(k + 1)`` → ``k``):
  the batch of iteration 1 ends at 11 > 10 unseen — ``test_continuous_overflow_after_the_batch``.
"""

from __future__ import annotations

from cluster_helpers import simulate_cluster

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.core import Decision, SimulationError
from llmopt.engine.cost_model import ConstantCostModel
from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance
from llmopt.model.timed_instance import TimedInstance, TimedRequest

ONE_SECOND = ConstantCostModel(1.0)


class StartAll:
    """A step policy that starts whatever waits (it overflows small caches)."""

    name = "start-all"

    def decide(self, view):  # type: ignore[no-untyped-def]
        return Decision(start=tuple(r.id for r in view.waiting))


class StartAllOnEvents:
    """The same, event-driven: asked only at arrivals and completions (no wake-up), so the clock moves from
    one event to the next in a single step and checks the memory of the whole move."""

    name = "start-all"

    def reset(self, M: int) -> None:
        self.waiting: list[str] = []

    def on_arrival(self, t: int, request) -> None:  # type: ignore[no-untyped-def]
        self.waiting.append(request.id)

    def on_complete(self, t: int, request) -> None:  # type: ignore[no-untyped-def]
        pass

    def decide(self, t: int) -> Decision:
        start, self.waiting = tuple(self.waiting), []
        return Decision(start=start)


def error_of(fn, *args, **kw) -> tuple[str, int | None]:  # type: ignore[no-untyped-def]
    """The message and the ``worker`` attribute of the :class:`SimulationError` the run raises."""
    try:
        fn(*args, **kw)
    except SimulationError as exc:
        return str(exc), getattr(exc, "worker", None)
    raise AssertionError("the run did not overflow")


def test_discrete_overflow_between_events() -> None:
    # M = 12: two requests (s = 2, o = 8) start at 0 and hold 2 · (2 + t) = 4 + 2t at time t; the next
    # event is their completion at 8, and the usage passes 12 at time 5 (14), not at time 1 (6).
    # An event-driven policy, so that the clock moves 0 -> 8 in one step.
    inst = Instance.from_tuples(12, [(0, 2, 8), (0, 2, 8)])
    want = "step 4: policy 'start-all' overflows memory at time 5: 14 > M = 12"
    for policy in (StartAllOnEvents, StartAll):
        assert error_of(simulate, inst, policy()) == (want, None)
        assert error_of(simulate_cluster, inst, policy, "jsq", 1) == (want, None)
    # K = 2, round-robin: worker 1 gets r1 (start 0, 2 + t) and r3 (start 1, 2 + t − 1): 3 + 2t > 12 at 5
    two = Instance.from_tuples(12, [(0, 1, 1), (0, 2, 8), (1, 1, 1), (1, 2, 8), (1, 2, 8)])
    assert error_of(simulate_cluster, two, StartAllOnEvents, "round-robin", 2) == (
        "worker 1: step 4: policy 'start-all' overflows memory at time 5: 13 > M = 12", 1)


def test_continuous_overflow_after_the_batch() -> None:
    # M = 10, 1 s batches: r0 and r1 (s = 4, o = 2) start together; after the batch of iteration 0 they
    # hold 5 + 5 = 10, after iteration 1 6 + 6 = 12 > 10 (before it: 10, which fits).
    one = TimedInstance(10, (TimedRequest("r0", 0.0, 4, 2), TimedRequest("r1", 0.0, 4, 2)))
    want = "iteration 1: policy 'start-all' overflows memory: 12 > M = 10 after the batch"
    assert error_of(simulate_continuous, one, StartAll(), ONE_SECOND) == (want, None)
    assert error_of(simulate_cluster, one, StartAll, "jsq", 1, cost_model=ONE_SECOND) == (want, None)
    # K = 2, round-robin: worker 1 is idle until 0.5 s and runs r1 alone in its iteration 0 (0.5-1.5 s);
    # r3 (0.7 s) starts in its iteration 1, after which r1 holds 6 and r3 5: 11 > 10. Worker 0 (r0, r2,
    # s = 1) stays far below M; its clock is half a second ahead.
    two = TimedInstance(10, (TimedRequest("r0", 0.0, 1, 3), TimedRequest("r1", 0.5, 4, 2),
                             TimedRequest("r2", 0.6, 1, 3), TimedRequest("r3", 0.7, 4, 2)))
    assert error_of(simulate_cluster, two, StartAll, "round-robin", 2, cost_model=ONE_SECOND) == (
        "worker 1: iteration 1: policy 'start-all' overflows memory: 11 > M = 10 after the batch", 1)
