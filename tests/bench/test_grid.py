"""Grid syntax in a suite's ``policies``: ``"p:key={a,b}"`` is one policy entry per value (cartesian over
several keys), expanded once when the suite is built or loaded, and run end to end from a suite file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import llmopt
from llmopt.bench.grid import expand_grid, expand_grids
from llmopt.bench.suites import Suite
from llmopt.cli.main import app

runner = CliRunner()


def test_expansion_is_cartesian_in_order() -> None:
    assert expand_grid("mc-sf") == ["mc-sf"]
    assert expand_grid("alpha-protection:alpha=0.2,beta=0.1") == ["alpha-protection:alpha=0.2,beta=0.1"]
    assert expand_grid("alpha-protection:alpha={0.1,0.2}") == ["alpha-protection:alpha=0.1",
                                                               "alpha-protection:alpha=0.2"]
    assert expand_grid("p:a={1,2},b=x,c={u, v ,w}") == [
        "p:a=1,b=x,c=u", "p:a=1,b=x,c=v", "p:a=1,b=x,c=w", "p:a=2,b=x,c=u", "p:a=2,b=x,c=v", "p:a=2,b=x,c=w"]
    assert expand_grid("p:a={7}") == ["p:a=7"]
    assert expand_grids(["mc-sf", "p:a={1,2}", "fcfs"]) == ["mc-sf", "p:a=1", "p:a=2", "fcfs"]


@pytest.mark.parametrize(("spec", "needle"), [
    ("p:a={1,2", "'{' without '}'"),
    ("p:a=1,2}", "'}' without '{'"),
    ("p:a={1,{2,3}}", "nested braces"),
    ("p:a={}", "an empty value"),
    ("p:a={1,,2}", "an empty value"),
    ("p:a={1,1}", "listed twice"),
    ("p:a=x{1,2}", "must be all of {v1,v2,...}"),
    ("p:{a,b}=1", "is not key=value"),
    ("p{1,2}", "braces must hold a parameter's values"),
    ("{p,q}:a=1", "braces must hold a parameter's values"),
])
def test_a_bad_grid_is_a_clear_error(spec: str, needle: str) -> None:
    with pytest.raises(ValueError, match="policy spec") as err:
        expand_grid(spec)
    assert needle in str(err.value) and repr(spec) in str(err.value)


ONE: Any = (("jaillet-am1", (0,), {}),)  # Suite takes (workload, seeds, params) entries


def test_a_suite_expands_once_and_round_trips() -> None:
    small: Any = (("jaillet-am1", (0,), {"n_range": (4, 4)}),)
    suite = Suite(name="g", description="", workloads=small,
                  policies=("mc-sf", "a-random:seed={1,2}"), reference="mc-sf")
    assert suite.policies == ("mc-sf", "a-random:seed=1", "a-random:seed=2")
    assert Suite.from_dict(json.loads(json.dumps(suite.to_dict()))) == suite
    with pytest.raises(ValueError, match=r"suite 'g': policy 'a-random:seed=\{1,2': '\{' without '\}'"):
        Suite(name="g", description="", workloads=ONE,
              policies=("mc-sf", "a-random:seed={1,2"))
    with pytest.raises(ValueError, match="duplicate name"):  # the grid repeats a listed policy
        Suite(name="g", description="", workloads=ONE,
              policies=("a-random:seed=1", "a-random:seed={1,2}"), reference="a-random:seed=1")


def test_a_suite_file_with_a_grid_runs_end_to_end(tmp_path: Path) -> None:
    params = {"n_range": [5, 5], "M_range": [8, 8]}
    f = tmp_path / "suite.json"
    f.write_text(json.dumps({"name": "grid-e2e", "description": "", "reference": "mc-sf", "bounds": ["lp"],
                             "workloads": [{"workload": "jaillet-am1", "seeds": [0], "params": params}],
                             "policies": ["mc-sf", "a-random:seed={1,2,3}"], "ip_time_limit": 10,
                             "search_evals": 5}))
    out = tmp_path / "out"
    result = runner.invoke(app, ["bench", "run", "--suite-file", str(f), "--out", str(out), "--executor", "inline",
                                 "--no-progress"])
    assert result.exit_code == 0, result.output
    expanded = ["mc-sf", "a-random:seed=1", "a-random:seed=2", "a-random:seed=3"]
    assert json.loads((out / "suite.json").read_text())["suite"]["policies"] == expanded
    rec = json.loads((out / "trials.jsonl").read_text().splitlines()[0])
    inst = llmopt.make_instance("jaillet-am1", 0, n_range=(5, 5), M_range=(8, 8))
    for p in expanded:
        assert rec[f"tel_{p}"] == llmopt.simulate(inst, p).tel, p
    assert len({rec[f"tel_{p}"] for p in expanded[1:]}) > 1  # the seeds differ: three policies, not one
    bad = tmp_path / "bad.json"
    bad.write_text(f.read_text().replace("seed={1,2,3}", "seed={1,2,3"))
    result = runner.invoke(app, ["bench", "run", "--suite-file", str(bad), "--out", str(tmp_path / "b")])
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and str(bad) in lines[0] and "without '}'" in lines[0]
    assert not (tmp_path / "b").exists()
