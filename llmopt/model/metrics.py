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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the timed schedule holds NumPy arrays; a discrete run must not import NumPy
    from llmopt.model.instance import Instance
    from llmopt.model.schedule import Schedule
    from llmopt.model.timed_instance import TimedInstance
    from llmopt.model.timed_schedule import TimedSchedule

__all__ = ["Percentiles", "percentiles", "request_rows", "timed_request_rows"]


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
