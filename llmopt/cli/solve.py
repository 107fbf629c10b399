"""``llmopt solve``: hindsight OPT of an instance, or certified bounds on it — a thin parse → API call →
print over :func:`llmopt.api.solve` (the pipeline of :mod:`llmopt.opt.hindsight`: upper bounds, windows,
bound stages, formulation, solver, checker).

The API checks every argument (:func:`llmopt.api.hindsight.check_solve_arguments`, before the file is
read) and runs a third-party formulation's conformance check before its bound may prove OPT (its
warning is printed as ``warning: ...``); when OPT is not proven the output says what would narrow the
gap next (:func:`llmopt.opt.defaults.next_bound_hint`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from llmopt.api.errors import BadInput
from llmopt.api.hindsight import DEFAULT_FORMULATION, DEFAULT_WINDOWS
from llmopt.cli.common import (
    ForceFlag,
    InstanceFile,
    JsonFlag,
    check_output_file,
    console,
    die,
    die_bad,
    echo_warnings,
    finish,
    json_out,
    load_or_die,
    num,
)
from llmopt.cli.config import ConfigOption
from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus
from llmopt.opt.defaults import (
    DEFAULT_BOUNDS,
    DEFAULT_CP_SAT_SECONDS,
    DEFAULT_LNS_ITERATIONS,
    DEFAULT_MAX_NNZ,
    DEFAULT_UPPER_BOUNDS,
)
from llmopt.solvers import DEFAULT_SOLVER

__all__ = ["solve_cmd", "DEFAULT_FORMULATION"]


def _progress(quiet: bool):  # type: ignore[no-untyped-def]
    if quiet:
        return None
    return lambda msg: typer.echo(msg, err=True)


def solve_cmd(
    file: InstanceFile,
    relax: Annotated[bool, typer.Option(help="Lower bounds only (LP relaxation and the --bound stages); "
                                             "no schedule.")] = False,
    solver: Annotated[str, typer.Option(help="Solver for the model (see `llmopt solvers`).")] = DEFAULT_SOLVER,
    formulation: Annotated[str, typer.Option(help="Formulation (see `llmopt stages`).")] = DEFAULT_FORMULATION,
    upper_bound: Annotated[list[str] | None, typer.Option(
        "--upper-bound", help="Upper-bound stage: a policy or a search (see `llmopt stages`); repeat for several "
                              f"(default: {', '.join(DEFAULT_UPPER_BOUNDS)}).")] = None,
    windows: Annotated[str, typer.Option(help="Start-windows stage (see `llmopt stages`).")] = DEFAULT_WINDOWS,
    bound: Annotated[list[str] | None, typer.Option(
        "--bound", help="Bound stage to compute and report (its certified value also bounds OPT); repeat "
                        f"for several (default: {', '.join(DEFAULT_BOUNDS)}: energy, with zone-lp up to 40 "
                        "requests, zone-colgen up to 120 or lp-colgen up to 2,000, each only if its predicted "
                        "time fits 35 % of --time-limit; a stage left out is named).")] = None,
    time_limit: Annotated[float, typer.Option(
        help="Seconds for the whole command, model build included: the search stops at a quarter of it, the "
             "bounds end by 60 %, the solver gets what the model build leaves (a build that uses it up ends "
             "with status time_limit).")] = 60.0,
    threads: Annotated[int, typer.Option(help="Solver threads.")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the local search.")] = 0,
    search_evals: Annotated[int, typer.Option(
        help="Local-search evaluations for the upper bound and warm start (0: none; stops early at a quarter "
             "of --time-limit).")] = 200,
    lns_iterations: Annotated[int, typer.Option(
        help="Sub-IPs of the `lns` upper-bound stage (--upper-bound lns; stops early at a quarter of "
             "--time-limit).")] = DEFAULT_LNS_ITERATIONS,
    cp_sat_seconds: Annotated[float, typer.Option(
        help="Deterministic seconds of the `cp-sat` upper-bound stage (--upper-bound cp-sat).")
    ] = DEFAULT_CP_SAT_SECONDS,
    max_nnz: Annotated[int, typer.Option(help="Largest model built, in nonzeros.")] = DEFAULT_MAX_NNZ,
    json_output: JsonFlag = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines on standard error.")] = False,
    write_schedule: Annotated[Path | None, typer.Option(
        help="Write the best verified schedule as {\"tel\": ..., \"starts\": {id: step}} (input of `llmopt check`)."
    )] = None,
    config: ConfigOption = None,
    force: ForceFlag = False,
) -> None:
    """Hindsight-optimal TEL of an instance, or certified bounds on it.

    Pipeline: upper bounds (MC-SF, FCFS, local search), start windows, formulation, solver,
    decode, checker. Every schedule is verified by the independent checker and every bound is
    certified; OPT is claimed only when a certified bound meets the best schedule.
    """
    from llmopt.api.hindsight import check_solve_arguments, solve, uncertified_lp
    from llmopt.opt.hindsight import PipelineInterrupted

    bounds = tuple(bound) if bound else DEFAULT_BOUNDS
    upper_bounds = tuple(upper_bound) if upper_bound else DEFAULT_UPPER_BOUNDS
    numbers: dict[str, Any] = {"time_limit": time_limit, "threads": threads, "seed": seed, "search_evals": search_evals,
                               "lns_iterations": lns_iterations, "cp_sat_seconds": cp_sat_seconds,
                               "max_nnz": max_nnz}
    names: dict[str, Any] = {"solver": solver, "formulation": formulation, "windows": windows, "bounds": bounds,
                             "upper_bounds": upper_bounds}
    try:
        check_solve_arguments(**numbers)
        if relax and write_schedule is not None:
            die("--write-schedule: --relax computes lower bounds only; there is no schedule to write")
        check_output_file("--write-schedule", write_schedule, inputs=[file], force=force)
        check_solve_arguments(**names)
        instance = load_or_die(file)
        deadline = time.perf_counter() + time_limit  # the whole command's, for the stages after the pipeline
        with echo_warnings():
            h = solve(instance, relax=relax, progress=_progress(quiet), **names, **numbers)
        uncertified = uncertified_lp(instance, h, formulation=formulation, solver=solver, deadline=deadline,
                                     threads=threads) if relax else None
    except BadInput as exc:
        die_bad(exc, instance=str(file))
    except PipelineInterrupted as exc:
        die(str(exc), 130)
    if relax:
        _print_relaxation(h, instance, file, formulation, uncertified, json_output)
        return
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
            "bounds": [_bound_json(b) for b in h.bounds],
            "bounds_skipped": list(h.bounds_skipped),
            "model": dict(h.model_stats),
            "stage_s": dict(h.stage_s),
            "solver": h.solver,
            "message": h.message,
            "errors": list(h.errors),
            "next": _hint(h, instance),
            "starts": starts,
        })
    else:
        _print_solve(h, instance, file, write_schedule)
    if h.status is SolveStatus.INTERRUPTED:
        typer.echo("interrupted: the best verified schedule and certified bound found so far are shown above",
                   err=True)
        finish(130)
    finish(1 if h.errors else 0)


def _hint(h: Any, instance: Instance) -> str | None:
    """What would tighten the bracket next (``None`` once OPT is proven)."""
    from llmopt.opt.defaults import next_bound_hint

    if h.opt is not None:
        return None
    return next_bound_hint(tuple(b.name for b in h.bounds), instance.n)


def _bound_json(b: Any) -> dict[str, Any]:
    return {"name": b.name, "value": b.value, "certificate": b.certificate, "verified": b.verified,
            "claimed": b.claimed, "detail": b.detail, "runtime_s": round(b.runtime_s, 4)}


def _model_text(stats: dict[str, Any]) -> str:
    if not stats:
        return "not built"
    return (f"{stats.get('formulation')}: {stats['cols']:,} columns ({stats['int_cols']:,} integer), "
            f"{stats['rows']:,} rows, {stats['nnz']:,} nonzeros; memory rows up to t={stats['horizon']}; "
            f"windows {stats['windows']}; {stats.get('classes')} classes of identical requests"
            + (f"; {stats['zone_rows']:,} peak-zone rows" if "zone_rows" in stats else ""))


def _print_solve(h: Any, instance: Instance, file: Path, write_schedule: Path | None) -> None:
    t = Table(title=f"Hindsight OPT — {escape(str(file))}  (n={instance.n}, M={instance.M})", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value")
    t.add_row("status", h.status.value)
    t.add_row("TEL (best schedule)", f"{h.incumbent}  (from {escape(h.incumbent_source)}, verified by the checker)")
    t.add_row("OPT", f"{h.opt} (proven)" if h.opt is not None else "not proven")
    t.add_row("lower bound", f"{num(h.bound)}  ({escape(h.bound_certificate)})")
    t.add_row("gap", f"{100 * h.gap:.2f} %")
    t.add_row("upper bounds", escape(", ".join(f"{k}: {v}" for k, v in dict(h.heuristics).items())))
    for b in h.bounds:
        verdict = "verified" if b.verified else "not verified"
        t.add_row(f"bound {escape(b.name)}", escape(f"{num(b.value, 8)} ({b.certificate}, {verdict}; {b.detail})"))
    t.add_row("model", escape(_model_text(dict(h.model_stats))))
    t.add_row("runtime", f"{h.runtime_s:.2f} s (" + ", ".join(f"{k} {v:.1f} s" for k, v in h.stage_s.items()) + ")")
    if h.message:
        t.add_row("message", escape(h.message))
    for err in h.errors:
        t.add_row("[red]ERROR[/red]", escape(err))
    if write_schedule is not None:
        t.add_row("schedule written to", escape(str(write_schedule)))
    if (hint := _hint(h, instance)) is not None:
        t.add_row("to narrow the gap", escape(hint))
    console.print(t)


def _print_relaxation(h: Any, instance: Instance, file: Path, formulation: str, uncertified: dict[str, Any] | None,
                      json_output: bool) -> None:
    """``solve --relax``: the pipeline without its IP stage — each bound stage with its certificate status,
    over windows from the best verified schedule — and, for a formulation other than J's, its LP value
    labelled uncertified (:func:`llmopt.api.hindsight.uncertified_lp`)."""
    status = "optimal" if h.opt is not None else "bounded"
    if json_output:
        json_out({
            "status": status,
            "bound": h.bound,
            "bound_certificate": h.bound_certificate,
            "bounds": [_bound_json(b) for b in h.bounds],
            "bounds_skipped": list(h.bounds_skipped),
            "incumbent": h.incumbent,
            "incumbent_source": h.incumbent_source,
            "uncertified_lp": uncertified,
            "errors": list(h.errors),
            "next": _hint(h, instance),
        })
    else:
        t = Table(title=f"Lower bounds — {escape(str(file))}  (n={instance.n}, M={instance.M})", show_header=False)
        t.add_column("field", style="bold")
        t.add_column("value")
        for b in h.bounds:
            verdict = "verified" if b.verified else "NOT verified"
            t.add_row(f"bound {escape(b.name)}", escape(f"{num(b.value, 10)}  ({b.certificate}; {verdict}: "
                                                        f"{b.detail})"))
        t.add_row("best certified bound (TEL is integral)", f"{h.bound}  ({escape(h.bound_certificate)})")
        t.add_row("best verified schedule (its TEL gives the windows)",
                  f"{h.incumbent}  (from {escape(h.incumbent_source)})")
        if uncertified is not None:
            t.add_row(f"LP of {escape(formulation)}", escape(
                f"{num(uncertified['value'], 10)} ({uncertified['status']}) — UNCERTIFIED: the checker has no "
                "certificate for this formulation's LP"))
        t.add_row("status", status + (" (the bound meets the best schedule)" if status == "optimal" else ""))
        if (hint := _hint(h, instance)) is not None:
            t.add_row("to narrow the gap", escape(hint))
        for err in h.errors:
            t.add_row("[red]ERROR[/red]", escape(err))
        console.print(t)
    if h.status is SolveStatus.INTERRUPTED:
        typer.echo(f"interrupted; {len(h.bounds)} bound stage(s) finished", err=True)
        finish(130)
    finish(1 if h.errors else 0)
