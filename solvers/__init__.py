"""Solver adapters behind one protocol (:mod:`llmopt.solvers.base`), chosen by name or by capability.

Nothing outside this package names a solver: callers ask for :data:`DEFAULT_SOLVER`, for
a name the user gave, or for "any available solver with these capabilities"
(:func:`pick_solver`), which walks :data:`PREFERENCE` (open source first) and then any
plug-in solver.
"""

from __future__ import annotations

from typing import Any

from llmopt.model.registry import Registry
from llmopt.solvers.capability import Capability

__all__ = ["SOLVERS", "DEFAULT_SOLVER", "PREFERENCE", "Capability", "get_solver", "solver_status", "pick_solver",
           "solver_versions"]

SOLVERS: Registry[Any] = Registry("solver", "llmopt.solvers")
"""Solver name → adapter class, resolved lazily (no backend is imported by registering)."""

SOLVERS.register("highs", "llmopt.solvers.highs:HighsSolver", doc="HiGHS via highspy (open-source default)")
SOLVERS.register("cbc", "llmopt.solvers.cbc:CbcSolver", doc="COIN-OR CBC via PuLP's bundled binary")
SOLVERS.register("gurobi", "llmopt.solvers.gurobi:GurobiSolver", doc="Gurobi via gurobipy (optional)")
SOLVERS.register("scip", "llmopt.solvers.scip:ScipSolver", doc="SCIP via pyscipopt (optional)")

#: The solver used when none is named.
DEFAULT_SOLVER = "highs"
#: Order in which :func:`pick_solver` tries solvers (then any other registered one, by name).
PREFERENCE = ("highs", "cbc", "scip", "gurobi")


def get_solver(name: str, **options: Any) -> Any:
    """A new instance of the solver registered as ``name``.

    Parameters
    ----------
    name : str
        A registered name, e.g. ``"highs"``, ``"cbc"``, ``"scip"``, ``"gurobi"``.
    **options
        Backend-specific options passed to the adapter's constructor (HiGHS accepts
        HiGHS option names, e.g. ``presolve="off"``).

    Returns
    -------
    Solver
        An adapter instance; its ``solve`` reports an unavailable backend as ``NOT_SOLVED``.

    Raises
    ------
    llmopt.model.registry.RegistryError
        If ``name`` is unknown (the message lists the known names).
    """
    return SOLVERS.get(name)(**options)


def solver_status(name: str) -> tuple[bool, str]:
    """Whether solver ``name`` is usable here, without importing its backend package.

    Returns ``(True, "")`` when usable, else ``(False, reason)``; raises
    :class:`~llmopt.model.registry.RegistryError` if ``name`` is unknown.
    """
    return SOLVERS.get(name).available()


def pick_solver(*needs: Capability, prefer: str | None = None) -> str | None:
    """The first available solver that has every capability in ``needs``.

    ``prefer`` (e.g. the solver the user chose for the IP) is tried first; then
    :data:`PREFERENCE`, then the other registered solvers by name. Returns ``None`` when
    no available solver qualifies.
    """
    order = ([prefer] if prefer else []) + list(PREFERENCE) + SOLVERS.names()
    seen: set[str] = set()
    for name in order:
        if name in seen or name not in SOLVERS:
            continue
        seen.add(name)
        cls = SOLVERS.get(name)
        if cls.info.has(*needs) and cls.available()[0]:
            return name
    return None


def solver_versions() -> dict[str, str | None]:
    """Installed version of every registered solver's backend package (``None`` if missing)."""
    out: dict[str, str | None] = {}
    for name in SOLVERS.names():
        try:
            out[name] = SOLVERS.get(name).version()
        except Exception:  # a broken plug-in must not break a run's metadata
            out[name] = None
    return out
