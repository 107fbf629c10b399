"""Idle-gap ("sawtooth") rows: memory cannot stay near ``M`` over a window with few completions.

Why. Every running request grows by one token per step, and memory falls only when a request
completes. So between two completions the memory profile is a rising sawtooth that must stay
below ``M`` at its top: the steps before the next completion are forced below ``M`` by at least
the number of steps left until it. The time-indexed LP (and ``zone-lp``) spreads starts so that
the fractional memory sits at ``M`` for long stretches without completions; these rows forbid it.

Definitions (DESIGN §1 semantics: a request starting at ``k`` holds ``s_i + t − k`` tokens at
``t = k+1 … k+o_i`` and completes at ``C_i = k + o_i``; ``U(t)`` is the memory at time ``t``). A
*window* is ``W = (τ0, τ0 + L]`` (``L`` integer times) with ``1 <= L <= M``; ``q_W`` is the number
of requests with ``C_i ∈ W``. For ``r >= 0`` let

    ``φ_L(r) = min { Σ_j g_j(g_j − 1)/2 : r + 1 positive integers g_j with Σ_j g_j = L + 1 }``

for ``r <= L`` (the even split attains it, as ``g(g−1)/2`` is convex), and ``φ_L(r) = 0`` for ``r >= L``.

**Theorem (idle gap).** In every feasible schedule, for every window ``W`` with ``L <= M``,
``Σ_{t ∈ W} U(t) <= L·M − φ_L(q_W)``. Hence for every integer ``δ >= 0`` and every
``ρ <= min_{q = 0 … L} (φ_L(q) + δ·q)`` the *sawtooth row*

    ``Σ_i ( Σ_{t ∈ W} usage_i(t) − δ·[C_i ∈ W] ) <= L·M − ρ``

is valid.

*Proof.* For ``t ∈ W`` let ``d(t) = c − t`` with ``c`` the first completion time in ``W`` at or
after ``t``, or ``c = τ0 + L + 1`` if there is none. Claim: ``U(t) <= M − d(t)``. If ``U(t) = 0``
this is ``d(t) <= L <= M``. Otherwise some request runs at ``t``; let ``c*`` be the first completion
time ``>= t`` of any request (it exists); ``d(t) <= c* − t`` (``c*`` is in ``W`` or after it). If
``c* = t`` the claim is ``U(t) <= M``. Else nothing completes in ``[t, c*)``, so every request
running at ``t`` (``k_i < t <= C_i``, hence ``C_i >= c*``) still runs at ``c*`` and holds
``c* − t`` more tokens then; there is at least one, so ``M >= U(c*) >= U(t) + (c* − t)``. ∎(claim)
Let the distinct completion times in ``W`` be ``c_1 < … < c_r`` (``r <= q_W``, ``r <= L``), with
``c_0 = τ0``. On ``(c_{j−1}, c_j]`` the ``d`` values are ``g_j − 1, …, 0`` (``g_j = c_j − c_{j−1}``),
summing to ``g_j(g_j − 1)/2``; on the tail ``(c_r, τ0 + L]`` they are ``G, …, 1``, summing to
``g(g − 1)/2`` with ``g = G + 1``. The ``r + 1`` positive ``g``'s add up to ``L + 1``, so
``Σ_{t∈W} d(t) >= φ_L(r)``. ``φ_L`` is non-increasing (splitting a part ``>= 2`` lowers the sum),
so ``φ_L(r) >= φ_L(q_W)``, and ``Σ_W U <= L·M − φ_L(q_W)``. For the row: ``Σ_W U − δ·q_W <=
L·M − (φ_L(q_W) + δ·q_W) <= L·M − ρ``, since ``ρ`` is at most ``φ_L(q) + δ·q`` for ``q <= L``, and for
``q > L`` ``φ_L(q) + δ·q >= δ·L = φ_L(L) + δ·L >= ρ``. ∎

The rows this module proposes take the tangent of the convex ``φ_L`` at an integer ``q0``:
``δ = φ_L(q0) − φ_L(q0 + 1)``, ``ρ = φ_L(q0) + δ·q0`` (:func:`tangent_row`). The checker
(:mod:`llmopt.verify.cut_certificate`) does not rely on the convexity: it checks
``ρ <= φ_L(q) + δ·q`` at every ``q = 0 … L`` itself.

Dominance: the LP with these rows is ``>=`` the LP without them (more valid rows). The rows are
separated, not written down (there are ``O(T·M·n)`` candidates): :func:`separate_sawtooth` finds
the most violated rows of an LP solution, and :mod:`llmopt.opt.sawtooth_bound` runs the cut loop.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from llmopt.model.canonical import Block, CanonicalModel
from llmopt.model.instance import Instance

__all__ = ["SawtoothRow", "idle_gap_floor", "tangent_row", "sawtooth_matrix", "sawtooth_rhs", "with_sawtooth_rows",
           "separate_sawtooth"]

#: ``(τ0, L, δ, ρ)``: the row ``Σ_i (Σ_{t ∈ (τ0, τ0+L]} usage_i(t) − δ·[C_i ∈ W]) <= L·M − ρ``.
SawtoothRow = tuple[int, int, int, int]


def idle_gap_floor(length: int, completions: int) -> int:
    """``φ_L(r)``: the least total idle gap ``Σ_{t ∈ W} d(t)`` of a window of ``L`` times holding ``r``
    distinct completion times (module docstring); 0 for ``r >= L``.

    Parameters
    ----------
    length : int
        ``L >= 1``.
    completions : int
        ``r >= 0``.

    Returns
    -------
    int
        The sum of ``g(g−1)/2`` over the even split of ``L + 1`` into ``r + 1`` positive parts.
    """
    L, r = int(length), int(completions)
    if r >= L:
        return 0
    parts = r + 1
    m, extra = divmod(L + 1, parts)
    return extra * (m + 1) * m // 2 + (parts - extra) * m * (m - 1) // 2


def tangent_row(length: int, q0: int) -> tuple[int, int]:
    """``(δ, ρ)`` of the sawtooth row tangent to ``φ_L`` at ``q0``: ``δ = φ_L(q0) − φ_L(q0+1)``,
    ``ρ = φ_L(q0) + δ·q0`` (valid for every ``q`` since ``φ_L`` is convex; the checker re-checks it)."""
    f0, f1 = idle_gap_floor(length, q0), idle_gap_floor(length, q0 + 1)
    delta = f0 - f1
    return delta, f0 + delta * q0


def _column_data(model: CanonicalModel, instance: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(k, s, o)`` of every ``x`` column of the hindsight IP (prompt and output of its class)."""
    x = model.cols("x")
    first = np.asarray(model.rows("eq2_assignment").labels["first"])
    col_class = np.asarray(x.labels["class"])
    s = np.array([instance.requests[int(f)].prompt for f in first], dtype=np.int64)[col_class]
    o = np.array([instance.requests[int(f)].output for f in first], dtype=np.int64)[col_class]
    return np.asarray(x.labels["k"], dtype=np.int64), s, o


def _row_coefficients(k: np.ndarray, s: np.ndarray, o: np.ndarray, row: SawtoothRow) -> np.ndarray:
    """Per column: ``Σ_{t ∈ W} usage(t) − δ·[k + o ∈ W]`` for one request starting at ``k``."""
    tau0, L, delta, _ = row
    j_lo = np.maximum(1, tau0 + 1 - k)  # steps j = t − k of the run that fall in W
    j_hi = np.minimum(o, tau0 + L - k)
    cnt = np.maximum(0, j_hi - j_lo + 1)
    area = cnt * s + np.where(cnt > 0, (j_lo + j_hi) * cnt // 2, 0)
    done = k + o
    return (area - delta * ((done > tau0) & (done <= tau0 + L))).astype(float)


def sawtooth_matrix(model: CanonicalModel, instance: Instance, rows: list[SawtoothRow]) -> sp.csr_matrix:
    """The left-hand sides of ``rows`` over ``model``'s columns (non-zero only on the ``x`` block)."""
    k, s, o = _column_data(model, instance)
    first = model.cols("x").start
    data, ri, ci = [], [], []
    for r, row in enumerate(rows):
        coef = _row_coefficients(k, s, o, row)
        nz = np.flatnonzero(coef)
        data.append(coef[nz])
        ci.append(nz + first)
        ri.append(np.full(nz.size, r, dtype=np.int64))
    return sp.csr_matrix((np.concatenate(data) if data else np.zeros(0),
                          (np.concatenate(ri) if ri else np.zeros(0, np.int64),
                           np.concatenate(ci) if ci else np.zeros(0, np.int64))), shape=(len(rows), model.n_cols))


def sawtooth_rhs(instance: Instance, rows: list[SawtoothRow]) -> np.ndarray:
    """``L·M − ρ`` of each row."""
    return np.array([L * instance.M - rho for _, L, _, rho in rows], dtype=float)


def with_sawtooth_rows(model: CanonicalModel, instance: Instance, rows: list[SawtoothRow]) -> CanonicalModel:
    """``model`` (the hindsight IP or its relaxation, possibly with more row blocks) plus one sawtooth
    row per entry of ``rows``, as the last block ``sawtooth`` (labels ``start``, ``length``, ``delta``,
    ``rho``). A column that counts several identical requests takes the row's coefficient per request."""
    n_new = len(rows)
    labels = {name: np.array([row[j] for row in rows], dtype=np.int64)
              for j, name in enumerate(("start", "length", "delta", "rho"))}
    last = model.row_blocks[-1].stop
    return replace(
        model,
        name=model.name + "+sawtooth",
        A=sp.vstack([model.A, sawtooth_matrix(model, instance, rows)], format="csr"),
        row_lower=np.concatenate([model.row_lower, np.full(n_new, -np.inf)]),
        row_upper=np.concatenate([model.row_upper, sawtooth_rhs(instance, rows)]),
        row_blocks=model.row_blocks + (Block("sawtooth", last, last + n_new, labels),),
    )


def separate_sawtooth(model: CanonicalModel, instance: Instance, x: np.ndarray, *, max_rows: int = 40,
                      min_violation: float = 1e-4, known: set[SawtoothRow] | None = None) -> list[SawtoothRow]:
    """The most violated sawtooth rows of the LP solution ``x`` (tangent rows, :func:`tangent_row`); ``x`` may
    hold more columns than ``model`` after its ``x`` block (only that block is read).

    For every window ``(τ0, τ0 + L]`` with ``2 <= L <= M`` inside the model's memory rows, the
    fractional memory area ``A_W`` and completion count ``Q_W`` are summed; the tangent at
    ``q0 = ⌊Q_W⌋`` is the most violated row of that window among the tangents. Rows already in
    ``known`` are skipped; at most ``max_rows`` are returned, largest violation first, and only those
    violated by more than ``min_violation · L·M``.
    """
    M = instance.M
    mem = model.rows("eq3_memory")
    times = np.asarray(mem.labels["t"], dtype=np.int64)
    if times.size == 0:
        return []
    t0, t1 = int(times.min()), int(times.max())
    xb = model.cols("x").slice
    xs = np.asarray(x)[xb]
    U = np.zeros(t1 - t0 + 2)
    U[times - t0] = model.A[mem.slice][:, xb] @ xs
    k, _, o = _column_data(model, instance)
    done = k + o - t0
    inside = (done >= 0) & (done <= t1 - t0)
    Q = np.bincount(done[inside], weights=xs[inside], minlength=U.size)[:U.size]
    cu = np.concatenate([[0.0], np.cumsum(U)])
    cq = np.concatenate([[0.0], np.cumsum(Q)])
    found: list[tuple[float, SawtoothRow]] = []
    known = known or set()
    span = t1 - t0 + 1
    for L in range(2, min(M, span) + 1):
        start = np.arange(0, span - L + 1)  # window covers relative times start … start + L − 1
        area = cu[start + L] - cu[start]
        q = cq[start + L] - cq[start]
        q0 = np.floor(q + 1e-9).astype(np.int64)
        phi = np.array([idle_gap_floor(L, r) for r in range(L + 2)], dtype=np.int64)
        f0 = phi[np.minimum(q0, L + 1)]
        f1 = phi[np.minimum(q0 + 1, L + 1)]
        delta = f0 - f1
        rho = f0 + delta * q0
        viol = area - delta * q - (L * M - rho)
        for j in np.flatnonzero(viol > min_violation * L * M):
            row = (int(start[j]) + t0 - 1, L, int(delta[j]), int(rho[j]))
            if row not in known:
                found.append((float(viol[j]) / L, row))
    found.sort(key=lambda v: -v[0])
    out: list[SawtoothRow] = []
    used: set[tuple[int, int]] = set()
    for _, row in found:
        # one row per (window end, δ) per round: neighbouring windows are nearly the same cut
        key = (row[0] + row[1], row[2])
        if key in used:
            continue
        used.add(key)
        out.append(row)
        if len(out) >= max_rows:
            break
    return out
