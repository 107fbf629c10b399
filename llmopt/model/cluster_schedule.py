"""The record of one multi-worker run (DESIGN §3 "Several workers"): K schedules and an assignment.

A cluster is ``K`` identical workers, each with its own KV cache of ``M`` tokens and its own
batch clock, and a router that sends every request, at its arrival, to one worker. The run is
recorded as one single-worker schedule per worker — a :class:`~llmopt.model.schedule.Schedule`
(discrete time, steps) or a :class:`~llmopt.model.timed_schedule.TimedSchedule` (continuous
time, seconds) holding only the requests that worker served — and the assignment
``request id → worker``. Single-worker results are the ``K = 1`` case.

:meth:`ClusterSchedule.to_dict` writes what :func:`llmopt.verify.cluster.check_cluster_schedule`
reads back; :meth:`ClusterSchedule.from_dict` rebuilds the record from that JSON and the instance
(the per-worker schedules' JSON forms carry starts, evictions and, in continuous time, the batch
clock; everything else is derived from the instance).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmopt.model.metrics import percentiles
from llmopt.model.schedule import BatchLimits, Eviction, MemoryTrace, Schedule

if TYPE_CHECKING:  # a discrete run must not import NumPy (the timed schedule holds arrays)
    from llmopt.model.instance import Instance
    from llmopt.model.timed_instance import TimedInstance

__all__ = ["ClusterSchedule", "CLUSTER_CLOCKS"]

#: The two clocks a cluster runs on: ``"steps"`` (DESIGN §1) and ``"seconds"`` (DESIGN §2).
CLUSTER_CLOCKS = ("steps", "seconds")


@dataclass(frozen=True)
class ClusterSchedule:
    """Outcome of :func:`llmopt.engine.cluster.simulate_cluster`.

    Attributes
    ----------
    policy : str
        The per-worker policy's name (every worker runs its own instance of it).
    router : str
    K : int
        Number of workers.
    M : int
        KV capacity of *each* worker, tokens.
    workers : tuple of Schedule or tuple of TimedSchedule
        Worker ``w``'s schedule, holding exactly the requests assigned to ``w`` (in instance order).
    assignment : mapping of str to int
        Request id → the worker it was routed to (instance order).
    latencies : mapping of str to float
        Request id → completion − arrival (steps or seconds), instance order.
    clock : str
        ``"steps"`` or ``"seconds"`` (:data:`CLUSTER_CLOCKS`).
    cost_model : str or None
        The cost model's name (continuous time only).
    """

    policy: str
    router: str
    K: int
    M: int
    workers: tuple[Any, ...]
    assignment: Mapping[str, int]
    latencies: Mapping[str, float]
    clock: str = "steps"
    cost_model: str | None = None

    def __post_init__(self) -> None:
        if self.clock not in CLUSTER_CLOCKS:
            raise ValueError(f"cluster schedule: clock must be one of {CLUSTER_CLOCKS}, got {self.clock!r}")
        if len(self.workers) != self.K:
            raise ValueError(f"cluster schedule: K = {self.K} but {len(self.workers)} worker schedules")

    # --- what each worker did -------------------------------------------------------------

    @property
    def n(self) -> int:
        """Requests in the run."""
        return len(self.assignment)

    @property
    def timed(self) -> bool:
        """Whether the run is in continuous time (seconds)."""
        return self.clock == "seconds"

    def requests_of(self, worker: int) -> tuple[str, ...]:
        """Ids routed to ``worker``, in instance order."""
        return tuple(rid for rid, w in self.assignment.items() if w == worker)

    def load(self) -> tuple[int, ...]:
        """Requests routed to each worker."""
        counts = [0] * self.K
        for w in self.assignment.values():
            counts[w] += 1
        return tuple(counts)

    # --- metrics ------------------------------------------------------------------------

    @property
    def total_latency(self) -> float:
        """Σ latency (the TEL in discrete time, an integer there)."""
        total = sum(self.latencies.values())
        return total if self.timed else int(total)

    @property
    def tel(self) -> float:
        """Total end-to-end latency, as for one worker (:attr:`total_latency`)."""
        return self.total_latency

    @property
    def mean_latency(self) -> float | None:
        """``TEL / n``; ``None`` for an empty run."""
        return self.total_latency / self.n if self.n else None

    @property
    def makespan(self) -> float:
        """Latest completion over all workers (steps, or the end of the last batch in seconds)."""
        return max((w.makespan for w in self.workers), default=0)

    @property
    def evictions(self) -> int:
        return sum(len(w.evictions) for w in self.workers)

    @property
    def recomputed_tokens(self) -> int:
        return sum(w.recomputed_tokens for w in self.workers)

    @property
    def busy_seconds(self) -> float | None:
        """Seconds the workers computed, summed over workers (batches plus stalls; continuous time
        only, else ``None``). :func:`llmopt.engine.hardware.gpu_cost_per_request` turns it into
        GPU-seconds and energy per request."""
        if not self.timed:
            return None
        return float(sum(w.busy_seconds for w in self.workers))

    @property
    def busy_seconds_per_request(self) -> float | None:
        """:attr:`busy_seconds` / n: worker-seconds of compute per request (``None`` in discrete time
        or for an empty run). Times the GPUs of one worker, it is GPU-seconds per request."""
        busy = self.busy_seconds
        return None if busy is None or not self.n else busy / self.n

    def summary(self) -> dict[str, Any]:
        """Headline numbers: n, K, latency mean / p50 / p90 / p99 / max (nearest rank), total latency,
        makespan, evictions, recomputed tokens, per-worker load, and (continuous time) busy seconds."""
        p = percentiles(self.latencies.values())
        out: dict[str, Any] = {
            "clock": self.clock, "policy": self.policy, "router": self.router, "K": self.K, "M": self.M, "n": self.n,
            "mean_latency": p.mean, "p50_latency": p.p50, "p90_latency": p.p90, "p99_latency": p.p99,
            "max_latency": p.max, "total_latency": self.total_latency, "makespan": self.makespan,
            "evictions": self.evictions, "recomputed_tokens": self.recomputed_tokens, "load": list(self.load()),
        }
        if self.timed:
            out["busy_seconds"] = self.busy_seconds
            out["busy_seconds_per_request"] = self.busy_seconds_per_request
        return out

    # --- JSON -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the run's header, the assignment, each worker's ``to_dict()`` and the summary;
        what :func:`llmopt.verify.cluster.check_cluster_schedule` reads."""
        out: dict[str, Any] = {"clock": self.clock, "policy": self.policy, "router": self.router, "K": self.K,
                               "M": self.M}
        if self.cost_model is not None:
            out["cost_model"] = self.cost_model
        out["assignment"] = dict(self.assignment)
        out["workers"] = [w.to_dict() for w in self.workers]
        out["summary"] = self.summary()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], instance: Instance | TimedInstance) -> ClusterSchedule:
        """Rebuild a run from :meth:`to_dict`'s JSON and its instance (nothing is verified here: use
        :func:`llmopt.verify.cluster.check_cluster_schedule`).

        Raises
        ------
        ValueError
            If a field is missing or malformed (the message names it), or a request of the
            instance has no worker or no start.
        """
        def need(obj: Mapping[str, Any], key: str, where: str) -> Any:
            if not isinstance(obj, Mapping) or key not in obj:
                raise ValueError(f"cluster schedule: {where} has no field {key!r}")
            return obj[key]

        clock = data.get("clock", "steps") if isinstance(data, Mapping) else None
        K, M = need(data, "K", "the run"), need(data, "M", "the run")
        assignment = need(data, "assignment", "the run")
        workers = need(data, "workers", "the run")
        if not isinstance(workers, Sequence) or len(workers) != K:
            raise ValueError(f"cluster schedule: field 'workers' must list K = {K} schedules")
        if not isinstance(assignment, Mapping):
            raise ValueError("cluster schedule: field 'assignment' must map request ids to workers")
        reqs = instance.requests
        for r in reqs:
            if r.id not in assignment:
                raise ValueError(f"cluster schedule: field 'assignment' has no worker for request {r.id!r}")
        mine: list[list[Any]] = [[] for _ in range(K)]
        for r in reqs:
            mine[int(assignment[r.id])].append(r)
        built: list[Any] = []
        latencies: dict[str, float] = {}
        for w, (wd, rs) in enumerate(zip(workers, mine)):
            where = f"worker {w}"
            starts = {str(k): int(v) for k, v in need(wd, "starts", where).items()}
            evictions = tuple(Eviction(int(e["t"]), str(e["id"]), int(e["tokens_lost"]))
                              for e in wd.get("evictions", ()))
            prompt = {r.id: r.prompt for r in rs}
            for r in rs:
                if r.id not in starts:
                    raise ValueError(f"cluster schedule: {where} has no start for request {r.id!r}")
            runs = [(e.t - e.tokens_lost, e.t, prompt.get(e.id, 0)) for e in evictions]
            runs += [(starts[r.id], starts[r.id] + r.output, r.prompt) for r in rs]
            lost = sum(e.tokens_lost for e in evictions)
            lim = wd.get("limits")
            limits = BatchLimits()
            if isinstance(lim, Mapping):
                limits = BatchLimits(lim.get("max_num_seqs"), lim.get("max_num_batched_tokens"),
                                     int(lim.get("block_size") or 1))
            if clock == "seconds":
                import numpy as np

                from llmopt.model.timed_schedule import TimedSchedule

                comps = {str(k): float(v) for k, v in need(wd, "completions", where).items()}
                lat = {r.id: comps[r.id] - r.arrival for r in rs if r.id in comps}
                built.append(TimedSchedule(
                    policy=str(wd.get("policy", data.get("policy", ""))), cost_model=str(data.get("cost_model", "")),
                    M=int(M), starts={r.id: starts[r.id] for r in rs}, evictions=evictions, completions=comps,
                    latencies=lat, batch_start=np.asarray(need(wd, "batch_start", where), dtype=np.float64),
                    batch_duration=np.asarray(need(wd, "batch_duration", where), dtype=np.float64),
                    memory=MemoryTrace(0, runs), complete=bool(wd.get("complete", True)),
                    stalls={int(k): int(v) for k, v in wd.get("stalls", {}).items()}, limits=limits,
                    chunks=tuple((int(c[0]), str(c[1]), int(c[2])) for c in wd.get("chunks", ()))))
                latencies.update(lat)
            else:
                comps_i = {r.id: starts[r.id] + r.output for r in rs}
                origin = min((r.arrival for r in rs), default=0)
                built.append(Schedule(policy=str(wd.get("policy", data.get("policy", ""))),
                                      starts={r.id: starts[r.id] for r in rs}, completions=comps_i,
                                      tel=sum(comps_i[r.id] - r.arrival for r in rs),
                                      memory=MemoryTrace(origin, runs), evictions=evictions, recomputed_tokens=lost,
                                      limits=limits,
                                      chunks=tuple((int(c[0]), str(c[1]), int(c[2])) for c in wd.get("chunks", ()))))
                latencies.update({r.id: comps_i[r.id] - r.arrival for r in rs})
        return cls(policy=str(data.get("policy", "")), router=str(data.get("router", "")), K=int(K), M=int(M),
                   workers=tuple(built), assignment={r.id: int(assignment[r.id]) for r in reqs},
                   latencies={r.id: latencies[r.id] for r in reqs if r.id in latencies}, clock=str(clock),
                   cost_model=data.get("cost_model"))
