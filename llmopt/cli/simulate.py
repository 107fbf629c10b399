"""``llmopt simulate``: run an online policy on an instance, verify its schedule, summarise it.

The run goes through :func:`llmopt.api.simulate` (the Python API and the command answer an input
alike); ``--workers K`` / ``--router R`` make it a cluster run. The terminal shows a summary — TEL /
mean latency, latency percentiles, evictions, peak memory, for continuous-time instances TTFT and
time between tokens, throughput and the requests-per-batch distribution
(:func:`llmopt.model.metrics.run_summary`) — and, for an instance of at most :data:`TABLE_ROWS`
requests, the per-request table. Every request's row goes to a file on request (``--requests
FILE.csv`` or ``.json``); ``--json`` prints the schedule itself (what ``llmopt check`` reads back)
with the same summary; ``--plot-cdf`` draws the CDFs of latency, TTFT and TBT. ``--max-num-seqs``,
``--max-num-batched-tokens`` and ``--block-size`` run one worker under batch limits and KV blocks;
``--kv-capacity-from`` computes ``M`` from the hardware (:func:`llmopt.engine.hardware.parse_kv_capacity_spec`)
and ``--kv-capacity`` sets it; the ``M`` used is printed (and is the ``M`` of ``--json``).
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
    check_option,
    check_output_file,
    console,
    die,
    json_out,
    load_any_or_die,
    write_rows,
)
from llmopt.cli.config import ConfigOption
from llmopt.model.timed_instance import TimedInstance

__all__ = ["simulate_cmd", "TABLE_ROWS"]

#: Instances up to this many requests also get the per-request table on the terminal.
TABLE_ROWS = 20


def _fmt(value: float | None, unit: str = "", digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}{unit}"


def _latency_line(name: str, p: dict[str, Any], unit: str, digits: int = 3) -> str:
    return (f"{name}: mean {_fmt(p['mean'], unit, digits)}, p50 {_fmt(p['p50'], unit, digits)}, "
            f"p90 {_fmt(p['p90'], unit, digits)}, p99 {_fmt(p['p99'], unit, digits)}, "
            f"max {_fmt(p['max'], unit, digits)}")


def simulate_cmd(
    file: InstanceFile,
    policy: Annotated[str, typer.Option("--policy", "-p", help=(
        "Policy (see `llmopt policies`), with parameters as name:key=value,... "
        "e.g. alpha-protection:alpha=0.2,beta=0.1."))] = "mc-sf",
    cost_model: Annotated[str, typer.Option(help=(
        "Cost model for a continuous-time instance (\"clock\": \"seconds\"); ignored for discrete ones."))]
    = "llama2-70b-a100-tp2",
    workers: Annotated[int | None, typer.Option("--workers", "-K", help=(
        "Run K workers, each with its own KV cache M and batch clock and its own copy of the policy "
        "(default: one worker; --router alone means K = 1)."), show_default=False)] = None,
    router: Annotated[str | None, typer.Option("--router", "-r", help=(
        "Router sending each request at its arrival to a worker (with --workers; default round-robin): "
        "round-robin, jsq, least-kv, p2c[:seed=S], lookahead."), show_default=False)] = None,
    max_num_seqs: Annotated[int | None, typer.Option("--max-num-seqs", help=(
        "Most requests in one batch (vLLM's max_num_seqs; default: no limit), per worker with --workers. The "
        "engine admits a decision's starts in the policy's order until a limit binds; the rest wait."),
        show_default=False)] = None,
    max_num_batched_tokens: Annotated[int | None, typer.Option("--max-num-batched-tokens", help=(
        "Most tokens in one batch: the prompts started in it plus one per decoding request (vLLM's "
        "max_num_batched_tokens; default: no limit)."), show_default=False)] = None,
    block_size: Annotated[int, typer.Option("--block-size", help=(
        "KV memory in blocks of this many tokens (vLLM: 16): a request holding m tokens uses ceil(m / B) of the "
        "M // B blocks. 1 is the papers' token-exact model."))] = 1,
    kv_capacity: Annotated[int | None, typer.Option("--kv-capacity", help=(
        "KV capacity M in tokens, replacing the instance's (and --kv-capacity-from)."), show_default=False)] = None,
    kv_capacity_from: Annotated[str | None, typer.Option("--kv-capacity-from", help=(
        "Compute M from the hardware: 'paper' (16,492), 'vidur' (Vidur's rule: 53,248 for Llama-2-70B on "
        "2xA100-80GB), or key=value pairs gpu_mem=80GiB,tp=2,params=...,bytes_per_param=2,kv_bytes=327680,"
        "util=0.9,block=16,reserve=0 (llmopt.engine.hardware.kv_capacity_from_hardware)."),
        show_default=False)] = None,
    predictions: Annotated[str | None, typer.Option(help=(
        "Give every request a prediction interval first, e.g. relative:x=0.95, bins:width=100,count=10, "
        "shared:lower=1,upper=1000, noisy:sigma=0.5,width=0.5,seed=1 (for a-min, a-max, a-ell)."))] = None,
    requests_file: Annotated[Path | None, typer.Option("--requests", help=(
        "Write one row per request (start, completion, latency; TTFT and time between tokens in continuous "
        "time; the worker with --workers) to this file: CSV, or JSON if it ends in .json."),
        show_default=False)] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help=(
        "Draw the schedule to this image (PNG, PDF or SVG): a Gantt chart of the runs and the KV cache in use "
        "(one worker)."), show_default=False)] = None,
    plot_cdf: Annotated[Path | None, typer.Option("--plot-cdf", help=(
        "Draw the empirical CDFs of latency and, in continuous time, time to first token and time between "
        "tokens to this image (PNG, PDF or SVG)."), show_default=False)] = None,
    config: ConfigOption = None,
    force: ForceFlag = False,
    json_output: JsonFlag = False,
) -> None:
    """Run an online policy on an instance, verify its schedule with the checker, and summarise it.

    A continuous-time instance (arrivals in seconds, e.g. from `llmopt trace`) runs on the
    continuous engine: batches last what --cost-model says. With --workers or --router the run is
    a cluster of K workers (llmopt.simulate(..., workers=K, router=R) answers the same).
    """
    from llmopt.policies import POLICIES, parse_policy_spec
    from llmopt.policies.routers import ROUTERS, parse_router_spec

    try:
        pname, _ = parse_policy_spec(policy)
    except ValueError as exc:
        die(f"--policy: {exc}")
    check_name(POLICIES, "--policy", pname)
    check_option("--workers", workers, minimum=1)
    for opt, val in (("--max-num-seqs", max_num_seqs), ("--max-num-batched-tokens", max_num_batched_tokens),
                     ("--block-size", block_size), ("--kv-capacity", kv_capacity)):
        check_option(opt, val, minimum=1)
    limits = {k: v for k, v in (("max_num_seqs", max_num_seqs), ("max_num_batched_tokens", max_num_batched_tokens),
                                ("block_size", block_size)) if v is not None and (k != "block_size" or v != 1)}
    kv_source = None
    if kv_capacity_from is not None:
        from llmopt.engine.hardware import parse_kv_capacity_spec

        try:
            kv_from, kv_source = parse_kv_capacity_spec(kv_capacity_from)
        except ValueError as exc:
            die(f"--kv-capacity-from {kv_capacity_from!r}: {exc}")
        if kv_from < 1:
            die(f"--kv-capacity-from {kv_capacity_from!r}: the weights leave no memory for the KV cache (M = 0)")
    if kv_capacity is not None:
        kv_from, kv_source = kv_capacity, "--kv-capacity"
    if router is not None:
        try:
            rname, _ = parse_router_spec(router)
        except ValueError as exc:
            die(f"--router: {exc}")
        check_name(ROUTERS, "--router", rname)
    cluster = workers is not None or router is not None
    for name, path in (("--requests", requests_file), ("--plot", plot), ("--plot-cdf", plot_cdf)):
        check_output_file(name, path, inputs=[file], force=force)
        if name != "--requests" and path is not None and path.suffix.lower() not in (".png", ".pdf", ".svg"):
            die(f"{name} {path}: give a .png, .pdf or .svg file")
    if plot is not None and plot_cdf is not None and plot.resolve() == plot_cdf.resolve():
        die(f"--plot and --plot-cdf name the same file {plot}")
    if plot is not None and cluster:
        die("--plot draws one worker's schedule; drop --workers/--router, or use --plot-cdf")
    any_instance = load_any_or_die(file)
    if predictions is not None:
        from llmopt.workloads.predictions import apply_prediction_spec

        try:
            any_instance = apply_prediction_spec(any_instance, predictions)
        except (ValueError, KeyError) as exc:
            die(f"--predictions {predictions!r}: {exc}")
    if kv_source is not None:
        any_instance = _with_capacity(file, any_instance, kv_from, kv_source)
    timed = isinstance(any_instance, TimedInstance)
    cost = None
    if timed:
        from llmopt.cli.timed import cost_model_or_die

        cost = cost_model_or_die(cost_model)
    _make_policy(policy)  # a bad parameter is a bad option (exit 2), found before the run
    if router is not None:
        _make_router(router)
    sched = _run(file, policy, any_instance.n, lambda monitor: _api_simulate(
        any_instance, policy, cost, workers, router, monitor, **limits))
    ok, why = _verify(any_instance, sched, cost)
    _report(file, any_instance, sched, policy, cost_model if timed else None, ok, why, requests_file, json_output,
            kv_source)
    if plot is not None:
        from llmopt.report.schedule_plot import plot_schedule

        plot_schedule(any_instance, sched, plot, title=f"{policy} on {file.name}")
        typer.echo(f"plot: {plot}", err=True)
    if plot_cdf is not None:
        _plot_cdf(any_instance, sched, plot_cdf, f"{policy} on {file.name}")
        typer.echo(f"CDF plot: {plot_cdf}", err=True)
    if not ok:
        raise typer.Exit(1)


def _api_simulate(instance: Any, policy: str, cost: Any, workers: int | None, router: str | None,
                  monitor: dict[str, Any], **limits: Any) -> Any:
    """The run through :func:`llmopt.api.simulate`, the one surface the Python API and the command share."""
    from llmopt.api import simulate

    return simulate(instance, policy, cost_model=cost, workers=workers, router=router, monitor=monitor, **limits)


def _with_capacity(file: Path, instance: Any, M: int, source: str) -> Any:
    """``instance`` with KV capacity ``M``; exit 2 naming the request that no longer fits."""
    import dataclasses

    from llmopt.model.instance import InstanceError

    try:
        return dataclasses.replace(instance, M=M)
    except InstanceError as exc:
        die(f"{file}: with M = {M:,} ({source}): {exc}")


def _verify(instance: Any, sched: Any, cost: Any) -> tuple[bool, str]:
    """The independent checker's verdict (:func:`llmopt.api.check`) and, if it rejects, why: a
    violation, or a recomputed TEL / mean latency that differs from the engine's."""
    from llmopt.api import check

    rep = check(instance, sched, cost_model=cost)
    if isinstance(instance, TimedInstance) or hasattr(sched, "workers"):
        mine, theirs = sched.mean_latency, rep.mean_latency
        same = mine is not None and theirs is not None and abs(theirs - mine) <= 1e-9 * max(1.0, abs(mine))
        same = same or (instance.n == 0 and mine is None and theirs is None)  # no request: no mean on either side
        what = "mean"
    else:
        mine, theirs, what = sched.tel, rep.tel, "TEL"
        same = mine == theirs
    if rep.ok and same:
        return True, ""
    return False, rep.violations[0] if rep.violations else f"checker {what} {theirs} != {mine}"


def _plot_cdf(instance: Any, sched: Any, path: Path, title: str) -> None:
    from llmopt.model.metrics import cluster_request_rows
    from llmopt.report.cdf_plot import plot_cdfs

    rows = cluster_request_rows(instance, list(sched.workers) if hasattr(sched, "workers") else [sched])
    if isinstance(instance, TimedInstance):
        panels = {"latency (s)": [r["latency_s"] for r in rows], "time to first token (s)": [r["ttft_s"] for r in rows],
                  "time between tokens (s)": [r["mean_tbt_s"] for r in rows]}
    else:
        panels = {"latency (steps)": [r["latency"] for r in rows]}
    plot_cdfs(panels, path, title=title)


def _make_policy(policy: str) -> Any:
    from llmopt.policies import make_policy_spec

    try:
        return make_policy_spec(policy)
    except (TypeError, ValueError) as exc:
        die(f"--policy {policy!r}: {exc}")


def _make_router(router: str) -> Any:
    from llmopt.policies.routers import make_router_spec

    try:
        return make_router_spec(router)
    except (TypeError, ValueError) as exc:
        die(f"--router {router!r}: {exc}")


#: Seconds between the progress lines of a long simulation (the first after as long).
PROGRESS_EVERY_S = 5.0


def _heartbeat(policy: str, n: int, monitor: dict[str, Any], stop: Any) -> None:
    """Every :data:`PROGRESS_EVERY_S` seconds until ``stop`` is set: one line on standard error with the
    requests completed so far (read from the engine's worker; nothing runs inside the engine's loop)."""
    import sys
    import time

    t0 = time.monotonic()
    while not stop.wait(PROGRESS_EVERY_S):
        workers = monitor.get("workers") or [monitor.get("worker")]  # several workers, or one
        done = sum(getattr(w, "done", 0) for w in workers)
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


def _report(file: Path, instance: Any, sched: Any, policy: str, cost_name: str | None, ok: bool, why: str,
            requests_file: Path | None, json_output: bool, kv_source: str | None = None) -> None:
    """Print the run: ``--json`` (the schedule, which ``llmopt check`` reads back, and the summary of
    :func:`llmopt.model.metrics.run_summary`) or the summary lines; write ``--requests``' rows."""
    from llmopt.model.metrics import cluster_request_rows, request_rows, run_summary, timed_request_rows

    timed = isinstance(instance, TimedInstance)
    cluster = hasattr(sched, "workers")
    if cluster:
        rows = cluster_request_rows(instance, list(sched.workers))
    else:
        rows = timed_request_rows(instance, sched) if timed else request_rows(instance, sched)
    summary = run_summary(instance, sched, rows)
    if requests_file is not None:
        write_rows(requests_file, rows)
    if json_output:
        head: dict[str, Any] = {"n": instance.n, "M": instance.M, "makespan": sched.makespan}
        if kv_source is not None:
            head["kv_capacity_source"] = kv_source
        if cluster:
            head["mean_latency"] = sched.mean_latency
        elif timed:
            head |= {"peak_memory": sched.peak_memory, "iterations": sched.iterations}
        else:
            head |= {"ael": sched.tel / instance.n if instance.n else 0.0, "peak_memory": sched.peak_memory}
        verification = ("verified by the checker" + (" (continuous time)" if timed else "")) if ok \
            else f"rejected by the checker: {why}"
        json_out({**sched.to_dict(), **head, **summary, "verified": ok, "verification": verification})
        return
    verified = "verified by the checker" if ok else f"[red]REJECTED by the checker: {escape(why)}[/red]"
    if kv_source is not None:
        console.print(f"KV capacity: M = {instance.M:,} tokens ({escape(kv_source)})", soft_wrap=True)
    limits = getattr(sched, "limits", None)
    if limits is not None and not limits.is_default:
        console.print(f"batch limits: max_num_seqs {limits.max_num_seqs or '—'}, max_num_batched_tokens "
                      f"{limits.max_num_batched_tokens or '—'}, block_size {limits.block_size} "
                      f"({instance.M // limits.block_size:,} blocks)", soft_wrap=True)
    rows_note = f"; per-request rows in {escape(str(requests_file))}" if requests_file else ""
    if cluster:
        clock = f"continuous time, cost model {escape(str(cost_name))}" if timed else "discrete time"
        mean = sched.mean_latency
        console.print(
            f"{escape(policy)} on {escape(str(file))} ({clock}), K = {sched.K} workers, router "
            f"{escape(sched.router)}: n = {instance.n:,}, mean latency = [bold]"
            f"{_fmt(mean, ' s' if timed else '', 3)}[/bold], makespan {_fmt(float(sched.makespan), '', 2)}, "
            f"{sched.evictions} evictions, requests per worker {list(sched.load())}  ({verified})", soft_wrap=True)
    elif timed:
        console.print(
            f"{escape(policy)} on {escape(str(file))} (continuous time, cost model {escape(str(cost_name))}): "
            f"n = {instance.n:,}, mean latency = [bold]{_fmt(sched.mean_latency, ' s')}[/bold], makespan "
            f"{sched.makespan:.2f} s, {sched.iterations:,} batches, peak memory {sched.peak_memory}/{instance.M}, "
            f"{len(sched.evictions)} evictions ({sched.recomputed_tokens} tokens recomputed)  ({verified})",
            soft_wrap=True)
    else:
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
        ael = sched.tel / instance.n if instance.n else 0.0
        console.print(
            f"TEL = [bold]{sched.tel}[/bold]  AEL = {ael:.3f}  makespan = {sched.makespan}  "
            f"peak memory = {sched.peak_memory}/{instance.M}  evictions = {len(sched.evictions)}  ({verified})",
            soft_wrap=True)
    if timed:
        console.print(_latency_line("latency", summary["latency"], " s"), soft_wrap=True)
        console.print(_latency_line("time to first token", summary["ttft"], " s"), soft_wrap=True)
        console.print(_latency_line("time between tokens", summary["tbt"], " s", 4), soft_wrap=True)
    else:
        console.print(_latency_line("latency (steps)", summary["latency"], "", 1), soft_wrap=True)
    unit = "s" if timed else "step"
    tp, bs = summary["throughput"], summary["batch_size"]
    console.print(f"throughput: {_fmt(tp[f'requests_per_{unit}'], f' requests/{unit}')}, "
                  f"{_fmt(tp[f'tokens_per_{unit}'], f' output tokens/{unit}', 1)} over "
                  f"{_fmt(float(tp['span']), ' s' if timed else ' steps', 2)}", soft_wrap=True)
    console.print(f"requests per batch: min {_fmt(bs['min'], '', 0)}, mean {_fmt(bs['mean'], '', 2)}, "
                  f"p50 {_fmt(bs['p50'], '', 0)}, p90 {_fmt(bs['p90'], '', 0)}, p99 {_fmt(bs['p99'], '', 0)}, "
                  f"max {_fmt(bs['max'], '', 0)} over {bs['batches']:,} batches{rows_note}", soft_wrap=True)
