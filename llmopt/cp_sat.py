"""CP-SAT (OR-Tools) as a schedule finder: the upper-bound stage ``cp-sat``.

The model is exact (DESIGN §1): request ``i`` has an integer start ``k_i`` in its certified
window ``a_i … a_i + (U − Σo)`` (``U`` the best TEL known so far; :func:`llmopt.windows.start_windows`),
and its ``j``-th generated token is a unit interval at ``k_i + j`` with demand ``s_i + j`` in
one cumulative constraint of capacity ``M`` — the "staircase" encoding, ``Σ o_i`` intervals.
The objective is ``Σ k_i`` (TEL up to a constant). The best schedule known is the solution hint.

The budget is CP-SAT's *deterministic* time (``max_deterministic_time``) with one worker,
so a run depends only on the instance, the hint and the seed, not on the machine's load.

What it is good for (measured, see ``results/opt_frontier/README.md``): on small instances
it finds and often proves the optimum; on J §5.1 instances (n = 27–68) it did not improve
its hint within 10–20 s, and its bound stayed near ``Σ o_i`` — :mod:`llmopt.lns` is the
stage that improves schedules at that size. Its bound is not used as a certified bound.

OR-Tools is imported only when the stage runs; :func:`available` checks for it without
importing it.
"""

from __future__ import annotations

import importlib.util

from llmopt.instance import Instance
from llmopt.schedule import Schedule, schedule_from_starts

__all__ = ["available", "cp_sat_schedule", "cp_sat_stage", "MAX_TOKENS"]

#: Largest model built, in unit intervals (``Σ o_i``); beyond it CP-SAT's presolve alone takes minutes.
MAX_TOKENS = 200_000


def available() -> bool:
    """Whether OR-Tools is installed (checked without importing it)."""
    return importlib.util.find_spec("ortools") is not None


def cp_sat_schedule(instance: Instance, hint: Schedule, *, seconds: float, seed: int = 0) -> Schedule:
    """Search for a schedule better than ``hint`` with CP-SAT for ``seconds`` deterministic seconds.

    Returns the best schedule CP-SAT found (its policy name says whether CP-SAT proved it
    optimal), or ``hint`` rebuilt from its starts when CP-SAT found nothing better.

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

    from llmopt.windows import start_windows

    reqs = instance.requests
    if not reqs:
        return schedule_from_starts(instance, {}, policy="cp-sat")
    windows = start_windows(instance, hint.tel)
    model = cp_model.CpModel()
    starts = []
    intervals, demands = [], []
    for i, r in enumerate(reqs):
        k = model.new_int_var(windows.lo[i], windows.hi[i], f"k_{r.id}")
        starts.append(k)
        model.add_hint(k, hint.starts[r.id])
        for j in range(1, r.output + 1):
            intervals.append(model.new_fixed_size_interval_var(k + j, 1, f"tok_{r.id}_{j}"))
            demands.append(r.prompt + j)
    model.add_cumulative(intervals, demands, instance.M)
    model.minimize(sum(starts))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    # OR-Tools otherwise installs its own SIGINT handler, which outlives the solve and swallows the
    # Ctrl-C that stops the pipeline's other stages (llmopt.hindsight).
    solver.parameters.catch_sigint_signal = False
    solver.parameters.max_deterministic_time = float(seconds)
    solver.parameters.random_seed = int(seed)
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return schedule_from_starts(instance, dict(hint.starts), policy="cp-sat(no solution; hint)")
    found = {r.id: int(solver.value(starts[i])) for i, r in enumerate(reqs)}
    label = "cp-sat(optimal)" if status == cp_model.OPTIMAL else f"cp-sat({seconds:g} det. s)"
    better = schedule_from_starts(instance, found, policy=label)
    if better.tel > hint.tel:  # CP-SAT keeps the hint when it cannot improve; never return worse
        return schedule_from_starts(instance, dict(hint.starts), policy=hint.policy)
    return better


def cp_sat_stage(instance: Instance, ctx) -> Schedule:  # ctx: llmopt.upper_bounds.SearchContext
    """Upper-bound stage ``cp-sat``: :func:`cp_sat_schedule` hinted with the best schedule found so far
    (MC-SF's if none), for ``ctx.cp_sat_seconds`` deterministic seconds."""
    from llmopt.policies import make_policy
    from llmopt.simulator import simulate

    known = list(ctx.known.values())
    hint = min(known, key=lambda sch: sch.tel) if known else simulate(instance, make_policy("mc-sf"))
    return cp_sat_schedule(instance, hint, seconds=ctx.cp_sat_seconds, seed=ctx.seed)
