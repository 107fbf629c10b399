"""Column generation for the time-indexed LP (:mod:`llmopt.solvers.colgen`) and the LP policies Sorted-LP / LP-Swap.

Cross-checks: the LP written out in full (J's formulation relaxed, solved by the HiGHS
adapter) against column generation; the Lagrangian bound against the independent checker;
pricing over the truncated window against brute-force pricing over the whole horizon; a
hand-solved LP (W Example 1); LP policies' schedules through the checker.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import exhaustive_opt, random_tiny_instance

from llmopt.engine.discrete import RequestView, simulate
from llmopt.formulations.hindsight_ip import formulate
from llmopt.model.instance import Instance, Request
from llmopt.model.result import SolveStatus
from llmopt.model.windows import start_windows
from llmopt.policies import make_policy, make_policy_spec
from llmopt.policies.lp_order import LPSwap, SortedLP, lp_order
from llmopt.solvers import colgen
from llmopt.solvers.colgen import choose_bucket, solve_lp_colgen
from llmopt.solvers.colgen_pricing import price_full
from llmopt.solvers.highs import HighsSolver
from llmopt.verify.certificates import check_lower_bound_certificate
from llmopt.verify.checker import check_schedule


def _full_lp(instance: Instance) -> float:
    """The LP over the full completion-horizon windows, written out."""
    res = HighsSolver().solve(formulate(instance, start_windows(instance)).relax(), time_limit=60)
    assert res.status is SolveStatus.OPTIMAL
    return float(res.objective)


def _mcsf(instance: Instance) -> dict[str, int]:
    """MC-SF's schedule: the column-generation master's first columns."""
    return dict(simulate(instance, make_policy("mc-sf")).starts)


def _random(seed: int, arrivals: bool = True) -> Instance:
    inst = random_tiny_instance(random.Random(seed), n_range=(3, 9), M_range=(6, 16), max_arrival=4 if arrivals else 0)
    return inst


@pytest.mark.parametrize("seed", range(10))
def test_colgen_reaches_the_full_lp_optimum(seed):
    inst = _random(seed)
    res = solve_lp_colgen(inst, initial_starts=_mcsf(inst))
    full = _full_lp(inst)
    assert res.status is SolveStatus.OPTIMAL
    assert res.objective == pytest.approx(full, rel=1e-7, abs=1e-6)
    assert res.bound <= full + 1e-6
    # the multipliers certify the bound independently of this module
    cert = check_lower_bound_certificate(inst, (res.lam_times, res.lam_values))
    assert cert == pytest.approx(res.bound, rel=1e-7, abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_bucketed_lp_is_a_certified_relaxation(seed):
    inst = random_tiny_instance(random.Random(100 + seed), n_range=(3, 5), M_range=(6, 10), max_arrival=0)
    exact = solve_lp_colgen(inst, initial_starts=_mcsf(inst))
    opt, _ = exhaustive_opt(inst, simulate(inst, make_policy("mc-sf")).tel)
    for delta in (2, 3, 5):
        res = solve_lp_colgen(inst, initial_starts=_mcsf(inst), bucket=delta)
        assert res.status is SolveStatus.OPTIMAL
        assert res.objective <= exact.objective + 1e-6  # fewer (summed) rows: a relaxation
        cert = check_lower_bound_certificate(inst, (res.lam_times, res.lam_values))
        assert cert == pytest.approx(res.bound, rel=1e-7, abs=1e-6)
        assert cert <= opt + 1e-9  # and so it is below OPT


@pytest.mark.parametrize("seed", range(5))
def test_pricing_over_the_truncated_window_is_exact(seed):
    """Pricing scans k <= H (the last memory row); brute force over every start up to T_c − o agrees."""
    inst = _random(200 + seed)
    origin = min(r.arrival for r in inst.requests)
    cl = colgen.class_arrays(inst, origin)
    rng = np.random.default_rng(seed)
    H = 6
    lam = np.concatenate([[0.0], rng.exponential(0.3, H)])
    pi = rng.normal(3.0, 2.0, len(cl.size))
    min_rc = price_full(cl.a, cl.s, cl.o, cl.hi, lam, pi).min_rc
    for c in range(len(cl.size)):
        a, s, o, hi = int(cl.a[c]), int(cl.s[c]), int(cl.o[c]), int(cl.hi[c])
        brute = min((k - a) - pi[c] + sum((s + tau - k) * (lam[tau] if tau <= H else 0.0)
                                          for tau in range(k + 1, k + o + 1))
                    for k in range(a, hi + 1))
        assert min_rc[c] == pytest.approx(brute, abs=1e-9)


def _example1() -> Instance:
    return Instance(64, tuple([Request("big", 0, 63, 1)] + [Request(f"s{i}", 0, 1, 2) for i in range(21)]))


def test_w_example1_lp_by_hand():
    """W Example 1 (M = 64): 21 requests (s=1, o=2) and one (s=63, o=1), all at 0.

    LP by hand: the 21 small ones start at 0 (memory 42 at t=1, 63 at t=2). The big one uses
    64 tokens at its completion, so at most (64−42)/64 = 22/64 of it starts at 0, 1/64 at 1,
    the rest (41/64) at 2: y_big = 1/64 + 2·41/64 = 83/64 and LP = 21·2 + (83/64 + 1) = 44.296875.
    """
    res = solve_lp_colgen(_example1(), initial_starts=_mcsf(_example1()))
    assert res.objective == pytest.approx(44.296875, abs=1e-7)
    assert res.expected_start["big"] == pytest.approx(83 / 64, abs=1e-7)
    assert all(res.expected_start[f"s{i}"] == pytest.approx(0.0, abs=1e-9) for i in range(21))
    # so Sorted-LP runs the small ones first: TEL 21·2 + 3 = 45 (MC-SF: 64)
    for policy in (SortedLP(bucket=1), LPSwap(bucket=1)):
        sched = simulate(_example1(), policy)
        assert sched.tel == 45
    assert simulate(_example1(), make_policy("mc-sf")).tel == 64


def test_lp_order_ties_by_output_then_position():
    y = np.array([1.0, 0.5, 0.5 + 1e-9, 0.5, 2.0])
    o = np.array([1, 3, 2, 3, 1])
    assert lp_order(y, o).tolist() == [2, 1, 3, 0, 4]


def test_all_fit_at_once_gives_y_zero_and_opt():
    """When every request can start at 0, the LP starts them all at 0 and Sorted-LP's TEL is Σo = OPT."""
    inst = Instance(100, tuple(Request(f"r{i}", 0, 2, o) for i, o in enumerate((3, 1, 4, 1, 5))))
    res = solve_lp_colgen(inst, initial_starts=_mcsf(inst))
    assert all(v == pytest.approx(0.0) for v in res.expected_start.values())
    assert simulate(inst, SortedLP(bucket=1)).tel == sum(r.output for r in inst.requests)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("spec", ["sorted-lp:bucket=1", "lp-swap:bucket=1", "sorted-lp", "lp-swap:bucket=2"])
def test_lp_policies_schedules_pass_the_checker(seed, spec):
    inst = _random(300 + seed, arrivals=seed % 2 == 0)
    sched = simulate(inst, make_policy_spec(spec))
    report = check_schedule(inst, sched.starts)
    assert report.ok and report.tel == sched.tel
    assert set(sched.starts) == set(inst.ids)


def test_lp_swap_batches_are_feasible_swap_local_optima():
    """Every LP-Swap batch fits W's surrogate Σ(s+o) <= M, admits no improving swap with the
    requests still unplanned (o_in < o_out and still fitting), and the batches make the plan."""
    rng = np.random.default_rng(7)
    reqs = tuple(Request(f"r{i}", 0, int(rng.integers(1, 20)), int(rng.integers(1, 20))) for i in range(40))
    inst = Instance(60, reqs)
    pol = LPSwap(bucket=1)
    pol.reset(inst.M)
    views = [RequestView(r.id, 0, r.prompt, i, r.output) for i, r in enumerate(reqs)]
    order = [v.id for v in pol.plan(views, inst.M)]
    assert [rid for batch in pol.last_batches for rid in batch] == order
    by_id = {r.id: r for r in reqs}
    remaining = set(order)
    for batch in pol.last_batches:
        mem = sum(by_id[i].prompt + by_id[i].output for i in batch)
        assert mem <= inst.M
        remaining -= set(batch)
        for out in batch:
            for inn in remaining:
                a, b = by_id[out], by_id[inn]
                assert not (b.output < a.output and mem - a.prompt - a.output + b.prompt + b.output <= inst.M)
        assert [by_id[i].output for i in batch] == sorted(by_id[i].output for i in batch)


def test_auto_bucket_rule():
    assert choose_bucket("auto", 10) == 1
    assert choose_bucket("auto", 500) == 1 and choose_bucket("auto", 501) == 2
    assert choose_bucket("auto", 22_151) == 45
    assert choose_bucket(3, 10) == 3
    with pytest.raises(ValueError):
        choose_bucket(0, 10)


@pytest.mark.parametrize("rounds", [1, 2, 4])
def test_early_stop_keeps_a_certified_bound(rounds):
    """Stopped after a few rounds, the reported bound is still the one its multipliers certify."""
    rng = np.random.default_rng(rounds)
    inst = Instance(100, tuple(Request(f"r{i}", 0, int(rng.integers(1, 30)), int(rng.integers(1, 40)))
                               for i in range(40)))
    res = solve_lp_colgen(inst, initial_starts=_mcsf(inst), max_rounds=rounds)
    cert = check_lower_bound_certificate(inst, (res.lam_times, res.lam_values))
    assert cert == pytest.approx(res.bound, rel=1e-9, abs=1e-6)
    assert res.bound <= res.objective + 1e-6


def test_colgen_respects_a_time_limit():
    """The limit holds inside the first round (master solve and pricing stop at the deadline); with no
    complete round the result still brackets the LP: λ = 0 certifies Σo, the seed schedule is an LP point.

    Breakage caught: pricing ignoring its deadline (the first round completes: a Lagrangian bound
    above Σo and status OPTIMAL)."""
    inst = _random(4)
    seed = _mcsf(inst)
    res = solve_lp_colgen(inst, initial_starts=seed, time_limit=1e-9)
    assert res.status is SolveStatus.TIME_LIMIT
    assert res.bound == inst.total_output and res.lam_values.size == 0
    assert res.objective == inst.total_output + sum(seed[r.id] - r.arrival for r in inst.requests)


def test_identical_requests_share_the_class_expected_start_by_hand():
    """Two identical requests (a = 7, s = 1, o = 1), M = 3: each needs 2 tokens at its completion, so
    one at a time. LP by hand: the class row is ``x_7 + x_8 + … = 2`` and the row of time 8 is
    ``2·x_7 <= 3``, so x_7 = 1.5, x_8 = 0.5: LP = 0.5 + Σo = 2.5, and each member's expected start
    is ``7 + (0·1.5 + 1·0.5) / 2 = 7.25`` (the class's Σ k·x divided by its size 2).

    Breakage caught: ``solvers/colgen.py`` ``y = np.bincount(col_class, weights=x * col_k,
    minlength=len(cl.size)) / cl.size`` without ``/ cl.size`` (each member gets 7.5).
    """
    inst = Instance(3, (Request("p", 7, 1, 1), Request("q", 7, 1, 1)))
    res = solve_lp_colgen(inst, initial_starts={"p": 7, "q": 8})
    assert res.status is SolveStatus.OPTIMAL
    assert res.objective == pytest.approx(2.5, abs=1e-9)
    assert res.expected_start == pytest.approx({"p": 7.25, "q": 7.25}, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_expected_starts_add_up_to_the_lp_objective(seed):
    """The LP's objective is ``Σ_i (y_i + o_i − a_i)`` with ``y_i = Σ_k k·x_{i,k}``: the reported
    expected starts, identical requests (``dup_prob`` high) included, must add up to it, and each
    lies between the request's arrival and its last start ``T_c − o_i``.

    Breakage caught: ``solvers/colgen.py`` expected starts of a class not divided by the class size
    (``... minlength=len(cl.size)) / cl.size`` → ``... minlength=len(cl.size))``).
    """
    inst = random_tiny_instance(random.Random(400 + seed), n_range=(5, 8), M_range=(6, 10), max_arrival=3,
                                dup_prob=0.6)
    assert len({(r.arrival, r.prompt, r.output) for r in inst.requests}) < inst.n  # identical requests exist
    res = solve_lp_colgen(inst, initial_starts=_mcsf(inst))
    assert res.status is SolveStatus.OPTIMAL
    total = sum(res.expected_start[r.id] + r.output - r.arrival for r in inst.requests)
    assert total == pytest.approx(res.objective, rel=1e-9, abs=1e-6)
    horizon = max(r.arrival for r in inst.requests) + inst.total_output
    for r in inst.requests:
        assert r.arrival - 1e-9 <= res.expected_start[r.id] <= horizon - r.output + 1e-9
