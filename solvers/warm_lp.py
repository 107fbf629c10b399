"""A live LP whose column bounds change between solves: the node LPs of a branch-and-bound tree.

:class:`WarmLP` loads a :class:`~llmopt.model.canonical.CanonicalModel` (an LP: the relaxation of
an IP) into HiGHS once. Each :meth:`WarmLP.solve` sets the columns' upper bounds (0 fixes a column
out) and re-solves by dual simplex from the basis the previous solve left, which is how a tree
search re-solves a node without building its model again. A node whose bounds make the LP infeasible
returns a *dual ray* when HiGHS has one: multipliers along which the Lagrangian grows without limit,
which a tree can turn into a certificate that the node holds no schedule.

This is an algorithm around one solver (warm re-solves and rays come from the ``highspy`` API
directly), like :mod:`llmopt.solvers.colgen`; it is HiGHS-only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from llmopt.model.canonical import CanonicalModel
from llmopt.model.result import SolveStatus

__all__ = ["NodeSolution", "WarmLP"]


@dataclass(frozen=True)
class NodeSolution:
    """One re-solve of a :class:`WarmLP`. Missing values are ``None``.

    Attributes
    ----------
    status : SolveStatus
        ``OPTIMAL``, ``INFEASIBLE``, ``TIME_LIMIT`` or ``NOT_SOLVED``.
    objective : float or None
        The LP optimum (the model's offset included).
    x : ndarray or None
        Column values.
    row_dual : ndarray or None
        Row duals in HiGHS's sign convention (``<=`` rows of a minimisation: ``<= 0``).
    col_dual : ndarray or None
        Reduced costs of the columns.
    dual_ray : ndarray or None
        With ``INFEASIBLE``: a dual ray over the rows, same sign convention, if HiGHS gave one.
    runtime_s : float
    """

    status: SolveStatus
    objective: float | None
    x: np.ndarray | None = field(default=None, repr=False)
    row_dual: np.ndarray | None = field(default=None, repr=False)
    col_dual: np.ndarray | None = field(default=None, repr=False)
    dual_ray: np.ndarray | None = field(default=None, repr=False)
    runtime_s: float = 0.0


class WarmLP:
    """``model`` (continuous; call :meth:`CanonicalModel.relax` first) held live in HiGHS.

    Parameters
    ----------
    model : CanonicalModel
        An LP. Its column upper bounds are the defaults :meth:`solve` restores.
    threads : int
    """

    def __init__(self, model: CanonicalModel, threads: int = 1) -> None:
        import highspy

        from llmopt.solvers.highs import highs_lp, new_highs

        if model.is_mip:
            raise ValueError("WarmLP takes an LP: relax the model first")
        self.model = model
        self.h = new_highs(highspy)
        for key, value in (("output_flag", False), ("threads", threads), ("solver", "simplex"),
                           ("presolve", "off")):
            self.h.setOptionValue(key, value)
        self.h.passModel(highs_lp(highspy, model))
        self._upper = np.asarray(model.col_upper, dtype=float).copy()
        self._idx = np.arange(model.n_cols, dtype=np.int32)
        self._lower = np.asarray(model.col_lower, dtype=float)
        self.solves = 0

    def basis(self) -> Any:
        """The simplex basis the last solve ended with (HiGHS's ``HighsBasis``), for :meth:`solve`."""
        return self.h.getBasis()

    def solve(self, col_upper: np.ndarray | None = None, time_limit: float | None = None,
              basis: Any = None) -> NodeSolution:
        """Re-solve with these column upper bounds (``None``: the model's own).

        Parameters
        ----------
        col_upper : ndarray, optional
            One value per column; ``0`` removes a column (its lower bound must be 0).
        time_limit : float, optional
            Seconds for this solve.
        basis : HighsBasis, optional
            Start from this basis (one :meth:`basis` returned) instead of the last solve's: strong
            branching probes both children of a node from the node's own optimal basis, which a
            probe of the other child would otherwise have moved away.
        """
        import highspy

        t0 = time.perf_counter()
        upper = self._upper if col_upper is None else np.asarray(col_upper, dtype=float)
        if upper.shape != self._upper.shape:
            raise ValueError(f"col_upper has {upper.size} values, the model {self._upper.size} columns")
        if basis is not None and self.h.setBasis(basis) != highspy.HighsStatus.kOk:
            raise ValueError("basis rejected by HiGHS (not a basis of this model?)")
        inf = highspy.kHighsInf
        self.h.changeColsBounds(self.model.n_cols, self._idx, self._lower, np.where(np.isinf(upper), inf, upper))
        # HiGHS reads time_limit against its run clock, which keeps counting across re-solves
        limit = float("inf") if time_limit is None else self.h.getRunTime() + max(time_limit, 1e-3)
        self.h.setOptionValue("time_limit", limit)
        self.h.run()
        self.solves += 1
        status = self.h.getModelStatus()
        elapsed = time.perf_counter() - t0
        if status == highspy.HighsModelStatus.kOptimal:
            sol = self.h.getSolution()
            return NodeSolution(SolveStatus.OPTIMAL, float(self.h.getInfo().objective_function_value),
                                np.asarray(sol.col_value, dtype=float), np.asarray(sol.row_dual, dtype=float),
                                np.asarray(sol.col_dual, dtype=float), None, elapsed)
        if status == highspy.HighsModelStatus.kInfeasible:
            ray = None
            _, has, values = self.h.getDualRay()
            if has:
                ray = np.asarray(values, dtype=float)
            return NodeSolution(SolveStatus.INFEASIBLE, None, dual_ray=ray, runtime_s=elapsed)
        if status == highspy.HighsModelStatus.kTimeLimit:
            return NodeSolution(SolveStatus.TIME_LIMIT, None, runtime_s=elapsed)
        return NodeSolution(SolveStatus.NOT_SOLVED, None, runtime_s=elapsed)
