"""Per-paper verdict tables: each claim of a paper with its verdict, its number(s) read from the committed results
(or computed by the package's own closed forms), and its evidence — the results file and the command that
recomputes it.

The rows are data in each paper's wing (``llmopt.papers.jaillet.verdicts``, ``…wang.verdicts``,
``…chen.verdicts``); :func:`render` turns them into the Markdown tables that ``llmopt.papers.printed`` writes
between markers in README.md, so a typed-in number that disagrees with its results file fails that module's
check, and :func:`evidence_problems` (run by ``tests/papers/test_verdicts.py``) fails when a row's evidence file
is missing or its command names no registered study, suite, module or script.
"""

from __future__ import annotations

import csv
import importlib.util
import math
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"

#: the verdicts a row may carry (its text starts with one of them)
KINDS = ("reproduced", "not reproduced — measured cause", "not reproduced — unexplained", "not checkable",
         "contradicted")


@dataclass(frozen=True)
class Evidence:
    """Where a number comes from: a file relative to the checkout, and the command that recomputes it."""

    path: str
    command: str


@dataclass(frozen=True)
class Claim:
    """One row of a verdict table.

    Attributes
    ----------
    claim
        The paper's claim, as the table prints it.
    kind
        One of :data:`KINDS`.
    detail
        Free text after the verdict (e.g. the cause, in words); numbers belong in ``number``.
    number
        Returns the row's number(s) as printed, read from the evidence (never a typed constant).
    evidence
        The files and commands behind ``number`` (and behind the cause, for a measured cause).
    """

    claim: str
    kind: str
    detail: str
    number: Callable[[], str]
    evidence: tuple[Evidence, ...]


def render(claims: Sequence[Claim], paper: str) -> str:
    """The Markdown verdict table of one paper.

    Parameters
    ----------
    claims
        The rows, in the order printed.
    paper
        The paper's short name (``J``, ``J0``, ``W``, ``C``), for the header.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If a row's verdict is not one of :data:`KINDS` or it names no evidence.
    """
    lines = [f"| {paper} claim | verdict | number(s) | evidence (file; command) |", "|---|---|---|---|"]
    for c in claims:
        if c.kind not in KINDS:
            raise ValueError(f"{paper} claim {c.claim!r}: verdict {c.kind!r} is not one of {KINDS}")
        if not c.evidence:
            raise ValueError(f"{paper} claim {c.claim!r}: no evidence")
        verdict = c.kind if c.kind == "reproduced" else f"**{c.kind}**"
        if c.detail:
            verdict += f": {c.detail}"
        evidence = "; ".join(f"`{e.path}` (`{e.command}`)" for e in c.evidence)
        lines.append(f"| {c.claim} | {verdict} | {c.number()} | {evidence} |")
    return "\n".join(lines)


def _command_problem(command: str, root: Path) -> str | None:
    """Why ``command`` would not run here (None if it names something that exists)."""
    from llmopt.bench.studies import STUDIES
    from llmopt.bench.suites import SUITES

    words = shlex.split(command)
    if words[:3] == ["llmopt", "study", "run"] and len(words) > 3:
        return None if words[3] in STUDIES.names() else f"study {words[3]!r} is not registered"
    if words[:3] == ["llmopt", "bench", "run"] and len(words) > 3:
        return None if words[3] in SUITES.names() else f"suite {words[3]!r} is not registered"
    if words[:2] == ["python", "-m"] and len(words) > 2:
        return None if importlib.util.find_spec(words[2]) is not None else f"module {words[2]!r} not found"
    if words[:1] == ["python"] and len(words) > 1:
        return None if (root / words[1]).is_file() else f"script {words[1]!r} not found"
    return f"not a command this check knows: {command!r}"


def evidence_problems(claims: Sequence[Claim], root: Path = ROOT) -> list[str]:
    """Every row whose evidence file does not exist or whose command names nothing registered.

    Parameters
    ----------
    claims
        The rows of one paper.
    root
        The checkout.

    Returns
    -------
    list of str
        One line per problem, naming the claim (empty when every row's evidence exists).
    """
    out = []
    for c in claims:
        for e in c.evidence:
            if not (root / e.path).exists():
                out.append(f"{c.claim}: evidence file {e.path} does not exist")
            problem = _command_problem(e.command, root)
            if problem:
                out.append(f"{c.claim}: {problem}")
    return out


# ---------------------------------------------------------------------------------------------------------------
# reading the committed results (the per-paper modules share these)


@cache
def csv_rows(relpath: str) -> tuple[dict[str, str], ...]:
    """The rows of ``results/<relpath>`` as dictionaries (cached)."""
    with (RESULTS / relpath).open(encoding="utf-8", newline="") as fh:
        return tuple(csv.DictReader(fh))


def num(value: str) -> float:
    """A CSV cell as a float (``nan`` for an empty cell)."""
    return float(value) if value.strip() else math.nan


def one_row(relpath: str, **match: str) -> dict[str, str]:
    """The single row of ``results/<relpath>`` whose columns equal ``match``.

    Raises
    ------
    LookupError
        If not exactly one row matches.
    """
    found = [r for r in csv_rows(relpath) if all(r[k] == v for k, v in match.items())]
    if len(found) != 1:
        raise LookupError(f"results/{relpath}: {len(found)} rows match {match}")
    return found[0]


def md_table_rows(relpath: str, first_cell: str) -> list[list[str]]:
    """The cells of every Markdown table row of ``results/<relpath>`` whose first cell starts with ``first_cell``."""
    text = (RESULTS / relpath).read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0].startswith(first_cell):
                rows.append(cells)
    if not rows:
        raise LookupError(f"results/{relpath}: no table row starts with {first_cell!r}")
    return rows
