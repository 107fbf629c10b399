"""The solver-neutral canonical model that every formulation produces.

A :class:`CanonicalModel` is ``min c·x + offset`` subject to
``row_lower <= A x <= row_upper`` and ``col_lower <= x <= col_upper``, with a
per-column integrality flag. Solver adapters translate only this object, so a new
formulation works with every solver and a new solver with every formulation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["CanonicalModel"]


@dataclass(frozen=True)
class CanonicalModel:
    """A linear (mixed-integer) program in a solver-neutral form.

    Attributes
    ----------
    name : str
        Model name (formulation and instance).
    c : ndarray, shape (n_cols,)
        Objective coefficients (minimised).
    offset : float
        Constant added to the objective.
    A : scipy.sparse.csr_matrix, shape (n_rows, n_cols)
        Constraint matrix.
    row_lower, row_upper : ndarray, shape (n_rows,)
        Row bounds (``-inf`` / ``inf`` where absent).
    col_lower, col_upper : ndarray, shape (n_cols,)
        Column bounds.
    integer : ndarray of bool, shape (n_cols,)
        ``True`` where the column must take an integer value.
    col_names, row_names : tuple of str
        Names, e.g. ``x[r3,17]`` and ``eq3_memory[t=18]``.
    decode : callable, optional
        Maps a primal vector to a domain object (for the hindsight IP: start times).
    meta : mapping
        Formulation-specific facts (horizon, windows) kept for reporting.
    """

    name: str
    c: np.ndarray
    offset: float
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray
    col_names: tuple[str, ...]
    row_names: tuple[str, ...]
    decode: Callable[[np.ndarray], Any] | None = field(default=None, compare=False)
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        n_rows, n_cols = self.A.shape
        checks = {
            "c": (self.c, n_cols),
            "col_lower": (self.col_lower, n_cols),
            "col_upper": (self.col_upper, n_cols),
            "integer": (self.integer, n_cols),
            "row_lower": (self.row_lower, n_rows),
            "row_upper": (self.row_upper, n_rows),
        }
        for label, (arr, size) in checks.items():
            if len(arr) != size:
                raise ValueError(f"model {self.name!r}: {label} has length {len(arr)}, expected {size}")
        if len(self.col_names) != n_cols or len(self.row_names) != n_rows:
            raise ValueError(f"model {self.name!r}: names do not match the matrix shape")

    @property
    def n_cols(self) -> int:
        return int(self.A.shape[1])

    @property
    def n_rows(self) -> int:
        return int(self.A.shape[0])

    @property
    def nnz(self) -> int:
        return int(self.A.nnz)

    @property
    def is_mip(self) -> bool:
        return bool(self.integer.any())

    def relax(self) -> CanonicalModel:
        """The same model with every integrality flag dropped (the LP relaxation)."""
        return replace(
            self,
            name=f"{self.name}/lp",
            integer=np.zeros(self.n_cols, dtype=bool),
            meta={**self.meta, "relaxed": True},
        )

    def objective_value(self, x: np.ndarray) -> float:
        return float(self.c @ x + self.offset)

    def max_violation(self, x: np.ndarray) -> float:
        """Largest violation of any row or column bound by ``x`` (0 if feasible)."""
        ax = self.A @ x
        viol = [
            np.max(self.row_lower - ax, initial=0.0),
            np.max(ax - self.row_upper, initial=0.0),
            np.max(self.col_lower - x, initial=0.0),
            np.max(x - self.col_upper, initial=0.0),
        ]
        if self.integer.any():
            xi = x[self.integer]
            viol.append(float(np.max(np.abs(xi - np.round(xi)), initial=0.0)))
        return float(max(viol))

    def stats(self) -> dict[str, int]:
        return {
            "cols": self.n_cols,
            "int_cols": int(self.integer.sum()),
            "rows": self.n_rows,
            "nnz": self.nnz,
        }
