"""The module paths before the wings (release 0.1), kept importable for one release.

Until 0.1 every module sat in one flat ``llmopt/`` folder; plug-ins import some of them
(``llmopt.simulator``, ``llmopt.checker``, ``llmopt.bounds``, …) and committed
``results/*/suite.json`` files name report functions by their old ``"module:attr"`` path.
:data:`MOVED` maps each old path to its new home; :class:`LegacyFinder` (installed by
``llmopt/__init__.py``) makes ``import llmopt.simulator`` return the module
``llmopt.engine.discrete`` itself, with a ``DeprecationWarning``. Nothing is imported until an
old path is asked for. ``llmopt.policies`` and ``llmopt.workloads`` kept their names (their
registries and public names are re-exported by the packages) and are not listed.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED", "LegacyFinder", "install", "current_path"]

#: old module path -> new module path
MOVED: dict[str, str] = {
    "llmopt.instance": "llmopt.model.instance",
    "llmopt.timed_instance": "llmopt.model.timed_instance",
    "llmopt.schedule": "llmopt.model.schedule",
    "llmopt.timed_schedule": "llmopt.model.timed_schedule",
    "llmopt.windows": "llmopt.model.windows",
    "llmopt.result": "llmopt.model.result",
    "llmopt.tolerance": "llmopt.model.tolerance",
    "llmopt.registry": "llmopt.model.registry",
    "llmopt.checker": "llmopt.verify.checker",
    "llmopt.timed_checker": "llmopt.verify.timed",
    "llmopt.simulator": "llmopt.engine.discrete",
    "llmopt.continuous": "llmopt.engine.continuous",
    "llmopt.lookahead": "llmopt.engine.lookahead",
    "llmopt.cost_model": "llmopt.engine.cost_model",
    "llmopt.protection": "llmopt.policies.protection",
    "llmopt.interval_policies": "llmopt.policies.intervals",
    "llmopt.sorted_f": "llmopt.policies.sorted_f",
    "llmopt.lp_policies": "llmopt.policies.lp_order",
    "llmopt.colgen": "llmopt.solvers.colgen",
    "llmopt.zones": "llmopt.formulations.zones",
    "llmopt.wang_workloads": "llmopt.workloads.wang",
    "llmopt.chen_workloads": "llmopt.workloads.chen",
    "llmopt.predictions": "llmopt.workloads.predictions",
    "llmopt.traces": "llmopt.workloads.traces",
    "llmopt.hindsight": "llmopt.opt.hindsight",
    "llmopt.upper_bounds": "llmopt.opt.upper_bounds",
    "llmopt.heuristics": "llmopt.opt.local_search",
    "llmopt.lns": "llmopt.opt.lns",
    "llmopt.cp_sat": "llmopt.opt.cp_sat",
    "llmopt.bounds": "llmopt.opt.bounds",
    "llmopt.suites": "llmopt.bench.suites",
    "llmopt.experiment": "llmopt.bench.hindsight_task",
    "llmopt.trace_experiment": "llmopt.bench.trace_task",
    "llmopt.harness": "llmopt.bench.harness",
    "llmopt.executors": "llmopt.bench.executors",
    "llmopt.store": "llmopt.bench.store",
    "llmopt.report": "llmopt.bench.report",
    "llmopt.trace_report": "llmopt.bench.trace_report",
    "llmopt.conformance": "llmopt.bench.conformance",
    "llmopt.plugins": "llmopt.bench.plugins",
    "llmopt.wang_report": "llmopt.papers.wang.report",
    "llmopt.chen_theory": "llmopt.papers.chen.theory",
    "llmopt.chen_theory_report": "llmopt.papers.chen.theory_report",
    "llmopt.chen_lmsys_report": "llmopt.papers.chen.lmsys_report",
    "llmopt.chen_lmsys_study": "llmopt.papers.chen.lmsys_study",
    "llmopt.cli_bench": "llmopt.cli.bench",
    "llmopt.cli_trace": "llmopt.cli.trace",
    "llmopt.cli_timed": "llmopt.cli.timed",
    "llmopt.cli_common": "llmopt.cli.common",
}


def current_path(target: str) -> str:
    """``target`` (``"module"`` or ``"module:attr"``) with an old module path replaced by its new one."""
    module, sep, attr = target.partition(":")
    return MOVED.get(module, module) + sep + attr


class LegacyFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves the old module paths of :data:`MOVED` to the moved modules."""

    def find_spec(self, fullname: str, path: object = None, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; the old path is kept for one release",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: :meth:`create_module` returned the moved module, already executed."""


def install() -> None:
    """Put one :class:`LegacyFinder` on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, LegacyFinder) for f in sys.meta_path):
        sys.meta_path.append(LegacyFinder())
