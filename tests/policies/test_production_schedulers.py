"""The production schedulers ``vllm`` and ``orca`` against hand-traced instances (preemption order,
watermark, blocks, reservation), the checker accepting their schedules, and policy conformance."""

from __future__ import annotations

from typing import Any

import pytest

from llmopt.bench.plugins.conformance import check_policy
from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import HiddenOutputError, RequestView, simulate
from llmopt.model.instance import Instance, Request
from llmopt.model.schedule import Eviction
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import make_policy
from llmopt.policies.orca import OrcaScheduler
from llmopt.policies.vllm import VLLMScheduler
from llmopt.verify.checker import check_schedule
from llmopt.verify.timed import check_timed_schedule


def _checked(inst: Instance, policy: object, **limits: Any) -> tuple[dict[str, int], tuple[Eviction, ...], int]:
    s = simulate(inst, policy, **limits)
    rep = check_schedule(inst, s.starts, evictions=s.evictions, limits=s.limits)
    assert rep.ok and rep.tel == s.tel, rep.violations
    return dict(s.starts), s.evictions, s.tel


def test_vllm_preempts_the_youngest_when_a_block_is_missing() -> None:
    # M = 10, no watermark. t0: a, b admitted (4 tokens each after the batch); t1: 5 + 5 = 10;
    # t2: 6 + 6 = 12 > 10 → b (the later one, by position) is preempted after 2 tokens; a runs alone;
    # t3, t4: b needs 4, only 3 and 2 free; t5: a completes, b starts again and completes at 10
    inst = Instance(10, (Request("a", 0, 3, 5), Request("b", 0, 3, 5)))
    starts, evictions, tel = _checked(inst, VLLMScheduler(watermark=0))
    assert starts == {"a": 0, "b": 5}
    assert evictions == (Eviction(2, "b", 2),)
    assert tel == 15


def test_vllm_preemption_order_is_latest_arrival_first() -> None:
    # a@0, b@1, c@2 (prompt 1, output 9), M = 10 (watermark int(0.01·10) = 0). After the batches:
    # t0 a=2; t1 a=3 b=2; t2 a=4 b=3 c=2 (9). t3: 5 + 4 + 3 = 12 → c out (1 token lost) → 9.
    # t4: 6 + 5 = 11 → b out (3 lost). Waiting: b, c (oldest first). t5: a needs 7, b 2: b back in;
    # c (2) does not fit in 1. t6: 8 + 3 = 11 → b out again (1 lost).
    inst = Instance(10, (Request("a", 0, 1, 9), Request("b", 1, 1, 9), Request("c", 2, 1, 9)))
    starts, evictions, _ = _checked(inst, VLLMScheduler())
    assert evictions[:3] == (Eviction(3, "c", 1), Eviction(4, "b", 3), Eviction(6, "b", 1))
    assert starts["a"] == 0 and starts["b"] == 9  # a never yields: it arrived first


def test_vllm_watermark_holds_back_admission() -> None:
    # a (50 + 10) then b (44 + 5) in M = 100. b needs 45 blocks and 100 − 51 = 49 are free:
    # watermark 5 blocks (0.05) keeps b out until a completes at 10; watermark 0 admits b at 0 and
    # preempts it at 3, when 54 + 48 = 102 > 100
    inst = Instance(100, (Request("a", 0, 50, 10), Request("b", 0, 44, 5)))
    starts, evictions, _ = _checked(inst, VLLMScheduler(watermark=0.05))
    assert starts == {"a": 0, "b": 10} and evictions == ()
    starts, evictions, _ = _checked(inst, VLLMScheduler(watermark=0))
    assert evictions[0] == Eviction(3, "b", 3)


def test_vllm_grows_a_block_at_a_time() -> None:
    # a, b: prompt 1, output 7, M = 12. Tokens: 2 + t each after batch t, so 14 > 12 at t = 5.
    # Blocks of 4 (3 blocks): 1 block each up to 4 tokens, 2 at 5 tokens (t = 3): 4 > 3 blocks, b out at 3;
    # at 4 a holds 2 blocks (6 tokens after the batch) and b needs 1: b starts again at 4 and ends at 11
    inst = Instance(12, (Request("a", 0, 1, 7), Request("b", 0, 1, 7)))
    starts, evictions, tel = _checked(inst, VLLMScheduler(), block_size=4)
    assert (starts, evictions, tel) == ({"a": 0, "b": 4}, (Eviction(3, "b", 3),), 18)
    starts, evictions, tel = _checked(inst, VLLMScheduler())
    assert (starts, evictions, tel) == ({"a": 0, "b": 6}, (Eviction(5, "b", 5),), 20)


def test_vllm_honours_the_batch_limits_itself() -> None:
    inst = Instance(100, tuple(Request(f"r{i}", 0, 4, 3) for i in range(5)))
    starts, _, _ = _checked(inst, VLLMScheduler(), max_num_seqs=2)
    assert starts == {"r0": 0, "r1": 0, "r2": 3, "r3": 3, "r4": 6}
    # budget 9: r0 (4) + r1 (4) at 0; r2 at 1 (2 decodes + 4 = 6), r3 at 1 would make 10
    starts, _, _ = _checked(inst, VLLMScheduler(), max_num_batched_tokens=9)
    assert starts == {"r0": 0, "r1": 0, "r2": 1, "r3": 2, "r4": 3}


def test_vllm_and_orca_are_blind_to_output_lengths() -> None:
    for policy in (VLLMScheduler(), OrcaScheduler()):
        policy.reset(10)
        policy.on_arrival(0, RequestView("x", 0, 1, 0, None))  # a hidden output: reading it would raise
        assert policy.decide(0).start == ("x",)
    with pytest.raises(HiddenOutputError):
        _ = RequestView("x", 0, 1, 0, None).output


def test_orca_reserves_the_maximum_length() -> None:
    # max_len 5: a and b reserve 5 each of M = 10, so c waits until they complete at 3; vLLM (no reservation)
    # admits all three at 0 (3 + 3 + 2 = 8 blocks) and must preempt c at 1 (4 + 4 + 3 = 11)
    inst = Instance(10, (Request("a", 0, 2, 3), Request("b", 0, 2, 3), Request("c", 0, 1, 2)))
    starts, evictions, tel = _checked(inst, OrcaScheduler(max_len=5))
    assert (starts, evictions, tel) == ({"a": 0, "b": 0, "c": 3}, (), 11)
    _, evictions, _ = _checked(inst, VLLMScheduler())
    assert evictions == (Eviction(1, "c", 1),)
    # the reservation is capped at M: max_len 4,096 in M = 10 runs one request at a time
    starts, _, _ = _checked(inst, OrcaScheduler())
    assert starts == {"a": 0, "b": 3, "c": 6}


def test_orca_reservation_grows_with_a_request_longer_than_max_len() -> None:
    # max_len 3: a (2 + 4) outgrows its 3 tokens at 1; it is woken then, and its reservation follows it
    # t0: a, b reserve 3 + 3 = 6 of M = 7; t1: a needs 4 (b 3): 7 in use, c (needs 3) waits; b completes
    # at 2, when a needs 5: 2 free < 3; t3: a needs 6; a completes at 4 and c starts
    inst = Instance(7, (Request("a", 0, 2, 4), Request("b", 0, 1, 2), Request("c", 1, 2, 1)))
    starts, evictions, _ = _checked(inst, OrcaScheduler(max_len=3))
    assert starts == {"a": 0, "b": 0, "c": 4} and evictions == ()
    # b longer than max_len too (2 + 2): at 1 a and b need 4 + 4 > 7, and b, the later one, is preempted
    inst = Instance(7, (Request("a", 0, 2, 4), Request("b", 0, 2, 2)))
    starts, evictions, _ = _checked(inst, OrcaScheduler(max_len=3))
    assert starts == {"a": 0, "b": 4} and evictions == (Eviction(1, "b", 1),)


def test_orca_blocks() -> None:
    # blocks of 4, max_len 6 → 2 blocks per request; M = 16 → 4 blocks: two requests at a time
    inst = Instance(16, tuple(Request(f"r{i}", 0, 1, 2) for i in range(3)))
    starts, _, _ = _checked(inst, OrcaScheduler(max_len=6), block_size=4)
    assert starts == {"r0": 0, "r1": 0, "r2": 2}


@pytest.mark.parametrize("name", ["vllm", "orca"])
def test_conformance(name: str) -> None:
    assert check_policy(name) == []


@pytest.mark.parametrize("name", ["vllm", "orca"])
def test_continuous_runs_verify(name: str) -> None:
    cost = make_cost_model("constant")
    inst = TimedInstance(48, tuple(TimedRequest(f"q{i}", 0.2 * i, 2 + (5 * i) % 9, 1 + (7 * i) % 11)
                                   for i in range(40)))
    s = simulate_continuous(inst, make_policy(name), cost, block_size=4, max_num_seqs=6, max_num_batched_tokens=16)
    rep = check_timed_schedule(inst, s.starts, s.batch_start, s.batch_duration, cost, evictions=s.evictions,
                               limits=s.limits, paused=s.paused, eviction_starts=s.eviction_starts)
    assert rep.ok, rep.violations
    assert s.n_completed == 40
    assert bool(s.paused) == (name == "vllm")  # vllm's default on this clock: vLLM v0's prefill-only batches
