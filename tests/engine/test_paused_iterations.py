"""Paused iterations (``Decision.prefill_only``, vLLM v0's prefill-priority batches): the continuous engine,
the schedule record and its JSON, the timed checker, and ``vllm:batching=prefill-first``."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.core import Decision, SimulationError
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import simulate
from llmopt.model.batch import BatchShape
from llmopt.model.instance import Instance, Request
from llmopt.model.schedule_file import timed_schedule
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.model.timed_schedule import TimedSchedule
from llmopt.policies import make_policy_spec
from llmopt.policies.vllm import VLLMScheduler
from llmopt.verify.timed import check_timed_schedule


class Recorder:
    """One second per batch; records the shape of every batch it times."""

    name = "recorder"

    def __init__(self) -> None:
        self.shapes: list[BatchShape] = []

    def batch_time(self, shape: BatchShape) -> float:
        self.shapes.append(shape)
        return 1.0


class Shaped:
    """``1 + prefill requests / 4 + decode requests / 8`` seconds: a decode changes the time of a batch."""

    name = "shaped"

    def batch_time(self, shape: BatchShape) -> float:
        return 1.0 + 0.25 * shape.prefill_requests + 0.125 * shape.decode_requests


def _check(inst: TimedInstance, s: TimedSchedule, cost: Any, **over: Any) -> Any:
    args: dict[str, Any] = dict(evictions=s.evictions, stalls=s.stalls, limits=s.limits, chunks=s.chunks,
                                paused=s.paused, eviction_starts=s.eviction_starts)
    args.update(over)
    starts = args.pop("starts", s.starts)
    bd = args.pop("batch_duration", s.batch_duration)
    return check_timed_schedule(inst, starts, s.batch_start, bd, cost, **args)


# a (4 + 3) at 0 s, b (2 + 2) at 1.5 s; M = 100, no watermark, one second per batch. By hand:
#   iteration 0 [0, 1): prefill a (nothing runs: an ordinary batch)          memory 5
#   iteration 1 [1, 2): decode a (its 2nd token)                              memory 6
#   iteration 2 [2, 3): b arrived: prefill-first admits it, a pauses          memory 6 + 3 = 9 (a flat at 6)
#   iteration 3 [3, 4): decode a (3rd token: completes at 4 s), b (2nd: 4 s)  memory 7 + 4 = 11
# With mixed batching a decodes in iteration 2 and completes at 3 s.
TRACED = TimedInstance(100, (TimedRequest("a", 0.0, 4, 3), TimedRequest("b", 1.5, 2, 2)))


def test_hand_traced_pause() -> None:
    cost = Recorder()
    s = simulate_continuous(TRACED, VLLMScheduler(watermark=0, batching="prefill-first"), cost)
    assert s.paused == (2,)
    assert dict(s.starts) == {"a": 0, "b": 2}
    assert dict(s.completions) == {"a": 4.0, "b": 4.0}  # a one iteration later than without the pause
    assert s.memory_after_batches().tolist() == [5, 6, 9, 11]  # a holds 6 before and after the pause
    assert cost.shapes[2] == BatchShape(1, 2, 4, 0, 0)  # the paused batch: b's prefill, no decode
    assert cost.shapes[3] == BatchShape(0, 0, 0, 2, (4 + 2) + (2 + 1))
    rep = _check(TRACED, s, Recorder())
    assert rep.ok, rep.violations
    assert rep.latencies == {"a": 4.0, "b": 2.5} and rep.peak_memory == 11
    mixed = simulate_continuous(TRACED, VLLMScheduler(watermark=0, batching="mixed"), Recorder())
    assert mixed.paused == () and dict(mixed.completions) == {"a": 3.0, "b": 4.0}


def test_completion_shifts_by_one_per_pause() -> None:
    # a (2 + 4) at 0; b, c, d (1 + 1) arrive one per batch at 1.5, 2.5, 3.5 s: each is admitted into a
    # prefill-only batch (iterations 2, 3, 4) and completes in it; a decodes in 0, 1, 5, 6 and completes
    # at the end of iteration 6 (7 s) instead of 3 (4 s): three pauses, three iterations later
    inst = TimedInstance(100, (TimedRequest("a", 0.0, 2, 4), TimedRequest("b", 1.5, 1, 1),
                               TimedRequest("c", 2.5, 1, 1), TimedRequest("d", 3.5, 1, 1)))
    s = simulate_continuous(inst, VLLMScheduler(watermark=0, batching="prefill-first"), Recorder())
    assert s.paused == (2, 3, 4)
    assert s.completions["a"] == 7.0
    assert [s.completions[r] for r in "bcd"] == [3.0, 4.0, 5.0]
    mem = s.memory_after_batches().tolist()
    assert mem == [3, 4, 4 + 2, 4 + 2, 4 + 2, 5, 6]  # a flat at 4 during the pauses; each short request 2
    assert _check(inst, s, Recorder()).ok


def test_tampered_schedules_are_rejected() -> None:
    cost = Shaped()  # iterations 0 [0, 1.25) and 1 [1.25, 2.375): b (1.5 s) is admitted in iteration 2
    s = simulate_continuous(TRACED, VLLMScheduler(watermark=0, batching="prefill-first"), cost)
    assert s.paused == (2,) and _check(TRACED, s, cost).ok
    # the pause removed: a must complete at iteration 3, and iteration 2 would decode it
    rep = _check(TRACED, s, cost, paused=())
    assert not rep.ok and any("iteration 2" in v for v in rep.violations), rep.violations
    # a decode during the pause: the paused batch timed as a mixed one
    bd = s.batch_duration.copy()
    bd[2] = cost.batch_time(BatchShape(1, 2, 4, 1, 4 + 2))
    rep = _check(TRACED, s, cost, batch_duration=bd)
    assert not rep.ok and any("iteration 2 (paused)" in v for v in rep.violations), rep.violations
    # a pause claimed where nothing is prefilled: a completes one iteration later, past the batches
    assert not _check(TRACED, s, cost, paused=(1, 2)).ok
    # a pause claimed where nothing ran before (a's own prefill)
    rep = _check(TRACED, s, cost, paused=(0, 2))
    assert not rep.ok and any("nothing runs to pause" in v for v in rep.violations), rep.violations
    # a pause claimed in the last iteration: a's run no longer fits in the recorded batches
    rep = _check(TRACED, s, cost, paused=(2, 3))
    assert not rep.ok


def test_memory_is_checked_with_pauses() -> None:
    s = simulate_continuous(TRACED, VLLMScheduler(watermark=0, batching="prefill-first"), Recorder())
    small = TimedInstance(10, TRACED.requests)  # peak 11 > 10
    rep = _check(small, s, Recorder())
    assert not rep.ok and any("memory after iteration 3: 11 > M = 10" in v for v in rep.violations)


def _preempting() -> TimedInstance:
    return TimedInstance(24, tuple(TimedRequest(f"q{i}", 0.5 * i, 3 + i % 4, 6 + (3 * i) % 5) for i in range(8)))


def test_evicted_runs_with_pauses_verify_and_a_wrong_start_is_rejected() -> None:
    inst = _preempting()
    s = simulate_continuous(inst, VLLMScheduler(watermark=0, batching="prefill-first"), Recorder())
    assert s.paused and s.evictions, "the instance must both pause and preempt"
    assert len(s.eviction_starts) == len(s.evictions)
    rep = _check(inst, s, Recorder())
    assert rep.ok, rep.violations
    assert rep.recomputed_tokens == s.recomputed_tokens
    wrong = (s.eviction_starts[0] - 1,) + s.eviction_starts[1:]
    assert not _check(inst, s, Recorder(), eviction_starts=wrong).ok


def test_json_round_trip_and_command_line_check(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from llmopt.cli.main import app
    from llmopt.model.timed_instance import save_timed_instance

    inst = _preempting()
    cost = make_cost_model("llama2-70b-a100-tp2")
    s = simulate_continuous(inst, VLLMScheduler(watermark=0, batching="prefill-first"), cost)
    f = timed_schedule(json.loads(json.dumps(s.to_dict())))
    assert tuple(f["paused"]) == s.paused and tuple(f["eviction_starts"]) == s.eviction_starts
    rep = check_timed_schedule(inst, f["starts"], f["batch_start"], f["batch_duration"], cost,
                               evictions=f["evictions"], paused=f["paused"], eviction_starts=f["eviction_starts"])
    assert rep.ok and rep.mean_latency == pytest.approx(s.mean_latency)
    path, out, bad = tmp_path / "inst.json", tmp_path / "run.json", tmp_path / "bad.json"
    save_timed_instance(inst, path)
    runner = CliRunner()
    result = runner.invoke(app, ["simulate", str(path), "--policy", "vllm:batching=prefill-first", "--json"])
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)
    assert run["verified"] and run["paused"]
    out.write_text(result.stdout)
    assert runner.invoke(app, ["check", str(path), str(out)]).exit_code == 0
    run["paused"] = run["paused"][1:]  # one pause dropped
    bad.write_text(json.dumps(run))
    result = runner.invoke(app, ["check", str(path), str(bad)])
    assert result.exit_code == 1 and "INFEASIBLE" in result.output


def test_the_discrete_engine_refuses_a_pause() -> None:
    inst = Instance(100, (Request("a", 0, 4, 3), Request("b", 1, 2, 2)))
    with pytest.raises(SimulationError, match="prefill-only batch; only the single-worker continuous engine"):
        simulate(inst, VLLMScheduler(batching="prefill-first"))


class _PauseAndChunk:
    name = "pause-and-chunk"

    def on_arrival(self, t: int, request: Any) -> None:
        pass

    def decide(self, t: int) -> Decision:
        if t == 0:
            return Decision(start=("a",), wake_at=1)
        return Decision(start=("b",), chunk=(("c", 1),), prefill_only=True) if t == 1 else Decision()


def test_the_engine_refuses_a_pause_with_chunks() -> None:
    inst = TimedInstance(100, tuple(TimedRequest(x, 0.0, 3, 3) for x in "abc"))
    with pytest.raises(SimulationError, match="together with chunked prefill or a stall"):
        simulate_continuous(inst, _PauseAndChunk(), Recorder())


def test_batching_option() -> None:
    p = make_policy_spec("vllm:batching=mixed")
    assert isinstance(p, VLLMScheduler) and p.batching == "mixed"
    with pytest.raises(ValueError, match="batching must be one of mixed, prefill-first"):
        VLLMScheduler(batching="v0")


def test_default_batching_follows_the_clock() -> None:
    # vLLM v0's prefill-first where the clock has paused iterations, mixed on the token and K-worker clocks
    assert VLLMScheduler().batching == "prefill-first"
    default = simulate_continuous(TRACED, VLLMScheduler(watermark=0), Recorder())
    first = simulate_continuous(TRACED, VLLMScheduler(watermark=0, batching="prefill-first"), Recorder())
    mixed = simulate_continuous(TRACED, VLLMScheduler(watermark=0, batching="mixed"), Recorder())
    assert default.paused and default.to_dict() == first.to_dict() and default.to_dict() != mixed.to_dict()
    inst = Instance(100, tuple(Request(x, 0, 3, 3) for x in "ab") + (Request("c", 1, 3, 3),))
    assert simulate(inst, VLLMScheduler(watermark=0)).to_dict() == simulate(
        inst, VLLMScheduler(watermark=0, batching="mixed")).to_dict()
    with pytest.raises(SimulationError, match="only the single-worker continuous engine"):
        simulate(inst, VLLMScheduler(watermark=0, batching="prefill-first"))
    from llmopt.engine.cluster import simulate_cluster
    from llmopt.policies.routers import make_router_spec

    clustered = simulate_cluster(TRACED, lambda: VLLMScheduler(watermark=0), make_router_spec("round-robin"), K=1,
                                 cost_model=Recorder())
    assert clustered.mean_latency == pytest.approx(mixed.mean_latency)


@st.composite
def timed_instances(draw: Any) -> TimedInstance:
    n = draw(st.integers(1, 12))
    M = draw(st.integers(24, 80))
    reqs = []
    for i in range(n):
        s = draw(st.integers(1, 20))
        o = draw(st.integers(1, max(1, min(15, M - s - 1))))
        reqs.append(TimedRequest(f"q{i}", draw(st.integers(0, 8)) * 0.25, s, o))
    return TimedInstance(M, tuple(reqs))


@settings(max_examples=80, deadline=None)
@given(inst=timed_instances(), block=st.sampled_from([1, 2, 4]), seqs=st.one_of(st.none(), st.integers(1, 4)),
       tokens=st.one_of(st.none(), st.integers(24, 40)), watermark=st.sampled_from([0.0, 0.1]))
def test_prefill_first_schedules_always_verify(inst: TimedInstance, block: int, seqs: int | None, tokens: int | None,
                                               watermark: float) -> None:
    if any(-(-(r.prompt + r.output) // block) > inst.M // block for r in inst.requests):
        return
    cost = make_cost_model("llama2-70b-a100-tp2")
    s = simulate_continuous(inst, VLLMScheduler(watermark=watermark, batching="prefill-first"), cost,
                            block_size=block, max_num_seqs=seqs, max_num_batched_tokens=tokens)
    assert s.n_completed == len(inst.requests)
    rep = _check(inst, s, cost)
    assert rep.ok, rep.violations
    assert rep.mean_latency == pytest.approx(s.mean_latency)
    assert rep.peak_memory == s.peak_memory
    assert rep.recomputed_tokens == s.recomputed_tokens
    if s.paused:  # the same run without its pauses is not a valid schedule
        assert not _check(inst, dataclasses.replace(s, paused=()), cost).ok


def test_the_k_worker_clock_refuses_a_pause() -> None:
    from llmopt.engine.cluster import simulate_cluster
    from llmopt.policies.routers import make_router_spec

    with pytest.raises(SimulationError, match="prefill-only batch; only the single-worker continuous engine"):
        simulate_cluster(TRACED, lambda: VLLMScheduler(watermark=0, batching="prefill-first"),
                         make_router_spec("round-robin"), K=1, cost_model=Recorder())


def test_a_bad_paused_field_is_named() -> None:
    from llmopt.model.schedule_file import ScheduleFileError

    run = simulate_continuous(TRACED, VLLMScheduler(watermark=0, batching="prefill-first"), Recorder()).to_dict()
    with pytest.raises(ScheduleFileError, match="run.json: field 'paused' must be a list of integer iterations"):
        timed_schedule(run | {"paused": ["2"]}, "run.json")


def test_the_policy_counts_a_paused_request_without_the_token_it_did_not_make() -> None:
    # a (4 + 4) at 0, b (1 + 1) at 1.5 s, M = 8, one second per batch. a: 5, 6 after iterations 0, 1;
    # iteration 2 admits b (2 free = 8 − 6) and pauses a (6 + 2 = 8); b completes; a holds 7, 8 after
    # iterations 3, 4 and completes at 5 s. A policy that forgot the pause would see a at 9 > 8 in
    # iteration 4 and preempt it.
    inst = TimedInstance(8, (TimedRequest("a", 0.0, 4, 4), TimedRequest("b", 1.5, 1, 1)))
    s = simulate_continuous(inst, VLLMScheduler(watermark=0, batching="prefill-first"), Recorder())
    assert s.paused == (2,) and s.evictions == ()
    assert dict(s.completions) == {"a": 5.0, "b": 3.0}
    assert s.memory_after_batches().tolist() == [5, 6, 8, 7, 8]
    assert _check(inst, s, Recorder()).ok


def test_check_timed_run_checks_every_record_the_run_carries() -> None:
    """The one-call check (trace suites, the production suite, ``llmopt.check``) passes the pauses on:
    the same run checked without them is rejected."""
    from llmopt.verify.timed import check_timed_run

    s = simulate_continuous(TRACED, VLLMScheduler(watermark=0, batching="prefill-first"), Shaped())
    rep = check_timed_run(TRACED, s, Shaped())
    assert rep.ok and rep.mean_latency == pytest.approx(s.mean_latency)
    assert not check_timed_run(TRACED, dataclasses.replace(s, paused=()), Shaped()).ok
