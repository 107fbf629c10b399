"""Peak zones (:mod:`llmopt.formulations.zones`) and the ``zone-lp`` bound stage with its checker.

What is checked:

1. **The theorem, on schedules.** For random tiny instances with many large requests, random
   feasible schedules (random priority lists placed greedily with random delays) and every split
   ``h = 1 … M − 1``, the zones are pairwise disjoint — for the provider's zones
   (:func:`llmopt.formulations.zones.peak_zones`) and for the checker's (:func:`llmopt.verify.checker.certified_zones`),
   which must also be equal. Including exhaustive-OPT schedules (the tight ones).
2. **The bound, against exhaustive OPT.** On random tiny instances ``zone-lp <= OPT`` (exhaustive
   search of ``helpers.exhaustive_opt``), it is verified by the checker, it is ``>= lp`` up to the
   agreement tolerance, and it is strictly above ``lp`` on a good share of them (else the rows
   would do nothing and the test would prove little). ``tests/opt/test_all_bounds.py`` runs it on its
   24 instances and corrupts its certificate as well.
3. **Known optimum.** ``n`` requests ``(s, o) = (1, M − 1)`` at 0 can only run one after another:
   OPT ``= o·n(n+1)/2``; ``zone-lp`` returns it, ``lp`` stays below. On J's AM1 generator at
   ``n = 6, M = 40`` (exhaustive OPT 240), the rounded-up bound is OPT: proven without an IP.
4. **The IP with zone rows** (formulation ``hindsight-ip-zones``) keeps the exhaustive OPT on the
   40 seeded peaky instances: the rows cut off no optimal schedule.
5. **The checker** rejects a split outside ``1 … M − 1`` and a negative or non-finite ``μ``, and a
   ``μ`` that is not the LP's (each zone multiplier raised) certifies less.

Breakages tried by hand (each edit applied to the source, the two test files run with ``-k zone``,
the edit reverted):

* Zone set without ``p >= max(h, M − h)`` (only ``p >= h``), in both copies — both schedule
  properties fail (two requests of peak ``<= M/2`` complete together: ``h=1``, zones ``[3,4]`` twice).
  The stage's split ``⌈M/2⌉`` has ``max(h, M − h) = h``, so its value is unaffected.
* ``b_i`` without the ``h − σ_i`` cap, in both copies — both schedule properties, and
  ``test_zone_lp_never_above_exhaustive_opt`` (52 > OPT 44 on ``M=13``), and ``test_known_optimum``
  (the LP becomes infeasible); in the provider's copy alone, ``test_ip_with_zone_rows_keeps_the_
  exhaustive_opt`` (IP optimum 52 > OPT 44 on ``M=13``).
* The checker's zone one step too long (``(C − a − 1, C + b]``) — ``never_above_exhaustive_opt``
  (45 > 44) and ``test_all_bounds::test_tampered_certificate_is_rejected[zone-lp]`` (the tampered
  certificate reads "checker higher").
* The checker ignoring ``μ`` — every value test: "DISAGREE: not verified" (e.g. 33 vs 54).
* The provider's ``σ_i`` taken over all members (its own prompt included) — the every-schedule
  property and the provider/checker agreement test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_zones_disjoint, exhaustive_opt, random_schedule
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmopt.engine.discrete import simulate
from llmopt.formulations.zones import default_split, peak_zones
from llmopt.model.instance import Instance
from llmopt.model.tolerance import AGREEMENT_RTOL
from llmopt.opt.bounds import BoundContext, compute_bound
from llmopt.policies import make_policy
from llmopt.verify.certificates import CertificateError
from llmopt.verify.checker import check_schedule
from llmopt.verify.zone_certificate import certified_zones, check_zone_certificate
from llmopt.workloads import make_instance


@st.composite
def peaky_instances(draw, max_n: int = 6, arrivals: bool = True):
    """Tiny instances where most requests peak above ``M/2``."""
    M = draw(st.integers(6, 14))
    n = draw(st.integers(2, max_n))
    rows = []
    for _ in range(n):
        s = draw(st.integers(1, min(4, M - 1)))
        o = draw(st.integers(max(1, M // 2 - s), M - s))
        a = draw(st.integers(0, 4)) if arrivals else 0
        rows.append((a, s, o))
    return Instance.from_tuples(M, rows)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=peaky_instances(), seed=st.integers(0, 2**32 - 1))
def test_zones_are_disjoint_in_every_schedule(inst, seed):
    rng = np.random.default_rng(seed)
    schedules = [random_schedule(inst, rng) for _ in range(4)]
    schedules.append(dict(simulate(inst, make_policy("mc-sf")).starts))
    for starts in schedules:
        assert check_schedule(inst, starts).ok
        for h in range(1, inst.M):
            zones = peak_zones(inst, h)
            assert zones == certified_zones(inst, h)
            assert_zones_disjoint(inst, starts, zones, f"h={h}")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=peaky_instances(max_n=5))
def test_zones_are_disjoint_in_optimal_schedules(inst):
    fcfs = simulate(inst, make_policy("fcfs"))
    _, starts = exhaustive_opt(inst, fcfs.tel)
    for h in range(1, inst.M):
        assert_zones_disjoint(inst, starts, peak_zones(inst, h), f"h={h}")


def test_provider_and_checker_zones_agree_on_j_instances():
    for seed in range(5):
        inst = make_instance("jaillet-am2", seed=seed)
        for h in (default_split(inst.M), inst.M // 3, inst.M - 2):
            assert peak_zones(inst, h) == certified_zones(inst, h)


def _seeded_peaky(count: int) -> list[Instance]:
    rng = np.random.default_rng(20261123)
    out = []
    for _ in range(count):
        M = int(rng.integers(6, 15))
        rows = []
        for _ in range(int(rng.integers(2, 6))):
            s = int(rng.integers(1, min(4, M - 1) + 1))
            rows.append((int(rng.integers(0, 5)), s, int(rng.integers(max(1, M // 2 - s), M - s + 1))))
        out.append(Instance.from_tuples(M, rows))
    return out


def test_zone_lp_never_above_exhaustive_opt():
    above_lp = 0
    cases = _seeded_peaky(40)
    for inst in cases:
        fcfs = simulate(inst, make_policy("fcfs"))
        opt, _ = exhaustive_opt(inst, fcfs.tel)
        ctx = BoundContext(upper_bound_starts=dict(fcfs.starts))
        zone = compute_bound("zone-lp", inst, ctx)
        lp = compute_bound("lp", inst, ctx)
        where = f"M={inst.M} {[(r.arrival, r.prompt, r.output) for r in inst.requests]}: {zone.detail}"
        assert zone.value is not None and zone.verified, where
        assert zone.value <= opt + 1e-6, (zone.value, opt, where)
        assert zone.value >= lp.value - AGREEMENT_RTOL * max(1.0, abs(lp.value)), where
        above_lp += zone.value > lp.value + 1e-6
    # the rows must do something, else this test would prove little
    assert above_lp >= len(cases) // 3, above_lp


@pytest.mark.parametrize(("M", "n"), [(10, 3), (9, 4), (12, 3)])
def test_known_optimum(M, n):
    """(1, M−1) requests at 0 never overlap (each peaks at M): OPT = o·n(n+1)/2."""
    inst = Instance.from_tuples(M, [(0, 1, M - 1)] * n)
    opt = (M - 1) * n * (n + 1) // 2
    zone = compute_bound("zone-lp", inst)
    lp = compute_bound("lp", inst)
    assert zone.verified, zone.detail
    assert zone.value == pytest.approx(opt, abs=1e-6)
    assert lp.value < opt - 1


def test_proves_a_j_am1_optimum_without_an_ip():
    inst = make_instance("jaillet-am1", seed=0, n_range=(6, 6), M_range=(40, 40))
    mcsf = simulate(inst, make_policy("mc-sf"))
    opt, _ = exhaustive_opt(inst, mcsf.tel)
    assert opt == 240  # results/jaillet/ip-scaling: proven by HiGHS too
    zone = compute_bound("zone-lp", inst, BoundContext(upper_bound_starts=dict(mcsf.starts)))
    assert zone.verified and math.ceil(zone.value - 1e-6) == opt, zone.detail
    assert compute_bound("lp", inst).value < 200


@pytest.mark.parametrize("split", [0, 10, -1, 2.5, True, "5"])
def test_checker_rejects_a_bad_split(split):
    inst = Instance.from_tuples(10, [(0, 1, 9)] * 2)
    with pytest.raises(CertificateError, match="zone split"):
        check_zone_certificate(inst, {}, {}, split)


@pytest.mark.parametrize("bad", [-0.5, float("nan"), float("inf")])
def test_checker_rejects_a_bad_mu(bad):
    inst = Instance.from_tuples(10, [(0, 1, 9)] * 2)
    with pytest.raises(CertificateError, match="μ"):
        check_zone_certificate(inst, {}, {3: 0.5, 4: bad}, 5)


@pytest.mark.parametrize("workers", [0, -1])
def test_checker_rejects_a_worker_count_below_one(workers):
    inst = Instance.from_tuples(10, [(0, 1, 9)] * 2)
    with pytest.raises(CertificateError, match="workers must be at least 1"):
        check_zone_certificate(inst, {}, {}, 5, workers=workers)


def test_raising_mu_certifies_less():
    inst = Instance.from_tuples(10, [(0, 1, 9)] * 3)
    honest = compute_bound("zone-lp", inst)
    import llmopt.opt.bounds as bounds_mod
    from llmopt.formulations.hindsight_ip import formulate
    from llmopt.formulations.zones import with_zone_rows
    from llmopt.opt.bounds import zone_multipliers  # the stage's own extraction, re-run here
    from llmopt.solvers import get_solver

    model = bounds_mod._without_column_bounds(with_zone_rows(formulate(inst), inst, 5).relax())
    res = get_solver("highs").solve(model)
    lam, (mt, mv) = zone_multipliers(model, res.duals)
    assert mv.max() > 0
    value = check_zone_certificate(inst, lam, (mt, mv), 5)
    assert value == pytest.approx(honest.value)
    assert check_zone_certificate(inst, lam, (mt, mv * 1.1 + 0.01), 5) < value - 1e-6


def test_ip_with_zone_rows_keeps_the_exhaustive_opt():
    """The ``hindsight-ip-zones`` formulation is exact: over windows that hold every schedule of
    TEL <= FCFS's, its IP optimum is the exhaustive OPT on every seeded peaky instance (rows that
    cut off a feasible schedule — e.g. ``b_i`` without its ``h − σ_i`` cap — raise it above OPT)."""
    from llmopt.formulations import make_formulation
    from llmopt.model.windows import start_windows
    from llmopt.solvers import get_solver

    form = make_formulation("hindsight-ip-zones")
    assert form.exact
    highs = get_solver("highs")
    with_rows = 0
    for inst in _seeded_peaky(40):
        fcfs = simulate(inst, make_policy("fcfs"))
        opt, _ = exhaustive_opt(inst, fcfs.tel)
        model = form.build(inst, start_windows(inst, fcfs.tel))
        with_rows += len(model.rows("peak_zones")) > 0
        res = highs.solve(model, time_limit=60)
        where = f"M={inst.M} {[(r.arrival, r.prompt, r.output) for r in inst.requests]}"
        assert res.objective is not None and round(res.objective) == opt, (res.objective, opt, where)
        assert check_schedule(inst, form.decode(inst, model, res.x)).tel == opt, where
    assert with_rows >= 30, with_rows
