"""J §5.1's synthetic workloads: Arrival Models 1 and 2.

A workload is a callable ``(seed: int, **params) -> Instance``; the same seed always
gives the same instance (DESIGN §4 invariant 3).
"""

from __future__ import annotations

import numpy as np

from llmopt.model.instance import Instance, Request

__all__ = ["jaillet_am1", "jaillet_am2"]


def _jaillet_requests(rng: np.random.Generator, M: int, arrivals: list[int]) -> tuple[Request, ...]:
    """J §5.1: ``s_i ~ U{1..5}``, ``o_i ~ U{1..M − s_i}`` (so ``s_i + o_i <= M``)."""
    out = []
    for i, a in enumerate(arrivals):
        s = int(rng.integers(1, 6))
        o = int(rng.integers(1, M - s + 1))
        out.append(Request(f"r{i}", int(a), s, o))
    return tuple(out)


def jaillet_am1(seed: int, n_range: tuple[int, int] = (40, 60), M_range: tuple[int, int] = (30, 50)) -> Instance:
    """J §5.1 Arrival Model 1: ``n ~ U{40..60}`` requests, all at ``t = 0``; ``M ~ U{30..50}``."""
    rng = np.random.default_rng([seed, 1])
    M = int(rng.integers(M_range[0], M_range[1] + 1))
    n = int(rng.integers(n_range[0], n_range[1] + 1))
    return Instance(M, _jaillet_requests(rng, M, [0] * n), name=f"jaillet-am1/seed={seed}")


def jaillet_am2(
    seed: int,
    T_range: tuple[int, int] = (40, 60),
    rate_range: tuple[float, float] = (0.5, 1.5),
    M_range: tuple[int, int] = (30, 50),
) -> Instance:
    """J §5.1 Arrival Model 2: Poisson arrivals on ``[1, T]``.

    ``T ~ U{40..60}``, ``λ ~ U[0.5, 1.5]`` (continuous) and ``N_t ~ Poisson(λ)``
    independent arrivals at each ``t = 1..T`` (DIGEST I-9: the paper's wording allows
    other readings; this is the discrete-time one). A draw with no arrival at all is
    redrawn. ``M ~ U{30..50}``.
    """
    rng = np.random.default_rng([seed, 2])
    M = int(rng.integers(M_range[0], M_range[1] + 1))
    T = int(rng.integers(T_range[0], T_range[1] + 1))
    lam = float(rng.uniform(*rate_range))
    while True:
        counts = rng.poisson(lam, size=T)
        if counts.sum() > 0:
            break
    arrivals = [t for t, c in zip(range(1, T + 1), counts) for _ in range(int(c))]
    return Instance(M, _jaillet_requests(rng, M, arrivals), name=f"jaillet-am2/seed={seed}")
