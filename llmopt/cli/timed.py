"""The continuous-time branches of ``llmopt simulate`` and ``llmopt check`` (timed instances).

A continuous-time instance file (``"clock": "seconds"``, e.g. written by ``llmopt trace``)
is run by the continuous engine with a cost model, and a continuous-time schedule (what
``llmopt simulate --json`` writes for it: iteration starts, evictions, and the start and
duration of every batch) is verified by the checker's continuous-time mode.
"""

from __future__ import annotations

import json
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
    from llmopt.verify.timed import check_timed_schedule

    try:
        from llmopt.model.textfile import read_text

        data = json.loads(read_text(schedule))
    except OSError as exc:
        die(f"{schedule}: cannot read file: {exc.strerror or exc}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        die(f"{schedule}: not a JSON file ({exc})")
    if not isinstance(data, dict):
        die(f"{schedule}: top level must be an object")
    for key in ("starts", "batch_start", "batch_duration"):
        if key not in data:
            die(f"{schedule}: missing field {key!r}; a continuous-time schedule is what "
                "`llmopt simulate INSTANCE --json` writes for a continuous-time instance")
    if not isinstance(data["starts"], dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                                       for v in data["starts"].values()):
        die(f"{schedule}: field 'starts' must map request ids to integer iterations")
    for key in ("batch_start", "batch_duration"):
        if not isinstance(data[key], list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                      for v in data[key]):
            die(f"{schedule}: field {key!r} must be a list of numbers (seconds)")
    stalls = data.get("stalls", {})
    if not isinstance(stalls, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in stalls.values()):
        die(f"{schedule}: field 'stalls' must map iterations to integer counts of lost iterations")
    name = cost_name or data.get("cost_model")
    if not isinstance(name, str):
        die(f"{schedule}: no field 'cost_model'; pass --cost-model")
    cost = cost_model_or_die(name)
    rep = check_timed_schedule(instance, data["starts"], data["batch_start"], data["batch_duration"], cost,
                               evictions=data.get("evictions") or [], stalls=stalls)
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
