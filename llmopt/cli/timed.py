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
from rich.markup import escape

from llmopt.cli.common import console, die, json_out
from llmopt.model.timed_instance import TimedInstance

__all__ = ["simulate_timed", "check_timed"]


def _cost_model(name: str) -> Any:
    from llmopt.engine.cost_model import COST_MODELS, make_cost_model

    if name not in COST_MODELS:
        die(f"--cost-model: unknown cost model {name!r}; known: {', '.join(COST_MODELS.names())}")
    return make_cost_model(name)


def simulate_timed(file: Path, instance: TimedInstance, policy: str, cost_name: str, json_output: bool) -> None:
    """Run ``policy`` (a spec string) on a continuous-time instance, verify and report it."""
    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.discrete import EvictionLoopError, SimulationError
    from llmopt.policies import make_policy_spec
    from llmopt.verify.timed import check_timed_schedule

    cost = _cost_model(cost_name)
    try:
        pol = make_policy_spec(policy)
    except (TypeError, ValueError) as exc:
        die(f"--policy {policy!r}: {exc}")
    try:
        sched = simulate_continuous(instance, pol, cost)
    except KeyboardInterrupt:
        typer.echo("interrupted; nothing to show", err=True)
        raise typer.Exit(130) from None
    except EvictionLoopError as exc:
        die(f"{file}: policy {policy!r} fell into an eviction loop and was stopped: {exc}", 1)
    except (SimulationError, ValueError) as exc:
        die(f"{file}: policy {policy!r} failed: {exc}", 1)
    rep = check_timed_schedule(instance, sched.starts, sched.batch_start, sched.batch_duration, cost,
                               evictions=sched.evictions)
    mean = sched.mean_latency
    ok = rep.ok and rep.mean_latency is not None and mean is not None and \
        abs(rep.mean_latency - mean) <= 1e-9 * max(1.0, mean)
    why = "" if ok else (rep.violations[0] if rep.violations else f"checker mean {rep.mean_latency} != {mean}")
    if json_output:
        json_out({**sched.to_dict(), "n": instance.n, "makespan": sched.makespan,
                  "peak_memory": sched.peak_memory, "iterations": sched.iterations, "verified": ok,
                  "verification": "verified by the checker (continuous time)" if ok else f"rejected: {why}"})
        if not ok:
            raise typer.Exit(1)
        return
    lat = sorted(sched.latencies.values())
    p50 = lat[len(lat) // 2] if lat else 0.0
    p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else 0.0
    verified = "verified by the checker" if ok else f"[red]REJECTED by the checker: {escape(why)}[/red]"
    console.print(
        f"{escape(policy)} on {escape(str(file))} (continuous time, cost model {escape(cost_name)}): "
        f"n = {instance.n}, mean latency = [bold]{mean:.3f} s[/bold], median {p50:.3f} s, p95 {p95:.3f} s, "
        f"makespan {sched.makespan:.2f} s, {sched.iterations} batches, peak memory {sched.peak_memory}/"
        f"{instance.M}, {len(sched.evictions)} evictions ({sched.recomputed_tokens} tokens recomputed)  "
        f"({verified})"
    )
    if not ok:
        raise typer.Exit(1)


def check_timed(instance: TimedInstance, schedule: Path, cost_name: str | None, json_output: bool) -> None:
    """Verify a continuous-time schedule file (exit 0 feasible, 1 not, 2 bad input)."""
    from llmopt.verify.timed import check_timed_schedule

    try:
        data = json.loads(Path(schedule).read_text())
    except OSError as exc:
        die(f"{schedule}: cannot read file: {exc.strerror}")
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
    name = cost_name or data.get("cost_model")
    if not isinstance(name, str):
        die(f"{schedule}: no field 'cost_model'; pass --cost-model")
    cost = _cost_model(name)
    rep = check_timed_schedule(instance, data["starts"], data["batch_start"], data["batch_duration"], cost,
                               evictions=data.get("evictions") or [])
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
