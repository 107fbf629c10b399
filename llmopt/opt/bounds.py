"""Lower-bound providers on the hindsight optimum, each with its certificate (DESIGN §3).

A provider is a function ``(instance, context: BoundContext) -> BoundResult`` registered
in :data:`BOUNDS` (third-party providers join through the entry-point group
``llmopt.opt.bounds``). Providers turn solver output into multipliers ``λ >= 0`` of the
memory rows; the independent checker (:func:`llmopt.verify.certificates.check_lower_bound_certificate`)
turns ``λ`` into the number that is reported, over start windows it derives itself from
the instance and the verified upper-bound schedule in the context. So a reported bound
never rests on a solver's word, nor on windows handed in by the caller.

``value`` is the checker's number (valid by weak duality whatever ``λ`` is);
``verified`` says whether it reproduces what the provider claimed (the LP optimum, the
closed-form ``D``) within :data:`llmopt.model.tolerance.AGREEMENT_RTOL`, or exceeds it (the
checker's windows can be narrower than the LP's) — a checker value below the claim means a
bug or a corrupted certificate, and is reported.

Providers:

``lp``
    LP relaxation of the hindsight IP (1)–(4) solved by any solver with LP duals; the
    memory-row duals give ``λ``.
``wang-relax-lp``
    W's Relax-LP (8)–(11) built from W's own formulation (common arrival only).
``lp-colgen``
    The same LP by column generation (:mod:`llmopt.solvers.colgen`), for instances whose LP
    cannot be written down (W §7, traces); memory rows bucketed at scale.
``dual-lp``
    The explicit dual (22)–(24) solved as an LP; its ``λ`` columns are the certificate.
``closed-form-dual``
    J App. B.3 (25)–(27) for identical requests all arriving at 0, with the exact
    ``Σ_t λ_t`` (never the paper's approximation, DIGEST I-14).
``sum-of-outputs``
    ``Σ o_i`` (every request runs ``o_i`` steps): the checker's value for ``λ = 0``.
``zone-lp``
    The LP relaxation plus the *peak-zone* rows of :mod:`llmopt.formulations.zones` (a valid inequality that
    keeps the ramps of the requests with ``s_i + o_i >= M/2`` whole); the memory-row and zone-row
    duals are the certificate, checked by :func:`llmopt.verify.zone_certificate.check_zone_certificate`.
``energy``
    A combinatorial bound from memory-time "energy" and a shortest-remaining-energy-first
    fluid schedule (:func:`energy_bound`), certified by that schedule's completion order;
    ``O(n log n)``, for trace-scale instances.

Dominance (each proved where it is computed): ``lp`` = ``dual-lp`` (strong duality) ``>=``
``closed-form-dual`` (a feasible dual point) and ``>= sum-of-outputs`` (``λ = 0`` is a dual
point); ``zone-lp >= lp`` over the same windows (the same LP with more rows);
``energy >= sum-of-outputs``; ``energy`` and ``lp`` are not ordered by a proof (the
LP was higher on every J §5.1 instance measured); the solver's MIP bound (kept by the pipeline, certificate
``mip-bound-from-solver``) is at least the LP at the root — for the ``hindsight-ip-zones``
formulation (the IP with the zone rows) that root LP is ``zone-lp``'s, so its MIP bound starts at
``zone-lp`` and branch-and-cut raises it from there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from llmopt.model.canonical import CanonicalModel, ModelTooLarge
from llmopt.model.instance import Instance
from llmopt.model.registry import Registry
from llmopt.model.result import SolveResult, SolveStatus
from llmopt.model.tolerance import LAMBDA_DUAL_TOL, agree, integer_lower_bound
from llmopt.model.windows import StartWindows, start_windows
from llmopt.solvers.base import Capability
from llmopt.verify.certificates import CertificateError, check_lower_bound_certificate
from llmopt.verify.checker import check_schedule

__all__ = [
    "BoundContext",
    "BoundResult",
    "BoundProvider",
    "BOUNDS",
    "lp_bound",
    "dual_lp_bound",
    "closed_form_dual_bound",
    "sum_of_outputs_bound",
    "energy_bound",
    "energy_certificate",
    "EnergyCertificate",
    "compute_bound",
    "run_bound",
    "raise_if_interrupted",
    "best_certified_bound",
    "lambda_from_lp_duals",
    "time_budget",
    "seed_schedule",
]


@dataclass(frozen=True)
class BoundContext:
    """What a bound provider may use besides the instance.

    Attributes
    ----------
    upper_bound_starts : mapping, optional
        A schedule the pipeline verified; the checker verifies it again and derives its
        start windows from its TEL.
    windows : StartWindows, optional
        The windows the pipeline's model was built on; a provider that builds an LP uses
        them (default: :func:`~llmopt.model.windows.start_windows` from ``upper_bound_starts``).
    solver : str, optional
        Preferred solver; a provider picks any available solver with the capabilities it
        needs (:func:`llmopt.solvers.pick_solver`), trying this one first.
    time_limit : float, optional
        Seconds for any solve the provider runs.
    deadline : float, optional
        ``time.perf_counter()`` value by which any solve must really have ended (a
        whole-command budget); passed to the solver adapter, which cancels the solve then.
    threads : int
    max_nnz : int, optional
        Largest model a provider may build; a larger one is skipped with its size in ``detail``.
    """

    upper_bound_starts: Mapping[str, int] | None = None
    windows: StartWindows | None = None
    solver: str | None = None
    time_limit: float | None = None
    deadline: float | None = None
    threads: int = 1
    max_nnz: int | None = None


@dataclass(frozen=True)
class BoundResult:
    """A lower bound on OPT and what certifies it.

    Attributes
    ----------
    name : str
        Provider name.
    value : float or None
        The checker's bound (``None`` when the provider could not produce a certificate).
    certificate : str
        What certifies it: ``"lp-dual-checked"``, ``"dual-lp-checked"``,
        ``"closed-form-dual-checked"``, ``"sum-of-outputs"``, or ``"none"``.
    verified : bool
        ``True`` when the checker's value reproduces ``claimed`` within the agreement tolerance.
    detail : str
        Human-readable account (solver status, the two values compared, windows, why not).
    claimed : float or None
        The provider's own value (LP optimum, closed-form ``D``) before the checker.
    runtime_s : float
    """

    name: str
    value: float | None
    certificate: str
    verified: bool
    detail: str
    claimed: float | None = None
    runtime_s: float = 0.0


BoundProvider = Callable[[Instance, BoundContext], BoundResult]

BOUNDS: Registry[BoundProvider] = Registry("bound", "llmopt.bounds")


def lambda_from_lp_duals(model: CanonicalModel, duals: np.ndarray,
                         tol: float = LAMBDA_DUAL_TOL, block_name: str = "eq3_memory"
                         ) -> tuple[np.ndarray, np.ndarray]:
    """``(times, λ)`` from the row duals of the hindsight LP's ``eq3_memory`` block (or of another
    block of ``<=`` rows labelled by ``t``, e.g. ``peak_zones``).

    Solver adapters report row duals as ``∂ objective / ∂ row bound`` for a minimisation
    (HiGHS convention), so a binding ``<= M`` row has a dual ``<= 0`` and
    ``λ_t = −dual``. Wrong-sign values down to ``tol`` are round-off and become 0.

    Raises
    ------
    ValueError
        On a length mismatch, or a memory-row dual of the wrong sign beyond ``tol``.
    """
    duals = np.asarray(duals, dtype=float)
    if duals.size != model.n_rows:
        raise ValueError(f"{duals.size} duals for a model with {model.n_rows} rows")
    block = model.rows(block_name)
    lam = -duals[block.slice]
    bad = lam < -tol
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{block_name} row at t={int(block.labels['t'][i])} has dual {-lam[i]!r} "
                         "of the wrong sign for a <= row")
    return block.labels["t"], np.maximum(lam, 0.0)


def _windows(instance: Instance, ctx: BoundContext) -> StartWindows:
    if ctx.windows is not None:
        return ctx.windows
    if ctx.upper_bound_starts is None:
        return start_windows(instance)
    report = check_schedule(instance, ctx.upper_bound_starts)
    if not report.ok or report.tel is None:
        raise CertificateError(f"the upper-bound schedule is rejected by the checker: {report.violations[0]}")
    return start_windows(instance, report.tel)


def _too_large(name: str, instance: Instance, windows: StartWindows, ctx: BoundContext, t0: float,
               estimate: Callable[[Instance, StartWindows], Any] | None = None) -> BoundResult | None:
    """A ``value=None`` result if the LP over ``windows`` exceeds ``ctx.max_nnz`` (size from
    ``estimate``, default the hindsight IP's with identical requests merged)."""
    from llmopt.formulations.hindsight_ip import estimate_size

    if ctx.max_nnz is None:
        return None
    size = (estimate or estimate_size)(instance, windows)
    if size.nnz <= ctx.max_nnz:
        return None
    return _no_bound(name, f"skipped: {ModelTooLarge('its LP', size, ctx.max_nnz)}", t0)


def _certify(name: str, certificate: str, instance: Instance, lam: tuple[np.ndarray, np.ndarray],
             ctx: BoundContext, claimed: float, what: str, t0: float) -> BoundResult:
    value = check_lower_bound_certificate(instance, lam, ctx.upper_bound_starts)
    return _verdict(name, certificate, value, claimed, what, t0)


def _verdict(name: str, certificate: str, value: float, claimed: float, what: str, t0: float) -> BoundResult:
    """The checker's ``value`` against the provider's ``claimed``, as a :class:`BoundResult`."""
    # The checker's windows may be narrower than the LP's (then its value is higher, and still valid).
    ok = agree(value, claimed) or value > claimed
    verdict = "agree" if agree(value, claimed) else ("checker higher: narrower windows" if ok else
                                                      "DISAGREE: not verified")
    detail = f"checker {value:.9g} vs {what} {claimed:.9g} ({verdict})"
    return BoundResult(name, value, certificate, ok, detail, claimed, time.perf_counter() - t0)


def time_budget(ctx: BoundContext, default: float | None = None) -> float | None:
    """Seconds a stage may run: ``ctx.time_limit`` (else ``default``), cut to what ``ctx.deadline`` leaves."""
    limit = default if ctx.time_limit is None else ctx.time_limit
    if ctx.deadline is not None:
        left = max(0.0, ctx.deadline - time.perf_counter())
        limit = left if limit is None else min(limit, left)
    return limit


def seed_schedule(instance: Instance, ctx: BoundContext) -> Mapping[str, int]:
    """The context's verified schedule (its starts), else MC-SF's: what column generation starts from."""
    if ctx.upper_bound_starts is not None:
        return ctx.upper_bound_starts
    from llmopt.engine.discrete import simulate
    from llmopt.policies import MCSF

    return simulate(instance, MCSF()).starts


def _no_bound(name: str, why: str, t0: float) -> BoundResult:
    return BoundResult(name, None, "none", False, why, None, time.perf_counter() - t0)


def _solve_lp(name: str, instance: Instance, ctx: BoundContext, build: Callable[[Instance, StartWindows],
              CanonicalModel], *needs: Capability,
              estimate: Callable[[Instance, StartWindows], Any] | None = None
              ) -> tuple[CanonicalModel, SolveResult, str] | BoundResult:
    """Build an LP over the context's windows (unless too large) and solve it with any available
    solver that has ``needs``. Returns ``(model, result, solver)``, or a value-less
    :class:`BoundResult` saying why there is none."""
    from llmopt.solvers import get_solver, pick_solver

    t0 = time.perf_counter()
    solver = pick_solver(*needs, prefer=ctx.solver)
    if solver is None:
        return _no_bound(name, "no available solver" + (f" with {', '.join(map(str, needs))}" if needs else ""), t0)
    windows = _windows(instance, ctx)
    skipped = _too_large(name, instance, windows, ctx, t0, estimate)
    if skipped is not None:
        return skipped
    model = build(instance, windows)
    res = get_solver(solver).solve(model, time_limit=ctx.time_limit, threads=ctx.threads, deadline=ctx.deadline)
    if res.status is SolveStatus.INTERRUPTED:  # the user stopped it: stop the whole command, not just this stage
        raise KeyboardInterrupt
    if res.status is not SolveStatus.OPTIMAL or res.objective is None or res.x is None:
        return _no_bound(name, f"LP not solved by {solver}: {res.status} {res.message}".strip(), t0)
    return model, res, solver


def _without_column_bounds(model: CanonicalModel) -> CanonicalModel:
    """``model`` with ``x <= |c|`` dropped (implied by the assignment rows and ``x >= 0``), so that
    the row duals alone form a dual-feasible solution (no reduced cost hides in a bound)."""
    return replace(model, col_upper=np.full(model.n_cols, np.inf))


def _relaxation_bound(name: str, instance: Instance, ctx: BoundContext, ip: Callable[[Instance, StartWindows],
                      CanonicalModel], what: str, t0: float,
                      estimate: Callable[[Instance, StartWindows], Any] | None = None) -> BoundResult:
    """Solve the LP relaxation of the IP ``ip`` builds and certify its memory-row duals.

    The columns' upper bounds ``x <= |c|`` are dropped before solving: they are implied by the
    assignment rows and ``x >= 0``, so the LP is unchanged, and without them the row duals
    alone form a dual-feasible solution (no reduced cost hides in a bound)."""

    def build(inst: Instance, windows: StartWindows) -> CanonicalModel:
        return _without_column_bounds(ip(inst, windows).relax())

    solved = _solve_lp(name, instance, ctx, build, Capability.LP_DUALS, estimate=estimate)
    if isinstance(solved, BoundResult):
        return solved
    model, res, solver = solved
    if res.duals is None or res.objective is None:
        return _no_bound(name, f"{solver} returned no duals", t0)
    lam = lambda_from_lp_duals(model, res.duals)
    return _certify(name, "lp-dual-checked", instance, lam, ctx, res.objective, f"{what} ({solver})", t0)


def lp_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """LP-relaxation bound of the hindsight IP (1)–(4), certified by its memory-row duals.

    The LP is built over the context's windows (see :func:`_relaxation_bound` for the column
    bounds). The solver is any available one with LP duals.
    """
    from llmopt.formulations.hindsight_ip import formulate

    return _relaxation_bound("lp", instance, ctx or BoundContext(), formulate, "LP optimum", time.perf_counter())


def wang_relax_lp_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """W's Relax-LP (8)–(11): the LP relaxation of :class:`~llmopt.formulations.wang_ip.WangIP`.

    Built from W's formulation (one column per request and start, no merging of identical
    requests) and certified like ``lp``; on an instance with a common arrival it has the
    same value as ``lp`` (W's IP is J's with ``a_i = 0``). Refused, with the reason in
    ``detail``, for arrivals over time.
    """
    from llmopt.formulations.wang_ip import WangIP, common_arrival_problem

    t0 = time.perf_counter()
    why = common_arrival_problem(instance, "Relax-LP (8)-(11)")
    if why is not None:
        return _no_bound("wang-relax-lp", f"skipped: {why}", t0)
    form = WangIP()
    return _relaxation_bound("wang-relax-lp", instance, ctx or BoundContext(), form.build, "Relax-LP optimum", t0,
                             estimate=form.estimate)


#: Longest time axis (last arrival − first arrival + Σ o) ``lp-colgen`` accepts: its pricing holds
#: arrays over the whole axis (arrivals at 0 and at 10^12 asked for 7.28 TiB; a 5,000,000-step axis takes
#: 0.4 GB and 1.6 s, and 50,000,000 ran out of memory on a 24 GB machine).
COLGEN_MAX_AXIS = 20_000_000


def lp_colgen_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """The LP relaxation at trace scale, by column generation (:mod:`llmopt.solvers.colgen`).

    The master is seeded with the context's verified schedule (else MC-SF's). Memory rows are
    aggregated over buckets of ``Δ`` times, ``Δ`` chosen as for Sorted-LP
    (:func:`llmopt.solvers.colgen.choose_bucket`, ``Δ = 1`` — the exact LP — for short horizons).
    Whatever the stop (optimal, time limit), the last multipliers certify
    ``bound(λ)`` through the checker: a bucket row weighted by ``μ_b`` is every time row of
    the bucket weighted by ``μ_b``, so the claim is a Lagrangian value of the time-indexed LP.
    Dominance of the LP values (proved by inclusion of their feasible sets): the LP over the
    pipeline's windows (``lp``) ``>=`` the LP over the full windows (this stage's LP with
    ``Δ = 1``, up to the column-generation tolerance) ``>=`` the bucketed LP (``Δ > 1``). The
    *reported* values are the checker's, over the windows it certifies itself, so they can
    order differently; each is valid.
    """
    from llmopt.solvers.colgen import solve_lp_auto

    ctx = ctx or BoundContext()
    t0 = time.perf_counter()
    if instance.n == 0:
        return _no_bound("lp-colgen", "no requests", t0)
    first, last = min(r.arrival for r in instance.requests), max(r.arrival for r in instance.requests)
    span = last - first + instance.total_output
    if span > COLGEN_MAX_AXIS:  # its pricing walks a dense time axis: refuse before allocating it
        return _no_bound("lp-colgen", f"not run: the time axis spans {span:,} steps (arrivals {first:,} … {last:,}); "
                         f"column generation prices over a dense axis of at most {COLGEN_MAX_AXIS:,} steps — "
                         "the lp, zone-lp and energy bounds do not depend on the span", t0)
    limit = time_budget(ctx)
    seed = seed_schedule(instance, ctx)
    res, delta = solve_lp_auto(instance, initial_starts=seed, time_limit=limit, pricing="auto")
    if res.bound is None:
        return _no_bound("lp-colgen", f"column generation failed: {res.message}", t0)
    return _certify("lp-colgen", "lp-dual-checked", instance, (res.lam_times, res.lam_values), ctx, res.bound,
                    f"Lagrangian bound (colgen, Δ={delta}, {res.status}, {res.rounds} rounds)", t0)


def dual_lp_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """The explicit dual LP (22)–(24), solved; its ``λ`` columns are the certificate.

    By strong duality its optimum equals the LP relaxation's, so this cross-checks ``lp``
    with a model written independently from the dual side.
    """
    from llmopt.formulations.dual import formulate_dual

    ctx = ctx or BoundContext()
    t0 = time.perf_counter()
    solved = _solve_lp("dual-lp", instance, ctx, formulate_dual)
    if isinstance(solved, BoundResult):
        return solved
    model, res, solver = solved
    assert res.x is not None and res.objective is not None
    block = model.cols("lambda")
    lam = (block.labels["t"], np.maximum(res.x[block.slice], 0.0))
    return _certify("dual-lp", "dual-lp-checked", instance, lam, ctx, -res.objective,
                    f"dual LP optimum ({solver})", t0)


def closed_form_dual_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """Closed-form dual bound (25)–(27) for identical requests all arriving at 0.

    ``λ`` of (27) is handed to the checker with no upper-bound schedule: its windows are then
    ``0 … T_c − o`` with ``T_c = n·o``, the closed form's own horizon. By Lemma B.1 the
    checker's value is at least the exact ``D``; ``verified`` when it is (up to round-off).
    """
    from llmopt.formulations.closed_form_dual import closed_form_dual, identical_parameters

    t0 = time.perf_counter()
    try:
        n, s, o, M = identical_parameters(instance)
    except ValueError as exc:
        return _no_bound("closed-form-dual", str(exc), t0)
    cf = closed_form_dual(n, s, o, M)
    checked = check_lower_bound_certificate(instance, cf.lambda_by_time())
    ok = checked >= cf.bound or agree(checked, cf.bound)
    detail = (f"checker {checked:.9g} vs exact D = {cf.bound:.9g} over t=1..{cf.horizon} "
              f"({'checker >= D' if ok else 'checker < D: Lemma B.1 fails, not verified'}); "
              f"ȳ = {cf.ybar:.6g}, λ_1 = {cf.lambda_1:.6g}")
    return BoundResult("closed-form-dual", checked, "closed-form-dual-checked", ok, detail, cf.bound,
                       time.perf_counter() - t0)


def sum_of_outputs_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """``TEL >= Σ o_i``: the checker's bound for ``λ = 0`` (every request waits at least 0)."""
    t0 = time.perf_counter()
    value = check_lower_bound_certificate(instance, {})
    ok = agree(value, float(instance.total_output))
    return BoundResult("sum-of-outputs", value, "sum-of-outputs", ok, f"Σ o = {instance.total_output}",
                       float(instance.total_output), time.perf_counter() - t0)


def zone_multipliers(model: CanonicalModel, duals: np.ndarray
                     ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(λ, μ)``, each ``(times, values)``, from the duals of the memory rows and of the zone rows."""
    return lambda_from_lp_duals(model, duals), lambda_from_lp_duals(model, duals, block_name="peak_zones")


def zone_lp_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """The LP relaxation of the hindsight IP with the peak-zone rows of :mod:`llmopt.formulations.zones`.

    The rows are valid for every feasible schedule (theorem and proof in :mod:`llmopt.formulations.zones`,
    proved again in :func:`llmopt.verify.zone_certificate.certified_zones`), so the LP stays a relaxation; the
    split is ``h = ⌈M/2⌉`` (adding the rows of other splits raised the LP by less than 1 % on the
    four instances tried during development: AM1 n = 20, 24 and two J §5.1 trials). The duals of
    the memory rows (``λ``) and of the zone rows (``μ``) are the certificate;
    :func:`llmopt.verify.zone_certificate.check_zone_certificate` recomputes the Lagrangian value over its own
    windows and zones. Column bounds are dropped as in :func:`_relaxation_bound`.

    Dominance: ``>= lp`` over the same windows (the same LP with more rows); no order is proved
    against ``energy``, which it exceeded on every J §5.1 trial measured.
    """
    from llmopt.formulations.hindsight_ip import estimate_size, formulate
    from llmopt.formulations.zones import default_split, with_zone_rows, zone_model_size
    from llmopt.verify.zone_certificate import check_zone_certificate

    ctx = ctx or BoundContext()
    t0 = time.perf_counter()
    split = default_split(instance.M)

    def build(inst: Instance, windows: StartWindows) -> CanonicalModel:
        return _without_column_bounds(with_zone_rows(formulate(inst, windows), inst, split).relax())

    solved = _solve_lp("zone-lp", instance, ctx, build, Capability.LP_DUALS,
                       estimate=lambda inst, w: zone_model_size(inst, estimate_size(inst, w)))
    if isinstance(solved, BoundResult):
        return solved
    model, res, solver = solved
    if res.duals is None or res.objective is None:
        return _no_bound("zone-lp", f"{solver} returned no duals", t0)
    lam, mu = zone_multipliers(model, res.duals)
    value = check_zone_certificate(instance, lam, mu, split, ctx.upper_bound_starts)
    what = f"LP-with-zones optimum ({solver}, split h={split}, {len(model.rows('peak_zones'))} zone rows)"
    return _verdict("zone-lp", "zone-lp-dual-checked", value, res.objective, what, t0)


def compute_bound(name: str, instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """Run the registered bound provider ``name``."""
    return BOUNDS.get(name)(instance, ctx or BoundContext())


def best_certified_bound(candidates: Iterable[tuple[float, str]], incumbent: int | None
                         ) -> tuple[int, str, list[str]]:
    """The best integer lower bound among certified ``(value, certificate)`` candidates.

    TEL is integral, so each value rounds up (:func:`llmopt.model.tolerance.integer_lower_bound`). A
    candidate above the TEL of a verified schedule (``incumbent``) contradicts weak duality: it
    is left out and reported in the returned messages — never taken as a proof of optimality.
    Returns ``(bound, certificate, errors)``; ``(0, "none", [])`` when nothing qualifies.
    """
    best, certificate, errors = 0, "none", []
    for value, cert in candidates:
        b = integer_lower_bound(value)
        if incumbent is not None and b > incumbent:
            errors.append(f"certified bound {b} ({cert}) exceeds the verified incumbent {incumbent}: "
                          "a bug or a wrong certificate; not used")
            continue
        if b > best or certificate == "none":
            best, certificate = b, cert
    return best, certificate, errors


def raise_if_interrupted(exc: BaseException) -> None:
    """Re-raise the ``KeyboardInterrupt`` that ``exc`` wraps, if any; otherwise return.

    A Ctrl-C that lands while a C extension initialises does not arrive as a ``KeyboardInterrupt``:
    pybind11 modules (highspy) turn any error in their init into ``ImportError("initialization
    failed")`` raised *from* it, and a plug-in may wrap that ``ImportError`` again. A stage that
    records failures instead of raising calls this first, so that a stop still stops the command.

    Parameters
    ----------
    exc : BaseException
        The exception a stage caught; its ``__cause__`` and ``__context__`` chains are searched.

    Raises
    ------
    KeyboardInterrupt
        The first one found in those chains (the original object, so a subclass or a signal name
        it carries is kept).
    """
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        x = todo.pop()
        if x is None or id(x) in seen:
            continue
        if isinstance(x, KeyboardInterrupt):
            raise x from None
        seen.add(id(x))
        todo += [x.__context__, x.__cause__]  # the explicit cause is searched first


def run_bound(name: str, instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """Like :func:`compute_bound`, but a provider that fails returns ``value=None`` with the reason
    in ``detail`` instead of raising (a failing bound must not lose what a run already found).

    ``KeyboardInterrupt`` still propagates, also when it arrives wrapped in another exception (a
    Ctrl-C during the solver's import, see :func:`raise_if_interrupted`)."""
    t0 = time.perf_counter()
    try:
        return compute_bound(name, instance, ctx)
    except Exception as exc:
        raise_if_interrupted(exc)
        return _no_bound(name, f"failed: {type(exc).__name__}: {exc}", t0)


BOUNDS.register("lp", "llmopt.opt.bounds:lp_bound", "LP relaxation of the hindsight IP, certified by its duals")
BOUNDS.register("dual-lp", "llmopt.opt.bounds:dual_lp_bound", "explicit dual LP (22)-(24), certified by its λ")
BOUNDS.register(
    "closed-form-dual",
    "llmopt.opt.bounds:closed_form_dual_bound",
    "J App. B.3 closed-form dual (25)-(27), identical requests at 0, exact sum",
)
BOUNDS.register("wang-relax-lp", "llmopt.opt.bounds:wang_relax_lp_bound",
                "W Relax-LP (8)-(11) (common arrival), certified by its duals")
BOUNDS.register("lp-colgen", "llmopt.opt.bounds:lp_colgen_bound",
                "time-indexed LP by column generation (rows bucketed at scale), certified by its multipliers")
BOUNDS.register("sum-of-outputs", "llmopt.opt.bounds:sum_of_outputs_bound", "TEL >= Σ o_i")
BOUNDS.register("zone-lp", "llmopt.opt.bounds:zone_lp_bound",
                "LP relaxation with peak-zone rows (large requests' ramps kept whole), certified by its duals")
BOUNDS.register("zone-colgen", "llmopt.opt.clique_bounds:zone_colgen_bound",
                "the zone-lp relaxation by column generation (zone rows separated), certified by its multipliers")
BOUNDS.register("zone-tree", "llmopt.opt.zone_tree:zone_tree_bound",
                "branch-and-bound on the zone-lp over start windows (n <= 60), certified by its tree")
BOUNDS.register("lagrangian", "llmopt.opt.lagrangian_bound:lagrangian_bound",
                "the LP's Lagrangian by subgradient ascent over bucketed multipliers (trace scale), certified by its λ")
BOUNDS.register("sawtooth-lp", "llmopt.opt.cut_bounds:sawtooth_lp_bound",
                "zone-lp plus separated idle-gap (sawtooth) rows, certified by its duals")
BOUNDS.register("config-lp", "llmopt.opt.cut_bounds:config_lp_bound",
                "zone-lp plus a Dantzig-Wolfe master of per-time KV-cache configurations, certified by its duals")
BOUNDS.register("config-sawtooth-lp", "llmopt.opt.cut_bounds:config_sawtooth_lp_bound",
                "zone-lp plus the configuration master and sawtooth rows, certified by its duals")
BOUNDS.register("config-lag-lp", "llmopt.opt.cut_bounds:config_lag_lp_bound",
                "zone-lp plus the configuration master, sawtooth rows and completion-lag cliques, certified by its "
                "duals")
BOUNDS.register("lag-lp", "llmopt.opt.clique_bounds:lag_lp_bound",
                "LP with completion-lag clique rows (zones, conflicting pairs, threshold cliques) by column "
                "generation and a cut loop, certified by its multipliers")


# --- the energy bound (combinatorial; certified by a priority order) -----------------------------


@dataclass(frozen=True)
class EnergyCertificate:
    """What :func:`llmopt.verify.energy_certificate.check_energy_certificate` needs to certify the energy bound.

    Attributes
    ----------
    order : tuple of str
        Request ids in the order the shortest-remaining-energy-first fluid schedule completes them
        (a priority list that reproduces that schedule).
    value : int
        The claimed bound on OPT (TEL).
    """

    order: tuple[str, ...]
    value: int


def energy_certificate(instance: Instance) -> EnergyCertificate:
    """The energy bound's certificate: the SRPT fluid schedule's completion order and the bound.

    SRPT over energies ``E_i = s_i·o_i + o_i(o_i+1)/2`` on times ``1, 2, …`` of capacity ``M``
    each, request ``i`` usable from time ``a_i + 1`` (see :func:`energy_bound`), event-driven:
    a heap of remaining energies, a capacity position ``p`` (times ``1 … t`` offer ``M·t``; the
    request whose energy runs out at position ``p`` completes at time ``ceil(p / M)``), a
    preemption check only when requests arrive. ``O(n log n)``, independent of the horizon.
    """
    import heapq

    reqs = instance.requests
    n, M = len(reqs), instance.M
    if n == 0:
        return EnergyCertificate((), 0)
    origin = min(r.arrival for r in reqs)
    by_arrival = sorted(range(n), key=lambda i: (reqs[i].arrival, i))
    heap: list[tuple[int, int]] = []  # (remaining energy, request index)
    order: list[str] = []
    completions: list[int] = []
    p, j = 0, 0
    while j < n or heap:
        if not heap:  # idle until the next arrival
            p = max(p, M * (reqs[by_arrival[j]].arrival - origin))
        while j < n and M * (reqs[by_arrival[j]].arrival - origin) <= p:
            r = reqs[by_arrival[j]]
            heapq.heappush(heap, (r.token_steps, by_arrival[j]))
            j += 1
        limit = M * (reqs[by_arrival[j]].arrival - origin) if j < n else None
        while heap and (limit is None or p < limit):
            rem, i = heap[0]
            if limit is None or p + rem <= limit:
                heapq.heappop(heap)
                p += rem
                order.append(reqs[i].id)
                completions.append(-(-p // M))  # ceil
            else:
                heapq.heapreplace(heap, (rem - (limit - p), i))
                p = limit
    q = sorted(r.arrival - origin + r.output for r in reqs)
    value = sum(map(max, completions, q)) - sum(r.arrival - origin for r in reqs)
    return EnergyCertificate(tuple(order), value)


def energy_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """The energy bound: ``OPT >= Σ_k max(e_(k), q_(k)) − Σ_i a_i``, certified by a priority order.

    Definitions. The *energy* of request ``i`` is ``E_i = Σ_{j=1..o_i} (s_i + j) = s_i·o_i +
    o_i(o_i+1)/2`` token-steps: what it holds over its run, ``s_i + (t − k_i)`` at
    ``t = k_i+1 … k_i+o_i`` (DESIGN §1). ``q_(k)`` is the ``k``-th smallest of the ``a_i + o_i``;
    ``e_(k)`` the ``k``-th smallest completion time of the SRPT fluid schedule defined below.

    All arrivals at 0 (the issue's form). SRPT serves requests one after another in increasing
    ``E`` at rate ``M``, so ``e_(k) = ceil(P_k / M)`` with ``P_k`` the sum of the ``k`` smallest
    energies, and the bound reads ``OPT >= Σ_k max(o_(k), ceil(P_k / M))``. Direct proof: take any
    feasible schedule and let ``C_(1) <= … <= C_(n)`` be its completion times sorted, ``S_k`` the
    ``k`` requests completing first. Each of them holds its whole energy at integer times in
    ``(0, C_(k)]`` (it starts at ``k_i >= 0`` and ends at ``C_i <= C_(k)``), and memory is ``<= M``
    at each of those ``C_(k)`` times, so ``M·C_(k) >= Σ_{S_k} E_i >= P_k`` (a sum over *any* ``k``
    requests is at least the ``k`` smallest); ``C_(k)`` is an integer, so ``C_(k) >= ceil(P_k/M)``.
    And ``C_(k) = max_{S_k} C_i >= max_{S_k} o_i >= o_(k)`` (the largest of any ``k`` values is at
    least the ``k``-th smallest). **Why the max of two separately sorted sequences is valid per
    rank**: both inequalities bound the same number ``C_(k)``, the ``k``-th order statistic of the
    schedule's completions, whichever requests form ``S_k``; neither bounds a particular
    request's ``C_i``. So ``C_(k) >= max(o_(k), ceil(P_k/M))`` and ``TEL = Σ_i C_i = Σ_k C_(k)``.
    (Pairing each energy with *its own* request's ``o`` instead would be wrong: with ``M = 12``,
    ``A = (s=10, o=1, E=11)`` and ``B = (s=1, o=3, E=9)``, B has the smaller energy, but ``C_(1) =
    1`` when A runs first, and ``max(o_B, ceil(9/12)) = 3 > 1``.)

    With arrivals. Relax a feasible schedule to its *fluid* schedule ``x_{i,t}`` = its usage:
    ``x >= 0``; ``x_{i,t} > 0`` only at integer ``t`` with ``a_i < t <= C_i`` (``k_i >= a_i``);
    ``Σ_t x_{i,t} = E_i``; ``Σ_i x_{i,t} <= M``. Call ``e_i`` = the last ``t`` with ``x_{i,t} > 0``
    (``= C_i`` for a real schedule). SRPT is the fluid schedule that at each time ``t = 1, 2, …``
    gives its ``M`` units to the arrived (``a_i < t``) unfinished requests in increasing order of
    remaining energy, each until it is done (ties either way).

    *Lemma.* For every integer ``T``, SRPT completes (``e_i <= T``) at least as many requests as
    any fluid schedule ``σ``. Proof: for a finite multiset ``z >= 0`` let ``S_k(z)`` be the sum
    of its ``k`` smallest elements. Let ``x^t``, ``y^t`` be the remaining energies, after time
    ``t``, of the requests with ``a_i < t`` under SRPT and under ``σ`` (0 when done): same
    requests, so same size. Claim ``S_k(x^t) <= S_k(y^t)`` for all ``k, t``, by induction. (i) The
    requests with ``a_i = t−1`` join both with their full ``E_i``, and
    ``S_k(z ∪ {v}) = min(S_k(z), S_{k−1}(z) + v)`` is nondecreasing in ``S_k(z), S_{k−1}(z)``.
    (ii) ``σ`` removes at most ``M`` in total and keeps every entry ``>= 0``, so on the ``k``
    entries that form ``S_k`` after the step, ``S_k(after) >= max(0, S_k(before) − M)``. SRPT
    zeroes the smallest entries in turn and leaves the one it stops on no larger than the next,
    so the sorted order is kept and ``S_k(after) = max(0, S_k(before) − M)`` exactly. Both maps
    are monotone, so the inequality survives. At ``t = T``: if ``σ`` has ``c`` zeros,
    ``0 = S_c(y^T) >= S_c(x^T)``, so SRPT has ``>= c`` zeros. Every request with ``e_i <= T``
    has ``a_i < T`` (it is served at some ``t`` with ``a_i < t <= T``), so it is among them. ∎

    *Bound.* Fix a feasible schedule with sorted completions ``C_(k)``. By the lemma (``σ`` =
    its fluid schedule, ``T = e_(k) − 1``), at most ``k − 1`` of its requests complete by
    ``e_(k) − 1``, so ``C_(k) >= e_(k)``; and as ``C_i >= a_i + o_i``, at most ``k − 1`` complete
    by ``q_(k) − 1``, so ``C_(k) >= q_(k)``. Again both bound the order statistic ``C_(k)``, so
    ``TEL = Σ_k C_(k) − Σ_i a_i >= Σ_k max(e_(k), q_(k)) − Σ_i a_i``. ∎ It reduces to the
    all-at-0 form (SRPT then serves in increasing ``E``, ``e_(k) = ceil(P_k/M)``, ``q = o``).

    Dominance. ``>= sum-of-outputs``: ``Σ_k max(e_(k), q_(k)) >= Σ_k q_(k) = Σ_i (a_i + o_i)``.
    Against the LP relaxation (``lp``) no dominance is proved either way; on the J §5.1 instances
    the LP is higher on every seed measured, by 3 % (AM1) and 10 % (AM2) on average
    (``results/opt/energy-bound/``), while the energy bound costs under a millisecond. The bound ignores
    the staircase shape of the usage (the fluid relaxation lets one request take all of ``M`` at once), which is
    where it loses against OPT.

    Certificate. :func:`energy_certificate` computes SRPT (heap of remaining energies) and its
    completion order; :func:`llmopt.verify.energy_certificate.check_energy_certificate` re-builds the
    priority-list schedule of that order with code of its own, checks it is shortest-remaining-
    energy-first, recomputes the value, and rejects a claim above it. ``O(n log n)``: a
    10,000-request trace instance takes a few hundredths of a second. The context is not used.
    """
    from llmopt.verify.energy_certificate import check_energy_certificate

    t0 = time.perf_counter()
    cert = energy_certificate(instance)
    value = check_energy_certificate(instance, cert.order, cert.value)
    ok = value == cert.value
    detail = (f"checker {value} vs SRPT energy bound {cert.value} ({'agree' if ok else 'DISAGREE: not verified'}); "
              f"Σ o = {instance.total_output}")
    return BoundResult("energy", float(value), "energy-srpt-checked", ok, detail, float(cert.value),
                       time.perf_counter() - t0)


BOUNDS.register("energy", "llmopt.opt.bounds:energy_bound",
                "energy bound: SRPT over memory-time areas, with arrivals; certified by its order")
