"""Regenerate a committed results folder from its manifest's command and compare, field by field.

Every ``results/<group>/<name>/manifest.json`` entry names the command that writes its files
(``llmopt study run NAME --out ...`` or ``llmopt bench run SUITE --out ...``). :func:`check_entry`
reruns that command into a temporary folder (never into ``results/``) and compares every committed
data file with the one the rerun wrote:

- CSV: row by row, field by field (fields named by the header);
- JSON Lines: record by record, nested fields flattened to dotted paths (``bounds.lp.value``);
  suites' ``trials.jsonl`` records are matched by their task key, since the harness appends them in
  the order its workers finish;
- JSON: flattened the same way (a top-level list is a list of rows);
- Markdown: the cells of its tables (fields named by the table's header); prose is not compared;
- anything else (figures) is not compared and is reported as such.

The only fields left out are those that measure the run rather than the model: wall and CPU seconds,
dates, commits, hosts. They are declared per study or suite in :data:`VOLATILE` (a field named
``*_s`` is not always a time: ``latency_s`` of a simulation or ``rho_lp_s``, a rank correlation, are
data), as shell-style patterns over the flattened field path or the Markdown column header.

A study's short form (``quick=True``) or a seed subset compares only the rows the rerun produced: each
must equal the committed row with the same key; files without a declared row key are then not compared.

Each file gets one verdict: ``identical``, ``differs`` (with the first differing row and field, old and
new value), ``not produced`` (the rerun did not write it) or ``not compared`` (and why). When every
compared file is identical, :func:`stamp_manifest` may record ``"regenerated": {"date", "commit",
"seconds", "matched_files", ...}`` in the entry; nothing in the committed folder is ever overwritten.
The command line is ``llmopt study check NAME|FOLDER [--entry NAME] [--quick] [--seeds ...] [--tolerance R]
[--timeout S] [--stamp]`` (:mod:`llmopt.cli.study`).
"""

from __future__ import annotations

import csv
import datetime as dt
import fnmatch
import io
import json
import math
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmopt.bench.store import task_key
from llmopt.bench.studies import MANIFEST_FILE, git_commit, read_manifest

__all__ = [
    "VOLATILE",
    "SUITE_VOLATILE",
    "Declared",
    "FileVerdict",
    "CheckReport",
    "declared",
    "rerun_argv",
    "compare_files",
    "compare_folders",
    "manifest_entry",
    "compare_entry",
    "check_entry",
    "stamp_manifest",
    "RegenerateError",
]


class RegenerateError(ValueError):
    """A manifest entry cannot be rerun as asked (no such entry, a command that is not llmopt's)."""


#: what a suite record measures about the run: the harness's wall clocks and each simulation's timer, and
#: ``suite.json``'s log of the runs that wrote the folder (command with its --out, host, pid, dates, wall_s)
SUITE_VOLATILE = ("runtime_s", "hindsight_runtime_s", "hindsight_stage_s.*", "sim_s_*", "curve_*.sim_s",
                  "suite.json::runs.*", "suite.json::started", "suite.json::command")


@dataclass(frozen=True)
class Declared:
    """What a study or suite declares about its files.

    Parameters
    ----------
    volatile : tuple of str
        Shell-style patterns over flattened field paths (JSON, JSON Lines), CSV column names and
        Markdown column headers: the fields that measure the run (time, machine), left out of the
        comparison. ``FILE::PATTERN`` applies to the file named ``FILE`` only.
    keys : mapping of str to callable
        File name → a function giving a row's key; rows of that file are matched by key, not position.
    outputs : tuple of str
        Options of the command whose value is a file it writes outside its folder (``--coefficients``):
        the rerun writes it into its temporary folder instead, and it is compared with the committed one.
    whole : tuple of str
        Files that describe the whole run (a suite's ``suite.json`` lists the seeds it ran): not compared
        after a subset rerun.
    """

    volatile: tuple[str, ...] = ()
    keys: Mapping[str, Callable[[Mapping[str, Any]], Any]] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()
    whole: tuple[str, ...] = ()


def _suite_key(row: Mapping[str, Any]) -> Any:
    return task_key(row)


def _by(*names: str) -> Callable[[Mapping[str, Any]], Any]:
    """A row key made of the fields ``names`` (as canonical JSON: parameters are dicts)."""
    def key(row: Mapping[str, Any]) -> Any:
        return json.dumps([row[n] for n in names], sort_keys=True)
    return key


_SUITE = Declared(SUITE_VOLATILE, {"trials.jsonl": _suite_key}, whole=("suite.json",))

#: per study or suite (the manifest entry's name): the fields that measure the run, read from each
#: module's code (a name ending in ``_s`` is declared only where the module times something with it)
VOLATILE: dict[str, Declared] = {
    "amin-readings": Declared(("seconds",)),
    # cor2.csv lists the records in the order the two workers finished them
    "chen-cor2": Declared(SUITE_VOLATILE, {"trials.jsonl": _suite_key, "cor2.csv": _by("width", "seed", "reading")},
                          whole=("suite.json",)),
    "chen-c-like": Declared(("sim_s_*",)),
    # rows.json records the command line (with its --out) and each part's seconds; thm62_ip's "s" is the
    # solve's runtime_s (elsewhere in the file "s" is a prompt size, compared), printed as thm62.md's
    # last column "s" (thm53.md's "s" is a prompt size, compared)
    "j0-theory": Declared(("command", "seconds.*", "thm43_raw.*.runtime_s", "thm53_raw.*.runtime_s",
                           "thm62_ip.*.s", "thm62.md::s")),
    "schedule-polish": Declared(("cpu_s_*",), {"trials.jsonl": _by("workload", "seed")}),
    # README.md's wall-clock columns (time.perf_counter, best of --repeat); the LP column is "lp time (s)"
    # or "<name> time (s)" after the LP stage used
    "energy-bound": Declared(("energy time (ms)", "* time (s)", "stage (s)", "SRPT (s)", "checker (s)",
                              "MC-SF sim (s)")),
    "zone-bound": Declared(("zone_s",), {"trials.jsonl": _by("suite", "workload", "params", "seed")}),
    # lp_bucket.md's "LP time (s)": wall seconds of Sorted-LP's planning and simulation
    "lp-bucket-sensitivity": Declared(("LP time (s)",)),
    "bound-scaling": Declared(("seconds", "lag-lp_s", "zone-colgen_s")),
    "cluster-bounds": Declared(("time_s", "ub_s")),
    "cluster-ratios": Declared(("denominator_s",)),
    "trace-bracket": Declared(("bounds.*.seconds", "schedules.*.seconds"), {"rows.jsonl": _by("n", "label")}),
    "zone-tree": Declared(("bc_s", "tree_s"), {"trials.jsonl": _by("workload", "params", "seed")}),
    "wang-lp-optima": Declared(("seconds", "lp_s", "method_s")),
    # the date the fit ran; the coefficients and the report are compared
    "fit-cost-model": Declared(("provenance.fitted_on",), outputs=("--coefficients",)),
    # the biclique separation's seconds column of README.md's table
    "bound-directions": Declared(("biclique s",)),
}

#: file suffixes compared, and how
DATA_SUFFIXES = (".csv", ".jsonl", ".json", ".md")


def declared(name: str, kind: str) -> Declared:
    """The declaration for manifest entry ``name`` of ``kind`` (``"suite"`` or ``"study"``)."""
    if name in VOLATILE:
        return VOLATILE[name]
    return _SUITE if kind == "suite" else Declared()


# --- reading files into rows ---------------------------------------------------------------------


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        if not value and prefix:
            yield prefix, {}
        for k, v in value.items():
            yield from _flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        for i, v in enumerate(value):
            yield from _flatten(v, f"{prefix}.{i}" if prefix else str(i))
    else:
        yield prefix, value


def _md_rows(text: str) -> list[dict[str, Any]]:
    """The rows of every Markdown table in ``text``, each as ``{header: cell}`` plus its table index."""
    rows: list[dict[str, Any]] = []
    header: list[str] | None = None
    table = -1
    for line in text.splitlines():
        s = line.strip()
        if not (s.startswith("|") and s.endswith("|") and len(s) > 1):
            header = None
            continue
        cells = [c.strip() for c in s[1:-1].split("|")]
        if header is None:
            header, table = cells, table + 1
        elif all(set(c) <= set(":- ") and c for c in cells):
            continue  # the |---|---:| line under a header
        else:
            names = [h or f"column {i + 1}" for i, h in enumerate(header)]
            rows.append({"table": table} | dict(zip(names, cells, strict=False)))
    return rows


def read_rows(path: Path) -> list[dict[str, Any]]:
    """``path`` as a list of flat rows ``{field: value}`` (see the module docstring for each format).

    Raises
    ------
    ValueError
        If the file cannot be parsed; the message names the file (and the line, for JSON Lines).
    """
    text = path.read_text(encoding="utf-8")
    suffix = path.suffix
    if suffix == ".csv":
        return [dict(r) for r in csv.DictReader(io.StringIO(text))]
    if suffix == ".md":
        return _md_rows(text)
    if suffix == ".jsonl":
        rows = []
        for i, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}: line {i}: not JSON ({exc.msg})") from None
        return rows
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    return list(data) if isinstance(data, list) else [data]


# --- comparing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileVerdict:
    """The comparison of one committed file with its rerun.

    ``verdict`` is ``"identical"``, ``"differs"``, ``"not produced"`` or ``"not compared"``; ``row``
    (1-based, in the committed file; for a Markdown file its ``n``-th table row), ``field``, ``old`` and
    ``new`` locate the first difference; ``fields`` names every field that differs in some row and
    ``added`` the fields only the rerun writes; ``detail`` says the rest (rows compared, why not compared);
    ``rows`` is how many rows were compared.
    """

    file: str
    verdict: str
    row: int | None = None
    field: str | None = None
    old: Any = None
    new: Any = None
    detail: str = ""
    rows: int = 0
    fields: tuple[str, ...] = ()
    added: tuple[str, ...] = ()

    def line(self) -> str:
        """One line for a terminal or a log."""
        if self.verdict == "differs" and self.field is not None:
            return (f"{self.file}: differs at row {self.row}, field {self.field!r}: committed {self.old!r}, "
                    f"rerun {self.new!r}" + (f" ({self.detail})" if self.detail else ""))
        return f"{self.file}: {self.verdict}" + (f" ({self.detail})" if self.detail else "")


def _same(old: Any, new: Any, tolerance: float) -> bool:
    if old == new:
        return True
    a, b = _number(old), _number(new)
    if a is None or b is None:
        return False
    if math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=tolerance, abs_tol=0.0) if tolerance > 0 else a == b


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace(",", ""))
        except ValueError:
            return None
    return None


def _ignored(name: str, volatile: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pat) for pat in volatile)


def _differences(old: Mapping[str, Any], new: Mapping[str, Any], volatile: Sequence[str],
                 tolerance: float) -> tuple[list[tuple[str, Any, Any]], list[str]]:
    """The committed fields whose value the rerun changed or lacks (``(field, old, new)``, in the committed
    row's order), and the fields only the rerun has."""
    a, b = dict(_flatten(dict(old))), dict(_flatten(dict(new)))
    changed = [(k, v, b.get(k, "<absent>")) for k, v in a.items()
               if not _ignored(k, volatile) and (k not in b or not _same(v, b[k], tolerance))]
    added = [k for k in b if k not in a and not _ignored(k, volatile)]
    return changed, added


class _Tally:
    """The differences of one file: the first one, every field that differs, and the fields the rerun adds."""

    def __init__(self) -> None:
        self.first: tuple[int, str, Any, Any] | None = None
        self.rows = 0
        self.fields: dict[str, None] = {}
        self.added: dict[str, None] = {}

    def add(self, row: int, changed: list[tuple[str, Any, Any]], added: list[str]) -> None:
        if changed:
            self.rows += 1
            if self.first is None:
                self.first = (row, *changed[0])
            self.fields.update(dict.fromkeys(f for f, _, _ in changed))
        self.added.update(dict.fromkeys(added))

    def verdict(self, label: str, compared: int, detail: str = "") -> FileVerdict:
        notes = [detail] if detail else []
        if self.first is not None:
            names = list(self.fields)
            notes.append(f"{self.rows} of {compared} rows differ, in {len(names)} fields: "
                         + ", ".join(names[:8]) + (", …" if len(names) > 8 else ""))
        if self.added:
            names = list(self.added)
            notes.append(("every committed field equal; " if self.first is None else "")
                         + f"the rerun adds {len(names)} fields the committed file lacks: "
                         + ", ".join(names[:8]) + (", …" if len(names) > 8 else ""))
        if self.first is None and not self.added:
            if compared == 0:  # an empty table is no evidence that anything regenerated
                return FileVerdict(label, "not compared", detail="no rows or table cells in it")
            return FileVerdict(label, "identical", detail=detail, rows=compared)
        row, name, old, new = self.first if self.first is not None else (None, None, None, None)
        return FileVerdict(label, "differs", row, name, old, new, detail="; ".join(notes), rows=compared,
                           fields=tuple(self.fields), added=tuple(self.added))


def compare_files(old: Path, new: Path, *, name: str | None = None, volatile: Sequence[str] = (),
                  key: Callable[[Mapping[str, Any]], Any] | None = None, tolerance: float = 0.0,
                  subset: bool = False) -> FileVerdict:
    """Compare the committed file ``old`` with the rerun's ``new``, row by row and field by field.

    Parameters
    ----------
    old, new : Path
        The committed file and the rerun's file of the same name.
    name : str, optional
        The name to report (default ``old``'s file name).
    volatile : sequence of str
        Field patterns left out (see :class:`Declared`).
    key : callable, optional
        A row's key: rows are matched by key rather than by position (their order may differ).
    tolerance : float
        Relative tolerance for numbers (0: exact).
    subset : bool
        The rerun computed a subset (``--quick``, ``--seeds``): each rerun row must equal the committed
        row with its key; committed rows the rerun lacks are not differences. Needs ``key``, except for a
        JSON file holding one object, whose top-level parts the rerun wrote are compared.

    Returns
    -------
    FileVerdict
        The first difference (row, field, old and new value), and in ``fields`` every field that differs
        in some row, in ``added`` the fields only the rerun writes.
    """
    label = name or old.name
    if not new.exists():
        return FileVerdict(label, "not produced")
    if old.suffix not in DATA_SUFFIXES:
        return FileVerdict(label, "not compared", detail="not a data file (a figure)")
    try:
        a, b = read_rows(old), read_rows(new)
    except (ValueError, UnicodeDecodeError) as exc:
        return FileVerdict(label, "differs", detail=f"cannot read: {exc}")
    if subset and key is None:
        if old.suffix == ".json" and len(a) == len(b) == 1 and isinstance(a[0], dict) and isinstance(b[0], dict):
            # one JSON object of parts (j0-theory's rows.json): compare the parts the subset wrote
            changed, _ = _differences({k: v for k, v in a[0].items() if k in b[0]}, b[0], volatile, tolerance)
            tally = _Tally()
            tally.add(1, changed, [])
            return tally.verdict(label, 1, f"the {len(b[0])} of {len(a[0])} top-level parts the subset rerun wrote")
        return FileVerdict(label, "not compared", detail="a subset rerun and no row key declared for this file")
    if key is not None:
        return _compare_keyed(label, a, b, key, volatile, tolerance, subset)
    tally = _Tally()
    for i, (ra, rb) in enumerate(zip(a, b, strict=False), 1):
        tally.add(i, *_differences(ra, rb, volatile, tolerance))
    if len(a) != len(b):
        if tally.first is None:
            return FileVerdict(label, "differs", min(len(a), len(b)) + 1, "<rows>", len(a), len(b),
                               detail=f"committed {len(a)} rows, rerun {len(b)}")
        return tally.verdict(label, min(len(a), len(b)), f"committed {len(a)} rows, rerun {len(b)}")
    return tally.verdict(label, len(a))


def _compare_keyed(label: str, a: list[dict[str, Any]], b: list[dict[str, Any]],
                   key: Callable[[Mapping[str, Any]], Any], volatile: Sequence[str], tolerance: float,
                   subset: bool) -> FileVerdict:
    try:
        old = {key(r): (i, r) for i, r in enumerate(a, 1)}  # a retried task: the last record counts
        new = {key(r): r for r in b}
    except (KeyError, TypeError, ValueError) as exc:
        return FileVerdict(label, "differs", detail=f"a row has no key ({type(exc).__name__}: {exc})")
    extra = [k for k in new if k not in old]
    if extra:
        return FileVerdict(label, "differs", None, "<key>", "<absent>", repr(extra[0]),
                           detail=f"the rerun wrote {len(extra)} rows the committed file lacks")
    tally = _Tally()
    for k in sorted(new, key=lambda k: old[k][0]):
        i, committed = old[k]
        tally.add(i, *_differences(committed, new[k], volatile, tolerance))
    lost = [k for k in old if k not in new]
    if lost and not subset:
        if tally.first is None:
            return FileVerdict(label, "differs", old[lost[0]][0], "<key>", repr(lost[0]), "<absent>",
                               detail=f"{len(lost)} committed rows not rewritten")
        return tally.verdict(label, len(new), f"{len(lost)} committed rows not rewritten")
    return tally.verdict(label, len(new), f"{len(new)} of {len(old)} committed rows rerun" if subset else "")


def compare_folders(committed: Path, rerun: Path, files: Sequence[str], decl: Declared, *,
                    tolerance: float = 0.0, subset: bool = False) -> list[FileVerdict]:
    """One :class:`FileVerdict` per file of ``files`` (paths relative to ``committed``)."""
    verdicts = []
    for f in sorted(files):
        name = Path(f).name
        if subset and name in decl.whole:
            verdicts.append(FileVerdict(f, "not compared", detail="it describes the whole run, not the subset"))
            continue
        volatile = [p.partition("::")[2] if "::" in p else p for p in decl.volatile
                    if "::" not in p or p.partition("::")[0] == name]
        verdicts.append(compare_files(committed / f, rerun / f, name=f, volatile=volatile,
                                      key=decl.keys.get(name), tolerance=tolerance, subset=subset))
    return verdicts


# --- rerunning ------------------------------------------------------------------------------------


def rerun_argv(command: str, out: Path, *, quick: bool = False, seeds: str | None = None,
               outputs: Mapping[str, Path] | None = None) -> list[str]:
    """The manifest's ``command`` as an argument list writing to ``out``, run by this interpreter.

    ``--out`` is replaced, and so is each option of ``outputs`` (option → the file to write instead);
    ``--quick`` and ``--seeds`` are added (or replaced) when asked.

    Raises
    ------
    RegenerateError
        If the command is not an ``llmopt study run`` or ``llmopt bench run`` line with ``--out``.
    """
    argv = shlex.split(command)
    if argv[:1] != ["llmopt"] or argv[1:3] not in (["study", "run"], ["bench", "run"]):
        raise RegenerateError(f"{command!r} is not an `llmopt study run` or `llmopt bench run` command")
    if quick and argv[1] != "study":
        raise RegenerateError("--quick is a study's short form; a suite has none")
    rest: list[str] = []
    it = iter(argv[3:])
    found = False
    for arg in it:
        if outputs and arg in outputs:
            next(it, None)
            rest += [arg, str(outputs[arg])]
        elif arg in ("--out", "--seeds"):
            value = next(it, None)
            if arg == "--out":
                found = True
                rest += ["--out", str(out)]
            elif seeds is None and value is not None:
                rest += [arg, value]
        elif arg.startswith("--out=") or (arg.startswith("--seeds=") and seeds is not None):
            found = found or arg.startswith("--out=")
            if arg.startswith("--out="):
                rest.append(f"--out={out}")
        elif arg == "--quick":
            continue
        else:
            rest.append(arg)
    if not found:
        raise RegenerateError(f"{command!r} names no --out folder")
    rest += ["--quick"] if quick else []
    rest += ["--seeds", seeds] if seeds is not None else []
    return [sys.executable, "-c", "from llmopt.cli.entry import run; run()", *argv[1:3], *rest]


def _outputs_elsewhere(command: str, decl: Declared, where: Path) -> dict[str, tuple[Path, Path]]:
    """Option → (the committed file it names, the file the rerun writes instead) for ``decl.outputs``."""
    argv = shlex.split(command)
    found = {}
    for option in decl.outputs:
        if option in argv[:-1]:
            old = Path(argv[argv.index(option) + 1])
            found[option] = (old, where / old.name)
    if found:
        where.mkdir(parents=True, exist_ok=True)
    return found


@dataclass
class CheckReport:
    """What :func:`check_entry` found for one manifest entry."""

    folder: str
    entry: str
    command: list[str]
    seconds: float
    returncode: int
    verdicts: list[FileVerdict]
    subset: str = ""
    output_tail: str = ""
    timed_out: bool = False

    @property
    def matched(self) -> int:
        """How many files were identical."""
        return sum(v.verdict == "identical" for v in self.verdicts)

    @property
    def ok(self) -> bool:
        """The rerun succeeded, compared at least one file, and every compared file was identical."""
        compared = [v for v in self.verdicts if v.verdict != "not compared"]
        return self.returncode == 0 and bool(compared) and all(v.verdict == "identical" for v in compared)


def manifest_entry(folder: str | Path, entry: str | None = None) -> tuple[str, dict[str, Any]]:
    """``(name, entry)`` of ``folder``'s manifest; ``entry`` may be left out when the manifest has one.

    Raises
    ------
    RegenerateError
        If the manifest is missing or unreadable, has no such entry, or the entry has no command.
    """
    folder = Path(folder)
    try:
        manifest = read_manifest(folder)
    except ValueError as exc:
        raise RegenerateError(str(exc)) from None
    if not manifest:
        raise RegenerateError(f"{folder}: no {MANIFEST_FILE}")
    if entry is None:
        if len(manifest) != 1:
            raise RegenerateError(f"{folder}/{MANIFEST_FILE} has entries {', '.join(sorted(manifest))}: "
                                  "name one with --entry")
        entry = next(iter(manifest))
    if entry not in manifest:
        raise RegenerateError(f"{folder}/{MANIFEST_FILE} has no entry {entry!r} "
                              f"(it has {', '.join(sorted(manifest))})")
    if not isinstance(manifest[entry].get("command"), str):
        raise RegenerateError(f"{folder}/{MANIFEST_FILE}: entry {entry!r} has no command")
    return entry, manifest[entry]


def _kind(command: str) -> str:
    return "suite" if shlex.split(command)[1:2] == ["bench"] else "study"


def compare_entry(folder: str | Path, entry: str | None, rerun: Path, *, tolerance: float = 0.0,
                  subset: bool = False, cwd: Path | None = None) -> list[FileVerdict]:
    """Compare a manifest entry's committed files with a rerun already written to ``rerun``.

    ``rerun/out`` holds the rerun's folder and ``rerun/elsewhere`` the files it wrote in place of those
    named by the entry's declared ``outputs`` (the layout :func:`check_entry` uses with ``workdir``), so
    a changed declaration can be re-judged without rerunning. Parameters as in :func:`check_entry`.
    """
    name, e = manifest_entry(folder, entry)
    decl = declared(name, _kind(e["command"]))
    verdicts = compare_folders(Path(folder), rerun / "out", list(e.get("files", [])), decl, tolerance=tolerance,
                               subset=subset)
    for old, new in _outputs_elsewhere(e["command"], decl, rerun / "elsewhere").values():
        committed = (Path(cwd) if cwd is not None else Path.cwd()) / old
        verdicts.append(compare_files(committed, new, name=str(old), volatile=decl.volatile, tolerance=tolerance,
                                      subset=subset))
    return verdicts


def check_entry(folder: str | Path, entry: str | None = None, *, tolerance: float = 0.0, quick: bool = False,
                seeds: str | None = None, extra: Sequence[str] = (), workdir: Path | None = None,
                cwd: Path | None = None, timeout: float | None = None) -> CheckReport:
    """Rerun one manifest entry of ``folder`` into a temporary folder and compare its files.

    Parameters
    ----------
    folder : str or Path
        A committed results folder holding ``manifest.json``.
    entry : str, optional
        The manifest entry (study or suite name); may be left out when the manifest has one.
    tolerance : float
        Relative tolerance for numbers (0: exact).
    quick, seeds : optional
        Rerun the study's short form or only these seeds (a study's ``0,1,5`` or ``0-9``; for a suite
        ``N``, seeds 0…N−1 of every workload), comparing only the rows the rerun wrote.
    extra : sequence of str
        Further options for the command (a study's ``--limit 2``); they make the rerun a subset too.
    workdir : Path, optional
        Where the rerun writes and is kept (``workdir/out``; default: a temporary folder, removed after).
    cwd : Path, optional
        The directory the command runs in (default: the current one; the manifests' relative paths
        are the checkout root's).
    timeout : float, optional
        Stop the rerun (its whole process group) after this many seconds; nothing is compared then.

    Returns
    -------
    CheckReport

    Raises
    ------
    RegenerateError
        If the folder has no such entry, the manifest cannot be read or the command is not llmopt's.
    """
    folder = Path(folder)
    entry, e = manifest_entry(folder, entry)
    command = e["command"]
    if _kind(command) == "suite" and seeds is not None and not seeds.isdigit():
        raise RegenerateError(f"--seeds {seeds!r}: a suite reruns seeds 0…N−1 of every workload; give N")
    decl = declared(entry, _kind(command))
    subset = " ".join([*(["--quick"] if quick else []), *(["--seeds", seeds] if seeds is not None else []), *extra])
    with tempfile.TemporaryDirectory(prefix="llmopt-regenerate-") as tmp:
        where = workdir or Path(tmp)
        elsewhere = _outputs_elsewhere(command, decl, where / "elsewhere")
        argv = [*rerun_argv(command, where / "out", quick=quick, seeds=seeds,
                            outputs={o: new for o, (_, new) in elsewhere.items()}), *extra]
        t0 = time.perf_counter()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        log = Path(tmp) / "output.log"
        with log.open("w", encoding="utf-8") as sink:
            proc = subprocess.Popen(argv, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT, text=True, env=env,
                                    start_new_session=True)  # its own group: a timeout stops the workers too
            try:
                returncode = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                returncode = None
        seconds = time.perf_counter() - t0
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
        if returncode is None:
            why = f"the rerun was stopped after {seconds:.0f} s (timeout {timeout:g} s)"
            return CheckReport(str(folder), entry, argv, seconds, -1,
                               [FileVerdict(f, "not compared", detail=why) for f in sorted(e.get("files", []))],
                               subset, tail, timed_out=True)
        verdicts = compare_entry(folder, entry, where, tolerance=tolerance, subset=bool(subset), cwd=cwd)
    return CheckReport(str(folder), entry, argv, seconds, returncode, verdicts, subset, tail)


def _code_changed() -> bool | None:
    """Whether the checkout's code (``llmopt/``, ``formulations/``, ``solvers/``) differs from its commit."""
    root = Path(__file__).resolve().parents[2]
    try:
        done = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "llmopt", "formulations",
                               "solvers"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(done.stdout.strip()) if done.returncode == 0 else None


def stamp_manifest(report: CheckReport) -> Path:
    """Record a successful check in its manifest entry as ``"regenerated": {...}``; returns the path.

    The stamp holds ``date`` (UTC), ``commit`` (the checkout's), ``uncommitted_changes`` (whether the code
    the rerun ran differed from that commit; ``null`` without git), ``seconds`` (the rerun's wall time),
    ``matched_files``, ``matched_rows`` (rows, records or table rows compared) and, for a subset rerun,
    ``subset`` (its options). Other
    entries and fields are kept; ``not_regenerated`` (a reason given earlier) is dropped.

    Raises
    ------
    RegenerateError
        If the report is not a success (nothing is written then).
    """
    if not report.ok:
        raise RegenerateError(f"{report.folder}: {report.entry} did not regenerate; the manifest is left as it is")
    folder = Path(report.folder)
    manifest = read_manifest(folder)
    entry = dict(manifest[report.entry])
    entry.pop("not_regenerated", None)
    entry["regenerated"] = {
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "commit": git_commit(),
        "uncommitted_changes": _code_changed(),
        "seconds": round(report.seconds, 1),
        "matched_files": report.matched,
        "matched_rows": sum(v.rows for v in report.verdicts if v.verdict == "identical"),
    } | ({"subset": report.subset} if report.subset else {})
    manifest[report.entry] = entry
    path = folder / MANIFEST_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
