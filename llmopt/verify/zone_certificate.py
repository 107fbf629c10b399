"""The zone-LP certificate: memory multipliers ``λ`` and peak-zone multipliers ``μ``.

Part of the independent checker (see :mod:`llmopt.verify`): the zones are proved valid here
(:func:`certified_zones`) from DESIGN §1 alone, and the windows are
:func:`~llmopt.verify.certificates.certified_windows`.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from llmopt.model.instance import Instance
from llmopt.model.tolerance import LAMBDA_CHECK_TOL
from llmopt.verify.certificates import CertificateError, _multipliers
from llmopt.verify.clique_certificate import lagrangian_with_cliques

__all__ = ["certified_zones", "check_zone_certificate"]


def certified_zones(instance: Instance, split: Any) -> dict[int, tuple[int, int]]:
    """``{position: (a_i, b_i)}``: the peak zones of split ``h``, derived here from DESIGN §1 alone.

    Zone set ``Z = {i : s_i + o_i >= max(h, M − h), s_i <= h}``; for ``i ∈ Z``, with ``σ_i`` the
    largest prompt of the *other* members (0 if none), ``a_i = s_i + o_i − h`` and
    ``b_i = max(0, min(s_i + o_i − M + h, h − σ_i))``; the zone of ``i`` is the integer times
    ``(C_i − a_i, C_i + b_i]``, ``C_i`` its completion.

    Why no two zones meet in a feasible schedule. Let ``C_j <= C_i``. If ``i`` starts at or after
    ``C_j``, then ``C_i − C_j >= o_i = a_i + h − s_i >= a_i + b_j`` (``s_i <= σ_j``). Otherwise ``i``
    runs at time ``C_j`` (it started before and has not completed) with ``s_i + o_i − (C_i − C_j)``
    tokens beside ``j``'s ``s_j + o_j``; memory ``<= M`` gives
    ``C_i − C_j >= (s_i + o_i − h) + (s_j + o_j − M + h) >= a_i + b_j``. Either way
    ``C_i − a_i >= C_j + b_j``. ∎ (The ``>= max(h, M − h)`` condition keeps ``a_i`` and the second
    lag non-negative; ``s_i <= h`` keeps the first.)

    Raises
    ------
    CertificateError
        If ``split`` is not an integer with ``0 < split < M``.
    """
    M = instance.M
    if isinstance(split, (bool, np.bool_)) or not isinstance(split, numbers.Integral) or not 0 < int(split) < M:
        raise CertificateError(f"zone split {split!r} is not an integer between 1 and M − 1 = {M - 1}")
    h = int(split)
    inside = [(i, r.prompt, r.prompt + r.output) for i, r in enumerate(instance.requests)
              if r.prompt + r.output >= max(h, M - h) and r.prompt <= h]
    top = sorted((s for _, s, _ in inside), reverse=True)[:2]
    zones = {}
    for i, s, p in inside:
        others_max = top[1] if (s == top[0] and len(top) > 1) else (0 if s == top[0] else top[0])
        zones[i] = (p - h, max(0, min(p - M + h, h - others_max)))
    return zones


def check_zone_certificate(
    instance: Instance,
    lam: Any,
    mu: Any,
    split: Any,
    upper_bound_starts: Mapping[str, Any] | None = None,
    *,
    tol: float = LAMBDA_CHECK_TOL,
    workers: int = 1,
) -> float:
    """Recompute the lower bound on OPT certified by memory multipliers ``λ`` and zone multipliers ``μ``.

    For the peak zones of split ``h`` (:func:`certified_zones`, which proves that at most one zone
    covers each time in any feasible schedule), any ``λ_t, μ_τ >= 0`` and start windows ``K_i``
    that contain an optimal schedule::

        bound = C + Σ_i min_{k ∈ K_i} ( k + Σ_{τ=k+1}^{k+o_i} (s_i + τ − k)·λ_τ
                                          + [i ∈ Z] Σ_{τ=k+o_i−a_i+1}^{k+o_i+b_i} μ_τ )
                − M·Σ_t λ_t − Σ_τ μ_τ,          C = Σ_i (o_i − a_i).

    Proof: as in :func:`check_lower_bound_certificate`, adding ``Σ_τ μ_τ (z_τ − 1) <= 0`` for the
    optimal schedule's zone counts ``z_τ <= 1``. ∎ The windows are :func:`certified_windows`;
    every ``k`` of every window is evaluated (identical requests once), so the cost is the total
    window width, which the stage keeps to LP-sized instances.

    With ``workers = K > 1`` the same formula bounds ``OPT_K(M)`` of K workers with ``M`` each
    (:mod:`llmopt.verify.cluster_bounds` proves it): memory rows at the pooled capacity ``K·M``
    (``− K·M·Σλ``), zones of the per-worker ``M`` of which at most ``K`` overlap (``− K·Σμ``), and
    the horizon windows of the pooled instance. Windows narrowed by a schedule need a K-worker
    schedule verified on every worker: that is
    :func:`llmopt.verify.cluster_bounds.check_cluster_zone_certificate`, and ``upper_bound_starts``
    is refused here when ``K > 1`` (a schedule feasible only pooled may beat ``OPT_K`` and cut the
    K-worker optimum out of the windows).

    Raises
    ------
    CertificateError
        On a bad ``λ`` or ``μ`` (negative beyond ``tol``, not finite, non-integer time, given
        twice), a bad ``split``, an infeasible ``upper_bound_starts``, or ``upper_bound_starts``
        with ``workers > 1``.
    """
    lam_checked = _multipliers(lam, tol)
    mu_checked = _multipliers(mu, tol, "μ")
    zones = certified_zones(instance, split)
    return lagrangian_with_cliques(instance, lam_checked, [(zones, mu_checked)], upper_bound_starts,
                                   workers=workers)
