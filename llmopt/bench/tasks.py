"""Running one task: :func:`run_task` looks the suite's ``kind`` up in
:data:`llmopt.bench.kinds.TASK_KINDS` and runs that kind's record steps.

A kind is three steps: a blank record (every field present, ``None`` when missing), a fill
step, and a report writer (``"module:attr"``, resolved only when a report is written, so that a
task never imports plotting). :func:`run_task` is the one entry point executors call; it never
raises for a failing task.
"""

from __future__ import annotations

import importlib
import time
import traceback
from collections.abc import Callable
from typing import Any

from llmopt.bench.kinds import TASK_KINDS
from llmopt.bench.store import RecordError, plain_record
from llmopt.bench.suites import Suite, Task

__all__ = ["run_task", "resolve_workload", "TIMING_FIELDS", "is_timing_field"]

TIMING_FIELDS = ("runtime_s", "hindsight_runtime_s", "hindsight_stage_s")
"""Record fields that vary from run to run; with the per-policy ``sim_s_*`` times
(:func:`is_timing_field`), every other field is deterministic."""


def is_timing_field(name: str) -> bool:
    """Whether record field ``name`` is a wall-clock time (varies from run to run)."""
    return name in TIMING_FIELDS or name.startswith("sim_s_")



def resolve_workload(name: str) -> Callable[..., Any]:
    """The ``(seed, **params) -> Instance`` callable of a registered name or ``"module:attr"`` path.

    Raises
    ------
    llmopt.model.registry.RegistryError
        If ``name`` is neither registered nor a ``"module:attr"`` path.
    ImportError, AttributeError
        If the path does not resolve.
    """
    from llmopt.workloads import WORKLOADS

    if name in WORKLOADS or ":" not in name:
        return WORKLOADS.get(name)  # raises with the list of known names
    module, _, attr = name.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj



def run_task(suite: Suite, task: Task) -> dict[str, Any]:
    """Run one task and return its flat, plain-JSON record.

    Never raises for a failing task: the exception's type and message go to the
    record's ``error`` field (and a short traceback to ``traceback``). A value that is
    not plain JSON (NaN, an unknown type) is dropped with an ``error`` naming its field.

    Parameters
    ----------
    suite : Suite
    task : Task
        One of ``suite.tasks()``.

    Returns
    -------
    dict
        See the module docstring for the ratio fields; missing values are ``None``.
    """
    kind = TASK_KINDS.get(suite.kind)
    rec, fill = kind.blank_record(suite, task), kind.fill_record
    t0 = time.perf_counter()
    try:
        fill(rec, suite, task)
    except Exception as exc:  # a failing task is recorded; the sweep goes on
        rec["error"] = f"{type(exc).__name__}: {exc}"
        rec["traceback"] = "".join(traceback.format_exception(exc, limit=-4)).strip()
    rec["runtime_s"] = round(time.perf_counter() - t0, 3)
    for _ in range(len(rec) + 1):
        try:
            return plain_record(rec)
        except RecordError as exc:
            rec[exc.field] = None
            rec["error"] = rec["error"] or f"RecordError: {exc}"
    raise AssertionError("unreachable: every field was cleared")  # pragma: no cover
