"""The independent checker: schedule feasibility/TEL and weak-duality certificates."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import llmopt.verify.checker as checker_mod
from llmopt.engine.discrete import SimulationError, simulate
from llmopt.model.instance import Instance
from llmopt.policies import make_policy
from llmopt.verify.checker import CheckReport, check_schedule

# --- independence ----------------------------------------------------------------------------


_STDLIB = {"numbers", "dataclasses", "typing", "collections.abc", "bisect", "math", "sys", "importlib", "warnings",
           "fractions", "__future__"}


def _imports(module) -> set[str]:
    mods: set[str] = set()
    for node in ast.walk(ast.parse(Path(module.__file__).read_text())):
        if isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module, "no relative imports in the checker"
            mods.add(node.module)
    return mods


@pytest.mark.parametrize("name", ["checker", "certificates", "zone_certificate", "clique_certificate",
                                  "energy_certificate"])
def test_checker_imports_only_the_instance_module(name):
    import importlib

    mods = _imports(importlib.import_module(f"llmopt.verify.{name}"))
    llmopt_mods = {m for m in mods if m.split(".")[0] == "llmopt"}
    # llmopt.model.tolerance is a leaf module of constants (it imports nothing from llmopt)
    assert llmopt_mods <= {"llmopt.model.instance", "llmopt.model.tolerance", "llmopt.verify.checker",
                           "llmopt.verify.certificates", "llmopt.verify.clique_certificate"}
    assert mods - llmopt_mods <= _STDLIB | {"numpy"}


def test_schedule_checker_runs_without_numpy():
    """``llmopt simulate`` verifies its schedule on the command line's hot path: no NumPy import there."""
    import subprocess
    import sys

    code = ("import sys, llmopt.verify.checker as c; from llmopt.model.instance import Instance; "
            "r = c.check_schedule(Instance.from_tuples(10, [(0, 2, 3), (0, 2, 6)]), {'r0': 0, 'r1': 0}); "
            "assert r.ok and r.tel == 9, r; print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    assert "numpy" not in _imports(checker_mod)


def test_moved_certificate_names_still_reachable_from_the_checker():
    from llmopt.verify import certificates

    with pytest.warns(DeprecationWarning, match="moved to llmopt.verify.certificates"):
        assert checker_mod.check_lower_bound_certificate is certificates.check_lower_bound_certificate
    with pytest.raises(AttributeError):
        checker_mod.no_such_name  # noqa: B018


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
        assert rep.memory == tuple(sched.memory)
        assert rep.origin == sched.memory.origin and rep.peak_memory == sched.peak_memory


# --- evictions: the memory of aborted runs counts ---------------------------------------------------


class _EvictOnce:
    """Scripted step policy: starts everything waiting at t = 0, evicts ``victim`` at ``when`` and
    restarts it when ``restart`` comes."""

    name = "evict-once"

    def __init__(self, victim, when, restart):
        self.victim, self.when, self.restart = victim, when, restart

    def decide(self, view):
        from llmopt.engine.discrete import Decision

        if view.t == 0:
            return Decision(start=tuple(w.id for w in view.waiting))
        if view.t == self.when:
            return Decision(evict=(self.victim,), start=(self.victim,) if self.restart == self.when else ())
        if view.t == self.restart:
            return Decision(start=(self.victim,))
        return Decision()


def test_feasible_schedule_with_an_eviction_is_verified():
    # M = 10: r0 (s=2, o=3) and r1 (s=2, o=4) co-run from 0; r1 is evicted at 2 (2 tokens lost) and
    # restarted at 3. Memory: t=1: 3+3, t=2: 4+4, t=3: 5 (r1 gone), t=4..7: r1 again 3,4,5,6.
    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 2, 4)])
    sched = simulate(inst, _EvictOnce("r1", 2, 3))
    assert dict(sched.starts) == {"r0": 0, "r1": 3}
    assert [(e.t, e.id, e.tokens_lost) for e in sched.evictions] == [(2, "r1", 2)]
    rep = check_schedule(inst, sched.starts, evictions=sched.evictions)
    assert rep.ok, rep.violations
    assert rep.tel == sched.tel == 3 + 7 and rep.recomputed_tokens == 2
    assert rep.memory == tuple(sched.memory) == (6, 8, 5, 3, 4, 5, 6)
    # the JSON form of the schedule checks the same
    d = sched.to_dict()
    assert check_schedule(inst, d["starts"], evictions=d["evictions"]).memory == rep.memory


def test_overflow_only_during_an_aborted_run_is_caught():
    # M = 7: both start at 0; r1 is evicted at 2 and restarted at 3. The final runs alone
    # (r0 at 0, r1 at 3) peak at 6 <= 7, but while r1's first run lasted, time 2 held 4 + 4 = 8.
    inst = Instance.from_tuples(7, [(0, 2, 3), (0, 2, 4)])
    evictions = [{"t": 2, "id": "r1", "tokens_lost": 2}]
    starts = {"r0": 0, "r1": 3}
    assert check_schedule(inst, starts).ok  # final starts alone look feasible
    rep = check_schedule(inst, starts, evictions=evictions)
    assert not rep.ok and rep.tel is None
    assert rep.violations == ("memory at time 2 is 8 > M = 7 (running: r0, r1)",)
    # the simulator refuses to produce that schedule in the first place
    with pytest.raises(SimulationError, match="overflow"):
        simulate(inst, _EvictOnce("r1", 2, 3))


@pytest.mark.parametrize(
    ("evictions", "message"),
    [
        ([(2, "ghost", 1)], "unknown request id 'ghost'"),
        ([(2, "r1", 0)], "tokens_lost = 0"),
        ([(5, "r1", 4)], "tokens_lost = 4"),  # o = 4: a run that produced 4 tokens completed
        ([(2, "r1", 1.5)], "must be integers"),
        ([(1, "r1", 2)], "before the arrival 0"),
        ([(3, "r1", 2), (4, "r1", 2)], "overlap"),
        ([(5, "r1", 2)], "ends after its final start 3"),
    ],
)
def test_malformed_evictions_are_reported(evictions, message):
    inst = Instance.from_tuples(20, [(0, 2, 3), (0, 2, 4)])
    rep = check_schedule(inst, {"r0": 0, "r1": 3}, evictions=evictions)
    assert not rep.ok
    assert any(message in v for v in rep.violations), rep.violations


# --- the time axis is sparse: origins and horizons cost nothing -------------------------------------


def test_unix_timestamp_schedule_checks_without_dense_arrays():
    t0 = 1_712_345_678_901
    inst = Instance.from_tuples(10, [(t0, 2, 3), (t0, 2, 6), (t0 + 7, 1, 2)])
    rep = check_schedule(inst, {"r0": t0, "r1": t0, "r2": t0 + 7})
    assert rep.ok and rep.tel == 3 + 6 + 2
    assert rep.origin == t0 and rep.makespan == t0 + 9
    assert rep.memory == (6, 8, 10, 6, 7, 8, 0, 2, 3)
    assert rep.memory_at(t0 + 3) == 10 and rep.memory_at(t0) == 0 and rep.peak_memory == 10
    # r1 from t0 + 1 (usage 2 + τ − t0 − 1), r2 from t0 + 6: time t0 + 7 holds 8 + 3 = 11
    bad = check_schedule(inst, {"r0": t0, "r1": t0 + 1, "r2": t0 + 5})
    assert not bad.ok
    assert bad.violations == (f"request 'r2' starts at {t0 + 5} before its arrival {t0 + 7}",
                              f"memory at time {t0 + 7} is 11 > M = 10 (running: r1, r2)")


def test_overflow_counts_over_long_horizons_in_closed_form():
    # three requests of 10^6 steps from 0: usage 3·(1 + t), M = 3·(o + 1) − 300, so exactly the
    # 100 times t = o − 99 … o overflow; the count is closed-form, not a scan of 10^6 steps
    o = 1_000_000
    inst = Instance.from_tuples(3 * (o + 1) - 300, [(0, 1, o)] * 3)
    rep = check_schedule(inst, {"r0": 0, "r1": 0, "r2": 0})
    assert not rep.ok and rep.peak_memory == 3 * (o + 1)
    first = o - 99
    assert rep.violations[0] == f"memory at time {first} is {3 * (1 + first)} > M = {inst.M} (running: r0, r1, r2)"
    assert len(rep.violations) == checker_mod.MAX_VIOLATIONS + 1
    assert rep.violations[-1] == f"... and {100 - checker_mod.MAX_VIOLATIONS} more violations"


@st.composite
def _runs_schedule(draw):
    """A random instance with final starts and evictions (feasible or not)."""
    M = draw(st.integers(3, 14))
    n = draw(st.integers(1, 5))
    rows, starts, evictions = [], {}, []
    for i in range(n):
        s = draw(st.integers(1, min(3, M - 1)))
        o = draw(st.integers(1, min(6, M - s)))
        a = draw(st.integers(0, 4))
        rows.append((a, s, o))
        k = a
        if o >= 2:
            for _ in range(draw(st.integers(0, 2))):
                k = draw(st.integers(k, k + 3))
                lost = draw(st.integers(1, o - 1))
                evictions.append((k + lost, f"r{i}", lost))
                k = k + lost + draw(st.integers(0, 2))
        starts[f"r{i}"] = draw(st.integers(k, k + 4))
    return Instance.from_tuples(M, rows), starts, evictions


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_runs_schedule())
def test_sparse_memory_with_evictions_matches_a_dense_recount(data):
    """The checker's sparse profile equals a per-step recount of every run (aborted ones included)."""
    inst, starts, evictions = data
    rep = check_schedule(inst, starts, evictions=evictions)
    runs = [(starts[r.id], starts[r.id] + r.output, r.prompt) for r in inst.requests]
    runs += [(t - lost, t, inst.by_id(rid).prompt) for t, rid, lost in evictions]
    horizon = max(e for _, e, _ in runs)
    dense = [sum(s + tau - k for k, e, s in runs if k < tau <= e) for tau in range(0, horizon + 2)]
    assert [rep.memory_at(tau) for tau in range(0, horizon + 2)] == dense
    assert rep.peak_memory == max(dense)
    n_over = sum(1 for u in dense if u > inst.M)
    assert rep.ok == (n_over == 0)
    mem_violations = [v for v in rep.violations if v.startswith("memory at time")]
    assert len(mem_violations) == min(n_over, checker_mod.MAX_VIOLATIONS)
    assert rep.recomputed_tokens == sum(lost for _, _, lost in evictions)
    if rep.ok:
        assert rep.tel == sum(starts[r.id] + r.output - r.arrival for r in inst.requests)


def test_max_violations_caps_the_list_or_lists_everything():
    inst = Instance.from_tuples(4, [(0, 1, 3)] * 30)
    starts = {f"r{i}": i for i in range(30)}
    one = check_schedule(inst, starts, max_violations=1)
    assert len(one.violations) == 2 and one.violations[-1] == "... and 29 more violations"
    every = check_schedule(inst, starts, max_violations=None)
    assert len(every.violations) == 30 and not any(v.startswith("...") for v in every.violations)
    assert every.violations[:20] == check_schedule(inst, starts).violations[:20]


def test_listing_every_violation_of_a_long_overflow_stays_cheap():
    """With max_violations=None a 10^6-step overflow is one entry per stretch (counted per time), not a
    million messages."""
    o = 1_000_000
    inst = Instance.from_tuples(3 * (o + 1) - 300_000, [(0, 1, o)] * 3)
    rep = check_schedule(inst, {"r0": 0, "r1": 0, "r2": 0}, max_violations=None)
    assert not rep.ok and len(rep.violations) == 1
    first = o - 99_999
    assert rep.violations[0].startswith(f"memory exceeds M = {inst.M} at every time {first}..{o} (100000 times")
