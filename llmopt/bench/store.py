"""The results folder of a suite: records, run log and lock (DESIGN §3 "Harness", §4 inv. 4).

A results folder holds

* ``trials.jsonl`` — one JSON record per finished task, appended by the driver (never
  by a worker) the moment the task finishes, in one ``write`` and fsynced. A rerun
  skips every task already recorded.
* ``suite.json`` — the suite definition and its settings, and one entry per run
  (command, start and end, outcome, tasks written, worker count, software versions).
  The entry is rewritten after every task, so a run killed with SIGKILL still says how
  many tasks it wrote; the next run marks it ``killed``.
* ``run.lock`` — exists while a run holds the folder (``fcntl.flock``; the kernel drops
  the lock when its holder dies, however it dies). It holds the holder's pid, host,
  command and start time, so a second run on the same folder is refused with a message
  naming the holder.
* ``trials.jsonl.damaged`` — bytes cut out of ``trials.jsonl`` by a repair: a run
  killed while writing leaves a last line without its newline; the next run moves that
  fragment here, says so once, and reruns the task.

Records are plain JSON: :func:`plain_record` converts numpy scalars and refuses NaN,
infinity and anything that is not a JSON value, naming the field.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import fields as dataclass_fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.bench.suites import Suite, TaskKey, canonical_params

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "TRIALS_FILE",
    "SUITE_FILE",
    "LOCK_FILE",
    "DAMAGED_FILE",
    "HarnessError",
    "FolderLocked",
    "RecordError",
    "ResultStore",
    "read_trials",
    "latest_records",
    "task_key",
    "plain_record",
    "encode_record",
    "read_meta",
    "check_folder_suite",
]

TRIALS_FILE = "trials.jsonl"
SUITE_FILE = "suite.json"
LOCK_FILE = "run.lock"
DAMAGED_FILE = "trials.jsonl.damaged"


class HarnessError(RuntimeError):
    """The output folder cannot be used for this suite (other suite, other settings, unreadable)."""


class FolderLocked(HarnessError):
    """Another run holds the output folder; the message names it (pid, host, command, start)."""


class RecordError(ValueError):
    """A record field is not a plain JSON value (e.g. NaN); :attr:`field` is its top-level key."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def now() -> str:
    """The current UTC time, ISO 8601, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


# --- records ---------------------------------------------------------------------------------


def _plain(value: Any, path: str, top: str) -> Any:
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if not math.isfinite(f):
            raise RecordError(top, f"record field {path!r} is {f}; records hold finite numbers only")
        return f
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise RecordError(top, f"record field {path!r} has a non-string key {k!r}")
            out[k] = _plain(v, f"{path}.{k}", top)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{path}[{i}]", top) for i, v in enumerate(value)]
    raise RecordError(top, f"record field {path!r} holds a {type(value).__name__} ({value!r}), not a JSON value")


def plain_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with numpy scalars turned into ``int``/``float``/``bool``.

    Raises
    ------
    RecordError
        If a value is NaN or infinite, or not a JSON value; the message names the field.
    """
    return {str(k): _plain(v, str(k), str(k)) for k, v in record.items()}


def encode_record(record: Mapping[str, Any]) -> str:
    """One JSON line (no newline) for ``record``; see :func:`plain_record`."""
    return json.dumps(plain_record(record), allow_nan=False, ensure_ascii=False)


def task_key(record: Mapping[str, Any]) -> TaskKey:
    """The ``(workload, canonical params, seed)`` that identifies a record's task.

    Records written before parameters were part of the key have no ``params`` field;
    they count as empty parameters.
    """
    return str(record["workload"]), canonical_params(record.get("params") or {}), int(record["seed"])


def read_trials(path: str | Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Read ``trials.jsonl`` without changing it.

    Parameters
    ----------
    path : path
        The JSON-lines file (missing file: no records).

    Returns
    -------
    records : list of dict
        The valid records, in file order (a task may appear twice if it was retried;
        callers keep the last, see :func:`latest_records`).
    problems : list of str
        One message per malformed line, naming the file and line number. Those lines
        are skipped here and left in the file, except a cut-off last line, which the
        next ``bench run`` moves to ``trials.jsonl.damaged``.
    """
    p = Path(path)
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    if not p.exists():
        return records, problems
    data = p.read_bytes()
    lines = data.split(b"\n")
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        cut_off = lineno == len(lines)  # no newline after it
        line = raw.decode("utf-8", errors="replace")
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            if cut_off:
                problems.append(f"{p}: line {lineno} is cut off (a run was stopped while writing it); "
                                "skipped; the next `llmopt bench run` on this folder moves it aside")
            else:
                problems.append(f"{p}: line {lineno}: invalid JSON ({exc.msg}); skipped, kept in the file")
            continue
        if not isinstance(rec, dict) or "workload" not in rec or "seed" not in rec:
            problems.append(f"{p}: line {lineno}: not a trial record (needs 'workload' and 'seed'); "
                            "skipped, kept in the file")
            continue
        try:
            task_key(rec)
        except (TypeError, ValueError, AttributeError):
            problems.append(f"{p}: line {lineno}: field 'seed' is not an integer or 'params' is not an object; "
                            "skipped, kept in the file")
            continue
        records.append(rec)
    return records, problems


def latest_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last record of each task, in first-seen task order."""
    last: dict[TaskKey, dict[str, Any]] = {}
    for rec in records:
        last[task_key(rec)] = rec
    return list(last.values())


def _repair_tail(path: Path) -> str | None:
    """Move a cut-off last line of ``path`` to :data:`DAMAGED_FILE`; the message, or ``None``."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return None
    start = data.rfind(b"\n") + 1
    tail = data[start:]
    lineno = data.count(b"\n", 0, start) + 1
    with path.open("rb+") as fh:
        try:
            json.loads(tail.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            pass
        else:  # a whole record that only lacks its newline
            fh.seek(0, os.SEEK_END)
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
            return None
        damaged = path.with_name(DAMAGED_FILE)
        with damaged.open("ab") as out:
            out.write(tail + b"\n")
            out.flush()
            os.fsync(out.fileno())
        fh.truncate(start)
        fh.flush()
        os.fsync(fh.fileno())
    return (f"{path}: line {lineno} was cut off ({len(tail)} bytes; a run was stopped while writing it); "
            f"moved it to {damaged.name}; its task runs again")


# --- suite.json --------------------------------------------------------------------------------


def _write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_meta(out_dir: str | Path) -> dict[str, Any]:
    """The folder's ``suite.json`` (``{}`` if there is none).

    Raises
    ------
    HarnessError
        If the file exists but cannot be read as a JSON object.
    """
    path = Path(out_dir) / SUITE_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HarnessError(f"{path}: cannot read ({exc}); move it away to start a new record of runs") from None
    if not isinstance(data, dict):
        raise HarnessError(f"{path}: top level must be an object")
    return data


def _legacy_settings() -> dict[str, Any]:
    """Settings that folders written before they were recorded ran with (the field defaults)."""
    defaults = {f.name: f.default for f in dataclass_fields(Suite)}
    defaults["bounds"] = ("lp",)  # the default until the "auto" bound set
    return {k: list(v) if isinstance(v, tuple) else v
            for k, v in defaults.items()
            if k in ("formulation", "windows", "bounds", "upper_bounds", "kind", "cost_model", "loop_limit", "max_nnz",
                     "lns_iterations", "cp_sat_seconds")}


def check_folder_suite(meta: Mapping[str, Any], suite: Suite, folder: Path, *, settings: bool = True) -> None:
    """Refuse a folder whose ``suite.json`` belongs to another suite or other settings.

    Raises
    ------
    HarnessError
        Naming the folder, the suite it holds and (for settings) the fields that differ.
    """
    stored = meta.get("suite")
    stored_name = stored.get("name") if isinstance(stored, Mapping) else None
    if stored_name is not None and stored_name != suite.name:
        raise HarnessError(f"{folder} holds results of suite {stored_name!r}, not {suite.name!r}; "
                           "use another output folder")
    old = meta.get("settings")
    if not settings or not isinstance(old, Mapping):
        return
    new = json.loads(json.dumps(suite.settings()))
    old = {**_legacy_settings(), **old}
    diff = sorted(k for k in new if old.get(k) != new[k])  # keys only in old (e.g. 'params') are obsolete
    if diff:
        raise HarnessError(f"{folder} holds results of suite {suite.name!r} with different settings "
                           f"({', '.join(diff)}); use another output folder")


# --- the lock ----------------------------------------------------------------------------------


def _read_holder(fd: int) -> dict[str, Any]:
    for _ in range(5):  # the holder may be between truncating and writing its details
        try:
            data = os.pread(fd, 65536, 0)
            info = json.loads(data.decode("utf-8")) if data else None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            info = None
        if isinstance(info, dict):
            return info
        time.sleep(0.05)
    return {}


def _holder_text(info: Mapping[str, Any]) -> str:
    if not info:
        return "another run (no details recorded)"
    return (f"pid {info.get('pid')} on host {info.get('host')}, started {info.get('started')}, "
            f"command `{info.get('command')}`")


class _Lock:
    """An exclusive ``flock`` on ``path``, holding the holder's details; the file is removed on release."""

    def __init__(self, path: Path, command: str) -> None:
        self.path = path
        self.fd: int | None = None
        if fcntl is None:  # pragma: no cover - not on POSIX
            return
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise FolderLocked(f"{path.parent} is in use by {_holder_text(holder)}; "
                                   "wait for that run to finish or stop it (Ctrl-C, kill -TERM)") from None
            # The previous holder removes the file when it lets go; if it did so between our
            # open and our flock, we hold a lock on a file nobody else can see: start over.
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        self.fd = fd
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command, "started": now()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode("utf-8"), 0)

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.unlink(self.path)  # while still holding the lock (see the check in __init__)
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = None


# --- the store -----------------------------------------------------------------------------


class ResultStore:
    """A results folder opened for writing by one run (use :meth:`open`).

    Only the process that opened the store writes to the folder; workers return their
    records to it. Every public method keeps the files consistent on disk after it
    returns, so killing the process at any point loses at most the record being written
    (which the next run detects and moves aside).
    """

    def __init__(self, out_dir: Path, lock: _Lock, log: Callable[[str], None]) -> None:
        self.out_dir = out_dir
        self.trials_path = out_dir / TRIALS_FILE
        self.suite_path = out_dir / SUITE_FILE
        self._lock = lock
        self._log = log
        self.meta: dict[str, Any] = {}
        self.run: dict[str, Any] | None = None
        self._fd: int | None = None

    @classmethod
    @contextmanager
    def open(cls, out_dir: str | Path, command: str, log: Callable[[str], None]) -> Iterator[ResultStore]:
        """Lock ``out_dir`` (created if needed), repair a cut-off last record, yield the store.

        Raises
        ------
        FolderLocked
            If another run holds the folder.
        HarnessError
            If ``out_dir`` is an existing file, or ``suite.json`` is unreadable.
        """
        out = Path(out_dir)
        if out.exists() and not out.is_dir():
            raise HarnessError(f"{out} is a file, not a results folder")
        out.mkdir(parents=True, exist_ok=True)
        lock = _Lock(out / LOCK_FILE, command)
        store = cls(out, lock, log)
        try:
            store.meta = read_meta(out)
            msg = _repair_tail(store.trials_path)
            if msg:
                log(msg)
            yield store
        finally:
            store._close()
            lock.release()

    # records

    def read(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The records and the problems of ``trials.jsonl`` (see :func:`read_trials`)."""
        return read_trials(self.trials_path)

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record: one ``write`` of one line, then ``fsync``.

        Raises
        ------
        RecordError
            If the record is not plain JSON (nothing is written).
        """
        line = (encode_record(record) + "\n").encode("utf-8")
        if self._fd is None:
            self._fd = os.open(self.trials_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        view = memoryview(line)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        os.fsync(self._fd)
        if self.run is not None:
            self.run["tasks_run"] += 1
            if record.get("error"):
                self.run["task_errors"] += 1
            self._save_meta()

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # run log

    def check_suite(self, suite: Suite) -> None:
        """Refuse to mix suites or settings in this folder (see :func:`check_folder_suite`)."""
        check_folder_suite(self.meta, suite, self.out_dir)

    def begin_run(self, suite: Suite, entry: Mapping[str, Any]) -> dict[str, Any]:
        """Record the suite and a new run entry (``outcome`` ``running``) in ``suite.json``.

        Earlier entries still marked ``running`` belong to runs that were killed (this
        run holds the lock); they are marked ``killed`` and reported through ``log``.
        """
        runs = self.meta.setdefault("runs", [])
        for r in runs:
            if isinstance(r, dict) and r.get("outcome") == "running":
                r["outcome"] = "killed"
                self._log(f"{self.out_dir}: the run started {r.get('started')} (pid {r.get('pid')}) was killed; "
                          f"it wrote {r.get('tasks_run', 0)} task(s)")
        run = {**entry, "outcome": "running", "finished": None, "wall_s": None, "tasks_run": 0,
               "task_errors": 0, "tasks_lost": 0}
        runs.append(run)
        self.meta.update({
            "suite": suite.to_dict(),
            "settings": suite.settings(),
            "llmopt_version": run.get("versions", {}).get("llmopt"),
            "command": run.get("command"),
            "started": run.get("started"),
        })
        self.run = run
        self._save_meta()
        return run

    def end_run(self, outcome: str, wall_s: float) -> None:
        """Close the current run entry with ``outcome`` (``completed``, ``interrupted``, ``failed: …``)."""
        if self.run is None:
            return
        self.run.update(outcome=outcome, finished=now(), wall_s=round(wall_s, 2))
        self._save_meta()

    def note_lost(self) -> None:
        """Count a task that finished nowhere (its worker died); it runs again on resume."""
        if self.run is not None:
            self.run["tasks_lost"] += 1
            self._save_meta()

    def _save_meta(self) -> None:
        _write_json_atomic(self.suite_path, self.meta)
