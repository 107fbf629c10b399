"""Batch limits and KV blocks on K workers: each worker caps its own batches and counts its own blocks,
with the single-worker semantics; the cluster checker verifies them per worker and rejects tampered runs."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.engine.cluster import simulate_cluster
from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import simulate
from llmopt.model.cluster_schedule import ClusterSchedule
from llmopt.model.instance import Instance, Request
from llmopt.model.schedule import BatchLimits
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import make_policy_spec
from llmopt.policies.routers import make_router_spec
from llmopt.verify.cluster import check_cluster_schedule

COST = make_cost_model("llama2-70b-a100-tp2")


def _run(inst: Any, spec: str, K: int, **limits: Any) -> ClusterSchedule:
    cost = COST if isinstance(inst, TimedInstance) else None
    return simulate_cluster(inst, functools.partial(make_policy_spec, spec), make_router_spec("round-robin"), K,
                            cost_model=cost, **limits)


# four equal requests at 0, round-robin on two workers: r0, r2 on worker 0; r1, r3 on worker 1
FOUR = Instance(100, tuple(Request(f"r{i}", 0, 2, 3) for i in range(4)))


def test_max_num_seqs_caps_each_workers_batch() -> None:
    run = _run(FOUR, "fcfs", 2, max_num_seqs=1)
    assert [dict(w.starts) for w in run.workers] == [{"r0": 0, "r2": 3}, {"r1": 0, "r3": 3}]
    assert all(w.limits == BatchLimits(max_num_seqs=1) for w in run.workers)
    assert check_cluster_schedule(FOUR, run).ok
    # without the limit every request starts at 0
    assert [dict(w.starts) for w in _run(FOUR, "fcfs", 2).workers] == [{"r0": 0, "r2": 0}, {"r1": 0, "r3": 0}]


def test_blocks_are_counted_per_worker() -> None:
    # M = 8 in blocks of 4: two blocks per worker; a request of 2 + 3 needs ceil(5 / 4) = 2, so each worker
    # runs one request at a time (vllm preempts the second), though 2 · 5 = 10 tokens would not fit either
    inst = Instance(8, tuple(Request(f"r{i}", 0, 2, 3) for i in range(4)))
    run = _run(inst, "vllm", 2, block_size=4)
    assert [dict(w.starts) for w in run.workers] == [{"r0": 0, "r2": 3}, {"r1": 0, "r3": 3}]
    assert check_cluster_schedule(inst, run).ok


@settings(max_examples=40, deadline=None, derandomize=True)
# vllm's default batching follows the clock (prefill-first only where iterations can pause, a single worker):
# mixed is the batching both engines share
@given(seed=st.integers(0, 10_000), spec=st.sampled_from(["vllm:batching=mixed", "orca:max_len=12", "fcfs",
                                                          "sarathi:chunk_size=6"]),
       block=st.sampled_from([1, 4]), seqs=st.one_of(st.none(), st.integers(1, 3)))
def test_one_worker_with_limits_is_the_single_worker_engine(seed: int, spec: str, block: int,
                                                          seqs: int | None) -> None:
    import random

    if spec == "fcfs":
        block = 1  # a paper policy counts tokens, not blocks
    rng = random.Random(seed)
    reqs = [(f"q{i}", rng.randint(0, 6), rng.randint(1, 9), rng.randint(1, 8)) for i in range(rng.randint(1, 10))]
    limits: dict[str, Any] = dict(block_size=block, max_num_seqs=seqs, max_num_batched_tokens=None)
    if not spec.startswith("sarathi"):
        limits["max_num_batched_tokens"] = 12
        disc = Instance(40, tuple(Request(*r) for r in reqs))
        one = simulate(disc, make_policy_spec(spec), **limits)
        run = _run(disc, spec, 1, **limits)
        assert dict(run.workers[0].starts) == dict(one.starts) and run.workers[0].evictions == one.evictions
        assert check_cluster_schedule(disc, run).ok
    timed = TimedInstance(40, tuple(TimedRequest(i, a * 0.05, s, o) for i, a, s, o in reqs))
    one_t = simulate_continuous(timed, make_policy_spec(spec), COST, **limits)
    run_t = _run(timed, spec, 1, **limits)
    w = run_t.workers[0]
    assert dict(w.starts) == dict(one_t.starts) and w.chunks == one_t.chunks
    assert w.batch_duration.tolist() == one_t.batch_duration.tolist()
    assert check_cluster_schedule(timed, run_t, COST).ok


def test_cluster_checker_rejects_a_tampered_batch_limit() -> None:
    run = _run(FOUR, "fcfs", 2, max_num_seqs=1)
    d = run.to_dict()
    assert check_cluster_schedule(FOUR, d).ok
    bad = copy.deepcopy(d)
    bad["workers"][0]["starts"]["r2"] = 0  # r0 and r2 in worker 0's batch of step 0
    bad["workers"][0].pop("tel", None)
    rep = check_cluster_schedule(FOUR, bad)
    assert not rep.ok and any(v.startswith("worker 0: batch of step 0: 2 requests > max_num_seqs = 1")
                              for v in rep.violations)
    # the same run claimed with blocks of 64 in M = 100: one block per worker, and r0, r2 overlap on (0, 3]
    bad = copy.deepcopy(d)
    for wd in bad["workers"]:
        wd["limits"] = {"max_num_seqs": None, "max_num_batched_tokens": None, "block_size": 64}
    bad["workers"][0]["starts"]["r2"] = 1
    bad["workers"][0].pop("tel", None)
    rep = check_cluster_schedule(FOUR, bad)
    assert not rep.ok and any(v.startswith("worker 0: memory at time 2 is 2 blocks of 64 > M // block_size = 1")
                              for v in rep.violations)


def test_chunked_cluster_run_verifies_and_round_trips() -> None:
    inst = TimedInstance(400, tuple(TimedRequest(f"q{i}", 0.1 * i, 20 + 37 * i % 90, 1 + 5 * i % 7)
                                    for i in range(16)))
    run = _run(inst, "sarathi:chunk_size=32", 2, block_size=16, max_num_seqs=4)
    assert all(w.chunks for w in run.workers)
    assert check_cluster_schedule(inst, run, COST).ok
    back = ClusterSchedule.from_dict(run.to_dict(), inst)
    assert [w.chunks for w in back.workers] == [w.chunks for w in run.workers]
    assert [w.limits for w in back.workers] == [BatchLimits(4, None, 16)] * 2
    assert check_cluster_schedule(inst, back, COST).ok
    bad = run.to_dict()
    t, rid, c = bad["workers"][1]["chunks"][0]
    bad["workers"][1]["chunks"][0] = [t, rid, c + 1]  # a chunk of one token more: its batch's time is wrong
    rep = check_cluster_schedule(inst, bad, COST)
    assert not rep.ok and rep.violations[0].startswith("worker 1: iteration")


def test_cli_runs_limits_on_workers(tmp_path: Any) -> None:
    import json

    from typer.testing import CliRunner

    from llmopt.cli.main import app
    from llmopt.model.instance import save_instance

    path = tmp_path / "four.json"
    save_instance(FOUR, path)
    result = CliRunner().invoke(app, ["simulate", str(path), "--policy", "fcfs", "--workers", "2", "--max-num-seqs",
                                      "1", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["verified"] and [w["starts"] for w in out["workers"]] == [{"r0": 0, "r2": 3}, {"r1": 0, "r3": 3}]
    assert out["workers"][0]["limits"]["max_num_seqs"] == 1


@pytest.mark.parametrize("K", [2, 3])
def test_a_request_too_big_for_a_workers_blocks_is_refused_by_name(K: int) -> None:
    from llmopt.engine.core import SimulationError

    inst = Instance(8, (Request("big", 0, 4, 2),))  # 6 tokens: 2 blocks of 4 fit; blocks of 5: 2 > 8 // 5
    assert _run(inst, "vllm", K, block_size=4).workers[0].starts == {"big": 0}
    with pytest.raises(SimulationError, match="'big'.*2 blocks of 5"):
        _run(inst, "vllm", K, block_size=5)


@pytest.mark.parametrize("timed", [False, True])
def test_a_worker_overflowing_its_blocks_is_stopped(timed: bool) -> None:
    from llmopt.engine.core import SimulationError

    # fcfs plans in tokens: two requests of 2 + 3 per worker fit M = 10 tokens, but at 5 tokens each needs
    # 2 of the worker's 10 // 4 = 2 blocks
    rows = [(f"r{i}", 0, 2, 3) for i in range(4)]
    inst: Any = (TimedInstance(10, tuple(TimedRequest(*r) for r in rows)) if timed
                 else Instance(10, tuple(Request(*r) for r in rows)))
    with pytest.raises(SimulationError, match=r"worker 0: .*4 blocks of 4 > M // block_size = 2"):
        _run(inst, "fcfs", 2, block_size=4)
    assert check_cluster_schedule(inst, _run(inst, "fcfs", 2), COST if timed else None).ok
