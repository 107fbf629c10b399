"""The readings of C's A_min (Algorithm 2) as policy specs, and which one matches C's numbers best.

C prints A_min with gaps (DIGEST §2.18, I-32/I-33), so "A_min" is a family of readings; every
C verdict on A_min depends on which one is simulated. The readings compared in
``llmopt/papers/chen/studies/amin_readings.py`` (``results/chen/amin-readings/README.md``) are the combinations of

* the admission projection of a running request past its ``õ`` (``running_estimate``):
  *certified* ``max(õ, a + 1)`` (the registered default), *literal* (the printed check: it
  counts as finished — overflows memory), *repaired* (literal admission, then requests of the
  batch cancelled in ascending ``õ`` until the next step fits: C's churn, feasible);
* the update of ``õ`` on cancellation (``pseudo_update``): ``max(õ, a)`` (default) or
  Algorithm 2's ``õ ← a`` (*assign*, may lower it).

Every reading re-queues a cancelled request in the same step (I-32) and breaks ties at
random (:class:`llmopt.policies.a_min.AMin`).

A reading *matches* one of C's numbers by the log-distance ``|ln(measured / C)|`` between
its simulated ratio to H-SF and C's value for that instance: Lemma 2 evaluated on the
instance (theory instances) or 1 for C §6's "nearly identical to H-SF" claims. A reading
that overflows matches nothing.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "DEFAULT_READING",
    "READINGS",
    "best_reading",
    "log_error",
    "reading_summary",
]

#: Reading label -> policy spec (``a-min`` with options).
READINGS: Mapping[str, str] = {
    "certified": "a-min",
    "certified õ←a": "a-min:pseudo_update=assign",
    "repaired": "a-min:running_estimate=repaired",
    "repaired õ←a": "a-min:running_estimate=repaired,pseudo_update=assign",
    "literal": "a-min:running_estimate=literal",
    "literal õ←a": "a-min:running_estimate=literal,pseudo_update=assign",
}
#: The reading registered as ``a-min`` (see ``results/chen/amin-readings/README.md`` for why).
DEFAULT_READING = "certified"


def log_error(measured: float | None, target: float) -> float | None:
    """``|ln(measured / target)|``, or ``None`` when nothing was measured (e.g. an overflow)."""
    if measured is None or not (measured > 0 and target > 0):
        return None
    return abs(math.log(measured / target))


def best_reading(values: Mapping[str, float | None], target: float) -> str | None:
    """The reading whose ratio is nearest ``target`` in log-distance (first in ``values`` order on a tie)."""
    best, err = None, math.inf
    for key, v in values.items():
        e = log_error(v, target)
        if e is not None and e < err - 1e-12:
            best, err = key, e
    return best


def reading_summary(rows: Sequence[Mapping[str, Any]], readings: Sequence[str], group: str) -> list[dict[str, Any]]:
    """One row per reading over ``rows`` (each with ``"target"``, ``"values"``: reading -> ratio or None).

    Columns: ``group``, ``reading``, ``best`` (rows where it is the best match), ``runs``
    (rows it ran without overflow), ``median |ln err|`` and ``max |ln err|`` (over the rows
    it ran; expressed as a percentage, ``exp(err) − 1``).
    """
    out = []
    for key in readings:
        errs = [e for r in rows if (e := log_error(r["values"].get(key), r["target"])) is not None]
        best = sum(1 for r in rows if best_reading(r["values"], r["target"]) == key)
        med = statistics.median(errs) if errs else None
        out.append({"group": group, "reading": key, "best": best, "runs": len(errs), "of": len(rows),
                    "median_err": None if med is None else math.expm1(med),
                    "max_err": math.expm1(max(errs)) if errs else None})
    return out
