"""``llmopt bench``: run, list and report benchmark suites (see :mod:`llmopt.harness`)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from llmopt.cli_common import console, die
from llmopt.registry import RegistryError

__all__ = ["bench_app"]

bench_app = typer.Typer(help="Benchmark suites: run (parallel, resumable), list, report.", no_args_is_help=True)

OutDir = Annotated[Path | None, typer.Option("--out", help="Results folder (default results/SUITE).")]


def _get_suite(name: str):
    from llmopt.suites import get_suite

    try:
        return get_suite(name)
    except RegistryError as exc:
        die(str(exc))


_SUMMARY_ROWS = (
    ("trials", "trials", "paper_trials"),
    ("errors", "errors", None),
    ("OPT proven", "proven_optimal", None),
    ("TEL/OPT mean (proven)", "ratio_vs_opt_mean", "paper_mean"),
    ("TEL/OPT max (proven)", "ratio_vs_opt_max", "paper_max"),
    ("TEL/OPT min (proven)", "ratio_vs_opt_min", "paper_min"),
    ("= OPT (proven)", "mcsf_exact", "paper_exact"),
    ("TEL/found mean (<= ratio)", "ratio_vs_incumbent_mean", None),
    ("TEL/found max", "ratio_vs_incumbent_max", None),
    ("TEL/bound mean (>= ratio)", "ratio_vs_bound_mean", None),
    ("TEL/bound max", "ratio_vs_bound_max", None),
    ("mean gap", "gap_mean", None),
    ("> best found", "mcsf_worse_than_found", None),
)


def _summary_table(df, title: str) -> Table:
    """Per-workload summary, one column per workload, ``ours (paper)`` in each cell."""
    from llmopt.report import format_value

    t = Table(title=title, caption="(paper's number in brackets)")
    t.add_column("", no_wrap=True)
    rows = [row for _, row in df.iterrows()]
    for row in rows:
        t.add_column(str(row["workload"]), justify="right", no_wrap=True)
    for label, ours, paper in _SUMMARY_ROWS:
        cells = []
        for row in rows:
            text = format_value(row[ours], ours)
            if paper is not None and row[paper] is not None:
                text += f" ({format_value(row[paper], paper)})"
            cells.append(text)
        t.add_row(label, *cells)
    return t


@bench_app.command("run")
def bench_run(
    suite_name: Annotated[str, typer.Argument(metavar="SUITE", help="Suite name (see `llmopt bench list`).")],
    out: OutDir = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Processes (default: all CPUs).")] = None,
    time_limit: Annotated[float | None, typer.Option(help="Override the suite's IP time limit (s).")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")] = True,
    retry_errors: Annotated[bool, typer.Option(help="Rerun tasks recorded with an error.")] = False,
) -> None:
    """Run a suite: parallel, resumable; results go to OUT/trials.jsonl, then the report is rebuilt."""
    from llmopt.harness import HarnessError, run_suite
    from llmopt.report import write_report

    suite = _get_suite(suite_name).with_time_limit(time_limit)
    out_dir = out or Path("results") / suite.name
    try:
        trials = run_suite(
            suite, out_dir, workers=workers, progress=progress, retry_errors=retry_errors,
            command=" ".join(shlex.quote(a) for a in ["llmopt", *sys.argv[1:]]),
        )
    except HarnessError as exc:
        die(str(exc))
    except KeyboardInterrupt:
        saved = out_dir / "trials.jsonl"
        typer.echo(f"interrupted; finished tasks are saved in {saved}; run again to resume", err=True)
        raise typer.Exit(130) from None
    df = write_report(out_dir, suite)
    console.print(_summary_table(df, f"Suite {suite.name}"))
    console.print(f"records: {trials}\nreport:  {out_dir / 'summary.md'}, {out_dir / 'summary.csv'}, "
                  f"{out_dir / 'ratio_hist.png'}", markup=False)


@bench_app.command("list")
def bench_list() -> None:
    """List the registered suites."""
    from llmopt.suites import SUITES

    t = Table(title="Suites")
    for c in ("name", "tasks", "workloads", "IP limit", "description"):
        t.add_column(c, justify="right" if c in ("tasks", "IP limit") else "left")
    for name in SUITES.names():
        s = SUITES.get(name)
        wl = ", ".join(f"{w.workload}×{len(w.seeds)}" for w in s.workloads)
        limit = "none" if s.ip_time_limit is None else f"{s.ip_time_limit:g} s"
        t.add_row(name, str(s.n_tasks), wl, limit, escape(SUITES.doc(name) or s.description))
    console.print(t)


@bench_app.command("report")
def bench_report(
    suite_name: Annotated[str, typer.Argument(metavar="SUITE", help="Suite name.")],
    out: OutDir = None,
) -> None:
    """Rebuild summary.csv, summary.md and ratio_hist.png from OUT/trials.jsonl."""
    from llmopt.harness import TRIALS_FILE, read_trials
    from llmopt.report import write_report

    suite = _get_suite(suite_name)
    out_dir = out or Path("results") / suite.name
    if not (out_dir / TRIALS_FILE).exists():
        die(f"{out_dir / TRIALS_FILE}: no results yet (run `llmopt bench run {suite.name}` first)")
    _, problems = read_trials(out_dir / TRIALS_FILE)
    for msg in problems:
        typer.echo(f"warning: {msg}", err=True)
    stored = _stored_suite(out_dir)
    if stored is not None and stored.name == suite.name:
        suite = stored  # the settings the results were produced with (e.g. a --time-limit override)
    df = write_report(out_dir, suite)
    console.print(_summary_table(df, f"Suite {suite.name}"))
    console.print(f"report: {out_dir / 'summary.md'}, {out_dir / 'summary.csv'}, "
                  f"{out_dir / 'ratio_hist.png'}", markup=False)


def _stored_suite(out_dir: Path):
    from llmopt.harness import SUITE_FILE
    from llmopt.suites import Suite

    try:
        data = json.loads((out_dir / SUITE_FILE).read_text())
        return Suite.from_dict(data["suite"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
