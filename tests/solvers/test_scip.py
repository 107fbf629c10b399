"""The SCIP adapter against HiGHS and exhaustive OPT; its status mapping, warm start, deadline and interrupt.

The wait loop is tested with a stand-in SCIP model whose solve blocks on an event until ``interruptSolve``
is called, so no verdict depends on how fast the machine is.
"""

from __future__ import annotations

import json
import random
import signal
import threading
import time
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import exhaustive_opt, random_tiny_instance
from typer.testing import CliRunner

from llmopt.cli.main import app
from llmopt.engine.discrete import simulate
from llmopt.formulations.hindsight_ip import HindsightIP
from llmopt.model.canonical import Block, CanonicalModel
from llmopt.model.instance import save_instance
from llmopt.model.result import SolveStatus
from llmopt.model.windows import start_windows
from llmopt.policies import make_policy
from llmopt.solvers import SOLVERS, solver_status
from llmopt.solvers import scip as scip_mod
from llmopt.solvers.base import Capability, package_installed
from llmopt.solvers.highs import HighsSolver
from llmopt.solvers.scip import ScipSolver, status_of
from llmopt.workloads.jaillet import jaillet_am1

needs_scip = pytest.mark.skipif(not package_installed("pyscipopt"), reason="pyscipopt is not installed")
runner = CliRunner()
TOL = 1e-6


def model_of(c: Any, A: Any, rl: Any, ru: Any, cl: Any, cu: Any, integer: Any, offset: float = 0.0) -> CanonicalModel:
    A = sp.csr_matrix(np.asarray(A, dtype=float))
    return CanonicalModel(
        name="m", c=np.asarray(c, dtype=float), offset=offset, A=A,
        row_lower=np.asarray(rl, dtype=float), row_upper=np.asarray(ru, dtype=float),
        col_lower=np.asarray(cl, dtype=float), col_upper=np.asarray(cu, dtype=float),
        integer=np.asarray(integer, dtype=bool),
        row_blocks=(Block("rows", 0, A.shape[0]),), col_blocks=(Block("x", 0, A.shape[1]),),
    )


def random_model(seed: int, integer: bool) -> CanonicalModel:
    """A feasible, bounded random model: columns in [0, 4], ``>=`` rows (and some ranges) around a known point,
    an empty row and an objective offset."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(3, 9)), int(rng.integers(2, 7))
    A = rng.integers(-3, 4, size=(m, n)).astype(float) * (rng.random((m, n)) < 0.7)
    A[-1] = 0.0  # an empty row with bounds around 0
    point = rng.integers(0, 5, size=n).astype(float)
    act = A @ point
    rl = act - rng.integers(0, 3, size=m)
    ru = np.where(rng.random(m) < 0.3, act + rng.integers(0, 3, size=m), np.inf)
    c = rng.integers(-5, 6, size=n).astype(float)
    return model_of(c, A, rl, ru, np.zeros(n), np.full(n, 4.0), np.full(n, integer), offset=float(seed))


# --- listing without the backend -------------------------------------------------------------------------


def test_registered_with_capabilities_declared_without_the_backend(monkeypatch):
    cls = SOLVERS.get("scip")
    assert cls is ScipSolver
    assert cls.info.has(Capability.MIP, Capability.LP_DUALS, Capability.WARM_START, Capability.TIME_LIMIT,
                        Capability.INTERRUPT)
    assert not cls.info.has(Capability.THREADS)  # SCIP's search is single-threaded
    monkeypatch.setattr(scip_mod, "package_installed", lambda module: False)
    ok, why = solver_status("scip")
    assert not ok and "pyscipopt" in why
    res = ScipSolver().solve(model_of([1.0], [[1.0]], [1.0], [np.inf], [0.0], [2.0], [False]))
    assert res.status is SolveStatus.NOT_SOLVED and "pyscipopt" in res.message


def test_status_mapping():
    assert status_of("optimal") is SolveStatus.OPTIMAL
    assert status_of("gaplimit") is SolveStatus.OPTIMAL
    assert status_of("infeasible") is SolveStatus.INFEASIBLE
    assert status_of("unbounded") is SolveStatus.UNBOUNDED
    assert status_of("inforunbd") is SolveStatus.UNBOUNDED
    assert status_of("timelimit") is SolveStatus.TIME_LIMIT
    assert status_of("userinterrupt") is SolveStatus.INTERRUPTED
    assert status_of("nodelimit") is SolveStatus.NODE_LIMIT  # a node limit keeps its bound (ip_node_limit)
    assert status_of("memlimit") is SolveStatus.NOT_SOLVED


# --- against HiGHS ---------------------------------------------------------------------------------------


@needs_scip
def test_conformance():
    from llmopt.bench.plugins.conformance import check_solver

    assert check_solver("scip") == []


@needs_scip
@pytest.mark.parametrize("seed", range(12))
def test_lp_matches_highs_and_its_duals_are_complementary(seed):
    model = random_model(seed, integer=False)
    ref = HighsSolver().solve(model)
    res = ScipSolver().solve(model)
    assert ref.status is SolveStatus.OPTIMAL and res.status is SolveStatus.OPTIMAL
    assert res.objective == pytest.approx(ref.objective, abs=TOL)
    assert res.bound == pytest.approx(res.objective, abs=TOL)
    x, y = res.x, res.duals
    assert x is not None and y is not None and len(y) == model.n_rows
    assert model.max_violation(x) <= TOL
    ax = model.A @ x
    # HiGHS convention (minimisation): y > 0 only on a row at its lower bound, y < 0 only at its upper bound;
    # reduced costs c − Aᵀy > 0 only on a column at its lower bound, < 0 only at its upper bound.
    assert np.all((y <= TOL) | (np.abs(ax - model.row_lower) <= TOL))
    assert np.all((y >= -TOL) | (np.abs(ax - model.row_upper) <= TOL))
    rc = model.c - model.A.T @ y
    assert np.all((rc <= TOL) | (np.abs(x - model.col_lower) <= TOL))
    assert np.all((rc >= -TOL) | (np.abs(x - model.col_upper) <= TOL))
    # strong duality: the duals price the optimum (row and column bounds at their active sides)
    dual_obj = model.offset + sum(
        (yi * (model.row_lower[i] if yi > 0 else model.row_upper[i])) for i, yi in enumerate(y) if abs(yi) > TOL
    ) + sum((r * (model.col_lower[j] if r > 0 else model.col_upper[j])) for j, r in enumerate(rc) if abs(r) > TOL)
    assert dual_obj == pytest.approx(res.objective, abs=1e-5)


@needs_scip
@pytest.mark.parametrize("seed", range(12))
def test_mip_matches_highs(seed):
    model = random_model(seed, integer=True)
    ref = HighsSolver().solve(model)
    res = ScipSolver().solve(model)
    assert ref.status is SolveStatus.OPTIMAL and res.status is SolveStatus.OPTIMAL
    assert res.objective == pytest.approx(ref.objective, abs=TOL)
    assert res.bound == pytest.approx(res.objective, abs=TOL) and res.gap == pytest.approx(0.0, abs=TOL)
    assert res.x is not None and model.max_violation(res.x) <= TOL
    assert res.duals is None


@needs_scip
@pytest.mark.parametrize("integer", [False, True])
def test_infeasible_and_unbounded(integer):
    infeasible = model_of([1, 1], [[1, 1]], [10], [np.inf], [0, 0], [3, 3], [integer] * 2)
    res = ScipSolver().solve(infeasible)
    assert res.status is SolveStatus.INFEASIBLE and res.objective is None and res.bound is None
    unbounded = model_of([-1, 0], [[1, -1]], [0], [np.inf], [0, 0], [np.inf, np.inf], [integer] * 2)
    res = ScipSolver().solve(unbounded)
    assert res.status is SolveStatus.UNBOUNDED and res.objective is None


@needs_scip
def test_an_empty_row_with_impossible_bounds_is_infeasible():
    model = model_of([1, 1], [[1, 1], [0, 0]], [0, 1], [np.inf, 2], [0, 0], [3, 3], [True, True])
    assert ScipSolver().solve(model).status is SolveStatus.INFEASIBLE


# --- warm start, deadline, interrupt --------------------------------------------------------------------


def _am1_ip() -> CanonicalModel:
    inst = jaillet_am1(0, n_range=(8, 8))
    return HindsightIP().build(inst, start_windows(inst, simulate(inst, make_policy("fcfs")).tel))


@needs_scip
def test_warm_start_is_the_incumbent():
    model = _am1_ip()
    planted = HighsSolver().solve(model)
    assert planted.status is SolveStatus.OPTIMAL and planted.x is not None
    # Stop at the first solution SCIP stores: with the planted one handed over, that is the planted one.
    res = ScipSolver(**{"limits/solutions": 1}).solve(model, warm_start=planted.x)
    assert res.x is not None and np.array_equal(np.round(res.x), np.round(planted.x))
    assert res.objective == pytest.approx(planted.objective)
    assert "rejected" not in res.message
    full = ScipSolver().solve(model, warm_start=planted.x)
    assert full.status is SolveStatus.OPTIMAL and full.objective == pytest.approx(planted.objective)


@needs_scip
def test_an_infeasible_warm_start_is_dropped_and_said():
    model = model_of([1, 1], [[1, 1]], [1.5], [np.inf], [0, 0], [3, 3], [True, True])
    res = ScipSolver().solve(model, warm_start=np.zeros(2))
    assert res.status is SolveStatus.OPTIMAL and res.objective == pytest.approx(2.0)
    assert "warm start rejected" in res.message


@needs_scip
@pytest.mark.parametrize("where", ["build", "after_build"])
def test_a_passed_deadline_ends_with_time_limit_without_solving(monkeypatch, where):
    started: list[Any] = []
    monkeypatch.setattr(scip_mod, "_run", lambda *a, **k: started.append(a))
    model = _am1_ip()
    if where == "build":
        deadline = time.perf_counter() - 1.0
    else:
        deadline = time.perf_counter() + 1e6
        real_build = scip_mod._build

        def build(*args: Any) -> Any:
            out = real_build(*args)
            monkeypatch.setattr(scip_mod.time, "perf_counter", lambda: deadline + 1.0)
            return out

        monkeypatch.setattr(scip_mod, "_build", build)
    res = ScipSolver().solve(model, time_limit=10.0, deadline=deadline)
    assert started == []
    assert res.status is SolveStatus.TIME_LIMIT and res.x is None
    assert ("SCIP not started" if where == "build" else "before SCIP could start") in res.message


class StandIn:
    """A SCIP model whose solve blocks until ``interruptSolve`` is called (or ``release`` is set)."""

    def __init__(self) -> None:
        self.interrupted = threading.Event()
        self.release = threading.Event()

    def optimizeNogil(self) -> None:  # noqa: N802 - PySCIPOpt's name
        while not (self.interrupted.is_set() or self.release.is_set()):
            self.interrupted.wait(0.01)

    def interruptSolve(self) -> None:  # noqa: N802
        self.interrupted.set()


def test_the_wait_loop_interrupts_at_the_deadline():
    m = StandIn()
    stop, finished, error = scip_mod._run(m, _am1_ip(), None, time.perf_counter(), time.perf_counter() - 1.0, {})
    assert (stop, finished, error) == ("time", True, None) and m.interrupted.is_set()


def test_ctrl_c_interrupts_the_solve_and_progress_lines_are_printed(monkeypatch):
    monkeypatch.setattr(scip_mod, "PROGRESS_EVERY_S", 0.0)
    m = StandIn()
    lines: list[str] = []

    def progress(line: str) -> None:
        lines.append(line)
        if len(lines) == 2:
            raise KeyboardInterrupt

    latest = {"primal": 100.0, "dual": 90.25}  # SCIP's values, without the model's objective offset
    model = _am1_ip()
    stop, finished, error = scip_mod._run(m, model, progress, time.perf_counter(), None, latest)
    assert (stop, finished, error) == ("user", True, None) and m.interrupted.is_set()
    inc, bound = 100 + model.offset, 90.25 + model.offset
    assert lines[0].startswith("MIP solve running (SCIP)") and f"incumbent {inc:.0f}, bound {bound:.1f}" in lines[0]


@needs_scip
def test_a_ctrl_c_result_is_interrupted_with_incumbent_and_bound(monkeypatch):
    real_run = scip_mod._run

    def run(*args: Any) -> Any:
        _, finished, error = real_run(*args)
        return "user", finished, error

    monkeypatch.setattr(scip_mod, "_run", run)
    res = ScipSolver().solve(_am1_ip())
    assert res.status is SolveStatus.INTERRUPTED and "interrupted by the user" in res.message
    assert res.objective is not None and res.bound is not None and res.bound <= res.objective


@needs_scip
def test_a_real_sigint_interrupts_scip(monkeypatch):
    # The signal is raised from the first progress line, i.e. once SCIP is running in its thread.
    monkeypatch.setattr(scip_mod, "PROGRESS_EVERY_S", 0.0)
    # A process started in the background by a non-interactive shell inherits SIGINT ignored, and Python then
    # leaves it ignored: give the test Python's own handler so the signal raises KeyboardInterrupt.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    inst = jaillet_am1(0, n_range=(20, 20), M_range=(40, 40))  # SCIP does not prove OPT here in 60 s
    model = HindsightIP().build(inst, start_windows(inst, simulate(inst, make_policy("mc-sf")).tel))
    lines: list[str] = []

    def progress(line: str) -> None:
        lines.append(line)
        if len(lines) == 1:
            signal.raise_signal(signal.SIGINT)

    try:  # the time limit only turns a signal that never arrives into a failure instead of a hang
        res = ScipSolver().solve(model, progress=progress, time_limit=600.0)
    finally:
        signal.signal(signal.SIGINT, previous)
    if not lines:
        pytest.skip("SCIP finished before its first progress line")
    assert res.status is SolveStatus.INTERRUPTED and "interrupted by the user" in res.message
    assert res.objective is None or res.bound is None or res.bound <= res.objective


@needs_scip
def test_time_limit_reports_the_incumbent():
    model = _am1_ip()
    planted = HighsSolver().solve(model)
    res = ScipSolver().solve(model, time_limit=0.0, warm_start=planted.x)
    assert res.status is SolveStatus.TIME_LIMIT and "timelimit" in res.message
    assert res.objective == pytest.approx(planted.objective)
    assert res.bound is None or res.bound <= res.objective


# --- the hindsight pipeline --------------------------------------------------------------------------------


@needs_scip
@pytest.mark.parametrize("seed", range(4))
def test_llmopt_solve_with_scip_equals_exhaustive_opt(tmp_path, seed):
    inst = random_tiny_instance(random.Random(seed), n_range=(4, 6))
    fcfs = simulate(inst, make_policy("fcfs"))
    opt, _ = exhaustive_opt(inst, fcfs.tel)
    path = tmp_path / "tiny.json"
    save_instance(inst, path)
    res = runner.invoke(app, ["solve", str(path), "--solver", "scip", "--json", "--bound", "energy",
                              "--upper-bound", "fcfs", "--search-evals", "0", "--time-limit", "60", "-q"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["status"] == "optimal" and out["objective"] == opt


@needs_scip
def test_the_pipeline_does_not_start_scip_when_the_build_used_the_budget(monkeypatch):
    from llmopt.opt.hindsight import solve_hindsight

    real_now = time.perf_counter
    offset = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: real_now() + offset[0])
    real_build = HindsightIP.build

    def slow_build(self: Any, instance: Any, windows: Any) -> Any:
        model = real_build(self, instance, windows)
        offset[0] += 1e6  # the build "took" a million seconds
        return model

    monkeypatch.setattr(HindsightIP, "build", slow_build)
    calls: list[Any] = []
    monkeypatch.setattr(ScipSolver, "solve", lambda self, *a, **k: calls.append(k))
    h = solve_hindsight(jaillet_am1(0, n_range=(8, 8)), solver="scip", formulation="hindsight-ip",
                        bounds=("energy",), upper_bounds=("fcfs",), search_evals=0, time_limit=60.0)
    assert calls == []
    assert h.status is SolveStatus.TIME_LIMIT and "IP not started" in h.message and h.opt is None
