"""Upper bounds on OPT: the first stage of the hindsight pipeline.

An upper-bound stage finds a feasible schedule; the pipeline has the independent checker
verify it before its TEL is used (as the incumbent, for the start windows, and as the
warm start). A stage name is resolved in this order:

1. an entry of :data:`UPPER_BOUNDS` — a function ``(instance, context) -> Schedule``
   (built in: ``local-search``, ``lns`` (:mod:`llmopt.opt.lns`), ``cp-sat`` and ``cp-sat-lns`` (CP-SAT,
   then ``lns`` from CP-SAT's schedule; :mod:`llmopt.opt.cp_sat`); third parties add theirs through the
   entry-point group ``llmopt.upper_bounds``; ``sgs-energy`` and ``sgs-lagrangian``, the serial
   schedule-generation scheme, :mod:`llmopt.opt.serial_schedule`);
2. a registered policy (:data:`llmopt.policies.POLICIES`), simulated on the instance.

So every policy, a plug-in's included, is an upper-bound stage with no extra code.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from llmopt.model.instance import Instance
from llmopt.model.registry import Registry, RegistryError
from llmopt.model.schedule import Schedule
from llmopt.opt.defaults import DEFAULT_CP_SAT_SECONDS, DEFAULT_LNS_ITERATIONS, DEFAULT_UPPER_BOUNDS

__all__ = ["SearchContext", "UPPER_BOUNDS", "find_schedule", "local_search_stage", "best_verified",
           "DEFAULT_UPPER_BOUNDS", "DEFAULT_LNS_ITERATIONS", "DEFAULT_CP_SAT_SECONDS"]



@dataclass(frozen=True)
class SearchContext:
    """What an upper-bound stage may use.

    Attributes
    ----------
    seed : int
        Seed of any randomised search (results are deterministic for a seed).
    search_evals : int
        Evaluation budget of a search (0: the search stage returns its start schedule).
    deadline : float, optional
        ``time.perf_counter()`` value after which a search stops early (the result then
        depends on the machine's speed, which the pipeline reports).
    known : mapping
        Schedules found by earlier stages (e.g. MC-SF's, a search's start point).
    lns_iterations : int
        Sub-IPs solved by the large-neighbourhood search ``lns`` (:mod:`llmopt.opt.lns`).
    cp_sat_seconds : float
        CPU budget of ``cp-sat`` (:mod:`llmopt.opt.cp_sat`), in CP-SAT's *deterministic* seconds.
    """

    seed: int = 0
    search_evals: int = 0
    deadline: float | None = None
    known: Mapping[str, Schedule] = field(default_factory=dict)
    lns_iterations: int = DEFAULT_LNS_ITERATIONS
    cp_sat_seconds: float = DEFAULT_CP_SAT_SECONDS


UpperBoundStage = Callable[[Instance, SearchContext], Schedule]

UPPER_BOUNDS: Registry[UpperBoundStage] = Registry("upper bound", "llmopt.upper_bounds")


def local_search_stage(instance: Instance, ctx: SearchContext) -> Schedule:
    """Seeded pair-swap local search over priority lists, started from MC-SF's order and schedule
    (:func:`llmopt.opt.local_search.local_search`), for ``ctx.search_evals`` evaluations."""
    from llmopt.engine.discrete import simulate
    from llmopt.opt.local_search import local_search
    from llmopt.policies import make_policy

    start = ctx.known.get("mc-sf") or simulate(instance, make_policy("mc-sf"))
    # MC-SF's own key, so the search starts from MC-SF's schedule.
    order = sorted(instance.ids, key=lambda i: (instance.by_id(i).output, instance.by_id(i).arrival,
                                                instance.position(i)))
    if ctx.search_evals <= 0:
        return start
    budget = None if ctx.deadline is None else max(0.0, ctx.deadline - time.perf_counter())
    return local_search(instance, start, order, seed=ctx.seed, max_evals=ctx.search_evals, time_budget_s=budget)


def best_verified(instance: Instance, ctx: SearchContext) -> Schedule:
    """The lowest-TEL schedule of ``ctx.known`` that the checker accepts (its final starts), else MC-SF's.

    Search stages start from it: a rejected schedule (a policy's bug) would make a repair
    search start from an infeasible point and derive its windows from an unattainable TEL.
    """
    from llmopt.engine.discrete import simulate
    from llmopt.policies import make_policy
    from llmopt.verify.checker import check_schedule

    ok = [sch for sch in ctx.known.values() if check_schedule(instance, sch.starts).ok]
    return min(ok, key=lambda sch: sch.tel) if ok else simulate(instance, make_policy("mc-sf"))


def find_schedule(name: str, instance: Instance, ctx: SearchContext) -> Schedule:
    """Run upper-bound stage ``name`` (a registered stage, else a registered policy).

    Raises
    ------
    llmopt.model.registry.RegistryError
        If ``name`` is neither (the message lists both registries' names).
    """
    from llmopt.engine.discrete import simulate
    from llmopt.policies import POLICIES, make_policy

    if name in UPPER_BOUNDS:
        return UPPER_BOUNDS.get(name)(instance, ctx)
    if name in POLICIES:
        return simulate(instance, make_policy(name))
    known = ", ".join(sorted(set(UPPER_BOUNDS.names()) | set(POLICIES.names())))
    raise RegistryError(f"unknown upper-bound stage {name!r}; known: {known}")


UPPER_BOUNDS.register("local-search", "llmopt.opt.upper_bounds:local_search_stage",
                      "pair-swap local search over priority lists, from MC-SF (seeded, counted evaluations)")
UPPER_BOUNDS.register("lns", "llmopt.opt.lns:lns_stage",
                      "large-neighbourhood search: re-place a few requests optimally by a sub-IP (HiGHS)")
UPPER_BOUNDS.register("cp-sat", "llmopt.opt.cp_sat:cp_sat_stage",
                      "CP-SAT on the exact staircase model, hinted with the best schedule so far")
UPPER_BOUNDS.register("sgs-energy", "llmopt.opt.serial_schedule:sgs_energy_stage",
                      "serial schedule generation: each request at its earliest fit, least token-steps first")
UPPER_BOUNDS.register("sgs-lagrangian", "llmopt.opt.serial_schedule:sgs_lagrangian_stage",
                      "serial schedule generation in the order of Lagrangian best starts (subgradient ascent)")
UPPER_BOUNDS.register("cp-sat-lns", "llmopt.opt.cp_sat:cp_sat_lns_stage",
                      "cp-sat hinted with the best schedule so far, then lns started from CP-SAT's schedule")
