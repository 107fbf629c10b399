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

import importlib.util
import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmopt.papers import printing
from llmopt.papers.printing import ROOT, jsonl

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
    limits
        The results folders (relative to ``results/``) whose hindsight IP solves the row's number rests on: the
        row then says how those solves were limited (:func:`ip_limit`), read from the folder's trials.
    """

    claim: str
    kind: str
    detail: str
    number: Callable[[], str]
    evidence: tuple[Evidence, ...]
    limits: tuple[str, ...] = ()


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
        number = "; ".join([c.number(), *(ip_limit(folder) for folder in c.limits)])
        lines.append(f"| {c.claim} | {verdict} | {number} | {evidence} |")
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


def ip_limit(folder: str) -> str:
    """How the hindsight IP solves of a committed suite run were limited, as a verdict row prints it.

    A wall-clock limit makes a solve's status, incumbent and bound depend on the machine's speed and load, so the
    row says the limit, how many solves stopped at it, and the load (from the folder's ``manifest.json``, key
    ``load``; "not recorded" where absent). A node limit gives the same rows on any machine, unless a solve hit the
    wall-clock cap first (``ip_time_capped``), which the row then counts.

    Parameters
    ----------
    folder
        The results folder under ``results/``, e.g. ``jaillet/synthetic``; its ``trials.jsonl`` is read.

    Returns
    -------
    str
        E.g. ``IPs: `highs`, 5-s wall-clock limit each (400 attempted, 0 proven optimal, 400 stopped at the limit);
        machine load not recorded`` (the solver as the trials name it).

    Raises
    ------
    LookupError
        If no trial of the folder attempted an IP.
    """
    trials = jsonl(f"{folder}/trials.jsonl")
    # a trial whose IP ran has the solver's message; a skipped IP (model too large) says so in it
    tried = [t for t in trials if t.get("ip_message") and not str(t["ip_message"]).startswith("IP skipped")]
    if not tried:
        raise LookupError(f"results/{folder}/trials.jsonl: no trial attempted a hindsight IP")
    solvers = ", ".join(f"`{name}`" for name in sorted({str(t.get("solver")) for t in tried}))
    of = f" of {len(trials)} trials" if len(tried) < len(trials) else ""
    proven = sum(t.get("status") == "optimal" for t in tried)
    nodes = sorted({int(t["ip_node_limit"]) for t in tried if t.get("ip_node_limit")})
    if nodes and len(nodes) == 1 and all(t.get("ip_node_limit") for t in tried):
        capped = sum(bool(t.get("ip_time_capped")) for t in tried)
        text = (f"IPs: {solvers}, {nodes[0]:,}-node limit each ({len(tried)}{of} attempted, {proven} proven "
                f"optimal, {len(tried) - proven} stopped at the limit), the same on any machine")
        if not capped:
            return text
        return (f"{text} except {capped} that stopped at the {_seconds(tried)} wall-clock cap first; "
                f"{_load(folder)}")
    stopped = sum(t.get("status") == "time_limit" for t in tried)
    return (f"IPs: {solvers}, {_seconds(tried)} wall-clock limit each ({len(tried)}{of} attempted, {proven} proven "
            f"optimal, {stopped} stopped at the limit); {_load(folder)}")


def _seconds(trials: Sequence[dict[str, Any]]) -> str:
    limits = sorted({float(t["ip_time_limit"]) for t in trials if t.get("ip_time_limit") is not None})
    return "/".join(f"{v:g}-s" for v in limits) or "no"


def _load(folder: str) -> str:
    """The machine load a folder's manifest records for its run, or that it records none."""
    path = printing.RESULTS / folder / "manifest.json"
    entries = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    loads = [str(e["load"]) for e in entries.values() if isinstance(e, dict) and e.get("load") is not None]
    return f"machine load {'; '.join(loads)}" if loads else "machine load not recorded"
