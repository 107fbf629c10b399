"""The independent checker of multi-worker schedules (llmopt.verify.cluster).

It accepts what the cluster engine produces — discrete and continuous time, every router, look-ahead
and evicting policies, K = 1 … 4 — with the TEL / latencies it recomputes equal to the run's, from the
record or its JSON; and it rejects tampered runs: a request on two workers, a request on a worker it
was not assigned to, an unassigned or unknown request, a worker index out of range, memory over M on
one worker, a start before the arrival, a batch duration the cost model does not give, a worker that
resumes at another worker's arrival, and claimed TELs / completions / totals that are not the
schedule's.

Breakages tried by hand (each edit applied to llmopt/verify/cluster.py, the named tests run, reverted;
every one fails):

* the "scheduled on N workers" check removed — ``test_request_on_two_workers`` (its message is gone);
  that check and the "assigned to worker" check both removed — the tampered run is accepted;
* the single-worker check's verdict ignored — ``test_memory_overflow_on_one_worker``,
  ``test_start_before_arrival``;
* a continuous worker checked against every request of the instance instead of its own —
  ``test_idle_worker_resumes_only_at_its_own_arrivals``, ``test_engine_output_is_accepted``;
* the assignment's range check dropped — ``test_bad_assignments`` (an IndexError, not a report);
* the claimed-completion comparison dropped — ``test_claimed_numbers_must_match``;
* the ownership check of evictions dropped — ``test_bad_assignments``.
"""

from __future__ import annotations

import copy
import functools
import json

import pytest
from cluster_helpers import simulate_cluster
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.engine.core import EvictionLoopError
from llmopt.engine.cost_model import ConstantCostModel, make_cost_model
from llmopt.model.instance import Instance
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import MCSF, make_policy_spec
from llmopt.verify.cluster import check_cluster_schedule

COST = make_cost_model("llama2-70b-a100-tp2")
ROUTERS = ["round-robin", "jsq", "least-kv", "p2c:seed=2", "lookahead"]
POLICIES = ["mc-sf", "fcfs", "alpha-protection:alpha=0.1,beta=0.5", "sorted-f"]


@st.composite
def instances(draw, max_n: int = 16) -> Instance:
    M = draw(st.integers(6, 40))
    rows = []
    for _ in range(draw(st.integers(1, max_n))):
        s = draw(st.integers(1, M // 2))
        rows.append((draw(st.integers(0, 15)), s, draw(st.integers(1, M - s))))
    return Instance.from_tuples(M, rows)


def timed(inst: Instance, scale: float = 0.3) -> TimedInstance:
    return TimedInstance(inst.M, tuple(TimedRequest(r.id, r.arrival * scale, r.prompt, r.output)
                                       for r in inst.requests))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(inst=instances(), spec=st.sampled_from(POLICIES), router=st.sampled_from(ROUTERS), K=st.integers(1, 4),
       continuous=st.booleans())
def test_engine_output_is_accepted(inst, spec, router, K, continuous):
    problem, cost = (timed(inst), COST) if continuous else (inst, None)
    try:
        run = simulate_cluster(problem, functools.partial(make_policy_spec, spec), router, K, cost_model=cost,
                               max_steps=5000, max_iterations=5000)
    except EvictionLoopError:
        return
    report = check_cluster_schedule(problem, run, cost)
    assert report.ok, report.violations
    assert report.tel == pytest.approx(run.total_latency, rel=1e-12)
    assert report.latencies == pytest.approx(dict(run.latencies), rel=1e-12)
    assert report.makespan == pytest.approx(run.makespan, rel=1e-12)
    from_json = check_cluster_schedule(problem, json.loads(json.dumps(run.to_dict())), cost)
    assert from_json.ok and from_json.tel == pytest.approx(report.tel, rel=1e-12)


# --- tampered runs ---------------------------------------------------------------------------

#: M = 10, two workers under round-robin: w0 gets r0, r2; w1 gets r1, r3
INST = Instance.from_tuples(10, [(0, 2, 3), (0, 2, 3), (1, 3, 2), (1, 1, 4)])


def base_run() -> dict:
    run = simulate_cluster(INST, MCSF, "round-robin", 2)
    assert run.assignment == {"r0": 0, "r1": 1, "r2": 0, "r3": 1}
    data = run.to_dict()
    assert check_cluster_schedule(INST, data).ok
    return data


def rejected(data, instance=INST, cost=None, match: str = "") -> None:
    report = check_cluster_schedule(instance, data, cost)
    assert not report.ok and report.tel is None and report.latencies is None
    assert any(match in v for v in report.violations), report.violations


def test_request_on_two_workers():
    data = base_run()
    data["workers"][1]["starts"]["r0"] = 0  # r0 also on worker 1, where r1 and r3 fit beside it
    rejected(data, match="'r0' is scheduled on 2 workers (0, 1)")
    rejected(data, match="worker 1 schedules request 'r0', which is assigned to worker 0")


def test_wrong_assignment():
    data = base_run()
    data["assignment"]["r2"] = 1  # r2 ran on worker 0
    rejected(data, match="worker 0 schedules request 'r2', which is assigned to worker 1")
    rejected(data, match="'r2' is assigned to worker 1, which does not schedule it")
    moved = base_run()  # the run moved consistently, but worker 1 cannot hold it: memory
    moved["assignment"]["r2"] = 1
    moved["workers"][1]["starts"]["r2"] = moved["workers"][0]["starts"].pop("r2")
    moved["workers"][1]["starts"]["r1"] = 0
    moved["workers"][1]["starts"]["r3"] = 1
    moved["workers"][0].pop("tel")
    moved["workers"][1].pop("tel")
    moved.pop("summary")
    rejected(moved, match="worker 1: memory at time")


def test_bad_assignments():
    data = base_run()
    del data["assignment"]["r3"]
    rejected(data, match="'r3' is assigned to no worker")
    data = base_run()
    data["assignment"]["r3"] = 2
    rejected(data, match="'r3' is assigned to worker 2; the workers are 0 … 1")
    data = base_run()
    data["assignment"]["ghost"] = 0
    rejected(data, match="names request 'ghost', which is not in the instance")
    data = base_run()
    data["workers"][0]["starts"].pop("r2")
    rejected(data, match="'r2' is assigned to worker 0, which does not schedule it")
    data = base_run()
    data["workers"].pop()
    rejected(data, match="K = 2 but the run lists 1 worker schedules")
    data = base_run()
    data["workers"][0]["evictions"] = [{"t": 1, "id": "r1", "tokens_lost": 1}]
    rejected(data, match="worker 0: eviction #0 is of request 'r1', which is assigned to worker 1")


def test_memory_overflow_on_one_worker():
    # M = 10, four requests (a=0, s=4, o=5) round-robin on two workers: each worker runs its two one after
    # the other (together they hold 6 + 6 = 12 > 10 at time 2). Start worker 0's second one at 0.
    inst = Instance.from_tuples(10, [(0, 4, 5)] * 4)
    run = simulate_cluster(inst, MCSF, "round-robin", 2).to_dict()
    assert run["workers"][0]["starts"] == {"r0": 0, "r2": 5} and check_cluster_schedule(inst, run).ok
    run["workers"][0]["starts"]["r2"] = 0
    run["workers"][0].pop("tel")
    run.pop("summary")
    rejected(run, instance=inst, match="worker 0: memory at time 2 is 12 > M = 10")
    assert all(not v.startswith("worker 1") for v in check_cluster_schedule(inst, run).violations)


def test_start_before_arrival():
    data = base_run()
    data["workers"][1]["starts"]["r3"] = 0  # r3 arrives at 1
    data["workers"][1].pop("tel")
    data.pop("summary")
    rejected(data, match="worker 1: request 'r3' starts at 0 before its arrival 1")


def test_claimed_numbers_must_match():
    data = base_run()
    data["workers"][0]["tel"] += 1
    rejected(data, match="worker 0: claims TEL")
    data = base_run()
    data["summary"]["total_latency"] -= 1
    rejected(data, match="the run claims total latency")
    ti = timed(INST, 0.5)
    trun = simulate_cluster(ti, MCSF, "jsq", 2, cost_model=COST).to_dict()
    assert check_cluster_schedule(ti, trun, COST).ok
    bad = copy.deepcopy(trun)
    rid = next(iter(bad["workers"][1]["completions"]))
    bad["workers"][1]["completions"][rid] += 0.25
    rejected(bad, instance=ti, cost=COST, match=f"worker 1: request {rid!r} claims completion")


def test_batch_durations_come_from_the_cost_model():
    ti = timed(INST, 0.5)
    run = simulate_cluster(ti, MCSF, "round-robin", 2, cost_model=COST).to_dict()
    run["workers"][1]["batch_duration"][0] *= 1.01
    rejected(run, instance=ti, cost=COST, match="worker 1: iteration 0: duration")
    rejected(simulate_cluster(ti, MCSF, "round-robin", 2, cost_model=COST).to_dict(), instance=ti,
             match="needs the cost model")


def test_idle_worker_resumes_only_at_its_own_arrivals():
    # 1 s batches, round-robin: w0 serves a (0.0) and c (2.5), w1 serves x (2.0) and b (4.0). Worker 0 may
    # not resume at 4.0 — an arrival of the instance, but of worker 1's request.
    ti = TimedInstance(10, tuple(TimedRequest(rid, a, 1, 1) for rid, a in
                                 (("a", 0.0), ("x", 2.0), ("c", 2.5), ("b", 4.0))))
    one = ConstantCostModel(1.0)
    run = simulate_cluster(ti, MCSF, "round-robin", 2, cost_model=one).to_dict()
    assert run["assignment"] == {"a": 0, "x": 1, "c": 0, "b": 1} and check_cluster_schedule(ti, run, one).ok
    assert run["workers"][0]["batch_start"] == [0.0, 2.5]
    run["workers"][0]["batch_start"][1] = 4.0
    run["workers"][0]["completions"]["c"] = 5.0
    run.pop("summary")
    rejected(run, instance=ti, cost=one, match="worker 0: iteration 1: the idle worker resumes at 4.0")


def test_clock_must_match_the_instance():
    data = base_run()
    data["clock"] = "seconds"
    rejected(data, match="the run's clock is 'seconds'")
