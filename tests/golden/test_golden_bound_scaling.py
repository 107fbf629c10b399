"""Golden values of ``results/bound_scaling`` (``benchmarks/bound_scaling.py``, issue 23).

Recomputes the bound stages at ``n = 10`` and ``n = 20`` (J AM1, M = 40, seed 0, MC-SF's windows) and
compares each checker value with the committed row (times are not compared). A failure means a change
moved a bound: if intended, rerun ``python benchmarks/bound_scaling.py --write`` (it appends; delete the
rows to recompute) and say why.

Breakages caught (by hand): ``zone-colgen`` without its zone clique (it falls to the ``lp`` value, 428.17
instead of 566.05 at n = 10); the pair family dropped from ``lag-lp`` (1118.30 → 1113.08 at n = 20).
"""

from __future__ import annotations

import json

import pytest
from golden_support import RESULTS, benchmark

ROWS = RESULTS / "bound_scaling" / "rows.jsonl"


def _committed() -> dict[tuple[int, str], dict]:
    rows = [json.loads(line) for line in ROWS.read_text().splitlines() if line.strip()]
    return {(r["n"], r["stage"]): r for r in rows if r["part"] == "scaling"}


@pytest.mark.parametrize("n", [10, 20])
def test_small_n_values(n: int) -> None:
    from llmopt.opt.bounds import compute_bound
    from llmopt.workloads.jaillet import jaillet_am1

    bm = benchmark("bound_scaling")
    stored = _committed()
    inst = jaillet_am1(0, n_range=(n, n), M_range=(40, 40))
    sch, ctx = bm._context(inst)
    for stage in ("lp", "zone-lp", "zone-colgen", "lag-lp", "energy"):
        row = stored[(n, stage)]
        assert row["mcsf"] == sch.tel
        res = compute_bound(stage, inst, ctx)
        assert res.verified and row["verified"], res.detail
        assert res.value == pytest.approx(row["value"], rel=1e-7), (stage, res.detail)
