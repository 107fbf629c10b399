"""The solver protocol shared by every adapter (DESIGN §3).

A solver class declares its capabilities (:class:`Capability`) and checks its
availability and version *without* importing the backend (``importlib.util.find_spec``,
``importlib.metadata``), so listing solvers never fails because an optional package is
missing, and the pipeline can pick a solver by what it needs (e.g. "LP duals") instead of
by name. Per-solver tuning (options, presolve rules) lives in each adapter.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from llmopt.model.canonical import CanonicalModel
from llmopt.model.result import SolveResult, SolveStatus
from llmopt.solvers.capability import Capability

__all__ = [
    "Capability",
    "Solver",
    "SolverInfo",
    "Progress",
    "package_installed",
    "package_version",
    "unavailable_result",
]

#: Receives one human-readable progress line (e.g. ``"IP 12 s: incumbent 6144, bound 4165"``).
Progress = Callable[[str], None]


@dataclass(frozen=True)
class SolverInfo:
    """Static facts about a solver adapter."""

    name: str
    package: str
    capabilities: frozenset[Capability]
    open_source: bool

    def has(self, *needs: Capability) -> bool:
        return set(needs) <= self.capabilities


@runtime_checkable
class Solver(Protocol):
    """Protocol every adapter implements."""

    info: ClassVar[SolverInfo]

    @classmethod
    def available(cls) -> tuple[bool, str]:
        """``(True, "")`` when usable, else ``(False, reason)``; must not import the backend."""
        ...

    @classmethod
    def version(cls) -> str | None:
        """The backend package's installed version (``None`` if not installed); must not import it."""
        ...

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
    ) -> SolveResult:
        """Solve ``model``; never raise for solver outcomes, report them in the status.

        An adapter with :attr:`Capability.NODE_LIMIT` also takes ``node_limit`` (an int or ``None``): the
        solve stops after that many branch-and-bound nodes, with status ``node_limit`` (CBC: ``not_solved``) and
        the incumbent and bound it has. Callers pass it only to adapters that declare the capability.

        ``time_limit`` is the solver's own limit, which solvers may overrun by seconds on large
        models; ``deadline`` (a ``time.perf_counter()`` value), when given, is a hard end that an
        adapter with :attr:`Capability.INTERRUPT` enforces by cancelling the solve (status
        ``time_limit``, with what it had). A Ctrl-C during the solve ends it with status
        ``interrupted`` (and the incumbent and bound found so far) when the adapter has
        :attr:`Capability.INTERRUPT`; otherwise the ``KeyboardInterrupt`` propagates.
        """
        ...


def package_installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def package_version(distribution: str) -> str | None:
    """Installed version of a distribution, read from its metadata (no import)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


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


def check_node_limit(node_limit: int | None) -> None:
    """Raise ``ValueError`` unless ``node_limit`` is ``None`` or an integer >= 1."""
    if node_limit is not None and (isinstance(node_limit, bool) or not isinstance(node_limit, int) or node_limit < 1):
        raise ValueError(f"node_limit must be an integer >= 1 or None, got {node_limit!r}")


def check_warm_start(model: CanonicalModel, warm_start: np.ndarray | None) -> None:
    """Raise ``ValueError`` unless ``warm_start`` is ``None`` or has one value per column."""
    if warm_start is not None and len(warm_start) != model.n_cols:
        raise ValueError(f"warm start has {len(warm_start)} values, model has {model.n_cols} columns")
