"""``llmopt simulate``: run an online policy on an instance, verify its schedule, summarise it.

The terminal shows a summary — TEL / mean latency, latency percentiles, evictions, peak memory,
and for continuous-time instances TTFT and time between tokens (:mod:`llmopt.model.metrics`) —
and, for an instance of at most :data:`TABLE_ROWS` requests, the per-request table. Every
request's row goes to a file on request (``--requests FILE.csv`` or ``.json``); ``--json`` prints
the schedule itself (what ``llmopt check`` reads back).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from llmopt.cli.common import (
    ForceFlag,
    InstanceFile,
    JsonFlag,
    check_name,
    check_output_file,
    console,
    die,
    json_out,
    load_any_or_die,
    write_rows,
)
from llmopt.model.timed_instance import TimedInstance

__all__ = ["simulate_cmd", "TABLE_ROWS"]

#: Instances up to this many requests also get the per-request table on the terminal.
TABLE_ROWS = 20


def _fmt(value: float | None, unit: str = "", digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}{unit}"


def _latency_line(name: str, p: Any, unit: str, digits: int = 3) -> str:
    return (f"{name}: mean {_fmt(p.mean, unit, digits)}, p50 {_fmt(p.p50, unit, digits)}, "
            f"p90 {_fmt(p.p90, unit, digits)}, p99 {_fmt(p.p99, unit, digits)}, max {_fmt(p.max, unit, digits)}")


def simulate_cmd(
    file: InstanceFile,
    policy: Annotated[str, typer.Option("--policy", "-p", help=(
        "Policy (see `llmopt policies`), with parameters as name:key=value,... "
        "e.g. alpha-protection:alpha=0.2,beta=0.1."))] = "mc-sf",
    cost_model: Annotated[str, typer.Option(help=(
        "Cost model for a continuous-time instance (\"clock\": \"seconds\"); ignored for discrete ones."))]
    = "llama2-70b-a100-tp2",
    predictions: Annotated[str | None, typer.Option(help=(
        "Give every request a prediction interval first, e.g. relative:x=0.95, bins:width=100,count=10, "
        "shared:lower=1,upper=1000, noisy:sigma=0.5,width=0.5,seed=1 (for a-min, a-max, a-ell)."))] = None,
    requests_file: Annotated[Path | None, typer.Option("--requests", help=(
        "Write one row per request (start, completion, latency; TTFT and time between tokens in continuous "
        "time) to this file: CSV, or JSON if it ends in .json."), show_default=False)] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help=(
        "Draw the schedule to this image (PNG, PDF or SVG): a Gantt chart of the runs and the KV cache in use."),
        show_default=False)] = None,
    force: ForceFlag = False,
    json_output: JsonFlag = False,
) -> None:
    """Run an online policy on an instance, verify its schedule with the checker, and summarise it.

    A continuous-time instance (arrivals in seconds, e.g. from `llmopt trace`) runs on the
    continuous engine: batches last what --cost-model says.
    """
    from llmopt.policies import POLICIES, parse_policy_spec

    try:
        pname, _ = parse_policy_spec(policy)
    except ValueError as exc:
        die(f"--policy: {exc}")
    check_name(POLICIES, "--policy", pname)
    check_output_file("--requests", requests_file, inputs=[file], force=force)
    check_output_file("--plot", plot, inputs=[file], force=force)
    if plot is not None and plot.suffix.lower() not in (".png", ".pdf", ".svg"):
        die(f"--plot {plot}: give a .png, .pdf or .svg file")
    any_instance = load_any_or_die(file)
    if predictions is not None:
        from llmopt.workloads.predictions import apply_prediction_spec

        try:
            any_instance = apply_prediction_spec(any_instance, predictions)
        except (ValueError, KeyError) as exc:
            die(f"--predictions {predictions!r}: {exc}")
    if isinstance(any_instance, TimedInstance):
        sched, ok = _simulate_timed(file, any_instance, policy, cost_model, requests_file, json_output)
    else:
        sched, ok = _simulate_discrete(file, any_instance, policy, requests_file, json_output)
    if plot is not None:
        from llmopt.bench.schedule_plot import plot_schedule

        plot_schedule(any_instance, sched, plot, title=f"{policy} on {file.name}")
        typer.echo(f"plot: {plot}", err=True)
    if not ok:
        raise typer.Exit(1)


def _make_policy(policy: str) -> Any:
    from llmopt.policies import make_policy_spec

    try:
        return make_policy_spec(policy)
    except (TypeError, ValueError) as exc:
        die(f"--policy {policy!r}: {exc}")


#: Seconds between the progress lines of a long simulation (the first after as long).
PROGRESS_EVERY_S = 5.0


def _heartbeat(policy: str, n: int, monitor: dict[str, Any], stop: Any) -> None:
    """Every :data:`PROGRESS_EVERY_S` seconds until ``stop`` is set: one line on standard error with the
    requests completed so far (read from the engine's worker; nothing runs inside the engine's loop)."""
    import sys
    import time

    t0 = time.monotonic()
    while not stop.wait(PROGRESS_EVERY_S):
        worker = monitor.get("worker")
        done = getattr(worker, "done", 0)
        sys.stderr.write(f"simulating {policy}: {done:,} of {n:,} requests completed "
                         f"({time.monotonic() - t0:.0f} s)\n")
        sys.stderr.flush()


def _run(file: Path, policy: str, n: int, run: Any) -> Any:
    """``run(monitor)``, with progress lines while it lasts more than a few seconds and the command
    line's exits: 130 on Ctrl-C, 2 for a policy that needs prediction intervals the instance lacks
    (a bad input: ``--predictions`` supplies them), 1 for a failed run."""
    import threading

    from llmopt.engine.discrete import EvictionLoopError, SimulationError
    from llmopt.policies.intervals import IntervalPolicyError

    monitor: dict[str, Any] = {}
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(policy, n, monitor, stop), daemon=True)
    beat.start()
    try:
        return run(monitor)
    except KeyboardInterrupt:
        typer.echo("interrupted; nothing to show", err=True)
        raise typer.Exit(130) from None
    except IntervalPolicyError as exc:
        die(f"{file}: {exc}; or pass --predictions (e.g. relative:x=0.95)")
    except EvictionLoopError as exc:
        die(f"{file}: policy {policy!r} fell into an eviction loop and was stopped: {exc}", 1)
    except (SimulationError, ValueError) as exc:
        die(f"{file}: policy {policy!r} failed: {exc}", 1)
    finally:
        stop.set()
        beat.join()


def _simulate_discrete(file: Path, instance: Any, policy: str, requests_file: Path | None,
                       json_output: bool) -> tuple[Any, bool]:
    from llmopt.engine.discrete import simulate
    from llmopt.model.metrics import percentiles, request_rows
    from llmopt.verify.checker import check_schedule

    pol = _make_policy(policy)
    sched = _run(file, policy, instance.n, lambda monitor: simulate(instance, pol, monitor=monitor))
    report = check_schedule(instance, sched.starts, evictions=sched.evictions)
    ok = report.ok and report.tel == sched.tel
    why = "" if ok else (report.violations[0] if report.violations else f"checker TEL {report.tel} != {sched.tel}")
    ael = sched.tel / instance.n if instance.n else 0.0
    if json_output:
        json_out({**sched.to_dict(), "n": instance.n, "M": instance.M, "ael": ael, "makespan": sched.makespan,
                  "peak_memory": sched.peak_memory, "verified": ok,
                  "verification": "verified by the checker" if ok else f"rejected by the checker: {why}"})
    else:
        rows = request_rows(instance, sched)
        if requests_file is not None:
            write_rows(requests_file, rows)
        if instance.n <= TABLE_ROWS:
            from rich.table import Table

            t = Table(title=f"{escape(policy)} on {escape(str(file))}")
            for col in ("id", "arrival", "prompt", "output", "start", "completion", "latency"):
                t.add_column(col, justify="left" if col == "id" else "right")
            for row in rows:
                t.add_row(escape(row["id"]), *(str(row[c]) for c in ("arrival", "prompt", "output", "start",
                                                                      "completion", "latency")))
            console.print(t)
        else:
            console.print(f"{escape(policy)} on {escape(str(file))}: n = {instance.n:,}, M = {instance.M:,}",
                          soft_wrap=True)
        lat = percentiles(row["latency"] for row in rows)
        verified = "verified by the checker" if ok else f"[red]REJECTED by the checker: {escape(why)}[/red]"
        console.print(
            f"TEL = [bold]{sched.tel}[/bold]  AEL = {ael:.3f}  makespan = {sched.makespan}  "
            f"peak memory = {sched.peak_memory}/{instance.M}  evictions = {len(sched.evictions)}  ({verified})",
            soft_wrap=True)
        console.print(_latency_line("latency (steps)", lat, "", 1)
                      + (f"; per-request rows in {escape(str(requests_file))}" if requests_file else ""),
                      soft_wrap=True)
    return sched, ok


def _simulate_timed(file: Path, instance: TimedInstance, policy: str, cost_name: str,
                    requests_file: Path | None, json_output: bool) -> tuple[Any, bool]:
    from llmopt.cli.timed import cost_model_or_die
    from llmopt.engine.continuous import simulate_continuous
    from llmopt.model.metrics import percentiles, timed_request_rows
    from llmopt.verify.timed import check_timed_schedule

    cost = cost_model_or_die(cost_name)
    pol = _make_policy(policy)
    sched = _run(file, policy, instance.n, lambda monitor: simulate_continuous(instance, pol, cost, monitor=monitor))
    rep = check_timed_schedule(instance, sched.starts, sched.batch_start, sched.batch_duration, cost,
                               evictions=sched.evictions, stalls=sched.stalls)
    mean = sched.mean_latency
    ok = rep.ok and rep.mean_latency is not None and mean is not None and \
        abs(rep.mean_latency - mean) <= 1e-9 * max(1.0, mean)
    why = "" if ok else (rep.violations[0] if rep.violations else f"checker mean {rep.mean_latency} != {mean}")
    if json_output:
        json_out({**sched.to_dict(), "n": instance.n, "makespan": sched.makespan,
                  "peak_memory": sched.peak_memory, "iterations": sched.iterations, "verified": ok,
                  "verification": "verified by the checker (continuous time)" if ok else f"rejected: {why}"})
    else:
        rows = timed_request_rows(instance, sched)
        if requests_file is not None:
            write_rows(requests_file, rows)
        verified = "verified by the checker" if ok else f"[red]REJECTED by the checker: {escape(why)}[/red]"
        console.print(
            f"{escape(policy)} on {escape(str(file))} (continuous time, cost model {escape(cost_name)}): "
            f"n = {instance.n:,}, mean latency = [bold]{_fmt(mean, ' s')}[/bold], makespan {sched.makespan:.2f} s, "
            f"{sched.iterations:,} batches, peak memory {sched.peak_memory}/{instance.M}, "
            f"{len(sched.evictions)} evictions ({sched.recomputed_tokens} tokens recomputed)  ({verified})",
            soft_wrap=True)
        console.print(_latency_line("latency", percentiles(r["latency_s"] for r in rows), " s"), soft_wrap=True)
        console.print(_latency_line("time to first token", percentiles(r["ttft_s"] for r in rows), " s"),
                      soft_wrap=True)
        console.print(_latency_line("time between tokens", percentiles(r["mean_tbt_s"] for r in rows), " s", 4)
                      + (f"; per-request rows in {escape(str(requests_file))}" if requests_file else ""),
                      soft_wrap=True)
    return sched, ok
