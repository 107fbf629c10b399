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


#: Redraws of Arrival Model 2's arrivals before giving up (a draw with none is redrawn; at the paper's
#: λ >= 0.5 over T >= 40 steps one redraw is needed with probability about e^-20).
_MAX_REDRAWS = 100_000
#: Smallest M: prompts are drawn from 1..5 and every output needs at least one token (``o_i ~ U{1..M − s_i}``).
_MIN_M = 6


def _check_range(name: str, value: tuple[float, float], low: float, *, positive: bool = False) -> None:
    """Refuse a range parameter ``[lo, hi]`` unless ``low <= lo <= hi`` (and ``hi > 0`` when ``positive``), in
    one line naming the parameter (the generators would otherwise make an empty instance, loop forever, or
    stop with numpy's ``low >= high``)."""
    lo, hi = value[0], value[1]
    if lo < low or lo > hi or (positive and hi <= 0):
        rule = f"{low:g} <= low <= high" + (" and high > 0" if positive else "")
        raise ValueError(f"parameter {name!r} must be [low, high] with {rule}, got [{lo:g}, {hi:g}]")


def jaillet_am1(seed: int, n_range: tuple[int, int] = (40, 60), M_range: tuple[int, int] = (30, 50)) -> Instance:
    """J §5.1 Arrival Model 1: ``n ~ U{40..60}`` requests, all at ``t = 0``; ``M ~ U{30..50}``.

    Raises
    ------
    ValueError
        For a range with ``low > high``, ``n_range`` below 1 or ``M_range`` below 6 (prompts take up to 5
        tokens and outputs at least 1).
    """
    _check_range("n_range", n_range, 1)
    _check_range("M_range", M_range, _MIN_M)
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
    redrawn (at most 100,000 times). ``M ~ U{30..50}``.

    Raises
    ------
    ValueError
        For a range with ``low > high``, ``T_range`` below 1, ``rate_range`` negative or ``[0, 0]`` (no arrival
        could ever be drawn) or ``M_range`` below 6.
    """
    _check_range("T_range", T_range, 1)
    _check_range("rate_range", rate_range, 0, positive=True)
    _check_range("M_range", M_range, _MIN_M)
    rng = np.random.default_rng([seed, 2])
    M = int(rng.integers(M_range[0], M_range[1] + 1))
    T = int(rng.integers(T_range[0], T_range[1] + 1))
    lam = float(rng.uniform(*rate_range))
    for _ in range(_MAX_REDRAWS):  # bounded: a rate that cannot produce an arrival is an error, not a hang
        counts = rng.poisson(lam, size=T)
        if counts.sum() > 0:
            break
    else:
        raise ValueError(f"no arrival in {_MAX_REDRAWS:,} draws of T = {T} steps at λ = {lam:.3g}; raise "
                         "parameter 'rate_range' or 'T_range'")
    arrivals = [t for t, c in zip(range(1, T + 1), counts) for _ in range(int(c))]
    return Instance(M, _jaillet_requests(rng, M, arrivals), name=f"jaillet-am2/seed={seed}")
