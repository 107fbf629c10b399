"""The discrete simulator against DESIGN §1 and the hand-checked examples of DIGEST §3.1/§8."""

from __future__ import annotations

import math

import pytest
from helpers import is_feasible, memory_profile, theorem41_instance

from llmopt.instance import Instance, Request
from llmopt.policies import make_policy
from llmopt.simulator import Decision, SimulationError, StepView, Visibility, simulate
from llmopt.workloads import make_instance


def _starts(schedule, instance):
    return tuple(schedule.starts[i] for i in instance.ids)


def _check_consistent(schedule, instance):
    """Completion, TEL and memory trace recomputed from the starts (DESIGN §1)."""
    for r in instance.requests:
        assert schedule.starts[r.id] >= r.arrival
        assert schedule.completions[r.id] == schedule.starts[r.id] + r.output
    assert schedule.tel == sum(schedule.completions[r.id] - r.arrival for r in instance.requests)
    assert list(schedule.memory) == memory_profile(instance, schedule.starts)
    assert is_feasible(instance, schedule.starts)


# --- semantics by hand ------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["mc-sf", "fcfs"])
def test_single_request(policy):
    inst = Instance.from_tuples(10, [(0, 2, 3)])
    sch = simulate(inst, make_policy(policy))
    assert sch.starts == {"r0": 0}
    assert sch.completions == {"r0": 3}
    assert sch.memory == (3, 4, 5)
    assert sch.tel == 3 and sch.makespan == 3 and sch.peak_memory == 5
    assert sch.evictions == () and sch.recomputed_tokens == 0
    assert sch.policy == policy


def test_empty_instance():
    sch = simulate(Instance(10, ()), make_policy("mc-sf"))
    assert sch.tel == 0 and dict(sch.starts) == {} and sch.memory == ()


def test_late_single_request_memory_is_indexed_by_time():
    inst = Instance.from_tuples(5, [(2, 2, 3)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert sch.starts == {"r0": 2} and sch.completions == {"r0": 5}
    assert sch.memory == (0, 0, 3, 4, 5)  # memory[t-1] = usage at time t
    assert sch.tel == 3


def test_idle_gap_between_arrivals():
    inst = Instance.from_tuples(5, [(0, 1, 1), (5, 2, 2)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert sch.starts == {"r0": 0, "r1": 5}
    assert sch.memory == (2, 0, 0, 0, 0, 3, 4)
    assert sch.tel == 1 + 2


def test_exact_fit_at_peak_is_allowed_one_more_token_is_not():
    # two identical requests s=2, o=3 (peak 5): at M=10 they co-run from 0 (time 3: 5 + 5 = 10)
    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 2, 3)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert _starts(sch, inst) == (0, 0) and sch.memory == (6, 8, 10)
    # at M=9 the second waits one step (time 3: 5 + 4 = 9), at M=8 two steps (time 3: 5 + 3 = 8)
    for M, second, memory in [(9, 1, (3, 7, 9, 5)), (8, 2, (3, 4, 8, 4, 5))]:
        inst_m = Instance.from_tuples(M, [(0, 2, 3), (0, 2, 3)])
        sch_m = simulate(inst_m, make_policy("mc-sf"))
        assert _starts(sch_m, inst_m) == (0, second)
        assert sch_m.memory == memory
        assert sch_m.tel == 3 + 3 + second
        _check_consistent(sch_m, inst_m)


def test_t17_growing_memory_co_scheduling():
    """DIGEST T-17: both start at 0 although the peaks sum to 13 > 10."""
    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 2, 6)])
    for policy in ("mc-sf", "fcfs"):
        sch = simulate(inst, make_policy(policy))
        assert _starts(sch, inst) == (0, 0)
        assert sch.memory == (6, 8, 10, 6, 7, 8)
        assert sch.tel == 9
        _check_consistent(sch, inst)


def test_t5_mcsf_is_not_optimal():
    """DIGEST T-5: M=5, s=1, o=(1,1,3,3): MC-SF starts (0,0,1,4), TEL 13."""
    inst = Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert _starts(sch, inst) == (0, 0, 1, 4)
    assert sch.tel == 13
    assert sch.memory == (4, 2, 3, 4, 2, 3, 4)
    _check_consistent(sch, inst)


def test_t6_hsf_schedule():
    """DIGEST T-6: M=7, s=1, o=(1,2,3,4): H-SF = MC-SF starts (0,0,0,2), TEL 12."""
    inst = Instance.from_tuples(7, [(0, 1, 1), (0, 1, 2), (0, 1, 3), (0, 1, 4)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert _starts(sch, inst) == (0, 0, 0, 2)
    assert sch.tel == 12
    assert sch.memory == (6, 6, 6, 3, 4, 5)


@pytest.mark.parametrize(
    ("M", "tel", "short_starts"),
    [(16, 31, [15] * 8), (36, 89, [35] * 18), (64, 188, [60] + [63] * 31)],
)
@pytest.mark.parametrize("policy", ["mc-sf", "fcfs"])
def test_theorem41_family(M, tel, short_starts, policy):
    """DIGEST §3.1 / T-4: J Theorem 4.1 instance; MC-SF and MC-Benchmark agree."""
    inst = theorem41_instance(M)
    assert inst.n == M // 2 + 1
    sch = simulate(inst, make_policy(policy))
    assert sch.starts["r0"] == 0  # b = 0, so the shorts arrive at r = M - sqrt(M)/2
    assert sorted(sch.starts[i] for i in inst.ids[1:]) == short_starts
    assert sch.tel == tel
    assert sch.tel >= (M / 4) * (math.isqrt(M) / 2)
    _check_consistent(sch, inst)


def test_fcfs_orders_by_arrival_not_id_nor_length():
    # A blocker runs 0..3; "b" (arrived 0, o=3) and "a" (arrived 1, o=1) wait behind it and cannot co-run.
    inst = Instance(6, (Request("0blk", 0, 1, 3), Request("a", 1, 3, 1), Request("b", 0, 3, 3)))
    fcfs = simulate(inst, make_policy("fcfs"))
    assert fcfs.starts == {"0blk": 0, "b": 3, "a": 6}
    assert fcfs.tel == 3 + 6 + 6
    mcsf = simulate(inst, make_policy("mc-sf"))
    assert mcsf.starts == {"0blk": 0, "a": 3, "b": 4}
    assert mcsf.tel == 3 + 3 + 7
    for sch in (fcfs, mcsf):
        _check_consistent(sch, inst)


def test_fcfs_head_of_line_blocking():
    # "big" arrives first and does not fit next to the running blocker; "tiny" would, but FCFS stops.
    inst = Instance(8, (Request("blk", 0, 3, 3), Request("big", 1, 4, 4), Request("tiny", 2, 1, 1)))
    fcfs = simulate(inst, make_policy("fcfs"))
    assert fcfs.starts["big"] == 3
    assert fcfs.starts["tiny"] == 3  # waits behind "big", then fits beside it
    mcsf = simulate(inst, make_policy("mc-sf"))
    assert mcsf.starts["tiny"] == 2
    for sch in (fcfs, mcsf):
        _check_consistent(sch, inst)


def test_mcsf_shortest_first_and_break_on_first_misfit():
    # all at 0, M=6: o=1 (s=1, peak 2), o=2 (s=1), o=4 (s=1, peak 5).
    inst = Instance.from_tuples(6, [(0, 1, 4), (0, 1, 2), (0, 1, 1)])
    sch = simulate(inst, make_policy("mc-sf"))
    # o=1 and o=2 co-run (time 1: 2+2, time 2: 3); o=4 added at 0 would give 2+2+2=6 at t=1, 3+3=6 at 2,
    # then 4, 5 -> fits too. All three start at 0.
    assert _starts(sch, inst) == (0, 0, 0)
    _check_consistent(sch, inst)
    tight = Instance.from_tuples(5, [(0, 1, 4), (0, 1, 2), (0, 1, 1)])
    sch = simulate(tight, make_policy("mc-sf"))
    # time 1 would be 2+2+2 = 6 > 5 with all three; the o=4 request waits.
    assert sch.starts["r2"] == 0 and sch.starts["r1"] == 0
    assert sch.starts["r0"] > 0
    _check_consistent(sch, tight)


# --- policies that break the model ------------------------------------------------------------------


class _Scripted:
    name = "scripted"

    def __init__(self, script):
        self.script = script  # t -> Decision

    def decide(self, view: StepView) -> Decision:
        return self.script.get(view.t, Decision())


class _StartAll:
    name = "start-all"

    def decide(self, view: StepView) -> Decision:
        return Decision(start=tuple(w.id for w in view.waiting))


def test_overflow_raises():
    inst = Instance.from_tuples(9, [(0, 2, 3), (0, 2, 6)])  # co-running peaks at 10 at time 3
    with pytest.raises(SimulationError, match="overflow"):
        simulate(inst, _StartAll())


def test_overflow_detected_at_first_step():
    inst = Instance.from_tuples(5, [(0, 2, 1), (0, 2, 1)])  # time 1: 3 + 3 = 6 > 5
    with pytest.raises(SimulationError, match="overflow"):
        simulate(inst, _StartAll())


@pytest.mark.parametrize(
    "script",
    [
        {0: Decision(start=("nope",))},  # unknown id
        {0: Decision(start=("r1",))},  # r1 has not arrived yet
        {0: Decision(start=("r0",)), 1: Decision(start=("r0",))},  # already running
        {0: Decision(start=("r0", "r0"))},  # twice in one step
        {0: Decision(evict=("r0",))},  # evicting a waiting request
    ],
)
def test_invalid_decisions_raise(script):
    inst = Instance.from_tuples(10, [(0, 1, 3), (2, 1, 1)])
    with pytest.raises(SimulationError):
        simulate(inst, _Scripted(script), max_steps=50)


def test_restarting_a_completed_request_raises():
    inst = Instance.from_tuples(10, [(0, 1, 1), (3, 1, 1)])
    script = {0: Decision(start=("r0",)), 3: Decision(start=("r1", "r0"))}
    with pytest.raises(SimulationError):
        simulate(inst, _Scripted(script), max_steps=50)


def test_policy_that_never_starts_anything_is_stopped():
    inst = Instance.from_tuples(10, [(0, 1, 1)])
    with pytest.raises(SimulationError, match="progress"):
        simulate(inst, _Scripted({}), max_steps=20)


def test_eviction_loses_tokens_and_latency_counts_from_arrival():
    inst = Instance.from_tuples(10, [(0, 2, 3)])
    script = {0: Decision(start=("r0",)), 2: Decision(evict=("r0",), start=("r0",))}
    sch = simulate(inst, _Scripted(script))
    assert sch.starts == {"r0": 2} and sch.completions == {"r0": 5}
    assert sch.tel == 5
    assert sch.recomputed_tokens == 2
    assert [(e.t, e.id, e.tokens_lost) for e in sch.evictions] == [(2, "r0", 2)]
    assert sch.memory == (3, 4, 3, 4, 5)


# --- information: the policy sees only what has arrived ---------------------------------------------


class _Spy:
    """Wraps a policy and records every view it is shown."""

    def __init__(self, inner):
        self.inner = inner
        self.name = f"spy({inner.name})"
        self.views: list[StepView] = []

    def decide(self, view: StepView) -> Decision:
        self.views.append(view)
        return self.inner.decide(view)


@pytest.mark.parametrize(
    "instance",
    [
        make_instance("jaillet-am2", 3),
        make_instance("jaillet-am2", 11),
        Instance.from_tuples(6, [(0, 3, 3), (1, 1, 1), (1, 2, 2), (4, 5, 1), (9, 1, 1), (9, 2, 4)]),
    ],
    ids=["am2-3", "am2-11", "hand"],
)
@pytest.mark.parametrize("policy", ["mc-sf", "fcfs"])
def test_policy_sees_only_arrived_requests(instance, policy):
    spy = _Spy(make_policy(policy))
    sch = simulate(instance, spy)
    assert spy.views, "policy was never consulted"
    truth = {r.id: r for r in instance.requests}
    ts = [v.t for v in spy.views]
    assert ts == sorted(ts) and len(set(ts)) == len(ts)
    for v in spy.views:
        assert v.M == instance.M
        for w in v.waiting:
            assert truth[w.id].arrival <= v.t, f"step {v.t}: {w.id} (a={truth[w.id].arrival}) shown early"
            assert (w.arrival, w.prompt, w.output) == (truth[w.id].arrival, truth[w.id].prompt, truth[w.id].output)
        for r in v.running:
            assert truth[r.id].arrival <= v.t
            assert r.generated == v.t - r.start and r.memory == r.prompt + r.generated
        # and it sees every arrived, unfinished request exactly once
        shown = [w.id for w in v.waiting] + [r.id for r in v.running]
        assert len(shown) == len(set(shown))
        expected = {i for i, r in truth.items() if r.arrival <= v.t and sch.completions[i] > v.t}
        assert set(shown) == expected
    _check_consistent(sch, instance)


def test_hidden_visibility_hides_output_lengths():
    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 1, 2), (1, 1, 1)])
    spy = _Spy(_StartAll())
    sch = simulate(inst, spy, visibility=Visibility.HIDDEN)
    assert all(w.output is None for v in spy.views for w in v.waiting)
    assert all(r.output is None for v in spy.views for r in v.running)
    _check_consistent(sch, inst)
    with pytest.raises(ValueError, match="hidden"):
        simulate(inst, make_policy("mc-sf"), visibility=Visibility.HIDDEN)


# --- workloads: determinism and parameter ranges ----------------------------------------------------


@pytest.mark.parametrize("workload", ["jaillet-am1", "jaillet-am2"])
def test_workload_deterministic_per_seed(workload):
    for seed in (0, 1, 17):
        a, b = make_instance(workload, seed), make_instance(workload, seed)
        assert a == b and a.name == b.name
    different = {tuple((r.arrival, r.prompt, r.output) for r in make_instance(workload, s).requests)
                 for s in range(8)}
    assert len(different) == 8


@pytest.mark.parametrize("seed", range(25))
def test_am1_ranges(seed):
    inst = make_instance("jaillet-am1", seed)
    assert 30 <= inst.M <= 50
    assert 40 <= inst.n <= 60
    for r in inst.requests:
        assert r.arrival == 0
        assert 1 <= r.prompt <= 5
        assert r.output >= 1 and r.prompt + r.output <= inst.M


@pytest.mark.parametrize("seed", range(25))
def test_am2_ranges(seed):
    inst = make_instance("jaillet-am2", seed)
    assert 30 <= inst.M <= 50
    assert inst.n >= 1
    arrivals = [r.arrival for r in inst.requests]
    assert min(arrivals) >= 1 and max(arrivals) <= 60
    assert arrivals == sorted(arrivals)
    for r in inst.requests:
        assert 1 <= r.prompt <= 5
        assert r.output >= 1 and r.prompt + r.output <= inst.M


def test_workload_ranges_cover_their_support():
    """Over many seeds the draws actually use the documented ranges (catches off-by-one ranges)."""
    am1 = [make_instance("jaillet-am1", s) for s in range(150)]
    assert {i.M for i in am1} >= {30, 50}
    assert min(i.n for i in am1) == 40 and max(i.n for i in am1) == 60
    prompts = {r.prompt for i in am1 for r in i.requests}
    assert prompts == {1, 2, 3, 4, 5}
    assert any(r.prompt + r.output == i.M for i in am1 for r in i.requests)
    am2 = [make_instance("jaillet-am2", s) for s in range(60)]
    assert min(r.arrival for i in am2 for r in i.requests) == 1
    assert max(r.arrival for i in am2 for r in i.requests) > 50


@pytest.mark.parametrize("policy", ["mc-sf", "fcfs"])
@pytest.mark.parametrize(("workload", "seed"), [("jaillet-am1", 0), ("jaillet-am2", 0), ("jaillet-am2", 5)])
def test_policies_on_paper_workloads_are_feasible(policy, workload, seed):
    inst = make_instance(workload, seed)
    sch = simulate(inst, make_policy(policy))
    _check_consistent(sch, inst)
    assert sch.tel >= inst.total_output
