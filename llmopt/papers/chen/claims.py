"""Three claims of Chen–Ye–Zhou ("C") checked in closed form (issue 25, item 4); simulated in the study
``chen-theorem-claims`` (:mod:`llmopt.papers.chen.studies.theorem_claims`, ``results/chen/theory/theorem_claims.md``).

* **Corollary 2** (multi-interval A_min, C §4.2 L379–385, App. Algorithm 5): with disjoint
  buckets ``[ℓ_1, u_1], …, [ℓ_m, u_m]`` (``u_j <= ℓ_{j+1}``) and ``α = ℓ_1/u_m``, the revised
  A_min has competitive ratio ``O(log α⁻¹)``, "at least equal to the basic setting".
  :func:`multi_interval_cr` is Lemma 2 extended to buckets (derived here, in Lemma 2's own
  period model), :func:`multi_interval_sup` its supremum over distributions and
  :func:`corollary2_check` the claim.
* **Theorem 2** (A_max lower bound, L156–166): :func:`thm2_instance` builds the proof's instance
  for simulation, :func:`thm2_fluid_ratio` its ratio at any prompt ``s`` (the paper's formula at
  ``s = 0``). DIGEST I-31: the instance reaches at most ``≈ 1.2·α⁻¹``, not ``α⁻¹(1 + α^{-1/2})/2``.
* **Lemma 2 / Figure 1 vs Theorem EC.1** (L261–293, L377 vs L624–633): :func:`ec1_vs_lemma2`
  computes both sides of C's internal contradiction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from llmopt.model.instance import Instance, Request
from llmopt.papers.chen.theory import (
    _as_distribution,
    _check_alpha,
    _check_ell_s,
    _lemma2_parts,
    amax_paper_lower_bound,
    amax_thm2_instance_ratio,
    amax_thm2_instance_sup,
    two_point_sup_amin,
    worst_case_distribution,
)

__all__ = [
    "bucket_bounds",
    "corollary2_check",
    "corollary2_simulation",
    "ec1_vs_lemma2",
    "multi_interval_cr",
    "multi_interval_sup",
    "thm2_fluid_ratio",
    "thm2_fluid_tels",
    "thm2_instance",
    "thm2_row",
]

FloatArray = npt.NDArray[np.float64]


# --------------------------------------------------------------------------- Corollary 2


def bucket_bounds(lowers: Sequence[int], u: int) -> list[tuple[int, int]]:
    """The buckets ``[ℓ_j, ℓ_{j+1} − 1]`` and ``[ℓ_m, u]`` of the integers ``ℓ_1..u`` (Algorithm 5:
    a request of length ``o`` gets ``ℓ_i = max{ℓ_k : ℓ_k <= o}``). Raises ``ValueError`` unless
    ``1 <= ℓ_1 < ℓ_2 < … < ℓ_m <= u``."""
    lows = [int(v) for v in lowers]
    if not lows or lows[0] < 1 or any(b <= a for a, b in zip(lows, lows[1:])) or lows[-1] > u:
        raise ValueError(f"lowers must increase strictly from >= 1 to <= u = {u}, got {list(lowers)!r}")
    return [(lo, hi - 1) for lo, hi in zip(lows, lows[1:])] + [(lows[-1], int(u))]


def multi_interval_cr(x: npt.ArrayLike, lowers: Sequence[int], s: float = 0) -> float:
    """Lemma 2 for multi-interval A_min: ``E[TEL]/TEL(H-SF)`` in the fluid limit (derived here).

    ``x[k − ℓ_1]`` is the fraction of requests of length ``k ∈ ℓ_1..u`` (``u = ℓ_1 + len(x) − 1``),
    and the request of length ``k`` starts with ``õ = ℓ_j`` of its bucket ``B_j``
    (:func:`bucket_bounds`). In Lemma 2's period model a cancelled request of ``B_j`` gets
    ``õ <= o − 1 < ℓ_{j+1}``, so A_min (ordering by ``õ``) finishes ``B_j`` before it starts
    ``B_{j+1}``, as H-SF does; within ``B_j`` it runs Lemma 2's periods with ``ℓ = ℓ_j``. Bucket
    ``j`` lasts ``T_j = Σ_{k∈B_j} δ_j(k) Σ_{i>=k, i∈B_j} i x_i = Σ_{i∈B_j} i(s+i) x_i`` — the same
    as H-SF's (no memory is lost in the fluid limit) — and delays all later requests. So, with
    ``N_j`` / ``D_j`` Lemma 2's numerator / denominator on ``B_j`` alone and
    ``C = 2 Σ_j T_j Σ_{i in later buckets} x_i``::

        CR_multi(x) = (Σ_j N_j + C) / (Σ_j D_j + C),

    where ``Σ_j D_j + C`` is Lemma 2's (H-SF's) denominator on all of ``x``. One bucket gives
    :func:`llmopt.papers.chen.theory.lemma2_cr`; singleton buckets (exact predictions) give 1.
    """
    arr = _as_distribution(x)
    lows = [int(v) for v in lowers]
    _check_ell_s(lows[0] if lows else 1, s)
    u = lows[0] + arr.size - 1
    num = den = cross = 0.0
    later = float(arr.sum())
    for lo, hi in bucket_bounds(lows, u):
        xj = arr[lo - lows[0]:hi - lows[0] + 1]
        later -= float(xj.sum())
        if xj.sum() > 0:
            nj, dj = _lemma2_parts(xj, lo, float(s))
            num, den = num + nj, den + dj
            k = np.arange(lo, hi + 1, dtype=np.float64)
            cross += 2.0 * float(np.sum(k * (s + k) * xj)) * later
    return (num + cross) / (den + cross)


def multi_interval_sup(lowers: Sequence[int], u: int, s: float = 0) -> tuple[float, int]:
    """``sup_x`` of :func:`multi_interval_cr` over distributions on ``ℓ_1..u`` and the worst bucket.

    ``CR_multi`` is the mediant ``(Σ N_j + C)/(Σ D_j + C)`` with ``C >= 0``, so it is at most
    ``max(max_j N_j/D_j, 1)`` and the sup is attained by putting all mass in one bucket: it is
    ``max_j sup`` of Lemma 2 over distributions on ``B_j`` (:func:`worst_case_distribution`;
    a one-length bucket has ratio 1). Returns ``(sup, j)``.
    """
    best, arg = 1.0, 0
    for j, (lo, hi) in enumerate(bucket_bounds(lowers, u)):
        if hi > lo:
            lam = worst_case_distribution(hi, lo, s)[0]
            if lam > best:
                best, arg = lam, j
    return best, arg


def corollary2_check(lowers: Sequence[int], u: int, s: float = 0) -> dict[str, Any]:
    """C Cor. 2 in the fluid limit: the multi-interval sup against the basic A_min on ``[ℓ_1, u]``.

    Returns ``multi`` (:func:`multi_interval_sup`), ``worst_bucket`` (its ``[ℓ_j, u_j]``),
    ``single`` (Lemma 2's sup on ``ℓ_1..u``, the basic setting with ``α = ℓ_1/u``), ``alpha``,
    and ``holds``: ``multi <= single`` ("at least equal to the basic setting"; then the
    ``O(log α⁻¹)`` of Thm 5 carries over).
    """
    multi, j = multi_interval_sup(lowers, u, s)
    lo = int(lowers[0])
    single = worst_case_distribution(u, lo, s)[0] if u > lo else 1.0
    return {"multi": multi, "worst_bucket": bucket_bounds(lowers, u)[j], "single": single, "alpha": lo / u,
            "holds": multi <= single + 1e-12}


def corollary2_simulation(inst: Instance, widths: Sequence[int],
                          readings: Sequence[str] = ("", ":running_estimate=repaired"),
                          seed: int = 0) -> dict[str, Any]:
    """Cor. 2 simulated: ``a-min`` on ``inst``'s shared interval ``[1, u]`` against ``a-min-multi`` with
    buckets of each width (:func:`llmopt.workloads.predictions.bin_intervals`), as ratios to H-SF.

    ``inst``: all requests with the interval ``[1, u]`` and one prompt size (e.g. ``chen-worst-case``).
    ``readings`` are option suffixes of the A_min spec (``""``: the registered default). Every
    schedule is re-verified by the checker. Returns ``rows`` (per width, ``u`` = the single interval
    first: ``width``, ``closed`` = :func:`multi_interval_cr` at the instance's ``s`` on its empirical
    distribution, and per reading ``ratio`` / ``cancellations``) and ``holds``: every bucketed
    ratio is at most the single interval's, for every reading.
    """
    from llmopt.engine.discrete import simulate
    from llmopt.papers.chen.theory import empirical_distribution
    from llmopt.policies import make_policy_spec
    from llmopt.verify.checker import check_schedule
    from llmopt.workloads.predictions import bin_intervals

    u = max(int(r.upper or r.output) for r in inst.requests)
    if any(r.lower != 1 or r.upper != u for r in inst.requests):
        raise ValueError("corollary2_simulation needs every request with the interval [1, u]")
    x = empirical_distribution([r.output for r in inst.requests], 1, u)
    s = inst.requests[0].prompt

    def tel(instance: Instance, spec: str) -> tuple[int, int]:
        sched = simulate(instance, make_policy_spec(spec, seed=seed))
        rep = check_schedule(instance, sched.starts, evictions=sched.evictions)
        if not (rep.ok and rep.tel == sched.tel):
            raise AssertionError(f"{spec}: schedule not verified: {rep.violations[:3]}")
        return sched.tel, len(sched.evictions)

    hsf = tel(inst, "h-sf")[0]
    rows = []
    for width in [u, *[int(w) for w in widths if w != u]]:
        binned = inst if width == u else bin_intervals(inst, width=width, count=-(-u // width))
        row: dict[str, Any] = {"width": width, "closed": multi_interval_cr(x, list(range(1, u + 1, width)), s)}
        for reading in readings:
            t, c = tel(binned, ("a-min" if width == u else "a-min-multi") + reading)
            row[f"ratio{reading}"], row[f"cancellations{reading}"] = t / hsf, c
        rows.append(row)
    holds = all(r[f"ratio{g}"] <= rows[0][f"ratio{g}"] + 1e-12 for r in rows for g in readings)
    return {"rows": rows, "holds": holds, "hsf": hsf, "u": u, "s": s}


# --------------------------------------------------------------------------- Theorem 2


def thm2_fluid_tels(ell: int, u: int, a: float, b: float, s: float = 0) -> tuple[float, float]:
    """The fluid ``(E[TEL(A_max)], TEL(H-SF))`` of :func:`thm2_fluid_ratio` (in steps)."""
    _check_ell_s(ell, s)
    M = ell * (s + u)
    n_l, n_u = a * u, b * ell
    t_a = (n_l * ell + n_u * u) / ell
    t_l, t_u = n_l * ell * (s + ell) / M, n_u * u * (s + u) / M
    return (n_l + n_u) * t_a / 2.0, n_l * t_l / 2.0 + n_u * (t_l + t_u / 2.0)


def thm2_fluid_ratio(ell: int, u: int, a: float, b: float, s: float = 0) -> float:
    """``E[TEL(A_max)]/TEL(H-SF)`` on Thm 2's instance with prompt ``s`` (fluid; derived here).

    Instance: ``M = ℓ(s+u)``, ``N_ℓ = a·u`` requests of length ``ℓ``, ``N_u = b·ℓ`` of length
    ``u``, all with interval ``[ℓ, u]``. A_max reserves ``s + u`` for every request, so it runs
    ``ℓ`` at a time and finishes all ``n = N_ℓ + N_u`` in ``T_A = (N_ℓℓ + N_u u)/ℓ``, each
    request waiting ``T_A/2`` on average. H-SF runs the short ones first,
    ``T_ℓ = N_ℓℓ(s+ℓ)/M``, then the long ones, ``T_u = N_u u(s+u)/M``:
    ``TEL = N_ℓT_ℓ/2 + N_u(T_ℓ + T_u/2)``. At ``s = 0`` this is the paper's
    ``(u/ℓ)(au + bℓ)(a + b)/(ua² + 2ℓab + ub²)`` (:func:`amax_thm2_instance_ratio`).
    """
    amax, hsf = thm2_fluid_tels(ell, u, a, b, s)
    return amax / hsf


def thm2_instance(ell: int, u: int, a: int, b: int, s: int = 1, seed: int = 0) -> Instance:
    """Thm 2's instance (module docstring) as a discrete :class:`Instance`: ``M = ℓ(s+u)``,
    ``a·u`` requests of length ``ℓ`` and ``b·ℓ`` of length ``u`` in a seeded random order, all at
    step 0 with interval ``[ℓ, u]``. (C has ``s = 0``; the model needs ``s >= 1``.)"""
    if not (1 <= ell < u) or a < 0 or b < 0 or a + b == 0 or s < 1:
        raise ValueError(f"need 1 <= ell < u, a, b >= 0 not both 0 and s >= 1; got {ell}, {u}, {a}, {b}, {s}")
    outs = np.array([ell] * (a * u) + [u] * (b * ell), dtype=np.int64)
    outs = np.random.default_rng([seed, 27]).permutation(outs)
    reqs = tuple(Request(f"r{i}", 0, s, int(o), ell, u) for i, o in enumerate(outs.tolist()))
    return Instance(ell * (s + u), reqs, name=f"thm2/ell={ell} u={u} a={a} b={b} s={s} seed={seed}")


def thm2_row(alpha: float, ell: int, a: int, b: int, s: int = 1) -> dict[str, float]:
    """The closed-form numbers beside one simulated Thm 2 instance (``u = ℓ/α``)."""
    _check_alpha(alpha)
    u = round(ell / alpha)
    r = a / b
    sup, r_star = amax_thm2_instance_sup(alpha)
    return {"alpha": alpha, "ell": ell, "u": u, "a": a, "b": b, "a/b": r, "claimed": amax_paper_lower_bound(alpha),
            "formula_s0": amax_thm2_instance_ratio(alpha, r), "fluid_s": thm2_fluid_ratio(ell, u, a, b, s),
            "sup_s0": sup, "argmax_a/b": r_star}


# --------------------------------------------------------------------------- Lemma 2 vs Thm EC.1


def ec1_vs_lemma2(u: int = 10, ell: int = 1, s: float = 0) -> dict[str, Any]:
    """Both sides of C's contradiction for A_min on ``[ℓ, u]`` in the fluid limit.

    Thm EC.1 (L624–633): "for any feasible scheduling policy π, the worst-case competitive
    ratio is attained when each output length takes either the lower bound ℓ or the upper
    bound u". Lemma 2 (with Cor. 1 / Figure 1) gives A_min's ratio for every distribution;
    its sup over all distributions on ``ℓ..u`` (``interior``, attained by a distribution with
    mass strictly inside) exceeds its sup over the two-point ones (``two_point``; Thm 6:
    ``(3 − α)/2`` at ``s = 0``). With ``u = 10, ℓ = 1, s = 0``: 1.7249 vs 1.45. One of the two
    results is wrong.

    Returns
    -------
    dict
        ``interior`` (sup over distributions), ``x`` (its maximiser over ``ℓ..u``),
        ``inside_mass`` (its mass on ``ℓ < k < u``), ``two_point`` and ``two_point_t``
        (the sup over ``{ℓ, u}`` and its ``x_ℓ/x_u``), ``gap`` (``interior − two_point``).
    """
    lam, x = worst_case_distribution(u, ell, s)
    tp, t = two_point_sup_amin(ell, u, s)
    return {"interior": lam, "x": x, "inside_mass": float(x[1:-1].sum()), "two_point": tp, "two_point_t": t,
            "gap": lam - tp, "u": u, "ell": ell, "s": s}
