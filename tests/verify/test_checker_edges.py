"""The independent schedule checker (llmopt.verify.checker.check_schedule) at its exact edges.

Each case is one step away from a valid schedule, with memory to spare, so that only the rule under
test can reject it: a start one step before the arrival, and an evicted run that ends one step after
the request's final start (DESIGN §1: an evicted request returns to the waiting queue, so its aborted
run must be over before it starts again).
"""

from __future__ import annotations

import pytest

from llmopt.model.instance import Instance
from llmopt.verify.checker import check_schedule

#: Memory that never binds: every verdict below is about arrivals and runs, never about M.
ROOMY = 100


@pytest.mark.parametrize("delta,ok", [(-2, False), (-1, False), (0, True), (1, True)])
def test_a_start_one_step_before_the_arrival_is_refused(delta, ok):
    """``r0`` (a = 5, s = 2, o = 3) started at ``5 + delta``; ``r1`` (a = 0) runs at 0 so the trace's
    origin is the first arrival either way. A start at 4 is one step early and must be refused,
    like a start at 3; starts at 5 and 6 are valid, with TEL ``(k + 3 − 5) + 2``.

    Breakage caught: mutant checker-arrival-one-early (``if k < r.arrival:`` → ``if k < r.arrival - 1:``,
    a start one step before the arrival accepted).
    """
    inst = Instance.from_tuples(ROOMY, [(5, 2, 3), (0, 1, 2)])
    k = 5 + delta
    rep = check_schedule(inst, {"r0": k, "r1": 0})
    assert rep.ok is ok, rep.violations
    if ok:
        assert rep.tel == (k + 3 - 5) + 2 and rep.violations == ()
    else:
        assert rep.tel is None
        assert rep.violations == (f"request 'r0' starts at {k} before its arrival 5",)


def test_a_start_one_step_before_the_arrival_is_refused_at_large_timestamps():
    """The same edge with a Unix-timestamp clock (the checker's axis is sparse).

    Breakage caught: mutant checker-arrival-one-early (``if k < r.arrival:`` → ``if k < r.arrival - 1:``).
    """
    a = 1_700_000_000
    inst = Instance.from_tuples(ROOMY, [(a, 3, 4)])
    assert check_schedule(inst, {"r0": a}).tel == 4
    rep = check_schedule(inst, {"r0": a - 1})
    assert not rep.ok and rep.violations == (f"request 'r0' starts at {a - 1} before its arrival {a}",)


@pytest.mark.parametrize("evicted_at,ok", [(1, True), (2, False), (3, False)])
def test_an_aborted_run_must_end_by_the_final_start(evicted_at, ok):
    """``r0`` (a = 0, s = 1, o = 4) runs from 0, is evicted at ``evicted_at`` after producing
    ``evicted_at`` tokens (aborted run ``(0, evicted_at]``), and finally starts at 1. An eviction at
    1 ends exactly at the final start (valid: it restarts in the very decision that evicted it,
    TEL = 1 + 4); an eviction at 2 ends one step *after* the final start — the request would run
    twice at once — and must be refused, as must one at 3. Memory (at most 2 · 5 tokens) never binds.

    Breakage caught: mutant checker-aborted-after-final (``runs[-1][1] > final[r.id]`` →
    ``runs[-1][1] > final[r.id] + 1``, an aborted run ending one step after the final start accepted).
    """
    inst = Instance.from_tuples(ROOMY, [(0, 1, 4)])
    rep = check_schedule(inst, {"r0": 1}, evictions=[(evicted_at, "r0", evicted_at)])
    assert rep.ok is ok, rep.violations
    if ok:
        assert rep.tel == 5 and rep.recomputed_tokens == 1
    else:
        assert rep.tel is None
        assert rep.violations == (f"request 'r0': aborted run (0, {evicted_at}] ends after its final start 1",)


def test_the_latest_of_several_aborted_runs_is_the_one_checked_against_the_final_start():
    """Two aborted runs of ``r0`` (a = 0, s = 1, o = 5): ``(0, 2]`` then ``(2, 4]``; a final start at 4
    is valid, at 3 the second run ends one step after it (the first run alone would pass).

    Breakage caught: mutant checker-aborted-after-final (``runs[-1][1] > final[r.id]`` →
    ``runs[-1][1] > final[r.id] + 1``).
    """
    inst = Instance.from_tuples(ROOMY, [(0, 1, 5)])
    evictions = [{"t": 2, "id": "r0", "tokens_lost": 2}, {"t": 4, "id": "r0", "tokens_lost": 2}]
    good = check_schedule(inst, {"r0": 4}, evictions=evictions)
    assert good.ok and good.tel == 9 and good.recomputed_tokens == 4
    bad = check_schedule(inst, {"r0": 3}, evictions=evictions)
    assert not bad.ok
    assert bad.violations == ("request 'r0': aborted run (2, 4] ends after its final start 3",)
