"""A_min's options for C's tie rule and the cycle guard (llmopt.policies.a_min): ``ties`` and ``cycle_guard``."""

from __future__ import annotations

import random

import pytest

from llmopt.engine.discrete import EvictionLoopError, simulate
from llmopt.model.instance import Instance, Request
from llmopt.papers.chen.studies.amin_readings import guard_instances
from llmopt.policies.a_min import AMin

#: Four requests that can only run one at a time (s = 1, o = 3, exact interval [3, 3], M = 4): the start order
#: is the order of their random ties.
ONE_AT_A_TIME = Instance(4, tuple(Request(f"r{i}", 0, 1, 3, 3, 3) for i in range(4)))
#: The hand-traced cycle of the AMin docstring (two requests with õ = 3 that fit together only briefly).
CYCLE = Instance(9, (Request("B", 2, 2, 4, 3, 8), Request("A", 1, 3, 4, 3, 4)))


class _StartOrderTies(AMin):
    """A deterministic transcription: every tie 0, so equal-õ requests keep start order."""

    def _tie(self) -> float:
        return 0.0


def _order(policy: AMin) -> list[str]:
    starts = simulate(ONE_AT_A_TIME, policy).starts
    return sorted(starts, key=starts.__getitem__)


def test_per_step_ties_redraw_the_waiting_order_at_every_decision():
    """With one tie per request the start order is the order of the first four draws of ``Random(seed)``
    (one per arrival); with per-step ties it is redrawn at each of the four decisions, so it differs on some
    seeds. Breakage caught: ``ties="per-step"`` ignored (the orders agree on every seed)."""
    differ = 0
    for seed in range(10):
        rng = random.Random(seed)
        draws = [rng.random() for _ in range(4)]
        once = _order(AMin(seed=seed))
        assert once == [f"r{i}" for i in sorted(range(4), key=draws.__getitem__)]
        per_step = _order(AMin(seed=seed, ties="per-step"))
        assert sorted(per_step) == sorted(once)
        differ += per_step != once
    assert differ >= 3


def test_the_repeat_guard_comes_on_at_the_first_repeated_state():
    """The docstring's cycle under start-order ties: A is cancelled at 4, B at 6, and at 8 the state of step 4
    is back (the other request at a = 3 = õ, the same õ everywhere), so the guard comes on at once and cancels B
    (a = 1) instead of A: TEL 19, against 27 for the stale-count guard (four stale cancellations first) and a
    loop without a guard. Breakage caught: the state recorded after the guard check (one round late), or the
    guard never coming on (loop)."""
    policy = _StartOrderTies(cycle_guard="repeat")
    sched = simulate(CYCLE, policy)
    assert [(e.t, e.id, e.tokens_lost) for e in sched.evictions] == [(4, "A", 3), (6, "B", 3), (8, "B", 1)]
    assert sched.tel == 19 and policy.guarded == 1
    assert simulate(CYCLE, _StartOrderTies()).tel == 27
    with pytest.raises(EvictionLoopError):
        simulate(CYCLE, _StartOrderTies(cycle_guard="off"), loop_limit=50)


@pytest.mark.parametrize("estimate", ["certified", "repaired"])
def test_with_deterministic_ties_the_repeat_guard_changes_only_runs_that_loop(estimate):
    """Deterministic ties make a repeated state a cycle for ever, so a run that finishes without a guard never
    repeats a state and ``"repeat"`` leaves it as it was; and every run that loops without a guard finishes with
    it. Breakage caught: the guard switched on without a repeat (``_repeated = True`` on every round); the state
    missing the tokens of the running requests (unequal states taken for a repeat)."""
    loops = 0
    for inst in guard_instances(150, seed=1):
        try:
            off = simulate(inst, _StartOrderTies(running_estimate=estimate, cycle_guard="off"), loop_limit=300)
        except EvictionLoopError:
            loops += 1
            simulate(inst, _StartOrderTies(running_estimate=estimate, cycle_guard="repeat"))
            continue
        guarded = simulate(inst, _StartOrderTies(running_estimate=estimate, cycle_guard="repeat"))
        assert (guarded.tel, guarded.starts, guarded.evictions) == (off.tel, off.starts, off.evictions)
    assert loops > 0


def test_bad_options_are_refused_and_named():
    with pytest.raises(ValueError, match="ties"):
        AMin(ties="per-sort")
    with pytest.raises(ValueError, match="cycle_guard"):
        AMin(cycle_guard="always")
    assert AMin(ties="per-step", cycle_guard="repeat").name == "a-min(ties=per-step,cycle_guard=repeat)"
    assert AMin().name == "a-min"


def test_the_variants_section_prints_each_change_from_its_rows():
    """``amin-readings``' variants section: per-step change ``b / a − 1`` and seed change ``c / a − 1`` per cell,
    their ranges, and the guard table's counts. Breakage caught: the change printed as ``a / b − 1``; a range taken
    over the wrong reading."""
    from llmopt.papers.chen.studies.amin_readings import variants_lines

    rows = [{"kind": "ties", "entry": "x exp1", "reading": "certified", "a": 2.0, "b": 1.9, "c": 2.1},
            {"kind": "ties", "entry": "x exp1", "reading": "repaired", "a": 4.0, "b": 5.0, "c": 3.0},
            {"kind": "guard", "entry": "stale", "reading": "certified", "runs": 10, "finished": 9, "changed": 1,
             "rescued": 1, "looped": 1, "example": "TEL 5 → 4"}]
    text = "\n".join(variants_lines(rows))
    row = ("| §6 x exp1 | 2.000 → 1.900 (-5.0%); seed 1: 2.100 (+5.0%) | 4.000 → 5.000 (+25.0%); seed 1: 3.000 "
           "(-25.0%) |")
    assert row in text
    assert "certified -5.0% … -5.0%; repaired +25.0% … +25.0%" in text
    assert "| certified | stale | 9 of 10 | 1 | 1 of 1 | TEL 5 → 4 |" in text
    assert variants_lines([]) == []
