"""``sarathi`` (chunked prefill) against hand-traced instances — chunk sizes, decode-first order, the
memory limit — and the timed checker verifying chunked schedules and rejecting tampered ones."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.core import SimulationError
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import simulate
from llmopt.model.batch import BatchShape, chunk_attention_term
from llmopt.model.instance import Instance, Request
from llmopt.model.schedule import Eviction
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.model.timed_schedule import TimedSchedule
from llmopt.policies import make_policy, make_policy_spec
from llmopt.policies.sarathi import SarathiScheduler
from llmopt.verify.checker import check_schedule
from llmopt.verify.timed import check_timed_schedule


class Recorder:
    """A cost model of one second per batch that records the shape of every batch it times."""

    name = "recorder"

    def __init__(self) -> None:
        self.shapes: list[BatchShape] = []

    def batch_time(self, shape: BatchShape) -> float:
        self.shapes.append(shape)
        return 1.0


def _inst(M: int, *reqs: tuple[str, float, int, int]) -> TimedInstance:
    return TimedInstance(M, tuple(TimedRequest(*r) for r in reqs))


def _check(inst: TimedInstance, s: TimedSchedule, cost: Any, **over: Any) -> Any:
    args: dict[str, Any] = dict(evictions=s.evictions, stalls=s.stalls, limits=s.limits, chunks=s.chunks)
    args.update(over)
    starts = args.pop("starts", s.starts)
    return check_timed_schedule(inst, starts, s.batch_start, s.batch_duration, cost, **args)


# a (4 + 3), b (10 + 2), c (3 + 2), all at 0; budget 8, no watermark. By hand:
#   batch 0: prefill a (4, starts a), b gets the other 4 tokens (chunk);              8 tokens
#   batch 1: decode a (1) first, then b's rest (6: starts b), then c gets 1 (chunk);    8 tokens
#   batch 2: decode a, b (2), then c's rest (2: starts c);                              4 tokens
#   batch 3: decode c. a completes at 3 (0 + 3), b at 3 (1 + 2), c at 4 (2 + 2).
TRACED = _inst(100, ("a", 0.0, 4, 3), ("b", 0.0, 10, 2), ("c", 0.0, 3, 2))


def test_chunk_sizes_and_decode_first_order() -> None:
    cost = Recorder()
    s = simulate_continuous(TRACED, SarathiScheduler(chunk_size=8, watermark=0), cost)
    assert dict(s.starts) == {"a": 0, "b": 1, "c": 2}
    assert s.chunks == ((0, "b", 4), (1, "c", 1))
    assert s.evictions == ()
    # each chunk of c tokens after p cached is timed as c tokens with attention term (p + c)² − p²
    assert cost.shapes == [
        BatchShape(2, 4 + 4, 16 + 16, 0, 0),
        BatchShape(2, 6 + 1, (100 - 16) + 1, 1, 5),  # b's last 6 after 4; c's first 1; a decodes at 5 tokens
        BatchShape(1, 2, 9 - 1, 2, 6 + 11),  # c's last 2 after 1; a (6) and b (11) decode
        BatchShape(0, 0, 0, 1, 4),
    ]
    # KV after every batch: a's run, b's 4 prefilled, c's 1 prefilled are all counted
    assert s.memory_after_batches().tolist() == [5 + 4, 6 + 11 + 1, 7 + 12 + 4, 5]
    assert list(s.completions.values()) == [3.0, 3.0, 4.0]
    assert _check(TRACED, s, cost).ok
    # requests per batch count a prompt's chunk: 2 (a, b's chunk), 3 (a, b, c's chunk), 3, 1
    from llmopt.model.metrics import batch_sizes

    assert batch_sizes([s], {r.id: r.output for r in TRACED.requests}).histogram == {1: 1, 2: 1, 3: 2}


def test_the_attention_terms_of_a_prompts_chunks_add_up_to_its_square() -> None:
    assert chunk_attention_term(10) == 100
    assert chunk_attention_term(4) + chunk_attention_term(6, 4) == 100
    assert chunk_attention_term(3, 7) == 10 * 10 - 7 * 7


def test_decodes_fill_the_budget_first() -> None:
    # three decodes in a budget of 4 leave one token for d's 5-token prompt: 1, 1, then the rest
    inst = _inst(100, ("a", 0.0, 1, 9), ("b", 0.0, 1, 9), ("c", 0.0, 1, 9), ("d", 0.5, 5, 1))
    cost = Recorder()
    s = simulate_continuous(inst, SarathiScheduler(chunk_size=4, watermark=0), cost)
    # batch 0 prefills a, b, c (3 tokens); d arrives at 0.5 and is seen at batch 1 (starting at 1.0)
    assert s.chunks == ((1, "d", 1), (2, "d", 1), (3, "d", 1), (4, "d", 1))
    assert s.starts["d"] == 5
    # d's second token attends to its first: (1 + 1)² − 1² = 3; its last, after 4: 5² − 4² = 9
    assert cost.shapes[2] == BatchShape(1, 1, 3, 3, 3 * (1 + 2))
    assert cost.shapes[5] == BatchShape(1, 1, 9, 3, 3 * (1 + 5))
    # a budget of 2: a and b take batch 0, and their two decodes then fill every batch; c (1 token) and d
    # wait until a and b complete at 9, when c starts and d gets the one token left
    s = simulate_continuous(inst, SarathiScheduler(chunk_size=2, watermark=0), Recorder())
    assert (s.starts["a"], s.starts["b"], s.starts["c"]) == (0, 0, 9)
    assert s.chunks[0] == (9, "d", 1)


def test_memory_limit_preempts_the_youngest_running_request() -> None:
    # M = 12, budget 2: a (1 + 10) starts at 0; b (6 + 1) is prefilled 1 token a batch (a's decode takes
    # the other) and reserves its whole prompt + 1 = 7 at admission (as Sarathi allocates the prompt's
    # blocks). a's tokens after batch t: 2 + t; at 4: 6 + 7 = 13 > 12 → b, the younger, is preempted
    # though only partly prefilled: its 4 prompt tokens are dropped (a chunk of 0) and nothing is
    # admitted. a completes at 10; b is prefilled again, 2 tokens a batch, and starts at 12.
    inst = _inst(12, ("a", 0.0, 1, 10), ("b", 0.0, 6, 1))
    s = simulate_continuous(inst, SarathiScheduler(chunk_size=2, watermark=0), Recorder())
    assert s.evictions == ()
    assert s.chunks == (*((k, "b", 1) for k in range(4)), (4, "b", 0), (10, "b", 2), (11, "b", 2))
    assert dict(s.starts) == {"a": 0, "b": 12}
    assert s.memory_after_batches().tolist()[:6] == [2 + 1, 3 + 2, 4 + 3, 5 + 4, 6, 7]
    assert _check(inst, s, Recorder()).ok
    # a decoding victim: c (1 + 6) starts at 1, after a; at 3 a + c need 5 + 4 > 8 → c is preempted
    # (2 tokens lost) and, its prompt's 2 blocks being free (8 − 5), admitted again at once, as Sarathi
    # and Vidur do; at 4 6 + 3 > 8 → out and in again (6 + 2 = 8); at 5 7 + 3 > 8 → out, 1 block free:
    # it waits; a completes at 6, c starts then
    inst = _inst(8, ("a", 0.0, 1, 6), ("c", 0.5, 1, 6))
    s = simulate_continuous(inst, SarathiScheduler(chunk_size=2, watermark=0), Recorder())
    assert s.evictions == (Eviction(3, "c", 2), Eviction(4, "c", 1), Eviction(5, "c", 1)) and s.chunks == ()
    assert dict(s.starts) == {"a": 0, "c": 6}
    assert _check(inst, s, Recorder()).ok


def test_no_preemption_while_memory_lasts() -> None:
    inst = _inst(3000, *((f"r{i}", 0.1 * i, 50 + 37 * i % 300, 1 + 13 * i % 40) for i in range(30)))
    s = simulate_continuous(inst, SarathiScheduler(chunk_size=64), make_cost_model("constant"))
    assert s.evictions == () and s.chunks and s.n_completed == 30


def test_a_prompt_longer_than_the_token_limit_starts_in_chunks() -> None:
    # vllm refuses a 300-token prompt under max_num_batched_tokens = 128; sarathi prefills it 128 at a time
    inst = _inst(1000, ("a", 0.0, 300, 2))
    with pytest.raises(SimulationError, match="could never start"):
        simulate_continuous(inst, make_policy("vllm"), Recorder(), max_num_batched_tokens=128)
    s = simulate_continuous(inst, make_policy_spec("sarathi:chunk_size=512"), Recorder(), max_num_batched_tokens=128)
    assert s.chunks == ((0, "a", 128), (1, "a", 128)) and s.starts["a"] == 2
    assert _check(inst, s, Recorder()).ok


def test_the_discrete_engine_runs_chunks_too() -> None:
    # TRACED in steps: the same chunks and starts; the prefilled tokens count in the memory at every time
    inst = Instance(100, tuple(Request(r.id, 0, r.prompt, r.output) for r in TRACED.requests))
    s = simulate(inst, SarathiScheduler(chunk_size=8, watermark=0))
    assert dict(s.starts) == {"a": 0, "b": 1, "c": 2} and s.chunks == ((0, "b", 4), (1, "c", 1))
    assert s.tel == 3 + 3 + 4
    assert [s.memory_at(t) for t in range(1, 6)] == [5 + 4, 6 + 11 + 1, 7 + 12 + 4, 5, 0]
    rep = check_schedule(inst, s.starts, evictions=s.evictions, chunks=s.chunks)
    assert rep.ok and rep.tel == s.tel and rep.peak_memory == s.peak_memory == 23
    assert s.to_dict()["chunks"] == [[0, "b", 4], [1, "c", 1]]
    # x's 5 prefilled tokens beside y's run: 6 + 5 = 11 > 10 at time 1, which the starts alone do not show
    xy = Instance(10, (Request("x", 0, 6, 1), Request("y", 0, 5, 1)))
    assert check_schedule(xy, {"x": 1, "y": 0}).ok
    rep = check_schedule(xy, {"x": 1, "y": 0}, chunks=[(0, "x", 5)])
    assert rep.violations == ("memory at time 1 is 11 > M = 10 (running: y)",)


def test_conformance() -> None:
    from llmopt.bench.plugins.conformance import check_policy

    assert check_policy("sarathi") == []


# --- the checker rejects tampered chunked schedules -------------------------------------------------


def _traced(**limits: Any) -> tuple[TimedSchedule, Recorder]:
    cost = Recorder()
    return simulate_continuous(TRACED, SarathiScheduler(chunk_size=8, watermark=0), cost, **limits), cost


def test_checker_rejects_a_chunk_over_the_token_budget() -> None:
    s, cost = _traced(max_num_batched_tokens=8)
    assert _check(TRACED, s, cost).ok
    rep = _check(TRACED, s, cost, chunks=((0, "b", 5), (1, "c", 1)))  # b's 5 + a's 4 = 9 tokens in batch 0
    assert not rep.ok
    assert any("batch of step 0: 9 tokens" in v and "max_num_batched_tokens = 8" in v for v in rep.violations)


def test_checker_rejects_a_decode_before_the_prompt_is_prefilled() -> None:
    s, cost = _traced()
    # c claims to start (and decode from) 2, but a chunk of its prompt comes later
    rep = _check(TRACED, s, cost, chunks=((0, "b", 4), (1, "c", 1), (3, "c", 1)))
    assert not rep.ok and any("'c': prefill chunk at step 3 after its last start 2" in v for v in rep.violations)
    # chunks that prefill b's whole prompt before its start leave nothing for the batch that starts it
    rep = _check(TRACED, s, cost, chunks=((0, "b", 10), (1, "c", 1)))
    assert not rep.ok and any("10 prompt tokens prefilled in chunks before its start at 1" in v
                              for v in rep.violations)
    # a preemption of a partial prefill that has no chunk
    rep = _check(TRACED, s, cost, chunks=((0, "b", 4), (0, "c", 0), (1, "c", 1)))
    assert not rep.ok and any("'c': partial prefill preempted at step 0 with no chunk before it" in v
                              for v in rep.violations)
    # a chunk inside a run of the same request
    rep = _check(TRACED, s, cost, chunks=((0, "b", 4), (1, "c", 1), (1, "a", 1)))
    assert not rep.ok and any("'a': prefill chunk at step 1 after its last start 0" in v for v in rep.violations)
    # the same schedule without its chunks: the batch shapes no longer match the durations claimed
    rep = _check(TRACED, s, Recorder(), chunks=())
    assert rep.ok  # a one-second-per-batch model cannot tell; a shape-sensitive one does:
    fitted = make_cost_model("llama2-70b-a100-tp2")
    s2 = simulate_continuous(TRACED, SarathiScheduler(chunk_size=8, watermark=0), fitted)
    assert _check(TRACED, s2, fitted).ok
    rep = _check(TRACED, s2, fitted, chunks=())
    assert not rep.ok and any("iteration 0: duration" in v for v in rep.violations)


def test_checker_counts_prefilled_tokens_in_memory() -> None:
    # x's first 5 prompt tokens are prefilled in batch 0 beside y's whole prompt: 6 + 5 = 11 tokens after it
    inst = _inst(11, ("x", 0.0, 6, 1), ("y", 0.0, 5, 1))
    args: dict[str, Any] = dict(starts={"x": 1, "y": 0}, batch_start=[0.0, 1.0], batch_duration=[1.0, 1.0])
    assert check_timed_schedule(inst, **args, cost_model=Recorder(), chunks=[(0, "x", 5)]).ok
    small = _inst(10, ("x", 0.0, 6, 1), ("y", 0.0, 5, 1))
    rep = check_timed_schedule(small, **args, cost_model=Recorder(), chunks=[(0, "x", 5)])
    assert not rep.ok and any("memory at time 1 is 11 > M = 10" in v for v in rep.violations)
    # in blocks of 4 (3 blocks in 12): y's 6 tokens take 2, x's 5 prefilled 2 more
    big = _inst(12, ("x", 0.0, 6, 1), ("y", 0.0, 5, 1))
    rep = check_timed_schedule(big, **args, cost_model=Recorder(), chunks=[(0, "x", 5)], limits={"block_size": 4})
    assert not rep.ok and any("4 blocks of 4 > M // block_size = 3" in v for v in rep.violations)
    assert check_timed_schedule(big, **args, cost_model=Recorder(), chunks=[(0, "x", 5)]).ok


def test_checker_reads_chunks_from_json() -> None:
    s, cost = _traced()
    d = s.to_dict()
    assert d["chunks"] == [[0, "b", 4], [1, "c", 1]]
    rep = check_timed_schedule(TRACED, d["starts"], d["batch_start"], d["batch_duration"], cost,
                               chunks=[{"t": t, "id": i, "tokens": c} for t, i, c in d["chunks"]])
    assert rep.ok
    assert "chunks" not in simulate_continuous(TRACED, make_policy("vllm"), cost).to_dict()


# --- every sarathi schedule verifies ------------------------------------------------------------------


@st.composite
def timed_instances(draw: Any) -> TimedInstance:
    n = draw(st.integers(1, 12))
    M = draw(st.integers(24, 80))
    reqs = []
    for i in range(n):
        s = draw(st.integers(1, 20))
        o = draw(st.integers(1, max(1, min(15, M - s))))
        reqs.append(TimedRequest(f"q{i}", draw(st.integers(0, 8)) * 0.25, s, o))
    return TimedInstance(M, tuple(reqs))


@settings(max_examples=80)
@given(inst=timed_instances(), chunk=st.integers(1, 24), block=st.sampled_from([1, 2, 4]),
       seqs=st.one_of(st.none(), st.integers(1, 4)), watermark=st.sampled_from([0.0, 0.1]))
def test_sarathi_schedules_always_verify(inst: TimedInstance, chunk: int, block: int, seqs: int | None,
                                         watermark: float) -> None:
    if any(-(-(r.prompt + r.output) // block) > inst.M // block for r in inst.requests):
        return
    cost = make_cost_model("llama2-70b-a100-tp2")
    s = simulate_continuous(inst, SarathiScheduler(chunk_size=chunk, watermark=watermark), cost,
                            block_size=block, max_num_seqs=seqs)
    assert s.n_completed == len(inst.requests)
    rep = _check(inst, s, cost)
    assert rep.ok, rep.violations
    assert rep.mean_latency == pytest.approx(s.mean_latency)
    assert rep.peak_memory == s.peak_memory
    assert all(0 <= c <= chunk for _t, _i, c in s.chunks)
    # the same requests in steps (arrival step = 4 · arrival seconds)
    disc = Instance(inst.M, tuple(Request(r.id, int(r.arrival * 4), r.prompt, r.output) for r in inst.requests))
    d = simulate(disc, SarathiScheduler(chunk_size=chunk, watermark=watermark), block_size=block, max_num_seqs=seqs)
    rep_d = check_schedule(disc, d.starts, evictions=d.evictions, limits=d.limits, chunks=d.chunks)
    assert rep_d.ok and rep_d.tel == d.tel, rep_d.violations
    assert rep_d.peak_memory == d.peak_memory


# --- the command line ---------------------------------------------------------------------------------


def test_simulate_and_check_a_chunked_run_from_the_command_line(tmp_path: Any) -> None:
    import json

    from typer.testing import CliRunner

    from llmopt.cli.main import app
    from llmopt.model.timed_instance import save_timed_instance

    inst = _inst(2000, *((f"q{i}", 0.3 * i, 5 + 97 * i % 700, 1 + (5 * i) % 9) for i in range(30)))
    path, out, bad = tmp_path / "busy.json", tmp_path / "run.json", tmp_path / "bad.json"
    save_timed_instance(inst, path)
    runner = CliRunner()
    result = runner.invoke(app, ["simulate", str(path), "--policy", "sarathi:chunk_size=256", "--block-size", "16",
                                 "--json"])
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)
    assert run["verified"] and run["chunks"] and all(c <= 256 for _t, _i, c in run["chunks"])
    out.write_text(result.stdout)
    assert runner.invoke(app, ["check", str(path), str(out)]).exit_code == 0
    run["chunks"][0][2] += 1  # one more prompt token in the first chunk: the batch times no longer match
    bad.write_text(json.dumps(run))
    result = runner.invoke(app, ["check", str(path), str(bad)])
    assert result.exit_code == 1 and "INFEASIBLE" in result.output


class _Rogue:
    """Starts x and prefills 5 tokens of y in the batch of 0, whatever the memory."""

    name = "rogue"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_arrival(self, t: int, request: Any) -> None:
        self.seen.append(request.id)

    def decide(self, t: int) -> Any:
        from llmopt.engine.core import Decision

        if t == 0:
            return Decision(start=("x",), chunk=(("y", 5),))
        return Decision(start=("y",) if t == 1 else ())


def test_the_engine_counts_prefilled_tokens_in_its_memory_check() -> None:
    # after batch 0: x holds 5 + 1, y's 5 prefilled tokens: 11 > M = 10 (x alone would fit)
    inst = _inst(10, ("x", 0.0, 5, 1), ("y", 0.0, 6, 1))
    with pytest.raises(SimulationError, match="iteration 0: policy 'rogue' overflows memory: 11 > M = 10"):
        simulate_continuous(inst, _Rogue(), Recorder())
    with pytest.raises(SimulationError, match=r"overflows memory: 4 blocks of 4 > M // block_size = 3"):
        simulate_continuous(_inst(12, ("x", 0.0, 5, 1), ("y", 0.0, 6, 1)), _Rogue(), Recorder(), block_size=4)
    s = simulate_continuous(_inst(11, ("x", 0.0, 5, 1), ("y", 0.0, 6, 1)), _Rogue(), Recorder())
    assert s.chunks == ((0, "y", 5),) and s.memory_after_batches().tolist() == [11, 7]


def test_max_num_seqs_caps_the_admitted_requests() -> None:
    # three 1 + 5 requests, at most two running: the third starts when the first two complete at 5
    inst = _inst(100, ("a", 0.0, 1, 5), ("b", 0.0, 1, 5), ("c", 0.0, 1, 5))
    s = simulate_continuous(inst, make_policy_spec("sarathi:max_num_seqs=2"), Recorder())
    assert dict(s.starts) == {"a": 0, "b": 0, "c": 5}
    # the engine's limit acts the same, and the smaller of the two wins
    s = simulate_continuous(inst, make_policy_spec("sarathi:max_num_seqs=3"), Recorder(), max_num_seqs=1)
    assert dict(s.starts) == {"a": 0, "b": 5, "c": 10} and _check(inst, s, Recorder()).ok


class _Unlimited(SarathiScheduler):
    """Sarathi that ignores the engine's batch limits, so that the engine refuses some of its starts."""

    def set_limits(self, limits: Any) -> None:
        self.block_size = limits.block_size


def test_refused_starts_go_back_to_the_queue() -> None:
    # engine max_num_seqs = 1: at 0 the policy chunks b (3 of 6) and starts a; b's chunk fills the batch, so
    # a is refused and waits at the front. At 1 b's last 3 tokens start it and a is refused again; b
    # completes at 2 and a starts then.
    inst = _inst(100, ("a", 0.0, 1, 2), ("b", 0.0, 6, 1))
    s = simulate_continuous(inst, _Unlimited(chunk_size=4, watermark=0), Recorder(), max_num_seqs=1)
    assert s.chunks == ((0, "b", 3),) and dict(s.starts) == {"a": 2, "b": 1}
    assert _check(inst, s, Recorder()).ok
