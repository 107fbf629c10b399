"""Task kinds: the registry a suite's ``kind`` is looked up in (see :mod:`llmopt.bench.tasks`).

* ``hindsight`` (:mod:`llmopt.bench.hindsight_task`) — a discrete-time instance, every policy
  simulated and verified, hindsight OPT or certified bounds, ratios;
* ``trace`` (:mod:`llmopt.bench.trace_task`) — a continuous-time instance sampled from a trace,
  every policy through the continuous engine with a cost model, latencies verified;
* ``capacity`` (:mod:`llmopt.bench.capacity_task`) — the same instance, the smallest number of
  workers each policy × router needs to meet a latency target (multi-worker engine, verified).
* ``production`` (:mod:`llmopt.papers.production.vs_papers`) — a trace instance under production batch
  limits and KV blocks, paper policies beside production schedulers (latency, TTFT, TBT, throughput,
  preemptions; every schedule verified with its limits).

A third-party kind registers through the ``llmopt.task_kinds`` entry-point group.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llmopt.model.registry import Registry

__all__ = ["TaskKind", "TASK_KINDS"]


@dataclass(frozen=True)
class TaskKind:
    """One kind of task.

    Attributes
    ----------
    name : str
    blank_record : callable
        ``(suite, task) -> dict``: the record with every field, values ``None``.
    fill_record : callable
        ``(record, suite, task) -> None``: compute the task and fill the record (may raise).
    report : str
        ``"module:attr"`` of ``(out_dir, suite, meta, records, problems) -> DataFrame``, which writes
        ``summary.csv``, ``summary.md`` and the kind's figures.
    """

    name: str
    blank_record: Callable[[Any, Any], dict[str, Any]]
    fill_record: Callable[[dict[str, Any], Any, Any], None]
    report: str

    def report_writer(self) -> Callable[..., Any]:
        module, _, attr = self.report.partition(":")
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


TASK_KINDS: Registry[TaskKind] = Registry("task kind", "llmopt.task_kinds")
TASK_KINDS.register("hindsight", "llmopt.bench.hindsight_task:KIND",
                    "discrete time: policies verified, hindsight OPT or certified bounds, ratios")
TASK_KINDS.register("trace", "llmopt.bench.trace_task:KIND",
                    "continuous time on a trace: policies through the continuous engine, latencies verified")
TASK_KINDS.register("capacity", "llmopt.bench.capacity_task:KIND",
                    "continuous time on a trace: smallest number of workers per policy x router for a latency target")
TASK_KINDS.register("production", "llmopt.papers.production.vs_papers:KIND",
                    "continuous time on a trace under production batch limits and KV blocks: paper policies and "
                    "production schedulers, latency / TTFT / TBT / throughput / preemptions verified")

