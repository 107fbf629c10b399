"""Hindsight OPT as a pipeline of named stages (DESIGN §3 "Hindsight OPT is a pipeline").

::

    upper bounds ──► windows ──► bounds ──► formulation ──► solver ──► decode ──► certify
    (UPPER_BOUNDS     (WINDOWS)   (BOUNDS;   (FORMULATIONS)  (SOLVERS)   (formulation) (checker)
     or POLICIES)                 checker)

Each stage is looked up by name in its registry, so a suite or the command line names
them (``llmopt solve --formulation F --bound B --solver S``) and a third-party stage
registered through its entry point plugs in with no edit here.

What is trusted, and by whom:

* **Schedules.** Every schedule — from an upper-bound stage or decoded from the solver —
  is verified by the independent checker before its TEL is used; the incumbent is always
  a verified schedule.
* **Bounds.** A bound provider's value is recomputed by the checker from a certificate
  (``λ``) over windows the checker derives from the verified incumbent. The solver's MIP
  bound is used (certificate ``mip-bound-from-solver``) only for a formulation declared
  ``exact`` and only when the model's windows contain the checker's windows, so that its
  optimum over the windows is OPT. ``Σ o_i`` is always a bound.
* **Optimality** is claimed only when a certified bound meets the verified incumbent.
  A certified bound *above* the verified incumbent is a contradiction (a bug or a wrong
  certificate): it is reported in ``errors`` and never taken as a proof.

Order. The bound stages run right after the upper bounds, on the best schedule found so far
(their windows come from it, and so do the checker's): when a certified bound already meets that
schedule, it is optimal and the formulation and solver stages are skipped (``zone-lp`` proves J
AM1 instances up to n = 14 at M = 40 in 0.1 s, where the IP took up to 45 s). DESIGN §3 draws
"certify" last; the certificates are the same either way — a bound certified on an earlier
incumbent's windows stays valid, since a better incumbent only narrows the windows every optimal
schedule lies in — so the bound values here never depend on what the IP later finds. The MIP bound
of an exact formulation is certified after the solve, as before.

Budget. ``time_limit`` bounds the whole pipeline: the search stages get at most a quarter
of it, the bound stages end by ``BOUNDS_END`` (60 %) of it at the latest (a hard deadline the
HiGHS adapter enforces), and the IP gets what is left: the model build counts, the solver's own
limit is what the build leaves less 5 % of the budget, with a hard deadline at the end that the
HiGHS and CBC adapters enforce, and a build that uses the budget up ends the run with status
``time_limit`` without starting the solver. ``auto`` bound stages are sized to their share
(:func:`~llmopt.opt.defaults.auto_bound_choice`); every requested bound stage runs, also when an
upper bound already has TEL ``Σ o`` (its value is recorded). ``ip_time_limit`` caps the IP solve on
its own (the harness uses only that). ``ip_node_limit`` stops the IP after that many branch-and-bound nodes,
which depends on the model alone: with it, a run on a slow or loaded machine proves the same as on a fast
one, and ``ip_time_limit`` is only a safety cap (``HindsightResult.ip_time_capped`` says when it stopped
the solve first, and the result then depends on the machine). Ctrl-C stops the stage in progress within about a second
(HiGHS) and returns what was found so far, with status ``interrupted``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from llmopt.model.canonical import ModelTooLarge
from llmopt.model.instance import Instance
from llmopt.model.result import SolveResult, SolveStatus
from llmopt.model.schedule import Schedule
from llmopt.opt.bounds import BOUNDS, BoundContext, BoundResult, best_certified_bound, raise_if_interrupted, run_bound
from llmopt.opt.defaults import (
    AUTO_BOUNDS,
    AUTO_BOUNDS_SHARE,
    DEFAULT_BOUNDS,
    DEFAULT_MAX_NNZ,
    auto_bound_choice,
    expand_bounds,
)
from llmopt.opt.upper_bounds import (
    DEFAULT_CP_SAT_SECONDS,
    DEFAULT_LNS_ITERATIONS,
    DEFAULT_UPPER_BOUNDS,
    SearchContext,
    find_schedule,
)
from llmopt.solvers import DEFAULT_SOLVER, Capability, get_solver
from llmopt.verify.certificates import certified_windows
from llmopt.verify.checker import check_schedule

__all__ = ["HindsightResult", "PipelineInterrupted", "solve_hindsight", "upper_bound_schedules", "DEFAULT_MAX_NNZ",
           "DEFAULT_BOUNDS"]

#: Share of a ``time_limit`` by whose end the bound stages must be done; the IP gets the rest.
BOUNDS_END = 0.6
#: A stage that would get less than this many seconds of the budget is skipped.
MIN_STAGE_S = 1.0

Progress = Callable[[str], None]


@dataclass(frozen=True)
class HindsightResult:
    """Outcome of :func:`solve_hindsight`.

    Attributes
    ----------
    status : SolveStatus
        ``optimal`` only when a certified bound equals the verified incumbent; otherwise
        the IP solve's status (``time_limit``, ``interrupted``), or ``not_solved`` when
        there was no usable IP answer (skipped for size, rejected by the checker).
    opt : int or None
        The optimal TEL, when proven.
    incumbent : int
        TEL of the best verified schedule found (upper-bound stages or IP).
    incumbent_source : str
    starts : mapping
        Start times of the incumbent.
    bound : int
        Best certified lower bound on OPT, rounded up to an integer (TEL is integral).
    bound_certificate : str
        What certifies ``bound``: ``mip-bound-from-solver``, ``lp-dual-checked``, …, ``sum-of-outputs``.
    gap : float
        ``(incumbent − bound) / incumbent`` (0 for an empty instance).
    heuristics : mapping
        Verified TEL of each upper-bound stage's schedule.
    bounds : tuple of BoundResult
        Every bound stage's result (with its certificate status and detail).
    model_stats : mapping
        Size of the IP (``cols``, ``int_cols``, ``rows``, ``nnz``), its ``horizon``,
        ``windows`` and ``classes``, and the ``formulation``; empty if no IP was built.
    stage_s : mapping
        Seconds spent in each stage.
    runtime_s : float
    message : str
        The solver's message and notes, ``; ``-separated.
    errors : tuple of str
        Contradictions found (a certified bound above the incumbent, a solver "optimal"
        that the checker refutes); empty in a healthy run.
    solver : str
        The solver that ran the IP (empty when it did not run).
    bounds_skipped : tuple of str
        One note per bound stage ``auto`` left out because it would not finish in the bound stages'
        share of the time (:func:`llmopt.opt.defaults.auto_bound_choice`).
    ip_time_capped : bool or None
        With an ``ip_node_limit``: ``True`` when a clock (``ip_time_limit`` or the pipeline's
        ``time_limit``) stopped the IP solve before its node limit did, so the result depends on the
        machine's speed and load; ``False`` when it did not. ``None`` without a node limit or when no
        IP was solved.
    """

    status: SolveStatus
    opt: int | None
    incumbent: int
    incumbent_source: str
    starts: Mapping[str, int]
    bound: int
    bound_certificate: str
    gap: float
    heuristics: Mapping[str, int]
    bounds: tuple[BoundResult, ...] = ()
    model_stats: Mapping[str, Any] = field(default_factory=dict)
    stage_s: Mapping[str, float] = field(default_factory=dict)
    runtime_s: float = 0.0
    message: str = ""
    errors: tuple[str, ...] = ()
    solver: str = ""
    bounds_skipped: tuple[str, ...] = ()
    ip_time_capped: bool | None = None


class PipelineInterrupted(KeyboardInterrupt):
    """Interrupted before any schedule existed, so there is nothing to report."""


class _Budget:
    """Wall-clock budget of the whole pipeline (``None``: unlimited)."""

    def __init__(self, seconds: float | None) -> None:
        self.start = time.perf_counter()
        self.seconds = seconds

    def remaining(self) -> float | None:
        if self.seconds is None:
            return None
        return max(0.0, self.seconds - (time.perf_counter() - self.start))

    def deadline(self, share: float) -> float | None:
        """``perf_counter`` value at which ``share`` of the budget is used up."""
        return None if self.seconds is None else self.start + share * self.seconds

    def until(self, share: float) -> float | None:
        """Seconds from now until ``share`` of the budget is used up (at least 0)."""
        end = self.deadline(share)
        return None if end is None else max(0.0, end - time.perf_counter())


def _min_limit(*limits: float | None) -> float | None:
    known = [x for x in limits if x is not None]
    return min(known) if known else None


def upper_bound_schedules(
    instance: Instance,
    *,
    seed: int = 0,
    search_evals: int = 0,
    known: Mapping[str, Schedule] | None = None,
    stages: tuple[str, ...] = DEFAULT_UPPER_BOUNDS,
    deadline: float | None = None,
    lns_iterations: int = DEFAULT_LNS_ITERATIONS,
    cp_sat_seconds: float = DEFAULT_CP_SAT_SECONDS,
) -> dict[str, Schedule]:
    """Run the upper-bound stages; ``known`` schedules (e.g. a benchmark's policies) are reused.

    With ``deadline=None`` a search runs exactly ``search_evals`` evaluations, so the result
    depends only on the instance and the seed (DESIGN §4 invariant 3).
    """
    out = dict(known or {})
    for name in stages:
        if name not in out:
            ctx = SearchContext(seed=seed, search_evals=search_evals, deadline=deadline, known=out,
                                lns_iterations=lns_iterations, cp_sat_seconds=cp_sat_seconds)
            out[name] = find_schedule(name, instance, ctx)
    return out


def solve_hindsight(
    instance: Instance,
    *,
    solver: str = DEFAULT_SOLVER,
    formulation: str = "hindsight-ip",
    bounds: tuple[str, ...] = DEFAULT_BOUNDS,
    upper_bounds: tuple[str, ...] = DEFAULT_UPPER_BOUNDS,
    windows: str = "upper-bound",
    time_limit: float | None = None,
    ip_time_limit: float | None = None,
    ip_node_limit: int | None = None,
    threads: int = 1,
    seed: int = 0,
    search_evals: int = 200,
    lns_iterations: int = DEFAULT_LNS_ITERATIONS,
    cp_sat_seconds: float = DEFAULT_CP_SAT_SECONDS,
    max_nnz: int = DEFAULT_MAX_NNZ,
    schedules: Mapping[str, Schedule] | None = None,
    progress: Progress | None = None,
    verbose: bool = False,
    solve_ip: bool = True,
    trust_exact: bool = True,
) -> HindsightResult:
    """Compute (or bound) the hindsight-optimal TEL of ``instance``.

    Parameters
    ----------
    instance : Instance
    solver : str
        Registered solver for the formulation's model.
    formulation : str
        Registered formulation (:data:`llmopt.formulations.FORMULATIONS`).
    bounds : tuple of str
        Registered bound stages (:data:`llmopt.opt.bounds.BOUNDS`); each runs and is recorded in
        ``HindsightResult.bounds``, and the best certified value joins the bound on OPT. ``"auto"``
        (the default) stands for :func:`llmopt.opt.defaults.auto_bounds`: energy, with the zone LP
        or the column-generation LP by size and by the time the bound stages have —
        :data:`~llmopt.opt.defaults.AUTO_BOUNDS_SHARE` of ``time_limit``, else ``ip_time_limit`` seconds
        (a suite limits the IP alone, and its bound stages get as long), else unlimited; a stage
        left out is named in ``HindsightResult.bounds_skipped``.
    upper_bounds : tuple of str
        Upper-bound stages (:data:`llmopt.opt.upper_bounds.UPPER_BOUNDS` or policy names).
    windows : str
        Registered windows stage (:data:`llmopt.model.windows.WINDOWS`).
    time_limit : float, optional
        Seconds for the whole pipeline (see the module docstring); ``None``: no overall limit.
    ip_time_limit : float, optional
        Seconds for the IP solve alone.
    ip_node_limit : int, optional
        Branch-and-bound nodes for the IP solve (a solver with
        :attr:`~llmopt.solvers.capability.Capability.NODE_LIMIT`); the clocks then act only as safety caps.
    threads : int
    seed : int
        Seed of the search stages.
    search_evals : int
        Evaluations of each search stage (0: none).
    lns_iterations : int
        Sub-IPs of the ``lns`` stage, when it is one of ``upper_bounds``.
    cp_sat_seconds : float
        Deterministic seconds of the ``cp-sat`` stage, when it is one of ``upper_bounds``.
    max_nnz : int
        Largest model built (:data:`DEFAULT_MAX_NNZ`); a larger one is skipped with a message.
    schedules : mapping, optional
        Schedules already computed for this instance (e.g. by a benchmark); they join the
        upper bounds (after the checker verifies them) instead of being computed again.
    progress : callable, optional
        Receives one line per stage (and periodic solver progress).
    solve_ip : bool
        ``False`` skips the formulation and solver stages: upper bounds and certified lower
        bounds only (``llmopt solve --relax``).
    trust_exact : bool
        ``False`` for a formulation that declares itself exact but has not passed (or failed) its
        conformance check (:func:`llmopt.bench.plugins.conformance.check_formulation`): its solver's bound
        is then never used to prove OPT, only the certified bounds are.

    Raises
    ------
    ValueError
        If ``ip_node_limit`` is not an integer >= 1, or the solver cannot honour a node limit.
    RuntimeError
        If no upper-bound schedule passes the checker.
    PipelineInterrupted
        If interrupted before any schedule was found (later, an interrupt returns what was found).
    llmopt.model.registry.RegistryError
        If a stage name is unknown.
    """
    from llmopt.formulations import make_formulation
    from llmopt.model.windows import WINDOWS

    budget = _Budget(time_limit)
    bounds_budget = AUTO_BOUNDS_SHARE * time_limit if time_limit is not None else ip_time_limit
    skipped = auto_bound_choice(instance.n, bounds_budget)[1] if AUTO_BOUNDS in bounds else ()
    bounds = expand_bounds(bounds, instance.n, bounds_budget)
    say = progress or (lambda _msg: None)
    run = _Run(instance, say)
    # Resolve every name before any work, so a typo fails at once.
    form = make_formulation(formulation)
    windows_stage = WINDOWS.get(windows)
    for name in bounds:
        BOUNDS.get(name)
    solver_obj = get_solver(solver)
    if ip_node_limit is not None:
        if isinstance(ip_node_limit, bool) or not isinstance(ip_node_limit, int) or ip_node_limit < 1:
            raise ValueError(f"ip_node_limit must be an integer >= 1, got {ip_node_limit!r}")
        if not solver_obj.info.has(Capability.NODE_LIMIT):
            raise ValueError(f"ip_node_limit: solver {solver!r} cannot stop at a node limit "
                             f"(it lacks the {Capability.NODE_LIMIT} capability)")

    try:
        # 1. upper bounds
        found = upper_bound_schedules(instance, seed=seed, search_evals=search_evals, known=schedules,
                                      stages=upper_bounds, deadline=budget.deadline(0.25),
                                      lns_iterations=lns_iterations, cp_sat_seconds=cp_sat_seconds)
        run.add_schedules(found)
        run.stage("upper bounds", ", ".join(f"{k} {v}" for k, v in run.heuristics.items()))
        win = windows_stage(instance, run.incumbent)
        for text in skipped:
            run.note(text)
        run.bounds_skipped = tuple(skipped)
        # 2. certify the best schedule so far: before the IP, so that a bound meeting it saves the IP
        for name in bounds:
            ctx = BoundContext(upper_bound_starts=run.starts, windows=win, solver=solver,
                               time_limit=_min_limit(budget.remaining(), budget.until(BOUNDS_END)),
                               deadline=budget.deadline(BOUNDS_END), threads=threads, max_nnz=max_nnz)
            run.bound_stage(name, ctx)
        if run.incumbent == instance.total_output:  # no request waits: optimal, certified by Σo
            run.note("the best schedule has no waiting, so it is optimal (bound Σo)")
        elif run.proven():
            bound, certificate = run.best_bound()
            run.note(f"the {certificate} bound {bound} meets the best schedule, so it is optimal: IP not run")
        elif solve_ip:
            # 3. windows, 4. formulation, 5. solver, 6. decode
            lo, hi = certified_windows(instance, run.starts)
            run.windows_valid = win.contains(lo.tolist(), hi.tolist())
            if not run.windows_valid:
                run.note(f"windows {windows!r} do not contain the checker's windows: the MIP bound is not used")
            run.trust_exact = trust_exact
            run.ip_node_limit = ip_node_limit
            run.ip(form, win, solver_obj, budget, ip_time_limit, threads, max_nnz, verbose, progress)
    except KeyboardInterrupt:
        run.interrupted = True
        run.note("interrupted by the user; keeping what was found so far")
    return run.result(time.perf_counter() - budget.start)


class _Run:
    """The state of one pipeline run, accumulated stage by stage."""

    def __init__(self, instance: Instance, say: Progress) -> None:
        self.instance = instance
        self.say = say
        self.t0 = time.perf_counter()
        self.last = self.t0
        self.heuristics: dict[str, int] = {}
        self.incumbent: int | None = None
        self.source = ""
        self.starts: dict[str, int] = {}
        self.candidates: list[tuple[float, str]] = [(float(instance.total_output), "sum-of-outputs")]
        self.bounds: list[BoundResult] = []
        self.notes: list[str] = []
        self.errors: list[str] = []
        self.stage_s: dict[str, float] = {}
        self.model_stats: dict[str, Any] = {}
        self.solve: SolveResult | None = None
        self.solver = ""
        self.windows_valid = False
        self.bound_eligible = False
        self.trust_exact = True
        self.interrupted = False
        self.ip_rejected = False
        self.timed_out = False  # the deadline passed before the solver could start
        self.bounds_skipped: tuple[str, ...] = ()
        self.ip_node_limit: int | None = None

    # --- bookkeeping ---------------------------------------------------------------------------

    def stage(self, name: str, summary: str) -> None:
        now = time.perf_counter()
        self.stage_s[name] = round(self.stage_s.get(name, 0.0) + now - self.last, 4)
        self.last = now
        self.say(f"[{now - self.t0:7.1f} s] {name}: {summary}")

    def note(self, text: str) -> None:
        self.notes.append(text)
        self.say(f"[{time.perf_counter() - self.t0:7.1f} s] note: {text}")

    def offer(self, starts: Mapping[str, int], source: str) -> int | None:
        """Verify a schedule with the checker; keep it if it beats the incumbent. Returns its TEL."""
        report = check_schedule(self.instance, starts)
        if not report.ok or report.tel is None:
            self.note(f"{source} schedule rejected by the checker: {report.violations[0]}")
            return None
        if self.incumbent is None or report.tel < self.incumbent:
            self.incumbent, self.source, self.starts = report.tel, source, dict(starts)
        return report.tel

    def add_schedules(self, found: Mapping[str, Schedule]) -> None:
        for name, sched in found.items():
            tel = self.offer(sched.starts, name)
            if tel is not None:
                self.heuristics[name] = tel
        if self.incumbent is None:
            raise RuntimeError(f"no upper-bound schedule passed the checker: {'; '.join(self.notes)}")

    def proven(self) -> bool:
        """Whether a certified bound already meets the verified incumbent."""
        return self.incumbent is not None and self.best_bound()[0] >= self.incumbent

    def best_bound(self) -> tuple[int, str]:
        assert self.incumbent is not None
        bound, certificate, errors = best_certified_bound(self.candidates, self.incumbent)
        self.errors.extend(e for e in errors if e not in self.errors)
        return bound, certificate

    # --- stages ---------------------------------------------------------------------------------

    def ip(self, form: Any, win: Any, solver: Any, budget: _Budget, ip_time_limit: float | None, threads: int,
           max_nnz: int, verbose: bool, progress: Progress | None) -> None:
        remaining = budget.remaining()
        # HiGHS's own limit should end the solve a little before the whole budget does ...
        reserve = None if remaining is None else max(0.0, remaining - 0.05 * (budget.seconds or 0.0))
        if reserve is not None and reserve < MIN_STAGE_S:
            self.note("IP skipped: the time limit is used up")
            self.timed_out = True
            return
        try:
            self._ip(form, win, solver, budget, ip_time_limit, threads, max_nnz, verbose, progress)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # e.g. a broken plug-in formulation: keep what was found, say why
            raise_if_interrupted(exc)  # a Ctrl-C during the solver's import arrives as an ImportError
            self.note(f"IP stage failed: {type(exc).__name__}: {exc}")
            self.errors.append(f"the {form.name} / {solver.info.name} stage raised {type(exc).__name__}: {exc}")
            self.ip_rejected = True

    def _ip(self, form: Any, win: Any, solver: Any, budget: _Budget, ip_time_limit: float | None, threads: int,
            max_nnz: int, verbose: bool, progress: Progress | None) -> None:
        instance = self.instance
        estimate = getattr(form, "estimate", None)
        if estimate is not None:
            size = estimate(instance, win)
            if size.nnz > max_nnz:
                self.note(f"IP skipped: {ModelTooLarge(f'the {form.name} model', size, max_nnz)}")
                self.stage("windows + model", "skipped (too large)")
                return
        model = form.build(instance, win)
        describe = getattr(form, "describe", None)
        self.model_stats = {**model.stats(), "horizon": win.horizon, "windows": win.reason, "formulation": form.name,
                            **(describe(instance, model) if describe is not None else {})}
        self.stage("windows + model", f"{form.name}: {model.size.describe()} ({win.reason})")
        # The solver gets what the build left: its own limit ends the solve a little before the whole
        # budget does, and the adapter cancels it at the end (limits overrun by seconds on large models).
        remaining = budget.remaining()
        deadline = budget.deadline(1.0)
        if remaining is not None and remaining <= 0.0:
            self.note(f"IP not started: building the {form.name} model used up the time limit")
            self.timed_out = True
            return
        limit = _min_limit(ip_time_limit, None if remaining is None
                           else max(0.0, remaining - 0.05 * (budget.seconds or 0.0)))
        warm = None
        encode = getattr(form, "encode", None)
        if encode is not None and solver.info.has(Capability.WARM_START):
            try:
                warm = encode(instance, model, self.starts)
            except (ValueError, KeyError) as exc:
                self.note(f"no warm start: {exc}")
        nodes = {} if self.ip_node_limit is None else {"node_limit": self.ip_node_limit}
        res = solver.solve(model, time_limit=limit, threads=threads, warm_start=warm, verbose=verbose,
                           progress=progress, deadline=deadline, **nodes)
        self.solve, self.solver = res, solver.info.name
        if self.ip_node_limit is not None and res.status is SolveStatus.TIME_LIMIT:
            self.note(f"the IP stopped at its wall-clock safety cap before its node limit ({self.ip_node_limit}): "
                      "this result depends on the machine's speed and load")
        if res.status is SolveStatus.INTERRUPTED:
            self.interrupted = True
        if res.x is not None:
            try:
                ip_starts = form.decode(instance, model, res.x)
            except (ValueError, KeyError) as exc:
                self.note(f"solver solution not decoded: {exc}")
                self.ip_rejected = True
            else:
                if self.offer(ip_starts, f"ip/{solver.info.name}") is None:
                    self.ip_rejected = True
                    self.errors.append(f"the {solver.info.name} solution of the {form.name} model is not a feasible "
                                       "schedule (see message)")
        self.bound_eligible = form.exact and self.windows_valid and self.trust_exact
        if form.exact and not self.trust_exact:
            self.note(f"the solver's bound on {form.name!r} is not used: the formulation did not pass its "
                      "conformance check")
        usable = res.status not in (SolveStatus.NOT_SOLVED, SolveStatus.INFEASIBLE, SolveStatus.UNBOUNDED)
        if res.bound is not None and usable and self.bound_eligible:
            self.candidates.append((res.bound, "mip-bound-from-solver"))
        if res.status in (SolveStatus.INFEASIBLE, SolveStatus.UNBOUNDED):
            self.errors.append(f"the solver calls the {form.name} model {res.status}, but a verified schedule "
                               "lies in its windows")
        bound = "—" if res.bound is None else f"{res.bound:.1f}"
        self.stage("IP", f"{res.status} in {res.runtime_s:.1f} s, incumbent {self.incumbent} ({self.source}), "
                         f"solver bound {bound}")

    def bound_stage(self, name: str, ctx: BoundContext) -> None:
        if ctx.time_limit is not None and ctx.time_limit < MIN_STAGE_S:
            self.note(f"bound {name!r} skipped: the time limit is used up")
            return
        res = run_bound(name, self.instance, ctx)
        self.bounds.append(res)
        if res.value is not None:
            self.candidates.append((res.value, res.certificate))
        value = "—" if res.value is None else f"{res.value:.1f}"
        verdict = "verified" if res.verified else "NOT verified"
        self.stage(f"bound {name}", f"{value} ({res.certificate}, {verdict}: {res.detail})")

    # --- result -----------------------------------------------------------------------------------

    def result(self, runtime: float) -> HindsightResult:
        if self.incumbent is None:
            raise PipelineInterrupted("interrupted before any schedule was found")
        bound, certificate = self.best_bound()
        opt = self.incumbent if bound >= self.incumbent else None
        res = self.solve
        if opt is not None:
            status = SolveStatus.OPTIMAL
            if res is not None and res.status is not SolveStatus.OPTIMAL:
                self.notes.append(f"optimality proven by the {certificate} bound = incumbent")
        elif self.interrupted:
            status = SolveStatus.INTERRUPTED
        elif res is None and self.timed_out:
            status = SolveStatus.TIME_LIMIT
        elif res is None or self.ip_rejected or res.status in (SolveStatus.INFEASIBLE, SolveStatus.UNBOUNDED):
            status = SolveStatus.NOT_SOLVED
        elif res.status is SolveStatus.OPTIMAL:
            why = (f"solver {self.solver} reported optimal, but the best certified bound {bound} is below the "
                   f"verified incumbent {self.incumbent}")
            if self.bound_eligible:  # its bound should have certified the incumbent: a contradiction
                self.errors.append(why)
            else:  # optimal over windows or a formulation that prove nothing about OPT
                self.notes.append(why)
            status = SolveStatus.NOT_SOLVED
        else:
            status = res.status
        gap = (self.incumbent - bound) / self.incumbent if self.incumbent else 0.0
        message = "; ".join(([res.message] if res is not None and res.message else []) + self.notes)
        capped = None
        if self.ip_node_limit is not None and (res is not None or self.timed_out):
            capped = self.timed_out or (res is not None and res.status is SolveStatus.TIME_LIMIT)
        return HindsightResult(
            status=status,
            opt=opt,
            incumbent=self.incumbent,
            incumbent_source=self.source,
            starts=self.starts,
            bound=bound,
            bound_certificate=certificate,
            gap=max(0.0, gap),
            heuristics=dict(self.heuristics),
            bounds=tuple(self.bounds),
            model_stats=self.model_stats,
            stage_s=self.stage_s,
            runtime_s=runtime,
            message=message,
            errors=tuple(self.errors),
            solver=self.solver,
            bounds_skipped=self.bounds_skipped,
            ip_time_capped=capped,
        )
