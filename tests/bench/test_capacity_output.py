"""``llmopt capacity``'s output: each K's line says whether it meets the target, every written path is
printed, a plot path that cannot be written is refused before any simulation, and targets on the time
to first token and the time between tokens are searched like latency targets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from llmopt.capacity.planning import LatencyTarget, plan_capacity
from llmopt.cli.main import app
from llmopt.engine.cost_model import ConstantCostModel
from llmopt.model.timed_instance import TimedInstance, TimedRequest, save_timed_instance

runner = CliRunner()


def _one_at_a_time(n: int = 12) -> TimedInstance:
    """n requests at 0 with s + o = M: a worker runs one at a time, o = 4 one-second batches each, so the
    j-th request of a worker gets its first token at 4j + 1 s and completes at 4j + 4 s."""
    return TimedInstance(5, tuple(TimedRequest(f"r{i}", 0.0, 1, 4) for i in range(n)))


@pytest.fixture
def inst(tmp_path: Path) -> Path:
    path = tmp_path / "inst.json"
    save_timed_instance(_one_at_a_time(), path)
    return path


def _k_lines(stdout: str) -> dict[int, str]:
    return {int(ln.split(":")[0].split("=")[1]): ln for ln in stdout.splitlines() if ln.strip().startswith("K =")}


def test_each_k_line_says_whether_it_meets_the_target(inst: Path) -> None:
    result = runner.invoke(app, ["capacity", str(inst), "--cost-model", "constant", "--target", "mean:10"])
    assert result.exit_code == 0, result.output
    lines = _k_lines(result.stdout)
    assert sorted(lines) == [1, 2, 3, 4]  # mean 26, 14, 10, 8 s
    assert "misses mean:10: mean 26 s" in lines[1] and "misses mean:10: mean 14 s" in lines[2]
    assert "meets mean:10: mean 10 s" in lines[3] and "meets mean:10: mean 8 s" in lines[4]
    assert not any(" ok" in ln for ln in lines.values())


def test_ttft_and_tbt_targets(inst: Path) -> None:
    assert LatencyTarget.parse("ttft_p99=2") == LatencyTarget("ttft_p99", 2.0)
    assert LatencyTarget.parse("latency_p99:60") == LatencyTarget("p99", 60.0)
    assert LatencyTarget.parse("TBT_mean:0.5").description == "mean time between tokens <= 0.5 s"
    for bad, match in (("ttft_p95:3", "statistic"), ("itl_p99:1", "statistic"), ("ttft_p99", "STAT:SECONDS")):
        with pytest.raises(ValueError, match=match):
            LatencyTarget.parse(bad)
    cost = ConstantCostModel(1.0)
    # K workers of round-robin: ceil(12 / K) requests on the busiest, the last of them first-tokens at
    # 4·(ceil(12/K) − 1) + 1 s: K = 1 → 45, 2 → 21, 4 → 9, 5 → 9, 6 → 5, 8 → 5
    res, runs = plan_capacity(_one_at_a_time(), "mc-sf", "round-robin", LatencyTarget.parse("ttft_p99:5"), cost,
                              k_max=12)
    assert res.workers == 6 and res.evaluated == {1: 45.0, 2: 21.0, 4: 9.0, 8: 5.0, 6: 5.0, 5: 9.0}
    assert {r.K: r.ttft_mean for r in runs}[1] == pytest.approx(sum(4 * j + 1 for j in range(12)) / 12)
    res, _ = plan_capacity(_one_at_a_time(), "mc-sf", "round-robin", LatencyTarget.parse("tbt_p50:1"), cost, k_max=4)
    assert res.workers == 1  # every token 1 s after the last
    res, _ = plan_capacity(_one_at_a_time(), "mc-sf", "round-robin", LatencyTarget.parse("tbt_p50:0.5"), cost,
                           k_max=4)
    assert res.workers is None
    out = runner.invoke(app, ["capacity", str(inst), "--cost-model", "constant", "-t", "ttft_p99:5", "--k-max", "12",
                              "--exhaustive", "--json"])
    assert out.exit_code == 0, out.output
    row = json.loads(out.stdout)["rows"][0]
    assert row["workers"] == 6 and row["target"] == "ttft_p99:5" and row["target_value_s"] == 5.0


def test_every_written_plot_path_is_printed(inst: Path, tmp_path: Path) -> None:
    plot = tmp_path / "k.png"
    result = runner.invoke(app, ["capacity", str(inst), "--cost-model", "constant", "-t", "mean:10", "-t", "p99:20",
                                 "-t", "mean:12", "--plot", str(plot), "--json"])
    assert result.exit_code == 0, result.output
    want = [tmp_path / "k_mean_10.png", tmp_path / "k_p99.png", tmp_path / "k_mean_12.png"]
    assert json.loads(result.stdout)["plots"] == [str(p) for p in want]
    assert [ln for ln in result.stderr.splitlines() if ln.startswith("plot: ")] == [f"plot: {p}" for p in want]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in want) and not plot.exists()
    one = runner.invoke(app, ["capacity", str(inst), "--cost-model", "constant", "-t", "mean:10", "--plot", str(plot)])
    assert one.exit_code == 0 and f"plot: {plot}" in one.stderr and plot.exists()


@pytest.mark.parametrize(("plot", "extra", "needle"), [
    ("no/such/k.png", [], "does not exist"),
    ("k.txt", [], "give a .png, .pdf or .svg file"),
    ("exists.png", [], "exists; pass --force"),
])
def test_a_plot_that_cannot_be_written_is_refused_before_any_simulation(inst: Path, tmp_path: Path, plot: str,
                                                                        extra: list[str], needle: str) -> None:
    (tmp_path / "exists.png").write_bytes(b"mine")
    result = runner.invoke(app, ["capacity", str(inst), "--cost-model", "constant", "--plot", str(tmp_path / plot),
                                 *extra])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0] and lines[0].startswith("error: --plot")
    assert "K =" not in result.stdout and result.stdout == ""
    assert (tmp_path / "exists.png").read_bytes() == b"mine"
    forced = runner.invoke(app, ["capacity", str(inst), "--cost-model", "constant", "-t", "mean:10", "--plot",
                                 str(tmp_path / "exists.png"), "--force"])
    assert forced.exit_code == 0 and (tmp_path / "exists.png").read_bytes()[:4] == b"\x89PNG"


def test_a_capacity_suite_with_a_ttft_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite path: the task records every K's TTFT statistics, the report's figure reads them back."""
    import llmopt.bench.capacity_task as task_kind
    from llmopt.bench.suites import Suite, WorkloadSpec
    from llmopt.report.capacity import _curves, write_capacity_report

    monkeypatch.setattr(task_kind, "resolve_workload", lambda name: lambda seed, **kw: _one_at_a_time())
    suite = Suite(name="cap-ttft", description="", kind="capacity", policies=("mc-sf",), routers=("round-robin",),
                  workloads=(WorkloadSpec("jaillet-am1", (0,), {}, "twelve"),), latency_target="ttft_p99:5",
                  k_max=8, cost_model="constant")
    task = next(iter(suite.tasks()))
    rec = task_kind.blank_capacity_record(suite, task)
    task_kind.fill_capacity_record(rec, suite, task)
    curve = rec["curve_mc-sf@round-robin"]
    assert rec["workers_mc-sf@round-robin"] == 6  # K = 1 … 6 in turn, then K = 7 for the figure
    assert {k: v["ttft_p99"] for k, v in curve.items()} == {"1": 45.0, "2": 21.0, "3": 13.0, "4": 9.0, "5": 9.0,
                                                            "6": 5.0, "7": 5.0}
    runs = _curves([rec], suite, "twelve", 0, "round-robin")["mc-sf"]
    assert [r.statistic("ttft_p99") for r in runs] == [45.0, 21.0, 13.0, 9.0, 9.0, 5.0, 5.0]
    rec["runtime_s"] = 0.0
    write_capacity_report(tmp_path, suite, {}, [rec])
    assert (tmp_path / "latency_vs_k_w0.png").is_file()
    assert "p99 time to first token against K" in (tmp_path / "summary.md").read_text()
