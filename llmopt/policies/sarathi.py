"""Sarathi-Serve's scheduler as a policy: chunked prefill under a token budget, decodes first, stall-free.

Sarathi-Serve (Agrawal et al., "Taming Throughput-Latency Tradeoff in LLM Inference with
Sarathi-Serve", OSDI 2024, §4, Algorithm 2) builds every iteration's batch under a *token budget*
(its ``chunk_size``, 512 in the paper's and Vidur's Llama-2-70B configurations): the running
requests that decode come first, one token each; then the prompts that are partly prefilled, in
arrival order; then new requests from the waiting queue, FCFS. A prompt that does not fit the
rest of the budget is *chunked*: the batch takes as many of its tokens as fit, and the rest
follows in the next iterations, each chunk attending to the prompt tokens already in the KV cache
("stall-free batching": a long prompt never pauses the decodes). The public schedulers this
follows are ``sarathi/core/scheduler/sarathi_scheduler.py`` of the Sarathi-Serve repository and
Vidur's ``vidur/scheduler/replica_scheduler/sarathi_replica_scheduler.py`` (no code copied):
KV blocks for a request's whole prompt are allocated when it is admitted (with vLLM's free-block
watermark), a decode appends a block when its last one is full, and when no block is left the
most recently arrived running request is preempted by recompute.

Here:

* **Blind to output lengths** (``Visibility.HIDDEN``), as :mod:`llmopt.policies.vllm`.
* **Token budget** ``chunk_size`` (default 512), capped by the engine's ``max_num_batched_tokens``
  when that is smaller; **max_num_seqs** (default: none; Vidur's ``batch_size_cap``, 128 in its
  configurations) caps the admitted requests — decoding or partly prefilled — with the engine's
  ``max_num_seqs`` when smaller: no new request is admitted while that many run. Every running request decodes
  in every batch (the engine's model): decodes are never cut by the budget, so a batch of more
  than ``chunk_size`` decodes carries no prompt tokens.
* **Chunks**: a partly prefilled prompt gets ``min(rest of its prompt, budget left)`` tokens
  (:attr:`~llmopt.engine.core.Decision.chunk`, or a ``start`` for the chunk that completes it,
  which also produces the first output token); none when the budget is spent. Each chunk of ``c``
  tokens after ``p`` in the cache is timed by the cost model as ``c`` prompt tokens with attention
  term ``(p + c)² − p²`` (see :class:`~llmopt.model.batch.BatchShape`).
* **Blocks** (the engine's ``block_size`` ``B``): an admitted request reserves
  ``ceil((s + 1) / B)`` blocks, as Sarathi allocates the whole prompt at admission (Vidur:
  ``ceil(s / B)``; the engine's prefill also produces the first token, whose slot is reserved with
  it); admission is FCFS with head-of-line blocking while ``free − needed ≥ watermark · (M // B)``
  (vLLM's default 0.01; no watermark while nothing runs, so that every request can start). A
  decoding request grows one block at a time.
* **Preemption only when memory runs out**: before a batch, every decoding request gets the block
  its next token needs; while the total exceeds ``M // B``, the most recently arrived running
  request — decoding, or partly prefilled as in Sarathi-Serve — is preempted by recompute (it loses
  its tokens, prompt chunks included, and goes to the front of the waiting queue). Admission then
  goes on as in Sarathi-Serve and Vidur (unlike :mod:`llmopt.policies.vllm`), so a preempted request
  is admitted again in the same iteration if its prompt's blocks are free. The oldest running request
  is never preempted for a younger one, so it always completes.

The policy is asked at every iteration while a prompt is partly prefilled or the token budget holds
admission back; otherwise only at arrivals, completions and the first iteration whose decodes miss a
block (:meth:`SarathiScheduler._wake`: the decisions in between would change nothing; the schedules are
those of asking at every iteration, ``tests/engine/test_blocks.py``). Cost per decision:
``O(block_size + #partly prefilled + #started)`` (the decodes' blocks come from a
:class:`~llmopt.engine.blocks.BlockLedger`), plus ``O(log n)`` per completion.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from llmopt.engine.blocks import BlockLedger
from llmopt.engine.core import Decision, RequestView
from llmopt.policies.vllm import BlockScheduler

__all__ = ["SarathiScheduler"]

_KEY = itemgetter(0)  # a running entry's FCFS key, (arrival, position)


class SarathiScheduler(BlockScheduler):
    """Sarathi-Serve: chunked prefill under a token budget, decodes first (see the module docstring).

    Parameters
    ----------
    chunk_size : int
        Tokens per batch (decodes, one each, plus prompt chunks), default 512.
    max_num_seqs : int, optional
        Most requests in one batch (default: no cap beyond the engine's ``max_num_seqs``).
    watermark : float
        Fraction of the ``M // block_size`` blocks admission leaves free (default 0.01, vLLM's).
    """

    name = "sarathi"
    chunked_prefill = True  # the engine lets a prompt longer than max_num_batched_tokens start

    def __init__(self, chunk_size: int = 512, max_num_seqs: int | None = None, watermark: float = 0.01) -> None:
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        if max_num_seqs is not None and (isinstance(max_num_seqs, bool) or not isinstance(max_num_seqs, int)
                                         or max_num_seqs < 1):
            raise ValueError(f"max_num_seqs must be a positive integer, got {max_num_seqs!r}")
        if not 0 <= watermark < 1:
            raise ValueError(f"watermark must be in [0, 1), got {watermark!r}")
        self.chunk_size = chunk_size
        self.max_num_seqs = max_num_seqs
        self.watermark = float(watermark)
        super().__init__()

    def reset(self, M: int) -> None:
        super().reset(M)
        # running entries, FCFS by (arrival, position): [key, request, start (None while prefilling), prompt
        # tokens prefilled by partial chunks before the start, blocks reserved at admission]
        self.prefilling: list[list[Any]] = []  # the entries of running whose prompt is partly prefilled, FCFS
        self.held = 0  # Σ reserved blocks of the prefilling entries
        # decoding entries: offsets prompt − start + 1, so that their blocks after the batch of t are
        # ledger.total(t) (O(block_size), not O(#running), per decision)
        self.ledger = BlockLedger(self.block_size)
        budget = self.chunk_size  # the token budget and the request cap of every batch, fixed per run
        if self.engine_max_tokens is not None and self.engine_max_tokens < budget:
            budget = self.engine_max_tokens
        self._budget = budget
        self._max_seqs = min((m for m in (self.max_num_seqs, self.engine_max_seqs) if m is not None), default=None)

    def on_refused(self, t: int, requests: Sequence[RequestView]) -> None:
        """The engine's batch limits deferred these starts: undo them (partly prefilled prompts keep
        their chunks; new requests go back to the front of the queue, in order)."""
        for request in reversed(requests):
            j = self._find(request)
            if j >= 0 and self.running[j][3]:
                self._decoding(self.running[j], False)
                continue
            self._drop(request)
            self.waiting.appendleft(request)

    def _left(self, entry: list[Any]) -> None:
        if entry[2] is None:
            self.prefilling.remove(entry)
            self.held -= entry[4]
        else:
            self.ledger.remove(entry[1].prompt - entry[2] + 1)

    def _decoding(self, entry: list[Any], start: bool) -> None:
        """Move a running ``entry`` between prefilling and decoding (``start``: its last chunk runs now)."""
        if start:
            self.prefilling.remove(entry)
            self.held -= entry[4]
            self.ledger.add(entry[1].prompt - entry[2] + 1)
        else:
            self.ledger.remove(entry[1].prompt - entry[2] + 1)
            entry[2] = None
            bisect.insort(self.prefilling, entry, key=_KEY)
            self.held += entry[4]

    def _blocks(self, tokens: int) -> int:
        return -(-tokens // self.block_size)

    def decide(self, t: int) -> Decision:
        running, waiting, cap, ledger = self.running, self.waiting, self.capacity, self.ledger
        prefilling, b = self.prefilling, self.block_size
        total = ledger.total(t) + self.held  # every decode's next token, every partial prefill's reservation
        evicted: list[RequestView] = []
        while total > cap:  # memory ran out: preempt the most recently arrived (decoding or prefilling)
            entry = running.pop()
            if entry[2] is None:
                prefilling.pop()  # the youngest running entry is the youngest prefilling one
                self.held -= entry[4]
                total -= entry[4]
            else:
                c = entry[1].prompt - entry[2] + 1
                ledger.remove(c)
                total -= -(-(c + t) // b)
            evicted.append(entry[1])
        self.preemptions += len(evicted)
        for request in evicted:  # youngest first, so the oldest ends up at the front
            waiting.appendleft(request)
        budget, max_seqs = self._budget, self._max_seqs
        tokens = ledger.n  # every decode first, one token each
        started: list[str] = []
        chunks: list[tuple[str, int]] = []
        blocked = False
        for entry in list(prefilling):  # partly prefilled prompts, in arrival order (already admitted: no seq check)
            if tokens >= budget:
                blocked = True
                break
            request = entry[1]
            c = min(request.prompt - entry[3], budget - tokens)
            tokens += c
            if c == request.prompt - entry[3]:  # the last chunk: it starts (entry[3] keeps the chunks before)
                entry[2] = t
                self._decoding(entry, True)
                started.append(request.id)
            else:
                chunks.append((request.id, c))
                entry[3] += c
        free = cap - total
        margin = int(self.watermark * cap) if running else 0
        while waiting and not blocked:
            if tokens >= budget or (max_seqs is not None and len(running) >= max_seqs):
                blocked = True
                break
            request = waiting[0]
            need = -(-(request.prompt + 1) // b)
            if free - need < margin:
                break
            waiting.popleft()
            c = min(request.prompt, budget - tokens)
            entry = [(request.arrival, request.position), request, None, 0, need]
            bisect.insort(running, entry, key=_KEY)
            if c == request.prompt:
                entry[2] = t
                ledger.add(request.prompt - t + 1)
                started.append(request.id)
            else:
                chunks.append((request.id, c))
                entry[3] = c
                bisect.insort(prefilling, entry, key=_KEY)
                self.held += need
            free -= need
            tokens += c
        wake = self._wake(t, bool(prefilling) or (blocked and bool(waiting)))
        return Decision(start=tuple(started), evict=tuple(r.id for r in evicted), wake_at=wake, chunk=tuple(chunks))

    def _wake(self, t: int, busy: bool) -> int | None:
        """``t + 1`` when a prompt is partly prefilled or the token budget held admission back (``busy``); else
        the first iteration whose decodes need more blocks than the cache has (a preemption), or ``None``.

        The decisions in between would change nothing: until an arrival or a completion (which wake the
        policy anyway) only decodes run, so the free blocks only shrink and an admission the memory refused
        stays refused."""
        if busy:
            return t + 1
        return self.ledger.first_over(self.capacity, t + 1)
