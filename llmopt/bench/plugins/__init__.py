"""Plug-ins in one home: loading third-party entry points (:mod:`~llmopt.bench.plugins.loading`) and
validating every registered item, built-in or installed (:mod:`~llmopt.bench.plugins.conformance`).

One table, :data:`~llmopt.bench.plugins.loading.REGISTRY_TABLE`, names for each kind of item its
registry, its entry-point group and its conformance check; loading reads the groups, validation runs
the checks. Importing this package imports the loading only (no registry module, no NumPy): the
command line reads the entry points at start-up; the checks are imported when asked for.
"""

from __future__ import annotations

from llmopt.bench.plugins.loading import REGISTRY_TABLE, PluginKind, load_plugins, registries

__all__ = ["REGISTRY_TABLE", "PluginKind", "load_plugins", "registries"]
