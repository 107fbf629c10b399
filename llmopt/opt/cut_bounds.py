"""Bound stages on the zone-LP strengthened by cuts and columns: idle-gap rows and a configuration master.

``sawtooth-lp``
    The ``zone-lp`` relaxation (the hindsight LP over the context's windows with the peak-zone rows of
    :mod:`llmopt.formulations.zones`) plus the most violated idle-gap ("sawtooth") rows of
    :mod:`llmopt.formulations.sawtooth`, separated in a cutting-plane loop.
``config-lp``
    The ``zone-lp`` relaxation plus the Dantzig–Wolfe configuration master of
    :mod:`llmopt.formulations.configurations` (each time's memory row replaced by the hull of its
    configurations, multisets of request sizes fitting in ``M``), by column generation.
``config-sawtooth-lp``
    Both: columns priced and sawtooth rows separated in one loop.

Each round re-solves the LP with the rows and columns found so far; the loop stops when no row is
violated and no column prices out, after :data:`MAX_ROUNDS` rounds, or at the time budget. Before column
generation converges, a round's duals certify the restricted master's optimum less the pricing shortfall
``Σ_t max(0, K(η_t) − π_t)`` (the Lagrangian value the checker recomputes); the round with the highest such
value is certified, and with the configuration master zone-lp's own LP duals are the first candidate (early
master duals can certify far less than zone-lp). Dominance: each is ``>= zone-lp`` over the same windows
once its loop has converged (the same LP with more valid rows; the first round of ``sawtooth-lp`` *is*
``zone-lp``), and ``config-sawtooth-lp`` ``>=`` both others at convergence.

Certificate: the memory-row duals ``λ``, the zone-row duals ``μ``, the sawtooth-row duals ``ν`` with
their rows and the link duals ``η_t(w)`` of the configuration master;
:func:`llmopt.verify.cut_certificate.check_cut_certificate` proves each row and the zones again from
the instance, computes each time's knapsack optimum ``K(η_t)`` itself and recomputes the Lagrangian
bound over its own windows. What is reported is the checker's number.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from llmopt.model.canonical import CanonicalModel
from llmopt.model.instance import Instance
from llmopt.model.windows import StartWindows
from llmopt.opt.bounds import (
    BoundContext,
    BoundResult,
    _no_bound,
    _too_large,
    _verdict,
    _windows,
    _without_column_bounds,
    lambda_from_lp_duals,
    seed_schedule,
    time_budget,
)

__all__ = ["CutCertificate", "cut_and_price", "cut_bound", "sawtooth_lp_bound", "config_lp_bound",
           "config_sawtooth_lp_bound", "MAX_ROUNDS", "ROWS_PER_ROUND"]

#: Rounds at most (each re-solves the LP).
MAX_ROUNDS = 200
#: Sawtooth rows added per round at most.
ROWS_PER_ROUND = 40


@dataclass(frozen=True)
class CutCertificate:
    """What :func:`llmopt.verify.cut_certificate.check_cut_certificate` needs.

    Attributes
    ----------
    lam : tuple of ndarray
        Memory multipliers ``(times, values)``.
    split : int
        Peak-zone split ``h``.
    zone_mu : tuple of ndarray
        Zone multipliers ``(times, values)``.
    rows : list of ``((τ0, L, δ, ρ), ν)``
        Sawtooth rows with their multipliers.
    knapsack : dict
        ``{t: η_t}``: the configuration master's link duals by time and size.
    claimed : float
        The LP optimum.
    rounds : int
        The round whose duals these are (0: zone-lp's LP alone, before the configuration master).
    status : str
        Why the loop stopped.
    """

    lam: tuple[np.ndarray, np.ndarray]
    split: int
    zone_mu: tuple[np.ndarray, np.ndarray]
    rows: list[tuple[tuple[int, int, int, int], float]]
    knapsack: dict[int, np.ndarray]
    claimed: float
    rounds: int
    status: str


def cut_and_price(instance: Instance, windows: StartWindows, *, sawtooth: bool = True, configurations: bool = False,
                  seed: Mapping[str, int] | None = None, solver: str | None = None, time_limit: float | None = None,
                  threads: int = 1, max_rounds: int = MAX_ROUNDS) -> CutCertificate | str:
    """Run the loop of the module docstring and return the last solved LP's certificate, or why there is none.

    Parameters
    ----------
    instance : Instance
    windows : StartWindows
        Start windows the LP is built over.
    sawtooth : bool
        Separate sawtooth rows.
    configurations : bool
        Add the configuration master, priced by column generation.
    seed : mapping, optional
        Starts of a feasible schedule inside ``windows``: its configurations are the master's first
        columns (required with ``configurations``).
    solver : str, optional
        Ignored: the loop keeps one live HiGHS model (rows and columns added between warm re-solves).
    time_limit : float, optional
        Seconds for the whole loop.
    threads : int
    max_rounds : int
        Rounds at most.

    Returns
    -------
    CutCertificate or str
    """
    return _loop(instance, windows, sawtooth=sawtooth, configurations=configurations, seed=seed,
                 time_limit=time_limit, threads=threads, max_rounds=max_rounds)


def _loop(instance: Instance, windows: StartWindows, *, sawtooth: bool, configurations: bool,
          seed: Mapping[str, int] | None, time_limit: float | None, threads: int, max_rounds: int
          ) -> CutCertificate | str:
    """:func:`cut_and_price`'s work (called directly for zone-lp's own certificate)."""
    from llmopt.formulations.configurations import (
        configuration_entries,
        link_tables,
        price_configurations,
        schedule_configurations,
        with_configuration_master,
    )
    from llmopt.formulations.hindsight_ip import formulate
    from llmopt.formulations.sawtooth import sawtooth_matrix, sawtooth_rhs, separate_sawtooth, with_sawtooth_rows
    from llmopt.formulations.zones import default_split, with_zone_rows

    if configurations and seed is None:
        return "the configuration master needs a seed schedule"
    try:
        import highspy
    except ImportError:
        return "HiGHS (highspy) is not installed: the loop keeps one live HiGHS model and adds rows and columns to it"

    from llmopt.solvers.highs import highs_lp, new_highs

    t0 = time.perf_counter()
    split = default_split(instance.M)
    zones = with_zone_rows(formulate(instance, windows), instance, split)
    model: CanonicalModel = _without_column_bounds(zones.relax())
    configs = schedule_configurations(instance, seed) if configurations and seed is not None else []
    if configurations:
        model = with_configuration_master(model, instance, configs)
    model = with_sawtooth_rows(model, instance, [])
    n_x, n_rows0 = model.cols("x").stop, model.n_rows
    h = new_highs(highspy)
    for key, value in (("output_flag", False), ("presolve", "off"), ("threads", int(threads)),
                       ("solver", "simplex"), ("random_seed", 0)):
        h.setOptionValue(key, value)
    h.passModel(highs_lp(highspy, model))
    rows: list[tuple[int, int, int, int]] = []
    known = set(configs)
    best: CutCertificate | None = None
    if configurations:
        # zone-lp's own certificate first: early master duals may certify far less than it
        plain = _loop(instance, windows, sawtooth=False, configurations=False, seed=None, time_limit=time_limit,
                      threads=threads, max_rounds=1)
        if isinstance(plain, CutCertificate):
            best = replace(plain, rounds=0)
    status = "converged"
    ran = 0
    for rnd in range(1, max_rounds + 1):
        ran = rnd
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            status = "time limit"
            break
        # HiGHS reads its time limit against a run clock that keeps counting across re-solves
        h.setOptionValue("time_limit", float("inf") if left is None else h.getRunTime() + max(left, 1e-3))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            status = f"LP round {rnd} not solved by HiGHS: {h.modelStatusToString(h.getModelStatus())}"
            break
        sol = h.getSolution()
        duals = np.asarray(sol.row_dual, dtype=float)
        x = np.asarray(sol.col_value, dtype=float)
        lam = lambda_from_lp_duals(model, duals[:n_rows0])
        mu = lambda_from_lp_duals(model, duals[:n_rows0], block_name="peak_zones")
        nu = np.maximum(-duals[n_rows0:], 0.0)
        tables = link_tables(model, duals[:n_rows0], instance.M) if configurations else {}
        new_cols, shortfall = price_configurations(model, duals[:n_rows0], instance.M, known=known) \
            if configurations else ([], 0.0)
        # before column generation converges, these duals certify the LP optimum less the pricing shortfall
        # (the Lagrangian value the checker recomputes); keep the round whose value is highest
        claim = float(h.getInfo().objective_function_value) - shortfall
        if best is None or claim >= best.claimed - 1e-9 * max(1.0, abs(best.claimed)):  # ties: the later round
            best = CutCertificate(lam, split, mu, [(row, float(v)) for row, v in zip(rows, nu, strict=True) if v > 0],
                                  tables, claim, rnd, status)
        if rnd == max_rounds:
            status = "round limit"
            break
        new_rows = separate_sawtooth(model, instance, x[:n_x], max_rows=ROWS_PER_ROUND, known=set(rows)) \
            if sawtooth else []
        if not new_rows and not new_cols:
            status = "converged"
            break
        if new_cols:
            r, j, v = configuration_entries(model, new_cols, instance.M)
            order = np.lexsort((r, j))
            starts = np.searchsorted(j[order], np.arange(len(new_cols)))
            m = len(new_cols)
            h.addCols(m, np.zeros(m), np.zeros(m), np.full(m, highspy.kHighsInf), int(r.size),
                      starts.astype(np.int32), r[order].astype(np.int32), v[order])
            configs += new_cols
            known.update(new_cols)
        if new_rows:
            S = sawtooth_matrix(model, instance, new_rows)  # entries on x columns only
            m = len(new_rows)
            h.addRows(m, np.full(m, -highspy.kHighsInf), sawtooth_rhs(instance, new_rows), int(S.nnz),
                      S.indptr[:-1].astype(np.int32), S.indices.astype(np.int32), S.data.astype(float))
            rows += new_rows
    if best is None:
        return status
    return replace(best, status=f"{status} after {ran} rounds")


def cut_bound(name: str, instance: Instance, ctx: BoundContext | None = None, *, sawtooth: bool = True,
              configurations: bool = False) -> BoundResult:
    """Run :func:`cut_and_price` over the context's windows and certify it with the checker.

    Parameters
    ----------
    name : str
        Stage name for the result.
    instance : Instance
    ctx : BoundContext, optional
        ``upper_bound_starts`` bounds the windows (and seeds the master, else MC-SF's schedule does);
        ``time_limit`` / ``deadline`` stop the loop (the last solved LP is certified).
    sawtooth, configurations : bool
        The families used (:func:`cut_and_price`).

    Returns
    -------
    BoundResult
    """
    from llmopt.formulations.hindsight_ip import estimate_size
    from llmopt.formulations.zones import zone_model_size
    from llmopt.verify.cut_certificate import check_cut_certificate

    ctx = ctx or BoundContext()
    t0 = time.perf_counter()
    if instance.n == 0:
        return _no_bound(name, "no requests", t0)
    windows = _windows(instance, ctx)
    skipped = _too_large(name, instance, windows, ctx, t0,
                         lambda inst, w: zone_model_size(inst, estimate_size(inst, w)))
    if skipped is not None:
        return skipped
    seed = seed_schedule(instance, ctx) if configurations else None
    if seed is not None and any(not windows.lo[i] <= seed[r.id] <= windows.hi[i]
                                for i, r in enumerate(instance.requests)):
        return _no_bound(name, "the seed schedule leaves the windows; no first columns for the master", t0)
    cert = cut_and_price(instance, windows, sawtooth=sawtooth, configurations=configurations, seed=seed,
                         solver=ctx.solver, time_limit=time_budget(ctx), threads=ctx.threads)
    if isinstance(cert, str):
        return _no_bound(name, cert, t0)
    value = check_cut_certificate(instance, cert.lam, cert.rows, split=cert.split, zone_mu=cert.zone_mu,
                                  knapsack=cert.knapsack, upper_bound_starts=ctx.upper_bound_starts)
    what = (f"LP optimum{' less the pricing shortfall' if configurations else ''} (duals of round {cert.rounds}; "
            f"{cert.status}; {len(cert.rows)} sawtooth rows and "
            f"{len(cert.knapsack)} configuration tables in the certificate)")
    return _verdict(name, f"{name}-dual-checked", value, cert.claimed, what, t0)


def sawtooth_lp_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """``sawtooth-lp``: zone-lp plus separated sawtooth rows (module docstring)."""
    return cut_bound("sawtooth-lp", instance, ctx, sawtooth=True)


def config_lp_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """``config-lp``: zone-lp plus the configuration master by column generation (module docstring)."""
    return cut_bound("config-lp", instance, ctx, sawtooth=False, configurations=True)


def config_sawtooth_lp_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """``config-sawtooth-lp``: the configuration master and sawtooth rows together (module docstring)."""
    return cut_bound("config-sawtooth-lp", instance, ctx, sawtooth=True, configurations=True)
