"""Loading third-party plug-ins: every registry, its entry-point group and its conformance check.

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

Validation lives beside the loading, in :mod:`llmopt.bench.plugins.conformance`: the table here names
each kind's check, so a new kind of plug-in is declared in one place (registry, group, check).

A package declares, in its ``pyproject.toml``::

    [project.entry-points."llmopt.policies"]
    my-policy = "my_package.policy:MyPolicy"
"""

from __future__ import annotations

import importlib
from importlib.metadata import distributions
from typing import NamedTuple

from llmopt.model.registry import Registry, RegistryError, plugin_loading

__all__ = ["PluginKind", "REGISTRY_TABLE", "registries", "load_plugins"]


class PluginKind(NamedTuple):
    """One kind of registered item: where its registry lives, its entry-point group and its check."""

    module: str
    """The module holding the registry."""
    attr: str
    """The registry's name in ``module``."""
    group: str
    """The entry-point group third-party packages declare it in."""
    check: str
    """The function of :mod:`llmopt.bench.plugins.conformance` that checks one item of this kind."""

_loaded = False


#: kind → (module, attribute, entry-point group, conformance check) of every registry. A table, not imports, so that
#: :func:`load_plugins` imports a registry's module only when some installed package has entry
#: points in its group: with no plug-ins, start-up imports none of them (``llmopt simulate`` does not
#: pay for the formulations, the bounds and NumPy). ``tests/bench/test_plugins.py`` checks the table
#: against the registries and the checks themselves.
REGISTRY_TABLE: dict[str, PluginKind] = {
    "policy": PluginKind("llmopt.policies", "POLICIES", "llmopt.policies", "check_policy"),
    "workload": PluginKind("llmopt.workloads", "WORKLOADS", "llmopt.workloads", "check_workload"),
    "solver": PluginKind("llmopt.solvers", "SOLVERS", "llmopt.solvers", "check_solver"),
    "bound": PluginKind("llmopt.opt.bounds", "BOUNDS", "llmopt.bounds", "check_bound"),
    "suite": PluginKind("llmopt.bench.suites", "SUITES", "llmopt.suites", "check_suite"),
    "formulation": PluginKind("llmopt.formulations", "FORMULATIONS", "llmopt.formulations", "check_formulation"),
    "task kind": PluginKind("llmopt.bench.kinds", "TASK_KINDS", "llmopt.task_kinds", "check_task_kind"),
    "windows": PluginKind("llmopt.model.windows", "WINDOWS", "llmopt.windows", "check_windows"),
    "upper bound": PluginKind("llmopt.opt.upper_bounds", "UPPER_BOUNDS", "llmopt.upper_bounds", "check_upper_bound"),
    "prediction": PluginKind("llmopt.workloads.predictions", "PREDICTIONS", "llmopt.predictions", "check_prediction"),
    "cost model": PluginKind("llmopt.engine.cost_model", "COST_MODELS", "llmopt.cost_models", "check_cost_model"),
    "trace format": PluginKind("llmopt.workloads.traces.formats", "TRACE_FORMATS", "llmopt.trace_formats",
                               "check_trace_format"),
    "router": PluginKind("llmopt.policies.routers", "ROUTERS", "llmopt.routers", "check_router"),
    "study": PluginKind("llmopt.bench.studies", "STUDIES", "llmopt.studies", "check_study"),
}


def _registry(kind: str) -> Registry:
    entry = REGISTRY_TABLE[kind]
    return getattr(importlib.import_module(entry.module), entry.attr)  # type: ignore[no-any-return]


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
    for kind, entry in REGISTRY_TABLE.items():
        if entry.group not in groups:
            added[kind] = []
            continue
        try:
            added[kind] = _registry(kind).load_entry_points()
        except Exception as exc:
            errors.append(f"{kind}: {exc}")
    if errors:
        raise RegistryError("; ".join(errors))
    return added
