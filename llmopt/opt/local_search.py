"""Upper bounds on OPT from feasible schedules: priority-list scheduling and a seeded
local search over priority orders.

A priority list ``π`` is scheduled by the same prefix rule as MC-SF (admit waiting
requests in ``π`` order while the look-ahead check (5) holds, stop at the first misfit);
MC-SF is the list sorted by ``o_i``. Local search swaps pairs of the list and keeps a
swap when TEL drops. Every schedule it returns is produced by the simulator, so it is
feasible; :func:`llmopt.opt.hindsight.solve_hindsight` re-verifies it with the independent
checker before using its TEL.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

from llmopt.engine.discrete import RequestView, simulate
from llmopt.model.instance import Instance
from llmopt.model.schedule import Schedule
from llmopt.policies import LookaheadPrefixPolicy

__all__ = ["PriorityList", "local_search"]


class PriorityList(LookaheadPrefixPolicy):
    """Policy admitting waiting requests in a fixed priority order (prefix rule).

    Parameters
    ----------
    rank : mapping of str to int
        Request id → rank; smaller ranks are admitted first.
    name : str
    """

    def __init__(self, rank: Mapping[str, int], name: str = "priority-list") -> None:
        super().__init__()
        self.rank = rank
        self.name = name

    def key(self, request: RequestView) -> int:
        return self.rank[request.id]


def local_search(
    instance: Instance,
    start: Schedule,
    order: list[str],
    *,
    seed: int = 0,
    time_budget_s: float | None = None,
    max_evals: int | None = None,
) -> Schedule:
    """Improve ``start`` (the schedule of priority list ``order``) by random pair swaps.

    Stops after ``max_evals`` evaluations or ``time_budget_s`` seconds, whichever comes
    first (at least one must be given). With ``max_evals`` alone the result depends only
    on the instance, ``order`` and ``seed``; a clock budget makes it machine-dependent.
    """
    if time_budget_s is None and max_evals is None:
        raise ValueError("give max_evals or time_budget_s")
    rng = np.random.default_rng(seed)
    best, best_order = start, list(order)
    n = len(order)
    if n < 2:
        return best
    deadline = time.perf_counter() + time_budget_s if time_budget_s is not None else float("inf")
    evals = 0
    while time.perf_counter() < deadline and (max_evals is None or evals < max_evals):
        cand = list(best_order)
        i, j = sorted(rng.choice(n, size=2, replace=False))
        if rng.random() < 0.5:
            cand[i], cand[j] = cand[j], cand[i]
        else:  # move j before i
            cand.insert(i, cand.pop(j))
        sched = simulate(instance, PriorityList({rid: r for r, rid in enumerate(cand)}))
        evals += 1
        if sched.tel < best.tel:
            best, best_order = sched, cand
    return Schedule(
        policy=f"local-search({evals} evals)",
        starts=best.starts,
        completions=best.completions,
        tel=best.tel,
        memory=best.memory,
        evictions=best.evictions,
        recomputed_tokens=best.recomputed_tokens,
    )
