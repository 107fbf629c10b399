"""``llmopt capacity``: how many workers does a policy need to meet a latency target?

::

    llmopt capacity TRACE [--policy P ...] [--router R ...] [--latency-target mean:200 ...]
                          [--n 1000] [--rate 50 | --timestamps] [--seed 0] [--format F] [--M 16492]
                          [--cost-model NAME] [--k-max 64] [--exhaustive] [--plot latency_vs_k.png] [--json]

``TRACE`` is a trace file (sampled as ``llmopt trace`` does) or a continuous-time instance JSON.
For every (policy, router, target) the smallest number of workers K — each a Llama-2-70B worker
on 2×A100 with its own KV cache M and batch clock (the cost model) — whose verified run meets
the target is searched by doubling and bisection (:func:`llmopt.bench.capacity.smallest_workers`;
``--exhaustive`` tries every K instead). One line per simulated K shows progress. The table gives
the smallest K, the latency there, GPU-seconds and energy per request (2 GPUs per worker at
400 W each) and the number of simulations (``--json`` lists every K with its value). Exit 2 on
bad input (one line naming the file, row, field or option); 1 when some pair meets its target at
no K up to ``--k-max``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from llmopt.cli.common import JsonFlag, check_name, check_option, console, die, json_out, num

__all__ = ["capacity_cmd"]


def _instance(file: Path, n: int, rate: float | None, timestamps: bool, seed: int, format: str | None,
              M: int, on_bad_row: str) -> Any:
    from llmopt.model.instance import InstanceError
    from llmopt.model.timed_instance import TimedInstance, load_any_instance
    from llmopt.workloads.traces import TraceError, load_trace, sample_instance

    if file.suffix.lower() == ".json":
        try:
            inst = load_any_instance(file)
        except InstanceError as exc:
            die(str(exc))
        if not isinstance(inst, TimedInstance):
            die(f"{file}: a discrete instance; capacity planning needs seconds (a continuous-time instance or a "
                "trace file)")
        return inst
    try:
        trace = load_trace(file, format, M=M, on_bad_row=on_bad_row)
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
        "--latency-target", "-t", help="STAT:SECONDS with STAT one of mean, p50, p90, p99; repeatable "
                                       "(default mean:200).", show_default=False)] = None,
    n: Annotated[int, typer.Option("--n", "-n", help="Requests drawn from a trace file.")] = 1000,
    rate: Annotated[float | None, typer.Option("--rate", help="Poisson arrivals per second (trace files; default "
                                                              "50 unless --timestamps).", show_default=False)] = None,
    timestamps: Annotated[bool, typer.Option("--timestamps", help="Use the trace's own arrival times.")] = False,
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
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the latency-vs-K figure (PNG) here.",
                                              show_default=False)] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Smallest number of workers each (policy, router) needs to meet a latency target on a trace."""
    from llmopt.bench.capacity import LatencyTarget, plan_capacity
    from llmopt.bench.capacity_report import capacity_rows, plot_latency_vs_workers
    from llmopt.engine.cost_model import COST_MODELS, make_cost_model
    from llmopt.engine.routers import ROUTERS, parse_router_spec
    from llmopt.policies import POLICIES, parse_policy_spec

    policies, routers = policy or ["mc-sf"], router or ["round-robin"]
    check_option("--n", n, minimum=1)
    check_option("--seed", seed, minimum=0)
    check_option("--M", M, minimum=2)
    check_option("--k-max", k_max, minimum=1)
    check_option("--rate", rate, minimum=0, strict=True)
    if rate is not None and timestamps:
        die("give at most one of --rate and --timestamps")
    try:
        targets = [LatencyTarget.parse(t) for t in (latency_target or ["mean:200"])]
        for p in policies:
            check_name(POLICIES, "--policy", parse_policy_spec(p)[0])
        for r in routers:
            check_name(ROUTERS, "--router", parse_router_spec(r)[0])
    except ValueError as exc:
        die(str(exc))
    check_name(COST_MODELS, "--cost-model", cost_model)
    inst = _instance(trace, n, None if timestamps else (rate if rate is not None else 50.0), timestamps, seed,
                     format, M, on_bad_row)
    cost = make_cost_model(cost_model)
    results = []
    for target in targets:
        for p in policies:
            for r in routers:
                if not json_flag:
                    console.print(f"[bold]{p}[/] × {r}, target {target}:")

                def show(run: Any) -> None:
                    if not json_flag:
                        console.print(f"  K = {run.K:>3}: {run.status}, mean {num(run.mean)} s, p99 {num(run.p99)} s "
                                      f"({run.sim_s:.1f} s)")

                res, runs = plan_capacity(inst, p, r, target, cost, seed=seed, k_max=k_max, exhaustive=exhaustive,
                                          progress=show)
                results.append((p, r, res, runs))
    rows = capacity_rows(results)
    if plot is not None:
        for target in targets:
            curves = {f"{p} × {r}": runs for p, r, res, runs in results if res.target == target}
            path = plot if len(targets) == 1 else plot.with_name(f"{plot.stem}_{target.statistic}{plot.suffix}")
            plot_latency_vs_workers(curves, path, statistic=target.statistic, limit_s=target.limit_s,
                                    title=f"{inst.name}: n = {inst.n:,}")
    if json_flag:
        json_out({"instance": inst.name, "n": inst.n, "M": inst.M, "cost_model": cost_model, "rows": rows})
    else:
        from rich.table import Table

        table = Table(title=f"{inst.name}: n = {inst.n:,}, M = {inst.M:,} per worker, cost model {cost_model}")
        for h in ("policy", "router", "target", "smallest K", "mean (s)", "p99 (s)", "GPU-s / req", "J / req",
                  "runs"):
            table.add_column(h, overflow="fold")
        for row in rows:
            k = "—" if row["workers"] is None else str(row["workers"])
            if row["workers"] is not None and not row["monotone"]:
                k += " (non-monotone: try --exhaustive)"
            table.add_row(row["policy"], row["router"], row["target"], k if row["workers"] else f"> {row['k_max']}",
                          num(row["mean_s"]), num(row["p99_s"]), num(row["gpu_s_per_request"]),
                          num(row["energy_j_per_request"]), str(len(row["evaluated"].split())))
        console.print(table)
    if any(row["workers"] is None for row in rows):
        raise typer.Exit(1)
