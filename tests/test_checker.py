"""The independent checker: schedule feasibility/TEL and weak-duality certificates."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import llmopt.checker as checker_mod
from llmopt.checker import CheckReport, certificate_horizon, check_lower_bound_certificate, check_schedule
from llmopt.instance import Instance
from llmopt.policies import make_policy
from llmopt.simulator import simulate

# --- independence ----------------------------------------------------------------------------


def test_checker_imports_only_the_instance_module():
    tree = ast.parse(Path(checker_mod.__file__).read_text())
    mods = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports in the checker"
            mods.add(node.module)
    llmopt_mods = {m for m in mods if m.split(".")[0] == "llmopt"}
    assert llmopt_mods == {"llmopt.instance"}
    assert mods <= {"llmopt.instance", "numpy", "numbers", "dataclasses", "typing", "collections.abc",
                    "__future__"}


# --- feasible schedules ------------------------------------------------------------------------


def test_t17_growing_memory_co_scheduling_feasible():
    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 2, 6)])
    rep = check_schedule(inst, {"r0": 0, "r1": 0})
    assert isinstance(rep, CheckReport)
    assert rep.ok and rep.violations == ()
    assert rep.memory == (6, 8, 10, 6, 7, 8)
    assert rep.makespan == 6 and rep.tel == 9 and rep.peak_memory == 10


def test_t17_overflow_at_exactly_one_time():
    inst = Instance.from_tuples(9, [(0, 2, 3), (0, 2, 6)])
    rep = check_schedule(inst, {"r0": 0, "r1": 0})
    assert not rep.ok and rep.tel is None
    assert rep.violations == ("memory at time 3 is 10 > M = 9 (running: r0, r1)",)
    assert rep.memory == (6, 8, 10, 6, 7, 8)


def test_t5_opt_schedule_and_mcsf():
    inst = Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)])
    rep = check_schedule(inst, {"r0": 0, "r1": 1, "r2": 3, "r3": 0})
    assert rep.ok and rep.tel == 12
    assert rep.memory == (4, 5, 4, 2, 3, 4)
    sched = simulate(inst, make_policy("mc-sf"))
    rep2 = check_schedule(inst, sched.starts)
    assert rep2.ok and rep2.tel == sched.tel == 13


def test_arrivals_and_idle_gaps():
    inst = Instance.from_tuples(10, [(0, 1, 2), (5, 3, 1)])
    rep = check_schedule(inst, {"r0": 0, "r1": 6})
    assert rep.ok and rep.tel == 2 + 2
    assert rep.memory == (2, 3, 0, 0, 0, 0, 4)


def test_numpy_integer_and_singleton_sequence_starts_accepted():
    inst = Instance.from_tuples(10, [(0, 1, 2), (0, 1, 2)])
    rep = check_schedule(inst, {"r0": np.int64(0), "r1": [1]})
    assert rep.ok and rep.tel == 2 + 3


# --- each violation type -----------------------------------------------------------------------


def test_early_start():
    inst = Instance.from_tuples(20, [(0, 1, 2), (5, 1, 2)])
    rep = check_schedule(inst, {"r0": 0, "r1": 2})
    assert not rep.ok and rep.tel is None
    assert rep.violations == ("request 'r1' starts at 2 before its arrival 5",)


def test_missing_request():
    inst = Instance.from_tuples(20, [(0, 1, 2), (0, 1, 2)])
    rep = check_schedule(inst, {"r0": 0})
    assert not rep.ok
    assert rep.violations == ("request 'r1' has no start",)


def test_unknown_id():
    inst = Instance.from_tuples(20, [(0, 1, 2)])
    rep = check_schedule(inst, {"r0": 0, "ghost": 3})
    assert not rep.ok
    assert rep.violations == ("unknown request id 'ghost' (not in the instance)",)


@pytest.mark.parametrize("bad", [1.0, 1.5, "1", None, True])
def test_non_integer_start(bad):
    inst = Instance.from_tuples(20, [(0, 1, 2)])
    rep = check_schedule(inst, {"r0": bad})
    assert not rep.ok
    assert "not an integer" in rep.violations[0]


def test_two_starts_rejected_as_preemption():
    inst = Instance.from_tuples(20, [(0, 1, 2)])
    rep = check_schedule(inst, {"r0": [0, 3]})
    assert not rep.ok
    assert "has 2 starts" in rep.violations[0]


def test_many_overflows_are_summarised():
    inst = Instance.from_tuples(4, [(0, 1, 3)] * 30)
    # a staggered chain: memory 5 at time 2, 9 = 2 + 3 + 4 at times 3..30, 7 at 31 — 30 overflows
    rep = check_schedule(inst, {f"r{i}": i for i in range(30)})
    assert not rep.ok
    assert len(rep.violations) == checker_mod.MAX_VIOLATIONS + 1
    assert rep.violations[-1] == f"... and {30 - checker_mod.MAX_VIOLATIONS} more violations"
    assert rep.violations[0] == "memory at time 2 is 5 > M = 4 (running: r0, r1)"
    assert rep.violations[1] == "memory at time 3 is 9 > M = 4 (running: r0, r1, r2)"


def test_overflow_message_truncates_the_running_list():
    inst = Instance.from_tuples(4, [(0, 1, 3)] * 30)
    rep = check_schedule(inst, {f"r{i}": 0 for i in range(30)})
    assert not rep.ok and len(rep.violations) == 3
    assert rep.violations[0].startswith("memory at time 1 is 60 > M = 4 (running: r0, r1, ")
    assert rep.violations[0].endswith(", ...)")


# --- cross-check with the simulator's own accounting ------------------------------------------------


def _random_instance(rng: np.random.Generator, n: int | None = None) -> Instance:
    M = int(rng.integers(6, 21))
    n = int(rng.integers(1, 8)) if n is None else n
    rows = []
    for _ in range(n):
        s = int(rng.integers(1, 4))
        o = int(rng.integers(1, min(6, M - s) + 1))
        rows.append((int(rng.integers(0, 5)), s, o))
    return Instance.from_tuples(M, rows)


@pytest.mark.parametrize("seed", range(15))
def test_matches_simulator_memory_and_tel(seed):
    inst = _random_instance(np.random.default_rng(seed))
    for policy in ("mc-sf", "fcfs"):
        sched = simulate(inst, make_policy(policy))
        rep = check_schedule(inst, sched.starts)
        assert rep.ok, rep.violations
        assert rep.tel == sched.tel
        assert rep.memory == tuple(sched.memory[: rep.makespan])


# --- certificates ---------------------------------------------------------------------------------


def test_certificate_zero_lambda_is_total_output():
    inst = Instance.from_tuples(10, [(0, 1, 2), (3, 2, 4), (1, 1, 1)])
    assert check_lower_bound_certificate(inst, np.zeros(5)) == pytest.approx(inst.total_output)
    assert check_lower_bound_certificate(inst, {}) == pytest.approx(inst.total_output)
    assert certificate_horizon(inst) == 3 + 7


def test_certificate_by_hand():
    # One request s=1, o=2, M=3 at 0: cost(k) = k + (1+1)·λ_{k+1} + (1+2)·λ_{k+2}.
    # Default window: T_c = 2, so k ∈ {0}. λ_1 = 1: cost(0) = 2, bound = (2 − 0) + 2 − 3·1 = 1.
    inst = Instance.from_tuples(3, [(0, 1, 2)])
    assert check_lower_bound_certificate(inst, [0.0, 1.0]) == pytest.approx(1.0)
    assert check_lower_bound_certificate(inst, {1: 1.0}) == pytest.approx(1.0)
    # Window k ∈ {0, 1}: cost(1) = 1 + 0 → min 1, bound = 2 + 1 − 3 = 0 (weaker, still valid).
    assert check_lower_bound_certificate(inst, {1: 1.0}, [(0, 1)]) == pytest.approx(0.0)
    # λ_2 = 0.5: cost(0) = 3·0.5 = 1.5; bound = 2 + 1.5 − 1.5 = 2 (= OPT).
    assert check_lower_bound_certificate(inst, {2: 0.5}) == pytest.approx(2.0)
    # λ beyond every window still counts in −M·Σλ (valid, weaker).
    assert check_lower_bound_certificate(inst, {50: 0.1}) == pytest.approx(2.0 - 0.3)


def test_certificate_windows_forms():
    inst = Instance.from_tuples(10, [(0, 1, 2), (0, 1, 2)])
    lam = {1: 0.3, 2: 0.1}
    a = check_lower_bound_certificate(inst, lam, [(0, 2), (0, 2)])

    class W:
        lo = (0, 0)
        hi = (2, 2)

    assert check_lower_bound_certificate(inst, lam, W()) == pytest.approx(a)
    with pytest.raises(ValueError, match="empty start window"):
        check_lower_bound_certificate(inst, lam, [(3, 2), (0, 2)])
    with pytest.raises(ValueError, match="2 requests"):
        check_lower_bound_certificate(inst, lam, [(0, 2)])


def test_certificate_rejects_negative_lambda_naming_the_time():
    inst = Instance.from_tuples(10, [(0, 1, 2)])
    with pytest.raises(ValueError, match="time 3"):
        check_lower_bound_certificate(inst, [0.0, 0.1, 0.0, -0.5])
    with pytest.raises(ValueError, match="time 2"):
        check_lower_bound_certificate(inst, {2: -1e-3})
    with pytest.raises(ValueError, match="time 1"):
        check_lower_bound_certificate(inst, [0.0, np.nan])
    # round-off negatives clamp to zero
    assert check_lower_bound_certificate(inst, [0.0, -1e-12]) == pytest.approx(2.0)


@st.composite
def _instance_and_lambda(draw):
    M = draw(st.integers(4, 16))
    n = draw(st.integers(1, 5))
    rows = []
    for _ in range(n):
        s = draw(st.integers(1, 3))
        o = draw(st.integers(1, min(5, M - s)))
        rows.append((draw(st.integers(0, 4)), s, o))
    inst = Instance.from_tuples(M, rows)
    T = certificate_horizon(inst) + 3
    lam = draw(st.lists(st.floats(0.0, 2.0, allow_nan=False, allow_infinity=False), min_size=0, max_size=T))
    return inst, lam


@settings(max_examples=150, deadline=None)
@given(_instance_and_lambda())
def test_weak_duality_property(data):
    """Any λ >= 0 certifies a bound <= TEL of every feasible schedule (here MC-SF and FCFS)."""
    inst, lam = data
    bound = check_lower_bound_certificate(inst, lam)
    for policy in ("mc-sf", "fcfs"):
        tel = simulate(inst, make_policy(policy)).tel
        assert bound <= tel + 1e-9
