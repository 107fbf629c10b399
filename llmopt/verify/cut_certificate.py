"""Certificates of cut-and-price LPs: memory, zone / clique, sawtooth-row and configuration multipliers.

Part of the independent checker (see :mod:`llmopt.verify`): every sawtooth row is proved valid here
from DESIGN §1 alone (the provider's copy is :mod:`llmopt.formulations.sawtooth`), the zones are
:func:`~llmopt.verify.zone_certificate.certified_zones`, any other clique is proved by
:func:`~llmopt.verify.clique_certificate.check_clique`, and the windows are
:func:`~llmopt.verify.certificates.certified_windows`.

**Idle-gap theorem.** Let ``U(t)`` be the memory at time ``t`` of a feasible schedule and
``W = (τ0, τ0 + L]`` with ``1 <= L <= M``; ``q_W`` counts the requests completing in ``W``. Then
``Σ_{t ∈ W} U(t) <= L·M − φ_L(q_W)``, where ``φ_L(r)`` (:func:`idle_gap_floor`) is the least
``Σ g(g−1)/2`` over ``r + 1`` positive integers ``g`` adding up to ``L + 1`` (0 for ``r >= L``).

*Proof.* For ``t ∈ W`` let ``d(t) = c − t``, ``c`` the first completion time in ``W`` at or after
``t`` (``τ0 + L + 1`` if none). ``U(t) <= M − d(t)``: trivial if ``U(t) = 0`` (``d <= L <= M``);
else let ``c* >= t`` be the first completion time of any request at or after ``t`` (a running
request completes), so ``d(t) <= c* − t``; if ``c* > t`` every request running at ``t`` still runs at
``c*`` with ``c* − t`` more tokens, so ``M >= U(c*) >= U(t) + c* − t``. With the distinct completion
times ``c_1 < … < c_r`` of ``W`` (``r <= q_W``), the ``d`` values fall into ``r + 1`` runs
``g − 1, …, 0`` (the last run ``g − 1, …, 1`` with one phantom step, ``g`` then counting it) whose
lengths ``g`` add up to ``L + 1``: ``Σ_W d >= φ_L(r) >= φ_L(q_W)`` (``φ_L`` is non-increasing:
splitting a part ``>= 2`` lowers the sum). ∎

A *sawtooth row* ``(τ0, L, δ, ρ)`` with integers ``δ >= 0`` and ``ρ <= min_{q=0…L} (φ_L(q) + δ·q)``
(checked here at every ``q``; for ``q > L`` the minimum's ``q = L`` term covers it, ``φ_L`` being 0
there and ``δ >= 0``) states ``Σ_{t∈W} U(t) − δ·q_W <= L·M − ρ``, valid by the theorem.

**Configuration (per-time knapsack) rows.** At every time ``t`` the requests running then hold
``u_i(t) = s_i + t − k_i >= 2`` tokens each (``s_i >= 1``) and ``Σ_i u_i(t) <= M``. So for any table
``η_t(w) >= 0`` on ``w = 2 … M``,

    ``Σ_{i running at t} η_t(u_i(t)) <= K(η_t) = max { Σ_j η_t(w_j) : w_j ∈ 2 … M, Σ_j w_j <= M }``

(an unbounded knapsack, computed here exactly by dynamic programming over the capacity): the running
requests' sizes are one such multiset. These are the Lagrangian duals of the Dantzig–Wolfe
*configuration master* whose columns are per-time multisets of request sizes fitting in ``M``
(:mod:`llmopt.formulations.configurations`); the checker needs only the tables.

**Certificate and bound.** Memory multipliers ``λ_t >= 0``, clique multipliers ``μ_{S,τ} >= 0`` (the
peak zones of a split, and lag cliques), row multipliers ``ν_r >= 0``. By weak duality (each
relaxed row is ``<= 0`` at an optimal schedule inside the windows) with ``λ'_t = λ_t + Σ_{r: t ∈ W_r} ν_r``
and the completion reward ``R(c) = Σ_{r: c ∈ W_r} δ_r·ν_r``::

    bound = C + Σ_i min_{k ∈ K_i} ( k + Σ_{τ=k+1}^{k+o_i} (s_i + τ − k)·λ'_τ − R(k + o_i)
                                     + Σ_{S ∋ i} Σ_{τ ∈ zone_{S,i}(k)} μ_{S,τ} )
            + Σ_{τ=k+1}^{k+o_i} η_τ(s_i + τ − k)
            − M·Σ_t λ'_t − Σ_S Σ_τ μ_{S,τ} + Σ_r ν_r·ρ_r − Σ_t K(η_t),          C = Σ_i (o_i − a_i).

Arithmetic is exact (integers in units of ``2^E``,
:func:`~llmopt.verify.certificates.exact_exponent`), the result rounded down.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from llmopt.model.instance import Instance
from llmopt.model.tolerance import LAMBDA_CHECK_TOL
from llmopt.verify.certificates import (
    CertificateError,
    _multipliers,
    _prefix_sums,
    certified_windows,
    exact_exponent,
    exact_units,
    round_down,
)
from llmopt.verify.clique_certificate import check_clique
from llmopt.verify.zone_certificate import certified_zones

__all__ = ["idle_gap_floor", "knapsack_max", "check_sawtooth_row", "check_cut_certificate"]


def idle_gap_floor(length: int, completions: int) -> int:
    """``φ_L(r)``: least ``Σ g(g−1)/2`` over ``r + 1`` positive integers adding up to ``L + 1``; 0 for ``r >= L``.

    The even split attains the minimum: moving one unit from a part ``g`` to a part ``h <= g − 2``
    changes the sum by ``h − (g − 1) <= −1``, so a minimiser has all parts within 1 of each other.

    Parameters
    ----------
    length : int
        ``L >= 1``.
    completions : int
        ``r >= 0``.

    Returns
    -------
    int
    """
    L, r = int(length), int(completions)
    if r >= L:
        return 0
    parts = r + 1
    m, extra = divmod(L + 1, parts)
    return extra * (m + 1) * m // 2 + (parts - extra) * m * (m - 1) // 2


def knapsack_max(values: Sequence[int], M: int) -> int:
    """``K``: the most ``Σ_j values[w_j]`` over multisets of sizes ``w_j ∈ 2 … M`` with ``Σ_j w_j <= M``, exactly.

    Parameters
    ----------
    values : sequence of int
        ``values[w]`` for ``w = 0 … M`` (entries 0 and 1 are not used); non-negative integers.
    M : int

    Returns
    -------
    int
        By dynamic programming over the capacity: ``best[c] = max(best[c − 1], max_w best[c − w] + values[w])``.
    """
    best = [0] * (M + 1)
    for c in range(2, M + 1):
        b = best[c - 1]
        for w in range(2, c + 1):
            v = best[c - w] + values[w]
            if v > b:
                b = v
        best[c] = b
    return best[M]


def _int(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise CertificateError(f"{what} is {value!r}, not an integer")
    return int(value)


def check_sawtooth_row(M: int, row: Sequence[Any]) -> tuple[int, int, int, int]:
    """Prove the sawtooth row ``(τ0, L, δ, ρ)`` valid (module docstring) and return it as integers.

    Raises
    ------
    CertificateError
        If the row is not four integers, ``L`` is outside ``1 … M``, ``δ < 0``, or ``ρ`` exceeds
        ``φ_L(q) + δ·q`` at some ``q = 0 … L``.
    """
    try:
        tau0, length, delta, rho = row
    except (TypeError, ValueError):
        raise CertificateError(f"sawtooth row {row!r} is not (start, length, delta, rho)") from None
    tau0, L = _int(tau0, "sawtooth row start"), _int(length, "sawtooth row length")
    delta, rho = _int(delta, "sawtooth row delta"), _int(rho, "sawtooth row rho")
    if not 1 <= L <= M:
        raise CertificateError(f"sawtooth row at {tau0}: length {L} is outside 1 … M = {M}")
    if delta < 0:
        raise CertificateError(f"sawtooth row at {tau0}: delta {delta} < 0")
    floor = min(idle_gap_floor(L, q) + delta * q for q in range(L + 1))
    if rho > floor:
        raise CertificateError(f"sawtooth row ({tau0}, {L}): rho {rho} exceeds min_q φ(q) + δq = {floor}")
    return tau0, L, delta, rho


def check_cut_certificate(
    instance: Instance,
    lam: Any,
    rows: Sequence[tuple[Sequence[Any], Any]],
    *,
    split: Any = None,
    zone_mu: Any = None,
    cliques: Sequence[tuple[Mapping[Any, Any], Any]] = (),
    knapsack: Mapping[Any, Any] | None = None,
    upper_bound_starts: Mapping[str, Any] | None = None,
    tol: float = LAMBDA_CHECK_TOL,
) -> float:
    """Recompute the lower bound on OPT certified by memory, zone / clique and sawtooth-row multipliers.

    Parameters
    ----------
    instance : Instance
    lam : mapping, pair or array
        Memory multipliers (any form :func:`~llmopt.verify.certificates.check_lower_bound_certificate` takes).
    rows : sequence of ``(row, ν)``
        ``row = (τ0, L, δ, ρ)`` (proved by :func:`check_sawtooth_row`), ``ν >= 0`` its multiplier.
    split : int, optional
        The peak-zone split ``h``; its zones (:func:`~llmopt.verify.zone_certificate.certified_zones`)
        take the multipliers ``zone_mu`` (by time).
    zone_mu : mapping, pair or array, optional
    cliques : sequence of ``(members, μ)``
        Completion-lag cliques, each proved by :func:`~llmopt.verify.clique_certificate.check_clique`.
    knapsack : mapping, optional
        ``{t: η_t}``, each ``η_t`` a sequence of ``M + 1`` finite numbers ``>= 0`` indexed by size
        ``w`` (entries 0 and 1 unused); the bound subtracts ``K(η_t)`` (:func:`knapsack_max`), which
        the checker computes itself.
    upper_bound_starts : mapping, optional
        A schedule whose TEL bounds the windows (verified by the checker).
    tol : float
        Negative multipliers down to ``−tol`` are read as 0.

    Returns
    -------
    float
        A lower bound on OPT (module docstring), rounded down.

    Raises
    ------
    CertificateError
        On a bad multiplier, an invalid row or clique, a bad table, a bad split, or an infeasible
        ``upper_bound_starts``.
    """
    M = instance.M
    if instance.n and min(r.prompt for r in instance.requests) < 1:
        raise CertificateError("configuration rows assume every prompt >= 1")
    tables: list[tuple[int, np.ndarray]] = []
    for key, table in (knapsack or {}).items():
        t = _int(key, "configuration table time")
        arr = np.asarray(table, dtype=float).ravel()
        if arr.size != M + 1:
            raise CertificateError(f"configuration table at t={t} has {arr.size} entries, not M + 1 = {M + 1}")
        if not np.all(np.isfinite(arr)) or np.any(arr < -tol):
            raise CertificateError(f"configuration table at t={t} has a value that is not a finite number >= 0")
        arr = np.maximum(arr, 0.0)
        arr[:2] = 0.0
        tables.append((t, arr))
    lt, lv = _multipliers(lam, tol)
    checked_cliques: list[tuple[Mapping[int, tuple[int, int]], tuple[np.ndarray, np.ndarray]]] = []
    if split is not None:
        checked_cliques.append((certified_zones(instance, split), _multipliers(zone_mu if zone_mu is not None else {},
                                                                               tol, "zone μ")))
    for q, (members, mu) in enumerate(cliques):
        try:
            checked_cliques.append((check_clique(instance, members), _multipliers(mu, tol, f"μ of clique {q}")))
        except CertificateError as err:
            raise CertificateError(f"clique {q}: {err}") from None
    checked_rows = []
    nu = np.zeros(len(rows))
    for r, (row, value) in enumerate(rows):
        checked_rows.append(check_sawtooth_row(M, row))
        v = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else np.nan
        if not np.isfinite(v) or v < -tol:
            raise CertificateError(f"sawtooth row {r}: multiplier {value!r} is not a finite number >= 0")
        nu[r] = max(v, 0.0)

    E = exact_exponent(lv, nu, *(mv for _, (_, mv) in checked_cliques), *(arr for _, arr in tables))
    one = 1 << -E
    nu_u = exact_units(nu, E)
    # λ' = λ + Σ_r ν_r on W_r, and the completion reward R, both exact, keyed by time
    mem: dict[int, int] = {}
    for t, u in zip(lt.tolist(), exact_units(lv, E).tolist(), strict=True):
        mem[t] = mem.get(t, 0) + u
    reward: dict[int, int] = {}
    const = 0
    for (tau0, L, delta, rho), u in zip(checked_rows, nu_u.tolist(), strict=True):
        if u == 0:
            continue
        const += u * rho
        for t in range(tau0 + 1, tau0 + L + 1):
            mem[t] = mem.get(t, 0) + u
            if delta:
                reward[t] = reward.get(t, 0) + delta * u
    mem_t = np.array(sorted(mem), dtype=np.int64)
    mem_u = np.empty(mem_t.size, dtype=object)
    mem_u[:] = [mem[t] for t in mem_t.tolist()]
    clique_units = [(members, mt, exact_units(mv, E)) for members, (mt, mv) in checked_cliques]
    eta: dict[int, list[int]] = {}
    for t, arr in tables:
        units = exact_units(arr, E).tolist()
        old = eta.get(t)
        eta[t] = units if old is None else [a + b for a, b in zip(old, units, strict=True)]
    for units in eta.values():
        const -= knapsack_max(units, M)
    total = const - M * int(sum(mem.values()))
    for _, _, mu_units in clique_units:
        total -= int(mu_units.sum())
    if instance.n == 0:
        return round_down(total, E)
    lo, hi = certified_windows(instance, upper_bound_starts)
    origin = int(lo.min())
    prefix = _prefix_sums(mem_t, mem_u, origin)
    zone = [_prefix_sums(mt, mu_units, origin) for _, mt, mu_units in clique_units]
    groups: dict[tuple[Any, ...], int] = {}
    for i, req in enumerate(instance.requests):
        tags = tuple((q, *members[i]) for q, (members, _, _) in enumerate(clique_units)
                     if i in members and sum(members[i]) > 0)
        key = (req.prompt, req.output, int(lo[i]) - origin, int(hi[i]) - origin, tags)
        groups[key] = groups.get(key, 0) + 1
    for (s, o, k_lo, k_hi, tags), count in groups.items():
        k = np.arange(k_lo, k_hi + 1, dtype=np.int64)
        a0, a1 = prefix(k)
        b0, b1 = prefix(k + o)
        kl = k.astype(object)
        cost = kl * one + (s - kl) * (b0 - a0) + (b1 - a1)
        for q, a, b in tags:
            cost = cost + zone[q](k + o + b)[0] - zone[q](k + o - a)[0]
        if eta:
            for j in range(1, o + 1):
                cost = cost + np.array([eta[t][s + j] if t in eta else 0
                                        for t in (k + j + origin).tolist()], dtype=object)
        if reward:
            cost = cost - np.array([reward.get(int(c) + origin, 0) for c in (k + o).tolist()], dtype=object)
        total += count * min(cost)
    C = sum(r.output - (r.arrival - origin) for r in instance.requests)
    return round_down(C * one + total, E)
