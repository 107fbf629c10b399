"""Stops stop: ``llmopt bench run`` in a subprocess, interrupted, terminated, killed, or locked out.

Each run starts in a new session, so its process group holds exactly the driver, its
workers and multiprocessing's resource tracker; after the driver is gone, no process of
that group may be left. There are six tasks (``bench_helpers:sleepy``, half a second each)
on two workers; where a test needs tasks in flight and tasks not yet started when it sends
its signal, tasks from seed 2 on wait at a gate (``GATE_ENV``) that the test never opens,
and the test signals once seeds 0 and 1 are written and both workers wait at the gate:
events, not timers, so a loaded or a fast machine sees the same run. The time-outs below
only turn a hang into a failure.
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
from bench_helpers import CALLS_ENV, GATE_ENV, HOLD_GIL_ENV, TESTS_DIR, sleepy_suite
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


def _call_log(tmp_path: Path) -> list[dict]:
    """Every ``sleepy`` call (``seed``, ``pid``), the driver's check of the first instance included."""
    path = tmp_path / "calls.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _calls(tmp_path: Path) -> list[int]:
    return [c["seed"] for c in _call_log(tmp_path)]


def _written_keys(out: Path) -> set:
    return {task_key(r) for r in _records(out)}


def _logged_tasks_run(out: Path) -> int:
    """``tasks_run`` of the last run in ``suite.json`` (0 while there is none or it is being replaced)."""
    try:
        return int(json.loads((out / "suite.json").read_text())["runs"][-1]["tasks_run"])
    except (OSError, ValueError, KeyError, IndexError):
        return 0


def _gate(tmp_path: Path, first_seed: int) -> dict[str, str]:
    """Environment that holds seeds ``>= first_seed`` at a gate this test never opens."""
    return {GATE_ENV: f"{first_seed}@{tmp_path / 'gate-never-opened'}"}


def _two_written_and_two_waiting(tmp_path: Path, out: Path) -> bool:
    """Seeds 0 and 1 written (records and run log), both workers holding seeds 2 and 3 (the calls also
    hold the driver's check of seed 0's instance, made before any task)."""
    return len(_records(out)) >= 2 and _logged_tasks_run(out) >= 2 and {2, 3} <= set(_calls(tmp_path))


@pytest.mark.parametrize("how", ["SIGINT to the group (Ctrl-C)", "SIGTERM to the driver"])
def test_interrupt_saves_finished_tasks_stops_workers_and_resumes(tmp_path: Path, how: str) -> None:
    out = tmp_path / "out"
    proc = _start(tmp_path, out, "--no-progress", env=_gate(tmp_path, 2))
    try:
        _wait_for(lambda: _two_written_and_two_waiting(tmp_path, out), 300, "two records and two gated tasks")
        workers = _workers(proc.pid)
        assert len(workers) == 2, workers
        before = _written_keys(out)
        assert len(before) == 2
        if how.startswith("SIGINT"):
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    # The driver reaped its workers before exiting; multiprocessing's resource tracker
    # leaves when its pipe closes, a moment after the driver.
    assert not set(workers) & set(_group(proc.pid)), "a worker outlived its driver"
    _wait_for(lambda: _group(proc.pid) == [], 120, f"the run's processes to exit: {_describe(proc.pid)}")
    after = _written_keys(out)
    assert after == before  # the gated tasks in flight were stopped, not written
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted (") and "run again to resume" in last, err
    assert f"{len(after)} task(s) written by this run ({len(after)} of {N_TASKS} in all) to {out}" in last
    assert "Traceback" not in err and "did not stop" not in err  # workers end on SIGTERM, no SIGKILL needed
    run = json.loads((out / "suite.json").read_text())["runs"][-1]
    assert run["outcome"] == "interrupted" and run["tasks_run"] == len(after)
    assert not (out / LOCK_FILE).exists()

    # The rerun (no gate) completes the rest and never recomputes a written task.
    calls_before = len(_calls(tmp_path))
    proc = _start(tmp_path, out, "--no-progress")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    records = _records(out)
    assert len(records) == N_TASKS and len({task_key(r) for r in records}) == N_TASKS
    rerun = set(_calls(tmp_path)[calls_before:])
    assert not rerun & {k[2] for k in after}, "a task written by the first run was computed again"
    _wait_for(lambda: _group(proc.pid) == [], 120, f"the run's processes to exit: {_describe(proc.pid)}")


def test_sigkill_of_the_driver_takes_the_workers_with_it(tmp_path: Path) -> None:
    # Seeds 0 and 1 finish and are written; then both workers are inside a 3,600 s C call that holds
    # the GIL, as a HiGHS solve may be: only the kernel's parent-death signal can stop them (the
    # watchdog thread cannot run; without that signal they would live until the call returns, far
    # beyond the 120 s cap that only turns such a hang into a failure). The kill waits for the event
    # (two records written and counted in the run log), never for a timer.
    out = tmp_path / "out"
    proc = _start(tmp_path, out, "--no-progress", env={HOLD_GIL_ENV: "3600@2"})
    try:
        _wait_for(lambda: _two_written_and_two_waiting(tmp_path, out), 300, "two records and two held GILs")
        workers = _workers(proc.pid)
        assert len(workers) == 2, workers
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=120)
        _wait_for(lambda: _group(proc.pid) == [], 120,
                  f"the workers to die with their driver: {_describe(proc.pid)}")
    finally:
        if _group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    written = len(_records(out))
    assert written == 2
    run = json.loads((out / "suite.json").read_text())["runs"][-1]
    assert run["outcome"] == "running" and run["tasks_run"] == written  # the log kept count until the kill

    proc = _start(tmp_path, out, "--no-progress")  # the lock died with the driver
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert f"was killed; it wrote {written} task(s)" in err
    runs = json.loads((out / "suite.json").read_text())["runs"]
    assert [r["outcome"] for r in runs] == ["killed", "completed"]
    assert len(_records(out)) == N_TASKS


def test_a_second_concurrent_run_is_refused_naming_the_holder(tmp_path: Path) -> None:
    # The first run's tasks from seed 1 on wait at a gate (seed 0 is open: the driver makes its
    # instance before it takes the folder), so it still holds the folder however long the second
    # run takes to start (before, a loaded machine let it finish first).
    out = tmp_path / "out"
    first = _start(tmp_path, out, "--no-progress", env=_gate(tmp_path, 1))
    try:
        _wait_for(lambda: (out / LOCK_FILE).exists() and (out / LOCK_FILE).stat().st_size > 0, 300, "the lock")
        _wait_for(lambda: {1, 2} <= set(_calls(tmp_path)), 300, "both workers at the gate")
        holders = {first.pid, *_workers(first.pid)}
        assert len(holders) == 3, holders
        second = _start(tmp_path, out, "--no-progress")
        _, err = second.communicate(timeout=300)
        assert second.returncode == 2, err
        assert err.count("\n") == 1 and err.startswith("error: ")
        assert f"in use by pid {first.pid} on host" in err and "bench run --suite-file" in err
        assert first.poll() is None  # the holder is still running
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert first.returncode == 130
    # The refused run made at most its driver's check of the first instance; every task ran in the first run.
    assert {c["pid"] for c in _call_log(tmp_path)} <= holders | {second.pid}
    assert {task_key(r)[2] for r in _records(out)} <= {0}


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


# A Ctrl-C that lands while highspy's C extension initialises: pybind11 turns the KeyboardInterrupt
# into ``ImportError("initialization failed")`` raised from it, which the bound and IP stages used to
# record as a failed stage (``llmopt solve`` then exited 0 or 1). The finder below raises the
# KeyboardInterrupt at the first module look-up made while ``highspy._core`` initialises (a spot a
# Ctrl-C can land on: the look-up runs inside importlib's ``exec_module`` of that extension), so
# pybind11 itself does the wrapping: an event, not a timer.
_INTERRUPT_HIGHSPY_INIT = """
import sys
class InterruptHighspyInit:
    fired = False
    def find_spec(self, name, path=None, target=None):
        f = sys._getframe(1)
        while f is not None and not self.fired:
            module = f.f_locals.get("module") if f.f_code.co_name == "exec_module" else None
            if getattr(module, "__name__", "") == "highspy._core":
                InterruptHighspyInit.fired = True
                sys.stderr.write("test: KeyboardInterrupt raised inside highspy._core's init\\n")
                raise KeyboardInterrupt
            f = f.f_back
        return None
sys.meta_path.insert(0, InterruptHighspyInit())
from llmopt.cli.main import app
sys.argv[0] = "llmopt"
app()
"""


@pytest.mark.parametrize("stage", [["--bound", "lp"], ["--relax", "--bound", "lp"], ["--bound", "sum-of-outputs"]],
                         ids=["bound stage", "relax bound stage", "IP stage"])
def test_ctrl_c_while_a_stage_imports_its_solver_stops_solve_with_exit_130(tmp_path: Path, stage: list[str]) -> None:
    inst = tmp_path / "t5.json"
    inst.write_text(json.dumps({"M": 5, "requests": [{"id": f"r{i}", "arrival": 0, "prompt": 1, "output": o}
                                                     for i, o in enumerate((1, 1, 3, 3))]}))
    proc = subprocess.run([sys.executable, "-c", _INTERRUPT_HIGHSPY_INIT, "solve", str(inst), "-q", *stage],
                          capture_output=True, text=True, timeout=300, preexec_fn=sigint_as_on_a_terminal)
    assert "KeyboardInterrupt raised inside highspy._core's init" in proc.stderr, \
        f"highspy's init made no module look-up to interrupt; the test needs another hook\n{proc.stderr}"
    assert proc.returncode == 130, (proc.stdout, proc.stderr)
    assert "interrupted" in proc.stderr and "Traceback" not in proc.stderr
    assert "initialization failed" not in proc.stdout + proc.stderr
