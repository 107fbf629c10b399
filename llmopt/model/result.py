"""One status enum and one result type for every solver (DESIGN §3)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the CLI imports SolveStatus and should not pay for NumPy
    import numpy as np

__all__ = ["SolveStatus", "SolveResult"]


class SolveStatus(str, enum.Enum):
    """Outcome of a solve, shared by all solver adapters."""

    OPTIMAL = "optimal"
    """Proven optimal (within the requested MIP gap)."""
    TIME_LIMIT = "time_limit"
    """Stopped at the time limit; ``objective`` is the incumbent (if any), ``bound`` the best bound."""
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INTERRUPTED = "interrupted"
    NODE_LIMIT = "node_limit"
    """Stopped at the caller's branch-and-bound node limit; ``objective`` is the incumbent (if any), ``bound``
    the best bound. Unlike ``time_limit``, the same on every machine."""
    """Stopped by the user (Ctrl-C / SIGTERM); ``objective`` and ``bound`` are what was found so far."""
    NOT_SOLVED = "not_solved"
    """No answer: an error, a work limit, or an unavailable solver (see ``message``)."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class SolveResult:
    """What a solver returned for a :class:`~llmopt.model.canonical.CanonicalModel`.

    Missing values are ``None`` (never ``inf`` or 0).

    Attributes
    ----------
    status : SolveStatus
    objective : float or None
        Objective of the returned solution (incumbent), offset included.
    bound : float or None
        Best proven lower bound on the optimum (for an optimal LP, the optimum).
    gap : float or None
        Relative gap ``(objective - bound) / |objective|``.
    runtime_s : float
        Wall-clock seconds spent in the solver.
    x : ndarray or None
        Primal solution.
    duals : ndarray or None
        Row duals, for LPs solved to optimality.
    solver : str
    message : str
    """

    status: SolveStatus
    objective: float | None
    bound: float | None
    gap: float | None
    runtime_s: float
    x: np.ndarray | None = field(default=None, repr=False)
    duals: np.ndarray | None = field(default=None, repr=False)
    solver: str = ""
    message: str = ""

    @staticmethod
    def relative_gap(objective: float | None, bound: float | None) -> float | None:
        if objective is None or bound is None:
            return None
        return max(0.0, objective - bound) / max(abs(objective), 1e-9)

    def summary(self) -> dict[str, Any]:
        """JSON-ready fields (no arrays)."""
        return {
            "status": self.status.value,
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "runtime_s": round(self.runtime_s, 4),
            "solver": self.solver,
            "message": self.message,
        }
