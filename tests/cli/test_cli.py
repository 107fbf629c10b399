"""The command line as a new user meets it: one-line errors before any work, escaped ids, consistent
answers, large values, and stops that stop (Ctrl-C / SIGTERM during a solve)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import live_processes, sigint_as_on_a_terminal
from typer.testing import CliRunner

from llmopt.cli.main import app
from llmopt.model.instance import load_instance, save_instance
from llmopt.verify.checker import check_schedule
from llmopt.workloads.jaillet import jaillet_am1

runner = CliRunner()

T5 = {"M": 5, "requests": [{"id": f"r{i}", "arrival": 0, "prompt": 1, "output": o} for i, o in enumerate((1, 1, 3, 3))]}


def _write(tmp_path: Path, data: dict, name: str = "inst.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return p


def _one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


# --- 1. one-line errors, checked before any work --------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--time-limit", "0"], "--time-limit must be > 0"),
        (["--time-limit", "-1"], "--time-limit must be > 0"),
        (["--time-limit", "inf"], "--time-limit must be a finite number"),
        (["--time-limit", "nan"], "--time-limit must be a finite number"),
        (["--windows", "nope"], "unknown windows 'nope'"),
        (["--upper-bound", "nope"], "unknown upper-bound stage 'nope'"),
        (["--threads", "0"], "--threads must be >= 1"),
        (["--search-evals", "-5"], "--search-evals must be >= 0"),
        (["--seed", "-1"], "--seed must be >= 0"),
        (["--max-nnz", "0"], "--max-nnz must be >= 1"),
        (["--formulation", "nope"], "unknown formulation 'nope'"),
        (["--bound", "nope"], "unknown bound 'nope'"),
        (["--solver", "nope"], "unknown solver 'nope'"),
    ],
)
def test_solve_rejects_bad_options_in_one_line(tmp_path: Path, args, needle) -> None:
    result = runner.invoke(app, ["solve", str(_write(tmp_path, T5)), *args])
    assert needle in _one_line_error(result)
    assert "upper bounds" not in result.stderr  # no work started


def test_write_schedule_into_a_missing_folder_fails_before_solving(tmp_path: Path) -> None:
    inst = _write(tmp_path, T5)
    result = runner.invoke(app, ["solve", str(inst), "--write-schedule", str(tmp_path / "no" / "such" / "s.json")])
    assert "does not exist" in _one_line_error(result)
    assert "upper bounds" not in result.stderr
    result = runner.invoke(app, ["solve", str(inst), "--write-schedule", str(tmp_path)])
    assert "is a folder" in _one_line_error(result)
    result = runner.invoke(app, ["solve", str(inst), "--relax", "--write-schedule", str(tmp_path / "s.json")])
    assert "no schedule" in _one_line_error(result)


def test_write_schedule_never_replaces_the_instance_nor_an_existing_file(tmp_path: Path) -> None:
    """Issue 27: ``solve inst.json --write-schedule inst.json`` replaced the instance and exited 0."""
    inst = _write(tmp_path, T5)
    before = inst.read_bytes()
    err = _one_line_error(runner.invoke(app, ["solve", str(inst), "--write-schedule", str(inst), "--force"]))
    assert "is the input file" in err and inst.read_bytes() == before
    out = tmp_path / "s.json"
    out.write_text("{}")
    err = _one_line_error(runner.invoke(app, ["solve", str(inst), "--write-schedule", str(out)]))
    assert "exists; pass --force" in err and out.read_text() == "{}"
    result = runner.invoke(app, ["solve", str(inst), "--write-schedule", str(out), "--force", "--quiet"])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["tel"] == 12  # OPT of T5 (test_solve_json below)


def test_ids_with_markup_characters_print_as_they_are(tmp_path: Path) -> None:
    data = {"M": 6, "requests": [{"id": "job[/tmp]", "arrival": 0, "prompt": 1, "output": 2},
                                 {"id": "r[a]", "arrival": 0, "prompt": 2, "output": 3},
                                 {"id": "[bold]x", "arrival": 1, "prompt": 1, "output": 1}]}
    inst = _write(tmp_path, data)
    for cmd in (["simulate", str(inst)], ["solve", str(inst), "-q"]):
        result = runner.invoke(app, cmd)
        assert result.exit_code == 0, result.output
        if cmd[0] == "simulate":
            assert "job[/tmp]" in result.stdout and "r[a]" in result.stdout and "[bold]x" in result.stdout
    result = runner.invoke(app, ["solve", str(inst), "-q", "--json"])
    assert set(json.loads(result.stdout)["starts"]) == {"job[/tmp]", "r[a]", "[bold]x"}


def test_malformed_instances_name_file_request_and_field(tmp_path: Path) -> None:
    cases = [
        ({"M": 5, "requests": [{"arrival": 0, "prompt": 1, "ouput": 3}]}, ["request #0", "'ouput'"]),
        ({"M": 5, "requests": [], "extra": 1}, ["unknown field 'extra'"]),
        ({"M": 5, "requests": [{"arrival": 1e18, "prompt": 1, "output": 1}]}, ["request #0", "'arrival'", "2^53"]),
        ({"M": 5, "requests": [{"arrival": 2**60, "prompt": 1, "output": 1}]}, ["request #0", "'arrival'"]),
        ({"M": 5, "requests": [{"arrival": 0, "prompt": 1, "output": 2.5}]}, ["request #0", "'output'"]),
    ]
    for data, needles in cases:
        path = _write(tmp_path, data)
        for cmd in ("solve", "simulate"):
            line = _one_line_error(runner.invoke(app, [cmd, str(path)]))
            assert str(path) in line and all(n in line for n in needles), line


# --- 5. consistent answers ------------------------------------------------------------------------------


def test_empty_instance_is_optimal_zero_everywhere(tmp_path: Path) -> None:
    inst = _write(tmp_path, {"M": 5, "requests": []})
    out = json.loads(runner.invoke(app, ["solve", str(inst), "--json", "-q"]).stdout)
    assert out["status"] == "optimal" and out["opt"] == 0 and out["bound"] == 0
    result = runner.invoke(app, ["solve", str(inst), "--relax", "--json", "-q"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["status"] == "optimal" and out["bound"] == 0


def test_solve_json_carries_model_size_bounds_and_a_checked_schedule(tmp_path: Path) -> None:
    inst = _write(tmp_path, T5)
    out = json.loads(runner.invoke(app, ["solve", str(inst), "--json", "-q", "--bound", "lp"]).stdout)
    assert out["status"] == "optimal" and out["opt"] == out["objective"] == 12 and out["bound"] == 12
    assert out["model"]["cols"] > 0 and out["model"]["nnz"] > 0 and out["model"]["formulation"] == "hindsight-ip"
    assert [b["name"] for b in out["bounds"]] == ["lp"] and out["bounds"][0]["verified"] is True
    assert check_schedule(load_instance(inst), out["starts"]).tel == 12
    assert out["errors"] == []


def test_solve_relax_reports_certificate_status(tmp_path: Path) -> None:
    inst = _write(tmp_path, T5)
    out = json.loads(runner.invoke(app, ["solve", str(inst), "--relax", "--json", "-q",
                                         "--bound", "lp", "--bound", "dual-lp"]).stdout)
    assert out["status"] in ("bounded", "optimal") and out["bound"] <= 12
    lp, dual = out["bounds"]
    assert lp["certificate"] == "lp-dual-checked" and lp["verified"] and lp["value"] <= 12 + 1e-9
    assert dual["value"] == pytest.approx(lp["value"], rel=1e-6)
    table = runner.invoke(app, ["solve", str(inst), "--relax", "-q"]).stdout
    assert "verified" in table and "lp-dual-checked" in table
    # a formulation without a checker certificate: its LP value is labelled uncertified
    out = json.loads(runner.invoke(app, ["solve", str(inst), "--relax", "--json", "-q",
                                         "--formulation", "hindsight-ip-binary"]).stdout)
    assert out["uncertified_lp"]["certified"] is False and out["uncertified_lp"]["value"] <= 12 + 1e-6


def test_simulate_json_carries_ael_makespan_peak_and_verification(tmp_path: Path) -> None:
    inst = _write(tmp_path, T5)
    out = json.loads(runner.invoke(app, ["simulate", str(inst), "--json"]).stdout)
    assert out["tel"] == 13 and out["ael"] == pytest.approx(13 / 4)
    assert out["makespan"] == 7 and out["peak_memory"] == 4 and out["M"] == 5
    assert out["verified"] is True and "verified" in out["verification"]


def test_check_lists_every_violation_with_all_and_json(tmp_path: Path) -> None:
    inst = _write(tmp_path, T5)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"starts": {"r0": 0, "r1": 0, "r2": 0, "r3": 0, "ghost": 1}}))
    first = runner.invoke(app, ["check", str(inst), str(bad)])
    assert first.exit_code == 1 and first.stdout.startswith("INFEASIBLE") and "--all" in first.stdout
    everything = runner.invoke(app, ["check", str(inst), str(bad), "--all"])
    assert everything.exit_code == 1
    listed = [ln for ln in everything.stdout.splitlines() if ln.startswith("  ")]
    assert len(listed) >= 3 and any("ghost" in ln for ln in listed)
    out = json.loads(runner.invoke(app, ["check", str(inst), str(bad), "--json"]).stdout)
    assert out["ok"] is False and len(out["violations"]) == len(listed) and out["tel"] is None


def test_solvers_listing_says_when_gurobi_is_size_limited(monkeypatch) -> None:
    monkeypatch.delenv("GRB_LICENSE_FILE", raising=False)
    monkeypatch.setenv("HOME", "/nonexistent-home-for-test")
    out = runner.invoke(app, ["solvers"]).stdout
    assert "gurobi" in out and "size-limited" in out
    assert "interrupt" in out and "lp_duals" in out  # capabilities are listed


@pytest.mark.slow
def test_large_time_origin_and_long_outputs(tmp_path: Path) -> None:
    shift = 1_700_000_000_000
    data = {"M": 5, "requests": [{"id": f"r{i}", "arrival": shift, "prompt": 1, "output": o}
                                 for i, o in enumerate((1, 1, 3, 3))]}
    inst = _write(tmp_path, data)
    sim = json.loads(runner.invoke(app, ["simulate", str(inst), "--json"]).stdout)
    assert sim["tel"] == 13 and sim["verified"]
    out = json.loads(runner.invoke(app, ["solve", str(inst), "--json", "-q"]).stdout)
    assert out["opt"] == 12 and min(out["starts"].values()) >= shift
    long = _write(tmp_path, {"M": 2_000_002, "requests": [{"arrival": 0, "prompt": 1, "output": 2_000_000},
                                                          {"arrival": 0, "prompt": 1, "output": 1}]}, "long.json")
    out = json.loads(runner.invoke(app, ["solve", str(long), "--json", "-q", "--time-limit", "600",
                                         "--bound", "lp"]).stdout)
    assert out["opt"] == 2_000_001
    # Its LP (2M rows, 2 columns) solves in seconds without presolve (highspy 1.16's presolve runs for
    # minutes on it: tests/solvers/test_solvers.py checks that LPs go to HiGHS with presolve off). The
    # budget is generous so that a loaded machine never cancels the LP here.
    lp = out["bounds"][0]
    # the checker evaluates the duals exactly and rounds its value down (llmopt.verify.certificates.round_down);
    # the LP's duals are only near-optimal, so the value may sit just below the integer it proves
    assert lp["name"] == "lp" and lp["verified"] and lp["value"] == pytest.approx(2_000_001, abs=1e-3)
    assert math.ceil(lp["value"] - 1e-6) == 2_000_001


# --- basics: solve, simulate, check, listings ------------------------------------------------------


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps(T5))
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
    assert out["bound"] <= 12 and out["incumbent"] == 12  # the local search finds T-5's optimum
    assert out["status"] == ("optimal" if out["bound"] == 12 else "bounded")
    assert "starts" not in out and out["errors"] == []


def test_solve_table_output(tiny_file: Path) -> None:
    result = runner.invoke(app, ["solve", str(tiny_file)])
    assert result.exit_code == 0, result.output
    assert "12" in result.stdout and "optimal" in result.stdout


def test_solve_unknown_solver_exits_2(tiny_file: Path) -> None:
    result = runner.invoke(app, ["solve", str(tiny_file), "--solver", "no-such-solver"])
    assert result.exit_code == 2
    assert "no-such-solver" in result.stderr


def test_solve_unavailable_solver_exits_3(tiny_file: Path) -> None:
    from llmopt.solvers import SOLVERS
    from llmopt.solvers.highs import HighsSolver

    class Absent(HighsSolver):
        @classmethod
        def available(cls):
            return False, "absent-backend is not installed (pip install absent-backend)"

    SOLVERS.register("test-absent", Absent)
    try:
        result = runner.invoke(app, ["solve", str(tiny_file), "--solver", "test-absent", "--json"])
    finally:
        SOLVERS.unregister("test-absent")
    assert result.exit_code == 3
    assert "test-absent" in result.stderr and "pip install absent-backend" in result.stderr and result.stdout == ""


def test_simulate_json_mcsf(tiny_file: Path) -> None:
    out = _json(runner.invoke(app, ["simulate", str(tiny_file), "--policy", "mc-sf", "--json"]))
    assert out["policy"] == "mc-sf" and out["tel"] == 13
    assert set(out["starts"]) == {"r0", "r1", "r2", "r3"}
    result = runner.invoke(app, ["simulate", str(tiny_file), "--policy", "fcfs"])
    assert result.exit_code == 0 and "TEL" in result.stdout


def test_simulate_unknown_policy_exits_2(tiny_file: Path) -> None:
    result = runner.invoke(app, ["simulate", str(tiny_file), "--policy", "nope"])
    assert result.exit_code == 2 and "nope" in result.stderr


def test_simulate_with_predictions(tmp_path: Path) -> None:
    """C Example 1 from the command line: intervals from the file, or added by --predictions."""
    ex1 = tmp_path / "ex1.json"
    ex1.write_text(json.dumps({"M": 10, "requests": [
        {"id": f"r{i}", "arrival": 0, "prompt": 1, "output": 1, "lower": 1, "upper": 4} for i in range(5)]}))
    assert _json(runner.invoke(app, ["simulate", str(ex1), "--policy", "a-max", "--json"]))["tel"] == 9
    out = _json(runner.invoke(app, ["simulate", str(ex1), "--policy", "a-max", "--json",
                                    "--predictions", "shared:lower=1,upper=1"]))
    assert out["tel"] == 5 and out["verified"]
    bad = runner.invoke(app, ["simulate", str(ex1), "--policy", "a-min", "--predictions", "nope"])
    assert bad.exit_code == 2 and "nope" in bad.stderr
    bare = runner.invoke(app, ["simulate", str(ex1), "--policy", "a-min", "--predictions", "none"])
    assert bare.exit_code == 2 and "'r0' has none" in bare.stderr and "--predictions" in bare.stderr


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
    data = json.loads(json.dumps(T5))
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


def test_relax_reports_a_bound_above_the_best_schedule_as_an_error(tmp_path: Path) -> None:
    from llmopt.opt.bounds import BOUNDS, BoundResult

    BOUNDS.register("test-bogus", lambda inst, ctx: BoundResult("test-bogus", 1e6, "bogus", True, "claims too much"))
    try:
        result = runner.invoke(app, ["solve", str(_write(tmp_path, T5)), "--relax", "--json", "-q",
                                     "--bound", "test-bogus", "--bound", "lp"])
    finally:
        BOUNDS.unregister("test-bogus")
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert out["bound"] <= 12 and any("exceeds the verified incumbent" in e for e in out["errors"])


def test_a_failing_plugin_formulation_keeps_what_was_found(tmp_path: Path) -> None:
    from llmopt.formulations import FORMULATIONS

    class Broken:
        name, exact = "broken", True

        def build(self, instance, windows):
            raise RuntimeError("this formulation is broken")

        def decode(self, instance, model, x):
            return {}

    FORMULATIONS.register("test-broken", Broken)
    try:
        result = runner.invoke(app, ["solve", str(_write(tmp_path, T5)), "--json", "-q", "--formulation",
                                     "test-broken", "--bound", "lp"])  # auto's zone LP would prove T5 first
    finally:
        FORMULATIONS.unregister("test-broken")
    assert result.exit_code == 1 and "Traceback" not in result.output
    out = json.loads(result.stdout)
    assert out["objective"] == 12  # the local search's schedule is kept (and the LP bound may prove it)
    assert out["status"] in ("optimal", "not_solved") and out["model"] == {}
    assert any("this formulation is broken" in e for e in out["errors"])


# --- 3. stops stop: Ctrl-C and SIGTERM during a long solve --------------------------------------------


def _llmopt() -> list[str]:
    return [sys.executable, "-c", "from llmopt.cli.main import app; app()"]


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_json_output_of_a_real_process_is_only_the_json_document(tmp_path: Path, solver: str) -> None:
    """The process's file descriptor 1 carries nothing but the document: highspy >= 1.16 prints a
    banner from its C++ constructor, which Python-level capture (CliRunner) does not see."""
    path = _write(tmp_path, T5)
    proc = subprocess.run([*_llmopt(), "solve", str(path), "--solver", solver, "--json", "-q"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)  # fails on any banner or log line before or after the document
    assert out["objective"] == out["bound"] and out["status"] == "optimal"
    proc = subprocess.run([*_llmopt(), "solve", str(path), "--solver", solver, "--relax", "--json", "-q"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["bound"] is not None


# ``llmopt solve`` whose first HiGHS solve of the kind named by argv[1] ("mip": the IP; "lp": the LP
# bound) is held in the adapter's wait loop once HiGHS has started it: it says so on stderr and waits
# there until the test's signal arrives. So the signal always lands while that solve is in progress
# (HiGHS may have finished in its thread by then; the adapter still sees a stop), on any machine:
# an event, not a timer (a one-second sleep let a fast machine finish the LP before the signal).
_HOLD_THE_SOLVE = """
import sys, time
import llmopt.solvers.highs as highs
want_mip = sys.argv.pop(1) == "mip"
held = []
real_run = highs._run
def run(h, model, *args, **kwargs):
    if not held and model.is_mip == want_mip:
        real_wait = h.wait
        def wait(*a, **k):
            if not held:
                held.append(True)
                sys.stderr.write("test: HiGHS is solving\\n")
                sys.stderr.flush()
                while True:
                    time.sleep(0.01)
            return real_wait(*a, **k)
        h.wait = wait
    return real_run(h, model, *args, **kwargs)
highs._run = run
from llmopt.cli.main import app
app()
"""


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "mode"), [(signal.SIGINT, "ip"), (signal.SIGTERM, "ip"), (signal.SIGINT, "relax")])
def test_a_signal_during_the_solve_stops_it_within_seconds_and_keeps_the_incumbent(tmp_path: Path, sig, mode) -> None:
    path = tmp_path / "am1.json"
    save_instance(jaillet_am1(0), path)  # n = 58: HiGHS runs until its time limit; the LP takes seconds
    extra, kind = (["--relax", "--bound", "lp"], "lp") if mode == "relax" else ([], "mip")
    proc = subprocess.Popen([sys.executable, "-c", _HOLD_THE_SOLVE, kind, "solve", str(path), "--time-limit", "300",
                             "--search-evals", "20", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
                            preexec_fn=sigint_as_on_a_terminal)
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:  # wait for the readiness line: the IP solve (or the LP bound stage's) is in progress
        lines.append(line)
        if "test: HiGHS is solving" in line:
            break
    else:  # never signal a process that is not yet (or no longer) solving: its exit status would mean nothing
        proc.wait(timeout=60)
        pytest.fail(f"the solve never reached HiGHS's wait loop; stderr: {''.join(lines)}")
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    # Exit 130 and "interrupted" below: stopped by the signal, not by the 300 s limit (communicate's
    # 240 s would have failed first). How fast is not a unit-test claim: no wall clock is asserted.
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err
    assert ("best verified schedule" if mode == "relax" else "TEL (best schedule)") in out


# --- simulate: a summary, per-request rows on request (issue 27) --------------------------------


def test_simulate_prints_a_summary_and_writes_rows_on_request(tmp_path: Path) -> None:
    import csv

    reqs = [{"id": f"q{i}", "arrival": i // 3, "prompt": 1 + i % 4, "output": 1 + (7 * i) % 5} for i in range(30)]
    inst = _write(tmp_path, {"M": 12, "requests": reqs})
    tel = _json(runner.invoke(app, ["simulate", str(inst), "--json"]))["tel"]
    rows_csv = tmp_path / "rows.csv"
    result = runner.invoke(app, ["simulate", str(inst), "--requests", str(rows_csv)])
    assert result.exit_code == 0, result.output
    assert "q29" not in result.stdout  # 30 requests: no per-request table on the terminal
    assert f"TEL = {tel}" in result.stdout and "p99" in result.stdout and str(rows_csv) in result.stdout
    with rows_csv.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 30 and sum(int(r["latency"]) for r in rows) == tel
    rows_json = tmp_path / "rows.json"
    assert runner.invoke(app, ["simulate", str(inst), "--requests", str(rows_json)]).exit_code == 0
    assert [r["id"] for r in json.loads(rows_json.read_text())] == [r["id"] for r in rows]
    assert "exists" in _one_line_error(runner.invoke(app, ["simulate", str(inst), "--requests", str(rows_csv)]))
    assert "is the input file" in _one_line_error(
        runner.invoke(app, ["simulate", str(inst), "--requests", str(inst), "--force"]))


def test_simulate_timed_summary_has_ttft_and_time_between_tokens(tmp_path: Path) -> None:
    from llmopt.model.timed_instance import TimedInstance, TimedRequest, save_timed_instance

    path = tmp_path / "timed.json"
    save_timed_instance(TimedInstance(M=200, requests=tuple(
        TimedRequest(f"r{i}", 0.1 * i, 10 + i, 1 + i % 6) for i in range(25))), path)
    rows = tmp_path / "rows.json"
    result = runner.invoke(app, ["simulate", str(path), "--requests", str(rows)])
    assert result.exit_code == 0, result.output
    assert "time to first token" in result.stdout and "time between tokens" in result.stdout
    data = json.loads(rows.read_text())
    assert len(data) == 25 and all(r["ttft_s"] > 0 and r["latency_s"] >= r["ttft_s"] for r in data)
    assert {r["mean_tbt_s"] is None for r in data if r["output"] == 1} == {True}


def _children_named(pid: int, prefix: str) -> list[int]:
    return [p for p, name, ppid, _ in live_processes() if ppid == pid and name.startswith(prefix)]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the cbc child through Linux /proc")
def test_ctrl_c_during_a_cbc_solve_stops_it_and_its_child(tmp_path: Path) -> None:
    """Issue 27: "Ctrl-C does nothing during a CBC solve". Signalled once the ``cbc`` child runs (found
    in /proc: signal after the solver is ready, not after a timer), the command exits 130 with its
    incumbent, and no cbc process is left behind."""
    path = tmp_path / "am1.json"
    save_instance(jaillet_am1(0), path)
    proc = subprocess.Popen([*_llmopt(), "solve", str(path), "--solver", "cbc", "--time-limit", "300",
                             "--search-evals", "20", "--bound", "energy"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
                            preexec_fn=sigint_as_on_a_terminal)
    try:
        while not (cbc := _children_named(proc.pid, "cbc")):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err and "TEL (best schedule)" in out
    # an orphaned child is re-parented: look it up by its own pid
    assert not {p for p, _, _, _ in live_processes()} & set(cbc)


# --- plug-in formulations are checked before their bound is trusted (issue 27) -------------------


def _all_but_the_first_wait(windows):
    from llmopt.model.windows import StartWindows

    lo = (windows.lo[0], *(a + 1 for a in windows.lo[1:]))
    return StartWindows(lo, windows.hi, windows.horizon, windows.reason)


def test_a_wrong_exact_plugin_formulation_is_not_reported_as_proven(tmp_path: Path, monkeypatch) -> None:
    """A plug-in that declares itself exact but makes every request but the first wait a step: on T5
    its optimum is 13 = FCFS's TEL while OPT is 12, so its solver bound met the incumbent and the
    result read "OPT 13 (proven)". Now ``solve`` runs its conformance check first (once: the verdict
    is cached) and does not use its solver bound as a proof."""
    from llmopt.formulations import FORMULATIONS
    from llmopt.formulations.hindsight_ip import HindsightIP

    class WaitsAStep(HindsightIP):
        def build(self, instance, windows):
            return super().build(instance, _all_but_the_first_wait(windows))

    class Honest(HindsightIP):
        pass

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    FORMULATIONS.register("test-waits-a-step", WaitsAStep)
    FORMULATIONS.register("test-honest", Honest)
    inst = _write(tmp_path, T5)  # OPT 12; fcfs finds 13, so only the IP can reach 12
    base = ["solve", str(inst), "--json", "--upper-bound", "fcfs", "--bound", "sum-of-outputs", "--search-evals", "0"]
    try:
        result = runner.invoke(app, [*base, "--formulation", "test-waits-a-step"])
        again = runner.invoke(app, [*base, "--formulation", "test-waits-a-step"])
        honest = runner.invoke(app, [*base, "--formulation", "test-honest"])
    finally:
        FORMULATIONS.unregister("test-waits-a-step")
        FORMULATIONS.unregister("test-honest")
    out = json.loads(result.stdout)
    assert "fails its conformance check" in result.stderr and "checking plug-in formulation" in result.stderr
    assert out["opt"] is None and out["status"] != "optimal" and out["objective"] == 13 and out["errors"] == []
    assert "checking plug-in formulation" not in again.stderr  # cached
    assert json.loads(again.stdout)["opt"] is None
    out = json.loads(honest.stdout)
    assert "fails" not in honest.stderr and out["opt"] == out["objective"] == 12 and out["status"] == "optimal"


def test_a_formulation_that_cannot_model_the_instance_is_refused_before_any_work(tmp_path: Path) -> None:
    """Issue 27: ``--formulation wang-ip`` on arrivals over time failed only after the search and the LP."""
    inst = _write(tmp_path, {"M": 10, "requests": [{"arrival": 0, "prompt": 2, "output": 3},
                                                   {"arrival": 2, "prompt": 2, "output": 3}]})
    result = runner.invoke(app, ["solve", str(inst), "--formulation", "wang-ip"])
    assert "cannot model" in _one_line_error(result) and "hindsight-ip" in result.stderr
    assert "upper bounds" not in result.stderr  # no work started


# --- generate (issue 27) --------------------------------------------------------------------------


def test_generate_writes_the_workload_instance_of_a_seed(tmp_path: Path) -> None:
    from llmopt.model.instance import instance_to_dict
    from llmopt.workloads import make_instance

    out = tmp_path / "am1.json"
    result = runner.invoke(app, ["generate", "jaillet-am1", "--seed", "3", "--param", "n_range=[20,20]",
                                 "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert instance_to_dict(load_instance(out)) == instance_to_dict(make_instance("jaillet-am1", 3, n_range=(20, 20)))
    assert "n = 20" in result.stdout
    assert "exists" in _one_line_error(runner.invoke(app, ["generate", "jaillet-am1", "--seed", "3", "-o", str(out)]))
    err = _one_line_error(runner.invoke(app, ["generate", "jaillet-am1", "--seed", "3", "--param", "nn=3",
                                              "-o", str(tmp_path / "x.json")]))
    assert "has no parameter 'nn'" in err and "n_range" in err
    assert "unknown workload" in _one_line_error(runner.invoke(app, ["generate", "nope", "--seed", "0", "-o",
                                                                     str(tmp_path / "y.json")]))


def test_solve_exits_at_once_while_a_cancelled_highs_solve_still_unwinds(tmp_path: Path, monkeypatch) -> None:
    """Issue 27: ``solve --threads 8`` sometimes aborted after printing ("terminate called without an
    active exception", exit 134): interpreter shutdown beside HiGHS threads still unwinding a cancelled
    solve. The command then flushes its output and leaves with os._exit, with its own exit code."""
    import llmopt.solvers.highs as highs

    exits: list[int] = []

    class Exited(BaseException):
        pass

    def fake_exit(code: int) -> None:
        exits.append(code)
        raise Exited

    inst = _write(tmp_path, T5)
    assert runner.invoke(app, ["solve", str(inst), "--json", "-q"]).exit_code == 0
    assert highs.solve_still_running() is False  # the real probe, after a solve that finished
    monkeypatch.setattr(highs, "solve_still_running", lambda: True)
    monkeypatch.setattr(os, "_exit", fake_exit)
    with pytest.raises(Exited):
        runner.invoke(app, ["solve", str(inst), "--json", "-q"], catch_exceptions=False)
    assert exits == [0]
    monkeypatch.setattr(highs, "solve_still_running", lambda: False)
    assert runner.invoke(app, ["solve", str(inst), "--json", "-q"]).exit_code == 0 and exits == [0]


def test_a_long_simulation_reports_progress(capsys) -> None:
    """Issue 27: slow policies ran silently (sorted-f-dp 194 s on 1,000 requests). The engine hands its
    worker to a monitor (no work in its loop); the command line prints its count every few seconds."""
    from llmopt.cli.simulate import _heartbeat
    from llmopt.engine.discrete import simulate
    from llmopt.model.instance import Instance
    from llmopt.policies import make_policy

    inst = Instance.from_tuples(10, [(0, 2, 3), (0, 2, 6), (1, 3, 2)])
    monitor: dict = {}
    simulate(inst, make_policy("mc-sf"), monitor=monitor)
    assert monitor["worker"].done == 3

    class TwoBeats:  # wait() says "not stopped" twice, then "stopped": two progress lines
        calls = 0

        def wait(self, timeout):
            self.calls += 1
            return self.calls > 2

    _heartbeat("mc-sf", 3, monitor, TwoBeats())
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("simulating mc-sf: 3 of 3 requests completed (")


def test_simulate_plot_draws_the_schedule(tmp_path: Path) -> None:
    """``simulate --plot``: a Gantt chart and the KV cache in use, for discrete and continuous time; the
    memory line goes exactly through the schedule's usage at every breakpoint."""
    from llmopt.engine.discrete import simulate
    from llmopt.model.instance import Instance
    from llmopt.model.timed_instance import TimedInstance, TimedRequest, save_timed_instance
    from llmopt.policies import make_policy
    from llmopt.report.schedule_plot import memory_polyline

    inst = Instance.from_tuples(12, [(0, 2, 3), (0, 2, 6), (1, 3, 2), (2, 1, 4), (2, 4, 3)])
    sched = simulate(inst, make_policy("mc-sf"))
    xs, ys = memory_polyline(sched.memory)
    assert xs and all(sched.memory.at(int(x)) == y for x, y in zip(xs, ys))
    assert max(ys) == sched.peak_memory
    path = _write(tmp_path, {"M": 12, "requests": [{"arrival": a, "prompt": s, "output": o}
                                                   for a, s, o in [(0, 2, 3), (0, 2, 6), (1, 3, 2)]]})
    png = tmp_path / "s.png"
    result = runner.invoke(app, ["simulate", str(path), "--plot", str(png)])
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    timed = tmp_path / "timed.json"
    save_timed_instance(TimedInstance(M=200, requests=tuple(
        TimedRequest(f"r{i}", 0.1 * i, 10 + i, 1 + i % 6) for i in range(25))), timed)
    svg = tmp_path / "t.svg"
    assert runner.invoke(app, ["simulate", str(timed), "--plot", str(svg), "--json"]).exit_code == 0
    assert b"<svg" in svg.read_bytes()[:400]
    assert "give a .png" in _one_line_error(runner.invoke(app, ["simulate", str(path), "--plot",
                                                                str(tmp_path / "x.txt")]))


def test_check_calls_a_schedule_of_the_wrong_kind_bad_input(tmp_path: Path) -> None:
    """Issue 27: ``check`` called a continuous-time schedule on a discrete instance "infeasible" (exit 1)."""
    inst = _write(tmp_path, T5)
    timed = _write(tmp_path, {"clock": "seconds", "starts": {"r0": 0}, "batch_start": [0.0],
                              "batch_duration": [0.1]}, "timed_schedule.json")
    assert "continuous-time schedule" in _one_line_error(runner.invoke(app, ["check", str(inst), str(timed)]))


def test_a_trace_suite_without_its_data_is_one_line_before_any_task(tmp_path: Path, monkeypatch) -> None:
    """Issue 27: a data folder without traces failed 50 tasks, then the report step raised."""
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("LLMOPT_DATA", str(tmp_path / "data"))
    out = tmp_path / "run"
    result = runner.invoke(app, ["bench", "run", "jaillet-table1", "--out", str(out), "--executor", "inline",
                                 "--no-progress"])
    err = _one_line_error(result)
    assert "LLMOPT_DATA=" in err and "has no traces/ folder" in err
    assert not (out / "trials.jsonl").exists()


def test_a_schedule_with_stalls_round_trips_through_simulate_json_and_check(tmp_path: Path) -> None:
    """``simulate --json`` writes the stalls of a policy whose clearing costs time and ``check`` reads them
    back: accepted as written, refused once the stalls are dropped (the gap becomes unexplained)."""
    from llmopt.model.timed_instance import TimedInstance, TimedRequest, save_timed_instance

    path = tmp_path / "three.json"
    save_timed_instance(TimedInstance(10, tuple(TimedRequest(r, 0.0, 2, 3) for r in "ABC")), path)
    spec = "alpha-protection:alpha=0,beta=0.5,seed=17,pass_cost=every-pass"
    res = runner.invoke(app, ["simulate", str(path), "--policy", spec, "--cost-model", "constant", "--json"])
    assert res.exit_code == 0, res.output
    sched = json.loads(res.stdout)
    assert sched["stalls"] == {"1": 2}
    good = _write(tmp_path, sched, "good.json")
    assert runner.invoke(app, ["check", str(path), str(good), "--cost-model", "constant"]).exit_code == 0
    bad = _write(tmp_path, {k: v for k, v in sched.items() if k != "stalls"}, "bad.json")
    refused = runner.invoke(app, ["check", str(path), str(bad), "--cost-model", "constant"])
    assert refused.exit_code == 1 and "continues running requests" in refused.output


def test_bench_run_seeds_option_is_checked_and_reaches_the_suite(tmp_path: Path) -> None:
    """``--seeds N`` runs seeds 0…N−1 of every entry (here 1 of the quick suite's 4, stored in suite.json)."""
    bad = runner.invoke(app, ["bench", "run", "quick", "--seeds", "0", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "--seeds must be >= 1" in _one_line_error(bad)
    out = tmp_path / "one"
    res = runner.invoke(app, ["bench", "run", "quick", "--seeds", "1", "--out", str(out), "--executor", "inline",
                              "--no-progress", "--time-limit", "1"])
    assert res.exit_code == 0, res.output
    stored = json.loads((out / "suite.json").read_text())["suite"]
    assert [w["seeds"] for w in stored["workloads"]] == [[0], [0]]
    assert len((out / "trials.jsonl").read_text().splitlines()) == 2
