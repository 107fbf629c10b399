"""CP-SAT (OR-Tools) as a schedule finder: the upper-bound stage ``cp-sat``.

The model is exact (DESIGN §1): request ``i`` has an integer start ``k_i`` in its certified
window ``a_i … a_i + (U − Σo)`` (``U`` the best TEL known so far; :func:`llmopt.model.windows.start_windows`),
and its ``j``-th generated token is a unit interval at ``k_i + j`` with demand ``s_i + j`` in
one cumulative constraint of capacity ``M`` — the "staircase" encoding, ``Σ o_i`` intervals.
The objective is ``Σ k_i`` (TEL up to a constant). The best schedule known is the solution hint.
Identical requests start in instance order, and the hint is permuted to match (:func:`_staircase_model`
says why: OR-Tools' symmetry presolve crashed on a hint otherwise).

The budget is CP-SAT's *deterministic* time (``max_deterministic_time``) with one worker,
so a run depends only on the instance, the hint and the seed, not on the machine's load.

What it is good for (measured while building it, on six J §5.1 trials, n = 27–68): on tiny
instances it proves the optimum (tests); at J's size it did not improve its hint within 10–20 s
with one or two workers, and its bound stayed near ``Σ o_i`` — :mod:`llmopt.opt.lns` is the stage
that improves schedules at that size. Its bound is never used as a certified bound.

The stage ``cp-sat-lns`` (:func:`cp_sat_lns_stage`) chains the two: CP-SAT hinted with the best
verified schedule, then :func:`llmopt.opt.lns.lns` started from CP-SAT's schedule (CP-SAT moves the
schedule as a whole, the sub-IPs of ``lns`` then polish it locally). Measured by
``llmopt/papers/jaillet/studies/schedule_polish.py`` on 100 J §5.1 trials after the stored ``local-search`` + ``lns``
(``results/jaillet/schedule-polish``): with 5 deterministic seconds (18.5 CPU s on average) CP-SAT improved its
hint in 28 trials, by 1–8 TEL units; the stage lowered the best found by 0.29 % (AM1) / 0.24 % (AM2)
on average, and 30 more ``lns`` sub-IPs without CP-SAT by 0.28 % / 0.23 % — the sub-IPs do nearly all of it.

OR-Tools is imported only when a stage runs; :func:`available` checks for it without
importing it.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from llmopt.model.instance import Instance
from llmopt.model.schedule import Schedule, schedule_from_starts

if TYPE_CHECKING:
    from llmopt.opt.upper_bounds import SearchContext

__all__ = ["available", "cp_sat_schedule", "cp_sat_stage", "cp_sat_lns", "cp_sat_lns_stage", "MAX_TOKENS"]

#: Largest model built, in unit intervals (``Σ o_i``); beyond it CP-SAT's presolve alone takes minutes.
MAX_TOKENS = 200_000


def available() -> bool:
    """Whether OR-Tools is installed (checked without importing it).

    Returns
    -------
    bool
    """
    return importlib.util.find_spec("ortools") is not None


def _identical_groups(instance: Instance) -> list[list[int]]:
    """Indices (instance order) of the requests with equal ``(a, s, o)``, one list per distinct triple."""
    groups: dict[tuple[int, int, int], list[int]] = {}
    for i, r in enumerate(instance.requests):
        groups.setdefault((r.arrival, r.prompt, r.output), []).append(i)
    return list(groups.values())


def _sorted_hint(instance: Instance, starts: Mapping[str, int], groups: list[list[int]]) -> dict[str, int]:
    """``starts`` with the starts of each group of identical requests sorted into instance order.

    Identical requests are interchangeable, so the result is feasible with the same TEL whenever
    ``starts`` is, and it satisfies the order constraints ``k_i <= k_j`` (``i`` before ``j``) of the model.
    """
    reqs = instance.requests
    out: dict[str, int] = {}
    for group in groups:
        for i, k in zip(group, sorted(starts[reqs[i].id] for i in group), strict=True):
            out[reqs[i].id] = k
    return out


def _staircase_model(instance: Instance, hint: Schedule) -> tuple[Any, list[Any]]:
    """The staircase model of the module docstring with its solution hint: ``(CpModel, start variables)``.

    Identical requests (equal ``a, s, o``) start in instance order (``k_i <= k_j``) and the hint's
    starts of each such group are sorted to match (:func:`_sorted_hint`). Why: OR-Tools 9.15's
    symmetry presolve finds these interchangeable starts and then fails to carry a hint into its
    reduced model (``IndexError: absl::btree_map::at``, OR-Tools issues #5091, #5288), on instances
    of 5 requests; without the symmetry it has nothing to reduce. Proof that no optimum is lost:
    permuting the starts of identical requests keeps a schedule feasible with the same TEL and every
    start in its window (windows depend on ``a, o`` only), so some optimal schedule has them sorted.
    """
    from ortools.sat.python import cp_model

    from llmopt.model.windows import start_windows

    reqs = instance.requests
    windows = start_windows(instance, hint.tel)
    groups = _identical_groups(instance)
    hinted = _sorted_hint(instance, hint.starts, groups)
    model = cp_model.CpModel()
    starts: list[Any] = [None] * len(reqs)
    intervals, demands = [], []
    for group in groups:
        # a hint that idles may start past T_c − o; a wider window still holds an optimal schedule.
        # Identical requests share their window (it depends on a, o only) and get the same domain.
        top = max(windows.hi[group[0]], max(hinted[reqs[i].id] for i in group))
        for i in group:
            r = reqs[i]
            k = model.new_int_var(windows.lo[i], top, f"k_{r.id}")
            starts[i] = k
            model.add_hint(k, hinted[r.id])
            for j in range(1, r.output + 1):
                intervals.append(model.new_fixed_size_interval_var(k + j, 1, f"tok_{r.id}_{j}"))
                demands.append(r.prompt + j)
        for first, second in zip(group, group[1:]):
            model.add(starts[first] <= starts[second])
    model.add_cumulative(intervals, demands, instance.M)
    model.minimize(cp_model.LinearExpr.sum(starts))
    return model, starts


def cp_sat_schedule(instance: Instance, hint: Schedule, *, seconds: float, seed: int = 0,
                    deadline: float | None = None) -> Schedule:
    """Search for a schedule better than ``hint`` with CP-SAT for ``seconds`` deterministic seconds.

    Parameters
    ----------
    instance : Instance
    hint : Schedule
        A feasible schedule: the solution hint, and its TEL bounds the start windows.
    seconds : float
        CP-SAT's ``max_deterministic_time`` (one worker).
    seed : int
        CP-SAT's ``random_seed``.
    deadline : float, optional
        ``time.perf_counter()`` value by which CP-SAT must stop (wall clock; the result then
        depends on the machine's speed).

    Returns
    -------
    Schedule
        The best schedule CP-SAT found (its policy name says whether CP-SAT proved it optimal
        within the windows), or ``hint`` rebuilt from its starts when CP-SAT found nothing better.

    Raises
    ------
    RuntimeError
        If OR-Tools is not installed.
    ValueError
        If the model would exceed :data:`MAX_TOKENS` intervals.
    """
    if not available():
        raise RuntimeError("the cp-sat stage needs OR-Tools: pip install ortools")
    tokens = instance.total_output
    if tokens > MAX_TOKENS:
        raise ValueError(f"cp-sat: the staircase model would have {tokens:,} intervals (Σ o_i), "
                         f"more than MAX_TOKENS = {MAX_TOKENS:,}; use the lns stage at this size")
    from ortools.sat.python import cp_model

    reqs = instance.requests
    if not reqs:
        return schedule_from_starts(instance, {}, policy="cp-sat")
    model, starts = _staircase_model(instance, hint)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    # OR-Tools otherwise installs its own SIGINT handler, which outlives the solve and swallows the
    # Ctrl-C that stops the pipeline's other stages (llmopt.opt.hindsight).
    solver.parameters.catch_sigint_signal = False
    solver.parameters.max_deterministic_time = float(seconds)
    if deadline is not None:
        solver.parameters.max_time_in_seconds = max(0.0, deadline - time.perf_counter())
    solver.parameters.random_seed = int(seed)
    status = solver.solve(model)
    found = None
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        label = "cp-sat(optimal)" if status == cp_model.OPTIMAL else f"cp-sat({seconds:g} det. s)"
        found = schedule_from_starts(instance, {r.id: int(solver.value(starts[i])) for i, r in enumerate(reqs)},
                                     policy=label)
    if found is None or found.tel > hint.tel:  # never return worse than the hint
        return schedule_from_starts(instance, dict(hint.starts), policy="cp-sat(no improvement; hint)")
    return found


def cp_sat_stage(instance: Instance, ctx: SearchContext) -> Schedule:
    """Upper-bound stage ``cp-sat``.

    Parameters
    ----------
    instance : Instance
    ctx : SearchContext
        :func:`cp_sat_schedule` runs for ``ctx.cp_sat_seconds`` deterministic seconds (and stops at
        ``ctx.deadline`` in wall-clock time), hinted with the best verified schedule found so far
        (:func:`~llmopt.opt.upper_bounds.best_verified`).

    Returns
    -------
    Schedule
    """
    from llmopt.opt.upper_bounds import best_verified

    return cp_sat_schedule(instance, best_verified(instance, ctx), seconds=ctx.cp_sat_seconds, seed=ctx.seed,
                           deadline=ctx.deadline)


def cp_sat_lns(instance: Instance, hint: Schedule, *, seconds: float, iterations: int, seed: int = 0,
               deadline: float | None = None) -> Schedule:
    """CP-SAT from ``hint`` (:func:`cp_sat_schedule`), then ``lns`` started from CP-SAT's schedule.

    Parameters
    ----------
    instance : Instance
    hint : Schedule
        A feasible schedule: CP-SAT's solution hint (its TEL bounds CP-SAT's start windows).
    seconds : float
        CP-SAT's deterministic seconds (one worker).
    iterations : int
        Sub-IPs of :func:`llmopt.opt.lns.lns`.
    seed : int
        CP-SAT's ``random_seed`` and the seed of ``lns``'s neighbourhoods: the result depends only on
        the instance, ``hint`` and ``seed`` unless ``deadline`` stops a step early.
    deadline : float, optional
        ``time.perf_counter()`` value after which both steps stop early.

    Returns
    -------
    Schedule
        No evictions and TEL ``<= hint.tel``; its policy name records both steps, e.g.
        ``cp-sat-lns(cp-sat(5 det. s) + lns(30 iterations))``.
    """
    from llmopt.opt.lns import lns

    after_cp = cp_sat_schedule(instance, hint, seconds=seconds, seed=seed, deadline=deadline)
    polished = lns(instance, after_cp, iterations=iterations, seed=seed, deadline=deadline)
    if polished.tel > hint.tel:  # neither step raises TEL; kept so that a regression cannot leak out
        return schedule_from_starts(instance, dict(hint.starts), policy="cp-sat-lns(no improvement; hint)")
    return schedule_from_starts(instance, dict(polished.starts),
                                policy=f"cp-sat-lns({after_cp.policy} + {polished.policy})")


def cp_sat_lns_stage(instance: Instance, ctx: SearchContext) -> Schedule:
    """Upper-bound stage ``cp-sat-lns``: :func:`cp_sat_lns` from the best verified schedule so far.

    Parameters
    ----------
    instance : Instance
    ctx : SearchContext
        CP-SAT runs ``ctx.cp_sat_seconds`` deterministic seconds hinted with
        :func:`~llmopt.opt.upper_bounds.best_verified`, then ``lns`` runs ``ctx.lns_iterations``
        sub-IPs from CP-SAT's schedule; both with ``ctx.seed``, both stop at ``ctx.deadline``.

    Returns
    -------
    Schedule
    """
    from llmopt.opt.upper_bounds import best_verified

    return cp_sat_lns(instance, best_verified(instance, ctx), seconds=ctx.cp_sat_seconds,
                      iterations=ctx.lns_iterations, seed=ctx.seed, deadline=ctx.deadline)
