"""The record of one simulated run: starts, evictions, completions, memory trace."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Eviction", "Schedule"]


@dataclass(frozen=True, slots=True)
class Eviction:
    """Request ``id`` was evicted at step ``t`` after producing ``tokens_lost`` tokens."""

    t: int
    id: str
    tokens_lost: int


@dataclass(frozen=True)
class Schedule:
    """Outcome of a simulation (DESIGN §1 semantics).

    Attributes
    ----------
    policy : str
    starts : mapping
        Request id → its *final* start step (the run that completed).
    completions : mapping
        Request id → completion time ``c_i = start + o_i``.
    tel : int
        Total end-to-end latency ``Σ_i (c_i − a_i)``.
    memory : tuple of int
        ``memory[t-1]`` is the KV usage at integer time ``t`` (after the batch of step ``t−1``).
    evictions : tuple of Eviction
    recomputed_tokens : int
        Tokens produced and then thrown away by evictions.
    """

    policy: str
    starts: Mapping[str, int]
    completions: Mapping[str, int]
    tel: int
    memory: tuple[int, ...] = field(repr=False)
    evictions: tuple[Eviction, ...] = ()
    recomputed_tokens: int = 0

    @property
    def n(self) -> int:
        return len(self.starts)

    @property
    def makespan(self) -> int:
        return max(self.completions.values(), default=0)

    @property
    def peak_memory(self) -> int:
        return max(self.memory, default=0)

    def to_dict(self) -> dict[str, Any]:
        """JSON form; ``{"starts": ...}`` is what :mod:`llmopt.checker` reads."""
        return {
            "policy": self.policy,
            "tel": self.tel,
            "starts": dict(self.starts),
            "evictions": [{"t": e.t, "id": e.id, "tokens_lost": e.tokens_lost} for e in self.evictions],
            "recomputed_tokens": self.recomputed_tokens,
        }
