"""Discrete-time simulator of one worker (DESIGN §1): a small event loop.

The engine holds the truth (every output length) and a clock ``t`` that counts batches
(iterations). It jumps from event to event — an arrival, a completion, or a step the
policy asked to be woken at — and at each event time ``t``, in this order:

1. requests whose last token was produced in the batch of step ``t − 1`` complete
   (``policy.on_complete(t, request)``; with hidden lengths the policy learns ``o_i`` now);
2. requests with ``a_i = t`` arrive (``policy.on_arrival(t, request)``, in instance order);
3. unless nothing is waiting or running, the engine asks ``policy.decide(t)`` for a
   :class:`Decision`: requests to evict (they lose their tokens and return to waiting),
   requests to start, and optionally the next step ``wake_at`` at which the policy wants
   to be asked again even if nothing happens;
4. it checks the memory of the running set up to the next event and jumps there.

Nothing in the loop scans the waiting queue: the policy keeps its own structures,
updated by the hooks (see :mod:`llmopt.policies` for the protocol and a base class). The
memory check of step 4 is ``O(1)``: the next event is no later than the next completion,
so every running request stays active until then and the usage
``Σ_j (s_j − p_j) + τ · #running`` is linear on ``(t, t_next]`` — its maximum is at
``t_next``. Time origins cost nothing: the loop, the check and the recorded memory trace
(:class:`llmopt.model.schedule.MemoryTrace`) never allocate anything proportional to the time
span, so arrivals may be Unix timestamps and outputs millions of tokens long.

*Step policies* — any object with ``name`` and ``decide(view: StepView) -> Decision`` and
no ``on_arrival`` hook — still work: :class:`StepPolicyAdapter` shows them a fresh
:class:`StepView` of every waiting and running request at every step with work, exactly
as the pre-event simulator did (so they cost ``O(queue)`` per step).

Information model (:class:`Visibility`). A policy sees a request only from its arrival,
as a :class:`RequestView`. With ``Visibility.HIDDEN`` reading ``request.output`` raises
:class:`HiddenOutputError` until the request completes; the number of tokens a running
request has produced is ``t − start`` (the policy knows the starts it chose).

A continuous-time engine (batches of variable wall-clock duration) can drive the same
policies: ``t`` counts iterations, and the token accounting per iteration is the same.

The bookkeeping of steps 1–3 (the running set, the completion heap, evictions, the loop
guard, the request views) is the engine core's, :class:`llmopt.engine.core.Worker`, shared
with :mod:`llmopt.engine.continuous`; this module keeps the clock (step 4). The types
policies use (:class:`RequestView`, :class:`Decision`, :class:`StepView`, the errors, ...)
live in :mod:`llmopt.engine.core` and are re-exported here unchanged.
"""

from __future__ import annotations

from typing import Any

from llmopt.engine.core import (
    DEFAULT_LOOP_LIMIT,
    Decision,
    EvictionLoopError,
    HiddenOutputError,
    RequestView,
    RunningRequest,
    SimulationError,
    StepPolicyAdapter,
    StepView,
    Visibility,
    WaitingRequest,
    Worker,
    effective_visibility,
    eviction_loop_error,
    is_event_policy,
)
from llmopt.model.instance import Instance
from llmopt.model.schedule import BatchLimits, MemoryTrace, Schedule

__all__ = [
    "Visibility",
    "RequestView",
    "WaitingRequest",
    "RunningRequest",
    "StepView",
    "Decision",
    "SimulationError",
    "HiddenOutputError",
    "EvictionLoopError",
    "eviction_loop_error",
    "DEFAULT_LOOP_LIMIT",
    "StepPolicyAdapter",
    "is_event_policy",
    "effective_visibility",
    "simulate",
]


def simulate(
    instance: Instance,
    policy: Any,
    *,
    visibility: Visibility | None = None,
    max_steps: int | None = None,
    loop_limit: int = DEFAULT_LOOP_LIMIT,
    monitor: dict[str, Any] | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    block_size: int = 1,
) -> Schedule:
    """Run ``policy`` on ``instance`` and return the :class:`~llmopt.model.schedule.Schedule`.

    Parameters
    ----------
    instance : Instance
    policy : Policy or StepPolicy
        An event-driven policy (``name``, ``on_arrival``, ``decide(t)``; optional
        ``reset(M)``, ``on_complete``), see :mod:`llmopt.policies`, or a step policy
        (``name``, ``decide(view)``; optional ``reset(M)``), run through
        :class:`StepPolicyAdapter`. ``reset(M)`` is called first when present.
    visibility : Visibility, optional
        ``HIDDEN`` hides output lengths until completion. By default the policy's own
        ``visibility`` attribute decides (``FULL`` when it has none); see
        :func:`effective_visibility`.
    max_steps : int, optional
        Safety cap on the clock; default ``max a + 10·Σo + 1000``.
    loop_limit : int
        Evictions allowed with no completion in between before the run stops with
        :class:`EvictionLoopError` (default :data:`DEFAULT_LOOP_LIMIT`).
    monitor : dict, optional
        Receives the running :class:`~llmopt.engine.core.Worker` under ``"worker"`` before the loop
        starts, so that another thread can show progress (``worker.done`` requests completed)
        without any work inside the loop.
    max_num_seqs, max_num_batched_tokens : int, optional
        Batch limits (default none): at most ``max_num_seqs`` requests in the batch of a step, and
        at most ``max_num_batched_tokens`` tokens (the prompts started in it plus one per other
        running request). The engine admits a decision's starts in the policy's order until a
        limit binds; the rest stay waiting (see :class:`~llmopt.engine.core.Worker`).
    block_size : int
        KV memory in blocks of this many tokens (default 1, token-exact): at every time
        ``Σ ceil(usage_i / block_size) <= M // block_size``.

    Returns
    -------
    Schedule
        Final starts, completions, TEL, evictions, the memory trace (relative to the first
        arrival, stored sparsely) and the limits it ran under.

    Raises
    ------
    SimulationError
        If the policy starts an unknown or non-waiting request, evicts a non-running
        one, asks to be woken in the past, overflows the memory, or stops making
        progress (requests wait, nothing runs and no wake-up is pending, or the clock
        passes ``max_steps``).
    EvictionLoopError
        If ``loop_limit`` evictions happen with no completion in between.
    HiddenOutputError
        If it reads an output length its information model hides.
    """
    reqs = instance.requests
    n, M = len(reqs), instance.M
    order = sorted(range(n), key=[r.arrival for r in reqs].__getitem__)  # arrival order; stable: ties by position
    arrivals = [reqs[i].arrival for i in order]
    origin = arrivals[0] if n else 0
    if max_steps is None:
        max_steps = (arrivals[-1] if n else 0) + 10 * instance.total_output + 1000
    limits = BatchLimits(max_num_seqs, max_num_batched_tokens, block_size)
    w = Worker(reqs, M, policy, visibility=visibility, loop_limit=loop_limit, unit="step", limits=limits)
    block = block_size if block_size > 1 else 0
    cap_blocks = M // block_size
    if monitor is not None:  # another thread may read monitor['worker'].done: no work in the loop
        monitor["worker"] = w
    name = w.name
    heap, running, waiting = w.heap, w.running, w.waiting
    complete, arrive_due, decide, next_completion = w.complete, w.arrive_due, w.decide, w.next_completion
    nxt = 0
    t = origin

    while True:  # not `while cond`: CPython 3.11 specialises a running loop only on an unconditional back jump
        # 1. completions at t (the batch of step t − 1 produced their last token)
        if heap and heap[0][0] == t and complete(t) and w.done == n:
            break
        # 2. arrivals at t
        if nxt < n and arrivals[nxt] <= t:
            nxt = arrive_due(t, order, nxt, t)
        # 3. the policy decides
        wake = decide(t) if waiting or running else None
        # 4. the next event, and the memory up to it
        t_next = next_completion()
        if nxt < n and (t_next is None or arrivals[nxt] < t_next):
            t_next = arrivals[nxt]
        if wake is not None and (t_next is None or wake < t_next):
            t_next = wake
        if t_next is None:
            if w.done == n:  # only when n = 0: the last completion breaks the loop above
                break
            raise SimulationError(
                f"step {t}: policy {name!r} made no progress: {len(waiting)} request(s) wait, nothing runs "
                "and it asked for no wake-up"
            )
        k = len(running)
        held = w.held  # prompt tokens of partial prefills (chunked prefill): constant until the next decision
        if k or held:
            base = w.base
            if base + t_next * k + held > M:  # usage is linear on (t, t_next]: first overflow time
                tau = max(t + 1, (M - base - held) // k + 1) if k else t + 1
                raise SimulationError(f"step {tau - 1}: policy {name!r} overflows memory at time {tau}: "
                                      f"{base + tau * k + held} > M = {M}")
            if block and w.blocks_at(t_next) > cap_blocks:  # blocks never fall on (t, t_next]: bisect
                lo, hi = t + 1, t_next
                while lo < hi:
                    mid = (lo + hi) // 2
                    if w.blocks_at(mid) > cap_blocks:
                        hi = mid
                    else:
                        lo = mid + 1
                raise SimulationError(f"step {lo - 1}: policy {name!r} overflows memory at time {lo}: "
                                      f"{w.blocks_at(lo)} blocks of {block} > M // block_size = {cap_blocks}")
        if t_next > max_steps:
            if w.since_completion:
                raise w.loop_error(t, f"step {t}", f"the clock passed its cap of {max_steps} steps with "
                                   f"{w.since_completion} evictions since the last completion")
            raise SimulationError(f"policy {name!r} made no progress by step {max_steps}")
        t = t_next

    starts, ends = w.starts, w.ends
    return Schedule(
        policy=name,
        starts={r.id: starts[i] for i, r in enumerate(reqs)},
        completions={r.id: ends[i] for i, r in enumerate(reqs)},
        tel=sum(ends[i] - r.arrival for i, r in enumerate(reqs)),
        memory=MemoryTrace(origin, w.runs),
        evictions=tuple(w.evictions),
        recomputed_tokens=sum(e.tokens_lost for e in w.evictions),
        limits=limits,
        chunks=tuple((t, reqs[i].id, c) for t, i, c in w.chunk_log),
    )
