"""Exhaustive K-worker OPT for tiny instances, independent of the K-worker IP and of the bounds.

``OPT_K(M) = min over assignments of Σ_w OPT_1(requests on w, M)``: for a fixed assignment the
workers share nothing (each has its own memory, all step in lock-step, TEL is a sum over
requests), so the K-worker problem splits into independent single-worker problems. Assignments
are enumerated up to relabelling of the (identical) workers as *restricted growth strings*
(request ``i`` goes to a worker ``<= 1 + max`` of the workers used by requests ``0 … i−1``, and
at most ``K`` workers), which lists every set partition of the requests into at most ``K`` blocks
exactly once. Each block's OPT is the single-worker exhaustive search ``helpers.exhaustive_opt``
(shares no code with the package), with the serial schedule (one request after another in
arrival order, feasible because ``s_i + o_i <= M``) as its upper bound; blocks are memoised.
"""

from __future__ import annotations

from collections.abc import Iterator

from helpers import exhaustive_opt, is_feasible, tel_of

from llmopt.model.instance import Instance


def set_partitions(n: int, K: int) -> Iterator[tuple[int, ...]]:
    """Every assignment of ``n`` requests to at most ``K`` unlabelled workers, as a restricted growth string."""
    labels = [0] * n

    def rec(i: int, used: int) -> Iterator[tuple[int, ...]]:
        if i == n:
            yield tuple(labels)
            return
        for w in range(min(used + 1, K)):
            labels[i] = w
            yield from rec(i + 1, max(used, w + 1))

    if n == 0:
        yield ()
    else:
        yield from rec(0, 0)


def serial_tel(instance: Instance) -> int:
    """TEL of running the requests one after another in arrival order (always feasible)."""
    t, tel = 0, 0
    for r in sorted(instance.requests, key=lambda r: (r.arrival, r.id)):
        k = max(t, r.arrival)
        t = k + r.output
        tel += t - r.arrival
    return tel


def exhaustive_cluster_opt(instance: Instance, K: int) -> tuple[int, dict[str, int], dict[str, int]]:
    """``(OPT_K, assignment, starts)`` by enumeration of assignments × single-worker exhaustive OPT."""
    memo: dict[tuple[int, ...], tuple[int, dict[str, int]]] = {}

    def block_opt(members: tuple[int, ...]) -> tuple[int, dict[str, int]]:
        if members not in memo:
            sub = Instance(instance.M, tuple(instance.requests[i] for i in members))
            memo[members] = exhaustive_opt(sub, serial_tel(sub))
        return memo[members]

    best: tuple[int, dict[str, int], dict[str, int]] | None = None
    for labels in set_partitions(instance.n, K):
        total, assignment, starts = 0, {}, {}
        for w in range(max(labels, default=-1) + 1):
            members = tuple(i for i, lab in enumerate(labels) if lab == w)
            tel, sub_starts = block_opt(members)
            total += tel
            starts.update(sub_starts)
            assignment.update({instance.requests[i].id: w for i in members})
        if best is None or total < best[0]:
            best = (total, assignment, starts)
    assert best is not None
    return best


def cluster_feasible(instance: Instance, K: int, assignment: dict[str, int], starts: dict[str, int]) -> bool:
    """Each request on one worker ``0 … K−1`` and every worker's part feasible at ``M`` (``helpers.is_feasible``)."""
    if set(assignment) != set(instance.ids) or any(not 0 <= w < K for w in assignment.values()):
        return False
    for w in range(K):
        reqs = tuple(r for r in instance.requests if assignment[r.id] == w)
        if reqs and not is_feasible(Instance(instance.M, reqs), {r.id: starts[r.id] for r in reqs}):
            return False
    return tel_of(instance, starts) >= 0


def simulate_cluster(instance, policy, router, K=1, **kwargs):  # type: ignore[no-untyped-def]
    """The cluster engine with a router given by spec (``"jsq"``, ``"p2c:seed=7"``) or as an object: the
    engine takes objects only (routers are decisions, looked up in :mod:`llmopt.policies.routers`)."""
    from llmopt.engine.cluster import simulate_cluster as engine_simulate_cluster
    from llmopt.policies.routers import make_router_spec

    rt = make_router_spec(router) if isinstance(router, str) else router
    return engine_simulate_cluster(instance, policy, rt, K, **kwargs)
