"""GPU-busy seconds of a continuous-time run and the GPU cost per request (issue 26, item 4).

Breakages caught (by hand): stall time left out of ``TimedSchedule.busy_seconds`` (7 → 6, 8 → 6);
idle gaps counted (the two-arrival case gives 11, not 2); ``gpu_cost_per_request`` without the GPU
count (2.0 instead of 4.0).
"""

from __future__ import annotations

import pytest

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import ConstantCostModel
from llmopt.engine.hardware import gpu_cost_per_request
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import make_policy_spec


@pytest.mark.parametrize("pass_cost,busy", [("free", 6.0), ("extra-passes", 7.0), ("every-pass", 8.0)])
def test_busy_seconds_count_batches_and_stalls(pass_cost: str, busy: float) -> None:
    """The hand trace of ``tests/policies/test_protection.py`` (M = 10, three s = 2, o = 3 requests,
    α = 0, β = 0.5, seed 17, 1-s batches): six batches, plus one or two stalled decode batches."""
    inst = TimedInstance(10, tuple(TimedRequest(rid, 0.0, 2, 3) for rid in ("A", "B", "C")))
    spec = f"alpha-protection:alpha=0,beta=0.5,seed=17,pass_cost={pass_cost}"
    sched = simulate_continuous(inst, make_policy_spec(spec), ConstantCostModel(1.0))
    assert sched.busy_seconds == pytest.approx(busy)
    assert sched.busy_seconds == pytest.approx(sched.makespan)  # never idle here


def test_idle_gaps_are_not_busy() -> None:
    inst = TimedInstance(10, (TimedRequest("a", 0.0, 1, 1), TimedRequest("b", 10.0, 1, 1)))
    sched = simulate_continuous(inst, make_policy_spec("mc-sf"), ConstantCostModel(1.0))
    assert sched.makespan == pytest.approx(11.0) and sched.busy_seconds == pytest.approx(2.0)


def test_gpu_cost_per_request() -> None:
    assert gpu_cost_per_request(8.0, 4) == (4.0, 1600.0)  # 8 s × 2 GPUs / 4 requests, × 400 W
    assert gpu_cost_per_request(8.0, 4, gpus=1, board_power_w=300.0) == (2.0, 600.0)
    assert gpu_cost_per_request(8.0, 0) == (None, None)
