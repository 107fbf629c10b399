"""Closed-form dual solution (25)–(27) of Jaillet et al. App. B.3, for identical requests.

Setting: ``n`` requests, all arriving at 0, with the same prompt ``s`` and output ``o``,
memory ``M``, horizon ``T̄`` (default ``n·o``, which is ``T_c = max a + Σ o`` here, so the
windows ``0 … T̄ − o`` contain an optimal schedule). With ``β = 2s + o + 1``::

    (25) ȳ   = ( β·o·n/(2M) − (o−1)(3s+2o+2)/(3β) )^+
    (26) λ_1 = ( 2ȳ + 2(o−1)(3s+2o+2)/(3β) ) / (β·o)
    (27) λ_t = ( λ_1 − 2(t−1)/(β·o) )^+                  t = 1 … T̄

Lemma B.1 shows ``(ȳ, λ)`` satisfies the dual constraints (23) for ``t = 0 … T̄``, so by
weak duality::

    D = n·o + n·ȳ − M·Σ_{t=1}^{T̄} λ_t  <=  LP  <=  OPT.

**The exact discrete sum is used** (DIGEST I-14). The paper (J L629) replaces ``Σ_t λ_t``
by the integral ``λ_1²·β·o/4`` of the ramp, but the discrete sum of a decreasing ramp
*exceeds* that integral, so the paper's expression is not a lower bound: with
``n=5, s=1, o=1, M=10`` it is 7.5 while the LP optimum is 5. :func:`paper_approximation`
computes it for comparison only.

All quantities are rational; :func:`closed_form_dual` computes ``D`` exactly with
:class:`fractions.Fraction` (the positive part of the ramp has a closed-form sum) and
reports it as a float. Certifying it (the checker recomputes the bound from ``λ`` alone)
is the job of the ``closed-form-dual`` bound provider in :mod:`llmopt.opt.bounds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from llmopt.model.instance import Instance

__all__ = [
    "ClosedFormDual",
    "closed_form_dual",
    "paper_approximation",
    "eq23_max_violation",
    "identical_parameters",
]


@dataclass(frozen=True)
class ClosedFormDual:
    """The dual solution (25)–(27) and its exact objective.

    Attributes
    ----------
    n, s, o, M, horizon : int
        The instance parameters and ``T̄``.
    ybar : float
        ``ȳ`` of (25) (the same for every request).
    lam : ndarray, shape (horizon,)
        ``lam[t-1] = λ_t`` for ``t = 1 … T̄`` (27).
    bound : float
        ``D = n·o + n·ȳ − M·Σ_t λ_t`` with the exact discrete sum.
    last_positive : int
        Largest ``t`` with ``λ_t > 0`` (0 if none).
    """

    n: int
    s: int
    o: int
    M: int
    horizon: int
    ybar: float
    lam: np.ndarray = field(repr=False)
    bound: float
    last_positive: int

    @property
    def lambda_1(self) -> float:
        """``λ_1`` of (26) (``0`` if the horizon is empty)."""
        return float(self.lam[0]) if self.lam.size else 0.0

    def lambda_by_time(self) -> np.ndarray:
        """``λ`` indexed by time (``[0, λ_1, …, λ_T̄]``), as :mod:`llmopt.verify.checker` expects."""
        return np.concatenate([[0.0], self.lam])


def _validate(n: int, s: int, o: int, M: int) -> None:
    for name, v, least in (("n", n, 1), ("s", s, 1), ("o", o, 1), ("M", M, 2)):
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise ValueError(f"closed-form dual: {name} must be an integer >= {least}, got {v!r}")
    if s + o > M:
        raise ValueError(f"closed-form dual: s + o = {s + o} exceeds M = {M}; no request can run")


def _exact(n: int, s: int, o: int, M: int) -> tuple[Fraction, Fraction, Fraction]:
    """``(ȳ, λ_1, d)`` as fractions, ``d = 2/(β·o)`` the ramp's slope."""
    beta = 2 * s + o + 1
    shift = Fraction(2 * (o - 1) * (3 * s + 2 * o + 2), 3 * beta)  # 2(o−1)(3s+2o+2)/(3β)
    ybar = max(Fraction(beta * o * n, 2 * M) - shift / 2, Fraction(0))
    lam1 = (2 * ybar + shift) / (beta * o)
    d = Fraction(2, beta * o)
    return ybar, lam1, d


def closed_form_dual(n: int, s: int, o: int, M: int, horizon: int | None = None) -> ClosedFormDual:
    """Evaluate the closed-form dual (25)–(27) and its exact objective ``D``.

    Parameters
    ----------
    n, s, o, M : int
        Number of requests (all at 0), prompt, output length, memory.
    horizon : int, optional
        ``T̄``; default ``n·o``. ``D`` is a lower bound on OPT only if ``T̄ >= n·o``
        (then the windows ``0 … T̄−o`` contain an optimal schedule) and (23) holds
        for the ramp truncated at ``T̄`` (:func:`eq23_max_violation`).

    Returns
    -------
    ClosedFormDual
    """
    _validate(n, s, o, M)
    T = n * o if horizon is None else int(horizon)
    if T < o:
        raise ValueError(f"closed-form dual: horizon {T} is shorter than o = {o}")
    ybar, lam1, d = _exact(n, s, o, M)
    # λ_t = λ_1 − d(t−1) > 0  ⇔  t − 1 < λ_1/d; the number of positive terms:
    L = min(T, math.ceil(lam1 / d)) if lam1 > 0 else 0
    lam_sum = L * lam1 - d * Fraction(L * (L - 1), 2)
    bound = n * o + n * ybar - M * lam_sum
    t = np.arange(1, T + 1, dtype=float)
    lam = np.maximum(float(lam1) - float(d) * (t - 1), 0.0)
    lam[L:] = 0.0
    return ClosedFormDual(n=n, s=s, o=o, M=M, horizon=T, ybar=float(ybar), lam=lam, bound=float(bound),
                          last_positive=L)


def paper_approximation(n: int, s: int, o: int, M: int) -> float:
    """The paper's closed-form value ``n·o + n·ȳ − M·λ_1²·β·o/4`` (J L629). **Not a bound.**

    It replaces ``Σ_t λ_t`` by the integral of the ramp, which is smaller than the sum,
    so the value can exceed the LP optimum (``n=5, s=1, o=1, M=10``: 7.5 > 5; DIGEST
    I-14). Provided only to document the discrepancy.
    """
    _validate(n, s, o, M)
    ybar, lam1, _ = _exact(n, s, o, M)
    beta = 2 * s + o + 1
    return float(n * o + n * ybar - M * lam1 * lam1 * beta * o / 4)


def eq23_max_violation(cf: ClosedFormDual) -> float:
    """Largest violation of (23) by the closed-form ``(ȳ, λ)``, over ``t = 0 … T̄``.

    The violation at ``t`` is ``ȳ − Σ_{τ=t+1}^{t+o}(s+τ−t)·λ_τ − t`` with ``λ_τ = 0`` past
    ``T̄``. Lemma B.1 says it is ``<= 0``; returns ``max(0, …)``.
    """
    T, o, s = cf.horizon, cf.o, cf.s
    lam = np.zeros(T + o + 2)
    lam[1: T + 1] = cf.lam
    t = np.arange(0, T + 1)
    j = np.arange(1, o + 1)
    pay = ((s + j)[None, :] * lam[t[:, None] + j[None, :]]).sum(axis=1)
    return float(max(0.0, np.max(cf.ybar - pay - t)))


def identical_parameters(instance: Instance) -> tuple[int, int, int, int]:
    """``(n, s, o, M)`` of an identical-requests-at-0 instance.

    Raises
    ------
    ValueError
        If the instance is empty, some request arrives after 0, or prompts or output
        lengths differ (the message names the first offending request).
    """
    if instance.n == 0:
        raise ValueError("closed-form dual: the instance has no requests")
    first = instance.requests[0]
    for r in instance.requests:
        if r.arrival != 0:
            raise ValueError(
                f"closed-form dual needs all arrivals at 0; request {r.id!r} arrives at {r.arrival}"
            )
        if r.prompt != first.prompt or r.output != first.output:
            raise ValueError(
                "closed-form dual needs identical requests; "
                f"request {r.id!r} has (s, o) = ({r.prompt}, {r.output}) but {first.id!r} has "
                f"({first.prompt}, {first.output})"
            )
    return instance.n, first.prompt, first.output, instance.M
