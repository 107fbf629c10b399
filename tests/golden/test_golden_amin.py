"""Golden numbers of ``results/amin_readings`` (issue 22, item 2): the three readings of C's A_min
(``benchmarks/amin_readings.py``).

The folder publishes only a Markdown table (ratios to 3 decimals, cancellation counts, the step
of an overflow), so each test recomputes one row as the script does and compares the table's
cells exactly — the seconds inside the cells excluded — and also pins the exact integer TELs /
float latencies behind them (hard-coded here, so that a regeneration that moves them shows in
review). A failure means a change moved a published number: if it is intended, rerun
``python benchmarks/amin_readings.py --write`` and update the hard-coded values.
"""

from __future__ import annotations

import re

import pytest
from golden_support import RESULTS, benchmark, markdown_row
from helpers import needs_trace_data

README = RESULTS / "amin_readings" / "README.md"

def _without_seconds(cell: str) -> str:
    """``"1.226 (0 canc., 0.5 s)"`` → ``"1.226 (0 canc.)"`` (the seconds are a timing)."""
    return re.sub(r", [0-9.]+ s\)$", ")", cell)


def test_amin_readings_theory_f1_u2() -> None:
    """``results/amin_readings/README.md``, chen-theory row "F1 u=2" (seed 0, n = 20,000, M = 934):
    Lemma 2 at s = 1 1.243; certified A_min / H-SF 1.226 with 0 cancellations (TEL 655,856 against
    H-SF's 534,907); literal "overflow (step 1)"; repaired 1.298 with 2,840 cancellations (TEL
    694,413). Every schedule re-verified by the checker."""
    from llmopt.engine.discrete import SimulationError, simulate
    from llmopt.policies import make_policy_spec
    from llmopt.verify.checker import check_schedule
    from llmopt.workloads import WORKLOADS

    am = benchmark("amin_readings")
    w = {w.label: w for w in am.CHEN_THEORY.workloads}["F1 u=2"]
    inst = WORKLOADS.get(w.workload)(0, **dict(w.params))
    ell = min(r.lower or 1 for r in inst.requests)
    u = max(r.upper or r.output for r in inst.requests)
    x = am.empirical_distribution([r.output for r in inst.requests], ell, u)
    lemma2 = am.lemma2_cr(x, ell, inst.requests[0].prompt)
    hsf = simulate(inst, make_policy_spec("h-sf")).tel
    cells = {"entry": "F1 u=2", "n": str(inst.n), "M": str(inst.M), "lemma2_s": f"{lemma2:.3f}"}
    tels = {}
    for reading in am.READINGS:
        try:
            sched = simulate(inst, make_policy_spec(f"a-min:running_estimate={reading}", seed=0))
        except SimulationError as exc:
            cells[reading] = f"overflow ({str(exc).split(':')[0]})"
            continue
        assert check_schedule(inst, sched.starts, evictions=sched.evictions).ok
        tels[reading] = (sched.tel, len(sched.evictions))
        cells[reading] = f"{sched.tel / hsf:.3f} ({len(sched.evictions):,} canc.)"
    committed = markdown_row(README, ("F1 u=2",))
    assert list(cells.values()) == [_without_seconds(c) for c in committed], (
        f"{README}: row {committed} recomputed as {list(cells.values())}")
    assert hsf == 534_907 and tels == {"certified": (655_856, 0), "repaired": (694_413, 2_840)}
    assert lemma2 == pytest.approx(1.2426909561998585, rel=1e-9)


@needs_trace_data
def test_amin_readings_lmsys_exp3_x01() -> None:
    """``results/amin_readings/README.md``, chen-lmsys row "exp3 x=0.1" (n = 2,000, seed 0,
    Llama2-70B on 2×A100, continuous engine): H-SF's mean latency 67.765 s, certified 1.106 (520
    cancellations), literal "overflow (iteration 9)", repaired 1.363 (2,107 cancellations). Every
    schedule re-verified by the checker's continuous-time mode."""
    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.engine.discrete import SimulationError
    from llmopt.policies import make_policy_spec
    from llmopt.verify.timed import check_timed_schedule

    am = benchmark("amin_readings")
    setting = next(s for s in am.SETTINGS if s.key == "exp3 x=0.1")
    cost = make_cost_model("llama2-70b-a100-tp2")
    inst = am.chen_lmsys(0, n=2000, predictions=setting.spec)
    hsf = simulate_continuous(inst, make_policy_spec("h-sf"), cost).mean_latency
    cells = {"setting": setting.key, "h-sf (s)": f"{hsf:.3f}"}
    latencies = {}
    for reading in am.READINGS:
        try:
            sched = simulate_continuous(inst, make_policy_spec(f"a-min:running_estimate={reading}", seed=0), cost)
        except SimulationError as exc:
            cells[reading] = f"overflow ({str(exc).split(':')[0]})"
            continue
        rep = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                                   evictions=sched.evictions)
        assert rep.ok, rep.violations
        latencies[reading] = sched.mean_latency
        cells[reading] = f"{(sched.mean_latency or 0.0) / hsf:.3f} ({len(sched.evictions):,} canc.)"
    committed = markdown_row(README, ("exp3 x=0.1",))
    assert list(cells.values()) == committed, f"{README}: row {committed} recomputed as {list(cells.values())}"
    assert hsf == pytest.approx(67.76490133144485, rel=1e-9)
    assert latencies["certified"] == pytest.approx(74.96897188402623, rel=1e-9)
    assert latencies["repaired"] == pytest.approx(92.3760908407872, rel=1e-9)
