"""Capacity planning: the smallest number of workers K whose latency meets a target (issue 26, item 4).

A *target* is a statistic of a per-request time and a limit in seconds (:class:`LatencyTarget`):
``"mean:200"``, ``"p50:30"``, ``"p90:60"``, ``"p99:120"`` on the end-to-end latency (also written
``latency_p99:120``), ``"ttft_p99:2"`` on the time to first token and ``"tbt_p50:0.1"`` on the mean
time between tokens of each request; ``=`` may stand for ``:`` (``ttft_p99=2``).
:func:`smallest_workers` searches K for one (policy, router) pair: it doubles K from ``k_min``
until the target is met (or ``k_max`` is passed), then bisects between the last K that missed and
the first that met it. Every K is one simulation (the caller's ``evaluate``), so the search costs
``O(log K*)`` simulations. Bisection assumes that more workers never make the statistic worse;
that is not a theorem for every policy and router (a router can send a request to a worse worker
when there are more of them), so every evaluated K is kept in :attr:`CapacityResult.evaluated`
and :attr:`CapacityResult.monotone` says whether the evaluated points were consistent with it.
``exhaustive=True`` evaluates every K from ``k_min`` up to the first that meets the target
instead (the answer then needs no assumption).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from llmopt.model.metrics import percentiles

__all__ = ["TARGET_STATS", "LatencyTarget", "CapacityResult", "ClusterRun", "latency_statistic", "smallest_workers",
           "run_cluster", "plan_capacity"]

_STATS = ("mean", "p50", "p90", "p99")
#: Every statistic a target can name: latency's bare, TTFT's and TBT's with their prefix.
TARGET_STATS = _STATS + tuple(f"{m}_{s}" for m in ("ttft", "tbt") for s in _STATS)
_WHAT = {"ttft": "time to first token", "tbt": "time between tokens"}


@dataclass(frozen=True)
class LatencyTarget:
    """A statistic of a per-request time and its limit in seconds (met when ``statistic <= limit``).

    Parameters
    ----------
    statistic : str
        One of :data:`TARGET_STATS`: ``mean``, ``p50``, ``p90``, ``p99`` of the end-to-end latency, or
        the same with a ``ttft_`` (time to first token) or ``tbt_`` (mean time between tokens) prefix.
    limit_s : float
        Seconds, finite and > 0.
    """

    statistic: str
    limit_s: float

    def __post_init__(self) -> None:
        if self.statistic not in TARGET_STATS:
            raise ValueError(f"latency target: statistic must be one of {', '.join(TARGET_STATS)} (latency_ is "
                             f"optional), got {self.statistic!r}")
        if not (isinstance(self.limit_s, (int, float)) and math.isfinite(self.limit_s) and self.limit_s > 0):
            raise ValueError(f"latency target: the limit must be a finite number of seconds > 0, got {self.limit_s!r}")

    @classmethod
    def parse(cls, text: str) -> LatencyTarget:
        """``"mean:200"`` → ``LatencyTarget("mean", 200.0)``, ``"ttft_p99=2"`` → ``LatencyTarget("ttft_p99",
        2.0)``, ``"latency_p99:60"`` → ``LatencyTarget("p99", 60.0)``; a clear error names what is wrong."""
        sep = ":" if ":" in str(text) else "="
        stat, sep, value = str(text).partition(sep)
        if not sep:
            raise ValueError(f"latency target {text!r}: expected STAT:SECONDS, e.g. mean:200, p99:60 or ttft_p99:2")
        stat = stat.strip().lower()
        stat = stat.removeprefix("latency_")
        try:
            limit = float(value)
        except ValueError:
            raise ValueError(f"latency target {text!r}: {value!r} is not a number of seconds") from None
        return cls(stat, limit)

    def __str__(self) -> str:
        return f"{self.statistic}:{self.limit_s:g}"

    @property
    def description(self) -> str:
        """Words for the target, e.g. ``"p99 time to first token <= 2 s"``."""
        metric, _, stat = self.statistic.rpartition("_")
        return f"{stat} {_WHAT.get(metric, 'latency')} <= {self.limit_s:g} s"

    def met_by(self, value: float | None) -> bool:
        """Whether ``value`` (the statistic; ``None``: no value) meets the target."""
        return value is not None and value <= self.limit_s


def latency_statistic(latencies: Iterable[float | None], statistic: str) -> float | None:
    """``mean`` or the nearest-rank ``p50`` / ``p90`` / ``p99`` of ``latencies``
    (:func:`llmopt.model.metrics.percentiles`, as every latency report of the toolkit); ``None`` when
    there are none."""
    if statistic not in _STATS:
        raise ValueError(f"unknown latency statistic {statistic!r} (one of {', '.join(_STATS)})")
    value: float | None = getattr(percentiles(latencies), statistic)
    return value


@dataclass(frozen=True)
class CapacityResult:
    """Outcome of :func:`smallest_workers`.

    Attributes
    ----------
    target : LatencyTarget
    workers : int or None
        The smallest K found that meets the target; ``None`` if no K up to ``k_max`` does.
    evaluated : dict
        K → the statistic's value (``None``: the run produced no latency, e.g. an eviction loop), in
        the order evaluated.
    monotone : bool
        Whether the evaluated points never get worse as K grows (bisection's assumption).
    k_max : int
    """

    target: LatencyTarget
    workers: int | None
    evaluated: dict[int, float | None] = field(default_factory=dict)
    monotone: bool = True
    k_max: int = 0


def _meets(value: float | None, target: LatencyTarget) -> bool:
    return target.met_by(value)


def smallest_workers(evaluate: Callable[[int], float | None], target: LatencyTarget, *, k_min: int = 1,
                     k_max: int = 64, exhaustive: bool = False,
                     progress: Callable[[int, float | None], None] | None = None) -> CapacityResult:
    """The smallest K in ``k_min..k_max`` with ``evaluate(K) <= target.limit_s`` (module docstring).

    Parameters
    ----------
    evaluate : callable
        ``evaluate(K)`` → the target's statistic for K workers, or ``None`` (no latency: never meets it).
    target : LatencyTarget
    k_min, k_max : int
        ``1 <= k_min <= k_max``.
    exhaustive : bool
        Evaluate K = k_min, k_min + 1, … instead of doubling and bisecting.
    progress : callable, optional
        Called as ``progress(K, value)`` after each evaluation.

    Returns
    -------
    CapacityResult
    """
    if not (isinstance(k_min, int) and isinstance(k_max, int) and 1 <= k_min <= k_max):
        raise ValueError(f"capacity search: need 1 <= k_min <= k_max, got k_min={k_min!r}, k_max={k_max!r}")
    seen: dict[int, float | None] = {}

    def value(k: int) -> float | None:
        if k not in seen:
            seen[k] = evaluate(k)
            if progress is not None:
                progress(k, seen[k])
        return seen[k]

    found: int | None = None
    if exhaustive:
        for k in range(k_min, k_max + 1):
            if _meets(value(k), target):
                found = k
                break
    else:
        lo, k = k_min - 1, k_min  # invariant: lo misses (or is below the range), k is the next to try
        while k <= k_max and not _meets(value(k), target):
            lo, k = k, min(2 * k, k_max) if k < k_max else k_max + 1
        if k <= k_max:
            hi = k  # meets
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if _meets(value(mid), target):
                    hi = mid
                else:
                    lo = mid
            found = hi
    ks = sorted(seen)
    vals = [seen[k] for k in ks]
    monotone = all((b is not None and (a is None or b <= a * (1 + 1e-12))) or (a is None and b is None)
                   for a, b in zip(vals, vals[1:]))
    return CapacityResult(target=target, workers=found, evaluated=seen, monotone=monotone, k_max=k_max)


@dataclass(frozen=True)
class ClusterRun:
    """One K of a capacity search: the verified cluster run's headline numbers.

    Attributes
    ----------
    K : int
    verified : bool
        The independent checker (:func:`llmopt.verify.cluster.check_cluster_schedule`) accepted
        the run and recomputed the same latencies.
    status : {"ok", "rejected", "eviction-loop"}
    mean, p50, p90, p99 : float or None
        Latency statistics (seconds; nearest rank), ``None`` unless verified.
    ttft_mean, ttft_p50, ttft_p90, ttft_p99, tbt_mean, tbt_p50, tbt_p90, tbt_p99 : float or None
        The same statistics of the time to first token and of each request's mean time between tokens
        (:func:`llmopt.model.metrics.timed_request_rows`), ``None`` unless verified.
    gpu_s, energy_j : float or None
        GPU-seconds and energy per request (:func:`llmopt.engine.hardware.gpu_cost_per_request`).
    evictions : int or None
    sim_s : float
        Wall-clock seconds of the simulation and its check.
    """

    K: int
    verified: bool
    status: str
    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    gpu_s: float | None = None
    energy_j: float | None = None
    evictions: int | None = None
    sim_s: float = 0.0
    ttft_mean: float | None = None
    ttft_p50: float | None = None
    ttft_p90: float | None = None
    ttft_p99: float | None = None
    tbt_mean: float | None = None
    tbt_p50: float | None = None
    tbt_p90: float | None = None
    tbt_p99: float | None = None

    def statistic(self, name: str) -> float | None:
        """The statistic ``name`` (one of :data:`TARGET_STATS`: ``mean``, ``p99``, ``ttft_p99``, ...)."""
        value: float | None = getattr(self, name)
        return value


def run_cluster(instance: Any, policy: str, router: str, K: int, cost_model: Any, *, seed: int = 0,
                loop_limit: int | None = None) -> ClusterRun:
    """Simulate ``K`` workers on a continuous-time ``instance`` and verify the run.

    Parameters
    ----------
    instance : TimedInstance
    policy, router : str
        Spec strings (``"mc-sf"``, ``"alpha-protection:alpha=0.2"``; ``"jsq"``, ``"p2c"``); ``seed``
        goes to each that takes one and does not fix it.
    K : int
    cost_model : CostModel
    seed : int
    loop_limit : int, optional
        Each worker's loop guard (default: the engines').

    Returns
    -------
    ClusterRun
        ``status="eviction-loop"`` (no latency) when a worker's loop guard stopped the run.
    """
    import functools
    import time

    from llmopt.engine.cluster import simulate_cluster
    from llmopt.engine.discrete import EvictionLoopError
    from llmopt.engine.hardware import gpu_cost_per_request
    from llmopt.policies import make_policy_spec
    from llmopt.policies.routers import make_router_spec
    from llmopt.verify.cluster import check_cluster_schedule

    t0 = time.perf_counter()
    from llmopt.engine.core import DEFAULT_LOOP_LIMIT

    try:
        sched = simulate_cluster(instance, functools.partial(make_policy_spec, policy, seed=seed),
                                 make_router_spec(router, seed=seed), K, cost_model=cost_model,
                                 loop_limit=DEFAULT_LOOP_LIMIT if loop_limit is None else loop_limit)
    except EvictionLoopError:
        return ClusterRun(K, False, "eviction-loop", sim_s=time.perf_counter() - t0)
    rep = check_cluster_schedule(instance, sched, cost_model)
    ok = bool(rep.ok) and rep.mean_latency is not None and sched.mean_latency is not None and \
        abs(rep.mean_latency - sched.mean_latency) <= 1e-9 * max(1.0, sched.mean_latency)
    if not ok:
        return ClusterRun(K, False, "rejected", evictions=sched.evictions, sim_s=time.perf_counter() - t0)
    from llmopt.model.metrics import cluster_request_rows

    p = percentiles((rep.latencies or {}).values())
    rows = cluster_request_rows(instance, list(sched.workers)) if sched.timed else []
    ttft = percentiles(r["ttft_s"] for r in rows)
    tbt = percentiles(r["mean_tbt_s"] for r in rows)
    gpu_s, energy = gpu_cost_per_request(sched.busy_seconds or 0.0, sched.n)
    return ClusterRun(K, True, "ok", p.mean, p.p50, p.p90, p.p99, gpu_s, energy, sched.evictions,
                      time.perf_counter() - t0, ttft.mean, ttft.p50, ttft.p90, ttft.p99, tbt.mean, tbt.p50, tbt.p90,
                      tbt.p99)


def plan_capacity(instance: Any, policy: str, router: str, target: LatencyTarget, cost_model: Any, *,
                  seed: int = 0, k_min: int = 1, k_max: int = 64, exhaustive: bool = False,
                  loop_limit: int | None = None,
                  progress: Callable[[ClusterRun], None] | None = None) -> tuple[CapacityResult, list[ClusterRun]]:
    """The smallest K for one (policy, router) pair on ``instance`` (:func:`smallest_workers` over
    :func:`run_cluster`); returns the search result and every run, in the order simulated."""
    runs: list[ClusterRun] = []

    def evaluate(k: int) -> float | None:
        run = run_cluster(instance, policy, router, k, cost_model, seed=seed, loop_limit=loop_limit)
        runs.append(run)
        if progress is not None:
            progress(run)
        return run.statistic(target.statistic)

    res = smallest_workers(evaluate, target, k_min=k_min, k_max=k_max, exhaustive=exhaustive)
    return res, runs
