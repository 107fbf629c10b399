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
    (no clique rows) evaluates ``O(|Z|)`` starts per class, ``Z`` the times where ``λ`` changes value
    (or every start of a window shorter than that: see the function).
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
#: Array entries per block of :func:`price_breakpoints` (bounds its memory: a few hundred MB at most).
BLOCK_ENTRIES = 2_000_000
#: A class is priced at every start when its window has fewer than ``DENSE_FACTOR · (|Z| + 1)`` starts
#: (:func:`price_breakpoints`). A scratch sweep over 0, 8, 16, 32, 64 and 10⁹ at 10,000 LMSYS requests,
#: on three multiplier shapes (Δ = 16 and 64 over the makespan, Δ = 80 over five), put 32 within 10 %
#: of the fastest factor on each; the per-pass times are in ``results/perf/pricing-speed``.
DENSE_FACTOR = 32


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


def _rc(k: np.ndarray, a: int | np.ndarray, s: int | np.ndarray, o: int | np.ndarray, pi: float | np.ndarray,
        P: np.ndarray, Q: np.ndarray) -> np.ndarray:
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
    """The same minimum as :func:`price_full` (one column per class, no clique rows), from breakpoints.

    Classes are priced in blocks, one row per class: the row's segment ends are the breakpoints clipped
    into its window ``a − 1 … k_hi`` and sorted (a breakpoint outside the window lands on an end and
    makes an empty segment, which is skipped), so a block is a few array operations. A class whose
    window holds fewer than ``DENSE_FACTOR · (|Z| + 1)`` starts is instead priced at every start, in
    blocks of classes of similar window width, the smallest start of least reduced cost winning: when
    ``λ`` changes at most times (one multiplier per step, ``Δ = 1``) the breakpoints are every start,
    and sorting them costs more than evaluating them (``results/perf/pricing-speed``).
    """
    H = len(lam) - 1
    o_max = int(o.max())
    extra = max(H, int(a.max())) - H + o_max + 3
    P, Q = _prefix(lam, extra)
    lam_ext = np.concatenate([lam, np.zeros(extra)])
    Z = np.flatnonzero(np.diff(lam_ext)) + 1  # times t with λ_t ≠ λ_{t−1}
    n = len(a)
    min_rc = np.full(n, np.inf)
    best_k = np.zeros(n, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    a64, k_hi_all = a.astype(np.int64), np.minimum(hi.astype(np.int64), np.maximum(H, a.astype(np.int64)))
    width = k_hi_all - a64 + 1
    dense = width < DENSE_FACTOR * (Z.size + 1)

    def stopped() -> Pricing | None:
        if deadline is None or not done.any() or time.perf_counter() <= deadline:
            return None
        new = np.flatnonzero(done & (min_rc < -PRICING_TOL))
        return Pricing(min_rc, new, best_k[new], False)

    by_width = np.flatnonzero(dense)[np.argsort(width[dense], kind="stable")]
    c0 = 0
    while c0 < by_width.size:
        if (cut := stopped()) is not None:
            return cut
        c1 = c0 + 1
        # an eighth of the breakpoint path's block: each entry here takes several temporaries in _rc
        while c1 < by_width.size and (c1 - c0 + 1) * int(width[by_width[c1]]) <= BLOCK_ENTRIES // 8:
            c1 += 1
        rows = by_width[c0:c1]
        w = int(width[rows[-1]])
        ac, sc, oc, kh = (x[rows][:, None] for x in (a64, s.astype(np.int64), o.astype(np.int64), k_hi_all))
        k = np.minimum(ac + np.arange(w)[None, :], kh)  # starts past the window repeat its last start
        rc = _rc(k, ac, sc, oc, pi[rows][:, None], P, Q)
        j = np.argmin(rc, axis=1)  # the first (smallest) start of least reduced cost
        min_rc[rows] = rc[np.arange(len(rows)), j]
        best_k[rows] = k[np.arange(len(rows)), j]
        done[rows] = True
        c0 = c1
    sparse = np.flatnonzero(~dense)
    block = max(1, BLOCK_ENTRIES // (8 * Z.size + 8))
    for b0 in range(0, sparse.size, block):
        if (cut := stopped()) is not None:
            return cut
        rows = sparse[b0:b0 + block]
        ac, sc, oc, k_hi = (x[rows][:, None] for x in (a64, s.astype(np.int64), o.astype(np.int64), k_hi_all))
        ends = np.concatenate([ac - 1, np.broadcast_to(Z - 2, (len(ac), Z.size)), Z - oc - 2, k_hi], axis=1)
        B = np.sort(np.clip(ends, ac - 1, k_hi), axis=1)
        L, R = B[:, :-1] + 1, B[:, 1:]
        segment = L <= R
        curv = lam_ext[L + 1] - lam_ext[np.minimum(L + oc + 1, len(lam_ext) - 1)]
        convex = segment & (curv > 0) & (R - L >= 2)
        d0 = _rc(L + 1, ac, sc, oc, 0.0, P, Q) - _rc(L, ac, sc, oc, 0.0, P, Q)
        step = np.ceil(np.maximum(-d0, 0.0) / np.where(convex, curv, 1.0))
        span = (R - L).astype(float)
        vertex = [L + np.clip(step - d, 0.0, span).astype(np.int64) for d in (0, 1)]  # the k and k − 1 above
        k = np.concatenate([L, R, *vertex], axis=1)
        ok = np.concatenate([segment, segment, convex, convex], axis=1)
        rc = np.where(ok, _rc(k, ac, sc, oc, pi[rows][:, None], P, Q), np.inf)
        low = rc.min(axis=1)
        min_rc[rows] = low
        best_k[rows] = np.where(rc == low[:, None], k, np.iinfo(np.int64).max).min(axis=1)
        done[rows] = True
    new = np.flatnonzero(min_rc < -PRICING_TOL)
    return Pricing(min_rc, new, best_k[new], best_k=best_k)
