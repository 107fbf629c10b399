"""Mutation testing of the checker, the certificate checks, the engines and the cost model (issue 22, item 4).

Every mutant of ``tests/mutation/mutants.toml`` is one realistic bug: an exact snippet of one file and what
the bug writes instead. For each mutant this tool writes the mutated file into a private copy of the
repository, runs the mutant's pytest selection there, and restores the file; the mutant is **caught**
when a test fails (or the run times out), **survived** when every test passes, and an **error** when it
does not apply (its snippet does not occur exactly once, or the mutated file does not parse) or its
selection already fails unmutated. The score is ``caught / (caught + survived)``::

    python tests/mutation/mutation.py                    # every mutant, one job
    python tests/mutation/mutation.py --jobs 2 --out results/tests/mutation
    python tests/mutation/mutation.py --list             # the list, and whether each mutant applies
    python tests/mutation/mutation.py --only cost-first-token-twice checker-arrival-le
    python tests/mutation/mutation.py --category certificate colgen
    python tests/mutation/mutation.py --only ID... --out results/tests/mutation --merge   # replace only these rows

The working tree is never written. The tool copies the repository once — the files ``git ls-files -co
--exclude-standard`` names: tracked files as they are in the working tree, and untracked files that git
does not ignore — into a temporary folder (one copy per job), and every pytest run happens in a copy.

Which code a run imports. The venv holds ``llmopt`` as an *editable* install of the main checkout:
setuptools' ``__editable___llmopt_*_finder`` sits on ``sys.meta_path`` and maps ``llmopt``,
``llmopt.formulations`` and ``llmopt.solvers`` to the main checkout's folders. ``PYTHONPATH`` alone is not
enough: the path finder, which comes first, does find ``llmopt`` in the copy, but ``llmopt.formulations``
and ``llmopt.solvers`` are not sub-folders of ``llmopt/`` (``package-dir`` maps them from top-level
folders), so the path finder misses them and the editable finder serves the *main checkout's*
``formulations/`` and ``solvers/`` — a mutant of ``solvers/colgen.py`` would never be imported. So each
run gets ``PYTHONPATH=<boot>:<copy>``, where ``<boot>`` holds a ``sitecustomize.py`` that ``site`` imports
at start-up (after the ``.pth`` files, so after the editable finder is installed): it reads the copy's
``pyproject.toml`` ``[tool.setuptools] package-dir`` and puts a finder at the *front* of
``sys.meta_path`` that maps those packages to the copy's folders. Child processes inherit the
environment, so a test that starts ``python -m llmopt`` imports the copy too. ``PYTHONDONTWRITEBYTECODE=1``
keeps stale byte code out (a mutated file restored within the same second with the same size would
otherwise be served from a ``.pyc`` of the mutant).

The proof, three times over: (1) before anything runs, every copy imports ``llmopt``,
``llmopt.formulations``, ``llmopt.solvers`` and a module of each and checks that every ``__file__`` lies
in the copy, then appends ``raise RuntimeError(...)`` to the copy's ``llmopt/verify/checker.py``,
``formulations/hindsight_ip.py`` and ``solvers/colgen.py`` in turn and checks that importing each fails
with it (a canary: the mutated text is what runs), and shows where ``llmopt.formulations`` comes from
*without* the boot folder (the main checkout); (2) ``tests/conftest.py`` refuses to run when those three
packages come from anywhere but the checkout it sits in, which is the copy; (3) a pytest plug-in of the
boot folder (``-p mutation_probe``) records every ``llmopt*`` module a run imported, and the tool turns a
run that imported one from outside the copy into an error. The same record says whether the mutated module
was imported at all (``exercised``); a survivor that was never imported needs a test that reaches it.

Runs are made deterministic: ``--hypothesis-seed=0``, an empty Hypothesis example database per run,
``PYTHONHASHSEED=0``. Each distinct selection first runs once unmutated; a mutant whose selection fails
there is an error, not a catch. A selection path that does not exist in the copy is left out with a note
(tests another change has not landed yet). The copies get ``LLMOPT_DATA`` (the staged trace data the
checkout's tests would find, :func:`trace_data`): from a temporary folder they would not find it, and every
test that needs the traces would skip.

``--out`` writes ``results.json`` and ``README.md``; with ``--merge`` the mutants run now replace their rows
of the report already there and every other row is kept (the committed report is read before anything
runs). Every row records the run it comes from (commit and date) and the report lists the runs, so a
report put together from several runs says which row is from which.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_LIST = ROOT / "tests" / "mutation" / "mutants.toml"
MUTANT_KEYS = {"id", "category", "file", "description", "original", "replacement", "tests", "k", "note"}
#: Modules the isolation check imports in every copy (one per mapped package, and the mutated kinds).
ISOLATION_MODULES = ("llmopt", "llmopt.formulations", "llmopt.solvers", "llmopt.verify.checker", "llmopt.engine.core",
                     "llmopt.formulations.hindsight_ip", "llmopt.solvers.colgen")
#: pytest exit codes: 0 all passed, 1 tests failed, 2 interrupted (a collection error, e.g. the mutant
#: breaks an import), 3 internal error, 4 usage error (e.g. the conftest guard), 5 no tests collected.
CAUGHT_RC = (1, 2)
#: Modules (one per package-dir folder) whose copy gets an import-time canary before any run.
CANARY_MODULES = ("llmopt.verify.checker", "llmopt.formulations.hindsight_ip", "llmopt.solvers.colgen")
CANARY = "llmopt-mutation-canary"

SITECUSTOMIZE = '''\
"""Written by tests/mutation/mutation.py: import llmopt's package-dir packages from the mutation copy."""
import os
import sys

_root = os.environ.get("LLMOPT_MUTATION_ROOT")
if _root:
    import importlib.abc
    import importlib.util
    import tomllib

    with open(os.path.join(_root, "pyproject.toml"), "rb") as _f:
        _dirs = tomllib.load(_f)["tool"]["setuptools"]["package-dir"]
    _MAP = {name: os.path.join(_root, folder) for name, folder in _dirs.items()}

    class _MutationCopyFinder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            folder = _MAP.get(fullname)
            if folder is None:
                return None
            return importlib.util.spec_from_file_location(
                fullname, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])

    sys.meta_path.insert(0, _MutationCopyFinder())
'''

PROBE = '''\
"""Written by tests/mutation/mutation.py: record every llmopt module a pytest run imported, and from where."""
import json
import os
import sys


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("LLMOPT_MUTATION_PROBE")
    if not out:
        return
    mods = {}
    for name, mod in list(sys.modules.items()):
        if name == "llmopt" or name.startswith("llmopt."):
            where = getattr(mod, "__file__", None)
            if where:
                mods[name] = os.path.realpath(where)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(mods, f)
'''

ISOLATION_SCRIPT = '''\
import importlib, json, os, sys
out = {}
for name in sys.argv[1:]:
    try:
        out[name] = os.path.realpath(importlib.import_module(name).__file__)
    except Exception as exc:
        out[name] = "IMPORT FAILED: %s: %s" % (type(exc).__name__, exc)
try:
    import pytest  # noqa: F401
except ImportError:
    out["pytest"] = "IMPORT FAILED: pytest"
print(json.dumps(out))
'''


class ListError(ValueError):
    """The mutant list is malformed (names the file and the mutant)."""


class MutantError(ValueError):
    """A mutant does not apply to its file (names the mutant and the file)."""


@dataclass(frozen=True)
class Mutant:
    id: str
    category: str
    file: str
    description: str
    original: str
    replacement: str
    tests: tuple[str, ...]
    k: str | None = None
    note: str = ""


@dataclass
class Outcome:
    """One pytest run."""

    rc: int
    seconds: float
    timed_out: bool
    tail: str
    first_failure: str | None
    modules: dict[str, str] | None
    copy: Path


@dataclass
class Record:
    """One mutant's result."""

    mutant: Mutant
    status: str  # caught | timeout | survived | error
    seconds: float = 0.0
    detail: str = ""
    caught_by: str | None = None
    exercised: bool | None = None
    selection: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        m = self.mutant
        return {"id": m.id, "category": m.category, "file": m.file, "description": m.description, "note": m.note,
                "status": self.status, "seconds": round(self.seconds, 2), "caught_by": self.caught_by,
                "exercised": self.exercised, "detail": self.detail, "selection": list(self.selection),
                "k": m.k, "missing_paths": list(self.missing)}


@dataclass
class Copy:
    """One private copy of the repository (one per job)."""

    path: Path
    boot: Path
    probe: Path
    env: dict[str, str] = field(default_factory=dict)


# --- the list ---------------------------------------------------------------------------------------


def load_list(path: Path) -> tuple[dict[str, dict[str, Any]], list[Mutant]]:
    """``(categories, mutants)`` from a TOML list; raises :class:`ListError` naming the file and mutant."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ListError(f"{path}: {exc}") from exc
    categories = doc.get("categories", {})
    if not isinstance(categories, dict):
        raise ListError(f"{path}: [categories] must be a table")
    for name, cat in categories.items():
        tests = cat.get("tests") if isinstance(cat, dict) else None
        if not isinstance(tests, list) or not tests or not all(isinstance(t, str) for t in tests):
            raise ListError(f"{path}: [categories.{name}] needs tests = [paths]")
    mutants: list[Mutant] = []
    seen: set[str] = set()
    for n, raw in enumerate(doc.get("mutant", [])):
        where = f"{path}: mutant #{n}" + (f" ({raw.get('id')!r})" if isinstance(raw, dict) and "id" in raw else "")
        if not isinstance(raw, dict):
            raise ListError(f"{where}: not a table")
        unknown = sorted(set(raw) - MUTANT_KEYS)
        if unknown:
            raise ListError(f"{where}: unknown keys {unknown} (known: {sorted(MUTANT_KEYS)})")
        for key in ("id", "category", "file", "description", "original", "replacement"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise ListError(f"{where}: {key} must be a non-empty string")
        if raw["id"] in seen:
            raise ListError(f"{where}: id {raw['id']!r} is used twice")
        seen.add(raw["id"])
        if raw["category"] not in categories:
            raise ListError(f"{where}: category {raw['category']!r} is not one of {sorted(categories)}")
        if raw["original"] == raw["replacement"]:
            raise ListError(f"{where}: replacement equals original")
        tests = raw.get("tests", categories[raw["category"]]["tests"])
        if not isinstance(tests, list) or not tests or not all(isinstance(t, str) for t in tests):
            raise ListError(f"{where}: tests must be a non-empty list of paths")
        k = raw.get("k")
        if k is not None and not isinstance(k, str):
            raise ListError(f"{where}: k must be a string")
        mutants.append(Mutant(raw["id"], raw["category"], raw["file"], raw["description"], raw["original"],
                              raw["replacement"], tuple(tests), k, str(raw.get("note", ""))))
    if not mutants:
        raise ListError(f"{path}: no [[mutant]] entries")
    return categories, mutants


def mutate(m: Mutant, text: str) -> str:
    """``text`` with the mutant's snippet replaced; :class:`MutantError` unless it occurs exactly once
    and the result still parses (Python and JSON files)."""
    count = text.count(m.original)
    if count != 1:
        raise MutantError(f"mutant {m.id!r}: its original snippet occurs {count} times in {m.file} "
                          "(it must occur exactly once)")
    out = text.replace(m.original, m.replacement, 1)
    if m.file.endswith(".py"):
        try:
            compile(out, m.file, "exec")
        except SyntaxError as exc:
            raise MutantError(f"mutant {m.id!r}: the mutated {m.file} does not compile: {exc}") from exc
    elif m.file.endswith(".json"):
        try:
            json.loads(out)
        except ValueError as exc:
            raise MutantError(f"mutant {m.id!r}: the mutated {m.file} is not JSON: {exc}") from exc
    return out


def check_applies(m: Mutant, root: Path) -> tuple[int | None, str | None]:
    """``(line, None)`` when the mutant applies to ``root``'s file, ``(None, why)`` otherwise."""
    try:
        text = (root / m.file).read_text(encoding="utf-8")
    except OSError as exc:
        return None, f"mutant {m.id!r}: cannot read {m.file}: {exc.strerror}"
    try:
        mutate(m, text)
    except MutantError as exc:
        return None, str(exc)
    return text.count("\n", 0, text.index(m.original)) + 1, None


# --- copies and runs --------------------------------------------------------------------------------


def repo_files(root: Path) -> list[str]:
    """Tracked files and untracked files git does not ignore (read-only git query)."""
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "-co", "--exclude-standard"],
                         check=True, capture_output=True).stdout
    return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})


def make_copy(root: Path, files: Iterable[str], dest: Path) -> None:
    for rel in files:
        src = root / rel
        if not src.is_file():  # deleted in the working tree (still tracked), or a submodule
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target, follow_symlinks=False)


def child_env(copy: Path, boot: Path, probe: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")}
    env.update(PYTHONPATH=os.pathsep.join([str(boot), str(copy)]), LLMOPT_MUTATION_ROOT=str(copy),
               LLMOPT_MUTATION_PROBE=str(probe), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    data = trace_data()
    if data is not None:
        env.setdefault("LLMOPT_DATA", str(data))
    return env


def trace_data() -> Path | None:
    """The staged trace data a test of the main checkout would find (``$LLMOPT_DATA``, else the
    checkout's ``../shared/data``), or ``None``. A copy lives in a temporary folder, where the tests'
    ``../shared/data`` does not exist: without ``LLMOPT_DATA`` every test that needs the traces (e.g.
    the golden rows of trace-driven suites) would be skipped in every run, and a mutant they catch
    would survive."""
    env = os.environ.get("LLMOPT_DATA")
    if env:
        return Path(env)
    here = ROOT.parent / "shared" / "data"
    return here if (here / "traces").is_dir() else None


def inside(path: str, folder: Path) -> bool:
    try:
        Path(path).resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def isolation_check(python: str, c: Copy) -> dict[str, Any]:
    """Import the mapped packages in copy ``c``; raise unless every module comes from the copy and an
    import-time canary written into the copy's :data:`CANARY_MODULES` fires. Also record where
    ``llmopt.formulations`` comes from without the boot folder (the need for it)."""
    args = [python, "-c", ISOLATION_SCRIPT, *ISOLATION_MODULES]
    done = subprocess.run(args, cwd=c.path, env=c.env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"isolation check failed to run in {c.path}: {done.stderr.strip()[-2000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    bad = {k: v for k, v in found.items() if v.startswith("IMPORT FAILED") or not inside(v, c.path)}
    if bad:
        hint = " (run the tool with the venv's python)" if "pytest" in bad else ""
        raise RuntimeError(f"isolation check: not imported from the copy {c.path}: {bad}{hint}")
    canaries = {}
    for name in CANARY_MODULES:  # a mutation of the copy's file must reach the import
        target = Path(found[name])
        text = target.read_text(encoding="utf-8")
        try:
            target.write_text(text + f"\nraise RuntimeError({CANARY!r})\n", encoding="utf-8")
            r = subprocess.run([python, "-c", f"import {name}"], cwd=c.path, env=c.env, capture_output=True,
                               text=True, timeout=300)
        finally:
            target.write_text(text, encoding="utf-8")
        if r.returncode == 0 or CANARY not in r.stderr:
            raise RuntimeError(f"isolation check: a canary written into the copy's {target} did not fire on "
                               f"`import {name}` (rc {r.returncode}): the copy's code is not what runs")
        canaries[name] = "fired"
    plain = dict(c.env, PYTHONPATH=str(c.path))
    ctrl = subprocess.run([python, "-c", ISOLATION_SCRIPT, "llmopt", "llmopt.formulations"], cwd=c.path, env=plain,
                          capture_output=True, text=True, timeout=300)
    without = json.loads(ctrl.stdout.strip().splitlines()[-1]) if ctrl.returncode == 0 and ctrl.stdout else {}
    return {"with_boot": found, "canary": canaries, "without_boot": without}


def first_failure(output: str) -> str | None:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line[:240]
    for line in output.splitlines():
        if "Error" in line and line.startswith("E "):
            return line[:240]
    return None


def run_pytest(python: str, c: Copy, selection: Sequence[str], k: str | None, timeout: float) -> Outcome:
    c.probe.unlink(missing_ok=True)
    shutil.rmtree(c.path / ".hypothesis", ignore_errors=True)
    # the report's own golden test checks what this run is about to write: never part of a selection
    cmd = [python, "-m", "pytest", "-x", "-q", "-rfE", "-p", "no:cacheprovider", "-p", "mutation_probe",
           "--hypothesis-seed=0", "--ignore=tests/golden/test_golden_mutation.py", *selection]
    cmd += ["-k", k] if k else []
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=c.path, env=c.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the run's own process group (start_new_session)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
    seconds = time.perf_counter() - t0
    text = out.decode("utf-8", "replace")
    modules = None
    if c.probe.exists():
        try:
            modules = json.loads(c.probe.read_text(encoding="utf-8"))
        except ValueError:
            modules = None
    return Outcome(proc.returncode, seconds, timed_out, text[-4000:], first_failure(text), modules, c.path)


def selection_of(m: Mutant, c: Copy) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(present, missing)`` selection paths of ``m`` in copy ``c`` (node ids checked by their file)."""
    present: list[str] = []
    missing: list[str] = []
    for t in m.tests:
        (present if (c.path / t.split("::", 1)[0]).exists() else missing).append(t)
    return tuple(present), tuple(missing)


def foreign_modules(o: Outcome) -> dict[str, str]:
    """The ``llmopt*`` modules run ``o`` imported from outside its copy."""
    return {k: v for k, v in (o.modules or {}).items() if not inside(v, o.copy)}


# --- the run ----------------------------------------------------------------------------------------


class Runner:
    def __init__(self, python: str, copies: list[Copy], timeout: float | None, factor: float) -> None:
        self.python = python
        self.free: queue.Queue[Copy] = queue.Queue()
        for c in copies:
            self.free.put(c)
        self.jobs = len(copies)
        self.timeout = timeout
        self.factor = factor
        self.lock = threading.Lock()
        self.baselines: dict[tuple[tuple[str, ...], str | None], Outcome] = {}

    def say(self, line: str) -> None:
        with self.lock:
            print(line, flush=True)

    def baseline(self, key: tuple[tuple[str, ...], str | None]) -> Outcome:
        c = self.free.get()
        try:
            return run_pytest(self.python, c, key[0], key[1], 3600.0)  # --timeout is per mutant
        finally:
            self.free.put(c)

    def run_mutant(self, m: Mutant) -> Record:
        c = self.free.get()
        try:
            return self._run_mutant(m, c)
        finally:
            self.free.put(c)

    def _run_mutant(self, m: Mutant, c: Copy) -> Record:
        selection, missing = selection_of(m, c)
        rec = Record(m, "error", selection=selection, missing=missing)
        target = c.path / m.file
        try:
            original = target.read_text(encoding="utf-8")
        except OSError as exc:
            rec.detail = f"mutant {m.id!r}: cannot read {m.file}: {exc.strerror}"
            return rec
        try:
            mutated = mutate(m, original)
        except MutantError as exc:
            rec.detail = str(exc)
            return rec
        if not selection:
            rec.detail = f"none of its test paths exist: {list(m.tests)}"
            return rec
        base = self.baselines.get((selection, m.k))
        if base is None or base.rc != 0:
            why = "not run" if base is None else f"rc {base.rc}: {base.first_failure or base.tail[-300:]}"
            rec.detail = f"the unmutated selection fails ({why})"
            return rec
        timeout = self.timeout or max(120.0, self.factor * base.seconds + 60.0)
        try:
            target.write_text(mutated, encoding="utf-8")
            o = run_pytest(self.python, c, selection, m.k, timeout)
        finally:
            target.write_text(original, encoding="utf-8")
        rec.seconds = o.seconds
        foreign = foreign_modules(o)
        if m.file.endswith(".py") and o.modules is not None:
            rec.exercised = str(target.resolve()) in set(o.modules.values())
        if foreign:
            rec.detail = f"isolation broken: imported from outside the copy: {foreign}"
        elif o.timed_out:
            rec.status, rec.detail = "timeout", f"no result within {timeout:.0f} s (counted as caught)"
        elif o.rc == 0:
            rec.status = "survived"
            rec.detail = "every test passed" + ("" if rec.exercised is not False else
                                                 "; the selection never imported the mutated module")
        elif o.rc in CAUGHT_RC:
            rec.status, rec.caught_by = "caught", o.first_failure
        else:
            rec.detail = f"pytest rc {o.rc}: {o.first_failure or o.tail[-300:]}"
        return rec


def _where(path: str, copy: Path) -> str:
    """``path`` for a committed report: relative to the copy or to the checkout, never this machine's path."""
    for base, label in ((copy.resolve(), "<copy>"), (ROOT, "<checkout>")):
        if inside(path, base):
            return f"{label}/{os.path.relpath(path, base)}"
    return path


def score(records: Sequence[Record] | Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts by status, and ``caught / (caught + survived)`` (a timeout counts as caught, an error not at
    all), of records or of report rows (``results.json`` ``mutants``)."""
    statuses = [r["status"] if isinstance(r, dict) else r.status for r in records]
    counts = {s: statuses.count(s) for s in ("caught", "timeout", "survived", "error")}
    killed = counts["caught"] + counts["timeout"]
    scored = killed + counts["survived"]
    pct = 100.0 * killed / scored if scored else 0.0
    return {**counts, "killed": killed, "scored": scored, "percent": round(pct, 1)}


def score_line(s: dict[str, Any]) -> str:
    extra = [f"{s['timeout']} by timeout"] if s["timeout"] else []
    extra += [f"{s['error']} error(s) not scored"] if s["error"] else []
    return f"caught {s['killed']} of {s['scored']} ({s['percent']:.1f} %)" + (f"; {', '.join(extra)}" if extra else "")


# --- reports ----------------------------------------------------------------------------------------


def git_state(root: Path) -> tuple[str, int]:
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=normal"],
                               check=True, capture_output=True, text=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return "unknown", -1
    return head, len(dirty)


def write_report(out: Path, doc: dict[str, Any]) -> None:
    """Write ``results.json`` and ``README.md`` from ``doc`` (its ``mutants`` rows, each with the ``run`` —
    commit and date — it comes from, and its ``runs``)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    s = doc["score"]
    rows: list[dict[str, Any]] = doc["mutants"]
    runs: list[dict[str, Any]] = doc["runs"]
    lines = [
        "# Mutation testing",
        "",
        "Issue 22, item 4. `tests/mutation/mutation.py` applies each mutant of `tests/mutation/mutants.toml` — one",
        "realistic bug in the checker, the certificate checks, the engines, the cost model, the policies, the",
        "bound guard, column generation or the formulation — to a private copy of the repository, runs the",
        "mutant's pytest selection there, and records whether a test fails (**caught**). Target: every mutant",
        "that can move a certified bound, a checker verdict or a committed number is caught.",
        "",
        f"**Score: {score_line(s)}.**",
        "",
    ]
    if len(runs) == 1:
        r = runs[0]
        lines += [
            f"Run {r['date']} on commit `{r['commit'][:12]}` ({r['dirty_files']} files differing from it in the "
            f"working tree that was copied), Python {r['python']}, {r['jobs']} job(s), {r['wall_s']:.0f} s:",
            "",
            "```",
            r["command"],
            "```",
        ]
    else:
        lines += [
            f"The rows come from {len(runs)} runs (`--merge` replaces the rows of the mutants it runs and keeps",
            "the others; each row names its run in the last column of *Every mutant*):",
            "",
            "| run | date | commit | files differing | Python | jobs | s | mutants | command |",
            "|---:|---|---|---:|---|---:|---:|---:|---|",
        ]
        for j, r in enumerate(runs, 1):
            lines.append(f"| {j} | {r['date']} | `{r['commit'][:12]}` | {r['dirty_files']} | {r['python']} | "
                         f"{r['jobs']} | {r['wall_s']:.0f} | {r['mutants']} | `{r['command']}` |")
    lines += [
        "",
        "## By category",
        "",
        "| category | mutants | caught | survived | error |",
        "|---|---:|---:|---:|---:|",
    ]
    for cat, row in doc["by_category"].items():
        lines.append(f"| {cat} | {row['mutants']} | {row['caught']} | {row['survived']} | {row['error']} |")
    survivors = [r for r in rows if r["status"] == "survived"]
    lines += ["", "## Survivors", ""]
    if survivors:
        lines += ["| mutant | file | bug | note |", "|---|---|---|---|"]
        for r in survivors:
            extra = "; never imported by its selection" if r.get("exercised") is False else ""
            lines.append(f"| `{r['id']}` | `{r['file']}` | {r['description']} | {r.get('note', '')}{extra} |")
    else:
        lines.append("None.")
    errors = [r for r in rows if r["status"] == "error"]
    if errors:
        lines += ["", "## Errors (not scored)", "", "| mutant | why |", "|---|---|"]
        for r in errors:
            lines.append(f"| `{r['id']}` | {str(r.get('detail', '')).replace('|', '/')} |")
    run_of = {(r["commit"], r["date"]): j for j, r in enumerate(runs, 1)}
    lines += ["", "## Every mutant", ""]
    if len(runs) == 1:
        lines += ["| mutant | category | status | s | caught by |", "|---|---|---|---:|---|"]
    else:
        lines += ["| mutant | category | status | s | caught by | run |", "|---|---|---|---:|---|---:|"]
    for r in rows:
        by = (r.get("caught_by") or "").replace("|", "/")
        line = f"| `{r['id']}` | {r['category']} | {r['status']} | {r['seconds']:.1f} | {by} |"
        if len(runs) > 1:
            line += f" {run_of[(r['run']['commit'], r['run']['date'])]} |"
        lines.append(line)
    iso = doc["isolation"]
    without = iso.get("without_boot", {}).get("llmopt.formulations", "?")
    lines += [
        "",
        "## How a run imports the mutated copy",
        "",
        "The venv installs `llmopt` in editable mode: setuptools' finder on `sys.meta_path` maps `llmopt`,",
        "`llmopt.formulations` and `llmopt.solvers` to the main checkout. With only `PYTHONPATH=<copy>`, `llmopt`",
        "comes from the copy but `llmopt.formulations` does not (package-dir maps it from a top-level folder the",
        f"path finder cannot see under `llmopt/`): in the latest run it resolved to `{without}`. Each run",
        "therefore gets `PYTHONPATH=<boot>:<copy>` where `<boot>/sitecustomize.py` puts a finder for the copy's",
        "`package-dir` mapping at the front of `sys.meta_path`; child processes inherit it. Checked three ways:",
        "every copy imports the mapped packages before any run and every `__file__` must lie in the copy, and",
        "a `raise` appended to the copy's `checker.py`, `hindsight_ip.py` and `colgen.py` must fire on import;",
        "`tests/conftest.py` refuses to run when they come from another checkout; and a pytest plug-in records",
        "every `llmopt*` module each run imported (a run that imported one from outside the copy is an error;",
        "the same record says whether the mutated module was imported at all). `PYTHONDONTWRITEBYTECODE=1`",
        "keeps stale byte code of a restored file out. Runs are deterministic (`--hypothesis-seed=0`, empty",
        "Hypothesis database per run, `PYTHONHASHSEED=0`). The copies get `LLMOPT_DATA` (the staged trace data",
        "the checkout's tests would find), so the tests that need the traces run in them rather than skip.",
        "",
        "## Adding a mutant",
        "",
        "When a bug escapes the tests, add the `[[mutant]]` that reproduces it to `tests/mutation/mutants.toml`",
        "(its `original` snippet must occur exactly once in `file`; `python tests/mutation/mutation.py --list` checks",
        "that), then the test that catches it, and rerun it alone into the committed report with",
        "`python tests/mutation/mutation.py --only ID --out results/tests/mutation --merge`.",
        "",
    ]
    (out / "README.md").write_text("\n".join(lines), encoding="utf-8")


def by_category(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Mutants and outcomes per category, in the order the categories first occur in ``rows``."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        row = out.setdefault(r["category"], {"mutants": 0, "caught": 0, "survived": 0, "error": 0})
        row["mutants"] += 1
        row["caught" if r["status"] in ("caught", "timeout") else r["status"]] += 1
    return out


#: What a run's entry in ``runs`` (and, for the commit and date, each of its rows' ``run``) records.
RUN_FIELDS = ("date", "commit", "dirty_files", "python", "jobs", "wall_s", "command")


def merge_reports(old: dict[str, Any], new: dict[str, Any], listed: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """``new`` (this run's report) merged into ``old`` (the committed one): the rows of the mutants run now
    replace theirs, every other row of a mutant still ``listed`` is kept with the run it came from, and the
    rows follow the order of ``listed``. Score, categories, runs and baselines are recomputed over the
    result. Returns the merged report and notes (rows dropped, listed mutants without a row).

    A report written before rows named their run gets its top-level ``commit`` / ``date`` (and the other
    :data:`RUN_FIELDS`) as the run of each of its rows.
    """
    if not isinstance(old.get("mutants"), list):
        raise ValueError("it has no 'mutants' list")
    old_runs = old.get("runs") or [{k: old.get(k) for k in RUN_FIELDS} | {"mutants": len(old["mutants"])}]
    fallback = {"commit": old_runs[-1]["commit"], "date": old_runs[-1]["date"]}
    kept: dict[str, dict[str, Any]] = {}
    for row in old["mutants"]:
        kept[row["id"]] = {**row, "run": row.get("run") or fallback}
    fresh = {row["id"]: row for row in new["mutants"]}
    rows = [fresh.get(i) or kept[i] for i in listed if i in fresh or i in kept]
    notes = [f"dropped the row of {i!r}: no longer in the list" for i in kept if i not in set(listed)]
    notes += [f"{i!r} is listed but has no row yet (run it with --only)" for i in listed
              if i not in fresh and i not in kept]
    used = {(r["run"]["commit"], r["run"]["date"]) for r in rows}
    runs = [r for r in old_runs if (r["commit"], r["date"]) in used and (r["commit"], r["date"]) != (
        new["commit"], new["date"])]
    for r in runs:  # how many of the kept rows each older run still holds
        r["mutants"] = sum((x["run"]["commit"], x["run"]["date"]) == (r["commit"], r["date"]) for x in rows)
    runs.append(new["runs"][0])
    selections = {(tuple(b["selection"]), b["k"]): b for b in old.get("baselines", [])}
    selections.update({(tuple(b["selection"]), b["k"]): b for b in new["baselines"]})
    missing = sorted(set(old.get("missing_paths", [])) | set(new["missing_paths"]))
    doc = {**new, "score": score(rows), "by_category": by_category(rows), "runs": runs,
           "baselines": list(selections.values()), "missing_paths": missing, "mutants": rows}
    return doc, notes


# --- command line -----------------------------------------------------------------------------------


def select(mutants: list[Mutant], only: Sequence[str] | None, categories: Sequence[str] | None,
           known_categories: Iterable[str]) -> list[Mutant]:
    if only:
        ids = {m.id for m in mutants}
        unknown = [i for i in only if i not in ids]
        if unknown:
            raise SystemExit(f"unknown mutant id(s): {', '.join(unknown)} (see --list)")
        mutants = [m for m in mutants if m.id in set(only)]
    if categories:
        unknown = [c for c in categories if c not in set(known_categories)]
        if unknown:
            raise SystemExit(f"unknown categor(y/ies): {', '.join(unknown)}; known: {', '.join(known_categories)}")
        mutants = [m for m in mutants if m.category in set(categories)]
    if not mutants:
        raise SystemExit("no mutant selected")
    return mutants


def cmd_list(mutants: list[Mutant], categories: dict[str, dict[str, Any]]) -> int:
    bad = 0
    for m in mutants:
        line, why = check_applies(m, ROOT)
        if why:
            bad += 1
        where = f"{m.file}:{line}" if line else m.file
        print(f"{m.id:44s} {m.category:18s} {where:50s} {'ok' if not why else 'ERROR: ' + why}")
        print(f"{'':44s} {m.description}")
    print()
    counts = {c: sum(m.category == c for m in mutants) for c in categories}
    print("by category: " + ", ".join(f"{c} {n}" for c, n in counts.items() if n))
    print(f"{len(mutants)} mutants, {len(mutants) - bad} apply" + (f", {bad} do NOT apply" if bad else ""))
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mutants", type=Path, default=DEFAULT_LIST, help="the mutant list (default %(default)s)")
    ap.add_argument("--list", action="store_true", help="list the mutants and check that each applies; run nothing")
    ap.add_argument("--only", nargs="+", metavar="ID", help="run only these mutants")
    ap.add_argument("--category", nargs="+", metavar="CAT", help="run only the mutants of these categories")
    ap.add_argument("--jobs", type=int, default=1, help="parallel copies (default 1)")
    ap.add_argument("--out", type=Path, help="write README.md (score, survivors) and results.json here")
    ap.add_argument("--merge", action="store_true",
                    help="with --out: the mutants run now replace their rows in OUT's results.json and README.md; "
                         "every other row is kept, each row naming the run (commit, date) it comes from")
    ap.add_argument("--timeout", type=float, help="seconds per mutant run (default: 4 × its unmutated run + 60, "
                                                  "at least 120)")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the pytest runs (default: this one)")
    ap.add_argument("--workdir", type=Path, help="where the copies go (default: a new temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the copies afterwards")
    ap.add_argument("--fail-under", type=float, metavar="PCT", help="exit 1 if the score is below PCT")
    args = ap.parse_args(argv)
    try:
        categories, mutants = load_list(args.mutants)
    except ListError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    listed = [m.id for m in mutants]
    mutants = select(mutants, args.only, args.category, categories)
    if args.list:
        return cmd_list(mutants, categories)
    if args.jobs < 1:
        raise SystemExit("--jobs must be >= 1")
    previous: dict[str, Any] | None = None
    if args.merge:  # read before anything runs: a report that cannot be merged must not cost a run
        if args.out is None:
            print("error: --merge needs --out (the folder whose results.json the run is merged into)", file=sys.stderr)
            return 2
        try:
            previous = json.loads((args.out / "results.json").read_text(encoding="utf-8"))
            if not isinstance(previous, dict) or not isinstance(previous.get("mutants"), list):
                raise ValueError("no 'mutants' list")
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            print(f"error: --merge: cannot read {args.out / 'results.json'}: {why} (run without --merge to write a "
                  "new report)", file=sys.stderr)
            return 2

    # the tree the copies are made of: read now, not when the report is written (HEAD may move meanwhile)
    copied_head, copied_dirty = git_state(ROOT)
    t_start = time.perf_counter()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="llmopt-mutation-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        files = repo_files(ROOT)
        boot = workdir / "boot"
        boot.mkdir(exist_ok=True)
        (boot / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        (boot / "mutation_probe.py").write_text(PROBE, encoding="utf-8")
        copies: list[Copy] = []
        for j in range(args.jobs):
            path = workdir / f"repo{j}"
            if path.exists():
                shutil.rmtree(path)
            make_copy(ROOT, files, path)
            probe = workdir / f"probe{j}.json"
            copies.append(Copy(path, boot, probe, child_env(path, boot, probe)))
        print(f"copied {len(files)} files of {ROOT} into {args.jobs} cop{'y' if args.jobs == 1 else 'ies'} "
              f"under {workdir}", flush=True)
        isolation: dict[str, Any] = {}
        for c in copies:
            isolation = isolation_check(args.python, c)
        first = isolation["with_boot"]
        shown = ", ".join(f"{k} <- {Path(v).relative_to(copies[-1].path.resolve())}"
                          for k, v in first.items() if k in ISOLATION_MODULES[:3])
        print(f"isolation: {shown}; canaries fired in {', '.join(CANARY_MODULES)} of every copy", flush=True)
        without = isolation["without_boot"].get("llmopt.formulations")
        if without:
            print(f"           (without the boot folder llmopt.formulations would come from {without})", flush=True)

        runner = Runner(args.python, copies, args.timeout, 4.0)
        keys: list[tuple[tuple[str, ...], str | None]] = []
        for m in mutants:
            selection, _missing = selection_of(m, copies[0])
            if selection and (selection, m.k) not in keys:
                keys.append((selection, m.k))
        missing = sorted({p for m in mutants for p in selection_of(m, copies[0])[1]})
        if missing:
            print(f"note: selection paths missing in the copy, left out: {', '.join(missing)}", flush=True)
        print(f"baseline: {len(keys)} distinct selection(s), unmutated", flush=True)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for key, o in zip(keys, pool.map(runner.baseline, keys)):
                runner.baselines[key] = o
                foreign = foreign_modules(o)
                if foreign:
                    raise RuntimeError(f"isolation broken in the baseline of {' '.join(key[0])}: {foreign}")
                state = "green" if o.rc == 0 else f"FAILS (rc {o.rc}): {o.first_failure or o.tail[-300:]}"
                runner.say(f"  {o.seconds:6.1f} s  {state}  {' '.join(key[0])}" + (f" -k {key[1]!r}" if key[1] else ""))
            records: list[Record] = []
            n = len(mutants)
            futures = {pool.submit(runner.run_mutant, m): m for m in mutants}
            for done, fut in enumerate(concurrent.futures.as_completed(futures), 1):
                rec = fut.result()
                records.append(rec)
                info = rec.caught_by if rec.status == "caught" else rec.detail
                runner.say(f"[{done:3d}/{n}] {rec.status:8s} {rec.mutant.id:44s} {rec.seconds:6.1f} s  {info or ''}")
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)

    order = {m.id: i for i, m in enumerate(mutants)}
    records.sort(key=lambda r: order[r.mutant.id])
    s = score(records)
    wall = time.perf_counter() - t_start
    print()
    print(f"score: {score_line(s)}  [{wall:.0f} s]")
    survivors = [r for r in records if r.status == "survived"]
    if survivors:
        print("survivors:")
        for r in survivors:
            never = "  (never imported by its selection)" if r.exercised is False else ""
            print(f"  {r.mutant.id}: {r.mutant.description}{never}")
    errors = [r for r in records if r.status == "error"]
    if errors:
        print("errors:")
        for r in errors:
            print(f"  {r.mutant.id}: {r.detail}")
    if args.out:
        head, dirty = copied_head, copied_dirty
        argv_shown = " ".join(["python", "tests/mutation/mutation.py", *(argv if argv is not None else sys.argv[1:])])
        run = {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"), "commit": head,
               "dirty_files": dirty, "python": platform.python_version(), "jobs": args.jobs,
               "wall_s": round(wall, 1), "command": argv_shown, "mutants": len(records)}
        rows = [{**r.to_json(), "run": {"commit": head, "date": run["date"]}} for r in records]
        doc = {
            "tool": "tests/mutation/mutation.py",
            "list": os.path.relpath(args.mutants.resolve(), ROOT),
            "command": argv_shown,
            "date": run["date"],
            "commit": head,
            "dirty_files": dirty,
            "python": run["python"],
            "jobs": args.jobs,
            "wall_s": run["wall_s"],
            "runs": [run],
            "score": s,
            "by_category": by_category(rows),
            "isolation": {"with_boot": {k: os.path.relpath(v, copies[-1].path.resolve()) for k, v in first.items()},
                          "canary": isolation["canary"],
                          "without_boot": {k: _where(v, copies[-1].path)
                                           for k, v in isolation["without_boot"].items()}},
            "baselines": [{"selection": list(k[0]), "k": k[1], "rc": o.rc, "seconds": round(o.seconds, 2)}
                          for k, o in runner.baselines.items()],
            "missing_paths": missing,
            "mutants": rows,
        }
        if previous is not None:
            doc, notes = merge_reports(previous, doc, listed)
            for note in notes:
                print(f"note: {note}")
            print(f"merged {len(records)} row(s) into {args.out / 'results.json'}: {score_line(doc['score'])} over "
                  f"{len(doc['mutants'])} rows from {len(doc['runs'])} run(s)")
        write_report(args.out, doc)
        print(f"wrote {args.out / 'README.md'} and {args.out / 'results.json'}")
    if args.fail_under is not None and s["percent"] < args.fail_under:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
