"""The Python API answers the inputs the command line answers, the same way (issue: the API as safe
as the CLI).

Each case runs one input through ``llmopt ...`` (in-process, :class:`typer.testing.CliRunner`) and
through :mod:`llmopt.api`, and compares what matters: where a run is written, how many tasks failed,
the warning for millisecond timestamps read as seconds, and the checker's verdict on a schedule.

Breakages tried by hand, each caught here:

* ``api.run_suite`` defaulting to ``results/<suite>`` again → the default-folder test fails;
* ``refuse_committed_results`` accepting the committed folder → the refusal test fails;
* a raising policy recorded as a warning only (the ``rec["error"]`` line in the task kinds dropped)
  → the failing-policy tests (hindsight and trace kinds) see exit 0 and ``errors 0``; an eviction
  loop counted as a failure as well → the loop test fails;
* ``api.load_trace`` dropping the warning, or not applying ``time_unit`` → the trace test fails;
* ``api.check`` reading a mapping by other rules than ``llmopt check`` (``max_violations=1``,
  ``evictions`` or ``stalls`` ignored) or not taking the result of ``solve`` → the check cases disagree;
* ``BadInput.text`` ignoring the caller's spelling → every command's bad-input case fails; the CLI's
  spelling table losing ``use_timestamps → --timestamps`` → the trace cases fail;
* ``llmopt solve`` passing ``relax=False`` to the API, ``llmopt capacity`` dropping ``--target``,
  ``llmopt trace`` dropping ``--step-seconds``, ``llmopt generate`` dropping ``--param`` → the
  same-numbers tests fail; ``llmopt check`` naming the mapping ``schedule`` instead of its file →
  the cost-model and continuous-time check cases fail;
* ``llmopt.solve`` skipping a plug-in formulation's conformance check, or the CLI not echoing the
  API's warnings → the plug-in warning test fails; ``plan_capacity`` accepting a discrete instance →
  the discrete-instance test fails.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from bench_helpers import tiny_suite
from typer.testing import CliRunner

import llmopt
from llmopt.api import BadInput
from llmopt.bench.store import HarnessError
from llmopt.cli.main import app
from llmopt.model.instance import Instance, save_instance
from llmopt.model.schedule_file import ScheduleFileError

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]


def _suite_file(tmp_path: Path, suite: Any) -> Path:
    path = tmp_path / f"{suite.name}.json"
    path.write_text(json.dumps(suite.to_dict()))
    return path


def _bench(*args: str) -> Any:
    return runner.invoke(app, ["bench", "run", *args, "--no-progress", "--executor", "inline", "--workers", "1"])


# --- where a run goes -----------------------------------------------------------------------------


def test_both_default_to_runs_suite_in_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    suite = tiny_suite(name="parity-default", seeds=(0,))
    spec = _suite_file(tmp_path, suite)
    cli_dir, api_dir = tmp_path / "cli", tmp_path / "api"
    cli_dir.mkdir()
    api_dir.mkdir()
    monkeypatch.chdir(cli_dir)
    result = _bench("--suite-file", str(spec))
    assert result.exit_code == 0, result.output
    monkeypatch.chdir(api_dir)
    df = llmopt.run_suite(suite, workers=1, progress=False, executor="inline")
    for where in (cli_dir, api_dir):
        assert (where / "runs" / "parity-default" / "trials.jsonl").is_file()
        assert not (where / "results").exists()
    assert df.attrs["out"] == Path("runs") / "parity-default"
    assert df.attrs["errors"] == 0 and df.attrs["missing"] == 0 and df.attrs["message"] == ""


def test_the_committed_results_folder_is_refused_without_allow_results(tmp_path: Path, monkeypatch) -> None:
    from llmopt.bench import harness

    # The checkout's own folder, by the guard alone (a broken guard must not let a test write there).
    assert harness.committed_results_dir() == REPO / "results"
    monkeypatch.chdir(REPO)
    for target in (REPO / "results" / "jaillet" / "table1", Path("results/jaillet/table1"), Path("results")):
        with pytest.raises(HarnessError, match="committed results folder.*allow_results=True"):
            harness.refuse_committed_results(target)
        harness.refuse_committed_results(target, allow=True)
    harness.refuse_committed_results(Path("runs/jaillet-table1"))
    harness.refuse_committed_results(REPO / "results-copy" / "x")  # a name that only starts alike
    monkeypatch.chdir(tmp_path)
    # Through the API, with a stand-in results/: refused (nothing written), then rebuilt on purpose.
    fake = tmp_path / "results"
    fake.mkdir()
    monkeypatch.setattr(harness, "committed_results_dir", lambda: fake)
    suite = tiny_suite(name="parity-rebuild", seeds=(0,))
    with pytest.raises(HarnessError):
        llmopt.run_suite(suite, fake / "parity-rebuild", progress=False, executor="inline")
    assert not (fake / "parity-rebuild").exists()
    df = llmopt.run_suite(suite, fake / "parity-rebuild", progress=False, executor="inline", allow_results=True)
    assert list(df["trials"]) == [1, 1] and (fake / "parity-rebuild" / "summary.md").is_file()


# --- failures fail --------------------------------------------------------------------------------


class AlwaysRaises:
    """A step policy that raises at its first decision, in every task."""

    name = "parity-always-raises"

    def decide(self, view: Any) -> Any:
        raise RuntimeError("broken on purpose")


@pytest.fixture()
def raising_policy():
    from llmopt.policies import POLICIES

    POLICIES.register("parity-always-raises", AlwaysRaises, doc="raises in every task (tests)")
    yield "parity-always-raises"
    POLICIES.unregister("parity-always-raises")


def test_a_policy_that_raises_in_every_task_fails_the_run(tmp_path: Path, raising_policy: str) -> None:
    suite = tiny_suite(name="parity-raises", seeds=(0, 1), policies=("mc-sf", raising_policy))
    n = suite.n_tasks
    out = tmp_path / "cli"
    result = _bench("--suite-file", str(_suite_file(tmp_path, suite)), "--out", str(out))
    assert result.exit_code == 1, result.output
    assert f"{n} of {n} tasks failed" in result.stderr and "broken on purpose" in result.stderr
    errors_row = next(line for line in result.stdout.splitlines() if line.strip("│ ").startswith("errors"))
    assert [c.strip() for c in errors_row.strip("│ ").split("│")][1:] == ["2", "2"]  # per workload
    summary = (out / "summary.md").read_text()
    assert "## Errors" in summary and summary.count("policy parity-always-raises raised RuntimeError") == n
    df = llmopt.run_suite(suite, tmp_path / "api", progress=False, executor="inline")
    assert df.attrs["errors"] == n == int(df["errors"].sum())
    assert "broken on purpose" in df.attrs["message"] and len(df.attrs["failed"]) == n
    # the policy that worked is still recorded in every task (nothing computed is lost)
    records = [json.loads(line) for line in (tmp_path / "api" / "trials.jsonl").read_text().splitlines()]
    assert all(r["verified_mc-sf"] is True and r["tel_mc-sf"] is not None for r in records)


class Loops:
    """A step policy whose run ends in the engine's loop guard (an outcome, not a crash)."""

    name = "parity-loops"

    def decide(self, view: Any) -> Any:
        from llmopt.engine.discrete import EvictionLoopError

        raise EvictionLoopError("stuck on purpose", t=1, evictions=10, completed=0, recomputed_tokens=5)


def test_an_eviction_loop_is_a_warning_not_a_failed_task(tmp_path: Path) -> None:
    from llmopt.policies import POLICIES

    POLICIES.register("parity-loops", Loops)
    try:
        suite = tiny_suite(name="parity-loops", seeds=(0,), policies=("mc-sf", "parity-loops"))
        df = llmopt.run_suite(suite, tmp_path / "api", progress=False, executor="inline")
    finally:
        POLICIES.unregister("parity-loops")
    assert df.attrs["errors"] == 0
    records = [json.loads(line) for line in (tmp_path / "api" / "trials.jsonl").read_text().splitlines()]
    assert all("stuck on purpose" in " ".join(r["warnings"]) for r in records)


def timed_tiny(seed: int) -> Any:
    """Three requests in continuous time (a workload for the trace-kind test, no data files)."""
    return llmopt.TimedInstance(M=400, name=f"timed-tiny/seed={seed}", requests=tuple(
        llmopt.TimedRequest(f"r{i}", 0.01 * (i + seed), 10 + i, 3) for i in range(3)))


def test_a_raising_policy_fails_a_trace_task_too(tmp_path: Path, raising_policy: str) -> None:
    from llmopt.bench.suites import Suite, WorkloadSpec

    suite = Suite(name="parity-trace-raises", description="test", kind="trace", policies=("mc-sf", raising_policy),
                  workloads=(WorkloadSpec("test_api_cli_parity:timed_tiny", (0, 1), {}, "tiny"),))
    result = _bench("--suite-file", str(_suite_file(tmp_path, suite)), "--out", str(tmp_path / "cli"))
    assert result.exit_code == 1 and "2 of 2 tasks failed" in result.stderr, result.output
    df = llmopt.run_suite(suite, tmp_path / "api", progress=False, executor="inline")
    assert df.attrs["errors"] == 2
    assert "## Errors" in (tmp_path / "api" / "summary.md").read_text()
    ok = df[df["policy"] == "mc-sf"].iloc[0]
    assert ok["verified"] == 2 and ok["latency_mean"] is not None  # the working policy's results are kept


# --- traces: the time unit ------------------------------------------------------------------------


def test_millisecond_timestamps_warn_alike_and_time_unit_reads_them_alike(tmp_path: Path) -> None:
    src = tmp_path / "v.csv"
    src.write_text("arrived_at,num_prefill_tokens,num_decode_tokens\n"
                   + "".join(f"{1_700_000_000_000 + 20 * i},{i + 1},2\n" for i in range(40)))
    base = ["trace", str(src), "--n", "10", "--timestamps", "--seed", "0"]
    plain = runner.invoke(app, [*base, "-o", str(tmp_path / "plain.json")])
    assert plain.exit_code == 0, plain.output
    with pytest.warns(UserWarning) as caught:
        trace = llmopt.load_trace(src)
    (cli_warning,) = [line for line in plain.stderr.splitlines() if line.startswith("warning: ")]
    assert [str(w.message) for w in caught] == [cli_warning.removeprefix("warning: ")]
    assert llmopt.sample(trace, 10, 0, rate=None, use_timestamps=True) == \
        llmopt.load_any_instance(tmp_path / "plain.json")

    ms = runner.invoke(app, [*base, "--time-unit", "ms", "-o", str(tmp_path / "ms.json")])
    assert ms.exit_code == 0 and "warning" not in ms.stderr, ms.output
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning with a unit
        timed = llmopt.sample(llmopt.load_trace(src, time_unit="ms"), 10, 0, rate=None, use_timestamps=True)
    assert timed == llmopt.load_any_instance(tmp_path / "ms.json")
    assert max(r.arrival for r in timed.requests) == pytest.approx(9 * 0.020)

    bad = runner.invoke(app, [*base, "--time-unit", "h", "-o", str(tmp_path / "h.json")])
    assert bad.exit_code == 2
    with pytest.raises(ValueError) as err:
        llmopt.load_trace(src, time_unit="h")
    assert "must be one of s, ms, us, got 'h'" in str(err.value) and "s, ms, us, got 'h'" in bad.stderr


# --- check ----------------------------------------------------------------------------------------

T5 = Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)])  # OPT 12

CHECK_CASES = {
    "feasible": {"starts": {"r0": 0, "r1": 0, "r2": 1, "r3": 2}},
    "ignores tel": {"tel": 1, "starts": {"r0": 0, "r1": 0, "r2": 1, "r3": 2}},
    "over memory": {"starts": {"r0": 0, "r1": 0, "r2": 0, "r3": 0}},
    "before arrival, missing request": {"starts": {"r0": -1, "r1": 0}},
    "with an eviction": {"starts": {"r0": 0, "r1": 0, "r2": 3, "r3": 4},
                         "evictions": [{"t": 2, "id": "r2", "tokens_lost": 1}]},
    "eviction over memory": {"starts": {"r0": 0, "r1": 0, "r2": 3, "r3": 1},
                             "evictions": [{"t": 2, "id": "r2", "tokens_lost": 2}]},
    "float start": {"starts": {"r0": 0.0, "r1": 0, "r2": 1, "r3": 2}},
    "no starts": {"schedule": {}},
    "starts not an object": {"starts": [0, 1]},
    "fractional start": {"starts": {"r0": 0.5}},
    "evictions not a list": {"starts": {"r0": 0}, "evictions": {"t": 1}},
    "continuous-time schedule": {"clock": "seconds", "starts": {"r0": 0}},
}


def _cli_check(tmp_path: Path, instance: Any, schedule: Any) -> Any:
    inst, sched = tmp_path / "inst.json", tmp_path / "sched.json"
    save_instance(instance, inst)
    sched.write_text(json.dumps(schedule))
    return runner.invoke(app, ["check", str(inst), str(sched), "--json"]), sched


@pytest.mark.parametrize("case", list(CHECK_CASES))
def test_check_answers_a_schedule_mapping_as_the_cli_does(tmp_path: Path, case: str) -> None:
    result, path = _cli_check(tmp_path, T5, CHECK_CASES[case])
    try:
        report = llmopt.check(T5, CHECK_CASES[case])
    except ScheduleFileError as exc:
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == f"error: {path}: {str(exc).removeprefix('schedule: ')}"
        return
    cli = json.loads(result.stdout)
    assert result.exit_code == (0 if report.ok else 1)
    assert (cli["ok"], cli["tel"], cli["violations"]) == (report.ok, report.tel, list(report.violations))


def test_check_answers_a_solve_result_and_a_schedule_as_the_cli_does(tmp_path: Path) -> None:
    res = llmopt.solve(T5, time_limit=None)
    report = llmopt.check(T5, res)
    assert report.ok and report.tel == res.incumbent == 12
    inst, sched = tmp_path / "t5.json", tmp_path / "s.json"
    save_instance(T5, inst)
    solved = runner.invoke(app, ["solve", str(inst), "--write-schedule", str(sched), "-q", "--json"])
    assert solved.exit_code == 0, solved.output
    cli = json.loads(runner.invoke(app, ["check", str(inst), str(sched), "--json"]).stdout)
    assert (cli["ok"], cli["tel"]) == (True, report.tel)
    run = llmopt.simulate(T5, "mc-sf")
    mine = llmopt.check(T5, run)
    sim = tmp_path / "sim.json"
    sim.write_text(runner.invoke(app, ["simulate", str(inst), "--policy", "mc-sf", "--json"]).stdout)
    cli = json.loads(runner.invoke(app, ["check", str(inst), str(sim), "--json"]).stdout)
    assert (cli["ok"], cli["tel"]) == (mine.ok, mine.tel) == (True, run.tel)
    from llmopt.model.result import SolveResult, SolveStatus

    with pytest.raises(TypeError, match="SolveResult"):
        llmopt.check(T5, SolveResult(SolveStatus.OPTIMAL, 12.0, 12.0, 0.0, 0.1))


def test_check_answers_a_continuous_time_mapping_as_the_cli_does(tmp_path: Path) -> None:
    timed = llmopt.TimedInstance(M=400, requests=tuple(llmopt.TimedRequest(f"r{i}", a, s, o) for i, (a, s, o) in
                                                       enumerate([(0.0, 20, 5), (0.01, 30, 8), (0.02, 10, 3)])))
    from llmopt.model.timed_instance import save_timed_instance

    inst = tmp_path / "timed.json"
    save_timed_instance(timed, inst)
    written = runner.invoke(app, ["simulate", str(inst), "--policy", "mc-sf", "--json"])
    assert written.exit_code == 0, written.output
    data = json.loads(written.stdout)
    cases = {
        "as written": data,
        "a batch too short": {**data, "batch_duration": [d / 2 for d in data["batch_duration"]]},
        "an invented stall": {**data, "stalls": {"1": 1}},
        "no batch_start": {k: v for k, v in data.items() if k != "batch_start"},
        "stalls not integers": {**data, "stalls": {"1": "x"}},
    }
    for label, mapping in cases.items():
        sched = tmp_path / "s.json"
        sched.write_text(json.dumps(mapping))
        result = runner.invoke(app, ["check", str(inst), str(sched), "--json"])
        try:
            rep = llmopt.check(timed, mapping)
        except ScheduleFileError as exc:
            assert result.exit_code == 2, (label, result.output)
            assert result.stderr.strip() == f"error: {sched}: {str(exc).removeprefix('schedule: ')}"
            continue
        cli = json.loads(result.stdout)
        assert (cli["ok"], cli["mean_latency"], cli["violations"]) == (rep.ok, rep.mean_latency,
                                                                       list(rep.violations)), label
        assert rep.ok == (label == "as written")


# --- one surface for every command: the same numbers, the same message for bad input -----------------
#
# Each command is a thin parse → ``llmopt.api`` call → print. For bad input the API raises ``BadInput``
# naming its parameter (``time_limit``) and the command prints the same message with the parameter
# spelled as its option (``--time-limit``): the core of the message is one text.


def _same_error(result: Any, exc: BadInput, cli_text: str, api_text: str) -> None:
    """The command exited with the API's status and printed the API's message, each spelled its own way
    (both spellings pinned, so a drifting translation is caught too)."""
    assert result.exit_code == exc.code, result.output
    assert result.stderr.strip() == f"error: {cli_text}", result.output
    assert str(exc) == api_text


def _api_error(call: Any) -> BadInput:
    with pytest.raises(BadInput) as err:
        call()
    return err.value


def test_the_api_package_offers_import_llmopt_s_names_first() -> None:
    from llmopt._version import PUBLIC_NAMES

    assert llmopt.api.__all__[:len(PUBLIC_NAMES)] == list(PUBLIC_NAMES)
    assert all(getattr(llmopt.api, name).__doc__ for name in llmopt.api.__all__)


def test_solve_gives_the_same_numbers(tmp_path: Path) -> None:
    inst = tmp_path / "t5.json"
    save_instance(T5, inst)
    result = runner.invoke(app, ["solve", str(inst), "--json", "-q", "--bound", "energy", "--seed", "1"])
    assert result.exit_code == 0, result.output
    cli = json.loads(result.stdout)
    res = llmopt.solve(T5, bounds=["energy"], seed=1)
    assert (cli["status"], cli["objective"], cli["opt"], cli["bound"], cli["starts"]) == \
        (res.status.value, res.incumbent, res.opt, res.bound, dict(res.starts))
    assert (cli["status"], cli["opt"]) == ("optimal", 12)
    relax = ["solve", str(inst), "--json", "-q", "--relax", "--bound", "energy"]
    relaxed = json.loads(runner.invoke(app, relax).stdout)
    low = llmopt.solve(T5, bounds=["energy"], relax=True)
    assert (relaxed["bound"], relaxed["incumbent"], [b["value"] for b in relaxed["bounds"]]) == \
        (low.bound, low.incumbent, [b.value for b in low.bounds])
    assert low.model_stats == {}  # no IP was built


SOLVE_ERRORS = [
    (["--time-limit", "0"], {"time_limit": 0.0}, "--time-limit must be > 0, got 0.0",
     "time_limit must be > 0, got 0.0"),
    (["--threads", "0"], {"threads": 0}, "--threads must be >= 1, got 0", "threads must be >= 1, got 0"),
    (["--solver", "nope"], {"solver": "nope"}, "unknown solver 'nope'; known: ", "unknown solver 'nope'; known: "),
    (["--formulation", "nope"], {"formulation": "nope"}, "--formulation: unknown formulation 'nope'; known: ",
     "formulation: unknown formulation 'nope'; known: "),
    (["--bound", "nope"], {"bounds": ["nope"]}, "--bound: unknown bound 'nope'; known: ",
     "bounds: unknown bound 'nope'; known: "),
    (["--upper-bound", "nope"], {"upper_bounds": ["nope"]}, "--upper-bound: unknown upper-bound stage 'nope'; known: ",
     "upper_bounds: unknown upper-bound stage 'nope'; known: "),
    (["--windows", "nope"], {"windows": "nope"}, "--windows: unknown windows 'nope'; known: ",
     "windows: unknown windows 'nope'; known: "),
]


@pytest.mark.parametrize(("flags", "kwargs", "cli_start", "api_start"), SOLVE_ERRORS,
                         ids=[c[0][0] for c in SOLVE_ERRORS])
def test_solve_refuses_a_bad_argument_alike(tmp_path: Path, flags: list[str], kwargs: dict[str, Any], cli_start: str,
                                            api_start: str) -> None:
    inst = tmp_path / "t5.json"
    save_instance(T5, inst)
    result = runner.invoke(app, ["solve", str(inst), "-q", *flags])
    exc = _api_error(lambda: llmopt.solve(T5, **kwargs))
    assert result.exit_code == exc.code == 2, result.output
    assert str(exc).startswith(api_start) and result.stderr.strip().startswith(f"error: {cli_start}")
    names = {p: f"--{p.replace('_', '-')}" for p in exc.params} | {"bounds": "--bound", "upper_bounds": "--upper-bound"}
    _same_error(result, exc, exc.text(names), str(exc))


def test_solve_refuses_what_the_formulation_cannot_model_alike(tmp_path: Path) -> None:
    staggered = Instance.from_tuples(5, [(0, 1, 1), (1, 1, 2)])  # W's model needs one common arrival
    inst = tmp_path / "staggered.json"
    save_instance(staggered, inst)
    result = runner.invoke(app, ["solve", str(inst), "-q", "--formulation", "wang-ip"])
    exc = _api_error(lambda: llmopt.solve(staggered, formulation="wang-ip"))
    _same_error(result, exc, exc.text({"formulation": "--formulation", "instance": str(inst)}), str(exc))
    assert f"--formulation wang-ip: cannot model {inst}: " in result.stderr
    assert str(exc).startswith("formulation wang-ip: cannot model instance: ")


def test_a_plugin_formulation_failing_its_check_warns_alike(tmp_path: Path, monkeypatch) -> None:
    """An exact-declared plug-in formulation that makes every request but the first wait a step (its optimum on
    T5 is 13, OPT is 12): the API warns with the command's words and neither claims OPT 13."""
    from llmopt.formulations import FORMULATIONS
    from llmopt.formulations.hindsight_ip import HindsightIP
    from llmopt.model.windows import StartWindows

    class WaitsAStep(HindsightIP):
        def build(self, instance: Any, windows: Any) -> Any:
            lo = (windows.lo[0], *(a + 1 for a in windows.lo[1:]))
            return super().build(instance, StartWindows(lo, windows.hi, windows.horizon, windows.reason))

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    inst = tmp_path / "t5.json"
    save_instance(T5, inst)
    FORMULATIONS.register("parity-waits-a-step", WaitsAStep)
    try:
        result = runner.invoke(app, ["solve", str(inst), "--json", "-q", "--formulation", "parity-waits-a-step",
                                     "--upper-bound", "fcfs", "--bound", "sum-of-outputs", "--search-evals", "0"])
        with pytest.warns(UserWarning) as caught:
            res = llmopt.solve(T5, formulation="parity-waits-a-step", upper_bounds=["fcfs"], bounds=["sum-of-outputs"],
                               search_evals=0)
    finally:
        FORMULATIONS.unregister("parity-waits-a-step")
    (cli_warning,) = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert [str(w.message) for w in caught] == [cli_warning.removeprefix("warning: ")]
    assert "fails its conformance check" in cli_warning
    cli = json.loads(result.stdout)
    assert (cli["opt"], cli["objective"]) == (res.opt, res.incumbent) == (None, 13)


# --- generate -----------------------------------------------------------------------------------------


def test_generate_writes_the_api_s_instance(tmp_path: Path) -> None:
    out = tmp_path / "am1.json"
    result = runner.invoke(app, ["generate", "jaillet-am1", "--seed", "3", "--param", "n_range=[6,6]", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert llmopt.load_instance(out) == llmopt.make_instance("jaillet-am1", 3, n_range=[6, 6])


GENERATE_ERRORS = [
    (["nope", "--seed", "0"], ("nope", 0, {}), "WORKLOAD: unknown workload 'nope'; known: ",
     "workload: unknown workload 'nope'; known: "),
    (["jaillet-am1", "--seed", "-1"], ("jaillet-am1", -1, {}), "--seed must be >= 0, got -1",
     "seed must be >= 0, got -1"),
    (["jaillet-am1", "--seed", "0", "--param", "n_range=[5,2]"], ("jaillet-am1", 0, {"n_range": [5, 2]}),
     "workload 'jaillet-am1' with {'n_range': [5, 2]}: ValueError: parameter 'n_range' must be [low, high]",
     "workload 'jaillet-am1' with {'n_range': [5, 2]}: ValueError: parameter 'n_range' must be [low, high]"),
    (["jaillet-am1", "--seed", "0", "--param", "no_such=1"], ("jaillet-am1", 0, {"no_such": 1}),
     "--param: workload 'jaillet-am1'", "params: workload 'jaillet-am1'"),
]


@pytest.mark.parametrize(("args", "call", "cli_start", "api_start"), GENERATE_ERRORS,
                         ids=["unknown", "seed", "range", "unknown-param"])
def test_generate_refuses_a_bad_argument_alike(tmp_path: Path, args: list[str], call: tuple[str, int, dict[str, Any]],
                                               cli_start: str, api_start: str) -> None:
    out = tmp_path / "x.json"
    result = runner.invoke(app, ["generate", *args, "-o", str(out)])
    workload, seed, params = call
    exc = _api_error(lambda: llmopt.make_instance(workload, seed, **params))
    assert str(exc).startswith(api_start) and result.stderr.strip().startswith(f"error: {cli_start}"), result.output
    _same_error(result, exc, exc.text({"workload": "WORKLOAD", "seed": "--seed", "params": "--param"}), str(exc))
    assert not out.exists()


# --- trace --------------------------------------------------------------------------------------------


def _vidur(tmp_path: Path, rows: int = 40) -> Path:
    src = tmp_path / "v.csv"
    src.write_text("arrived_at,num_prefill_tokens,num_decode_tokens\n"
                   + "".join(f"{0.02 * i:.2f},{i + 1},{2 + i % 5}\n" for i in range(rows)))
    return src


@pytest.mark.parametrize("flags", [["--rate", "20"], ["--timestamps"], ["--rate", "5", "--step-seconds", "0.1"]])
def test_trace_writes_the_api_s_sample(tmp_path: Path, flags: list[str]) -> None:
    src = _vidur(tmp_path)
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["trace", str(src), "--n", "12", "--seed", "4", *flags, "-o", str(out)])
    assert result.exit_code == 0, result.output
    kw: dict[str, Any] = {"use_timestamps": "--timestamps" in flags}
    if "--rate" in flags:
        kw["rate"] = float(flags[flags.index("--rate") + 1])
    if "--step-seconds" in flags:
        kw["step_seconds"] = float(flags[flags.index("--step-seconds") + 1])
    drawn = llmopt.api.sample_trace(src, 12, 4, **kw)
    assert llmopt.load_any_instance(out) == (drawn.discrete if "--step-seconds" in flags else drawn.instance)
    assert f"{drawn.trace.rows_read:,} rows read" in result.stdout


TRACE_ERRORS = [
    (["--n", "12", "--seed", "0", "--rate", "2", "--timestamps"], {"n": 12, "seed": 0, "rate": 2.0,
                                                                    "use_timestamps": True},
     "give exactly one of --rate λ (Poisson arrivals) and --timestamps (the trace's own arrival times)",
     "give exactly one of rate λ (Poisson arrivals) and use_timestamps (the trace's own arrival times)"),
    (["--n", "0", "--seed", "0", "--rate", "2"], {"n": 0, "seed": 0, "rate": 2.0}, "--n must be >= 1, got 0",
     "n must be >= 1, got 0"),
    (["--n", "99", "--seed", "0", "--rate", "2"], {"n": 99, "seed": 0, "rate": 2.0},
     "{src}: --n 99 is more than the 40 rows of the trace", "{src}: n 99 is more than the 40 rows of the trace"),
    (["--n", "3", "--seed", "0", "--rate", "2", "--on-bad-row", "skip"], {"n": 3, "seed": 0, "rate": 2.0,
                                                                          "on_bad_row": "skip"},
     "--on-bad-row must be one of error, clamp, drop, got 'skip'", "on_bad_row must be one of error, clamp, drop, "
                                                                   "got 'skip'"),
    (["--n", "3", "--seed", "0", "--rate", "2", "--time-unit", "ms"], {"n": 3, "seed": 0, "rate": 2.0,
                                                                       "time_unit": "ms"},
     "--time-unit applies to the trace's own timestamps (--timestamps), not to --rate",
     "time_unit applies to the trace's own timestamps (use_timestamps), not to rate"),
]


@pytest.mark.parametrize(("flags", "kwargs", "cli_text", "api_text"), TRACE_ERRORS,
                         ids=["rate-and-timestamps", "n", "too-many", "on-bad-row", "time-unit"])
def test_trace_refuses_a_bad_argument_alike(tmp_path: Path, flags: list[str], kwargs: dict[str, Any], cli_text: str,
                                            api_text: str) -> None:
    src = _vidur(tmp_path)
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["trace", str(src), *flags, "-o", str(out)])
    n, seed = kwargs.pop("n"), kwargs.pop("seed")
    exc = _api_error(lambda: llmopt.api.sample_trace(src, n, seed, **kwargs))
    _same_error(result, exc, cli_text.format(src=src), api_text.format(src=src))
    assert not out.exists()


# --- capacity -----------------------------------------------------------------------------------------


def _timed_file(tmp_path: Path, n: int = 8) -> tuple[Any, Path]:
    from llmopt.model.timed_instance import save_timed_instance

    timed = llmopt.TimedInstance(M=60, name="cap", requests=tuple(
        llmopt.TimedRequest(f"r{i}", 0.5 * i, 10 + 3 * (i % 4), 4 + i % 3) for i in range(n)))
    path = tmp_path / "cap.json"
    save_timed_instance(timed, path)
    return timed, path


def test_capacity_gives_the_same_rows(tmp_path: Path) -> None:
    timed, path = _timed_file(tmp_path)
    args = ["capacity", str(path), "-p", "mc-sf", "-p", "fcfs", "-r", "round-robin", "-t", "mean:6", "-t", "p99:9",
            "--cost-model", "constant", "--k-max", "8", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    cli = json.loads(result.stdout)["rows"]
    plan = llmopt.api.plan_capacity(timed, policies=["mc-sf", "fcfs"], routers=["round-robin"],
                                    targets=["mean:6", "p99:9"], cost_model="constant", k_max=8)
    assert cli == json.loads(json.dumps(plan.rows)) and len(cli) == 4
    assert result.exit_code == (0 if plan.met else 1)
    assert any(row["workers"] not in (None, 1) for row in cli)  # the search did more than try K = 1


CAPACITY_ERRORS = [
    (["-t", "mean:0"], {"targets": ["mean:0"]}, "latency target: the limit must be"),
    (["-p", "nope"], {"policies": ["nope"]}, "--policy: unknown policy 'nope'; known: "),
    (["-p", "alpha-protection:alpha=abc"], {"policies": ["alpha-protection:alpha=abc"]},
     "--policy 'alpha-protection:alpha=abc': "),
    (["-r", "nope"], {"routers": ["nope"]}, "--router: unknown router 'nope'; known: "),
    (["--k-max", "0"], {"k_max": 0}, "--k-max must be >= 1, got 0"),
    (["--cost-model", "nope"], {"cost_model": "nope"}, "--cost-model: unknown cost model 'nope'; known: "),
]


@pytest.mark.parametrize(("flags", "kwargs", "cli_start"), CAPACITY_ERRORS,
                         ids=["target", "policy", "policy-param", "router", "k-max", "cost-model"])
def test_capacity_refuses_a_bad_argument_alike(tmp_path: Path, flags: list[str], kwargs: dict[str, Any],
                                               cli_start: str) -> None:
    timed, path = _timed_file(tmp_path)
    result = runner.invoke(app, ["capacity", str(path), *flags])
    exc = _api_error(lambda: llmopt.api.plan_capacity(timed, **kwargs))
    assert result.stderr.strip().startswith(f"error: {cli_start}"), result.output
    names = {"policies": "--policy", "routers": "--router", "targets": "--target", "k_max": "--k-max",
             "cost_model": "--cost-model"}
    _same_error(result, exc, exc.text(names), str(exc))


def test_capacity_refuses_a_discrete_or_an_empty_instance_alike(tmp_path: Path) -> None:
    disc = tmp_path / "t5.json"
    save_instance(T5, disc)
    result = runner.invoke(app, ["capacity", str(disc)])
    exc = _api_error(lambda: llmopt.api.plan_capacity(T5))  # type: ignore[arg-type]
    _same_error(result, exc, f"{disc}: a discrete instance; capacity planning needs seconds (a continuous-time "
                             "instance or a trace file)",
                "instance: a discrete instance; capacity planning needs seconds (a continuous-time instance or a "
                "trace file)")
    assert _api_error(lambda: llmopt.api.capacity_instance(disc)).text() == result.stderr.strip()[len("error: "):]


# --- check: the continuous-time cost model ------------------------------------------------------------


def test_check_refuses_an_unknown_or_a_missing_cost_model_alike(tmp_path: Path) -> None:
    timed, path = _timed_file(tmp_path, 3)
    written = runner.invoke(app, ["simulate", str(path), "--policy", "mc-sf", "--json", "--cost-model", "constant"])
    data = json.loads(written.stdout)
    sched = tmp_path / "s.json"
    sched.write_text(json.dumps(data))
    result = runner.invoke(app, ["check", str(path), str(sched), "--cost-model", "nope"])
    exc = _api_error(lambda: llmopt.check(timed, data, cost_model="nope"))
    _same_error(result, exc, exc.text({"cost_model": "--cost-model"}), str(exc))
    assert str(exc).startswith("cost_model: unknown cost model 'nope'; known: ")
    del data["cost_model"]
    sched.write_text(json.dumps(data))
    result = runner.invoke(app, ["check", str(path), str(sched)])
    exc = _api_error(lambda: llmopt.check(timed, data))
    assert isinstance(exc, ScheduleFileError)  # also what a schedule-file error is
    _same_error(result, exc, f"{sched}: no field 'cost_model'; pass --cost-model",
                "schedule: no field 'cost_model'; pass cost_model")


# --- what is registered: llmopt policies | solvers -----------------------------------------------------


def test_policies_lists_what_the_api_lists(raising_policy: str) -> None:
    from llmopt.policies import POLICIES

    result = runner.invoke(app, ["policies", "--json"])
    assert result.exit_code == 0, result.output
    listed = llmopt.api.list_policies()
    assert json.loads(result.stdout)["policies"] == [{"name": p.name, "description": p.description} for p in listed]
    assert [p.name for p in listed] == POLICIES.names() and raising_policy in POLICIES.names()
    assert next(p for p in listed if p.name == raising_policy).description == "raises in every task (tests)"


def test_solvers_lists_what_the_api_lists_a_broken_plug_in_included() -> None:
    from llmopt.solvers import SOLVERS
    from llmopt.solvers.highs import HighsSolver

    class Absent(HighsSolver):
        @classmethod
        def available(cls):
            return False, "absent-backend is not installed"

    SOLVERS.register("parity-absent", Absent)
    SOLVERS.register("parity-broken", "parity_no_such_module:Solver")
    try:
        result = runner.invoke(app, ["solvers", "--json"])
        table = runner.invoke(app, ["solvers"])
        listed = {s.name: s for s in llmopt.api.list_solvers()}
    finally:
        SOLVERS.unregister("parity-absent")
        SOLVERS.unregister("parity-broken")
    assert result.exit_code == 0 and table.exit_code == 0, result.output + table.output
    cli = {s["name"]: s for s in json.loads(result.stdout)["solvers"]}
    assert cli == {n: {"name": n, "available": s.available, "version": s.version,
                       "capabilities": list(s.capabilities), "note": s.note} for n, s in listed.items()}
    assert listed["highs"].available and "lp_duals" in listed["highs"].capabilities
    absent, broken = listed["parity-absent"], listed["parity-broken"]
    assert (absent.available, absent.note) == (False, "absent-backend is not installed")
    assert absent.capabilities == listed["highs"].capabilities  # the adapter is read, only its backend is absent
    assert (broken.available, broken.version, broken.capabilities) == (False, None, ())
    assert "parity_no_such_module" in broken.note
    assert "parity-broken" in table.stdout and "Traceback" not in table.output


def test_the_listing_commands_print_what_the_api_returns(monkeypatch) -> None:
    """The commands call :mod:`llmopt.api` rather than reading the registries themselves."""
    from llmopt.api.listing import PolicyListing, SolverListing

    monkeypatch.setattr(llmopt.api, "list_policies", lambda: [PolicyListing("only-from-the-api", "d")])
    monkeypatch.setattr(llmopt.api, "list_solvers",
                        lambda: [SolverListing("api-solver", False, None, ("mip",), "why not")])
    assert json.loads(runner.invoke(app, ["policies", "--json"]).stdout) == {
        "policies": [{"name": "only-from-the-api", "description": "d"}]}
    assert json.loads(runner.invoke(app, ["solvers", "--json"]).stdout) == {"solvers": [
        {"name": "api-solver", "available": False, "version": None, "capabilities": ["mip"], "note": "why not"}]}
    table = runner.invoke(app, ["solvers"]).stdout
    assert "api-solver" in table and "why not" in table and "highs" not in table


def test_listing_policies_through_the_api_imports_no_numpy() -> None:
    """``llmopt policies`` stays light: the API module and the policy registry import no NumPy."""
    import subprocess
    import sys

    code = ("import sys, llmopt.api; names = [p.name for p in llmopt.api.list_policies()]; "
            "assert 'mc-sf' in names, names; "
            "print(sorted(m for m in ('numpy', 'scipy', 'pandas') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
