"""Exact hindsight OPT for ``K`` identical workers on small instances (issue 26, item 3).

Pipeline: a K-worker upper-bound schedule (:func:`cluster_upper_bound`, verified) → start windows
from its TEL → the K-worker IP (:mod:`llmopt.formulations.cluster_ip`, by default with the per-worker
peak-zone rows) → solver → decode → the independent check of every worker's part
(:func:`llmopt.verify.cluster_bounds.check_worker_split`). Small instances only (the limits measured are
in :mod:`llmopt.formulations.cluster_ip`); ``max_nnz`` refuses a larger model up front.

The solver's MIP bound is a lower bound on ``OPT_K`` because the windows contain an optimal K-worker
schedule (proof in :mod:`llmopt.formulations.cluster_ip`) and the symmetry rules keep one (same
module); optimality is claimed only when that bound, rounded up, meets the verified incumbent.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmopt.model.instance import Instance
from llmopt.model.result import SolveResult, SolveStatus
from llmopt.model.tolerance import integer_lower_bound
from llmopt.model.windows import start_windows
from llmopt.verify.cluster_bounds import check_worker_split

__all__ = ["ClusterIPResult", "AssignedSchedule", "cluster_upper_bound", "solve_cluster_ip", "verified_schedule",
           "DEFAULT_CLUSTER_MAX_NNZ"]

#: Largest K-worker IP :func:`solve_cluster_ip` builds by default (nonzeros).
DEFAULT_CLUSTER_MAX_NNZ = 3_000_000


@dataclass(frozen=True)
class AssignedSchedule:
    """A verified K-worker schedule as the hindsight stages use it: worker and start of every request, its
    TEL and each worker's TEL (the engine's own multi-worker schedule is
    :class:`llmopt.model.cluster_schedule.ClusterSchedule`)."""

    assignment: Mapping[str, int]
    starts: Mapping[str, int]
    tel: int
    worker_tel: tuple[int, ...]
    source: str

    def per_worker(self, workers: int) -> tuple[dict[str, int], ...]:
        """The starts of each worker's requests, worker by worker."""
        out: tuple[dict[str, int], ...] = tuple({} for _ in range(workers))
        for rid, w in self.assignment.items():
            out[w][rid] = self.starts[rid]
        return out


def verified_schedule(instance: Instance, K: int, assignment: Mapping[str, int], starts: Mapping[str, int],
                      source: str) -> AssignedSchedule:
    """A :class:`AssignedSchedule` with the TELs the checker computes (:func:`~llmopt.verify.cluster_bounds.
    check_worker_split`); ``ValueError`` if any worker's part is infeasible."""
    report = check_worker_split(instance, K, assignment, starts)
    if not report.ok or report.tel is None:
        raise ValueError(f"{source}: K-worker schedule rejected by the checker: {report.violations[0]}")
    return AssignedSchedule(dict(assignment), dict(starts), report.tel, report.worker_tel, source)


def _worker_schedule(instance: Instance, members: list[int]) -> tuple[dict[str, int], int]:
    """MC-SF's schedule of the sub-instance ``members`` (positions) and its TEL."""
    from llmopt.engine.discrete import simulate
    from llmopt.policies import make_policy

    if not members:
        return {}, 0
    sub = Instance(instance.M, tuple(instance.requests[i] for i in members))
    sch = simulate(sub, make_policy("mc-sf"))
    return dict(sch.starts), sch.tel


def cluster_upper_bound(instance: Instance, workers: int, *, passes: int = 3) -> AssignedSchedule:
    """A good verified K-worker schedule: greedy assignment, MC-SF on every worker, then single-request moves.

    Requests in order of arrival (then larger peak first) go to the worker with the least memory-time
    *energy* ``Σ (s·o + o(o+1)/2)`` assigned so far (lowest index on ties); each worker runs MC-SF on
    its sub-instance. Then up to ``passes`` rounds of local search move one request to another
    worker when that lowers the total TEL (both workers re-simulated). Deterministic.
    """
    K = int(workers)
    if K < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    reqs = instance.requests
    order = sorted(range(len(reqs)), key=lambda i: (reqs[i].arrival, -reqs[i].peak, i))
    load = [0] * K
    groups: list[list[int]] = [[] for _ in range(K)]
    for i in order:
        w = min(range(K), key=lambda v: (load[v], v))
        groups[w].append(i)
        load[w] += reqs[i].token_steps
    sched = [_worker_schedule(instance, sorted(g)) for g in groups]
    for _ in range(passes if K > 1 else 0):
        improved = False
        for i in range(len(reqs)):
            src = next(w for w in range(K) if i in groups[w])
            for dst in range(K):
                if dst == src:
                    continue
                g_src = [j for j in groups[src] if j != i]
                g_dst = sorted(groups[dst] + [i])
                s_src, s_dst = _worker_schedule(instance, g_src), _worker_schedule(instance, g_dst)
                if s_src[1] + s_dst[1] < sched[src][1] + sched[dst][1]:
                    groups[src], groups[dst] = g_src, g_dst
                    sched[src], sched[dst] = s_src, s_dst
                    improved = True
                    break
        if not improved:
            break
    assignment = {reqs[i].id: w for w in range(K) for i in groups[w]}
    starts = {rid: k for s, _ in sched for rid, k in s.items()}
    return verified_schedule(instance, K, assignment, starts, "greedy energy + MC-SF per worker + moves")


@dataclass(frozen=True)
class ClusterIPResult:
    """Outcome of :func:`solve_cluster_ip`.

    Attributes
    ----------
    status : SolveStatus
        ``optimal`` only when the certified bound meets the verified incumbent.
    objective : int
        TEL of the best verified K-worker schedule (the IP's, or the upper bound's).
    bound : int
        Best lower bound on ``OPT_K``: the solver's MIP bound (valid over the proved windows) rounded
        up, or ``Σ o`` if larger.
    bound_certificate : str
        ``mip-bound-from-solver`` or ``sum-of-outputs``.
    gap : float
    schedule : AssignedSchedule
        The incumbent: assignment, starts, per-worker TELs, source (``ip`` or the heuristic).
    upper_bound : int
        TEL of the heuristic schedule the windows came from.
    model_stats : mapping
    runtime_s : float
    message : str
    """

    status: SolveStatus
    objective: int
    bound: int
    bound_certificate: str
    gap: float
    schedule: AssignedSchedule
    upper_bound: int
    model_stats: Mapping[str, Any] = field(default_factory=dict)
    runtime_s: float = 0.0
    message: str = ""

    @property
    def assignment(self) -> Mapping[str, int]:
        return self.schedule.assignment

    @property
    def starts(self) -> Mapping[str, int]:
        return self.schedule.starts

    def per_worker(self) -> tuple[dict[str, int], ...]:
        """Starts of each worker's requests."""
        return self.schedule.per_worker(len(self.schedule.worker_tel))


def solve_cluster_ip(
    instance: Instance,
    workers: int,
    *,
    time_limit: float | None = 60.0,
    upper_bound: AssignedSchedule | None = None,
    solver: str | None = None,
    threads: int = 1,
    max_nnz: int | None = DEFAULT_CLUSTER_MAX_NNZ,
    warm_start: bool = True,
    zones: bool = True,
) -> ClusterIPResult:
    """Solve the K-worker hindsight IP of ``instance`` (``M`` per worker) and verify the answer per worker.

    Parameters
    ----------
    instance : Instance
    workers : int
        ``K >= 1``.
    time_limit : float, optional
        Seconds for the MIP solve.
    upper_bound : AssignedSchedule, optional
        A K-worker schedule (verified again here); default :func:`cluster_upper_bound`.
    solver : str, optional
        Preferred MIP solver (default: the first available with MIP support).
    threads : int
    max_nnz : int, optional
        Larger models are not built; the result is then the upper bound with status ``not_solved``.
    warm_start : bool
        Hand the upper-bound schedule to the solver as a MIP start.
    zones : bool
        Add the per-worker peak-zone rows (valid rows: the optimum is unchanged, the solve faster where
        requests are large; :func:`llmopt.formulations.cluster_ip.peak_zones_per_worker`).

    Returns
    -------
    ClusterIPResult
    """
    from llmopt.formulations.cluster_ip import (
        decode_cluster,
        encode_cluster,
        estimate_cluster_size,
        formulate_cluster,
    )
    from llmopt.solvers import Capability, get_solver, pick_solver

    t0 = time.perf_counter()
    K = int(workers)
    ub = cluster_upper_bound(instance, K) if upper_bound is None else verified_schedule(
        instance, K, upper_bound.assignment, upper_bound.starts, upper_bound.source)
    total_output = instance.total_output
    if instance.n == 0 or ub.tel == total_output:
        return ClusterIPResult(SolveStatus.OPTIMAL, ub.tel, total_output, "sum-of-outputs", 0.0, ub, ub.tel, {},
                               time.perf_counter() - t0, "the upper bound already meets Σ o")
    windows = start_windows(instance, ub.tel)
    size = estimate_cluster_size(instance, K, windows, zones=zones)
    if max_nnz is not None and size.nnz > max_nnz:
        return _result(SolveStatus.NOT_SOLVED, ub, ub, None, total_output, {"nnz": size.nnz}, t0,
                       f"not built: the K-worker IP would have {size.describe()} (max_nnz={max_nnz:,})")
    model = formulate_cluster(instance, K, windows, zones=zones)
    stats: dict[str, Any] = {**model.stats(), "workers": K, "horizon": windows.horizon, "zones": zones}
    name = pick_solver(Capability.MIP, prefer=solver)
    if name is None:
        return _result(SolveStatus.NOT_SOLVED, ub, ub, None, total_output, stats, t0, "no available MIP solver")
    x0 = None
    if warm_start:
        try:
            x0 = encode_cluster(instance, model, ub.assignment, ub.starts)
        except ValueError:
            x0 = None  # a start outside the windows: solve without a MIP start
    res: SolveResult = get_solver(name).solve(model, time_limit=time_limit, threads=threads, warm_start=x0)
    message = f"{name}: {res.status} {res.message}".strip()
    if x0 is not None and res.status is SolveStatus.OPTIMAL and (
            res.bound is None or integer_lower_bound(res.bound) < integer_lower_bound(res.objective or 0.0)):
        # HiGHS may stop "optimal" on a MIP start while reporting its root bound (an integral objective
        # lets it prune at incumbent − 1): the bound it reports then proves nothing; solve again cold.
        left = None if time_limit is None else max(1.0, time_limit - (time.perf_counter() - t0))
        res = get_solver(name).solve(model, time_limit=left, threads=threads)
        message += f"; re-solved without the MIP start (its bound did not meet its optimum): {res.status}"
    best = ub
    if res.x is not None and res.objective is not None:
        try:
            assignment, starts = decode_cluster(instance, model, res.x)
            found = verified_schedule(instance, K, assignment, starts, "ip")
            if found.tel <= best.tel:
                best = found
        except ValueError as exc:
            message += f"; IP solution rejected: {exc}"
    return _result(res.status, best, ub, res.bound, total_output, stats, t0, message)


def _result(status: SolveStatus, best: AssignedSchedule, ub: AssignedSchedule, mip_bound: float | None,
            total_output: int, stats: Mapping[str, Any], t0: float, message: str) -> ClusterIPResult:
    bound, cert = total_output, "sum-of-outputs"
    if mip_bound is not None and integer_lower_bound(mip_bound) > bound:
        bound, cert = integer_lower_bound(mip_bound), "mip-bound-from-solver"
    if bound > best.tel:
        message += f"; solver bound {bound} above the verified incumbent {best.tel}: not used"
        bound, cert = total_output, "sum-of-outputs"
    if bound >= best.tel:
        status = SolveStatus.OPTIMAL
    elif status is SolveStatus.OPTIMAL:
        status = SolveStatus.NOT_SOLVED
        message += f"; the solver's optimum is not proved: bound {bound} < verified incumbent {best.tel}"
    gap = (best.tel - bound) / best.tel if best.tel else 0.0
    return ClusterIPResult(status, best.tel, bound, cert, gap, best, ub.tel, dict(stats),
                           time.perf_counter() - t0, message)
