"""Discrete-time simulator of one worker (DESIGN §1): a small event loop.

Each step ``t`` the simulator shows the policy a :class:`StepView` of the arrived
requests only, applies its :class:`Decision` (evictions, then starts), checks that the
KV usage at time ``t+1`` stays within ``M``, then advances time. Completions happen when
a request has produced its ``o_i``-th token. The simulator keeps the true output
lengths; a policy sees them only when its information model allows
(:class:`Visibility`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from llmopt.instance import Instance, Request
from llmopt.schedule import Eviction, Schedule

__all__ = [
    "Visibility",
    "WaitingRequest",
    "RunningRequest",
    "StepView",
    "Decision",
    "SimulationError",
    "simulate",
]


class Visibility(enum.Enum):
    """What a policy may know about output lengths."""

    FULL = "full"
    """``o_i`` of arrived requests is visible (the J §5.1 setting)."""
    HIDDEN = "hidden"
    """``o_i`` is never shown (prediction-based policies read their own predictions)."""


@dataclass(frozen=True, slots=True)
class WaitingRequest:
    """An arrived request that is not running. ``output`` is ``None`` when hidden.

    ``position`` is the request's index in the instance (its order in the input file),
    the deterministic tie-breaker policies use after their own key.
    """

    id: str
    arrival: int
    prompt: int
    output: int | None
    position: int


@dataclass(frozen=True, slots=True)
class RunningRequest:
    """A running request that started at ``start`` and has produced ``generated`` tokens."""

    id: str
    arrival: int
    prompt: int
    start: int
    generated: int
    output: int | None

    @property
    def memory(self) -> int:
        """KV usage now (prompt plus tokens produced so far)."""
        return self.prompt + self.generated


@dataclass(frozen=True, slots=True)
class StepView:
    """What a policy sees at step ``t``."""

    t: int
    M: int
    running: tuple[RunningRequest, ...]
    waiting: tuple[WaitingRequest, ...]


@dataclass(frozen=True, slots=True)
class Decision:
    """Requests to evict (running) and to start (waiting) at this step."""

    start: tuple[str, ...] = ()
    evict: tuple[str, ...] = ()


class SimulationError(RuntimeError):
    """A policy broke the model (overflow, unknown id, stall)."""


def simulate(
    instance: Instance,
    policy,
    *,
    visibility: Visibility = Visibility.FULL,
    max_steps: int | None = None,
) -> Schedule:
    """Run ``policy`` on ``instance`` and return the :class:`Schedule`.

    Parameters
    ----------
    instance : Instance
    policy : Policy
        Object with ``name`` and ``decide(view) -> Decision`` (see :mod:`llmopt.policies`).
        ``reset(instance_M)`` is called first when the policy has it.
    visibility : Visibility
    max_steps : int, optional
        Safety cap on simulated steps; default ``max a + 10·Σo + 1000``.

    Raises
    ------
    SimulationError
        If the policy starts an unknown or non-waiting request, evicts a non-running
        one, overflows the memory, or makes no progress within ``max_steps``.
    """
    reqs = sorted(instance.requests, key=lambda r: (r.arrival, instance.position(r.id)))
    by_id = {r.id: r for r in instance.requests}
    if max_steps is None:
        max_steps = (reqs[-1].arrival if reqs else 0) + 10 * instance.total_output + 1000
    if hasattr(policy, "reset"):
        policy.reset(instance.M)
    show = visibility is Visibility.FULL

    nxt = 0  # next request (in arrival order) not yet arrived
    waiting: dict[str, Request] = {}
    running: dict[str, int] = {}  # id -> start of the current run
    starts: dict[str, int] = {}
    completions: dict[str, int] = {}
    evictions: list[Eviction] = []
    memory: list[int] = []
    t = reqs[0].arrival if reqs else 0
    memory.extend([0] * t)

    while len(completions) < len(reqs):
        if t > max_steps:
            raise SimulationError(f"policy {policy.name!r} made no progress by step {max_steps}")
        while nxt < len(reqs) and reqs[nxt].arrival <= t:
            waiting[reqs[nxt].id] = reqs[nxt]
            nxt += 1
        if not running and not waiting:  # idle: jump to the next arrival
            t_next = reqs[nxt].arrival
            memory.extend([0] * (t_next - t))
            t = t_next
            continue

        view = StepView(
            t=t,
            M=instance.M,
            running=tuple(
                RunningRequest(i, by_id[i].arrival, by_id[i].prompt, p, t - p, by_id[i].output if show else None)
                for i, p in running.items()
            ),
            waiting=tuple(
                WaitingRequest(r.id, r.arrival, r.prompt, r.output if show else None, instance.position(r.id))
                for r in waiting.values()
            ),
        )
        decision = policy.decide(view)
        for rid in decision.evict:
            if rid not in running:
                raise SimulationError(f"step {t}: policy {policy.name!r} evicts {rid!r}, which is not running")
            p = running.pop(rid)
            evictions.append(Eviction(t, rid, t - p))
            waiting[rid] = by_id[rid]
        for rid in decision.start:
            if rid not in waiting:
                raise SimulationError(f"step {t}: policy {policy.name!r} starts {rid!r}, which is not waiting")
            del waiting[rid]
            running[rid] = t

        # memory at time t+1: the cache after the batch of step t
        used = sum(by_id[i].prompt + t + 1 - p for i, p in running.items())
        if used > instance.M:
            raise SimulationError(
                f"step {t}: policy {policy.name!r} overflows memory at time {t + 1}: {used} > M = {instance.M}"
            )
        memory.append(used)
        t += 1
        for rid in [i for i, p in running.items() if p + by_id[i].output == t]:
            starts[rid] = running.pop(rid)
            completions[rid] = t

    tel = sum(completions[r.id] - r.arrival for r in reqs)
    return Schedule(
        policy=policy.name,
        starts={r.id: starts[r.id] for r in instance.requests},
        completions={r.id: completions[r.id] for r in instance.requests},
        tel=tel,
        memory=tuple(memory),
        evictions=tuple(evictions),
        recomputed_tokens=sum(e.tokens_lost for e in evictions),
    )
