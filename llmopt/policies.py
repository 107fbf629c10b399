"""Online scheduling policies and their registry.

A policy is any object with a ``name`` and ``decide(view: StepView) -> Decision``;
it may define ``reset(M)``, called before each run. The simulator shows it only
arrived requests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from llmopt.lookahead import fits
from llmopt.registry import Registry
from llmopt.simulator import Decision, StepView, WaitingRequest

__all__ = ["Policy", "MCSF", "FCFSLookahead", "POLICIES", "make_policy", "greedy_prefix"]


@runtime_checkable
class Policy(Protocol):
    name: str

    def decide(self, view: StepView) -> Decision: ...


def greedy_prefix(view: StepView, order: Iterable[WaitingRequest]) -> Decision:
    """Admit waiting requests in ``order`` while the look-ahead check (5) holds;
    stop at the first request that does not fit (J Algorithm 1, rule (6))."""
    items = [(r.start, r.prompt, _known(r.output, r.id)) for r in view.running]
    chosen = []
    for w in order:
        items.append((view.t, w.prompt, _known(w.output, w.id)))
        if not fits(items, view.t, view.M):
            break
        chosen.append(w.id)
    return Decision(start=tuple(chosen))


def _known(o: int | None, rid: str) -> int:
    if o is None:
        raise ValueError(f"request {rid!r}: this policy needs output lengths, which are hidden")
    return o


class MCSF:
    """Memory-Constrained Shortest First (J §4, Algorithm 1).

    Running requests always continue; waiting requests are taken in ascending ``o_i``
    (ties by arrival, then position in the instance — the paper leaves ties open,
    DIGEST I-43) while the look-ahead check (5) holds at every completion time after ``t``.
    """

    name = "mc-sf"

    def decide(self, view: StepView) -> Decision:
        order = sorted(view.waiting, key=lambda w: (_known(w.output, w.id), w.arrival, w.position))
        return greedy_prefix(view, order)


class FCFSLookahead:
    """FCFS with the MC-SF look-ahead check (J App. C Algorithm 2, "MC-Benchmark").

    Waiting requests are taken by arrival (ties by position in the instance) while check (5) holds;
    the first request that does not fit blocks the rest (head-of-line blocking).
    """

    name = "fcfs"

    def decide(self, view: StepView) -> Decision:
        order = sorted(view.waiting, key=lambda w: (w.arrival, w.position))
        return greedy_prefix(view, order)


POLICIES: Registry[Callable[..., Policy]] = Registry("policy", "llmopt.policies")
POLICIES.register("mc-sf", "llmopt.policies:MCSF", "Memory-Constrained Shortest First (J Alg. 1)")
POLICIES.register("fcfs", "llmopt.policies:FCFSLookahead", "FCFS with look-ahead check, MC-Benchmark (J Alg. 2)")


def make_policy(name: str, **params) -> Policy:
    """Instantiate the registered policy ``name``."""
    return POLICIES.get(name)(**params)
