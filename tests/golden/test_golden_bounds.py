"""Golden numbers of the OPT / lower-bound results folders (issue 22, item 2): ``opt_frontier``,
``ip_scaling``, ``zone_bound``, ``energy_bound``, ``bound_directions``, ``highs_presolve``.

Each test recomputes a few published numbers of one committed folder on its smallest instance
and compares them with the values read from the committed file (integers, booleans and strings
exactly, floats to 1e-9; where a folder publishes only a Markdown table, with the table's own
rounding), plus a few values hard-coded here, so that a silent regeneration still shows in
review. A failure means a change moved a published number: if it is intended, regenerate the
folder (its README gives the command) and update the hard-coded values.

Nothing here depends on a wall-clock limit: IP stages are either skipped (their results are
time-limited) or run only where HiGHS proves the optimum in seconds under a 600-s limit, and
LPs are solved to optimality. Timings — all of ``highs_presolve``'s seconds, the ``zone_s`` /
``lp_s`` / stage times of the others — are not golden-tested.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from typing import Any

import pytest
from golden_support import (
    RESULTS,
    assert_fields,
    deterministic_fields,
    hindsight_before_ip,
    markdown_row,
    record,
    suite_of,
    task_of,
)
from helpers import needs_trace_data

AM1_N6 = {"M_range": [40, 40], "n_range": [6, 6]}
AM1_N16 = {"M_range": [40, 40], "n_range": [16, 16]}


# --- opt_frontier -----------------------------------------------------------------------------------


def test_opt_frontier_am1_n16_before_ip() -> None:
    """``results/jaillet/opt-frontier/trials.jsonl``, AM1 n = 16 (the smallest AM1 point): MC-SF TEL 961,
    FCFS 2,047, local search 960 (= the proven OPT, so no later stage can change the incumbent the
    bounds and the model rest on), the bounds ``lp`` 684.80…, ``energy`` 607 and ``zone-lp`` 955.19…
    (all checker-verified), and the ``hindsight-ip-zones`` model's size (4,501 columns, 143,359
    nonzeros, 299 zone rows). The ``lns`` / ``cp-sat`` stages (27 s, stopped by wall-clock budgets)
    and the 600-s IP are not rerun."""
    suite = suite_of("jaillet/opt-frontier")
    rec = record("jaillet/opt-frontier", "jaillet-am1", 0, AM1_N16)
    assert rec["incumbent_source"] == "local-search" and rec["opt"] == rec["incumbent"]
    new = hindsight_before_ip(suite, task_of(suite, rec), upper_bounds=("mc-sf", "fcfs", "local-search"))
    fields = ["instance", "n", "M", "tel_mc-sf", "verified_mc-sf", "tel_fcfs", "verified_fcfs", "heuristic_mc-sf",
              "heuristic_fcfs", "heuristic_local-search", "incumbent", "incumbent_source",
              *(f"bound_{b}{v}" for b in ("lp", "energy", "zone-lp") for v in ("", "_verified")),
              *(k for k in rec if k.startswith("model_"))]
    assert_fields("results/jaillet/opt-frontier AM1 n=16", rec, new, fields)
    assert (new["tel_mc-sf"], new["incumbent"], new["model_cols"], new["model_nnz"]) == (961, 960, 4501, 143359)


# --- ip_scaling -------------------------------------------------------------------------------------


def test_ip_scaling_am1_n6_whole_trial() -> None:
    """``results/jaillet/ip-scaling/trials.jsonl``, M = 40, n = 6 (the smallest point): the whole record,
    IP included — HiGHS proves OPT = 240 in about 3 s under the suite's 600-s limit, so the result
    does not depend on the machine's load: status ``optimal``, OPT 240 (README), bound 240, MC-SF
    TEL 240 (= OPT), FCFS TEL, the LP bound 196.94…, the model's size (625 integer columns, 14,372
    nonzeros, README) and every other non-timing field."""
    from llmopt.bench.tasks import run_task

    suite = suite_of("jaillet/ip-scaling")
    rec = record("jaillet/ip-scaling", "jaillet-am1", 0, AM1_N6)
    new = run_task(suite, task_of(suite, rec))
    assert_fields("results/jaillet/ip-scaling M=40 n=6", rec, new, deterministic_fields(rec))
    assert (new["status"], new["opt"], new["tel_mc-sf"]) == ("optimal", 240, 240)
    assert (new["model_int_cols"], new["model_nnz"]) == (625, 14372)


# --- zone_bound -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "workload", "seed", "params"), [
    ("ip-scaling", "jaillet-am1", 0, AM1_N6),
    ("jaillet-certified", "jaillet-am2", 110, {}),
], ids=["ip-scaling-n6", "certified-am2-seed110"])
def test_zone_bound(source: str, workload: str, seed: int, params: dict) -> None:
    """``results/jaillet/zone-bound/trials.jsonl``, recomputed with the ``zone-bound`` study's own
    ``evaluate`` from the stored source record: the ``zone-lp`` bound (ip-scaling n = 6: 239.12…,
    README table "239.1", which proves OPT 240 alone; J §5.1 AM2 seed 110, n = 11: 245.76…), its
    checker detail (split, number of zone rows), MC-SF's TEL, the bound and gap before → after and
    the proven flags. ``zone_s`` (seconds) is not compared."""
    from llmopt.papers.jaillet.studies import zone_bound as zb

    rec = record("jaillet/zone-bound", workload, seed, params, suite=source)
    source_folder = {"ip-scaling": "jaillet/ip-scaling", "jaillet-certified": "jaillet/certified"}[source]
    src = record(source_folder, workload, seed, params)
    new = zb.evaluate(src)
    assert_fields(f"results/jaillet/zone-bound {source} {workload} seed {seed}", rec, new,
                  [k for k in rec if k != "zone_s"])
    if source == "ip-scaling":
        assert new["zone_proves"] is True and f"{new['bound_zone']:.1f}" == "239.1"
    else:
        assert (new["bound_before"], new["bound_after"]) == (243, 246)


def test_zone_bound_rows_agree_with_the_runs_they_come_from() -> None:
    """Every row of ``results/jaillet/zone-bound/trials.jsonl`` was evaluated from the bracket its source run
    holds now (best found, status, bound), and every stored source trial has its row: a source rerun
    (e.g. ``opt_frontier`` proving AM1 n = 20) must regenerate the table (issue 27: a stale "best
    found" row stayed after ``--write``)."""
    from llmopt.papers.jaillet.studies import zone_bound as zb

    lines = (RESULTS / "jaillet" / "zone-bound" / "trials.jsonl").read_text().splitlines()
    rows = {zb._key(r): r for r in map(json.loads, lines)}
    sources = zb.sources(None)
    assert len(rows) == len(sources) == 416
    stale = [k for k in (zb._key(s) for s in sources) if k not in rows]
    stale += [zb._key(s) for s in sources if zb._key(s) in rows and not zb._same_inputs(rows[zb._key(s)], s)]
    assert not stale, ("stale or missing zone_bound rows "
                       "(rerun llmopt study run zone-bound --out results/jaillet/zone-bound): "
                       f"{stale[:3]}")


# --- energy_bound -----------------------------------------------------------------------------------


def _assert_trace_row_matches(eb: Any, row: dict[str, Any], label: str) -> None:
    """The README row ``label`` of ``results/opt/energy-bound``, rendered by the script from ``row``,
    equals the committed one in every column but the timings."""
    text = eb.render([], [row], None, _energy_args(), 0.0)
    line = next(x for x in text.splitlines() if x.startswith(f"| {label} |"))
    new_cells = [c.strip() for c in line.strip().strip("|").split("|")]
    committed = markdown_row(RESULTS / "opt" / "energy-bound" / "README.md", (label,))
    timing = {6, 7, 8, 10}  # stage, SRPT, checker and MC-SF seconds
    keep = [i for i in range(len(committed)) if i not in timing]
    assert [new_cells[i] for i in keep] == [committed[i] for i in keep]


def _energy_args() -> argparse.Namespace:
    return argparse.Namespace(seeds=20, search_evals=200, lp_bound="lp", n=10_000, repeat=3)


def test_energy_bound_am2_seed19() -> None:
    """``results/opt/energy-bound/README.md``, per-seed table, jaillet-am2 seed 19 (n = 25, the smallest):
    n 25, M 31, Σo 379, energy bound 943, LP bound 1125.0, MC-SF TEL 1,602, local search 1,574,
    energy/lp 0.838, energy/best 0.599 — recomputed as the ``energy-bound`` study does and
    rendered with its own table code."""
    from llmopt.engine.discrete import simulate
    from llmopt.opt.bounds import BoundContext, compute_bound
    from llmopt.opt.studies import energy_bound as eb
    from llmopt.opt.upper_bounds import SearchContext, find_schedule
    from llmopt.policies import make_policy
    from llmopt.workloads import make_instance

    wl, seed = "jaillet-am2", 19
    inst = make_instance(wl, seed)
    en = compute_bound("energy", inst)
    mcsf = simulate(inst, make_policy("mc-sf"))
    ls = find_schedule("local-search", inst, SearchContext(seed=seed, search_evals=200, known={"mc-sf": mcsf}))
    tel_mcsf, tel_ls = eb._verified_tel(inst, mcsf.starts), eb._verified_tel(inst, ls.starts)
    lp = compute_bound("lp", inst, BoundContext(upper_bound_starts=ls.starts if tel_ls < tel_mcsf else mcsf.starts))
    assert en.verified and lp.verified
    row = dict(workload=wl, seed=seed, n=inst.n, M=inst.M, energy=en.value, energy_s=0.0, lp=lp.value,
               lp_verified=lp.verified, lp_s=0.0, mcsf=tel_mcsf, ls=tel_ls, best=min(tel_mcsf, tel_ls),
               sum_o=inst.total_output)
    text = eb.render([row], [], "not recomputed here", _energy_args(), 0.0)
    line = next(x for x in text.splitlines() if x.startswith(f"| {wl} | {seed} |"))
    new_cells = [c.strip() for c in line.strip().strip("|").split("|")]
    committed = markdown_row(RESULTS / "opt" / "energy-bound" / "README.md", (wl, str(seed)))
    assert new_cells == committed, f"results/opt/energy-bound/README.md row {committed} recomputed as {new_cells}"
    assert (inst.n, inst.total_output, en.value, tel_mcsf, tel_ls) == (25, 379, 943, 1602, 1574)


@needs_trace_data
def test_energy_bound_trace_all_at_zero() -> None:
    """``results/opt/energy-bound/README.md``, trace table, row "same requests, all at 0" (10,000 LMSYS
    requests, every arrival at 0): n 10,000, Σo 945,040, energy bound 13,900,611, MC-SF TEL
    23,088,131 and the three ratios. The row's prompts and outputs are the λ = 50 draw; with every
    arrival set to 0 the step length ``DT`` (from a continuous-time run) does not matter, so none is
    simulated. Times are not compared."""
    from llmopt.engine.discrete import simulate
    from llmopt.opt.bounds import compute_bound
    from llmopt.opt.studies import energy_bound as eb
    from llmopt.policies import make_policy
    from llmopt.workloads.traces import load_lmsys, sample_instance, to_discrete_instance
    from llmopt.workloads.traces.data import data_dir

    trace = load_lmsys(data_dir() / "traces" / eb.TRACE, M=eb.M_TRACE, on_bad_row="drop")
    disc = to_discrete_instance(sample_instance(trace, n=10_000, seed=0, rate=50.0, M=eb.M_TRACE), 0.1)
    at0 = replace(disc, requests=tuple(replace(r, arrival=0) for r in disc.requests))
    res = compute_bound("energy", at0)
    assert res.verified, res.detail
    tel = eb._verified_tel(at0, simulate(at0, make_policy("mc-sf")).starts)
    row = dict(label="same requests, all at 0", n=at0.n, steps=0, load=None, energy=res.value, stage_s=0.0,
               cert_s=0.0, check_s=0.0, mcsf=tel, mcsf_s=0.0, sum_o=at0.total_output)
    _assert_trace_row_matches(eb, row, "same requests, all at 0")
    assert (at0.total_output, res.value, tel) == (945_040, 13_900_611, 23_088_131)


@needs_trace_data
def test_energy_bound_trace_low_demand() -> None:
    """``results/opt/energy-bound/README.md``, trace table, row "λ = 10 /s, DT = 0.1376 s": the step
    length DT (MC-SF's mean iteration length in the continuous engine, Llama2-70B cost model), the
    last arrival step 7,185, the fluid load 0.99, Σo 945,040, the energy bound (= Σo here) and MC-SF's
    discrete TEL 1,495,429, with the three ratios. Times are not compared."""
    import numpy as np

    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.engine.discrete import simulate
    from llmopt.opt.bounds import compute_bound
    from llmopt.opt.studies import energy_bound as eb
    from llmopt.policies import make_policy
    from llmopt.workloads.traces import load_lmsys, sample_instance, to_discrete_instance
    from llmopt.workloads.traces.data import data_dir

    trace = load_lmsys(data_dir() / "traces" / eb.TRACE, M=eb.M_TRACE, on_bad_row="drop")
    timed = sample_instance(trace, n=10_000, seed=0, rate=10.0, M=eb.M_TRACE)
    cont = simulate_continuous(timed, make_policy("mc-sf"), make_cost_model("llama2-70b-a100-tp2"))
    dt = float(np.mean(cont.batch_duration))
    inst = to_discrete_instance(timed, dt)
    res = compute_bound("energy", inst)
    assert res.verified, res.detail
    tel = eb._verified_tel(inst, simulate(inst, make_policy("mc-sf")).starts)
    span = max(r.arrival for r in inst.requests) - min(r.arrival for r in inst.requests)
    energy_total = sum(r.prompt * r.output + r.output * (r.output + 1) // 2 for r in inst.requests)
    row = dict(label=f"λ = 10 /s, DT = {dt:.4f} s", n=inst.n, steps=max(r.arrival for r in inst.requests),
               load=energy_total / (inst.M * span), energy=res.value, stage_s=0.0, cert_s=0.0, check_s=0.0,
               mcsf=tel, mcsf_s=0.0, sum_o=inst.total_output)
    _assert_trace_row_matches(eb, row, "λ = 10 /s, DT = 0.1376 s")
    assert (row["steps"], res.value, tel) == (7_185, 945_040, 1_495_429)


# --- bound_directions -------------------------------------------------------------------------------


def test_bound_directions_am1_n6() -> None:
    """``results/opt/bound-directions/README.md``, row "AM1 M=40 n=6" (reference OPT 240): the LP 197
    (17.9 %), cg-rows 200 (16.7 %), pair 202 (16.0 %), biclique 214 (10.7 %) after 18 separation
    rounds — recomputed with the ``bound-directions`` study's ``bound`` and compared with the
    table's rounding; the biclique seconds are not compared."""
    from llmopt.opt.studies import bound_directions as bd
    from llmopt.workloads import make_instance

    src = record("jaillet/ip-scaling", "jaillet-am1", 0, AM1_N6)
    inst = make_instance("jaillet-am1", seed=0, n_range=(6, 6), M_range=(40, 40))
    ref = src["incumbent"]
    committed = markdown_row(RESULTS / "opt" / "bound-directions" / "README.md", ("AM1 M=40 n=6",))
    cells, rounds = [], None
    for fam in bd.FAMILIES:
        value, r, _secs = bd.bound(inst, ref, fam)
        cells.append(f"{value:.0f} ({(ref - value) / ref:.1%})")
        if fam == "biclique":
            rounds = r
    kind = "OPT" if src["status"] == "optimal" else "best found"
    new = ["AM1 M=40 n=6", f"{ref} ({kind})", *cells, f"{rounds:.0f}"]
    assert new == committed[:-1], f"results/opt/bound-directions/README.md row {committed} recomputed as {new}"
    assert new[1:] == ["240 (OPT)", "197 (17.9%)", "200 (16.7%)", "202 (16.0%)", "214 (10.7%)", "18"]


# --- highs_presolve ---------------------------------------------------------------------------------


def test_highs_presolve_am2_seed0() -> None:
    """``results/perf/highs-presolve/rows.json``, "am2 seed 0" (the smallest J instance) and the model
    sizes of "am1 seed 1": rows / columns / nonzeros of the LP relaxation (661 / 16,000 / 364,255)
    and of the dual LP, and the optimal objective 1706.848… of both solved with presolve off (the
    adapter's setting). The folder is a timing study: its seconds, and the presolve-on solves, are
    not golden-tested; nor is the 2M-token instance (3 s just to build)."""
    from llmopt.bench.speed_cases import presolve_instances, presolve_models
    from llmopt.solvers.highs import HighsSolver

    rows = json.loads((RESULTS / "perf" / "highs-presolve" / "rows.json").read_text())
    committed = {(r["instance"], r["lp"]): r for r in rows}
    instances = presolve_instances()
    for name in ("am2 seed 0", "am1 seed 1"):
        for kind, model in presolve_models(instances[name]).items():
            row = committed[name, kind]
            new = {"rows": model.n_rows, "cols": model.n_cols, "nnz": model.nnz}
            if name == "am2 seed 0":
                res = HighsSolver(presolve="off").solve(model, time_limit=600.0, threads=1)
                new.update(presolve_off_status=res.status.value, presolve_off_objective=res.objective)
            assert_fields(f"results/perf/highs-presolve {name} {kind}", row, new, list(new))
    assert math.isclose(committed["am2 seed 0", "lp"]["presolve_off_objective"], 1706.8482855457623, rel_tol=1e-9)
    assert (committed["am2 seed 0", "lp"]["cols"], committed["am2 seed 0", "lp"]["nnz"]) == (16_000, 364_255)
