"""The public Python API: the few entry points a notebook needs (re-exported by ``import llmopt``), and the
one surface the command line calls.

Every ``llmopt`` command is a thin parse → API call → print over the functions here, so a command and
its Python twin answer an input alike: the same numbers, and for bad input the same message
(:class:`BadInput`, a ``ValueError`` naming the parameter; the command line spells it as its option).
One module per concern:

* :mod:`~llmopt.api.instances` — :func:`load_trace`, :func:`sample`, :func:`discretize`,
  :func:`make_instance` (``llmopt generate``), :func:`sample_trace` (``llmopt trace``);
* :mod:`~llmopt.api.runs` — :func:`simulate` (``llmopt simulate``), :func:`check` (``llmopt check``);
* :mod:`~llmopt.api.hindsight` — :func:`solve` (``llmopt solve``);
* :mod:`~llmopt.api.capacity` — :func:`plan_capacity` (``llmopt capacity``);
* :mod:`~llmopt.api.suites` — :func:`run_suite`, :func:`run_study`, :func:`registries`;
* :mod:`~llmopt.api.listing` — :func:`list_policies` (``llmopt policies``), :func:`list_solvers`
  (``llmopt solvers``);
* :mod:`~llmopt.api.errors` — :class:`BadInput`.

Each name is imported on first use, and heavy modules (SciPy, the solvers, the hindsight pipeline,
plotting) only when the function that needs them is called, so ``import llmopt`` and the command
line's start-up stay fast.

Example (the README's "Python" section, with its output)::

    import llmopt

    trace = llmopt.load_trace("../shared/data/traces/lmsys_chat_1m_words_in256_out256.csv", on_bad_row="drop")
    timed = llmopt.sample(trace, n=1000, seed=0, rate=50.0)            # arrivals in seconds, M = 16,492
    for policy in ("mc-sf", "fcfs"):
        run = llmopt.simulate(timed, policy)                             # the continuous engine
        print(policy, f"{run.mean_latency:.1f} s", llmopt.check(timed, run).ok)

    inst = llmopt.discretize(llmopt.sample(trace, n=200, seed=0, M=2000), step_seconds=0.05)
    res = llmopt.solve(inst, bounds=("energy", "lp-colgen"), time_limit=60)
    tel = llmopt.simulate(inst, "mc-sf").tel
    print(f"{res.bound} <= OPT <= {res.incumbent} ({res.status.value}); MC-SF/OPT <= {tel / res.bound:.3f}")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llmopt.api.capacity import CapacityPlan, capacity_instance, plan_capacity
    from llmopt.api.errors import BadInput, SolverUnavailable
    from llmopt.api.hindsight import solve
    from llmopt.api.instances import TraceSample, discretize, load_trace, make_instance, sample, sample_trace
    from llmopt.api.listing import PolicyListing, SolverListing, list_policies, list_solvers
    from llmopt.api.runs import check, simulate
    from llmopt.api.suites import registries, run_study, run_suite
    from llmopt.model.instance import Instance, Request, load_instance
    from llmopt.model.schedule import Schedule
    from llmopt.model.timed_instance import TimedInstance, TimedRequest, load_any_instance
    from llmopt.model.timed_schedule import TimedSchedule

#: Each name's module, imported on first use: the command line imports :mod:`llmopt.api.errors` at start-up,
#: and a discrete command never pays for NumPy (``TimedSchedule``) or for the modules it does not call.
_HOMES = {
    "Instance": "llmopt.model.instance", "Request": "llmopt.model.instance", "load_instance": "llmopt.model.instance",
    "TimedInstance": "llmopt.model.timed_instance", "TimedRequest": "llmopt.model.timed_instance",
    "load_any_instance": "llmopt.model.timed_instance", "Schedule": "llmopt.model.schedule",
    "TimedSchedule": "llmopt.model.timed_schedule",
    "load_trace": "llmopt.api.instances", "sample": "llmopt.api.instances", "discretize": "llmopt.api.instances",
    "make_instance": "llmopt.api.instances", "sample_trace": "llmopt.api.instances",
    "TraceSample": "llmopt.api.instances",
    "simulate": "llmopt.api.runs", "check": "llmopt.api.runs", "solve": "llmopt.api.hindsight",
    "run_suite": "llmopt.api.suites", "run_study": "llmopt.api.suites", "registries": "llmopt.api.suites",
    "plan_capacity": "llmopt.api.capacity", "capacity_instance": "llmopt.api.capacity",
    "CapacityPlan": "llmopt.api.capacity", "BadInput": "llmopt.api.errors", "SolverUnavailable": "llmopt.api.errors",
    "list_policies": "llmopt.api.listing", "list_solvers": "llmopt.api.listing",
    "PolicyListing": "llmopt.api.listing", "SolverListing": "llmopt.api.listing",
}

#: ``import llmopt``'s names (:data:`llmopt._version.PUBLIC_NAMES`), then the ones the command line also uses.
__all__ = [
    "Instance", "Request", "TimedInstance", "TimedRequest", "Schedule", "TimedSchedule", "load_instance",
    "load_any_instance", "load_trace", "sample", "discretize", "make_instance", "simulate", "solve", "check",
    "run_suite", "run_study", "registries",
    "BadInput", "SolverUnavailable", "sample_trace", "TraceSample", "plan_capacity", "capacity_instance",
    "CapacityPlan", "list_policies", "list_solvers", "PolicyListing", "SolverListing",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value  # once
        return value
    raise AttributeError(f"module 'llmopt.api' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
