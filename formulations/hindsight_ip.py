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
variables but not the memory rows after ``T̄``, DIGEST I-8): the model is built over
:class:`~llmopt.model.windows.StartWindows` — by default the completion-horizon windows
``a_i <= k <= T_c − o_i`` (:func:`~llmopt.model.windows.completion_horizon`, proved there) —
and has a memory row (3) for **every** time at which some start in the windows holds
memory, so no start can escape the memory constraint.

Time origin. Times in the labels are absolute (arrivals may be Unix timestamps); the
objective is written relative to the first arrival ``a_min`` (``k − a_min`` plus a
constant), so its coefficients stay small. Memory rows exist only for times that some
window covers, so a sparse instance (two bursts years apart) costs nothing extra.

The model's blocks: columns ``x`` (labels ``class``, ``k``); rows ``eq2_assignment``
(labels ``class``, ``first`` = position of the class's first request, ``size``) and
``eq3_memory`` (label ``t``). :func:`decode_starts` and :func:`encode_starts` read
them; the LP bound reads the duals of ``eq3_memory`` by their ``t`` label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from llmopt.model.canonical import Block, CanonicalModel, ModelSize
from llmopt.model.instance import Instance
from llmopt.model.tolerance import INTEGRALITY_TOL
from llmopt.model.windows import StartWindows, completion_horizon, start_windows

__all__ = [
    "RequestClass",
    "StartWindows",
    "HindsightIP",
    "HindsightIPBinary",
    "completion_horizon",
    "start_windows",
    "request_classes",
    "class_windows",
    "formulate",
    "estimate_size",
    "encode_starts",
    "decode_starts",
]


@dataclass(frozen=True)
class RequestClass:
    """Requests with identical ``(arrival, prompt, output)``; ``positions`` in instance order."""

    arrival: int
    prompt: int
    output: int
    positions: tuple[int, ...]

    @property
    def size(self) -> int:
        return len(self.positions)


def request_classes(instance: Instance, aggregate: bool = True) -> list[RequestClass]:
    """Group identical requests (same arrival, prompt and output) into classes, in order of first appearance."""
    if not aggregate:
        return [RequestClass(r.arrival, r.prompt, r.output, (i,)) for i, r in enumerate(instance.requests)]
    groups: dict[tuple[int, int, int], list[int]] = {}
    for i, r in enumerate(instance.requests):
        groups.setdefault((r.arrival, r.prompt, r.output), []).append(i)
    return [RequestClass(a, s, o, tuple(pos)) for (a, s, o), pos in groups.items()]


def class_windows(windows: StartWindows, classes: list[RequestClass]) -> list[tuple[int, int]]:
    """Start window ``(lo, hi)`` of each class: the hull of its requests' windows.

    The windows of identical requests are identical when they come from
    :func:`~llmopt.model.windows.start_windows`. Otherwise the hull still contains every
    request's window (so an optimal schedule stays inside) and never admits a start before
    the common arrival, whereas an intersection could cut the optimum off."""
    return [
        (min(windows.lo[i] for i in cl.positions), max(windows.hi[i] for i in cl.positions))
        for cl in classes
    ]


def _columns(instance: Instance, windows: StartWindows, classes: list[RequestClass]):
    if len(windows.lo) != instance.n:
        raise ValueError(f"windows give {len(windows.lo)} start ranges for {instance.n} requests")
    cw = class_windows(windows, classes)
    counts = np.array([hi - lo + 1 for lo, hi in cw], dtype=np.int64)
    col_class = np.repeat(np.arange(len(classes), dtype=np.int64), counts)
    first = np.cumsum(counts) - counts
    lo_arr = np.array([lo for lo, _ in cw], dtype=np.int64)
    col_k = lo_arr[col_class] + (np.arange(int(counts.sum()), dtype=np.int64) - first[col_class])
    return col_class, col_k


# --- one function per part of the paper's model --------------------------------------


def eq1_objective(classes: list[RequestClass], col_k: np.ndarray, origin: int) -> tuple[np.ndarray, float]:
    """(1): ``min Σ_i Σ_k k·x_{i,k} + Σ_i (o_i − a_i)``, written as
    ``Σ (k − origin)·x + Σ_i (o_i − (a_i − origin))`` (the same value). Returns ``(c, offset)``."""
    c = (col_k - origin).astype(float)
    offset = float(sum(cl.size * (cl.output - (cl.arrival - origin)) for cl in classes))
    return c, offset


def eq2_assignment(classes: list[RequestClass], col_class: np.ndarray):
    """(2): every request starts exactly once: ``Σ_k x_{c,k} = |c|`` per class.

    Returns ``((rows, cols, vals), lower, upper, labels)``."""
    n_cols = len(col_class)
    rhs = np.array([cl.size for cl in classes], dtype=float)
    labels = {
        "class": np.arange(len(classes), dtype=np.int64),
        "first": np.array([cl.positions[0] for cl in classes], dtype=np.int64),
        "size": np.array([cl.size for cl in classes], dtype=np.int64),
    }
    return (col_class, np.arange(n_cols), np.ones(n_cols)), rhs, rhs.copy(), labels


def eq3_memory(classes: list[RequestClass], col_class: np.ndarray, col_k: np.ndarray, M: int):
    """(3): ``Σ_i Σ_{k=max(a_i, t−o_i)}^{t−1} (s_i + t − k)·x_{i,k} <= M`` for every time ``t``
    at which some start in the windows holds memory.

    A start at ``k`` contributes ``s_i + j`` to row ``t = k + j`` for ``j = 1 … o_i``. Rows
    without any term are omitted (they are trivially satisfied); every time a window can
    reach has a row, so the rows cover the horizon of the windows.
    Returns ``((rows, cols, vals), lower, upper, labels)``.
    """
    outputs = np.array([cl.output for cl in classes], dtype=np.int64)[col_class]
    prompts = np.array([cl.prompt for cl in classes], dtype=np.int64)[col_class]
    col_idx = np.repeat(np.arange(len(col_class), dtype=np.int64), outputs)
    starts = np.cumsum(outputs) - outputs
    j = np.arange(int(outputs.sum()), dtype=np.int64) - np.repeat(starts, outputs) + 1
    t = col_k[col_idx] + j
    vals = (prompts[col_idx] + j).astype(float)
    used_t, rows = np.unique(t, return_inverse=True)
    upper = np.full(len(used_t), float(M))
    lower = np.full(len(used_t), -np.inf)
    return (rows.astype(np.int64), col_idx, vals), lower, upper, {"t": used_t}


def eq4_integrality(classes: list[RequestClass], col_class: np.ndarray):
    """(4): ``x`` integral; with classes, ``x_{c,k} ∈ {0, …, |c|}``. Returns ``(integer, lower, upper)``."""
    upper = np.array([cl.size for cl in classes], dtype=float)[col_class]
    return np.ones(len(col_class), dtype=bool), np.zeros(len(col_class)), upper


# --- assembly --------------------------------------------------------------------------


def estimate_size(instance: Instance, windows: StartWindows | None = None, *, aggregate: bool = True) -> ModelSize:
    """Columns and nonzeros of :func:`formulate` exactly, rows as an upper bound — without building it.

    Used to refuse, up front and with a clear message, a model too large for the machine.
    """
    if windows is None:
        windows = start_windows(instance)
    classes = request_classes(instance, aggregate)
    widths = [hi - lo + 1 for lo, hi in class_windows(windows, classes)]
    cols = sum(widths)
    nnz = sum(w * (cl.output + 1) for w, cl in zip(widths, classes, strict=True))
    lo_min = min(windows.lo, default=0)
    # every memory row holds at least one nonzero, and there is at most one per time step
    rows = len(classes) + min(nnz - cols, max(0, windows.horizon - lo_min))
    return ModelSize(rows=rows, cols=cols, nnz=nnz)


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
        Start windows; default :func:`~llmopt.model.windows.start_windows` without an upper bound.
    aggregate : bool
        Merge identical requests into one integer variable per start step (exact; see
        the module docstring). ``False`` gives the paper's binary model verbatim.

    Returns
    -------
    CanonicalModel
        Use :func:`decode_starts` to read a schedule from a solution and
        :meth:`CanonicalModel.relax` for the LP relaxation.
    """
    if windows is None:
        windows = start_windows(instance)
    classes = request_classes(instance, aggregate)
    col_class, col_k = _columns(instance, windows, classes)
    origin = min((r.arrival for r in instance.requests), default=0)

    c, offset = eq1_objective(classes, col_k, origin)
    (r2, c2, v2), lo2, up2, lab2 = eq2_assignment(classes, col_class)
    (r3, c3, v3), lo3, up3, lab3 = eq3_memory(classes, col_class, col_k, instance.M)
    integer, col_lower, col_upper = eq4_integrality(classes, col_class)

    n2, n3 = len(classes), len(lab3["t"])
    A = sp.csr_matrix(
        (np.concatenate([v2, v3]), (np.concatenate([r2, r3 + n2]), np.concatenate([c2, c3]))),
        shape=(n2 + n3, len(col_class)),
    )
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
        row_blocks=(Block("eq2_assignment", 0, n2, lab2), Block("eq3_memory", n2, n2 + n3, lab3)),
        col_blocks=(Block("x", 0, len(col_class), {"class": col_class, "k": col_k}),),
    )


def _class_members(instance: Instance, model: CanonicalModel) -> list[tuple[int, ...]]:
    """Positions of the requests of each class, read from the ``eq2_assignment`` labels."""
    rows = model.rows("eq2_assignment")
    firsts, sizes = rows.labels["first"], rows.labels["size"]
    key = [(r.arrival, r.prompt, r.output) for r in instance.requests]
    groups: dict[tuple[int, int, int], list[int]] = {}
    for i, k in enumerate(key):
        groups.setdefault(k, []).append(i)
    members = []
    for first, size in zip(firsts.tolist(), sizes.tolist(), strict=True):
        group = (first,) if size == 1 else tuple(groups[key[first]])
        if len(group) != size:
            raise ValueError(f"model {model.name!r} does not match the instance (class of request #{first})")
        members.append(group)
    return members


def decode_starts(instance: Instance, model: CanonicalModel, x: np.ndarray,
                  tol: float = INTEGRALITY_TOL) -> dict[str, int]:
    """Map an integral solution of :func:`formulate` to ``{request id: start step}``.

    Values are rounded; solvers accept integrality within their own tolerance (Gurobi's
    default is 1e-5), and the rounded schedule is what the checker verifies. Within a
    class, requests are assigned to the class's starts in increasing order.
    """
    xb = model.cols("x")
    col_class, col_k = xb.labels["class"], xb.labels["k"]
    vals = np.asarray(x, dtype=float)[xb.slice]
    counts = np.round(vals).astype(np.int64)
    if np.max(np.abs(vals - counts), initial=0.0) > tol:
        raise ValueError("solution is not integral; cannot decode start times")
    members = _class_members(instance, model)
    per_class: list[list[int]] = [[] for _ in members]
    for j in np.flatnonzero(counts):
        per_class[int(col_class[j])].extend([int(col_k[j])] * int(counts[j]))
    starts: dict[str, int] = {}
    for group, ks in zip(members, per_class, strict=True):
        if len(ks) != len(group):
            rid = instance.requests[group[0]].id
            raise ValueError(f"class of {rid!r}: {len(ks)} starts for {len(group)} requests")
        for pos, k in zip(group, sorted(ks), strict=True):
            starts[instance.requests[pos].id] = k
    return starts


def encode_starts(instance: Instance, model: CanonicalModel, starts: Mapping[str, int]) -> np.ndarray:
    """Encode a schedule ``{request id: start}`` as a column vector of :func:`formulate`'s model.

    Raises
    ------
    ValueError
        If a start lies outside the model's start window (no such column).
    """
    xb = model.cols("x")
    col_of = {(int(ci), int(k)): j for j, (ci, k) in
              enumerate(zip(xb.labels["class"].tolist(), xb.labels["k"].tolist(), strict=True))}
    x = np.zeros(model.n_cols)
    for ci, group in enumerate(_class_members(instance, model)):
        for pos in group:
            rid = instance.requests[pos].id
            k = int(starts[rid])
            j = col_of.get((ci, k))
            if j is None:
                raise ValueError(f"request {rid!r}: start {k} is outside the model's start window")
            x[xb.start + j] += 1
    return x


class HindsightIP:
    """The J (1)–(4) formulation as a pipeline stage (protocol: :class:`llmopt.formulations.Formulation`).

    Parameters
    ----------
    aggregate : bool
        Merge identical requests (exact; default).
    """

    name = "hindsight-ip"
    exact = True

    def __init__(self, aggregate: bool = True) -> None:
        self.aggregate = aggregate

    def estimate(self, instance: Instance, windows: StartWindows) -> ModelSize:
        return estimate_size(instance, windows, aggregate=self.aggregate)

    def build(self, instance: Instance, windows: StartWindows) -> CanonicalModel:
        return formulate(instance, windows, aggregate=self.aggregate)

    def decode(self, instance: Instance, model: CanonicalModel, x: np.ndarray) -> dict[str, int]:
        return decode_starts(instance, model, x)

    def encode(self, instance: Instance, model: CanonicalModel, starts: Mapping[str, int]) -> np.ndarray:
        return encode_starts(instance, model, starts)

    def describe(self, instance: Instance, model: CanonicalModel) -> dict[str, int]:
        """Facts for reports: the number of classes of identical requests."""
        return {"classes": len(model.rows("eq2_assignment"))}


class HindsightIPBinary(HindsightIP):
    """J (1)–(4) verbatim: one binary per request and start (no aggregation of identical requests)."""

    name = "hindsight-ip-binary"

    def __init__(self) -> None:
        super().__init__(aggregate=False)


class HindsightIPZones(HindsightIP):
    """J (1)–(4) plus the peak-zone rows of :mod:`llmopt.formulations.zones` (one clique row per time step).

    Exact: the zone rows hold in every feasible schedule (theorem and proof in :mod:`llmopt.formulations.zones`),
    so they remove no feasible schedule and the model's optimum over valid windows is still OPT;
    its LP relaxation is the ``zone-lp`` bound's, which is ``>=`` the plain LP relaxation. On
    AM1 n = 20, M = 40 (seed 0) HiGHS proved OPT = 1169 with these rows in 167 s of IP, where it had
    not closed the plain model in 600 s (bound 1144): ``results/jaillet/opt-frontier/README.md``.
    """

    name = "hindsight-ip-zones"

    def estimate(self, instance: Instance, windows: StartWindows) -> ModelSize:
        from llmopt.formulations.zones import zone_model_size

        return zone_model_size(instance, estimate_size(instance, windows))

    def build(self, instance: Instance, windows: StartWindows) -> CanonicalModel:
        from llmopt.formulations.zones import with_zone_rows

        return with_zone_rows(formulate(instance, windows, aggregate=self.aggregate), instance)

    def describe(self, instance: Instance, model: CanonicalModel) -> dict[str, int]:
        """Facts for reports: classes of identical requests and zone rows."""
        return {**super().describe(instance, model), "zone_rows": len(model.rows("peak_zones"))}
