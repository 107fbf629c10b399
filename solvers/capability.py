"""What a solver adapter can do: the :class:`Capability` flags.

A module of its own, free of NumPy, so that naming a capability or the default solver
(:mod:`llmopt.solvers`) costs nothing at command-line start-up.
"""

from __future__ import annotations

import enum

__all__ = ["Capability"]


class Capability(str, enum.Enum):
    """What a solver adapter can do."""

    MIP = "mip"
    """Solves models with integer columns (and reports a proven bound)."""
    LP_DUALS = "lp_duals"
    """Returns row duals of an optimal LP (HiGHS sign convention)."""
    WARM_START = "warm_start"
    """Accepts a feasible primal vector as a MIP start."""
    TIME_LIMIT = "time_limit"
    """Honours a wall-clock time limit."""
    THREADS = "threads"
    """Honours a thread count."""
    INTERRUPT = "interrupt"
    """Stops within about a second on Ctrl-C and returns what it has (status ``interrupted``)."""
    NODE_LIMIT = "node_limit"
    """Honours a branch-and-bound node limit (``solve(..., node_limit=N)``): a stop that depends on the
    model alone, not on the machine's speed or load."""

    def __str__(self) -> str:
        return self.value
