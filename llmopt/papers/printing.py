"""What every module of printed blocks shares: where the committed results are, how a block reads them, and the
:class:`Block` record (``llmopt.papers.printed`` keeps the registry, the markers and the command line).

Every function here reads :data:`RESULTS` when it is called, so a test that points :data:`RESULTS` at an edited
copy of the results (and clears :func:`csv_rows`'s cache) sees every block follow the copy.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"


@dataclass(frozen=True)
class Block:
    """One generated text: its function and the files (relative to the checkout) that print it."""

    render: Callable[[], str]
    files: tuple[str, ...]
    source: str


def results_text(relpath: str) -> str:
    """The text of the committed results file ``relpath`` (relative to ``results/``).

    Parameters
    ----------
    relpath : str
        E.g. ``jaillet/lmsys/trials.jsonl``.

    Returns
    -------
    str
    """
    return (RESULTS / relpath).read_text(encoding="utf-8")


def jsonl(relpath: str) -> list[dict[str, Any]]:
    """The records of the committed JSON-lines file ``relpath`` (blank lines skipped).

    Parameters
    ----------
    relpath : str
        E.g. ``jaillet/certified/trials.jsonl``.

    Returns
    -------
    list of dict
    """
    return [json.loads(line) for line in results_text(relpath).splitlines() if line.strip()]


@cache
def csv_rows(relpath: str) -> tuple[dict[str, str], ...]:
    """The rows of the committed CSV file ``relpath`` (cached; tests that edit results clear the cache).

    Parameters
    ----------
    relpath : str
        E.g. ``jaillet/table1/summary.csv``.

    Returns
    -------
    tuple of dict
    """
    with (RESULTS / relpath).open(encoding="utf-8", newline="") as fh:
        return tuple(csv.DictReader(fh))


def num(value: str) -> float:
    """A CSV cell as a float (``nan`` for an empty cell).

    Parameters
    ----------
    value : str

    Returns
    -------
    float
    """
    return float(value) if value.strip() else math.nan


def row(relpath: str, **match: str) -> dict[str, str]:
    """The one row of CSV file ``relpath`` whose columns equal ``match``.

    Parameters
    ----------
    relpath : str
        The CSV file under ``results/``.
    **match : str
        Column → value.

    Returns
    -------
    dict

    Raises
    ------
    LookupError
        If no row or more than one matches.
    """
    found = [r for r in csv_rows(relpath) if all(r[k] == v for k, v in match.items())]
    if len(found) != 1:
        raise LookupError(f"results/{relpath}: {len(found)} rows match {match}")
    return found[0]


def md_table_rows(relpath: str, first_cell: str) -> list[list[str]]:
    """The cells of every Markdown table row of results file ``relpath`` whose first cell starts with ``first_cell``.

    Parameters
    ----------
    relpath : str
        The Markdown file under ``results/``, e.g. ``opt/energy-bound/README.md``.
    first_cell : str
        The start of the rows' first cell.

    Returns
    -------
    list of list of str
        The rows' cells, stripped, in file order.

    Raises
    ------
    LookupError
        If no table row's first cell starts with ``first_cell``.
    """
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in results_text(relpath).splitlines()
            if line.startswith("|")]
    found = [r for r in rows if r[0].startswith(first_cell)]
    if not found:
        raise LookupError(f"results/{relpath}: no table row starts with {first_cell!r}")
    return found


def minus(text: str) -> str:
    """``text`` with typewriter minus signs as the typographic ``−`` the prose prints."""
    return text.replace("-", "−")
