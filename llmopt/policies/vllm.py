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

Differences from vLLM, all forced by the engine's model (DESIGN §1–§2) and stated here:

* a batch always decodes every running request, with the new prompts in the same batch (vLLM v0
  runs a prefill-only batch when it admits anything, pausing decodes for that iteration);
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
        started: list[str] = []
        free = cap - total
        seqs = tokens = len(running)
        max_seqs, max_tokens = self.max_num_seqs, self.max_num_batched_tokens
        budget_blocked = False
        while waiting:
            request = waiting[0]
            need = self.admit_blocks(request)
            margin = self.watermark_blocks() if running else 0
            if free - need < margin:
                break
            if (max_seqs is not None and seqs + 1 > max_seqs) or (
                    max_tokens is not None and tokens + request.prompt > max_tokens):
                budget_blocked = True
                break
            waiting.popleft()
            entry = [(request.arrival, request.position), request, t, need]
            bisect.insort(running, entry, key=lambda e: e[0])
            free -= need
            seqs += 1
            tokens += request.prompt
            started.append(request.id)
        return Decision(start=tuple(started), wake_at=self.wake(t, budget_blocked))


class VLLMScheduler(IterationScheduler):
    """vLLM v0's default scheduler (see the module docstring).

    Parameters
    ----------
    watermark : float
        Fraction of the ``M // block_size`` blocks admission leaves free (vLLM's
        ``CacheConfig.watermark`` default, 0.01): ``int(watermark · blocks)`` blocks.
    """

    name = "vllm"

    def __init__(self, watermark: float = 0.01) -> None:
        if not 0 <= watermark < 1:
            raise ValueError(f"watermark must be in [0, 1), got {watermark!r}")
        self.watermark = float(watermark)
        super().__init__()

    def admit_blocks(self, request: RequestView) -> int:
        return -(-(request.prompt + 1) // self.block_size)

    def blocks_after(self, entry: list[Any], t: int) -> int:
        return -(-(entry[1].prompt + t - entry[2] + 1) // self.block_size)

    def watermark_blocks(self) -> int:
        return int(self.watermark * self.capacity)

    def wake(self, t: int, budget_blocked: bool) -> int | None:
        return t + 1 if self.running or budget_blocked else None  # the running set grows every iteration
