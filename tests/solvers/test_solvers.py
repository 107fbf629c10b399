"""Solver adapters (DESIGN §3): HiGHS and CBC agree with known optima, duals and brute force;
time limits never pass for optimality; Gurobi degrades to NOT_SOLVED without its package or licence."""

from __future__ import annotations

import itertools
import subprocess
import sys
import types
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import fake_solver, keyboard_interrupt_on_sigint

from llmopt.model.canonical import Block, CanonicalModel
from llmopt.model.registry import RegistryError
from llmopt.model.result import SolveResult, SolveStatus
from llmopt.solvers import SOLVERS, get_solver, solver_status

INF = np.inf
OPEN_SOLVERS = ["highs", "cbc"]


def make_model(
    c: Any, A: Any, row_lower: Any, row_upper: Any, col_lower: Any, col_upper: Any, integer: Any,
    offset: float = 0.0, name: str = "t",
) -> CanonicalModel:
    A = sp.csr_matrix(np.asarray(A, dtype=float))
    m, n = A.shape
    return CanonicalModel(
        name=name,
        c=np.asarray(c, dtype=float),
        offset=float(offset),
        A=A,
        row_lower=np.asarray(row_lower, dtype=float),
        row_upper=np.asarray(row_upper, dtype=float),
        col_lower=np.asarray(col_lower, dtype=float),
        col_upper=np.asarray(col_upper, dtype=float),
        integer=np.asarray(integer, dtype=bool),
        row_blocks=(Block("rows", 0, m),),
        col_blocks=(Block("x", 0, n),),
    )


def lp_model(flip_first_row: bool = False) -> CanonicalModel:
    """``min -x0 - 2 x1 + 3 x2 + 1.5`` with a unique, non-degenerate optimum x = (3, 1, 0, ·).

    Rows: ``x0 + x1 <= 4`` (dual −½), ``x0 + 3 x1 − x2 = 6`` (dual −½), a slack range row, a slack
    ``>=`` row and an empty row (duals 0). Column 3 is in no row and costs nothing. With
    ``flip_first_row`` row 0 is written ``−x0 − x1 >= −4`` and its dual must flip to +½.
    """
    A = [
        [1, 1, 0, 0],
        [1, 3, -1, 0],
        [2, -1, 0, 0],
        [-1, 0, 0, 0],
        [0, 0, 0, 0],
    ]
    lo = [-INF, 6, -10, -100, -1]
    up = [4, 6, 50, INF, 1]
    if flip_first_row:
        A[0] = [-1, -1, 0, 0]
        lo[0], up[0] = -4, INF
    return make_model([-1, -2, 3, 0], A, lo, up, [0, 0, 0, -2], [INF, INF, INF, 5], [0, 0, 0, 0], offset=1.5)


def knapsack(seed: int = 3, n: int = 12) -> tuple[CanonicalModel, float]:
    """A 0/1 knapsack (as a minimisation) and its optimum by brute force."""
    rng = np.random.default_rng(seed)
    w = rng.integers(5, 40, n)
    v = rng.integers(1, 50, n)
    cap = int(w.sum() // 3)
    best = max(
        int(v @ np.array(bits)) for bits in itertools.product((0, 1), repeat=n) if w @ np.array(bits) <= cap
    )
    model = make_model(-v, [w], [-INF], [cap], np.zeros(n), np.ones(n), np.ones(n), offset=7.0)
    return model, -best + 7.0


HARD_MIP_OPTIMUM = -2087.0
"""Optimum of ``hard_mip()``, proved by HiGHS (2.6 s) and CBC (1.1 s) outside the suite."""


def hard_mip(seed: int = 0, n: int = 60, m: int = 30) -> CanonicalModel:
    """A multi-dimensional 0/1 knapsack that takes CBC about a second to prove optimal."""
    rng = np.random.default_rng(seed)
    W = rng.integers(1, 100, (m, n))
    c = -rng.integers(1, 100, n)
    return make_model(c, W, np.full(m, -INF), W.sum(1) // 2, np.zeros(n), np.ones(n), np.ones(n), offset=3.0)


def market_split(seed: int = 1, m: int = 5) -> tuple[CanonicalModel, np.ndarray]:
    """Equality-constrained 0/1 rows with a planted solution: feasibility is hard to find from scratch."""
    rng = np.random.default_rng(seed)
    n = 10 * (m - 1)
    A = rng.integers(0, 100, (m, n))
    planted = (rng.random(n) < 0.5).astype(float)
    b = A @ planted
    return make_model(np.ones(n), A, b, b, np.zeros(n), np.ones(n), np.ones(n)), planted


# --- LPs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", OPEN_SOLVERS)
@pytest.mark.parametrize("flip", [False, True])
def test_lp_known_optimum_and_duals(name: str, flip: bool) -> None:
    model = lp_model(flip)
    res = get_solver(name).solve(model)
    assert res.status is SolveStatus.OPTIMAL, res.message
    assert res.objective == pytest.approx(-3.5, abs=1e-7)
    assert res.bound == pytest.approx(-3.5, abs=1e-7)
    assert res.x is not None
    assert res.x[:3] == pytest.approx([3.0, 1.0, 0.0], abs=1e-7)
    assert model.col_lower[3] <= res.x[3] <= model.col_upper[3]
    assert model.max_violation(res.x) <= 1e-7
    assert res.duals is not None and res.duals.shape == (model.n_rows,)
    first = 0.5 if flip else -0.5
    assert res.duals == pytest.approx([first, -0.5, 0.0, 0.0, 0.0], abs=1e-7)
    # Strong duality with reduced costs: c·x = y·(active row bounds) + d·(active column bounds).
    y = res.duals
    d = model.c - model.A.T @ y
    assert np.all(d[:3] >= -1e-9)  # columns 0–2 are bounded below only: reduced costs >= 0
    row_bound = np.where(y < 0, model.row_upper, np.where(y > 0, model.row_lower, 0.0))
    col_bound = np.where(np.abs(d) > 1e-12, model.col_lower, 0.0)
    assert res.objective - model.offset == pytest.approx(y @ row_bound + d @ col_bound, abs=1e-7)


def test_lp_duals_agree_between_highs_and_cbc() -> None:
    model = lp_model()
    a, b = (get_solver(n).solve(model) for n in OPEN_SOLVERS)
    assert a.duals is not None and b.duals is not None
    np.testing.assert_allclose(a.duals, b.duals, atol=1e-7)
    assert a.objective == pytest.approx(b.objective, abs=1e-7)


@pytest.mark.parametrize("name", OPEN_SOLVERS)
def test_infeasible_and_unbounded(name: str) -> None:
    solver = get_solver(name)
    infeasible_lp = make_model([1, 1], [[1, 1]], [3], [INF], [0, 0], [1, 1], [0, 0])
    infeasible_ip = make_model([1, 1], [[2, 2]], [3], [3], [0, 0], [5, 5], [1, 1])
    unbounded_lp = make_model([-1, 0], [[1, -1]], [-INF], [3], [0, 0], [INF, INF], [0, 0])
    for model, expected in [
        (infeasible_lp, SolveStatus.INFEASIBLE),
        (infeasible_ip, SolveStatus.INFEASIBLE),
        (unbounded_lp, SolveStatus.UNBOUNDED),
    ]:
        res = solver.solve(model)
        assert res.status is expected, (model.A.toarray(), res)
        assert res.bound is None and res.gap is None
        if expected is SolveStatus.INFEASIBLE:
            assert res.objective is None and res.x is None
        elif res.x is not None:  # a feasible point of an unbounded problem is allowed
            assert model.max_violation(res.x) <= 1e-7


# --- MIPs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", OPEN_SOLVERS)
def test_knapsack_matches_brute_force(name: str) -> None:
    model, optimum = knapsack()
    res = get_solver(name).solve(model)
    assert res.status is SolveStatus.OPTIMAL, res.message
    assert res.objective == pytest.approx(optimum, abs=1e-6)
    assert res.bound is not None and res.bound <= res.objective + 1e-9
    assert res.gap is not None and res.gap <= 1e-6
    assert res.x is not None and model.max_violation(res.x) <= 1e-6
    assert res.duals is None


@pytest.mark.parametrize("name", OPEN_SOLVERS)
def test_integrality_is_honoured(name: str) -> None:
    # min −(x0 + x1) s.t. 2 x0 + 2 x1 <= 3, x0 = x1, integers in [0, 5]: the LP optimum is −1.5 at
    # (¾, ¾), the IP optimum 0 at (0, 0).
    model = make_model([-1, -1], [[2, 2], [1, -1]], [-INF, 0], [3, 0], [0, 0], [5, 5], [1, 1])
    lp = get_solver(name).solve(model.relax())
    ip = get_solver(name).solve(model)
    assert lp.status is SolveStatus.OPTIMAL and ip.status is SolveStatus.OPTIMAL
    assert lp.objective == pytest.approx(-1.5, abs=1e-7)
    assert ip.objective == pytest.approx(0.0, abs=1e-7)
    assert ip.x is not None and ip.x == pytest.approx([0.0, 0.0], abs=1e-7)


@pytest.mark.parametrize("time_limit", [0.0, 0.05])
def test_time_limit_never_claims_optimality(time_limit: float) -> None:
    # A limit of 0 has passed at the solvers' first clock check, whatever the machine's speed: both stop
    # there, before any search, with the zero vector (a feasible start) as incumbent. 0.05 s stops them
    # somewhere in the search or not at all: only what holds either way is asserted.
    model = hard_mip()
    results = {}
    for name in OPEN_SOLVERS:
        res = get_solver(name).solve(model, time_limit=time_limit, warm_start=np.zeros(model.n_cols))
        results[name] = res
        if time_limit == 0.0:
            assert res.status is SolveStatus.TIME_LIMIT, (name, res)
        assert res.status in (SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL), (name, res)
        if res.status is SolveStatus.OPTIMAL:
            assert res.gap is not None and res.gap <= 1e-6, (name, res)
        if res.objective is not None:
            assert res.objective >= HARD_MIP_OPTIMUM - 1e-6
        if res.bound is not None:
            assert res.bound <= HARD_MIP_OPTIMUM + 1e-6, (name, res)
        if res.objective is not None and res.bound is not None:
            assert res.bound <= res.objective + 1e-9
            assert res.gap == pytest.approx(SolveResult.relative_gap(res.objective, res.bound))
        if res.x is not None:
            assert model.max_violation(res.x) <= 1e-6
            assert model.objective_value(res.x) == pytest.approx(res.objective)
        if res.objective is None:
            assert res.gap is None
    # Each solver's bound is a valid lower bound, so it cannot exceed the other's incumbent.
    for a, b in itertools.permutations(results.values(), 2):
        if a.bound is not None and b.objective is not None:
            assert a.bound <= b.objective + 1e-6, (a, b)


def test_cbc_time_limit_reports_time_limit_with_bound() -> None:
    # A limit of 0 has passed at CBC's first clock check on any machine: it stops on time with the
    # zero start as incumbent (PuLP itself says "Optimal") and its root LP bound in the log.
    model = hard_mip()
    res = get_solver("cbc").solve(model, time_limit=0.0, warm_start=np.zeros(model.n_cols))
    assert res.status is SolveStatus.TIME_LIMIT, res
    assert "Stopped on time" in res.message
    assert res.objective == pytest.approx(model.objective_value(np.zeros(model.n_cols)))
    assert res.bound is not None and res.bound <= HARD_MIP_OPTIMUM + 1e-6
    assert res.gap is not None and res.gap > 0


@pytest.mark.parametrize("name", OPEN_SOLVERS)
def test_gap_stop_reports_a_valid_bound(name: str) -> None:
    # With a 2 % gap both solvers stop early and call it optimal; the bound must then be the proven one,
    # not the incumbent (CBC reads it from its log). No time limit: the gap alone ends the search.
    res = get_solver(name).solve(hard_mip(), mip_gap=0.02)
    assert res.status is SolveStatus.OPTIMAL, res
    assert res.objective is not None and res.bound is not None
    assert res.bound <= HARD_MIP_OPTIMUM + 1e-6 <= res.objective + 2e-6
    if res.status is SolveStatus.OPTIMAL:
        assert res.gap is not None and res.gap <= 0.02 + 1e-6


# --- warm start -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", OPEN_SOLVERS)
def test_warm_start_is_accepted(name: str) -> None:
    model, optimum = knapsack()
    first = get_solver(name).solve(model)
    assert first.x is not None
    again = get_solver(name).solve(model, warm_start=first.x)
    assert again.status is SolveStatus.OPTIMAL
    assert again.objective == pytest.approx(optimum, abs=1e-6)
    with pytest.raises(ValueError):
        get_solver(name).solve(model, warm_start=first.x[:-1])


@pytest.mark.parametrize("name", OPEN_SOLVERS)
def test_time_limit_without_incumbent_returns_no_point(name: str) -> None:
    # With a limit of 0 (passed at the first clock check on any machine) neither solver has a feasible
    # point of this instance; CBC then writes its fractional LP point ("no integer solution - continuous
    # used"), which must not come back as a solution.
    model, _ = market_split()
    res = get_solver(name).solve(model, time_limit=0.0)
    assert res.status is SolveStatus.TIME_LIMIT, res
    assert res.x is None and res.objective is None and res.gap is None, res


@pytest.mark.parametrize("name", OPEN_SOLVERS)
def test_warm_start_gives_an_incumbent_under_a_tiny_time_limit(name: str) -> None:
    # Without the planted start neither solver has an incumbent at a limit of 0 (see the test above).
    model, planted = market_split()
    res = get_solver(name).solve(model, time_limit=0.0, warm_start=planted)
    assert res.status is SolveStatus.TIME_LIMIT, res
    assert res.x is not None, res
    assert model.max_violation(res.x) <= 1e-6
    assert res.objective is not None and res.objective <= model.objective_value(planted) + 1e-9


# --- Gurobi and the registry ---------------------------------------------------------------------


def test_gurobi_available_does_not_import_gurobipy() -> None:
    # In a fresh interpreter: importing pulp imports gurobipy when it is installed, so this process
    # may already hold it.
    code = (
        "import sys\n"
        "from llmopt.solvers.gurobi import GurobiSolver\n"
        "ok, why = GurobiSolver.available()\n"
        "assert 'gurobipy' not in sys.modules\n"
        "print(ok, why)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    from llmopt.solvers.base import package_installed

    if package_installed("gurobipy"):
        assert out.startswith("True")
    else:
        assert out.startswith("False") and "gurobipy is not installed" in out


def test_gurobi_matches_highs_when_licensed() -> None:
    ok, why = solver_status("gurobi")
    if not ok:
        pytest.skip(why)
    model = lp_model()
    res = get_solver("gurobi").solve(model)
    if res.status is SolveStatus.NOT_SOLVED:
        pytest.skip(res.message)  # no licence here
    ref = get_solver("highs").solve(model)
    assert res.status is SolveStatus.OPTIMAL
    assert res.objective == pytest.approx(ref.objective, abs=1e-7)
    assert res.duals is not None and ref.duals is not None
    np.testing.assert_allclose(res.duals, ref.duals, atol=1e-7)
    knap, optimum = knapsack()
    mip = get_solver("gurobi").solve(knap, warm_start=get_solver("highs").solve(knap).x)
    assert mip.status is SolveStatus.OPTIMAL and mip.objective == pytest.approx(optimum, abs=1e-6)


def test_gurobi_missing_package_is_not_solved(monkeypatch: pytest.MonkeyPatch) -> None:
    import llmopt.solvers.gurobi as gmod

    monkeypatch.setattr(gmod, "package_installed", lambda module: False)
    expected = "gurobipy is not installed (pip install 'llmopt[gurobi]')"
    assert gmod.GurobiSolver.available() == (False, expected)
    res = get_solver("gurobi").solve(lp_model())
    assert res.status is SolveStatus.NOT_SOLVED
    assert "gurobipy" in res.message
    assert res.objective is None and res.bound is None and res.x is None


def _fake_gurobipy(env_error: int | None, model_error: int | None) -> types.ModuleType:
    """A stand-in ``gurobipy`` whose environment or model creation fails with a Gurobi error code."""
    mod = types.ModuleType("gurobipy")

    class GurobiError(Exception):
        def __init__(self, errno: int, message: str) -> None:
            super().__init__(message)
            self.errno = errno

    class Env:
        disposed = False

        def __init__(self, empty: bool = False) -> None:
            pass

        def setParam(self, name: str, value: Any) -> None:
            pass

        def start(self) -> None:
            if env_error is not None:
                raise GurobiError(env_error, "No Gurobi license found")

        def dispose(self) -> None:
            Env.disposed = True

    def Model(name: str = "", env: Any = None) -> None:
        raise GurobiError(model_error or 10001, "Model too large for size-limited license")

    mod.GurobiError = GurobiError  # type: ignore[attr-defined]
    mod.Env = Env  # type: ignore[attr-defined]
    mod.Model = Model  # type: ignore[attr-defined]
    return mod


@pytest.mark.parametrize(
    ("env_error", "model_error", "needle"),
    [(10009, None, "licence"), (None, 10010, "size-limited")],
)
def test_gurobi_licence_problems_are_not_solved(
    monkeypatch: pytest.MonkeyPatch, env_error: int | None, model_error: int | None, needle: str
) -> None:
    import llmopt.solvers.gurobi as gmod

    fake = _fake_gurobipy(env_error, model_error)
    monkeypatch.setitem(sys.modules, "gurobipy", fake)
    monkeypatch.setattr(gmod, "package_installed", lambda module: True)
    res = gmod.GurobiSolver().solve(lp_model())
    assert res.status is SolveStatus.NOT_SOLVED
    assert needle in res.message
    assert res.objective is None and res.x is None
    assert fake.Env.disposed  # type: ignore[attr-defined]  # the environment is always released


def test_unknown_solver_lists_known_names() -> None:
    with pytest.raises(RegistryError) as err:
        get_solver("nope")
    for name in ("highs", "cbc", "gurobi"):
        assert name in str(err.value)
    with pytest.raises(RegistryError):
        solver_status("nope")


def test_registry_is_lazy_and_returns_instances() -> None:
    assert {"highs", "cbc", "gurobi"} <= set(SOLVERS.names())
    for name in ("highs", "cbc", "gurobi"):
        solver = get_solver(name)
        assert solver.info.name == name
        assert solver is not get_solver(name)
    code = (
        "import sys, llmopt.solvers as s\n"
        "s.solver_status('highs'); s.solver_status('cbc'); s.solver_status('gurobi')\n"
        "bad = [m for m in ('highspy', 'pulp', 'gurobipy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- CBC's printed bound, capabilities, versions ---------------------------------------------------


@pytest.mark.parametrize("true_bound", [12.3451, 12.3456, 12.3459, -7.0004, -7.0006, 1169.0, 0.0004])
def test_cbc_printed_bound_is_lowered_to_stay_valid(true_bound: float) -> None:
    """CBC prints its bound with "%.3f", which may round *up*; the parsed value must never exceed the
    true bound (a wrong sign on the print slack makes it exceed it) and stays within 1e-3 of it."""
    from llmopt.solvers.cbc import _parse_lower_bound

    log = f"Result - Stopped on time limit\n\nObjective value:    20.00000000\nLower bound: {true_bound:.3f}\n"
    parsed = _parse_lower_bound(log)
    assert parsed is not None
    assert true_bound - 1e-3 <= parsed <= true_bound
    assert _parse_lower_bound("no summary here") is None


def test_capabilities_and_pick_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    from llmopt.solvers import Capability, pick_solver, solver_versions
    from llmopt.solvers.base import SolverInfo, package_version

    for name in ("highs", "cbc", "gurobi"):
        info = SOLVERS.get(name).info
        assert isinstance(info, SolverInfo) and info.has(Capability.MIP, Capability.LP_DUALS)
    assert SOLVERS.get("highs").info.has(Capability.INTERRUPT)
    assert not SOLVERS.get("cbc").info.has(Capability.INTERRUPT)
    assert pick_solver(Capability.LP_DUALS) == "highs"
    assert pick_solver(Capability.LP_DUALS, prefer="cbc") == "cbc"
    assert pick_solver(Capability.INTERRUPT, prefer="cbc") == "highs"  # cbc lacks it: skipped

    SOLVERS.register("noduals", fake_solver("noduals", frozenset({Capability.MIP})))
    try:
        assert pick_solver(Capability.LP_DUALS, prefer="noduals") == "highs"
        assert pick_solver(Capability.MIP, prefer="noduals") == "noduals"
    finally:
        SOLVERS.unregister("noduals")
    versions = solver_versions()
    assert versions["highs"] == package_version("highspy") and versions["highs"]
    assert versions["cbc"] == package_version("pulp")


@pytest.mark.slow
def test_interrupted_highs_solve_returns_what_it_has(monkeypatch) -> None:
    """A KeyboardInterrupt while HiGHS runs cancels the solve and returns, within about a second, status
    interrupted with what it has (the incumbent if HiGHS stopped in time), instead of propagating."""
    import os
    import signal
    import time

    from llmopt.engine.discrete import simulate
    from llmopt.formulations.hindsight_ip import encode_starts, formulate
    from llmopt.model.windows import start_windows
    from llmopt.policies import make_policy
    from llmopt.workloads.jaillet import jaillet_am1

    inst = jaillet_am1(0)  # n = 58: HiGHS runs far longer than the first progress report
    mcsf = simulate(inst, make_policy("mc-sf"))
    model = formulate(inst, start_windows(inst, mcsf.tel))
    sent: list[str] = []

    def interrupt_once(line: str) -> None:
        # The first progress line comes from the adapter's wait loop, i.e. once HiGHS is solving:
        # the interrupt is sent then, not after a timer that a loaded machine could outrun.
        if not sent:
            sent.append(line)
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr("llmopt.solvers.highs.PROGRESS_EVERY_S", 0.0)
    with keyboard_interrupt_on_sigint():  # the runner may have been started with SIGINT ignored
        res = get_solver("highs").solve(model, time_limit=600, warm_start=encode_starts(inst, model, mcsf.starts),
                                        progress=interrupt_once)
    import highspy

    from llmopt.solvers.highs import _wait_for_earlier_solve

    assert _wait_for_earlier_solve(highspy, time.perf_counter(), 300)  # leave no solve running for later tests
    assert sent, "the solve never reported progress"
    assert res.status is SolveStatus.INTERRUPTED, res.message  # not TIME_LIMIT (600 s) nor OPTIMAL
    assert res.objective is None or res.objective <= mcsf.tel


@pytest.mark.slow
def test_highs_waits_for_a_cancelled_solve_that_is_still_stopping() -> None:
    """highspy runs one threaded solve per process at a time: while an earlier (cancelled) solve is
    still running, a new solve waits for it within its own time limit, and says so if it runs out."""
    import time

    import highspy

    from llmopt.formulations.hindsight_ip import formulate
    from llmopt.model.windows import start_windows
    from llmopt.solvers.highs import _wait_for_earlier_solve, highs_lp
    from llmopt.workloads.jaillet import jaillet_am1

    assert _wait_for_earlier_solve(highspy, time.perf_counter(), 300)
    inst = jaillet_am1(0)
    big = formulate(inst, start_windows(inst, 9474))
    old = highspy.Highs()
    old.setOptionValue("output_flag", False)
    old.setOptionValue("presolve", "off")
    old.passModel(highs_lp(highspy, big))
    old.HandleUserInterrupt = True
    old.startSolve()
    try:
        tiny = lp_model()
        res = get_solver("highs").solve(tiny, time_limit=1.0)
        assert res.status is SolveStatus.NOT_SOLVED and "still stopping" in res.message
    finally:
        old.cancelSolve()
        old.wait()
    res = get_solver("highs").solve(lp_model(), time_limit=10.0)
    assert res.status is SolveStatus.OPTIMAL


def test_highs_settings_switch_presolve_off_for_lps_and_large_mips_only() -> None:
    """llmopt's HiGHS tuning, checked without solving (the CLI test of a 2M-row LP relies on it and no
    longer times it). Breakage caught: ``LP_PRESOLVE = "on"``; the nnz limit compared with ``<``; the
    caller's options applied before llmopt's."""
    from llmopt.solvers.highs import PRESOLVE_NNZ_LIMIT, HighsSolver

    assert HighsSolver()._settings(lp_model())["presolve"] == "off"
    small = hard_mip()
    assert small.nnz <= PRESOLVE_NNZ_LIMIT and "presolve" not in HighsSolver()._settings(small)
    big = types.SimpleNamespace(is_mip=True, nnz=PRESOLVE_NNZ_LIMIT + 1)
    assert HighsSolver()._settings(big)["presolve"] == "off"  # type: ignore[arg-type]
    at_limit = types.SimpleNamespace(is_mip=True, nnz=PRESOLVE_NNZ_LIMIT)
    assert "presolve" not in HighsSolver()._settings(at_limit)  # type: ignore[arg-type]
    assert HighsSolver(presolve="on")._settings(lp_model())["presolve"] == "on"
