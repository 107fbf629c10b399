"""``llmopt simulate`` runs through ``llmopt.api.simulate``: the command and the API answer an input alike
(one worker and K workers), and the summary (``--json``) carries latency / TTFT / TBT percentiles,
throughput and the requests-per-batch distribution, checked by hand on tiny instances."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

import llmopt
from llmopt.cli.main import app
from llmopt.model.instance import Instance, Request, save_instance
from llmopt.model.metrics import batch_sizes, run_summary
from llmopt.model.schedule import Eviction
from llmopt.model.timed_instance import TimedInstance, TimedRequest, save_timed_instance

runner = CliRunner()

# four requests at 0 in M = 5: MC-SF runs r0, r1 at step 0, r2 at 1..3, r3 at 4..6 (TEL 13)
T5 = Instance(5, tuple(Request(f"r{i}", 0, 1, o) for i, o in enumerate((1, 1, 3, 3))))
# constant cost model: every batch lasts 1 s; a, b start at 0; c (arrives 0.5) joins the batch at 1 s
TINY = TimedInstance(100, (TimedRequest("a", 0.0, 1, 2), TimedRequest("b", 0.0, 1, 3), TimedRequest("c", 0.5, 1, 1)))


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, ["simulate", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def t5(tmp_path: Path) -> Path:
    path = tmp_path / "t5.json"
    save_instance(T5, path)
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    save_timed_instance(TINY, path)
    return path


def _busy_instance() -> TimedInstance:
    return TimedInstance(120, tuple(TimedRequest(f"q{i}", 0.3 * i, 5 + 7 * i % 13, 1 + (5 * i) % 9)
                                    for i in range(30)))


# --- one surface: the command equals the API --------------------------------------------------


@pytest.mark.parametrize("flags", [[], ["--workers", "1"], ["--workers", "2"], ["--workers", "2", "--router", "jsq"],
                                   ["--router", "least-kv"]])
def test_discrete_command_equals_the_api(t5: Path, flags: list[str]) -> None:
    out = _json([str(t5), "--policy", "fcfs", *flags])
    kw: dict = {}
    if "--workers" in flags:
        kw["workers"] = int(flags[flags.index("--workers") + 1])
    if "--router" in flags:
        kw["router"] = flags[flags.index("--router") + 1]
    run = llmopt.simulate(T5, "fcfs", **kw)
    assert out == {**out, **run_summary(T5, run)}
    if kw:
        assert out["K"] == run.K and out["assignment"] == dict(run.assignment)
        assert [w["starts"] for w in out["workers"]] == [dict(w.starts) for w in run.workers]
    else:
        assert out["starts"] == dict(run.starts) and out["tel"] == run.tel == 13


@pytest.mark.parametrize("K", [1, 2])
def test_continuous_command_equals_the_api_for_one_and_two_workers(tmp_path: Path, K: int) -> None:
    inst = _busy_instance()
    path = tmp_path / "busy.json"
    save_timed_instance(inst, path)
    out = _json([str(path), "--cost-model", "constant", "--workers", str(K), "--router", "jsq"])
    run = llmopt.simulate(inst, "mc-sf", cost_model="constant", workers=K, router="jsq")
    assert out["mean_latency"] == pytest.approx(run.mean_latency, rel=1e-12)
    assert out["assignment"] == dict(run.assignment) and out["K"] == K
    assert out == {**out, **json.loads(json.dumps(run_summary(inst, run)))}
    single = _json([str(path), "--cost-model", "constant"])
    alone = llmopt.simulate(inst, "mc-sf", cost_model="constant")
    assert single["completions"] == pytest.approx(dict(alone.completions))
    assert single["batch_size"]["batches"] == alone.iterations  # every iteration of a busy worker is a batch


# --- the summary, by hand ----------------------------------------------------------------------


def test_discrete_json_summary_by_hand(t5: Path) -> None:
    out = _json([str(t5)])
    # batches: step 0 {r0, r1}; steps 1-3 {r2}; steps 4-6 {r3}
    assert out["batch_size"] == {"batches": 7, "min": 1, "mean": pytest.approx(8 / 7), "p50": 1, "p90": 2, "p99": 2,
                                 "max": 2, "histogram": {"1": 6, "2": 1}}
    assert out["latency"] == {"n": 4, "mean": 3.25, "p50": 1, "p90": 7, "p99": 7, "max": 7}
    assert out["throughput"] == {"span": 7, "completed": 4, "requests_per_step": pytest.approx(4 / 7),
                                 "tokens_per_step": pytest.approx(8 / 7)}
    assert "ttft" not in out and out["tel"] == 13 and out["verified"] is True
    two = _json([str(t5), "--workers", "2"])  # round-robin: {r0, r2} and {r1, r3}, both pairs start at 0
    assert two["batch_size"]["histogram"] == {"1": 4, "2": 2} and two["throughput"]["span"] == 3
    assert two["latency"]["mean"] == 2.0 and two["mean_latency"] == 2.0


def test_continuous_json_summary_by_hand(tiny: Path) -> None:
    out = _json([str(tiny), "--cost-model", "constant"])
    # batches [0,1) {a, b}; [1,2) {a, b, c}: a and c complete at 2; [2,3) {b}: b completes at 3
    assert out["batch_start"] == [0.0, 1.0, 2.0]
    assert out["batch_size"]["histogram"] == {"1": 1, "2": 1, "3": 1} and out["batch_size"]["mean"] == 2.0
    assert out["latency"] == {"n": 3, "mean": pytest.approx(6.5 / 3), "p50": 2.0, "p90": 3.0, "p99": 3.0, "max": 3.0}
    assert out["ttft"] == {"n": 3, "mean": pytest.approx(3.5 / 3), "p50": 1.0, "p90": 1.5, "p99": 1.5, "max": 1.5}
    assert out["tbt"] == {"n": 2, "mean": 1.0, "p50": 1.0, "p90": 1.0, "p99": 1.0, "max": 1.0}  # c: one token
    assert out["throughput"] == {"span": 3.0, "completed": 3, "requests_per_s": 1.0, "tokens_per_s": 2.0}
    text = runner.invoke(app, ["simulate", str(tiny), "--cost-model", "constant"]).stdout
    assert "throughput: 1.000 requests/s, 2.0 output tokens/s" in text
    assert "requests per batch: min 1, mean 2.00, p50 2, p90 3, p99 3, max 3 over 3 batches" in text


def test_batch_sizes_count_aborted_runs() -> None:
    """x ran at steps 1, 2 and was evicted at 3 (2 tokens lost), then ran again at 5..6; y at 0..3: sizes
    1, 2, 2, 1 (steps 0-3), no batch at the idle step 4, then 1, 1."""
    sched = SimpleNamespace(starts={"x": 5, "y": 0}, completions={"x": 7, "y": 4},
                            evictions=(Eviction(t=3, id="x", tokens_lost=2),))
    got = batch_sizes([sched], {"x": 2, "y": 4})
    assert got.histogram == {1: 4, 2: 2} and got.batches == 6 and got.p90 == 2 and got.min == 1
    partial = SimpleNamespace(starts={"x": 5, "y": 0}, completions={"y": 4}, evictions=())  # x never completed
    assert batch_sizes([partial], {"x": 2, "y": 4}).histogram == {1: 4}
    assert batch_sizes([], {}).batches == 0


# --- options -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "needle"), [
    (["--workers", "0"], "--workers must be >= 1"),
    (["--router", "nope"], "unknown router 'nope'"),
    (["--router", "p2c:bogus=1"], "--router 'p2c:bogus=1'"),
    (["--workers", "2", "--plot", "x.png"], "--plot draws one worker's schedule"),
    (["--plot-cdf", "x.txt"], "give a .png, .pdf or .svg file"),
    (["--plot-cdf", "no/such/x.png"], "does not exist"),
])
def test_bad_options_are_one_line_before_the_run(t5: Path, tmp_path: Path, args: list[str], needle: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["simulate", str(t5), *args])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in result.output
    assert result.stdout == ""  # nothing simulated


def test_plot_cdf_writes_the_figure_and_names_it(tiny: Path, tmp_path: Path) -> None:
    png = tmp_path / "cdf.png"
    result = runner.invoke(app, ["simulate", str(tiny), "--cost-model", "constant", "-K", "2", "--plot-cdf", str(png)])
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"CDF plot: {png}" in result.stderr


def test_cdf_points() -> None:
    from llmopt.report.cdf_plot import cdf_points

    assert cdf_points([3.0, None, 1.0, 2.0, 2.0]) == ([1.0, 2.0, 2.0, 3.0], [0.25, 0.5, 0.75, 1.0])


def test_simulate_does_not_load_matplotlib_unless_asked(tiny: Path) -> None:
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom llmopt.cli.main import app\n"
            f"r = CliRunner().invoke(app, ['simulate', {str(tiny)!r}, '--cost-model', 'constant', '-K', '2', "
            "'--json'])\n"
            "assert r.exit_code == 0, r.output\n"
            "print(sorted(m for m in ('matplotlib', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_progress_counts_every_worker_of_a_cluster_run(capsys: pytest.CaptureFixture[str]) -> None:
    """The heartbeat sums the workers the cluster engine hands to the monitor (no timer: a fake stop event
    lets exactly one beat through)."""
    from llmopt.cli.simulate import _heartbeat

    monitor: dict = {}
    llmopt.simulate(T5, "mc-sf", workers=2, monitor=monitor)
    assert [w.done for w in monitor["workers"]] == [2, 2]

    class OneBeat:
        calls = 0

        def wait(self, timeout: float) -> bool:
            self.calls += 1
            return self.calls > 1

    _heartbeat("mc-sf", 4, monitor, OneBeat())
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("simulating mc-sf: 4 of 4 requests completed (")
