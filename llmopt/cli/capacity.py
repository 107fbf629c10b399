"""``llmopt capacity``: how many workers does a policy need to meet a latency target?

::

    llmopt capacity TRACE [--policy P ...] [--router R ...] [--target mean:200 ...]
                          [--n 1000] [--rate 50 | --timestamps [--time-unit ms]] [--seed 0] [--format F]
                          [--M 16492]
                          [--cost-model NAME] [--k-max 64] [--exhaustive] [--plot latency_vs_k.png] [--force]
                          [--config FILE.toml] [--json]

A thin parse → API call → print over :func:`llmopt.api.plan_capacity` (and
:func:`llmopt.api.capacity_instance` for the input). ``TRACE`` is a trace file (sampled as ``llmopt
trace`` does) or a continuous-time instance JSON.
For every (policy, router, target) the smallest number of workers K — each a Llama-2-70B worker
on 2×A100 with its own KV cache M and batch clock (the cost model) — whose verified run meets
the target is searched by doubling and bisection (:func:`llmopt.capacity.planning.smallest_workers`;
``--exhaustive`` tries every K instead). A target (``--target``, also ``--latency-target`` / ``-t``) is
``STAT:SECONDS`` on the end-to-end latency (``mean:200``, ``p99:600``), the time to first token
(``ttft_p99:2``) or each request's mean time between tokens (``tbt_p50:0.1``); ``=`` may replace ``:``.
One line per simulated K says whether that K meets the target. Every file written is named on
standard error (``plot: PATH``). ``--time-unit`` says which unit a trace's numeric timestamps count
(as in ``llmopt trace``; without it they are read in the format's own unit, with a warning where they
look like milliseconds). A plot path in a missing folder, or an existing one without
``--force``, is refused before any simulation. The table gives
the smallest K, the latency there, GPU-seconds and energy per request (2 GPUs per worker at
400 W each) and the number of simulations (``--json`` lists every K with its value). Exit 2 on
bad input (one line naming the file, row, field or option); 1 when some pair meets its target at
no K up to ``--k-max``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from llmopt.cli.common import (
    ForceFlag,
    JsonFlag,
    check_output_file,
    console,
    die,
    die_bad,
    echo_warnings,
    json_out,
    num,
)
from llmopt.cli.config import ConfigOption

__all__ = ["capacity_cmd"]


def capacity_cmd(
    trace: Annotated[Path, typer.Argument(help="Trace file (CSV, or JSON lines for mooncake) or a continuous-time "
                                               "instance JSON.", show_default=False)],
    policy: Annotated[list[str] | None, typer.Option(
        "--policy", "-p", help="Policy spec, repeatable (default mc-sf), e.g. alpha-protection:alpha=0.2.",
        show_default=False)] = None,
    router: Annotated[list[str] | None, typer.Option(
        "--router", "-r", help="Router spec, repeatable (default round-robin): round-robin, jsq, least-kv, p2c, "
                               "lookahead.", show_default=False)] = None,
    latency_target: Annotated[list[str] | None, typer.Option(
        "--target", "--latency-target", "-t", help=(
            "STAT:SECONDS, repeatable (default mean:200): STAT is mean, p50, p90 or p99 of the latency, or the "
            "same prefixed ttft_ (time to first token) or tbt_ (time between tokens), e.g. ttft_p99:2."),
        show_default=False)] = None,
    n: Annotated[int, typer.Option("--n", "-n", help="Requests drawn from a trace file.")] = 1000,
    rate: Annotated[float | None, typer.Option("--rate", help="Poisson arrivals per second (trace files; default "
                                                              "50 unless --timestamps).", show_default=False)] = None,
    timestamps: Annotated[bool, typer.Option("--timestamps", help="Use the trace's own arrival times.")] = False,
    time_unit: Annotated[str | None, typer.Option(
        "--time-unit", help="Unit of the trace's numeric timestamps with --timestamps: s, ms or us (default: the "
                            "format's own, seconds; milliseconds for mooncake).", show_default=False)] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw and of seeded policies / routers.")] = 0,
    format: Annotated[str | None, typer.Option("--format", help="Trace format (default: detected).",
                                               show_default=False)] = None,
    M: Annotated[int, typer.Option("--M", help="KV-cache capacity of each worker, tokens.")] = 16_492,
    on_bad_row: Annotated[str, typer.Option("--on-bad-row", help="error, drop or clamp (trace files).")] = "drop",
    cost_model: Annotated[str, typer.Option("--cost-model", help="Registered batch-time model.")] =
        "llama2-70b-a100-tp2",
    k_max: Annotated[int, typer.Option("--k-max", help="Largest number of workers tried.")] = 64,
    exhaustive: Annotated[bool, typer.Option("--exhaustive", help="Try K = 1, 2, 3, … instead of doubling and "
                                                                  "bisecting (no monotonicity assumed).")] = False,
    plot: Annotated[Path | None, typer.Option("--plot", help=(
        "Write the latency-vs-K figure (PNG, PDF or SVG) here; with several targets one per target, "
        "named STEM_STAT.png (each path is printed)."), show_default=False)] = None,
    config: ConfigOption = None,
    force: ForceFlag = False,
    json_flag: JsonFlag = False,
) -> None:
    """Smallest number of workers each (policy, router) needs to meet a latency target on a trace."""
    from llmopt.api import BadInput, capacity_instance, plan_capacity
    from llmopt.api.capacity import check_capacity_arguments
    from llmopt.model.instance import InstanceError
    from llmopt.report.capacity import plot_latency_vs_workers
    from llmopt.workloads.traces import TraceError

    policies, routers = policy or ["mc-sf"], router or ["round-robin"]

    def show(p: str, r: str, target: Any, run: Any) -> None:
        if json_flag:
            return
        if run is None:
            console.print(f"[bold]{p}[/] × {r}, target {target}:")
        else:
            console.print(f"  K = {run.K:>3}: {_verdict(run, target)} ({run.sim_s:.1f} s)")

    try:
        targets = check_capacity_arguments(policies=policies, routers=routers, targets=latency_target or ["mean:200"],
                                           cost_model=cost_model, n=n, seed=seed, M=M, k_max=k_max, rate=rate,
                                           use_timestamps=timestamps, time_unit=time_unit)
        plots = _plot_paths(plot, targets)
        for path in plots.values():
            check_output_file("--plot", path, inputs=[trace], force=force)
            if path.suffix.lower() not in (".png", ".pdf", ".svg"):
                die(f"--plot {path}: give a .png, .pdf or .svg file")
        with echo_warnings():
            inst = capacity_instance(trace, n=n, rate=rate, use_timestamps=timestamps, seed=seed, format=format, M=M,
                                     on_bad_row=on_bad_row, time_unit=time_unit)
    except BadInput as exc:
        die_bad(exc, instance=str(trace))
    except (TraceError, InstanceError, ValueError) as exc:
        die(str(exc))
    try:
        planned = plan_capacity(inst, policies=policies, routers=routers, targets=latency_target or ["mean:200"],
                                cost_model=cost_model, seed=seed, k_max=k_max, exhaustive=exhaustive, progress=show)
    except BadInput as exc:
        die_bad(exc, instance=str(trace))
    rows = planned.rows
    for target, path in plots.items():
        curves = {f"{p} × {r}": runs for p, r, res, runs in planned.results if res.target == target}
        plot_latency_vs_workers(curves, path, statistic=target.statistic, limit_s=target.limit_s,
                                title=f"{inst.name}: n = {inst.n:,}")
        typer.echo(f"plot: {path}", err=True)
    if json_flag:
        json_out({"instance": inst.name, "n": inst.n, "M": inst.M, "cost_model": cost_model, "rows": rows,
                  "plots": [str(p) for p in plots.values()]})
    else:
        from rich.table import Table

        table = Table(title=f"{inst.name}: n = {inst.n:,}, M = {inst.M:,} per worker, cost model {cost_model}")
        for h in ("policy", "router", "target", "smallest K", "at K (s)", "mean (s)", "p99 (s)", "GPU-s / req",
                  "J / req", "runs"):
            table.add_column(h, overflow="fold")
        for row in rows:
            k = "—" if row["workers"] is None else str(row["workers"])
            if row["workers"] is not None and not row["monotone"]:
                k += " (non-monotone: try --exhaustive)"
            table.add_row(row["policy"], row["router"], row["target"], k if row["workers"] else f"> {row['k_max']}",
                          num(row["target_value_s"]), num(row["mean_s"]), num(row["p99_s"]),
                          num(row["gpu_s_per_request"]), num(row["energy_j_per_request"]),
                          str(len(row["evaluated"].split())))
        console.print(table)
    if not planned.met:
        raise typer.Exit(1)


def _plot_paths(plot: Path | None, targets: list[Any]) -> dict[Any, Path]:
    """Target → its figure's path: ``plot`` itself for one target, else ``STEM_STAT.SUFFIX`` per target
    (``STEM_STAT_LIMIT.SUFFIX`` where two targets share a statistic)."""
    if plot is None:
        return {}
    if len(targets) == 1:
        return {targets[0]: plot}
    stats = [t.statistic for t in targets]
    out = {}
    for t in dict.fromkeys(targets):
        tag = t.statistic if stats.count(t.statistic) == 1 else f"{t.statistic}_{t.limit_s:g}"
        out[t] = plot.with_name(f"{plot.stem}_{tag}{plot.suffix}")
    return out


def _verdict(run: Any, target: Any) -> str:
    """Whether one K meets ``target``, in words: ``misses p99:60: p99 75.5 s, mean 41.2 s``, or why it
    misses without a value."""
    if run.status == "rejected":
        return f"misses {target}: the checker rejected the run"
    if run.status == "eviction-loop":
        return f"misses {target}: a worker fell into an eviction loop"
    value = run.statistic(target.statistic)
    shown = [f"{target.statistic} {num(value)} s"] + [f"{k} {num(run.statistic(k))} s" for k in ("mean", "p99")
                                                      if k != target.statistic]
    return f"{'meets' if target.met_by(value) else 'misses'} {target}: {', '.join(shown)}"
