"""llmopt: scheduling LLM inference under KV-cache memory limits.

The public API (:mod:`llmopt.api`), loaded on first use so that ``import llmopt`` costs nothing::

    llmopt.Instance, llmopt.TimedInstance, llmopt.Schedule, llmopt.TimedSchedule
    llmopt.load_instance(path), llmopt.load_trace(path), llmopt.sample(trace, n, seed),
    llmopt.discretize(timed, step_seconds), llmopt.make_instance(workload, seed)
    llmopt.simulate(instance, policy), llmopt.check(instance, schedule)
    llmopt.solve(instance)            # bound <= OPT <= incumbent, certified
    llmopt.run_suite(name), llmopt.run_study(name), llmopt.registries()

The wings, bottom to top: :mod:`llmopt.model`, :mod:`llmopt.verify`, :mod:`llmopt.formulations`,
:mod:`llmopt.solvers`, :mod:`llmopt.engine`, :mod:`llmopt.policies`, :mod:`llmopt.workloads`,
:mod:`llmopt.opt`, :mod:`llmopt.bench`, :mod:`llmopt.papers`, :mod:`llmopt.cli`.
"""

from __future__ import annotations

from typing import Any

from llmopt._version import PUBLIC_NAMES, __version__  # noqa: F401  (the package's version)

__all__ = list(PUBLIC_NAMES)


def __getattr__(name: str) -> Any:
    if name in __all__:
        from llmopt import api

        return getattr(api, name)
    raise AttributeError(f"module 'llmopt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
