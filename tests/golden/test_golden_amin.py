"""Golden numbers of ``results/chen/amin-readings`` (issue 22 item 2, issue 25 item 3): every reading of C's
A_min (study ``amin-readings``, :mod:`llmopt.papers.chen.studies.amin_readings`).

The folder publishes a Markdown table (ratios to 3 decimals, cancellation counts, the step of an
overflow, the best-matching reading) and ``readings.csv``, so each test recomputes one row as the
study does and compares the table's cells exactly, and also pins the exact integer TELs / float
latencies behind them (hard-coded here, so that a regeneration that moves them shows in review).
A failure means a change moved a published number: if it is intended, rerun
``llmopt study run amin-readings --out results/chen/amin-readings`` and update the hard-coded values.
"""

from __future__ import annotations

import pytest
from golden_support import RESULTS, markdown_row
from helpers import needs_trace_data

README = RESULTS / "chen" / "amin-readings" / "README.md"


def test_amin_readings_theory_f1_u2() -> None:
    """``results/chen/amin-readings/README.md``, chen-theory row "F1 u=2" (seed 0, n = 20,000, M = 934):
    Lemma 2 at s = 1 1.243; certified A_min / H-SF 1.226 with 0 cancellations (TEL 655,856 against
    H-SF's 534,907), the same with õ ← a; repaired 1.298 with 2,840 cancellations (TEL 694,413), the same
    with õ ← a; literal "overflow (step 1)" with either update; best match certified. Every schedule
    re-verified by the checker."""
    from llmopt.papers.chen.studies import amin_readings as am

    (row,) = am.theory_rows(["F1 u=2"])
    recomputed = [c.strip() for c in am.table_lines([row], "C")[2].strip().strip("|").split("|")]
    committed = markdown_row(README, ("F1 u=2",))
    assert recomputed == committed, f"{README}: row {committed} recomputed as {recomputed}"
    assert row["hsf"] == 534_907
    assert {k: (row[k]["tel"], row[k]["canc"]) for k in am.READINGS if row[k]["tel"] is not None} == {
        "certified": (655_856, 0), "certified õ←a": (655_856, 0), "repaired": (694_413, 2_840),
        "repaired õ←a": (694_413, 2_840)}
    assert row["best"] == "certified"
    assert row["target"] == pytest.approx(1.2426909561998585, rel=1e-9)


@needs_trace_data
def test_amin_readings_lmsys_exp3_x01() -> None:
    """``results/chen/amin-readings/README.md``, row "chen-lmsys exp3 x=0.1" (n = 2,000, seed 0, Llama2-70B on
    2×A100, continuous engine): H-SF's mean latency 67.765 s, certified 1.106 (520 cancellations),
    repaired 1.363 (2,107 cancellations), certified õ←a 1.123 (537), repaired õ←a 1.679 (5,198), literal
    "overflow (iteration 9)" with either update; best match certified. Every schedule re-verified by the
    checker's continuous-time mode."""
    from llmopt.papers.chen.studies import amin_readings as am

    setting = next(s for s in am.SETTINGS if s.key == "exp3 x=0.1")
    (row,) = am.section6_rows("chen-lmsys", settings=[setting])
    recomputed = [c.strip() for c in am.table_lines([row], "C")[2].strip().strip("|").split("|")]
    committed = markdown_row(README, ("chen-lmsys exp3 x=0.1",))
    assert recomputed == committed, f"{README}: row {committed} recomputed as {recomputed}"
    assert row["hsf"] == pytest.approx(67.76490133144485, rel=1e-9)
    assert row["certified"]["tel"] == pytest.approx(74.96897188402623, rel=1e-9)
    assert row["repaired"]["tel"] == pytest.approx(92.3760908407872, rel=1e-9)
    assert row["certified õ←a"]["tel"] == pytest.approx(76.0906937853762, rel=1e-9)
    assert row["repaired õ←a"]["tel"] == pytest.approx(113.77409227808778, rel=1e-9)
    assert row["best"] == "certified"
