"""Gurobi adapter (``gurobipy``, optional: ``pip install 'llmopt[gurobi]'``).

Nothing here imports ``gurobipy`` at module level or in :meth:`GurobiSolver.available`,
so listing solvers works without it. A missing package, a missing licence (error on
environment creation) or a model over the size-limited pip licence (error 10010) is
reported as ``NOT_SOLVED`` with a message saying so (DESIGN §3: never crash a sweep).

A caller's ``deadline`` covers the model build: once the model is built, ``TimeLimit`` is cut to
what is left (a deadline already passed ends the call with status ``time_limit`` before Gurobi
starts), and with a ``progress`` callback a line with the incumbent and bound is printed every
:data:`PROGRESS_EVERY_S` seconds from Gurobi's callback.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from llmopt.model.canonical import CanonicalModel
from llmopt.model.result import SolveResult, SolveStatus
from llmopt.solvers.base import (
    Capability,
    Progress,
    SolverInfo,
    check_node_limit,
    check_warm_start,
    finish,
    package_installed,
    package_version,
    unavailable_result,
)

__all__ = ["GurobiSolver"]

#: Seconds between two progress lines during a solve.
PROGRESS_EVERY_S = 5.0

_NO_LICENSE = 10009
_SIZE_LIMIT_EXCEEDED = 10010
_MISSING_MESSAGE = "gurobipy is not installed (pip install 'llmopt[gurobi]')"


class GurobiSolver:
    """Solve a :class:`CanonicalModel` with Gurobi (needs ``gurobipy`` and a licence)."""

    info: ClassVar[SolverInfo] = SolverInfo(
        name="gurobi",
        package="gurobipy",
        capabilities=frozenset(Capability),
        open_source=False,
    )

    @classmethod
    def version(cls) -> str | None:
        return package_version("gurobipy")

    @classmethod
    def licence_note(cls) -> str:
        """Which licence Gurobi will use, found without importing gurobipy.

        Gurobi looks for a licence file in ``GRB_LICENSE_FILE``, then ``gurobi.lic`` in the home
        folder and the standard system folders; with none, the pip wheel's bundled licence
        applies, which is size-limited (2,000 variables and 2,000 linear constraints).
        """
        env = os.environ.get("GRB_LICENSE_FILE")
        places = [Path(env)] if env else []
        places += [Path.home() / "gurobi.lic", Path("/opt/gurobi/gurobi.lic"), Path("/usr/local/gurobi/gurobi.lic"),
                   Path("/Library/gurobi/gurobi.lic")]
        for p in places:
            if p.is_file():
                return f"licence file {p}"
        return ("no licence file found: the pip wheel's bundled licence applies, size-limited to "
                "2,000 variables and 2,000 constraints (enough for tests on tiny models)")

    @classmethod
    def available(cls) -> tuple[bool, str]:
        # Only whether the package is importable: checking the licence would import gurobipy and start
        # an environment. A licence problem surfaces in solve() as NOT_SOLVED with its message.
        if package_installed("gurobipy"):
            return True, ""
        return False, _MISSING_MESSAGE

    def solve(
        self,
        model: CanonicalModel,
        time_limit: float | None = None,
        mip_gap: float = 1e-9,
        threads: int = 1,
        warm_start: np.ndarray | None = None,
        verbose: bool = False,
        progress: Progress | None = None,
        deadline: float | None = None,
        node_limit: int | None = None,
    ) -> SolveResult:
        """Solve ``model`` with Gurobi.

        Parameters
        ----------
        model : CanonicalModel
            The model to solve (minimised).
        time_limit : float, optional
            ``TimeLimit`` in seconds.
        mip_gap : float
            ``MIPGap``.
        threads : int
            ``Threads``.
        warm_start : ndarray, optional
            A full primal vector set as the MIP ``Start`` (ignored for LPs, like HiGHS).
        verbose : bool
            ``OutputFlag``.
        node_limit : int, optional
            ``NodeLimit``: stop after that many branch-and-bound nodes (status ``node_limit``).
        deadline : float, optional
            ``time.perf_counter()`` value by which the call must end: ``TimeLimit`` is cut to what
            is left once the model is built, and a deadline already passed then ends the call with
            status ``time_limit`` without starting Gurobi.
        progress : callable, optional
            Receives a line (incumbent and bound) every :data:`PROGRESS_EVERY_S` seconds of the solve.

        Returns
        -------
        SolveResult
            ``NOT_SOLVED`` with a message when gurobipy or its licence is missing or the model is
            too large for the licence; never raises for those.
        """
        ok, why = self.available()
        if not ok:
            return unavailable_result(self.info.name, why)
        check_warm_start(model, warm_start)
        check_node_limit(node_limit)
        try:
            import gurobipy as gp
        except ImportError as exc:  # installed but broken (e.g. a wrong platform wheel)
            return unavailable_result(self.info.name, f"gurobipy cannot be imported: {exc}")

        env = None
        try:
            env = gp.Env(empty=True)
            env.setParam("OutputFlag", 1 if verbose else 0)
            env.start()
        except gp.GurobiError as exc:
            if env is not None:
                env.dispose()
            why = f"Gurobi licence unavailable (error {getattr(exc, 'errno', None)}): {exc}"
            return unavailable_result(self.info.name, why)

        gmodel = None
        try:
            gmodel = gp.Model(model.name[:255] or "llmopt", env=env)
            x, parts = self._build(gp, gmodel, model)
            if deadline is not None:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return finish(self.info.name, model, SolveStatus.TIME_LIMIT, None, None, 0.0,
                                  message="time limit: the deadline had passed before Gurobi could start")
                time_limit = left if time_limit is None else min(float(time_limit), left)
            if time_limit is not None:
                gmodel.Params.TimeLimit = max(float(time_limit), 0.0)
            gmodel.Params.MIPGap = float(mip_gap)
            gmodel.Params.Threads = int(threads)
            gmodel.Params.Seed = 0
            if node_limit is not None:
                gmodel.Params.NodeLimit = float(node_limit)
            if warm_start is not None and model.is_mip:
                x.Start = np.asarray(warm_start, dtype=float)
            start = time.perf_counter()
            if progress is None:
                gmodel.optimize()
            else:
                gmodel.optimize(_progress_callback(gp, progress, start, model.is_mip))
            runtime = time.perf_counter() - start
            return self._result(gp, gmodel, model, x, parts, runtime)
        except gp.GurobiError as exc:
            errno = getattr(exc, "errno", None)
            if errno == _SIZE_LIMIT_EXCEEDED:
                why = (f"model too large for the size-limited Gurobi licence ({model.n_cols} columns, "
                       f"{model.n_rows} rows, {model.nnz} nonzeros; error 10010): {exc}")
            elif errno == _NO_LICENSE:
                why = f"Gurobi licence unavailable (error {errno}): {exc}"
            else:
                why = f"Gurobi error {errno}: {exc}"
            return unavailable_result(self.info.name, why)
        finally:
            if gmodel is not None:
                gmodel.dispose()
            env.dispose()

    # ------------------------------------------------------------------------------------------

    @staticmethod
    def _build(gp: Any, gmodel: Any, model: CanonicalModel) -> tuple[Any, list[tuple[np.ndarray, Any]]]:
        """Variables and constraints through the matrix API.

        Returns the ``MVar`` and a list of ``(row indices, MConstr)``: equality rows, then the
        ``>=`` parts and the ``<=`` parts of the other rows (a range row contributes to both).
        """
        GRB = gp.GRB
        inf = GRB.INFINITY
        lo = np.where(np.isneginf(model.col_lower), -inf, model.col_lower).astype(float)
        up = np.where(np.isposinf(model.col_upper), inf, model.col_upper).astype(float)
        vtype = np.where(model.integer, GRB.INTEGER, GRB.CONTINUOUS)
        c = np.asarray(model.c, dtype=float)
        x = gmodel.addMVar(model.n_cols, lb=lo, ub=up, obj=c, vtype=vtype, name="x")
        gmodel.ModelSense = GRB.MINIMIZE
        gmodel.ObjCon = float(model.offset)

        A = model.A.tocsr()
        rl = np.asarray(model.row_lower, dtype=float)
        ru = np.asarray(model.row_upper, dtype=float)
        has_lo, has_up = np.isfinite(rl), np.isfinite(ru)
        eq = has_lo & has_up & (rl == ru)
        groups = [
            (np.flatnonzero(eq), GRB.EQUAL, rl, "eq"),
            (np.flatnonzero(has_lo & ~eq), GRB.GREATER_EQUAL, rl, "ge"),
            (np.flatnonzero(has_up & ~eq), GRB.LESS_EQUAL, ru, "le"),
        ]
        parts: list[tuple[np.ndarray, Any]] = []
        for rows, sense, rhs, name in groups:
            if rows.size:
                parts.append((rows, gmodel.addMConstr(A[rows], x, sense, rhs[rows], name=name)))
        return x, parts

    def _result(
        self, gp: Any, gmodel: Any, model: CanonicalModel, x: Any, parts: list[tuple[np.ndarray, Any]],
        runtime: float,
    ) -> SolveResult:
        GRB = gp.GRB
        status = int(gmodel.Status)
        has_sol = int(gmodel.SolCount) > 0
        xv = np.asarray(x.X, dtype=float).copy() if has_sol else None
        bound: float | None = None
        duals = None
        if status == GRB.OPTIMAL:
            st = SolveStatus.OPTIMAL
            if model.is_mip:
                bound = _finite_attr(gp, gmodel, "ObjBound")
            else:
                bound = float(gmodel.ObjVal)
                # Pi = d(objective)/d(rhs) for a minimisation, the HiGHS sign convention (a binding "<="
                # row has Pi <= 0). A range row's two parts have at most one non-zero dual: sum them.
                duals = np.zeros(model.n_rows)
                for rows, constr in parts:
                    np.add.at(duals, rows, np.asarray(constr.Pi, dtype=float))
        elif status == GRB.TIME_LIMIT:
            st = SolveStatus.TIME_LIMIT
            if model.is_mip:
                bound = _finite_attr(gp, gmodel, "ObjBound")
        elif status == GRB.NODE_LIMIT:
            st = SolveStatus.NODE_LIMIT
            if model.is_mip:
                bound = _finite_attr(gp, gmodel, "ObjBound")
        elif status == GRB.INTERRUPTED:  # gurobipy turns Ctrl-C during optimize() into this status
            st = SolveStatus.INTERRUPTED
            if model.is_mip:
                bound = _finite_attr(gp, gmodel, "ObjBound")
        elif status == GRB.INFEASIBLE:
            st, xv = SolveStatus.INFEASIBLE, None
        elif status in (GRB.UNBOUNDED, GRB.INF_OR_UNBD):
            st, xv = SolveStatus.UNBOUNDED, None
        else:  # interrupted, node/solution/iteration limit, numeric trouble, suboptimal
            st = SolveStatus.NOT_SOLVED
            if model.is_mip and has_sol:
                bound = _finite_attr(gp, gmodel, "ObjBound")
        if not model.is_mip and st is not SolveStatus.OPTIMAL:
            bound = None  # an unfinished LP run proves no bound
        message = _STATUS_NAMES.get(status, f"status {status}")
        if status == GRB.INF_OR_UNBD:
            message += " (set DualReductions=0 to tell infeasible from unbounded)"
        return finish(self.info.name, model, st, xv, bound, runtime, duals=duals, message=message)


def _progress_callback(gp: Any, progress: Progress, start: float, is_mip: bool) -> Any:
    """A Gurobi callback that prints a line every :data:`PROGRESS_EVERY_S` seconds (incumbent and bound
    from the latest MIP callback)."""
    GRB = gp.GRB
    latest: dict[str, float] = {}
    next_report = [start + PROGRESS_EVERY_S]

    def callback(gmodel: Any, where: int) -> None:
        if where == GRB.Callback.MIP:
            latest["primal"] = float(gmodel.cbGet(GRB.Callback.MIP_OBJBST))
            latest["dual"] = float(gmodel.cbGet(GRB.Callback.MIP_OBJBND))
        now = time.perf_counter()
        if now < next_report[0]:
            return
        next_report[0] = now + PROGRESS_EVERY_S
        what = "MIP" if is_mip else "LP"
        if not latest:
            progress(f"{what} solve running (Gurobi) for {now - start:.0f} s")
            return
        inc, dual = latest["primal"], latest["dual"]
        inc_s = f"{inc:.0f}" if abs(inc) < GRB.INFINITY else "none"
        dual_s = f"{dual:.1f}" if abs(dual) < GRB.INFINITY else "none yet"
        progress(f"{what} solve running (Gurobi) for {now - start:.0f} s: incumbent {inc_s}, bound {dual_s}")

    return callback


def _finite_attr(gp: Any, gmodel: Any, name: str) -> float | None:
    """A model attribute as a float, or ``None`` when unavailable or infinite (``|v| >= GRB.INFINITY``)."""
    try:
        value = float(getattr(gmodel, name))
    except (gp.GurobiError, AttributeError):
        return None
    return value if np.isfinite(value) and abs(value) < gp.GRB.INFINITY else None


_STATUS_NAMES = {
    1: "LOADED",
    2: "OPTIMAL",
    3: "INFEASIBLE",
    4: "INF_OR_UNBD",
    5: "UNBOUNDED",
    6: "CUTOFF",
    7: "ITERATION_LIMIT",
    8: "NODE_LIMIT",
    9: "TIME_LIMIT",
    10: "SOLUTION_LIMIT",
    11: "INTERRUPTED",
    12: "NUMERIC",
    13: "SUBOPTIMAL",
    14: "INPROGRESS",
    15: "USER_OBJ_LIMIT",
    16: "WORK_LIMIT",
    17: "MEM_LIMIT",
}
