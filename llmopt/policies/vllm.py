"""vLLM's default (v0) scheduler as a policy: FCFS, paged KV blocks, a watermark, preemption by recompute.

The behaviour follows the public source of vLLM v0's scheduler (``vllm/core/scheduler.py``: in early
v0 releases ``Scheduler._schedule``, which sorts the running queue FCFS with ``policy.sort_by_priority``
and preempts ``self.running.pop()``; in later ones ``_schedule_default`` / ``_schedule_prefills`` /
``_schedule_running`` / ``_preempt_by_recompute``) and its block manager (``can_allocate`` keeps
``watermark`` — 0.01 by default — of the blocks free, ``can_append_slot(s)`` for decodes does not):

* **Blind to output lengths** (``Visibility.HIDDEN``): a request's length is learnt only when it
  completes; the policy never reads ``output``.
* **Paged KV memory**: a request holding ``m`` tokens occupies ``ceil(m / B)`` blocks of the engine's
  ``block_size`` ``B`` (vLLM: 16), and the worker has ``M // B`` blocks. Running requests grow one
  token, hence at most one block, per iteration.
* **Running requests first, preemption by recompute**: before anything is admitted, every running
  request gets the block its next token needs, oldest arrival first; when a block is missing the
  most recently arrived running request is preempted (``self.running.pop()`` after sorting the
  running queue FCFS), until the rest fit — the request itself when it is the youngest. A
  preempted request loses its KV cache and every token it produced (DESIGN §1: an evicted request
  starts again from its prompt) and goes back to the **front** of the waiting queue
  (``waiting.appendleft``), oldest first.
* **FCFS admission with a free-block watermark**: while nothing was preempted, waiting requests are
  admitted in queue order while ``free blocks − needed ≥ watermark · (M // B)`` (vLLM's
  ``AllocStatus.LATER`` stops admission: head-of-line blocking) and the batch limits
  ``max_num_seqs`` / ``max_num_batched_tokens`` (read from the engine, running requests counted
  first, as vLLM's ``SchedulingBudget``) hold.

* **Batching** (option ``batching``): ``"prefill-first"`` is vLLM v0's prefill-priority rule
  (``_schedule_default``: ``_schedule_prefills`` runs first, and "Don't schedule decodes if prefills
  are scheduled": when any prompt is admitted, the iteration is a prefill-only batch —
  ``Decision.prefill_only``, a paused iteration on the continuous engine — and the running requests
  keep their KV cache and wait; otherwise the running requests decode, with preemption as above and
  no admission). Admission then sees the blocks the running set holds *now* (it does not grow in a
  paused iteration). ``"mixed"`` (the default, unchanged from earlier releases, so every committed
  result stays as it is) puts the new prompts into the batch that decodes every running request,
  as vLLM v1's single token budget over prefills and decodes does. ``"prefill-first"`` runs only on
  the single-worker continuous engine (the only clock with paused iterations).

Differences from vLLM, all forced by the engine's model (DESIGN §1–§2) and stated here:

* the batch limits count every running request as one token of the batch, paused or not (the engine's
  and checker's accounting; vLLM v0 counts the running sequences against ``max_num_seqs`` but only
  the prompt tokens of a prefill batch against ``max_num_batched_tokens``);
* the prefill produces the first output token, so an admitted request needs
  ``ceil((s + 1) / B)`` blocks after its first batch (vLLM allocates ``ceil(s / B)`` and appends the
  next slot in the following decode);
* a request that could never be admitted under the watermark (vLLM: ``AllocStatus.NEVER``, the
  request is ignored) is admitted when nothing runs, so that every request completes;
* no admission happens in an iteration that preempted (vLLM's ``_schedule_default`` does not
  swap in after a preemption, and a preempted request would be re-admitted into the same
  shortage).

Cost per decision: ``O(#running)`` (the block count of the running set), and the policy asks to
be woken at every iteration while something runs, as vLLM schedules every iteration.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Sequence
from typing import Any

from llmopt.engine.core import Decision, RequestView, Visibility

__all__ = ["VLLMScheduler", "IterationScheduler"]


class IterationScheduler:
    """FCFS iteration-level scheduler over KV blocks: what :class:`VLLMScheduler` and
    :class:`~llmopt.policies.orca.OrcaScheduler` share (see the module docstring).

    Subclasses say how many blocks a request needs at admission (:meth:`admit_blocks`) and after
    the batch of step ``t`` (:meth:`blocks_after`), the watermark, and when to be woken.
    """

    name = "iteration-scheduler"
    visibility = Visibility.HIDDEN

    def __init__(self) -> None:
        self.block_size = 1
        self.max_num_seqs: int | None = None
        self.max_num_batched_tokens: int | None = None
        self.reset(0)

    # --- what subclasses define -------------------------------------------------------------

    def admit_blocks(self, request: RequestView) -> int:
        """Blocks ``request`` holds after the batch that admits it."""
        raise NotImplementedError

    def blocks_after(self, entry: list[Any], t: int) -> int:
        """Blocks running ``entry`` (``[key, request, start, reserved]``) holds after the batch of ``t``."""
        raise NotImplementedError

    def watermark_blocks(self) -> int:
        """Free blocks admission must leave."""
        return 0

    def wake(self, t: int, budget_blocked: bool) -> int | None:
        """When to be asked again if nothing happens (``None``: at the next arrival or completion)."""
        return t + 1 if budget_blocked else None

    # --- hooks --------------------------------------------------------------------------------

    def set_limits(self, limits: Any) -> None:
        """Take the engine's block size and batch limits (called before :meth:`reset`)."""
        self.block_size = limits.block_size
        self.max_num_seqs = limits.max_num_seqs
        self.max_num_batched_tokens = limits.max_num_batched_tokens

    def reset(self, M: int) -> None:
        self.M = M
        self.capacity = M // self.block_size
        self.waiting: deque[RequestView] = deque()
        self.running: list[list[Any]] = []  # [(arrival, position), request, start, reserved blocks], FCFS
        self.preemptions = 0

    def on_arrival(self, t: int, request: RequestView) -> None:
        self.waiting.append(request)

    def on_complete(self, t: int, request: RequestView) -> None:
        self._drop(request.id)

    def on_refused(self, t: int, requests: Sequence[RequestView]) -> None:
        for request in reversed(requests):  # back to the front, in the order they were started
            self._drop(request.id)
            self.waiting.appendleft(request)

    def _drop(self, rid: str) -> None:
        for j, entry in enumerate(self.running):
            if entry[1].id == rid:
                del self.running[j]
                return

    def decide(self, t: int) -> Decision:
        return self.decode_first(t)

    def admit(self, t: int, free: int, margin_if_running: int) -> tuple[list[str], bool]:
        """Admit waiting requests FCFS while ``free`` blocks (less the margin) and the batch limits allow.

        Returns the ids started (inserted into :attr:`running` with start ``t``) and whether a batch limit
        stopped admission.
        """
        running, waiting = self.running, self.waiting
        started: list[str] = []
        seqs = tokens = len(running)
        max_seqs, max_tokens = self.max_num_seqs, self.max_num_batched_tokens
        margin = margin_if_running if running else 0
        while waiting:
            request = waiting[0]
            need = self.admit_blocks(request)
            if free - need < margin:
                break
            if (max_seqs is not None and seqs + 1 > max_seqs) or (
                    max_tokens is not None and tokens + request.prompt > max_tokens):
                return started, True
            waiting.popleft()
            entry = [(request.arrival, request.position), request, t, need]
            bisect.insort(running, entry, key=lambda e: e[0])
            free -= need
            seqs += 1
            tokens += request.prompt
            started.append(request.id)
            margin = margin_if_running
        return started, False

    def decode_first(self, t: int, admit: bool = True) -> Decision:
        """The running requests grow (preempting the youngest when a block is missing), then, unless something
        was preempted or ``admit`` is false, waiting requests join the same batch."""
        running, waiting, cap = self.running, self.waiting, self.capacity
        after = [self.blocks_after(entry, t) for entry in running]
        for entry, blocks in zip(running, after):
            entry[3] = blocks
        total = sum(after)
        preempted: list[RequestView] = []
        while total > cap:  # running requests first: preempt the most recently arrived until the rest fit
            total -= after.pop()
            preempted.append(running.pop()[1])
        if preempted:
            self.preemptions += len(preempted)
            for request in preempted:  # youngest first, so the oldest ends up at the front
                waiting.appendleft(request)
            return Decision(evict=tuple(r.id for r in preempted), wake_at=t + 1)
        if not admit:
            return Decision(wake_at=self.wake(t, False))
        started, budget_blocked = self.admit(t, cap - total, self.watermark_blocks())
        return Decision(start=tuple(started), wake_at=self.wake(t, budget_blocked))


class VLLMScheduler(IterationScheduler):
    """vLLM v0's default scheduler (see the module docstring).

    Parameters
    ----------
    watermark : float
        Fraction of the ``M // block_size`` blocks admission leaves free (vLLM's
        ``CacheConfig.watermark`` default, 0.01): ``int(watermark · blocks)`` blocks.
    batching : {"mixed", "prefill-first"}
        ``"mixed"`` (default): new prompts join the batch that decodes every running request (vLLM
        v1-like). ``"prefill-first"``: vLLM v0's prefill-priority batches — an iteration that admits
        anything is a prefill-only batch and the running requests wait (continuous engine only).
    """

    name = "vllm"
    BATCHING = ("mixed", "prefill-first")

    def __init__(self, watermark: float = 0.01, batching: str = "mixed") -> None:
        if not 0 <= watermark < 1:
            raise ValueError(f"watermark must be in [0, 1), got {watermark!r}")
        if batching not in self.BATCHING:
            raise ValueError(f"batching must be one of {', '.join(self.BATCHING)}; got {batching!r}")
        self.watermark = float(watermark)
        self.batching = batching
        self._shifted: list[list[Any]] = []  # entries the last prefill-only decision paused
        self._admitted = 0
        super().__init__()

    def decide(self, t: int) -> Decision:
        if self.batching == "mixed":
            return self.decode_first(t)
        self._shifted = []
        before = list(self.running)
        # the blocks held now: a paused iteration adds no token to the running requests
        total = sum(-(-(e[1].prompt + t - e[2]) // self.block_size) for e in before)
        started, budget_blocked = self.admit(t, self.capacity - total, self.watermark_blocks())
        if not started:
            return self.decode_first(t, admit=False)
        for entry in before:  # they keep their tokens: one iteration later in the token count
            entry[2] += 1
        self._shifted, self._admitted = before, len(started)
        return Decision(start=tuple(started), wake_at=self.wake(t, budget_blocked), prefill_only=True)

    def on_refused(self, t: int, requests: Sequence[RequestView]) -> None:
        super().on_refused(t, requests)
        if self._shifted and len(requests) == self._admitted:  # nothing started: the engine did not pause
            for entry in self._shifted:
                entry[2] -= 1
        self._shifted = []

    def admit_blocks(self, request: RequestView) -> int:
        return -(-(request.prompt + 1) // self.block_size)

    def blocks_after(self, entry: list[Any], t: int) -> int:
        return -(-(entry[1].prompt + t - entry[2] + 1) // self.block_size)

    def watermark_blocks(self) -> int:
        return int(self.watermark * self.capacity)

    def wake(self, t: int, budget_blocked: bool) -> int | None:
        return t + 1 if self.running or budget_blocked else None  # the running set grows every iteration
