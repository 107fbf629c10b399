"""Golden numbers of ``results/jaillet/lmsys/low_demand_threshold.md`` (study ``low-demand-threshold``).

Each published row gives, for one (variant, λ, seed), the outcome of α-protection greedy at every α = 0.01 … 0.50
(10,000 LMSYS requests) and the smallest loop-free α derived from it. The tests rerun the two α on either side of a
row's threshold — the last looping α and the first loop-free one — and compare the outcomes with the committed
pattern, for our reading and the released simulator's admission, at both demand levels (seed 0); they also check that
every row's threshold is the one its pattern gives. A failure means a change moved a published number: if intended,
rerun the command in the file's first lines and update the hard-coded thresholds here.
"""

from __future__ import annotations

import pytest
from golden_support import RESULTS, markdown_row
from helpers import needs_trace_data

MD = RESULTS / "jaillet" / "lmsys" / "low_demand_threshold.md"
#: (variant, λ, seed) → the smallest loop-free α the committed file reports (quoted in its conclusion).
PINNED = {
    ("ours", 10, 0): 0.09,
    ("ours", 50, 0): 0.27,
    ("released admission, B = 136", 10, 0): 0.24,
    ("released admission, B = 136", 50, 0): 0.22,
}


def _row(variant: str, rate: int, seed: int) -> tuple[float, float, str]:
    cells = markdown_row(MD, (variant, str(rate), str(seed)))
    return float(cells[3]), float(cells[4]), cells[5].strip("`")


def test_low_demand_threshold_rows_are_their_patterns() -> None:
    from llmopt.papers.jaillet.studies import low_demand_threshold as mod

    for line in MD.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[5].startswith("`"):
            pat = cells[5].strip("`")
            assert len(pat) == len(mod.ALPHAS), line
            assert mod.fmt_threshold(mod.threshold(pat)) == cells[3], line
            assert mod.fmt_threshold(mod.threshold(pat, "cLT")) == cells[4], line
    for (variant, rate, seed), alpha in PINNED.items():
        assert _row(variant, rate, seed)[0] == pytest.approx(alpha), (variant, rate, seed)


@needs_trace_data
@pytest.mark.parametrize("variant,rate,seed", sorted(PINNED))
def test_low_demand_threshold_recomputed(variant: str, rate: int, seed: int) -> None:
    from llmopt.papers.jaillet.studies import low_demand_threshold as mod

    loop_free, _, pat = _row(variant, rate, seed)
    v = mod.BY_KEY[variant]
    inst = mod.instance_for(v, float(rate), seed, 10_000)
    cost = mod.cost_model(v.cost)
    for alpha in (round(loop_free - 0.01, 2), loop_free):
        i = mod.ALPHAS.index(alpha)
        got, _ = mod.outcome(inst, v.policy(alpha), cost)
        assert got == pat[i], f"{variant} λ={rate} seed={seed} α={alpha}: committed {pat[i]!r}, recomputed {got!r}"
