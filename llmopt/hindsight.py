"""Hindsight OPT for one instance: heuristics → windows → IP → solver → checker.

The pipeline (each step is proved or verified, DESIGN §3 "Scale of the hindsight IP"):

1. Feasible schedules give an upper bound ``U`` on OPT: MC-SF, FCFS, and a seeded
   local search over priority lists (:mod:`llmopt.heuristics`).
2. ``U`` shrinks the IP's start windows (:func:`~llmopt.formulations.hindsight_ip.start_windows`,
   proof in its docstring), and identical requests share integer variables.
3. The IP is solved with a warm start from the best schedule.
4. The returned schedule is re-verified by :mod:`llmopt.checker`. The lower bound is the
   solver's MIP bound (certificate ``mip-bound-from-solver``) or, when the solver ends
   without one, the LP relaxation bound re-derived by the checker from its dual
   (``lp-dual-checked``, :func:`llmopt.bounds.lp_bound`); the larger valid one is kept.

``opt`` is set only when the solver proved optimality; otherwise the result carries
the status, the best verified incumbent, the bound and the gap.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmopt.bounds import lp_bound
from llmopt.checker import check_schedule
from llmopt.formulations.hindsight_ip import encode_starts, formulate, start_windows
from llmopt.heuristics import local_search
from llmopt.instance import Instance
from llmopt.policies import make_policy
from llmopt.result import SolveStatus
from llmopt.schedule import Schedule
from llmopt.simulator import simulate
from llmopt.solvers import get_solver

__all__ = ["HindsightResult", "solve_hindsight", "upper_bound_schedules", "PRESOLVE_NNZ_LIMIT"]

#: Above this many nonzeros the HiGHS MIP presolve is switched off. Measured once by hand on
#: Arrival-Model-1 instances (M = 40): at n = 58 (962k nonzeros) presolve took 21.7 s,
#: reduced nothing and overran a 10 s time limit; at n = 10–12 (≤ 50k nonzeros) it halved
#: the solve time (20 s with presolve vs 39–49 s without).
PRESOLVE_NNZ_LIMIT = 200_000


@dataclass(frozen=True)
class HindsightResult:
    """Outcome of :func:`solve_hindsight`.

    Attributes
    ----------
    status : SolveStatus
        ``optimal`` only when a certified bound equals the verified incumbent (proven by
        the solver, or by the LP bound after a time-limited MIP); otherwise the solver's
        status (``time_limit``), or ``not_solved`` when the solver's answer failed the checker.
    opt : int or None
        The optimal TEL, when proven.
    incumbent : int
        TEL of the best verified schedule found (solver or heuristics).
    incumbent_source : str
    starts : mapping
        Start times of the incumbent.
    bound : float
        Proven lower bound on OPT (at least ``Σ o_i``).
    bound_certificate : str
        ``mip-bound-from-solver``, ``lp-dual-checked`` or ``sum-of-outputs``.
    gap : float
        ``(incumbent − bound) / incumbent``.
    heuristics : mapping
        TEL of each heuristic schedule.
    model_stats : mapping
    runtime_s : float
    """

    status: SolveStatus
    opt: int | None
    incumbent: int
    incumbent_source: str
    starts: Mapping[str, int]
    bound: float
    bound_certificate: str
    gap: float
    heuristics: Mapping[str, int]
    model_stats: Mapping[str, Any] = field(default_factory=dict)
    runtime_s: float = 0.0
    message: str = ""


def upper_bound_schedules(
    instance: Instance, *, seed: int = 0, search_evals: int = 0, known: Mapping[str, Schedule] | None = None
) -> dict[str, Schedule]:
    """Feasible schedules from MC-SF, FCFS and (if ``search_evals > 0``) local search.

    ``known`` schedules (e.g. the policies a benchmark already simulated) are reused, not
    simulated again. The local search runs exactly ``search_evals`` evaluations (no clock),
    so the result depends only on the instance and the seed (DESIGN §4 invariant 3)."""
    out = dict(known or {})
    for name in ("mc-sf", "fcfs"):
        if name not in out:
            out[name] = simulate(instance, make_policy(name))
    if search_evals > 0:
        # MC-SF's own key, so the search starts from MC-SF's schedule.
        order = sorted(instance.ids, key=lambda i: (instance.by_id(i).output, instance.by_id(i).arrival,
                                                    instance.position(i)))
        out["local-search"] = local_search(instance, out["mc-sf"], order, seed=seed, max_evals=search_evals)
    return out


def solve_hindsight(
    instance: Instance,
    *,
    solver: str = "highs",
    time_limit: float | None = 60.0,
    threads: int = 1,
    seed: int = 0,
    search_evals: int = 200,
    aggregate: bool = True,
    verbose: bool = False,
    schedules: Mapping[str, Schedule] | None = None,
) -> HindsightResult:
    """Compute (or bound) the hindsight-optimal TEL of ``instance``.

    Parameters
    ----------
    instance : Instance
    solver : str
        Registered solver name (``highs``, ``cbc``, ``gurobi``).
    time_limit : float, optional
        Seconds for the IP solve.
    threads : int
    seed : int
        Seed of the local search (results are deterministic for a seed).
    search_evals : int
        Local-search evaluations (0 disables it).
    aggregate : bool
        Merge identical requests (exact; see :mod:`llmopt.formulations.hindsight_ip`).
    schedules : mapping, optional
        Policy schedules already computed for this instance; they join the upper bounds
        (after the checker verifies them) instead of being simulated again.
    """
    t0 = time.perf_counter()
    schedules = upper_bound_schedules(instance, seed=seed, search_evals=search_evals, known=schedules)
    # The windows (and so every bound below) rest on U = TEL of a feasible schedule: take U
    # from the independent checker, never from the simulator alone.
    verified: dict[str, int] = {}
    notes = []
    for name, sched in schedules.items():
        report = check_schedule(instance, sched.starts)
        if report.ok and report.tel is not None:
            verified[name] = report.tel
        else:
            notes.append(f"{name} schedule rejected by checker: {report.violations[0]}")
    if not verified:
        raise RuntimeError(f"no heuristic schedule passed the checker: {'; '.join(notes)}")
    best_name = min(verified, key=lambda k: verified[k])
    best = schedules[best_name]
    windows = start_windows(instance, verified[best_name])
    model = formulate(instance, windows, aggregate=aggregate)
    options = {"presolve": "off"} if solver == "highs" and model.nnz > PRESOLVE_NNZ_LIMIT else {}
    res = get_solver(solver, **options).solve(
        model, time_limit=time_limit, threads=threads, warm_start=encode_starts(model, best.starts),
        verbose=verbose,
    )

    incumbent, source, starts = verified[best_name], best_name, dict(best.starts)
    status = res.status
    if res.x is not None and model.decode is not None:
        try:
            ip_starts = model.decode(res.x)
            report = check_schedule(instance, ip_starts)
            if not report.ok:
                raise ValueError(report.violations[0])
        except ValueError as exc:  # keep the heuristic incumbent and say why
            notes.append(f"solver solution rejected: {exc}")
            status = SolveStatus.NOT_SOLVED if status is SolveStatus.OPTIMAL else status
        else:
            if report.tel is not None and report.tel < incumbent:
                incumbent, source, starts = report.tel, f"ip/{solver}", ip_starts

    # Valid lower bounds, largest kept: the solver's MIP bound, the trivial TEL >= Σ o_i,
    # and (when OPT is not proven) the LP bound re-derived by the checker from its duals.
    # The LP gets no time limit: it is what certifies the gap when the MIP stops early.
    candidates = [(float(instance.total_output), "sum-of-outputs")]
    if res.bound is not None and status is not SolveStatus.NOT_SOLVED:
        candidates.append((res.bound, "mip-bound-from-solver"))
    if status is not SolveStatus.OPTIMAL:
        try:
            lp = lp_bound(instance, windows)
        except Exception as exc:  # a failed bound must not lose the solve above
            notes.append(f"LP bound failed: {type(exc).__name__}: {exc}")
        else:
            if lp.value is not None and lp.verified:
                candidates.append((lp.value, lp.certificate))
    bound, certificate = max(candidates, key=lambda c: c[0])
    # TEL is integral, so any valid bound rounds up (minus solver tolerance).
    bound = float(math.ceil(bound - 1e-6))
    # OPT is proven whenever a certified bound meets the verified incumbent, whichever
    # component proved it (the solver, or the LP bound after a time-limited MIP).
    opt = incumbent if bound >= incumbent else None
    if opt is not None and status is not SolveStatus.OPTIMAL:
        notes.append(f"optimality proven by {certificate} bound = incumbent")
        status = SolveStatus.OPTIMAL
    elif opt is None and status is SolveStatus.OPTIMAL:
        notes.append(f"solver reported optimal but certified bound {bound} < incumbent {incumbent}")
        status = SolveStatus.NOT_SOLVED
    gap = max(0.0, incumbent - bound) / incumbent if incumbent else 0.0
    message = "; ".join([res.message, *notes]) if notes else res.message
    return HindsightResult(
        status=status,
        opt=opt,
        incumbent=incumbent,
        incumbent_source=source,
        starts=starts,
        bound=bound,
        bound_certificate=certificate,
        gap=gap,
        heuristics={k: v.tel for k, v in schedules.items()},
        model_stats={**model.stats(), "horizon": windows.horizon, "windows": windows.reason,
                     "classes": model.meta.get("classes")},
        runtime_s=time.perf_counter() - t0,
        message=message,
    )
