"""What the Chen-paper studies share: Markdown tables as they render them, verified TELs, Matplotlib."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from llmopt.engine.discrete import simulate
from llmopt.policies import make_policy_spec
from llmopt.verify.checker import check_schedule

__all__ = ["md_table", "fmt_cell", "verified_tel", "pyplot"]


def pyplot() -> Any:
    """``matplotlib.pyplot`` with the file-only Agg backend (imported on first use)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def md_table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """The lines of a Markdown table: ``head``, the rule, one line per row (cells by :func:`fmt_cell`)."""
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return out + ["| " + " | ".join(fmt_cell(c) for c in r) + " |" for r in rows]


def fmt_cell(v: Any) -> str:
    """One table cell: ``—`` for a missing value, floats to 3 decimals (thousands grouped, none above 1,000)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)


def verified_tel(inst: Any, spec: str, seed: int = 0) -> tuple[int, int]:
    """Verified TEL and number of cancellations of policy ``spec`` on a discrete instance.

    Raises
    ------
    AssertionError
        If the checker finds the schedule infeasible or its TEL differs from the engine's.
    """
    sched = simulate(inst, make_policy_spec(spec, seed=seed))
    rep = check_schedule(inst, sched.starts, evictions=sched.evictions)
    assert rep.ok and rep.tel == sched.tel, rep.violations
    return sched.tel, len(sched.evictions)
