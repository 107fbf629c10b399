"""Stops stop: ``llmopt bench run`` in a subprocess, interrupted, terminated, killed, or locked out.

Each run starts in a new session, so its process group holds exactly the driver, its
workers and multiprocessing's resource tracker; after the driver is gone, no process of
that group may be left. Tasks take half a second (``bench_helpers:sleepy``) and there are
six on two workers, so a signal sent after the first record is written always finds
tasks in flight and tasks not yet started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench_helpers import CALLS_ENV, HOLD_GIL_ENV, TESTS_DIR, sleepy_suite
from helpers import live_processes, sigint_as_on_a_terminal

from llmopt.bench.store import LOCK_FILE, read_trials, task_key

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; signals as on Linux"),
              pytest.mark.slow]

N_TASKS = 6


def _env(calls: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS_DIR), env.get("PYTHONPATH")) if p)
    env[CALLS_ENV] = str(calls)
    env.update(extra)
    return env


def _start(tmp_path: Path, out: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    suite_file = tmp_path / "suite.json"
    if not suite_file.exists():
        suite_file.write_text(json.dumps(sleepy_suite(n=N_TASKS, seconds=0.5).to_dict()))
    cmd = [sys.executable, "-c", "import sys; from llmopt.cli.main import app; sys.argv[0] = 'llmopt'; app()",
           "bench", "run", "--suite-file", str(suite_file), "--out", str(out), "--workers", "2", *extra]
    return subprocess.Popen(cmd, env=_env(tmp_path / "calls.jsonl", **(env or {})), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=sigint_as_on_a_terminal)


def _group(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``."""
    return [pid for pid, _, _, pg in live_processes() if pg == pgid]


def _workers(pgid: int) -> list[int]:
    """The pool's worker processes (the group also holds multiprocessing's resource tracker)."""
    out = []
    for pid in _group(pgid):
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                out.append(pid)
        except OSError:
            pass
    return out


def _describe(pgid: int) -> list[str]:
    out = []
    for pid in _group(pgid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            out.append(f"{pid}: {cmdline[:120]}")
        except OSError:
            pass
    return out


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _records(out: Path) -> list[dict]:
    return read_trials(out / "trials.jsonl")[0]


def _calls(tmp_path: Path) -> list[int]:
    path = tmp_path / "calls.jsonl"
    return [json.loads(x)["seed"] for x in path.read_text().splitlines()] if path.exists() else []


def _written_keys(out: Path) -> set:
    return {task_key(r) for r in _records(out)}


@pytest.mark.parametrize("how", ["SIGINT to the group (Ctrl-C)", "SIGTERM to the driver"])
def test_interrupt_saves_finished_tasks_stops_workers_and_resumes(tmp_path: Path, how: str) -> None:
    out = tmp_path / "out"
    proc = _start(tmp_path, out, "--no-progress")
    try:
        _wait_for(lambda: len(_records(out)) >= 1, 60, "the first record")
        workers = _workers(proc.pid)
        assert len(workers) == 2, workers
        before = _written_keys(out)
        if how.startswith("SIGINT"):
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    # The driver reaped its workers before exiting; multiprocessing's resource tracker
    # leaves when its pipe closes, a moment after the driver.
    assert not set(workers) & set(_group(proc.pid)), "a worker outlived its driver"
    _wait_for(lambda: _group(proc.pid) == [], 30, f"the run's processes to exit: {_describe(proc.pid)}")
    after = _written_keys(out)
    assert before <= after and len(after) < N_TASKS
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted (") and "run again to resume" in last, err
    assert f"{len(after)} task(s) written by this run ({len(after)} of {N_TASKS} in all) to {out}" in last
    assert "Traceback" not in err and "did not stop" not in err  # workers end on SIGTERM, no SIGKILL needed
    run = json.loads((out / "suite.json").read_text())["runs"][-1]
    assert run["outcome"] == "interrupted" and run["tasks_run"] == len(after)
    assert not (out / LOCK_FILE).exists()

    # The rerun completes the rest and never recomputes a written task.
    calls_before = len(_calls(tmp_path))
    proc = _start(tmp_path, out, "--no-progress")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    records = _records(out)
    assert len(records) == N_TASKS and len({task_key(r) for r in records}) == N_TASKS
    rerun = set(_calls(tmp_path)[calls_before:])
    assert not rerun & {k[2] for k in after}, "a task written by the first run was computed again"
    _wait_for(lambda: _group(proc.pid) == [], 30, f"the run's processes to exit: {_describe(proc.pid)}")


def test_sigkill_of_the_driver_takes_the_workers_with_it(tmp_path: Path) -> None:
    # Seeds 0 and 1 finish; then both workers are inside a 10 s C call that holds the GIL, as
    # a HiGHS solve may be: only the kernel's parent-death signal can stop them within the
    # 8 s allowed here (the watchdog thread cannot run; without that signal they would live until
    # the 10 s call returns). 8 s, not less, so that a loaded machine's slow exit is not a failure.
    out = tmp_path / "out"
    proc = _start(tmp_path, out, "--no-progress", env={HOLD_GIL_ENV: "10@2"})
    try:
        _wait_for(lambda: len(_calls(tmp_path)) >= 4, 60, "both workers to hold the GIL")
        time.sleep(0.2)
        workers = _workers(proc.pid)
        assert len(workers) == 2, workers
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        _wait_for(lambda: _group(proc.pid) == [], 8,
                  f"the workers to die with their driver: {_describe(proc.pid)}")
    finally:
        if _group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    written = len(_records(out))
    assert written == 2
    run = json.loads((out / "suite.json").read_text())["runs"][-1]
    assert run["outcome"] == "running" and run["tasks_run"] == written  # the log kept count until the kill

    proc = _start(tmp_path, out, "--no-progress")  # the lock died with the driver
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert f"was killed; it wrote {written} task(s)" in err
    runs = json.loads((out / "suite.json").read_text())["runs"]
    assert [r["outcome"] for r in runs] == ["killed", "completed"]
    assert len(_records(out)) == N_TASKS


def test_a_second_concurrent_run_is_refused_naming_the_holder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = _start(tmp_path, out, "--no-progress")
    try:
        _wait_for(lambda: (out / LOCK_FILE).exists() and (out / LOCK_FILE).stat().st_size > 0, 60, "the lock")
        second = _start(tmp_path, out, "--no-progress")
        _, err = second.communicate(timeout=60)
        assert second.returncode == 2, err
        assert err.count("\n") == 1 and err.startswith("error: ")
        assert f"in use by pid {first.pid} on host" in err and "bench run --suite-file" in err
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert first.returncode == 130
    assert len(_calls(tmp_path)) <= N_TASKS  # the refused run computed nothing


def test_ctrl_c_while_the_command_line_imports_is_one_line_and_exit_130() -> None:
    """Issue 27: a Ctrl-C in the first half second (while ``llmopt.cli.main`` imports) printed a
    KeyboardInterrupt traceback. The console script (``llmopt.cli.entry:run``) imports under a handler;
    the interrupt is raised here exactly where a Ctrl-C would land, inside that import."""
    import subprocess
    import sys

    code = ("import builtins\n"
            "real = builtins.__import__\n"
            "def fake(name, *a, **k):\n"
            "    if name == 'llmopt.cli.main':\n"
            "        raise KeyboardInterrupt\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = fake\n"
            "from llmopt.cli.entry import run\n"
            "run()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130 and proc.stderr == "interrupted\n", proc.stderr
