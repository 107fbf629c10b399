"""Certified lower bounds on the hindsight optimum of ``K`` identical workers (issue 26, item 3; discrete time).

:func:`cluster_bound` runs a bound stage for ``K`` workers of capacity ``M`` each and returns the
value with its certificate (:class:`~llmopt.verify.cluster_bounds.ClusterCertificate`), which
:func:`~llmopt.verify.cluster_bounds.check_cluster_certificate` re-verifies from the instance and
``K`` alone; the reported value is the checker's.

Why the single-worker bounds carry over (proof in :mod:`llmopt.verify.cluster_bounds`): the union of
any feasible K-worker schedule is a feasible single-worker schedule of capacity ``K·M`` with the same
TEL, so ``OPT_1(K·M) <= OPT_K(M)`` and every certified lower bound on the *pooled* instance (same
requests, capacity ``K·M``) bounds ``OPT_K(M)``; its certificate is checked by the existing
single-worker checker on the pooled instance.

Stages allowed (:data:`CLUSTER_STAGES`), and why each is valid for ``K`` workers:

``sum-of-outputs``
    ``TEL >= Σ o_i``: every request runs ``o_i`` steps after its arrival, on whichever worker.
``lp``, ``dual-lp``, ``wang-relax-lp``, ``lp-colgen``, ``closed-form-dual``
    Memory-row multipliers ``λ`` of the pooled LP (or its dual, its column-generation form, W's
    Relax-LP for a common arrival, J's closed form for identical requests at 0), each a weak-duality
    bound on ``OPT_1(K·M)``; none uses more of the model than "memory ``<= capacity`` at every time,
    ``k_i >= a_i``, ``o_i`` consecutive steps", all of which the union schedule satisfies. Nothing
    in them assumes one batch per step beyond that: the discrete model has no batch-size limit, and
    one pooled step processes the union of the ``K`` workers' batches of that step.
``zone-lp``
    The pooled LP with the peak zones *of capacity ``K·M``* — valid (the zones are proved for every
    feasible pooled schedule, and the union is one) but, for ``K >= 2``, empty: a zone member needs
    ``s_i + o_i >= ⌈K·M/2⌉ >= M``, and only ``s_i + o_i = M = K·M/2`` (``K = 2``) qualifies, with
    ``a_i = b_i = 0``. So for ``K >= 2`` it equals ``lp``; kept so that ``K = 1`` is the ``zone-lp``
    stage.
``energy``
    The SRPT fluid bound of the pooled instance: the fluid relaxation of the union schedule has at
    most ``K·M`` per time.
``cluster-zone-lp`` (K-specific)
    The pooled LP plus the peak-zone rows *of the per-worker capacity* ``M`` with right-hand side
    ``K``: in a K-worker schedule the zones of requests on one worker are disjoint (the zone theorem
    on that worker), so at most ``K`` zones cover any time (proof in
    :mod:`llmopt.verify.cluster_bounds`). It uses the per-worker property "a request holds its
    tokens on one worker of capacity M", which the pooled bounds cannot see. ``>= lp`` over the same
    windows (same LP, more rows); ``= zone-lp`` for ``K = 1``.

Not allowed: any bound computed on capacity ``M`` instead of ``K·M`` (it bounds ``OPT_1(M) >=
OPT_K(M)``, the wrong way), the single-worker MIP bound of the pooled IP except through
:mod:`llmopt.opt.cluster_ip`, and unregistered third-party stages (their certificates have no K-worker
checker). Continuous time is out of scope: there a batch's duration depends on its composition, and
the union of ``K`` parallel batches is not one batch of the same duration.

Windows. The LP stages are built over :func:`~llmopt.model.windows.start_windows` of the pooled
instance from the TEL ``U`` of a verified K-worker schedule (default
:func:`llmopt.opt.cluster_ip.cluster_upper_bound`); the union of that schedule is a feasible pooled
schedule, so the windows contain an optimal pooled schedule — and an optimal K-worker one
(:mod:`llmopt.formulations.cluster_ip`), which the per-worker zone certificate needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from llmopt.model.canonical import CanonicalModel
from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus
from llmopt.model.windows import StartWindows, start_windows
from llmopt.opt.cluster_ip import AssignedSchedule, cluster_upper_bound, verified_schedule
from llmopt.verify.certificates import CertificateError
from llmopt.verify.cluster_bounds import ClusterCertificate, check_cluster_certificate, pooled

__all__ = ["CLUSTER_STAGES", "DEFAULT_CLUSTER_STAGES", "ClusterBound", "cluster_bound", "cluster_bounds",
           "pooled_instance"]

#: Stages :func:`cluster_bound` runs by default (cheap to expensive).
DEFAULT_CLUSTER_STAGES = ("sum-of-outputs", "energy", "lp", "cluster-zone-lp")


def pooled_instance(instance: Instance, workers: int) -> Instance:
    """The same requests on one worker of capacity ``K·M`` (a relaxation of ``K`` workers of ``M``)."""
    return pooled(instance, workers)


@dataclass(frozen=True)
class ClusterBound:
    """A lower bound on ``OPT_K(M)`` and what certifies it.

    Attributes
    ----------
    stage : str
    workers : int
    value : float or None
        The checker's value (``None`` when the stage gave no certificate, with the reason in ``detail``).
    certificate : ClusterCertificate or None
    verified : bool
        The checker accepted the certificate (its value is at least the claim, up to tolerance).
    detail : str
    runtime_s : float
    """

    stage: str
    workers: int
    value: float | None
    certificate: ClusterCertificate | None
    verified: bool
    detail: str
    runtime_s: float = 0.0


@dataclass(frozen=True)
class _Context:
    instance: Instance
    pool: Instance
    K: int
    schedule: AssignedSchedule
    windows: StartWindows
    solver: str | None
    time_limit: float | None
    threads: int
    max_nnz: int | None


def _cert(ctx: _Context, stage: str, kind: str, claimed: float, **payload: Any) -> ClusterCertificate:
    return ClusterCertificate(stage, kind, ctx.K, ctx.pool.M, float(claimed), assignment=ctx.schedule.assignment,
                              starts=ctx.schedule.starts, **payload)


def _solve_lp(ctx: _Context, model: CanonicalModel) -> tuple[CanonicalModel, Any] | str:
    """Solve an LP with row duals; returns ``(model, result)`` or why not."""
    from llmopt.solvers import Capability, get_solver, pick_solver

    if ctx.max_nnz is not None and model.nnz > ctx.max_nnz:
        return f"skipped: its LP has {model.size.describe()} (max_nnz={ctx.max_nnz:,})"
    name = pick_solver(Capability.LP_DUALS, prefer=ctx.solver)
    if name is None:
        return "no available solver with LP duals"
    res = get_solver(name).solve(model, time_limit=ctx.time_limit, threads=ctx.threads)
    if res.status is SolveStatus.INTERRUPTED:
        raise KeyboardInterrupt
    if res.status is not SolveStatus.OPTIMAL or res.objective is None or res.duals is None:
        return f"LP not solved by {name}: {res.status} {res.message}".strip()
    return model, res


def _lp_model(model: CanonicalModel) -> CanonicalModel:
    """The LP relaxation with ``x <= |c|`` dropped (implied by the assignment rows), so that the row duals
    alone are dual feasible (as in :func:`llmopt.opt.bounds.lp_bound`)."""
    lp = model.relax()
    return replace(lp, col_upper=np.full(lp.n_cols, np.inf))


def _stage_outputs(ctx: _Context) -> ClusterCertificate | str:
    return _cert(ctx, "sum-of-outputs", "outputs", ctx.instance.total_output)


def _stage_relaxation(ctx: _Context, stage: str) -> ClusterCertificate | str:
    from llmopt.formulations.hindsight_ip import formulate
    from llmopt.formulations.wang_ip import WangIP, common_arrival_problem
    from llmopt.opt.bounds import lambda_from_lp_duals

    if stage == "wang-relax-lp":
        why = common_arrival_problem(ctx.pool, "Relax-LP (8)-(11)")
        if why is not None:
            return f"skipped: {why}"
        model = _lp_model(WangIP().build(ctx.pool, ctx.windows))
    else:
        model = _lp_model(formulate(ctx.pool, ctx.windows))
    solved = _solve_lp(ctx, model)
    if isinstance(solved, str):
        return solved
    model, res = solved
    return _cert(ctx, stage, "lambda", res.objective, lam=lambda_from_lp_duals(model, res.duals))


def _stage_dual_lp(ctx: _Context) -> ClusterCertificate | str:
    from llmopt.formulations.dual import formulate_dual

    solved = _solve_lp(ctx, formulate_dual(ctx.pool, ctx.windows))
    if isinstance(solved, str):
        return solved
    model, res = solved
    block = model.cols("lambda")
    lam = (block.labels["t"], np.maximum(res.x[block.slice], 0.0))
    return _cert(ctx, "dual-lp", "lambda", -res.objective, lam=lam)


def _stage_colgen(ctx: _Context) -> ClusterCertificate | str:
    from llmopt.solvers.colgen import solve_lp_auto

    if ctx.instance.n == 0:
        return "no requests"
    res, _delta = solve_lp_auto(ctx.pool, initial_starts=dict(ctx.schedule.starts), time_limit=ctx.time_limit,
                                pricing="auto")
    if res.bound is None:
        return f"column generation failed: {res.message}"
    return _cert(ctx, "lp-colgen", "lambda", res.bound, lam=(res.lam_times, res.lam_values))


def _stage_closed_form(ctx: _Context) -> ClusterCertificate | str:
    from llmopt.formulations.closed_form_dual import closed_form_dual, identical_parameters

    try:
        n, s, o, cap = identical_parameters(ctx.pool)
    except ValueError as exc:
        return str(exc)
    cf = closed_form_dual(n, s, o, cap)
    lam = cf.lambda_by_time()
    # the closed form's own horizon: certified without the K-worker schedule (as the single-worker stage)
    return ClusterCertificate("closed-form-dual", "lambda", ctx.K, ctx.pool.M, float(cf.bound),
                              lam=(np.arange(len(lam), dtype=np.int64), np.asarray(lam, dtype=float)))


def _stage_zone(ctx: _Context, per_worker: bool) -> ClusterCertificate | str:
    from llmopt.formulations.hindsight_ip import formulate
    from llmopt.formulations.zones import default_split, with_zone_rows
    from llmopt.opt.bounds import zone_multipliers

    source = ctx.instance if per_worker else ctx.pool
    split = default_split(source.M)
    model = with_zone_rows(formulate(ctx.pool, ctx.windows), source, split)
    if per_worker:  # at most K zones (one per worker) at any time
        zones = model.rows("peak_zones")
        upper = model.row_upper.copy()
        upper[zones.slice] = float(ctx.K)
        model = replace(model, row_upper=upper)
    solved = _solve_lp(ctx, _lp_model(model))
    if isinstance(solved, str):
        return solved
    model, res = solved
    lam, mu = zone_multipliers(model, res.duals)
    stage, kind = ("cluster-zone-lp", "cluster-zone") if per_worker else ("zone-lp", "zone")
    return _cert(ctx, stage, kind, res.objective, lam=lam, mu=mu, split=split)


def _stage_energy(ctx: _Context) -> ClusterCertificate | str:
    from llmopt.opt.bounds import energy_certificate

    cert = energy_certificate(ctx.pool)
    return _cert(ctx, "energy", "energy", cert.value, order=cert.order)


#: Stage name → (producer, one-line reason it is valid for K workers).
CLUSTER_STAGES: dict[str, tuple[Callable[[_Context], ClusterCertificate | str], str]] = {
    "sum-of-outputs": (_stage_outputs, "every request runs o_i steps on some worker"),
    "lp": (lambda c: _stage_relaxation(c, "lp"), "pooled LP (capacity K·M), memory-row duals"),
    "wang-relax-lp": (lambda c: _stage_relaxation(c, "wang-relax-lp"), "pooled W Relax-LP (common arrival)"),
    "dual-lp": (_stage_dual_lp, "pooled explicit dual (22)-(24)"),
    "lp-colgen": (_stage_colgen, "pooled LP by column generation"),
    "closed-form-dual": (_stage_closed_form, "J (25)-(27) at capacity K·M (identical requests at 0)"),
    "zone-lp": (lambda c: _stage_zone(c, False), "pooled zone-LP (zones of K·M: empty for K >= 2)"),
    "energy": (_stage_energy, "SRPT fluid bound at capacity K·M"),
    "cluster-zone-lp": (lambda c: _stage_zone(c, True), "pooled LP + per-worker zone rows (<= K zones at a time)"),
}


def cluster_bound(
    instance: Instance,
    workers: int,
    stage: str = "lp",
    *,
    upper_bound: AssignedSchedule | None = None,
    solver: str | None = None,
    time_limit: float | None = None,
    threads: int = 1,
    max_nnz: int | None = None,
) -> ClusterBound:
    """A certified lower bound on the K-worker optimum ``OPT_K(M)`` from bound stage ``stage``.

    Parameters
    ----------
    instance : Instance
        ``M`` is each worker's capacity (every request has ``s_i + o_i <= M``, so it fits on one worker).
    workers : int
        ``K >= 1``.
    stage : str
        One of :data:`CLUSTER_STAGES` (module docstring: why each is valid).
    upper_bound : AssignedSchedule, optional
        A K-worker schedule whose TEL narrows the windows (verified by the checker); default
        :func:`~llmopt.opt.cluster_ip.cluster_upper_bound`.
    solver, time_limit, threads, max_nnz
        For the LP stages.

    Returns
    -------
    ClusterBound
        ``value`` is :func:`~llmopt.verify.cluster_bounds.check_cluster_certificate`'s; a certificate the
        checker rejects gives ``value=None``, ``verified=False`` and the reason.

    Raises
    ------
    KeyError
        If ``stage`` is not in :data:`CLUSTER_STAGES`.
    """
    t0 = time.perf_counter()
    if stage not in CLUSTER_STAGES:
        raise KeyError(f"unknown K-worker bound stage {stage!r}; known: {', '.join(CLUSTER_STAGES)}")
    K = int(workers)
    if upper_bound is None:
        schedule = cluster_upper_bound(instance, K)
    else:  # its TEL sets the LP's windows: recomputed by the checker, never taken from the caller
        schedule = verified_schedule(instance, K, upper_bound.assignment, upper_bound.starts, upper_bound.source)
    pool = pooled(instance, K)
    ctx = _Context(instance, pool, K, schedule, start_windows(pool, schedule.tel), solver, time_limit, threads,
                   max_nnz)
    made = CLUSTER_STAGES[stage][0](ctx)
    if isinstance(made, str):
        return ClusterBound(stage, K, None, None, False, made, time.perf_counter() - t0)
    try:
        value = check_cluster_certificate(instance, K, made)
    except CertificateError as exc:
        return ClusterBound(stage, K, None, made, False, f"certificate rejected: {exc}", time.perf_counter() - t0)
    detail = f"checker {value:.9g} vs claimed {made.claimed:.9g} (K={K}, pooled capacity {pool.M})"
    return ClusterBound(stage, K, value, made, True, detail, time.perf_counter() - t0)


def cluster_bounds(instance: Instance, workers: int, stages: Iterable[str] = DEFAULT_CLUSTER_STAGES,
                   **options: Any) -> list[ClusterBound]:
    """:func:`cluster_bound` for each of ``stages``, sharing one K-worker upper-bound schedule."""
    if options.get("upper_bound") is None:
        options["upper_bound"] = cluster_upper_bound(instance, int(workers))
    return [cluster_bound(instance, workers, s, **options) for s in stages]
