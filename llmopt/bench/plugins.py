"""Third-party plug-ins: every registry and its entry-point group.

Each registry has an entry-point group (``llmopt.policies``, ``llmopt.workloads``,
``llmopt.solvers``, ``llmopt.bounds``, ``llmopt.suites``, ``llmopt.formulations``,
``llmopt.windows``, ``llmopt.upper_bounds``, ``llmopt.predictions``, ``llmopt.task_kinds``,
``llmopt.cost_models``, ``llmopt.trace_formats``, ``llmopt.studies``). The group
names are those of the modules before the wings; they stay, so that installed plug-ins keep working.
Nothing is loaded on import. Each registry reads its own group on its first lookup or listing
(:class:`~llmopt.model.registry.Registry`), so in Python a plug-in's name resolves with no call to
make; the CLI calls :func:`load_plugins` once at start-up to report a clash as a warning before
any work (``--no-plugins`` skips it and turns the reading off), and the harness's worker processes
call it too.

A package declares, in its ``pyproject.toml``::

    [project.entry-points."llmopt.policies"]
    my-policy = "my_package.policy:MyPolicy"
"""

from __future__ import annotations

import importlib
from importlib.metadata import distributions

from llmopt.model.registry import Registry, RegistryError, plugin_loading

__all__ = ["REGISTRY_TABLE", "registries", "load_plugins"]

_loaded = False


#: kind → (module, attribute, entry-point group) of every registry. A table, not imports, so that
#: :func:`load_plugins` imports a registry's module only when some installed package has entry
#: points in its group: with no plug-ins, start-up imports none of them (``llmopt simulate`` does not
#: pay for the formulations, the bounds and NumPy). ``tests/bench/test_plugins.py`` checks the table
#: against the registries themselves.
REGISTRY_TABLE: dict[str, tuple[str, str, str]] = {
    "policy": ("llmopt.policies", "POLICIES", "llmopt.policies"),
    "workload": ("llmopt.workloads", "WORKLOADS", "llmopt.workloads"),
    "solver": ("llmopt.solvers", "SOLVERS", "llmopt.solvers"),
    "bound": ("llmopt.opt.bounds", "BOUNDS", "llmopt.bounds"),
    "suite": ("llmopt.bench.suites", "SUITES", "llmopt.suites"),
    "formulation": ("llmopt.formulations", "FORMULATIONS", "llmopt.formulations"),
    "task kind": ("llmopt.bench.kinds", "TASK_KINDS", "llmopt.task_kinds"),
    "windows": ("llmopt.model.windows", "WINDOWS", "llmopt.windows"),
    "upper bound": ("llmopt.opt.upper_bounds", "UPPER_BOUNDS", "llmopt.upper_bounds"),
    "prediction": ("llmopt.workloads.predictions", "PREDICTIONS", "llmopt.predictions"),
    "cost model": ("llmopt.engine.cost_model", "COST_MODELS", "llmopt.cost_models"),
    "trace format": ("llmopt.workloads.traces.formats", "TRACE_FORMATS", "llmopt.trace_formats"),
    "router": ("llmopt.policies.routers", "ROUTERS", "llmopt.routers"),
    "study": ("llmopt.bench.studies", "STUDIES", "llmopt.studies"),
}


def _registry(kind: str) -> Registry:
    module, attr, _ = REGISTRY_TABLE[kind]
    return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


def registries() -> dict[str, Registry]:
    """Every registry of the package, by kind (imports every registry's module)."""
    return {kind: _registry(kind) for kind in REGISTRY_TABLE}


def load_plugins() -> dict[str, list[str]]:
    """Register every installed plug-in once; returns the names added per registry (nothing when
    plug-ins are turned off: :func:`llmopt.model.registry.set_plugin_loading`).

    Raises
    ------
    llmopt.model.registry.RegistryError
        If a plug-in reuses a name that is already registered (the other plug-ins are
        still registered).
    """
    global _loaded
    if _loaded or not plugin_loading():
        return {}
    _loaded = True  # once only, even if a plug-in fails: a retry would only hit duplicates
    added: dict[str, list[str]] = {}
    errors: list[str] = []
    groups = {ep.group for dist in distributions() for ep in dist.entry_points if ep.group.startswith("llmopt.")}
    for kind, (_, _, group) in REGISTRY_TABLE.items():
        if group not in groups:
            added[kind] = []
            continue
        try:
            added[kind] = _registry(kind).load_entry_points()
        except Exception as exc:
            errors.append(f"{kind}: {exc}")
    if errors:
        raise RegistryError("; ".join(errors))
    return added
