"""The independent checker of multi-worker schedules (DESIGN §3 "Several workers", "Checker").

:func:`check_cluster_schedule` re-verifies a cluster run — ``K`` workers, each with its own KV
cache of ``M`` tokens and its own batch clock, and an assignment of every request to one worker —
from the instance alone (and, in continuous time, the cost model). Like the rest of
:mod:`llmopt.verify` it imports only :mod:`llmopt.model`: nothing from the engines, the routers or
the policies. It checks:

1. **The assignment.** Every request of the instance is assigned to exactly one worker
   ``0 … K−1``; no unknown id is assigned.
2. **Each request on exactly one worker, the one it was assigned to.** Worker ``w``'s schedule
   holds a start for exactly the requests assigned to ``w``; a request found on two workers, on a
   worker it was not assigned to, or on none is a violation, and so is an eviction on ``w`` of a
   request not assigned to ``w``.
3. **Each worker is a feasible single-worker schedule** of the requests assigned to it, verified by
   the single-worker checker itself: :func:`llmopt.verify.checker.check_schedule` in discrete time
   (starts at or after arrival, evicted runs well formed, memory ``<= M`` at every integer time,
   aborted runs included), :func:`llmopt.verify.timed.check_timed_schedule` in continuous time
   (the same in iteration units, plus every batch duration from the cost model, the worker's own
   clock — its first batch at its first arrival, an idle worker resuming only at an arrival of one
   of *its* requests — and the stalls), each with the batch limits and block size its schedule
   claims (``limits``: per worker, as for one worker) and, in continuous time, its prefill chunks.
4. **What the run claims**, when it claims it (a :class:`~llmopt.model.cluster_schedule.ClusterSchedule`
   or its JSON): each worker's TEL (discrete) and the per-request latencies must equal the
   recomputed ones.

The verified numbers — TEL / total latency, every latency, makespan — come from the
single-worker checkers' reports, never from the claim.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmopt.model.instance import Instance
from llmopt.model.timed_instance import TimedInstance

__all__ = ["ClusterCheckReport", "check_cluster_schedule"]

_MAX_LISTED = 20
_REL_TOL = 1e-9


@dataclass(frozen=True)
class ClusterCheckReport:
    """Outcome of :func:`check_cluster_schedule`.

    Attributes
    ----------
    ok : bool
    violations : tuple of str
        The first violations, each naming its worker; a last ``"... and N more"`` entry if cut.
    K : int
    tel : float or None
        Total end-to-end latency recomputed (steps, an integer, or seconds); ``None`` unless ``ok``.
    mean_latency : float or None
    latencies : mapping of str to float, or None
        Request id → recomputed latency; ``None`` unless ``ok``.
    makespan : float or None
        Latest recomputed completion (discrete) or batch end (continuous); ``None`` unless ``ok``.
    worker_reports : tuple
        Each worker's single-worker report (:class:`~llmopt.verify.checker.CheckReport` or
        :class:`~llmopt.verify.timed.TimedCheckReport`); empty if the assignment itself is broken.
    """

    ok: bool
    violations: tuple[str, ...]
    K: int
    tel: float | None = None
    mean_latency: float | None = None
    latencies: Mapping[str, float] | None = field(default=None, repr=False)
    makespan: float | None = None
    worker_reports: tuple[Any, ...] = field(default=(), repr=False)


def _as_dict(schedule: Any) -> Mapping[str, Any]:
    if isinstance(schedule, Mapping):
        return schedule
    to_dict = getattr(schedule, "to_dict", None)
    if callable(to_dict):
        return to_dict()  # type: ignore[no-any-return]
    raise TypeError(f"expected a cluster schedule or its to_dict() JSON, got {type(schedule).__name__}")


def _eviction_id(item: Any) -> Any:
    if isinstance(item, Mapping):
        return item.get("id")
    if isinstance(item, (tuple, list)) and len(item) == 3:
        return item[1]
    return getattr(item, "id", None)


def check_cluster_schedule(instance: Instance | TimedInstance, schedule: Any, cost_model: Any = None
                           ) -> ClusterCheckReport:
    """Verify a multi-worker run against ``instance`` (see the module docstring for the checks).

    Parameters
    ----------
    instance : Instance or TimedInstance
        Every worker has this instance's ``M``; the requests are split by the assignment.
    schedule : ClusterSchedule or mapping
        The run, or its :meth:`~llmopt.model.cluster_schedule.ClusterSchedule.to_dict` JSON: ``K``,
        ``assignment`` (id → worker), ``workers`` (one single-worker JSON each: ``starts``,
        ``evictions``, and in continuous time ``batch_start``, ``batch_duration``, ``stalls``).
    cost_model : CostModel, optional
        Required for a continuous-time instance (batch durations are recomputed from it).

    Returns
    -------
    ClusterCheckReport
    """
    data = _as_dict(schedule)
    violations: list[str] = []
    timed = isinstance(instance, TimedInstance)
    K = data.get("K")
    workers = data.get("workers")
    assignment = data.get("assignment")
    if isinstance(K, bool) or not isinstance(K, int) or K < 1:
        return ClusterCheckReport(False, (f"K must be an integer >= 1, got {K!r}",), 0)
    if not isinstance(workers, Sequence) or len(workers) != K:
        got = len(workers) if isinstance(workers, Sequence) else type(workers).__name__
        return ClusterCheckReport(False, (f"K = {K} but the run lists {got} worker schedules",), K)
    if not isinstance(assignment, Mapping):
        return ClusterCheckReport(False, ("the run has no assignment (request id → worker)",), K)
    if timed and cost_model is None:
        return ClusterCheckReport(False, ("a continuous-time run needs the cost model to recompute batch times",), K)
    clock = data.get("clock")
    if clock is not None and clock != ("seconds" if timed else "steps"):
        violations.append(f"the run's clock is {clock!r}, but the instance is "
                          f"{'continuous-time (seconds)' if timed else 'discrete (steps)'}")

    # 1. the assignment
    known = set(instance.ids)
    for rid in assignment:
        if rid not in known:
            violations.append(f"the assignment names request {rid!r}, which is not in the instance")
    mine: list[list[Any]] = [[] for _ in range(K)]
    for r in instance.requests:
        w = assignment.get(r.id)
        if w is None:
            violations.append(f"request {r.id!r} is assigned to no worker")
        elif isinstance(w, bool) or not isinstance(w, int) or not 0 <= w < K:
            violations.append(f"request {r.id!r} is assigned to worker {w!r}; the workers are 0 … {K - 1}")
        else:
            mine[w].append(r)

    # 2. each request on exactly one worker: the one it is assigned to
    on: dict[str, list[int]] = {}
    for w, wd in enumerate(workers):
        if not isinstance(wd, Mapping) or not isinstance(wd.get("starts"), Mapping):
            violations.append(f"worker {w}: its schedule has no 'starts' mapping")
            continue
        for rid in wd["starts"]:
            on.setdefault(rid, []).append(w)
        for j, e in enumerate(wd.get("evictions") or ()):
            rid = _eviction_id(e)
            if assignment.get(rid) != w:
                violations.append(f"worker {w}: eviction #{j} is of request {rid!r}, which is assigned to worker "
                                  f"{assignment.get(rid)!r}, not {w}")
    for rid, ws in on.items():
        if len(ws) > 1:
            violations.append(f"request {rid!r} is scheduled on {len(ws)} workers ({', '.join(map(str, ws))}); "
                              "each request runs on exactly one")
        for w in ws:
            if rid in known and assignment.get(rid) != w:
                violations.append(f"worker {w} schedules request {rid!r}, which is assigned to worker "
                                  f"{assignment.get(rid)!r}")
            elif rid not in known:
                violations.append(f"worker {w} schedules request {rid!r}, which is not in the instance")
    for r in instance.requests:
        w = assignment.get(r.id)
        if isinstance(w, int) and 0 <= w < K and w not in on.get(r.id, ()):
            violations.append(f"request {r.id!r} is assigned to worker {w}, which does not schedule it")
    if violations:
        return _failed(violations, K)

    # 3. each worker: the single-worker checker on the requests assigned to it
    from llmopt.verify.checker import check_schedule

    reports: list[Any] = []
    latencies: dict[str, float] = {}
    makespan: float = 0
    for w, (wd, rs) in enumerate(zip(workers, mine)):
        starts = {rid: wd["starts"][rid] for rid in (r.id for r in rs)}
        evictions = wd.get("evictions") or ()
        if timed:
            from llmopt.verify.timed import check_timed_schedule

            sub_t = TimedInstance(instance.M, tuple(rs), name=f"{instance.name}/worker {w}",
                                  predictions_may_miss=instance.predictions_may_miss)
            rep_t = check_timed_schedule(sub_t, starts, wd.get("batch_start", ()), wd.get("batch_duration", ()),
                                         cost_model, evictions=evictions, stalls=wd.get("stalls"),
                                         limits=wd.get("limits"), chunks=wd.get("chunks"))
            reports.append(rep_t)
            if not rep_t.ok:
                violations.extend(f"worker {w}: {v}" for v in rep_t.violations)
                continue
            assert rep_t.latencies is not None
            latencies.update(rep_t.latencies)
            bs, bd = wd.get("batch_start", ()), wd.get("batch_duration", ())
            if len(bs):
                makespan = max(makespan, float(bs[-1]) + float(bd[-1]))
            claimed = wd.get("completions")
            if isinstance(claimed, Mapping):
                for r in rs:
                    c = claimed.get(r.id)
                    want = r.arrival + rep_t.latencies[r.id]
                    if c is None or not _close(float(c), want):
                        violations.append(f"worker {w}: request {r.id!r} claims completion {c!r} s, but its last "
                                          f"batch ends at {want!r} s")
        else:
            sub = Instance(instance.M, tuple(rs), name=f"{instance.name}/worker {w}",
                           predictions_may_miss=instance.predictions_may_miss)
            rep = check_schedule(sub, starts, evictions=evictions, limits=wd.get("limits"), chunks=wd.get("chunks"))
            reports.append(rep)
            if not rep.ok:
                violations.extend(f"worker {w}: {v}" for v in rep.violations)
                continue
            for r in rs:
                latencies[r.id] = int(starts[r.id]) + r.output - r.arrival
            makespan = max(makespan, rep.makespan)
            claimed_tel = wd.get("tel")
            if claimed_tel is not None and claimed_tel != rep.tel:
                violations.append(f"worker {w}: claims TEL {claimed_tel!r}, but its schedule gives {rep.tel}")

    # 4. the run's own summary, if it has one
    summary = data.get("summary")
    if not violations and isinstance(summary, Mapping) and summary.get("total_latency") is not None:
        total = math.fsum(latencies.values())
        if not _close(float(summary["total_latency"]), total):
            violations.append(f"the run claims total latency {summary['total_latency']!r}, but its schedules give "
                              f"{total!r}")
    if violations:
        return _failed(violations, K, tuple(reports))
    ordered = {r.id: latencies[r.id] for r in instance.requests}
    total_v: float = math.fsum(ordered.values()) if timed else int(sum(ordered.values()))
    mean = total_v / len(ordered) if ordered else None
    return ClusterCheckReport(True, (), K, tel=total_v, mean_latency=mean, latencies=ordered, makespan=makespan,
                              worker_reports=tuple(reports))


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _REL_TOL * max(1.0, abs(a), abs(b))


def _failed(violations: list[str], K: int, reports: tuple[Any, ...] = ()) -> ClusterCheckReport:
    listed = violations[:_MAX_LISTED]
    if len(violations) > _MAX_LISTED:
        listed.append(f"... and {len(violations) - _MAX_LISTED} more violations")
    return ClusterCheckReport(False, tuple(listed), K, worker_reports=reports)
