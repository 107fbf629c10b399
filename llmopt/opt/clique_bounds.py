"""Bound stages on the LP with completion-lag clique rows, by column generation (issue 23).

``zone-colgen``
    The ``zone-lp`` relaxation (the LP with the peak-zone rows of :mod:`llmopt.formulations.zones`)
    solved by column generation over the full horizon (:mod:`llmopt.solvers.colgen`), zone rows
    separated lazily. Same relaxation as ``zone-lp`` except the windows (``zone-lp`` builds its LP
    over the pipeline's windows, which can only raise it), at a fraction of the cost: ``zone-lp``
    writes every start of every request down (``n^4``-like growth), column generation prices them.
``lag-lp``
    The same LP with every clique of :func:`llmopt.formulations.lag_cliques.class_cliques` (peak
    zones, pairwise completion lags, threshold cliques and their extensions by one mid-size request),
    rows separated in a cutting-plane loop inside the column generation. Dominates ``zone-colgen``
    (more valid rows) when both reach their LP optimum.

Certificate: the memory multipliers and, per clique with a nonzero multiplier, its members and
multipliers; :func:`llmopt.verify.clique_certificate.check_clique_certificate` proves every clique
again from the instance and recomputes the bound over its own windows. What is reported is the
checker's number.
"""

from __future__ import annotations

import time

from llmopt.model.instance import Instance
from llmopt.opt.bounds import BoundContext, BoundResult, _no_bound, _verdict, seed_schedule, time_budget

__all__ = ["zone_colgen_bound", "lag_lp_bound", "clique_colgen_bound"]

#: Columns priced in per request class and round: 10 took 35 % fewer seconds than 1 on J AM1 n = 100
#: (zone rows; 25 s against 38 s with primal simplex, 84 s with one column and dual simplex).
COLUMNS_PER_CLASS = 10
#: Largest instance the stages take: pricing evaluates every start of every request per round.
MAX_REQUESTS = 2_000


def clique_colgen_bound(name: str, families: tuple[str, ...], instance: Instance,
                        ctx: BoundContext | None = None, *, eager: bool = False) -> BoundResult:
    """Column generation with the clique ``families`` separated lazily; the checker's bound.

    Parameters
    ----------
    name : str
        Stage name for the result.
    families : tuple of str
        Families of :data:`llmopt.formulations.lag_cliques.FAMILIES`.
    instance : Instance
    eager : bool
        Add every clique row at once instead of separating (one dense family).
    ctx : BoundContext, optional
        ``upper_bound_starts`` seeds the master (else MC-SF's schedule) and bounds the checker's
        windows; ``time_limit`` / ``deadline`` stop the column generation (the bound of the last
        complete round is still certified).

    Returns
    -------
    BoundResult
    """
    from llmopt.formulations.lag_cliques import class_cliques, positions_of
    from llmopt.solvers.colgen import solve_lp_colgen
    from llmopt.verify.clique_certificate import check_clique_certificate

    ctx = ctx or BoundContext()
    t0 = time.perf_counter()
    if instance.n == 0:
        return _no_bound(name, "no requests", t0)
    if instance.n > MAX_REQUESTS:
        return _no_bound(name, f"not run: {instance.n:,} requests (more than {MAX_REQUESTS:,}); its pricing "
                         "evaluates every start of every request per round — use lp-colgen or energy", t0)
    limit = time_budget(ctx)
    seed = seed_schedule(instance, ctx)
    cliques = class_cliques(instance, families)
    res = solve_lp_colgen(instance, initial_starts=seed, time_limit=limit, cliques=cliques, eager=eager,
                          columns_per_class=COLUMNS_PER_CLASS)
    if res.bound is None:
        return _no_bound(name, f"column generation failed: {res.message}", t0)
    used = [(positions_of(instance, q), mu) for q, mu in zip(cliques, res.clique_mu, strict=True) if mu[0].size]
    value = check_clique_certificate(instance, (res.lam_times, res.lam_values), used, ctx.upper_bound_starts)
    what = (f"Lagrangian bound (colgen {res.status}, {res.rounds} rounds, {len(cliques)} candidate cliques, "
            f"{res.clique_rows} rows separated, {len(used)} cliques in the certificate)")
    return _verdict(name, f"{name}-dual-checked", value, res.bound, what, t0)


def zone_colgen_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """``zone-colgen``: the zone LP by column generation (module docstring)."""
    return clique_colgen_bound("zone-colgen", ("zone",), instance, ctx, eager=True)


def lag_lp_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """``lag-lp``: the LP with every completion-lag clique family, cut loop inside column generation."""
    return clique_colgen_bound("lag-lp", ("zone", "pair", "threshold"), instance, ctx)
