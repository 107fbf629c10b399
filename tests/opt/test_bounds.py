"""Dual LP, closed-form dual (25)–(27) and the certified bound providers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import llmopt.opt.bounds as bounds_mod
from llmopt.engine.discrete import simulate
from llmopt.formulations.closed_form_dual import (
    closed_form_dual,
    eq23_max_violation,
    identical_parameters,
    paper_approximation,
)
from llmopt.formulations.dual import formulate_dual
from llmopt.formulations.hindsight_ip import formulate, start_windows
from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus
from llmopt.model.tolerance import AGREEMENT_RTOL
from llmopt.opt.bounds import (
    BOUNDS,
    BoundContext,
    BoundResult,
    closed_form_dual_bound,
    compute_bound,
    dual_lp_bound,
    lambda_from_lp_duals,
    lp_bound,
    run_bound,
)
from llmopt.policies import make_policy
from llmopt.solvers.highs import HighsSolver
from llmopt.verify.certificates import check_lower_bound_certificate
from llmopt.verify.checker import check_schedule

# DIGEST §1.4: n, s, o, M, LP opt, closed-form D, paper's approx, ȳ, λ_1, last t with λ_t > 0, MC-SF TEL
TABLE_1_4 = [
    (10, 1, 3, 12, 61.8065, 50.1111, 55.2778, 6.2778, 0.8333, 8, 66),
    (20, 2, 4, 30, 189.6559, 154.4444, 164.4444, 10.2222, 0.6667, 12, 200),
    (30, 1, 5, 20, 584.2612, 510.0000, 525.0000, 27.5, 1.5, 30, 674),
    (8, 3, 3, 20, 42.0000, 34.9333, 38.9333, 4.8667, 0.4, 6, 45),
    (40, 2, 2, 16, 409.6793, 386.8571, 407.1429, 16.9286, 2.5, 18, 440),
    (5, 1, 1, 10, 5.0000, 5.0000, 7.5000, 1.0, 0.5, 1, 5),
]


def _identical(n: int, s: int, o: int, M: int) -> Instance:
    return Instance.from_tuples(M, [(0, s, o)] * n, name=f"identical n={n} s={s} o={o} M={M}")


def _random_instance(rng: np.random.Generator) -> Instance:
    M = int(rng.integers(6, 21))
    n = int(rng.integers(2, 8))
    rows = []
    for _ in range(n):
        s = int(rng.integers(1, 4))
        o = int(rng.integers(1, min(6, M - s) + 1))
        rows.append((int(rng.integers(0, 5)), s, o))
    return Instance.from_tuples(M, rows, name=f"random n={n}")


def _lp(model):
    res = HighsSolver().solve(model.relax())
    assert res.status is SolveStatus.OPTIMAL
    return res


# --- closed-form dual (25)–(27) -------------------------------------------------------------------


@pytest.mark.parametrize("row", TABLE_1_4, ids=lambda r: f"n{r[0]}s{r[1]}o{r[2]}M{r[3]}")
def test_table_1_4(row):
    n, s, o, M, lp_opt, D, approx, ybar, lam1, last, mcsf = row
    inst = _identical(n, s, o, M)
    cf = closed_form_dual(n, s, o, M)
    assert cf.horizon == n * o
    assert cf.bound == pytest.approx(D, abs=1e-4)
    assert cf.ybar == pytest.approx(ybar, abs=1e-4)
    assert cf.lambda_1 == pytest.approx(lam1, abs=1e-4)
    assert cf.last_positive == last and (last == cf.horizon or cf.lam[last] == 0.0) and cf.lam[last - 1] > 0
    assert paper_approximation(n, s, o, M) == pytest.approx(approx, abs=1e-4)
    assert eq23_max_violation(cf) <= 1e-9  # Lemma B.1, t = 0 … T̄

    lp = lp_bound(inst)
    assert lp.verified and lp.certificate == "lp-dual-checked"
    assert lp.value == pytest.approx(lp_opt, abs=1e-4)

    sched = simulate(inst, make_policy("mc-sf"))
    rep = check_schedule(inst, sched.starts)
    assert rep.ok and rep.tel == sched.tel == mcsf

    cf_res = closed_form_dual_bound(inst)
    assert cf_res.verified and cf_res.claimed == pytest.approx(D, abs=1e-4)
    certified = cf_res.value
    assert D - 1e-9 <= certified <= lp.value + 1e-9 <= mcsf + 1e-9  # D <= checker <= LP <= OPT <= MC-SF
    assert mcsf / D < 1.33  # DIGEST says "<= 1.32"; row 3 gives 674/510 = 1.3216


def test_paper_approximation_is_not_a_bound():
    inst = _identical(5, 1, 1, 10)
    lp = lp_bound(inst).value
    assert lp == pytest.approx(5.0, abs=1e-7)
    assert paper_approximation(5, 1, 1, 10) == pytest.approx(7.5)
    assert paper_approximation(5, 1, 1, 10) > lp + 1  # exceeds the LP, so it cannot be a lower bound
    assert closed_form_dual_bound(inst).value == pytest.approx(5.0)


def test_thm43_mcsf_upper_bound_15():
    # J B.3 (15): TEL(MC-SF) <= o n²/(2m) + 5on/8, m = ⌊M/(s+o)⌋, n > m.
    n, s, o, M = 10, 1, 3, 12
    m = M // (s + o)
    tel = simulate(_identical(n, s, o, M), make_policy("mc-sf")).tel
    assert tel == 66 <= o * n * n / (2 * m) + 5 * o * n / 8 == 68.75


def test_closed_form_rejects_non_identical_instances():
    with pytest.raises(ValueError, match="arrives at 2"):
        identical_parameters(Instance.from_tuples(10, [(0, 1, 2), (2, 1, 2)]))
    with pytest.raises(ValueError, match="identical requests.*'r1'"):
        identical_parameters(Instance.from_tuples(10, [(0, 1, 2), (0, 2, 2)]))
    res = closed_form_dual_bound(Instance.from_tuples(10, [(0, 1, 2), (0, 1, 3)]))
    assert res.value is None and not res.verified and res.certificate == "none"
    assert "identical" in res.detail


def test_closed_form_provider():
    res = compute_bound("closed-form-dual", _identical(10, 1, 3, 12))
    assert isinstance(res, BoundResult)
    assert res.name == "closed-form-dual" and res.certificate == "closed-form-dual-checked"
    assert res.verified and res.claimed == pytest.approx(50.1111, abs=1e-4)
    assert 50.1111 - 1e-4 <= res.value <= 61.8065 + 1e-4  # D <= checker's value <= LP


def test_short_horizon_closed_form_is_caught_by_the_checker():
    # A truncated ramp violates (23) near T̄; the checker's bound from λ alone stays valid.
    cf = closed_form_dual(30, 1, 5, 20, horizon=20)
    assert eq23_max_violation(cf) > 0
    inst = _identical(30, 1, 5, 20)
    checked = check_lower_bound_certificate(inst, cf.lambda_by_time())
    assert checked < cf.bound
    assert checked <= 584.2612


# --- explicit dual LP and strong duality ---------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("aggregate", [True, False])
def test_dual_lp_equals_primal_lp(seed, aggregate):
    inst = _random_instance(np.random.default_rng(seed))
    mcsf = simulate(inst, make_policy("mc-sf"))
    for windows, starts in ((start_windows(inst), None), (start_windows(inst, mcsf.tel), mcsf.starts)):
        primal = _lp(formulate(inst, windows, aggregate=aggregate))
        dual_model = formulate_dual(inst, windows, aggregate=aggregate)
        assert not dual_model.is_mip
        dual = HighsSolver().solve(dual_model)
        assert dual.status is SolveStatus.OPTIMAL
        assert -dual.objective == pytest.approx(primal.objective, rel=1e-7, abs=1e-7)
        # the dual LP's λ, checked independently, certifies the same value
        block = dual_model.cols("lambda")
        lam = (block.labels["t"], dual.x[block.slice])
        checked = check_lower_bound_certificate(inst, lam, starts)
        assert checked == pytest.approx(primal.objective, rel=1e-6)
        assert primal.objective <= mcsf.tel + 1e-9
        res = dual_lp_bound(inst, BoundContext(upper_bound_starts=starts, windows=windows))
        assert res.verified and res.value == pytest.approx(primal.objective, rel=1e-6)


def test_dual_lp_identical_requests_matches_table():
    inst = _identical(10, 1, 3, 12)
    dual = HighsSolver().solve(formulate_dual(inst))
    assert -dual.objective == pytest.approx(61.8065, abs=1e-4)
    assert compute_bound("dual-lp", inst).value == pytest.approx(61.8065, abs=1e-4)


def test_lambda_sign_from_highs_duals():
    inst = _identical(10, 1, 3, 12)
    model = formulate(inst).relax()
    res = _lp(model)
    times, lam = lambda_from_lp_duals(model, res.duals)
    assert times.tolist() == model.rows("eq3_memory").labels["t"].tolist() == list(range(1, 31))
    assert (lam >= 0).all() and lam.sum() > 0
    assert check_lower_bound_certificate(inst, (times, lam)) == pytest.approx(res.objective, rel=1e-7)
    with pytest.raises(ValueError, match="wrong sign"):
        lambda_from_lp_duals(model, -res.duals)
    with pytest.raises(ValueError, match="duals for a model"):
        lambda_from_lp_duals(model, res.duals[:-1])


# --- the "lp" bound provider -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_lp_bound_equals_lp_optimum_and_is_below_mcsf(seed):
    inst = _random_instance(np.random.default_rng(100 + seed))
    mcsf = simulate(inst, make_policy("mc-sf"))
    windows = start_windows(inst, mcsf.tel)
    res = lp_bound(inst, BoundContext(upper_bound_starts=mcsf.starts, windows=windows))
    assert res.verified and res.certificate == "lp-dual-checked", res.detail
    lp_opt = _lp(formulate(inst, windows)).objective
    assert res.value == pytest.approx(lp_opt, rel=1e-6)
    assert res.claimed == pytest.approx(lp_opt, rel=1e-9)
    assert res.value <= mcsf.tel + 1e-9


@pytest.mark.parametrize(
    "M, rows, opt",
    [
        (5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)], 12),  # T-5
        (16, [(0, 1, 15)] + [(14, 1, 1)] * 8, 31),  # T-4, M = 16
        (36, [(0, 1, 35)] + [(33, 1, 1)] * 18, 80),  # T-4, M = 36
    ],
)
def test_lp_bound_below_known_opt(M, rows, opt):
    inst = Instance.from_tuples(M, rows)
    res = compute_bound("lp", inst)
    assert res.verified
    assert res.value <= opt + 1e-9


def test_corrupted_lambda_is_not_verified(monkeypatch):
    """A certificate that moves the checker's value by ~1e-5 relative must come out *not verified*
    (a loosened agreement tolerance would let it through), and the checker's value stays valid."""
    inst = _identical(10, 1, 3, 12)
    honest = lp_bound(inst)
    assert honest.verified
    real = bounds_mod.lambda_from_lp_duals

    def corrupted(model, duals, tol=1e-4):
        times, lam = real(model, duals)
        lam = lam.copy()
        lam[int(np.argmax(lam))] *= 1.0001
        return times, lam

    monkeypatch.setattr(bounds_mod, "lambda_from_lp_duals", corrupted)
    res = lp_bound(inst)
    rel = abs(res.value - res.claimed) / res.claimed
    assert 1e-6 < rel < 1e-3, rel  # small enough that a tolerance of 1e-3 would accept it
    assert rel > AGREEMENT_RTOL
    assert not res.verified and "DISAGREE" in res.detail
    assert res.value <= honest.value + 1e-9  # still a valid (weaker) bound by weak duality


def test_bound_over_an_infeasible_upper_bound_schedule_fails_cleanly():
    inst = Instance.from_tuples(5, [(0, 1, 2), (0, 1, 2)])
    bad = BoundContext(upper_bound_starts={"r0": 0, "r1": 0})  # overflows at time 2
    with pytest.raises(ValueError, match="rejected"):
        compute_bound("lp", inst, bad)
    res = run_bound("lp", inst, bad)
    assert res.value is None and "rejected" in res.detail


def test_too_large_is_skipped_with_its_size():
    inst = _identical(10, 1, 3, 12)
    res = lp_bound(inst, BoundContext(max_nnz=10))
    assert res.value is None and "nonzeros" in res.detail and "--max-nnz" in res.detail


def test_sum_of_outputs():
    inst = Instance.from_tuples(10, [(0, 1, 2), (3, 2, 4)])
    res = compute_bound("sum-of-outputs", inst)
    assert res.value == pytest.approx(6.0) and res.verified


def test_registry():
    assert {"lp", "dual-lp", "closed-form-dual", "sum-of-outputs"} <= set(BOUNDS.names())
    assert BOUNDS.get("lp") is lp_bound
    assert BOUNDS.get("closed-form-dual") is closed_form_dual_bound
    assert isinstance(compute_bound("sum-of-outputs", _identical(2, 1, 1, 4)), BoundResult)
    assert replace(BoundContext(), threads=2).threads == 2
