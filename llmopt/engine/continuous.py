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
at events.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from llmopt.engine.discrete import (
    DEFAULT_LOOP_LIMIT,
    RequestView,
    SimulationError,
    StepPolicyAdapter,
    Visibility,
    effective_visibility,
    eviction_loop_error,
    is_event_policy,
)
from llmopt.model.schedule import Eviction, MemoryTrace
from llmopt.model.timed_instance import TimedInstance
from llmopt.model.timed_schedule import TimedSchedule

__all__ = ["simulate_continuous", "batch_time_function"]


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


def simulate_continuous(
    instance: TimedInstance,
    policy: Any,
    cost_model: Any,
    *,
    visibility: Visibility | None = None,
    loop_limit: int = DEFAULT_LOOP_LIMIT,
    max_iterations: int | None = None,
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
    engine = policy if is_event_policy(policy) else StepPolicyAdapter(policy)
    name = policy.name
    cost_name = str(getattr(cost_model, "name", type(cost_model).__name__))
    batch_time = batch_time_function(cost_model)
    reqs = instance.requests
    n, M = len(reqs), instance.M
    order = sorted(range(n), key=lambda i: (reqs[i].arrival, i))
    if max_iterations is None:
        max_iterations = 10 * instance.total_output + 1000
    if hasattr(engine, "reset"):
        engine.reset(M)
    on_arrival = engine.on_arrival
    on_complete = getattr(engine, "on_complete", None)
    decide = engine.decide
    show = effective_visibility(policy, visibility) is Visibility.FULL
    index = {r.id: i for i, r in enumerate(reqs)}

    views: list[RequestView | None] = [None] * n
    waiting: set[int] = set()
    running: dict[int, int] = {}  # position -> start iteration of its current run
    completions_heap: list[tuple[int, int]] = []  # (completion iteration, position); stale after an eviction
    base = 0  # Σ_running (s_j − p_j): usage after iteration k is base + (k + 1)·#running
    starts: list[int] = [0] * n
    done_at: dict[str, float] = {}
    latency: dict[str, float] = {}
    evictions: list[Eviction] = []
    runs: list[tuple[int, int, int]] = []
    b_start: list[float] = []
    b_dur: list[float] = []
    done = nxt = 0
    since_completion = 0
    wake: int | None = None
    k = 0
    now = reqs[order[0]].arrival if n else 0.0

    def record(complete: bool) -> TimedSchedule:
        return TimedSchedule(
            policy=name, cost_model=cost_name, M=M,
            starts={reqs[i].id: starts[i] for i in range(n) if reqs[i].id in done_at},
            evictions=tuple(evictions), completions=dict(done_at), latencies=dict(latency),
            batch_start=np.asarray(b_start, dtype=np.float64), batch_duration=np.asarray(b_dur, dtype=np.float64),
            memory=MemoryTrace(0, runs), complete=complete,
        )

    while done < n:
        event = False
        # 1. completions: the batch of iteration k − 1 produced their last token
        while completions_heap and completions_heap[0][0] == k:
            _, i = heapq.heappop(completions_heap)
            r = reqs[i]
            p = running.get(i)
            if p is None or p + r.output != k:
                continue  # a run that was evicted
            del running[i]
            base -= r.prompt - p
            starts[i] = p
            done_at[r.id] = now
            latency[r.id] = now - r.arrival
            runs.append((p, k, r.prompt))
            done += 1
            since_completion = 0
            event = True
            view = views[i]
            assert view is not None
            view._output = r.output
            if on_complete is not None:
                on_complete(k, view)
        if done == n:
            break
        # 2. arrivals by now (an idle worker first jumps to the next arrival)
        if not running and not waiting and nxt < n and reqs[order[nxt]].arrival > now:
            now = reqs[order[nxt]].arrival
        while nxt < n and reqs[order[nxt]].arrival <= now:
            i = order[nxt]
            r = reqs[i]
            view = RequestView(r.id, r.arrival, r.prompt, i,  # type: ignore[arg-type]
                               r.output if show else None, r.lower, r.upper)
            views[i] = view
            waiting.add(i)
            nxt += 1
            event = True
            on_arrival(k, view)
        # 3. the policy decides
        new_n = new_tokens = new_sq = 0
        if event or (wake is not None and wake <= k):
            d = decide(k)
            for rid in d.evict:
                i = index.get(rid, -1)
                if i not in running:
                    raise SimulationError(f"iteration {k}: policy {name!r} evicts {rid!r}, which is not running")
                p = running.pop(i)
                base -= reqs[i].prompt - p
                evictions.append(Eviction(k, rid, k - p))
                runs.append((p, k, reqs[i].prompt))
                waiting.add(i)
            since_completion += len(d.evict)
            if since_completion > loop_limit:
                raise eviction_loop_error(f"iteration {k} (t = {now:.3f} s)", name, f"{since_completion} evictions "
                                          f"with no completion (limit {loop_limit})", t=k, evictions=evictions,
                                          done=done, n=n, partial=record(False))
            dec_n = len(running)
            dec_ctx = base + k * dec_n
            for rid in d.start:
                i = index.get(rid, -1)
                if i not in waiting:
                    raise SimulationError(f"iteration {k}: policy {name!r} starts {rid!r}, which is not waiting")
                waiting.remove(i)
                running[i] = k
                s = reqs[i].prompt
                base += s - k
                new_n += 1
                new_tokens += s
                new_sq += s * s
                heapq.heappush(completions_heap, (k + reqs[i].output, i))
            wake = d.wake_at
            if wake is not None and wake <= k:
                raise SimulationError(f"iteration {k}: policy {name!r} asks to be woken at {wake}, "
                                      f"which is not after {k}")
        else:
            dec_n = len(running)
            dec_ctx = base + k * dec_n
        # 4. the batch
        count = len(running)
        if not count:
            if nxt < n:
                now = max(now, reqs[order[nxt]].arrival)  # idle until the next arrival
                continue
            raise SimulationError(
                f"iteration {k}: policy {name!r} made no progress: {len(waiting)} request(s) wait, nothing runs "
                "and no request is left to arrive"
            )
        if base + (k + 1) * count > M:
            raise SimulationError(f"iteration {k}: policy {name!r} overflows memory: "
                                  f"{base + (k + 1) * count} > M = {M} after the batch")
        dur = batch_time(new_n, new_tokens, new_sq, dec_n, dec_ctx)
        if not dur > 0:
            raise SimulationError(f"iteration {k}: cost model {cost_name!r} gives batch time {dur!r}")
        b_start.append(now)
        b_dur.append(dur)
        now += dur
        k += 1
        if k > max_iterations:
            if since_completion:
                raise eviction_loop_error(f"iteration {k}", name, f"{k} iterations (the cap) with {since_completion} "
                                          "evictions since the last completion", t=k, evictions=evictions,
                                          done=done, n=n, partial=record(False))
            raise SimulationError(f"policy {name!r} made no progress by iteration {max_iterations}")

    return record(True)
