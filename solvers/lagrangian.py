"""The Lagrangian bound of the hindsight LP by projected subgradient ascent, for trace-scale instances.

Relaxing the memory rows (3) with multipliers ``λ_t >= 0`` leaves one independent problem per
request (its best start against the prices ``λ``), so for any ``λ`` (weak duality; DIGEST §1.3)::

    L(λ) = Σ o_i + Σ_c |c| · min_k [ (k − a_c) + Σ_{τ=k+1}^{k+o_c} (s_c + τ − k)·λ_τ ] − M·Σ_t λ_t  <=  OPT,

and ``max_λ L(λ)`` is the LP value. Column generation (:mod:`llmopt.solvers.colgen`) reaches it through
a master LP whose re-solves dominate at 10,000 requests (more than 10 s each after 20 rounds); here
each step costs one pricing pass (:func:`~llmopt.solvers.colgen_pricing.price_breakpoints`, 0.4–0.5 s
of CPU at that size whatever ``Δ``: ``results/perf/pricing-speed``) and a vector update. ``λ`` is constant
on buckets of ``Δ`` times (``μ_b``), as in the bucketed master; a subgradient of ``L`` in ``μ_b`` is the
memory the minimising starts use in bucket ``b`` minus ``M·Δ``. The step is Polyak's,
``θ (U − L)/‖g‖²`` towards the best schedule's TEL
``U``, with ``θ`` halved after :data:`PATIENCE` steps without a better ``L``.

Whatever ``λ`` the ascent ends at, the certificate is the best ``λ`` seen; the independent checker
(:func:`llmopt.verify.certificates.check_lower_bound_certificate`) recomputes its value.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from llmopt.model.instance import Instance

__all__ = ["LagrangianResult", "subgradient_bound", "PATIENCE", "HEURISTIC_EVERY"]

#: Steps without a better bound before the step factor θ is halved.
PATIENCE = 8
#: Default least number of steps between two calls of the primal heuristic.
HEURISTIC_EVERY = 20


@dataclass(frozen=True)
class LagrangianResult:
    """Outcome of :func:`subgradient_bound`: the best ``L(λ)`` and its ``λ`` (absolute times)."""

    bound: float
    lam_times: np.ndarray = field(repr=False)
    lam_values: np.ndarray = field(repr=False)
    iterations: int = 0
    runtime_s: float = 0.0
    message: str = ""


def _usage(best_k: np.ndarray, size: np.ndarray, s: np.ndarray, o: np.ndarray, H: int) -> np.ndarray:
    """Memory at times ``0 … H`` when each class starts all its requests at ``best_k``."""
    d0 = np.zeros(H + 2)  # constant part Σ size·(s − k), and the coefficient Σ size of t
    d1 = np.zeros(H + 2)
    lo = np.minimum(best_k + 1, H + 1)
    hi = np.minimum(best_k + o + 1, H + 1)
    np.add.at(d0, lo, size * (s - best_k))
    np.add.at(d0, hi, -size * (s - best_k))
    np.add.at(d1, lo, size)
    np.add.at(d1, hi, -size)
    t = np.arange(H + 2)
    return (np.cumsum(d0) + t * np.cumsum(d1))[:H + 1]


def subgradient_bound(
    instance: Instance,
    *,
    upper: float,
    horizon: int,
    bucket: int,
    mu0: np.ndarray | None = None,
    time_limit: float | None = None,
    max_iter: int = 10_000,
    theta: float = 1.0,
    progress: Callable[[str], None] | None = None,
    heuristic: Callable[[np.ndarray], float | None] | None = None,
    heuristic_every: int = HEURISTIC_EVERY,
) -> LagrangianResult:
    """Maximise ``L(λ)`` over ``λ`` constant on buckets of ``bucket`` times up to ``horizon`` (relative).

    Parameters
    ----------
    instance : Instance
    upper : float
        TEL of a feasible schedule (Polyak's target).
    horizon : int
        Last time (relative to the first arrival) with a multiplier; ``λ = 0`` beyond.
    bucket : int
        ``Δ``.
    mu0 : ndarray, optional
        Starting bucket multipliers (e.g. column generation's), length ``ceil(horizon / Δ)``.
    time_limit : float, optional
        Seconds; the best bound so far is returned.
    max_iter : int
    theta : float
        Initial step factor.
    progress : callable, optional
        Called with a one-line status every 5 s.
    heuristic : callable, optional
        A primal heuristic (a Lagrangian heuristic): called with each request's minimising start
        (absolute times, in instance order) at the first step and then at every step that improves the
        bound at least ``heuristic_every`` steps after its last call; it returns the TEL of a feasible
        schedule it built from them (or ``None``), and a lower TEL becomes Polyak's target ``upper``.
    heuristic_every : int
        Least number of steps between two heuristic calls.

    Returns
    -------
    LagrangianResult
    """
    from llmopt.solvers.colgen import class_arrays
    from llmopt.solvers.colgen_pricing import price_breakpoints

    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    if instance.n == 0:
        return LagrangianResult(0.0, np.zeros(0, dtype=np.int64), np.zeros(0))
    origin = min(r.arrival for r in instance.requests)
    cl = class_arrays(instance, origin)
    n_b = -(-horizon // bucket)
    H = n_b * bucket
    mu = np.zeros(n_b) if mu0 is None else np.maximum(np.asarray(mu0, dtype=float)[:n_b], 0.0)
    if mu.size < n_b:
        mu = np.concatenate([mu, np.zeros(n_b - mu.size)])
    const = float(instance.total_output)
    size = cl.size.astype(float)
    zero_pi = np.zeros(len(cl.size))
    best, best_mu = -np.inf, mu.copy()
    stall, it, message, last_print, last_call = 0, 0, "iteration limit", t0, -heuristic_every
    class_of = np.empty(instance.n, dtype=np.int64)
    for c, members in enumerate(cl.members):
        class_of[members] = c
    while it < max_iter:
        lam = np.concatenate([[0.0], np.repeat(mu, bucket)])
        priced = price_breakpoints(cl.a, cl.s, cl.o, cl.hi, lam, zero_pi, deadline=deadline)
        if not priced.complete or priced.best_k is None:
            message = "time limit"
            break
        it += 1
        value = const + float(size @ priced.min_rc) - instance.M * bucket * float(mu.sum())
        if value > best:
            best, best_mu, stall = value, mu.copy(), 0
            if heuristic is not None and it - last_call >= heuristic_every:
                found = heuristic(priced.best_k[class_of] + origin)
                upper, last_call = (upper if found is None else min(upper, found)), it
        else:
            stall += 1
            if stall >= PATIENCE:
                theta, stall = theta / 2, 0
        g = _usage(priced.best_k, size, cl.s.astype(float), cl.o, H)[1:].reshape(n_b, bucket).sum(axis=1)
        g -= instance.M * bucket
        g[(mu <= 0) & (g < 0)] = 0.0  # projected: a zero multiplier with slack stays at zero
        norm = float(g @ g)
        if norm == 0.0:
            message = "zero subgradient: λ is optimal"
            break
        mu = np.maximum(mu + theta * max(upper - value, 0.0) / norm * g, 0.0)
        now = time.perf_counter()
        if deadline is not None and now > deadline:
            message = "time limit"
            break
        if theta < 1e-6:
            message = "step factor below 1e-6"
            break
        if progress is not None and now - last_print > 5.0:
            progress(f"subgradient step {it}: L = {value:.1f}, best {best:.1f}, θ = {theta:.3g}")
            last_print = now
    lam = np.concatenate([[0.0], np.repeat(best_mu, bucket)])
    nz = np.flatnonzero(lam > 0)
    return LagrangianResult(float(best), nz.astype(np.int64) + origin, lam[nz], it, time.perf_counter() - t0,
                            f"{message} after {it} steps")
