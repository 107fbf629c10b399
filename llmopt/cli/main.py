"""The ``llmopt`` command line (Typer + rich).

Commands::

    llmopt solve FILE.json [--relax] [--solver S] [--formulation F] [--bound B ...] [--upper-bound U ...]
                           [--time-limit S] [--search-evals N] [--lns-iterations N] [--cp-sat-seconds S]
                           [--write-schedule OUT.json] [--json]
    llmopt simulate FILE.json --policy NAME [--requests ROWS.csv|.json] [--json]
    llmopt check FILE.json SCHEDULE.json [--all] [--json]
    llmopt generate WORKLOAD --seed S [--param key=value ...] -o FILE.json
    llmopt capacity TRACE [--policy P ...] [--router R ...] [--latency-target mean:200 ...] [--plot F.png]
    llmopt bench run|list|report ...        (see llmopt.cli.bench)
    llmopt study list | run NAME [--quick] [--out DIR] [--seeds 0-9] [--option value ...] | report NAME
                                            (see llmopt.cli.study)
    llmopt policies | solvers [--json] | stages

Exit codes: 0 success; 1 an infeasible schedule (``check``), a failed simulation, or a
solve that found a contradiction (see ``errors``); 2 bad input or a bad option (one
line on standard error naming the file, request, field or option; checked before any
work starts); 3 the requested solver is unavailable; 130 interrupted (Ctrl-C or
SIGTERM; what was found so far is printed first).

Each command is a thin parse → :mod:`llmopt.api` call → print: the API checks the arguments and
raises :class:`llmopt.api.BadInput`, printed with the parameter spelled as the option
(:func:`llmopt.cli.common.die_bad`).

Every user-supplied string shown through rich is escaped (request ids such as
``job[/tmp]`` print as they are).
"""

from __future__ import annotations

import gc
import signal
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from llmopt._version import __version__
from llmopt.cli.bench import bench_app
from llmopt.cli.capacity import capacity_cmd
from llmopt.cli.common import (
    InstanceFile,
    JsonFlag,
    console,
    die,
    die_bad,
    json_out,
    load_any_or_die,
)
from llmopt.cli.generate import generate_cmd
from llmopt.cli.simulate import simulate_cmd
from llmopt.cli.solve import solve_cmd
from llmopt.cli.study import study_app
from llmopt.cli.trace import trace_cmd
from llmopt.model.schedule_file import ScheduleFileError
from llmopt.model.timed_instance import TimedInstance

__all__ = ["app", "load_schedule", "ScheduleFileError"]


class _Commands(TyperGroup):
    """The top-level group: a plug-in that cannot be imported, met by any command when it resolves the
    plug-in's name, is one line and exit 2 (the message names the entry point, its group and module)."""

    def invoke(self, ctx: click.Context) -> Any:
        from llmopt.model.registry import PluginError

        try:
            return super().invoke(ctx)
        except PluginError as exc:
            die(f"{exc} (--no-plugins skips plug-ins)")


app = typer.Typer(
    name="llmopt",
    cls=_Commands,
    help="Scheduling LLM inference under KV-cache limits: hindsight OPT, bounds, policies, benchmarks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
app.add_typer(bench_app, name="bench")
app.add_typer(study_app, name="study")
app.command("solve")(solve_cmd)
app.command("trace")(trace_cmd)
app.command("simulate")(simulate_cmd)
app.command("generate")(generate_cmd)
app.command("capacity")(capacity_cmd)


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _version(value: bool) -> None:
    if value:
        typer.echo(f"llmopt {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    no_plugins: Annotated[
        bool, typer.Option("--no-plugins", help="Do not load third-party entry-point plug-ins.")
    ] = False,
) -> None:
    """llmopt: scheduling LLM inference under KV-cache memory limits."""
    # A command is one short-lived process: the objects made by the imports above live until it
    # exits, so the cyclic collector need not walk them again and again while the command works.
    gc.freeze()
    # SIGTERM stops a command the way Ctrl-C does: what was found so far is kept and printed.
    signal.signal(signal.SIGTERM, _sigterm)
    from llmopt.model.registry import set_plugin_loading

    set_plugin_loading(not no_plugins)  # the registries read their entry points on first use, unless told not to
    if not no_plugins:
        from llmopt.bench.plugins import load_plugins

        try:
            load_plugins()
        except Exception as exc:  # a broken plug-in must not hide the built-in commands
            typer.echo(f"warning: plug-ins: {exc} (--no-plugins skips them)", err=True)


# --- check ---------------------------------------------------------------------------------------


def load_schedule(path: Path) -> tuple[dict[str, int], list[Any]]:
    """Read ``{"starts": {request id: start step}, "evictions": [...]}`` from ``path``.

    ``evictions`` is optional (``[{"t": step, "id": ..., "tokens_lost": k}, ...]``, as
    ``llmopt simulate --json`` writes it); other top-level fields, such as ``tel``, are ignored.
    Returns ``(starts, evictions)``; :func:`llmopt.check` reads a mapping by the same rules
    (:mod:`llmopt.model.schedule_file`).

    Raises
    ------
    ScheduleFileError
        If the file is unreadable, not JSON, lacks ``starts``, or a start is not an
        integer; the message names the file and the field.
    """
    from llmopt.model.schedule_file import discrete_schedule, read_schedule_json

    return discrete_schedule(read_schedule_json(path), str(path))


@app.command()
def check(
    file: InstanceFile,
    schedule: Annotated[Path, typer.Argument(
        help="Schedule JSON file: {\"starts\": {id: step, ...}, \"evictions\": [...] (optional)}.")],
    all_violations: Annotated[bool, typer.Option("--all", help="List every violation, not only the first.")] = False,
    cost_model: Annotated[str | None, typer.Option(help=(
        "Cost model for a continuous-time schedule (default: the one the schedule file names)."),
        show_default=False)] = None,
    json_output: JsonFlag = False,
) -> None:
    """Verify a schedule against an instance with the independent checker (exit 0 feasible, 1 not).

    For a continuous-time instance the schedule is what `llmopt simulate --json` writes for it,
    and the checker's continuous-time mode also verifies every batch duration against the cost model;
    a multi-worker run (`simulate --workers K --json`) is checked worker by worker and as a whole.
    """
    from llmopt.api import BadInput
    from llmopt.api import check as api_check
    from llmopt.model.schedule_file import is_cluster_mapping, read_schedule_json

    instance = load_any_or_die(file)
    timed = isinstance(instance, TimedInstance)
    try:
        data = read_schedule_json(schedule, timed=timed)
        cluster = is_cluster_mapping(data)
        first_only = not (all_violations or json_output or timed or cluster)
        rep = api_check(instance, data, cost_model=cost_model, max_violations=1 if first_only else None,
                        source=str(schedule))
    except BadInput as exc:
        die_bad(exc)
    except ScheduleFileError as exc:
        die(str(exc))
    if cluster:
        if json_output:
            json_out({"ok": rep.ok, "K": rep.K, "tel": rep.tel, "mean_latency": rep.mean_latency,
                      "violations": list(rep.violations), "M": instance.M})
        elif rep.ok:
            typer.echo(f"OK K={rep.K} TEL={rep.tel:g}")
    elif timed:
        name = cost_model or data.get("cost_model")
        if json_output:
            json_out({"ok": rep.ok, "mean_latency": rep.mean_latency, "violations": list(rep.violations),
                      "peak_memory": rep.peak_memory, "M": instance.M, "iterations": rep.iterations,
                      "recomputed_tokens": rep.recomputed_tokens, "cost_model": name})
        elif rep.ok:
            typer.echo(f"OK mean latency = {rep.mean_latency:.6f} s ({rep.iterations} batches, cost model {name})")
    elif json_output:
        json_out({"ok": rep.ok, "tel": rep.tel, "violations": list(rep.violations),
                  "makespan": rep.makespan, "peak_memory": rep.peak_memory, "M": instance.M})
    elif rep.ok:
        typer.echo(f"OK TEL={rep.tel}")
    elif all_violations and not (timed or cluster):
        typer.echo(f"INFEASIBLE: {len(rep.violations)} violation(s)")
        for v in rep.violations:
            typer.echo(f"  {v}")
    if not rep.ok and not json_output and not (all_violations and not (timed or cluster)):
        more = " (and more violations; --all lists them)" if first_only and len(rep.violations) > 1 else ""
        typer.echo(f"INFEASIBLE: {rep.violations[0] if rep.violations else 'infeasible'}{more}")
    if not rep.ok:
        raise typer.Exit(1)


# --- registries -----------------------------------------------------------------------------------


@app.command()
def policies(json_output: JsonFlag = False) -> None:
    """List the registered policies."""
    from llmopt.api import list_policies

    listed = list_policies()
    if json_output:
        json_out({"policies": [{"name": p.name, "description": p.description} for p in listed]})
        return
    t = Table(title="Policies")
    t.add_column("name", style="bold")
    t.add_column("description")
    for p in listed:
        t.add_row(escape(p.name), escape(p.description))
    console.print(t)


@app.command()
def solvers(json_output: JsonFlag = False) -> None:
    """List the registered solvers: usable here?, version, capabilities, licence."""
    from llmopt.api import list_solvers

    listed = list_solvers()
    if json_output:
        json_out({"solvers": [{"name": s.name, "available": s.available, "version": s.version,
                               "capabilities": list(s.capabilities), "note": s.note} for s in listed]})
        return
    t = Table(title="Solvers")
    for col in ("name", "available", "version", "capabilities", "note"):
        t.add_column(col, style="bold" if col == "name" else None)
    for s in listed:
        t.add_row(escape(s.name), "[green]yes[/green]" if s.available else "[red]no[/red]", escape(s.version or "—"),
                  escape(", ".join(s.capabilities) or "—"), escape(s.note))
    console.print(t)


@app.command()
def stages() -> None:
    """List the registered pipeline stages: upper bounds, windows, formulations, bounds."""
    from llmopt.api import registries

    t = Table(title="Hindsight pipeline stages (and the other registries)")
    t.add_column("registry", style="bold")
    t.add_column("name")
    t.add_column("description")
    for kind, reg in registries().items():
        for name in reg.names():
            t.add_row(escape(kind), escape(name), escape(reg.doc(name)))
    console.print(t)


if __name__ == "__main__":  # pragma: no cover
    app()
