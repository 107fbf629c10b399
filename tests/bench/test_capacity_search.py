"""The capacity search (llmopt/capacity/planning.py): targets, statistics, smallest K by bisection.

Breakages caught (by hand): bisection keeping ``lo`` on a K that meets the target (returns K* + 1);
``_meets`` with ``<`` (a value exactly at the limit rejected); the doubling step never reaching
``k_max`` when it is not a power of two (K* = k_max missed); p99 computed as p90.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.capacity.planning import LatencyTarget, latency_statistic, plan_capacity, smallest_workers
from llmopt.engine.cost_model import ConstantCostModel
from llmopt.model.timed_instance import TimedInstance, TimedRequest


def test_targets_parse_and_reject_bad_input() -> None:
    assert LatencyTarget.parse("mean:200") == LatencyTarget("mean", 200.0)
    assert LatencyTarget.parse("P99:1.5") == LatencyTarget("p99", 1.5)
    assert str(LatencyTarget.parse("p90:60")) == "p90:60"
    for bad, match in (("mean", "STAT:SECONDS"), ("p95:3", "statistic"), ("mean:abc", "not a number"),
                       ("mean:-1", "> 0"), ("mean:inf", "finite")):
        with pytest.raises(ValueError, match=match):
            LatencyTarget.parse(bad)


def test_statistics() -> None:
    lat = [float(x) for x in range(100, 0, -1)]  # 1..100, unsorted: nearest-rank percentiles
    assert latency_statistic(lat, "mean") == 50.5
    assert (latency_statistic(lat, "p50"), latency_statistic(lat, "p90"), latency_statistic(lat, "p99")) == (50, 90, 99)
    assert latency_statistic([], "mean") is None
    with pytest.raises(ValueError, match="unknown"):
        latency_statistic(lat, "p95")


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 200), st.integers(1, 200), st.booleans())
def test_smallest_k_on_a_monotone_curve(k_star: int, k_max: int, exhaustive: bool) -> None:
    """latency(K) = 100 / K meets ``mean:100/k_star`` exactly from K = k_star on."""
    calls: list[int] = []

    def evaluate(k: int) -> float:
        calls.append(k)
        return 100.0 / k

    res = smallest_workers(evaluate, LatencyTarget("mean", 100.0 / k_star), k_max=k_max, exhaustive=exhaustive)
    assert res.workers == (k_star if k_star <= k_max else None)
    assert res.monotone and len(calls) == len(set(calls))  # no K simulated twice
    if not exhaustive:
        assert len(calls) <= 2 * (k_max.bit_length() + 1)


def test_none_never_meets_and_non_monotone_points_are_flagged() -> None:
    curve = {1: None, 2: 50.0, 3: 9.0, 4: 12.0, 5: 8.0, 6: 7.0, 7: 6.0, 8: 5.0}
    res = smallest_workers(curve.__getitem__, LatencyTarget("p99", 10.0), k_max=8)
    # doubling: 1 (None), 2 (50), 4 (12), 8 (5 meets); bisection 6 (7 meets), 5 (8 meets) -> 5, although
    # K = 3 meets too: bisection's assumption hides it (the evaluated points look monotone); exhaustive finds it
    assert res.workers == 5 and list(res.evaluated) == [1, 2, 4, 8, 6, 5] and res.monotone
    exact = smallest_workers(curve.__getitem__, LatencyTarget("p99", 10.0), k_max=8, exhaustive=True)
    assert exact.workers == 3 and list(exact.evaluated) == [1, 2, 3]
    worse = {1: 30.0, 2: 40.0, 3: 8.0, 4: 5.0}  # two workers worse than one: flagged
    res = smallest_workers(worse.__getitem__, LatencyTarget("mean", 10.0), k_max=4)
    assert res.workers == 3 and res.monotone is False


def test_bad_range() -> None:
    with pytest.raises(ValueError, match="k_min"):
        smallest_workers(lambda k: 1.0, LatencyTarget("mean", 1.0), k_min=3, k_max=2)


def _one_at_a_time(n: int = 12) -> TimedInstance:
    """n requests at 0 with s + o = M: a worker runs one at a time, o = 4 one-second batches each."""
    return TimedInstance(5, tuple(TimedRequest(f"r{i}", 0.0, 1, 4) for i in range(n)))


def test_capacity_search_on_a_constructed_cluster_case() -> None:
    """Round-robin puts 12 / K requests on each worker, which serves them one after another in 4 s each:
    mean latency 4·(m+1)/2 for m requests per worker: K = 1 → 26 s, 2 → 14 s, 3 → 10 s, 4 → 8 s. The
    smallest K with mean <= 10 s is 3, by bisection (1, 2, 4, then 3) and exhaustively (1, 2, 3)."""
    cost = ConstantCostModel(1.0)
    target = LatencyTarget.parse("mean:10")
    res, runs = plan_capacity(_one_at_a_time(), "mc-sf", "round-robin", target, cost, k_max=8)
    assert res.workers == 3 and [r.K for r in runs] == [1, 2, 4, 3]
    assert {r.K: r.mean for r in runs} == {1: 26.0, 2: 14.0, 4: 8.0, 3: 10.0} and all(r.verified for r in runs)
    assert runs[-1].gpu_s == pytest.approx(3 * 16 * 2 / 12)  # each worker busy 16 s, 2 GPUs, 12 requests
    res, runs = plan_capacity(_one_at_a_time(), "mc-sf", "round-robin", target, cost, k_max=8, exhaustive=True)
    assert res.workers == 3 and [r.K for r in runs] == [1, 2, 3]
    res, _ = plan_capacity(_one_at_a_time(), "mc-sf", "round-robin", LatencyTarget.parse("p99:4"), cost, k_max=8)
    assert res.workers is None  # p99 <= 4 s needs 12 workers, more than k_max


def test_capacity_cli_on_an_instance_file(tmp_path) -> None:
    from typer.testing import CliRunner

    from llmopt.cli.main import app
    from llmopt.model.timed_instance import save_timed_instance

    path = tmp_path / "inst.json"
    save_timed_instance(_one_at_a_time(), path)
    runner = CliRunner()
    res = runner.invoke(app, ["capacity", str(path), "--cost-model", "constant", "-t", "mean:10", "--json",
                              "--plot", str(tmp_path / "k.png")])
    assert res.exit_code == 0, res.output
    row = json.loads(res.stdout)["rows"][0]  # the plot's path goes to standard error
    assert row["workers"] == 3 and row["evaluated"] == "1=26 2=14 4=8 3=10"
    assert (tmp_path / "k.png").stat().st_size > 0
    bad = runner.invoke(app, ["capacity", str(path), "-t", "p95:3"])
    assert bad.exit_code == 2 and "statistic" in bad.output
    bad = runner.invoke(app, ["capacity", str(path), "-r", "nope"])
    assert bad.exit_code == 2 and "unknown router" in bad.output
    unmet = runner.invoke(app, ["capacity", str(path), "--cost-model", "constant", "-t", "p99:4", "--k-max", "4"])
    assert unmet.exit_code == 1
