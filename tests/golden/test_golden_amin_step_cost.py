"""Golden counts of ``results/perf/amin-step-cost/README.md`` (C Theorem 3, ``benchmarks/amin_step_cost.py``, a speed
measurement; the runs it times are :func:`llmopt.bench.speed_cases.amin_step_run`).

Times are not golden (they depend on the machine); the counts beside them are deterministic: decisions,
cancelling decisions, the largest running set and the admissions per decision at M = 1,000, both
readings. A failure means a change moved them: if intended, rerun
``python benchmarks/amin_step_cost.py --write``.

Breakages caught (by hand): the admission counter wrapped after ``reset`` re-creates the running set
(admissions 0); the repaired reading's take-back counted as a cancellation (cancelling column moves).
"""

from __future__ import annotations

from golden_support import RESULTS, markdown_row

README = RESULTS / "perf" / "amin-step-cost" / "README.md"


def test_counts_at_m_1000() -> None:
    from llmopt.bench.speed_cases import amin_step_run

    for reading in ("certified", "repaired"):
        policy, n = amin_step_run(1000, reading)
        decisions = len(policy.times)
        cells = markdown_row(README, (reading, "1,000"))
        assert cells[2:7] == [f"{n:,}", f"{decisions:,}", f"{len(policy.cancelling):,}",
                              f"{policy.max_running:,}", f"{policy.admissions / max(1, decisions):,.0f}"], (reading,
                                                                                                          cells)
