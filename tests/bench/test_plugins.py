"""Third-party stages end to end: a tiny package (tests/plugin_pkg) is installed into a temporary folder
and reaches llmopt only through its entry points — a formulation (J0 App. B.1 style, with
running-status variables), a bound, a policy, a workload and a suite. They must run in
``llmopt solve``, ``llmopt simulate`` and ``llmopt bench run`` with no edit to llmopt, and the
plug-in formulation must give the same OPT as J (1)–(4)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from llmopt.model.instance import save_instance

PLUGIN = Path(__file__).resolve().parents[1] / "plugin_pkg"
ENTRY_POINTS = """[llmopt.bounds]
uniform-lambda = llmopt_test_plugin.bound:uniform_lambda_bound

[llmopt.formulations]
j0-running-status = llmopt_test_plugin.formulation:RunningStatusIP

[llmopt.policies]
longest-first = llmopt_test_plugin.policy:LongestFirst

[llmopt.suites]
plugin-suite = llmopt_test_plugin.suite:SUITE

[llmopt.workloads]
plugin-tiny = llmopt_test_plugin.workload:tiny
"""


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Install the plug-in into a fresh folder and return an environment that sees it.

    ``pip install --target`` builds it like any package (this needs setuptools from the index for
    the isolated build); where pip cannot build offline, the same installed layout — the package
    and its ``.dist-info`` with ``entry_points.txt`` — is written directly.
    """
    target = tmp_path_factory.mktemp("site")
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
         "--target", str(target), str(PLUGIN)],
        capture_output=True, text=True, timeout=300,
    )
    if pip.returncode != 0 or not (target / "llmopt_test_plugin").is_dir():
        shutil.copytree(PLUGIN / "llmopt_test_plugin", target / "llmopt_test_plugin", dirs_exist_ok=True)
        info = target / "llmopt_test_plugin-0.0.1.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: llmopt-test-plugin\nVersion: 0.0.1\n")
        (info / "entry_points.txt").write_text(ENTRY_POINTS)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(target), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _llmopt(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from llmopt.cli.main import app; app()", *args],
                          capture_output=True, text=True, env=env, timeout=timeout)


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc.stdout


def test_the_registry_table_names_each_registry_and_its_group() -> None:
    """``load_plugins`` reads groups from the table without importing the registries: a wrong
    group there would silently skip a plug-in. Breakage caught: a group typed ``llmopt.bound``."""
    from llmopt.bench.plugins import REGISTRY_TABLE, registries

    regs = registries()
    assert set(regs) == set(REGISTRY_TABLE)
    for kind, reg in regs.items():
        assert (reg.kind, reg.group) == (kind, REGISTRY_TABLE[kind].group)


def test_the_offline_fallback_declares_the_plugin_package_s_own_entry_points() -> None:
    """Without an index the fixture writes ``entry_points.txt`` itself: it must declare exactly what
    the plug-in's ``pyproject.toml`` declares, in groups llmopt reads. Breakage caught: a group
    renamed with its module (``[llmopt.opt.bounds]``: the fallback would silently load no bound)."""
    import configparser
    import tomllib

    from llmopt.bench.plugins import REGISTRY_TABLE

    fallback = configparser.ConfigParser()
    fallback.optionxform = str  # type: ignore[assignment,method-assign]  # keep names as written
    fallback.read_string(ENTRY_POINTS)
    declared = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]["entry-points"]
    assert {g: dict(fallback[g]) for g in fallback.sections()} == declared
    assert set(declared) <= {k.group for k in REGISTRY_TABLE.values()}


def test_plugin_is_not_visible_without_installing_it() -> None:
    from llmopt.formulations import FORMULATIONS

    assert "j0-running-status" not in FORMULATIONS  # nothing leaks into this process


@pytest.mark.slow
def test_every_plugin_stage_is_registered_and_conforms(plugin_env) -> None:
    listing = _ok(_llmopt(plugin_env, "stages"))
    for name in ("j0-running-status", "uniform-lambda", "longest-first", "plugin-tiny", "plugin-suite"):
        assert name in listing
    code = (
        "import json; from llmopt.bench.plugins import conformance as c, load_plugins; "
        "load_plugins(); print(json.dumps({k: f(n) for k, f, n in ["
        "('formulation', c.check_formulation, 'j0-running-status'), ('bound', c.check_bound, 'uniform-lambda'), "
        "('policy', c.check_policy, 'longest-first'), ('workload', c.check_workload, 'plugin-tiny'), "
        "('suite', c.check_suite, 'plugin-suite')]}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=plugin_env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {k: [] for k in ("formulation", "bound", "policy", "workload", "suite")}


@pytest.mark.slow
def test_plugin_formulation_and_bound_run_in_solve_with_the_same_opt(plugin_env, tmp_path: Path) -> None:
    sys.path.insert(0, str(PLUGIN))
    try:
        from llmopt_test_plugin.workload import tiny
    finally:
        sys.path.remove(str(PLUGIN))
    checked = 0
    for seed in range(3):
        inst = tiny(seed)
        path = tmp_path / f"tiny{seed}.json"
        save_instance(inst, path)
        plain = json.loads(_ok(_llmopt(plugin_env, "solve", str(path), "--json", "-q")))
        plug = json.loads(_ok(_llmopt(plugin_env, "solve", str(path), "--json", "-q", "--formulation",
                                      "j0-running-status", "--bound", "uniform-lambda", "--bound", "lp")))
        assert plain["status"] == plug["status"] == "optimal"
        assert plug["opt"] == plain["opt"]
        if plug["model"]:  # (no model when no request waits)
            assert plug["model"]["formulation"] == "j0-running-status"
            checked += 1
        uniform = next(b for b in plug["bounds"] if b["name"] == "uniform-lambda")
        assert uniform["certificate"] == "uniform-lambda-checked" and uniform["value"] <= plug["opt"] + 1e-9
    assert checked >= 2


@pytest.mark.slow
def test_plugin_policy_runs_in_simulate(plugin_env, tmp_path: Path) -> None:
    path = tmp_path / "t5.json"
    path.write_text(json.dumps({"M": 5, "requests": [{"arrival": 0, "prompt": 1, "output": o} for o in (1, 1, 3, 3)]}))
    out = json.loads(_ok(_llmopt(plugin_env, "simulate", str(path), "--policy", "longest-first", "--json")))
    assert out["verified"] is True and out["policy"] == "longest-first"
    assert out["starts"]["r2"] == 0  # the longest requests go first


@pytest.mark.slow
def test_plugin_suite_runs_in_bench_with_the_plugin_stages(plugin_env, tmp_path: Path) -> None:
    out = tmp_path / "plugin-run"
    _ok(_llmopt(plugin_env, "bench", "run", "plugin-suite", "--out", str(out), "--workers", "2", "--no-progress"))
    records = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all(r["error"] is None for r in records), records
    for r in records:
        assert r["formulation"] == "j0-running-status" and r["reference"] == "longest-first"
        assert r["verified_longest-first"] is True and r["tel"] == r["tel_longest-first"]
        assert r["bound_uniform-lambda"] is not None and r["bound_uniform-lambda"] <= r["incumbent"] + 1e-9
        assert r["bound_lp"] is not None and r["hindsight_errors"] == []
    # The same suite with the built-in formulation gives the same OPT per seed.
    suite = json.loads((out / "suite.json").read_text())["suite"]
    suite.update(name="plugin-suite-builtin", formulation="hindsight-ip")
    suite_file = tmp_path / "builtin.json"
    suite_file.write_text(json.dumps(suite))
    out2 = tmp_path / "builtin-run"
    _ok(_llmopt(plugin_env, "bench", "run", "--suite-file", str(suite_file), "--out", str(out2), "--workers", "1",
                "--no-progress"))
    builtin = {r["seed"]: r for r in map(json.loads, (out2 / "trials.jsonl").read_text().splitlines())}
    for r in records:
        assert r["opt"] is not None and r["opt"] == builtin[r["seed"]]["opt"]
