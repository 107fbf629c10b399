"""Solver adapters behind one protocol (:mod:`llmopt.solvers.base`)."""

from __future__ import annotations

from typing import Any

from llmopt.registry import Registry

__all__ = ["SOLVERS", "get_solver", "solver_status"]

SOLVERS: Registry[Any] = Registry("solver", "llmopt.solvers")
"""Solver name → adapter class, resolved lazily (no backend is imported by registering)."""

SOLVERS.register("highs", "llmopt.solvers.highs:HighsSolver", doc="HiGHS via highspy (open-source default)")
SOLVERS.register("cbc", "llmopt.solvers.cbc:CbcSolver", doc="COIN-OR CBC via PuLP's bundled binary")
SOLVERS.register("gurobi", "llmopt.solvers.gurobi:GurobiSolver", doc="Gurobi via gurobipy (optional)")


def get_solver(name: str, **options: Any) -> Any:
    """A new instance of the solver registered as ``name``.

    Parameters
    ----------
    name : str
        A registered name, e.g. ``"highs"``, ``"cbc"``, ``"gurobi"``.
    **options
        Backend-specific options passed to the adapter's constructor (HiGHS accepts
        HiGHS option names, e.g. ``presolve="off"``).

    Returns
    -------
    Solver
        An adapter instance; its ``solve`` reports an unavailable backend as ``NOT_SOLVED``.

    Raises
    ------
    llmopt.registry.RegistryError
        If ``name`` is unknown (the message lists the known names).
    """
    return SOLVERS.get(name)(**options)


def solver_status(name: str) -> tuple[bool, str]:
    """Whether solver ``name`` is usable here, without importing its backend package.

    Parameters
    ----------
    name : str
        A registered solver name.

    Returns
    -------
    tuple of (bool, str)
        ``(True, "")`` when usable, else ``(False, reason)``.

    Raises
    ------
    llmopt.registry.RegistryError
        If ``name`` is unknown.
    """
    return SOLVERS.get(name).available()
