"""``llmopt check`` and ``llmopt.check`` read what ``llmopt simulate --workers K --json`` writes: the
multi-worker run goes to the independent cluster checker in both clocks, the command and the API give the
same verdict, and a tampered run is refused naming its worker.

Breakages tried by hand: ``_check_cluster`` returning ``False`` always (the discrete K = 2 file is then read
as a single-worker schedule and refused with exit 2) → every test here fails; the API sending a mapping to
the single-worker reader → the API cases fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import llmopt
from llmopt.cli.main import app
from llmopt.model.instance import Instance, Request, save_instance
from llmopt.model.timed_instance import TimedInstance, TimedRequest, save_timed_instance

runner = CliRunner()

DISCRETE = Instance(6, tuple(Request(f"r{i}", i % 3, 1 + i % 2, 1 + (3 * i) % 4) for i in range(8)))
TIMED = TimedInstance(60, tuple(TimedRequest(f"q{i}", 0.4 * i, 3 + i % 5, 1 + (2 * i) % 5) for i in range(12)))


def _run(tmp_path: Path, instance: Instance | TimedInstance, extra: list[str]) -> tuple[Path, Path]:
    inst_path = tmp_path / "inst.json"
    if isinstance(instance, TimedInstance):
        save_timed_instance(instance, inst_path)
    else:
        save_instance(instance, inst_path)
    result = runner.invoke(app, ["simulate", str(inst_path), "--workers", "2", "--router", "jsq", "--json", *extra])
    assert result.exit_code == 0, result.output
    sched = tmp_path / "run.json"
    sched.write_text(result.stdout, encoding="utf-8")
    return inst_path, sched


@pytest.mark.parametrize("timed", [False, True])
def test_a_two_worker_run_checks_ok_in_the_command_and_the_api(tmp_path: Path, timed: bool) -> None:
    instance = TIMED if timed else DISCRETE
    extra = ["--cost-model", "constant"] if timed else []
    inst_path, sched = _run(tmp_path, instance, extra)
    result = runner.invoke(app, ["check", str(inst_path), str(sched), "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)
    assert verdict["ok"] and verdict["K"] == 2 and verdict["violations"] == []
    data = json.loads(sched.read_text(encoding="utf-8"))
    report = llmopt.check(instance, data)
    assert report.ok and report.K == 2
    assert verdict["tel"] == pytest.approx(report.tel)
    run = llmopt.simulate(instance, "mc-sf", workers=2, router="jsq", **({"cost_model": "constant"} if timed else {}))
    assert report.tel == pytest.approx(run.total_latency)


def test_a_tampered_two_worker_run_is_refused_naming_the_worker(tmp_path: Path) -> None:
    inst_path, sched = _run(tmp_path, DISCRETE, [])
    data = json.loads(sched.read_text(encoding="utf-8"))
    worker = next(w for w, ws in enumerate(data["workers"]) if ws["starts"])
    rid = max(data["workers"][worker]["starts"], key=lambda r: data["workers"][worker]["starts"][r])
    data["workers"][worker]["starts"][rid] = 0  # before its arrival, or over memory, or both
    arrival = next(r.arrival for r in DISCRETE.requests if r.id == rid)
    if arrival == 0:
        data["workers"][worker]["starts"][rid] = -1
    sched.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["check", str(inst_path), str(sched)])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("INFEASIBLE: ") and f"worker {worker}" in result.stdout
    assert not llmopt.check(DISCRETE, data).ok


def test_a_continuous_run_without_a_cost_model_is_one_line(tmp_path: Path) -> None:
    inst_path, sched = _run(tmp_path, TIMED, ["--cost-model", "constant"])
    data = json.loads(sched.read_text(encoding="utf-8"))
    data.pop("cost_model", None)
    sched.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["check", str(inst_path), str(sched)])
    assert result.exit_code == 2 and "cost_model" in result.output and "Traceback" not in result.output
    ok = runner.invoke(app, ["check", str(inst_path), str(sched), "--cost-model", "constant"])
    assert ok.exit_code == 0, ok.output


def test_check_verifies_the_limits_a_simulated_run_records(tmp_path: Path) -> None:
    """``simulate --max-num-seqs 2 --json`` records its limits; ``check`` verifies them from the file: the
    run passes, and the same starts claimed under ``max_num_seqs = 1`` are refused naming the limit."""
    inst = Instance(40, tuple(Request(f"r{i}", 0, 2, 3) for i in range(5)))
    inst_path = tmp_path / "inst.json"
    save_instance(inst, inst_path)
    result = runner.invoke(app, ["simulate", str(inst_path), "--policy", "fcfs", "--max-num-seqs", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["limits"]["max_num_seqs"] == 2
    sched = tmp_path / "run.json"
    sched.write_text(json.dumps(data), encoding="utf-8")
    ok = runner.invoke(app, ["check", str(inst_path), str(sched)])
    assert ok.exit_code == 0, ok.output
    data["limits"]["max_num_seqs"] = 1
    sched.write_text(json.dumps(data), encoding="utf-8")
    bad = runner.invoke(app, ["check", str(inst_path), str(sched)])
    assert bad.exit_code == 1 and "max_num_seqs = 1" in bad.stdout, bad.output
    assert not llmopt.check(inst, data).ok
