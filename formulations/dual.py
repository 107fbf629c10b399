"""The explicit dual LP of the hindsight LP relaxation (J App. B.3 (22)–(24), generalised).

The primal is the LP relaxation of :mod:`llmopt.formulations.hindsight_ip`: classes ``c``
of identical requests (size ``|c|``, arrival ``a_c``, prompt ``s_c``, output ``o_c``),
start windows ``K_c`` and memory rows ``t = 1 … T`` (``T = windows.horizon``)::

    min  Σ_c Σ_{k∈K_c} k·x_{c,k} + C                        C = Σ_i (o_i − a_i)
    s.t. Σ_{k∈K_c} x_{c,k} = |c|                             (y_c, free)
         Σ_c Σ_{k∈K_c, k<t<=k+o_c} (s_c + t − k)·x_{c,k} <= M   (λ_t >= 0),  t = 1 … T
         x >= 0

(the columns' upper bounds ``x_{c,k} <= |c|`` of the IP are implied by the first row
and ``x >= 0``, so they do not change the LP). Its dual, the paper's (22)–(24) for
heterogeneous requests with arrivals and windows (DIGEST §1.3, "General dual")::

    (22) max  C + Σ_c |c|·y_c − M·Σ_{t=1}^{T} λ_t
    (23) s.t. y_c − Σ_{τ=k+1}^{k+o_c} (s_c + τ − k)·λ_τ <= k     ∀ c, ∀ k ∈ K_c
    (24)      λ_t >= 0, y_c free

With singleton classes (``aggregate=False``) ``y_c`` is the paper's ``y_i``; with
aggregation, ``y_c`` equals the common ``y_i`` of the class's requests (any dual
optimum can be symmetrised over the class). (23) is written for every ``k ∈ K_c``,
including ``k = 0`` (see DIGEST §1.3: the primal has ``x_{i,0}``).

:class:`~llmopt.model.CanonicalModel` minimises, so the model built here minimises the
**negated** dual objective ``−C − Σ_c |c|·y_c + M·Σ_t λ_t``; the dual optimum is
``−objective`` (see :func:`dual_value`). By strong duality it equals the primal LP
optimum, which the tests check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from llmopt.formulations.hindsight_ip import (
    RequestClass,
    StartWindows,
    class_windows,
    request_classes,
    start_windows,
)
from llmopt.instance import Instance
from llmopt.model import CanonicalModel
from llmopt.result import SolveResult

__all__ = [
    "formulate_dual",
    "eq22_objective",
    "eq23_dual_constraints",
    "eq24_nonnegativity",
    "dual_value",
    "lambda_from_lp_duals",
    "DualSolution",
]

_MEMORY_ROW = re.compile(r"^eq3_memory\[t=(\d+)\]$")


@dataclass(frozen=True)
class DualSolution:
    """``(y, λ)`` decoded from a solution of :func:`formulate_dual`.

    Attributes
    ----------
    y : dict
        First request id of each class → ``y_c``.
    lam : ndarray
        ``lam[t] = λ_t`` for ``t = 0 … T`` (``lam[0] = 0``; there is no memory row at 0).
    """

    y: dict[str, float]
    lam: np.ndarray = field(repr=False)


# --- one function per part of the paper's dual ------------------------------------------


def eq22_objective(classes: list[RequestClass], horizon: int, M: int) -> tuple[np.ndarray, float]:
    """(22), negated for minimisation: ``min −Σ_c |c|·y_c + M·Σ_t λ_t − C``.

    Columns are ``y_c`` (one per class) followed by ``λ_1 … λ_T``. Returns ``(c, offset)``.
    """
    c_y = -np.array([cl.size for cl in classes], dtype=float)
    c_lam = np.full(horizon, float(M))
    C = float(sum(cl.size * (cl.output - cl.arrival) for cl in classes))
    return np.concatenate([c_y, c_lam]), -C


def eq23_dual_constraints(
    classes: list[RequestClass], class_windows: list[tuple[int, int]], horizon: int
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray, np.ndarray, list[str]]:
    """(23): ``y_c − Σ_{τ=k+1}^{k+o_c} (s_c + τ − k)·λ_τ <= k`` for every class ``c`` and ``k ∈ K_c``.

    One row per primal column ``x_{c,k}``; column of ``λ_τ`` is ``len(classes) + τ − 1``.
    Returns ``((rows, cols, vals), lower, upper, names)``.
    """
    n_y = len(classes)
    rows_l, cols_l, vals_l = [], [], []
    upper_l: list[np.ndarray] = []
    names: list[str] = []
    row = 0
    for ci, (cl, (lo, hi)) in enumerate(zip(classes, class_windows, strict=True)):
        ks = np.arange(lo, hi + 1)
        if ks.size and int(ks[-1]) + cl.output > horizon:
            raise ValueError(f"class of {cl.ids[0]!r}: start window reaches past the horizon {horizon}")
        r_idx = row + np.arange(ks.size)
        # y_c coefficient
        rows_l.append(r_idx)
        cols_l.append(np.full(ks.size, ci))
        vals_l.append(np.ones(ks.size))
        # −(s + j)·λ_{k+j} for j = 1..o
        j = np.tile(np.arange(1, cl.output + 1), ks.size)
        kk = np.repeat(ks, cl.output)
        rows_l.append(np.repeat(r_idx, cl.output))
        cols_l.append(n_y + kk + j - 1)
        vals_l.append(-(cl.prompt + j).astype(float))
        upper_l.append(ks.astype(float))
        names.extend(f"eq23_dual[{cl.ids[0]},{int(k)}]" for k in ks)
        row += ks.size
    upper = np.concatenate(upper_l) if upper_l else np.zeros(0)
    lower = np.full(upper.size, -np.inf)
    triplets = (
        np.concatenate(rows_l) if rows_l else np.zeros(0, dtype=int),
        np.concatenate(cols_l) if cols_l else np.zeros(0, dtype=int),
        np.concatenate(vals_l) if vals_l else np.zeros(0),
    )
    return triplets, lower, upper, names


def eq24_nonnegativity(n_classes: int, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """(24): ``λ_t >= 0``; ``y_c`` free. Returns ``(col_lower, col_upper)``."""
    lower = np.concatenate([np.full(n_classes, -np.inf), np.zeros(horizon)])
    upper = np.full(n_classes + horizon, np.inf)
    return lower, upper


# --- assembly -----------------------------------------------------------------------------


def formulate_dual(
    instance: Instance,
    windows: StartWindows | None = None,
    *,
    aggregate: bool = True,
) -> CanonicalModel:
    """Build the dual (22)–(24) of the hindsight LP relaxation as a :class:`CanonicalModel`.

    Parameters
    ----------
    instance : Instance
    windows : StartWindows, optional
        The primal's start windows and horizon; default :func:`start_windows` (no upper
        bound). Within a class the windows are intersected, as the primal does.
    aggregate : bool
        One ``y`` per class of identical requests (matches the primal's aggregation;
        the optimum is the same either way).

    Returns
    -------
    CanonicalModel
        An LP minimising the *negated* dual objective; the dual optimum is
        ``−objective`` (:func:`dual_value`). ``decode`` returns a :class:`DualSolution`.
    """
    if windows is None:
        windows = start_windows(instance)
    classes = request_classes(instance, aggregate)
    windows_c = class_windows(instance, windows, classes)
    T = int(windows.horizon)

    c, offset = eq22_objective(classes, T, instance.M)
    (rows, cols, vals), row_lower, row_upper, row_names = eq23_dual_constraints(classes, windows_c, T)
    col_lower, col_upper = eq24_nonnegativity(len(classes), T)
    n_cols = len(classes) + T
    A = sp.csr_matrix((vals, (rows, cols)), shape=(len(row_names), n_cols))
    col_names = tuple([f"y[{cl.ids[0]}]" for cl in classes] + [f"lambda[t={t}]" for t in range(1, T + 1)])
    n_y = len(classes)

    def decode(x: np.ndarray) -> DualSolution:
        lam = np.zeros(T + 1)
        lam[1:] = np.maximum(np.asarray(x[n_y:], dtype=float), 0.0)
        return DualSolution({cl.ids[0]: float(x[i]) for i, cl in enumerate(classes)}, lam)

    return CanonicalModel(
        name=f"hindsight_dual[{instance.name or 'instance'}]",
        c=c,
        offset=offset,
        A=A,
        row_lower=row_lower,
        row_upper=row_upper,
        col_lower=col_lower,
        col_upper=col_upper,
        integer=np.zeros(n_cols, dtype=bool),
        col_names=col_names,
        row_names=tuple(row_names),
        decode=decode,
        meta={"horizon": T, "windows": windows.reason, "classes": len(classes), "M": instance.M,
              "sense": "minimises the negated dual objective; dual optimum = -objective"},
    )


def dual_value(result: SolveResult) -> float | None:
    """The dual objective (22) of a solve of :func:`formulate_dual` (``−objective``), or ``None``."""
    return None if result.objective is None else -float(result.objective)


def lambda_from_lp_duals(primal_model: CanonicalModel, duals: np.ndarray, tol: float = 1e-4) -> np.ndarray:
    """Map the row duals of the primal LP's memory rows to ``λ_t >= 0``.

    HiGHS reports row duals as ``∂ objective / ∂ row bound`` for a minimisation; a
    binding ``<= M`` row has a dual ``<= 0``, so ``λ_t = −dual(eq3_memory[t])``.
    Rows are recognised by their names ``eq3_memory[t=..]``.

    Parameters
    ----------
    primal_model : CanonicalModel
        The (relaxed) hindsight model whose LP was solved.
    duals : ndarray
        Row duals, in the model's row order.
    tol : float
        Wrong-sign duals down to ``tol`` (solver round-off: HiGHS's dual feasibility
        tolerance is 1e-7 on the *scaled* model) are clamped to 0. Any ``λ >= 0`` is a valid
        certificate, and the checker recomputes the bound from the clamped ``λ``.

    Returns
    -------
    ndarray
        ``lam[t] = λ_t`` for ``t = 0 … T`` (0 where the primal has no memory row).

    Raises
    ------
    ValueError
        On a length mismatch, or a memory-row dual of the wrong sign beyond ``tol``.
    """
    duals = np.asarray(duals, dtype=float)
    if duals.size != primal_model.n_rows:
        raise ValueError(f"{duals.size} duals for a model with {primal_model.n_rows} rows")
    times: list[int] = []
    rows: list[int] = []
    for r, name in enumerate(primal_model.row_names):
        m = _MEMORY_ROW.match(name)
        if m:
            times.append(int(m.group(1)))
            rows.append(r)
    horizon = int(primal_model.meta.get("horizon", max(times, default=0)))
    lam = np.zeros(max([horizon, *times]) + 1)
    for t, r in zip(times, rows, strict=True):
        v = -duals[r]
        if v < -tol:
            raise ValueError(f"memory row at t={t} has dual {duals[r]!r} of the wrong sign for a <= row")
        lam[t] = max(v, 0.0)
    return lam
