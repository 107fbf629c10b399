"""Plug-ins load on first registry use, in Python as in the CLI, and a broken one is one clear line.

Each test installs a tiny distribution (a ``.dist-info`` folder with ``entry_points.txt``, no build)
into a temporary folder and runs Python or the CLI in a subprocess that sees it, so nothing leaks
into this process. The entry points name built-in classes (or a module that does not exist).

Breakages tried by hand, each caught here:

* ``Registry.get`` not reading the entry-point group (only ``load_plugins`` does) → the Python
  test says the plug-in policy is unknown;
* the group read at import (``_read_plugins`` called from ``register``) → the laziness test fails;
* ``--no-plugins`` no longer turning the reading off → the ``--no-plugins`` test lists the plug-in;
* the missing-module message without the group, or ``PluginError`` re-raised as a bare
  ``ModuleNotFoundError`` → both missing-module tests fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ENTRY_POINTS = """[llmopt.policies]
plug-fcfs = llmopt.policies.base:FCFSLookahead
ghost = llmopt_no_such_module.policy:Ghost
fcfs = llmopt.policies.base:FCFSLookahead
"""


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``sys.path`` holds a distribution declaring three policy entry points: a
    working one, one naming a missing module, and one clashing with the built-in ``fcfs``."""
    site = tmp_path / "site"
    info = site / "llmopt_plug_probe-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: llmopt-plug-probe\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(site), out.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return out


def _python(env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def _llmopt(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from llmopt.cli.main import app; app()", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def _t5(tmp_path: Path) -> Path:
    path = tmp_path / "t5.json"
    path.write_text(json.dumps({"M": 5, "requests": [{"arrival": 0, "prompt": 1, "output": o} for o in (1, 1, 3, 3)]}))
    return path


def test_a_plugin_policy_resolves_in_python_with_no_call_to_make(env) -> None:
    """The README's advice, ``check_policy(name)`` for a plug-in, works without ``load_plugins()``;
    and ``import llmopt`` (or the registry's module) reads no entry point: the first lookup does."""
    code = (
        "import warnings, json\n"
        "import llmopt, llmopt.policies\n"
        "from llmopt.policies import POLICIES\n"
        "read_at_import = POLICIES._plugins_read\n"
        "from llmopt.bench.plugins.conformance import check_policy\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    problems = check_policy('plug-fcfs')\n"
        "print(json.dumps({'read_at_import': read_at_import, 'problems': problems,\n"
        "                  'listed': 'plug-fcfs' in POLICIES.names(), 'builtin': POLICIES.get('fcfs').__name__,\n"
        "                  'warnings': [str(x.message) for x in w]}))\n"
    )
    proc = _python(env, code)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["read_at_import"] is False
    assert out["problems"] == [] and out["listed"] is True
    assert out["builtin"] == "FCFSLookahead"  # the clash is a warning, not a broken built-in
    assert any("'fcfs'" in w and "clash" in w for w in out["warnings"]), out["warnings"]


def test_the_cli_sees_the_plugin_and_no_plugins_hides_it(env, tmp_path: Path) -> None:
    listing = _llmopt(env, "policies")
    assert listing.returncode == 0 and "plug-fcfs" in listing.stdout, listing.stderr
    hidden = _llmopt(env, "--no-plugins", "policies")
    assert hidden.returncode == 0 and "plug-fcfs" not in hidden.stdout, hidden.stderr
    run = _llmopt(env, "simulate", str(_t5(tmp_path)), "--policy", "plug-fcfs", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["verified"] is True


def test_an_entry_point_naming_a_missing_module_is_one_line_in_the_cli(env, tmp_path: Path) -> None:
    proc = _llmopt(env, "simulate", str(_t5(tmp_path)), "--policy", "ghost")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr
    (error,) = [line for line in lines if not line.startswith("warning: plug-ins:")]  # (the fcfs clash warns)
    assert error.startswith("error: ")
    for part in ("'ghost'", "llmopt.policies", "llmopt_no_such_module"):
        assert part in error, error


def test_an_entry_point_naming_a_missing_module_is_a_plugin_error_in_python(env) -> None:
    code = (
        "from llmopt.model.registry import PluginError\n"
        "from llmopt.policies import POLICIES\n"
        "try:\n"
        "    POLICIES.get('ghost')\n"
        "except PluginError as exc:\n"
        "    print(isinstance(exc, ImportError), exc)\n"
    )
    proc = _python(env, code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("True "), proc.stdout
    for part in ("'ghost'", "'llmopt.policies'", "llmopt_no_such_module"):
        assert part in proc.stdout
