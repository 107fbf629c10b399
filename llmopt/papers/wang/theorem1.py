"""W Theorem 1 (App. EC.1): the schedule Λ that shows MC-SF's competitive ratio is unbounded.

The instance family is :func:`llmopt.workloads.wang.theorem1_instance`; this module holds the
policy that builds Λ and a helper that simulates it (verify its schedule with the checker).
"""

from __future__ import annotations

from llmopt.engine.discrete import RequestView
from llmopt.model.instance import Instance
from llmopt.policies import LookaheadPrefixPolicy

__all__ = ["Type2First", "theorem1_type2_first_starts"]


class Type2First(LookaheadPrefixPolicy):
    """The schedule Λ of W Theorem 1: all type-2 requests before any type-1 request.

    Longest output first (ties by arrival, then instance position) with MC-SF's look-ahead
    check and prefix rule. On :func:`theorem1_instance` (outputs 1 and 2) this admits type-2
    requests whenever they fit, and type-1 requests only once no type-2 request waits (a
    type-1 request may still start in the step that starts the last type-2 ones, which only
    helps Λ). Its TEL is an upper bound on OPT.
    """

    name = "wang-type2-first"

    def key(self, request: RequestView) -> tuple[int, int]:
        return (-request.output, request.arrival)


def theorem1_type2_first_starts(instance: Instance) -> dict[str, int]:
    """Start steps of :class:`Type2First` on ``instance`` (simulated; verify them with the checker)."""
    from llmopt.engine.discrete import simulate

    return dict(simulate(instance, Type2First()).starts)
