"""The hindsight-optimal integer program (1)–(4) of Jaillet et al. (J §3).

Variables ``x[c, k]`` count how many requests of *class* ``c`` start at step ``k``,
where a class groups requests with identical ``(a_i, s_i, o_i)``. With singleton
classes this is exactly J's ``x_{i,k} ∈ {0, 1}``; aggregating identical requests into
one integer variable per step is exact (identical requests are interchangeable, so any
integer solution is realised by assigning the class's requests to its starts in any
order) and removes the symmetry between them that otherwise blows up branching.
The LP relaxation is unchanged by aggregation (average any fractional solution over
the permutations of each class).

Semantics (DESIGN §1): a request starting at ``k`` uses ``s_i + (t − k)`` tokens at
``t = k+1 … k+o_i`` and completes at ``k + o_i``. The paper's objective (1) is
``Σ_i (Σ_k k·x_{i,k} + o_i − a_i) = TEL``.

Horizon and windows (the paper's printed ``T̄ = Σ (a_i + o_i)`` bounds start
variables but not the memory rows after ``T̄``, see DIGEST I-8; we fix both):

* :func:`completion_horizon` — ``T_c = max_i a_i + Σ_i o_i`` bounds the makespan of
  some optimal schedule (proof in its docstring). Starts are limited to
  ``k <= T_c − o_i`` and memory rows (3) are written for every ``t = 1 … T_c``, so every
  time at which a request can hold memory has a row.
* :func:`start_windows` — given the TEL ``U`` of any feasible schedule, every optimal
  schedule has each wait ``k_i − a_i <= U − Σ_j o_j`` (proof in its docstring).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from llmopt.instance import Instance
from llmopt.model import CanonicalModel

__all__ = [
    "RequestClass",
    "StartWindows",
    "completion_horizon",
    "start_windows",
    "request_classes",
    "formulate",
    "encode_starts",
    "decode_starts",
]


@dataclass(frozen=True)
class RequestClass:
    """Requests with identical ``(arrival, prompt, output)``; ``ids`` in instance order."""

    arrival: int
    prompt: int
    output: int
    ids: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class StartWindows:
    """Allowed start steps ``lo[i] <= k <= hi[i]`` per request (instance order).

    ``horizon`` is the last time step that gets a memory row (3). Every window must
    provably contain the start of some optimal schedule — the functions below
    produce only such windows.
    """

    lo: tuple[int, ...]
    hi: tuple[int, ...]
    horizon: int
    reason: str

    def __post_init__(self) -> None:
        if len(self.lo) != len(self.hi):
            raise ValueError("lo and hi must have the same length")
        for i, (a, b) in enumerate(zip(self.lo, self.hi)):
            if a > b:
                raise ValueError(f"empty start window for request #{i}: [{a}, {b}]")


def completion_horizon(instance: Instance) -> int:
    """Return ``T_c = max_i a_i + Σ_i o_i``, a makespan bound of some optimal schedule.

    Proof. Take an optimal schedule and suppose some step ``t >= max_i a_i`` before
    its makespan has nothing in process. Every request started before ``t`` has then
    completed by ``t``. Shift every request starting after ``t`` earlier by
    ``d = (first start after t) − t``: memory at each time ``τ`` equals the old memory
    at ``τ + d`` (the earlier requests hold nothing after ``t``), arrivals still hold
    because ``t >= max a``, and TEL drops by ``d`` per shifted request — contradicting
    optimality. So in every optimal schedule each step of ``[max a, C_max)`` processes
    at least one request, and a request is in process for ``o_i`` steps, hence
    ``C_max <= max a + Σ o``. ∎

    This is never larger than the paper's ``T̄ = Σ_i (a_i + o_i)``.
    """
    if instance.n == 0:
        return 0
    return max(r.arrival for r in instance.requests) + instance.total_output


def start_windows(instance: Instance, upper_bound_tel: int | None = None) -> StartWindows:
    """Per-request start windows that contain every optimal schedule's starts.

    Parameters
    ----------
    instance : Instance
    upper_bound_tel : int, optional
        TEL of any feasible schedule (e.g. MC-SF's). Without it, only the horizon
        limits the windows.

    Notes
    -----
    Proof of the window. Let ``U`` be the TEL of a feasible schedule and ``W = U − Σ_j o_j``.
    In an optimal schedule every request waits ``w_i = k_i − a_i >= 0`` and
    ``TEL_OPT = Σ_j o_j + Σ_j w_j <= U``, so ``w_i <= Σ_j w_j <= W`` for every ``i``.
    Combined with :func:`completion_horizon` (the window of a request in an optimal
    schedule also satisfies ``k_i + o_i <= T_c``): ``a_i <= k_i <= min(a_i + W, T_c − o_i)``.
    Both restrictions hold simultaneously for an optimal schedule with minimum makespan
    among optimal ones, so the restricted IP has the same optimum. ∎
    """
    T_c = completion_horizon(instance)
    W = None if upper_bound_tel is None else int(upper_bound_tel) - instance.total_output
    if W is not None and W < 0:
        raise ValueError(f"upper_bound_tel={upper_bound_tel} is below Σ o = {instance.total_output}")
    lo, hi = [], []
    for r in instance.requests:
        top = T_c - r.output
        if W is not None:
            top = min(top, r.arrival + W)
        lo.append(r.arrival)
        hi.append(top)
    horizon = max((h + r.output for h, r in zip(hi, instance.requests)), default=0)
    reason = f"T_c={T_c}" + ("" if W is None else f", wait<=U-Σo={W}")
    return StartWindows(tuple(lo), tuple(hi), horizon, reason)


def request_classes(instance: Instance, aggregate: bool = True) -> list[RequestClass]:
    """Group identical requests (same arrival, prompt and output) into classes."""
    if not aggregate:
        return [RequestClass(r.arrival, r.prompt, r.output, (r.id,)) for r in instance.requests]
    groups: dict[tuple[int, int, int], list[str]] = {}
    for r in instance.requests:
        groups.setdefault((r.arrival, r.prompt, r.output), []).append(r.id)
    return [RequestClass(a, s, o, tuple(ids)) for (a, s, o), ids in groups.items()]


def class_windows(
    instance: Instance, windows: StartWindows, classes: list[RequestClass]
) -> list[tuple[int, int]]:
    """Start window ``(lo, hi)`` of each class: the hull of its requests' windows.

    The windows of identical requests are identical when they come from
    :func:`start_windows`. Otherwise the hull still contains every request's window (so an
    optimal schedule stays inside) and never admits a start before the common arrival,
    whereas an intersection could cut the optimum off."""
    if len(windows.lo) != instance.n:
        raise ValueError("windows do not match the instance")
    out = []
    for cl in classes:
        lo = min(windows.lo[instance.position(i)] for i in cl.ids)
        hi = max(windows.hi[instance.position(i)] for i in cl.ids)
        out.append((lo, hi))
    return out


# --- one function per part of the paper's model --------------------------------------


def eq1_objective(classes: list[RequestClass], col_class: np.ndarray, col_k: np.ndarray):
    """(1): ``min Σ_i Σ_k k·x_{i,k} + Σ_i (o_i − a_i)``; returns ``(c, offset)``."""
    c = col_k.astype(float)
    offset = float(sum(cl.size * (cl.output - cl.arrival) for cl in classes))
    return c, offset


def eq2_assignment(classes: list[RequestClass], col_class: np.ndarray):
    """(2): every request starts exactly once: ``Σ_k x_{c,k} = |c|`` per class."""
    n_cols = len(col_class)
    rows = col_class
    cols = np.arange(n_cols)
    vals = np.ones(n_cols)
    rhs = np.array([cl.size for cl in classes], dtype=float)
    names = [f"eq2_assignment[{cl.ids[0]}{'..' if cl.size > 1 else ''}]" for cl in classes]
    return (rows, cols, vals), rhs, rhs, names


def eq3_memory(classes: list[RequestClass], col_class: np.ndarray, col_k: np.ndarray, M: int, horizon: int):
    """(3): ``Σ_i Σ_{k=max(a_i, t−o_i)}^{t−1} (s_i + t − k)·x_{i,k} <= M`` for ``t = 1 … horizon``.

    A start at ``k`` contributes ``s_i + j`` to row ``t = k + j`` for ``j = 1 … o_i``.
    Rows without any term are omitted (they are trivially satisfied).
    """
    outputs = np.array([cl.output for cl in classes], dtype=np.int64)[col_class]
    prompts = np.array([cl.prompt for cl in classes], dtype=np.int64)[col_class]
    reps = outputs
    col_idx = np.repeat(np.arange(len(col_class)), reps)
    # j = 1..o for each column, vectorised
    starts = np.cumsum(reps) - reps
    j = np.arange(int(reps.sum())) - np.repeat(starts, reps) + 1
    t = col_k[col_idx] + j
    vals = (prompts[col_idx] + j).astype(float)
    if t.size and t.max() > horizon:
        raise ValueError("a start window reaches past the horizon; the memory rows would not cover it")
    used_t = np.unique(t)
    row_of_t = np.full(horizon + 1, -1, dtype=np.int64)
    row_of_t[used_t] = np.arange(len(used_t))
    rows = row_of_t[t]
    upper = np.full(len(used_t), float(M))
    lower = np.full(len(used_t), -np.inf)
    names = [f"eq3_memory[t={int(tt)}]" for tt in used_t]
    return (rows, col_idx, vals), lower, upper, names


def eq4_integrality(classes: list[RequestClass], col_class: np.ndarray):
    """(4): ``x`` integral; with classes, ``x_{c,k} ∈ {0, …, |c|}``."""
    upper = np.array([cl.size for cl in classes], dtype=float)[col_class]
    return np.ones(len(col_class), dtype=bool), np.zeros(len(col_class)), upper


# --- assembly --------------------------------------------------------------------------


def formulate(
    instance: Instance,
    windows: StartWindows | None = None,
    *,
    aggregate: bool = True,
) -> CanonicalModel:
    """Build the hindsight IP (1)–(4) as a :class:`CanonicalModel`.

    Parameters
    ----------
    instance : Instance
    windows : StartWindows, optional
        Start windows; default :func:`start_windows` without an upper bound.
    aggregate : bool
        Merge identical requests into one integer variable per start step (exact; see
        the module docstring). ``False`` gives the paper's binary model verbatim.

    Returns
    -------
    CanonicalModel
        With ``decode`` mapping a solution to ``{request id: start step}``. Use
        :meth:`CanonicalModel.relax` for the LP relaxation.
    """
    if windows is None:
        windows = start_windows(instance)
    classes = request_classes(instance, aggregate)
    col_class_l: list[np.ndarray] = []
    col_k_l: list[np.ndarray] = []
    for ci, (lo, hi) in enumerate(class_windows(instance, windows, classes)):
        ks = np.arange(lo, hi + 1)
        col_class_l.append(np.full(len(ks), ci))
        col_k_l.append(ks)
    col_class = np.concatenate(col_class_l) if col_class_l else np.zeros(0, dtype=np.int64)
    col_k = np.concatenate(col_k_l) if col_k_l else np.zeros(0, dtype=np.int64)

    c, offset = eq1_objective(classes, col_class, col_k)
    (r2, c2, v2), lo2, up2, n2 = eq2_assignment(classes, col_class)
    (r3, c3, v3), lo3, up3, n3 = eq3_memory(classes, col_class, col_k, instance.M, windows.horizon)
    integer, col_lower, col_upper = eq4_integrality(classes, col_class)

    n_rows = len(n2) + len(n3)
    A = sp.csr_matrix(
        (np.concatenate([v2, v3]), (np.concatenate([r2, r3 + len(n2)]), np.concatenate([c2, c3]))),
        shape=(n_rows, len(col_class)),
    )
    col_names = tuple(f"x[{classes[ci].ids[0]},{k}]" for ci, k in zip(col_class, col_k))
    layout = {"classes": classes, "col_class": col_class, "col_k": col_k}

    def decode(x: np.ndarray) -> dict[str, int]:
        return decode_starts(layout, x)

    return CanonicalModel(
        name=f"hindsight_ip[{instance.name or 'instance'}]",
        c=c,
        offset=offset,
        A=A,
        row_lower=np.concatenate([lo2, lo3]),
        row_upper=np.concatenate([up2, up3]),
        col_lower=col_lower,
        col_upper=col_upper,
        integer=integer,
        col_names=col_names,
        row_names=tuple(n2 + n3),
        decode=decode,
        meta={"layout": layout, "horizon": windows.horizon, "windows": windows.reason,
              "classes": len(classes), "M": instance.M},
    )


def decode_starts(layout: Mapping, x: np.ndarray, tol: float = 1e-3) -> dict[str, int]:
    """Map an integral solution to ``{request id: start step}``.

    Values are rounded; solvers accept integrality within their own tolerance (Gurobi's
    default is 1e-5), and the rounded schedule is what the checker verifies. Within a
    class, requests are assigned to the class's starts in increasing order.
    """
    classes: list[RequestClass] = layout["classes"]
    col_class, col_k = layout["col_class"], layout["col_k"]
    counts = np.round(x).astype(int)
    if np.max(np.abs(x - counts), initial=0.0) > tol:
        raise ValueError("solution is not integral; cannot decode start times")
    per_class: list[list[int]] = [[] for _ in classes]
    for j in np.flatnonzero(counts):
        per_class[col_class[j]].extend([int(col_k[j])] * int(counts[j]))
    starts: dict[str, int] = {}
    for cl, ks in zip(classes, per_class):
        if len(ks) != cl.size:
            raise ValueError(f"class of {cl.ids[0]!r}: {len(ks)} starts for {cl.size} requests")
        for rid, k in zip(cl.ids, sorted(ks)):
            starts[rid] = k
    return starts


def encode_starts(model: CanonicalModel, starts: Mapping[str, int]) -> np.ndarray:
    """Encode a schedule ``{request id: start}`` as a column vector of ``model``.

    Raises
    ------
    ValueError
        If a start lies outside the model's start window (no such column).
    """
    layout = model.meta["layout"]
    classes: list[RequestClass] = layout["classes"]
    col_class, col_k = layout["col_class"], layout["col_k"]
    col_of = {(int(ci), int(k)): j for j, (ci, k) in enumerate(zip(col_class, col_k))}
    x = np.zeros(model.n_cols)
    for ci, cl in enumerate(classes):
        for rid in cl.ids:
            k = int(starts[rid])
            j = col_of.get((ci, k))
            if j is None:
                raise ValueError(f"request {rid!r}: start {k} is outside the model's start window")
            x[j] += 1
    return x
