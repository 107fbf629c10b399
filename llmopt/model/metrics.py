"""Per-request metrics of a schedule, as users of serving simulators read them.

Latency (arrival to completion), and for continuous-time schedules the time to first token
(TTFT) and the mean time between tokens (TBT), with nearest-rank percentiles. Pure Python:
``llmopt simulate`` prints these on its hot path, where NumPy is not loaded.

Definitions (DESIGN §1: a run started at ``k`` produces its tokens at ``k+1 … k+o``):

* discrete time: request ``i`` started (finally) at step ``k_i`` completes at ``c_i = k_i + o_i``;
  latency ``c_i − a_i`` (TEL is their sum);
* continuous time: iteration ``k`` runs from ``batch_start[k]`` for ``batch_duration[k]`` s; the
  final run started at iteration ``k`` produces its first token at the end of iteration ``k``
  and its last at the end of iteration ``k + o − 1`` (the completion). TTFT is measured to the
  first token of the *final* run: an evicted run's tokens are thrown away and recomputed
  (``tokens_lost``), so they are not part of the answer the user receives. Mean TBT is
  ``(completion − first token) / (o − 1)``, ``None`` for a one-token output.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the timed schedule holds NumPy arrays; a discrete run must not import NumPy
    from llmopt.model.instance import Instance
    from llmopt.model.schedule import Schedule
    from llmopt.model.timed_instance import TimedInstance
    from llmopt.model.timed_schedule import TimedSchedule

__all__ = ["Percentiles", "percentiles", "request_rows", "timed_request_rows", "BatchSizes", "batch_sizes",
           "cluster_request_rows", "run_summary"]


@dataclass(frozen=True)
class Percentiles:
    """Mean and nearest-rank percentiles of a sample; every field ``None`` for an empty one."""

    n: int
    mean: float | None
    p50: float | None
    p90: float | None
    p99: float | None
    max: float | None


def percentiles(values: Iterable[float | None]) -> Percentiles:
    """Mean, p50, p90, p99 and max of ``values`` (``None`` entries skipped).

    The ``q``-th percentile is the nearest-rank one: the ``ceil(q/100 · n)``-th smallest value,
    so it is always one of the values (p50 of ``1, 2, 3, 4`` is 2).
    """
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return Percentiles(0, None, None, None, None, None)

    def rank(q: float) -> float:
        return xs[max(1, math.ceil(q / 100 * len(xs))) - 1]

    return Percentiles(len(xs), math.fsum(xs) / len(xs), rank(50), rank(90), rank(99), xs[-1])


def _evictions_per_request(evictions: Sequence[Any]) -> Counter[str]:
    return Counter(e.id for e in evictions)


def request_rows(instance: Instance, schedule: Schedule) -> list[dict[str, Any]]:
    """One row per request of a discrete-time schedule, in start order (ties: instance order).

    Columns: ``id, arrival, prompt, output, start, completion, latency, evictions``.
    """
    evicted = _evictions_per_request(schedule.evictions)
    rows = []
    for r in sorted(instance.requests, key=lambda r: (schedule.starts[r.id], instance.position(r.id))):
        k = schedule.starts[r.id]
        rows.append({"id": r.id, "arrival": r.arrival, "prompt": r.prompt, "output": r.output, "start": k,
                     "completion": k + r.output, "latency": k + r.output - r.arrival, "evictions": evicted[r.id]})
    return rows


def timed_request_rows(instance: TimedInstance, schedule: TimedSchedule) -> list[dict[str, Any]]:
    """One row per completed request of a continuous-time schedule, in start order.

    Columns: ``id, arrival_s, prompt, output, start_iteration, ttft_s, mean_tbt_s, completion_s,
    latency_s, evictions`` (seconds; ``mean_tbt_s`` is ``None`` for a one-token output).
    """
    evicted = _evictions_per_request(schedule.evictions)
    ends = [float(b + d) for b, d in zip(schedule.batch_start.tolist(), schedule.batch_duration.tolist())]
    order = {r.id: i for i, r in enumerate(instance.requests)}
    rows = []
    for r in sorted((r for r in instance.requests if r.id in schedule.completions),
                    key=lambda r: (schedule.starts[r.id], order[r.id])):
        k = schedule.starts[r.id]
        first = ends[k]
        done = schedule.completions[r.id]
        rows.append({"id": r.id, "arrival_s": r.arrival, "prompt": r.prompt, "output": r.output,
                     "start_iteration": k, "ttft_s": first - r.arrival,
                     "mean_tbt_s": (done - first) / (r.output - 1) if r.output > 1 else None,
                     "completion_s": done, "latency_s": done - r.arrival, "evictions": evicted[r.id]})
    return rows


@dataclass(frozen=True)
class BatchSizes:
    """Distribution of the number of requests per batch over the batches of a run.

    A batch is one step (discrete time) or one iteration (continuous time) in which at least one run
    produced a token; aborted runs count in the batches they were in. Percentiles are nearest-rank, as
    in :func:`percentiles`; every field but ``histogram`` is ``None`` for a run without batches.

    Attributes
    ----------
    batches : int
    min, mean, p50, p90, p99, max : float or None
    histogram : dict of int to int
        Requests per batch → number of batches, in increasing size.
    """

    batches: int
    min: int | None
    mean: float | None
    p50: int | None
    p90: int | None
    p99: int | None
    max: int | None
    histogram: dict[int, int]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (histogram keys as strings)."""
        return {"batches": self.batches, "min": self.min, "mean": self.mean, "p50": self.p50, "p90": self.p90,
                "p99": self.p99, "max": self.max, "histogram": {str(k): v for k, v in self.histogram.items()}}


def _runs(schedule: Any, outputs: dict[str, int]) -> list[tuple[int, int]]:
    """``[first, end)`` batch indices of every run: the completed run of each started request (its ``o``
    batches from its start) and every aborted one (from ``t − tokens_lost`` to the eviction ``t``)."""
    done = getattr(schedule, "completions", None)  # a partial timed record: only completed runs count
    runs = [(k, k + outputs[rid]) for rid, k in schedule.starts.items() if done is None or rid in done]
    runs += [(e.t - e.tokens_lost, e.t) for e in schedule.evictions if e.tokens_lost > 0]
    return runs


def batch_sizes(schedules: Sequence[Any], outputs: dict[str, int]) -> BatchSizes:
    """Requests per batch, pooled over the batches of ``schedules`` (one per worker).

    Parameters
    ----------
    schedules : sequence of Schedule or TimedSchedule
        One worker's schedule each (a single-worker run is a sequence of one).
    outputs : dict
        Request id → output length ``o`` (the batches a completed run spans).

    Returns
    -------
    BatchSizes
        Computed by a sweep over run boundaries, so an instance with timestamp arrivals (long idle gaps)
        costs ``O(runs log runs)``, never one entry per step.
    """
    hist: Counter[int] = Counter()
    for sched in schedules:
        delta: Counter[int] = Counter()
        for first, end in _runs(sched, outputs):
            if end > first:
                delta[first] += 1
                delta[end] -= 1
        for t, _rid, c in getattr(sched, "chunks", ()):  # a partial prefill chunk is a request of its batch
            if c:
                delta[t] += 1
                delta[t + 1] -= 1
        size, prev = 0, None
        for b in sorted(delta):
            if prev is not None and size > 0:
                hist[size] += b - prev
            size += delta[b]
            prev = b
    total = sum(hist.values())
    if not total:
        return BatchSizes(0, None, None, None, None, None, None, {})
    sizes = sorted(hist)

    def rank(q: float) -> int:
        want, seen = max(1, math.ceil(q / 100 * total)), 0
        for s in sizes:
            seen += hist[s]
            if seen >= want:
                return s
        return sizes[-1]  # pragma: no cover - seen reaches total

    mean = math.fsum(s * c for s, c in hist.items()) / total
    return BatchSizes(total, sizes[0], mean, rank(50), rank(90), rank(99), sizes[-1], {s: hist[s] for s in sizes})


def cluster_request_rows(instance: Instance | TimedInstance, schedules: Sequence[Any]) -> list[dict[str, Any]]:
    """Per-request rows (:func:`request_rows` or :func:`timed_request_rows`) of a run whose requests are
    split over several workers' schedules, each row with its ``worker``; in worker, then start order."""
    from llmopt.model.instance import Instance

    rows: list[dict[str, Any]] = []
    for w, sched in enumerate(schedules):
        if isinstance(instance, Instance):
            mine = [r for r in instance.requests if r.id in sched.starts]
            evicted = _evictions_per_request(sched.evictions)
            order = {r.id: i for i, r in enumerate(instance.requests)}
            part = [{"id": r.id, "arrival": r.arrival, "prompt": r.prompt, "output": r.output,
                     "start": sched.starts[r.id], "completion": sched.starts[r.id] + r.output,
                     "latency": sched.starts[r.id] + r.output - r.arrival, "evictions": evicted[r.id]}
                    for r in sorted(mine, key=lambda r: (sched.starts[r.id], order[r.id]))]
        else:
            part = timed_request_rows(instance, sched)
        rows += [{**row, "worker": w} for row in part]
    return rows


def _pct(p: Percentiles) -> dict[str, Any]:
    return {"n": p.n, "mean": p.mean, "p50": p.p50, "p90": p.p90, "p99": p.p99, "max": p.max}


def run_summary(instance: Instance | TimedInstance, schedule: Any,
                rows: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """What ``llmopt simulate`` summarises about a run, as JSON-ready numbers.

    Parameters
    ----------
    instance : Instance or TimedInstance
    schedule : Schedule, TimedSchedule or ClusterSchedule
    rows : sequence of dict, optional
        The run's per-request rows if the caller has them (:func:`request_rows`,
        :func:`timed_request_rows` or :func:`cluster_request_rows`); computed otherwise.

    Returns
    -------
    dict
        ``latency`` (steps or seconds), in continuous time ``ttft`` and ``tbt`` (mean time between
        tokens per request), each ``{n, mean, p50, p90, p99, max}``; ``throughput``: completed
        requests and delivered output tokens per second (per step in discrete time) over the span from
        the first arrival to the end of the last batch (``span``); ``batch_size``: :class:`BatchSizes`
        as a dict.
    """
    from llmopt.model.instance import Instance

    schedules = list(schedule.workers) if hasattr(schedule, "workers") else [schedule]
    timed = not isinstance(instance, Instance)
    if rows is None:
        rows = cluster_request_rows(instance, schedules)
    outputs = {r.id: r.output for r in instance.requests}
    first = min((r.arrival for r in instance.requests), default=0)
    span = max((s.makespan for s in schedules), default=first) - first
    tokens = sum(row["output"] for row in rows)
    unit = "s" if timed else "step"
    out: dict[str, Any] = {"latency": _pct(percentiles(row["latency_s" if timed else "latency"] for row in rows))}
    if timed:
        out["ttft"] = _pct(percentiles(row["ttft_s"] for row in rows))
        out["tbt"] = _pct(percentiles(row["mean_tbt_s"] for row in rows))
    out["throughput"] = {"span": span, "completed": len(rows),
                         f"requests_per_{unit}": len(rows) / span if span > 0 else None,
                         f"tokens_per_{unit}": tokens / span if span > 0 else None}
    out["batch_size"] = batch_sizes(schedules, outputs).to_dict()
    return out
