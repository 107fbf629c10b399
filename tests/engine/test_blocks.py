"""The block ledger (O(block_size) block totals) against counting request by request, and the
production schedulers' skipped decisions against asking them at every iteration."""

from __future__ import annotations

import random

import pytest

from llmopt.engine.blocks import BlockLedger
from llmopt.engine.continuous import simulate_continuous
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies.sarathi import SarathiScheduler
from llmopt.policies.vllm import VLLMScheduler


def _count(cs: list[int], x: int, b: int) -> int:
    return sum(-(-(c + x) // b) for c in cs)


@pytest.mark.parametrize("seed", range(4))
def test_total_and_first_over_match_counting(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(400):
        b = rng.choice([1, 2, 3, 16])
        ledger, cs = BlockLedger(b), []
        for _ in range(rng.randint(0, 12)):
            c = rng.randint(-40, 60)
            ledger.add(c)
            cs.append(c)
        if cs and rng.random() < 0.3:
            ledger.remove(cs.pop(rng.randrange(len(cs))))
        for x in range(-5, 30):
            assert ledger.total(x) == _count(cs, x, b)
        cap, x0 = rng.randint(0, 300), rng.randint(-5, 20)
        want = next((x for x in range(x0, x0 + 10_000) if _count(cs, x, b) > cap), None) if cs else None
        assert ledger.first_over(cap, x0) == want


def test_an_empty_ledger_never_overflows() -> None:
    ledger = BlockLedger(16)
    assert ledger.total(10**9) == 0 and ledger.first_over(0, 0) is None
    with pytest.raises(ValueError, match="block_size must be at least 1"):
        BlockLedger(0)


class EveryIteration(VLLMScheduler):
    """vLLM asked at every iteration while anything runs (the schedulers' behaviour before they skipped
    the decisions that change nothing)."""

    def wake(self, t: int, budget_blocked: bool) -> int | None:
        return t + 1 if self.running or budget_blocked else None


class SarathiEveryIteration(SarathiScheduler):
    def _wake(self, t: int, busy: bool) -> int | None:
        return t + 1 if self.running or busy else None


class Linear:
    name = "linear"

    def time(self, pr: int, pt: int, psq: int, dr: int, dc: int) -> float:
        return 0.01 + 1e-4 * pt + 1e-6 * psq + 2e-4 * dr + 1e-6 * dc


def _instance(seed: int, n: int, M: int) -> TimedInstance:
    rng = random.Random(seed)
    t, reqs = 0.0, []
    for i in range(n):
        t += rng.expovariate(8.0)
        reqs.append(TimedRequest(f"r{i}", t, rng.randint(1, 300), rng.randint(1, 200)))
    return TimedInstance(M, tuple(reqs))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("make,every", [
    (lambda: VLLMScheduler(), lambda: EveryIteration()),
    (lambda: VLLMScheduler(batching="mixed"), lambda: EveryIteration(batching="mixed")),
    (lambda: SarathiScheduler(chunk_size=128), lambda: SarathiEveryIteration(chunk_size=128)),
])
def test_skipped_decisions_change_nothing(seed: int, make, every) -> None:
    # a small cache (preemptions), blocks of 16 and both batch limits: every rule of the schedulers is hit
    inst = _instance(seed, 150, 2_000)
    kw = {"max_num_seqs": 12, "max_num_batched_tokens": 512, "block_size": 16}
    a = simulate_continuous(inst, make(), Linear(), **kw)
    b = simulate_continuous(inst, every(), Linear(), **kw)
    assert a.evictions, "the instance must preempt, or the test proves little"
    assert a.starts == b.starts and a.completions == b.completions and a.evictions == b.evictions
    assert a.batch_duration.tolist() == b.batch_duration.tolist() and a.paused == b.paused
    assert a.memory == b.memory and a.chunks == b.chunks
