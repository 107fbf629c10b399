"""HiGHS adapter (``highspy``), the open-source default."""

from __future__ import annotations

import time
from typing import ClassVar

import numpy as np

from llmopt.model import CanonicalModel
from llmopt.result import SolveResult, SolveStatus
from llmopt.solvers.base import SolverInfo, check_warm_start, finish, package_installed, unavailable_result

__all__ = ["HighsSolver"]


class HighsSolver:
    """Solve a :class:`CanonicalModel` with HiGHS (simplex for LPs, branch-and-cut for MIPs)."""

    info: ClassVar[SolverInfo] = SolverInfo(
        name="highs", package="highspy", mip=True, lp_duals=True, warm_start=True, open_source=True
    )

    def __init__(self, **options: object) -> None:
        """``options`` are HiGHS option names and values (e.g. ``presolve="off"``), applied
        after llmopt's own settings."""
        self.options = dict(options)

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if package_installed("highspy"):
            return True, ""
        return False, "highspy is not installed (pip install highspy)"

    def solve(
        self,
        model: CanonicalModel,
        time_limit: float | None = None,
        mip_gap: float = 1e-9,
        threads: int = 1,
        warm_start: np.ndarray | None = None,
        verbose: bool = False,
    ) -> SolveResult:
        ok, why = self.available()
        if not ok:
            return unavailable_result(self.info.name, why)
        import highspy

        check_warm_start(model, warm_start)
        h = highspy.Highs()
        h.setOptionValue("output_flag", bool(verbose))
        if time_limit is not None:
            h.setOptionValue("time_limit", float(time_limit))
        h.setOptionValue("mip_rel_gap", float(mip_gap))
        h.setOptionValue("threads", int(threads))
        h.setOptionValue("random_seed", 0)
        for key, value in self.options.items():
            if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:  # type: ignore[arg-type]
                raise ValueError(f"HiGHS rejected option {key}={value!r}")

        A = model.A.tocsc()
        lp = highspy.HighsLp()
        lp.num_col_ = model.n_cols
        lp.num_row_ = model.n_rows
        lp.col_cost_ = np.asarray(model.c, dtype=float)
        lp.col_lower_ = np.asarray(model.col_lower, dtype=float)
        lp.col_upper_ = np.asarray(model.col_upper, dtype=float)
        lp.row_lower_ = np.where(np.isinf(model.row_lower), -highspy.kHighsInf, model.row_lower)
        lp.row_upper_ = np.where(np.isinf(model.row_upper), highspy.kHighsInf, model.row_upper)
        lp.offset_ = float(model.offset)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = A.indptr.astype(np.int32)
        lp.a_matrix_.index_ = A.indices.astype(np.int32)
        lp.a_matrix_.value_ = A.data.astype(float)
        if model.is_mip:
            lp.integrality_ = [
                highspy.HighsVarType.kInteger if f else highspy.HighsVarType.kContinuous
                for f in model.integer
            ]
        h.passModel(lp)
        if warm_start is not None and model.is_mip:
            sol = highspy.HighsSolution()
            sol.col_value = list(np.asarray(warm_start, dtype=float))
            sol.value_valid = True
            h.setSolution(sol)

        start = time.perf_counter()
        h.run()
        runtime = time.perf_counter() - start
        status = h.getModelStatus()
        info = h.getInfo()
        MS = highspy.HighsModelStatus
        _HIGHS_INTERRUPT = getattr(MS, "kHighsInterrupt", MS.kInterrupt)  # absent from highspy's stubs
        has_primal = info.primal_solution_status == 2  # kSolutionStatusFeasible
        x = np.array(h.getSolution().col_value) if has_primal else None
        duals = None
        bound: float | None = None
        if status == MS.kOptimal:
            st = SolveStatus.OPTIMAL
            if model.is_mip:
                bound = float(info.mip_dual_bound)
            else:
                duals = np.array(h.getSolution().row_dual)
                bound = float(info.objective_function_value)
        elif status in (MS.kTimeLimit, MS.kInterrupt, _HIGHS_INTERRUPT, MS.kIterationLimit, MS.kSolutionLimit):
            st = SolveStatus.TIME_LIMIT if status == MS.kTimeLimit else SolveStatus.NOT_SOLVED
            if model.is_mip and np.isfinite(info.mip_dual_bound):
                bound = float(info.mip_dual_bound)
        elif status == MS.kInfeasible:
            st = SolveStatus.INFEASIBLE
        elif status in (MS.kUnbounded, MS.kUnboundedOrInfeasible):
            st = SolveStatus.UNBOUNDED
        else:
            st = SolveStatus.NOT_SOLVED
        if not model.is_mip and st is not SolveStatus.OPTIMAL:
            bound = None  # an unfinished simplex run proves no bound
        return finish(self.info.name, model, st, x, bound, runtime, duals=duals,
                      message=h.modelStatusToString(status))
