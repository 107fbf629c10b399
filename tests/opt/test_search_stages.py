"""The schedule-finding stages of issue 9: ``lns`` (:mod:`llmopt.opt.lns`) and ``cp-sat`` (:mod:`llmopt.opt.cp_sat`).

What is checked, against independent parts (the test helpers' memory model, the checker,
exhaustive search):

* :func:`~llmopt.model.schedule.schedule_from_starts` rebuilds a schedule whose memory trace, completions
  and TEL equal the helpers' model of DESIGN §1.
* LNS keeps every schedule feasible (checker) and never raises TEL, on random instances with
  arrivals, from several start schedules (hypothesis) — this exercises the fixed requests' memory
  being subtracted from ``M`` in the sub-IP; it is deterministic for a seed; freeing every request
  with a window wide enough makes one iteration the whole IP, which must hit the exhaustive OPT;
  it improves MC-SF on an instance where MC-SF is not optimal.
* CP-SAT proves the exhaustive OPT on tiny instances, never returns worse than its hint, and says
  clearly when OR-Tools is missing.

Breakages tried by hand (each made the listed tests fail; the code was restored):

1. ``_add_usage`` one step early (``lo = ki − origin``): the fixed requests' memory is misplaced, and
   LNS returns schedules the checker rejects (``lns_keeps_feasible``, ``lns_improves_a_suboptimal_start``).
2. The sub-IP's token times off by one (``j − 1`` for ``j``): ``one_iteration_with_all_free_is_opt``
   and ``lns_keeps_feasible``.
3. Windows that exclude later starts (``hi = max(lo, k − 1)``): ``one_iteration_with_all_free_is_opt``
   (9 of 25) and ``lns_stage_uses_its_iterations_and_a_verified_start``.
4. CP-SAT demand ``s + j − 1``: schedules over memory, rejected by the checker
   (``cp_sat_proves_opt_on_tiny``).
5. ``schedule_from_starts`` completions ``k + o − 1``: ``schedule_from_starts_matches_model``.
6. ``catch_sigint_signal = True`` (OR-Tools' default): ``cp_sat_leaves_ctrl_c_working`` ends the
   pytest session with exit code 130, as the HiGHS interrupt tests did in the full run.
"""

from __future__ import annotations

import random

import pytest
from helpers import exhaustive_opt, memory_profile, random_tiny_instance, tel_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance
from llmopt.model.schedule import schedule_from_starts
from llmopt.opt import cp_sat
from llmopt.opt.lns import lns
from llmopt.opt.upper_bounds import UPPER_BOUNDS, SearchContext, find_schedule
from llmopt.policies import make_policy
from llmopt.verify.checker import check_schedule


def _tiny(seed: int, max_arrival: int = 3) -> Instance:
    return random_tiny_instance(random.Random(seed), n_range=(2, 5), M_range=(5, 10), max_arrival=max_arrival)


@pytest.mark.parametrize("seed", range(20))
def test_schedule_from_starts_matches_model(seed: int):
    inst = _tiny(seed)
    starts = dict(simulate(inst, make_policy("fcfs")).starts)
    sch = schedule_from_starts(inst, starts, policy="x")
    assert sch.tel == tel_of(inst, starts)
    assert dict(sch.completions) == {r.id: starts[r.id] + r.output for r in inst.requests}
    model = memory_profile(inst, starts)
    assert [sch.memory_at(t) for t in range(1, len(model) + 1)] == model


@pytest.mark.parametrize("seed", range(25))
def test_one_iteration_with_all_free_is_opt(seed: int):
    """Free every request, window wide enough: the repair is the whole IP, so it returns OPT."""
    inst = _tiny(seed)
    start = simulate(inst, make_policy("fcfs"))
    opt, _ = exhaustive_opt(inst, start.tel)
    out = lns(inst, start, iterations=1, free=inst.n, span=start.tel + 1)
    assert check_schedule(inst, out.starts).ok
    assert out.tel == opt


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), policy=st.sampled_from(["fcfs", "mc-sf"]), free=st.integers(1, 3),
       span=st.integers(0, 6))
def test_lns_keeps_feasible_and_never_worse(seed: int, policy: str, free: int, span: int):
    inst = random_tiny_instance(random.Random(seed), n_range=(3, 7), M_range=(6, 14), max_arrival=6)
    start = simulate(inst, make_policy(policy))
    out = lns(inst, start, iterations=8, seed=seed, free=free, span=span)
    report = check_schedule(inst, out.starts)
    assert report.ok, report.violations
    assert report.tel == out.tel <= start.tel


def test_lns_is_deterministic():
    from llmopt.workloads import make_instance

    inst = make_instance("jaillet-am1", seed=0, n_range=(12, 12), M_range=(30, 30))
    start = simulate(inst, make_policy("mc-sf"))
    first = lns(inst, start, iterations=15, seed=3)
    second = lns(inst, start, iterations=15, seed=3)
    assert dict(first.starts) == dict(second.starts)
    assert check_schedule(inst, first.starts).ok
    assert first.tel <= start.tel
    assert first.policy == "lns(15 iterations)"


def test_lns_improves_a_suboptimal_start():
    """FCFS is far from OPT on this instance; LNS must close most of the distance."""
    inst = Instance.from_tuples(10, [(0, 2, 8), (0, 1, 2), (0, 1, 2), (0, 1, 3), (1, 1, 2), (2, 2, 6)])
    start = simulate(inst, make_policy("fcfs"))
    opt, _ = exhaustive_opt(inst, start.tel)
    out = lns(inst, start, iterations=30, seed=0, free=3, span=10)
    assert check_schedule(inst, out.starts).ok
    assert opt <= out.tel < start.tel


def test_lns_stage_starts_from_best_known():
    inst = _tiny(7)
    fcfs = simulate(inst, make_policy("fcfs"))
    mcsf = simulate(inst, make_policy("mc-sf"))
    best = min((fcfs, mcsf), key=lambda s: s.tel)
    out = find_schedule("lns", inst, SearchContext(known={"fcfs": fcfs, "mc-sf": mcsf}, lns_iterations=0))
    assert out.tel == best.tel


def test_stages_are_registered():
    assert {"lns", "cp-sat"} <= set(UPPER_BOUNDS.names())


needs_ortools = pytest.mark.skipif(not cp_sat.available(), reason="OR-Tools not installed")


@needs_ortools
@pytest.mark.parametrize("seed", range(15))
def test_cp_sat_proves_opt_on_tiny(seed: int):
    inst = _tiny(seed)
    hint = simulate(inst, make_policy("fcfs"))
    opt, _ = exhaustive_opt(inst, hint.tel)
    out = cp_sat.cp_sat_schedule(inst, hint, seconds=5.0)
    assert check_schedule(inst, out.starts).ok
    assert out.tel == opt
    assert out.policy == "cp-sat(optimal)" or out.tel == hint.tel


@needs_ortools
def test_cp_sat_never_worse_than_hint_with_no_time():
    from llmopt.workloads import make_instance

    inst = make_instance("jaillet-am1", seed=2, n_range=(20, 20), M_range=(40, 40))
    hint = simulate(inst, make_policy("mc-sf"))
    out = cp_sat.cp_sat_schedule(inst, hint, seconds=0.01)
    assert check_schedule(inst, out.starts).ok
    assert out.tel <= hint.tel


def test_cp_sat_without_ortools_says_so(monkeypatch):
    monkeypatch.setattr(cp_sat, "available", lambda: False)
    inst = _tiny(0)
    with pytest.raises(RuntimeError, match="needs OR-Tools"):
        cp_sat.cp_sat_schedule(inst, simulate(inst, make_policy("fcfs")), seconds=1.0)


def test_cp_sat_refuses_huge_models(monkeypatch):
    monkeypatch.setattr(cp_sat, "MAX_TOKENS", 5)
    inst = Instance.from_tuples(20, [(0, 1, 4), (0, 1, 4)])
    with pytest.raises(ValueError, match="MAX_TOKENS"):
        cp_sat.cp_sat_schedule(inst, simulate(inst, make_policy("fcfs")), seconds=1.0)


@needs_ortools
def test_cp_sat_leaves_ctrl_c_working():
    """OR-Tools by default installs a C-level SIGINT handler that outlives the solve and swallows
    the Ctrl-C the pipeline relies on (found when the HiGHS interrupt tests failed after this
    module ran). After a CP-SAT solve, SIGINT must still raise KeyboardInterrupt."""
    import os
    import signal
    import time

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        inst = _tiny(1)
        cp_sat.cp_sat_schedule(inst, simulate(inst, make_policy("fcfs")), seconds=1.0)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(2.0)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_lns_stage_uses_its_iterations_and_a_verified_start():
    """The stage starts from the best schedule the checker accepts — not from a cheaper infeasible one —
    and runs ``ctx.lns_iterations`` sub-IPs."""
    inst = Instance.from_tuples(10, [(0, 2, 8), (0, 1, 2), (0, 1, 2), (0, 1, 3), (1, 1, 2), (2, 2, 6)])
    fcfs = simulate(inst, make_policy("fcfs"))
    everyone_at_arrival = schedule_from_starts(inst, {r.id: r.arrival for r in inst.requests}, policy="bogus")
    assert not check_schedule(inst, everyone_at_arrival.starts).ok and everyone_at_arrival.tel < fcfs.tel
    known = {"fcfs": fcfs, "bogus": everyone_at_arrival}
    out = find_schedule("lns", inst, SearchContext(known=known, lns_iterations=30, seed=0))
    assert out.policy == "lns(30 iterations)"
    assert check_schedule(inst, out.starts).ok
    assert out.tel < fcfs.tel


def test_lns_stops_at_a_past_deadline():
    import time

    inst = _tiny(3)
    start = simulate(inst, make_policy("fcfs"))
    out = lns(inst, start, iterations=50, deadline=time.perf_counter() - 1.0)
    assert out.policy == "lns(0 iterations)" and dict(out.starts) == dict(start.starts)


def test_pipeline_runs_the_new_stages():
    from llmopt.opt.hindsight import solve_hindsight

    inst = Instance.from_tuples(10, [(0, 2, 8), (0, 1, 2), (0, 1, 2), (0, 1, 3), (1, 1, 2), (2, 2, 6)])
    h = solve_hindsight(inst, upper_bounds=("fcfs", "lns", "cp-sat"), search_evals=0, lns_iterations=5,
                        cp_sat_seconds=2.0, bounds=("lp",), solve_ip=False)
    assert set(h.heuristics) == {"fcfs", "lns", "cp-sat"}
    assert h.heuristics["lns"] <= h.heuristics["fcfs"] and h.heuristics["cp-sat"] <= h.heuristics["lns"]
    opt, _ = exhaustive_opt(inst, h.heuristics["fcfs"])
    assert h.incumbent == opt  # CP-SAT proves tiny instances


def test_cp_sat_accepts_an_idling_hint():
    """A feasible hint that idles may start past the completion-horizon window; CP-SAT must still use it."""
    inst = Instance.from_tuples(10, [(0, 1, 2), (0, 1, 2)])
    hint = schedule_from_starts(inst, {"r0": 0, "r1": 3} if inst.ids == ("r0", "r1") else
                                {inst.ids[0]: 0, inst.ids[1]: 3}, policy="idle")
    assert check_schedule(inst, hint.starts).ok
    out = cp_sat.cp_sat_schedule(inst, hint, seconds=2.0)
    assert out.tel == 4  # both start at 0: 2 + 2
