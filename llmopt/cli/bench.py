"""``llmopt bench``: run, list and report benchmark suites (see :mod:`llmopt.bench.harness`).

Results go to ``runs/SUITE`` by default, never to ``results/``: the folders under
``results/`` are committed reference output, rebuilt on purpose with ``--out``.
Every option is checked before any work starts; a bad one is a one-line error, exit 2.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from llmopt.cli.common import check_option, console, die
from llmopt.model.registry import RegistryError

if TYPE_CHECKING:
    from llmopt.bench.suites import Suite

__all__ = ["bench_app", "DEFAULT_RUNS_DIR"]

#: For the help text only (start-up stays light); a run's folder comes from
#: :func:`llmopt.bench.harness.default_out_dir`, which the Python API uses too.
DEFAULT_RUNS_DIR = Path("runs")

bench_app = typer.Typer(help="Benchmark suites: run (parallel, resumable), list, report.", no_args_is_help=True)

SuiteArg = Annotated[str | None, typer.Argument(
    metavar="[SUITE]", help="Suite name (see `llmopt bench list`); may be left out with --suite-file.",
    show_default=False)]
OutDir = Annotated[Path | None, typer.Option(
    "--out", help=f"Results folder (default {DEFAULT_RUNS_DIR}/SUITE).", show_default=False)]
SuiteFile = Annotated[Path | None, typer.Option(
    "--suite-file", help="Run a suite defined in a JSON file (a Suite.to_dict() object, or a results "
    "folder's suite.json).", show_default=False)]


def _read_suite_file(path: Path) -> Suite:
    try:
        from llmopt.model.textfile import read_text

        data = json.loads(read_text(path))
    except FileNotFoundError:
        die(f"{path}: no such suite file")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        die(f"{path}: cannot read the suite ({exc})")
    if isinstance(data, dict) and isinstance(data.get("suite"), dict) and "runs" in data:
        data = data["suite"]  # a results folder's suite.json
    try:
        from llmopt.bench.suites import Suite

        return Suite.from_dict(data)
    except ValueError as exc:
        die(f"{path}: {exc}")


def _resolve_suite(name: str | None, suite_file: Path | None, out: Path | None = None) -> Suite:
    """The suite from ``--suite-file``, the registry, or (for reports) the folder's suite.json."""
    from llmopt.bench.suites import get_suite

    if suite_file is not None:
        suite = _read_suite_file(suite_file)
        if name is not None and name != suite.name:
            die(f"{suite_file} defines suite {suite.name!r}, not {name!r}")
        return suite
    if name is None:
        stored = _stored_suite(out) if out is not None else None
        if stored is None:
            die("name a SUITE, or give --suite-file" + (" (or an --out folder with a suite.json)" if out else ""))
        return stored
    try:
        return get_suite(name)
    except RegistryError as exc:
        stored = _stored_suite(out or DEFAULT_RUNS_DIR / name)
        if stored is not None and stored.name == name:
            return stored
        die(str(exc))


def _stored_suite(out_dir: Path) -> Suite | None:
    from llmopt.bench.store import SUITE_FILE

    try:
        data = json.loads((out_dir / SUITE_FILE).read_text(encoding="utf-8"))
        from llmopt.bench.suites import Suite

        return Suite.from_dict(data["suite"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _check_names(suite: Suite) -> None:
    """Exit 2 for a component name no registry knows (:func:`llmopt.bench.plugins.conformance.check_suite`);
    3 for a known but unusable solver."""
    from llmopt.bench.plugins.conformance import check_suite
    from llmopt.solvers import solver_status

    problems = check_suite(suite)
    if problems:
        die(problems[0] + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""))
    ok, why = solver_status(suite.solver)
    if not ok:
        die(f"suite {suite.name!r}: solver {suite.solver!r} is unavailable: {why}", 3)


def _check_first_instances(suite: Suite, out_dir: Path) -> None:
    """Exit 2 when a workload cannot make the first instance its parameters ask for: a bad value
    (``n_range=(60, 40)``, a missing trace file) fails here, before any task, instead of in every task.
    One instance per workload entry, the first seed not yet recorded in ``out_dir`` (a resumed run
    does not make again what it has); instances are cheap next to the tasks."""
    from llmopt.bench.harness import TRIALS_FILE
    from llmopt.bench.store import read_trials, task_key
    from llmopt.bench.tasks import resolve_workload

    trials = out_dir / TRIALS_FILE
    done = {task_key(r) for r in read_trials(trials)[0]} if trials.exists() else set()
    todo = [t for t in suite.tasks() if t.key not in done]
    for spec in suite.workloads:
        first = next((t for t in todo if t.spec is spec), None)
        if first is None:
            continue
        try:
            resolve_workload(spec.workload)(first.seed, **dict(spec.params))
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            die(f"suite {suite.name!r}: workload {spec.workload!r} with {dict(spec.params) or 'no parameters'} "
                f"fails on seed {first.seed}: {type(exc).__name__}: {exc}")


def _check_out(out_dir: Path, suite: Suite, *, settings: bool) -> None:
    from llmopt.bench.store import HarnessError, check_folder_suite, read_meta

    if out_dir.exists() and not out_dir.is_dir():
        die(f"--out {out_dir} is a file, not a results folder")
    if out_dir.is_dir():
        try:
            check_folder_suite(read_meta(out_dir), suite, out_dir, settings=settings)
        except HarnessError as exc:
            die(str(exc))


_SUMMARY_ROWS = (
    ("trials", "trials", "paper_trials"),
    ("errors", "errors", None),
    ("OPT proven", "proven_optimal", None),
    ("TEL/OPT mean (proven)", "ratio_vs_opt_mean", "paper_mean"),
    ("TEL/OPT max (proven)", "ratio_vs_opt_max", "paper_max"),
    ("TEL/OPT min (proven)", "ratio_vs_opt_min", "paper_min"),
    ("= OPT (proven)", "reference_exact", "paper_exact"),
    ("TEL/found mean (<= ratio)", "ratio_vs_incumbent_mean", None),
    ("TEL/found max", "ratio_vs_incumbent_max", None),
    ("TEL/bound mean (>= ratio)", "ratio_vs_bound_mean", None),
    ("TEL/bound max", "ratio_vs_bound_max", None),
    ("mean gap", "gap_mean", None),
    ("> best found", "reference_worse_than_found", None),
)


#: Up to this many workloads the summary has one column per workload; beyond, one row per workload.
_WIDE_SUMMARY_MAX = 6


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _summary_table(df: Any, title: str) -> Table:
    """Per-workload summary, ``ours (paper)`` in each cell; metrics no workload has (no proven OPT in a
    theory suite, no paper numbers) are left out. A few workloads: one column each; many (a theory
    suite's 40 families): one row each, so the table stays readable at any width."""
    from llmopt.report.summary import format_value

    rows = [row for _, row in df.iterrows()]
    metrics = [(label, ours, paper) for label, ours, paper in _SUMMARY_ROWS
               if any(not _missing(row.get(ours)) for row in rows)
               or (paper is not None and any(not _missing(row.get(paper)) for row in rows))]

    def cell(row: Any, ours: str, paper: str | None) -> str:
        text = format_value(row.get(ours), ours)
        if paper is not None and not _missing(row.get(paper)):
            text += f" ({format_value(row[paper], paper)})"
        return escape(text)

    has_paper = any(paper is not None and any(not _missing(row.get(paper)) for row in rows) for _, _, paper in metrics)
    t = Table(title=escape(title), caption="(paper's number in brackets)" if has_paper else None)
    if len(rows) <= _WIDE_SUMMARY_MAX:
        t.add_column("", no_wrap=True)
        for row in rows:
            t.add_column(escape(str(row["workload"])), justify="right", no_wrap=True)
        for label, ours, paper in metrics:
            t.add_row(escape(label), *(cell(row, ours, paper) for row in rows))
        return t
    t.add_column("workload", no_wrap=False)
    for label, _, _ in metrics:
        t.add_column(escape(label), justify="right")
    for row in rows:
        t.add_row(escape(str(row["workload"])), *(cell(row, ours, paper) for _, ours, paper in metrics))
    return t


_NARROW_DROP = ("seed", "n", "M", "cols", "nnz")


def _task_table(suite: Suite, out_dir: Path, width: int) -> Table:
    """One row per task; on a terminal too narrow for every column, a compact form."""
    from llmopt.bench.store import TRIALS_FILE, read_trials
    from llmopt.report.summary import largest_proven, task_cells, task_frame, task_headers

    df = task_frame(read_trials(out_dir / TRIALS_FILE)[0], suite)
    best = largest_proven(df)
    heads = task_headers(suite.reference)
    short = {"OPT / incumbent": "OPT|best", f"{suite.reference} TEL": "TEL", f"{suite.reference} / OPT": "ratio",
             "total s": "s"}
    rows = [task_cells(row) for _, row in df.iterrows()]
    for compact in (False, True):
        keep = [i for i, h in enumerate(heads) if not (compact and h in _NARROW_DROP)]
        t = Table(title=escape(f"Suite {suite.name}"),
                  caption=escape(f"largest proven optimal: {best}" if best else "none proven optimal"))
        for i in keep:
            h = short.get(heads[i], heads[i]) if compact else heads[i]
            t.add_column(escape(h), justify="left" if h in ("workload", "status") else "right",
                         no_wrap=not (compact and h == "workload"))
        for cells in rows:
            t.add_row(*(escape(cells[i]) for i in keep))
        if console.measure(t, options=console.options.update_width(10_000)).maximum <= width:
            break
    return t


def _trace_table(df: Any, suite: Suite) -> Table:
    """Trace suites: mean latency per (workload, headline policy), ``ours (paper)``."""
    from llmopt.report.trace import _fmt, _headline

    t = Table(title=escape(f"Suite {suite.name}: mean end-to-end latency (s) over trials"),
              caption="(paper's number in brackets; loops = runs stopped by the loop guard)")
    for c in ("workload", "policy", "trials", "mean", "std", "÷ ref", "loops"):
        t.add_column(c, justify="left" if c in ("workload", "policy") else "right")
    for _, row in df.iterrows():
        if row["policy"] not in _headline(suite, row["workload"]):
            continue
        mean = _fmt(row["latency_mean"]) + (f" ({_fmt(row['paper_mean'])})" if row["paper_mean"] is not None else "")
        ratio = _fmt(row["ratio_to_reference"]) + (
            f" ({_fmt(row['paper_ratio_to_reference'])})" if row["paper_ratio_to_reference"] is not None else "")
        t.add_row(escape(str(row["workload"])), escape(str(row["policy"])), str(row["trials"]), mean,
                  _fmt(row["latency_std"]), ratio, str(row["loops"]))
    return t


def _capacity_table(df: Any, suite: Suite) -> Table:
    """Capacity suites: the smallest number of workers per (workload, policy, router), one value per seed."""
    t = Table(title=escape(f"Suite {suite.name}: smallest K with {suite.latency_target} s"),
              caption="(K by seed; — where no K up to the maximum met the target)")
    for c in ("workload", "policy", "router", "K by seed", "GPU-s / req"):
        t.add_column(c, justify="left" if c in ("workload", "policy", "router") else "right")
    for _, row in df.iterrows():
        gpu = row["gpu_s_per_request"]
        t.add_row(escape(str(row["workload"])), escape(str(row["policy"])), escape(str(row["router"])),
                  str(row["workers_by_seed"]), "—" if gpu is None else f"{gpu:.3f}")
    return t


def _print_results(df: Any, suite: Suite, out_dir: Path) -> None:
    # A log file has no width to respect; a cramped table there is only harder to read.
    out = console if console.is_terminal else Console(highlight=False, width=max(console.width, 200))
    if suite.kind == "trace":
        table = _trace_table(df, suite)
    elif suite.kind == "capacity":
        table = _capacity_table(df, suite)
    else:
        title = f"Suite {suite.name}"
        table = _task_table(suite, out_dir, out.width) if suite.task_table else _summary_table(df, title)
    out.print(table)


@bench_app.command("run")
def bench_run(
    suite_name: SuiteArg = None,
    out: OutDir = None,
    workers: Annotated[int | None, typer.Option(
        help="Tasks at once (default: all CPUs; with Ray: all free CPUs of the cluster).", show_default=False)] = None,
    time_limit: Annotated[float | None, typer.Option(
        help="Override the suite's IP time limit (s).", show_default=False)] = None,
    seeds: Annotated[int | None, typer.Option(
        help="Run seeds 0…N−1 of every workload entry instead of the suite's own (more seeds than the "
             "default; a folder run with fewer resumes).", show_default=False)] = None,
    progress: Annotated[bool, typer.Option(
        "--progress/--no-progress", help="A progress bar on a terminal, else a line per finished task.")] = True,
    retry_errors: Annotated[bool, typer.Option(help="Rerun tasks recorded with an error.")] = False,
    executor: Annotated[str, typer.Option(
        help="Where tasks run: local (process pool), ray, or inline (this process, for debugging).")] = "local",
    address: Annotated[str | None, typer.Option(
        help="Ray cluster to join: auto, or ray://HOST:10001 (with --executor ray).", show_default=False)] = None,
    suite_file: SuiteFile = None,
) -> None:
    """Run a suite: parallel, resumable; results go to OUT/trials.jsonl, then the report is rebuilt.

    A stopped run (Ctrl-C, kill -TERM) keeps every finished task; run the same command
    again to resume. Two runs on one folder at once are refused.
    """
    from llmopt.bench.executors import make_executor
    from llmopt.bench.harness import TRIALS_FILE, FolderLocked, HarnessError, RunInterrupted, default_out_dir

    # Every option first, before any work (the executor's own checks run in make_executor below).
    check_option("--workers", workers, minimum=1)
    check_option("--time-limit", time_limit, minimum=0, strict=True)
    check_option("--seeds", seeds, minimum=1)
    suite = _resolve_suite(suite_name, suite_file).with_time_limit(time_limit).with_seeds(seeds)
    out_dir = out if out is not None else default_out_dir(suite.name)  # an explicit --out may rebuild results/
    _check_out(out_dir, suite, settings=True)
    _check_names(suite)
    _check_first_instances(suite, out_dir)
    try:
        ex = make_executor(executor, workers, address)
    except HarnessError as exc:
        die(str(exc))

    from llmopt.api import run_suite as api_run_suite

    try:
        df = api_run_suite(
            suite, out_dir, workers=workers, progress=progress, allow_results=True, retry_errors=retry_errors,
            executor=ex, address=address, command=" ".join(shlex.quote(a) for a in ["llmopt", *sys.argv[1:]]),
        )
    except FolderLocked as exc:
        die(str(exc))
    except HarnessError as exc:
        die(str(exc))
    except RunInterrupted as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(130) from None
    except KeyboardInterrupt:
        trials = out_dir / TRIALS_FILE
        typer.echo(f"interrupted while writing the report; every task is saved in {trials}; "
                   f"rebuild the report with `llmopt bench report --out {shlex.quote(str(out_dir))}`", err=True)
        raise typer.Exit(130) from None
    trials = out_dir / TRIALS_FILE
    _print_results(df, suite, out_dir)
    console.print(f"records: {trials}\nreport:  {out_dir / 'summary.md'}, {out_dir / 'summary.csv'}"
                  + ("" if suite.kind != "hindsight" else f", {out_dir / 'ratio_hist.png'}"), markup=False)
    _exit_on_failed_tasks(trials, suite)


def _exit_on_failed_tasks(trials: Path, suite: Suite) -> None:
    """Exit 1, naming the first failure, when a task of ``suite`` failed or was not recorded
    (:func:`llmopt.bench.harness.task_failures`, which :func:`llmopt.run_suite` reports too)."""
    from llmopt.bench.harness import task_failures

    failures = task_failures(trials.parent, suite)
    if failures:
        die(failures.message(), 1)


@bench_app.command("list")
def bench_list() -> None:
    """List the registered suites."""
    from llmopt.bench.suites import SUITES

    t = Table(title="Suites")
    for c in ("name", "tasks", "workloads", "IP limit", "description"):
        t.add_column(c, justify="right" if c in ("tasks", "IP limit") else "left")
    for name in SUITES.names():
        s = SUITES.get(name)
        counts: dict[str, int] = {}
        for w in s.workloads:
            counts[w.workload] = counts.get(w.workload, 0) + len(w.seeds)
        wl = ", ".join(f"{w}×{n}" for w, n in counts.items())
        limit = "none" if s.ip_time_limit is None else f"{s.ip_time_limit:g} s"
        t.add_row(escape(name), str(s.n_tasks), escape(wl), limit, escape(SUITES.doc(name) or s.description))
    console.print(t)


@bench_app.command("report")
def bench_report(
    suite_name: SuiteArg = None,
    out: OutDir = None,
    suite_file: SuiteFile = None,
) -> None:
    """Rebuild summary.csv, summary.md and ratio_hist.png from OUT/trials.jsonl.

    With no SUITE, the suite stored in OUT/suite.json is used. The committed reference
    results are rebuilt with e.g. ``--out results/jaillet/synthetic``.
    """
    from llmopt.bench.store import TRIALS_FILE, HarnessError, read_trials
    from llmopt.report.summary import write_report

    suite = _resolve_suite(suite_name, suite_file, out)
    out_dir = out if out is not None else DEFAULT_RUNS_DIR / suite.name
    _check_out(out_dir, suite, settings=False)
    if not (out_dir / TRIALS_FILE).exists():
        die(f"{out_dir / TRIALS_FILE}: no results yet (run `llmopt bench run {suite.name}` first)")
    _, problems = read_trials(out_dir / TRIALS_FILE)
    for msg in problems:
        typer.echo(f"warning: {msg}", err=True)
    stored = _stored_suite(out_dir)
    if stored is not None and stored.name == suite.name and suite_file is None:
        suite = stored  # the settings the results were produced with (e.g. a --time-limit override)
    try:
        df = write_report(out_dir, suite)
    except HarnessError as exc:
        die(str(exc))
    _print_results(df, suite, out_dir)
    console.print(f"report: {out_dir / 'summary.md'}, {out_dir / 'summary.csv'}"
                  + ("" if suite.kind != "hindsight" else f", {out_dir / 'ratio_hist.png'}"), markup=False)
