"""C's readings and claims: the readings of A_min on a hand-traced case, the cycle guard, Corollary 2's claim
check, Theorem 2's instance, Lemma 2 against Theorem EC.1, and the C-like sample.

Hand breakages each test caught (applied one at a time, then restored):

* ``pseudo_update="assign"`` made to keep ``max(õ, a)`` → the hand-traced case's õ←a readings fail
  (TEL 14 instead of 17); the default made to assign → the certified reading fails (17, not 14).
* The cycle guard's reordering deleted from ``AMin._cancel`` → the start-order transcription loops
  (``EvictionLoopError``) in the guard test and in the property test.
* The cross term dropped from ``multi_interval_cr`` → exact predictions no longer give 1 (the identity
  and the simulated claim-check tests fail).
* ``multi_interval_sup`` returning the sup of the *whole* interval → Corollary 2's C-bins check fails.
* ``ec1_vs_lemma2`` taking the two-point value at ``t = 1`` instead of its maximiser → 1.45 missed.
* The A_max slot count ``ℓ`` in ``thm2_fluid_tels`` replaced by ``ℓ + 1`` → the s = 0 identity fails.
* The C-like knots perturbed by 1 % → the five-statistics test fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import needs_trace_data
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.engine.discrete import EvictionLoopError, SimulationError, simulate
from llmopt.model.instance import Instance, Request
from llmopt.papers.chen import claims as cc
from llmopt.papers.chen.c_like import C_STATS, KNOTS, c_like_values, fit_knots, sample_stats
from llmopt.papers.chen.readings import READINGS, best_reading, log_error
from llmopt.papers.chen.theory import (
    amax_thm2_instance_ratio,
    figure1_cr,
    figure1_worst_distribution,
    lemma2_cr,
    two_point_cr_amin,
)
from llmopt.policies import make_policy_spec
from llmopt.policies.a_min import AMin
from llmopt.verify.checker import check_schedule

# --- the readings on a hand-traced case ------------------------------------------------------------

#: M = 8, s = 1: Y runs past its lower bound and makes X, started later with a smaller õ, be cancelled
#: before X reaches its own ℓ; Z arrives at that step with an õ between X's two possible values.
HAND = Instance(8, (Request("Y", 0, 1, 5, 4, 5), Request("X", 3, 1, 4, 3, 4), Request("Z", 4, 1, 3, 2, 3)))


class _Audited(AMin):
    """A_min recording õ after every decision."""

    def reset(self, M: int) -> None:
        super().reset(M)
        self.seen: dict[int, dict[str, int]] = {}

    def decide(self, t: int):  # type: ignore[no-untyped-def]
        d = super().decide(t)
        self.seen[t] = dict(self.pseudo)
        return d


def _run(inst: Instance, policy):  # type: ignore[no-untyped-def]
    sched = simulate(inst, policy)
    rep = check_schedule(inst, sched.starts, evictions=sched.evictions)
    assert rep.ok and rep.tel == sched.tel, rep.violations
    return sched


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_every_reading_on_the_hand_traced_case(seed: int) -> None:
    """Traced by hand (s = 1 everywhere; "usage after step t" = Σ (s + a + 1) over running requests):

    * t = 0: Y (õ = 4) starts. t = 3: X arrives (õ = 3) and fits: at t' = 4, Y 5 + X 2 = 7; at 6, X 4.
    * t = 4: Y did not complete (o = 5 > õ = 4). Usage after step 4: Y 6 + X 3 = 9 > 8, so the smallest õ,
      X (3 < 4), is cancelled with a = 1 token — below its own ℓ = 3. max: õ_X = 3; õ←a: õ_X = 1. Z arrives
      with õ = 2.
    * certified (Y projected to complete at 5, usage 6): Z (õ 2) fits (6 + 2 = 8), X (õ 3) does not
      (8 + 2). t = 5: Y completes; X fits beside Z. Starts Y 0, Z 4, X 5: TEL 5 + 6 + 3 = **14**.
    * certified õ←a: X (õ 1) now goes first at t = 4, Z waits to 5. At t = 7 X has 3 tokens and Z 2:
      usage 5 + 4 = 9 > 8, X (õ 1 < 2) is cancelled again (3 tokens lost, õ_X = 3) and restarts at 7:
      TEL 5 + 8 + 4 = **17**. Lowering õ cost a second cancellation.
    * repaired (printed admission: Y past õ counts as finished): Z and X are both admitted at 4, the batch
      overflows (6 + 2 + 2 = 10 > 8) and Z (õ 2 < 3) is unstarted; X runs. t = 5: Z starts; t = 7: X has 3
      tokens, Z 2, usage 9 > 8, Z (õ 2) is cancelled (2 tokens) and restarts: TEL 5 + 5 + 6 = **16**.
    * repaired õ←a: X (õ 1) is the one unstarted at 4, Z runs; X restarts at 5: the certified schedule,
      TEL **14**.
    * literal (either update): at t = 4 Y counts as finished, Z and X start, and memory at time 5 is
      Y 6 + Z 2 + X 2 = 10 > 8: overflow.
    """
    expected = {
        "certified": (14, {"Y": 0, "X": 5, "Z": 4}, [(4, "X", 1)], 3),
        "certified õ←a": (17, {"Y": 0, "X": 7, "Z": 5}, [(4, "X", 1), (7, "X", 3)], 1),
        "repaired": (16, {"Y": 0, "X": 4, "Z": 7}, [(4, "X", 1), (7, "Z", 2)], 3),
        "repaired õ←a": (14, {"Y": 0, "X": 5, "Z": 4}, [(4, "X", 1)], 1),
    }
    for key, spec in READINGS.items():
        policy = make_policy_spec(spec, seed=seed)
        if key.startswith("literal"):
            with pytest.raises(SimulationError, match=r"overflows memory at time 5: 10 > M = 8"):
                simulate(HAND, policy)
            continue
        audited = _Audited(seed=seed, **{k: v for k, v in vars(policy).items()
                                         if k in ("readmit", "running_estimate", "pseudo_update")})
        sched = _run(HAND, audited)
        tel, starts, evictions, pseudo_x = expected[key]
        assert (sched.tel, sched.starts, [(e.t, e.id, e.tokens_lost) for e in sched.evictions]) == \
            (tel, starts, evictions), key
        assert audited.seen[4]["X"] == pseudo_x, key  # õ_X right after its first cancellation


def test_best_reading_uses_log_distance_and_skips_overflows() -> None:
    assert best_reading({"a": 1.2, "b": None, "c": 0.9}, 1.0) == "c"  # |ln 0.9| < |ln 1.2|
    assert best_reading({"a": None}, 1.0) is None
    assert log_error(2.0, 1.0) == pytest.approx(math.log(2.0))


# --- the cycle guard --------------------------------------------------------------------------------

#: Two requests with the same õ = 3 that fit together only while one has few tokens (DIGEST-style trace in
#: the AMin docstring): A starts at 1, B at 3; from step 4 on every overflow hits a request at a = 3 = õ.
CYCLE = Instance(9, (Request("B", 2, 2, 4, 3, 8), Request("A", 1, 3, 4, 3, 4)))


class _StartOrderTies(AMin):
    """A deterministic transcription: no random key, so equal-õ requests keep start order (oldest first)."""

    def _tie(self) -> float:
        return 0.0


class _NoGuard(_StartOrderTies):
    def _guard_on(self) -> bool:
        return False


def test_without_the_guard_start_order_ties_cycle_forever() -> None:
    with pytest.raises(EvictionLoopError):
        simulate(CYCLE, _NoGuard(), loop_limit=50)


def test_the_cycle_guard_ends_the_cycle() -> None:
    policy = _StartOrderTies()
    sched = _run(CYCLE, policy)
    # four stale cancellations (twice the two unfinished requests), then B, not A, goes at step 12
    assert [(e.t, e.id, e.tokens_lost) for e in sched.evictions] == [
        (4, "A", 3), (6, "B", 3), (8, "A", 3), (10, "B", 3), (12, "B", 1)]
    assert sched.tel == 27 and policy.guarded == 1
    tels = {_run(CYCLE, AMin(seed=seed)).tel for seed in range(10)}  # C's random ties: ends too, seed-dependent
    assert min(tels) == 11 and len(tels) > 1


def _small_instances():  # type: ignore[no-untyped-def]
    @st.composite
    def build(draw):  # type: ignore[no-untyped-def]
        M = draw(st.integers(4, 24))
        n = draw(st.integers(2, 7))
        reqs = []
        for i in range(n):
            s = draw(st.integers(1, max(1, M // 4)))
            o = draw(st.integers(1, M - s))
            reqs.append(Request(f"r{i}", draw(st.integers(0, 5)), s, o, draw(st.integers(1, o)), o))
        return Instance(M, tuple(reqs))

    return build()


@settings(max_examples=150, deadline=None)
@given(_small_instances(), st.sampled_from(["certified", "repaired"]), st.sampled_from(["same-step", "next-step"]))
def test_guarded_deterministic_ties_never_loop(inst: Instance, estimate: str, readmit: str) -> None:
    """The guard's termination argument (AMin docstring) for õ ← max(õ, a), with the tie rule that cycles."""
    _run(inst, _StartOrderTies(running_estimate=estimate, readmit=readmit))


# --- Corollary 2 ---------------------------------------------------------------------------------------


def test_multi_interval_closed_form_identities() -> None:
    x = figure1_worst_distribution(50)
    assert cc.multi_interval_cr(x, [1], 0) == pytest.approx(lemma2_cr(x, 1, 0), rel=1e-12)
    assert cc.multi_interval_cr(x, list(range(1, 51)), 1) == pytest.approx(1.0, abs=1e-12)  # exact predictions
    # a mediant of the per-bucket ratios: between the smallest and largest bucket's own Lemma 2 value
    lowers = [1, 11, 21, 31, 41]
    per = [lemma2_cr(x[lo - 1:lo + 9], lo, 0) for lo in lowers]
    assert min(per) - 1e-12 <= cc.multi_interval_cr(x, lowers, 0) <= max(per) + 1e-12


def test_corollary2_holds_on_c_bins_in_the_fluid_model() -> None:
    c = cc.corollary2_check(list(range(1, 1001, 100)), 1000, 0)
    assert c["holds"] and c["worst_bucket"] == (1, 100)
    assert c["multi"] == pytest.approx(figure1_cr(100), rel=1e-9)  # 2.3333
    assert c["single"] == pytest.approx(figure1_cr(1000), rel=1e-9)  # 2.9239
    with pytest.raises(ValueError, match="increase strictly"):
        cc.bucket_bounds([1, 1, 5], 10)


def test_corollary2_simulation_claim_check() -> None:
    from llmopt.workloads.chen import chen_worst_case

    inst = chen_worst_case(0, u=10, n=1500, M=300)
    sim = cc.corollary2_simulation(inst, (5, 1))
    assert sim["holds"]
    rows = {r["width"]: r for r in sim["rows"]}
    assert rows[1]["ratio"] == pytest.approx(1.0) and rows[1]["closed"] == pytest.approx(1.0)  # exact buckets
    assert rows[5]["ratio:running_estimate=repaired"] <= rows[10]["ratio:running_estimate=repaired"]


# --- Theorem 2 -----------------------------------------------------------------------------------------


def test_thm2_fluid_formula_is_the_papers_at_s0_and_simulated_amax_beats_it() -> None:
    for alpha, r in ((0.5, 0.7), (0.25, 0.5), (0.1, 2.5)):
        ell = 10
        u = round(ell / alpha)
        b = 40
        a = round(r * b)
        assert cc.thm2_fluid_ratio(ell, u, a, b, 0) == pytest.approx(amax_thm2_instance_ratio(alpha, a / b), rel=1e-12)
    inst = cc.thm2_instance(10, 40, 25, 50, 1, 0)  # α = 0.25, n = 1,500, M = 410
    amax = _run(inst, make_policy_spec("a-max", seed=0)).tel
    hsf = _run(inst, make_policy_spec("h-sf")).tel
    tel_amax, tel_hsf = cc.thm2_fluid_tels(10, 40, 25, 50, 1)
    assert abs(hsf / tel_hsf - 1.0) < 0.02  # H-SF is its fluid value (1.011)
    assert amax < 0.7 * tel_amax  # A_max is far below the paper's "ℓ at a time" TEL (0.600): the measured cause


# --- Lemma 2 / Figure 1 against Theorem EC.1 ---------------------------------------------------------


def test_lemma2_worst_case_is_inside_the_interval_against_thm_ec1() -> None:
    r = cc.ec1_vs_lemma2(10, 1, 0)
    assert r["interior"] == pytest.approx(1.7249, abs=1e-4)
    assert r["interior"] == pytest.approx(figure1_cr(10), abs=1e-12)
    assert r["two_point"] == pytest.approx(1.45, abs=1e-9)
    assert r["two_point"] == pytest.approx(two_point_cr_amin(0.1), abs=1e-9)
    assert r["two_point_t"] == pytest.approx(10.0, rel=1e-6)
    assert r["inside_mass"] > 0.3 and r["gap"] > 0.27  # Thm EC.1 would need interior == two_point
    assert np.all(r["x"][1:-1] > 0)
    r1 = cc.ec1_vs_lemma2(10, 1, 1)
    assert (round(r1["interior"], 3), round(r1["two_point"], 3)) == (1.787, 1.583)


# --- the C-like sample ----------------------------------------------------------------------------------


def test_c_like_values_match_all_five_of_cs_statistics() -> None:
    for field, c in C_STATS.items():
        v = c_like_values(field)
        got = sample_stats(v)
        assert v.size == 2000 and np.all(np.diff(v) >= 0)
        assert (got["min"], got["max"], got["median"]) == (c["min"], c["max"], c["median"])
        assert got["mean"] == pytest.approx(c["mean"], rel=1e-4)
        assert got["variance"] == pytest.approx(c["variance"], rel=1e-4)


@pytest.mark.slow
def test_stored_knots_are_the_fit() -> None:
    for field in C_STATS:
        assert fit_knots(field) == pytest.approx(KNOTS[field], rel=1e-3)


@needs_trace_data
def test_c_like_instance_keeps_the_real_pairing_and_nests() -> None:
    from llmopt.papers.chen.c_like import c_like_instance

    full = c_like_instance(0, 2000, "shared:lower=1,upper=1000")
    part = c_like_instance(0, 200)
    assert [r.id for r in part.requests] == [r.id for r in full.requests[:200]]
    assert sorted(r.output for r in full.requests) == c_like_values("output").tolist()
    assert all(r.lower == 1 and r.upper == 1000 for r in full.requests)
    assert full.name == "chen-c-like/seed=0 n=2000 predictions=shared:lower=1,upper=1000"
