"""What the multi-worker engine needs of a router: the :class:`Router` protocol and the
:class:`ClusterState` a router reads at the routing instant (DESIGN §3 "Several workers").

The routers themselves are decisions and live with the policies (:mod:`llmopt.policies.routers`:
round-robin, jsq, least-kv, p2c, lookahead, and the ``ROUTERS`` registry); the engine
(:func:`llmopt.engine.cluster.simulate_cluster`) takes a router object and never looks one up by name.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from llmopt.engine.core import RequestView

__all__ = ["ClusterState", "Router"]


@runtime_checkable
class ClusterState(Protocol):
    """What a router may read about the workers at the routing instant ``now``.

    Every method brings worker ``w`` up to ``now`` first (and so reports its events to the
    router's hooks). ``waiting`` counts the requests routed to ``w`` that have not started,
    including any not yet handed to its policy (a busy continuous-time worker sees arrivals at the
    end of its batch); ``clock`` is the step (discrete time) or iteration (continuous time) of
    ``w``'s next decision, the first at which it could start the request.
    """

    K: int
    M: int
    now: float

    def waiting(self, w: int) -> int: ...

    def running(self, w: int) -> int: ...

    def queue_length(self, w: int) -> int: ...

    def kv_in_use(self, w: int) -> int: ...

    def clock(self, w: int) -> int: ...


@runtime_checkable
class Router(Protocol):
    """The router protocol (:mod:`llmopt.policies.routers` describes the optional hooks)."""

    name: str

    def reset(self, K: int, M: int) -> None: ...

    def route(self, request: RequestView, cluster: ClusterState) -> int: ...
