"""Workloads and suites for the harness tests, importable as ``bench_helpers:NAME``.

Worker processes (local pool, subprocess runs of ``llmopt bench run``) cannot see
workloads registered inside the test process, so these are named by their
``"module:attr"`` path; the tests put this folder on ``PYTHONPATH`` for subprocesses.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from llmopt.bench.suites import Suite
from llmopt.model.instance import Instance
from llmopt.workloads.jaillet import jaillet_am1

TESTS_DIR = Path(__file__).resolve().parent
CALLS_ENV = "LLMOPT_TEST_CALLS"
HOLD_GIL_ENV = "LLMOPT_TEST_HOLD_GIL"
GATE_ENV = "LLMOPT_TEST_GATE"

SMALL = {"n_range": (4, 6), "M_range": (8, 10)}


def _note_call(seed: int, seconds: float) -> None:
    path = os.environ.get(CALLS_ENV)
    if path:
        # One small O_APPEND write per call: lines from concurrent workers never interleave.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, f"{json.dumps({'seed': seed, 'seconds': seconds, 'pid': os.getpid()})}\n".encode())
        finally:
            os.close(fd)


def sleepy(seed: int, seconds: float = 1.0) -> Instance:
    """A tiny instance that takes ``seconds`` to generate (and logs the call to ``$LLMOPT_TEST_CALLS``).

    With ``$LLMOPT_TEST_HOLD_GIL=S@K``, seeds ``>= K`` instead spend ``S`` whole seconds in
    C code that holds the interpreter lock, as a long solve in a C extension may (the
    environment is not part of the task key, so a rerun without it resumes the same tasks).
    With ``$LLMOPT_TEST_GATE=K@PATH``, seeds ``>= K`` first wait (in Python, so SIGTERM still
    stops them) until the file ``PATH`` exists: a test holds tasks in flight for as long as it
    needs, on any machine, instead of hoping they outlast a timer.
    """
    _note_call(seed, seconds)
    first_gated, _, gate = os.environ.get(GATE_ENV, "").partition("@")
    if gate and seed >= int(first_gated):
        while not os.path.exists(gate):
            time.sleep(0.01)
    hold, _, first = os.environ.get(HOLD_GIL_ENV, "").partition("@")
    if hold and seed >= int(first or 0):
        import ctypes

        ctypes.PyDLL(None).sleep(int(hold))  # PyDLL: the call keeps the GIL
    else:
        time.sleep(seconds)
    return jaillet_am1(seed, n_range=(3, 4), M_range=(6, 7))


def flaky(seed: int) -> Instance:
    """Seed 1 cannot be generated."""
    if seed == 1:
        raise ValueError("seed 1 is broken on purpose")
    return jaillet_am1(seed, n_range=(4, 5), M_range=(8, 9))


def fatal(seed: int, every_seed: bool = False) -> Instance:
    """Seed 1 (or every seed) kills the process that generates it, as the kernel's OOM killer would."""
    if seed == 1 or every_seed:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    return jaillet_am1(seed, n_range=(4, 5), M_range=(8, 9))


def tiny_suite(name: str = "test-tiny", seeds: tuple[int, ...] = (0, 1), flaky_too: bool = False,
               **overrides: Any) -> Suite:
    """Two J §5.1 workloads at toy sizes (and optionally :func:`flaky`)."""
    workloads: list[tuple[Any, ...]] = [
        ("jaillet-am1", seeds, SMALL),
        ("jaillet-am2", seeds, {"T_range": (3, 5), "M_range": (8, 10)}),
    ]
    if flaky_too:
        workloads.append(("bench_helpers:flaky", seeds, {}))
    kwargs: dict[str, Any] = {
        "name": name, "description": "tiny test suite", "workloads": tuple(workloads), "ip_time_limit": 10.0,
        "search_evals": 20, "bounds": ("lp",),
        "paper": {"jaillet-am1": {"mean": 1.005, "max": 1.074, "min": 1.0, "exact": 114}},
    }
    kwargs.update(overrides)
    return Suite(**kwargs)


def sleepy_suite(name: str = "test-sleepy", n: int = 6, seconds: float = 1.0) -> Suite:
    """``n`` tasks of :func:`sleepy`, each taking about ``seconds``."""
    return Suite(name=name, description="slow tasks for the stop tests",
                 workloads=(("bench_helpers:sleepy", tuple(range(n)), {"seconds": seconds}),),
                 ip_time_limit=10.0, search_evals=5)
