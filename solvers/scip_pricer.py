"""Column generation (and price-and-cut) at SCIP's root node: a restricted master LP in SCIP, columns added by a
``pyscipopt.Pricer`` plug-in, rows by a ``pyscipopt.Sepa`` plug-in, both driven by the caller's callbacks.

The caller gives the restricted master as a :class:`~llmopt.model.canonical.CanonicalModel` (an LP), the rows new
columns may enter (built *modifiable*, as SCIP requires), a ``price`` callback and optionally a ``separate``
callback. SCIP solves the LP, calls the pricer (``pricerredcost``, or ``pricerfarkas`` while the LP is infeasible)
until it adds no column, then the separator; a separated row re-opens pricing, and so on until neither adds
anything (SCIP's price-and-cut loop at the root), or a limit is reached. Nothing branches: every column is
continuous, presolve, propagation, heuristics and SCIP's own separators are off (so each row stays an LP row with
its own dual, as in :mod:`llmopt.solvers.scip`).

Callbacks see the LP in the canonical model's terms:

``price(duals, objective, farkas) -> (columns, lower_bound)``
    ``duals``: one value per model row then per separated row (in the order separated), HiGHS's sign convention
    (SCIP's: a binding ``<=`` row of a minimisation has a dual ``<= 0``); ``objective``: the LP's optimum with the
    model's offset; with ``farkas`` the duals are SCIP's Farkas multipliers and ``objective`` is NaN.
    ``columns``: :class:`Column` s to add (cost and entries in model rows only); ``lower_bound``: a valid bound
    on the master's optimum the caller proved from the duals, or ``None``.
``separate(x) -> rows``
    ``x``: the LP values of the model's columns (not the priced ones); ``rows``: :class:`CutRow` s over them.

An exception a callback raises (a ``KeyboardInterrupt`` from Ctrl-C or the CLI's SIGTERM handler included)
stops SCIP and is raised again once SCIP has returned: PySCIPOpt on its own prints it and lets SCIP go on.

What comes back is SCIP's account (:class:`PriceAndCutResult`); certificates are the callbacks' business: the
duals each call saw are the caller's to keep (a dual-feasible Lagrangian value certifies whatever SCIP's state).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from llmopt.model.canonical import CanonicalModel

__all__ = ["Column", "CutRow", "PriceAndCutResult", "scip_price_and_cut", "scip_pricer_available"]


@dataclass(frozen=True)
class Column:
    """A priced column: its cost and its entries ``values`` in the model rows ``rows`` (lower bound 0, no upper)."""

    cost: float
    rows: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class CutRow:
    """A separated row ``lhs <= Σ values·x[cols] <= rhs`` over the model's columns (``±inf`` for a free side)."""

    cols: np.ndarray
    values: np.ndarray
    lhs: float
    rhs: float


@dataclass(frozen=True)
class PriceAndCutResult:
    """SCIP's account of the root: status, the last LP objective and the counts.

    Attributes
    ----------
    status : str
        ``"converged"`` (the last pricing and separation added nothing), ``"time limit"``, ``"round limit"``,
        or SCIP's own status word when it stopped otherwise.
    objective : float or None
        SCIP's last root LP objective (``None`` if no LP was solved).
    pricing_rounds, columns, cuts : int
        Calls of the pricer, columns and rows added.
    seconds : float
        Wall-clock seconds, build included.
    """

    status: str
    objective: float | None
    pricing_rounds: int
    columns: int
    cuts: int
    seconds: float


def scip_pricer_available() -> tuple[bool, str]:
    """Whether PySCIPOpt (with its ``Pricer`` plug-in class) can be imported, and why not."""
    try:
        import pyscipopt
    except ImportError:
        return False, "pyscipopt is not installed (pip install 'llmopt[scip]')"
    if not hasattr(pyscipopt, "Pricer"):
        return False, "this pyscipopt has no Pricer plug-in class"
    return True, ""


def scip_price_and_cut(
    model: CanonicalModel,
    modifiable: np.ndarray,
    price: Callable[[np.ndarray, float, bool], tuple[Sequence[Column], float | None]],
    *,
    separate: Callable[[np.ndarray], Sequence[CutRow]] | None = None,
    n_x: int | None = None,
    time_limit: float | None = None,
    max_rounds: int | None = None,
    primal_resolve: bool = True,
) -> PriceAndCutResult:
    """Solve ``model``'s LP at SCIP's root node by column generation (and separation); module docstring.

    Parameters
    ----------
    model : CanonicalModel
        The restricted master, an LP (integrality is ignored).
    modifiable : ndarray of bool
        Per model row: whether priced columns may have entries there.
    price : callable
        ``price(duals, objective, farkas) -> (columns, lower_bound)`` (module docstring).
    separate : callable, optional
        ``separate(x) -> rows`` over the first ``n_x`` columns (module docstring).
    n_x : int, optional
        Columns ``separate`` sees (default: all of the model's).
    time_limit : float, optional
        Seconds for build and solve; past it the pricer stops SCIP.
    max_rounds : int, optional
        Pricer calls at most.
    primal_resolve : bool
        Re-solve with primal simplex after columns are added (the basis stays primal feasible).

    Returns
    -------
    PriceAndCutResult

    Raises
    ------
    RuntimeError
        If PySCIPOpt is not installed.
    """
    ok, why = scip_pricer_available()
    if not ok:
        raise RuntimeError(why)
    import pyscipopt
    from pyscipopt.scip import Expr, ExprCons, Term

    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    m = pyscipopt.Model("llmopt-price-and-cut")
    m.hideOutput()
    m.setParam("misc/catchctrlc", False)
    m.setParam("randomization/randomseedshift", 0)
    m.setPresolve(pyscipopt.SCIP_PARAMSETTING.OFF)
    m.setHeuristics(pyscipopt.SCIP_PARAMSETTING.OFF)
    m.setSeparating(pyscipopt.SCIP_PARAMSETTING.OFF)
    m.disablePropagation()
    m.setParam("limits/nodes", 1)
    m.setParam("separating/maxroundsroot", -1)
    m.setParam("separating/maxstallroundsroot", -1)
    m.setParam("pricing/maxvarsroot", 100_000)
    if primal_resolve:
        m.setParam("lp/resolvealgorithm", "p")
    if time_limit is not None:
        m.setParam("limits/time", max(float(time_limit), 1e-3))
    inf = m.infinity()
    offset = float(model.offset)  # SCIP's LP objective leaves it out
    n_cols = model.n_cols
    n_seen = n_cols if n_x is None else int(n_x)
    lower = np.clip(np.asarray(model.col_lower, dtype=float), -inf, inf).tolist()
    upper = np.clip(np.asarray(model.col_upper, dtype=float), -inf, inf).tolist()
    cost = np.asarray(model.c, dtype=float).tolist()
    xs = [m.addVar(name=f"c{j}", vtype="C", lb=lower[j], ub=upper[j], obj=cost[j]) for j in range(n_cols)]
    terms = [Term(v) for v in xs]
    # a one-variable row would become a bound and lose its dual; a variable fixed at 0 keeps it a row
    pad = Term(m.addVar(name="fixed_zero", vtype="C", lb=0.0, ub=0.0, obj=0.0))
    csr = model.A.tocsr()
    indptr, indices, data = csr.indptr.tolist(), csr.indices.tolist(), csr.data.astype(float).tolist()
    rlo = np.asarray(model.row_lower, dtype=float).tolist()
    rhi = np.asarray(model.row_upper, dtype=float).tolist()
    mod = np.asarray(modifiable, dtype=bool).tolist()
    conss: list[Any] = [None] * model.n_rows
    for i in range(model.n_rows):
        if rlo[i] == -np.inf and rhi[i] == np.inf:
            continue
        a, b = indptr[i], indptr[i + 1]
        if a == b and not mod[i]:
            continue  # an empty fixed row: its dual is 0 (the caller's model keeps its bounds)
        coefs = dict(zip([terms[k] for k in indices[a:b]], data[a:b], strict=True))
        if len(coefs) <= 1:
            coefs[pad] = 1.0
        conss[i] = m.addCons(ExprCons(Expr(coefs), None if rlo[i] == -np.inf else rlo[i],
                                      None if rhi[i] == np.inf else rhi[i]),
                             name=f"r{i}", modifiable=mod[i], removable=False)
    state: dict[str, Any] = {"rounds": 0, "columns": 0, "cuts": 0, "stop": "", "objective": None}
    cut_rows: list[Any] = []
    n_rows = model.n_rows

    def duals_of(tconss: list[Any], farkas: bool) -> np.ndarray:
        get = m.getDualfarkasLinear if farkas else m.getDualsolLinear
        out = np.zeros(n_rows + len(cut_rows))
        for i, c in enumerate(tconss):
            if c is not None:
                out[i] = get(c)
        for r, row in enumerate(cut_rows):
            # SCIP has no Farkas value of a separator's row through PySCIPOpt: 0 there
            out[n_rows + r] = 0.0 if farkas else m.getRowDualSol(row)
        return out

    class _Pricer(pyscipopt.Pricer):  # type: ignore[misc]
        def pricerinit(self) -> None:
            self.tconss = [None if c is None else m.getTransformedCons(c) for c in conss]

        def _call(self, farkas: bool) -> dict[str, object]:
            if deadline is not None and time.perf_counter() >= deadline:
                state["stop"] = "time limit"
                m.interruptSolve()
                return {"result": pyscipopt.SCIP_RESULT.DIDNOTRUN}
            if max_rounds is not None and state["rounds"] >= max_rounds:
                state["stop"] = "round limit"
                m.interruptSolve()
                return {"result": pyscipopt.SCIP_RESULT.DIDNOTRUN}
            state["rounds"] += 1
            objective = float("nan") if farkas else float(m.getLPObjVal()) + offset
            if not farkas:
                state["objective"] = objective
            cols, bound = price(duals_of(self.tconss, farkas), objective, farkas)
            for col in cols:
                v = m.addVar(vtype="C", lb=0.0, obj=float(col.cost), pricedVar=True)
                for r, val in zip(np.asarray(col.rows).tolist(), np.asarray(col.values, dtype=float).tolist(),
                                  strict=True):
                    m.addConsCoeff(self.tconss[r], v, val)
            state["columns"] += len(cols)
            out: dict[str, object] = {"result": pyscipopt.SCIP_RESULT.SUCCESS}
            if bound is not None and not farkas and np.isfinite(bound):
                out["lowerbound"] = float(bound)
            return out

        def pricerredcost(self) -> dict[str, object]:
            return _guarded(lambda: self._call(False))

        def pricerfarkas(self) -> dict[str, object]:
            return _guarded(lambda: self._call(True))

    def _guarded(call: Callable[[], dict[str, object]]) -> dict[str, object]:
        # PySCIPOpt prints and drops an exception raised in a plug-in (a Ctrl-C included) and SCIP goes on; keep it,
        # stop SCIP, and raise it once SCIP has returned
        try:
            return call()
        except BaseException as exc:
            state["error"] = exc
            m.interruptSolve()
            return {"result": pyscipopt.SCIP_RESULT.DIDNOTRUN}

    pricer = _Pricer()
    m.includePricer(pricer, "llmopt-pricer", "columns from the caller's pricing callback", priority=1,
                    delay=True)
    if separate is not None:
        separator = separate

        class _Sepa(pyscipopt.Sepa):  # type: ignore[misc]
            def sepaexeclp(self) -> dict[str, object]:
                return _guarded(self._separate)

            def _separate(self) -> dict[str, object]:
                if deadline is not None and time.perf_counter() >= deadline:
                    return {"result": pyscipopt.SCIP_RESULT.DIDNOTRUN}
                x = np.array([m.getSolVal(None, xs[j]) for j in range(n_seen)])
                new = separator(x)
                for cut in new:
                    row = m.createEmptyRowSepa(self, name=f"cut{len(cut_rows)}",
                                               lhs=None if cut.lhs == -np.inf else float(cut.lhs),
                                               rhs=None if cut.rhs == np.inf else float(cut.rhs),
                                               local=False, modifiable=False, removable=False)
                    m.cacheRowExtensions(row)
                    for j, val in zip(np.asarray(cut.cols).tolist(), np.asarray(cut.values, dtype=float).tolist(),
                                      strict=True):
                        m.addVarToRow(row, xs[j], val)
                    m.flushRowExtensions(row)
                    m.addCut(row, forcecut=True)
                    cut_rows.append(row)
                state["cuts"] += len(new)
                return {"result": pyscipopt.SCIP_RESULT.SEPARATED if new else pyscipopt.SCIP_RESULT.DIDNOTFIND}

        m.includeSepa(_Sepa(), "llmopt-sepa", "rows from the caller's separation callback", priority=1_000_000,
                      freq=0, maxbounddist=1.0, usessubscip=False, delay=False)
    if deadline is not None and time.perf_counter() >= deadline:
        return PriceAndCutResult("time limit", None, 0, 0, 0, time.perf_counter() - t0)
    m.optimize()
    if state.get("error") is not None:
        raise state["error"]
    scip_status = m.getStatus()
    status = state["stop"] or {"optimal": "converged", "nodelimit": "converged", "timelimit": "time limit",
                               "userinterrupt": "interrupted"}.get(scip_status, f"SCIP status {scip_status}")
    objective = state["objective"]
    return PriceAndCutResult(str(status), None if objective is None else float(objective), int(state["rounds"]),
                             int(state["columns"]), int(state["cuts"]), time.perf_counter() - t0)
