"""The hindsight IP for ``K`` identical workers: J (1)–(4) with a worker index (issue 26, item 3).

Model (DESIGN §1 on every worker, discrete time). ``K`` workers, each with its own KV cache of
``M`` tokens; every request runs on exactly one worker, non-preemptively; all workers step in
lock-step (one token per running request per step). A request that starts at ``k`` on worker
``w`` holds ``s_i + (t − k)`` tokens *of worker w* at ``t = k+1 … k+o_i`` and completes at
``k + o_i``. Objective: ``TEL = Σ_i (k_i + o_i − a_i)``, whichever worker serves ``i``.

Variables ``x[i, w, k] ∈ {0, 1}``: request ``i`` starts on worker ``w`` at step ``k``. Rows:

* ``eq1_objective`` — (1) with the worker index summed out: ``Σ_{i,w,k} k·x + Σ_i (o_i − a_i)``;
* ``eq2_assignment`` — (2): ``Σ_{w,k} x[i, w, k] = 1`` (one start on one worker per request);
* ``eq3_memory`` — (3) **per worker**: for every worker ``w`` and time ``t``,
  ``Σ_i Σ_{k<t<=k+o_i} (s_i + t − k)·x[i, w, k] <= M`` (labels ``worker``, ``t``);
* ``eq4_integrality`` — (4): ``x`` binary;
* ``sym_first_use`` — symmetry breaking (below; labels ``request``, ``worker``);
* ``peak_zones`` (optional, ``zones=True``) — the peak-zone rows of :mod:`llmopt.formulations.zones`
  per worker (:func:`peak_zones_per_worker`, proof there): valid, so they keep every feasible
  schedule, and they raise the LP relaxation where many requests have ``s_i + o_i >= ⌈M/2⌉``.

**Decomposition.** For a fixed assignment ``w(i)`` the rows of different workers share no
column, and the objective is a sum over workers; so the K-worker problem splits into ``K``
single-worker problems (requests independent across workers, each worker's clock the common
step), and ``OPT_K(M) = min_{assignments} Σ_w OPT_1(requests on w, M)``. Exhaustive search in
the tests uses exactly this identity (with the single-worker exhaustive search of
``tests/helpers.py``), which shares no code with this model.

**Windows.** The model is built over :class:`~llmopt.model.windows.StartWindows`; the windows of
:func:`~llmopt.model.windows.start_windows` stay valid for ``K`` workers with ``U`` the TEL of a
*K-worker* schedule. Proof. Take an optimal K-worker schedule. Each worker's sub-schedule is
optimal for its sub-instance (else replacing it would lower the total), so it may be replaced
by an optimal sub-schedule of minimum makespan among optimal ones, which by
:func:`~llmopt.model.windows.completion_horizon` (applied to the sub-instance) completes by
``max_{i on w} a_i + Σ_{i on w} o_i <= T_c = max_i a_i + Σ_i o_i``. The result is still optimal
and every ``k_i <= T_c − o_i``; its total wait is ``OPT_K − Σ o <= U − Σ o``, and waits are
``>= 0``, so each ``k_i <= a_i + U − Σ o``. ∎

**Symmetry breaking.** Workers are identical, so relabelling them maps schedules to schedules of
the same TEL. Two rules, with requests in instance order ``0 … n−1``:

* columns ``x[i, w, ·]`` exist only for ``w <= min(i, K − 1)`` (request ``i`` never opens a
  worker numbered above ``i``);
* ``sym_first_use``: for ``i >= 1`` and ``1 <= w <= min(i, K − 1)``,
  ``Σ_k x[i, w, k] <= Σ_{j<i, w−1<=j} Σ_k x[j, w−1, k]`` (a request may use worker ``w >= 1``
  only if some earlier request uses worker ``w − 1``).

*Both keep an optimum.* Take any optimal schedule and relabel its workers in order of their
smallest request index: the worker holding request 0 becomes 0, the worker of the first request
not on worker 0 becomes 1, and so on (empty workers get the remaining labels). Let ``j_w`` be the
smallest request on worker ``w``; then ``j_0 < j_1 < …``, so ``j_w >= w``. If request ``i`` is on
worker ``w`` then ``j_w <= i``, hence ``w <= j_w <= i`` (first rule), and for ``w >= 1``,
``j_{w−1} < j_w <= i`` is an earlier request on worker ``w − 1`` (second rule). Relabelling keeps
feasibility (each worker's sub-schedule is untouched) and TEL, so the relabelled schedule is
optimal and satisfies both rules. ∎ The *condition* the proof needs is that both rules use the
same order of requests and the same order of workers, and that they constrain nothing the
relabelling does not guarantee: allowing only ``w <= i − 1`` (requests 0 and 1 forced together), or
comparing worker ``w`` with itself instead of ``w − 1``, removes optima — breakages the tests catch.

**Size.** One binary per request, worker (``<= min(i + 1, K)``) and start, ``K`` memory rows per
time step, and ``O(n²·K·width)`` nonzeros in the symmetry rows: for small instances only. Measured
(``results/opt/cluster-bounds/README.md``, J §5.1 at ``M = 40``, windows and MIP start from
:func:`llmopt.opt.cluster_ip.cluster_upper_bound`, HiGHS, one thread): with the zone rows, all-at-0
instances up to ``n = 16`` close in about 3 s for ``K = 1, 2, 4``; with arrivals over time ``K = 1``
stops closing in 20 s from ``n = 14`` (``K = 2`` closes ``n = 16`` in 8 s); without the zone rows
all-at-0 ``K = 1`` takes 5.5 s at ``n = 8`` (0.5 s with them). With ``K = 1`` the model is the binary single-worker IP
(``hindsight-ip-binary``) with a worker label (no symmetry rows, one column per request and start).

Without the zone rows its LP relaxation is no stronger than the single-worker LP on capacity
``K·M`` apart from the symmetry rules: averaging a solution of the pooled LP over the ``K`` workers
satisfies every per-worker memory row. The certified bounds for ``K`` workers are in
:mod:`llmopt.opt.cluster_bounds`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from llmopt.model.canonical import Block, CanonicalModel, ModelSize
from llmopt.model.instance import Instance
from llmopt.model.tolerance import INTEGRALITY_TOL
from llmopt.model.windows import StartWindows, start_windows

__all__ = [
    "ClusterIP",
    "canonical_assignment",
    "decode_cluster",
    "encode_cluster",
    "estimate_cluster_size",
    "formulate_cluster",
    "peak_zones_per_worker",
]


def _check_workers(workers: int) -> int:
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or int(workers) < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    return int(workers)


def _columns(instance: Instance, windows: StartWindows, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(request, worker, k)`` of every column: requests in order, workers ``0 … min(i, K−1)``, starts
    ``lo_i … hi_i``."""
    if len(windows.lo) != instance.n:
        raise ValueError(f"windows give {len(windows.lo)} start ranges for {instance.n} requests")
    req, wrk, ks = [], [], []
    for i in range(instance.n):
        k = np.arange(windows.lo[i], windows.hi[i] + 1, dtype=np.int64)
        for w in range(min(i, K - 1) + 1):
            req.append(np.full(len(k), i, dtype=np.int64))
            wrk.append(np.full(len(k), w, dtype=np.int64))
            ks.append(k)
    if not req:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), empty.copy()
    return np.concatenate(req), np.concatenate(wrk), np.concatenate(ks)


# --- one function per part of the model (named after the equation of J it extends) ------------


def eq1_objective(instance: Instance, col_k: np.ndarray, origin: int) -> tuple[np.ndarray, float]:
    """(1) with the worker index summed out: ``Σ_{i,w,k} (k − origin)·x + Σ_i (o_i − (a_i − origin))``."""
    c = (col_k - origin).astype(float)
    offset = float(sum(r.output - (r.arrival - origin) for r in instance.requests))
    return c, offset


def eq2_assignment(n: int, col_req: np.ndarray):
    """(2): ``Σ_{w,k} x[i, w, k] = 1`` per request. Returns ``((rows, cols, vals), lower, upper, labels)``."""
    ones = np.ones(n)
    return (col_req, np.arange(len(col_req)), np.ones(len(col_req))), ones, ones.copy(), \
        {"request": np.arange(n, dtype=np.int64)}


def eq3_memory(instance: Instance, col_req: np.ndarray, col_w: np.ndarray, col_k: np.ndarray, M: int):
    """(3) per worker: ``Σ_i Σ_{k<t<=k+o_i} (s_i + t − k)·x[i, w, k] <= M`` for every worker ``w`` and
    every time ``t`` at which some start on ``w`` holds memory.

    A start at ``k`` contributes ``s_i + j`` to worker ``w``'s row ``t = k + j``, ``j = 1 … o_i``.
    Returns ``((rows, cols, vals), lower, upper, labels)`` with labels ``worker`` and ``t``."""
    outputs = np.array([r.output for r in instance.requests], dtype=np.int64)[col_req]
    prompts = np.array([r.prompt for r in instance.requests], dtype=np.int64)[col_req]
    col_idx = np.repeat(np.arange(len(col_req), dtype=np.int64), outputs)
    first = np.cumsum(outputs) - outputs
    j = np.arange(int(outputs.sum()), dtype=np.int64) - np.repeat(first, outputs) + 1
    t = col_k[col_idx] + j
    w = col_w[col_idx]
    keys = np.stack([w, t], axis=1)
    used, rows = np.unique(keys, axis=0, return_inverse=True)
    used = used.reshape(-1, 2)
    n_rows = len(used)
    vals = (prompts[col_idx] + j).astype(float)
    return (rows.reshape(-1).astype(np.int64), col_idx, vals), np.full(n_rows, -np.inf), \
        np.full(n_rows, float(M)), {"worker": used[:, 0].copy(), "t": used[:, 1].copy()}


def eq4_integrality(n_cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(4): ``x`` binary. Returns ``(integer, lower, upper)``."""
    return np.ones(n_cols, dtype=bool), np.zeros(n_cols), np.ones(n_cols)


def sym_first_use(n: int, K: int, col_req: np.ndarray, col_w: np.ndarray):
    """Symmetry breaking: ``Σ_k x[i, w, k] − Σ_{j<i} Σ_k x[j, w−1, k] <= 0`` for ``i >= 1``,
    ``1 <= w <= min(i, K−1)`` (proof in the module docstring). Returns ``((rows, cols, vals), lower,
    upper, labels)`` with labels ``request`` and ``worker``."""
    rows, cols, vals, lab_i, lab_w = [], [], [], [], []
    by_pair: dict[tuple[int, int], np.ndarray] = {}
    order = np.lexsort((col_w, col_req))
    pairs = np.stack([col_req[order], col_w[order]], axis=1)
    if len(pairs):
        cut = np.flatnonzero(np.any(pairs[1:] != pairs[:-1], axis=1)) + 1
        for chunk in np.split(order, cut):
            by_pair[(int(col_req[chunk[0]]), int(col_w[chunk[0]]))] = chunk
    r = 0
    for i in range(1, n):
        for w in range(1, min(i, K - 1) + 1):
            own = by_pair.get((i, w), np.zeros(0, dtype=np.int64))
            earlier = [by_pair[(j, w - 1)] for j in range(w - 1, i) if (j, w - 1) in by_pair]
            prev = np.concatenate(earlier) if earlier else np.zeros(0, dtype=np.int64)
            cols += [own, prev]
            vals += [np.ones(len(own)), -np.ones(len(prev))]
            rows.append(np.full(len(own) + len(prev), r, dtype=np.int64))
            lab_i.append(i)
            lab_w.append(w)
            r += 1
    if r == 0:
        empty = np.zeros(0, dtype=np.int64)
        return (empty, empty.copy(), np.zeros(0)), np.zeros(0), np.zeros(0), {"request": empty.copy(),
                                                                               "worker": empty.copy()}
    return (np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)), np.full(r, -np.inf), np.zeros(r), \
        {"request": np.array(lab_i, dtype=np.int64), "worker": np.array(lab_w, dtype=np.int64)}


def peak_zones_per_worker(instance: Instance, col_req: np.ndarray, col_w: np.ndarray, col_k: np.ndarray,
                          split: int | None = None):
    """Optional valid rows: the peak zones of :mod:`llmopt.formulations.zones` (capacity ``M``, split ``h``)
    of the requests on one worker are disjoint, so ``Σ_{i ∈ Z} Σ_{k : τ ∈ zone_i(k)} x[i, w, k] <= 1``
    for every worker ``w`` and time ``τ``.

    Valid: a worker's part of a feasible K-worker schedule is a feasible single-worker schedule at
    ``M``, and the zone theorem's proof for a pair ``i ≠ j`` on it uses only ``p_i, p_j``, memory
    ``<= M`` on that worker and ``s_i <= σ_j`` (``σ_j`` over the whole instance's zone set, which holds
    ``i``). So the rows remove no feasible schedule and the model's optimum is unchanged.
    Returns ``((rows, cols, vals), lower, upper, labels)`` with labels ``worker`` and ``t``."""
    from llmopt.formulations.zones import peak_zones

    zones = peak_zones(instance, split)
    a = np.full(instance.n, -1, dtype=np.int64)
    b = np.zeros(instance.n, dtype=np.int64)
    for i, (ai, bi) in zones.items():
        a[i], b[i] = ai, bi
    outputs = np.array([r.output for r in instance.requests], dtype=np.int64)
    length = np.where(a[col_req] >= 0, a[col_req] + b[col_req], 0)
    cols = np.flatnonzero(length > 0)
    length = length[cols]
    col_idx = np.repeat(cols, length)
    offs = np.arange(int(length.sum()), dtype=np.int64) - np.repeat(np.cumsum(length) - length, length)
    req = col_req[col_idx]
    tau = col_k[col_idx] + outputs[req] - a[req] + 1 + offs
    keys = np.stack([col_w[col_idx], tau], axis=1)
    used, rows = np.unique(keys, axis=0, return_inverse=True)
    used = used.reshape(-1, 2)
    n_rows = len(used)
    return (rows.reshape(-1).astype(np.int64), col_idx, np.ones(len(col_idx))), np.full(n_rows, -np.inf), \
        np.ones(n_rows), {"worker": used[:, 0].copy(), "t": used[:, 1].copy()}


# --- assembly --------------------------------------------------------------------------------------


def estimate_cluster_size(instance: Instance, workers: int, windows: StartWindows | None = None, *,
                          zones: bool = False) -> ModelSize:
    """Columns and nonzeros of :func:`formulate_cluster` (rows an upper bound; with ``zones``, nonzeros an
    upper bound too: at most ``p_i`` zone entries per column, ``a_i + b_i <= 2 p_i − M <= p_i``), without
    building it."""
    K = _check_workers(workers)
    windows = windows or start_windows(instance)
    widths = [hi - lo + 1 for lo, hi in zip(windows.lo, windows.hi, strict=True)]
    per_worker = [min(i, K - 1) + 1 for i in range(instance.n)]
    cols = sum(w * c for w, c in zip(widths, per_worker, strict=True))
    nnz = sum(w * c * (r.output + 1) for w, c, r in zip(widths, per_worker, instance.requests, strict=True))
    sym_rows = sum(min(i, K - 1) for i in range(instance.n))
    prefix = np.concatenate([[0], np.cumsum(widths)]).astype(int)  # prefix[i] = Σ_{j<i} widths[j]
    sym_nnz = sum(widths[i] + int(prefix[i] - prefix[w - 1])
                  for i in range(instance.n) for w in range(1, min(i, K - 1) + 1))
    span = max(0, windows.horizon - min(windows.lo, default=0))
    zone_nnz = sum(w * c * r.peak for w, c, r in zip(widths, per_worker, instance.requests, strict=True)
                   ) if zones else 0
    return ModelSize(rows=instance.n + (2 if zones else 1) * K * span + sym_rows, cols=cols,
                     nnz=nnz + sym_nnz + zone_nnz)


def formulate_cluster(instance: Instance, workers: int, windows: StartWindows | None = None, *,
                      zones: bool = False) -> CanonicalModel:
    """Build the K-worker hindsight IP as a :class:`CanonicalModel`.

    Parameters
    ----------
    instance : Instance
        ``M`` is each worker's capacity.
    workers : int
        ``K >= 1``.
    windows : StartWindows, optional
        Start windows (valid for ``K`` workers when built from a K-worker schedule's TEL, module
        docstring); default :func:`~llmopt.model.windows.start_windows` without an upper bound.
    zones : bool
        Add the per-worker peak-zone rows (:func:`peak_zones_per_worker`, block ``peak_zones``): valid,
        so the optimum is unchanged, and a much stronger LP relaxation when many requests have
        ``s_i + o_i >= ⌈M/2⌉``.

    Returns
    -------
    CanonicalModel
        Blocks: columns ``x`` (labels ``request``, ``worker``, ``k``); rows ``eq2_assignment``,
        ``eq3_memory`` (``worker``, ``t``), ``sym_first_use`` (``request``, ``worker``).
    """
    K = _check_workers(workers)
    windows = windows or start_windows(instance)
    col_req, col_w, col_k = _columns(instance, windows, K)
    origin = min((r.arrival for r in instance.requests), default=0)
    n, n_cols = instance.n, len(col_req)

    c, offset = eq1_objective(instance, col_k, origin)
    parts = [eq2_assignment(n, col_req), eq3_memory(instance, col_req, col_w, col_k, instance.M),
             sym_first_use(n, K, col_req, col_w)]
    names = ["eq2_assignment", "eq3_memory", "sym_first_use"]
    if zones:
        parts.append(peak_zones_per_worker(instance, col_req, col_w, col_k))
        names.append("peak_zones")
    integer, col_lower, col_upper = eq4_integrality(n_cols)
    rows, cols, vals, lower, upper, blocks = [], [], [], [], [], []
    start = 0
    for name, ((r, cc, v), lo, up, labels) in zip(names, parts, strict=True):
        rows.append(r + start)
        cols.append(cc)
        vals.append(v)
        lower.append(lo)
        upper.append(up)
        blocks.append(Block(name, start, start + len(up), labels))
        start += len(up)
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(start, n_cols))
    return CanonicalModel(
        name=f"cluster_ip[K={K}, {instance.name or 'instance'}]" + ("+zones" if zones else ""),
        c=c, offset=offset, A=A,
        row_lower=np.concatenate(lower), row_upper=np.concatenate(upper),
        col_lower=col_lower, col_upper=col_upper, integer=integer,
        row_blocks=tuple(blocks),
        col_blocks=(Block("x", 0, n_cols, {"request": col_req, "worker": col_w, "k": col_k}),),
    )


def decode_cluster(instance: Instance, model: CanonicalModel, x: np.ndarray, tol: float = INTEGRALITY_TOL
                   ) -> tuple[dict[str, int], dict[str, int]]:
    """``(assignment, starts)``: worker and start step of every request, from an integral solution.

    Raises
    ------
    ValueError
        If ``x`` is not integral within ``tol`` or a request does not have exactly one start.
    """
    xb = model.cols("x")
    vals = np.asarray(x, dtype=float)[xb.slice]
    ones = np.round(vals)
    if np.max(np.abs(vals - ones), initial=0.0) > tol:
        raise ValueError("solution is not integral; cannot decode workers and starts")
    req, wrk, ks = xb.labels["request"], xb.labels["worker"], xb.labels["k"]
    assignment: dict[str, int] = {}
    starts: dict[str, int] = {}
    for j in np.flatnonzero(ones > 0.5):
        rid = instance.requests[int(req[j])].id
        if rid in starts:
            raise ValueError(f"request {rid!r} has more than one start in the solution")
        assignment[rid], starts[rid] = int(wrk[j]), int(ks[j])
    missing = [r.id for r in instance.requests if r.id not in starts]
    if missing:
        raise ValueError(f"request {missing[0]!r} has no start in the solution")
    return assignment, starts


def canonical_assignment(instance: Instance, assignment: Mapping[str, int]) -> dict[str, int]:
    """Workers relabelled in order of their smallest request (instance order): the form the symmetry
    rules of :func:`formulate_cluster` admit (proof in the module docstring)."""
    label: dict[int, int] = {}
    out = {}
    for r in instance.requests:
        w = int(assignment[r.id])
        out[r.id] = label.setdefault(w, len(label))
    return out


def encode_cluster(instance: Instance, model: CanonicalModel, assignment: Mapping[str, int],
                   starts: Mapping[str, int]) -> np.ndarray:
    """A K-worker schedule as a column vector of :func:`formulate_cluster`'s model (workers relabelled
    by :func:`canonical_assignment` first, so that it satisfies the symmetry rows).

    Raises
    ------
    ValueError
        If a start lies outside the model's windows, or the schedule uses more workers than the model.
    """
    xb = model.cols("x")
    col_of = {(int(i), int(w), int(k)): j for j, (i, w, k) in enumerate(zip(
        xb.labels["request"].tolist(), xb.labels["worker"].tolist(), xb.labels["k"].tolist(), strict=True))}
    canon = canonical_assignment(instance, assignment)
    x = np.zeros(model.n_cols)
    for i, r in enumerate(instance.requests):
        j = col_of.get((i, canon[r.id], int(starts[r.id])))
        if j is None:
            raise ValueError(f"request {r.id!r}: worker {canon[r.id]} (relabelled), start {starts[r.id]} "
                             "is not a column of the model")
        x[xb.start + j] = 1.0
    return x


class ClusterIP:
    """The K-worker hindsight IP as a formulation stage (protocol :class:`llmopt.formulations.Formulation`).

    ``build`` gives the K-worker model; ``decode`` the starts (``decode_assignment`` the workers).
    Registered as ``cluster-ip`` with ``workers = 1`` (the registry instantiates with no arguments),
    where it is an exact single-worker formulation; with ``workers = K > 1`` its optimum is
    ``OPT_K <= OPT_1``, so it declares itself not ``exact`` for the single-worker pipeline (its MIP
    bound is still a valid bound there, its decoded union schedule is verified at ``M`` like any
    other). Solve K-worker instances with :func:`llmopt.opt.cluster_ip.solve_cluster_ip`.

    Parameters
    ----------
    workers : int
        ``K >= 1``.
    zones : bool
        Add the per-worker peak-zone rows (valid; a stronger LP relaxation).
    """

    name = "cluster-ip"

    def __init__(self, workers: int = 1, zones: bool = False) -> None:
        self.workers = _check_workers(workers)
        self.zones = bool(zones)

    @property
    def exact(self) -> bool:
        """Exact as a *single-worker* formulation only for ``K = 1``."""
        return self.workers == 1

    def estimate(self, instance: Instance, windows: StartWindows) -> ModelSize:
        return estimate_cluster_size(instance, self.workers, windows, zones=self.zones)

    def build(self, instance: Instance, windows: StartWindows) -> CanonicalModel:
        return formulate_cluster(instance, self.workers, windows, zones=self.zones)

    def decode(self, instance: Instance, model: CanonicalModel, x: np.ndarray) -> dict[str, int]:
        return decode_cluster(instance, model, x)[1]

    def decode_assignment(self, instance: Instance, model: CanonicalModel, x: np.ndarray) -> dict[str, int]:
        return decode_cluster(instance, model, x)[0]

    def encode(self, instance: Instance, model: CanonicalModel, starts: Mapping[str, int]) -> np.ndarray:
        """Warm start from a single-worker schedule (every request on worker 0)."""
        return encode_cluster(instance, model, {rid: 0 for rid in starts}, starts)

    def describe(self, instance: Instance, model: CanonicalModel) -> dict[str, int]:
        return {"workers": self.workers, "symmetry_rows": len(model.rows("sym_first_use"))}
