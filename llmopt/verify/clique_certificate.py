"""Completion-lag cliques: a family of valid inequalities and the checker of their certificates.

Part of the independent checker (see :mod:`llmopt.verify`): every lag and every clique is proved
valid here from DESIGN §1 alone; the provider's copy is :mod:`llmopt.formulations.lag_cliques`.

**Completion lags.** Let ``p_i = s_i + o_i`` (the tokens request ``i`` holds at its last step) and
``C_i = k_i + o_i`` its completion. For two requests ``i ≠ j`` of one worker with ``C_j <= C_i``::

    C_i − C_j >= lag(i | j) = min(o_i, p_i + p_j − M)   if p_i + p_j > M,   else 0.

*Proof.* If ``i`` starts at or after ``C_j`` then ``C_i − C_j >= o_i``. Otherwise ``k_i < C_j <= C_i``:
``i`` runs at time ``C_j`` holding ``s_i + C_j − k_i = p_i − (C_i − C_j)`` tokens beside the ``p_j``
that ``j`` holds at its last step; memory ``<= M`` gives ``C_i − C_j >= p_i + p_j − M``. ∎ When
``p_i + p_j > M`` both cases give a lag of at least 1, so the two completions differ.

**Cliques.** A clique is a set ``S`` of requests, each with integers ``a_u, b_u >= 0``; the *zone*
of ``u`` in a schedule is the times ``(C_u − a_u, C_u + b_u]``. If every two members ``u ≠ v``
with non-empty zones satisfy ``p_u + p_v > M`` and ``a_u + b_v <= lag(u | v)``, the zones of ``S``
are pairwise disjoint in every feasible schedule: with ``C_v < C_u`` (they differ),
``C_u − C_v >= lag(u | v) >= a_u + b_v``, i.e. ``C_u − a_u >= C_v + b_v``. ∎ So for every time
``τ``, ``Σ_{u ∈ S} [τ ∈ zone_u] <= 1``. The peak zones of :mod:`llmopt.verify.zone_certificate`
are one such clique (proved there by its own argument); pairs of conflicting requests with
``(a_u, a_v) = (lag(u|v), lag(v|u))`` and ``b = 0`` are another.

**Certificate.** Memory multipliers ``λ_t >= 0`` and, per clique, multipliers ``μ_{S,τ} >= 0``.
The bound is the Lagrangian value (weak duality, as in
:func:`~llmopt.verify.certificates.check_lower_bound_certificate`, adding
``Σ_S Σ_τ μ_{S,τ}(z_{S,τ} − 1) <= 0`` for an optimal schedule's zone counts ``z_{S,τ} <= 1``)::

    bound = C + Σ_i min_{k ∈ K_i} ( k + Σ_{τ=k+1}^{k+o_i} (s_i + τ − k)·λ_τ
                                     + Σ_{S ∋ i} Σ_{τ=k+o_i−a_{S,i}+1}^{k+o_i+b_{S,i}} μ_{S,τ} )
            − M·Σ_t λ_t − Σ_S Σ_τ μ_{S,τ},            C = Σ_i (o_i − a_i),

over the windows ``K_i`` of :func:`~llmopt.verify.certificates.certified_windows`.
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

__all__ = ["certified_lag", "check_clique", "check_clique_certificate", "lagrangian_with_cliques"]


def certified_lag(instance: Instance, i: int, j: int) -> int:
    """``lag(i | j)``: the least ``C_i − C_j`` of any feasible schedule with ``C_j <= C_i`` (module docstring).

    Parameters
    ----------
    instance : Instance
    i, j : int
        Positions of two different requests.

    Returns
    -------
    int
        ``min(o_i, p_i + p_j − M)`` when ``p_i + p_j > M``, else 0.
    """
    ri, rj = instance.requests[i], instance.requests[j]
    excess = ri.prompt + ri.output + rj.prompt + rj.output - instance.M
    return min(ri.output, excess) if excess > 0 else 0


def _int(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise CertificateError(f"{what} is {value!r}, not a non-negative integer")
    return int(value)


def check_clique(instance: Instance, members: Mapping[Any, Any]) -> dict[int, tuple[int, int]]:
    """Prove a clique valid (module docstring) and return it as ``{position: (a, b)}``.

    Raises
    ------
    CertificateError
        If a position is not a request, ``a`` or ``b`` is not a non-negative integer, or two members
        with non-empty zones do not conflict or are closer than their lag allows.
    """
    clique: dict[int, tuple[int, int]] = {}
    for pos, ab in members.items():
        u = _int(pos, "clique member")
        if u >= instance.n:
            raise CertificateError(f"clique member {u} is not a request position (n = {instance.n})")
        try:
            a, b = ab
        except (TypeError, ValueError):
            raise CertificateError(f"clique member {u}: {ab!r} is not a pair (a, b)") from None
        clique[u] = (_int(a, f"a of clique member {u}"), _int(b, f"b of clique member {u}"))
    live = [u for u, (a, b) in clique.items() if a + b > 0]
    p = {u: instance.requests[u].prompt + instance.requests[u].output for u in live}
    for x, u in enumerate(live):
        for v in live[x + 1:]:
            if p[u] + p[v] <= instance.M:
                raise CertificateError(f"clique members {u} and {v} can complete together "
                                       f"(p = {p[u]} + {p[v]} <= M = {instance.M})")
            for first, second in ((u, v), (v, u)):
                need = clique[first][0] + clique[second][1]
                lag = certified_lag(instance, first, second)
                if need > lag:
                    raise CertificateError(f"clique members {first} after {second}: a + b = {need} exceeds "
                                           f"their completion lag {lag}")
    return clique


def lagrangian_with_cliques(instance: Instance, lam: tuple[np.ndarray, np.ndarray],
                            cliques: Sequence[tuple[Mapping[int, tuple[int, int]], tuple[np.ndarray, np.ndarray]]],
                            upper_bound_starts: Mapping[str, Any] | None, *, workers: int = 1,
                            box: Mapping[int, tuple[int, int]] | None = None) -> float:
    """The Lagrangian value of the module docstring for cliques already proved valid.

    ``lam`` and each clique's ``μ`` are validated ``(times, values)``; with ``workers = K`` the memory
    rows are at ``K·M`` and at most ``K`` zones of a clique overlap (``− K·Σμ``), windows on the pooled
    instance (:func:`llmopt.verify.zone_certificate.check_zone_certificate` documents that case).

    With ``box`` (``{position: (lo, hi)}``, validated integers from the caller) the value bounds the
    schedules whose starts also lie in ``lo … hi``: the minimum is then taken over the certified
    window cut to the box (the bound of one node of a branch-and-bound tree,
    :mod:`llmopt.verify.tree_certificate`). A box that empties a window is the caller's to handle:
    it raises.

    Raises
    ------
    CertificateError
        If ``workers < 1``, or ``workers > 1`` with ``upper_bound_starts``: windows for ``K`` workers
        rest on a K-worker schedule verified on every worker, which a set of starts alone cannot show
        (a pooled-only schedule may beat ``OPT_K`` and cut its optimum out of the windows); use
        :func:`llmopt.verify.cluster_bounds.check_cluster_zone_certificate`.
    """
    if int(workers) > 1 and upper_bound_starts is not None:
        raise CertificateError("windows for K > 1 workers need a K-worker schedule verified on every worker; "
                               "use llmopt.verify.cluster_bounds.check_cluster_zone_certificate")
    return _lagrangian(instance, lam, cliques, upper_bound_starts, workers=workers, box=box)


def _lagrangian(instance: Instance, lam: tuple[np.ndarray, np.ndarray],
                cliques: Sequence[tuple[Mapping[int, tuple[int, int]], tuple[np.ndarray, np.ndarray]]],
                upper_bound_starts: Mapping[str, Any] | None, *, workers: int = 1,
                box: Mapping[int, tuple[int, int]] | None = None) -> float:
    """:func:`lagrangian_with_cliques` without its guard: with ``workers > 1``, ``upper_bound_starts`` must be
    the union of a K-worker schedule the caller has verified on every worker."""
    lt, lv = lam
    K = int(workers)
    if K < 1:
        raise CertificateError(f"workers must be at least 1, got {workers!r}")
    # exact integers in units of 2^E (llmopt.verify.certificates.check_lower_bound_certificate, "Arithmetic")
    E = exact_exponent(lv, *(mv for _, (_, mv) in cliques))
    one = 1 << -E
    lu = exact_units(lv, E)
    mus = [(mt, exact_units(mv, E)) for _, (mt, mv) in cliques]
    total = -K * instance.M * int(lu.sum())
    for _, mu_units in mus:
        total -= K * int(mu_units.sum())
    if instance.n == 0:
        return round_down(total, E)
    pooled = instance if K == 1 else Instance(K * instance.M, instance.requests, name=instance.name,
                                              predictions_may_miss=instance.predictions_may_miss)
    lo, hi = certified_windows(pooled, upper_bound_starts)
    if box:
        lo, hi = lo.copy(), hi.copy()
        for i, (b_lo, b_hi) in box.items():
            lo[i], hi[i] = max(int(lo[i]), b_lo), min(int(hi[i]), b_hi)
        if np.any(lo > hi):
            raise CertificateError("the box leaves some request no start")
    origin = int(lo.min())
    mem = _prefix_sums(lt, lu, origin)
    zone = [_prefix_sums(mt, mu_units, origin) for mt, mu_units in mus]
    groups: dict[tuple[Any, ...], int] = {}
    for i, r in enumerate(instance.requests):
        tags = tuple((q, *members[i]) for q, (members, _) in enumerate(cliques)
                     if i in members and sum(members[i]) > 0)
        key = (r.prompt, r.output, int(lo[i]) - origin, int(hi[i]) - origin, tags)
        groups[key] = groups.get(key, 0) + 1
    for (s, o, k_lo, k_hi, tags), count in groups.items():
        k = np.arange(k_lo, k_hi + 1, dtype=np.int64)
        a0, a1 = mem(k)
        b0, b1 = mem(k + o)
        kl = k.astype(object)
        cost = kl * one + (s - kl) * (b0 - a0) + (b1 - a1)
        for q, a, b in tags:
            cost = cost + zone[q](k + o + b)[0] - zone[q](k + o - a)[0]
        total += count * min(cost)
    C = sum(r.output - (r.arrival - origin) for r in instance.requests)
    return round_down(C * one + total, E)


def check_clique_certificate(
    instance: Instance,
    lam: Any,
    cliques: Sequence[tuple[Mapping[Any, Any], Any]],
    upper_bound_starts: Mapping[str, Any] | None = None,
    *,
    tol: float = LAMBDA_CHECK_TOL,
) -> float:
    """Recompute the lower bound on OPT certified by ``λ`` and completion-lag cliques with their ``μ``.

    Parameters
    ----------
    instance : Instance
    lam : mapping, pair or array
        Memory multipliers (any form :func:`~llmopt.verify.certificates.check_lower_bound_certificate` takes).
    cliques : sequence of ``(members, mu)``
        ``members`` maps request positions to ``(a, b)``; ``mu`` the clique's multipliers by time.
        Each clique is proved valid by :func:`check_clique` before it is used.
    upper_bound_starts : mapping, optional
        A schedule whose TEL bounds the windows (verified by the checker).
    tol : float
        Negative multipliers down to ``−tol`` are read as 0.

    Returns
    -------
    float
        A lower bound on OPT (module docstring).

    Raises
    ------
    CertificateError
        On a bad multiplier, an invalid clique or an infeasible ``upper_bound_starts``.
    """
    checked = []
    for q, (members, mu) in enumerate(cliques):
        try:
            checked.append((check_clique(instance, members), _multipliers(mu, tol, f"μ of clique {q}")))
        except CertificateError as err:
            raise CertificateError(f"clique {q}: {err}") from None
    return lagrangian_with_cliques(instance, _multipliers(lam, tol), checked, upper_bound_starts)
