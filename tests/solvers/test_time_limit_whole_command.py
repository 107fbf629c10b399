"""``--time-limit`` bounds the whole command, model build included, for HiGHS and CBC; CBC prints progress.

No verdict here depends on how fast the machine is: a slow build is a fake clock that jumps past the
deadline (``time.perf_counter`` advanced by a million seconds from inside the build), and every wait
is on an event (a progress line, a killed child), not on a timer.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from llmopt.cli.main import app
from llmopt.formulations.hindsight_ip import HindsightIP
from llmopt.model.canonical import Block, CanonicalModel
from llmopt.model.instance import save_instance
from llmopt.model.result import SolveStatus
from llmopt.opt.hindsight import solve_hindsight
from llmopt.solvers import cbc as cbc_mod
from llmopt.solvers import highs as highs_mod
from llmopt.solvers.cbc import CbcSolver
from llmopt.solvers.highs import HighsSolver
from llmopt.workloads.jaillet import jaillet_am1

pulp = pytest.importorskip("pulp")

runner = CliRunner()
JUMP = 1e6  # seconds the fake clock jumps: past any deadline
PIPELINES = [("highs", "hindsight-ip", HighsSolver), ("cbc", "hindsight-ip-binary", CbcSolver)]


class FakeClock:
    """``time.perf_counter`` plus an offset that a test advances to pass a deadline at once."""

    def __init__(self) -> None:
        self.real = time.perf_counter
        self.offset = 0.0

    def __call__(self) -> float:
        return self.real() + self.offset

    def jump(self, seconds: float = JUMP) -> None:
        self.offset += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(time, "perf_counter", fake)
    return fake


@pytest.fixture
def cbc_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The argument lists of every ``cbc`` process started (through PuLP's ``subprocess.Popen``)."""
    real = subprocess.Popen
    runs: list[list[str]] = []

    def spy(args: Any, *a: Any, **kw: Any) -> Any:
        if isinstance(args, list) and args and "cbc" in os.path.basename(str(args[0])).lower():
            runs.append([str(x) for x in args])
        return real(args, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", spy)
    return runs


def small_mip() -> CanonicalModel:
    """min x0 + x1 with x0 + x1 >= 1.5, both integer in [0, 3]: optimum 2."""
    return CanonicalModel(
        name="small", c=np.array([1.0, 1.0]), offset=0.0, A=sp.csr_matrix(np.array([[1.0, 1.0]])),
        row_lower=np.array([1.5]), row_upper=np.array([np.inf]),
        col_lower=np.zeros(2), col_upper=np.full(2, 3.0), integer=np.array([True, True]),
        row_blocks=(Block("rows", 0, 1),), col_blocks=(Block("x", 0, 2),),
    )


def instance_for_the_ip():
    """J AM1, n = 8: FCFS's schedule (290) is above the energy bound (126), so the pipeline reaches the IP."""
    return jaillet_am1(0, n_range=(8, 8))


def slow_build(monkeypatch: pytest.MonkeyPatch, clock: FakeClock, seconds: float = JUMP) -> None:
    """Make every hindsight-IP build (binary included) take ``seconds`` on the fake clock."""
    real = HindsightIP.build

    def build(self: Any, instance: Any, windows: Any) -> Any:
        model = real(self, instance, windows)
        clock.jump(seconds)
        return model

    monkeypatch.setattr(HindsightIP, "build", build)


def spy_solve(monkeypatch: pytest.MonkeyPatch, cls: Any) -> list[dict[str, Any]]:
    real = cls.solve
    calls: list[dict[str, Any]] = []

    def solve(self: Any, model: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(self, model, *args, **kwargs)

    monkeypatch.setattr(cls, "solve", solve)
    return calls


# --- the pipeline and the command -------------------------------------------------------------------------


@pytest.mark.parametrize("solver, formulation, cls", PIPELINES)
def test_a_build_past_the_deadline_ends_with_time_limit_and_no_solve(monkeypatch, clock, solver, formulation, cls):
    calls = spy_solve(monkeypatch, cls)
    slow_build(monkeypatch, clock)
    h = solve_hindsight(instance_for_the_ip(), solver=solver, formulation=formulation, bounds=("energy",),
                        upper_bounds=("fcfs",), search_evals=0, time_limit=60.0)
    assert calls == []
    assert h.status is SolveStatus.TIME_LIMIT
    assert "IP not started" in h.message and h.incumbent == 290 and h.opt is None
    assert h.model_stats["formulation"] == formulation  # the model was built, then not solved


@pytest.mark.parametrize("solver, formulation, cls", PIPELINES)
def test_the_command_ends_with_time_limit_when_the_build_uses_the_budget(monkeypatch, clock, tmp_path, solver,
                                                                         formulation, cls):
    calls = spy_solve(monkeypatch, cls)
    slow_build(monkeypatch, clock)
    path = tmp_path / "am1_n8.json"
    save_instance(instance_for_the_ip(), path)
    res = runner.invoke(app, ["solve", str(path), "--solver", solver, "--formulation", formulation, "--json",
                              "--bound", "energy", "--upper-bound", "fcfs", "--search-evals", "0",
                              "--time-limit", "30", "-q"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["status"] == "time_limit" and out["objective"] == 290 and "IP not started" in out["message"]
    assert calls == []


@pytest.mark.parametrize("solver, formulation, cls", PIPELINES)
def test_the_solver_gets_what_the_build_left(monkeypatch, clock, solver, formulation, cls):
    calls = spy_solve(monkeypatch, cls)
    slow_build(monkeypatch, clock, seconds=20.0)
    h = solve_hindsight(instance_for_the_ip(), solver=solver, formulation=formulation, bounds=("energy",),
                        upper_bounds=("fcfs",), search_evals=0, time_limit=60.0)
    assert len(calls) == 1
    # 60 s budget, 20 s of it in the build, 5 % (3 s) kept back: at most 37 s for the solver's own limit
    assert 0 < calls[0]["time_limit"] <= 37.0
    assert calls[0]["deadline"] is not None
    assert h.incumbent <= 290


# --- the adapters -----------------------------------------------------------------------------------------


def test_highs_does_not_start_after_the_deadline(monkeypatch):
    started: list[Any] = []
    monkeypatch.setattr(highs_mod, "_run", lambda *a, **k: started.append(a))
    res = HighsSolver().solve(small_mip(), time_limit=10.0, deadline=time.perf_counter() - 1.0)
    assert started == []
    assert res.status is SolveStatus.TIME_LIMIT and res.x is None and "before HiGHS could start" in res.message


def test_cbc_does_not_start_after_the_deadline(cbc_runs):
    res = CbcSolver().solve(small_mip(), time_limit=10.0, deadline=time.perf_counter() - 1.0)
    assert cbc_runs == []
    assert res.status is SolveStatus.TIME_LIMIT and res.x is None and "CBC not started" in res.message


def test_cbc_stops_a_pulp_build_that_passes_the_deadline(monkeypatch, clock, cbc_runs):
    real = pulp.LpVariable

    def variable(*a: Any, **k: Any) -> Any:
        clock.jump()  # the first column already takes "forever"
        return real(*a, **k)

    monkeypatch.setattr(pulp, "LpVariable", variable)
    res = CbcSolver().solve(small_mip(), deadline=time.perf_counter() + 60.0)
    assert cbc_runs == []
    assert res.status is SolveStatus.TIME_LIMIT and "building the PuLP model" in res.message


def test_cbc_stops_when_writing_the_model_passes_the_deadline(monkeypatch, clock, cbc_runs):
    real = pulp.LpProblem.writeMPS

    def write(self: Any, *a: Any, **k: Any) -> Any:
        out = real(self, *a, **k)
        clock.jump()
        return out

    monkeypatch.setattr(pulp.LpProblem, "writeMPS", write)
    res = CbcSolver().solve(small_mip(), deadline=time.perf_counter() + 60.0)
    assert cbc_runs == []
    assert res.status is SolveStatus.TIME_LIMIT and "written for CBC" in res.message


def _sec(args: list[str]) -> float:
    return float(args[args.index("-sec") + 1])


def test_cbc_gets_the_time_left_to_the_deadline(cbc_runs):
    res = CbcSolver().solve(small_mip(), deadline=time.perf_counter() + 3600.0)
    assert res.status is SolveStatus.OPTIMAL and res.objective == pytest.approx(2.0)
    assert len(cbc_runs) == 1 and 0 < _sec(cbc_runs[0]) < 3600.0
    res = CbcSolver().solve(small_mip(), time_limit=7.0, deadline=time.perf_counter() + 3600.0)
    assert _sec(cbc_runs[1]) == pytest.approx(7.0)  # its own limit when the deadline leaves more


def test_cbc_prints_progress_while_it_runs(monkeypatch):
    """A line arrives while CBC runs: CBC's wait is held until the line has come (an event, not a timer)."""
    monkeypatch.setattr(cbc_mod, "PROGRESS_EVERY_S", 0.0)
    real = subprocess.Popen
    lines: list[str] = []
    got_line = threading.Event()

    class HeldPopen(real):  # type: ignore[misc, valid-type]
        def wait(self, timeout: float | None = None) -> int:
            got_line.wait(120)
            return super().wait(timeout)

    monkeypatch.setattr(subprocess, "Popen", HeldPopen)

    def progress(line: str) -> None:
        lines.append(line)
        if "solve running" in line:
            got_line.set()

    res = CbcSolver().solve(small_mip(), progress=progress)
    assert got_line.is_set() and any(line.startswith("MIP solve running (CBC") for line in lines)
    assert res.status is SolveStatus.OPTIMAL


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("sleep") is None,
                    reason="kills children found through Linux's /proc")
def test_cbc_still_running_at_the_deadline_is_killed(monkeypatch, clock, tmp_path):
    """A stand-in for CBC that never ends by itself (``sleep``, named ``cbc_stand_in``) is killed at the
    deadline, and the call ends with status time_limit."""
    stand_in = tmp_path / "cbc_stand_in"
    shutil.copy(shutil.which("sleep"), stand_in)  # type: ignore[arg-type]
    stand_in.chmod(stand_in.stat().st_mode | stat.S_IXUSR)
    real = subprocess.Popen
    children: list[Any] = []

    def popen(args: Any, *a: Any, **kw: Any) -> Any:
        children.append(real([str(stand_in), "1000"], *a, **kw))
        clock.jump()  # the deadline passes while "CBC" runs
        return children[-1]

    monkeypatch.setattr(subprocess, "Popen", popen)
    res = CbcSolver().solve(small_mip(), deadline=time.perf_counter() + 60.0)
    assert res.status is SolveStatus.TIME_LIMIT and "still running at the deadline" in res.message
    assert len(children) == 1 and children[0].returncode == -9  # killed (SIGKILL), not ended by itself


def _gurobi_usable() -> bool:
    from llmopt.solvers import solver_status

    return solver_status("gurobi")[0]


@pytest.mark.skipif(not _gurobi_usable(), reason="gurobipy or its licence is missing")
def test_gurobi_does_not_start_after_the_deadline():
    from llmopt.solvers.gurobi import GurobiSolver

    res = GurobiSolver().solve(small_mip(), time_limit=10.0, deadline=time.perf_counter() - 1.0)
    assert res.status is SolveStatus.TIME_LIMIT and res.x is None and "before Gurobi could start" in res.message
    res = GurobiSolver().solve(small_mip(), deadline=time.perf_counter() + 3600.0)
    assert res.status is SolveStatus.OPTIMAL and res.objective == pytest.approx(2.0)


@pytest.mark.skipif(not _gurobi_usable(), reason="gurobipy or its licence is missing")
def test_gurobi_prints_progress_from_its_callback(monkeypatch):
    from llmopt.solvers import gurobi as gurobi_mod

    monkeypatch.setattr(gurobi_mod, "PROGRESS_EVERY_S", 0.0)  # every callback call is "due"
    lines: list[str] = []
    res = gurobi_mod.GurobiSolver().solve(small_mip(), progress=lines.append)
    assert res.status is SolveStatus.OPTIMAL
    assert lines and all(line.startswith("MIP solve running (Gurobi)") for line in lines)
