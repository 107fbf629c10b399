"""Prediction-interval policies of C (H-SF, A_max, A_min, multi-interval A_min, A_ℓ, A_random).

Hand breakages each test caught (applied one at a time, then restored):

* A_min: cancelled jobs not re-queued (the printed Algorithm 2) → T-9 stalls;
  ``õ ← a`` replaced by ``õ ← ℓ`` → the certified-bound property fails;
  eviction order by descending ``õ`` → T-9's cancelled job and TEL change;
  the certified projection ``max(õ, a + 1)`` replaced by ``õ`` → overflow on the I-33 instance;
  the overflow wake-up dropped → the engine reports an overflow.
* A_max: projecting with ``ℓ`` instead of ``u`` → Example 1 gives TEL 5, not 9.
* A_ℓ: cancelling at ``ℓ + 1`` tokens instead of ``ℓ`` → overflow / wrong recomputed tokens;
  promoted jobs re-queued at the front → T-9 TEL differs.
* The engines' visibility rule: a policy's declared ``HIDDEN`` ignored → the hidden test fails.
"""

from __future__ import annotations

import dataclasses
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import ConstantCostModel, make_cost_model
from llmopt.engine.discrete import SimulationError, Visibility, simulate
from llmopt.model.instance import Instance, Request
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import make_policy_spec
from llmopt.policies.a_min import AMin
from llmopt.policies.intervals import IntervalPolicyError
from llmopt.verify.checker import check_schedule
from llmopt.verify.timed import check_timed_schedule

PREDICTION_POLICIES = ("a-max", "a-min", "a-min:readmit=next-step", "a-ell")
ALL_POLICIES = ("h-sf", "a-random") + PREDICTION_POLICIES


def shared(M: int, outputs: list[int], lo: int, hi: int, s: int = 1) -> Instance:
    return Instance(M, tuple(Request(f"r{i}", 0, s, o, lo, hi) for i, o in enumerate(outputs)))


def run(inst: Instance, spec: str, **kw):
    sched = simulate(inst, make_policy_spec(spec, **kw))
    report = check_schedule(inst, sched.starts, evictions=sched.evictions)
    assert report.ok, report.violations
    assert report.tel == sched.tel
    return sched


# --- DIGEST T-1: C Example 1 ------------------------------------------------------------------

EXAMPLE1 = shared(10, [1] * 5, 1, 4)


def test_example1_hsf_runs_all_five_at_once():
    sched = run(EXAMPLE1, "h-sf")
    assert sched.tel == 5 and set(sched.starts.values()) == {0}


def test_example1_amax_runs_two_per_batch():
    sched = run(EXAMPLE1, "a-max")
    assert sched.tel == 9
    assert sorted(sched.starts.values()) == [0, 0, 1, 1, 2]


def test_example1_amin_matches_hsf():
    sched = run(EXAMPLE1, "a-min")
    assert sched.tel == 5 and not sched.evictions


# --- DIGEST T-9: A_min with one cancellation ---------------------------------------------------

T9 = shared(6, [1, 3, 3], 1, 4)


def test_t9_amin_cancels_once_and_readmits_in_the_same_step():
    sched = run(T9, "a-min")
    assert sched.tel == 9
    assert len(sched.evictions) == 1
    (ev,) = sched.evictions
    assert ev.t == 2 and ev.tokens_lost == 2 and ev.id in ("r1", "r2")
    assert sched.starts[ev.id] == 2  # re-admitted at once (DIGEST I-32)


def test_t9_amin_next_step_readmission_costs_one_step():
    sched = run(T9, "a-min:readmit=next-step")
    assert sched.tel == 10
    (ev,) = sched.evictions
    assert sched.starts[ev.id] == 3


def test_t9_hsf_and_amax():
    assert run(T9, "h-sf").tel == 9
    tels = [run(T9, "a-max", seed=seed).tel for seed in range(300)]
    assert set(tels) == {12, 14, 16}
    assert statistics.mean(tels) == pytest.approx(14, abs=0.4)  # uniform order: (12 + 14 + 16) / 3


def test_t9_aell_cancels_both_long_jobs_at_ell_tokens():
    sched = run(T9, "a-ell")
    assert sorted((e.id, e.t, e.tokens_lost) for e in sched.evictions) == [("r1", 1, 1), ("r2", 1, 1)]
    assert sched.tel == 12  # r0: 1; r1 restarts at 1 (done 4); r2 waits for it, starts 4 (done 7)


def test_amin_cancels_the_smallest_pseudo_length_first():
    """Both run from 0; at t = 3 the next batch needs 5 + 5 > 8, and A (õ = 1) goes, not B (õ = 3)."""
    inst = Instance(8, (Request("A", 0, 1, 4, 1, 4), Request("B", 0, 1, 4, 3, 4)))
    for seed in range(5):
        sched = run(inst, "a-min", seed=seed)
        assert [(e.id, e.t, e.tokens_lost) for e in sched.evictions] == [("A", 3, 3)]
        assert sched.starts == {"A": 3, "B": 0} and sched.tel == 11


# --- the two fixes of Algorithm 2 -----------------------------------------------------------------

#: A running job past its lower bound: the printed check (I-33) ignores its memory and overflows.
I33 = Instance(10, (Request("r0", 3, 3, 1, 1, 7), Request("r1", 0, 4, 6, 4, 6)))


def test_literal_running_estimate_overflows_and_the_fix_does_not():
    with pytest.raises(SimulationError, match="overflows memory"):
        simulate(I33, make_policy_spec("a-min:running_estimate=literal"))
    sched = run(I33, "a-min")
    assert sched.starts == {"r1": 0, "r0": 6}  # r1 is projected with a + 1 = 5 tokens at t = 4 → r0 waits


def test_repaired_reading_churns_where_the_certified_one_does_not():
    """All ℓ = 1: the certified projection fills only the next step and never cancels here,
    while the repaired literal admission over-admits and cancels, yet stays feasible."""
    inst = Instance(6, tuple(Request(f"r{i}", 0, 1, o, 1, 5) for i, o in enumerate([4, 3, 2, 1])))
    certified = run(inst, "a-min")
    repaired = run(inst, "a-min:running_estimate=repaired")
    assert not certified.evictions and certified.tel == 12
    assert len(repaired.evictions) == 8 and repaired.tel == 28  # churn costs here: a small M
    with pytest.raises(SimulationError, match="overflows memory"):
        simulate(inst, make_policy_spec("a-min:running_estimate=literal"))


class _Audited(AMin):
    """A_min that records, after every decision, the pseudo lengths of unfinished requests."""

    def reset(self, M: int) -> None:
        super().reset(M)
        self.seen: list[dict[str, int]] = []

    def decide(self, t: int):
        d = super().decide(t)
        self.seen.append(dict(self.pseudo))
        return d


def small_interval_instances(max_n: int = 7):
    @st.composite
    def build(draw):
        M = draw(st.integers(6, 30))
        n = draw(st.integers(1, max_n))
        reqs = []
        for i in range(n):
            s = draw(st.integers(1, max(1, M // 3)))
            o = draw(st.integers(1, M - s))
            lo = draw(st.integers(1, o))
            hi = draw(st.integers(o, M))
            reqs.append(Request(f"r{i}", draw(st.integers(0, 6)), s, o, lo, hi))
        return Instance(M, tuple(reqs))

    return build()


@settings(max_examples=150, deadline=None)
@given(small_interval_instances(), st.integers(0, 3), st.sampled_from(["same-step", "next-step"]))
def test_repaired_reading_is_always_feasible(inst, seed, readmit):
    run(inst, f"a-min:running_estimate=repaired,readmit={readmit}", seed=seed)


@settings(max_examples=150, deadline=None)
@given(small_interval_instances(), st.integers(0, 3))
def test_amin_pseudo_lengths_are_certified_lower_bounds_that_never_decrease(inst, seed):
    policy = _Audited(seed=seed)
    sched = simulate(inst, policy)
    assert check_schedule(inst, sched.starts, evictions=sched.evictions).ok
    last: dict[str, int] = {}
    for snapshot in policy.seen:
        for rid, o_tilde in snapshot.items():
            r = inst.by_id(rid)
            assert r.lower <= o_tilde <= r.output
            assert o_tilde >= last.get(rid, 0)
            last[rid] = o_tilde
    # every cancellation raised õ to the tokens it had produced
    assert all(last.get(e.id, inst.by_id(e.id).output) >= e.tokens_lost for e in sched.evictions)


@settings(max_examples=120, deadline=None)
@given(small_interval_instances(), st.sampled_from(ALL_POLICIES), st.integers(0, 2))
def test_every_schedule_passes_the_checker_and_is_deterministic(inst, spec, seed):
    a = simulate(inst, make_policy_spec(spec, seed=seed))
    b = simulate(inst, make_policy_spec(spec, seed=seed))
    assert dict(a.starts) == dict(b.starts) and a.evictions == b.evictions
    report = check_schedule(inst, a.starts, evictions=a.evictions)
    assert report.ok and report.tel == a.tel


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=8, unique=True), st.integers(13, 40), st.integers(0, 3))
def test_exact_intervals_reduce_amin_and_amax_to_hsf(outputs, M, seed):
    """With ℓ = u = o, distinct outputs and all at 0, A_min and A_max are shortest-first."""
    inst = Instance(M, tuple(Request(f"r{i}", 0, 1, o, o, o) for i, o in enumerate(outputs)))
    hsf = simulate(inst, make_policy_spec("h-sf"))
    for spec in ("a-min", "a-max"):
        sched = simulate(inst, make_policy_spec(spec, seed=seed))
        assert dict(sched.starts) == dict(hsf.starts) and not sched.evictions


@settings(max_examples=100, deadline=None)
@given(small_interval_instances())
def test_aell_with_exact_lower_ends_is_fcfs(inst):
    """With ℓ = o no job is ever cancelled, and A_ℓ is FIFO with the look-ahead check."""
    exact = dataclasses.replace(inst, requests=tuple(dataclasses.replace(r, lower=r.output)
                                                     for r in inst.requests))
    a = simulate(exact, make_policy_spec("a-ell"))
    fcfs = simulate(exact, make_policy_spec("fcfs"))
    assert not a.evictions and dict(a.starts) == dict(fcfs.starts)


# --- information model -------------------------------------------------------------------------

class _Spy(AMin):
    def on_arrival(self, t, request):
        self.known = getattr(self, "known", []) + [request.output_known]
        super().on_arrival(t, request)


@pytest.mark.parametrize("visibility", [None, Visibility.FULL])
def test_prediction_policies_never_see_true_outputs(visibility):
    spy = _Spy()
    simulate(T9, spy, visibility=visibility)
    assert spy.known == [False, False, False]


def test_missing_interval_names_the_request():
    inst = Instance(10, (Request("a", 0, 1, 2, 1, 3), Request("b", 0, 1, 2)))
    for spec in PREDICTION_POLICIES:
        with pytest.raises(IntervalPolicyError, match="'b'"):
            simulate(inst, make_policy_spec(spec))


def test_upper_ends_above_m_minus_s_are_clamped():
    """u above M − s would block a request forever; o <= M − s is public, so it is clamped."""
    inst = Instance(6, tuple(Request(f"r{i}", 0, 2, 1, 1, 100) for i in range(2)))
    sched = run(inst, "a-max")  # projected peak 2 + 4 = 6 = M: one at a time
    assert sorted(sched.starts.values()) == [0, 1] and sched.tel == 1 + 2
    assert run(inst, "a-ell").tel == 2


def test_amax_with_missed_predictions_stops_with_an_overflow():
    inst = Instance(8, (Request("a", 0, 1, 6, 1, 2), Request("b", 0, 1, 6, 1, 2)), predictions_may_miss=True)
    with pytest.raises(SimulationError, match="overflow"):
        simulate(inst, make_policy_spec("a-max"))
    assert run(inst, "a-min").tel >= 6 + 6


def test_aell_promotes_same_step_cancellations_in_arrival_order():
    """r2 and r10 start at 0, are promoted together at 1, and only one fits: r2 (earlier in the
    queue) goes first, although "r10" < "r2" as strings."""
    reqs = [Request(f"r{i}", 0 if i in (2, 10) else 100, 8 if i in (2, 10) else 1, 5 if i in (2, 10) else 1, 1, 5)
            for i in range(11)]
    sched = run(Instance(22, tuple(reqs)), "a-ell")
    assert sched.starts["r2"] == 1 and sched.starts["r10"] == 5  # fits beside r2 from step 5


def test_aell_survives_missed_predictions():
    """A promoted run that outlives u is cancelled again and re-run with õ = M − s (no overflow)."""
    inst = Instance(8, (Request("r0", 0, 1, 4, 1, 2), Request("r1", 3, 4, 3, 1, 3)), predictions_may_miss=True)
    sched = run(inst, "a-ell")
    assert [(e.id, e.t, e.tokens_lost) for e in sched.evictions][:2] == [("r0", 1, 1), ("r0", 3, 2)]


@settings(max_examples=150, deadline=None)
@given(small_interval_instances(), st.integers(0, 2))
def test_missed_predictions_never_break_amin_or_aell(inst, seed):
    """With intervals anywhere (o outside them allowed), A_min and A_ℓ still run and never overflow."""
    import random

    rng = random.Random(seed)
    wild = dataclasses.replace(inst, predictions_may_miss=True, requests=tuple(
        dataclasses.replace(r, lower=lo, upper=lo + rng.randint(0, inst.M))
        for r in inst.requests for lo in [rng.randint(1, inst.M)]))
    for spec in ("a-min", "a-ell"):
        run(wild, spec, seed=seed)


# --- multi-interval A_min ---------------------------------------------------------------------------

def test_multi_interval_amin_accepts_buckets_and_equals_amin():
    bins = [(1, 2), (3, 4), (5, 8)]
    outputs = [1, 4, 7, 2, 3, 5, 8, 1]
    reqs = tuple(Request(f"r{i}", 0, 1, o, *next(b for b in bins if b[0] <= o <= b[1])) for i, o in enumerate(outputs))
    inst = Instance(12, reqs)
    a = run(inst, "a-min-multi", seed=3)
    b = run(inst, "a-min", seed=3)
    assert dict(a.starts) == dict(b.starts) and a.evictions == b.evictions


def test_multi_interval_amin_accepts_buckets_that_touch():
    """DIGEST §2.19: buckets need only u_j <= ℓ_{j+1}."""
    inst = Instance(20, (Request("x", 0, 1, 3, 1, 5), Request("y", 0, 1, 7, 5, 10)))
    assert run(inst, "a-min-multi").tel == run(inst, "a-min").tel


def test_multi_interval_amin_rejects_overlapping_intervals():
    inst = Instance(12, (Request("x", 0, 1, 3, 1, 4), Request("y", 0, 1, 4, 3, 6)))
    with pytest.raises(IntervalPolicyError, match="'y'.*overlaps.*'x'"):
        simulate(inst, make_policy_spec("a-min-multi"))


# --- A_random ---------------------------------------------------------------------------------------

def test_arandom_is_a_seeded_permutation_with_prefix_rule():
    inst = shared(4, [1, 1, 1, 1], 1, 1)  # one request at a time (peak 2 each, M = 4 → two)
    orders = {tuple(sorted(run(inst, "a-random", seed=s).starts, key=run(inst, "a-random", seed=s).starts.get))
              for s in range(20)}
    assert len(orders) > 1  # the seed changes the order
    assert run(inst, "a-random", seed=5).starts == run(inst, "a-random", seed=5).starts


# --- the continuous engine ------------------------------------------------------------------------------

def timed(inst: Instance, spacing: float = 1.0) -> TimedInstance:
    return TimedInstance(inst.M, tuple(TimedRequest(r.id, r.arrival * spacing, r.prompt, r.output, r.lower, r.upper)
                                       for r in inst.requests))


@settings(max_examples=60, deadline=None)
@given(small_interval_instances(), st.sampled_from(ALL_POLICIES))
def test_one_second_batches_reproduce_the_discrete_engine(inst, spec):
    d = simulate(inst, make_policy_spec(spec))
    c = simulate_continuous(timed(inst), make_policy_spec(spec), ConstantCostModel(1.0))
    assert c.total_latency == pytest.approx(d.tel)
    assert c.recomputed_tokens == d.recomputed_tokens
    assert len(c.evictions) == len(d.evictions)


@pytest.mark.parametrize("spec", ALL_POLICIES)
def test_real_cost_model_runs_pass_the_timed_checker(spec):
    import random

    rng = random.Random(7)
    reqs = []
    for i in range(80):
        o = rng.randint(1, 300)
        reqs.append(TimedRequest(f"r{i}", rng.random() * 5, rng.randint(1, 200), o, max(1, o // 3), 3 * o))
    inst = TimedInstance(4000, tuple(reqs))
    cost = make_cost_model("llama2-70b-a100-tp2")
    sched = simulate_continuous(inst, make_policy_spec(spec), cost)
    report = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                                  evictions=sched.evictions)
    assert report.ok, report.violations
    assert report.mean_latency == pytest.approx(sched.mean_latency, rel=1e-12)


# --- H-SF is MC-SF with the true outputs: ties by arrival ------------------------------------------


def test_hsf_breaks_output_ties_by_earliest_arrival_by_hand():
    """M = 4. ``r0`` (a = 0, s = 1, o = 3) peaks at 4 tokens at its completion 3, so ``r1`` (a = 1) and
    ``r2`` (a = 2), both s = 2, o = 1 (3 tokens each), wait until 3; then only one fits per step.
    Equal outputs: the earlier arrival ``r1`` goes first (3), ``r2`` next (4) — as MC-SF does.

    Breakage caught: ``llmopt/policies/intervals.py`` ``HSF.key`` ``return (request.output,
    request.arrival)`` → ``(request.output, -request.arrival)`` (ties by latest arrival).
    """
    inst = Instance(4, (Request("r0", 0, 1, 3), Request("r1", 1, 2, 1), Request("r2", 2, 2, 1)))
    hsf = run(inst, "h-sf")
    assert dict(hsf.starts) == {"r0": 0, "r1": 3, "r2": 4}
    assert dict(simulate(inst, make_policy_spec("mc-sf")).starts) == dict(hsf.starts)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(1, 3), st.integers(1, 3)), min_size=2, max_size=8),
       st.integers(6, 10))
def test_hsf_equals_mcsf_on_instances_with_output_ties(rows, M):
    """The documented equivalence (DIGEST §2.16, I-28): with the true ``o_i``, H-SF's schedule is
    MC-SF's, start for start (outputs 1–3 make ties common, arrivals 0–4 make them differ).

    Breakage caught: ``llmopt/policies/intervals.py`` H-SF's key ``(request.output, -request.arrival)``.
    """
    inst = Instance.from_tuples(M, rows)
    hsf = simulate(inst, make_policy_spec("h-sf"))
    assert dict(hsf.starts) == dict(simulate(inst, make_policy_spec("mc-sf")).starts)
