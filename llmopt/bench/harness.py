"""Run a :class:`~llmopt.bench.suites.Suite`: the experiment, on an executor, into a results folder.

:func:`run_suite` joins three pieces, one module each:

* :mod:`llmopt.bench.tasks` — what one task computes and records (:func:`run_task`);
* :mod:`llmopt.bench.executors` — where tasks run: a local process pool (default), Ray, or
  in-process;
* :mod:`llmopt.bench.store` — the results folder: ``trials.jsonl`` (one record per finished
  task, written by this process only), ``suite.json`` (the suite and a log of runs) and
  the lock that keeps two runs out of one folder.

A run is resumable: every task already recorded is skipped, and an interrupted run
(Ctrl-C, SIGTERM, SIGHUP) saves every record that has arrived, stops its workers and
raises :class:`RunInterrupted`, which says how many tasks it wrote. See
:mod:`llmopt.bench.executors` for what happens to workers when the driver is killed.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import shlex
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from llmopt.bench.executors import Executor, make_executor
from llmopt.bench.store import (
    SUITE_FILE,
    TRIALS_FILE,
    FolderLocked,
    HarnessError,
    ResultStore,
    latest_records,
    now,
    read_trials,
    task_key,
)
from llmopt.bench.suites import Suite, Task
from llmopt.bench.tasks import run_task

__all__ = ["HarnessError", "FolderLocked", "RunInterrupted", "TRIALS_FILE", "SUITE_FILE", "run_suite", "run_task",
           "Eta", "read_trials", "latest_records", "task_key", "software_versions", "DEFAULT_RUNS_DIR",
           "default_out_dir", "committed_results_dir", "refuse_committed_results", "TaskFailures", "task_failures"]

#: Where a run goes when no folder is given (relative to the working directory): never ``results/``,
#: whose folders are committed reference output, rebuilt on purpose only.
DEFAULT_RUNS_DIR = Path("runs")


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C or a termination signal, after saving what had finished.

    Attributes
    ----------
    written : int
        Records this run wrote.
    recorded : int
        Tasks of the suite recorded in the folder now (all runs).
    total : int
        Tasks of the suite.
    trials : Path
        The ``trials.jsonl`` they are in.
    """

    def __init__(self, written: int, recorded: int, total: int, trials: Path, why: str = "") -> None:
        super().__init__(written, recorded, total, trials, why)
        self.written, self.recorded, self.total, self.trials, self.why = written, recorded, total, trials, why

    def __str__(self) -> str:
        return (f"interrupted{f' ({self.why})' if self.why else ''}; {self.written} task(s) written by this run "
                f"({self.recorded} of {self.total} in all) to {self.trials}; run again to resume")


_VERSIONED = ("llmopt", "numpy", "scipy")


def software_versions(extra: tuple[str, ...] = ()) -> dict[str, str | None]:
    """Python's version and the installed versions of llmopt, numpy, scipy and every registered
    solver's backend package (plug-in solvers included, through :func:`llmopt.solvers.solver_versions`).

    Read from the installed distributions' metadata, never by importing them (importing
    ``gurobipy`` can check out a license). ``None`` for a package that is not installed.
    """
    from llmopt.solvers import SOLVERS, solver_versions

    versions: dict[str, str | None] = {"python": platform.python_version()}
    for dist in (*_VERSIONED, *extra):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = None
    for name, version in solver_versions().items():  # keyed by the backend package, e.g. "highspy"
        versions[SOLVERS.get(name).info.package] = version
    return versions


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- signals ------------------------------------------------------------------------------------


class _Interrupts:
    """SIGINT, SIGTERM and SIGHUP raise ``KeyboardInterrupt`` in the main thread — but never
    inside a :meth:`critical` section (writing a record), where they wait until its end.
    After the first, further signals are ignored while the run cleans up."""

    SIGNALS = tuple(s for s in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, s))

    def __init__(self) -> None:
        self._depth = 0
        self._pending: str | None = None
        self.fired: str | None = None

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.fired is not None:
            return
        if self._depth:
            self._pending = self._pending or name
            return
        self.fired = name
        raise KeyboardInterrupt(name)

    @contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        old: dict[int, Any] = {}
        for name in self.SIGNALS:
            sig = getattr(signal, name)
            current = signal.getsignal(sig)
            if name == "SIGHUP" and current == signal.SIG_IGN:  # nohup: keep ignoring it
                continue
            old[sig] = current
            signal.signal(sig, self._handler)
        try:
            yield
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)

    @contextmanager
    def critical(self) -> Iterator[None]:
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if not self._depth and self._pending and self.fired is None:
                self.fired, self._pending = self._pending, None
                raise KeyboardInterrupt(self.fired)


# --- progress -------------------------------------------------------------------------------------


def _escape_markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() or abs(value) >= 100 else f"{value:.4g}"
    return str(value)


def _outcome(rec: dict[str, Any]) -> str:
    if rec.get("error"):
        return f"error: {rec['error']}"
    parts = [str(rec.get("status"))]
    if rec.get("tel") is not None:
        parts.append(f"TEL {_short(rec['tel'])}")
    if rec.get("opt") is not None:
        parts.append(f"OPT {_short(rec['opt'])}")
    elif rec.get("incumbent") is not None:
        parts.append(f"best {_short(rec['incumbent'])}")
    if rec.get("bound") is not None and rec.get("opt") is None:
        parts.append(f"bound {_short(rec['bound'])}")
    if rec.get("gap") is not None and rec.get("opt") is None:
        parts.append(f"gap {100 * float(rec['gap']):.1f} %")
    return ", ".join(parts)


class Eta:
    """Time left in a run, from the tasks finished so far, weighted by workload entry.

    A task's expected time is the mean runtime of the finished tasks of its own workload entry
    (same workload and parameters: same sizes), else of all finished tasks; the remaining work is
    divided among ``workers``. ``worst`` assumes instead that every remaining task takes at least
    ``limit_s`` (the suite's IP time limit), which is what a suite of growing instances such as
    ``ip-scaling`` does at the end (a count-based ETA said 5 minutes with nine 600 s IPs left).
    """

    def __init__(self, tasks: Sequence[Task], workers: int | None, limit_s: float | None = None) -> None:
        self.left: dict[Any, int] = {}
        for t in tasks:
            self.left[id(t.spec)] = self.left.get(id(t.spec), 0) + 1
        self.workers = max(1, workers or 1)
        self.limit_s = limit_s
        self.spent: dict[Any, list[float]] = {}

    def finished(self, task: Task, seconds: float | None) -> None:
        self.left[id(task.spec)] = max(0, self.left.get(id(task.spec), 0) - 1)
        if seconds is not None:
            self.spent.setdefault(id(task.spec), []).append(float(seconds))

    def estimate(self) -> tuple[float | None, float | None]:
        """``(expected, worst)`` seconds left; ``expected`` is ``None`` before any task finished."""
        every = [x for xs in self.spent.values() for x in xs]
        expected = worst = 0.0
        for spec, n in self.left.items():
            mine = self.spent.get(spec) or every
            each = sum(mine) / len(mine) if mine else 0.0
            expected += n * each
            worst += n * max(each, self.limit_s or 0.0)
        expected_s = expected / self.workers if every else None
        return expected_s, (worst / self.workers if self.limit_s else None)

    def text(self) -> str:
        expected, worst = self.estimate()
        out = "?" if expected is None else _clock(expected)
        if worst is not None and (expected is None or worst > 1.5 * expected + 60):
            out += f" (up to {_clock(worst)} if every remaining IP runs to its limit)"
        return out


class _Progress:
    """A rich bar on a terminal; otherwise one line per finished task on standard error."""

    def __init__(self, enabled: bool, total: int, label: str, log: Callable[[str], None],
                 eta: Eta | None = None) -> None:
        self.enabled = enabled and total > 0
        self.tty = self.enabled and sys.stderr.isatty()
        self.total, self.label, self._log = total, label, log
        self.done = 0
        self._t0 = time.monotonic()
        self._bar: Any = None
        self._task: Any = None
        self.eta = eta

    def __enter__(self) -> _Progress:
        if self.tty:
            from rich.console import Console
            from rich.markup import escape
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(
                SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"),
                console=Console(stderr=True),
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(escape(self.label), total=self.total, eta="?")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None

    def log(self, msg: str) -> None:
        if self._bar is not None:
            self._bar.console.print(msg, markup=False, highlight=False)
        else:
            self._log(msg)

    def advance(self, task: Task, outcome: str, seconds: float | None = None) -> None:
        self.done += 1
        if self.eta is not None:
            self.eta.finished(task, seconds)
        if not self.enabled:
            return
        elapsed = time.monotonic() - self._t0
        if self.eta is not None:
            eta = self.eta.text()
        else:
            eta = _clock(elapsed / self.done * (self.total - self.done))
        if self._bar is not None:
            self._bar.update(self._task, advance=1, eta=_escape_markup(eta))
            return
        self._log(f"[{self.done}/{self.total}] {task.label}: {outcome} — elapsed {_clock(elapsed)}, ETA {eta}")


# --- run_suite -------------------------------------------------------------------------------------


def run_suite(
    suite: Suite,
    out_dir: str | Path,
    workers: int | None = None,
    time_limit: float | None = None,
    progress: bool = True,
    *,
    executor: str | Executor = "local",
    address: str | None = None,
    retry_errors: bool = False,
    command: str | None = None,
    log: Callable[[str], None] = _stderr,
) -> Path:
    """Run every task of ``suite`` not yet recorded in ``out_dir``.

    Parameters
    ----------
    suite : Suite
    out_dir : path
        Created if needed; holds ``trials.jsonl`` and ``suite.json`` (see :mod:`llmopt.bench.store`).
    workers : int, optional
        Parallel tasks; default: every CPU available (local), every free CPU (Ray).
    time_limit : float, optional
        Overrides ``suite.ip_time_limit``.
    progress : bool
        A progress bar on a terminal, else one line per finished task.
    executor : {"local", "ray", "inline"} or Executor
        Where tasks run (see :mod:`llmopt.bench.executors`).
    address : str, optional
        Ray cluster address (``auto``, ``ray://host:10001``); only with ``executor="ray"``.
    retry_errors : bool
        Also rerun tasks whose record has an ``error`` (a new record is appended;
        reports keep the last record of a task).
    command : str, optional
        Command line stored in ``suite.json`` and the lock; default ``sys.argv``.
    log : callable
        Receives human-readable messages (repairs, skipped tasks, failures, per-task
        progress lines); default: standard error.

    Returns
    -------
    Path
        ``out_dir / "trials.jsonl"``.

    Raises
    ------
    FolderLocked
        If another run holds ``out_dir`` (the message names it).
    HarnessError
        If ``out_dir`` holds results of another suite or of this suite with other
        settings, or the executor cannot be used (e.g. ``ray`` not installed).
    RunInterrupted
        On Ctrl-C, SIGTERM or SIGHUP, after saving every finished task and stopping the
        workers.
    """
    suite = suite.with_time_limit(time_limit)
    ex = make_executor(executor, workers, address) if isinstance(executor, str) else executor
    cmd = command if command is not None else " ".join(shlex.quote(a) for a in sys.argv)
    interrupts = _Interrupts()
    try:
        with interrupts.installed(), ResultStore.open(out_dir, cmd, log) as store:
            store.check_suite(suite)
            records, problems = store.read()
            for msg in problems:
                log(msg)
            done: set[Any] = set()
            for rec in records:
                if rec.get("error") and retry_errors:
                    done.discard(task_key(rec))
                else:
                    done.add(task_key(rec))
            todo = [t for t in suite.tasks() if t.key not in done]
            recorded = suite.n_tasks - len(todo)
            if recorded:
                log(f"{store.trials_path}: {recorded} of {suite.n_tasks} tasks already recorded; "
                    f"running the other {len(todo)}")
            run = store.begin_run(suite, {
                "command": cmd,
                "started": now(),
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "executor": ex.name,
                "address": address,
                "workers": None if ex.slots is None else min(ex.slots, len(todo)),
                "tasks_total": suite.n_tasks,
                "tasks_skipped": recorded,
                "versions": software_versions(("ray",) if ex.name == "ray" else ()),
            })
            t0 = time.perf_counter()
            limit = suite.ip_time_limit if suite.kind == "hindsight" else None
            bar = _Progress(progress, len(todo), suite.name, log, Eta(todo, ex.slots, limit))

            def on_result(task: Task, rec: dict[str, Any]) -> None:
                with interrupts.critical():
                    store.append(rec)
                    if rec.get("error"):
                        bar.log(f"task {task.label} failed: {rec['error']}")
                    runtime = rec.get("runtime_s")
                    bar.advance(task, f"{_outcome(rec)} ({runtime} s)",
                                runtime if isinstance(runtime, (int, float)) else None)

            def on_lost(task: Task, why: str) -> None:
                with interrupts.critical():
                    store.note_lost()
                    bar.log(f"task {task.label} not recorded ({why}); it runs again on resume")
                    bar.advance(task, "not recorded")

            try:
                with bar:
                    ex.run(suite, todo, on_result, on_lost, bar.log)
            except KeyboardInterrupt as exc:
                store.end_run("interrupted", time.perf_counter() - t0)
                written = run["tasks_run"]
                raise RunInterrupted(written, recorded + written, suite.n_tasks, store.trials_path,
                                     interrupts.fired or str(exc)) from None
            except BaseException as exc:
                store.end_run(f"failed: {type(exc).__name__}: {exc}", time.perf_counter() - t0)
                raise
            store.end_run("completed", time.perf_counter() - t0)
            if run["tasks_lost"]:
                log(f"{run['tasks_lost']} task(s) not recorded (their worker died); run again to retry them")
    except RunInterrupted:
        raise
    except KeyboardInterrupt as exc:  # before any task started (e.g. while reading the folder)
        trials = Path(out_dir) / TRIALS_FILE
        keys = {task_key(r) for r in read_trials(trials)[0]}
        raise RunInterrupted(0, sum(t.key in keys for t in suite.tasks()), suite.n_tasks, trials,
                             interrupts.fired or str(exc)) from None
    return Path(out_dir) / TRIALS_FILE


# --- where a run goes, and what failed -------------------------------------------------------------


def default_out_dir(suite_name: str) -> Path:
    """The folder a run of ``suite_name`` goes to when none is given: ``runs/<suite>`` (the CLI's
    ``llmopt bench run`` and :func:`llmopt.run_suite` alike)."""
    return DEFAULT_RUNS_DIR / suite_name


def committed_results_dir() -> Path | None:
    """The checkout's committed ``results/`` folder (beside ``pyproject.toml`` above this package),
    or ``None`` for an installed copy that has none."""
    root = Path(__file__).resolve().parents[2]
    results = root / "results"
    return results if results.is_dir() and (root / "pyproject.toml").is_file() else None


def refuse_committed_results(out_dir: str | Path, *, allow: bool = False) -> None:
    """Refuse a run into the checkout's committed ``results/`` folder unless ``allow`` says it is meant.

    Raises
    ------
    HarnessError
        If ``out_dir`` lies in :func:`committed_results_dir` and ``allow`` is false; nothing is written.
    """
    results = committed_results_dir()
    if allow or results is None:
        return
    target = Path(out_dir).resolve()
    if target == results or results in target.parents:
        raise HarnessError(f"{out_dir}: a committed results folder (under {results}); runs go to "
                           f"{DEFAULT_RUNS_DIR}/SUITE by default — pass allow_results=True to rebuild it on "
                           "purpose (the CLI: --out)")


class TaskFailures:
    """The tasks of a suite that failed or were not recorded in a results folder.

    Attributes
    ----------
    failed : list of dict
        The latest record of each failed task (its ``error`` says why).
    missing : int
        Tasks with no record.
    total : int
        Tasks of the suite.
    """

    def __init__(self, failed: list[dict[str, Any]], missing: int, total: int) -> None:
        self.failed, self.missing, self.total = failed, missing, total

    def __bool__(self) -> bool:
        return bool(self.failed) or self.missing > 0

    def message(self) -> str:
        """One line naming the first failure, or ``""`` when every task succeeded."""
        parts = []
        if self.failed:
            first = self.failed[0]
            parts.append(f"{len(self.failed)} of {self.total} tasks failed (first: {first.get('instance')}: "
                         f"{first['error']}); fix the cause and rerun with --retry-errors")
        if self.missing > 0:
            parts.append(f"{self.missing} task(s) not recorded; run the same command again to finish them")
        return "; ".join(parts)


def task_failures(out_dir: str | Path, suite: Suite) -> TaskFailures:
    """What of ``suite`` failed (a record with an ``error``) or is missing in ``out_dir``; the latest
    record of a task counts, so a task rerun with ``retry_errors`` that succeeded is no failure."""
    records = latest_records(read_trials(Path(out_dir) / TRIALS_FILE)[0])
    keys = {t.key for t in suite.tasks()}
    mine = [r for r in records if task_key(r) in keys]
    return TaskFailures([r for r in mine if r.get("error")], max(0, len(keys) - len(mine)), len(keys))
