"""Golden numbers of ``results/jaillet/j0-theory`` (issue 24 item 5): two rows of ``thm62.md`` recomputed.

A failure means a change moved a published number: if intended, regenerate with
``llmopt study run j0-theory --out results/jaillet/j0-theory`` (the folder's README gives the command) and
update the values here.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from golden_support import RESULTS, markdown_row

from llmopt.papers.jaillet.theory import run_thm62


@pytest.mark.parametrize("eps,M,opt,ratio", [("1/3", 36, 84, "2.500"), ("1/4", 256, None, "4.738")])
def test_thm62_rows(eps, M, opt, ratio):
    """ε = 1/3, M = 36 (OPT 84, above the printed A_3's 78) and ε = 1/4, M = 256 (first M past 1/ε)."""
    run = run_thm62(M, Fraction(eps), "mc-sf")
    cells = (eps, str(M), str(run.n), str(run.opt), f"{run.t_first}, {run.ratio:.3f}")
    assert markdown_row(RESULTS / "jaillet" / "j0-theory" / "thm62.md", cells)
    assert cells[4] == f"0, {ratio}"
    if opt is not None:
        assert run.opt == opt
