"""The independent checker verifies batch limits and KV block counts from the schedule alone:
tampered schedules that break a limit or a block count are rejected, naming the time and the limit."""

from __future__ import annotations

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance, Request
from llmopt.model.schedule import BatchLimits
from llmopt.policies import make_policy
from llmopt.verify.checker import check_schedule

THREE = Instance(100, tuple(Request(f"r{i}", 0, 1, 4) for i in range(3)))


def test_max_num_seqs_counts_every_request_in_the_batch() -> None:
    starts = {"r0": 0, "r1": 0, "r2": 4}  # two in the batches of steps 0..3, then one
    assert check_schedule(THREE, starts, limits=BatchLimits(max_num_seqs=2)).ok
    tampered = check_schedule(THREE, {"r0": 0, "r1": 0, "r2": 3}, limits=BatchLimits(max_num_seqs=2))
    assert not tampered.ok and tampered.tel is None
    assert tampered.violations == ("batch of step 3: 3 requests > max_num_seqs = 2",)
    assert check_schedule(THREE, {"r0": 0, "r1": 0, "r2": 3}).ok  # without limits it is feasible


def test_a_run_ends_before_the_batch_of_its_completion_step() -> None:
    # r0 runs in the batches of 0..3 and completes at 4: r2 may start at 4 beside r1 (started at 1)
    assert check_schedule(THREE, {"r0": 0, "r1": 1, "r2": 4}, limits={"max_num_seqs": 2}).ok
    rep = check_schedule(THREE, {"r0": 0, "r1": 1, "r2": 2}, limits={"max_num_seqs": 2})
    assert rep.violations == ("batch of step 2: 3 requests > max_num_seqs = 2",)


def test_token_budget_is_prompts_started_plus_one_per_decode() -> None:
    inst = Instance(100, (Request("a", 0, 5, 3), Request("b", 0, 5, 3), Request("c", 0, 1, 3)))
    limits = {"max_num_batched_tokens": 7}
    # step 0: a's 5; step 1: a decodes (1) + b's 5 = 6; step 2: a, b decode (2) + c's 1 = 3
    assert check_schedule(inst, {"a": 0, "b": 1, "c": 2}, limits=limits).ok
    rep = check_schedule(inst, {"a": 0, "b": 0, "c": 2}, limits=limits)
    assert rep.violations == ("batch of step 0: 10 tokens (10 prompt tokens of 2 starts + 0 decodes) > "
                              "max_num_batched_tokens = 7",)
    rep = check_schedule(inst, {"a": 0, "b": 1, "c": 1}, limits={"max_num_batched_tokens": 6})
    assert rep.violations == ("batch of step 1: 7 tokens (6 prompt tokens of 2 starts + 1 decodes) > "
                              "max_num_batched_tokens = 6",)


def test_evicted_runs_count_in_the_batches_they_ran_in() -> None:
    # r2's aborted run (0, 2] is in the batches of 0 and 1: with r0 and r1 that is 3 requests
    evictions = [{"t": 2, "id": "r2", "tokens_lost": 2}]
    rep = check_schedule(THREE, {"r0": 0, "r1": 0, "r2": 4}, evictions=evictions, limits={"max_num_seqs": 2})
    assert rep.violations == ("batch of step 0: 3 requests > max_num_seqs = 2",)
    assert check_schedule(THREE, {"r0": 0, "r1": 0, "r2": 4}, evictions=evictions, limits={"max_num_seqs": 3}).ok


def test_block_count_is_checked_at_every_time() -> None:
    # two runs of 3, 4, 5 tokens (times 1..3): 10 tokens fit M = 10, but at time 3 each holds 2 blocks of 4
    inst = Instance(10, (Request("a", 0, 2, 3), Request("b", 0, 2, 3)))
    assert check_schedule(inst, {"a": 0, "b": 0}).ok
    rep = check_schedule(inst, {"a": 0, "b": 0}, limits=BatchLimits(block_size=4))
    assert rep.violations == ("memory at time 3 is 4 blocks of 4 > M // block_size = 2 blocks (running: a, b)",)
    assert check_schedule(inst, {"a": 0, "b": 3}, limits=BatchLimits(block_size=4)).ok


def test_first_block_overflow_of_a_long_piece_is_found() -> None:
    # one piece (0, 40]: a and b grow from 2 to 41 tokens; with blocks of 8, M = 88 holds 11 blocks, and
    # at time τ each holds ceil((1 + τ) / 8): τ = 39 gives 2·5 = 10, τ = 40 gives 2·6 = 12 > 11
    inst = Instance(88, (Request("a", 0, 1, 40), Request("b", 0, 1, 40)))
    rep = check_schedule(inst, {"a": 0, "b": 0}, limits=BatchLimits(block_size=8))
    assert rep.violations[0].startswith("memory at time 40 is 12 blocks of 8 > M // block_size = 11 blocks")
    # shift b by 8 steps: its blocks lag one behind a's, and 6 + 5 = 11 fits
    assert check_schedule(inst, {"a": 0, "b": 8}, limits=BatchLimits(block_size=8)).ok


def test_simulated_schedules_pass_with_their_recorded_limits() -> None:
    inst = Instance(40, tuple(Request(f"q{i}", i // 3, 1 + (7 * i) % 6, 1 + (5 * i) % 9) for i in range(30)))
    for name in ("vllm", "orca", "fcfs", "mc-sf"):
        for limits in (BatchLimits(max_num_seqs=4), BatchLimits(max_num_batched_tokens=9),
                       BatchLimits(3, 8, 4 if name in ("vllm", "orca") else 1)):
            s = simulate(inst, make_policy(name), max_num_seqs=limits.max_num_seqs,
                         max_num_batched_tokens=limits.max_num_batched_tokens, block_size=limits.block_size)
            rep = check_schedule(inst, s.starts, evictions=s.evictions, limits=s.to_dict().get("limits"))
            assert rep.ok and rep.tel == s.tel, (name, limits, rep.violations)


def test_malformed_limits_are_a_violation() -> None:
    rep = check_schedule(THREE, {"r0": 0, "r1": 0, "r2": 0}, limits={"max_num_seqs": 0})
    assert rep.violations == ("limits: max_num_seqs = 0 is not a positive integer",)
