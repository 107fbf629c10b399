"""Pieces shared by the command-line modules (:mod:`llmopt.cli.main`, :mod:`llmopt.cli.bench`).

Every user-supplied string printed through rich goes through :func:`rich.markup.escape`;
every error is one line on standard error with an exit code (see :mod:`llmopt.cli.main`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from llmopt.api.errors import BadInput, check_known, check_number
from llmopt.model.instance import Instance, InstanceError, load_instance

__all__ = [
    "console",
    "die",
    "die_bad",
    "echo_warnings",
    "load_or_die",
    "load_any_or_die",
    "json_out",
    "num",
    "check_name",
    "finish",
    "check_option",
    "write_rows",
    "check_output_file",
    "InstanceFile",
    "JsonFlag",
    "ForceFlag",
]

console = Console(highlight=False)

InstanceFile = Annotated[Path, typer.Argument(help="Instance JSON file.", show_default=False)]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")]


def die(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` on standard error and exit with ``code`` (2: bad input)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


#: How the command line spells an API parameter where it is not ``--`` + the name with ``-`` for ``_``.
OPTION_NAMES = {"use_timestamps": "--timestamps", "bounds": "--bound", "upper_bounds": "--upper-bound",
                "params": "--param", "policies": "--policy", "routers": "--router", "targets": "--target",
                "workload": "WORKLOAD"}


def die_bad(exc: BadInput, **names: str) -> NoReturn:
    """Exit with the API's message for a bad input (:class:`llmopt.api.BadInput`), each parameter spelled as
    this command's option (``time_limit`` → ``--time-limit``; ``names`` for the others, e.g. ``instance=FILE``),
    and its exit status (2; 3 for an unavailable solver)."""
    spelled = {p: names.get(p, OPTION_NAMES.get(p, "--" + p.replace("_", "-"))) for p in exc.params}
    die(exc.text(spelled), exc.code)


@contextlib.contextmanager
def echo_warnings() -> Iterator[None]:
    """Show each :class:`UserWarning` an API call gives as one ``warning: ...`` line on standard error, when it
    is given."""
    import warnings

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        typer.echo(f"warning: {message}", err=True)

    with warnings.catch_warnings():
        warnings.simplefilter("always", UserWarning)
        warnings.showwarning = show
        yield


def load_any_or_die(path: Path) -> Any:
    """Load a discrete or a continuous-time instance file, or exit 2 with the loader's message."""
    from llmopt.model.timed_instance import load_any_instance

    try:
        return load_any_instance(path)
    except InstanceError as exc:
        die(str(exc))


def load_or_die(path: Path) -> Instance:
    """Load an instance file, or exit 2 with the loader's message (file, request, field)."""
    try:
        return load_instance(path)
    except InstanceError as exc:
        die(str(exc))


def json_out(data: dict[str, Any]) -> None:
    typer.echo(json.dumps(data, indent=1, allow_nan=False))


def num(value: Any, digits: int = 4) -> str:
    """A number for a table cell; ``—`` for a missing value."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if not value.is_integer() else str(int(value))
    return str(value)


def finish(code: int = 0) -> None:
    """End a command with ``code``. If a cancelled HiGHS solve is still unwinding in its threads
    (``HiGHS left to stop in the background``), the output is flushed and the process exits at
    once: interpreter shutdown beside HiGHS's live worker threads can abort after the output is
    printed ("terminate called without an active exception", exit 134 — reported with
    ``--threads 8``)."""
    import sys

    from llmopt.solvers.highs import solve_still_running

    if solve_still_running():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    if code:
        raise typer.Exit(code)


def check_name(registry: Any, option: str, name: str) -> None:
    """Exit 2 naming ``option`` and the known names unless ``name`` is in ``registry``
    (:func:`llmopt.api.errors.check_known`'s message)."""
    try:
        check_known(registry, option, name)
    except BadInput as exc:
        die(exc.text())


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` (dicts with the same keys) as CSV or as a JSON list, by ``path``'s suffix."""
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps(rows, indent=1, allow_nan=False) + "\n")
        return
    import csv

    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else [])
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)


def check_option(name: str, value: float | int | None, *, minimum: float, strict: bool = False) -> None:
    """Exit 2 with ``error: NAME must be >= MIN (got VALUE)`` unless ``value`` is ``None`` or in range.

    Every command validates its numeric options with this before doing any work, so a bad
    value is always the same one-line error (:func:`llmopt.api.errors.check_number`'s, as the API gives it).
    """
    try:
        check_number(name, value, minimum=minimum, strict=strict)
    except BadInput as exc:
        die(exc.text())


def check_output_file(name: str, path: Path | None, *, inputs: Sequence[Path] = (), force: bool = False) -> None:
    """Exit 2 unless ``path`` may be written: its folder exists, it is not a folder, it is none of
    ``inputs`` (compared by resolved path, so ``./t.csv`` and ``t.csv`` are one file; ``--force``
    does not lift this) and, unless ``force``, it does not exist yet."""
    if path is None:
        return
    if path.is_dir():
        die(f"{name} {path}: is a folder; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        die(f"{name} {path}: folder {parent} does not exist")
    target = path.resolve()
    for source in inputs:
        src = Path(source)
        if src.resolve() == target or (path.exists() and src.exists() and os.path.samefile(src, path)):  # hard links
            die(f"{name} {path}: is the input file {source}; write the output elsewhere")
    if path.exists() and not force:
        die(f"{name} {path}: exists; pass --force to overwrite it")


ForceFlag = Annotated[bool, typer.Option("--force", help="Overwrite an existing output file (never an input).")]
