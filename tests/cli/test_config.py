"""``--config FILE.toml`` for ``simulate``, ``solve`` and ``capacity``: the file's options answer as the same
flags do, flags given on the command line override the file, and a bad file is one line naming the file
and the key, exit 2, before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from llmopt.cli.main import app
from llmopt.model.instance import Instance, Request, save_instance
from llmopt.model.timed_instance import TimedInstance, TimedRequest, save_timed_instance

runner = CliRunner()

T5 = Instance(5, tuple(Request(f"r{i}", 0, 1, o) for i, o in enumerate((1, 1, 3, 3))))


@pytest.fixture
def t5(tmp_path: Path) -> Path:
    path = tmp_path / "t5.json"
    save_instance(T5, path)
    return path


def _toml(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _ok(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def _one_line(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --config "), result.stderr
    assert result.stdout == "" and "Traceback" not in result.output
    return lines[0]


def test_simulate_config_equals_flags_and_flags_override(t5: Path, tmp_path: Path) -> None:
    cfg = _toml(tmp_path, 'policy = "fcfs"\nworkers = 2\nrouter = "jsq"\njson = true\n')
    from_file = json.loads(_ok(["simulate", str(t5), "--config", str(cfg)]))
    from_flags = json.loads(_ok(["simulate", str(t5), "--policy", "fcfs", "--workers", "2", "--router", "jsq",
                                 "--json"]))
    assert from_file == from_flags and from_file["policy"] == "fcfs" and from_file["K"] == 2
    overridden = json.loads(_ok(["simulate", str(t5), "--config", str(cfg), "--workers", "3", "-p", "mc-sf"]))
    assert overridden["K"] == 3 and overridden["policy"] == "mc-sf" and overridden["router"] == "jsq"


def test_config_sets_the_argument_and_paths_relative_to_its_folder(t5: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _toml(tmp_path, 'file = "t5.json"\nrequests = "rows.csv"\n"cost-model" = "constant"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    out = _ok(["simulate", "--config", str(cfg)])
    assert "TEL = 13" in out and (tmp_path / "rows.csv").is_file() and not (elsewhere / "rows.csv").exists()


def test_capacity_config_with_repeated_options(tmp_path: Path) -> None:
    inst = tmp_path / "inst.json"
    save_timed_instance(TimedInstance(5, tuple(TimedRequest(f"r{i}", 0.0, 1, 4) for i in range(12))), inst)
    cfg = _toml(tmp_path, f'trace = "{inst.name}"\ncost_model = "constant"\ntarget = ["mean:10", "ttft_p99:5"]\n'
                          'k-max = 12\njson = true\n')
    from_file = json.loads(_ok(["capacity", "--config", str(cfg)]))
    from_flags = json.loads(_ok(["capacity", str(inst), "--cost-model", "constant", "-t", "mean:10", "-t",
                                 "ttft_p99:5", "--k-max", "12", "--json"]))
    assert from_file == from_flags and [r["workers"] for r in from_file["rows"]] == [3, 6]
    result = runner.invoke(app, ["capacity", "--config", str(cfg), "--k-max", "4"])  # the flag wins
    assert result.exit_code == 1  # ttft_p99:5 is met at no K up to 4
    fewer = json.loads(result.stdout)
    assert [r["workers"] for r in fewer["rows"]] == [3, None] and fewer["rows"][1]["k_max"] == 4


def test_solve_config_equals_flags(t5: Path, tmp_path: Path) -> None:
    cfg = _toml(tmp_path, 'bound = ["energy"]\n"time-limit" = 30\nquiet = true\njson = true\n')
    from_file = json.loads(_ok(["solve", str(t5), "--config", str(cfg)]))
    from_flags = json.loads(_ok(["solve", str(t5), "--bound", "energy", "--time-limit", "30", "-q", "--json"]))
    for key in ("status", "objective", "bound", "starts"):
        assert from_file[key] == from_flags[key], key
    assert [(b["name"], b["value"]) for b in from_file["bounds"]] == [(b["name"], b["value"]) for b in
                                                                      from_flags["bounds"]]
    assert from_file["objective"] == 12 and from_file["bounds"][0]["name"] == "energy"
    result = runner.invoke(app, ["solve", str(t5), "--config", str(cfg), "--time-limit", "0"])
    assert result.exit_code == 2 and "--time-limit must be > 0" in result.stderr  # the flag overrides the file


@pytest.mark.parametrize(("command", "text", "needle"), [
    ("simulate", 'polcy = "fcfs"\n', "unknown key 'polcy'"),
    ("simulate", 'workers = "two"\n', "key 'workers': 'two' is not a valid integer"),
    ("simulate", 'policy = ["mc-sf", "fcfs"]\n', "key 'policy' takes one value, not a list"),
    ("simulate", "[simulate]\npolicy = 'fcfs'\n", "unknown key 'simulate'"),
    ("simulate", "policy = \n", "not valid TOML"),
    ("simulate", 'config = "other.toml"\n', "unknown key 'config'"),
    ("simulate", 'policy = "fcfs"\npolicy_ = 1\n', "unknown key 'policy_'"),
    ("simulate", 'cost-model = "constant"\ncost_model = "constant"\n', "sets 'cost_model' a second time"),
    ("solve", 'time_limit = "soon"\n', "key 'time_limit'"),
    ("capacity", 'latency-target = 5\nrouters = ["jsq"]\n', "unknown key 'routers'"),
])
def test_a_bad_config_is_one_line_naming_the_file_and_key(t5: Path, tmp_path: Path, command: str, text: str,
                                                          needle: str) -> None:
    cfg = _toml(tmp_path, text)
    line = _one_line([command, str(t5), "--config", str(cfg)])
    assert needle in line and str(cfg) in line


def test_a_missing_or_folder_config_is_one_line(t5: Path, tmp_path: Path) -> None:
    assert "no such file" in _one_line(["simulate", str(t5), "--config", str(tmp_path / "none.toml")])
    assert "is a folder" in _one_line(["simulate", str(t5), "--config", str(tmp_path)])
