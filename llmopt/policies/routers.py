"""Routers: which worker of a cluster an arriving request goes to (DESIGN §3 "Several workers").

A router is a decision, so it lives with the policies; the cluster engine (mechanism) knows only its
protocol (:mod:`llmopt.engine.routing`). A router is asked once per request, at its arrival, by
:func:`llmopt.engine.cluster.simulate_cluster`,
and answers a worker index ``0 … K−1``. It sees what an online router could see: the request as a
:class:`~llmopt.engine.core.RequestView` — arrival, prompt ``s``, its prediction interval if any,
and its output length ``o`` *only* when the workers' policy may see it (``Visibility.FULL``, the
hindsight policies such as MC-SF; reading it under ``Visibility.HIDDEN`` raises
:class:`~llmopt.engine.core.HiddenOutputError`) — and each worker's state through a
:class:`ClusterState`: requests waiting (routed there and not started) and running, KV tokens in
use, and the worker's clock. Routers are looked up by name in :data:`ROUTERS`; third parties add
entries through the ``llmopt.routers`` entry-point group (:meth:`ROUTERS.load_entry_points
<llmopt.model.registry.Registry.load_entry_points>`).

The protocol::

    class Router(Protocol):
        name: str
        def reset(self, K: int, M: int) -> None: ...                      # before each run
        def route(self, request: RequestView, cluster: ClusterState) -> int: ...
        # optional: told every start and every end (completion or eviction) of a run, per worker
        def on_start(self, worker: int, t: int, request: RequestView) -> None: ...
        def on_finish(self, worker: int, t: int, request: RequestView) -> None: ...

The hooks are called lazily: a worker's events up to the routing instant have been reported once
the router has read any of that worker's state through ``cluster`` (the engine advances a worker
only when something needs its state). A router must be deterministic for a given seed (DESIGN §4
inv. 3) and should cost ``O(1)`` or ``O(K)`` per request.

The built-in routers (ties always go to the lowest worker index):

``round-robin``
    The ``j``-th arrival goes to worker ``j mod K``; reads no state.
``jsq`` (join the shortest queue)
    The worker with the fewest requests in it (waiting + running).
``least-kv``
    The worker with the fewest KV tokens in use; ties by fewer requests in it.
``p2c`` (power of two choices)
    Two distinct workers drawn uniformly with a seeded :class:`random.Random` (``seed``, default
    0); the one with fewer requests in it.
``lookahead``
    The worker where MC-SF's look-ahead check (5) admits the request soonest, counted in that
    worker's steps from its next decision: the first step ``t' >=`` the worker's clock at which the
    request, started at ``t'``, keeps the worker's running requests plus itself within ``M`` at every
    later time, if the running requests complete as they are expected to (:func:`first_fit`). Ties
    by fewer waiting requests, then fewer KV tokens in use. It needs output lengths: the true ``o``
    when the policy sees it, else the upper end ``u`` of the prediction interval (capped at
    ``M − s``), as A_max does; with neither it raises. What it does not model: the requests already
    waiting on a worker, which MC-SF may admit first (those with a shorter output) — the answer is
    exact when the request would head the worker's MC-SF queue and nothing else arrives.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections import deque
from collections.abc import Callable
from typing import Any

from llmopt.engine.core import RequestView, SimulationError
from llmopt.engine.lookahead import LookaheadProfile
from llmopt.engine.routing import ClusterState, Router
from llmopt.model.registry import Registry, make_from_spec, parse_spec

__all__ = [
    "ClusterState",
    "Router",
    "RoundRobin",
    "JoinShortestQueue",
    "LeastKV",
    "PowerOfTwoChoices",
    "LookaheadRouter",
    "first_fit",
    "ROUTERS",
    "make_router",
    "parse_router_spec",
    "make_router_spec",
]


class RoundRobin:
    """The ``j``-th arrival (in arrival order) goes to worker ``j mod K``."""

    name = "round-robin"

    def __init__(self) -> None:
        self.reset(1, 0)

    def reset(self, K: int, M: int) -> None:
        self.K = K
        self._next = 0

    def route(self, request: RequestView, cluster: ClusterState) -> int:
        w = self._next
        self._next = w + 1 if w + 1 < self.K else 0
        return w


class JoinShortestQueue:
    """The worker with the fewest requests in it (waiting + running); ties to the lowest index."""

    name = "jsq"

    def reset(self, K: int, M: int) -> None:
        self.K = K

    def route(self, request: RequestView, cluster: ClusterState) -> int:
        q = cluster.queue_length
        best, best_q = 0, q(0)
        for w in range(1, self.K):
            qw = q(w)
            if qw < best_q:
                best, best_q = w, qw
        return best


class LeastKV:
    """The worker with the fewest KV tokens in use; ties by fewer requests in it, then lowest index."""

    name = "least-kv"

    def reset(self, K: int, M: int) -> None:
        self.K = K

    def route(self, request: RequestView, cluster: ClusterState) -> int:
        kv, q = cluster.kv_in_use, cluster.queue_length
        return min(range(self.K), key=lambda w: (kv(w), q(w), w))


class PowerOfTwoChoices:
    """Two distinct workers drawn uniformly (seeded); the one with fewer requests in it, ties to the
    lower index. With ``K = 1`` it draws nothing.

    Parameters
    ----------
    seed : int
        Seed of the router's own :class:`random.Random` (re-seeded by :meth:`reset`).
    """

    name = "p2c"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.reset(1, 0)

    def reset(self, K: int, M: int) -> None:
        self.K = K
        self._rng = random.Random(self.seed)

    def route(self, request: RequestView, cluster: ClusterState) -> int:
        if self.K == 1:
            return 0
        a, b = self._rng.sample(range(self.K), 2)
        if a > b:
            a, b = b, a
        return a if cluster.queue_length(a) <= cluster.queue_length(b) else b


def first_fit(profile: LookaheadProfile, t: int, prompt: int, output: int) -> int:
    """The first step ``t' >= t`` at which a candidate ``(prompt, output)`` started at ``t'`` passes
    check (5) against ``profile``, if the stored items complete as stored and nothing is added.

    :meth:`LookaheadProfile.next_fit` searches only up to the earliest stored completion ``c_(0)``;
    this goes on past it. For a start ``t'`` the items with ``c <= t'`` are gone and, with
    ``cs[i:k]`` the completion times in ``(t', t' + o]``, the candidate fits iff
    ``max_{i<=j<k} V_j <= M − s + t'`` and ``A_k + (t'+o)·B_k + s + o <= M`` (the module docstring of
    :mod:`llmopt.engine.lookahead`; ``V_j`` depends only on the items completing at or after
    ``c_j``, so dropping earlier items leaves it unchanged). ``i`` and ``k`` are constant on ranges
    of ``t'`` cut at ``c_j`` and ``c_j − o``; on each range the two conditions are an interval of
    ``t'``, and the answer is the smallest ``t'`` of the first nonempty one. A sliding maximum keeps
    ``max V_j`` over ``[i, k)``: ``O(log m)`` plus ``O(1)`` amortised per completion time passed.

    The profile is advanced to ``t`` (items with ``c <= t`` are dropped), nothing more.

    Parameters
    ----------
    profile : LookaheadProfile
    t : int
        The earliest start considered.
    prompt, output : int
        The candidate; ``prompt + output <= profile.M`` (else it never fits: ``ValueError``).

    Returns
    -------
    int
    """
    M = profile.M
    if prompt + output > M:
        raise ValueError(f"a candidate with prompt + output = {prompt + output} > M = {M} never fits")
    if profile.fits(t, prompt, output):  # also advances to t and rebuilds the suffix sums
        return t
    # the profile's own aggregates after fits(): sorted completion times cs, suffix sums A, B (see lookahead.py)
    cs: list[int] = profile._cs
    A: list[int] = profile._A
    B: list[int] = profile._B
    m = len(cs)
    cap = M - prompt

    def V(j: int) -> int:  # usage at c_j plus c_j
        return A[j] + cs[j] * (B[j] + 1)

    tp = t + 1
    i = bisect_right(cs, tp)
    k = bisect_right(cs, tp + output)
    window: deque[int] = deque()  # indices of [i, k), V decreasing: the front is the window's maximum
    for j in range(i, k):
        v = V(j)
        while window and V(window[-1]) <= v:
            window.pop()
        window.append(j)
    while True:
        if i == m:  # every stored item has completed: the candidate fits alone (s + o <= M)
            return tp
        hi = cs[i] - 1  # i changes when t' reaches cs[i]; k when t' + o reaches cs[k]
        if k < m:
            hi = min(hi, cs[k] - output - 1)
        lo = tp if not window else max(tp, V(window[0]) - cap)
        if B[k]:
            hi = min(hi, (cap - output - A[k]) // B[k] - output)
        if lo <= hi:
            return lo
        tp = cs[i] if k == m else min(cs[i], cs[k] - output)
        while i < m and cs[i] <= tp:
            i += 1
        while window and window[0] < i:
            window.popleft()
        while k < m and cs[k] <= tp + output:
            v = V(k)
            while window and V(window[-1]) <= v:
                window.pop()
            window.append(k)
            k += 1


class LookaheadRouter:
    """The worker where MC-SF's check (5) admits the request soonest (see the module docstring).

    It keeps one :class:`~llmopt.engine.lookahead.LookaheadProfile` per worker, fed by the
    ``on_start`` / ``on_finish`` hooks with the output lengths the policy may see (true ``o`` under
    ``Visibility.FULL``, else the interval's upper end). Cost per request: ``K`` searches of
    :func:`first_fit`, each ``O(log m)`` plus the completion times it passes.
    """

    name = "lookahead"

    def __init__(self) -> None:
        self.reset(1, 2)

    def reset(self, K: int, M: int) -> None:
        self.K = K
        self.M = M
        self.profiles = [LookaheadProfile(M) for _ in range(K)]

    def estimate(self, request: RequestView) -> int:
        """The output length the check assumes: ``o`` if visible, else ``min(u, M − s)``."""
        if request.output_known:
            return request.output
        if request.upper is not None:
            return min(request.upper, self.M - request.prompt)
        raise SimulationError(f"router {self.name!r}: request {request.id!r} shows neither its output length "
                              "(the policy's visibility is HIDDEN) nor a prediction interval; the look-ahead "
                              "check needs one of them")

    def on_start(self, worker: int, t: int, request: RequestView) -> None:
        self.profiles[worker].add(request.id, t, request.prompt, self.estimate(request))

    def on_finish(self, worker: int, t: int, request: RequestView) -> None:
        self.profiles[worker].remove(request.id)

    def route(self, request: RequestView, cluster: ClusterState) -> int:
        s, o = request.prompt, self.estimate(request)
        best: tuple[int, int, int, int] | None = None
        for w in range(self.K):
            t0 = cluster.clock(w)  # brings w up to now: its hooks have run
            key = (first_fit(self.profiles[w], t0, s, o) - t0, cluster.waiting(w), cluster.kv_in_use(w), w)
            if best is None or key < best:
                best = key
        assert best is not None
        return best[3]


ROUTERS: Registry[Callable[..., Any]] = Registry("router", "llmopt.routers")
ROUTERS.register("round-robin", "llmopt.policies.routers:RoundRobin", "the j-th arrival to worker j mod K")
ROUTERS.register("jsq", "llmopt.policies.routers:JoinShortestQueue",
                 "join the shortest queue: fewest requests waiting + running")
ROUTERS.register("least-kv", "llmopt.policies.routers:LeastKV", "fewest KV-cache tokens in use (ties: fewest requests)")
ROUTERS.register("p2c", "llmopt.policies.routers:PowerOfTwoChoices",
                 "power of two choices: two seeded random workers, the one with fewer requests; param seed=0")
ROUTERS.register("lookahead", "llmopt.policies.routers:LookaheadRouter",
                 "where MC-SF's look-ahead check (5) admits the request soonest (needs o or an interval)")


def make_router(name: str, **params: Any) -> Any:
    """Instantiate the registered router ``name``."""
    return ROUTERS.get(name)(**params)


def parse_router_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split a router spec ``"name"`` or ``"name:key=value,..."`` (e.g. ``"p2c:seed=3"``)."""
    return parse_spec(spec, "router spec")


def make_router_spec(spec: str, **extra: Any) -> Any:
    """Instantiate a router from a spec string; ``extra`` parameters (e.g. a per-trial ``seed``) are
    added when the router accepts them and the spec does not fix them."""
    return make_from_spec(ROUTERS, spec, "router spec", **extra)
