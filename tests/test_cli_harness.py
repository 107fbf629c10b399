"""The command line (solve, simulate, check, bench, registries) and the suite harness."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from llmopt.checker import check_schedule
from llmopt.cli import app
from llmopt.harness import HarnessError, read_trials, run_suite
from llmopt.instance import Instance, load_instance
from llmopt.report import summarize, write_report
from llmopt.suites import SUITES, Suite
from llmopt.workloads import WORKLOADS, jaillet_am1

runner = CliRunner()

# M = 5, s = 1 each, o = (1, 1, 3, 3), all at t = 0: OPT TEL 12, MC-SF TEL 13.
TINY = {
    "M": 5,
    "requests": [
        {"id": f"r{i}", "arrival": 0, "prompt": 1, "output": o} for i, o in enumerate((1, 1, 3, 3))
    ],
}


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps(TINY))
    return p


def _json(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# --- solve / simulate / check -------------------------------------------------------------------


def test_solve_json_finds_the_optimum_and_its_schedule_checks(tiny_file: Path) -> None:
    out = _json(runner.invoke(app, ["solve", str(tiny_file), "--json", "--time-limit", "20"]))
    assert out["status"] == "optimal"
    assert out["objective"] == 12
    assert out["opt"] == 12
    assert out["bound"] <= 12
    report = check_schedule(load_instance(tiny_file), out["starts"])
    assert report.ok and report.tel == 12


def test_solve_relax_json_is_a_lower_bound(tiny_file: Path) -> None:
    out = _json(runner.invoke(app, ["solve", str(tiny_file), "--relax", "--json"]))
    assert out["status"] == "optimal"
    assert out["objective"] <= 12 + 1e-6
    assert "starts" not in out


def test_solve_table_output(tiny_file: Path) -> None:
    result = runner.invoke(app, ["solve", str(tiny_file)])
    assert result.exit_code == 0, result.output
    assert "12" in result.stdout and "optimal" in result.stdout


def test_solve_unknown_solver_exits_2(tiny_file: Path) -> None:
    result = runner.invoke(app, ["solve", str(tiny_file), "--solver", "no-such-solver"])
    assert result.exit_code == 2
    assert "no-such-solver" in result.stderr


def test_solve_unavailable_solver_exits_3(tiny_file: Path) -> None:
    from llmopt.solvers import solver_status

    missing = [s for s in ("gurobi", "cbc") if not solver_status(s)[0]]
    if not missing:
        pytest.skip("every optional solver is installed here")
    result = runner.invoke(app, ["solve", str(tiny_file), "--solver", missing[0], "--json"])
    assert result.exit_code == 3
    assert missing[0] in result.stderr and result.stdout == ""


def test_simulate_json_mcsf(tiny_file: Path) -> None:
    out = _json(runner.invoke(app, ["simulate", str(tiny_file), "--policy", "mc-sf", "--json"]))
    assert out["policy"] == "mc-sf" and out["tel"] == 13
    assert set(out["starts"]) == {"r0", "r1", "r2", "r3"}
    result = runner.invoke(app, ["simulate", str(tiny_file), "--policy", "fcfs"])
    assert result.exit_code == 0 and "TEL" in result.stdout


def test_simulate_unknown_policy_exits_2(tiny_file: Path) -> None:
    result = runner.invoke(app, ["simulate", str(tiny_file), "--policy", "nope"])
    assert result.exit_code == 2 and "nope" in result.stderr


def test_check_ok_and_violation(tiny_file: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"starts": {"r0": 0, "r1": 1, "r2": 0, "r3": 3}}))
    result = runner.invoke(app, ["check", str(tiny_file), str(good)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "OK TEL=12"

    bad_starts = {"r0": 0, "r1": 0, "r2": 0, "r3": 0}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"starts": bad_starts}))
    result = runner.invoke(app, ["check", str(tiny_file), str(bad)])
    assert result.exit_code == 1
    first = check_schedule(load_instance(tiny_file), bad_starts).violations[0]
    assert first in result.stdout


@pytest.mark.parametrize(
    "content, field",
    [("{not json", "invalid JSON"), ('{"start": {}}', "starts"), ('{"starts": {"r0": "x"}}', "r0")],
)
def test_check_malformed_schedule_names_file_and_field(tiny_file: Path, tmp_path: Path, content, field):
    p = tmp_path / "sched.json"
    p.write_text(content)
    result = runner.invoke(app, ["check", str(tiny_file), str(p)])
    assert result.exit_code == 2
    assert str(p) in result.stderr and field in result.stderr
    assert "Traceback" not in result.output


def test_malformed_instance_exits_2_naming_file_request_field(tmp_path: Path) -> None:
    data = json.loads(json.dumps(TINY))
    data["requests"][1]["prompt"] = 0
    p = tmp_path / "broken.json"
    p.write_text(json.dumps(data))
    for args in (["solve", str(p), "--json"], ["simulate", str(p)], ["check", str(p), str(p)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, args
        assert str(p) in result.stderr and "request #1" in result.stderr and "prompt" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.output and result.exception is None or isinstance(
            result.exception, SystemExit)


def test_missing_instance_file_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["simulate", str(tmp_path / "nowhere.json")])
    assert result.exit_code == 2 and "nowhere.json" in result.stderr


def test_registry_listings() -> None:
    for args in (["policies"], ["solvers"], ["bench", "list"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    assert "mc-sf" in runner.invoke(app, ["policies"]).stdout
    assert "highs" in runner.invoke(app, ["solvers"]).stdout
    listing = runner.invoke(app, ["bench", "list"]).stdout
    assert "quick" in listing and "jaillet-synthetic" in listing


# --- harness ----------------------------------------------------------------------------------------


def _flaky(seed: int) -> Instance:
    """A workload whose seed 1 cannot be generated."""
    if seed == 1:
        raise ValueError("seed 1 is broken on purpose")
    return jaillet_am1(seed, n_range=(4, 5), M_range=(8, 9))


@pytest.fixture(autouse=True)
def _flaky_workload():
    # Registered only while this module's tests run, so other modules' registry sweeps
    # (tests/test_conformance.py) never see it.
    WORKLOADS.register("test-flaky", _flaky, "test workload: seed 1 raises")
    yield
    WORKLOADS.unregister("test-flaky")

SMALL = {"n_range": (4, 6), "M_range": (8, 10)}


def _suite(seeds=(0, 1), flaky: bool = True, name: str = "test-tiny") -> Suite:
    workloads = [
        ("jaillet-am1", seeds, SMALL),
        ("jaillet-am2", seeds, {"T_range": (3, 5), "M_range": (8, 10)}),
    ]
    if flaky:
        workloads.append(("test-flaky", seeds, {}))
    paper = {"jaillet-am1": {"mean": 1.005, "max": 1.074, "min": 1.0, "exact": 114}}
    return Suite(name=name, description="tiny test suite", workloads=tuple(workloads), ip_time_limit=10.0,
                 search_evals=20, paper=paper)


_TIMING = {"runtime_s", "hindsight_runtime_s"}


def _strip(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k not in _TIMING}


def test_harness_records_resumes_and_survives_errors(tmp_path: Path, monkeypatch, capsys) -> None:
    suite = _suite()
    out = tmp_path / "run"
    trials = run_suite(suite, out, workers=1, progress=False)
    records, problems = read_trials(trials)
    assert problems == [] and len(records) == 6
    by_key = {(r["workload"], r["seed"]): r for r in records}
    err = by_key[("test-flaky", 1)]
    assert err["error"] == "ValueError: seed 1 is broken on purpose"
    for key, r in by_key.items():
        if key == ("test-flaky", 1):
            continue
        assert r["error"] is None, r
        assert r["verified_mc-sf"] and r["verified_fcfs"]
        assert r["incumbent"] <= r["tel"] == r["tel_mc-sf"]
        assert r["bound"] is None or r["bound"] <= r["incumbent"]
        if r["opt"] is not None:
            assert r["ratio_vs_opt"] == r["tel"] / r["opt"]
            assert r["mcsf_is_opt"] == (r["tel"] == r["opt"])
        assert r["ratio_vs_incumbent"] >= 1.0
        if r["ratio_vs_bound"] is not None:
            assert r["ratio_vs_bound"] >= r["ratio_vs_incumbent"] - 1e-12
        json.dumps(r, allow_nan=False)
    meta = json.loads((out / "suite.json").read_text())
    assert meta["suite"]["name"] == "test-tiny" and meta["llmopt_version"]
    assert meta["command"] and meta["started"] and meta["runs"][0]["tasks_run"] == 6

    # A second run recomputes nothing.
    def boom(*a, **k):
        raise AssertionError("solve_hindsight called on resume")

    monkeypatch.setattr("llmopt.hindsight.solve_hindsight", boom)
    run_suite(suite, out, workers=1, progress=False)
    assert len(read_trials(trials)[0]) == 6
    monkeypatch.undo()

    # A corrupt line is reported by number, skipped and kept; new seeds still run.
    with trials.open("a") as fh:
        fh.write('{"workload": "jaillet-am1", "seed": 2, "tel": 1\n')  # truncated record, no newline issue
    capsys.readouterr()
    run_suite(_suite(seeds=(0, 1, 2)), out, workers=1, progress=False)
    err_text = capsys.readouterr().err
    assert "line 7" in err_text and "skipped" in err_text
    lines = trials.read_text().splitlines()
    assert lines[6] == '{"workload": "jaillet-am1", "seed": 2, "tel": 1'
    records, problems = read_trials(trials)
    assert len(problems) == 1 and "line 7" in problems[0]
    assert len(records) == 9 and {r["seed"] for r in records if r["workload"] == "jaillet-am1"} == {0, 1, 2}

    # Different settings in the same folder are refused (nothing is mixed or lost).
    with pytest.raises(HarnessError, match="different"):
        run_suite(suite, out, workers=1, progress=False, time_limit=3.0)

    # Report: summary table, Markdown, CSV, histogram.
    big = _suite(seeds=(0, 1, 2))
    df = write_report(out, big)
    assert list(df["workload"]) == ["jaillet-am1", "jaillet-am2", "test-flaky"]
    row = df.set_index("workload").loc["test-flaky"]
    assert row["trials"] == 3 and row["errors"] == 1
    am1 = df.set_index("workload").loc["jaillet-am1"]
    assert am1["paper_mean"] == 1.005 and am1["paper_trials"] is None
    assert am1["proven_optimal"] + 0 <= 3
    md = (out / "summary.md").read_text()
    assert "lower bound on the true ratio" in md and "upper bound on the true ratio" in md
    assert "Wall time" in md and "Command" in md
    assert (out / "summary.csv").exists()
    png = (out / "ratio_hist.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert summarize(records, big).shape[0] == 3


def test_harness_is_deterministic_and_parallel_matches_serial(tmp_path: Path) -> None:
    suite = _suite(flaky=False)
    serial = read_trials(run_suite(suite, tmp_path / "a", workers=1, progress=False))[0]
    parallel = read_trials(run_suite(suite, tmp_path / "b", workers=2, progress=False))[0]
    key = lambda r: (r["workload"], r["seed"])  # noqa: E731
    assert [_strip(r) for r in sorted(serial, key=key)] == [_strip(r) for r in sorted(parallel, key=key)]


def test_bench_cli_run_and_report(tmp_path: Path) -> None:
    SUITES.register("test-cli-suite", _suite(seeds=(0,), flaky=False, name="test-cli-suite"))
    try:
        _bench_cli_run_and_report(tmp_path)
    finally:
        SUITES.unregister("test-cli-suite")


def _bench_cli_run_and_report(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = runner.invoke(app, ["bench", "run", "test-cli-suite", "--out", str(out), "--workers", "1",
                                 "--no-progress"])
    assert result.exit_code == 0, result.output
    assert len((out / "trials.jsonl").read_text().splitlines()) == 2
    assert (out / "summary.md").exists() and (out / "ratio_hist.png").exists()
    (out / "summary.md").unlink()
    result = runner.invoke(app, ["bench", "report", "test-cli-suite", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "summary.md").exists()
    result = runner.invoke(app, ["bench", "report", "no-such-suite"])
    assert result.exit_code == 2 and "no-such-suite" in result.stderr
