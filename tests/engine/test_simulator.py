"""The discrete simulator against DESIGN §1 and the hand-checked examples of DIGEST §3.1/§8."""

from __future__ import annotations

import math
from collections import deque

import pytest
from helpers import is_feasible, memory_profile, theorem41_instance

from llmopt.engine.discrete import Decision, HiddenOutputError, SimulationError, StepView, Visibility, simulate
from llmopt.model.instance import Instance, Request
from llmopt.policies import LookaheadPrefixPolicy, greedy_prefix, make_policy
from llmopt.verify.checker import check_schedule
from llmopt.workloads import make_instance


def _starts(schedule, instance):
    return tuple(schedule.starts[i] for i in instance.ids)


def _check_consistent(schedule, instance):
    """Completion, TEL and memory trace recomputed from the starts (DESIGN §1)."""
    for r in instance.requests:
        assert schedule.starts[r.id] >= r.arrival
        assert schedule.completions[r.id] == schedule.starts[r.id] + r.output
    assert schedule.tel == sum(schedule.completions[r.id] - r.arrival for r in instance.requests)
    origin = min((r.arrival for r in instance.requests), default=0)
    assert schedule.memory.origin == origin
    assert list(schedule.memory) == memory_profile(instance, schedule.starts)[origin:]
    assert schedule.peak_memory == max(memory_profile(instance, schedule.starts), default=0)
    assert is_feasible(instance, schedule.starts)


# --- semantics by hand ------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["mc-sf", "fcfs"])
def test_single_request(policy):
    inst = Instance.from_tuples(10, [(0, 2, 3)])
    sch = simulate(inst, make_policy(policy))
    assert sch.starts == {"r0": 0}
    assert sch.completions == {"r0": 3}
    assert tuple(sch.memory) == (3, 4, 5)
    assert sch.tel == 3 and sch.makespan == 3 and sch.peak_memory == 5
    assert sch.evictions == () and sch.recomputed_tokens == 0
    assert sch.policy == policy


def test_empty_instance():
    sch = simulate(Instance(10, ()), make_policy("mc-sf"))
    assert sch.tel == 0 and dict(sch.starts) == {} and tuple(sch.memory) == ()
    assert sch.makespan == 0 and sch.peak_memory == 0


def test_late_single_request_memory_is_relative_to_the_first_arrival():
    inst = Instance.from_tuples(5, [(2, 2, 3)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert sch.starts == {"r0": 2} and sch.completions == {"r0": 5}
    assert sch.memory.origin == 2 and len(sch.memory) == 3
    assert tuple(sch.memory) == (3, 4, 5)  # memory[i] = usage at time origin + 1 + i
    assert [sch.memory_at(t) for t in range(0, 7)] == [0, 0, 0, 3, 4, 5, 0]
    assert sch.tel == 3


def test_idle_gap_between_arrivals():
    inst = Instance.from_tuples(5, [(0, 1, 1), (5, 2, 2)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert sch.starts == {"r0": 0, "r1": 5}
    assert tuple(sch.memory) == (2, 0, 0, 0, 0, 3, 4)
    assert sch.tel == 1 + 2


def test_exact_fit_at_peak_is_allowed_one_more_token_is_not():
    # two identical requests s=2, o=3 (peak 5): at M=10 they co-run from 0 (time 3: 5 + 5 = 10)
    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 2, 3)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert _starts(sch, inst) == (0, 0) and tuple(sch.memory) == (6, 8, 10)
    # at M=9 the second waits one step (time 3: 5 + 4 = 9), at M=8 two steps (time 3: 5 + 3 = 8)
    for M, second, memory in [(9, 1, (3, 7, 9, 5)), (8, 2, (3, 4, 8, 4, 5))]:
        inst_m = Instance.from_tuples(M, [(0, 2, 3), (0, 2, 3)])
        sch_m = simulate(inst_m, make_policy("mc-sf"))
        assert _starts(sch_m, inst_m) == (0, second)
        assert tuple(sch_m.memory) == memory
        assert sch_m.tel == 3 + 3 + second
        _check_consistent(sch_m, inst_m)


def test_t17_growing_memory_co_scheduling():
    """DIGEST T-17: both start at 0 although the peaks sum to 13 > 10."""
    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 2, 6)])
    for policy in ("mc-sf", "fcfs"):
        sch = simulate(inst, make_policy(policy))
        assert _starts(sch, inst) == (0, 0)
        assert tuple(sch.memory) == (6, 8, 10, 6, 7, 8)
        assert sch.tel == 9
        _check_consistent(sch, inst)


def test_t5_mcsf_is_not_optimal():
    """DIGEST T-5: M=5, s=1, o=(1,1,3,3): MC-SF starts (0,0,1,4), TEL 13."""
    inst = Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert _starts(sch, inst) == (0, 0, 1, 4)
    assert sch.tel == 13
    assert tuple(sch.memory) == (4, 2, 3, 4, 2, 3, 4)
    _check_consistent(sch, inst)


def test_t6_hsf_schedule():
    """DIGEST T-6: M=7, s=1, o=(1,2,3,4): H-SF = MC-SF starts (0,0,0,2), TEL 12."""
    inst = Instance.from_tuples(7, [(0, 1, 1), (0, 1, 2), (0, 1, 3), (0, 1, 4)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert _starts(sch, inst) == (0, 0, 0, 2)
    assert sch.tel == 12
    assert tuple(sch.memory) == (6, 6, 6, 3, 4, 5)


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
    assert tuple(sch.memory) == (3, 4, 3, 4, 5)  # the aborted run's memory is in the trace


# --- information: the policy sees only what has arrived ---------------------------------------------


class _StepSpy:
    """A step policy that records every view it is shown (and starts everything that fits nowhere)."""

    def __init__(self, inner):
        self.inner = inner
        self.name = f"step-spy({inner.name})"
        self.views: list[StepView] = []

    def decide(self, view: StepView) -> Decision:
        self.views.append(view)
        return self.inner.decide(view)


class _StepMCSF:
    """MC-SF written as a step policy (sorts the waiting list every step)."""

    name = "step-mc-sf"

    def decide(self, view: StepView) -> Decision:
        return greedy_prefix(view, sorted(view.waiting, key=lambda w: (w.output, w.arrival, w.position)))


class _EventSpy:
    """Wraps an event-driven policy and records every hook call."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.calls: list[tuple[str, int, object]] = []

    def reset(self, M):
        self.calls.clear()
        self.inner.reset(M)

    def on_arrival(self, t, request):
        self.calls.append(("arrival", t, request))
        self.inner.on_arrival(t, request)

    def on_complete(self, t, request):
        self.calls.append(("complete", t, request))
        self.inner.on_complete(t, request)

    def decide(self, t):
        d = self.inner.decide(t)
        self.calls.append(("decide", t, d))
        return d


_INFO_INSTANCES = [
    make_instance("jaillet-am2", 3),
    make_instance("jaillet-am2", 11),
    Instance.from_tuples(6, [(0, 3, 3), (1, 1, 1), (1, 2, 2), (4, 5, 1), (9, 1, 1), (9, 2, 4)]),
]


@pytest.mark.parametrize("instance", _INFO_INSTANCES, ids=["am2-3", "am2-11", "hand"])
def test_step_policy_sees_only_arrived_requests(instance):
    spy = _StepSpy(_StepMCSF())
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
    # the step policy gets the same schedule as the event-driven MC-SF
    assert dict(sch.starts) == dict(simulate(instance, make_policy("mc-sf")).starts)
    _check_consistent(sch, instance)


@pytest.mark.parametrize("instance", _INFO_INSTANCES, ids=["am2-3", "am2-11", "hand"])
@pytest.mark.parametrize("policy", ["mc-sf", "fcfs"])
def test_event_policy_hears_of_requests_at_their_arrival_and_is_asked_only_at_events(instance, policy):
    spy = _EventSpy(make_policy(policy))
    sch = simulate(instance, spy)
    truth = {r.id: r for r in instance.requests}
    arrivals = [(t, r) for kind, t, r in spy.calls if kind == "arrival"]
    assert sorted(r.id for _, r in arrivals) == sorted(truth)
    assert all(t == truth[r.id].arrival for t, r in arrivals)
    assert [r.id for _, r in arrivals] == [r.id for r in sorted(instance.requests,
                                                                  key=lambda r: (r.arrival, instance.position(r.id)))]
    completes = [(t, r.id) for kind, t, r in spy.calls if kind == "complete"]
    assert sorted(completes) == sorted((sch.completions[i], i) for i in truth)
    decided = [(t, d) for kind, t, d in spy.calls if kind == "decide"]
    times = [t for t, _ in decided]
    assert times == sorted(set(times))  # one decision per event time, in order
    events = {r.arrival for r in instance.requests} | set(sch.completions.values())
    wakes = {d.wake_at for _, d in decided if d.wake_at is not None}
    assert set(times) <= events | wakes
    started = [i for _, d in decided for i in d.start]
    assert sorted(started) == sorted(truth)
    _check_consistent(sch, instance)


def test_policy_is_not_polled_during_long_runs():
    """Two requests of 10^6 steps each: the policy decides a handful of times, not 10^6."""
    inst = Instance.from_tuples(3_000_000, [(0, 5, 1_000_000), (3, 7, 1_000_000), (2_500_000, 1, 1)])
    spy = _EventSpy(make_policy("mc-sf"))
    sch = simulate(inst, spy)
    assert dict(sch.starts) == {"r0": 0, "r1": 3, "r2": 2_500_000}
    assert sum(1 for kind, _, _ in spy.calls if kind == "decide") <= 6


def test_hidden_visibility_hides_output_lengths():
    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 1, 2), (1, 1, 1)])

    class _StartAll:
        name = "start-all"

        def __init__(self):
            self.seen = []

        def decide(self, view: StepView) -> Decision:
            self.seen.extend(view.waiting)
            return Decision(start=tuple(w.id for w in view.waiting))

    pol = _StartAll()
    sch = simulate(inst, pol, visibility=Visibility.HIDDEN)
    _check_consistent(sch, inst)
    # the views stayed hidden while the requests waited and were revealed at completion
    assert pol.seen and all(w.output_known for w in pol.seen)
    # a policy that reads a hidden length fails loudly, with a message that says why
    with pytest.raises(HiddenOutputError, match="hidden"):
        simulate(inst, make_policy("mc-sf"), visibility=Visibility.HIDDEN)
    with pytest.raises(HiddenOutputError, match="hidden"):
        simulate(inst, make_policy("fcfs"), visibility=Visibility.HIDDEN)  # its look-ahead needs o_i

    class _Peeker:
        name = "peeker"

        def __init__(self):
            self.learned = {}

        def reset(self, M):
            self.queue = []

        def on_arrival(self, t, request):
            assert not request.output_known
            with pytest.raises(HiddenOutputError):
                _ = request.output
            self.queue.append(request.id)

        def on_complete(self, t, request):
            self.learned[request.id] = request.output  # known once the last token is out

        def decide(self, t):
            started, self.queue = tuple(self.queue), []
            return Decision(start=started)

    peeker = _Peeker()
    simulate(inst, peeker, visibility=Visibility.HIDDEN)
    assert peeker.learned == {"r0": 3, "r1": 2, "r2": 1}

    class _Cheater(_Peeker):
        name = "cheater"

        def on_arrival(self, t, request):
            self.queue.append(request.id)
            _ = request.output

    with pytest.raises(HiddenOutputError, match="'r0'"):
        simulate(inst, _Cheater(), visibility=Visibility.HIDDEN)


# --- ties and wake-ups: where an event engine can go wrong -----------------------------------------


def test_mcsf_tie_break_uses_arrival_before_position():
    """M = 6; (a, s, o) = r0 (0,2,2), r1 (1,3,2), r2 (0,3,2); all three have o = 2.

    t=0: r0 and r2 wait; key order r0 (2,0,·) < r2 (2,0,·); r0 starts (usage 3, 4). r2 would
    make 3+4 = 7 > 6 at time 1: blocked. t=1: r1 arrives; r2 still precedes it (arrival 0 < 1)
    and is blocked (time 2: 4 + 4 = 8). t=2: r0 completes; r2 starts (4, 5 at times 3, 4); r1
    would add 4 at time 3 -> 8: blocked, also at t=3 (5 + 4 = 9). t=4: r2 completes, r1 starts.
    Dropping the arrival key would order r1 (position 1) before r2 (position 2) and start r1 at 2.
    """
    inst = Instance.from_tuples(6, [(0, 2, 2), (1, 3, 2), (0, 3, 2)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert dict(sch.starts) == {"r0": 0, "r1": 4, "r2": 2}
    assert sch.tel == 2 + (6 - 1) + 4
    assert tuple(sch.memory) == (3, 4, 4, 5, 4, 5)
    _check_consistent(sch, inst)


def test_blocked_request_is_woken_when_it_fits_without_any_event():
    """M = 14: r0 (0, 1, 10) runs 0..10 and peaks at 11 at time 10. r1 (s=1, o=3) arrives at 7:
    started at t' it adds 1 + (10 − t') at time 10 when t' >= 7, so it fits at t' = 8 (11 + 3 = 14)
    but not at 7 (11 + 4 = 15). Nothing arrives or completes at 8: the policy must have asked
    to be woken there (the old step loop started it at 8; waiting for the completion gives 10)."""
    inst = Instance.from_tuples(14, [(0, 1, 10), (7, 1, 3)])
    for policy in ("mc-sf", "fcfs"):
        spy = _EventSpy(make_policy(policy))
        sch = simulate(inst, spy)
        assert dict(sch.starts) == {"r0": 0, "r1": 8}
        assert [t for kind, t, _ in spy.calls if kind == "decide"] == [0, 7, 8, 10]
        assert [d.wake_at for kind, _, d in spy.calls if kind == "decide"][1] == 8
        assert sch.peak_memory == 14
        _check_consistent(sch, inst)


def test_wake_up_then_blocked_again_then_fits():
    """A candidate whose window slides over two peaks: woken, blocked again, woken again."""
    # r0: (0, 1, 6) peaks 7 at 6; r1: (0, 1, 12) peaks 13 at 12 (both start at 0: 7+7 <= 20? see below)
    inst = Instance.from_tuples(20, [(0, 1, 6), (0, 1, 12), (1, 4, 8)])
    sch = simulate(inst, make_policy("fcfs"))
    # brute force: the first step >= 1 at which r2 fits beside r0 and r1 (the FCFS order)
    def total(t_start, tau):
        runs = [(0, 1, 6), (0, 1, 12), (t_start, 4, 8)]
        return sum(s + tau - p for p, s, o in runs if p < tau <= p + o)
    first = next(k for k in range(1, 40) if all(total(k, tau) <= 20 for tau in range(k + 1, k + 9)))
    assert sch.starts["r2"] == first
    _check_consistent(sch, inst)


# --- time origins and long outputs cost nothing -----------------------------------------------------


def test_unix_millisecond_timestamps():
    t0 = 1_712_345_678_901
    rows = [(t0, 2, 3), (t0, 2, 6), (t0 + 1, 1, 1), (t0 + 50, 3, 2), (t0 + 51, 3, 2)]
    inst = Instance.from_tuples(10, rows)
    shifted = Instance.from_tuples(10, [(a - t0, s, o) for a, s, o in rows])
    for policy in ("mc-sf", "fcfs"):
        sch = simulate(inst, make_policy(policy))
        ref = simulate(shifted, make_policy(policy))
        assert {i: k - t0 for i, k in sch.starts.items()} == dict(ref.starts)
        assert sch.tel == ref.tel
        assert sch.memory.origin == t0 and tuple(sch.memory) == tuple(ref.memory)
        assert sch.makespan == ref.makespan + t0 and sch.peak_memory == ref.peak_memory
        assert sch.memory_at(t0 + 3) == ref.memory_at(3)
        rep = check_schedule(inst, sch.starts)
        assert rep.ok and rep.tel == sch.tel and rep.peak_memory == sch.peak_memory


def test_two_million_token_output():
    inst = Instance.from_tuples(4_000_100, [(0, 50, 2_000_000), (10, 50, 2_000_000), (20, 1, 1)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert dict(sch.starts) == {"r0": 0, "r1": 10, "r2": 20}
    assert sch.makespan == 2_000_010 and sch.peak_memory == sch.memory_at(2_000_000) == 2_000_050 + 1_999_990 + 50
    rep = check_schedule(inst, sch.starts)
    assert rep.ok and rep.tel == sch.tel


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


# --- the documented third-party policies work and conform ------------------------------------------


class LargestPromptFirst(LookaheadPrefixPolicy):
    # the llmopt.policies docstring example: a key function on the shared prefix/look-ahead base
    name = "largest-prompt-first"

    def key(self, request):
        return (-request.prompt, request.arrival)


class OneAtATime:
    """The README example: an event-driven policy written from scratch."""

    name = "one-at-a-time"

    def reset(self, M):
        self.queue, self.busy = deque(), False

    def on_arrival(self, t, request):
        self.queue.append(request.id)

    def on_complete(self, t, request):
        self.busy = False

    def decide(self, t):
        if self.busy or not self.queue:
            return Decision()
        self.busy = True
        return Decision(start=(self.queue.popleft(),))


@pytest.mark.parametrize("cls", [LargestPromptFirst, OneAtATime])
def test_documented_policies_run_and_conform(cls):
    from llmopt.bench.plugins import conformance
    from llmopt.policies import POLICIES, Policy

    assert isinstance(cls(), Policy)
    inst = Instance.from_tuples(10, [(0, 1, 3), (0, 4, 2), (1, 2, 2), (6, 3, 1)])
    sch = simulate(inst, cls())
    _check_consistent(sch, inst)
    if cls is OneAtATime:
        assert dict(sch.starts) == {"r0": 0, "r1": 3, "r2": 5, "r3": 7}
    else:
        assert sch.starts["r1"] == 0  # the largest prompt goes first
    POLICIES.register(cls.name, cls)
    try:
        assert conformance.check_policy(cls.name) == []
    finally:
        POLICIES.unregister(cls.name)
