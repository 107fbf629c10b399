"""Continuous-time engine (DESIGN §2): batches last what the cost model says.

The worker runs *iterations* (batches). At each decision epoch — the end of the previous
batch, or, when the worker is idle, the next arrival — the engine, in this order:

1. completes the requests whose last token was produced in the batch that just ended
   (``policy.on_complete``); their completion time is that batch's end, in seconds;
2. delivers the requests that arrived by now (``policy.on_arrival``, in arrival order;
   ``request.arrival`` is in seconds);
3. asks ``policy.decide(k)`` — ``k`` is the iteration index — when something happened
   (an arrival, a completion) or the policy asked to be woken at iteration ``k``;
   the :class:`~llmopt.engine.discrete.Decision` evicts and starts requests exactly as in the
   discrete engine;
4. runs the batch: the started requests' prompts (prefill) and one token for every
   running request, for ``d = cost_model(batch)`` seconds, and checks the memory after it.
   With chunked prefill (:attr:`~llmopt.engine.core.Decision.chunk`, e.g. ``sarathi``) the batch
   holds prompt chunks instead: a partial chunk of a waiting request, and for a start after
   chunks only the rest of its prompt (:meth:`~llmopt.engine.core.Worker.prefill` gives the
   shape); the prefilled tokens count in the memory.
   A decision with a ``stall`` (clearing passes that cost time) first loses ``stall`` times
   the duration of a decode batch of the requests that ran when the decision began: the
   batch starts that much later, and :attr:`TimedSchedule.stalls` records it.
   A *paused* iteration (:attr:`~llmopt.engine.core.Decision.prefill_only`, vLLM v0's
   prefill-priority batches) holds only the new starts' prefills and is timed as such (the cost
   model's batch time with no decode requests); the requests that ran before keep their tokens and
   complete one iteration later. :attr:`TimedSchedule.paused` records the paused iterations.

The policies are those of the discrete engine, unchanged: the policy's clock ``t`` counts
iterations, and each iteration adds one token to every running request whatever its
wall-clock length, so the look-ahead check (5) is run in iteration units (J L378,
DIGEST §0). An idle worker runs no batch: iterations are batches, so the iteration
counter stops while nothing runs, and the clock jumps to the next arrival.

Eviction: an evicted request loses its tokens and memory and returns to the waiting
queue; the lost tokens are *recomputed tokens* (:attr:`TimedSchedule.recomputed_tokens`).
A policy that keeps evicting with nothing completing is stopped by the loop guard
(``loop_limit`` evictions with no completion in between) with an
:class:`~llmopt.engine.discrete.EvictionLoopError` that carries the partial schedule (memory
over time included, for plots such as J0 Figure 7).

Cost per iteration: ``O(1)`` arithmetic for the batch shape and the memory (running
aggregates ``Σ (s_j − p_j)`` and ``#running``, as in the discrete engine), one call to
the cost model, and heap operations for the events; the policy's own work happens only
at events. With KV blocks (``block_size > 1``) the block check is one comparison with the first
iteration whose blocks would overflow, computed once per decision in ``O(block_size)``
(:meth:`~llmopt.engine.core.Worker.block_overflow`). A paused iteration costs ``O(1)`` too: runs
count in decode iterations (``k − shift``, ``shift`` the paused iterations so far; see
:class:`~llmopt.engine.core.Worker`, "Paused iterations"). The bookkeeping of steps 1–3 is the engine core's
(:class:`llmopt.engine.core.Worker`, shared with the discrete engine); this module keeps
the clock: iterations, seconds, and the batch of step 4.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from llmopt.engine.core import DEFAULT_LOOP_LIMIT, SimulationError, Visibility, Worker
from llmopt.model.schedule import BatchLimits, MemoryTrace
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.model.timed_schedule import TimedSchedule

__all__ = ["simulate_continuous", "batch_time_function"]

_NO_PREFILL = (0, 0, 0, 0, 0)  # the prefill of a batch that starts nothing
_NO_LIMITS = BatchLimits()


def batch_time_function(cost_model: Any) -> Any:
    """``f(prefill_requests, prefill_tokens, prefill_tokens_sq, decode_requests, decode_context) -> seconds``.

    Uses the model's fast ``time`` method when it has one, else ``batch_time(BatchShape)``.
    """
    fast = getattr(cost_model, "time", None)
    if callable(fast):
        return fast
    from llmopt.engine.cost_model import BatchShape

    def f(pr: int, pt: int, psq: int, dr: int, dc: int) -> float:
        return float(cost_model.batch_time(BatchShape(pr, pt, psq, dr, dc)))

    return f


def _timed_schedule(reqs: Sequence[TimedRequest], name: str, cost_name: str, b_start: list[float],
                    b_dur: list[float], stalls: dict[int, int], complete: bool, w: Worker,
                    limits: BatchLimits = _NO_LIMITS) -> TimedSchedule:
    """The :class:`TimedSchedule` of worker ``w`` so far (``complete=False``: a partial one)."""
    completions: dict[str, float] = {}
    latencies: dict[str, float] = {}
    for i in w.completed:  # completing at iteration c is completing at the end of the batch of iteration c − 1
        r, c = reqs[i], w.ends[i] - 1
        completions[r.id] = end = b_start[c] + b_dur[c]
        latencies[r.id] = end - r.arrival
    return TimedSchedule(
        policy=name, cost_model=cost_name, M=w.M,
        starts={reqs[i].id: w.starts[i] for i in sorted(w.completed)},  # instance order; O(completed), not O(n)
        evictions=tuple(w.evictions), completions=completions, latencies=latencies,
        batch_start=np.asarray(b_start, dtype=np.float64), batch_duration=np.asarray(b_dur, dtype=np.float64),
        memory=MemoryTrace(0, w.runs, w.paused), complete=complete, stalls=dict(stalls), limits=limits,
        chunks=tuple((t, reqs[i].id, c) for t, i, c in w.chunk_log),
        paused=tuple(w.paused), eviction_starts=tuple(w.eviction_starts) if w.paused else (),
    )


def simulate_continuous(
    instance: TimedInstance,
    policy: Any,
    cost_model: Any,
    *,
    visibility: Visibility | None = None,
    loop_limit: int = DEFAULT_LOOP_LIMIT,
    max_iterations: int | None = None,
    monitor: dict[str, Any] | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    block_size: int = 1,
) -> TimedSchedule:
    """Run ``policy`` on a continuous-time ``instance`` with batch times from ``cost_model``.

    Parameters
    ----------
    instance : TimedInstance
        Arrivals in seconds.
    policy : Policy or StepPolicy
        Any policy of :mod:`llmopt.policies` (same protocol as the discrete engine).
    cost_model : CostModel
        ``batch_time(BatchShape) -> seconds`` (see :mod:`llmopt.engine.cost_model`); a ``time``
        method taking the five shape numbers is used when present.
    visibility : Visibility, optional
        As in :func:`llmopt.engine.discrete.simulate` (default: the policy's own).
    loop_limit : int
        Evictions allowed with no completion in between (the loop guard).
    max_iterations : int, optional
        Safety cap; default ``10·Σo + 1000``.
    monitor : dict, optional
        Receives the running :class:`~llmopt.engine.core.Worker` under ``"worker"`` before the loop
        starts, so that another thread can show progress (``worker.done`` requests completed)
        without any work inside the loop.
    max_num_seqs, max_num_batched_tokens, block_size : int, optional
        Batch limits and the KV block size, per iteration, as in
        :func:`llmopt.engine.discrete.simulate` (default: none, token-exact); the memory is
        checked in blocks after every batch when ``block_size > 1``.

    Returns
    -------
    TimedSchedule

    Raises
    ------
    SimulationError
        If the policy starts or evicts an unknown request, overflows the memory, leaves
        requests waiting with nothing running and nothing left to arrive, or runs past
        ``max_iterations``.
    EvictionLoopError
        If the loop guard stops the run (``.partial`` is the partial :class:`TimedSchedule`).
    """
    name = policy.name
    cost_name = str(getattr(cost_model, "name", type(cost_model).__name__))
    batch_time = batch_time_function(cost_model)
    reqs = instance.requests
    n, M = len(reqs), instance.M
    order = sorted(range(n), key=[r.arrival for r in reqs].__getitem__)  # stable: ties by position
    arrivals = [reqs[i].arrival for i in order]
    if max_iterations is None:
        max_iterations = 10 * instance.total_output + 1000
    b_start: list[float] = []
    b_dur: list[float] = []
    stalls: dict[int, int] = {}
    now = arrivals[0] if n else 0.0
    # a partial, not a closure: closing over the loop's variables would make them (slower) cells
    limits = BatchLimits(max_num_seqs, max_num_batched_tokens, block_size)
    record = functools.partial(_timed_schedule, reqs, name, cost_name, b_start, b_dur, stalls, limits=limits)
    w = Worker(reqs, M, policy, visibility=visibility, loop_limit=loop_limit, unit="iteration",
               partial=functools.partial(record, False), limits=limits, pausable=True)
    block = block_size > 1
    cap_blocks = M // block_size
    if monitor is not None:  # another thread may read monitor['worker'].done: no work in the loop
        monitor["worker"] = w
    heap, running, waiting = w.heap, w.running, w.waiting
    complete, arrive_due, decide, prefill = w.complete, w.arrive_due, w.decide, w.prefill
    wake: int | None = None
    k = nxt = 0
    pause = False
    held = 0  # KV tokens of partial prefills (chunked prefill); changes only at decisions
    shift = 0  # paused iterations so far (w.npaused): the worker counts runs in decode iterations k − shift
    over: int | float = float("inf")  # block_size > 1: the first clock whose blocks overflow, until a decision

    while True:  # not `while cond`: CPython 3.11 specialises a running loop only on an unconditional back jump
        # 1. completions: the batch of iteration k − 1 produced their last token
        event = False
        if heap and heap[0][0] == k - shift:
            event = complete(k) > 0
        if w.done == n:
            break
        # 2. arrivals by now (an idle worker first jumps to the next arrival)
        if nxt < n:
            if not running and not waiting and arrivals[nxt] > now:
                now = arrivals[nxt]
            if arrivals[nxt] <= now:
                nxt = arrive_due(k, order, nxt, now)
                event = True
        # 3. the policy decides
        if event or (wake is not None and wake <= k):
            count, base = len(running), w.base  # what ran when the decision began (a stall repeats its batch)
            wake = decide(k, now)
            new_n, new_tokens, new_sq, n_new, s_new = prefill() if w.started or w.chunked else _NO_PREFILL
            held = w.held
            pause = w.pause  # a prefill-only batch: the running requests wait (memory unchanged, checked below)
            shift = w.npaused
            if block:
                over = w.block_overflow(k + 1)
            if w.stall:
                if w.paused:
                    raise SimulationError(f"iteration {k}: policy {name!r} stalls in a run with prefill-only "
                                          "batches, which the engine does not combine")
                if not count:
                    raise SimulationError(f"iteration {k}: policy {name!r} stalls with nothing running")
                now += w.stall * batch_time(0, 0, 0, count, base + (k - shift) * count)
                stalls[k] = w.stall
        else:
            new_n = new_tokens = new_sq = n_new = s_new = 0
            pause = False
        # 4. the batch: the prefills, and one decode token for every request that ran before
        count = len(running)
        if not count and not new_n:
            if nxt < n:
                now = max(now, arrivals[nxt])  # idle until the next arrival
                continue
            raise SimulationError(
                f"iteration {k}: policy {name!r} made no progress: {len(waiting)} request(s) wait, nothing runs "
                "and no request is left to arrive"
            )
        base = w.base
        if base + (k + 1 - shift) * count + held > M:
            raise SimulationError(f"iteration {k}: policy {name!r} overflows memory: "
                                  f"{base + (k + 1 - shift) * count + held} > M = {M} after the batch")
        if block and k + 1 >= over:  # the running set changes only at decisions: no count per iteration
            raise SimulationError(f"iteration {k}: policy {name!r} overflows memory: {w.blocks_at(k + 1)} blocks "
                                  f"of {block_size} > M // block_size = {cap_blocks} after the batch")
        # decode context: base − s_new + (k − shift)·count = Σ_decoding (s_j + k − shift − p_j), as base counts
        # the new runs too (runs count in decode iterations, k − shift)
        if pause:
            dur = batch_time(new_n, new_tokens, new_sq, 0, 0)
        else:
            dur = batch_time(new_n, new_tokens, new_sq, count - n_new, base - s_new + (k - shift) * count)
        if not dur > 0:
            raise SimulationError(f"iteration {k}: cost model {cost_name!r} gives batch time {dur!r}")
        b_start.append(now)
        b_dur.append(dur)
        now += dur
        k += 1
        if k > max_iterations:
            if w.since_completion:
                raise w.loop_error(k, f"iteration {k}", f"{k} iterations (the cap) with {w.since_completion} "
                                   "evictions since the last completion", partial=record(False, w))
            raise SimulationError(f"policy {name!r} made no progress by iteration {max_iterations}")

    return record(True, w)
