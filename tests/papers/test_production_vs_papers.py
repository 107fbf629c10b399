"""The ``production-vs-papers`` suites: the token budget of token-exact policies under KV blocks, the
``production`` task kind through the harness (limits recorded and verified, metrics, ranking, report),
and the registered suites' shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmopt.bench.harness import read_trials, run_suite
from llmopt.bench.suites import SUITES, Suite, WorkloadSpec
from llmopt.engine.discrete import SimulationError, simulate
from llmopt.model.instance import Instance, Request
from llmopt.papers.production.vs_papers import (
    PAPER_M,
    TRACES,
    VIDUR_M,
    BlockBudget,
    block_budget,
    ranking_rows,
)
from llmopt.policies import make_policy
from llmopt.report.summary import write_report
from llmopt.verify.checker import check_schedule

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
needs_data = pytest.mark.skipif(not (DATA / "traces").is_dir(),
                                reason=f"staged trace data not found at {DATA} (shared/data is not in the repository)")


def test_block_budget_leaves_one_block_of_slack_per_running_request() -> None:
    assert block_budget(PAPER_M, 16, 128) == 1030 * 16 - 128 * 15 == 14_560
    assert block_budget(VIDUR_M, 16, 128) == 3328 * 16 - 128 * 15 == 51_328
    assert block_budget(PAPER_M, 1, None) == PAPER_M  # token-exact: the whole memory
    with pytest.raises(ValueError, match="needs max_num_seqs"):
        block_budget(PAPER_M, 16, None)
    with pytest.raises(ValueError, match="leaves no token budget"):
        block_budget(100, 16, 10)


def test_a_token_exact_policy_overflows_blocks_unless_it_plans_with_the_budget() -> None:
    # M = 20 tokens = 5 blocks of 4, max_num_seqs = 3. Each request holds 5 tokens (2 blocks) after its batch.
    # MC-SF with M = 20 admits three (15 tokens) = 6 blocks > 5: the engine stops it. With the budget
    # 20 − 3·3 = 11 it admits two (10 tokens, 4 blocks); the third starts when they complete at 1.
    inst = Instance(20, tuple(Request(x, 0, 4, 1) for x in "abc"))
    with pytest.raises(SimulationError, match="overflows memory"):
        simulate(inst, make_policy("mc-sf"), max_num_seqs=3, block_size=4)
    wrapped = BlockBudget(make_policy("mc-sf"))
    s = simulate(inst, wrapped, max_num_seqs=3, block_size=4)
    assert dict(s.starts) == {"a": 0, "b": 0, "c": 1}
    assert wrapped.budget == 11 and wrapped.name == "mc-sf"
    assert check_schedule(inst, s.starts, evictions=s.evictions, limits=s.limits).ok


def _tiny(policies: tuple[str, ...] = ("mc-sf", "fcfs", "a-min", "alpha-protection", "vllm", "orca")) -> Suite:
    fit = block_budget(PAPER_M, 16, 128)
    return Suite(name="tiny-production", description="test", kind="production", reference="vllm", policies=policies,
                 workloads=(WorkloadSpec("llmopt.papers.production.vs_papers:production_trace", (0, 1),
                                         {"trace": "lmsys", "n": 300, "rate": 50.0, "M": PAPER_M, "fit": fit,
                                          "max_num_seqs": 128, "block_size": 16}, "lmsys λ=50"),))


@needs_data
def test_production_task_records_verified_metrics_under_the_limits_and_ranks_them(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LLMOPT_DATA", str(DATA))
    out = tmp_path / "run"
    suite = _tiny()
    records = read_trials(run_suite(suite, out, executor="inline", progress=False))[0]
    assert len(records) == 2
    for r in records:
        assert r["error"] is None and r["kind"] == "production" and r["n"] == 300 and r["M"] == PAPER_M
        for p in suite.policies:
            assert r[f"status_{p}"] == "ok", (p, r["warnings"])
            assert 0 < r[f"latency_p50_{p}"] <= r[f"latency_p99_{p}"]
            assert 0 < r[f"ttft_mean_{p}"] <= r[f"latency_{p}"] and 0 < r[f"tbt_mean_{p}"] < r[f"latency_{p}"]
            assert 0 < r[f"throughput_rps_{p}"] and r[f"tokens_per_s_{p}"] > r[f"throughput_rps_{p}"]
        # the token-exact policies planned with the budget; the block-aware production ones with M
        assert r["budget_mc-sf"] == r["budget_a-min"] == 14_560 and r["budget_vllm"] == r["budget_orca"] == PAPER_M
        assert r["preemptions_mc-sf"] == 0 and r["preemptions_fcfs"] == 0  # clairvoyant look-ahead never evicts
        assert r["tel"] == pytest.approx(r["latency_vllm"] * 300)
    rows = ranking_rows(records, suite.policies)
    ranks = [row["rank"] for row in rows]
    assert ranks[0] == 1 and ranks == sorted(ranks) and all(1 <= k <= i + 1 for i, k in enumerate(ranks))
    assert [row["latency"] for row in rows] == sorted(row["latency"] for row in rows)
    vllm = next(row for row in rows if row["policy"] == "vllm")
    assert vllm["vs_vllm"] == pytest.approx(1.0) and vllm["info"] == "blind" and vllm["seeds"] == vllm["ok"] == 2
    mcsf = next(row for row in rows if row["policy"] == "mc-sf")
    assert mcsf["latency"] == pytest.approx((records[0]["latency_mc-sf"] + records[1]["latency_mc-sf"]) / 2)
    assert mcsf["info"] == "clairvoyant"
    df = write_report(out)  # the harness's report dispatch: the production kind's writer
    assert list(df["policy"]) == [row["policy"] for row in rows]
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "## lmsys, λ = 50 /s" in md and "| 1 |" in md and "max_num_seqs = 128" in md
    assert (out / "ranking.png").stat().st_size > 0


def test_registered_suites_cover_three_traces_three_rates_and_both_capacities() -> None:
    suite = SUITES.get("production-vs-papers")
    assert suite.kind == "production" and len(suite.workloads) == 9 and len(TRACES) == 3
    assert {w.params["M"] for w in suite.workloads} == {PAPER_M}
    assert {w.params["M"] for w in SUITES.get("production-vs-papers-vidur-m").workloads} == {VIDUR_M}
    assert {w.params["n"] for w in SUITES.get("production-vs-papers-10k").workloads} == {10_000}
    for w in suite.workloads:
        assert w.params["max_num_seqs"] == 128 and w.params["block_size"] == 16
        assert w.params["fit"] == block_budget(w.params["M"], 16, 128)
    for p in ("mc-sf", "sorted-f", "a-min", "alpha-protection", "vllm", "orca"):
        assert p in suite.policies
    discrete = SUITES.get("production-vs-papers-discrete")
    assert discrete.kind == "hindsight" and "sarathi" not in discrete.policies and "vllm" in discrete.policies
