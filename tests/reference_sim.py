"""The slow reference: the step-by-step simulator and look-ahead policies as they were before
the event-driven engine (issue 6), kept verbatim in spirit as a test oracle.

Every step ``t`` it rebuilds the list of waiting requests, sorts it by the policy's key,
and re-runs the quadratic look-ahead check (J eq. (5)) from scratch for every candidate.
It is O(n²) per step and is *not* part of the package; the equivalence tests assert that
:func:`llmopt.engine.discrete.simulate` produces exactly the same starts, TEL and memory trace.

Nothing here imports the package's simulator, policies, look-ahead or schedule modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llmopt.model.instance import Instance, Request

__all__ = ["RefSchedule", "reference_simulate", "MCSF_KEY", "FCFS_KEY", "rank_key"]

#: A policy key: ``key(request, position) -> sortable``; waiting requests are taken in key order.
Key = Callable[[Request, int], tuple]


def MCSF_KEY(r: Request, pos: int) -> tuple:
    """MC-SF: ascending output length, ties by arrival, then position in the instance."""
    return (r.output, r.arrival, pos)


def FCFS_KEY(r: Request, pos: int) -> tuple:
    """MC-Benchmark / FCFS: ascending arrival, ties by position."""
    return (r.arrival, pos)


def rank_key(rank: dict[str, int]) -> Key:
    """A fixed priority list (the local search's policy)."""
    return lambda r, pos: (rank[r.id],)


@dataclass(frozen=True)
class RefSchedule:
    """Starts, completions, TEL and the dense memory trace (``memory[t-1]`` = usage at time ``t``,
    from ``t = 1``, zeros before the first arrival included)."""

    starts: dict[str, int]
    completions: dict[str, int]
    tel: int
    memory: tuple[int, ...]


def _usage_at(items: list[tuple[int, int, int]], tau: int) -> int:
    return sum(s + tau - p for (p, s, o) in items if p < tau <= p + o)


def _fits(items: list[tuple[int, int, int]], t: int, M: int) -> bool:
    """J eq. (5), checked at every completion time after ``t`` (quadratic)."""
    for (p0, _s0, o0) in items:
        tau = p0 + o0
        if tau > t and _usage_at(items, tau) > M:
            return False
    return True


def reference_simulate(instance: Instance, key: Key) -> RefSchedule:
    """The pre-issue-6 step loop with the prefix look-ahead rule (J Alg. 1 / Alg. 2)."""
    reqs = sorted(instance.requests, key=lambda r: (r.arrival, instance.position(r.id)))
    by_id = {r.id: r for r in instance.requests}
    nxt = 0
    waiting: dict[str, Request] = {}
    running: dict[str, int] = {}
    starts: dict[str, int] = {}
    completions: dict[str, int] = {}
    memory: list[int] = []
    t = reqs[0].arrival if reqs else 0
    memory.extend([0] * t)
    while len(completions) < len(reqs):
        while nxt < len(reqs) and reqs[nxt].arrival <= t:
            waiting[reqs[nxt].id] = reqs[nxt]
            nxt += 1
        if not running and not waiting:
            t_next = reqs[nxt].arrival
            memory.extend([0] * (t_next - t))
            t = t_next
            continue
        # the policy: sort the waiting list, admit a prefix while the check holds
        items = [(p, by_id[i].prompt, by_id[i].output) for i, p in running.items()]
        for w in sorted(waiting.values(), key=lambda r: key(r, instance.position(r.id))):
            items.append((t, w.prompt, w.output))
            if not _fits(items, t, instance.M):
                break
            del waiting[w.id]
            running[w.id] = t
        used = sum(by_id[i].prompt + t + 1 - p for i, p in running.items())
        assert used <= instance.M, f"reference overflow at {t + 1}"
        memory.append(used)
        t += 1
        for rid in [i for i, p in running.items() if p + by_id[i].output == t]:
            starts[rid] = running.pop(rid)
            completions[rid] = t
    tel = sum(completions[r.id] - r.arrival for r in reqs)
    return RefSchedule(starts=starts, completions=completions, tel=tel, memory=tuple(memory))
