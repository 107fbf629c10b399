"""The package's version and its public names, at the bottom of the house.

Every module may read these without importing the package root (``llmopt/__init__.py``), so no
import runs back up the wings: :mod:`llmopt.api` takes its ``__all__`` from here and
:mod:`llmopt.bench.plugins.conformance` and the CLI the version.
"""

from __future__ import annotations

__all__ = ["__version__", "PUBLIC_NAMES"]

__version__ = "0.1.0"

#: The names ``import llmopt`` offers (:mod:`llmopt.api`, loaded on first use).
PUBLIC_NAMES: tuple[str, ...] = (
    "Instance",
    "Request",
    "TimedInstance",
    "TimedRequest",
    "Schedule",
    "TimedSchedule",
    "load_instance",
    "load_any_instance",
    "load_trace",
    "sample",
    "discretize",
    "make_instance",
    "simulate",
    "solve",
    "check",
    "run_suite",
    "run_study",
    "registries",
)
