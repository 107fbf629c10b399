"""The upper-bound stage ``cp-sat-lns`` (:func:`llmopt.opt.cp_sat.cp_sat_lns`) and ``lns`` run after ``cp-sat``.

What is checked, against independent parts (the checker, exhaustive search of the test helpers):

* on tiny instances, ``cp-sat-lns`` hinted with FCFS returns a schedule the checker accepts, with the
  exhaustive OPT as its TEL;
* it never returns worse than its hint: on random instances with almost no CP-SAT time, and when the
  hint is already optimal; a deadline already past returns the hint itself;
* its ``lns`` step starts from CP-SAT's schedule (the ``start`` that ``lns`` receives is the one
  :func:`~llmopt.opt.cp_sat.cp_sat_schedule` returns for the same hint and seed; with no sub-IPs the
  stage returns CP-SAT's schedule);
* it is deterministic for a seed;
* the plain ``lns`` stage run after ``cp-sat`` in the pipeline starts from CP-SAT's schedule when
  CP-SAT improved on the earlier stages (:func:`~llmopt.opt.upper_bounds.best_verified` picks the
  lowest verified TEL), and is never worse than it.

Breakages tried by hand (each made the listed tests fail; the code was restored):

1. ``cp_sat_lns`` returning the hint unconditionally: ``is_opt_on_tiny`` (8 of 12: the instances where
   FCFS is not optimal), ``lns_step_starts_from_cp_sat``, ``no_sub_ips_returns_cp_sat``.
2. ``cp_sat_lns`` seeding ``lns`` from the hint instead of CP-SAT's schedule: ``lns_step_starts_from_cp_sat``,
   ``no_sub_ips_returns_cp_sat``.
3. ``lns_stage`` starting from MC-SF's schedule instead of ``best_verified``:
   ``plain_lns_after_cp_sat_starts_from_cp_sat`` and ``plain_lns_after_cp_sat_never_worse`` (1 of 6).
4. ``cp_sat_lns`` not passing ``deadline`` to CP-SAT: ``past_deadline_returns_the_hint``.

(Breakage 2 leaves ``is_opt_on_tiny`` passing: 5 sub-IPs from FCFS reach OPT on these tiny instances.)
"""

from __future__ import annotations

import random
import time

import pytest
from helpers import exhaustive_opt, random_tiny_instance

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance
from llmopt.model.schedule import Schedule, schedule_from_starts
from llmopt.opt import cp_sat
from llmopt.opt.hindsight import upper_bound_schedules
from llmopt.opt.upper_bounds import UPPER_BOUNDS, SearchContext, find_schedule
from llmopt.policies import make_policy
from llmopt.verify.checker import check_schedule

pytestmark = pytest.mark.skipif(not cp_sat.available(), reason="OR-Tools not installed")

#: Neither policy is optimal here (exhaustive search: OPT 26, MC-SF 32, FCFS 34).
SUBOPTIMAL = Instance.from_tuples(7, [(2, 3, 4), (2, 3, 4), (2, 1, 4), (2, 2, 2)])


def _tiny(seed: int) -> Instance:
    return random_tiny_instance(random.Random(seed), n_range=(3, 6), M_range=(5, 10), max_arrival=3)


def _stage(inst: Instance, known: dict[str, Schedule], *, seconds: float = 5.0, iterations: int = 5,
           seed: int = 0, deadline: float | None = None) -> Schedule:
    ctx = SearchContext(seed=seed, known=known, cp_sat_seconds=seconds, lns_iterations=iterations, deadline=deadline)
    return find_schedule("cp-sat-lns", inst, ctx)


def test_stage_is_registered():
    assert "cp-sat-lns" in UPPER_BOUNDS.names()


@pytest.mark.parametrize("seed", range(12))
def test_is_opt_on_tiny(seed: int):
    inst = _tiny(seed)
    hint = simulate(inst, make_policy("fcfs"))
    opt, _ = exhaustive_opt(inst, hint.tel)
    out = _stage(inst, {"fcfs": hint})
    report = check_schedule(inst, out.starts)
    assert report.ok, report.violations
    assert report.tel == out.tel == opt
    assert out.policy.startswith("cp-sat-lns(")


def test_suboptimal_is_what_it_says():
    mcsf, fcfs = (simulate(SUBOPTIMAL, make_policy(p)) for p in ("mc-sf", "fcfs"))
    assert (exhaustive_opt(SUBOPTIMAL, fcfs.tel)[0], mcsf.tel, fcfs.tel) == (26, 32, 34)


def test_tiny_set_has_suboptimal_hints():
    """The OPT test above would pass with the hint returned as is unless some hints are suboptimal."""
    worse = 0
    for seed in range(12):
        inst = _tiny(seed)
        hint = simulate(inst, make_policy("fcfs"))
        worse += exhaustive_opt(inst, hint.tel)[0] < hint.tel
    assert worse >= 3


@pytest.mark.parametrize("seed", range(8))
def test_never_worse_than_hint_with_almost_no_time(seed: int):
    inst = random_tiny_instance(random.Random(100 + seed), n_range=(6, 10), M_range=(8, 16), max_arrival=8)
    hint = simulate(inst, make_policy("mc-sf"))
    out = _stage(inst, {"mc-sf": hint}, seconds=0.001, iterations=3, seed=seed)
    report = check_schedule(inst, out.starts)
    assert report.ok, report.violations
    assert report.tel == out.tel <= hint.tel


@pytest.mark.parametrize("seed", range(4))
def test_never_worse_than_an_optimal_hint(seed: int):
    inst = _tiny(seed)
    opt, starts = exhaustive_opt(inst, simulate(inst, make_policy("fcfs")).tel)
    hint = schedule_from_starts(inst, starts, policy="exhaustive")
    out = _stage(inst, {"opt": hint}, seconds=1.0, iterations=5, seed=seed)
    assert check_schedule(inst, out.starts).ok
    assert out.tel == opt


def test_past_deadline_returns_the_hint():
    hint = simulate(SUBOPTIMAL, make_policy("fcfs"))
    out = _stage(SUBOPTIMAL, {"fcfs": hint}, deadline=time.perf_counter() - 1.0)
    assert dict(out.starts) == dict(hint.starts)


def test_lns_step_starts_from_cp_sat(monkeypatch):
    """The ``start`` handed to ``lns`` is CP-SAT's schedule for this hint and seed (CP-SAT is deterministic)."""
    from llmopt.opt import lns as lns_module

    hint = simulate(SUBOPTIMAL, make_policy("fcfs"))
    expected = cp_sat.cp_sat_schedule(SUBOPTIMAL, hint, seconds=2.0, seed=3)
    assert expected.tel < hint.tel  # so a start from the hint would be told apart
    seen: list[Schedule] = []
    real = lns_module.lns

    def spy(instance: Instance, start: Schedule, **kw: object) -> Schedule:
        seen.append(start)
        return real(instance, start, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(lns_module, "lns", spy)
    out = _stage(SUBOPTIMAL, {"fcfs": hint}, seconds=2.0, iterations=4, seed=3)
    assert len(seen) == 1
    assert dict(seen[0].starts) == dict(expected.starts)
    assert check_schedule(SUBOPTIMAL, out.starts).ok and out.tel <= expected.tel


def test_no_sub_ips_returns_cp_sat():
    hint = simulate(SUBOPTIMAL, make_policy("fcfs"))
    expected = cp_sat.cp_sat_schedule(SUBOPTIMAL, hint, seconds=2.0, seed=1)
    out = _stage(SUBOPTIMAL, {"fcfs": hint}, seconds=2.0, iterations=0, seed=1)
    assert expected.tel < hint.tel
    assert dict(out.starts) == dict(expected.starts)


def test_is_deterministic():
    from llmopt.workloads import make_instance

    inst = make_instance("jaillet-am1", seed=0, n_range=(14, 14), M_range=(30, 30))
    mcsf = simulate(inst, make_policy("mc-sf"))
    first = _stage(inst, {"mc-sf": mcsf}, seconds=0.5, iterations=8, seed=5)
    second = _stage(inst, {"mc-sf": mcsf}, seconds=0.5, iterations=8, seed=5)
    assert dict(first.starts) == dict(second.starts) and first.policy == second.policy
    assert check_schedule(inst, first.starts).ok and first.tel <= mcsf.tel


def test_plain_lns_after_cp_sat_starts_from_cp_sat():
    """With no sub-IPs, ``lns`` returns its start: after an improving ``cp-sat`` that is CP-SAT's schedule."""
    found = upper_bound_schedules(SUBOPTIMAL, stages=("mc-sf", "fcfs", "cp-sat", "lns"), lns_iterations=0,
                                  cp_sat_seconds=2.0)
    assert found["cp-sat"].tel < min(found["mc-sf"].tel, found["fcfs"].tel)
    assert dict(found["lns"].starts) == dict(found["cp-sat"].starts)


@pytest.mark.parametrize("seed", range(6))
def test_plain_lns_after_cp_sat_never_worse(seed: int):
    inst = random_tiny_instance(random.Random(200 + seed), n_range=(5, 9), M_range=(8, 14), max_arrival=6)
    found = upper_bound_schedules(inst, seed=seed, stages=("mc-sf", "cp-sat", "lns"), lns_iterations=5,
                                  cp_sat_seconds=0.2)
    assert check_schedule(inst, found["lns"].starts).ok
    assert found["lns"].tel <= found["cp-sat"].tel <= found["mc-sf"].tel
