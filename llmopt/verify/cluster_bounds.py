"""Certified lower bounds for ``K`` identical workers, re-verified from the instance alone (issue 26).

Part of the independent checker (imports only :mod:`llmopt.model` and :mod:`llmopt.verify`). It
re-derives everything a K-worker bound rests on: the pooled instance of capacity ``K·M``, the
K-worker upper-bound schedule (each worker's part verified at ``M`` by
:func:`~llmopt.verify.checker.check_schedule`), and the value of the certificate, computed by the
single-worker checkers on the pooled instance or, for the per-worker zone rows, here.

**Pooling theorem.** Let ``OPT_K(M)`` be the optimal TEL on ``K`` workers of capacity ``M`` each
(discrete time, DESIGN §1 per worker, all workers stepping in lock-step) and ``OPT_1(K·M)`` the
single-worker optimum of the same requests with capacity ``K·M``. Then ``OPT_1(K·M) <= OPT_K(M)``.
Proof. Take any feasible K-worker schedule and forget the workers: every request keeps its start
``k_i >= a_i``, runs ``o_i`` consecutive steps and completes at ``k_i + o_i`` (the single-worker
model has no limit on the batch size, only on memory, and one step of the pooled worker processes
the union of the ``K`` batches of that step). Its memory at time ``t`` is the sum of the ``K``
workers' memories, each ``<= M``, so ``<= K·M``; its TEL is the same. So the union is a feasible
single-worker schedule of capacity ``K·M`` and ``OPT_1(K·M) <= TEL``. ∎ Hence every certified
lower bound on ``OPT_1(K·M)`` — whatever single-worker certificate it carries — is a lower bound
on ``OPT_K(M)``; its certificate is re-checked by the existing checker *on the pooled instance*.
An upper-bound schedule for the windows of those checkers may be the union of a verified
K-worker schedule: it is a feasible pooled schedule (same argument), so its TEL ``U`` is
``>= OPT_1(K·M)`` and the windows ``a_i … min(a_i + U − Σo, T_c − o_i)`` contain an optimal pooled
schedule (:func:`~llmopt.verify.certificates.certified_windows`).

**Per-worker zone rows** (certificate kind ``cluster-zone``), a K-specific strengthening: the peak
zones of split ``h`` *for the per-worker capacity M* (:func:`~llmopt.verify.zone_certificate.certified_zones`
on the M-instance) satisfy, in every feasible K-worker schedule and at every time ``τ``,
``#{i : τ ∈ zone_i} <= K``. Proof. Two requests on the same worker: that worker's sub-schedule is a
feasible single-worker schedule at ``M``, and the disjointness proof of ``certified_zones`` uses,
for a pair ``i ≠ j`` of zone members on one worker, only ``p_i, p_j``, memory ``<= M`` at ``C_j`` on
that worker and ``s_i <= σ_j`` (``σ_j`` the largest prompt of the other members of the *whole*
instance's zone set, which includes ``i``); so zones of requests on one worker are disjoint and
each worker contributes at most one zone at ``τ``. ∎ With ``λ_t >= 0`` on the pooled memory rows
``m_t <= K·M`` and ``μ_τ >= 0`` on these rows, and windows ``K_i`` containing an optimal K-worker
schedule::

    bound = C + Σ_i min_{k ∈ K_i} ( k + Σ_{τ=k+1}^{k+o_i} (s_i + τ − k)·λ_τ
                                      + [i ∈ Z] Σ_{τ=k+o_i−a_i+1}^{k+o_i+b_i} μ_τ )
            − K·M·Σ_t λ_t − K·Σ_τ μ_τ <= OPT_K(M),       C = Σ_i (o_i − a_i)

(weak duality as in :func:`~llmopt.verify.certificates.check_lower_bound_certificate`, adding
``Σ_t λ_t (m_t − K·M) + Σ_τ μ_τ (z_τ − K) <= 0`` for the optimal schedule). The windows are
``certified_windows`` of the pooled instance; they contain an optimal *K-worker* schedule:
each worker's part of an optimal schedule may be replaced by an optimal part of minimum makespan,
which ends by ``T_c`` (the completion-horizon argument on the worker's sub-instance, whose
``max a + Σ o`` is at most the whole instance's), and every wait is ``<= OPT_K − Σ o <= U − Σ o``
for ``U`` the TEL of the verified K-worker schedule. ∎ With ``K = 1`` it is the ``zone-lp``
certificate.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from llmopt.model.instance import Instance
from llmopt.model.tolerance import LAMBDA_CHECK_TOL, agree
from llmopt.verify.certificates import (
    CertificateError,
    _multipliers,
    check_lower_bound_certificate,
)
from llmopt.verify.checker import check_schedule
from llmopt.verify.clique_certificate import _lagrangian
from llmopt.verify.cluster import check_cluster_schedule
from llmopt.verify.energy_certificate import check_energy_certificate
from llmopt.verify.zone_certificate import certified_zones, check_zone_certificate

__all__ = [
    "CERTIFICATE_KINDS",
    "ClusterCertificate",
    "WorkerSplitReport",
    "check_cluster_certificate",
    "check_cluster_zone_certificate",
    "check_worker_split",
    "pooled",
]

#: What each certificate kind carries and which checker evaluates it (on the pooled instance unless noted).
CERTIFICATE_KINDS = {
    "outputs": "no payload: Σ o_i",
    "lambda": "λ: memory-row multipliers (lp, dual-lp, wang-relax-lp, lp-colgen, closed-form-dual)",
    "zone": "λ, μ, split: zone-lp of the pooled instance",
    "energy": "order: the SRPT completion order of the pooled instance",
    "cluster-zone": "λ, μ, split: pooled memory rows + per-worker zone rows of capacity M (checked here)",
}


@dataclass(frozen=True)
class ClusterCertificate:
    """What certifies a lower bound on ``OPT_K(M)``.

    Attributes
    ----------
    stage : str
        The bound stage that produced it (``lp``, ``energy``, ``cluster-zone-lp``, …).
    kind : str
        One of :data:`CERTIFICATE_KINDS`.
    workers : int
        ``K``.
    capacity : int
        The capacity the certificate was computed for: must be ``K·M``.
    claimed : float
        The producer's value; rejected if above what the certificate certifies.
    lam, mu : pair (times, values), optional
        Multipliers of the memory rows and of the zone rows.
    split : int, optional
        Zone split ``h``.
    order : tuple of str, optional
        Energy certificate order.
    assignment, starts : mapping, optional
        A K-worker schedule (worker and start of every request) whose TEL narrows the windows.
    """

    stage: str
    kind: str
    workers: int
    capacity: int
    claimed: float
    lam: Any = None
    mu: Any = None
    split: int | None = None
    order: tuple[str, ...] | None = None
    assignment: Mapping[str, int] | None = None
    starts: Mapping[str, int] | None = None


@dataclass(frozen=True)
class WorkerSplitReport:
    """Outcome of :func:`check_worker_split`: ``ok``, TEL (``None`` unless ok), per-worker TELs, violations."""

    ok: bool
    tel: int | None
    worker_tel: tuple[int, ...]
    violations: tuple[str, ...]


def _workers(K: Any) -> int:
    if isinstance(K, (bool, np.bool_)) or not isinstance(K, numbers.Integral) or int(K) < 1:
        raise CertificateError(f"number of workers {K!r} is not an integer >= 1")
    return int(K)


def pooled(instance: Instance, workers: int) -> Instance:
    """The same requests on one worker of capacity ``K·M`` (derived here, not taken from the caller)."""
    K = _workers(workers)
    return Instance(K * instance.M, instance.requests, name=f"{instance.name or 'instance'}/pooled K={K}",
                    predictions_may_miss=instance.predictions_may_miss)


def check_worker_split(instance: Instance, workers: int, assignment: Mapping[str, Any],
                       starts: Mapping[str, Any]) -> WorkerSplitReport:
    """Verify a K-worker schedule: every request on exactly one worker ``0 … K−1`` and each worker's part
    feasible at ``M`` (:func:`~llmopt.verify.checker.check_schedule` on the worker's sub-instance).

    TEL is the sum of the workers' TELs (TEL is additive over requests)."""
    K = _workers(workers)
    problems = []
    ids = set(instance.ids)
    for what, mapping in (("assignment", assignment), ("starts", starts)):
        extra = sorted(map(str, set(mapping) - ids))
        if extra:
            problems.append(f"{what} names {extra[0]!r}, not a request of the instance")
    parts: list[list[Any]] = [[] for _ in range(K)]
    for r in instance.requests:
        w = assignment.get(r.id)
        if isinstance(w, (bool, np.bool_)) or not isinstance(w, numbers.Integral) or not 0 <= int(w) < K:
            problems.append(f"request {r.id!r} is assigned to {w!r}, not a worker 0 … {K - 1}")
            continue
        parts[int(w)].append(r)
    tels = []
    for w, reqs in enumerate(parts):
        if not reqs:
            tels.append(0)
            continue
        sub = Instance(instance.M, tuple(reqs), name=f"worker {w}")
        report = check_schedule(sub, {r.id: starts[r.id] for r in reqs if r.id in starts})
        if not report.ok or report.tel is None:
            problems += [f"worker {w}: {v}" for v in report.violations[:3]]
            tels.append(0)
        else:
            tels.append(report.tel)
    ok = not problems
    return WorkerSplitReport(ok, sum(tels) if ok else None, tuple(tels), tuple(problems))


def _union(instance: Instance, K: int, cert: ClusterCertificate) -> dict[str, Any] | None:
    """The verified K-worker schedule's starts (its union is a feasible pooled schedule), or ``None``."""
    if cert.assignment is None and cert.starts is None:
        return None
    if cert.assignment is None or cert.starts is None:
        raise CertificateError("a K-worker upper-bound schedule needs both the assignment and the starts")
    report = check_worker_split(instance, K, cert.assignment, cert.starts)
    if not report.ok:
        raise CertificateError(f"the K-worker schedule the windows rest on is rejected: {report.violations[0]}")
    return dict(cert.starts)


def check_cluster_zone_certificate(instance: Instance, workers: int, lam: Any, mu: Any, split: Any,
                                   assignment: Mapping[str, Any] | None = None,
                                   starts: Mapping[str, Any] | None = None, *,
                                   tol: float = LAMBDA_CHECK_TOL) -> float:
    """The bound on ``OPT_K(M)`` certified by pooled memory multipliers ``λ`` and per-worker zone
    multipliers ``μ`` (formula and proof in the module docstring).

    Parameters
    ----------
    instance : Instance
        Capacity ``M`` per worker.
    workers : int
        ``K``.
    lam, mu : mapping, pair or array
        Multipliers of the pooled memory rows and of the per-worker zone rows (any form
        :func:`~llmopt.verify.certificates.check_lower_bound_certificate` takes).
    split : int
        Zone split ``h``, ``0 < h < M`` (the per-worker ``M``).
    assignment, starts : mapping, optional
        A K-worker schedule (worker and start of every request) whose TEL narrows the windows. It is
        verified here, on every worker, by the independent cluster checker
        (:func:`~llmopt.verify.cluster.check_cluster_schedule`) before it is used: its union alone is
        no evidence — a schedule feasible only pooled may have a TEL below ``OPT_K(M)`` and cut every
        K-worker optimum out of the windows. Without them the windows are the horizon's.
    tol : float
        Negative multipliers down to ``−tol`` are read as 0.

    Returns
    -------
    float
        A lower bound on ``OPT_K(M)``, rounded down.

    Raises
    ------
    CertificateError
        On a bad ``λ``, ``μ`` or split, only one of ``assignment`` and ``starts``, or a K-worker
        schedule the cluster checker rejects (the message names the worker and the violation).
    """
    K = _workers(workers)
    union = _verified_k_worker_starts(instance, K, assignment, starts)
    zones = certified_zones(instance, split)
    return _lagrangian(instance, _multipliers(lam, tol), [(zones, _multipliers(mu, tol, "μ"))], union, workers=K)


def _verified_k_worker_starts(instance: Instance, K: int, assignment: Mapping[str, Any] | None,
                              starts: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The starts of a K-worker schedule that :func:`~llmopt.verify.cluster.check_cluster_schedule` accepts."""
    if assignment is None and starts is None:
        return None
    if assignment is None or starts is None:
        raise CertificateError("a K-worker upper-bound schedule needs both the assignment and the starts")
    extra = sorted(map(str, set(starts) - set(assignment)))
    if extra:
        raise CertificateError(f"the K-worker schedule starts request {extra[0]!r} but assigns it to no worker")
    plain = {rid: int(w) if isinstance(w, numbers.Integral) and not isinstance(w, (bool, np.bool_)) else w
             for rid, w in assignment.items()}
    run = {"K": K, "assignment": plain,
           "workers": [{"starts": {rid: starts[rid] for rid, w in plain.items() if w == k and rid in starts},
                        "evictions": []} for k in range(K)]}
    report = check_cluster_schedule(instance, run)
    if not report.ok:
        raise CertificateError(f"the K-worker schedule the windows rest on is rejected: {report.violations[0]}")
    return dict(starts)


def check_cluster_certificate(instance: Instance, workers: int, certificate: ClusterCertificate) -> float:
    """Re-verify a K-worker bound certificate and return the bound on ``OPT_K(M)`` it certifies.

    Checks, from ``instance`` (capacity ``M`` per worker) and ``workers`` alone: the certificate is for
    ``K`` workers and for capacity ``K·M``; its K-worker schedule (if any) is feasible on every
    worker; its value, recomputed by the checker of its kind on the pooled instance
    (:data:`CERTIFICATE_KINDS`), is at least its claim (up to the agreement tolerance).

    Raises
    ------
    CertificateError
        If any check fails (the message says which), including a claim above the certified value —
        a raised bound, or a certificate computed for another capacity.
    """
    K = _workers(workers)
    cert = certificate
    if cert.workers != K:
        raise CertificateError(f"certificate {cert.stage!r} is for {cert.workers} workers, not {K}")
    if cert.capacity != K * instance.M:
        raise CertificateError(f"certificate {cert.stage!r} is for capacity {cert.capacity}, but K·M = {K}·"
                               f"{instance.M} = {K * instance.M}")
    union = _union(instance, K, cert)
    pool = pooled(instance, K)
    if cert.kind == "outputs":
        value = float(instance.total_output)
    elif cert.kind == "lambda":
        value = check_lower_bound_certificate(pool, cert.lam, union)
    elif cert.kind == "zone":
        value = check_zone_certificate(pool, cert.lam, cert.mu, cert.split, union)
    elif cert.kind == "energy":
        value = float(check_energy_certificate(pool, cert.order or (), cert.claimed))
    elif cert.kind == "cluster-zone":
        value = check_cluster_zone_certificate(instance, K, cert.lam, cert.mu, cert.split, cert.assignment,
                                               cert.starts)
    else:
        raise CertificateError(f"unknown certificate kind {cert.kind!r}; known: {', '.join(CERTIFICATE_KINDS)}")
    claimed = cert.claimed
    if isinstance(claimed, bool) or not isinstance(claimed, numbers.Real) or not np.isfinite(float(claimed)):
        raise CertificateError(f"certificate {cert.stage!r}: claimed value {claimed!r} is not a finite number")
    if float(claimed) > value and not agree(float(claimed), value):
        raise CertificateError(f"certificate {cert.stage!r} claims {float(claimed):.9g} but certifies only "
                               f"{value:.9g} on K = {K} workers of M = {instance.M}")
    return value
