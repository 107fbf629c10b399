"""The look-ahead memory check (5) of Jaillet et al. (J §4, eq. (5)).

A batch is described by items ``(p, s, o)``: start step, prompt, output length. Item
usage at integer time ``τ`` is ``s + τ − p`` for ``p < τ <= p + o``. Usage of each item is
linear between completion times and drops to 0 right after, so the total peaks only at
completion times; checking ``τ ∈ {p_j + o_j} , τ > t`` is exact (J L153).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["usage_at", "fits"]

Item = tuple[int, int, int]


def usage_at(items: Iterable[Item], tau: int) -> int:
    """Total KV usage of ``items`` at integer time ``tau``."""
    return sum(s + tau - p for (p, s, o) in items if p < tau <= p + o)


def fits(items: Sequence[Item], t: int, M: int) -> bool:
    """Whether ``items`` (running requests plus candidates starting at ``t``) stay
    within ``M`` at every completion time after ``t``."""
    for (p0, _s0, o0) in items:
        tau = p0 + o0
        if tau > t and usage_at(items, tau) > M:
            return False
    return True
