"""Explicit loading of third-party plug-ins.

Each registry has an entry-point group (``llmopt.policies``, ``llmopt.workloads``,
``llmopt.solvers``, ``llmopt.bounds``, ``llmopt.suites``, ``llmopt.formulations``,
``llmopt.windows``, ``llmopt.upper_bounds``).
Nothing is loaded on import; the CLI calls :func:`load_plugins` once at start-up (``--no-plugins`` skips it) and the
harness's worker processes call it too, so plug-in names resolve there as well.

A package declares, in its ``pyproject.toml``::

    [project.entry-points."llmopt.policies"]
    my-policy = "my_package.policy:MyPolicy"
"""

from __future__ import annotations

from llmopt.registry import Registry, RegistryError

__all__ = ["registries", "load_plugins"]

_loaded = False


def registries() -> dict[str, Registry]:
    """Every registry of the package, by kind."""
    from llmopt.bounds import BOUNDS
    from llmopt.formulations import FORMULATIONS
    from llmopt.policies import POLICIES
    from llmopt.predictions import PREDICTIONS
    from llmopt.solvers import SOLVERS
    from llmopt.suites import SUITES
    from llmopt.upper_bounds import UPPER_BOUNDS
    from llmopt.windows import WINDOWS
    from llmopt.workloads import WORKLOADS

    return {"policy": POLICIES, "workload": WORKLOADS, "solver": SOLVERS, "bound": BOUNDS, "suite": SUITES,
            "formulation": FORMULATIONS, "windows": WINDOWS, "upper bound": UPPER_BOUNDS, "prediction": PREDICTIONS}


def load_plugins() -> dict[str, list[str]]:
    """Register every installed plug-in once; returns the names added per registry.

    Raises
    ------
    llmopt.registry.RegistryError
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
