"""Three readings of C's A_min (Algorithm 2) side by side with Lemma 2 and with C §6.

Algorithm 2's admission check ignores running requests that have outlived their lower bound
``õ`` (DIGEST I-33). The registered ``a-min`` projects them with ``max(õ, a + 1)`` instead
(DIGEST's fix, the default ``running_estimate="certified"``); the printed rule (``"literal"``)
overflows memory; ``"repaired"`` admits by the printed rule and then cancels requests of the
batch in ascending ``õ`` until the next step fits, which keeps the over-admission and churn of
C's analysis. This benchmark measures the three on

* the ``chen-theory`` Figure 1 / Figure 2 / Figure 3 instances (seed 0; s = 1, n = 20,000):
  A_min / H-SF beside Lemma 2 evaluated at s = 1 on the instance's empirical distribution;
* the ``chen-lmsys`` instances at n = 2,000 (seed 0; continuous engine, Llama2-70B cost model,
  M = 16,492): mean latency / H-SF's in the five prediction settings of C §6.

Every schedule is re-verified by the checker; a run that overflows is reported as such.

    python benchmarks/amin_readings.py            # about 7 minutes (one core)
    python benchmarks/amin_readings.py --write    # also writes results/amin_readings/README.md
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import SimulationError, simulate
from llmopt.papers.chen.lmsys_report import SETTINGS
from llmopt.papers.chen.theory import empirical_distribution, lemma2_cr
from llmopt.papers.chen.theory_report import CHEN_THEORY
from llmopt.policies import make_policy_spec
from llmopt.verify.checker import check_schedule
from llmopt.verify.timed import check_timed_schedule
from llmopt.workloads import WORKLOADS
from llmopt.workloads.chen import chen_lmsys

READINGS = ("certified", "literal", "repaired")
THEORY_LABELS = ("F1 u=2", "F1 u=5", "F1 u=10", "F1 u=20", "F1 u=50")


def _theory_labels() -> list[str]:
    """Figure 1 entries plus every Figure 2 A_min row and every Figure 3 entry of the suite."""
    labels = [w.label for w in CHEN_THEORY.workloads]
    return list(THEORY_LABELS) + [x for x in labels if x.startswith(("F2", "F3")) and "A_ℓ" not in x]


def theory_rows() -> list[dict[str, Any]]:
    rows = []
    specs = {w.label: w for w in CHEN_THEORY.workloads}
    for label in _theory_labels():
        w = specs.get(label)
        if w is None:
            continue
        inst = WORKLOADS.get(w.workload)(0, **dict(w.params))
        ell = min(r.lower or 1 for r in inst.requests)
        u = max(r.upper or r.output for r in inst.requests)
        s = inst.requests[0].prompt
        x = empirical_distribution([r.output for r in inst.requests], ell, u)
        hsf = simulate(inst, make_policy_spec("h-sf")).tel
        row: dict[str, Any] = {"entry": label, "n": inst.n, "M": inst.M, "lemma2_s": lemma2_cr(x, ell, s)}
        for reading in READINGS:
            t0 = time.perf_counter()
            try:
                sched = simulate(inst, make_policy_spec(f"a-min:running_estimate={reading}", seed=0))
            except SimulationError as exc:
                row[reading] = f"overflow ({str(exc).split(':')[0]})"
                continue
            assert check_schedule(inst, sched.starts, evictions=sched.evictions).ok
            row[reading] = f"{sched.tel / hsf:.3f} ({len(sched.evictions):,} canc., {time.perf_counter() - t0:.1f} s)"
        rows.append(row)
        print(row, flush=True)
    return rows


def lmsys_rows(n: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    cost = make_cost_model("llama2-70b-a100-tp2")
    rows = []
    for setting in SETTINGS:
        inst = chen_lmsys(seed, n=n, predictions=setting.spec)
        hsf = simulate_continuous(inst, make_policy_spec("h-sf"), cost).mean_latency
        assert hsf is not None
        row: dict[str, Any] = {"setting": setting.key, "h-sf (s)": hsf}
        for reading in READINGS:
            try:
                sched = simulate_continuous(inst, make_policy_spec(f"a-min:running_estimate={reading}", seed=seed),
                                            cost)
            except SimulationError as exc:
                row[reading] = f"overflow ({str(exc).split(':')[0]})"
                continue
            rep = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                                       evictions=sched.evictions)
            assert rep.ok, rep.violations
            row[reading] = f"{(sched.mean_latency or 0.0) / hsf:.3f} ({len(sched.evictions):,} canc.)"
        rows.append(row)
        print(row, flush=True)
    return rows


def _md(rows: list[dict[str, Any]]) -> str:
    head = list(rows[0])
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r.values()) + " |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write results/amin_readings/README.md")
    args = ap.parse_args()
    t0 = time.perf_counter()
    theory, lmsys = theory_rows(), lmsys_rows()
    took = time.perf_counter() - t0
    text = (
        "# Three readings of A_min (C Algorithm 2)\n\n"
        f"`python benchmarks/amin_readings.py --write` ({took:.0f} s on one core). Readings: *certified* "
        "(registered default, DIGEST I-33: running requests past õ projected with max(õ, a+1)); *literal* (the "
        "printed check: they count as finished); *repaired* (literal admission, then requests of the batch "
        "cancelled in ascending õ until the next step fits; C's churn, feasible). Cells: A_min / H-SF "
        "(TEL in the discrete engine; mean latency in the continuous one) and the number of cancellations. "
        "Every schedule re-verified by the checker.\n\n"
        "## chen-theory instances (seed 0, s = 1), beside Lemma 2 at s = 1 on the instance's outputs\n\n"
        + _md(theory)
        + "\n## chen-lmsys at n = 2,000 (seed 0, Llama2-70B 2×A100, M = 16,492)\n\n"
        + _md(lmsys)
    )
    print(text)
    if args.write:
        out = Path(__file__).resolve().parents[1] / "results" / "amin_readings"
        out.mkdir(parents=True, exist_ok=True)
        (out / "README.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
