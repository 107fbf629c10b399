"""Schedule records and the sparse memory trace (llmopt.model.schedule)."""

from __future__ import annotations

import pytest
from helpers import memory_profile

from llmopt.engine.discrete import Decision, SimulationError, simulate
from llmopt.model.instance import Instance
from llmopt.model.schedule import Eviction, MemoryTrace, Run, Schedule
from llmopt.policies import LookaheadPrefixPolicy, make_policy
from llmopt.verify.checker import check_schedule


def test_trace_from_runs_matches_a_dense_recount():
    runs = [(0, 3, 2), (0, 6, 2), (4, 5, 1), (9, 12, 3)]  # (start, end, prompt)
    trace = MemoryTrace(0, runs)
    dense = [sum(s + t - k for k, e, s in runs if k < t <= e) for t in range(1, 13)]
    assert trace.dense() == tuple(dense) == tuple(trace)
    assert len(trace) == 12 and trace.end == 12 and trace.peak == max(dense)
    assert [trace.at(t) for t in range(-2, 15)] == [0, 0, 0] + dense + [0, 0]
    assert trace[0] == dense[0] and trace[-1] == dense[-1] and trace[2:5] == tuple(dense[2:5])
    assert trace[::3] == tuple(dense[::3])
    with pytest.raises(IndexError):
        trace[12]
    assert trace.values(5, 11) == dense[4:10]


def test_trace_equality_origin_and_dense_construction():
    a = MemoryTrace(0, [(0, 3, 2)])
    assert a == MemoryTrace(0, [(0, 3, 2)]) and hash(a) == hash(MemoryTrace(0, [(0, 3, 2)]))
    assert a == MemoryTrace.from_values((3, 4, 5))  # same function, other representation
    assert a != MemoryTrace(0, [(0, 3, 1)]) and a != MemoryTrace(-1, [(0, 3, 2)])
    late = MemoryTrace(10**12, [(10**12, 10**12 + 3, 2)])
    assert tuple(late) == (3, 4, 5) and late.at(10**12 + 2) == 4 and late.peak == 5
    assert MemoryTrace(0).dense() == () and MemoryTrace(0).peak == 0
    # a Schedule built with a plain tuple (the pre-issue-6 form) still works
    sch = Schedule("x", {"r0": 0}, {"r0": 3}, 3, (3, 4, 5))
    assert isinstance(sch.memory, MemoryTrace) and tuple(sch.memory) == (3, 4, 5) and sch.peak_memory == 5


class _EvictAndRestart(LookaheadPrefixPolicy):
    """An optimistic look-ahead policy (it assumes every output is 1 token, like A_min's lower
    end) that, at step ``when``, evicts request ``victim`` and lets the prefix rule restart it.
    It asks to be woken at ``when`` (no arrival or completion happens there)."""

    name = "evict-and-restart"

    def __init__(self, victim: str, when: int) -> None:
        super().__init__()
        self.victim, self.when = victim, when

    def key(self, request):
        return (request.arrival,)

    def output_estimate(self, request):
        return 1

    def decide(self, t):
        evict: tuple[str, ...] = ()
        if t == self.when and self.victim in self.running:
            self.requeue(self.victim)
            evict = (self.victim,)
        d = super().decide(t)
        wake = self.when if t < self.when else d.wake_at
        if d.wake_at is not None and wake is not None:
            wake = min(wake, d.wake_at)
        return Decision(start=d.start, evict=evict, wake_at=wake)


def test_event_policy_eviction_is_recorded_and_verified():
    """DIGEST T-9: M = 6, s = 1, o = (1, 3, 3): all start at 0 (projected 3 × 2 = 6); at step 2
    time 3 would hold 4 + 4 = 8, so r2 is evicted (2 tokens lost) and restarted at once:
    TEL = 1 + 3 + 5 = 9, recomputed tokens 2."""
    inst = Instance.from_tuples(6, [(0, 1, 1), (0, 1, 3), (0, 1, 3)])
    sch = simulate(inst, _EvictAndRestart("r2", 2))
    assert dict(sch.starts) == {"r0": 0, "r1": 0, "r2": 2}
    assert sch.tel == 9 and sch.recomputed_tokens == 2
    assert sch.evictions == (Eviction(2, "r2", 2),) and sch.evictions[0].start == 0
    assert sch.runs == (Run("r0", 0, 1, True), Run("r2", 0, 2, False), Run("r1", 0, 3, True), Run("r2", 2, 5, True))
    runs = [(r.start, r.end, inst.by_id(r.id).prompt) for r in sch.runs]
    dense = [sum(s + t - k for k, e, s in runs if k < t <= e) for t in range(1, 6)]
    assert tuple(sch.memory) == tuple(dense) == (6, 6, 6, 3, 4)
    assert tuple(sch.memory) != tuple(memory_profile(inst, sch.starts))  # the aborted run counts
    rep = check_schedule(inst, sch.starts, evictions=sch.evictions)
    assert rep.ok and rep.tel == sch.tel and rep.recomputed_tokens == 2
    assert rep.memory == tuple(sch.memory)
    assert sch.to_dict()["evictions"] == [{"t": 2, "id": "r2", "tokens_lost": 2}]


def test_first_overflow_time_is_exact_without_stepping():
    """An event policy that starts everything at once and never wakes: the engine jumps from 0 to
    the first completion, and still names the first overflowing time (T-17 at M = 9: time 3)."""

    class _AllAtOnce:
        name = "all-at-once"

        def reset(self, M):
            self.queue = []

        def on_arrival(self, t, request):
            self.queue.append(request.id)

        def decide(self, t):
            started, self.queue = tuple(self.queue), []
            return Decision(start=started)

    inst = Instance.from_tuples(9, [(0, 2, 3), (0, 2, 6)])
    with pytest.raises(SimulationError, match=r"step 2: policy 'all-at-once' overflows memory at time 3: 10 > M = 9"):
        simulate(inst, _AllAtOnce())
    ok = simulate(Instance.from_tuples(10, [(0, 2, 3), (0, 2, 6)]), _AllAtOnce())
    assert dict(ok.starts) == {"r0": 0, "r1": 0} and ok.peak_memory == 10


@pytest.mark.parametrize(
    ("wake", "match"),
    [(0, "not after 0"), (None, "no progress")],
)
def test_bad_wake_ups_and_stalls_are_errors(wake, match):
    class _Lazy:
        name = "lazy"

        def on_arrival(self, t, request):
            pass

        def decide(self, t):
            return Decision(wake_at=wake)

    with pytest.raises(SimulationError, match=match):
        simulate(Instance.from_tuples(10, [(0, 1, 1)]), _Lazy())


def test_schedule_helpers_on_a_policy_run():
    inst = Instance.from_tuples(10, [(3, 2, 3), (3, 2, 6)])
    sch = simulate(inst, make_policy("mc-sf"))
    assert sch.memory.origin == 3 and sch.makespan == 9 and sch.peak_memory == 10
    assert sch.memory_at(6) == 10 and sch.memory_at(3) == 0 and sch.n == 2
    assert all(r.completed for r in sch.runs)
