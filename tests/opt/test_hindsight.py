"""The hindsight pipeline of named stages (llmopt.opt.hindsight): heuristics, windows, IP, checker, bounds."""

from __future__ import annotations

import random

import pytest
from helpers import fake_solver, random_tiny_instance

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance, Request
from llmopt.model.registry import RegistryError
from llmopt.model.result import SolveStatus
from llmopt.model.tolerance import integer_lower_bound
from llmopt.model.windows import WINDOWS, StartWindows, start_windows
from llmopt.opt.bounds import BOUNDS, BoundContext, BoundResult, best_certified_bound, lp_bound, run_bound
from llmopt.opt.hindsight import BOUNDS_END, solve_hindsight
from llmopt.opt.local_search import local_search
from llmopt.policies import make_policy
from llmopt.solvers import SOLVERS
from llmopt.solvers.base import Capability
from llmopt.verify.checker import check_schedule
from llmopt.workloads.jaillet import jaillet_am1


def t5() -> Instance:
    # DIGEST T-5: MC-SF 13, OPT 12 (starts (0, 1, 3, 0)).
    return Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)])


def test_t5_opt_is_proven_and_beats_mcsf():
    lines: list[str] = []
    res = solve_hindsight(t5(), time_limit=30, progress=lines.append, bounds=("lp",))  # the LP leaves the IP work
    assert res.status is SolveStatus.OPTIMAL
    assert res.opt == 12 and res.incumbent == 12
    assert res.heuristics["mc-sf"] == 13
    assert res.bound == 12 and res.gap == 0 and res.errors == ()
    assert check_schedule(t5(), res.starts).tel == 12
    assert any("upper bounds" in ln for ln in lines) and any("IP" in ln for ln in lines)
    assert res.model_stats["formulation"] == "hindsight-ip" and res.model_stats["classes"] == 2


def test_time_limited_solve_is_not_called_optimal():
    # An IP limit of 0 has passed at HiGHS's first clock check on any machine, so the IP stops before
    # any search; the LP bound (no limit) stays below the best schedule (1972 vs 2714). The result must
    # say TIME_LIMIT and keep a valid incumbent.
    inst = jaillet_am1(3, n_range=(30, 30), M_range=(40, 40))
    res = solve_hindsight(inst, ip_time_limit=0.0, search_evals=20, bounds=("lp",))
    assert res.status is SolveStatus.TIME_LIMIT
    assert res.solver == "highs" and res.bound_certificate == "lp-dual-checked"
    assert res.opt is None
    assert res.incumbent <= res.heuristics["mc-sf"]
    assert check_schedule(inst, res.starts).tel == res.incumbent
    assert inst.total_output <= res.bound <= res.incumbent
    assert res.gap == pytest.approx((res.incumbent - res.bound) / res.incumbent)


def test_early_stop_falls_back_to_checked_lp_bound():
    # The MIP stops before its root LP (a limit of 0 has passed at HiGHS's first clock check, on any
    # machine); the bound must then come from the LP dual that the checker re-derived (not the
    # solver's trivial bound), and be no larger than the incumbent.
    inst = jaillet_am1(4, n_range=(25, 25), M_range=(40, 40))
    res = solve_hindsight(inst, ip_time_limit=0.0, search_evals=0, bounds=("lp",))
    assert res.status is SolveStatus.TIME_LIMIT
    assert res.bound_certificate == "lp-dual-checked"
    lp = lp_bound(inst, BoundContext(upper_bound_starts=res.starts))
    assert lp.verified and lp.value is not None
    assert res.bound == integer_lower_bound(lp.value)
    assert res.bound <= res.incumbent
    assert [b.name for b in res.bounds] == ["lp"] and res.bounds[0].verified


def test_bound_stage_solves_get_their_share_of_the_command_deadline(monkeypatch):
    """With a whole-pipeline budget the LP bound's solve must really end by its share of it
    (``BOUNDS_END``; HiGHS's own time limit is not checked in every phase), leaving the rest to the
    IP; without one it gets no hard deadline."""
    import time

    from llmopt.solvers.highs import HighsSolver

    seen = []
    real = HighsSolver.solve

    def spy(self, model, **kwargs):
        if not model.is_mip:
            seen.append(kwargs.get("deadline"))
        return real(self, model, **kwargs)

    monkeypatch.setattr(HighsSolver, "solve", spy)
    inst = jaillet_am1(4, n_range=(6, 6), M_range=(15, 15))
    t0 = time.perf_counter()
    solve_hindsight(inst, time_limit=40.0, search_evals=0)
    end = 40.0 * BOUNDS_END
    assert len(seen) == 1 and seen[0] is not None and t0 + end - 1.0 <= seen[0] <= time.perf_counter() + end
    solve_hindsight(inst, ip_time_limit=5.0, search_evals=0)
    assert len(seen) == 2 and seen[1] is None


def test_local_search_never_worse_and_deterministic():
    inst = jaillet_am1(5, n_range=(15, 15), M_range=(35, 35))
    start = simulate(inst, make_policy("mc-sf"))
    order = sorted(inst.ids, key=lambda i: (inst.by_id(i).output, inst.position(i)))
    a = local_search(inst, start, order, seed=1, time_budget_s=60, max_evals=50)
    b = local_search(inst, start, order, seed=1, time_budget_s=60, max_evals=50)
    assert a.tel <= start.tel
    assert a.starts == b.starts
    assert check_schedule(inst, a.starts).tel == a.tel


@pytest.mark.parametrize("seed", range(8))
def test_pipeline_matches_plain_ip_on_tiny_instances(seed):
    # The windows from heuristics must not cut off the optimum: compare with no heuristics/windows.
    from llmopt.formulations.hindsight_ip import formulate
    from llmopt.solvers import get_solver

    inst = random_tiny_instance(random.Random(1000 + seed), n_range=(3, 6))
    res = solve_hindsight(inst, time_limit=30, seed=seed)
    plain = get_solver("highs").solve(formulate(inst, aggregate=False), time_limit=30)
    assert res.status is SolveStatus.OPTIMAL and plain.status is SolveStatus.OPTIMAL
    assert res.opt == round(plain.objective)
    binary = solve_hindsight(inst, time_limit=30, seed=seed, formulation="hindsight-ip-binary",
                             upper_bounds=("fcfs",), windows="horizon", solver="cbc")
    assert binary.opt == res.opt
    # no IP when nobody waits, or when a bound stage (run first) already proves the best schedule
    skipped = res.opt == inst.total_output or "IP not run" in binary.message
    assert binary.solver == ("" if skipped else "cbc")


def test_unknown_stage_names_fail_before_any_work():
    for kwargs in ({"formulation": "nope"}, {"bounds": ("nope",)}, {"windows": "nope"}, {"solver": "nope"},
                   {"upper_bounds": ("nope",)}):
        with pytest.raises(RegistryError, match="nope"):
            solve_hindsight(t5(), **kwargs)


def test_no_waiting_means_optimal_without_an_ip():
    inst = Instance.from_tuples(10, [(0, 1, 2), (5, 2, 2)])
    res = solve_hindsight(inst)
    assert res.status is SolveStatus.OPTIMAL and res.opt == 4 and res.bound_certificate == "sum-of-outputs"
    assert res.model_stats == {}
    empty = solve_hindsight(Instance(10, ()))
    assert empty.status is SolveStatus.OPTIMAL and empty.opt == 0 and empty.gap == 0.0


def test_time_origin_costs_nothing():
    rows = [(0, 1, 1), (0, 1, 1), (0, 1, 3), (1, 1, 3)]
    shift = 1_700_000_000_000
    small = solve_hindsight(Instance.from_tuples(5, rows))
    big_inst = Instance.from_tuples(5, [(a + shift, s, o) for a, s, o in rows])
    big = solve_hindsight(big_inst)
    assert big.status is small.status is SolveStatus.OPTIMAL
    assert big.opt == small.opt and big.bound == small.bound
    assert min(big.starts.values()) >= shift
    assert check_schedule(big_inst, big.starts).tel == big.opt


@pytest.mark.slow
def test_huge_output_length_is_quick_and_model_size_is_checked_up_front():
    one = Instance(2_000_001 + 1, (Request("long", 0, 1, 2_000_000),))
    assert solve_hindsight(one).opt == 2_000_000  # no waiting: no model at all
    inst = jaillet_am1(0)
    lines: list[str] = []
    res = solve_hindsight(inst, max_nnz=1000, search_evals=0, progress=lines.append, bounds=("lp",))
    assert res.status is SolveStatus.NOT_SOLVED and res.model_stats == {}
    assert "IP skipped" in res.message and "nonzeros" in res.message and "--max-nnz" in res.message
    assert res.bounds[0].value is None and "skipped" in res.bounds[0].detail
    assert res.bound == inst.total_output and res.bound_certificate == "sum-of-outputs"


# --- the certificate chain has no trusted input -------------------------------------------------------


@pytest.fixture
def fake_stages():
    def bogus(instance, ctx):
        return BoundResult("bogus", 10_000.0, "bogus-certificate", True, "claims too much", 10_000.0)

    def tight(instance, lo_hi_ub=None):
        w = start_windows(instance, lo_hi_ub)
        return StartWindows(w.lo, tuple(lo for lo in w.lo), max(lo + r.output for lo, r in
                                                                  zip(w.lo, instance.requests)), "starts at arrival")

    BOUNDS.register("test-bogus", bogus)
    # a MIP solver that never finds anything, and one that claims a bound far above every schedule
    SOLVERS.register("test-stuck", fake_solver("stuck", frozenset({Capability.MIP})))
    SOLVERS.register("test-lying", fake_solver("lying", frozenset({Capability.MIP}), bound=10_000.0))
    WINDOWS.register("test-arrival-only", tight)
    yield
    BOUNDS.unregister("test-bogus")
    SOLVERS.unregister("test-stuck")
    SOLVERS.unregister("test-lying")
    WINDOWS.unregister("test-arrival-only")


def test_a_bound_above_the_incumbent_is_an_error_never_a_proof(fake_stages):
    res = solve_hindsight(t5(), solver="test-stuck", bounds=("test-bogus",))
    assert res.status is SolveStatus.TIME_LIMIT and res.opt is None
    assert res.incumbent == 12 and res.bound < 12
    assert any("exceeds the verified incumbent" in e and "bogus-certificate" in e for e in res.errors)


def test_a_solver_bound_is_used_only_over_windows_the_checker_accepts(fake_stages):
    # The lying solver's bound exceeds the incumbent: reported, not used.
    res = solve_hindsight(t5(), solver="test-lying", bounds=())
    assert res.opt is None and any("mip-bound-from-solver" in e for e in res.errors)
    # Windows that start every request at its arrival do not contain the checker's windows, so even an
    # honest solver's optimum over them proves nothing: T-5's optimum needs waiting.
    res = solve_hindsight(t5(), windows="test-arrival-only", bounds=())
    assert "do not contain the checker's windows" in res.message
    assert res.bound_certificate != "mip-bound-from-solver"
    assert res.opt is None or res.opt == 12


def test_a_bound_that_meets_the_best_schedule_skips_the_ip(monkeypatch):
    """The bound stages run before the IP: when one proves the best schedule optimal (``zone-lp`` on
    J AM1 n = 6, M = 40, exhaustive OPT 240 in ``tests/formulations/test_zones.py``) no model is built; when none
    does (``lp`` alone is below 200 there), the IP runs and proves it."""
    from llmopt.solvers.highs import HighsSolver

    mips = []
    real = HighsSolver.solve

    def spy(self, model, **kwargs):
        if model.is_mip:
            mips.append(model.name)
        return real(self, model, **kwargs)

    monkeypatch.setattr(HighsSolver, "solve", spy)
    inst = jaillet_am1(0, n_range=(6, 6), M_range=(40, 40))
    proven = solve_hindsight(inst, bounds=("lp", "zone-lp"), search_evals=0, ip_time_limit=60)
    assert proven.status is SolveStatus.OPTIMAL and proven.opt == 240
    assert proven.bound_certificate == "zone-lp-dual-checked" and "IP not run" in proven.message
    assert mips == [] and proven.model_stats == {} and proven.solver == ""
    plain = solve_hindsight(inst, bounds=("lp",), search_evals=0, ip_time_limit=60)
    assert plain.status is SolveStatus.OPTIMAL and plain.opt == 240
    assert len(mips) == 1 and plain.bound_certificate == "mip-bound-from-solver"


# --- the last line between a bound and a claim of optimality: exact edges -------------------------


@pytest.fixture
def fixed_bound():
    """Registers ``test-fixed-<v>`` bound stages that claim exactly ``v`` (T-5: incumbent 12 = OPT)."""
    names = []

    def make(value: float) -> str:
        name = f"test-fixed-{value}"

        def stage(instance, ctx):
            return BoundResult(name, value, f"fixed-{value}", True, "a fixed value", value)

        BOUNDS.register(name, stage)
        names.append(name)
        return name

    yield make
    for name in names:
        BOUNDS.unregister(name)


def test_best_certified_bound_refuses_incumbent_plus_one_and_takes_the_incumbent():
    """Breakage caught: ``llmopt/opt/bounds.py`` ``if incumbent is not None and b > incumbent:`` →
    ``b > incumbent + 1`` (the guard loosened by one)."""
    assert best_certified_bound([(12.0, "eq")], 12) == (12, "eq", [])
    bound, cert, errors = best_certified_bound([(8.0, "sum"), (13.0, "above")], 12)
    assert (bound, cert) == (8, "sum")
    assert len(errors) == 1 and "certified bound 13 (above) exceeds the verified incumbent 12" in errors[0]
    # round-off above the incumbent is still the incumbent, not a contradiction
    assert best_certified_bound([(12.0000004, "eq")], 12) == (12, "eq", [])


def test_pipeline_refuses_a_bound_one_above_the_incumbent(fixed_bound, fake_stages):
    """A bound stage erring by one (13 on T-5, whose verified incumbent 12 is OPT) is an error, never a
    proof; the same stage claiming exactly 12 proves the incumbent optimal without the IP.

    Breakage caught: ``llmopt/opt/bounds.py`` ``if incumbent is not None and b > incumbent:`` →
    ``b > incumbent + 1`` (then 13 is taken and "proven OPT" is reported with no error).
    """
    res = solve_hindsight(t5(), solver="test-stuck", bounds=(fixed_bound(13.0),))
    assert res.incumbent == 12 and res.opt is None and res.status is SolveStatus.TIME_LIMIT
    assert res.bound == 8 and res.bound_certificate == "sum-of-outputs"
    assert len(res.errors) == 1 and "exceeds the verified incumbent 12" in res.errors[0]
    ok = solve_hindsight(t5(), solver="test-stuck", bounds=(fixed_bound(12.0),))
    assert ok.status is SolveStatus.OPTIMAL and ok.opt == 12 and ok.bound == 12
    assert ok.bound_certificate == "fixed-12.0" and ok.errors == () and "IP not run" in ok.message


def test_a_bound_one_below_the_incumbent_proves_nothing(fixed_bound, fake_stages):
    """TEL is integral, so ``bound = incumbent − 1`` leaves a gap of one: not optimal, and the IP must
    still run (T-5: incumbent 12; a stage claiming 11; the stuck solver then ends with its time limit).

    Breakage caught: ``llmopt/opt/hindsight.py`` ``opt = self.incumbent if bound >= self.incumbent else
    None`` → ``bound >= self.incumbent - 1`` (status OPTIMAL); also ``proven()``'s ``>= self.incumbent``
    → ``>= self.incumbent - 1`` (IP skipped, status NOT_SOLVED).
    """
    res = solve_hindsight(t5(), solver="test-stuck", bounds=(fixed_bound(11.0),))
    assert res.status is SolveStatus.TIME_LIMIT and res.opt is None
    assert res.incumbent == 12 and res.bound == 11 and res.bound_certificate == "fixed-11.0"
    assert res.gap == pytest.approx(1 / 12) and res.errors == ()
    assert res.solver == "stuck" and res.model_stats  # the IP was built and run


# --- a Ctrl-C wrapped in another exception still stops ----------------------------------------------


def _wrapped_interrupt(depth: int) -> Exception:
    """What a Ctrl-C during a pybind11 module's init becomes (``ImportError`` raised from the
    ``KeyboardInterrupt``), wrapped ``depth - 1`` more times as a plug-in might (``raise X from exc``)."""
    try:
        try:
            raise KeyboardInterrupt("SIGINT")
        except KeyboardInterrupt as ki:
            raise ImportError("initialization failed") from ki
    except ImportError as exc:
        outer: Exception = exc
    for _ in range(depth - 1):
        try:
            raise RuntimeError("solver unavailable") from outer
        except RuntimeError as exc:
            outer = exc
    return outer


@pytest.fixture
def raising_bound():
    """Registers ``test-raises`` whose provider raises what the test hands it."""
    box: list[BaseException] = []

    def stage(instance, ctx):
        raise box[0]

    BOUNDS.register("test-raises", stage)
    yield box
    BOUNDS.unregister("test-raises")


@pytest.mark.parametrize("depth", [1, 2])
def test_run_bound_reraises_a_ctrl_c_that_arrives_as_an_import_error(raising_bound, depth):
    raising_bound.append(_wrapped_interrupt(depth))
    with pytest.raises(KeyboardInterrupt) as info:
        run_bound("test-raises", t5())
    assert info.value.args == ("SIGINT",)  # the original interrupt, signal name kept


def test_run_bound_still_records_an_import_error_without_an_interrupt(raising_bound):
    try:
        try:
            raise ValueError("bad wheel")
        except ValueError as cause:
            raise ImportError("initialization failed") from cause
    except ImportError as exc:
        raising_bound.append(exc)
    res = run_bound("test-raises", t5())
    assert res.value is None and res.detail == "failed: ImportError: initialization failed"


def test_a_ctrl_c_inside_a_stage_import_ends_the_pipeline_as_interrupted(raising_bound, fake_stages):
    """The pipeline keeps what it found and says interrupted (the CLI turns that into exit 130:
    ``tests/cli/test_stops.py``); before, the bound stage was recorded as failed and the IP ran."""
    raising_bound.append(_wrapped_interrupt(1))
    res = solve_hindsight(t5(), solver="test-stuck", bounds=("test-raises",))
    assert res.status is SolveStatus.INTERRUPTED and res.incumbent == 12
    assert res.bounds == () and res.solver == ""  # no stage recorded the failure; the IP never ran
