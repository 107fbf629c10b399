"""Golden numbers of suite ``chen-cor2`` (``results/chen/cor2/cor2.md``, ``cor2.csv``; C Corollary 2).

Recomputes seed 0 at bucket width 10 (both readings) and the basic setting's closed form, checks the
claim verdict the report prints, and that the claim check catches a bucketed ratio above the basic one.
A failure means a change moved a published number: if intended, rerun
``llmopt bench run chen-cor2 --out results/chen/cor2`` and update them.

Breakages caught (by hand): ``a-min-multi`` built from the unbinned instance (ratio 5.749 ≠ 1.446);
``cor2_claim`` comparing with ``>=`` (the tampered frame passes); the closed form on ``[1, u]`` with
width ``u`` swapped for width 1.
"""

from __future__ import annotations

import csv

import pandas as pd
import pytest
from golden_support import RESULTS

from llmopt.engine.discrete import simulate
from llmopt.papers.chen.cor2 import CHEN_COR2, COR2_U, cor2_claim, cor2_frame
from llmopt.policies import make_policy_spec
from llmopt.workloads import WORKLOADS

OUT = RESULTS / "chen" / "cor2"


def _rows() -> list[dict[str, str]]:
    with (OUT / "cor2.csv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _spec(width: int):  # type: ignore[no-untyped-def]
    return next(w for w in CHEN_COR2.workloads if w.label == f"width {width}")


def test_seed0_width10_ratios_recomputed() -> None:
    spec = _spec(10)
    inst = WORKLOADS.get(spec.workload)(0, **dict(spec.params))
    hsf = simulate(inst, make_policy_spec("h-sf", seed=0)).tel
    rows = {r["reading"]: r for r in _rows() if r["width"] == "10" and r["seed"] == "0"}
    for p, reading in (("a-min-multi", "certified"), ("a-min-multi:running_estimate=repaired", "repaired")):
        tel = simulate(inst, make_policy_spec(p, seed=0)).tel
        assert tel / hsf == pytest.approx(float(rows[reading]["ratio"]), rel=1e-12)
    assert float(rows["certified"]["ratio"]) == pytest.approx(1.446, abs=5e-4)


def test_closed_forms_and_verdict_recomputed() -> None:
    records = [{"workload": s.workload, "params": dict(s.params), "seed": 0, "verified_h-sf": True,
                "tel_h-sf": 1, "verified_a-min-multi": True, "tel_a-min-multi": 1}
               for s in (_spec(COR2_U), _spec(1))]
    df = cor2_frame(records)
    saved = {(r["width"], r["reading"]): float(r["closed"]) for r in _rows() if r["seed"] == "0"}
    for _, row in df.iterrows():
        assert row["closed"] == pytest.approx(saved[(str(row["width"]), "certified")], rel=1e-12)
    assert df.loc[df["width"] == 1, "closed"].iloc[0] == pytest.approx(1.0, abs=1e-12)
    assert "**holds in 6 of 6**" in (OUT / "cor2.md").read_text(encoding="utf-8")


def test_claim_check_catches_a_bucketed_ratio_above_the_basic_one() -> None:
    df = pd.DataFrame([{"width": r["width"], "seed": r["seed"], "reading": r["reading"], "ratio": r["ratio"]}
                       for r in _rows()]).astype({"width": int, "seed": int, "ratio": float})
    assert all(cor2_claim(df).values())
    bad = df.copy()
    hit = (bad["width"] == 10) & (bad["seed"] == 1) & (bad["reading"] == "repaired")
    basic = bad.loc[(bad["width"] == COR2_U) & (bad["seed"] == 1) & (bad["reading"] == "repaired"), "ratio"].iloc[0]
    bad.loc[hit, "ratio"] = basic + 1e-6
    verdict = cor2_claim(bad)
    assert verdict[(1, "repaired")] is False and sum(verdict.values()) == 5
