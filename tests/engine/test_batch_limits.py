"""Batch limits and KV blocks in the engine core (both clocks): how a limit acts on a policy's starts,
what the schedule records, and the errors for runs the limits make impossible."""

from __future__ import annotations

from typing import Any

import pytest

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import Decision, SimulationError, simulate
from llmopt.model.instance import Instance, Request
from llmopt.model.schedule import BatchLimits
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import make_policy
from llmopt.policies.base import greedy_prefix
from llmopt.verify.checker import check_schedule
from llmopt.verify.timed import check_timed_schedule

# four one-token prompts at 0, two steps each: room for all of them in M = 100
FOUR = Instance(100, tuple(Request(f"r{i}", 0, 1, 2) for i in range(4)))


def test_defaults_record_no_limits_and_change_nothing() -> None:
    plain = simulate(FOUR, make_policy("fcfs"))
    explicit = simulate(FOUR, make_policy("fcfs"), max_num_seqs=None, max_num_batched_tokens=None, block_size=1)
    assert plain == explicit
    assert plain.limits == BatchLimits() and plain.limits.is_default
    assert "limits" not in plain.to_dict()  # committed JSON stays as it was
    assert dict(plain.starts) == {"r0": 0, "r1": 0, "r2": 0, "r3": 0}


def test_max_num_seqs_defers_the_policys_later_starts() -> None:
    # FCFS starts all four at 0; two fit in a batch; r2, r3 start when r0, r1 complete at 2
    s = simulate(FOUR, make_policy("fcfs"), max_num_seqs=2)
    assert dict(s.starts) == {"r0": 0, "r1": 0, "r2": 2, "r3": 2}
    assert s.limits == BatchLimits(max_num_seqs=2)
    assert s.to_dict()["limits"] == {"max_num_seqs": 2, "max_num_batched_tokens": None, "block_size": 1}
    assert check_schedule(FOUR, s.starts, limits=s.limits).ok


def test_token_budget_counts_running_decodes_first_and_retries_next_step() -> None:
    # budget 6: r0's prompt (5) fits at 0, r1's (5) would make 10. At step 1 the batch holds r0's decode
    # (1) + r1's prompt (5) = 6: r1 starts at 1 — the engine asks again at 1, though no event happens there
    inst = Instance(100, (Request("r0", 0, 5, 3), Request("r1", 0, 5, 3)))
    s = simulate(inst, make_policy("fcfs"), max_num_batched_tokens=6)
    assert dict(s.starts) == {"r0": 0, "r1": 1}
    # budget 5: r0's decode + r1's prompt never fit while r0 runs; r1 waits for r0 to complete at 3
    s5 = simulate(inst, make_policy("fcfs"), max_num_batched_tokens=5)
    assert dict(s5.starts) == {"r0": 0, "r1": 3}


def test_a_step_policy_under_limits() -> None:
    class Greedy:
        name = "greedy-step"

        def decide(self, view):  # type: ignore[no-untyped-def]
            return greedy_prefix(view, view.waiting)

    s = simulate(FOUR, Greedy(), max_num_seqs=3)
    assert dict(s.starts) == {"r0": 0, "r1": 0, "r2": 0, "r3": 2}


def test_a_policy_without_on_refused_cannot_run_under_batch_limits() -> None:
    class NoHook:  # an event policy that starts everything and cannot take starts back
        name = "no-hook"

        def __init__(self) -> None:
            self.waiting: list[str] = []

        def on_arrival(self, t: int, request: Any) -> None:
            self.waiting.append(request.id)

        def decide(self, t: int) -> Decision:
            start, self.waiting = tuple(self.waiting), []
            return Decision(start=start)

    with pytest.raises(SimulationError, match="no-hook.*no on_refused"):
        simulate(FOUR, NoHook(), max_num_seqs=2)
    simulate(FOUR, NoHook(), block_size=1)  # no batch limit: runs


def test_a_prompt_over_the_token_budget_is_named() -> None:
    inst = Instance(100, (Request("short", 0, 2, 1), Request("long", 0, 9, 1)))
    with pytest.raises(SimulationError, match="request 'long': prompt of 9 tokens > max_num_batched_tokens = 8"):
        simulate(inst, make_policy("fcfs"), max_num_batched_tokens=8)


def test_a_request_needing_more_blocks_than_the_cache_is_named() -> None:
    inst = Instance(17, (Request("big", 0, 1, 16),))  # 17 tokens fit in M = 17, not in 17 // 16 = 1 block
    with pytest.raises(SimulationError, match="request 'big'.*2 blocks of 16.*1 blocks"):
        simulate(inst, make_policy("vllm"), block_size=16)


def test_block_overflow_of_a_token_policy_is_an_engine_error() -> None:
    # FCFS plans in tokens: two runs of 3, 4, 5 tokens fit M = 10, but at time 3 they need 2 + 2 blocks of 4
    # (5 tokens each) > 10 // 4 = 2; at times 1 and 2 they hold one block each
    inst = Instance(10, (Request("a", 0, 2, 3), Request("b", 0, 2, 3)))
    assert simulate(inst, make_policy("fcfs")).tel == 6
    with pytest.raises(SimulationError, match="overflows memory at time 3: 4 blocks of 4 > M // block_size = 2"):
        simulate(inst, make_policy("fcfs"), block_size=4)


def test_continuous_clock_records_and_respects_the_limits() -> None:
    cost = make_cost_model("constant")
    inst = TimedInstance(64, tuple(TimedRequest(f"q{i}", 0.25 * i, 3 + i % 5, 2 + (3 * i) % 7) for i in range(24)))
    free = simulate_continuous(inst, make_policy("vllm"), cost)
    s = simulate_continuous(inst, make_policy("vllm"), cost, max_num_seqs=3, max_num_batched_tokens=9, block_size=4)
    assert s.limits == BatchLimits(3, 9, 4)
    assert s.to_dict()["limits"] == {"max_num_seqs": 3, "max_num_batched_tokens": 9, "block_size": 4}
    assert "limits" not in free.to_dict()
    rep = check_timed_schedule(inst, s.starts, s.batch_start, s.batch_duration, cost, evictions=s.evictions,
                               limits=s.limits)
    assert rep.ok, rep.violations
    assert s.mean_latency is not None and free.mean_latency is not None and s.mean_latency > free.mean_latency
    # the same run claimed under a tighter limit is rejected, in iteration units
    tight = check_timed_schedule(inst, s.starts, s.batch_start, s.batch_duration, cost, evictions=s.evictions,
                                 limits=BatchLimits(2, 9, 4))
    assert not tight.ok and "requests > max_num_seqs = 2" in tight.violations[0]


def test_limits_apply_to_each_worker_of_a_cluster_run() -> None:
    import llmopt

    run = llmopt.simulate(FOUR, "fcfs", workers=2, max_num_seqs=1)
    assert run.K == 2 and all(w.limits == BatchLimits(max_num_seqs=1) for w in run.workers)
    assert llmopt.check(FOUR, run).ok
