"""``llmopt study``: list, run and report the registered studies (see :mod:`llmopt.bench.studies`).

A study writes to ``runs/NAME`` by default, never to ``results/``: the committed folders are
rebuilt on purpose with ``--out``. Options a study takes beyond ``--quick``, ``--out`` and
``--seeds`` pass through as ``--name value`` (its module's ``run`` keywords); every run writes
``manifest.json`` with the command that regenerates it. ``llmopt study check NAME|FOLDER`` reruns a
committed folder's manifest command (a study's or a suite's) into a temporary folder and compares the
files field by field (:mod:`llmopt.bench.regenerate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from llmopt.cli.common import console, die

__all__ = ["study_app"]

study_app = typer.Typer(help="Studies: the measurements behind the papers' claims and the bounds (list, run, report, "
                        "check a committed folder).",
                        no_args_is_help=True)


@study_app.command("list")
def study_list() -> None:
    """List the registered studies: name, paper, description, committed results folder."""
    from llmopt.bench.studies import STUDIES, get_study
    from llmopt.model.registry import RegistryError

    t = Table(title="Studies")
    t.add_column("name", style="bold", no_wrap=True)  # a name is typed: it never wraps
    t.add_column("paper", no_wrap=True)
    t.add_column("description", min_width=20)
    t.add_column("results", overflow="fold")
    for name in STUDIES.names():
        try:
            s = get_study(name)
            t.add_row(escape(name), escape(s.paper), escape(s.description), escape(f"results/{s.results}"))
        except (RegistryError, ImportError, AttributeError) as exc:  # one broken plug-in must not hide the rest
            t.add_row(escape(name), "—", escape(f"{type(exc).__name__}: {exc}"), "—")
    console.print(t)


@study_app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def study_run(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Study name (see `llmopt study list`).",
                                        show_default=False)],
    quick: Annotated[bool, typer.Option("--quick", help="The study's short form (smaller sizes, fewer seeds).")]
    = False,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default runs/NAME).",
                                             show_default=False)] = None,
    seeds: Annotated[str | None, typer.Option("--seeds", help="Seeds: 0,1,5 or 0-9 (default: the study's own).",
                                              show_default=False)] = None,
) -> None:
    """Run a study and write its files and manifest.json; further --name value options go to the study."""
    from llmopt.api import run_study
    from llmopt.bench.studies import check_options, get_study, parse_options, parse_seeds
    from llmopt.model.registry import RegistryError

    try:
        study = get_study(name)
    except RegistryError as exc:
        die(str(exc))
    try:
        seed_list = parse_seeds(seeds) if seeds is not None else None
        options = parse_options(ctx.args)
        check_options(study, options)
    except ValueError as exc:
        die(str(exc))
    if out is not None and out.exists() and not out.is_dir():
        die(f"--out {out} is a file, not a folder")
    from llmopt.opt.studies import StudyError

    try:
        files = run_study(name, out, quick=quick, seeds=seed_list, **options)
    except StudyError as exc:  # a bad option combination or a missing input, found by the study itself
        die(f"study {name!r}: {exc}")
    for f in files:
        typer.echo(f"wrote {f}")


@study_app.command("report")
def study_report(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Study name (see `llmopt study list`).",
                                        show_default=False)],
    out: Annotated[Path | None, typer.Option("--out", help="The study's folder (default runs/NAME).",
                                             show_default=False)] = None,
) -> None:
    """Re-render a study's report from the files in its folder (a study that must recompute says which files it has)."""
    from llmopt.bench.studies import DEFAULT_STUDY_RUNS, get_study
    from llmopt.model.registry import RegistryError
    from llmopt.opt.studies import StudyError

    try:
        study = get_study(name)
    except RegistryError as exc:
        die(str(exc))
    folder = out if out is not None else DEFAULT_STUDY_RUNS / name
    if not folder.is_dir():
        die(f"--out {folder}: no such folder (run `llmopt study run {name}` first)")
    try:
        files = study.report(folder)
    except (StudyError, FileNotFoundError) as exc:
        die(f"study {name!r}: {exc}")
    for f in files:
        typer.echo(f"report {f}")



@study_app.command("check", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def study_check(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(metavar="NAME|FOLDER", help="A study name, or a results folder with a "
                                          "manifest.json (e.g. results/jaillet/capacity).", show_default=False)],
    entry: Annotated[str | None, typer.Option("--entry", help="The manifest entry (study or suite name) when the "
                                              "folder has several; default: the study named, or the only one.",
                                              show_default=False)] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Rerun the study's short form; compare the rows it "
                                        "writes.")] = False,
    seeds: Annotated[str | None, typer.Option("--seeds", help="Rerun only these seeds (a study: 0,1,5 or 0-9; a "
                                              "suite: N, seeds 0…N−1); compare the rows they write.",
                                              show_default=False)] = None,
    tolerance: Annotated[float, typer.Option("--tolerance", help="Relative tolerance for numbers (0: exact).",
                                             min=0.0)] = 0.0,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Stop the rerun after this many seconds "
                                                  "(nothing is compared then).", min=1.0, show_default=False)] = None,
    stamp: Annotated[bool, typer.Option("--stamp", help="On a match, record \"regenerated\" in the manifest "
                                        "entry.")] = False,
) -> None:
    """Rerun a committed folder's manifest command into a temporary folder and compare its files field by field.

    Further --name value options go to the rerun command (a study's --limit 2) and make it a subset run.
    Prints one line per file (identical / differs at row, field / not produced / not compared) and exits
    0 when every compared file is identical, 1 when one differs or the rerun failed, 2 on bad input.
    Fields that measure the run (wall and CPU seconds) are left out as each study declares
    (llmopt.bench.regenerate.VOLATILE). The committed files are never written; --stamp only adds the
    "regenerated" record to manifest.json.
    """
    from llmopt.bench.regenerate import RegenerateError, check_entry, stamp_manifest
    from llmopt.bench.studies import STUDIES, get_study, parse_seeds

    folder = Path(target)
    if not folder.is_dir():
        if target not in STUDIES.names():
            die(f"{target}: neither a results folder nor a study (see `llmopt study list`)")
        from llmopt.opt.studies import RESULTS

        folder, entry = RESULTS / get_study(target).results, entry or target
    if seeds is not None and not seeds.isdigit():
        try:
            parse_seeds(seeds)
        except ValueError as exc:
            die(str(exc))
    try:
        report = check_entry(folder, entry, tolerance=tolerance, quick=quick, seeds=seeds, extra=list(ctx.args),
                             timeout=timeout)
    except RegenerateError as exc:
        die(str(exc))
    typer.echo(f"{report.folder} [{report.entry}]{' ' + report.subset if report.subset else ''}: "
               f"rerun in {report.seconds:.1f} s, exit {report.returncode}")
    if report.timed_out:
        typer.echo(f"  stopped after {report.seconds:.0f} s (--timeout): nothing compared")
        raise typer.Exit(1)
    if report.returncode != 0:
        typer.echo(report.output_tail.rstrip(), err=True)
    for v in report.verdicts:
        typer.echo(f"  {v.line()}")
    if not report.ok:
        raise typer.Exit(1)
    typer.echo(f"regenerated: {report.matched} files identical")
    if stamp:
        typer.echo(f"stamped {stamp_manifest(report)}")
