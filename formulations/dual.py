"""The explicit dual LP of the hindsight LP relaxation (J App. B.3 (22)–(24), generalised).

The primal is the LP relaxation of :mod:`llmopt.formulations.hindsight_ip`: classes ``c``
of identical requests (size ``|c|``, arrival ``a_c``, prompt ``s_c``, output ``o_c``),
start windows ``K_c`` and a memory row for every time ``t ∈ T`` at which some start in the
windows holds memory::

    min  Σ_c Σ_{k∈K_c} k·x_{c,k} + C                        C = Σ_i (o_i − a_i)
    s.t. Σ_{k∈K_c} x_{c,k} = |c|                             (y_c, free)
         Σ_c Σ_{k∈K_c, k<t<=k+o_c} (s_c + t − k)·x_{c,k} <= M   (λ_t >= 0),  t ∈ T
         x >= 0

(the columns' upper bounds ``x_{c,k} <= |c|`` of the IP are implied by the first row
and ``x >= 0``, so they do not change the LP). Its dual, the paper's (22)–(24) for
heterogeneous requests with arrivals and windows (DIGEST §1.3, "General dual")::

    (22) max  C + Σ_c |c|·y_c − M·Σ_{t∈T} λ_t
    (23) s.t. y_c − Σ_{τ=k+1}^{k+o_c} (s_c + τ − k)·λ_τ <= k     ∀ c, ∀ k ∈ K_c
    (24)      λ_t >= 0, y_c free

With singleton classes (``aggregate=False``) ``y_c`` is the paper's ``y_i``; with
aggregation, ``y_c`` equals the common ``y_i`` of the class's requests (any dual
optimum can be symmetrised over the class). (23) is written for every ``k ∈ K_c``, the
first start included (DIGEST §1.3: the paper's (23) must also hold at ``k = 0``).

:class:`~llmopt.model.canonical.CanonicalModel` minimises, so the model built here minimises the
**negated** dual objective ``−C − Σ_c |c|·y_c + M·Σ_t λ_t``; the dual optimum is
``−objective``. By strong duality it equals the primal LP optimum, which the tests check.

Times are absolute; there is one ``λ_t`` per memory row of the primal (every time some
start in the windows holds memory), so the model's blocks are columns ``y`` (label
``class``) and ``lambda`` (label ``t``), rows ``eq23_dual`` (labels ``class``, ``k``).
Turning a solution into a certified bound is the job of the ``dual-lp`` bound provider
(:mod:`llmopt.opt.bounds`), not of this module.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from llmopt.formulations.hindsight_ip import RequestClass, class_windows, request_classes
from llmopt.model.canonical import Block, CanonicalModel
from llmopt.model.instance import Instance
from llmopt.model.windows import StartWindows, start_windows

__all__ = ["formulate_dual", "eq22_objective", "eq23_dual_constraints", "eq24_nonnegativity", "memory_times"]


def memory_times(classes: list[RequestClass], windows_c: list[tuple[int, int]]) -> np.ndarray:
    """Sorted times ``t`` at which some start in the class windows holds memory (the primal's rows (3))."""
    spans = [np.arange(lo + 1, hi + cl.output + 1, dtype=np.int64)
             for cl, (lo, hi) in zip(classes, windows_c, strict=True)]
    return np.unique(np.concatenate(spans)) if spans else np.zeros(0, dtype=np.int64)


# --- one function per part of the paper's dual ------------------------------------------


def eq22_objective(classes: list[RequestClass], times: np.ndarray, M: int, origin: int) -> tuple[np.ndarray, float]:
    """(22), negated for minimisation: ``min −Σ_c |c|·y_c + M·Σ_t λ_t − C``.

    Columns are ``y_c`` (one per class) followed by ``λ_t`` for ``t`` in ``times``. The
    variables ``y_c`` are measured from ``origin`` (as the primal's objective is), so
    ``C = Σ_i (o_i − (a_i − origin))``. Returns ``(c, offset)``.
    """
    c_y = -np.array([cl.size for cl in classes], dtype=float)
    c_lam = np.full(len(times), float(M))
    C = float(sum(cl.size * (cl.output - (cl.arrival - origin)) for cl in classes))
    return np.concatenate([c_y, c_lam]), -C


def eq23_dual_constraints(
    classes: list[RequestClass], windows_c: list[tuple[int, int]], times: np.ndarray, origin: int
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """(23): ``y_c − Σ_{τ=k+1}^{k+o_c} (s_c + τ − k)·λ_τ <= k − origin`` for every class ``c`` and ``k ∈ K_c``.

    One row per primal column ``x_{c,k}``. Returns ``((rows, cols, vals), lower, upper, labels)``.
    """
    n_y = len(classes)
    rows_l, cols_l, vals_l, upper_l, cls_l, k_l = [], [], [], [], [], []
    row = 0
    for ci, (cl, (lo, hi)) in enumerate(zip(classes, windows_c, strict=True)):
        ks = np.arange(lo, hi + 1, dtype=np.int64)
        r_idx = row + np.arange(ks.size)
        rows_l.append(r_idx)
        cols_l.append(np.full(ks.size, ci))
        vals_l.append(np.ones(ks.size))
        j = np.tile(np.arange(1, cl.output + 1, dtype=np.int64), ks.size)
        tau = np.repeat(ks, cl.output) + j
        rows_l.append(np.repeat(r_idx, cl.output))
        cols_l.append(n_y + np.searchsorted(times, tau))
        vals_l.append(-(cl.prompt + j).astype(float))
        upper_l.append((ks - origin).astype(float))
        cls_l.append(np.full(ks.size, ci, dtype=np.int64))
        k_l.append(ks)
        row += ks.size

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    upper = cat(upper_l, float)
    triplets = (cat(rows_l, int), cat(cols_l, int), cat(vals_l, float))
    return triplets, np.full(upper.size, -np.inf), upper, {"class": cat(cls_l, int), "k": cat(k_l, int)}


def eq24_nonnegativity(n_classes: int, n_times: int) -> tuple[np.ndarray, np.ndarray]:
    """(24): ``λ_t >= 0``; ``y_c`` free. Returns ``(col_lower, col_upper)``."""
    lower = np.concatenate([np.full(n_classes, -np.inf), np.zeros(n_times)])
    upper = np.full(n_classes + n_times, np.inf)
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
        The primal's start windows; default :func:`~llmopt.model.windows.start_windows` (no upper
        bound). Within a class the window is the hull, as in the primal.
    aggregate : bool
        One ``y`` per class of identical requests (matches the primal's aggregation;
        the optimum is the same either way).

    Returns
    -------
    CanonicalModel
        An LP minimising the *negated* dual objective; the dual optimum is ``−objective``.
    """
    if windows is None:
        windows = start_windows(instance)
    classes = request_classes(instance, aggregate)
    windows_c = class_windows(windows, classes)
    times = memory_times(classes, windows_c)
    origin = min((r.arrival for r in instance.requests), default=0)

    c, offset = eq22_objective(classes, times, instance.M, origin)
    (rows, cols, vals), row_lower, row_upper, labels = eq23_dual_constraints(classes, windows_c, times, origin)
    col_lower, col_upper = eq24_nonnegativity(len(classes), len(times))
    n_y, n_rows = len(classes), len(row_upper)
    n_cols = n_y + len(times)
    return CanonicalModel(
        name=f"hindsight_dual[{instance.name or 'instance'}]",
        c=c,
        offset=offset,
        A=sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, n_cols)),
        row_lower=row_lower,
        row_upper=row_upper,
        col_lower=col_lower,
        col_upper=col_upper,
        integer=np.zeros(n_cols, dtype=bool),
        row_blocks=(Block("eq23_dual", 0, n_rows, labels),),
        col_blocks=(Block("y", 0, n_y, {"class": np.arange(n_y)}), Block("lambda", n_y, n_cols, {"t": times})),
    )
