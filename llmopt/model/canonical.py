"""The solver-neutral canonical model that every formulation produces.

A :class:`CanonicalModel` is ``min c·x + offset`` subject to
``row_lower <= A x <= row_upper`` and ``col_lower <= x <= col_upper``, with a
per-column integrality flag. Solver adapters translate only this object, so a new
formulation works with every solver and a new solver with every formulation.

Rows and columns come in labelled **blocks** (:class:`Block`): a formulation states, for
example, that rows ``840 … 1679`` are the memory rows ``eq3_memory`` with a time label
``t`` per row, and that columns ``0 … 32102`` are ``x`` with labels ``class`` and ``k``.
Duals and primal values are read by block and label (``model.rows("eq3_memory")``),
never by parsing names. A model carries no untyped bag of extra facts: what a stage
needs downstream is a block label or a field here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["Block", "CanonicalModel", "ModelSize", "ModelTooLarge"]


@dataclass(frozen=True)
class Block:
    """A contiguous range ``start … stop−1`` of rows or columns with the same meaning.

    Attributes
    ----------
    name : str
        What the range is, e.g. ``"eq3_memory"`` or ``"x"`` (the paper's equation or variable).
    start, stop : int
        The range of row (or column) indices.
    labels : mapping of str to ndarray
        One integer array of length ``stop − start`` per label, e.g. ``{"t": times}`` for memory
        rows or ``{"class": ..., "k": ...}`` for start variables.
    """

    name: str
    start: int
    stop: int
    labels: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.stop:
            raise ValueError(f"block {self.name!r}: bad range {self.start}..{self.stop}")
        size = self.stop - self.start
        labels = {}
        for key, arr in dict(self.labels).items():
            a = np.asarray(arr)
            if a.shape != (size,):
                raise ValueError(f"block {self.name!r}: label {key!r} has shape {a.shape}, expected ({size},)")
            a = a.copy()
            a.setflags(write=False)
            labels[key] = a
        object.__setattr__(self, "labels", labels)

    @property
    def slice(self) -> slice:
        return slice(self.start, self.stop)

    def __len__(self) -> int:
        return self.stop - self.start

    def name_of(self, i: int) -> str:
        """Readable name of the ``i``-th entry of the block, e.g. ``eq3_memory[t=18]``."""
        inner = ",".join(f"{k}={int(v[i])}" for k, v in self.labels.items())
        return f"{self.name}[{inner}]" if inner else f"{self.name}[{i}]"


def _check_tiling(blocks: tuple[Block, ...], size: int, what: str, model: str) -> None:
    pos = 0
    names = set()
    for b in blocks:
        if b.start != pos:
            raise ValueError(f"model {model!r}: {what} block {b.name!r} starts at {b.start}, expected {pos}")
        if b.name in names:
            raise ValueError(f"model {model!r}: two {what} blocks named {b.name!r}")
        names.add(b.name)
        pos = b.stop
    if pos != size:
        raise ValueError(f"model {model!r}: {what} blocks cover {pos} of {size} {what}s")


@dataclass(frozen=True)
class ModelSize:
    """Rows, columns and nonzeros of a model (exact after building, an estimate before)."""

    rows: int
    cols: int
    nnz: int

    def describe(self) -> str:
        return f"{self.rows:,} rows, {self.cols:,} columns, {self.nnz:,} nonzeros"


class ModelTooLarge(RuntimeError):
    """A model would exceed the size limit; the message gives its size and what changes it."""

    def __init__(self, what: str, size: ModelSize, limit: int) -> None:
        self.size, self.limit = size, limit
        super().__init__(
            f"{what} would have {size.describe()}, over the limit of {limit:,} nonzeros. Its start windows come "
            "from the best schedule found (wait <= TEL − Σo): more search (--search-evals) can shrink them; "
            "--max-nnz raises the limit"
        )


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
    row_blocks, col_blocks : tuple of Block
        Labelled blocks that tile the rows and the columns, in order.
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
    row_blocks: tuple[Block, ...]
    col_blocks: tuple[Block, ...]

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
        object.__setattr__(self, "row_blocks", tuple(self.row_blocks))
        object.__setattr__(self, "col_blocks", tuple(self.col_blocks))
        _check_tiling(self.row_blocks, n_rows, "row", self.name)
        _check_tiling(self.col_blocks, n_cols, "column", self.name)

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

    @property
    def size(self) -> ModelSize:
        return ModelSize(self.n_rows, self.n_cols, self.nnz)

    def rows(self, name: str) -> Block:
        """The row block called ``name`` (``KeyError`` naming the blocks there are)."""
        return _find(self.row_blocks, name, "row", self.name)

    def cols(self, name: str) -> Block:
        """The column block called ``name``."""
        return _find(self.col_blocks, name, "column", self.name)

    def row_name(self, i: int) -> str:
        return _name_at(self.row_blocks, i)

    def col_name(self, j: int) -> str:
        return _name_at(self.col_blocks, j)

    def relax(self) -> CanonicalModel:
        """The same model with every integrality flag dropped (the LP relaxation)."""
        return replace(self, name=f"{self.name}/lp", integer=np.zeros(self.n_cols, dtype=bool))

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


def _find(blocks: tuple[Block, ...], name: str, what: str, model: str) -> Block:
    for b in blocks:
        if b.name == name:
            return b
    have = ", ".join(b.name for b in blocks) or "none"
    raise KeyError(f"model {model!r} has no {what} block {name!r} (blocks: {have})")


def _name_at(blocks: tuple[Block, ...], i: int) -> str:
    for b in blocks:
        if b.start <= i < b.stop:
            return b.name_of(i - b.start)
    raise IndexError(i)
