"""``llmopt capacity``: how many workers does a policy need to meet a latency target?

::

    llmopt capacity TRACE [--policy P ...] [--router R ...] [--target mean:200 ...]
                          [--n 1000] [--rate 50 | --timestamps [--time-unit ms]] [--seed 0] [--format F]
                          [--M 16492]
                          [--cost-model NAME] [--k-max 64] [--exhaustive] [--plot latency_vs_k.png] [--force]
                          [--config FILE.toml] [--json]

``TRACE`` is a trace file (sampled as ``llmopt trace`` does) or a continuous-time instance JSON.
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
    check_name,
    check_option,
    check_output_file,
    console,
    die,
    json_out,
    num,
)
from llmopt.cli.config import ConfigOption

__all__ = ["capacity_cmd"]


def _instance(file: Path, n: int, rate: float | None, timestamps: bool, seed: int, format: str | None,
              M: int, on_bad_row: str, time_unit: str | None = None) -> Any:
    from llmopt.model.instance import InstanceError
    from llmopt.model.timed_instance import TimedInstance, load_any_instance
    from llmopt.workloads.traces import TraceError, apply_time_unit, load_trace, sample_instance

    if file.suffix.lower() == ".json":
        if time_unit is not None:
            die(f"--time-unit applies to a trace file's timestamps, not to an instance ({file})")
        try:
            inst = load_any_instance(file)
        except InstanceError as exc:
            die(str(exc))
        if not isinstance(inst, TimedInstance):
            die(f"{file}: a discrete instance; capacity planning needs seconds (a continuous-time instance or a "
                "trace file)")
        if inst.n == 0:
            die(f"{file}: the instance has no requests; there is no latency to plan workers for")
        return inst
    try:
        trace = load_trace(file, format, M=M, on_bad_row=on_bad_row)
        if timestamps:
            # The one rule shared with `llmopt trace` and llmopt.load_trace (unit given, or the same warning).
            trace, warning = apply_time_unit(trace, time_unit)
            if warning is not None:
                typer.echo(f"warning: {warning}", err=True)
        if n > trace.n:
            die(f"{file}: --n {n:,} is more than the {trace.n:,} usable rows of the trace")
        return sample_instance(trace, n, seed, rate=rate, use_timestamps=timestamps, M=M)
    except (TraceError, InstanceError, ValueError) as exc:
        die(str(exc))


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
    from llmopt.capacity.planning import LatencyTarget, plan_capacity
    from llmopt.engine.cost_model import COST_MODELS, make_cost_model
    from llmopt.policies import POLICIES, parse_policy_spec
    from llmopt.policies.routers import ROUTERS, parse_router_spec
    from llmopt.report.capacity import capacity_rows, plot_latency_vs_workers

    policies, routers = policy or ["mc-sf"], router or ["round-robin"]
    check_option("--n", n, minimum=1)
    check_option("--seed", seed, minimum=0)
    check_option("--M", M, minimum=2)
    check_option("--k-max", k_max, minimum=1)
    check_option("--rate", rate, minimum=0, strict=True)
    if rate is not None and timestamps:
        die("give at most one of --rate and --timestamps")
    from llmopt.workloads.traces import TIME_UNITS

    if time_unit is not None and time_unit not in TIME_UNITS:
        die(f"--time-unit must be one of {', '.join(TIME_UNITS)}, got {time_unit!r}")
    if time_unit is not None and not timestamps:
        die("--time-unit applies to the trace's own timestamps (--timestamps), not to --rate")
    try:
        targets = [LatencyTarget.parse(t) for t in (latency_target or ["mean:200"])]
        for p in policies:
            check_name(POLICIES, "--policy", parse_policy_spec(p)[0])
        for r in routers:
            check_name(ROUTERS, "--router", parse_router_spec(r)[0])
    except ValueError as exc:
        die(str(exc))
    from llmopt.model.params import check_params
    from llmopt.policies import make_policy_spec
    from llmopt.policies.routers import make_router_spec

    # Parameters too, before any work (`alpha=abc`, `alpha=1`): one line here, not a traceback from the engine.
    for opt, specs, registry, parse, make in (
            ("--policy", policies, POLICIES, parse_policy_spec, make_policy_spec),
            ("--router", routers, ROUTERS, parse_router_spec, make_router_spec)):
        for spec in specs:
            try:
                name, params = parse(spec)
                check_params(registry.kind, name, registry.get(name), params)
                make(spec)
            except (TypeError, ValueError) as exc:
                die(f"{opt} {spec!r}: {exc}")
    check_name(COST_MODELS, "--cost-model", cost_model)
    plots = _plot_paths(plot, targets)
    for path in plots.values():
        check_output_file("--plot", path, inputs=[trace], force=force)
        if path.suffix.lower() not in (".png", ".pdf", ".svg"):
            die(f"--plot {path}: give a .png, .pdf or .svg file")
    inst = _instance(trace, n, None if timestamps else (rate if rate is not None else 50.0), timestamps, seed,
                     format, M, on_bad_row, time_unit)
    cost = make_cost_model(cost_model)
    results = []
    for target in targets:
        for p in policies:
            for r in routers:
                if not json_flag:
                    console.print(f"[bold]{p}[/] × {r}, target {target}:")

                def show(run: Any, target: Any = target) -> None:
                    if not json_flag:
                        console.print(f"  K = {run.K:>3}: {_verdict(run, target)} ({run.sim_s:.1f} s)")

                res, runs = plan_capacity(inst, p, r, target, cost, seed=seed, k_max=k_max, exhaustive=exhaustive,
                                          progress=show)
                results.append((p, r, res, runs))
    rows = capacity_rows(results)
    for target, path in plots.items():
        curves = {f"{p} × {r}": runs for p, r, res, runs in results if res.target == target}
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
    if any(row["workers"] is None for row in rows):
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
