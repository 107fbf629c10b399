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
``config-lag-lp``
    The three families in one relaxation: the configuration master, sawtooth rows and the completion-lag
    cliques of ``lag-lp`` (the ``pair`` and ``threshold`` families of :mod:`llmopt.formulations.lag_cliques`,
    written over the start columns by :mod:`llmopt.formulations.clique_rows`), rows separated, columns priced.

Each round re-solves the LP with the rows and columns found so far; the loop stops when no row is
violated and no column prices out, after :data:`MAX_ROUNDS` rounds, or at the time budget.

Engines (:data:`ENGINES`). ``loop`` is the home-made loop: one live HiGHS LP, columns and rows added between
warm re-solves. ``pricer`` puts the restricted master in SCIP at the root node: its pricer plug-in calls the
knapsack DP (:func:`~llmopt.formulations.configurations.price_configurations`) after every LP, its separator
plug-in the sawtooth and clique separation once pricing is done (SCIP's price-and-cut loop;
:mod:`llmopt.solvers.scip_pricer`); without PySCIPOpt the HiGHS loop runs and the status says so. Both hand every
LP's duals to the same bookkeeping (:class:`_Master`), so the certificates are built alike. Which is the default
(:data:`DEFAULT_ENGINE`) was measured, not assumed: ``results/opt/formulation-comparison`` (its engine table;
the numbers are in the note by :data:`DEFAULT_ENGINE`).

Wentges smoothing (``smoothing = α > 0``). Price first at ``π̃ = α·π_c + (1 − α)·π`` (``π`` this LP's duals,
``π_c`` the stability centre: the duals with the best Lagrangian value so far); if that finds no new
configuration, price at ``π`` (so the loop ends only when ``π`` prices nothing: the LP optimum). Why ``π̃``
certifies: both ``π`` and ``π_c`` are optimal duals of restricted masters that hold every start column, so
both satisfy the start columns' dual rows, which are linear, and so does their mix; the dual objective is linear
too, so ``π̃``'s Lagrangian value is ``α·D(π_c) + (1 − α)·D(π)`` less its pricing shortfall (``D`` the LP
optimum at which the duals were taken; rows separated after ``π_c`` take the multiplier 0 there). The checker
recomputes the value from the multipliers alone in any case. Before column
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from llmopt.model.canonical import Block, CanonicalModel
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
           "config_sawtooth_lp_bound", "config_lag_lp_bound", "MAX_ROUNDS", "ROWS_PER_ROUND", "ENGINES",
           "DEFAULT_ENGINE", "DEFAULT_SMOOTHING"]

#: Rounds at most (each re-solves the LP).
MAX_ROUNDS = 1000
#: Sawtooth rows added per round at most.
ROWS_PER_ROUND = 40
#: Engines of the loop (:func:`cut_and_price`).
ENGINES = ("loop", "pricer")
#: The engine the stages use, chosen by measurement (``llmopt study run formulation-comparison``, 150 s per run, on
#: the shared 2-core machine under load): ``config-lp``'s master converged on all three proven frontier points with
#: SCIP's pricer plug-in (AM1 n = 16: 223 rounds, 49 CPU s; n = 20: 265 rounds, 53 CPU s; AM2 n = 13: 84 rounds, 3.0 CPU
#: s) and on one with the home-made loop (AM2 n = 13: 80 rounds, 5.7 CPU s; at n = 16 and 20 it stopped at the budget
#: after 83 and 98 rounds); on 40 tiny instances both converged everywhere, in 1.19 and 1.26 CPU s in all.
DEFAULT_ENGINE = "pricer"
#: Wentges smoothing the stages use, chosen by the same measurement: ``α = 0.5`` converged on AM2 n = 13 only, with
#: either engine, and took more rounds there (88 against 84 with the pricer), so none.
DEFAULT_SMOOTHING = 0.0


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
        The Lagrangian value these multipliers were expected to certify.
    rounds : int
        The round whose duals these are (0: zone-lp's LP alone, before the configuration master).
    status : str
        Why the loop stopped.
    cliques : list of ``(members, (times, values))``
        Completion-lag cliques (``{position: (a, b)}``) with their multipliers by time.
    total_rounds, columns, cuts : int
        LP rounds (pricing calls) of the whole loop, configurations priced in and rows separated.
    """

    lam: tuple[np.ndarray, np.ndarray]
    split: int
    zone_mu: tuple[np.ndarray, np.ndarray]
    rows: list[tuple[tuple[int, int, int, int], float]]
    knapsack: dict[int, np.ndarray]
    claimed: float
    rounds: int
    status: str
    cliques: list[tuple[dict[int, tuple[int, int]], tuple[np.ndarray, np.ndarray]]] = field(default_factory=list)
    total_rounds: int = 0
    columns: int = 0
    cuts: int = 0


def cut_and_price(instance: Instance, windows: StartWindows, *, sawtooth: bool = True, configurations: bool = False,
                  cliques: bool = False, seed: Mapping[str, int] | None = None, solver: str | None = None,
                  time_limit: float | None = None, threads: int = 1, max_rounds: int = MAX_ROUNDS,
                  engine: str = DEFAULT_ENGINE, smoothing: float = DEFAULT_SMOOTHING) -> CutCertificate | str:
    """Run the loop of the module docstring and return the best round's certificate, or why there is none.

    Parameters
    ----------
    instance : Instance
    windows : StartWindows
        Start windows the LP is built over.
    sawtooth : bool
        Separate sawtooth rows.
    configurations : bool
        Add the configuration master, priced by column generation.
    cliques : bool
        Separate completion-lag clique rows (the ``pair`` and ``threshold`` families of
        :mod:`llmopt.formulations.lag_cliques`).
    seed : mapping, optional
        Starts of a feasible schedule inside ``windows``: its configurations are the master's first
        columns (required with ``configurations``).
    solver : str, optional
        Ignored: the engine decides (``engine``).
    time_limit : float, optional
        Seconds for the whole loop.
    threads : int
    max_rounds : int
        LP rounds (pricing calls) at most.
    engine : str
        One of :data:`ENGINES`. ``loop``: one live HiGHS model, rows and columns added between warm re-solves (the
        home-made loop); ``pricer``: the master in SCIP, columns added by its pricer plug-in and rows by its
        separator plug-in (:mod:`llmopt.solvers.scip_pricer`). Only the configuration master uses it; without
        PySCIPOpt the HiGHS loop runs.
    smoothing : float
        Wentges dual smoothing ``α`` in ``[0, 1)`` (0: none): price at ``α·π_center + (1 − α)·π`` first
        (module docstring).

    Returns
    -------
    CutCertificate or str
    """
    if engine not in ENGINES:
        return f"unknown engine {engine!r}; known: {', '.join(ENGINES)}"
    if not 0.0 <= smoothing < 1.0:
        return f"smoothing {smoothing!r} is outside [0, 1)"
    return _loop(instance, windows, sawtooth=sawtooth, configurations=configurations, cliques=cliques, seed=seed,
                 time_limit=time_limit, threads=threads, max_rounds=max_rounds, engine=engine, smoothing=smoothing)


class _Master:
    """The LP of one loop (zone-lp + the families asked for), its cut rows in the order added, and the best
    certificate seen; shared by both engines."""

    def __init__(self, instance: Instance, windows: StartWindows, *, sawtooth: bool, configurations: bool,
                 cliques: bool, seed: Mapping[str, int] | None, smoothing: float,
                 pre_cuts: Sequence[tuple[str, Any]] = ()) -> None:
        from llmopt.formulations.clique_rows import clique_rows
        from llmopt.formulations.configurations import schedule_configurations, with_configuration_master
        from llmopt.formulations.hindsight_ip import formulate
        from llmopt.formulations.lag_cliques import class_cliques, positions_of
        from llmopt.formulations.sawtooth import with_sawtooth_rows
        from llmopt.formulations.zones import default_split, with_zone_rows

        self.instance, self.sawtooth, self.configurations = instance, sawtooth, configurations
        self.smoothing = smoothing
        self.split = default_split(instance.M)
        zones = with_zone_rows(formulate(instance, windows), instance, self.split)
        model: CanonicalModel = _without_column_bounds(zones.relax())
        self.configs = schedule_configurations(instance, seed) if configurations and seed is not None else []
        if configurations:
            model = with_configuration_master(model, instance, self.configs)
        self.model = with_sawtooth_rows(model, instance, [])
        self.n_x, self.n_rows0 = self.model.cols("x").stop, self.model.n_rows
        self.known = set(self.configs)
        self.seed_columns = len(self.configs)
        self.members = [positions_of(instance, q) for q in class_cliques(instance, ("pair", "threshold"))] \
            if cliques else []
        self.tables = [clique_rows(self.model, instance, q) for q in self.members]
        # cut rows in the order they enter the LP: ("saw", (τ0, L, δ, ρ)) or ("clique", (q, τ)); those of
        # pre_cuts are in the LP from the start (:meth:`start_model`)
        self.cuts: list[tuple[str, Any]] = list(pre_cuts)
        self.best: CutCertificate | None = None
        self.center: tuple[np.ndarray, float, float] | None = None  # (duals, dual objective, Lagrangian value)
        self.rounds = 0
        self.scip: Any = None  # the SCIP engine's account, when it ran

    def start_model(self) -> CanonicalModel:
        """The model with the cut rows the loop starts from appended (``<=`` rows after every model row)."""
        if not self.cuts:
            return self.model
        A, rhs = self.cut_matrix(self.cuts)
        return replace(self.model, A=sp.vstack([self.model.A, A], format="csr"),
                       row_lower=np.concatenate([self.model.row_lower, np.full(rhs.size, -np.inf)]),
                       row_upper=np.concatenate([self.model.row_upper, rhs]),
                       row_blocks=self.model.row_blocks + (Block("start_cuts", self.model.n_rows,
                                                                 self.model.n_rows + rhs.size, {}),))

    def certificate(self, duals: np.ndarray, claim: float, rnd: int) -> CutCertificate:
        """The multipliers of ``duals`` (model rows, then cut rows) as a certificate claiming ``claim``."""
        from llmopt.formulations.configurations import link_tables

        base = duals[:self.n_rows0]
        lam = lambda_from_lp_duals(self.model, base)
        mu = lambda_from_lp_duals(self.model, base, block_name="peak_zones")
        tables = link_tables(self.model, base, self.instance.M) if self.configurations else {}
        cut_mult = np.maximum(-duals[self.n_rows0:], 0.0)
        rows = [(row, float(v)) for (kind, row), v in zip(self.cuts, cut_mult, strict=True) if kind == "saw" and v > 0]
        by_clique: dict[int, list[tuple[int, float]]] = {}
        for (kind, key), v in zip(self.cuts, cut_mult, strict=True):
            if kind == "clique" and v > 0:
                by_clique.setdefault(key[0], []).append((key[1], float(v)))
        cliques = [(self.members[q], (np.array([t for t, _ in tv], dtype=np.int64), np.array([v for _, v in tv])))
                   for q, tv in sorted(by_clique.items())]
        return CutCertificate(lam, self.split, mu, rows, tables, claim, rnd, "", cliques)

    def keep(self, duals: np.ndarray, claim: float) -> None:
        """Keep ``duals`` as the best certificate if ``claim`` is the highest so far (ties: the later round)."""
        if self.best is None or claim >= self.best.claimed - 1e-9 * max(1.0, abs(self.best.claimed)):
            self.best = self.certificate(duals, claim, self.rounds)

    def price(self, duals: np.ndarray, objective: float) -> list[Any]:
        """New configurations for the LP whose row duals (model rows, then cut rows) are ``duals`` and whose optimum
        is ``objective``; keeps the best certificate (Wentges smoothing first when a stability centre exists)."""
        from llmopt.formulations.configurations import price_configurations

        self.rounds += 1
        M = self.instance.M
        if not self.configurations:
            self.keep(duals, objective)
            return []
        found, shortfall = price_configurations(self.model, duals[:self.n_rows0], M, known=self.known)
        claim = objective - shortfall
        self.keep(duals, claim)
        new = found
        centre = self.center
        if self.smoothing > 0 and centre is not None:
            c_duals = np.zeros_like(duals)
            c_duals[:centre[0].size] = centre[0]  # rows added since the centre have dual 0 there
            a = self.smoothing
            smooth = a * c_duals + (1 - a) * duals
            # the x-part of the LP dual is feasible at both points, so at their mix; the dual objective is linear
            s_found, s_short = price_configurations(self.model, smooth[:self.n_rows0], M, known=self.known)
            s_claim = a * centre[1] + (1 - a) * objective - s_short
            self.keep(smooth, s_claim)
            if s_claim > centre[2]:
                self.center = (smooth, a * centre[1] + (1 - a) * objective, s_claim)
            if s_found:
                new = s_found
        if self.center is None or claim > self.center[2]:
            self.center = (duals.copy(), objective, claim)
        self.configs += new
        self.known.update(new)
        return new

    def separate(self, x: np.ndarray) -> list[tuple[str, Any]]:
        """Violated sawtooth and clique rows of the LP solution ``x`` (not yet added), recorded as added."""
        from llmopt.formulations.clique_rows import separate_cliques
        from llmopt.formulations.sawtooth import separate_sawtooth

        new: list[tuple[str, Any]] = []
        if self.sawtooth:
            known = {row for kind, row in self.cuts if kind == "saw"}
            new += [("saw", r) for r in separate_sawtooth(self.model, self.instance, x[:self.n_x],
                                                          max_rows=ROWS_PER_ROUND, known=known)]
        if self.tables:
            known = {key for kind, key in self.cuts if kind == "clique"}
            new += [("clique", key) for key in separate_cliques(self.tables, x[:self.n_x], max_rows=ROWS_PER_ROUND,
                                                               known=known)]
        self.cuts += new
        return new

    def cut_matrix(self, new: list[tuple[str, Any]]) -> tuple[sp.csr_matrix, np.ndarray]:
        """``(A, rhs)`` of the ``<=`` rows ``new`` over the model's columns."""
        from llmopt.formulations.sawtooth import sawtooth_matrix, sawtooth_rhs

        parts, rhs = [], []
        for kind, key in new:
            if kind == "saw":
                parts.append(sawtooth_matrix(self.model, self.instance, [key]))
                rhs.append(float(sawtooth_rhs(self.instance, [key])[0]))
            else:
                times, A = self.tables[key[0]]
                parts.append(A[int(np.searchsorted(times, key[1]))])
                rhs.append(1.0)
        A = sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, self.model.n_cols))
        A = sp.csr_matrix(A, shape=(A.shape[0], self.model.n_cols))
        return A, np.asarray(rhs, dtype=float)


def _loop(instance: Instance, windows: StartWindows, *, sawtooth: bool, configurations: bool,
          seed: Mapping[str, int] | None, time_limit: float | None, threads: int, max_rounds: int,
          cliques: bool = False, engine: str = "loop", smoothing: float = 0.0) -> CutCertificate | str:
    """:func:`cut_and_price`'s work."""
    cert, _ = _solve(instance, windows, sawtooth=sawtooth, configurations=configurations, seed=seed,
                     time_limit=time_limit, threads=threads, max_rounds=max_rounds, cliques=cliques, engine=engine,
                     smoothing=smoothing)
    return cert


def _solve(instance: Instance, windows: StartWindows, *, sawtooth: bool, configurations: bool,
           seed: Mapping[str, int] | None, time_limit: float | None, threads: int, max_rounds: int,
           cliques: bool, engine: str, smoothing: float) -> tuple[CutCertificate | str, list[tuple[str, Any]]]:
    """The loop; also returns every cut row it added (in order).

    With the configuration master, the loop without it runs first (zone-lp's LP, and with rows asked for, its cut
    loop to convergence): its certificate is the first candidate (early master duals can certify far less than
    zone-lp), and its rows start the master (the master's early rounds then need not rediscover them).
    """
    if configurations and seed is None:
        return "the configuration master needs a seed schedule", []
    t0 = time.perf_counter()
    first: CutCertificate | None = None
    pre: list[tuple[str, Any]] = []
    if configurations:
        plain, pre = _solve(instance, windows, sawtooth=sawtooth, configurations=False, seed=None,
                            time_limit=time_limit, threads=threads,
                            max_rounds=max_rounds if (sawtooth or cliques) else 1, cliques=cliques, engine="loop",
                            smoothing=0.0)
        if isinstance(plain, CutCertificate):
            first = replace(plain, rounds=0)
    master = _Master(instance, windows, sawtooth=sawtooth, configurations=configurations, cliques=cliques, seed=seed,
                     smoothing=smoothing, pre_cuts=pre)
    master.best = first
    left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
    status = ""
    if engine == "pricer" and configurations:
        from llmopt.solvers.scip_pricer import scip_pricer_available

        ok, why = scip_pricer_available()
        if ok:
            status = _scip_rounds(master, left, max_rounds)
        else:
            status = f"HiGHS loop ({why}): "
    if not status or status.endswith(": "):
        status += _highs_rounds(master, left, threads, max_rounds)
    if master.best is None:
        return status, master.cuts
    return replace(master.best, status=f"{status} after {master.rounds} rounds", total_rounds=master.rounds,
                   columns=len(master.configs) - master.seed_columns, cuts=len(master.cuts)), master.cuts


def _highs_rounds(master: _Master, time_limit: float | None, threads: int, max_rounds: int) -> str:
    """The home-made loop: one live HiGHS model, re-solved warm after each round's columns and rows."""
    from llmopt.formulations.configurations import configuration_entries

    try:
        import highspy
    except ImportError:
        return "HiGHS (highspy) is not installed: the loop keeps one live HiGHS model and adds rows and columns to it"

    from llmopt.solvers.highs import highs_lp, new_highs

    t0 = time.perf_counter()
    model, M = master.model, master.instance.M
    h = new_highs(highspy)
    for key, value in (("output_flag", False), ("presolve", "off"), ("threads", int(threads)),
                       ("solver", "simplex"), ("random_seed", 0)):
        h.setOptionValue(key, value)
    h.passModel(highs_lp(highspy, master.start_model()))
    status = "converged"
    for rnd in range(1, max_rounds + 1):
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            return "time limit"
        # HiGHS reads its time limit against a run clock that keeps counting across re-solves
        h.setOptionValue("time_limit", float("inf") if left is None else h.getRunTime() + max(left, 1e-3))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return f"LP round {rnd} not solved by HiGHS: {h.modelStatusToString(h.getModelStatus())}"
        sol = h.getSolution()
        duals = np.asarray(sol.row_dual, dtype=float)
        x = np.asarray(sol.col_value, dtype=float)
        new_cols = master.price(duals, float(h.getInfo().objective_function_value))
        if rnd == max_rounds:
            return "round limit"
        new_rows = master.separate(x)
        if not new_rows and not new_cols:
            return "converged"
        if new_cols:
            r, j, v = configuration_entries(model, new_cols, M)
            order = np.lexsort((r, j))
            starts = np.searchsorted(j[order], np.arange(len(new_cols)))
            m = len(new_cols)
            h.addCols(m, np.zeros(m), np.zeros(m), np.full(m, highspy.kHighsInf), int(r.size),
                      starts.astype(np.int32), r[order].astype(np.int32), v[order])
        if new_rows:
            S, rhs = master.cut_matrix(new_rows)
            S = S[:, :master.n_x].tocsr()  # entries on x columns only
            m = len(new_rows)
            h.addRows(m, np.full(m, -highspy.kHighsInf), rhs, int(S.nnz),
                      S.indptr[:-1].astype(np.int32), S.indices.astype(np.int32), S.data.astype(float))
    return status


def _scip_rounds(master: _Master, time_limit: float | None, max_rounds: int) -> str:
    """The master in SCIP: columns by its pricer plug-in, rows by its separator plug-in, at the root node."""
    from llmopt.formulations.configurations import configuration_entries
    from llmopt.solvers.scip_pricer import Column, CutRow, scip_price_and_cut

    model, M = master.model, master.instance.M
    start = master.start_model()
    modifiable = np.zeros(start.n_rows, dtype=bool)
    for block in ("config_link", "config_convexity"):
        modifiable[model.rows(block).slice] = True

    def price(duals: np.ndarray, objective: float, farkas: bool) -> tuple[list[Column], float | None]:
        if farkas:  # the seed's columns make the master feasible; nothing to price from a ray here
            return [], None
        new = master.price(duals, objective)
        if not new:
            return [], None
        r, j, v = configuration_entries(model, new, M)
        return [Column(0.0, r[j == c], v[j == c]) for c in range(len(new))], None

    def separate(x: np.ndarray) -> list[CutRow]:
        new = master.separate(x)
        if not new:
            return []
        S, rhs = master.cut_matrix(new)
        S = S[:, :master.n_x].tocsr()
        return [CutRow(S.indices[S.indptr[i]:S.indptr[i + 1]], S.data[S.indptr[i]:S.indptr[i + 1]], -np.inf,
                       float(rhs[i])) for i in range(len(new))]

    res = scip_price_and_cut(start, modifiable, price, separate=separate if (master.sawtooth or master.tables)
                             else None, n_x=master.n_x, time_limit=time_limit, max_rounds=max_rounds)
    master.scip = res
    return res.status


def cut_bound(name: str, instance: Instance, ctx: BoundContext | None = None, *, sawtooth: bool = True,
              configurations: bool = False, cliques: bool = False) -> BoundResult:
    """Run :func:`cut_and_price` over the context's windows and certify it with the checker.

    Parameters
    ----------
    name : str
        Stage name for the result.
    instance : Instance
    ctx : BoundContext, optional
        ``upper_bound_starts`` bounds the windows (and seeds the master, else MC-SF's schedule does);
        ``time_limit`` / ``deadline`` stop the loop (the last solved LP is certified).
    sawtooth, configurations, cliques : bool
        The families used (:func:`cut_and_price`; its default engine and smoothing).

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
    cert = cut_and_price(instance, windows, sawtooth=sawtooth, configurations=configurations, cliques=cliques,
                         seed=seed, solver=ctx.solver, time_limit=time_budget(ctx), threads=ctx.threads)
    if isinstance(cert, str):
        return _no_bound(name, cert, t0)
    value = check_cut_certificate(instance, cert.lam, cert.rows, split=cert.split, zone_mu=cert.zone_mu,
                                  cliques=cert.cliques, knapsack=cert.knapsack,
                                  upper_bound_starts=ctx.upper_bound_starts)
    what = (f"LP optimum{' less the pricing shortfall' if configurations else ''} (duals of round {cert.rounds}; "
            f"{cert.status}; {len(cert.rows)} sawtooth rows and "
            f"{len(cert.knapsack)} configuration tables and {len(cert.cliques)} lag cliques in the certificate)")
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


def config_lag_lp_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """``config-lag-lp``: the configuration master, sawtooth rows and completion-lag cliques together (module
    docstring)."""
    return cut_bound("config-lag-lp", instance, ctx, sawtooth=True, configurations=True, cliques=True)
