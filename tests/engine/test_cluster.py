"""The multi-worker engine (llmopt.engine.cluster) and the routers (llmopt.policies.routers).

* ``K = 1`` is today's single-worker engine, exactly — same starts, completions, TEL, evictions,
  memory trace (and batch clock, stalls) or the same error — on Hypothesis instances, for
  look-ahead, evicting (α-protection, with clearing passes that cost time in continuous time),
  interval (A_max, A_min) and step policies, on both clocks.
* Each router's decisions on small cases traced by hand (the comments give the trace), and
  :func:`first_fit` against a brute-force scan of check (5).
* The registry, the information model (a router never reads a hidden ``o``), bad answers,
  deep-copied policy objects, and the record's JSON round trip and summary.

Breakages tried by hand (each edit applied, the named tests run, the edit reverted; every one fails):

* round-robin's wrap ``w + 1 < K`` written ``w + 1 <= K`` — ``test_round_robin`` (the engine refuses
  worker 2 of 2);
* jsq keeping the *last* of equal queues (``<=``) — ``test_jsq_by_hand`` ([1, 0, 1, 0]);
* least-kv without the queue tie-break — ``test_least_kv_by_hand`` (r1 to worker 0);
* p2c without ordering the pair (ties to the first drawn) — ``test_p2c_by_hand``;
* ``first_fit``: replaced by ``next_fit`` (stops at the first completion) — ``test_first_fit_by_hand``
  (4 ≠ 9) and ``test_first_fit_matches_brute_force``; its second condition without ``− o``, its lower
  end one too high, its sliding window keeping completed items — ``test_first_fit_matches_brute_force``.
  (``hi = cs[i]`` instead of ``cs[i] − 1`` is *not* a bug: the next range re-examines ``t' = cs[i]``.);
* the cluster's queue length without the requests routed but not yet handed over —
  ``test_jsq_counts_requests_in_flight``;
* the discrete clock deciding at the routing instant before that instant's arrivals (``t >= T`` →
  ``t > T``) — ``test_one_worker_is_the_discrete_engine``;
* the continuous clock doing the same (``now >= T`` → ``now > T``) — ``test_one_worker_is_the_continuous_
  engine`` (only with its 1 s batches and whole-second arrivals, where batch ends meet arrivals);
* the continuous idle jump left out — ``test_one_worker_is_the_continuous_engine``;
* the discrete clock's memory check dropped — ``test_one_worker_step_policy_and_its_overflow_error``;
* the router hooks dropping evictions — ``test_lookahead_hooks_follow_evictions``.
"""

from __future__ import annotations

import functools
import json
import random

import pytest
from cluster_helpers import simulate_cluster
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.engine.cluster import ClusterView
from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.core import Decision, HiddenOutputError, SimulationError, Visibility
from llmopt.engine.cost_model import ConstantCostModel, make_cost_model
from llmopt.engine.discrete import simulate
from llmopt.engine.lookahead import LookaheadProfile
from llmopt.model.cluster_schedule import ClusterSchedule
from llmopt.model.instance import Instance, Request
from llmopt.model.registry import RegistryError
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import MCSF, make_policy_spec
from llmopt.policies.routers import (
    ROUTERS,
    JoinShortestQueue,
    LookaheadRouter,
    PowerOfTwoChoices,
    first_fit,
    make_router,
    make_router_spec,
)

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)
COST = make_cost_model("llama2-70b-a100-tp2")

#: single-worker policies the K = 1 tests run: look-ahead, evicting, interval, step
POLICIES = ["mc-sf", "fcfs", "alpha-protection:alpha=0.1,beta=0.5", "a-max", "a-min", "sorted-f"]


@st.composite
def instances(draw, max_n: int = 14) -> Instance:
    """Small or roomy M, all at 0 or spread arrivals, some identical requests, prediction intervals."""
    M = draw(st.sampled_from([draw(st.integers(4, 14)), draw(st.integers(30, 120))]))
    n = draw(st.integers(1, max_n))
    max_arrival = draw(st.sampled_from([0, 4, 30]))
    rows: list[tuple[int, int, int]] = []
    for _ in range(n):
        if rows and draw(st.integers(0, 4)) == 0:
            rows.append(draw(st.sampled_from(rows)))
            continue
        s = draw(st.integers(1, max(1, M // 2)))
        o = draw(st.integers(1, M - s))
        rows.append((draw(st.integers(0, max_arrival)), s, o))
    reqs = tuple(Request(f"r{i}", a, s, o, max(1, o - 2), min(M - s, o + 2)) for i, (a, s, o) in enumerate(rows))
    return Instance(M, reqs)


def timed(inst: Instance, scale: float = 0.37) -> TimedInstance:
    return TimedInstance(inst.M, tuple(TimedRequest(r.id, r.arrival * scale, r.prompt, r.output, r.lower, r.upper)
                                       for r in inst.requests))


def outcome(fn, *args, **kw):
    """The run's record, or the error it raised (type and message)."""
    try:
        return fn(*args, **kw)
    except SimulationError as exc:
        return (type(exc).__name__, str(exc))


def discrete_key(s):
    return s if isinstance(s, tuple) else (dict(s.starts), dict(s.completions), s.tel, s.evictions,
                                           s.recomputed_tokens, s.memory, s.policy)


def timed_key(s):
    return s if isinstance(s, tuple) else (dict(s.starts), dict(s.completions), dict(s.latencies),
                                           s.batch_start.tolist(), s.batch_duration.tolist(), s.evictions,
                                           s.memory, dict(s.stalls), s.complete, s.policy, s.cost_model)


def one_worker(run):
    return run if isinstance(run, tuple) else run.workers[0]


# --- K = 1 is the single-worker engine --------------------------------------------------


@SETTINGS
@given(inst=instances(), spec=st.sampled_from(POLICIES))
def test_one_worker_is_the_discrete_engine(inst, spec):
    single = outcome(simulate, inst, make_policy_spec(spec), max_steps=3000)
    for router in ("round-robin", "jsq", "lookahead"):
        cluster = outcome(simulate_cluster, inst, functools.partial(make_policy_spec, spec), router, 1,
                          max_steps=3000)
        assert discrete_key(one_worker(cluster)) == discrete_key(single)


@SETTINGS
@given(inst=instances(), spec=st.sampled_from([*POLICIES, "alpha-protection:alpha=0.2,beta=0.5,pass_cost=every-pass"]),
       cost=st.sampled_from([COST, ConstantCostModel(0.5), ConstantCostModel(1.0)]),
       scale=st.sampled_from([0.37, 1.0]))
def test_one_worker_is_the_continuous_engine(inst, spec, cost, scale):
    ti = timed(inst, scale)  # 1 s batches and arrivals on whole seconds: batch ends meet arrivals
    single = outcome(simulate_continuous, ti, make_policy_spec(spec), cost, max_iterations=3000)
    cluster = outcome(simulate_cluster, ti, functools.partial(make_policy_spec, spec), "least-kv", 1,
                      cost_model=cost, max_iterations=3000)
    assert timed_key(one_worker(cluster)) == timed_key(single)


class StartAll:
    """A step policy that starts whatever waits (it overflows small caches)."""

    name = "start-all"

    def decide(self, view):
        return Decision(start=tuple(r.id for r in view.waiting))


def test_one_worker_step_policy_and_its_overflow_error():
    inst = Instance.from_tuples(6, [(0, 2, 3), (0, 2, 3), (5, 1, 1)])
    single = outcome(simulate, inst, StartAll())
    assert single[0] == "SimulationError" and "overflows memory" in single[1]
    assert outcome(simulate_cluster, inst, StartAll, "jsq", 1) == single
    two = outcome(simulate_cluster, Instance.from_tuples(6, [(0, 2, 3)] * 4), StartAll, "round-robin", 2)
    assert two[0] == "SimulationError" and two[1].startswith("worker 0: step")


# --- each router, by hand ------------------------------------------------------------------


def assignment(run: ClusterSchedule) -> list[int]:
    return [run.assignment[rid] for rid in sorted(run.assignment, key=lambda r: int(r[1:]))]


def test_round_robin():
    inst = Instance.from_tuples(20, [(0, 1, 2)] * 5)
    assert assignment(simulate_cluster(inst, MCSF, "round-robin", 2)) == [0, 1, 0, 1, 0]
    assert assignment(simulate_cluster(inst, MCSF, "round-robin", 3)) == [0, 1, 2, 0, 1]


def test_jsq_by_hand():
    # M = 20, K = 2. r0 (a=0): both empty, tie -> w0. r1 (a=0): w0 holds r0 (routed, not started) -> w1.
    # r2 (a=1): r0 runs on w0, r1 on w1: tie -> w0. r3 (a=4): r2 (start 1, o=2) done at 3, r0 runs on
    # w0 (until 10); r1 (start 0, o=3) done at 3, w1 empty -> w1.
    inst = Instance.from_tuples(20, [(0, 2, 10), (0, 2, 3), (1, 1, 2), (4, 1, 1)])
    run = simulate_cluster(inst, MCSF, "jsq", 2)
    assert assignment(run) == [0, 1, 0, 1]
    assert run.workers[0].starts == {"r0": 0, "r2": 1} and run.workers[1].starts == {"r1": 0, "r3": 4}


def test_least_kv_by_hand():
    # M = 30, K = 2. r0 (a=0): tie -> w0. r1 (a=0): no KV in use anywhere yet (r0 not started), fewer
    # requests on w1 -> w1. r2 (a=2): w0 holds r0's 10 + 2 = 12 tokens at time 2, w1 r1's 1 + 2 = 3 -> w1
    # (jsq would tie 1-1 and take w0). r3 (a=2): still 12 vs 3 (r2 has not started) -> w1.
    inst = Instance.from_tuples(30, [(0, 10, 5), (0, 1, 5), (2, 1, 1), (2, 1, 1)])
    assert assignment(simulate_cluster(inst, MCSF, "least-kv", 2)) == [0, 1, 1, 1]
    assert assignment(simulate_cluster(inst, MCSF, "jsq", 2)) == [0, 1, 0, 1]


def test_p2c_by_hand():
    # K = 3, six requests at 0 (nothing starts before all are routed, so a queue is what was routed).
    # random.Random(0) draws the pairs (1,2) (0,1) (1,2) (1,2) (1,2) (0,2): queues [0,0,0] -> 1;
    # [0,1,0] -> 0; [1,1,0] -> 2; [1,1,1] tie -> 1; [1,2,1] -> 2; [1,2,2] -> 0.
    inst = Instance.from_tuples(100, [(0, 1, 5)] * 6)
    assert assignment(simulate_cluster(inst, MCSF, "p2c", 3)) == [1, 0, 2, 1, 2, 0]
    # seed 7 draws (0,1) (0,1) (0,2) (0,1) (0,2) (0,2): -> 0, 1, 2, 0 (tie), 2, 0 (tie)
    assert assignment(simulate_cluster(inst, MCSF, "p2c:seed=7", 3)) == [0, 1, 2, 0, 2, 0]
    assert assignment(simulate_cluster(inst, MCSF, PowerOfTwoChoices(seed=7), 3)) == [0, 1, 2, 0, 2, 0]


def test_lookahead_by_hand():
    # M = 20, K = 2. r0 (a=0, s=10, o=8) -> w0 (all equal). r1 (a=0, s=2, o=2): both admit at once, w0
    # has r0 waiting -> w1. r2 (a=1, s=6, o=4): on w0 r0 holds 10 + τ, so at τ = t'+4 the total is
    # 10 + t' + 4 + 10 > 20 until r0 completes at 8 (delay 7); on w1 r1 holds 4 at τ = 2 and the
    # candidate at most 10: admitted at 1 (delay 0) -> w1, where jsq ties 1-1 and takes w0.
    # r3 (a=1, s=2, o=1): w0 admits at once (12 + 3 <= 20), w1 too, but r2 waits on w1 -> w0.
    inst = Instance.from_tuples(20, [(0, 10, 8), (0, 2, 2), (1, 6, 4), (1, 2, 1)])
    assert assignment(simulate_cluster(inst, MCSF, "lookahead", 2)) == [0, 1, 1, 0]
    assert assignment(simulate_cluster(inst, MCSF, "jsq", 2))[:3] == [0, 1, 0]


def test_jsq_counts_requests_in_flight():
    # Continuous time, 1 s batches, K = 2. r0 (0.0) -> w0, batch [0, 1). r1 (0.5): w0 has 1 -> w1 (idle:
    # jumps to 0.5). r2 (0.6): 1 and 1 -> w0, handed over at the end of w0's batch (1.0). r3 (0.7): w0 has
    # r0 running and r2 routed -> 2 > 1 -> w1.
    inst = TimedInstance(20, tuple(TimedRequest(f"r{i}", a, 1, 3) for i, a in enumerate([0.0, 0.5, 0.6, 0.7])))
    run = simulate_cluster(inst, MCSF, "jsq", 2, cost_model=ConstantCostModel(1.0))
    assert assignment(run) == [0, 1, 0, 1]
    assert run.workers[0].batch_start.tolist() == [0.0, 1.0, 2.0, 3.0]  # r2 starts at the batch end
    assert run.workers[1].batch_start.tolist() == [0.5, 1.5, 2.5, 3.5]
    assert run.latencies == pytest.approx({"r0": 3.0, "r1": 3.0, "r2": 3.4, "r3": 3.8})


def test_first_fit_by_hand():
    # J's wake-up example (lookahead.py): M = 14, (p, s, o) = (0, 1, 10); s = 1, o = 3 fits at 6, not at 7
    p = LookaheadProfile(14)
    p.add("a", 0, 1, 10)
    assert first_fit(p, 6, 1, 3) == 6 and first_fit(p, 7, 1, 3) == 8
    # past the first completion: two items end at 4 and 9; the candidate needs both gone
    q = LookaheadProfile(10)
    q.add("x", 0, 3, 4)  # 3 + τ on (0, 4]
    q.add("y", 0, 1, 9)  # 1 + τ on (0, 9]
    assert first_fit(q, 1, 5, 5) == 9


@settings(max_examples=300, deadline=None, derandomize=True)
@given(data=st.data())
def test_first_fit_matches_brute_force(data):
    M = data.draw(st.integers(4, 30))
    t = data.draw(st.integers(0, 8))

    def usage(its, tau):
        return sum(s + tau - p for (_, p, s, o) in its if p < tau <= p + o)

    items: list[tuple[str, int, int, int]] = []  # running after t, kept only while they fit together
    for j in range(data.draw(st.integers(0, 10))):
        s = data.draw(st.integers(1, M // 2))
        o = data.draw(st.integers(1, M - s))
        p = data.draw(st.integers(max(0, t - o + 1), t))
        if all(usage([*items, (str(j), p, s, o)], tau) <= M for tau in range(t + 1, t + M + 2)):
            items.append((str(j), p, s, o))
    profile = LookaheadProfile(M)
    for key, p, s, o in items:
        profile.add(key, p, s, o)
    s = data.draw(st.integers(1, M - 1))
    o = data.draw(st.integers(1, M - s))
    want = next(tp for tp in range(t, t + 4 * M)
                if all(usage([x for x in items if x[1] + x[3] > tp], tau) + s + tau - tp <= M
                       for tau in range(tp + 1, tp + o + 1)))
    assert first_fit(profile, t, s, o) == want
    assert first_fit(profile, t, s, o) == want  # the query leaves the profile as it was (past t)


def test_lookahead_hooks_follow_evictions():
    """With an evicting policy the router's profiles hold exactly what runs on each worker."""
    rng = random.Random(3)
    rows = [(rng.randint(0, 20), rng.randint(1, 4), rng.randint(1, 8)) for _ in range(40)]
    inst = Instance.from_tuples(14, rows)
    router = LookaheadRouter()
    seen = []
    orig = router.route

    def route(request, cluster: ClusterView):
        out = orig(request, cluster)  # brings every worker up to now and advances its profile
        for w in range(cluster.K):
            worker = cluster._clocks[w].w
            seen.append({r for r in router.profiles[w]._items} == {worker.requests[i].id for i in worker.running})
        return out

    router.route = route  # type: ignore[method-assign]
    run = simulate_cluster(inst, functools.partial(make_policy_spec, "alpha-protection:alpha=0.1,beta=0.5"), router, 3)
    assert run.evictions > 0 and all(seen)


# --- registry, information, errors, record ---------------------------------------------------


def test_registry():
    assert {"round-robin", "jsq", "least-kv", "p2c", "lookahead"} <= set(ROUTERS.names())
    assert ROUTERS.group == "llmopt.routers" and ROUTERS.kind == "router"
    with pytest.raises(RegistryError, match="already registered"):
        ROUTERS.register("jsq", "x:y")
    with pytest.raises(RegistryError, match="unknown router 'nope'; known: .*jsq"):
        make_router("nope")
    assert make_router_spec("p2c:seed=3").seed == 3
    assert make_router_spec("p2c", seed=5).seed == 5 and make_router_spec("p2c:seed=1", seed=5).seed == 1
    ROUTERS.register("test-always-last", lambda: _AlwaysLast())
    try:
        run = simulate_cluster(Instance.from_tuples(9, [(0, 1, 1)] * 3), MCSF, "test-always-last", 3)
        assert set(run.assignment.values()) == {2}
    finally:
        ROUTERS.unregister("test-always-last")


class _AlwaysLast:
    name = "always-last"

    def reset(self, K, M):
        self.K = K

    def route(self, request, cluster):
        return self.K - 1


class _ReadsOutput(_AlwaysLast):
    def route(self, request, cluster):
        return request.output % self.K


def test_router_never_sees_a_hidden_output():
    inst = Instance(20, tuple(Request(f"r{i}", 0, 2, 4, 3, 6) for i in range(4)))
    with pytest.raises(HiddenOutputError):
        simulate_cluster(inst, functools.partial(make_policy_spec, "a-max"), _ReadsOutput(), 2)
    simulate_cluster(inst, MCSF, _ReadsOutput(), 2)  # MC-SF sees o: so may its router
    # the look-ahead router falls back on the interval's upper end, and refuses with neither
    run = simulate_cluster(inst, functools.partial(make_policy_spec, "a-max"), "lookahead", 2)
    assert sorted(run.load()) == [2, 2]
    plain = Instance.from_tuples(20, [(0, 2, 4)] * 2)
    with pytest.raises(SimulationError, match="neither its output length"):
        simulate_cluster(plain, MCSF, "lookahead", 2, visibility=Visibility.HIDDEN)


def test_bad_answers_and_arguments():
    inst = Instance.from_tuples(9, [(0, 1, 1)] * 2)

    class Off(_AlwaysLast):
        def route(self, request, cluster):
            return self.K

    with pytest.raises(SimulationError, match="to worker 2; the workers are 0 … 1"):
        simulate_cluster(inst, MCSF, Off(), 2)
    with pytest.raises(ValueError, match="K must be"):
        simulate_cluster(inst, MCSF, "jsq", 0)
    with pytest.raises(TypeError, match="needs a cost_model"):
        simulate_cluster(timed(inst), MCSF, "jsq", 2)
    with pytest.raises(TypeError, match="discrete"):
        simulate_cluster(inst, MCSF, "jsq", 2, cost_model=COST)


def test_policy_objects_are_copied_per_worker():
    rng = random.Random(1)
    inst = Instance.from_tuples(30, [(rng.randint(0, 10), rng.randint(1, 5), rng.randint(1, 12)) for _ in range(30)])
    mine = MCSF()
    by_object = simulate_cluster(inst, mine, "jsq", 3)
    by_class = simulate_cluster(inst, MCSF, "jsq", 3)
    assert by_object.assignment == by_class.assignment
    assert [w.starts for w in by_object.workers] == [w.starts for w in by_class.workers]
    assert mine.queue == [] and len(mine.profile) == 0  # the caller's object was never run


def test_record_round_trip_and_summary():
    inst = Instance.from_tuples(12, [(0, 2, 3), (0, 3, 4), (1, 1, 2), (2, 2, 2), (9, 1, 1)])
    run = simulate_cluster(inst, MCSF, "round-robin", 2)
    again = ClusterSchedule.from_dict(json.loads(json.dumps(run.to_dict())), inst)
    assert again.assignment == run.assignment and again.latencies == run.latencies
    assert [discrete_key(w) for w in again.workers] == [discrete_key(w) for w in run.workers]
    s = run.summary()
    lat = sorted(run.latencies.values())
    assert s["total_latency"] == sum(lat) == run.tel == sum(w.tel for w in run.workers)
    assert s["p50_latency"] == lat[2] and s["p99_latency"] == lat[-1] and s["load"] == [3, 2]
    assert s["makespan"] == max(w.makespan for w in run.workers)
    ti = timed(inst, 0.5)
    trun = simulate_cluster(ti, MCSF, "jsq", 2, cost_model=COST)
    tagain = ClusterSchedule.from_dict(json.loads(json.dumps(trun.to_dict())), ti)
    assert [timed_key(w) for w in tagain.workers] == [timed_key(w) for w in trun.workers]
    busy = sum(float(w.batch_duration.sum()) for w in trun.workers)
    assert trun.busy_seconds == pytest.approx(busy) and trun.summary()["busy_seconds_per_request"] == \
        pytest.approx(busy / 5)


def test_the_engine_takes_router_objects_not_names() -> None:
    """Routers are decisions (``llmopt.policies.routers``); the mechanism takes an object and refuses a name."""
    from llmopt.engine.cluster import simulate_cluster as engine_simulate_cluster

    inst = Instance.from_tuples(9, [(0, 1, 1)] * 3)
    with pytest.raises(TypeError, match="router object"):
        engine_simulate_cluster(inst, MCSF, "jsq", 2)
    run = engine_simulate_cluster(inst, MCSF, JoinShortestQueue(), 2)
    assert sorted(run.assignment.values()) == [0, 0, 1]
