"""The continuous-time branches of ``llmopt simulate`` and ``llmopt check`` (timed instances).

A continuous-time instance file (``"clock": "seconds"``, e.g. written by ``llmopt trace``)
is run by the continuous engine with a cost model, and a continuous-time schedule (what
``llmopt simulate --json`` writes for it: iteration starts, evictions, and the start and
duration of every batch) is verified by the checker's continuous-time mode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from llmopt.cli.common import die, json_out
from llmopt.model.timed_instance import TimedInstance

__all__ = ["check_timed", "cost_model_or_die"]


def cost_model_or_die(name: str) -> Any:
    from llmopt.engine.cost_model import COST_MODELS, make_cost_model

    if name not in COST_MODELS:
        die(f"--cost-model: unknown cost model {name!r}; known: {', '.join(COST_MODELS.names())}")
    return make_cost_model(name)


def check_timed(instance: TimedInstance, schedule: Path, cost_name: str | None, json_output: bool) -> None:
    """Verify a continuous-time schedule file (exit 0 feasible, 1 not, 2 bad input)."""
    from llmopt.model.schedule_file import ScheduleFileError, read_schedule_json, timed_schedule
    from llmopt.verify.timed import check_timed_schedule

    try:
        raw = read_schedule_json(schedule, timed=True)
        data = timed_schedule(raw, str(schedule))
    except ScheduleFileError as exc:
        die(str(exc))
    name = cost_name or data["cost_model"]
    if name is None:
        die(f"{schedule}: no field 'cost_model'; pass --cost-model")
    cost = cost_model_or_die(name)
    rep = check_timed_schedule(instance, data["starts"], data["batch_start"], data["batch_duration"], cost,
                               evictions=data["evictions"], stalls=data["stalls"],
                               limits=raw.get("limits") if isinstance(raw, dict) else None)
    if json_output:
        json_out({"ok": rep.ok, "mean_latency": rep.mean_latency, "violations": list(rep.violations),
                  "peak_memory": rep.peak_memory, "M": instance.M, "iterations": rep.iterations,
                  "recomputed_tokens": rep.recomputed_tokens, "cost_model": name})
    elif rep.ok:
        typer.echo(f"OK mean latency = {rep.mean_latency:.6f} s ({rep.iterations} batches, cost model {name})")
    else:
        typer.echo(f"INFEASIBLE: {rep.violations[0] if rep.violations else 'infeasible'}")
    if not rep.ok:
        raise typer.Exit(1)
