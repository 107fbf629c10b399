"""``llmopt study``: list, run and report the registered studies (see :mod:`llmopt.bench.studies`).

A study writes to ``runs/NAME`` by default, never to ``results/``: the committed folders are
rebuilt on purpose with ``--out``. Options a study takes beyond ``--quick``, ``--out`` and
``--seeds`` pass through as ``--name value`` (its module's ``run`` keywords); every run writes
``manifest.json`` with the command that regenerates it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from llmopt.cli.common import console, die

__all__ = ["study_app"]

study_app = typer.Typer(help="Studies: the measurements behind the papers' claims and the bounds (list, run).",
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
    from llmopt.bench.studies import check_options, get_study, parse_options, parse_seeds, run_study
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

