"""Golden numbers of three committed study results: ``results/jaillet/schedule-polish``, ``results/opt/trace-bracket``
and ``results/opt/zone-tree``.

* ``schedule_polish``: every stored final schedule (``final_starts``, the ``cp-sat-lns`` stage after the
  replayed pipeline) passes the checker with exactly the stored ``final_tel``, and never above the
  stored best found it is compared with; the README's improvement count and its certified-gap row
  (against ``results/jaillet/zone-bound``'s per-trial bound) are recomputed from the records.
* ``trace_bracket`` (needs the LMSYS trace under ``LLMOPT_DATA``): at n = 1,000 the policies' and
  ``sgs-energy``'s TELs and the ``energy`` bound are recomputed and equal the committed row; the schedules of
  the budgeted searches (``sgs-lagrangian``, ``lns``) are not recomputable, so their stored starts are
  re-verified by the checker at their stored TEL (the LP stages are not rerun: their time limits make them
  wall-clock dependent).
* ``zone_tree``: the one point the tree proves (AM1 n = 16) is proved again from MC-SF's schedule (no
  time limit: the tree is deterministic then) at the committed best found, and the README's count of
  instances where the tree's bound is above B&C's is recomputed from the records (the budgeted runs
  themselves are wall-clock dependent and are not rerun).

A failure means a change moved a committed number: rerun the study named in the folder's manifest.json.
Breakage caught (by hand): the discrete step taken as the median instead of the mean batch iteration in
:mod:`llmopt.opt.studies.energy_bound` (every n = 1,000 TEL moves).
"""

from __future__ import annotations

import json

import pytest
from golden_support import RESULTS, records
from helpers import have_trace_data

from llmopt.model.instance import Instance
from llmopt.verify.checker import check_schedule


def test_schedule_polish_schedules_are_what_they_claim() -> None:
    from llmopt.workloads import make_instance

    rows = records("jaillet/schedule-polish")
    assert len(rows) == 400
    improved = 0
    for row in rows[::40]:  # every fortieth: the checker on 10 schedules of ~50 requests
        inst: Instance = make_instance(row["workload"], seed=row["seed"])
        rep = check_schedule(inst, row["final_starts"])
        assert rep.ok and rep.tel == row["final_tel"], (row["workload"], row["seed"])
    for row in rows:
        assert row["final_tel"] <= row["stored_lns"]
        improved += row["final_tel"] < row["stored_best"]
    readme = (RESULTS / "jaillet" / "schedule-polish" / "README.md").read_text()
    am1 = sum(r["final_tel"] < r["stored_best"] for r in rows if r["workload"] == "jaillet-am1")
    assert f"| {am1} / " in readme and improved == 336
    # the certified-gap row, recomputed against results/jaillet/zone-bound's per-trial bound
    zone = {(r["workload"], r["seed"]): r["bound_after"] for r in records("jaillet/zone-bound")
            if r["suite"] == "jaillet-certified"}
    for wl in ("jaillet-am1", "jaillet-am2"):
        pairs = [(r, zone[(wl, r["seed"])]) for r in rows if r["workload"] == wl]
        before = sum((r["stored_best"] - b) / r["stored_best"] for r, b in pairs) / len(pairs)
        after = sum((r["best_tel"] - b) / r["best_tel"] for r, b in pairs) / len(pairs)
        assert f"{before:.2%} → {after:.2%}" in readme, wl


@pytest.mark.skipif(not have_trace_data(), reason="LMSYS trace not available (LLMOPT_DATA)")
def test_trace_bracket_policies_and_energy_at_n_1000() -> None:
    from llmopt.opt.studies import energy_bound as eb
    from llmopt.opt.studies.trace_bracket import SEARCHES

    stored = {r["label"]: r for r in _trace_rows() if r["n"] == 1000 and "prefix_of" not in r}
    cases, why = eb.trace_instances(1000, (50.0, 10.0))
    assert why is None, why
    assert {label for label, _, _ in cases} == set(stored)
    for label, inst, _ in cases:
        _check_trace_row(inst, stored[label], SEARCHES, recompute=True)


@pytest.mark.skipif(not have_trace_data(), reason="LMSYS trace not available (LLMOPT_DATA)")
def test_trace_bracket_prefix_rows() -> None:
    """The ``prefix_of`` rows (the first P arrivals of the λ = 10 run): the 1,000-prefix's policies,
    ``sgs-energy`` and ``energy`` recomputed; every prefix row's stored searches re-verified."""
    from llmopt.opt.studies import trace_bracket as tb

    stored = {r["label"]: r for r in _trace_rows() if "prefix_of" in r}
    sizes = sorted({r["n"] for r in stored.values()})
    assert sizes == [1000, 3000]
    cases, why = tb._cases(10000, (10.0,), tuple(sizes))
    assert why is None, why
    prefixes = {label: inst for label, inst in cases if label in stored}
    assert set(prefixes) == set(stored)
    for label, inst in prefixes.items():
        row = stored[label]
        assert (inst.n, inst.total_output) == (row["n"], row["sum_o"])
        _check_trace_row(inst, row, tb.SEARCHES, recompute=inst.n == 1000)


def _trace_rows() -> list[dict]:
    return [json.loads(line) for line in (RESULTS / "opt" / "trace-bracket" / "rows.jsonl").read_text().splitlines()]


def _check_trace_row(inst: Instance, row: dict, searches: tuple[str, ...], recompute: bool) -> None:
    """A ``trace_bracket`` row's searches (under a wall-clock budget: not recomputable, but their starts
    are stored) re-verified at their TEL; with ``recompute``, its other schedules and ``energy`` recomputed."""
    from llmopt.engine.discrete import simulate
    from llmopt.opt.bounds import compute_bound
    from llmopt.opt.upper_bounds import UPPER_BOUNDS, SearchContext, find_schedule
    from llmopt.policies import make_policy

    for name, got in row["schedules"].items():
        if name in searches:
            rep = check_schedule(inst, got["starts"])
            assert rep.ok and rep.tel == got["tel"], (row["label"], name)
        elif recompute and name in UPPER_BOUNDS:
            assert find_schedule(name, inst, SearchContext()).tel == got["tel"], (row["label"], name)
        elif recompute:
            assert simulate(inst, make_policy(name)).tel == got["tel"], (row["label"], name)
    if recompute:
        assert compute_bound("energy", inst).value == row["bounds"]["energy"]["value"], row["label"]


def test_zone_tree_proves_its_committed_point_again() -> None:
    import math

    from llmopt.engine.discrete import simulate
    from llmopt.formulations.zones import default_split
    from llmopt.model.result import SolveStatus
    from llmopt.model.windows import start_windows
    from llmopt.opt.zone_tree import zone_tree
    from llmopt.policies import make_policy
    from llmopt.verify.tree_certificate import check_tree_certificate
    from llmopt.workloads import make_instance

    rows = records("opt/zone-tree")
    proved = [r for r in rows if r["tree_proves"]]
    assert [(r["workload"], r["n"], r["best"]) for r in proved] == [("jaillet-am1", 16, 960)]
    row = proved[0]
    params = {k: tuple(v) for k, v in row["params"].items()}
    inst = make_instance(row["workload"], seed=row["seed"], **params)
    mcsf = simulate(inst, make_policy("mc-sf"))
    split = default_split(inst.M)
    res = zone_tree(inst, upper_bound_starts=mcsf.starts, windows=start_windows(inst, mcsf.tel), split=split)
    assert res.status is SolveStatus.OPTIMAL and res.incumbent == row["best"]
    check = check_tree_certificate(inst, res.nodes, split, mcsf.starts)
    assert math.ceil(check.bound - 1e-6) == row["best"]
    wins = sum(r["bc_bound"] is not None and r["tree_bound"] > r["bc_bound"] for r in rows)
    readme = (RESULTS / "opt" / "zone-tree" / "README.md").read_text()
    assert f"above B&C's on **{wins} of {len(rows)}**" in readme
    assert all(r["tree_bound"] <= r["best"] + 1e-6 for r in rows)
