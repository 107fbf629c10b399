"""Idle-gap (sawtooth) rows, the configuration master, and the ``sawtooth-lp`` / ``config-lp`` /
``config-sawtooth-lp`` stages with their checker (:mod:`llmopt.verify.cut_certificate`).

What is checked:

1. **The idle-gap theorem on schedules**: on seeded tiny instances, for random feasible schedules and the
   exhaustive optimum, every window ``(τ0, τ0 + L]`` with ``L <= M`` has ``Σ U <= L·M − φ_L(q_W)``.
2. **``φ_L`` and the rows**: both copies of ``φ_L`` (provider and checker) equal a brute force over
   compositions; the checker accepts every tangent row and rejects it with ``ρ + 1``, ``L > M`` or ``δ < 0``.
3. **The knapsack**: the checker's ``K(η)`` equals a brute force, and ``Σ_{running} η(u_i(t)) <= K(η)`` on
   schedules.
4. **The stages against exhaustive OPT** on 30 seeded tiny instances: never above OPT, verified, never
   below ``zone-lp`` (beyond the agreement tolerance), and strictly above it on several (else the new rows
   would do nothing and this would prove little).
5. **Known optimum**: six requests ``(s, o) = (3, 1)`` at 0 with ``M = 10``: at most two run at a time, so
   OPT = 12; ``config-lp`` proves it, ``zone-lp`` stays at 10.5.
6. **Malformed certificates** are rejected (wrong table length, negative or non-finite multipliers).
   ``tests/opt/test_all_bounds.py`` corrupts each stage's certificate on its way to the checker.

Breakages tried by hand (each edit applied to a copy of the source, this file — and for the last five the
three stages' cases of ``tests/opt/test_all_bounds.py`` — run, the edit reverted); each made the listed tests fail:

* the checker's ``− K(η_t)`` dropped — ``never_above_exhaustive_opt`` of ``config-lp`` and
  ``config-sawtooth-lp``, ``configuration_master_proves_a_knapsack_optimum``;
* the checker's ``φ_L`` off by one (``L + 2`` parts' sum) — ``phi_copies_agree`` (all ``L``),
  ``checker_accepts_tangent_rows_and_nothing_tighter``;
* the provider's ``φ_L`` off by one — ``idle_gap_theorem_holds_on_schedules``, ``phi_copies_agree``, the
  tangent-row test, ``never_above_exhaustive_opt`` of the two sawtooth stages, and the two tests that build
  tangent rows (the checker rejects them);
* the checker's completion reward ``− R(C)`` with its sign flipped — ``test_all_bounds::never_above_opt[sawtooth-lp]``;
* the provider's sawtooth row without its ``− δ·[C ∈ W]`` term (an invalid, stronger row) —
  ``never_above_exhaustive_opt`` of both sawtooth stages (not verified) and their ``test_all_bounds`` cases;
* the checker's knapsack without size 2 — ``knapsack_max_matches_brute_force``,
  ``configuration_rows_hold_on_schedules``;
* the checker's ``ρ`` validity check dropped — the tangent-row test and the ``rho`` tamperings of
  ``test_all_bounds``;
* the checker ignoring ``η`` in a request's cost — ``never_above_exhaustive_opt`` of both configuration
  stages, the knapsack optimum, and their ``test_all_bounds`` cases.
* the study's engine pick preferring more CPU seconds at equal convergence and bound —
  ``study_engine_pick_follows_convergence_then_bound_then_cpu``.

The two engines, smoothing, the clique rows and ``config-lag-lp``: ``tests/opt/test_config_master.py``.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from helpers import exhaustive_opt, memory_profile, random_schedule, random_tiny_instance

from llmopt.engine.discrete import simulate
from llmopt.formulations.sawtooth import idle_gap_floor, tangent_row
from llmopt.model.instance import Instance
from llmopt.model.tolerance import AGREEMENT_RTOL
from llmopt.opt.bounds import BoundContext, compute_bound
from llmopt.policies import make_policy
from llmopt.verify.certificates import CertificateError
from llmopt.verify.cut_certificate import check_cut_certificate, check_sawtooth_row, knapsack_max
from llmopt.verify.cut_certificate import idle_gap_floor as checker_floor

STAGES = ("sawtooth-lp", "config-lp", "config-sawtooth-lp")


def _instances(count: int, base: int) -> list[Instance]:
    return [random_tiny_instance(random.Random(base + i), n_range=(3, 6), M_range=(6, 12), max_arrival=3,
                                 max_prompt=4) for i in range(count)]


def _schedules(inst: Instance, rng: np.random.Generator) -> list[dict[str, int]]:
    fcfs = simulate(inst, make_policy("fcfs"))
    _, opt_starts = exhaustive_opt(inst, fcfs.tel)
    return [opt_starts, dict(fcfs.starts)] + [random_schedule(inst, rng) for _ in range(6)]


def _completions(inst: Instance, starts: dict[str, int]) -> list[int]:
    return [starts[r.id] + r.output for r in inst.requests]


# --- 1. the theorem on schedules -------------------------------------------------------------------


def test_idle_gap_theorem_holds_on_schedules():
    rng = np.random.default_rng(3)
    windows = 0
    tight = 0
    for inst in _instances(25, 500):
        M = inst.M
        for starts in _schedules(inst, rng):
            mem = [0] + memory_profile(inst, starts)  # mem[t] = U(t)
            done = _completions(inst, starts)
            T = len(mem) + M
            mem += [0] * (M + 2)
            for tau0 in range(0, T):
                for L in range(1, M + 1):
                    area = sum(mem[tau0 + 1:tau0 + L + 1])
                    q = sum(tau0 < c <= tau0 + L for c in done)
                    bound = L * M - idle_gap_floor(L, q)
                    assert area <= bound, (inst, starts, tau0, L, area, bound)
                    windows += 1
                    tight += area == bound and area > 0
    assert windows > 10_000 and tight > 0  # the theorem is exercised, and met with equality somewhere


# --- 2. φ and the rows -----------------------------------------------------------------------------


def _phi_brute(L: int, r: int) -> int:
    if r >= L:
        return 0
    best = None
    for cuts in itertools.combinations(range(1, L + 1), r):  # r + 1 positive parts of L + 1
        edges = (0, *cuts, L + 1)
        v = sum((b - a) * (b - a - 1) // 2 for a, b in zip(edges, edges[1:], strict=False))
        best = v if best is None else min(best, v)
    assert best is not None
    return best


@pytest.mark.parametrize("L", range(1, 11))
def test_phi_copies_agree_with_brute_force(L):
    for r in range(L + 3):
        assert idle_gap_floor(L, r) == checker_floor(L, r) == _phi_brute(L, r), (L, r)


def test_checker_accepts_tangent_rows_and_nothing_tighter():
    M = 16
    for L in range(1, M + 1):
        for q0 in range(L + 1):
            delta, rho = tangent_row(L, q0)
            assert check_sawtooth_row(M, (5, L, delta, rho)) == (5, L, delta, rho)
            with pytest.raises(CertificateError, match="exceeds min_q"):
                check_sawtooth_row(M, (5, L, delta, rho + 1))
    with pytest.raises(CertificateError, match="outside 1"):
        check_sawtooth_row(M, (0, M + 1, 0, 0))
    with pytest.raises(CertificateError, match="delta"):
        check_sawtooth_row(M, (0, 3, -1, -10))
    with pytest.raises(CertificateError, match="not an integer"):
        check_sawtooth_row(M, (0, 3.0, 0, 0))


# --- 3. the knapsack -------------------------------------------------------------------------------


def _knapsack_brute(values: list[int], M: int) -> int:
    best = 0

    def rec(cap: int, smallest: int, acc: int) -> None:
        nonlocal best
        best = max(best, acc)
        for w in range(smallest, cap + 1):
            rec(cap - w, w, acc + values[w])

    rec(M, 2, 0)
    return best


def test_knapsack_max_matches_brute_force():
    rng = random.Random(11)
    for _ in range(60):
        M = rng.randint(2, 12)
        values = [0, 0] + [rng.randint(0, 20) for _ in range(M - 1)]
        assert knapsack_max(values, M) == _knapsack_brute(values, M)


def test_configuration_rows_hold_on_schedules():
    rng = np.random.default_rng(5)
    for inst in _instances(15, 700):
        M = inst.M
        for starts in _schedules(inst, rng):
            eta = [0, 0] + rng.integers(0, 9, size=M - 1).tolist()
            K = knapsack_max(eta, M)
            horizon = max(starts[r.id] + r.output for r in inst.requests)
            for t in range(1, horizon + 1):
                held = [r.prompt + t - starts[r.id] for r in inst.requests
                        if starts[r.id] < t <= starts[r.id] + r.output]
                assert sum(eta[u] for u in held) <= K, (inst, starts, t)


# --- 4. the stages against exhaustive OPT ----------------------------------------------------------


@pytest.fixture(scope="module")
def cases() -> list[tuple[Instance, int, dict[str, int]]]:
    out = []
    for inst in _instances(30, 900):
        fcfs = simulate(inst, make_policy("fcfs"))
        opt, _ = exhaustive_opt(inst, fcfs.tel)
        out.append((inst, opt, dict(fcfs.starts)))
    return out


@pytest.mark.parametrize("name", STAGES)
def test_stage_never_above_exhaustive_opt_and_never_below_zone_lp(name, cases):
    above_zone = 0
    for inst, opt, starts in cases:
        ctx = BoundContext(upper_bound_starts=starts)
        res = compute_bound(name, inst, ctx)
        zone = compute_bound("zone-lp", inst, ctx)
        where = f"{name} on M={inst.M} {[(r.arrival, r.prompt, r.output) for r in inst.requests]}: {res.detail}"
        assert res.value is not None and res.verified, where
        assert res.value <= opt + 1e-6, f"{res.value} > OPT {opt}: {where}"
        assert zone.value is not None
        assert res.value >= zone.value - AGREEMENT_RTOL * max(1.0, zone.value), f"below zone-lp {zone.value}: {where}"
        above_zone += res.value > zone.value + 1e-6
    assert above_zone >= 3, f"{name} above zone-lp on only {above_zone} of {len(cases)} instances"


# --- 5. known optimum ------------------------------------------------------------------------------


def test_configuration_master_proves_a_knapsack_optimum():
    inst = Instance.from_tuples(10, [(0, 3, 1)] * 6)  # sizes 4: two fit in M = 10, three do not
    zone = compute_bound("zone-lp", inst)
    config = compute_bound("config-lp", inst)
    assert zone.value is not None and config.value is not None and config.verified
    assert zone.value == pytest.approx(10.5)
    assert config.value == pytest.approx(12.0) and config.value <= 12 + 1e-9


# --- 6. malformed certificates ---------------------------------------------------------------------


def test_checker_rejects_malformed_certificates():
    inst = Instance.from_tuples(10, [(0, 3, 1)] * 6)
    lam = {1: 0.1}
    ok = check_cut_certificate(inst, lam, [], knapsack={1: [0.0] * 11})
    assert ok <= 12
    with pytest.raises(CertificateError, match="entries, not M"):
        check_cut_certificate(inst, lam, [], knapsack={1: [0.0] * 10})
    with pytest.raises(CertificateError, match="finite number >= 0"):
        check_cut_certificate(inst, lam, [], knapsack={1: [0.0] * 10 + [-1.0]})
    with pytest.raises(CertificateError, match="finite number >= 0"):
        check_cut_certificate(inst, lam, [((0, 3, *tangent_row(3, 1)), float("nan"))])
    with pytest.raises(CertificateError, match="finite number >= 0"):
        check_cut_certificate(inst, lam, [((0, 3, *tangent_row(3, 1)), -1.0)])


def test_any_table_certifies_at_most_opt():
    """Weak duality whatever the multipliers: random tables and rows never certify above OPT."""
    rng = np.random.default_rng(8)
    for inst in _instances(12, 1300):
        fcfs = simulate(inst, make_policy("fcfs"))
        opt, _ = exhaustive_opt(inst, fcfs.tel)
        M = inst.M
        for _ in range(5):
            horizon = max(r.arrival for r in inst.requests) + inst.total_output
            tables = {int(t): rng.uniform(0, 2, size=M + 1) for t in rng.integers(1, horizon + 1, size=4)}
            rows = []
            for _ in range(3):
                L = int(rng.integers(2, M + 1))
                rows.append(((int(rng.integers(0, horizon)), L, *tangent_row(L, int(rng.integers(0, L)))),
                             float(rng.uniform(0, 1))))
            lam = {int(t): float(rng.uniform(0, 1)) for t in rng.integers(1, horizon + 1, size=4)}
            value = check_cut_certificate(inst, lam, rows, knapsack=tables, upper_bound_starts=fcfs.starts)
            assert value <= opt + 1e-9, (inst, value, opt)


# --- the formulation-comparison study's own pieces --------------------------------------------------


def test_study_exhaustive_opt_agrees_with_the_test_helper():
    from llmopt.opt.studies.formulation_comparison import exhaustive_opt as study_opt
    from llmopt.opt.studies.formulation_comparison import tiny_instance

    for seed in range(12):
        inst = tiny_instance(seed)
        assert inst == tiny_instance(seed)  # seeded
        mcsf = simulate(inst, make_policy("mc-sf")).tel
        assert study_opt(inst, mcsf) == exhaustive_opt(inst, mcsf)[0], inst


def test_study_pick_names_the_family_that_closes_most_of_the_gap():
    from llmopt.opt.studies.formulation_comparison import NEW, pick

    def cell(v: float, s: float) -> dict:
        return {"value": v, "s": s, "verified": True, "detail": ""}

    row = {"opt": 100, "zone-lp": cell(90.0, 1.0), "sawtooth-lp": cell(91.0, 1.5), "config-lp": cell(95.0, 100.0),
           "config-sawtooth-lp": cell(94.0, 200.0), "config-lag-lp": cell(93.0, 300.0)}
    assert set(NEW) <= set(row)
    text = pick([row], [])
    assert "Strongest new family on the frontier: **`config-lp`**" in text
    assert "most gap closed per second: **`sawtooth-lp`**" in text
    assert "It closes a meaningful part" in text  # 50 % of the gap


def test_an_unconverged_master_still_certifies_at_least_zone_lp(cases):
    """Stopped after one or two rounds, the configuration master's early duals can certify far less than zone-lp
    (on J AM1 n = 16 a 150-s budget once gave −275,504); the stage must then certify zone-lp's own duals."""
    from llmopt.model.windows import start_windows
    from llmopt.opt.cut_bounds import cut_and_price

    worse = 0
    for inst, _, starts in cases[:15]:
        zone = compute_bound("zone-lp", inst, BoundContext(upper_bound_starts=starts)).value
        windows = start_windows(inst, sum(starts[r.id] + r.output - r.arrival for r in inst.requests))
        for rounds in (1, 2):
            cert = cut_and_price(inst, windows, sawtooth=False, configurations=True, seed=starts, max_rounds=rounds)
            assert not isinstance(cert, str), cert
            value = check_cut_certificate(inst, cert.lam, cert.rows, split=cert.split, zone_mu=cert.zone_mu,
                                          knapsack=cert.knapsack, upper_bound_starts=starts)
            assert zone is not None and value >= zone - AGREEMENT_RTOL * max(1.0, zone), (inst, rounds, value, zone)
            worse += cert.claimed < zone - 1e-6
    assert worse == 0


def test_study_engine_pick_follows_convergence_then_bound_then_cpu():
    from llmopt.opt.cut_bounds import DEFAULT_ENGINE, DEFAULT_SMOOTHING
    from llmopt.opt.studies.formulation_comparison import engine_pick, engine_table

    def run(value: float, status: str, cpu: float) -> dict:
        return {"value": value, "status": status, "rounds": 10, "columns": 5, "s": cpu, "cpu_s": cpu}

    default = f"{DEFAULT_ENGINE} α={DEFAULT_SMOOTHING:g}"
    other = "loop α=0.5" if default != "loop α=0.5" else "pricer α=0.5"
    rows = [{"instance": "P", "opt": 100, "engines": {default: run(95.0, "time limit after 9 rounds", 150.0),
                                                       other: run(94.0, "converged after 9 rounds", 200.0)}}]
    text = engine_pick(rows)
    assert f"Best run on the frontier: **`{other}`**" in text and "not the best run here" in text
    rows[0]["engines"][default] = run(94.0, "converged after 9 rounds", 50.0)
    text = engine_pick(rows)
    assert f"Best run on the frontier: **`{default}`**" in text and "the same." in text  # equal bound: fewer CPU s
    assert "| P | " + default + " | 94.0 (0.9400) | 10 | 5 |" in engine_table(rows, [])
