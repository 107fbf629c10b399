"""Per-request metrics (:mod:`llmopt.model.metrics`): percentiles, latency, TTFT and time between tokens."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance
from llmopt.model.metrics import percentiles, request_rows, timed_request_rows
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import make_policy


def test_nearest_rank_by_hand():
    p = percentiles([4, 1, 3, 2, None])
    assert (p.n, p.mean, p.p50, p.p90, p.p99, p.max) == (4, 2.5, 2, 4, 4, 4)
    p = percentiles(range(1, 101))
    assert (p.p50, p.p90, p.p99, p.max) == (50, 90, 99, 100)
    assert percentiles([]).mean is None and percentiles([None]).p50 is None


@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=60))
def test_percentiles_are_order_statistics(xs):
    p = percentiles(xs)
    s = sorted(xs)
    assert p.p50 in xs and s[0] <= p.p50 <= p.p90 <= p.p99 <= p.max == s[-1]
    # at least q % of the values are <= the q-th percentile, and fewer than q % are below it
    for q, v in ((50, p.p50), (90, p.p90), (99, p.p99)):
        assert sum(x <= v for x in xs) >= q / 100 * len(xs) > sum(x < v for x in xs)
    assert math.isclose(p.mean, sum(xs) / len(xs), abs_tol=1e-9)


def test_discrete_rows_sum_to_tel_with_evictions():
    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 2, 6), (1, 3, 2), (2, 1, 4)])
    sched = simulate(inst, make_policy("mc-sf"))
    rows = request_rows(inst, sched)
    assert sum(r["latency"] for r in rows) == sched.tel
    assert [r["start"] for r in rows] == sorted(sched.starts.values())
    for r in rows:
        assert r["completion"] == sched.completions[r["id"]] and r["latency"] == r["completion"] - r["arrival"]


def test_timed_rows_follow_the_batch_clock():
    reqs = tuple(TimedRequest(f"r{i}", 0.05 * i, 20 + 7 * i, 1 + (5 * i) % 9) for i in range(12))
    inst = TimedInstance(M=120, requests=reqs)
    sched = simulate_continuous(inst, make_policy("mc-sf"), make_cost_model("llama2-70b-a100-tp2"))
    ends = (sched.batch_start + sched.batch_duration).tolist()
    rows = {r["id"]: r for r in timed_request_rows(inst, sched)}
    assert len(rows) == inst.n
    for req in inst.requests:
        r = rows[req.id]
        k = sched.starts[req.id]
        # first token at the end of the final run's first batch, the last at the end of batch k + o − 1
        assert r["ttft_s"] == pytest.approx(ends[k] - req.arrival)
        assert r["completion_s"] == pytest.approx(ends[k + req.output - 1]) == sched.completions[req.id]
        assert r["latency_s"] == pytest.approx(sched.latencies[req.id])
        if req.output == 1:
            assert r["mean_tbt_s"] is None and r["ttft_s"] == pytest.approx(r["latency_s"])
        else:
            assert r["ttft_s"] + (req.output - 1) * r["mean_tbt_s"] == pytest.approx(r["latency_s"])
    assert sum(r["latency_s"] for r in rows.values()) / inst.n == pytest.approx(sched.mean_latency)
