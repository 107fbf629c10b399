"""The proofs of OPT in ``results/opt/opt-proofs`` (:mod:`llmopt.opt.studies.opt_proofs`): every proven-OPT row
of the opt-frontier and ip-scaling suites has a stored optimal schedule that the checker re-derives, its proof
column follows from the stored data, and a second solver that disagrees is a contradiction, never a proof."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from golden_support import RESULTS, records

from llmopt.opt.studies import opt_proofs
from llmopt.verify.checker import check_schedule
from llmopt.workloads import make_instance

FOLDER = "opt/opt-proofs"
SCHEDULES = RESULTS / FOLDER / opt_proofs.SCHEDULES_FILE


def _instance(rec: dict[str, Any]) -> Any:
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in (rec.get("params") or {}).items()}
    return make_instance(rec["workload"], seed=rec["seed"], **params)


def test_every_proven_row_has_a_proof_row_and_a_schedule() -> None:
    proofs = {(r["folder"], r["key"]) for r in records(FOLDER, opt_proofs.PROOFS_FILE)}
    stored = {r["key"]: r["opt"] for r in records(FOLDER, opt_proofs.SCHEDULES_FILE)}
    rows = opt_proofs.proven_rows()
    assert rows, "no proven rows found"
    for rec in rows:
        if rec["n"] > opt_proofs.BIG_N and (rec["folder"], rec["key"]) not in proofs:
            continue  # a --big row not run yet: the table must then say nothing about it
        assert (rec["folder"], rec["key"]) in proofs, (rec["folder"], rec["key"])
        assert stored.get(rec["key"]) == rec["opt"], (rec["key"], stored.get(rec["key"]), rec["opt"])


def test_stored_schedules_recheck() -> None:
    assert opt_proofs.recheck_schedules(SCHEDULES) == []


def _tampered(tmp_path: Path, shift: int) -> tuple[Path, str]:
    """The stored schedules with one start of the first instance moved by ``shift`` (feasible if any such move
    is), and that instance's key."""
    recs = records(FOLDER, opt_proofs.SCHEDULES_FILE)
    rec = recs[0]
    inst = _instance(rec)
    moved = None
    for rid in sorted(rec["starts"]):
        starts = dict(rec["starts"]) | {rid: rec["starts"][rid] + shift}
        moved = moved or starts
        if check_schedule(inst, starts).ok:
            moved = starts
            break
    assert moved is not None
    recs[0] = rec | {"starts": moved}
    path = tmp_path / opt_proofs.SCHEDULES_FILE
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path, rec["key"]


def test_a_start_moved_later_is_rejected(tmp_path: Path) -> None:
    path, key = _tampered(tmp_path, +1)
    problems = opt_proofs.recheck_schedules(path)
    assert len(problems) == 1 and key in problems[0], problems


def test_a_start_moved_before_its_arrival_is_rejected(tmp_path: Path) -> None:
    recs = records(FOLDER, opt_proofs.SCHEDULES_FILE)
    rec = recs[0]
    inst = _instance(rec)
    rid = sorted(rec["starts"])[0]
    recs[0] = rec | {"starts": dict(rec["starts"]) | {rid: inst.by_id(rid).arrival - 1}}
    path = tmp_path / opt_proofs.SCHEDULES_FILE
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    problems = opt_proofs.recheck_schedules(path)
    assert len(problems) == 1 and "infeasible" in problems[0], problems


def test_proof_column_follows_from_the_stored_data() -> None:
    rows = records(FOLDER, opt_proofs.PROOFS_FILE)
    stored = {r["key"]: r["opt"] for r in records(FOLDER, opt_proofs.SCHEDULES_FILE)}
    for r in rows:
        # the classification of the stored row, with the stored schedule's (re-checked) TEL
        proof, note = opt_proofs.classify(r | {"tel": stored.get(r["key"])})
        assert (proof, note) == (r["proof"], r["proof_note"]), r["key"]
        assert proof != "contradiction", (r["key"], note)


def _row(**second: Any) -> dict[str, Any]:
    base = {"solver": "scip", "status": "optimal", "objective": 100.0, "verified_tel": 100, "bound": 100.0}
    return {"first": {"opt": 100}, "second": base | second, "certificate": None, "tel": 100}


def test_agreeing_second_solver_is_two_solvers() -> None:
    assert opt_proofs.classify(_row())[0] == "two solvers"


def test_second_solver_stopped_early_is_one_solvers_word() -> None:
    assert opt_proofs.classify(_row(status="time_limit", bound=97.5))[0] == opt_proofs.ONE_WORD


@pytest.mark.parametrize("second, certificate, tel", [
    ({"objective": 99.0, "verified_tel": None, "bound": 99.0}, None, 100),   # SCIP "optimal" at a lower value
    ({"objective": 99.0, "verified_tel": 99, "bound": 99.0}, None, 100),     # SCIP's schedule beats HiGHS's OPT
    ({"status": "time_limit", "bound": 100.5}, None, 100),                   # SCIP's bound above OPT
    ({}, {"bound": 100.4}, 100),                                             # a certificate above OPT
    ({}, None, 101),                                                         # stored schedule TEL is not OPT
])
def test_disagreement_is_a_contradiction(second: dict[str, Any], certificate: Any, tel: int) -> None:
    row = _row(**second) | {"certificate": certificate, "tel": tel}
    proof, note = opt_proofs.classify(row)
    assert proof == "contradiction", (proof, note)


def test_tiny_instance_proven_by_two_solvers_agrees() -> None:
    pytest.importorskip("pyscipopt")
    from llmopt.opt.hindsight import solve_hindsight

    inst = make_instance("jaillet-am1", seed=3, M_range=(12, 12), n_range=(6, 6))
    # HiGHS proves it by its MIP bound alone (no bound stage), as the suites' rows were proven
    h = solve_hindsight(inst, solver="highs", formulation="hindsight-ip-zones", bounds=(),
                        upper_bounds=("mc-sf", "fcfs"), search_evals=0)
    assert h.opt is not None and h.bound_certificate == "mip-bound-from-solver"
    claim = {"solver": "highs", "status": "optimal", "opt": h.opt, "bound": h.bound}
    row = opt_proofs.prove(inst, claim, seconds=None, nodes=None, tree_nodes=0)
    assert row["second"]["solver"] not in ("", "highs") and row["second"]["status"] == "optimal"
    assert row["tel"] == h.opt == round(row["second"]["objective"])
    assert check_schedule(inst, row["starts"]).tel == h.opt
    assert row["proof"] == "two solvers", row["proof_note"]


def test_a_schedule_missing_a_request_is_rejected(tmp_path: Path) -> None:
    recs = records(FOLDER, opt_proofs.SCHEDULES_FILE)
    starts = dict(recs[0]["starts"])
    starts.pop(sorted(starts)[-1])
    recs[0] = recs[0] | {"starts": starts}
    path = tmp_path / opt_proofs.SCHEDULES_FILE
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    problems = opt_proofs.recheck_schedules(path)
    assert len(problems) == 1 and recs[0]["key"] in problems[0], problems


def _certified_rows() -> list[dict[str, Any]]:
    return [r for r in records(FOLDER, opt_proofs.PROOFS_FILE)
            if r["proof"].startswith("certificate") and r["n"] <= 12 and r["certificate"]["nodes"] <= 13]


@pytest.mark.parametrize("row", _certified_rows(), ids=lambda r: f"{r['folder']}:{r['key']}")
def test_a_certificate_proof_is_rebuilt_and_rewalked_by_the_checker(row: dict[str, Any]) -> None:
    """The certificate rows (small ones): the node-limited zone tree rebuilt from the stored schedule, re-walked
    by the checker, rounds up to OPT (and not above it)."""
    import math

    from llmopt.formulations.zones import default_split
    from llmopt.model.windows import start_windows
    from llmopt.opt.zone_tree import zone_tree
    from llmopt.verify.tree_certificate import check_tree_certificate

    sched = {r["key"]: r for r in records(FOLDER, opt_proofs.SCHEDULES_FILE)}[row["key"]]
    inst = _instance(sched)
    split = default_split(inst.M)
    tree = zone_tree(inst, upper_bound_starts=sched["starts"], windows=start_windows(inst, sched["opt"]),
                     split=split, node_limit=row["certificate"]["node_limit"])
    check = check_tree_certificate(inst, tree.nodes, split, sched["starts"])
    assert math.ceil(check.bound - opt_proofs.EPS) == sched["opt"] == row["first"]["opt"], check.bound
