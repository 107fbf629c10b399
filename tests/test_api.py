"""The public API (``import llmopt``), the start-up discipline of the CLI, and the module paths that committed
results name.

Breakages tried by hand, each caught here:

* ``llmopt.simulate`` sending a TimedInstance to the discrete engine (it raises on float arrivals
  there) or ignoring ``cost_model`` → the continuous-time equality test fails;
* ``llmopt.check`` checking a timed run against a different cost model than the run's → the
  constant-cost-model test reports violations;
* ``llmopt.cli.main`` importing ``llmopt.bench.suites`` through ``llmopt.opt.hindsight`` again (SciPy at
  start-up) → the heavy-modules test fails;
* an import hook installed by ``import llmopt``, or a committed ``suite.json`` naming a report by a
  path that no longer imports → the two path tests fail.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
from helpers import exhaustive_opt, random_tiny_instance

import llmopt
from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import simulate as simulate_discrete
from llmopt.model.result import SolveStatus
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import MCSF, make_policy_spec

HEAVY = ("scipy", "pandas", "matplotlib", "highspy", "ortools", "pulp")


def _loaded(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "; import sys, json; "
                          "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"],
                         check=True, capture_output=True, text=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_llmopt_loads_nothing_heavy():
    assert _loaded("import llmopt") & {"numpy", *HEAVY} == set()


def test_the_cli_entry_point_loads_no_solver_scipy_pandas_or_plotting():
    assert _loaded("import llmopt.cli.main") & set(HEAVY) == set()


def test_cli_start_up_with_no_plug_ins_imports_no_registry_module_nor_numpy():
    """What every command pays before its work: the CLI module, the plug-in scan (no plug-in is
    installed here, so no registry's module is imported) and ``--help``. Breakage caught: importing
    every registry in ``load_plugins`` (pulls formulations → NumPy); ``SolveResult`` importing NumPy
    at module level; ``solvers/__init__`` importing ``solvers.base`` for ``Capability``."""
    from llmopt.bench.plugins import REGISTRY_TABLE

    code = ("import llmopt.cli.main; from llmopt.bench.plugins import load_plugins; "
            "assert all(v == [] for v in load_plugins().values())")
    out = subprocess.run([sys.executable, "-c", code + "; import sys, json; print(json.dumps(sorted(sys.modules)))"],
                         check=True, capture_output=True, text=True).stdout
    modules = set(json.loads(out.splitlines()[-1]))
    assert "numpy" not in modules
    heavy_registries = {k.module for k in REGISTRY_TABLE.values()} - {"llmopt.bench.kinds", "llmopt.solvers"}
    assert modules & heavy_registries == set()


def test_a_discrete_simulate_command_loads_neither_numpy_nor_pydantic(tmp_path):
    """The command line's hot path (issue 21: a 10,000-request ``simulate`` within 2× of its work):
    the schedule checker is NumPy-free and typer is pinned below 0.26, which would pass every
    option through pydantic (+0.1 s a command, ``results/perf/cli-startup``). Breakage caught: NumPy
    back in ``llmopt.verify.checker``; a typer upgrade past the pin."""
    from llmopt.model.instance import Instance, save_instance

    path = tmp_path / "inst.json"
    save_instance(Instance.from_tuples(10, [(0, 2, 3), (1, 2, 6), (1, 3, 2)]), path)
    code = ("import sys, json; from llmopt.cli.main import app\n"
            f"try: app(['simulate', {str(path)!r}, '--policy', 'mc-sf', '--json'])\n"
            "except SystemExit as e: assert e.code in (0, None), e.code\n"
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr)")
    err = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stderr
    modules = {m.split(".")[0] for m in json.loads(err.splitlines()[-1])}
    assert "llmopt" in modules and modules & {"numpy", "pydantic"} == set()


def test_api_names_resolve_and_are_documented():
    for name in llmopt.__all__:
        obj = getattr(llmopt, name)
        assert obj.__doc__, name
    with pytest.raises(AttributeError):
        llmopt.no_such_name  # noqa: B018


def test_simulate_and_check_discrete_equal_the_engine_and_checker():
    for seed in range(10):
        inst = random_tiny_instance(random.Random(seed), n_range=(3, 8), M_range=(6, 14), max_arrival=4)
        run = llmopt.simulate(inst, "mc-sf")
        direct = simulate_discrete(inst, MCSF())
        assert run.starts == direct.starts and run.tel == direct.tel
        report = llmopt.check(inst, run)
        assert report.ok and report.tel == run.tel


def _timed() -> TimedInstance:
    rng = random.Random(3)
    reqs, t = [], 0.0
    for i in range(40):
        t += rng.expovariate(5.0)
        reqs.append(TimedRequest(f"r{i}", t, rng.randint(1, 60), rng.randint(1, 80)))
    return TimedInstance(M=400, requests=tuple(reqs))


def test_simulate_timed_uses_the_continuous_engine_and_the_named_cost_model():
    inst = _timed()
    for name in ("llama2-70b-a100-tp2", "constant"):
        run = llmopt.simulate(inst, "mc-sf", cost_model=name)
        direct = simulate_continuous(inst, make_policy_spec("mc-sf"), make_cost_model(name))
        assert run.latencies == direct.latencies and run.cost_model == direct.cost_model
        assert llmopt.check(inst, run).ok
    default = llmopt.simulate(inst, "mc-sf")
    assert default.cost_model == make_cost_model().name


def test_check_uses_the_runs_cost_model_unless_told():
    inst = _timed()
    run = llmopt.simulate(inst, "mc-sf", cost_model="constant")
    assert llmopt.check(inst, run).ok
    other = llmopt.check(inst, run, cost_model="llama2-70b-a100-tp2")
    assert not other.ok and other.violations


def test_simulate_refuses_a_cost_model_for_a_discrete_instance():
    inst = random_tiny_instance(random.Random(0))
    with pytest.raises(ValueError, match="TimedInstance"):
        llmopt.simulate(inst, "mc-sf", cost_model="constant")
    with pytest.raises(TypeError, match="discrete Instance"):
        llmopt.solve(_timed())  # type: ignore[arg-type]


def test_solve_brackets_and_proves_the_exhaustive_opt():
    for seed in range(4):
        inst = random_tiny_instance(random.Random(100 + seed), n_range=(3, 6), M_range=(6, 12), max_arrival=3)
        ub = simulate_discrete(inst, MCSF()).tel
        opt, _ = exhaustive_opt(inst, ub)
        res = llmopt.solve(inst, time_limit=60)
        assert res.status is SolveStatus.OPTIMAL and res.opt == opt
        assert res.bound <= opt <= res.incumbent


def test_make_instance_and_registries():
    inst = llmopt.make_instance("jaillet-am1", 0)
    assert inst.name == "jaillet-am1/seed=0"
    regs = llmopt.registries()
    assert "mc-sf" in regs["policy"] and "quick" in regs["suite"] and "hindsight" in regs["task kind"]


def test_run_suite_writes_the_report(tmp_path):
    from llmopt.bench.suites import Suite, WorkloadSpec

    suite = Suite(name="api-tiny", description="two tiny AM1 instances",
                  workloads=(WorkloadSpec("jaillet-am1", (0, 1), {"n_range": (4, 4), "M_range": (10, 10)}),),
                  ip_time_limit=30.0)
    df = llmopt.run_suite(suite, tmp_path / "out", workers=1, progress=False, executor="inline")
    assert list(df["trials"]) == [2] and (tmp_path / "out" / "summary.md").exists()


def test_import_llmopt_installs_no_import_hook():
    """``import llmopt`` leaves ``sys.meta_path`` as it found it (no global side effect), and the module
    paths of release 0.1 (``llmopt.simulator``, ``llmopt.checker``) are gone, not silently redirected."""
    code = ("import sys; before = list(sys.meta_path); import llmopt; import llmopt.api; "
            "assert sys.meta_path == before, sys.meta_path; import importlib\n"
            "for old in ('llmopt.simulator', 'llmopt.checker', 'llmopt.wang_report'):\n"
            "    try: importlib.import_module(old)\n"
            "    except ModuleNotFoundError: pass\n"
            "    else: raise SystemExit(old + ' still imports')\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    from llmopt.model import CanonicalModel  # the canonical model's old home, now the model wing
    from llmopt.model.canonical import CanonicalModel as Canonical

    assert CanonicalModel is Canonical


def test_every_committed_suite_json_names_its_report_by_its_current_path():
    """Each ``results/**/suite.json`` with an ``extra_report`` names an importable callable, and the same
    path as the registered suite of that name (a report that moves must rewrite the committed files)."""
    import importlib
    from pathlib import Path

    from llmopt.bench.suites import SUITES, get_suite

    results = Path(__file__).resolve().parents[1] / "results"
    checked = 0
    for path in sorted(results.rglob("suite.json")):
        meta = json.loads(path.read_text(encoding="utf-8"))
        target = meta["suite"].get("extra_report", "")
        if not target:
            continue
        module, _, attr = target.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), path
        name = meta["suite"]["name"]
        if name in SUITES:
            assert get_suite(name).extra_report == target, path
        checked += 1
    assert checked >= 6


def test_simulate_with_workers_uses_the_cluster_engine_and_check_verifies_it():
    """``llmopt.simulate(..., workers=K, router=R)`` is the multi-worker engine; K = 1 equals one worker."""
    inst = llmopt.TimedInstance(5, tuple(llmopt.TimedRequest(f"r{i}", 0.0, 1, 4) for i in range(6)))
    one = llmopt.simulate(inst, "mc-sf", cost_model="constant")
    run = llmopt.simulate(inst, "mc-sf", cost_model="constant", workers=1)
    assert run.K == 1 and run.latencies == one.latencies
    three = llmopt.simulate(inst, "mc-sf", cost_model="constant", workers=3, router="jsq")
    assert three.K == 3 and three.mean_latency == 6.0  # two per worker, 4 s each: 4 and 8
    rep = llmopt.check(inst, three)
    assert rep.ok and rep.mean_latency == 6.0
