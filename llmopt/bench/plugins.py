"""Explicit loading of third-party plug-ins.

Each registry has an entry-point group (``llmopt.policies``, ``llmopt.workloads``,
``llmopt.solvers``, ``llmopt.bounds``, ``llmopt.suites``, ``llmopt.formulations``,
``llmopt.windows``, ``llmopt.upper_bounds``, ``llmopt.predictions``, ``llmopt.task_kinds``). The group
names are those of the modules before the wings; they stay, so that installed plug-ins keep working.
Nothing is loaded on import; the CLI calls :func:`load_plugins` once at start-up (``--no-plugins`` skips it) and the
harness's worker processes call it too, so plug-in names resolve there as well.

A package declares, in its ``pyproject.toml``::

    [project.entry-points."llmopt.policies"]
    my-policy = "my_package.policy:MyPolicy"
"""

from __future__ import annotations

from llmopt.model.registry import Registry, RegistryError

__all__ = ["registries", "load_plugins"]

_loaded = False


def registries() -> dict[str, Registry]:
    """Every registry of the package, by kind."""
    from llmopt.bench.kinds import TASK_KINDS
    from llmopt.bench.suites import SUITES
    from llmopt.formulations import FORMULATIONS
    from llmopt.model.windows import WINDOWS
    from llmopt.opt.bounds import BOUNDS
    from llmopt.opt.upper_bounds import UPPER_BOUNDS
    from llmopt.policies import POLICIES
    from llmopt.solvers import SOLVERS
    from llmopt.workloads import WORKLOADS
    from llmopt.workloads.predictions import PREDICTIONS

    return {"policy": POLICIES, "workload": WORKLOADS, "solver": SOLVERS, "bound": BOUNDS, "suite": SUITES,
            "formulation": FORMULATIONS, "task kind": TASK_KINDS,
            "windows": WINDOWS, "upper bound": UPPER_BOUNDS, "prediction": PREDICTIONS}


def load_plugins() -> dict[str, list[str]]:
    """Register every installed plug-in once; returns the names added per registry.

    Raises
    ------
    llmopt.model.registry.RegistryError
        If a plug-in reuses a name that is already registered (the other plug-ins are
        still registered).
    """
    global _loaded
    if _loaded:
        return {}
    _loaded = True  # once only, even if a plug-in fails: a retry would only hit duplicates
    added, errors = {}, []
    for kind, reg in registries().items():
        try:
            added[kind] = reg.load_entry_points()
        except Exception as exc:
            errors.append(f"{kind}: {exc}")
    if errors:
        raise RegistryError("; ".join(errors))
    return added
