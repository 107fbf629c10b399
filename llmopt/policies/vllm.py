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
  paused iteration). ``"mixed"`` puts the new prompts into the batch that decodes every running
  request, as vLLM v1's single token budget over prefills and decodes does. **Default**:
  ``"prefill-first"`` on the single-worker continuous engine (the only clock with paused iterations;
  Vidur's vLLM scheduler does the same, see ``results/perf/vidur``), ``"mixed"`` on the discrete
  (token) clock and the K-worker clocks, which have no paused iterations (the engine tells the policy
  through its ``set_pausable`` hook). ``batching="prefill-first"`` given explicitly is refused there.

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

Cost per decision: ``O(block_size + #admitted)``: the running set's blocks come from a
:class:`~llmopt.engine.blocks.BlockLedger`, and a paused iteration moves no entry (entries count in
decode iterations). vLLM schedules every iteration; the policy asks to be woken only where a
decision can differ from "decode everything": the next iteration when a batch limit held admission
back, else the first iteration whose decodes miss a block (arrivals and completions wake it anyway;
between them the free blocks only shrink, so an admission refused for memory stays refused).
The schedules are those of asking at every iteration (``tests/engine/test_blocks.py``).
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from llmopt.engine.blocks import BlockLedger
from llmopt.engine.core import Decision, RequestView, Visibility

__all__ = ["VLLMScheduler", "IterationScheduler", "BlockScheduler"]

_KEY = itemgetter(0)  # a running entry's FCFS key, (arrival, position)


class BlockScheduler:
    """The set-up every production scheduler over KV blocks shares (``vllm``, ``orca``, ``sarathi``).

    It is blind to output lengths, takes the engine's block size and batch limits (``set_limits``, before
    ``reset``: :attr:`block_size`, :attr:`engine_max_seqs`, :attr:`engine_max_tokens`), keeps the waiting
    requests in a FCFS deque and the running ones in a list of entries ``[(arrival, position), request, …]``
    sorted by that key, found by bisection in ``O(log n)`` (:meth:`_find`).
    """

    name = "block-scheduler"
    visibility = Visibility.HIDDEN

    def __init__(self) -> None:
        self.block_size = 1
        self.engine_max_seqs: int | None = None
        self.engine_max_tokens: int | None = None
        self.reset(0)

    def set_limits(self, limits: Any) -> None:
        """Take the engine's block size and batch limits (called before :meth:`reset`)."""
        self.block_size = limits.block_size
        self.engine_max_seqs = limits.max_num_seqs
        self.engine_max_tokens = limits.max_num_batched_tokens

    def reset(self, M: int) -> None:
        self.M = M
        self.capacity = M // self.block_size
        self.waiting: deque[RequestView] = deque()
        self.running: list[list[Any]] = []  # [(arrival, position), request, start, …], FCFS
        self.preemptions = 0

    def on_arrival(self, t: int, request: RequestView) -> None:
        self.waiting.append(request)

    def on_complete(self, t: int, request: RequestView) -> None:
        self._drop(request)

    def _find(self, request: RequestView) -> int:
        """The index of ``request``'s entry in :attr:`running` (``-1`` if it has none)."""
        running = self.running
        j = bisect.bisect_left(running, (request.arrival, request.position), key=_KEY)
        return j if j < len(running) and running[j][1].id == request.id else -1

    def _drop(self, request: RequestView) -> None:
        """Remove ``request``'s entry from :attr:`running`, if any."""
        j = self._find(request)
        if j >= 0:
            self._left(self.running.pop(j))

    def _left(self, entry: list[Any]) -> None:
        """Hook: ``entry`` left :attr:`running` (completed or refused; not preempted)."""


class IterationScheduler(BlockScheduler):
    """FCFS iteration-level scheduler over KV blocks: what :class:`VLLMScheduler` and
    :class:`~llmopt.policies.orca.OrcaScheduler` share (see the module docstring).

    Subclasses say how many blocks a request needs at admission (:meth:`admit_blocks`) and after
    the batch of step ``t`` (:meth:`blocks_after`), the watermark, and when to be woken.
    """

    name = "iteration-scheduler"

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

    # --- hooks (entries: [(arrival, position), request, start, reserved blocks]) ---------------

    def on_refused(self, t: int, requests: Sequence[RequestView]) -> None:
        for request in reversed(requests):  # back to the front, in the order they were started
            self._drop(request)
            self.waiting.appendleft(request)

    def _joined(self, entry: list[Any]) -> None:
        """Hook: ``entry`` was admitted into :attr:`running`."""

    def _start_clock(self, t: int) -> int:
        """What an entry admitted at ``t`` stores as its start (``entry[2]``)."""
        return t

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
        max_seqs, max_tokens = self.engine_max_seqs, self.engine_max_tokens
        margin = margin_if_running if running else 0
        start = self._start_clock(t)
        while waiting:
            request = waiting[0]
            need = self.admit_blocks(request)
            if free - need < margin:
                break
            if (max_seqs is not None and seqs + 1 > max_seqs) or (
                    max_tokens is not None and tokens + request.prompt > max_tokens):
                return started, True
            waiting.popleft()
            entry = [(request.arrival, request.position), request, start, need]
            bisect.insort(running, entry, key=_KEY)
            self._joined(entry)
            free -= need
            seqs += 1
            tokens += request.prompt
            started.append(request.id)
            margin = margin_if_running
        return started, False

    def preempt_or_admit(self, t: int, preempted: list[RequestView], admit: bool, free: int) -> Decision:
        """The decision after the running requests grew: the ``preempted`` ones (youngest first) go back to the
        front of the waiting queue, oldest first; else, if ``admit``, waiting requests join within ``free``
        blocks."""
        if preempted:
            self.preemptions += len(preempted)
            for request in preempted:  # youngest first, so the oldest ends up at the front
                self.waiting.appendleft(request)
            return Decision(evict=tuple(r.id for r in preempted), wake_at=t + 1)
        if not admit:
            return Decision(wake_at=self.wake(t, False))
        started, budget_blocked = self.admit(t, free, self.watermark_blocks())
        return Decision(start=tuple(started), wake_at=self.wake(t, budget_blocked))

    def decode_first(self, t: int, admit: bool = True) -> Decision:
        """The running requests grow (preempting the youngest when a block is missing), then, unless something
        was preempted or ``admit`` is false, waiting requests join the same batch."""
        running, cap = self.running, self.capacity
        after = [self.blocks_after(entry, t) for entry in running]
        for entry, blocks in zip(running, after):
            entry[3] = blocks
        total = sum(after)
        preempted: list[RequestView] = []
        while total > cap:  # running requests first: preempt the most recently arrived until the rest fit
            total -= after.pop()
            preempted.append(running.pop()[1])
        return self.preempt_or_admit(t, preempted, admit, cap - total)


class VLLMScheduler(IterationScheduler):
    """vLLM v0's default scheduler (see the module docstring).

    Parameters
    ----------
    watermark : float
        Fraction of the ``M // block_size`` blocks admission leaves free (vLLM's
        ``CacheConfig.watermark`` default, 0.01): ``int(watermark · blocks)`` blocks.
    batching : {"prefill-first", "mixed"}, optional
        ``"prefill-first"``: vLLM v0's prefill-priority batches — an iteration that admits anything is
        a prefill-only batch and the running requests wait (single-worker continuous engine only).
        ``"mixed"``: new prompts join the batch that decodes every running request (vLLM v1-like).
        Default: ``"prefill-first"`` where the engine's clock has paused iterations, ``"mixed"``
        elsewhere (:meth:`set_pausable`).
    """

    name = "vllm"
    BATCHING = ("mixed", "prefill-first")

    def __init__(self, watermark: float = 0.01, batching: str | None = None) -> None:
        if not 0 <= watermark < 1:
            raise ValueError(f"watermark must be in [0, 1), got {watermark!r}")
        if batching is not None and batching not in self.BATCHING:
            raise ValueError(f"batching must be one of {', '.join(self.BATCHING)}; got {batching!r}")
        self.watermark = float(watermark)
        self._default = batching is None  # follows the clock (set_pausable)
        self.batching = "prefill-first" if batching is None else batching
        self._undo = False  # the last prefill-only decision counted a pause the engine may refuse
        self._admitted = 0
        super().__init__()

    def set_pausable(self, pausable: bool) -> None:
        """The engine says whether its clock has paused iterations (called before :meth:`reset`): the default
        batching is ``"prefill-first"`` where it has, ``"mixed"`` where it has not (the token clock, the
        K-worker clocks). An explicit ``batching`` is kept (``"prefill-first"`` is then refused there)."""
        if self._default:
            self.batching = "prefill-first" if pausable else "mixed"

    def reset(self, M: int) -> None:
        super().reset(M)
        self.npaused = 0  # paused iterations so far: entries count in decode iterations t − npaused
        self.ledger = BlockLedger(self.block_size)  # offsets prompt − start of the running entries
        self._undo = False

    # Paused iterations (prefill-first) add no token to the running requests. Instead of moving every
    # running entry's start one iteration later at each pause (O(#running)), entries store their start in
    # decode iterations (t − npaused): a request holds prompt + (t − npaused) − start tokens at t, and
    # the ledger gives the running set's blocks at any clock in O(block_size).

    def _start_clock(self, t: int) -> int:
        return t - self.npaused

    def _joined(self, entry: list[Any]) -> None:
        self.ledger.add(entry[1].prompt - entry[2])

    def _left(self, entry: list[Any]) -> None:
        self.ledger.remove(entry[1].prompt - entry[2])

    def decide(self, t: int) -> Decision:
        if self.batching == "mixed":
            return self.decode_first(t)
        self._undo = False
        # the blocks held now: a paused iteration adds no token to the running requests
        total = self.ledger.total(t - self.npaused)
        pausing = bool(self.running)  # the engine pauses only when something ran before
        if pausing:
            self.npaused += 1  # admitted entries start one decode iteration earlier: the first token is theirs
        started, budget_blocked = self.admit(t, self.capacity - total, self.watermark_blocks())
        if not started:
            if pausing:
                self.npaused -= 1
            return self.decode_first(t, admit=False)
        self._undo, self._admitted = pausing, len(started)
        return Decision(start=tuple(started), wake_at=self.wake(t, budget_blocked), prefill_only=True)

    def decode_first(self, t: int, admit: bool = True) -> Decision:
        """As :meth:`IterationScheduler.decode_first`, with the running set's blocks from the ledger."""
        running, cap, ledger, b = self.running, self.capacity, self.ledger, self.block_size
        x = t - self.npaused + 1  # decode iterations after this batch
        total = ledger.total(x)
        preempted: list[RequestView] = []
        while total > cap:  # running requests first: preempt the most recently arrived until the rest fit
            entry = running.pop()
            c = entry[1].prompt - entry[2]
            ledger.remove(c)
            total -= -(-(c + x) // b)
            preempted.append(entry[1])
        return self.preempt_or_admit(t, preempted, admit, cap - total)

    def on_refused(self, t: int, requests: Sequence[RequestView]) -> None:
        super().on_refused(t, requests)
        if self._undo and len(requests) == self._admitted:  # nothing started: the engine did not pause
            self.npaused -= 1
        self._undo = False

    def admit_blocks(self, request: RequestView) -> int:
        return -(-(request.prompt + 1) // self.block_size)

    def blocks_after(self, entry: list[Any], t: int) -> int:
        return -(-(entry[1].prompt + t - self.npaused - entry[2] + 1) // self.block_size)

    def watermark_blocks(self) -> int:
        return int(self.watermark * self.capacity)

    def wake(self, t: int, budget_blocked: bool) -> int | None:
        """``t + 1`` when a batch limit held admission back; else the first iteration whose decodes need more
        blocks than the cache has (a preemption), or ``None`` when nothing runs.

        Every decision in between would change nothing: until an arrival or a completion (which wake the
        policy anyway) the running set only grows, so the free blocks only shrink and an admission that
        the memory refused now stays refused; only the preemption point is new, and the ledger finds it.
        """
        if budget_blocked:
            return t + 1
        # the decision at t' preempts when the blocks after its batch, ledger.total(t' − npaused + 1), exceed cap
        x = self.ledger.first_over(self.capacity, t + 2 - self.npaused)
        return None if x is None else x - 1 + self.npaused
