"""CP-SAT with a solution hint (``cp-sat``, ``cp-sat-lns``), and every search stage's best schedule kept.

The crash: OR-Tools 9.15.6755 (``ortools`` 9.15) raised ``IndexError: absl::btree_map::at`` inside
``CpSolver.solve`` on tiny instances with two or more identical requests (equal ``a, s, o``) and a
complete, feasible hint. Its symmetry presolve found the interchangeable start variables (an
orbitope) and then failed to carry the hint into the reduced model (``SolutionCrush``; OR-Tools
issues #5091 and #5288, same message, same version). The model now breaks that symmetry itself:
identical requests start in instance order (``k_i <= k_j``), and the hint's starts of each such
group are sorted to match (identical requests are interchangeable, so it stays feasible with the
same TEL). Presolve then finds no symmetry to exploit.

What is checked:

* the two instances on which the unfixed stage crashed (found by a seeded random search with
  MC-SF's hint; the 5-request one is the issue's shape) now solve, with the exhaustive OPT;
* ``llmopt solve --upper-bound cp-sat`` on the 5-request instance ends with exit code 0, no traceback;
* on random small instances with many duplicates and a policy hint (hypothesis), ``cp-sat`` and
  ``cp-sat-lns`` return a schedule the checker accepts, never worse than the hint and never below the
  exhaustive OPT;
* the hint handed to CP-SAT is a permutation of the given starts within each group of identical requests;
* every search stage returns a schedule whose starts the checker verifies at the TEL it reports, and
  the pipeline keeps the starts of the best one (``HindsightResult.starts``), not only its TEL.

Breakages tried by hand (each made the listed tests fail; the code was restored):

1. Order constraints dropped (``model.add(starts[first] <= starts[second])`` removed): the four
   ``crashing_instances_solve_to_opt`` cases, ``cli_solve_with_cp_sat_upper_bound`` and
   ``random_duplicates_with_a_policy_hint`` (``IndexError: absl::btree_map::at``).
2. Hint not sorted (``hinted = dict(hint.starts)``): ``the_hint_is_feasible_in_the_model`` (CP-SAT
   itself then treats the hint as infeasible and carries on, so the other tests still pass).
3. A group's domain topped by its first hinted start only: ``the_hint_is_feasible_in_the_model``.

4. The pipeline keeping the starts of the last verified schedule instead of the best's (``_Run.offer``
   replaced by monkeypatch in a scratch script, the module left untouched): ``pipeline_keeps_best_starts``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import exhaustive_opt, is_feasible, random_schedule, random_tiny_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance, save_instance
from llmopt.model.schedule import schedule_from_starts
from llmopt.opt import cp_sat
from llmopt.opt.upper_bounds import SearchContext, find_schedule
from llmopt.policies import make_policy
from llmopt.verify.checker import check_schedule

pytestmark = pytest.mark.skipif(not cp_sat.available(), reason="OR-Tools not installed")

#: 5 requests, three identical: the unfixed stage crashed with MC-SF's hint (starts 3, 4, 6, 7, 5).
CRASHED_5 = Instance.from_tuples(4, [(3, 3, 1), (3, 3, 1), (4, 2, 1), (3, 2, 2), (3, 3, 1)])
#: 6 requests, three identical; crashed with MC-SF's and FCFS's hints.
CRASHED_6 = Instance.from_tuples(5, [(2, 3, 1), (2, 3, 2), (2, 3, 1), (2, 3, 1), (3, 3, 1), (2, 2, 1)])


@pytest.mark.parametrize("inst", [CRASHED_5, CRASHED_6], ids=["n5", "n6"])
@pytest.mark.parametrize("stage", ["cp-sat", "cp-sat-lns"])
def test_the_crashing_instances_solve_to_opt(inst: Instance, stage: str):
    hint = simulate(inst, make_policy("mc-sf"))
    opt, _ = exhaustive_opt(inst, hint.tel)
    out = find_schedule(stage, inst, SearchContext(known={"mc-sf": hint}, cp_sat_seconds=5.0, lns_iterations=2))
    report = check_schedule(inst, out.starts)
    assert report.ok, report.violations
    assert report.tel == out.tel == opt


def test_the_5_request_instance_had_mcsf_hint_as_recorded():
    """The regression above exercises the recorded hint (MC-SF's), not some other one."""
    hint = simulate(CRASHED_5, make_policy("mc-sf"))
    assert dict(hint.starts) == {"r0": 3, "r1": 4, "r2": 6, "r3": 7, "r4": 5}


def test_cli_solve_with_cp_sat_upper_bound(tmp_path: Path):
    path = tmp_path / "five.json"
    save_instance(CRASHED_5, path)
    cmd = [sys.executable, "-c", "from llmopt.cli.main import app; app()", "solve", str(path),
           "--upper-bound", "mc-sf", "--upper-bound", "cp-sat", "--bound", "lp", "--json", "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "btree_map" not in proc.stderr
    out = json.loads(proc.stdout)
    assert out["objective"] == exhaustive_opt(CRASHED_5, 100)[0] and "cp-sat" in out["heuristics"]
    assert check_schedule(CRASHED_5, out["starts"]).tel == out["objective"]


def test_sorted_hint_is_a_permutation_per_group():
    groups = cp_sat._identical_groups(CRASHED_6)
    assert sorted(map(sorted, groups)) == [[0, 2, 3], [1], [4], [5]]
    starts = {"r0": 9, "r1": 7, "r2": 2, "r3": 5, "r4": 6, "r5": 4}
    hinted = cp_sat._sorted_hint(CRASHED_6, starts, groups)
    assert hinted == {"r0": 2, "r1": 7, "r2": 5, "r3": 9, "r4": 6, "r5": 4}


def test_accepts_an_idling_hint_of_identical_requests():
    """The later of two identical requests idles past its window; the group's domain must still hold the hint."""
    inst = Instance.from_tuples(10, [(0, 1, 2), (0, 1, 2), (0, 1, 2)])
    hint = schedule_from_starts(inst, {"r0": 9, "r1": 0, "r2": 0}, policy="idle")
    assert check_schedule(inst, hint.starts).ok
    out = cp_sat.cp_sat_schedule(inst, hint, seconds=2.0)
    assert check_schedule(inst, out.starts).ok and out.tel == 6


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), policy=st.sampled_from(["mc-sf", "fcfs"]),
       stage=st.sampled_from(["cp-sat", "cp-sat-lns"]))
def test_random_duplicates_with_a_policy_hint(seed: int, policy: str, stage: str):
    inst = random_tiny_instance(random.Random(seed), n_range=(3, 7), M_range=(4, 10), max_arrival=4, dup_prob=0.5)
    hint = simulate(inst, make_policy(policy))
    out = find_schedule(stage, inst, SearchContext(seed=seed, known={policy: hint}, cp_sat_seconds=1.0,
                                                   lns_iterations=2))
    report = check_schedule(inst, out.starts)
    assert report.ok, report.violations
    assert is_feasible(inst, out.starts)
    opt, _ = exhaustive_opt(inst, hint.tel)
    assert opt <= report.tel == out.tel <= hint.tel


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000))
def test_the_hint_is_feasible_in_the_model(seed: int):
    """CP-SAT with every start fixed to its hinted value finds the hint: the model admits it (a random
    feasible schedule, identical requests in any order, waits of 0–3 steps)."""
    from ortools.sat.python import cp_model

    inst = random_tiny_instance(random.Random(seed), n_range=(2, 7), M_range=(4, 10), max_arrival=4, dup_prob=0.5)
    starts = random_schedule(inst, np.random.default_rng(seed))
    hint = schedule_from_starts(inst, starts, policy="random")
    model, variables = cp_sat._staircase_model(inst, hint)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.fix_variables_to_their_hinted_value = True
    assert solver.solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    found = {r.id: int(solver.value(variables[i])) for i, r in enumerate(inst.requests)}
    assert found == cp_sat._sorted_hint(inst, starts, cp_sat._identical_groups(inst))
    assert sorted(found.values()) == sorted(starts.values())


SEARCH_STAGES = ("local-search", "lns", "cp-sat", "cp-sat-lns", "sgs-energy", "sgs-lagrangian")


@pytest.mark.parametrize("stage", SEARCH_STAGES)
def test_every_search_stage_returns_the_starts_of_its_tel(stage: str):
    inst = Instance.from_tuples(7, [(2, 3, 4), (2, 3, 4), (2, 1, 4), (2, 2, 2)])
    mcsf = simulate(inst, make_policy("mc-sf"))
    out = find_schedule(stage, inst, SearchContext(known={"mc-sf": mcsf}, search_evals=20, lns_iterations=3,
                                                   cp_sat_seconds=1.0))
    report = check_schedule(inst, out.starts)
    assert report.ok, report.violations
    assert report.tel == out.tel


def test_pipeline_keeps_best_starts():
    """The best schedule is found by a middle stage; the result keeps its starts, not the last stage's."""
    from llmopt.opt.hindsight import solve_hindsight

    inst = Instance.from_tuples(7, [(2, 3, 4), (2, 3, 4), (2, 1, 4), (2, 2, 2)])  # OPT 26, MC-SF 32, FCFS 34
    h = solve_hindsight(inst, upper_bounds=("mc-sf", "cp-sat", "fcfs"), search_evals=0, cp_sat_seconds=2.0,
                        bounds=("lp",), solve_ip=False)
    assert h.heuristics == {"mc-sf": 32, "cp-sat": 26, "fcfs": 34}
    assert h.incumbent == 26 and h.incumbent_source == "cp-sat"
    report = check_schedule(inst, h.starts)
    assert report.ok and report.tel == 26
