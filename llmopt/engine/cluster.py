"""The multi-worker engine (DESIGN §3 "Several workers"): K workers, a router, any policy.

A cluster is ``K`` identical workers, each with its own KV cache of ``M`` tokens, its own running
set and its own batch clock — steps in discrete time (DESIGN §1), batches timed by the cost model
in continuous time (DESIGN §2) — and a router (:mod:`llmopt.policies.routers`) that sends every
request, at its arrival, to one worker. Each worker runs its own instance of the policy (built
``K`` times by the factory given), which sees only the requests routed to it.

Structure
---------
Each worker is the engine core's :class:`~llmopt.engine.core.Worker` — the running set, the
completion heap, evictions, the loop guard and the policy's view, exactly as for one worker —
driven by a *pausable* clock (:mod:`llmopt.engine.cluster_clocks`): the single-worker loop's steps,
with its memory checks, caps and errors, cut into ``advance(T)`` (run everything before instant
``T``, and the completions at ``T``) and ``deliver(i, a)`` (request ``i``, arriving at ``a``, is now
this worker's). ``K = 1`` reproduces :func:`llmopt.engine.discrete.simulate` and
:func:`llmopt.engine.continuous.simulate_continuous` exactly, for every policy, on both clocks
(``tests/engine/test_cluster.py``).

Event order and laziness
------------------------
Arrivals are routed in arrival order (ties by instance position). Workers interact only through
the router, so a worker needs to be brought up to an instant only when something reads or
changes its state then: the engine advances worker ``w`` to the routing instant ``a`` when the
router reads ``w`` (:class:`ClusterView`) or the request is delivered to ``w``, and runs every
worker to its end once all requests are routed. As far as anything can observe, that is the
global event order of a heap over the workers' next events — every event of a worker before ``a``
precedes any look at it at ``a`` — without the heap, and without per-step work that grows with
``K``: round-robin touches one worker per request, ``p2c`` two, ``jsq`` all ``K`` (its definition).
At a tie the router sees the worker after its completions at ``a`` and before its decision at ``a``,
which waits for every arrival at ``a``.

Continuous time: a worker in the middle of a batch at ``a`` gets the request at the batch's end
(as one worker does); an idle worker jumps to ``a``. The iteration clock is per worker.

Result: a :class:`~llmopt.model.cluster_schedule.ClusterSchedule` — one ``Schedule`` or
``TimedSchedule`` per worker, holding its requests, and the assignment — which
:func:`llmopt.verify.cluster.check_cluster_schedule` verifies independently.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from typing import Any

from llmopt.engine.cluster_clocks import ContinuousClock, DiscreteClock, _Clock, _Notify
from llmopt.engine.continuous import _timed_schedule, batch_time_function
from llmopt.engine.core import (
    DEFAULT_LOOP_LIMIT,
    RequestView,
    SimulationError,
    Visibility,
    Worker,
    effective_visibility,
)
from llmopt.model.cluster_schedule import ClusterSchedule
from llmopt.model.instance import Instance
from llmopt.model.schedule import BatchLimits, MemoryTrace, Schedule
from llmopt.model.timed_instance import TimedInstance

__all__ = ["simulate_cluster", "ClusterView", "DiscreteClock", "ContinuousClock", "policy_factory"]


class ClusterView:
    """The router's window on the workers at the routing instant :attr:`now` (a
    :class:`~llmopt.engine.routing.ClusterState`). Every read brings the worker up to ``now`` first."""

    __slots__ = ("K", "M", "now", "_clocks")

    def __init__(self, K: int, M: int, clocks: Sequence[_Clock]) -> None:
        self.K = K
        self.M = M
        self.now: float = 0
        self._clocks = clocks

    def _sync(self, w: int) -> Any:
        c = self._clocks[w]
        if c.synced != self.now:
            c.advance(self.now)
        return c

    def waiting(self, w: int) -> int:
        """Requests routed to ``w`` and not started (handed to its policy or not yet)."""
        c = self._sync(w)
        return len(c.w.waiting) + len(c.order) - c.nxt

    def running(self, w: int) -> int:
        """Requests running on ``w``."""
        return len(self._sync(w).w.running)

    def queue_length(self, w: int) -> int:
        """Requests in ``w``: waiting (routed, not started) plus running."""
        c = self._sync(w)
        wk = c.w
        return len(wk.waiting) + len(wk.running) + len(c.order) - c.nxt

    def kv_in_use(self, w: int) -> int:
        """KV tokens ``w`` holds now (discrete: at the instant; continuous: after its latest batch)."""
        return int(self._sync(w).kv_in_use(self.now))

    def clock(self, w: int) -> int:
        """The step (discrete) or iteration (continuous) of ``w``'s next decision."""
        return int(self._sync(w).decision_clock(self.now))


def policy_factory(policy: Any) -> Callable[[], Any]:
    """A zero-argument factory of fresh policies from ``policy``: a factory (a policy class, or e.g.
    ``functools.partial(make_policy_spec, "mc-sf")``) is returned as is; a policy object (it has
    ``decide``) is deep-copied once per worker, the caller's object left untouched."""
    if isinstance(policy, type) or (callable(policy) and not hasattr(policy, "decide")):
        return policy  # type: ignore[no-any-return]
    if hasattr(policy, "decide"):
        return functools.partial(copy.deepcopy, policy)
    raise TypeError(f"policy must be a policy object or a zero-argument factory of policies, got {policy!r}")


def simulate_cluster(
    instance: Instance | TimedInstance,
    policy: Any,
    router: Any,
    K: int = 1,
    *,
    cost_model: Any = None,
    visibility: Visibility | None = None,
    loop_limit: int = DEFAULT_LOOP_LIMIT,
    max_steps: int | None = None,
    max_iterations: int | None = None,
    monitor: dict[str, Any] | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    block_size: int = 1,
) -> ClusterSchedule:
    """Run ``K`` workers, each with its own KV cache of ``instance.M`` tokens and its own instance of
    ``policy``, with ``router`` assigning each request at its arrival.

    Parameters
    ----------
    instance : Instance or TimedInstance
        Discrete time (steps) for an :class:`Instance`; continuous time (seconds, batches timed by
        ``cost_model``) for a :class:`TimedInstance`.
    policy : factory or policy object
        ``policy()`` builds one worker's policy (a registered policy's class, or
        ``functools.partial(make_policy_spec, spec)`` for a spec string such as ``"mc-sf"``); a policy
        object is deep-copied once per worker (:func:`policy_factory`).
    router : Router
        A router object (:class:`llmopt.engine.routing.Router`; the built-in ones and the spec parser
        ``make_router_spec("p2c:seed=3")`` are in :mod:`llmopt.policies.routers`); ``reset(K, M)`` is called
        first. The engine takes no names: looking one up is a decision-level step above it.
    K : int
        Number of workers, ``>= 1``.
    cost_model : CostModel, optional
        Required for a :class:`TimedInstance`, refused for an :class:`Instance`.
    visibility : Visibility, optional
        As in :func:`llmopt.engine.discrete.simulate`; the router's request view follows the same rule.
    loop_limit : int
        Each worker's loop guard.
    max_steps, max_iterations : int, optional
        Each worker's clock cap (discrete: default ``max a + 10·Σo + 1000``; continuous: ``10·Σo + 1000``).
    monitor : dict, optional
        Receives the list of :class:`~llmopt.engine.core.Worker` objects under ``"workers"`` (progress:
        ``sum(w.done for w in workers)``).
    max_num_seqs, max_num_batched_tokens, block_size : int, optional
        Batch limits and KV block size of *each* worker, with the single-worker semantics
        (:class:`~llmopt.engine.core.Worker`, "Batch limits"): each worker caps its own batches and
        counts its own ``M // block_size`` blocks; recorded on every worker's schedule.

    Returns
    -------
    ClusterSchedule

    Raises
    ------
    SimulationError
        As the single-worker engines raise it — with ``K > 1`` the message prefixed ``worker w:`` and the
        exception's ``worker`` attribute set — or if the router answers no worker index ``0 … K−1``.
    EvictionLoopError
        A worker's loop guard (``.partial`` is that worker's partial schedule in continuous time).
    TypeError, ValueError
        On a wrong instance / cost-model pairing, or ``K < 1``.
    """
    if isinstance(K, bool) or not isinstance(K, int) or K < 1:
        raise ValueError(f"K must be an integer >= 1, got {K!r}")
    timed = isinstance(instance, TimedInstance)
    if timed and cost_model is None:
        raise TypeError("a continuous-time instance (TimedInstance) needs a cost_model")
    if not timed and cost_model is not None:
        raise TypeError("a cost_model times batches of a continuous-time instance; this Instance is discrete "
                        "(steps): pass a TimedInstance, or no cost_model")
    policies = [policy_factory(policy)() for _ in range(K)]
    if isinstance(router, str) or not callable(getattr(router, "route", None)):
        raise TypeError(f"router must be a router object (Router protocol), got {router!r}; build one from a spec "
                        "with llmopt.policies.routers.make_router_spec, or call llmopt.simulate(workers=, router=)")
    rt = router
    rt.reset(K, instance.M)
    reqs: Sequence[Any] = instance.requests
    n, M = len(reqs), instance.M
    order = sorted(range(n), key=[r.arrival for r in reqs].__getitem__)  # stable: ties by position
    cap = max_iterations if timed else max_steps
    if cap is None:
        cap = 10 * instance.total_output + 1000 + (0 if timed or not n else reqs[order[-1]].arrival)
    limits = BatchLimits(max_num_seqs, max_num_batched_tokens, block_size)
    clocks, records = _make_clocks(reqs, M, policies, rt, cost_model, cap, visibility=visibility,
                                   loop_limit=loop_limit, limits=limits)
    if monitor is not None:
        monitor["workers"] = [c.w for c in clocks]
    show = effective_visibility(policies[0], visibility) is Visibility.FULL
    view = ClusterView(K, M, clocks)
    route = rt.route
    rname = str(getattr(rt, "name", type(rt).__name__))
    assigned = [0] * n
    for i in order:
        r = reqs[i]
        a = r.arrival
        view.now = a
        w = route(RequestView(r.id, a, r.prompt, i, r.output if show else None, r.lower, r.upper), view)
        if type(w) is not int or not 0 <= w < K:
            raise SimulationError(f"router {rname!r} sends request {r.id!r} to worker {w!r}; "
                                  f"the workers are 0 … {K - 1}")
        c = clocks[w]
        if c.synced != a:
            c.advance(a)
        c.deliver(i, a)
        assigned[i] = w
    for c in clocks:
        c.finish()

    mine: list[list[int]] = [[] for _ in range(K)]
    for i in range(n):
        mine[assigned[i]].append(i)
    latencies: dict[str, float] = {}
    workers: list[Any] = []
    if timed:
        for c, record in zip(clocks, records):
            sched = record(True, c.w)
            workers.append(sched)
            latencies.update(sched.latencies)
        latencies = {r.id: latencies[r.id] for r in reqs}
    else:
        for c, pos in zip(clocks, mine):
            workers.append(_discrete_schedule(reqs, c.w, pos))
        latencies = {r.id: clocks[assigned[i]].w.ends[i] - r.arrival for i, r in enumerate(reqs)}
    return ClusterSchedule(policy=policies[0].name, router=rname, K=K, M=M, workers=tuple(workers),
                           assignment={r.id: assigned[i] for i, r in enumerate(reqs)}, latencies=latencies,
                           clock="seconds" if timed else "steps",
                           cost_model=_cost_name(cost_model) if timed else None)


def _cost_name(cost_model: Any) -> str:
    return str(getattr(cost_model, "name", type(cost_model).__name__))


def _make_clocks(reqs: Sequence[Any], M: int, policies: list[Any], router: Any, cost_model: Any, cap: int, *,
                 visibility: Visibility | None, loop_limit: int,
                 limits: BatchLimits | None = None) -> tuple[list[_Clock], list[Any]]:
    """One worker and its clock per policy (continuous time when there is a cost model), and in continuous
    time each worker's schedule recorder (``record(complete, worker) -> TimedSchedule``)."""
    K = len(policies)
    hooks = callable(getattr(router, "on_start", None)) or callable(getattr(router, "on_finish", None))
    clocks: list[_Clock] = []
    records: list[Any] = []
    index = {r.id: i for i, r in enumerate(reqs)}  # shared by the workers: positions are the instance's
    for j, p in enumerate(policies):
        tag = j if K > 1 else None  # a single worker's errors read as the single-worker engine's
        notify = _Notify(j, router) if hooks else None
        if cost_model is None:
            wk = Worker(reqs, M, p, visibility=visibility, loop_limit=loop_limit, unit="step", index=index,
                        limits=limits)
            clocks.append(DiscreteClock(wk, tag, notify, cap))
            continue
        b_start: list[float] = []
        b_dur: list[float] = []
        stalls: dict[int, int] = {}
        record = functools.partial(_timed_schedule, reqs, p.name, _cost_name(cost_model), b_start, b_dur, stalls,
                                   limits=limits or BatchLimits())
        records.append(record)
        wk = Worker(reqs, M, p, visibility=visibility, loop_limit=loop_limit, unit="iteration",
                    partial=functools.partial(record, False), index=index, limits=limits)
        clocks.append(ContinuousClock(wk, tag, notify, batch_time_function(cost_model), _cost_name(cost_model), cap,
                                      b_start, b_dur, stalls))
    return clocks, records


def _discrete_schedule(reqs: Sequence[Any], w: Worker, positions: Sequence[int]) -> Schedule:
    """Worker ``w``'s :class:`Schedule` of its requests (``positions``, instance order), as
    :func:`llmopt.engine.discrete.simulate` records one worker."""
    starts, ends = w.starts, w.ends
    origin = min((reqs[i].arrival for i in positions), default=0)
    return Schedule(
        policy=w.name,
        starts={reqs[i].id: starts[i] for i in positions},
        completions={reqs[i].id: ends[i] for i in positions},
        tel=sum(ends[i] - reqs[i].arrival for i in positions),
        memory=MemoryTrace(origin, w.runs),
        evictions=tuple(w.evictions),
        recomputed_tokens=sum(e.tokens_lost for e in w.evictions),
        limits=w.limits,
        chunks=tuple((t, reqs[i].id, c) for t, i, c in w.chunk_log),
    )
