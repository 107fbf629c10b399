"""Bound stage ``lagrangian``: the LP value approached by subgradient ascent, for trace-scale instances.

:func:`llmopt.solvers.lagrangian.subgradient_bound` maximises the Lagrangian of the memory rows over
multipliers constant on buckets of ``Δ`` times (``Δ`` from :func:`llmopt.solvers.colgen.choose_bucket`
on the context schedule's makespan, as ``lp-colgen`` chooses it), up to that makespan, within the
context's time limit. Each step is one pricing pass, where column generation re-solves a master LP
that grows by up to one column per request and round: at 10,000 LMSYS requests ``lp-colgen`` ended its
300 s below the ``energy`` bound, which this stage passes (``results/opt/trace-bracket``). At 1,000
requests it reached 99.9 % of the LP value in 60 s.

``Δ`` stays the automatic bucket although a pricing pass now costs the same at ``Δ = 1``: at 10,000
LMSYS requests (scratch runs with the best schedule's TEL as Polyak's target) ``Δ = 1`` reached
1,041,332–1,041,702 in four runs of 200–600 s at λ = 10 /s (one warm-started from 200 s at ``Δ = 16``;
``Δ = 16``: 1,038,268 committed), 9,495,287 in 300 s at λ = 50 (``Δ = 16``: 9,511,917 in 600 s) and
14,241,619 in 300 s all at 0 (``Δ = 16``: 14,229,808 in 600 s): within 0.35 % either way, and far
below the 1,099,060 that bounds the ``Δ = 1`` LP at λ = 10 from above (subgradient ascent stalls).

The certificate is the best multipliers seen; the checker
(:func:`llmopt.verify.certificates.check_lower_bound_certificate`) recomputes the reported value over
its own windows. Dominance: ``<=`` the LP over full windows with ``Δ``-bucketed rows (any ``λ``'s
Lagrangian is), so ``<= lp-colgen``'s LP at convergence; no order against ``energy`` is proved.
"""

from __future__ import annotations

import time

from llmopt.model.instance import Instance
from llmopt.opt.bounds import BoundContext, BoundResult, _certify, _no_bound, seed_schedule, time_budget

__all__ = ["lagrangian_bound", "DEFAULT_SECONDS"]

#: Seconds the stage runs when the context sets no time limit.
DEFAULT_SECONDS = 60.0


def lagrangian_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """``lagrangian``: subgradient ascent on the memory rows' Lagrangian (module docstring).

    Parameters
    ----------
    instance : Instance
    ctx : BoundContext, optional
        ``upper_bound_starts`` (else MC-SF's schedule) gives the Polyak target, the horizon and the
        checker's windows; ``time_limit`` / ``deadline`` the budget (default :data:`DEFAULT_SECONDS`).

    Returns
    -------
    BoundResult
    """
    from llmopt.solvers.colgen import choose_bucket
    from llmopt.solvers.lagrangian import subgradient_bound

    ctx = ctx or BoundContext()
    t0 = time.perf_counter()
    if instance.n == 0:
        return _no_bound("lagrangian", "no requests", t0)
    seed = seed_schedule(instance, ctx)
    limit = time_budget(ctx, DEFAULT_SECONDS)
    origin = min(r.arrival for r in instance.requests)
    makespan = max(seed[r.id] + r.output for r in instance.requests) - origin
    upper = float(sum(seed[r.id] + r.output - r.arrival for r in instance.requests))
    delta = choose_bucket("auto", makespan)
    res = subgradient_bound(instance, upper=upper, horizon=makespan, bucket=delta, time_limit=limit)
    return _certify("lagrangian", "lp-dual-checked", instance, (res.lam_times, res.lam_values), ctx, res.bound,
                    f"Lagrangian by subgradient (Δ={delta}, {res.message})", t0)
