"""Pausable clocks of one worker in a cluster (used by :mod:`llmopt.engine.cluster`).

A cluster worker is the engine core's :class:`~llmopt.engine.core.Worker` — running set, completion
heap, evictions, loop guard, the policy's view — driven by a clock that can stop between events,
because a router may look at the worker, or hand it a request, at any arrival instant:

* :meth:`_Clock.advance` ``(T)`` runs every event before the instant ``T`` and the completions at
  ``T``; the decision at ``T`` waits for every request arriving at ``T``;
* :meth:`_Clock.deliver` ``(i, a)`` makes request ``i`` (arriving at ``a``) this worker's;
* :meth:`_Clock.finish` runs to the end once no more requests will come.

:class:`DiscreteClock` takes the steps of :func:`llmopt.engine.discrete.simulate` and
:class:`ContinuousClock` those of :func:`llmopt.engine.continuous.simulate_continuous`, in the same
order, with the same memory checks, caps and error messages (prefixed ``worker w:`` in a cluster of
more than one): with one worker and every request delivered to it they give the single-worker
schedules exactly (``tests/engine/test_cluster.py``). The single-worker loops are not written over
these clocks: a pausable loop keeps its state on an object and returns at every instant asked, which
the core's docstring ("Why two loops, not one") measured at 3–22 % more instructions for one worker;
``benchmarks/cluster_speed.py`` measures the K = 1 cluster against them.

Two differences of bookkeeping, neither visible in a schedule: a discrete worker checks the memory
of a move ``t → t_next`` when it makes the move (a request delivered meanwhile can shorten it), and
an idle continuous worker waits for its next request instead of reading the next arrival of the
instance (it cannot know which worker that request will go to).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llmopt.engine.core import SimulationError, Worker

__all__ = ["DiscreteClock", "ContinuousClock"]

_NO_PREFILL = (0, 0, 0, 0, 0)
_INF = float("inf")
# phases of a clock at its current event
_NEW = 0  # reached; completions not yet done
_COMPLETED = 1  # completions done; arrivals and decision pending
_DECIDED = 2  # decided (discrete clock): waiting for the next event


class _Notify:
    """Reports a worker's starts and ends (completions, evictions) to a router's hooks."""

    __slots__ = ("index", "on_start", "on_finish")

    def __init__(self, index: int, router: Any) -> None:
        self.index = index
        self.on_start = getattr(router, "on_start", None)
        self.on_finish = getattr(router, "on_finish", None)

    def completed(self, w: Worker, since: int, t: int) -> None:
        if self.on_finish is not None:
            views = w.views
            for i in w.completed[since:]:
                self.on_finish(self.index, t, views[i])

    def decided(self, w: Worker, evictions_before: int, t: int) -> None:
        views, index = w.views, w.index
        if self.on_finish is not None:
            for e in w.evictions[evictions_before:]:
                self.on_finish(self.index, t, views[index[e.id]])
        if self.on_start is not None:
            for rid in w.started:
                self.on_start(self.index, t, views[index[rid]])


class _Clock:
    """What both clocks share: the worker, the requests routed to it, and the lazy-advance marker."""

    __slots__ = ("w", "order", "arrivals", "nxt", "phase", "synced", "notify", "wake", "index")

    def __init__(self, worker: Worker, index: int | None, notify: _Notify | None) -> None:
        self.w = worker
        self.index = index  # named in error messages; None for a single worker (its messages stay as they are)
        self.order: list[int] = []  # positions routed here, in arrival order
        self.arrivals: list[Any] = []  # their arrivals
        self.nxt = 0  # how many of them the worker has been handed
        self.phase = _DECIDED
        self.synced: float | None = None  # the instant advance() last brought the worker to
        self.notify = notify
        self.wake: int | None = None

    def pending(self) -> int:
        """Requests routed here that the worker has not been handed yet."""
        return len(self.order) - self.nxt

    def advance(self, T: float) -> None:
        """Run every event before instant ``T`` and the completions at ``T``."""
        raise NotImplementedError

    def deliver(self, i: int, a: Any) -> None:
        """Request ``i`` (arrival ``a``) is routed here; call after :meth:`advance` ``(a)``."""
        self.order.append(i)
        self.arrivals.append(a)

    def finish(self) -> None:
        """Run to the end: no more requests will be routed here (the single-worker engines' stall error
        if requests still wait while nothing runs)."""
        self.advance(_INF)
        w = self.w
        if w.waiting:
            raise _tagged(SimulationError(
                f"{self._position()}: policy {w.name!r} made no progress: {len(w.waiting)} request(s) wait, "
                f"nothing runs and {self._STALLED}"), self.index)

    #: The end of the stall message (each clock's single-worker engine words it its own way).
    _STALLED = ""

    def _position(self) -> str:
        """``"step t"`` or ``"iteration k"``: where the clock stands, for error messages."""
        raise NotImplementedError


class DiscreteClock(_Clock):
    """One worker's discrete clock (DESIGN §1), pausable; the steps of :func:`llmopt.engine.discrete.simulate`."""

    __slots__ = ("t", "t_next", "max_steps")

    def __init__(self, worker: Worker, index: int | None, notify: _Notify | None, max_steps: int) -> None:
        super().__init__(worker, index, notify)
        self.t = 0
        self.t_next: int | None = None  # the next completion or wake-up (arrivals come from self.arrivals)
        self.max_steps = max_steps

    def advance(self, T: float) -> None:
        try:
            self._advance(T)
        except SimulationError as exc:
            raise _tagged(exc, self.index) from None

    def _advance(self, T: float) -> None:
        # the state lives in locals while the loop runs (see llmopt.engine.core, "Speed"); written back on return
        w = self.w
        notify = self.notify
        order, arrivals = self.order, self.arrivals
        routed = len(order)  # nothing is delivered while the worker advances
        nxt, t, phase, t_next = self.nxt, self.t, self.phase, self.t_next
        while True:  # not `while cond` (see llmopt.engine.core, "Speed")
            if phase == _DECIDED:
                te = t_next
                if nxt < routed:
                    a = arrivals[nxt]
                    if te is None or a < te:
                        te = a
                if te is None or te > T:
                    break
                # the move t -> te: the running set is the same on (t, te], its usage linear
                k = len(w.running)
                held = w.held  # partial prefills (chunked prefill)
                if k or held:
                    base, M = w.base, w.M
                    if base + te * k + held > M:
                        tau = max(t + 1, (M - base - held) // k + 1) if k else t + 1
                        raise SimulationError(f"step {tau - 1}: policy {w.name!r} overflows memory at time {tau}: "
                                              f"{base + tau * k + held} > M = {M}")
                    if w.limits.block_size > 1:
                        _check_blocks(w, t, te)
                if te > self.max_steps:
                    if w.since_completion:
                        raise w.loop_error(t, f"step {t}", f"the clock passed its cap of {self.max_steps} "
                                           f"steps with {w.since_completion} evictions since the last completion")
                    raise SimulationError(f"policy {w.name!r} made no progress by step {self.max_steps}")
                t = te
                phase = _NEW
            if phase == _NEW:
                heap = w.heap
                if heap and heap[0][0] == t:
                    done = len(w.completed)
                    w.complete(t)
                    if notify is not None:
                        notify.completed(w, done, t)
                phase = _COMPLETED
            if t >= T:  # the decision at T waits for every arrival at T
                break
            if nxt < routed and arrivals[nxt] <= t:
                nxt = w.arrive_due(t, order, nxt, t)
            if w.waiting or w.running:
                evicted = len(w.evictions)
                wake = self.wake = w.decide(t)
                if notify is not None:
                    notify.decided(w, evicted, t)
            else:
                wake = self.wake = None
            t_next = w.next_completion()
            if wake is not None and (t_next is None or wake < t_next):
                t_next = wake
            phase = _DECIDED
        self.nxt, self.t, self.phase, self.t_next = nxt, t, phase, t_next
        self.synced = T

    _STALLED = "it asked for no wake-up"

    def _position(self) -> str:
        return f"step {self.t}"

    def kv_in_use(self, T: float) -> int:
        """KV tokens in use at the instant ``T`` (after :meth:`advance` ``(T)``)."""
        w = self.w
        return w.base + int(T) * len(w.running)

    def decision_clock(self, T: float) -> int:
        """The step of the next decision that could start a request arriving at ``T``: ``T``."""
        return int(T)


class ContinuousClock(_Clock):
    """One worker's continuous clock (DESIGN §2), pausable; the steps of
    :func:`llmopt.engine.continuous.simulate_continuous`."""

    __slots__ = ("k", "now", "event", "idle", "b_start", "b_dur", "stalls", "batch_time", "cost_name",
                 "max_iterations")

    def __init__(self, worker: Worker, index: int | None, notify: _Notify | None, batch_time: Callable[..., float],
                 cost_name: str, max_iterations: int, b_start: list[float], b_dur: list[float],
                 stalls: dict[int, int]) -> None:
        super().__init__(worker, index, notify)
        self.k = 0
        self.now = 0.0
        self.event = False
        self.idle = True  # nothing to do until a request is delivered
        self.phase = _NEW
        self.b_start, self.b_dur, self.stalls = b_start, b_dur, stalls
        self.batch_time = batch_time
        self.cost_name = cost_name
        self.max_iterations = max_iterations

    def deliver(self, i: int, a: Any) -> None:
        self.order.append(i)
        self.arrivals.append(a)
        if self.idle:  # an idle worker jumps to the arrival (one worker: `now = max(now, arrival)`)
            if a > self.now:
                self.now = a
            self.idle = False
            self.phase = _NEW

    def advance(self, T: float) -> None:
        try:
            self._advance(T)
        except SimulationError as exc:
            raise _tagged(exc, self.index) from None

    def _advance(self, T: float) -> None:
        # the state lives in locals while the loop runs (see llmopt.engine.core, "Speed"); written back on return
        if self.idle:
            self.synced = T
            return
        w = self.w
        notify = self.notify
        running, waiting, heap = w.running, w.waiting, w.heap
        complete, decide, prefill = w.complete, w.decide, w.prefill
        batch_time = self.batch_time
        b_start, b_dur = self.b_start, self.b_dur
        order, arrivals = self.order, self.arrivals
        routed = len(order)  # nothing is delivered while the worker advances
        M, cap = w.M, self.max_iterations
        block = w.limits.block_size
        k, now, nxt, wake, phase, event = self.k, self.now, self.nxt, self.wake, self.phase, self.event
        held = w.held  # KV tokens of partial prefills (chunked prefill); changes only at decisions
        while True:  # not `while cond` (see llmopt.engine.core, "Speed")
            if phase == _NEW:
                if now > T:  # in the middle of a batch at T
                    break
                # 1. completions: the batch of iteration k − 1 produced their last token
                event = False
                if heap and heap[0][0] == k:
                    done = len(w.completed)
                    event = complete(k) > 0
                    if notify is not None:
                        notify.completed(w, done, k)
                phase = _COMPLETED
            if now >= T:  # the decision at T waits for every arrival at T
                break
            # 2. arrivals by now
            if nxt < routed and arrivals[nxt] <= now:
                nxt = w.arrive_due(k, order, nxt, now)
                event = True
            if not running and not waiting:
                self.idle = True
                break
            # 3. the policy decides
            if event or (wake is not None and wake <= k):
                count, base = len(running), w.base
                evicted = len(w.evictions)
                wake = decide(k, now)
                if notify is not None:
                    notify.decided(w, evicted, k)
                new_n, new_tokens, new_sq, n_new, s_new = prefill() if w.started or w.chunked else _NO_PREFILL
                held = w.held
                if w.stall:
                    if not count:
                        raise SimulationError(f"iteration {k}: policy {w.name!r} stalls with nothing running")
                    now += w.stall * batch_time(0, 0, 0, count, base + k * count)
                    self.stalls[k] = w.stall
            else:
                new_n = new_tokens = new_sq = n_new = s_new = 0
            # 4. the batch: the prefills, and one decode token for every request that ran before
            count = len(running)
            if not count and not new_n:  # requests wait, nothing runs: idle until the next request routed here
                self.idle = True
                break
            base = w.base
            if base + (k + 1) * count + held > M:
                raise SimulationError(f"iteration {k}: policy {w.name!r} overflows memory: "
                                      f"{base + (k + 1) * count + held} > M = {M} after the batch")
            if block > 1 and w.blocks_at(k + 1) > M // block:
                raise SimulationError(f"iteration {k}: policy {w.name!r} overflows memory: {w.blocks_at(k + 1)} "
                                      f"blocks of {block} > M // block_size = {M // block} after the batch")
            dur = batch_time(new_n, new_tokens, new_sq, count - n_new, base - s_new + k * count)
            if not dur > 0:
                raise SimulationError(f"iteration {k}: cost model {self.cost_name!r} gives batch time {dur!r}")
            b_start.append(now)
            b_dur.append(dur)
            now += dur
            k += 1
            phase = _NEW
            if k > cap:
                if w.since_completion:
                    raise w.loop_error(k, f"iteration {k}", f"{k} iterations (the cap) with {w.since_completion} "
                                       "evictions since the last completion",
                                       partial=w.partial(w) if w.partial else None)
                raise SimulationError(f"policy {w.name!r} made no progress by iteration {cap}")
        self.k, self.now, self.nxt, self.wake, self.phase, self.event = k, now, nxt, wake, phase, event
        self.synced = T

    _STALLED = "no request is left to arrive"

    def _position(self) -> str:
        return f"iteration {self.k}"

    def kv_in_use(self, T: float) -> int:
        """KV tokens in use after the worker's latest batch (the one in flight at ``T``)."""
        w = self.w
        return w.base + self.k * len(w.running)

    def decision_clock(self, T: float) -> int:
        """The iteration of the worker's next decision."""
        return self.k


def _check_blocks(w: Worker, t: int, te: int) -> None:
    """The block count of a discrete worker's move ``t → te`` (blocks never fall on ``(t, te]``: bisect for
    the first time over ``M // block_size``), as :func:`llmopt.engine.discrete.simulate` checks it."""
    b = w.limits.block_size
    cap = w.M // b
    if w.blocks_at(te) <= cap:
        return
    lo, hi = t + 1, te
    while lo < hi:
        mid = (lo + hi) // 2
        if w.blocks_at(mid) > cap:
            hi = mid
        else:
            lo = mid + 1
    raise SimulationError(f"step {lo - 1}: policy {w.name!r} overflows memory at time {lo}: "
                          f"{w.blocks_at(lo)} blocks of {b} > M // block_size = {cap}")


def _tagged(exc: SimulationError, index: int | None) -> SimulationError:
    """``exc`` with ``worker <index>: `` in front of its message (once; not for a single worker, whose
    messages are the single-worker engine's); same type and attributes."""
    if index is None:
        return exc
    msg = str(exc.args[0]) if exc.args else ""
    if not msg.startswith("worker "):
        exc.args = (f"worker {index}: {msg}", *exc.args[1:])
    exc.worker = index  # type: ignore[attr-defined]
    return exc
