"""The ``llmopt`` command line (Typer + rich).

Commands::

    llmopt solve FILE.json [--relax] [--solver highs|cbc|gurobi] [--time-limit S] [--json]
    llmopt simulate FILE.json --policy NAME [--json]
    llmopt check FILE.json SCHEDULE.json
    llmopt bench run SUITE [--out DIR] [--workers N] [--time-limit S] [--no-progress]
    llmopt bench list
    llmopt bench report SUITE [--out DIR]
    llmopt policies
    llmopt solvers

Exit codes: 0 success; 1 an infeasible schedule (``check``) or a failed solve or
simulation; 2 bad input (file, request, field named on one line of standard error,
no traceback); 3 the requested solver is unavailable; 130 interrupted.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

import llmopt
from llmopt.cli_bench import bench_app
from llmopt.cli_common import InstanceFile, JsonFlag, console, die, json_out, load_or_die, num
from llmopt.instance import Instance
from llmopt.registry import RegistryError

__all__ = ["app", "load_schedule", "ScheduleFileError"]

app = typer.Typer(
    name="llmopt",
    help="Scheduling LLM inference under KV-cache limits: hindsight OPT, bounds, policies, benchmarks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
app.add_typer(bench_app, name="bench")


class ScheduleFileError(ValueError):
    """Invalid schedule file; the message names the file and the field."""


def _check_solver(name: str) -> None:
    """Exit 2 for an unknown solver name, 3 for a known but unusable one."""
    from llmopt.solvers import SOLVERS, solver_status

    if name not in SOLVERS:
        die(f"unknown solver {name!r}; known: {', '.join(SOLVERS.names())}")
    ok, why = solver_status(name)
    if not ok:
        die(f"solver {name!r} is unavailable: {why}", 3)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"llmopt {llmopt.__version__}")
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
    if not no_plugins:
        from llmopt.plugins import load_plugins

        try:
            load_plugins()
        except Exception as exc:  # a broken plug-in must not hide the built-in commands
            typer.echo(f"warning: plug-ins: {exc} (--no-plugins skips them)", err=True)


# --- solve ----------------------------------------------------------------------------------


@app.command()
def solve(
    file: InstanceFile,
    relax: Annotated[bool, typer.Option(help="Solve the LP relaxation (a lower bound on OPT).")] = False,
    solver: Annotated[str, typer.Option(help="Solver: highs, cbc or gurobi.")] = "highs",
    time_limit: Annotated[float | None, typer.Option(help="Seconds for the solver.")] = 60.0,
    threads: Annotated[int, typer.Option(help="Solver threads.")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the local search (IP warm start).")] = 0,
    search_evals: Annotated[int, typer.Option(help="Local-search evaluations (0: none).")] = 200,
    json_output: JsonFlag = False,
    write_schedule: Annotated[
        Path | None, typer.Option(help="Write the best schedule as {\"starts\": ...} (for `llmopt check`).")
    ] = None,
) -> None:
    """Hindsight-optimal TEL of an instance (IP with heuristics, windows and warm start), or its LP bound."""
    instance = load_or_die(file)
    _check_solver(solver)
    if relax:
        _solve_relaxation(instance, file, solver, time_limit, threads, json_output)
        return

    from llmopt.hindsight import solve_hindsight

    h = solve_hindsight(
        instance, solver=solver, time_limit=time_limit, threads=threads, seed=seed, search_evals=search_evals
    )
    starts = {rid: int(k) for rid, k in dict(h.starts).items()}
    if write_schedule is not None:
        write_schedule.write_text(json.dumps({"tel": h.incumbent, "starts": starts}, indent=1) + "\n")
    if json_output:
        json_out({
            "status": h.status.value,
            "objective": h.incumbent,
            "opt": h.opt,
            "bound": h.bound,
            "bound_certificate": h.bound_certificate,
            "gap": h.gap,
            "runtime_s": round(h.runtime_s, 4),
            "incumbent_source": h.incumbent_source,
            "heuristics": dict(h.heuristics),
            "message": h.message,
            "starts": starts,
        })
        return
    t = Table(title=f"Hindsight IP — {escape(str(file))}  (n={instance.n}, M={instance.M})", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value")
    t.add_row("status", h.status.value)
    t.add_row("TEL (best schedule)", f"{h.incumbent}  (from {h.incumbent_source})")
    t.add_row("OPT", "proven" if h.opt is not None else "not proven")
    t.add_row("lower bound", f"{num(h.bound)}  ({h.bound_certificate})")
    t.add_row("gap", "—" if h.gap is None else f"{100 * h.gap:.2f} %")
    t.add_row("heuristics", ", ".join(f"{k}: {v}" for k, v in dict(h.heuristics).items()))
    stats = dict(h.model_stats)
    t.add_row("model", escape(", ".join(f"{k}={v}" for k, v in stats.items())))
    t.add_row("runtime", f"{h.runtime_s:.2f} s")
    if h.message:
        t.add_row("message", escape(h.message))
    console.print(t)


def _solve_relaxation(instance: Instance, file: Path, solver: str, time_limit: float | None, threads: int,
                      json_output: bool) -> None:
    from llmopt.formulations.hindsight_ip import formulate, start_windows
    from llmopt.policies import make_policy
    from llmopt.result import SolveStatus
    from llmopt.simulator import simulate
    from llmopt.solvers import get_solver

    mcsf = simulate(instance, make_policy("mc-sf"))
    model = formulate(instance, start_windows(instance, mcsf.tel)).relax()
    res = get_solver(solver).solve(model, time_limit=time_limit, threads=threads)
    # Only a solved LP is a lower bound: an interrupted run's point lies above the LP optimum.
    lp_value = res.objective if res.status is SolveStatus.OPTIMAL else None
    if json_output:
        json_out({
            "status": res.status.value,
            "objective": lp_value,
            "bound": res.bound,
            "gap": res.gap,
            "runtime_s": round(res.runtime_s, 4),
            "message": res.message,
            "model": model.stats(),
        })
    else:
        t = Table(title=f"LP relaxation — {escape(str(file))}  (n={instance.n}, M={instance.M})", show_header=False)
        t.add_column("field", style="bold")
        t.add_column("value")
        t.add_row("status", res.status.value)
        t.add_row("LP objective (lower bound on OPT)", num(lp_value, 8))
        if lp_value is not None:
            t.add_row("rounded up (TEL is integral)", str(math.ceil(lp_value - 1e-6)))
        t.add_row("MC-SF TEL (windows from it)", str(mcsf.tel))
        t.add_row("model", ", ".join(f"{k}={v}" for k, v in model.stats().items()))
        t.add_row("runtime", f"{res.runtime_s:.2f} s")
        if res.message:
            t.add_row("message", escape(res.message))
        console.print(t)
    if lp_value is None:
        raise typer.Exit(1)


# --- simulate ----------------------------------------------------------------------------------


@app.command("simulate")
def simulate_cmd(
    file: InstanceFile,
    policy: Annotated[str, typer.Option("--policy", "-p", help="Policy (see `llmopt policies`).")] = "mc-sf",
    json_output: JsonFlag = False,
) -> None:
    """Run an online policy on an instance and show its schedule."""
    from llmopt.checker import check_schedule
    from llmopt.policies import make_policy
    from llmopt.simulator import SimulationError, simulate

    instance = load_or_die(file)
    try:
        pol = make_policy(policy)
    except RegistryError as exc:
        die(str(exc))
    try:
        sched = simulate(instance, pol)
    except (SimulationError, ValueError) as exc:
        die(f"{file}: policy {policy!r} failed: {exc}", 1)
    if json_output:
        json_out(sched.to_dict())
        return
    report = check_schedule(instance, sched.starts)
    t = Table(title=f"{escape(policy)} on {escape(str(file))}")
    for col in ("id", "arrival", "prompt", "output", "start", "completion", "latency"):
        t.add_column(col, justify="left" if col == "id" else "right")
    for r in sorted(instance.requests, key=lambda r: (sched.starts[r.id], instance.position(r.id))):
        c = sched.completions[r.id]
        t.add_row(r.id, str(r.arrival), str(r.prompt), str(r.output), str(sched.starts[r.id]), str(c),
                  str(c - r.arrival))
    console.print(t)
    verified = "verified by the checker" if report.ok and report.tel == sched.tel else (
        f"[red]REJECTED by the checker: {escape(report.violations[0] if report.violations else '')}[/red]")
    console.print(
        f"TEL = [bold]{sched.tel}[/bold]  AEL = {sched.tel / max(instance.n, 1):.3f}  "
        f"makespan = {sched.makespan}  "
        f"peak memory = {sched.peak_memory}/{instance.M}  evictions = {len(sched.evictions)}  ({verified})"
    )


# --- check ---------------------------------------------------------------------------------------


def load_schedule(path: Path) -> dict[str, int]:
    """Read ``{"starts": {request id: start step}}`` from ``path``.

    Raises
    ------
    ScheduleFileError
        If the file is unreadable, not JSON, lacks ``starts``, or a start is not an
        integer; the message names the file and the field.
    """
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ScheduleFileError(f"{path}: cannot read file: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise ScheduleFileError(f"{path}: invalid JSON at {where}: {exc.msg}") from None
    if not isinstance(data, dict) or "starts" not in data:
        raise ScheduleFileError(f"{path}: missing field 'starts' (expected {{\"starts\": {{id: step}}}})")
    raw = data["starts"]
    if not isinstance(raw, dict):
        raise ScheduleFileError(f"{path}: field 'starts' must be an object mapping request id to start step")
    starts: dict[str, int] = {}
    for rid, k in raw.items():
        integral = isinstance(k, int) or (isinstance(k, float) and k.is_integer())
        if isinstance(k, bool) or not integral:
            raise ScheduleFileError(f"{path}: field 'starts' entry {rid!r} must be an integer, got {k!r}")
        starts[str(rid)] = int(k)
    return starts


@app.command()
def check(
    file: InstanceFile,
    schedule: Annotated[Path, typer.Argument(help="Schedule JSON file: {\"starts\": {id: step, ...}}.")],
) -> None:
    """Verify a schedule against an instance with the independent checker (exit 0 feasible, 1 not)."""
    from llmopt.checker import check_schedule

    instance = load_or_die(file)
    try:
        starts = load_schedule(schedule)
    except ScheduleFileError as exc:
        die(str(exc))
    report = check_schedule(instance, starts)
    if report.ok:
        typer.echo(f"OK TEL={report.tel}")
        return
    first = report.violations[0] if report.violations else "infeasible"
    tail = " (and more violations)" if len(report.violations) > 1 else ""
    typer.echo(f"INFEASIBLE: {first}{tail}")
    raise typer.Exit(1)


# --- registries -----------------------------------------------------------------------------------


@app.command()
def policies() -> None:
    """List the registered policies."""
    from llmopt.policies import POLICIES

    t = Table(title="Policies")
    t.add_column("name", style="bold")
    t.add_column("description")
    for name in POLICIES.names():
        t.add_row(name, escape(POLICIES.doc(name)))
    console.print(t)


@app.command()
def solvers() -> None:
    """List the registered solvers and whether each is usable here."""
    from llmopt.solvers import SOLVERS, solver_status

    t = Table(title="Solvers")
    t.add_column("name", style="bold")
    t.add_column("available")
    t.add_column("note")
    for name in SOLVERS.names():
        try:
            ok, why = solver_status(name)
        except Exception as exc:  # listing must never crash on one broken plug-in
            ok, why = False, f"{type(exc).__name__}: {exc}"
        t.add_row(name, "[green]yes[/green]" if ok else "[red]no[/red]", escape(why or ""))
    console.print(t)


if __name__ == "__main__":  # pragma: no cover
    app()
