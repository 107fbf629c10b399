"""Lower-bound certificates on memory rows: start windows and the dual bound ``λ`` (DIGEST §1.3).

Part of the independent checker (see :mod:`llmopt.verify`): the windows a certificate is
evaluated over are derived here from the instance and from a schedule that
:func:`~llmopt.verify.checker.check_schedule` verifies first — never taken from the caller.

:func:`check_lower_bound_certificate`
    The weak-duality lower bound certified by a vector ``λ >= 0`` of memory-row multipliers
    (DIGEST §1.3, "General dual"), over :func:`certified_windows`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from llmopt.model.instance import Instance
from llmopt.model.tolerance import LAMBDA_CHECK_TOL
from llmopt.verify.checker import check_schedule

__all__ = ["CertificateError", "certificate_horizon", "certified_windows", "check_lower_bound_certificate",
           "exact_exponent", "exact_units", "round_down"]


class CertificateError(ValueError):
    """A certificate (multipliers, or the schedule its windows rest on) is malformed or infeasible."""


def certificate_horizon(instance: Instance) -> int:
    """Return ``T_c = max_i a_i + Σ_i o_i``, the default completion horizon of the certificate.

    Some optimal schedule completes by ``T_c``: in an optimal schedule no step
    ``t >= max_i a_i`` before the makespan can be idle (otherwise shifting every later
    request ``d`` steps earlier keeps memory and arrivals feasible and lowers TEL), so
    the steps of ``[max a, makespan)`` each process a request, and there are at most
    ``Σ o_i`` of them. Hence the windows ``a_i … T_c − o_i`` contain an optimal schedule.
    (Derived here independently of the formulations, as the checker must be.)
    """
    if instance.n == 0:
        return 0
    return max(r.arrival for r in instance.requests) + sum(r.output for r in instance.requests)


def certified_windows(instance: Instance, upper_bound_starts: Mapping[str, Any] | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Start windows ``lo_i … hi_i`` that contain an optimal schedule, derived here alone.

    Without a schedule: ``a_i … T_c − o_i`` (:func:`certificate_horizon`). With
    ``upper_bound_starts`` — a schedule this function first verifies with
    :func:`check_schedule` — of TEL ``U``: ``a_i … min(a_i + U − Σ o, T_c − o_i)``.

    Proof of the second form. In an optimal schedule ``Σ_j (k_j − a_j) = OPT − Σ o <= U − Σ o``,
    and every wait is ``>= 0``, so each single wait is ``<= U − Σ o``. An optimal schedule of
    minimum makespan satisfies both this and the horizon. ∎

    Raises
    ------
    CertificateError
        If ``upper_bound_starts`` is not a feasible schedule of the instance.
    """
    a = np.array([r.arrival for r in instance.requests], dtype=np.int64)
    o = np.array([r.output for r in instance.requests], dtype=np.int64)
    hi = certificate_horizon(instance) - o
    if upper_bound_starts is not None:
        report = check_schedule(instance, upper_bound_starts)
        if not report.ok or report.tel is None:
            why = report.violations[0] if report.violations else "infeasible"
            raise CertificateError(f"the upper-bound schedule the windows rest on is rejected: {why}")
        hi = np.minimum(hi, a + (report.tel - int(o.sum())))
    return a, hi


def _multipliers(lam: Any, tol: float, name: str = "λ") -> tuple[np.ndarray, np.ndarray]:
    """``(times, values)`` sorted by time, validated (integer times, finite, ``λ >= −tol``), clamped at 0.

    Accepts a mapping ``{t: λ_t}``, a pair ``(times, values)`` of sequences, or a 1-D array indexed
    by time (``lam[t] = λ_t``, index 0 is time 0)."""
    if isinstance(lam, Mapping):
        keys, vals = list(lam.keys()), [lam[k] for k in lam]
    elif isinstance(lam, tuple) and len(lam) == 2:
        keys, vals = list(np.asarray(lam[0]).ravel()), list(np.asarray(lam[1], dtype=float).ravel())
        if len(keys) != len(vals):
            raise CertificateError(f"{name} has {len(keys)} times but {len(vals)} values")
    else:
        vals = list(np.asarray(lam, dtype=float).ravel())
        keys = list(range(len(vals)))
    for t in keys:
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, numbers.Integral):
            raise CertificateError(f"{name} key {t!r} is not an integer time")
    times = np.asarray(keys, dtype=np.int64)
    values = np.asarray(vals, dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CertificateError(f"{name} at time {int(times[i])} is {values[i]!r}, not a finite number")
    neg = values < -tol
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise CertificateError(f"{name} at time {int(times[i])} is {values[i]!r} < 0; a certificate needs {name} >= 0")
    order = np.argsort(times, kind="stable")
    times, values = times[order], np.maximum(values[order], 0.0)
    if times.size > 1 and np.any(times[1:] == times[:-1]):
        t = int(times[1:][times[1:] == times[:-1]][0])
        raise CertificateError(f"{name} is given twice at time {t}")
    return times, values


def check_lower_bound_certificate(
    instance: Instance,
    lam: Any,
    upper_bound_starts: Mapping[str, Any] | None = None,
    *,
    tol: float = LAMBDA_CHECK_TOL,
) -> float:
    """Recompute the lower bound on OPT certified by memory-row multipliers ``λ >= 0``.

    For any ``λ_t >= 0`` and any start windows ``K_i`` that contain an optimal schedule
    (weak duality of the hindsight LP, DIGEST §1.3 "General dual")::

        bound(λ) = C + Σ_i min_{k ∈ K_i} ( k + Σ_{τ=k+1}^{k+o_i} (s_i + τ − k)·λ_τ ) − M·Σ_t λ_t,
        C = Σ_i (o_i − a_i).

    Proof. Let ``k_i ∈ K_i`` be the starts of an optimal schedule, ``m_t`` its memory at
    time ``t``. Then ``m_t <= M`` gives ``Σ_t λ_t (m_t − M) <= 0``, so
    ``OPT = C + Σ_i k_i >= C + Σ_i k_i + Σ_t λ_t m_t − M Σ_t λ_t``; and
    ``Σ_t λ_t m_t = Σ_i Σ_{τ=k_i+1}^{k_i+o_i} (s_i + τ − k_i) λ_τ``, so each request's term
    is at least its minimum over ``K_i``. ∎

    The windows are never taken from the caller: they are :func:`certified_windows`,
    derived here from the instance and, if given, a schedule this module verifies first.

    Evaluation. For one request the inner cost ``f(k)`` is linear in ``k`` on every run of
    ``k`` over which the set ``{τ : λ_τ > 0, k < τ <= k + o}`` stays the same, so its minimum
    over a window is attained at the window's ends or where that set changes
    (``k ∈ {τ−o−1, τ−o, τ−1, τ}``). When ``λ`` is constant on long runs (bucketed multipliers,
    positive almost everywhere) it is cheaper to use that ``f`` is quadratic between the runs'
    ends (:func:`_run_candidates`). Wide windows are evaluated at whichever of these point sets is
    smaller, narrow ones at every ``k``; either way the minimum is exact and the cost does not depend
    on where the time origin lies (arrivals may be Unix timestamps).

    Arithmetic. Every multiplier is a float64, an exact binary fraction; the whole evaluation (prefix
    sums, each start's cost, the minima, ``M·Σλ``) runs in Python integers counting units of ``2^E``
    (:func:`exact_exponent`), so it is exact on every platform, whatever the width of ``long double``,
    and only the returned float is rounded — down (:func:`round_down`). (It once ran in ``long double``
    with ``Σλ`` rounded to float64 and a margin for the error, which covered it only where ``long
    double`` is x86's 80-bit type.)

    Parameters
    ----------
    instance : Instance
    lam : mapping {t: λ_t}, pair ``(times, values)``, or array indexed by time (``lam[t] = λ_t``)
        Multipliers of the memory rows; times not given count as 0. A multiplier at a time
        when nothing can run only lowers the bound.
    upper_bound_starts : mapping, optional
        A feasible schedule; its TEL narrows the windows (and so raises the bound).
    tol : float
        Negative multipliers down to ``−tol`` are clamped to 0 (solver round-off).

    Returns
    -------
    float
        ``bound(λ)``, rounded down to a float64.

    Raises
    ------
    CertificateError
        If some ``λ_t < −tol``, is not finite, or sits at a non-integer time (the message
        names the time), or ``upper_bound_starts`` is not a feasible schedule.
    """
    times, values = _multipliers(lam, tol)
    E = exact_exponent(values)
    units = exact_units(values, E)
    one = 1 << -E  # an integer in units of 2^E
    total_lambda = int(units.sum()) if units.size else 0
    if instance.n == 0:
        return round_down(-instance.M * total_lambda, E)
    lo, hi = certified_windows(instance, upper_bound_starts)
    origin = int(lo.min())
    rel = times - origin
    prefix = _prefix_sums(times, units, origin)
    change = _change_points(rel, values)
    groups: dict[tuple[int, int, int, int], int] = {}
    for i, r in enumerate(instance.requests):
        key = (r.prompt, r.output, int(lo[i]) - origin, int(hi[i]) - origin)
        groups[key] = groups.get(key, 0) + 1
    total = 0
    for (s, o, k_lo, k_hi), count in groups.items():
        i0 = np.searchsorted(rel, k_lo, side="left")
        i1 = np.searchsorted(rel, k_hi + o + 1, side="right")
        near = rel[i0:i1]
        runs = change[(change >= k_lo) & (change <= k_hi + o + 2)]
        if k_hi - k_lo + 1 <= 4 * min(near.size, runs.size) + 2:
            k = np.arange(k_lo, k_hi + 1, dtype=np.int64)
        elif near.size <= runs.size:
            cand = np.concatenate([near - o - 1, near - o, near - 1, near, [k_lo, k_hi]])
            k = np.unique(cand[(cand >= k_lo) & (cand <= k_hi)])
        else:
            k = _run_candidates(runs, rel, units, prefix, s, o, k_lo, k_hi, one)
        total += count * min(_cost(prefix, s, o, k, one))
    C = sum(r.output - (r.arrival - origin) for r in instance.requests)
    return round_down(C * one + total - instance.M * total_lambda, E)


def exact_exponent(*value_arrays: np.ndarray) -> int:
    """An exponent ``E <= 0`` such that every value of every array is an integer multiple of ``2^E``.

    Every finite float64 is ``m·2^e`` with an integer ``m`` of at most 53 bits, so such an ``E`` exists;
    the checkers then compute in integers counting units of ``2^E`` (:func:`exact_units`), exactly.

    Parameters
    ----------
    *value_arrays : ndarray
        Finite float64 values (multipliers).

    Returns
    -------
    int
        ``min(0, min over the non-zero values of (their binary exponent − 53))``.
    """
    E = 0
    for values in value_arrays:
        nz = values[values != 0]
        if nz.size:
            _, ex = np.frexp(nz)  # nz = mant·2^ex, 0.5 <= |mant| < 1: mant·2^53 is an integer
            E = min(E, int(ex.min()) - 53)
    return E


def exact_units(values: np.ndarray, E: int) -> np.ndarray:
    """The values as exact integer multiples of ``2^E``.

    Parameters
    ----------
    values : ndarray
        Finite float64 values.
    E : int
        From :func:`exact_exponent` over (at least) these values.

    Returns
    -------
    ndarray of object
        Python integers ``values[i] / 2^E``, exactly.
    """
    mant, ex = np.frexp(values)
    m53 = (mant * 2.0 ** 53).astype(np.int64)  # exact: a 53-bit mantissa
    out = np.empty(values.size, dtype=object)
    out[:] = [m << (x - 53 - E) if m else 0 for m, x in zip(m53.tolist(), ex.tolist(), strict=True)]
    return out


def round_down(units: int, E: int) -> float:
    """The largest float64 ``<= units·2^E``: a lower bound must never round up.

    Parameters
    ----------
    units : int
        The exact value in units of ``2^E``.
    E : int
        Its exponent, ``<= 0``.

    Returns
    -------
    float
        ``units·2^E`` rounded towards ``−∞`` (``−inf`` below the float range, the largest float above it).
    """
    exact = Fraction(int(units), 1 << -E)
    try:
        value = float(exact)
    except OverflowError:
        return -math.inf if exact < 0 else math.nextafter(math.inf, 0.0)
    if Fraction(value) > exact:
        value = math.nextafter(value, -math.inf)
    return value


def _cost(prefix: Any, s: int, o: int, k: np.ndarray, one: int) -> np.ndarray:
    """``k + Σ_{τ=k+1}^{k+o} (s + τ − k)·λ_τ`` at relative starts ``k``, exactly, in units of ``2^E``
    (``one`` = ``2^−E``, the prefix sums of :func:`_prefix_sums` over :func:`exact_units`)."""
    a0, a1 = prefix(k)
    b0, b1 = prefix(k + o)
    kl = k.astype(object)
    return kl * one + (s - kl) * (b0 - a0) + (b1 - a1)


def _change_points(rel: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Relative times ``t`` with ``λ_t ≠ λ_{t−1}`` (a superset: a run's ends, zeros included)."""
    if rel.size == 0:
        return rel
    same_prev = np.zeros(rel.size, dtype=bool)
    same_prev[1:] = (rel[1:] == rel[:-1] + 1) & (values[1:] == values[:-1])
    same_next = np.zeros(rel.size, dtype=bool)
    same_next[:-1] = same_prev[1:]
    return np.unique(np.concatenate([rel[~same_prev], rel[~same_next] + 1]))


def _run_candidates(change: np.ndarray, rel: np.ndarray, units: np.ndarray, prefix: Any, s: int, o: int,
                    k_lo: int, k_hi: int, one: int) -> np.ndarray:
    """Starts where ``cost(k)`` can be least when ``λ`` is constant on long runs (bucketed multipliers).

    The second difference of ``cost`` at ``k`` is ``λ_{k+1} − λ_{k+o+1}`` unless ``k + 2`` or ``k + o + 2``
    is a change point, so between consecutive breakpoints ``{z − 2, z − o − 2}`` (``z`` a change point)
    ``cost`` is a quadratic in ``k``: its least value on a segment ``[L, R]`` is at ``L`` or ``R``, or,
    when it is convex (``λ_{L+1} > λ_{L+o+1}``), at the first ``k`` whose first difference is ``>= 0``
    (found in closed form, in exact integers; it and its neighbours are evaluated)."""

    def lam_at(t: np.ndarray) -> np.ndarray:
        j = np.minimum(np.searchsorted(rel, t), rel.size - 1)
        return np.where(rel[j] == t, units[j], 0)

    brk = np.concatenate([change - 2, change - o - 2])
    brk = brk[(brk >= k_lo) & (brk < k_hi)]
    B = np.unique(np.concatenate([[k_lo - 1], brk, [k_hi]]))
    L, R = B[:-1] + 1, B[1:]
    cand = [L, R]
    curv = lam_at(L + 1) - lam_at(L + o + 1)
    convex = (curv > 0).astype(bool) & (R - L >= 2)
    if convex.any():
        Lc, Rc = L[convex], R[convex]
        d0 = _cost(prefix, s, o, Lc + 1, one) - _cost(prefix, s, o, Lc, one)
        width = (Rc - Lc + 1).tolist()
        # first j with d0 + j·curv >= 0, by exact integer ceiling division (capped at the segment)
        step = [min(-(d // c) if d < 0 else 0, w) for d, c, w in zip(d0.tolist(), curv[convex].tolist(), width,
                                                                      strict=True)]
        ks = Lc + np.asarray(step, dtype=np.int64)
        cand += [np.clip(ks + d, Lc, Rc) for d in (-1, 0, 1)]
    return np.unique(np.concatenate(cand))


def _prefix_sums(times: np.ndarray, units: np.ndarray, origin: int):
    """``prefix(x) = (Σ_{t <= x} λ_t, Σ_{t <= x} (t − origin)·λ_t)`` for relative times ``x`` (arrays), exactly:
    ``units`` are the multipliers as integers (:func:`exact_units`), ``times`` sorted."""
    zero = np.zeros(1, dtype=object)
    rel = np.empty(times.size, dtype=object)
    rel[:] = (times - origin).tolist()
    c0 = np.concatenate([zero, np.cumsum(units)]) if units.size else zero  # c0[j] = Σ of the first j λ's
    c1 = np.concatenate([zero, np.cumsum(rel * units)]) if units.size else zero

    def prefix(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        j = np.searchsorted(times, x + origin, side="right")  # number of λ times <= x
        return c0[j], c1[j]

    return prefix
