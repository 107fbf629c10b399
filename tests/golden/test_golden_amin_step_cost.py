"""Golden counts of ``results/amin_step_cost/README.md`` (C Theorem 3, ``benchmarks/amin_step_cost.py``).

Times are not golden (they depend on the machine); the counts beside them are deterministic: decisions,
cancelling decisions, the largest running set and the admissions per decision at M = 1,000, both
readings. A failure means a change moved them: if intended, rerun
``python benchmarks/amin_step_cost.py --write``.

Breakages caught (by hand): the admission counter wrapped after ``reset`` re-creates the running set
(admissions 0); the repaired reading's take-back counted as a cancellation (cancelling column moves).
"""

from __future__ import annotations

from golden_support import RESULTS, benchmark, markdown_row

README = RESULTS / "amin_step_cost" / "README.md"


def test_counts_at_m_1000() -> None:
    bm = benchmark("amin_step_cost")
    for reading in ("certified", "repaired"):
        r = bm.measure(1000, reading)
        cells = markdown_row(README, (reading, "1,000"))
        assert cells[2:7] == [f"{r['n']:,}", f"{r['decisions']:,}", f"{r['cancelling']:,}",
                              f"{r['max_running']:,}", f"{r['admissions']:,.0f}"], (reading, cells)
