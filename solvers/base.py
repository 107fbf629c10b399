"""The solver protocol shared by every adapter (DESIGN §3).

A solver class declares its capabilities and checks its availability *without*
importing the backend (``importlib.util.find_spec``), so listing solvers never fails
because an optional package is missing.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from llmopt.model import CanonicalModel
from llmopt.result import SolveResult, SolveStatus

__all__ = ["Solver", "SolverInfo", "SolverUnavailable", "package_installed", "unavailable_result"]


class SolverUnavailable(RuntimeError):
    """The solver's package or licence is missing, or the model exceeds its licence."""


@dataclass(frozen=True)
class SolverInfo:
    """Static facts about a solver."""

    name: str
    package: str
    mip: bool
    lp_duals: bool
    warm_start: bool
    open_source: bool


@runtime_checkable
class Solver(Protocol):
    """Protocol every adapter implements."""

    info: ClassVar[SolverInfo]

    @classmethod
    def available(cls) -> tuple[bool, str]:
        """``(True, "")`` when usable, else ``(False, reason)``; must not import the backend."""
        ...

    def solve(
        self,
        model: CanonicalModel,
        time_limit: float | None = None,
        mip_gap: float = 1e-9,
        threads: int = 1,
        warm_start: np.ndarray | None = None,
        verbose: bool = False,
    ) -> SolveResult:
        """Solve ``model``; never raise for solver outcomes, report them in the status."""
        ...


def package_installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def unavailable_result(solver: str, reason: str) -> SolveResult:
    return SolveResult(SolveStatus.NOT_SOLVED, None, None, None, 0.0, solver=solver, message=reason)


def finish(
    solver: str,
    model: CanonicalModel,
    status: SolveStatus,
    x: np.ndarray | None,
    bound: float | None,
    runtime: float,
    duals: np.ndarray | None = None,
    message: str = "",
) -> SolveResult:
    """Assemble a :class:`SolveResult`; the objective is recomputed from ``x``."""
    objective = None if x is None else model.objective_value(x)
    if status is SolveStatus.OPTIMAL and bound is None:
        bound = objective
    if objective is not None and bound is not None and bound > objective:
        bound = objective  # bounds from solver tolerances never exceed the incumbent
    gap = SolveResult.relative_gap(objective, bound)
    return SolveResult(status, objective, bound, gap, runtime, x=x, duals=duals, solver=solver, message=message)


def check_warm_start(model: CanonicalModel, warm_start: np.ndarray | None) -> None:
    """Raise ``ValueError`` unless ``warm_start`` is ``None`` or has one value per column."""
    if warm_start is not None and len(warm_start) != model.n_cols:
        raise ValueError(f"warm start has {len(warm_start)} values, model has {model.n_cols} columns")
