"""Golden numbers of two Chen studies: ``chen-c-like`` (:mod:`llmopt.papers.chen.studies.c_like`,
``results/chen/lmsys/c_like.md`` with ``c_like_records.csv`` and ``c_like_m_sweep.csv``) and
``chen-theorem-claims`` (:mod:`llmopt.papers.chen.studies.theorem_claims`, ``results/chen/theory/theorem_claims.md``).

Each test recomputes a few published numbers cheaply — the C-like sample's statistics, one record of the
Figures 5–7 grid at n = 200, the sweep's first memory, Corollary 2's and the Lemma 2 / Thm EC.1 closed
forms, Theorem 2's α = 0.5 rows — and compares them with the committed table cells (exactly, as
rendered) or CSV values (1e-9), plus a few values hard-coded here. A failure means a change moved a
published number: if intended, rerun the study (``llmopt study run chen-c-like --out results/chen/lmsys``,
``llmopt study run chen-theorem-claims --out results/chen/theory``) and update them.
"""

from __future__ import annotations

import csv
import math
from typing import Any

import pytest
from golden_support import RESULTS, markdown_row
from helpers import needs_trace_data

C_LIKE = RESULTS / "chen" / "lmsys" / "c_like.md"
CLAIMS = RESULTS / "chen" / "theory" / "theorem_claims.md"


def _cells(head: list[str], row: list[Any]) -> list[str]:
    """``row`` rendered as the studies render a table row, split into cells."""
    from llmopt.papers.chen.studies import md_table

    line = md_table(head, [row])[2]
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def test_c_like_sample_statistics_rows() -> None:
    from llmopt.papers.chen.c_like import c_like_values, sample_stats

    for field in ("prompt", "output"):
        st = sample_stats(c_like_values(field))
        row = [field, "C-like (every seed)", int(st["min"]), int(st["max"]), st["mean"], st["median"], st["variance"]]
        assert _cells(["f"] * 7, row) == markdown_row(C_LIKE, (field, "C-like (every seed)"))
    out = sample_stats(c_like_values("output"))
    assert (out["min"], out["max"], out["median"], out["mean"]) == (1, 883, 43, 85.0)
    assert out["variance"] == pytest.approx(9702.048, abs=1e-6)


def _csv(name: str) -> list[dict[str, str]]:
    with (RESULTS / "chen" / "lmsys" / name).open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@needs_trace_data
def test_c_like_record_exp1_n200_seed0() -> None:
    from llmopt.papers.chen.c_like_study import c_like_records
    from llmopt.papers.chen.lmsys_report import SETTINGS

    exp1 = SETTINGS[0]
    (rec,) = c_like_records([0], [200], [exp1])
    (row,) = [r for r in _csv("c_like_records.csv") if r["seed"] == "0" and r["n"] == "200"
              and r["engine"] == "continuous" and exp1.spec in r["params"]]
    for p in ("h-sf", "a-max", "a-min"):
        assert _close(rec[f"latency_{p}"], float(row[f"latency_{p}"])), p
        assert rec[f"evictions_{p}"] == int(row[f"evictions_{p}"]), p


@needs_trace_data
def test_c_like_m_sweep_at_16492() -> None:
    from llmopt.papers.chen.c_like_study import m_sweep
    from llmopt.papers.chen.lmsys_report import SETTINGS

    df = m_sweep(0, 2000, factors=(1,), settings=SETTINGS[:1], holds_all=False)
    got = df.iloc[0].to_dict()
    (row,) = [r for r in _csv("c_like_m_sweep.csv") if r["M"] == "16492" and r["setting"] == "exp1"]
    for p in ("h-sf", "a-max", "a-min", "a-random"):
        for engine in ("cont", "disc"):
            assert _close(got[f"{engine}_{p}"], float(row[f"{engine}_{p}"])), (engine, p)
    assert got["cont_a-min"] / got["cont_h-sf"] > 1.7  # "A_min ≈ H-SF" does not appear at M = 16,492


def test_corollary2_closed_form_rows() -> None:
    from llmopt.papers.chen.studies import theorem_claims as bm
    rows = bm.corollary2_closed_rows(bm.COR2_LAYOUTS[:1])
    for row in rows:
        assert _cells(["c"] * 6, row) == markdown_row(CLAIMS, (row[0], str(row[1])))
    assert rows[0][2] == pytest.approx(2.9239, abs=1e-4) and rows[0][3] == pytest.approx(2.3333, abs=1e-4)


def test_lemma2_vs_ec1_closed_form_rows() -> None:
    from llmopt.papers.chen.studies import theorem_claims as bm
    rows = bm.ec1_closed_rows()
    for row in rows:
        assert _cells(["c"] * 6, row) == markdown_row(CLAIMS, (str(row[0]), f"{row[1]:,.3f}"))
    assert (round(rows[0][1], 4), round(rows[0][3], 4)) == (1.7249, 1.45)


def test_thm2_alpha_half_rows() -> None:
    from llmopt.papers.chen.studies import theorem_claims as bm
    rows, _ = bm.thm2_rows((0.5,))
    for row in rows:
        assert _cells(["c"] * 12, row) == markdown_row(CLAIMS, (f"{row[0]:,.3f}", row[1]))
    assert rows[0][3] == pytest.approx(1 + math.sqrt(2), rel=1e-12)  # the claimed bound α⁻¹(1 + α^(−1/2))/2
