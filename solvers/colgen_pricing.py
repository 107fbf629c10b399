"""Pricing for :mod:`llmopt.solvers.colgen`: the start of least reduced cost of every request class.

With memory multipliers ``λ_t >= 0`` (relative times ``0 … H``, zero beyond), assignment duals
``π_c`` and clique-row multipliers ``ν_{q,τ} >= 0``, the reduced cost of class ``c`` starting at ``k``
is (module docstring of :mod:`llmopt.solvers.colgen`)::

    rc(k) = (k − a) − π_c + (s − k)(P[k+o] − P[k]) + (Q[k+o] − Q[k])
            + Σ_{q ∋ c} (R_q[k+o+b_{q,c}] − R_q[k+o−a_{q,c}]),

``P``, ``Q``, ``R_q`` prefix sums of ``λ``, ``t·λ`` and ``ν_q``. Two ways to find its minimum:

:func:`price_full`
    evaluates every ``k`` of the window — the reference, and the only one that takes clique rows.
:func:`price_breakpoints`
    (no clique rows) evaluates ``O(|Z|)`` starts per class, ``Z`` the times where ``λ`` changes value.
    *Why it is exact.* The first difference is
    ``rc(k+1) − rc(k) = 1 − (P[k+o] − P[k+1]) + (s+o)·λ_{k+o+1} − (s+1)·λ_{k+1}``, and the second
    difference at ``k`` is ``λ_{k+1} − λ_{k+o+1}`` whenever neither ``k+2`` nor ``k+o+2`` is in ``Z``.
    So between consecutive *breakpoints* ``{z − 2, z − o − 2 : z ∈ Z}`` ``rc`` is a quadratic in ``k``
    (linear when ``λ`` is sparse): its minimum over a segment ``[L, R]`` is at ``L`` or ``R`` unless the
    quadratic is convex (``λ_{L+1} > λ_{L+o+1}``), when it is at the first ``k`` whose first difference
    is ``>= 0``, found in closed form; that ``k`` and ``k − 1`` are evaluated (a guard against rounding).
    At trace scale ``λ`` is piecewise constant on the bucketed master's rows, so ``|Z|`` is at most
    twice the number of rows, whatever the horizon.

Both return, per class, the least reduced cost and the smallest start attaining it; ties between
starts go to the smallest in both. Tests compare the two on random multipliers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Pricing", "CliqueDuals", "price_full", "price_breakpoints", "PRICING_TOL"]

#: A column is added when its reduced cost is below ``−PRICING_TOL``.
PRICING_TOL = 1e-6


@dataclass(frozen=True)
class CliqueDuals:
    """Multipliers of one clique's rows: ``nu[τ]`` for relative times ``0 … len(nu) − 1`` (zero beyond),
    and each member class's ``(a, b)``."""

    nu: np.ndarray
    members: dict[int, tuple[int, int]]


@dataclass(frozen=True)
class Pricing:
    """``min_rc`` per class; ``new_class``/``new_k``: columns with ``rc < −PRICING_TOL`` (relative starts);
    ``complete`` is False when a deadline cut pricing short (then ``min_rc`` is not a bound);
    ``best_k``: the smallest start of least reduced cost of each class (breakpoint pricing only)."""

    min_rc: np.ndarray
    new_class: np.ndarray
    new_k: np.ndarray
    complete: bool = True
    best_k: np.ndarray | None = None


def _prefix(lam: np.ndarray, extra: int) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums of ``λ`` and ``t·λ``, extended by ``extra`` constant entries past ``H``."""
    tau = np.arange(len(lam), dtype=float)
    P = np.concatenate([np.cumsum(lam), np.full(extra, lam.sum())])
    Q = np.concatenate([np.cumsum(tau * lam), np.full(extra, (tau * lam).sum())])
    return P, Q


def _rc(k: np.ndarray, a: int, s: int, o: int, pi: float, P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    return (k - a) + (s - k) * (P[k + o] - P[k]) + (Q[k + o] - Q[k]) - pi


def _clique_terms(cliques: Sequence[CliqueDuals], n_classes: int) -> tuple[list[list[tuple[int, int, int]]], int]:
    """Per class, ``(clique index, a, b)`` of every clique with a nonzero multiplier; and the last row time."""
    per_class: list[list[tuple[int, int, int]]] = [[] for _ in range(n_classes)]
    last = 0
    for q, cq in enumerate(cliques):
        nz = np.flatnonzero(cq.nu > 0)
        if nz.size == 0:
            continue
        last = max(last, int(nz[-1]))
        for c, (a, b) in cq.members.items():
            if a + b > 0:
                per_class[c].append((q, a, b))
    return per_class, last


def _pick(rc: np.ndarray, k0: int, per_class: int) -> tuple[np.ndarray, np.ndarray]:
    if per_class == 1:
        j = int(np.argmin(rc))
        return rc[j:j + 1], np.array([k0 + j])
    idx = np.argsort(rc, kind="stable")[:per_class]
    return rc[idx], k0 + idx


def price_full(a: np.ndarray, s: np.ndarray, o: np.ndarray, hi: np.ndarray, lam: np.ndarray, pi: np.ndarray,
               per_class: int = 1, cliques: Sequence[CliqueDuals] = (), deadline: float | None = None) -> Pricing:
    """Evaluate every start of every class's window ``a_c … hi_c`` (relative times).

    Only ``k <= max(H, last clique row)`` is evaluated: beyond, every multiplier term is 0 and
    ``rc`` grows with ``k`` (a clique member's ``a <= o``), so the tail's minimum is its first point.
    """
    H = len(lam) - 1
    o_max = int(o.max())
    terms, last = _clique_terms(cliques, len(a))
    H_eval = max(H, last)
    b_max = max([b for cq in cliques for _, b in cq.members.values()], default=0)
    extra = max(H_eval, int(a.max())) - H + o_max + b_max + 2
    P, Q = _prefix(lam, extra)
    R = [np.concatenate([np.cumsum(cq.nu), np.full(H + extra - len(cq.nu) + 1, cq.nu.sum())]) for cq in cliques]
    min_rc = np.empty(len(a))
    new_c: list[int] = []
    new_k: list[int] = []
    for c in range(len(a)):
        if deadline is not None and c % 256 == 0 and time.perf_counter() > deadline:
            return Pricing(min_rc, np.array(new_c, dtype=np.int64), np.array(new_k, dtype=np.int64), False)
        ac, sc, oc = int(a[c]), int(s[c]), int(o[c])
        k_hi = min(int(hi[c]), max(H_eval, ac))
        k = np.arange(ac, k_hi + 1)
        rc = _rc(k, ac, sc, oc, 0.0, P, Q) - pi[c]
        for q, qa, qb in terms[c]:
            rc = rc + (R[q][k + oc + qb] - R[q][k + oc - qa])
        best, ks = _pick(rc, ac, per_class)
        min_rc[c] = best[0]
        for kk, r in zip(ks.tolist(), best.tolist(), strict=True):
            if r < -PRICING_TOL:
                new_c.append(c)
                new_k.append(kk)
    return Pricing(min_rc, np.array(new_c, dtype=np.int64), np.array(new_k, dtype=np.int64))


def price_breakpoints(a: np.ndarray, s: np.ndarray, o: np.ndarray, hi: np.ndarray, lam: np.ndarray,
                      pi: np.ndarray, deadline: float | None = None) -> Pricing:
    """The same minimum as :func:`price_full` (one column per class, no clique rows), from breakpoints."""
    H = len(lam) - 1
    o_max = int(o.max())
    extra = max(H, int(a.max())) - H + o_max + 3
    P, Q = _prefix(lam, extra)
    lam_ext = np.concatenate([lam, np.zeros(extra)])
    Z = np.flatnonzero(np.diff(lam_ext)) + 1  # times t with λ_t ≠ λ_{t−1}
    min_rc = np.empty(len(a))
    best_k = np.empty(len(a), dtype=np.int64)
    new_c: list[int] = []
    new_k: list[int] = []
    for c in range(len(a)):
        if deadline is not None and c % 256 == 0 and time.perf_counter() > deadline:
            return Pricing(min_rc, np.array(new_c, dtype=np.int64), np.array(new_k, dtype=np.int64), False)
        ac, sc, oc = int(a[c]), int(s[c]), int(o[c])
        k_hi = min(int(hi[c]), max(H, ac))
        brk = np.concatenate([Z - 2, Z - oc - 2])
        brk = brk[(brk >= ac) & (brk < k_hi)]
        B = np.unique(np.concatenate([[ac - 1], brk, [k_hi]]))
        L, R = B[:-1] + 1, B[1:]
        cand = [L, R]
        curv = lam_ext[L + 1] - lam_ext[L + oc + 1]
        convex = (curv > 0) & (R - L >= 2)
        if convex.any():
            Lc, Rc, cc = L[convex], R[convex], curv[convex]
            d0 = _rc(Lc + 1, ac, sc, oc, 0.0, P, Q) - _rc(Lc, ac, sc, oc, 0.0, P, Q)
            ks = Lc + np.ceil(np.maximum(-d0, 0.0) / cc).astype(np.int64)
            cand += [np.clip(ks, Lc, Rc), np.clip(ks - 1, Lc, Rc)]
        k = np.unique(np.concatenate(cand))
        rc = _rc(k, ac, sc, oc, float(pi[c]), P, Q)
        j = int(np.argmin(rc))
        min_rc[c] = rc[j]
        best_k[c] = k[j]
        if rc[j] < -PRICING_TOL:
            new_c.append(c)
            new_k.append(int(k[j]))
    return Pricing(min_rc, np.array(new_c, dtype=np.int64), np.array(new_k, dtype=np.int64), best_k=best_k)
