"""The suite harness in one process: records, resume, repair, lock, reports, the bench CLI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from bench_helpers import tiny_suite
from typer.testing import CliRunner

from llmopt.bench.harness import FolderLocked, HarnessError, read_trials, run_suite
from llmopt.bench.store import DAMAGED_FILE, LOCK_FILE, RecordError, ResultStore, encode_record, plain_record
from llmopt.bench.suites import SUITES, Suite, Task, get_suite
from llmopt.bench.tasks import TIMING_FIELDS, run_task
from llmopt.cli.main import app
from llmopt.report.summary import summarize, task_frame, write_report

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def _run(suite: Suite, out: Path, **kw) -> list[dict]:
    kw.setdefault("executor", "inline")
    kw.setdefault("progress", False)
    return read_trials(run_suite(suite, out, **kw))[0]


# --- records, resume, settings --------------------------------------------------------------------


def test_records_resume_and_task_errors(tmp_path: Path, monkeypatch) -> None:
    suite = tiny_suite(flaky_too=True)
    out = tmp_path / "run"
    records = _run(suite, out)
    assert len(records) == 6
    by_key = {(r["workload"], r["seed"]): r for r in records}
    assert by_key[("bench_helpers:flaky", 1)]["error"] == "ValueError: seed 1 is broken on purpose"
    for key, r in by_key.items():
        if key == ("bench_helpers:flaky", 1):
            continue
        assert r["error"] is None, r
        assert r["verified_mc-sf"] and r["verified_fcfs"]
        assert r["incumbent"] <= r["tel"] == r["tel_mc-sf"]
        assert r["bound"] <= r["incumbent"]
        assert r["formulation"] == "hindsight-ip" and r["bounds"] == ["lp"]
        if r["opt"] is not None:
            assert r["ratio_vs_opt"] == r["tel"] / r["opt"]
            assert r["reference_is_opt"] == (r["tel"] == r["opt"])
        assert "mcsf_is_opt" not in r
        assert r["ratio_vs_incumbent"] == r["tel"] / r["incumbent"]
        assert r["ratio_vs_bound"] == r["tel"] / r["bound"]
        json.dumps(r, allow_nan=False)
    meta = json.loads((out / "suite.json").read_text())
    run = meta["runs"][0]
    assert meta["suite"]["name"] == "test-tiny" and meta["settings"]["formulation"] == "hindsight-ip"
    assert run["outcome"] == "completed" and run["tasks_run"] == 6 and run["task_errors"] == 1
    assert set(run["versions"]) >= {"python", "llmopt", "numpy", "highspy", "pulp", "gurobipy"}
    assert run["versions"]["numpy"] == np.__version__
    assert not (out / LOCK_FILE).exists()

    # A second run recomputes nothing.
    def boom(*a, **k):
        raise AssertionError("solve_hindsight called on resume")

    monkeypatch.setattr("llmopt.opt.hindsight.solve_hindsight", boom)
    assert len(_run(suite, out)) == 6
    monkeypatch.undo()

    # --retry-errors reruns only the failed task (the flaky seed fails again).
    records = _run(suite, out, retry_errors=True)
    assert len(records) == 7 and records[-1]["seed"] == 1 and records[-1]["workload"] == "bench_helpers:flaky"

    # Different settings, or another suite, in the same folder are refused; nothing is written.
    before = (out / "trials.jsonl").read_bytes()
    with pytest.raises(HarnessError, match="different settings .*ip_time_limit"):
        _run(suite, out, time_limit=3.0)
    with pytest.raises(HarnessError, match="holds results of suite 'test-tiny', not 'other'"):
        _run(tiny_suite(name="other"), out)
    assert (out / "trials.jsonl").read_bytes() == before


def test_a_workload_with_several_parameter_sets(tmp_path: Path) -> None:
    a = {"n_range": (4, 4), "M_range": (8, 8)}
    b = {"n_range": (5, 5), "M_range": (9, 9)}
    suite = Suite(name="multi", description="", workloads=(("jaillet-am1", (0, 1), a), ("jaillet-am1", (0,), b)),
                  ip_time_limit=10.0, search_evals=10)
    assert [s.label for s in suite.workloads] == ["jaillet-am1 M_range=8 n_range=4", "jaillet-am1 M_range=9 n_range=5"]
    assert len({t.key for t in suite.tasks()}) == 3
    assert Suite.from_dict(json.loads(json.dumps(suite.to_dict()))) == suite
    out = tmp_path / "multi"
    records = _run(suite, out)
    assert sorted((r["params"]["n_range"][0], r["seed"], r["n"]) for r in records) == [(4, 0, 4), (4, 1, 4), (5, 0, 5)]
    # More seeds for one entry: only the new task runs.
    more = Suite(name="multi", description="", workloads=(("jaillet-am1", (0, 1), a), ("jaillet-am1", (0, 1), b)),
                 ip_time_limit=10.0, search_evals=10)
    records = _run(more, out)
    assert len(records) == 4 and records[-1]["params"]["n_range"] == [5, 5] and records[-1]["seed"] == 1
    df = summarize(records, more).set_index("workload")
    assert list(df["trials"]) == [2, 2]
    with pytest.raises(ValueError, match="appears twice"):
        Suite(name="dup", description="", workloads=(("jaillet-am1", (0,), a), ("jaillet-am1", (1,), dict(a)))
              )


def test_suite_validation_and_files() -> None:
    with pytest.raises(ValueError, match="ip_time_limit"):
        tiny_suite(ip_time_limit=0)
    with pytest.raises(ValueError, match="reference policy"):
        tiny_suite(reference="nope")
    with pytest.raises(ValueError, match="not plain JSON"):
        Suite(name="x", description="", workloads=(("jaillet-am1", (0,), {"f": object()}),))
    with pytest.raises(ValueError, match="unknown suite field.*'polices'"):
        Suite.from_dict({"name": "x", "workloads": [], "polices": []})
    with pytest.raises(ValueError, match=r"workloads\[0\]"):
        Suite.from_dict({"name": "x", "workloads": [{"seeds": [0]}]})
    s = tiny_suite(formulation="my-plugin-ip", bounds=("lp", "closed-form-dual"))  # names are resolved lazily
    assert Suite.from_dict(s.to_dict()) == s
    assert s.settings()["bounds"] == ["lp", "closed-form-dual"]


def test_ip_scaling_is_a_suite_with_a_task_table(tmp_path: Path) -> None:
    suite = get_suite("ip-scaling")
    points = [(s.params["M_range"][0], s.params["n_range"][0]) for s in suite.workloads]
    assert len(points) == len(set(points)) == 14 and (40, 20) in points and (50, 16) in points
    assert all(s.workload == "jaillet-am1" and s.seeds == (0,) for s in suite.workloads)
    assert suite.ip_time_limit == 600 and suite.search_evals == 200 and suite.task_table
    assert not (REPO / "benchmarks" / "ip_scaling.py").exists()
    # The same suite at toy sizes produces the per-task table.
    small = Suite.from_dict({**suite.to_dict(), "workloads": [
        {"workload": "jaillet-am1", "seeds": [0], "params": {"n_range": [n, n], "M_range": [10, 10]},
         "label": f"M=10 n={n}"} for n in (4, 5)], "ip_time_limit": 10})
    out = tmp_path / "ips"
    _run(small, out)
    write_report(out)
    md = (out / "summary.md").read_text()
    assert "## Tasks" in md and "| M=10 n=4 | 0 | 4 | 10 |" in md and "| M=10 n=5 | 0 | 5 | 10 |" in md
    assert "mc-sf TEL" in md and "Largest instance proven optimal: n = 5 (M = 10" in md
    df = task_frame(read_trials(out / "trials.jsonl")[0], small)
    assert list(df["workload"]) == ["M=10 n=4", "M=10 n=5"] and all(df["status"] == "optimal")


# --- ratios and record hygiene -----------------------------------------------------------------------


def _fake_hindsight(**fields):
    from llmopt.model.result import SolveStatus
    from llmopt.opt.hindsight import HindsightResult

    base = dict(status=SolveStatus.TIME_LIMIT, opt=None, incumbent=None, incumbent_source="local-search", starts={},
                bound=None, bound_certificate="lp-dual-checked", gap=None, heuristics={}, model_stats={},
                runtime_s=0.5, message="Time limit reached")
    base.update(fields)
    return lambda instance, suite, seed, schedules: HindsightResult(**base)


def test_ratio_vs_bound_is_against_the_certified_bound_not_the_incumbent(monkeypatch) -> None:
    suite = tiny_suite(seeds=(0,))
    task = next(iter(suite.tasks()))
    tel = run_task(suite, task)["tel"]
    incumbent, bound = tel - 2, tel - 7.5
    monkeypatch.setattr("llmopt.bench.hindsight_task._hindsight",
                        _fake_hindsight(incumbent=incumbent, bound=bound, gap=(incumbent - bound) / incumbent))
    rec = run_task(suite, task)
    assert rec["error"] is None and rec["tel"] == tel
    assert rec["ratio_vs_bound"] == tel / bound
    assert rec["ratio_vs_incumbent"] == tel / incumbent
    assert rec["ratio_vs_opt"] is None
    assert rec["reference_is_opt"] is False  # a better schedule than the reference's was found
    assert rec["ratio_vs_bound"] > rec["ratio_vs_incumbent"]


def test_the_record_keeps_the_incumbent_schedule_and_it_rechecks_to_the_incumbent() -> None:
    from llmopt.bench.tasks import resolve_workload
    from llmopt.verify.checker import check_schedule

    suite = tiny_suite(seeds=(0,))
    for task in suite.tasks():
        rec = run_task(suite, task)
        assert rec["error"] is None and rec["incumbent"] is not None
        instance = resolve_workload(task.spec.workload)(task.seed, **dict(task.spec.params))
        starts = rec["incumbent_starts"]
        assert set(starts) == {r.id for r in instance.requests}
        report = check_schedule(instance, starts)
        assert report.ok and report.tel == rec["incumbent"]
        json.dumps(rec, allow_nan=False)


def test_records_are_plain_json(monkeypatch) -> None:
    rec = plain_record({"a": np.int64(3), "b": np.float32(0.5), "c": [np.bool_(True)], "d": {"e": (1, 2)}})
    assert rec == {"a": 3, "b": 0.5, "c": [True], "d": {"e": [1, 2]}}
    assert type(rec["a"]) is int and type(rec["b"]) is float and type(rec["c"][0]) is bool
    with pytest.raises(RecordError, match="'gap' is nan"):
        encode_record({"gap": float("nan")})
    with pytest.raises(RecordError, match=r"'x\.y' is inf"):
        encode_record({"x": {"y": np.inf}})
    with pytest.raises(RecordError, match="'when' holds a PosixPath"):
        encode_record({"when": Path("/")})
    # A task whose pipeline reports NaN gets an error naming the field, not a crash or a "nan" string.
    suite = tiny_suite(seeds=(0,))
    monkeypatch.setattr("llmopt.bench.hindsight_task._hindsight",
                        _fake_hindsight(incumbent=np.int64(50), bound=np.float64(40.0), gap=float("nan")))
    rec = run_task(suite, next(iter(suite.tasks())))
    assert rec["gap"] is None and "RecordError" in rec["error"] and "'gap'" in rec["error"]
    assert type(rec["incumbent"]) is int
    json.dumps(rec, allow_nan=False)


# --- repair, lock, progress ---------------------------------------------------------------------------


def test_cut_off_last_line_is_repaired_once(tmp_path: Path) -> None:
    suite = tiny_suite(seeds=(0, 1))
    out = tmp_path / "run"
    _run(suite, out)
    trials = out / "trials.jsonl"
    lines = trials.read_text().splitlines()
    # Drop the last record and leave half of it, without its newline, as a killed writer would.
    cut = lines[-1][: len(lines[-1]) // 2]
    trials.write_text("\n".join(lines[:-1]) + "\n" + cut)
    _, problems = read_trials(trials)  # reading alone changes nothing
    assert len(problems) == 1 and "line 4 is cut off" in problems[0]

    messages: list[str] = []
    records = _run(suite, out, log=messages.append)
    repair = [m for m in messages if "cut off" in m]
    assert len(repair) == 1 and "line 4" in repair[0] and DAMAGED_FILE in repair[0], messages
    assert (out / DAMAGED_FILE).read_text() == cut + "\n"
    assert len(records) == 4 and read_trials(trials)[1] == []
    assert json.loads(lines[-1])["seed"] == records[-1]["seed"]  # the cut task ran again

    messages.clear()
    _run(suite, out, log=messages.append)
    assert len(messages) == 1 and "4 of 4 tasks already recorded" in messages[0], messages

    # A malformed line in the middle is someone's edit: reported, skipped, kept.
    with trials.open("a") as fh:
        fh.write("not json\n")
    messages.clear()
    _run(suite, out, log=messages.append)
    assert any("line 5: invalid JSON" in m and "kept" in m for m in messages)
    assert "not json" in trials.read_text()


def test_a_second_run_on_a_locked_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "locked"
    with ResultStore.open(out, "llmopt bench run holder-cmd", print):
        holder = json.loads((out / LOCK_FILE).read_text())
        assert holder["pid"] == os.getpid() and holder["command"] == "llmopt bench run holder-cmd"
        with pytest.raises(FolderLocked, match=f"pid {os.getpid()} on host .*holder-cmd"):
            _run(tiny_suite(), out)
        result = runner.invoke(app, ["bench", "run", "quick", "--out", str(out), "--no-progress"])
        assert result.exit_code == 2
        assert result.stderr.count("\n") == 1 and f"pid {os.getpid()}" in result.stderr
        assert "holder-cmd" in result.stderr
        assert not (out / "trials.jsonl").exists()
    assert not (out / LOCK_FILE).exists()
    assert len(_run(tiny_suite(seeds=(0,)), out)) == 2  # free again


def test_progress_lines_without_a_terminal(tmp_path: Path) -> None:
    messages: list[str] = []
    _run(tiny_suite(seeds=(0, 1), flaky_too=True), tmp_path / "p", progress=True, log=messages.append)
    lines = [m for m in messages if m.startswith("[")]
    assert len(lines) == 6 and lines[-1].startswith("[6/6] ")
    assert all("elapsed" in m and "ETA" in m for m in lines)
    assert any(m.startswith("[") and "jaillet-am1 seed 0: optimal, TEL" in m for m in lines)
    assert any("bench_helpers:flaky seed 1: error: ValueError" in m for m in lines)
    messages.clear()
    _run(tiny_suite(seeds=(0, 1, 2)), tmp_path / "q", progress=False, log=messages.append)
    assert not [m for m in messages if m.startswith("[")]


# --- reports of older results ------------------------------------------------------------------------


LEGACY = Path(__file__).resolve().parents[1] / "data" / "legacy_jaillet_synthetic"


def test_results_of_the_pre_pipeline_format_still_report_and_resume(tmp_path: Path) -> None:
    """``tests/data/legacy_jaillet_synthetic``: ``suite.json`` and four rows of ``trials.jsonl`` exactly
    as ``llmopt bench run jaillet-synthetic`` wrote them before the hindsight pipeline (commit 0a65fbd):
    the MC-SF field was ``mcsf_is_opt`` and the settings had no formulation, bounds or windows."""
    out = tmp_path / "old"
    shutil.copytree(LEGACY, out)
    old = [json.loads(x) for x in (out / "trials.jsonl").read_text().splitlines()]
    assert all("mcsf_is_opt" in r and "reference_is_opt" not in r for r in old)
    df = write_report(out).set_index("workload")
    assert df.loc["jaillet-am1", "trials"] == 2 and df.loc["jaillet-am2", "trials"] == 2
    assert df.loc["jaillet-am1", "ratio_vs_bound_mean"] == pytest.approx(
        np.mean([r["ratio_vs_bound"] for r in old if r["workload"] == "jaillet-am1"]))
    assert "jaillet-am1" in (out / "summary.md").read_text()
    # The registered suite still resumes such a folder: settings recorded before the
    # pipeline fields existed read as their defaults.
    from llmopt.bench.store import check_folder_suite, read_meta

    check_folder_suite(read_meta(out), get_suite("jaillet-synthetic"), out)


def test_the_old_mcsf_is_opt_field_counts_like_reference_is_opt(tmp_path: Path) -> None:
    suite = tiny_suite(seeds=(0, 1, 2, 3))
    records = _run(suite, tmp_path / "run")
    new = summarize(records, suite)
    assert new["reference_exact"].sum() > 0  # the tiny instances do have MC-SF-optimal trials
    renamed = []
    for r in records:
        r = dict(r)
        r["mcsf_is_opt"] = r.pop("reference_is_opt")
        renamed.append(r)
    assert summarize(renamed, suite).equals(new)


# --- the bench CLI ---------------------------------------------------------------------------------------


def _suite_file(path: Path, suite: Suite) -> Path:
    path.write_text(json.dumps(suite.to_dict()))
    return path


def test_bench_cli_defaults_to_runs_and_reports(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    SUITES.register("test-cli-suite", tiny_suite(seeds=(0,), name="test-cli-suite"))
    try:
        result = runner.invoke(app, ["bench", "run", "test-cli-suite", "--executor", "inline", "--no-progress"])
        assert result.exit_code == 0, result.output
        out = tmp_path / "runs" / "test-cli-suite"
        assert len((out / "trials.jsonl").read_text().splitlines()) == 2
        assert (out / "summary.md").exists() and (out / "ratio_hist.png").exists()
        assert not (tmp_path / "results").exists()
        entry = json.loads((out / "manifest.json").read_text())["test-cli-suite"]
        assert entry["kind"] == "suite" and entry["regenerated"] is True and "not_regenerated" not in entry
        assert entry["command"] == json.loads((out / "suite.json").read_text())["runs"][-1]["command"]
        assert {"trials.jsonl", "summary.md", "suite.json"} <= set(entry["files"])
        assert "manifest.json" not in entry["files"]
        # A rerun that computes nothing (every task recorded) rebuilds the report but regenerates nothing.
        result = runner.invoke(app, ["bench", "run", "test-cli-suite", "--executor", "inline", "--no-progress"])
        assert result.exit_code == 0, result.output
        entry = json.loads((out / "manifest.json").read_text())["test-cli-suite"]
        assert entry["regenerated"] is False and "took 2 task(s) from earlier records" in entry["not_regenerated"]
        (out / "summary.md").unlink()
        result = runner.invoke(app, ["bench", "report", "test-cli-suite"])
        assert result.exit_code == 0, result.output
        assert (out / "summary.md").exists()
        result = runner.invoke(app, ["bench", "report", "--out", str(out)])  # suite from suite.json
        assert result.exit_code == 0, result.output
        result = runner.invoke(app, ["bench", "report", "quick", "--out", str(out)])
        assert result.exit_code == 2 and "holds results of suite 'test-cli-suite', not 'quick'" in result.stderr
        assert result.stderr.count("\n") == 1
        result = runner.invoke(app, ["bench", "report", "no-such-suite"])
        assert result.exit_code == 2 and "no-such-suite" in result.stderr
    finally:
        SUITES.unregister("test-cli-suite")


@pytest.mark.parametrize("args, message", [
    (["--time-limit", "0"], "--time-limit must be > 0"),
    (["--time-limit", "-3"], "--time-limit must be > 0"),
    (["--time-limit", "inf"], "--time-limit must be a finite number"),
    (["--workers", "0"], "--workers must be >= 1"),
    (["--executor", "dask"], "unknown executor 'dask'; known: local, ray, inline"),
    (["--address", "auto"], "an address ('auto') is only used by the ray executor"),
    (["--out", "FILE"], "is a file, not a results folder"),
])
def test_bench_run_rejects_bad_options_before_any_work(tmp_path: Path, monkeypatch, args, message) -> None:
    monkeypatch.chdir(tmp_path)
    Path("FILE").write_text("x")
    result = runner.invoke(app, ["bench", "run", "quick", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert not Path("runs").exists()


def test_bench_cli_suite_file_and_markup_in_names(tmp_path: Path) -> None:
    name = "odd [bold]name[/bold] ["
    suite = tiny_suite(seeds=(0,), name=name, flaky_too=True, description="[red]not markup")
    f = _suite_file(tmp_path / "suite.json", suite)
    out = tmp_path / "odd"
    result = runner.invoke(app, ["bench", "run", "--suite-file", str(f), "--out", str(out), "--executor", "inline",
                                 "--no-progress"])
    assert result.exit_code == 0, result.output
    assert name in result.stdout
    result = runner.invoke(app, ["bench", "report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert name in result.stdout
    # The suite.json of a results folder is a suite file too.
    result = runner.invoke(app, ["bench", "run", "--suite-file", str(out / "suite.json"), "--out", str(out),
                                 "--executor", "inline", "--no-progress"])
    assert result.exit_code == 0, result.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "workloads": [{"workload": "jaillet-am1", "seeds": ["a"]}]}))
    result = runner.invoke(app, ["bench", "run", "--suite-file", str(bad)])
    assert result.exit_code == 2 and str(bad) in result.stderr and "seed 'a'" in result.stderr
    unknown = _suite_file(tmp_path / "unknown.json", tiny_suite(name="u[x]", policies=("mc-sf", "no[such]")))
    result = runner.invoke(app, ["bench", "run", "--suite-file", str(unknown), "--out", str(tmp_path / "u")])
    assert result.exit_code == 2 and "unknown policy 'no[such]'" in result.stderr
    assert not (tmp_path / "u").exists()
    typo = _suite_file(tmp_path / "typo.json", Suite(name="t", description="",
                                                      workloads=(("jaillet-am1", (0,), {"n_rnage": [4, 4]}),)))
    result = runner.invoke(app, ["bench", "run", "--suite-file", str(typo), "--out", str(tmp_path / "t")])
    assert result.exit_code == 2 and "does not take the parameters" in result.stderr and "n_rnage" in result.stderr


def test_gitignore_covers_the_default_runs_folder() -> None:
    assert "runs/" in (REPO / ".gitignore").read_text().split()


def test_task_label() -> None:
    suite = tiny_suite()
    assert [t.label for t in suite.tasks()][:2] == ["jaillet-am1 seed 0", "jaillet-am1 seed 1"]
    assert isinstance(next(iter(suite.tasks())), Task)
    assert not any(f in TIMING_FIELDS for f in ("tel", "opt"))


def test_bench_run_exits_1_when_a_task_failed(tmp_path: Path) -> None:
    """Issue 27: a suite whose tasks fail used to exit 0. The report is still written; the exit code
    and one line name the first failure; a clean rerun of the same folder keeps failing until fixed."""
    suite = tiny_suite(seeds=(0, 1), flaky_too=True)
    f = _suite_file(tmp_path / "suite.json", suite)
    out = tmp_path / "run"
    args = ["bench", "run", "--suite-file", str(f), "--out", str(out), "--executor", "inline", "--no-progress"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    err = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert len(err) == 1 and "1 of 6 tasks failed" in err[0] and "seed 1 is broken on purpose" in err[0]
    assert "--retry-errors" in err[0] and (out / "summary.md").exists()
    assert runner.invoke(app, args).exit_code == 1  # resumed: nothing to run, the failure is still there
    ok = _suite_file(tmp_path / "ok.json", tiny_suite(seeds=(0,), flaky_too=True, name="test-ok"))
    result = runner.invoke(app, ["bench", "run", "--suite-file", str(ok), "--out", str(tmp_path / "ok"),
                                 "--executor", "inline", "--no-progress"])
    assert result.exit_code == 0, result.output


def test_a_bad_workload_parameter_is_refused_before_any_task(tmp_path: Path) -> None:
    """Issue 27: a suite parameter error failed every task (and the run exited 0)."""
    suite = tiny_suite(seeds=(0, 1), name="test-bad-param")
    bad = Suite.from_dict({**suite.to_dict(), "workloads": [
        {"workload": "jaillet-am1", "seeds": [0, 1], "params": {"n_range": [6, 3]}}]})
    f = _suite_file(tmp_path / "bad.json", bad)
    out = tmp_path / "run"
    result = runner.invoke(app, ["bench", "run", "--suite-file", str(f), "--out", str(out), "--executor", "inline",
                                 "--no-progress"])
    assert result.exit_code == 2, result.output
    err = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and "fails on seed 0" in err[0] and "jaillet-am1" in err[0], result.stderr
    assert not (out / "trials.jsonl").exists()


def test_the_eta_weights_tasks_by_their_workload_entry_and_names_the_worst_case() -> None:
    """Issue 27: the ETA was linear in the task count ("ETA 5:10" with nine 600 s IPs left)."""
    from llmopt.bench.harness import Eta

    suite = Suite.from_dict({**tiny_suite(seeds=(0, 1, 2, 3)).to_dict()})
    tasks = list(suite.tasks())
    small = [t for t in tasks if t.spec is suite.workloads[0]]
    large = [t for t in tasks if t.spec is suite.workloads[1]]
    eta = Eta(tasks, workers=2, limit_s=600.0)
    assert eta.estimate() == (None, 8 * 600.0 / 2)
    eta.finished(small[0], 2.0)
    eta.finished(small[1], 4.0)
    # small: 2 left at their mean 3 s; large: 4 left at the mean of all finished (3 s); over 2 workers
    assert eta.estimate() == ((2 * 3.0 + 4 * 3.0) / 2, 6 * 600.0 / 2)
    eta.finished(large[0], 300.0)
    assert eta.estimate()[0] == (2 * 3.0 + 3 * 300.0) / 2
    assert "up to" in eta.text() and "if every remaining IP runs to its limit" in eta.text()
    assert Eta(tasks, workers=1).estimate() == (None, None)


def test_the_api_writes_the_suite_manifest_with_the_cli_line(tmp_path: Path) -> None:
    from llmopt.api import run_suite as api_run_suite

    SUITES.register("test-api-suite", tiny_suite(seeds=(0,), name="test-api-suite"))
    try:
        out = tmp_path / "o"
        api_run_suite("test-api-suite", out, executor="inline", progress=False)
        entry = json.loads((out / "manifest.json").read_text())["test-api-suite"]
        assert entry["command"] == f"llmopt bench run test-api-suite --out {out} --no-progress"
        assert entry["regenerated"] is True
    finally:
        SUITES.unregister("test-api-suite")
