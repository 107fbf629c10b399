"""The discrete engine's guard against a policy that over-commits memory (llmopt.engine.discrete).

The engine jumps from event to event and checks the memory of the running set once per jump: the
usage ``base + τ·#running`` grows linearly on ``(t, t_next]``, so it peaks at the *next event*, not at
the next step. ``simulate`` documents its reaction: a :class:`SimulationError` when the policy
"overflows the memory", naming the step whose batch overflows and the first time memory exceeds
``M``. Here the policies start requests whose joint usage fits at ``t + 1`` and overflows only
later, before any completion — the case a check at ``t + 1`` alone lets through.
"""

from __future__ import annotations

import pytest

from llmopt.engine.core import Decision, RequestView, SimulationError
from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance


class OverCommit:
    """An event-driven policy that starts every waiting request at once, ignoring memory."""

    name = "over-commit"

    def __init__(self) -> None:
        self.waiting: list[str] = []

    def reset(self, M: int) -> None:
        self.waiting = []

    def on_arrival(self, t: int, request: RequestView) -> None:
        self.waiting.append(request.id)

    def on_complete(self, t: int, request: RequestView) -> None:
        pass

    def decide(self, t: int) -> Decision:
        start, self.waiting = tuple(self.waiting), []
        return Decision(start=start)


class OverCommitStep:
    """The same as a step policy (asked at every step)."""

    name = "over-commit-step"

    def decide(self, view):  # type: ignore[no-untyped-def]
        return Decision(start=tuple(w.id for w in view.waiting))


def _usage(rows: list[tuple[int, int, int]], start: int, tau: int) -> int:
    """DESIGN §1 usage at time ``tau`` of requests ``(a, s, o)`` all started at ``start``."""
    return sum(s + (tau - start) for _a, s, o in rows if start < tau <= start + o)


@pytest.mark.parametrize("origin", [0, 1_700_000_000])
def test_an_overflow_after_the_next_step_but_before_the_next_event_is_reported(origin):
    """Two requests (s = 3, o = 4) arrive together and start together with ``M = 10``: usage
    ``6 + 2τ`` is 8 at ``τ = 1``, 10 at 2, **12 at 3**, before their completion at 4 (the next
    event). The engine must stop with its overflow error at step 2 (time 3, usage 12) — with
    either clock origin — rather than return a schedule whose memory exceeds ``M``.

    Breakage caught: mutant discrete-memory-next-step-only (``if base + t_next * k > M:`` →
    ``if base + (t + 1) * k > M:``, memory checked at the next step only).
    """
    rows = [(origin, 3, 4), (origin, 3, 4)]
    inst = Instance.from_tuples(10, rows)
    assert [_usage(rows, origin, origin + d) for d in (1, 2, 3, 4)] == [8, 10, 12, 14]
    with pytest.raises(SimulationError) as err:
        simulate(inst, OverCommit())
    assert str(err.value) == (f"step {origin + 2}: policy 'over-commit' overflows memory at time {origin + 3}: "
                              "12 > M = 10")


def test_the_overflow_is_found_at_the_last_step_before_a_distant_completion():
    """Two requests (s = 1, o = 98) that each fit alone (peak 99 <= M = 100), started together: usage
    ``2 + 2τ`` first exceeds 100 at ``τ = 50``, 49 steps after the start and 48 before the completion
    at 98 (the next event). The error names step 49 and time 50 (usage 102).

    Breakage caught: mutant discrete-memory-next-step-only (``if base + t_next * k > M:`` →
    ``if base + (t + 1) * k > M:``).
    """
    inst = Instance.from_tuples(100, [(0, 1, 98), (0, 1, 98)])
    with pytest.raises(SimulationError, match=r"^step 49: policy 'over-commit' overflows memory at time 50: "
                                              r"102 > M = 100$"):
        simulate(inst, OverCommit())


def test_a_step_policy_and_an_event_policy_get_the_same_overflow_error():
    """A step policy is asked at every step, so its memory is checked step by step; the event policy's
    one jump to the completion must find the same first overflow (step 2, time 3).

    Breakage caught: mutant discrete-memory-next-step-only (``if base + t_next * k > M:`` →
    ``if base + (t + 1) * k > M:``; the step policy still fails, the event policy runs on).
    """
    inst = Instance.from_tuples(10, [(0, 3, 4), (0, 3, 4)])
    messages = []
    for policy in (OverCommitStep(), OverCommit()):
        with pytest.raises(SimulationError) as err:
            simulate(inst, policy)
        messages.append(str(err.value).replace(policy.name, "P"))
    assert messages == ["step 2: policy 'P' overflows memory at time 3: 12 > M = 10"] * 2


def test_a_peak_of_exactly_m_at_the_next_event_is_no_overflow():
    """The edge from the other side: usage ``4 + 2τ`` (s = 2, o = 3, twice) peaks at exactly ``M = 10``
    at the completion time 3; the run is valid and completes both at 3 (TEL 6)."""
    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 2, 3)])
    sched = simulate(inst, OverCommit())
    assert sched.starts == {"r0": 0, "r1": 0} and sched.tel == 6
