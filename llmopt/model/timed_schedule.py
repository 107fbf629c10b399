"""The record of one continuous-time run (DESIGN §2): iterations, their clock, latencies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from llmopt.model.schedule import BatchLimits, Eviction, MemoryTrace

__all__ = ["TimedSchedule"]


@dataclass(frozen=True)
class TimedSchedule:
    """Outcome of :func:`llmopt.engine.continuous.simulate_continuous`.

    Two clocks: *iterations* (batches, counted from 0 at the first arrival) carry the
    token accounting of DESIGN §1 — a request started in iteration ``k`` holds
    ``s + (τ − k)`` tokens after iteration ``τ − 1`` — and *seconds* carry latency:
    iteration ``k`` runs from ``batch_start[k]`` for ``batch_duration[k]`` seconds.

    Attributes
    ----------
    policy, cost_model : str
    M : int
    starts : mapping
        Request id → iteration of its final (completed) run's start.
    evictions : tuple of Eviction
        ``t`` is the iteration at whose decision the run was evicted.
    completions : mapping
        Request id → completion time in seconds (end of the batch of its last token).
    latencies : mapping
        Request id → completion time − arrival time, seconds.
    batch_start, batch_duration : numpy arrays (float64)
        Start and duration (seconds) of every iteration.
    memory : MemoryTrace
        KV usage after every iteration, in iteration units (``memory.at(k + 1)`` is the
        usage after iteration ``k``), aborted runs included.
    complete : bool
        False for the partial record an :class:`~llmopt.engine.discrete.EvictionLoopError`
        carries (then only the completed requests have completions).
    stalls : mapping
        Iteration → iterations lost before its batch (``Decision.stall``: clearing passes that
        cost time); each lasts a decode batch of the requests running when that iteration's
        decision began. Empty for every policy that never stalls.
    limits : BatchLimits
        The batch limits and block size of the run, in iteration units (default: none, token-exact).
    chunks : tuple of (int, str, int)
        Chunked prefill: ``(iteration, id, tokens)`` of every *partial* prefill chunk, in the order
        run. The chunk that completes a prompt is not listed: it is in the batch of the run's start
        and holds the rest of the prompt. ``tokens = 0`` marks a partial prefill preempted at that
        iteration: its chunks are dropped (prompt tokens are recomputed; :attr:`recomputed_tokens`
        counts output tokens only). Empty when every prompt was prefilled whole (the default).
    paused : tuple of int
        Paused iterations (``Decision.prefill_only``, vLLM v0's prefill-priority batches), ascending: their
        batch holds only the prefills of the requests started there; every request running before keeps
        its tokens, so a run started at ``k`` completes at iteration ``k + o + (paused iterations in
        (k, completion))`` and, evicted at ``t``, has produced ``t − k − (paused in (k, t))`` tokens.
        Empty for every policy that never pauses (the default).
    eviction_starts : tuple of int
        With paused iterations only: the start iteration of each evicted run, parallel to
        :attr:`evictions` (``tokens_lost`` alone does not determine it when pauses lie in the run).
    """

    policy: str
    cost_model: str
    M: int
    starts: Mapping[str, int]
    evictions: tuple[Eviction, ...]
    completions: Mapping[str, float]
    latencies: Mapping[str, float]
    batch_start: np.ndarray = field(repr=False)
    batch_duration: np.ndarray = field(repr=False)
    memory: MemoryTrace = field(repr=False)
    complete: bool = True
    stalls: Mapping[int, int] = field(default_factory=dict)
    limits: BatchLimits = BatchLimits()
    chunks: tuple[tuple[int, str, int], ...] = ()
    paused: tuple[int, ...] = ()
    eviction_starts: tuple[int, ...] = ()

    @property
    def n_completed(self) -> int:
        return len(self.completions)

    @property
    def iterations(self) -> int:
        return int(self.batch_start.size)

    @property
    def total_latency(self) -> float:
        """Σ latency over completed requests (seconds)."""
        return float(sum(self.latencies.values()))

    @property
    def mean_latency(self) -> float | None:
        """Average end-to-end latency (s): ``TEL / n``; ``None`` if nothing completed."""
        return self.total_latency / len(self.latencies) if self.latencies else None

    @property
    def recomputed_tokens(self) -> int:
        return sum(e.tokens_lost for e in self.evictions)

    @property
    def makespan(self) -> float:
        """End of the last batch (seconds)."""
        if not self.batch_start.size:
            return 0.0
        return float(self.batch_start[-1] + self.batch_duration[-1])

    @property
    def busy_seconds(self) -> float:
        """Seconds the worker computes: every batch, plus the time of stalls (``Decision.stall``:
        clearing passes that run the model without producing tokens). Idle gaps (no request
        running) are excluded. GPU-seconds are this times the worker's GPU count."""
        busy = float(self.batch_duration.sum())
        for k in self.stalls:
            if 0 < k < self.batch_start.size:
                busy += float(self.batch_start[k] - self.batch_start[k - 1] - self.batch_duration[k - 1])
        return busy

    @property
    def peak_memory(self) -> int:
        return self.memory.peak

    def memory_after_batches(self) -> np.ndarray:
        """KV usage after each iteration (int64 array, one per batch)."""
        k = self.iterations
        if not k:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self.memory.values(self.memory.origin + 1, self.memory.origin + 1 + k), dtype=np.int64)

    def to_dict(self) -> dict[str, Any]:
        """JSON form; what :func:`llmopt.verify.timed.check_timed_schedule` reads back."""
        return {
            "clock": "seconds",
            "policy": self.policy,
            "cost_model": self.cost_model,
            "M": self.M,
            "complete": self.complete,
            "mean_latency": self.mean_latency,
            "starts": dict(self.starts),
            "evictions": [{"t": e.t, "id": e.id, "tokens_lost": e.tokens_lost} for e in self.evictions],
            "recomputed_tokens": self.recomputed_tokens,
            "completions": dict(self.completions),
            "batch_start": self.batch_start.tolist(),
            "batch_duration": self.batch_duration.tolist(),
        } | ({"stalls": {str(k): v for k, v in self.stalls.items()}} if self.stalls else {}) | (
            {} if self.limits.is_default else {"limits": self.limits.to_dict()}) | (
            {"chunks": [list(c) for c in self.chunks]} if self.chunks else {}) | (
            {"paused": list(self.paused), "eviction_starts": list(self.eviction_starts)} if self.paused else {})
