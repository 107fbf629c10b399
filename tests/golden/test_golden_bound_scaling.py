"""Golden values of ``results/opt/bound-scaling`` (study ``bound-scaling``, :mod:`llmopt.opt.studies.bound_scaling`).

Recomputes the bound stages at ``n = 10`` and ``n = 20`` (J AM1, M = 40, seed 0, MC-SF's windows) and
compares each checker value with the committed row (times are not compared). A failure means a change
moved a bound: if intended, rerun ``llmopt study run bound-scaling --out results/opt/bound-scaling`` (it
appends; delete the rows to recompute) and say why.

Part (c): the ``zone-tree`` rows at ``n = 10`` and ``20`` (a node limit and no binding time limit, so the
tree is deterministic) are grown again and give the committed node count and checked bound.

Breakages caught (by hand): ``zone-colgen`` without its zone clique (it falls to the ``lp`` value, 428.17
instead of 566.05 at n = 10); the pair family dropped from ``lag-lp`` (1118.30 → 1113.08 at n = 20);
strong branching probing one candidate instead of four (part (c), n = 20).
"""

from __future__ import annotations

import json

import pytest
from golden_support import RESULTS

ROWS = RESULTS / "opt" / "bound-scaling" / "rows.jsonl"


def _committed() -> dict[tuple[int, str], dict]:
    rows = [json.loads(line) for line in ROWS.read_text().splitlines() if line.strip()]
    return {(r["n"], r["stage"]): r for r in rows if r["part"] == "scaling"}


@pytest.mark.parametrize("n", [10, 20])
def test_small_n_values(n: int) -> None:
    from llmopt.opt.bounds import compute_bound
    from llmopt.opt.studies import bound_scaling as bm
    from llmopt.workloads.jaillet import jaillet_am1
    stored = _committed()
    inst = jaillet_am1(0, n_range=(n, n), M_range=(40, 40))
    sch, ctx = bm._context(inst)
    for stage in ("lp", "zone-lp", "zone-colgen", "lag-lp", "energy"):
        row = stored[(n, stage)]
        assert row["mcsf"] == sch.tel
        res = compute_bound(stage, inst, ctx)
        assert res.verified and row["verified"], res.detail
        assert res.value == pytest.approx(row["value"], rel=1e-7), (stage, res.detail)


@pytest.mark.parametrize("n", [10, 20])
def test_zone_tree_rows_at_small_n(n: int) -> None:
    from llmopt.formulations.zones import default_split
    from llmopt.model.windows import start_windows
    from llmopt.opt.studies import bound_scaling as bm
    from llmopt.opt.zone_tree import zone_tree
    from llmopt.verify.tree_certificate import check_tree_certificate
    from llmopt.workloads.jaillet import jaillet_am1
    rows = [json.loads(line) for line in ROWS.read_text().splitlines() if line.strip()]
    row = next(r for r in rows if r["part"] == "tree" and r.get("probe_restart") and r["n"] == n)
    inst = jaillet_am1(0, n_range=(n, n), M_range=(40, 40))
    sch, _ = bm._context(inst)
    assert row["mcsf"] == sch.tel
    split = default_split(inst.M)
    res = zone_tree(inst, upper_bound_starts=sch.starts, windows=start_windows(inst, sch.tel), split=split,
                    node_limit=row["nodes"], time_limit=3600.0)
    check = check_tree_certificate(inst, res.nodes, split, sch.starts)
    assert (res.explored, str(res.status)) == (row["explored"], row["status"])
    assert check.bound == pytest.approx(row["bound"], rel=1e-7)
