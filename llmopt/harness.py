"""Run a :class:`~llmopt.suites.Suite`: parallel, resumable, one JSON line per task.

One task is one ``(workload, seed)``: generate the instance, simulate every policy and
re-verify each schedule with the independent checker, compute (or bound) the hindsight
OPT with :func:`~llmopt.hindsight.solve_hindsight`, and return a flat record.

Results live in ``out_dir``:

* ``trials.jsonl`` — one record per finished task, appended by the parent process the
  moment the task finishes (flushed and fsynced), so an interrupted sweep loses at most
  the tasks in flight. A rerun skips every task already recorded (DESIGN §4 inv. 4).
  A malformed line is reported with its line number and skipped; it is never deleted.
* ``suite.json`` — the suite definition, the llmopt version, and one entry per run
  (command line, start and end time, wall time).

Ratios and their certificates (DESIGN §3 "Checker"): with ``TEL`` the reference
policy's verified TEL,

* ``ratio_vs_opt = TEL / OPT`` only when the solver proved OPT, else ``None``;
* ``ratio_vs_incumbent = TEL / best found`` — best found ``>= OPT``, so this is a
  *lower* bound on the true ratio;
* ``ratio_vs_bound = TEL / certified lower bound`` — an *upper* bound on the true ratio.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shlex
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import llmopt
from llmopt.suites import Suite, WorkloadSpec

__all__ = ["HarnessError", "TRIALS_FILE", "SUITE_FILE", "run_suite", "run_task", "read_trials", "task_key",
           "latest_records"]

TRIALS_FILE = "trials.jsonl"
SUITE_FILE = "suite.json"


class HarnessError(RuntimeError):
    """The output folder cannot be used for this suite (e.g. different settings)."""


def task_key(record: dict[str, Any]) -> tuple[str, int]:
    """The ``(workload, seed)`` that identifies a record's task."""
    return str(record["workload"]), int(record["seed"])


# --- reading results ---------------------------------------------------------------------


def read_trials(path: str | Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Read ``trials.jsonl``.

    Parameters
    ----------
    path : path
        The JSON-lines file (missing file: no records).

    Returns
    -------
    records : list of dict
        The valid records, in file order (a task may appear twice if it was retried;
        callers keep the last).
    problems : list of str
        One message per malformed line, naming the file and line number. Those lines
        are skipped here and left in the file.
    """
    p = Path(path)
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    if not p.exists():
        return records, problems
    with p.open("r", encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{p}: line {lineno}: invalid JSON ({exc.msg}); skipped, kept in the file")
                continue
            if not isinstance(rec, dict) or "workload" not in rec or "seed" not in rec:
                problems.append(f"{p}: line {lineno}: not a trial record (needs 'workload' and 'seed'); "
                                "skipped, kept in the file")
                continue
            try:
                task_key(rec)
            except (TypeError, ValueError):
                problems.append(f"{p}: line {lineno}: field 'seed' is not an integer; "
                                "skipped, kept in the file")
                continue
            records.append(rec)
    return records, problems


# --- one task ----------------------------------------------------------------------------


def _resolve_workload(name: str) -> Callable[..., Any]:
    from llmopt.workloads import WORKLOADS

    if name in WORKLOADS:
        return WORKLOADS.get(name)
    if ":" in name:
        import importlib

        module, _, attr = name.partition(":")
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj
    return WORKLOADS.get(name)  # raises with the list of known names


def _blank_record(suite: Suite, spec: WorkloadSpec, seed: int) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "suite": suite.name,
        "workload": spec.workload,
        "seed": seed,
        "params": dict(spec.params),
        "instance": None,
        "n": None,
        "M": None,
        "reference": suite.reference,
    }
    for p in suite.policies:
        rec[f"tel_{p}"] = None
        rec[f"verified_{p}"] = None
    rec.update({
        "tel": None,
        "opt": None,
        "status": None,
        "incumbent": None,
        "incumbent_source": None,
        "bound": None,
        "bound_certificate": None,
        "gap": None,
        "ratio_vs_opt": None,
        "ratio_vs_incumbent": None,
        "ratio_vs_bound": None,
        "mcsf_is_opt": None,
        "solver": suite.solver,
        "ip_time_limit": suite.ip_time_limit,
        "search_evals": suite.search_evals,
        "ip_message": None,
        "model_cols": None,
        "model_int_cols": None,
        "model_rows": None,
        "model_nnz": None,
        "model_horizon": None,
        "model_windows": None,
        "model_classes": None,
        "hindsight_runtime_s": None,
        "runtime_s": None,
        "warnings": [],
        "error": None,
    })
    return rec


def _fill_record(rec: dict[str, Any], suite: Suite, spec: WorkloadSpec, seed: int) -> None:
    from llmopt.checker import check_schedule
    from llmopt.hindsight import solve_hindsight
    from llmopt.policies import make_policy
    from llmopt.simulator import simulate

    instance = _resolve_workload(spec.workload)(seed, **dict(spec.params))
    rec.update(instance=instance.name or f"{spec.workload}/seed={seed}", n=instance.n, M=instance.M)

    warnings: list[str] = rec["warnings"]
    simulated = {}
    for p in suite.policies:
        try:
            sched = simulate(instance, make_policy(p))
        except Exception as exc:  # one failing policy must not cost the others or the OPT solve
            rec[f"tel_{p}"], rec[f"verified_{p}"] = None, False
            warnings.append(f"policy {p}: {type(exc).__name__}: {exc}")
            continue
        simulated[p] = sched
        report = check_schedule(instance, sched.starts)
        verified = bool(report.ok) and report.tel == sched.tel
        rec[f"tel_{p}"] = sched.tel
        rec[f"verified_{p}"] = verified
        if not verified:
            why = (report.violations[0] if report.violations
                   else f"checker TEL {report.tel} != simulator {sched.tel}")
            warnings.append(f"policy {p}: schedule rejected by the checker: {why}")

    h = solve_hindsight(
        instance,
        solver=suite.solver,
        time_limit=suite.ip_time_limit,
        threads=1,
        seed=seed,
        search_evals=suite.search_evals,
        schedules=simulated,
    )
    stats = dict(h.model_stats)
    rec.update(
        opt=h.opt,
        status=str(h.status.value if hasattr(h.status, "value") else h.status),
        incumbent=h.incumbent,
        incumbent_source=h.incumbent_source,
        bound=h.bound,
        bound_certificate=h.bound_certificate,
        gap=h.gap,
        ip_message=h.message or None,
        model_cols=stats.get("cols"),
        model_int_cols=stats.get("int_cols"),
        model_rows=stats.get("rows"),
        model_nnz=stats.get("nnz"),
        model_horizon=stats.get("horizon"),
        model_windows=stats.get("windows"),
        model_classes=stats.get("classes"),
        hindsight_runtime_s=round(h.runtime_s, 3),
    )
    for name, tel in dict(h.heuristics).items():
        rec[f"heuristic_{name}"] = tel

    # Invariant 1: bound <= OPT <= TEL of every feasible schedule.
    for p in suite.policies:
        tel_p = rec[f"tel_{p}"]
        if not rec[f"verified_{p}"]:
            continue
        if h.opt is not None and tel_p < h.opt:
            warnings.append(f"invariant violated: policy {p} TEL {tel_p} < proven OPT {h.opt}")
        if tel_p < h.bound:
            warnings.append(f"invariant violated: policy {p} TEL {tel_p} < certified bound {h.bound}")

    ref = suite.reference
    if not rec[f"verified_{ref}"]:
        rec["error"] = f"CheckFailed: reference policy {ref!r} schedule was rejected; no ratio reported"
        return
    tel = rec[f"tel_{ref}"]
    rec["tel"] = tel
    if h.opt is not None:
        rec["ratio_vs_opt"] = tel / h.opt
    if h.incumbent is not None and h.incumbent > 0:
        rec["ratio_vs_incumbent"] = tel / h.incumbent
    if h.bound is not None and h.bound > 0:
        rec["ratio_vs_bound"] = tel / h.bound
    if h.opt is not None:
        rec["mcsf_is_opt"] = tel == h.opt
    elif h.incumbent is not None and tel > h.incumbent:
        rec["mcsf_is_opt"] = False


def run_task(suite: Suite, spec: WorkloadSpec, seed: int) -> dict[str, Any]:
    """Run one ``(workload, seed)`` task and return its flat, JSON-ready record.

    Never raises for a failing task: the exception's type and message go to the
    record's ``error`` field (and a short traceback to ``traceback``).

    Parameters
    ----------
    suite : Suite
    spec : WorkloadSpec
        The workload entry of ``suite``.
    seed : int

    Returns
    -------
    dict
        See the module docstring for the ratio fields. Missing values are ``None``.
    """
    rec = _blank_record(suite, spec, seed)
    t0 = time.perf_counter()
    try:
        _fill_record(rec, suite, spec, seed)
    except Exception as exc:  # a failing task is recorded; the sweep goes on
        rec["error"] = f"{type(exc).__name__}: {exc}"
        rec["traceback"] = "".join(traceback.format_exception(exc, limit=-4)).strip()
    rec["runtime_s"] = round(time.perf_counter() - t0, 3)
    return rec


# --- output folder -----------------------------------------------------------------------


class _TrialWriter:
    """Appends records to ``trials.jsonl``, one line each, flushed and fsynced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # A crash mid-write can leave a last line without its newline; start on a fresh
        # line so the next record is not glued to it (the broken line stays as it is).
        needs_newline = False
        if path.exists() and path.stat().st_size > 0:
            with path.open("rb") as fh:
                fh.seek(-1, os.SEEK_END)
                needs_newline = fh.read(1) != b"\n"
        self._fh = path.open("a", encoding="utf-8")
        if needs_newline:
            self._fh.write("\n")
            self._sync()

    def _sync(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, allow_nan=False, default=str)
        self._fh.write(line + "\n")
        self._sync()

    def close(self) -> None:
        self._fh.close()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _load_suite_file(path: Path, suite: Suite) -> dict[str, Any]:
    if not path.exists():
        return {"runs": []}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise HarnessError(f"{path}: cannot read ({exc}); move it away to start a new record of runs") \
            from None
    if not isinstance(data, dict):
        raise HarnessError(f"{path}: top level must be an object")
    old = data.get("settings")
    new = json.loads(json.dumps(suite.settings()))
    if old is not None and old != new:
        diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        raise HarnessError(
            f"{path.parent}: holds results of suite {data.get('suite', {}).get('name')!r} with different "
            f"settings ({', '.join(diff)}); use another output folder"
        )
    data.setdefault("runs", [])
    return data


def _default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _report(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_suite(
    suite: Suite,
    out_dir: str | Path,
    workers: int | None = None,
    time_limit: float | None = None,
    progress: bool = True,
    *,
    retry_errors: bool = False,
    command: str | None = None,
    log: Callable[[str], None] = _report,
) -> Path:
    """Run every task of ``suite`` not yet recorded in ``out_dir``.

    Parameters
    ----------
    suite : Suite
    out_dir : path
        Created if needed; holds ``trials.jsonl`` and ``suite.json``.
    workers : int, optional
        Worker processes; default: every CPU available to this process. ``1`` runs
        the tasks in this process (no pool).
    time_limit : float, optional
        Overrides ``suite.ip_time_limit``.
    progress : bool
        Show a progress bar (only on a terminal).
    retry_errors : bool
        Also rerun tasks whose record has an ``error`` (a new record is appended;
        reports keep the last record of a task).
    command : str, optional
        Command line stored in ``suite.json``; default ``sys.argv``.
    log : callable
        Receives human-readable messages (malformed lines, skipped tasks, failures);
        default: standard error.

    Returns
    -------
    Path
        ``out_dir / "trials.jsonl"``.

    Raises
    ------
    HarnessError
        If ``out_dir`` holds results of the suite run with different settings.
    """
    suite = suite.with_time_limit(time_limit)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    trials_path = out / TRIALS_FILE
    suite_path = out / SUITE_FILE
    meta = _load_suite_file(suite_path, suite)

    records, problems = read_trials(trials_path)
    for msg in problems:
        log(msg)
    done: set[tuple[str, int]] = set()
    for rec in records:
        if rec.get("error") and retry_errors:
            done.discard(task_key(rec))
        else:
            done.add(task_key(rec))
    todo = [(spec, seed) for spec, seed in suite.tasks() if (spec.workload, seed) not in done]
    skipped = suite.n_tasks - len(todo)
    if skipped:
        log(f"{trials_path}: {skipped} of {suite.n_tasks} tasks already recorded; "
            f"running the other {len(todo)}")

    n_workers = max(1, min(workers or _default_workers(), max(1, len(todo))))
    run_entry: dict[str, Any] = {
        "command": command if command is not None else " ".join(shlex.quote(a) for a in sys.argv),
        "started": _now(),
        "finished": None,
        "wall_s": None,
        "workers": n_workers,
        "tasks_total": suite.n_tasks,
        "tasks_skipped": skipped,
        "tasks_run": 0,
        "task_errors": 0,
        "llmopt_version": llmopt.__version__,
    }
    meta.update({
        "suite": suite.to_dict(),
        "settings": suite.settings(),
        "llmopt_version": llmopt.__version__,
        "command": run_entry["command"],
        "started": run_entry["started"],
    })
    meta["runs"].append(run_entry)
    _write_json_atomic(suite_path, meta)

    t0 = time.perf_counter()
    writer = _TrialWriter(trials_path)

    def finish(rec: dict[str, Any]) -> None:
        writer.write(rec)
        run_entry["tasks_run"] += 1
        if rec.get("error"):
            run_entry["task_errors"] += 1
            log(f"task {rec['workload']} seed {rec['seed']} failed: {rec['error']}")

    try:
        with _ProgressBar(progress, len(todo), suite.name) as advance:
            if n_workers == 1:
                for spec, seed in todo:
                    finish(run_task(suite, spec, seed))
                    advance()
            else:
                _run_pool(suite, todo, n_workers, finish, advance, log)
    finally:
        writer.close()
        run_entry["finished"] = _now()
        run_entry["wall_s"] = round(time.perf_counter() - t0, 2)
        _write_json_atomic(suite_path, meta)
    return trials_path


def _run_pool(
    suite: Suite,
    todo: list[tuple[WorkloadSpec, int]],
    n_workers: int,
    finish: Callable[[dict[str, Any]], None],
    advance: Callable[[], None],
    log: Callable[[str], None],
) -> None:
    # forkserver: the parent has threads (progress bar, pool manager), so plain fork is unsafe.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    ex = ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx, initializer=_worker_init)
    pending: dict[Future, tuple[str, int]] = {}
    try:
        for spec, seed in todo:
            pending[ex.submit(run_task, suite, spec, seed)] = (spec.workload, seed)
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                workload, seed = pending.pop(fut)
                try:
                    rec = fut.result()
                except BrokenProcessPool as exc:
                    raise HarnessError(
                        f"worker pool broke ({exc}) at task {workload} seed {seed}; "
                        "finished tasks are saved, run again to resume"
                    ) from None
                except Exception as exc:  # infrastructure failure: not recorded, rerun on resume
                    log(f"task {workload} seed {seed} not recorded ({type(exc).__name__}: {exc}); "
                        "it will run again on resume")
                    advance()
                    continue
                finish(rec)
                advance()
    except BaseException:
        # Interrupted or broken: keep every task that did finish, then stop the workers now
        # rather than waiting for solves in flight (they rerun on resume).
        for fut in pending:
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                finish(fut.result())
        for proc in list((getattr(ex, "_processes", None) or {}).values()):
            proc.terminate()
        raise
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def _worker_init() -> None:
    # Only the parent handles Ctrl-C; it saves finished records and stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from llmopt.plugins import load_plugins

    try:
        load_plugins()  # plug-in names must resolve in the workers too
    except Exception:  # already reported by the parent; a clash must not break the pool
        pass


class _ProgressBar:
    """Context manager yielding an ``advance()`` callable; a rich bar on a terminal."""

    def __init__(self, enabled: bool, total: int, label: str) -> None:
        self.enabled = enabled and sys.stderr.isatty() and total > 0
        self.total = total
        self.label = label
        self._progress: Any = None

    def __enter__(self) -> Callable[[], None]:
        if not self.enabled:
            return lambda: None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._progress.__enter__()
        task = self._progress.add_task(self.label, total=self.total)
        return lambda: self._progress.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)


def latest_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last record of each task, in first-seen task order."""
    last: dict[tuple[str, int], dict[str, Any]] = {}
    for rec in records:
        last[task_key(rec)] = rec
    return list(last.values())
