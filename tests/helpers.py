"""Shared test helpers: an independent model of DESIGN §1 and tiny-instance generators.

Nothing here imports the simulator, the look-ahead check or the formulations, so tests
that compare against these helpers compare two independent implementations.
"""

from __future__ import annotations

import contextlib
import math
import random
import signal
from collections.abc import Iterator, Mapping

import numpy as np
import pytest

from llmopt.model.instance import Instance


def memory_profile(instance: Instance, starts: Mapping[str, int]) -> list[int]:
    """KV usage at integer times ``t = 1 … makespan`` (entry ``t − 1``), straight from DESIGN §1:
    a request starting at ``k`` uses ``s + (t − k)`` tokens at ``t = k+1 … k+o``."""
    makespan = max((starts[r.id] + r.output for r in instance.requests), default=0)
    mem = [0] * makespan
    for r in instance.requests:
        k = starts[r.id]
        for t in range(k + 1, k + r.output + 1):
            mem[t - 1] += r.prompt + (t - k)
    return mem


def is_feasible(instance: Instance, starts: Mapping[str, int]) -> bool:
    """Every request starts at or after its arrival and memory never exceeds ``M``."""
    if set(starts) != set(instance.ids):
        return False
    if any(starts[r.id] < r.arrival for r in instance.requests):
        return False
    return all(u <= instance.M for u in memory_profile(instance, starts))


def tel_of(instance: Instance, starts: Mapping[str, int]) -> int:
    """``Σ_i (k_i + o_i − a_i)``."""
    return sum(starts[r.id] + r.output - r.arrival for r in instance.requests)


def random_tiny_instance(
    rng: random.Random,
    n_range: tuple[int, int] = (2, 5),
    M_range: tuple[int, int] = (4, 10),
    max_arrival: int = 3,
    max_prompt: int = 3,
    dup_prob: float = 0.25,
) -> Instance:
    """A small random instance; with probability ``dup_prob`` a request copies an earlier one
    (so aggregation of identical requests in the IP gets exercised)."""
    M = rng.randint(*M_range)
    n = rng.randint(*n_range)
    rows: list[tuple[int, int, int]] = []
    for _ in range(n):
        if rows and rng.random() < dup_prob:
            rows.append(rng.choice(rows))
            continue
        s = rng.randint(1, min(max_prompt, M - 1))
        o = rng.randint(1, M - s)
        rows.append((rng.randint(0, max_arrival), s, o))
    return Instance.from_tuples(M, rows, name=f"tiny/M={M}")


def random_schedule(inst: Instance, rng: np.random.Generator) -> dict[str, int]:
    """A feasible schedule: requests in a random order, each at its earliest feasible start after a
    random delay of 0–3 steps."""
    horizon = max(r.arrival for r in inst.requests) + sum(r.output for r in inst.requests) + 40
    usage = np.zeros(horizon + 80, dtype=np.int64)
    starts = {}
    for i in rng.permutation(inst.n):
        r = inst.requests[int(i)]
        k = r.arrival + int(rng.integers(0, 4))
        ramp = r.prompt + np.arange(1, r.output + 1)
        while np.any(usage[k + 1:k + r.output + 1] + ramp > inst.M):
            k += 1
        usage[k + 1:k + r.output + 1] += ramp
        starts[r.id] = k
    return starts


def assert_zones_disjoint(inst: Instance, starts: Mapping[str, int], zones: Mapping[int, tuple[int, int]],
                          what: str = "") -> None:
    """Zones ``(a, b)`` of request positions — integer times ``C − a + 1 … C + b`` around each completion
    ``C`` — pairwise disjoint in the schedule ``starts`` (empty zones, ``a + b = 0``, ignored)."""
    spans = []
    for i, (a, b) in zones.items():
        r = inst.requests[i]
        c = starts[r.id] + r.output
        if a + b > 0:
            spans.append((c - a + 1, c + b, r.id))
    spans.sort()
    for (lo1, hi1, id1), (lo2, hi2, id2) in zip(spans, spans[1:]):
        assert hi1 < lo2, f"{what}: zones of {id1} [{lo1},{hi1}] and {id2} [{lo2},{hi2}] meet; starts {starts}"


def theorem41_instance(M: int) -> Instance:
    """J Theorem 4.1 family (DIGEST §3.1) with ``b = 0``: ``s = 1``; one long request ``o = M − 1``
    at 0; ``M/2`` short requests ``o = 1`` at ``r = M − √M/2``."""
    root = math.isqrt(M)
    assert root * root == M and root % 2 == 0, "M must be 4k²"
    r = M - root // 2
    return Instance.from_tuples(M, [(0, 1, M - 1)] + [(r, 1, 1)] * (M // 2), name=f"thm41/M={M}")


def exhaustive_opt(instance: Instance, upper_bound_tel: int) -> tuple[int, dict[str, int]]:
    """Minimum TEL over all feasible schedules, by branch and bound over start times.

    Soundness of the search space is argued in ``tests/formulations/test_ip_exhaustive.py``.

    ``upper_bound_tel`` must be the TEL of some feasible schedule (it bounds every wait).
    """
    reqs = instance.requests
    W = upper_bound_tel - instance.total_output
    assert W >= 0
    horizon = max(r.arrival for r in reqs) + W + max(r.output for r in reqs) + 1
    usage = [0] * (horizon + 1)
    M = instance.M
    # big requests first: they prune the most
    order = sorted(range(len(reqs)), key=lambda i: (-(reqs[i].prompt + reqs[i].output), reqs[i].arrival, i))
    best = [W + 1]
    best_starts: list[dict[str, int] | None] = [None]
    current: dict[str, int] = {}

    def rec(depth: int, waited: int) -> None:
        if depth == len(order):
            best[0] = waited
            best_starts[0] = dict(current)
            return
        r = reqs[order[depth]]
        w = 0
        while waited + w < best[0]:
            k = r.arrival + w
            if all(usage[k + j] + r.prompt + j <= M for j in range(1, r.output + 1)):
                for j in range(1, r.output + 1):
                    usage[k + j] += r.prompt + j
                current[r.id] = k
                rec(depth + 1, waited + w)
                del current[r.id]
                for j in range(1, r.output + 1):
                    usage[k + j] -= r.prompt + j
            w += 1

    rec(0, 0)
    assert best_starts[0] is not None, "no schedule within the upper bound: the bound's schedule is infeasible"
    starts = best_starts[0]
    assert is_feasible(instance, starts)
    assert tel_of(instance, starts) == instance.total_output + best[0]
    return instance.total_output + best[0], starts


def fake_solver(name: str, capabilities: frozenset, status: str = "time_limit", bound: float | None = None) -> type:
    """A solver adapter class that is always available and answers every model with ``status``, no
    point and ``bound`` (for tests of what the pipeline does with what solvers claim)."""
    from llmopt.model.result import SolveResult, SolveStatus
    from llmopt.solvers.base import SolverInfo

    class Fake:
        info = SolverInfo(name, "none", frozenset(capabilities), True)

        @classmethod
        def available(cls) -> tuple[bool, str]:
            return True, ""

        @classmethod
        def version(cls) -> None:
            return None

        def solve(self, model, **kwargs):  # type: ignore[no-untyped-def]
            return SolveResult(SolveStatus(status), None, bound, None, 0.0, solver=name, message=name)

    return Fake


def have_trace_data() -> bool:
    """Whether the staged trace data (``../shared/data/traces``) can be found."""
    from llmopt.workloads.traces.data import data_dir

    try:
        data_dir()
    except FileNotFoundError:
        return False
    return True


# --- signals --------------------------------------------------------------------------------------
# A shell without job control starts background commands (``cmd &``, a CI step run in the
# background) with SIGINT *ignored*, and Python then never raises KeyboardInterrupt: a Ctrl-C test
# would test the launcher, not llmopt. These two give the tests the disposition of a terminal.


def sigint_as_on_a_terminal() -> None:
    """``preexec_fn`` for a child process: SIGINT back to its default, so Python installs its
    KeyboardInterrupt handler at start-up whatever the test runner inherited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def keyboard_interrupt_on_sigint() -> Iterator[None]:
    """In this process, SIGINT raises KeyboardInterrupt while the block runs (then the previous
    handler is restored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


#: Skips a test that reads the staged traces when they are not there (they are never in the repository).
needs_trace_data = pytest.mark.skipif(
    not have_trace_data(),
    reason="staged trace data (../shared/data/traces, not in the repository) not found; set LLMOPT_DATA")


def live_processes() -> Iterator[tuple[int, str, int, int]]:
    """``(pid, command name, parent pid, process group)`` of every live (not zombie) process, read from
    Linux ``/proc/PID/stat`` (the name is between the first "(" and the last ")")."""
    import os
    from pathlib import Path

    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name = stat[stat.find("(") + 1: stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2:].split()  # state, ppid, pgrp, ...
        if fields[0] not in ("Z", "X"):
            yield int(entry), name, int(fields[1]), int(fields[2])
