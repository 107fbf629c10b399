"""The engine core (:class:`llmopt.engine.core.Worker`) on its own, traced by hand.

The engines' loops are tested end to end elsewhere (tests/engine/test_simulator.py,
tests/engine/test_continuous.py, ...); here the worker is driven step by step and every piece of
its state is checked against a hand computation, so a slip in the bookkeeping (the
``base`` aggregate, the stale heap entries, the loop guard's count) fails here by name.
"""

from __future__ import annotations

from typing import Any

import pytest

from llmopt.engine.core import (
    Decision,
    EvictionLoopError,
    HiddenOutputError,
    RequestView,
    SimulationError,
    Visibility,
    Worker,
)
from llmopt.model.instance import Instance
from llmopt.model.schedule import Eviction

#: r0 = (a 0, s 2, o 3), r1 = (a 0, s 3, o 2), r2 = (a 1, s 1, o 4)
INSTANCE = Instance.from_tuples(12, [(0, 2, 3), (0, 3, 2), (1, 1, 4)])
ORDER = [0, 1, 2]


class Script:
    """An event-driven policy that plays a fixed plan ``{t: Decision}`` and logs its hooks."""

    name = "script"

    def __init__(self, plan: dict[int, Decision] | None = None, visibility: Visibility | None = None) -> None:
        self.plan = plan or {}
        self.log: list[tuple[Any, ...]] = []
        self.views: dict[str, RequestView] = {}
        if visibility is not None:
            self.visibility = visibility

    def reset(self, M: int) -> None:
        self.log.append(("reset", M))

    def on_arrival(self, t: int, request: RequestView) -> None:
        self.views[request.id] = request
        self.log.append(("arrive", t, request.id))

    def on_complete(self, t: int, request: RequestView) -> None:
        self.log.append(("complete", t, request.id, request.output))

    def decide(self, t: int) -> Decision:
        return self.plan.get(t, Decision())


def usage(w: Worker, tau: int) -> int:
    """KV tokens held at clock ``tau`` if the running set stays as it is."""
    return w.base + tau * len(w.running)


def test_hand_traced_run_with_an_eviction() -> None:
    plan = {0: Decision(start=("r0", "r1")), 1: Decision(start=("r2",), evict=("r0",)), 2: Decision(start=("r0",))}
    policy = Script(plan)
    w = Worker(INSTANCE.requests, INSTANCE.M, policy)
    assert policy.log == [("reset", 12)]

    # t = 0: r0 and r1 arrive (r2 not yet) and both start
    assert w.arrive_due(0, ORDER, 0, 0) == 2
    assert w.waiting == {0, 1}
    assert w.decide(0) is None
    assert w.running == {0: 0, 1: 0} and not w.waiting
    assert w.base == (2 - 0) + (3 - 0)
    assert usage(w, 1) == (2 + 1) + (3 + 1)
    assert w.prefill() == (2, 2 + 3, 2 * 2 + 3 * 3, 2, 2 + 3)  # no chunks: the starts are the whole prefill
    assert w.next_completion() == 2  # r1: 0 + 2

    # t = 1: r2 arrives; r0 is evicted (1 token lost) and r2 starts
    assert w.complete(1) == 0
    assert w.arrive_due(1, ORDER, 2, 1) == 3
    w.decide(1)
    assert w.evictions == [Eviction(1, "r0", 1)]
    assert w.runs == [(0, 1, 2)]
    assert w.waiting == {0} and w.running == {1: 0, 2: 1}
    assert w.base == (3 - 0) + (1 - 1)  # r0's (2 − 0) left the aggregate
    assert usage(w, 2) == (3 + 2) + (1 + 1)
    assert w.prefill() == (1, 1, 1, 1, 1)
    # the decode part of the batch of t = 1, as the continuous engine derives it: r1, with 3 + 1 tokens of context
    _, _, _, n_started, started_prompts = w.prefill()
    count = len(w.running)
    assert (count - n_started, w.base - started_prompts + 1 * count) == (1, 3 + 1)
    assert w.since_completion == 1

    # t = 2: r1 completes; r0 starts again
    assert w.complete(2) == 1
    assert (w.starts[1], w.ends[1], w.done, w.completed) == (0, 2, 1, [1])
    assert w.since_completion == 0
    assert w.base == 1 - 1
    assert usage(w, 3) == 1 + 2
    w.decide(2)
    assert w.running == {2: 1, 0: 2}
    assert usage(w, 3) == (1 + 2) + (2 + 1)
    # r0's first run left a stale heap entry (3, 0); the next completion is 5, not 3
    assert (3, 0) in w.heap
    assert w.next_completion() == 5
    assert (3, 0) not in w.heap

    # t = 5: r0 and r2 complete together, in heap order
    assert w.complete(5) == 2
    assert (w.starts, w.ends, w.completed, w.done) == ([2, 0, 1], [5, 2, 5], [1, 0, 2], 3)
    assert not w.running and w.base == 0
    assert w.runs == [(0, 1, 2), (0, 2, 3), (2, 5, 2), (1, 5, 1)]
    assert w.next_completion() is None
    assert policy.log == [("reset", 12), ("arrive", 0, "r0"), ("arrive", 0, "r1"), ("arrive", 1, "r2"),
                          ("complete", 2, "r1", 2), ("complete", 5, "r0", 3), ("complete", 5, "r2", 4)]


def test_loop_guard_fires_at_loop_limit_plus_one_evictions() -> None:
    again = Decision(start=("r0",), evict=("r0",))  # evicted and restarted in one decision: 1 token lost
    policy = Script({0: Decision(start=("r0",)), **{t: again for t in range(1, 10)}})
    w = Worker(INSTANCE.requests, INSTANCE.M, policy, loop_limit=3, partial=lambda worker: len(worker.runs))
    w.arrive(0, 0)
    for t in range(4):  # 3 evictions: at the limit, not past it
        w.decide(t)
    assert w.since_completion == 3
    with pytest.raises(EvictionLoopError) as info:
        w.decide(4)
    err = info.value
    assert str(err) == ("step 4: policy 'script' is in an eviction loop: 4 evictions with no completion (limit 3); "
                        "0/3 requests done, 4 tokens recomputed")
    assert (err.t, err.evictions, err.completed, err.recomputed_tokens, err.partial) == (4, 4, 0, 4, 4)


def test_a_completion_resets_the_loop_guard() -> None:
    again = Decision(start=("r1",), evict=("r1",))
    plan = {0: Decision(start=("r0", "r1")), **{t: again for t in range(1, 7)}}
    w = Worker(INSTANCE.requests, INSTANCE.M, Script(plan), loop_limit=3, unit="iteration")
    w.arrive_due(0, ORDER, 0, 0)
    for t in range(6):  # r0 completes at 3, between the 2nd and the 3rd eviction of r1
        w.complete(t)
        w.decide(t)
    assert w.done == 1 and w.since_completion == 3 and len(w.evictions) == 5
    with pytest.raises(EvictionLoopError, match=r"^iteration 6 \(t = 2\.500 s\): policy 'script' is in an eviction "
                       r"loop: 4 evictions with no completion \(limit 3\); 1/3 requests done, 6 tokens recomputed$"):
        w.decide(6, 2.5)


def test_the_policy_breaking_the_model_is_named() -> None:
    w = Worker(INSTANCE.requests, INSTANCE.M, Script({0: Decision(evict=("r0",))}), unit="iteration")
    w.arrive(0, 0)
    with pytest.raises(SimulationError, match=r"^iteration 0: policy 'script' evicts 'r0', which is not running$"):
        w.decide(0)
    w = Worker(INSTANCE.requests, INSTANCE.M, Script({0: Decision(start=("r2",))}))
    w.arrive(0, 0)
    with pytest.raises(SimulationError, match=r"^step 0: policy 'script' starts 'r2', which is not waiting$"):
        w.decide(0)
    w = Worker(INSTANCE.requests, INSTANCE.M, Script({3: Decision(wake_at=3)}))
    with pytest.raises(SimulationError, match=r"^step 3: policy 'script' asks to be woken at 3, which is not after 3$"):
        w.decide(3)


def test_hidden_output_is_revealed_at_completion() -> None:
    policy = Script({0: Decision(start=("r1",))}, visibility=Visibility.HIDDEN)
    w = Worker(INSTANCE.requests, INSTANCE.M, policy)
    w.arrive_due(0, ORDER, 0, 0)
    view = policy.views["r1"]
    with pytest.raises(HiddenOutputError):
        _ = view.output
    w.decide(0)
    w.complete(2)
    assert view.output == 2


def test_workers_are_independent() -> None:
    """Several workers over one instance: a router sends each request to one of them."""
    a = Worker(INSTANCE.requests, 5, Script({0: Decision(start=("r0",))}))
    b = Worker(INSTANCE.requests, 7, Script({0: Decision(start=("r1",)), 1: Decision(start=("r2",))}))
    a.arrive(0, 0)
    b.arrive(0, 1)
    a.decide(0)
    b.decide(0)
    b.arrive(1, 2)
    b.decide(1)
    assert (a.running, b.running) == ({0: 0}, {1: 0, 2: 1})
    assert (a.base, b.base) == (2, 3)
    assert (a.next_completion(), b.next_completion()) == (3, 2)
    assert (b.complete(2), a.complete(2)) == (1, 0)
    assert (a.done, b.done, a.views[1], b.views[0]) == (0, 1, None, None)
