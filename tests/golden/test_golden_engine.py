"""Golden numbers of the engine-level results folders (issue 22, item 2): ``results/jaillet/cost-model``,
``results/perf/continuous-speed``, ``results/perf/simulator-speed`` and ``results/perf/cli-startup``.

Each test recomputes a few published numbers of one committed results folder and compares them
with the values read from the committed file (integers, booleans and strings exactly, floats to
1e-9 relative or absolute), plus a few values hard-coded here where the folder's README / NOTES
quote them, so that a silent regeneration still shows in review. A failure means a change moved a
published number: if it is intended, regenerate the folder (its README / NOTES give the command)
and update the hard-coded values.

Three of these folders are speed benchmarks: their CPU and wall-clock times depend on the machine
and are never compared. What is golden-tested there is the deterministic side of each row — the
TEL, makespan, iterations, mean latency, loop-guard outcome — and, for ``cli_startup``, whose
only non-timing number is the list of heavy packages the CLI module imports (none), that list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from golden_support import RESULTS, ROOT, markdown_row, same
from helpers import needs_trace_data

COEFFICIENTS = ROOT / "llmopt" / "engine" / "data" / "llama2_70b_a100_tp2.json"


def _profiles() -> Path | None:
    """The staged GPU profiles (``shared/data/profiles``: ``LLMOPT_DATA`` or beside the repository)."""
    from llmopt.workloads.traces.data import data_dir

    candidates = [ROOT.parent / "shared" / "data" / "profiles"]
    try:
        candidates.insert(0, data_dir() / "profiles")
    except FileNotFoundError:
        pass
    mlp = "vidur/compute/a100/meta-llama/Llama-2-70b-hf/mlp.csv"
    return next((c for c in candidates if (c / mlp).is_file()), None)


def _assert_same_tree(where: str, committed: Any, recomputed: Any, path: str = "") -> None:
    """Nested dicts / lists equal leaf by leaf (:func:`same`); the message names every leaf that differs."""
    diffs: list[str] = []

    def walk(a: Any, b: Any, at: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                if k not in a or k not in b:
                    diffs.append(f"  {at}.{k}: only in the {'recomputed' if k in b else 'committed'} document")
                else:
                    walk(a[k], b[k], f"{at}.{k}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{at}[{i}]")
        elif not same(a, b):
            diffs.append(f"  {at}: committed {a!r}, recomputed {b!r}")

    walk(committed, recomputed, path)
    assert not diffs, f"{where}: recomputed numbers differ from the committed ones:\n" + "\n".join(diffs[:40])


# --------------------------------------------------------------------------- cost_model


def test_cost_model_typical_batches() -> None:
    """``results/jaillet/cost-model/README.md``, tables *Coefficients* and *Typical batches*: the committed
    coefficients (``llmopt/engine/data/llama2_70b_a100_tp2.json``, loaded as the engine loads them)
    against the README's cells (``base`` 0.056377, ``per_request`` 0.000323969, …), and the batch
    time of each typical batch against its *model ms* cell — decode of 100 requests at 150 context
    105.02 ms, one 40-token prompt 62.52 ms, the two together 115.73 ms, 200 decodes filling
    M = 16,492 167.15 ms, the arXiv-mean prompt 896.60 ms. These are the batch times every
    continuous-engine result (J Table 1, W Figure 8, C Figures 5–7) is built on: counting a prompt's
    first token twice moves the prefill rows. No profile data needed."""
    from llmopt.engine.cost_model import load_cost_model

    readme = RESULTS / "jaillet" / "cost-model" / "README.md"
    model = load_cost_model()
    for k, v in model.to_dict().items():
        if k != "name":
            assert markdown_row(readme, (f"`{k}`",))[1] == f"{v:.6g}", k
    # (prefill requests, prefill tokens, Σ s², decode requests, decode context), as the script lists them
    typical = {
        "decode, 100 requests at 150 context": (0, 0, 0, 100, 100 * 150),
        "decode, 1 request at 600 context": (0, 0, 0, 1, 600),
        "prefill, 1 request of 40 tokens": (1, 40, 1600, 0, 0),
        "prefill 1×40 + decode 100 at 150": (1, 40, 1600, 100, 100 * 150),
        "decode, 200 requests filling M = 16,492": (0, 0, 0, 200, 16_492),
        "prefill, 1 request of 2,588 tokens (arXiv mean)": (1, 2588, 2588**2, 0, 0),
    }
    ms = {}
    for what, args in typical.items():
        ms[what] = model.time(*args) * 1e3
        assert markdown_row(readme, (what,))[1] == f"{ms[what]:.2f}", what
    assert [round(v, 2) for v in ms.values()] == [105.02, 56.92, 62.52, 115.73, 167.15, 896.60]


def test_cost_model_refit_from_profiles() -> None:
    """``results/jaillet/cost-model/README.md`` and the coefficients it documents
    (``llmopt/engine/data/llama2_70b_a100_tp2.json``), refitted from the staged GPU profiles by
    the ``fit-cost-model`` study (closed-form least squares, knots by exhaustive search:
    deterministic): every fitted coefficient (``base`` 0.0563769626…, ``per_token`` 1.4528…e-4,
    knots 112 / 148, ``per_request`` 3.2397…e-4, …), every component fit and its error summary and
    the whole cross-check against splitwise (decode / prefill relative errors, fitted/roofline) to
    1e-9 against the JSON; and the whole README regenerated line by line (coefficient table, fit
    errors, the 38-row measured-vs-model table, typical batches), except the line with the fit's date
    and library versions. Skipped without the profiles (``shared/data/profiles``)."""
    data = _profiles()
    if data is None:
        pytest.skip("staged GPU profiles (shared/data/profiles, not in the repository) not found; set LLMOPT_DATA")
    from llmopt.engine.cost_model import LinearCostModel
    from llmopt.papers.jaillet.studies import fit_cost_model as script

    committed = json.loads(COEFFICIENTS.read_text(encoding="utf-8"))
    doc = script.fit(data)
    assert doc["provenance"]["files"] == committed["provenance"]["files"], \
        f"the profiles under {data} are not the files the committed model was fitted on (sha256 differ)"
    _assert_same_tree(str(COEFFICIENTS.relative_to(ROOT)), {k: committed[k] for k in ("model", "components",
                      "cross_check")}, {k: doc[k] for k in ("model", "components", "cross_check")})
    assert doc["model"]["per_request"] == pytest.approx(0.00032396881469105767, rel=1e-9)
    assert (doc["model"]["knot_1"], doc["model"]["knot_2"]) == (112.0, 148.0)

    model = LinearCostModel.from_dict(doc["model"])
    text = script.markdown(doc, model, script.load_splitwise(data)).splitlines()
    readme = (RESULTS / "jaillet" / "cost-model" / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(text) == len(readme)
    diffs = [f"  committed: {old}\n  recomputed: {new}" for old, new in zip(readme, text)
             if old != new and not old.startswith("(fitted on ")]
    assert not diffs, "results/jaillet/cost-model/README.md: regenerated lines differ:\n" + "\n".join(diffs[:10])


# --------------------------------------------------------------------------- continuous_speed


@needs_trace_data
def test_continuous_speed_side_numbers() -> None:
    """``results/perf/continuous-speed/results.json`` (``benchmarks/continuous_speed.py``; 10,000 LMSYS
    requests, seed 0, Llama2-70B cost model): at λ = 10 /s MC-SF's iterations 7,602 and mean
    latency 24.88 s and α = 0.1, β = 0.1's 8,104 and 51.02 s (checker-verified schedules); at
    λ = 50 /s α = 0.25's eviction loop, stopped by the guard after 1,091 iterations. (The λ = 50
    latencies of MC-SF and MC-Benchmark are the J ``jaillet-lmsys`` instance, golden-tested in
    ``test_golden_jaillet.py``.) CPU times and requests per CPU second are not golden-tested."""
    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.engine.discrete import EvictionLoopError
    from llmopt.papers.jaillet.suites import LMSYS_TRACE
    from llmopt.policies import make_policy_spec
    from llmopt.verify.timed import check_timed_schedule
    from llmopt.workloads.traces.data import trace_workload

    committed = json.loads((RESULTS / "perf" / "continuous-speed" / "results.json").read_text(encoding="utf-8"))["rows"]
    cost = make_cost_model("llama2-70b-a100-tp2")
    cases = [(10.0, "mc-sf"), (10.0, "alpha-protection:alpha=0.1,beta=0.1"), (50.0, "alpha-protection:alpha=0.25")]
    for rate, spec in cases:
        (row,) = [r for r in committed if r["rate"] == rate and r["policy"] == spec]
        inst = trace_workload(0, LMSYS_TRACE, row["n"], rate=rate, format="lmsys", on_bad_row="drop")
        try:
            sched, looped = simulate_continuous(inst, make_policy_spec(spec, seed=0), cost), False
        except EvictionLoopError as exc:
            sched, looped = exc.partial, True
        latency = None
        if not looped:
            rep = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                                       evictions=sched.evictions)
            assert rep.ok, rep.violations[:1]
            latency = sched.mean_latency
        new = {"iterations": sched.iterations, "loop": looped, "mean_latency_s": latency}
        _assert_same_tree(f"results/perf/continuous-speed/results.json λ={rate:g} {spec}",
                          {k: row[k] for k in new}, new)
    by = {(r["rate"], r["policy"]): r for r in committed}
    assert (by[10.0, "mc-sf"]["iterations"], round(by[10.0, "mc-sf"]["mean_latency_s"], 2)) == (7602, 24.88)
    assert (by[50.0, "alpha-protection:alpha=0.25"]["iterations"], by[50.0, "alpha-protection:alpha=0.25"]["loop"]) \
        == (1091, True)


# --------------------------------------------------------------------------- simulator_speed


def test_simulator_speed_n1000_tel_and_makespan() -> None:
    """``results/perf/simulator-speed/results.json`` (``benchmarks/simulator_speed.py``; its instances are
    :func:`llmopt.bench.speed_cases.make_workload`), every row at
    n = 1,000 (the smallest size): the TEL and makespan of MC-SF and FCFS on both workloads
    (J5.1-M40, M16492) under all three arrival patterns — e.g. J5.1-M40, t = 0: MC-SF TEL 3,286,882,
    FCFS 6,021,232. CPU times, requests per second and the fitted exponents are not golden-tested."""
    from llmopt.bench.speed_cases import SPEED_PATTERNS, SPEED_POLICIES, SPEED_WORKLOADS, make_workload, run_policy

    committed = json.loads((RESULTS / "perf" / "simulator-speed" / "results.json").read_text(encoding="utf-8"))["rows"]
    rows = [r for r in committed if r["n"] == 1000]
    assert len(rows) == len(SPEED_WORKLOADS) * len(SPEED_PATTERNS) * len(SPEED_POLICIES) == 12
    for r in rows:
        inst = make_workload(r["workload"], 1000, SPEED_PATTERNS[r["pattern"]])
        sched = run_policy(inst, r["policy"])
        got = {"M": inst.M, "tel": sched.tel, "makespan": sched.makespan}
        assert got == {k: r[k] for k in got}, (r["workload"], r["pattern"], r["policy"], got)
    tel = {(r["workload"], r["pattern"], r["policy"]): r["tel"] for r in rows}
    assert (tel["J5.1-M40", "t=0", "mc-sf"], tel["J5.1-M40", "t=0", "fcfs"]) == (3286882, 6021232)


def test_simulator_speed_notes_local_search_seed0() -> None:
    """``results/perf/simulator-speed/README.md``, table *Local search inside hindsight OPT*, seed 0
    (``jaillet_am1(0)``: n = 58, M = 40): the TELs of MC-SF 9,474, FCFS 18,104 and the
    200-evaluation local search 9,106 found by ``upper_bound_schedules``, against the table's cell.
    (The local search runs a fixed number of evaluations, so its result does not depend on time.)"""
    from llmopt.opt.hindsight import upper_bound_schedules
    from llmopt.workloads.jaillet import jaillet_am1

    inst = jaillet_am1(0)
    found = upper_bound_schedules(inst, search_evals=200)
    cells = markdown_row(RESULTS / "perf" / "simulator-speed" / "README.md", ("0",))
    assert cells[1:4] == [str(inst.n), str(inst.M),
                          f"{found['mc-sf'].tel} / {found['fcfs'].tel} / {found['local-search'].tel}"]
    assert (found["mc-sf"].tel, found["fcfs"].tel, found["local-search"].tel) == (9474, 18104, 9106)


# --------------------------------------------------------------------------- cli_startup


def test_cli_startup_heavy_modules() -> None:
    """``results/perf/cli-startup/results.json`` (``benchmarks/cli_startup.py``), ``meta.heavy_modules``:
    the heavy packages (SciPy, pandas, matplotlib, HiGHS, OR-Tools, PuLP) that ``import
    llmopt.cli.main`` loads in a fresh interpreter — none (README: "Heavy packages loaded by `import
    llmopt.cli.main`: none"). This is the folder's only deterministic number: everything else it
    publishes (start-up, import and work times, their ratios) is wall-clock and not golden-tested."""
    committed = json.loads((RESULTS / "perf" / "cli-startup" / "results.json").read_text(encoding="utf-8"))["meta"]
    from llmopt.bench.speed_cases import heavy_modules_of

    assert heavy_modules_of("llmopt.cli.main") == committed["heavy_modules"] == []


def test_cli_startup_modules_of_a_discrete_simulate(tmp_path) -> None:
    """``results/perf/cli-startup`` table, column "NumPy / pydantic loaded", discrete row: "neither"
    (``modules_loaded_by_simulate``), recomputed on a small discrete instance."""
    from llmopt.model.instance import Instance, save_instance

    rows = json.loads((RESULTS / "perf" / "cli-startup" / "results.json").read_text(encoding="utf-8"))["rows"]
    discrete = [r for r in rows if r["instance"].startswith("discrete")]
    path = tmp_path / "inst.json"
    save_instance(Instance.from_tuples(10, [(0, 2, 3), (1, 2, 6)]), path)
    from llmopt.bench.speed_cases import modules_loaded_by_simulate

    assert modules_loaded_by_simulate(path, "mc-sf") == discrete[0]["loaded"] == []
