"""Certified lower bounds for K workers (:mod:`llmopt.opt.cluster_bounds`) and their checker
(:mod:`llmopt.verify.cluster_bounds`), against exhaustive K-worker OPT.

What is checked:

1. **Never above OPT_K.** On Hypothesis instances (``n <= 5``, ``M <= 9``, arrivals ``<= 2``) and
   ``K = 1, 2, 3``, every stage of :data:`CLUSTER_STAGES` that returns a value returns one the checker
   verified, at most the exhaustive ``OPT_K`` of ``tests/cluster_helpers.py`` (which shares no code with
   the bounds), and at least ``Σ o`` for the stages that dominate it by a proof (``lp``, ``dual-lp``,
   ``zone-lp``, ``energy``, ``cluster-zone-lp``).
2. **The pooling theorem on schedules**: the union of the exhaustive optimum is accepted by the
   single-worker checker at ``K·M`` (and, for contended instances, rejected at ``M``).
3. **K = 1 is the single-worker stage**: ``lp``, ``zone-lp``, ``energy``, ``dual-lp``, ``sum-of-outputs``
   equal :func:`llmopt.opt.bounds.compute_bound` with the same upper-bound schedule.
4. **The K-specific rows work**: ``cluster-zone-lp >= lp`` always, strictly above on instances with
   large requests, and it proves ``OPT_2`` of the hand instance (``M = 6``, ``(0,1,5)`` twice and
   ``(0,3,2)``: OPT 14) where ``lp`` stays below; ``zone-lp == lp`` for ``K >= 2`` (its zones are empty).
5. **Tampered certificates are rejected** by :func:`check_cluster_certificate`: a raised claim, a
   certificate for the wrong capacity (the ``capacity`` field, or a certificate really computed on
   capacity ``M`` and presented for ``K`` workers), the wrong number of workers, an extra ``λ`` or
   ``μ`` (the claim then exceeds the value), negative or non-finite multipliers, an infeasible
   K-worker upper-bound schedule, an energy order that is not SRPT, an unknown kind.

Breakages tried by hand (each edit applied to the source, this module and
``tests/formulations/test_cluster_ip.py`` run, the edit reverted; with none applied all pass):

* The producer on capacity ``M`` instead of ``K·M`` (``pooled(instance, 1)`` in ``cluster_bound``) —
  every value test fails: the checker rejects each certificate ("certificate 'sum-of-outputs' is for
  capacity 4, but K·M = 2·4 = 8").
* ``pooled`` returning capacity ``M`` for producer and checker alike (the capacity check made to
  agree) — ``test_never_above_opt`` and the other value tests: the pooled LP over windows from a
  K-worker schedule is infeasible at ``M``, or the checker rejects that schedule at ``M`` ("memory at
  time 3 is 9 > M = 7"); ``test_certificate_for_capacity_m_is_rejected`` too.
* The capacity check in ``check_cluster_certificate`` removed — ``test_wrong_capacity_field_is_rejected``.
* The claim check removed — ``test_raised_claim_is_rejected``, ``test_certificate_for_capacity_m_is_rejected``,
  ``test_extra_multipliers_are_rejected``.
* Per-worker zone rows with right-hand side 1 instead of ``K`` (LP and checker) —
  ``test_never_above_opt`` (the LP is infeasible over the K-worker windows, or above OPT_K),
  ``test_hand_instance``, the tampering tests.
* The per-worker zone checker with ``− M·Σλ`` instead of ``− K·M·Σλ`` — ``test_never_above_opt``
  (``cluster-zone-lp = 5.67 > OPT_2 = 5``) and the contended-instance test (37.8 > 34).
* ``check_worker_split`` checking each worker at ``K·M`` — ``test_infeasible_upper_bound_schedule_is_rejected``.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from cluster_helpers import exhaustive_cluster_opt
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.model.instance import Instance
from llmopt.opt.bounds import BoundContext, compute_bound
from llmopt.opt.cluster_bounds import CLUSTER_STAGES, cluster_bound, cluster_bounds, pooled_instance
from llmopt.opt.cluster_ip import AssignedSchedule, cluster_upper_bound
from llmopt.verify.certificates import CertificateError
from llmopt.verify.checker import check_schedule
from llmopt.verify.cluster_bounds import check_cluster_certificate, check_worker_split

TOL = 1e-6
#: stages whose value is >= Σ o by a proof (λ = 0 is one of their dual points, or the energy bound's q)
DOMINATE_OUTPUTS = ("lp", "dual-lp", "zone-lp", "energy", "cluster-zone-lp")
HAND = Instance.from_tuples(6, [(0, 1, 5), (0, 1, 5), (0, 3, 2)], name="hand")


@st.composite
def _instances(draw):
    M = draw(st.integers(4, 9))
    n = draw(st.integers(1, 5))
    rows = []
    for _ in range(n):
        s = draw(st.integers(1, min(3, M - 1)))
        o = draw(st.integers(1, M - s))
        rows.append((draw(st.integers(0, 2)), s, o))
    return Instance.from_tuples(M, rows)


def _check_all_stages(inst: Instance, K: int) -> dict[str, float]:
    opt, assignment, starts = exhaustive_cluster_opt(inst, K)
    ub = cluster_upper_bound(inst, K)
    assert ub.tel >= opt
    values = {}
    for b in cluster_bounds(inst, K, CLUSTER_STAGES, upper_bound=ub):
        if b.value is None:
            assert b.stage in ("wang-relax-lp", "closed-form-dual"), f"{b.stage}: {b.detail}"
            continue
        assert b.verified and b.certificate is not None, b.detail
        assert b.value <= opt + TOL, f"{b.stage} = {b.value} > OPT_{K} = {opt}"
        if b.stage in DOMINATE_OUTPUTS:
            assert b.value >= inst.total_output - TOL
        values[b.stage] = b.value
    assert values["cluster-zone-lp"] >= values["lp"] - TOL
    # pooling theorem: the union of an optimal K-worker schedule is feasible at capacity K·M
    assert check_schedule(pooled_instance(inst, K), starts).tel == opt
    return values


@settings(max_examples=100, deadline=None, derandomize=True)
@given(_instances(), st.sampled_from([1, 2, 3]))
def test_never_above_opt(inst, K):
    _check_all_stages(inst, K)


def test_never_above_opt_on_contended_instances():
    """Larger requests than Hypothesis draws, so that ``OPT_K > Σ o`` and the bounds are tested where they bite."""
    above_outputs = 0
    for seed in range(10):
        rng = random.Random(700 + seed)
        M = rng.randint(6, 10)
        rows = []
        for _ in range(rng.randint(4, 5)):
            s = rng.randint(1, 2)
            rows.append((rng.randint(0, 1), s, rng.randint(M // 2, M - s)))
        inst = Instance.from_tuples(M, rows)
        for K in (2, 3):
            values = _check_all_stages(inst, K)
            above_outputs += values["cluster-zone-lp"] > inst.total_output + TOL
    assert above_outputs >= 8


def test_hand_instance():
    values = _check_all_stages(HAND, 2)
    assert values["lp"] < 14 - 0.5
    assert values["zone-lp"] == pytest.approx(values["lp"])  # zones of capacity 2M are empty
    assert np.ceil(values["cluster-zone-lp"] - TOL) == 14  # the per-worker zone rows prove OPT_2
    # the union of the optimum is feasible at 2M but not at M
    _, _, starts = exhaustive_cluster_opt(HAND, 2)
    assert not check_schedule(HAND, starts).ok and check_schedule(pooled_instance(HAND, 2), starts).ok


@pytest.mark.parametrize("seed", range(6))
def test_k1_equals_the_single_worker_stage(seed):
    rng = random.Random(seed)
    M = rng.randint(5, 9)
    inst = Instance.from_tuples(M, [(rng.randint(0, 2), 1, rng.randint(2, M - 1)) for _ in range(5)])
    ub = cluster_upper_bound(inst, 1)
    ctx = BoundContext(upper_bound_starts=ub.starts)
    for stage in ("lp", "zone-lp", "energy", "dual-lp", "sum-of-outputs"):
        assert cluster_bound(inst, 1, stage, upper_bound=ub).value == pytest.approx(
            compute_bound(stage, inst, ctx).value), stage
    assert cluster_bound(inst, 1, "cluster-zone-lp", upper_bound=ub).value == pytest.approx(
        compute_bound("zone-lp", inst, ctx).value)


def test_shape_restricted_stages():
    same = Instance.from_tuples(5, [(0, 1, 3)] * 4)
    for K in (1, 2):
        opt = exhaustive_cluster_opt(same, K)[0]
        for stage in ("closed-form-dual", "wang-relax-lp"):
            b = cluster_bound(same, K, stage)
            assert b.verified and b.value <= opt + TOL
    assert cluster_bound(HAND.__class__.from_tuples(6, [(0, 1, 2), (1, 1, 2)]), 2, "wang-relax-lp").value is None
    with pytest.raises(KeyError, match="unknown K-worker bound stage"):
        cluster_bound(HAND, 2, "mip")


# --- tampered certificates -----------------------------------------------------------------------------------


def _cert(stage: str = "cluster-zone-lp", inst: Instance = HAND, K: int = 2):
    b = cluster_bound(inst, K, stage)
    assert b.verified and b.certificate is not None
    return b.certificate


def test_raised_claim_is_rejected():
    for stage in ("lp", "cluster-zone-lp", "energy", "sum-of-outputs", "dual-lp", "lp-colgen"):
        cert = _cert(stage)
        check_cluster_certificate(HAND, 2, cert)
        with pytest.raises(CertificateError, match="claims|certifies only"):
            check_cluster_certificate(HAND, 2, replace(cert, claimed=cert.claimed + 1e-3 * max(1.0, cert.claimed)))


def test_wrong_capacity_field_is_rejected():
    cert = _cert()
    with pytest.raises(CertificateError, match="capacity 6, but K·M"):
        check_cluster_certificate(HAND, 2, replace(cert, capacity=HAND.M))
    with pytest.raises(CertificateError, match="for 2 workers, not 3"):
        check_cluster_certificate(HAND, 3, cert)


def test_certificate_for_capacity_m_is_rejected():
    """A certificate computed for one worker of M (a bound on OPT_1(M), too high for K workers) and
    presented as a K-worker certificate is re-evaluated at K·M, where it certifies less than it claims."""
    for stage in ("lp", "cluster-zone-lp"):
        single = cluster_bound(HAND, 1, stage)
        assert single.value > exhaustive_cluster_opt(HAND, 2)[0]
        cert = replace(single.certificate, workers=2, capacity=2 * HAND.M, assignment=None, starts=None)
        with pytest.raises(CertificateError, match="certifies only"):
            check_cluster_certificate(HAND, 2, cert)


def test_extra_multipliers_are_rejected():
    """A multiplier added where no request can hold memory (or no zone can lie) only subtracts
    ``K·M·δ`` (or ``K·δ``) from the certified value, so the unchanged claim is then above it."""
    cert = _cert()
    far = 10_000
    for field in ("lam", "mu"):
        times, vals = getattr(cert, field)
        tampered = (np.append(times, far), np.append(vals, 0.01))
        with pytest.raises(CertificateError, match="certifies only"):
            check_cluster_certificate(HAND, 2, replace(cert, **{field: tampered}))
    times, lam = cert.lam
    with pytest.raises(CertificateError, match="< 0"):
        check_cluster_certificate(HAND, 2, replace(cert, lam=(times, -np.abs(lam) - 1)))
    with pytest.raises(CertificateError, match="not a finite"):
        check_cluster_certificate(HAND, 2, replace(cert, mu=(cert.mu[0], np.full(len(cert.mu[1]), np.nan))))


def test_infeasible_upper_bound_schedule_is_rejected():
    cert = _cert("lp")
    # r0 and r1 together on worker 0 from step 0: 12 > M = 6 there, though the union fits 2M = 12
    bad = {"r0": 0, "r1": 0, "r2": 0}
    with pytest.raises(CertificateError, match="worker 0"):
        check_cluster_certificate(HAND, 2, replace(cert, assignment={"r0": 0, "r1": 0, "r2": 1}, starts=bad))
    with pytest.raises(CertificateError, match="not a worker"):
        check_cluster_certificate(HAND, 2, replace(cert, assignment={"r0": 0, "r1": 2, "r2": 1}))
    with pytest.raises(CertificateError, match="both"):
        check_cluster_certificate(HAND, 2, replace(cert, assignment=None))
    rep = check_worker_split(HAND, 2, {"r0": 0, "r1": 1, "r2": 0, "zz": 1}, {"r0": 2, "r1": 0, "r2": 0})
    assert not rep.ok and "zz" in rep.violations[0]


def test_non_srpt_order_and_unknown_kind_are_rejected():
    cert = _cert("energy")
    with pytest.raises(CertificateError):
        check_cluster_certificate(HAND, 2, replace(cert, order=tuple(reversed(cert.order))))
    with pytest.raises(CertificateError, match="unknown certificate kind"):
        check_cluster_certificate(HAND, 2, replace(cert, kind="trust-me"))
    with pytest.raises(CertificateError, match="workers"):
        check_cluster_certificate(HAND, 0, cert)


def test_upper_bound_schedule_narrows_but_never_breaks():
    """A worse K-worker schedule only widens the windows: the bound can drop, never rise above OPT."""
    serial = {"r0": 0, "r1": 5, "r2": 10}
    weak = AssignedSchedule({"r0": 0, "r1": 0, "r2": 0}, serial, 0, (), "serial")
    for stage in ("lp", "cluster-zone-lp"):
        b = cluster_bound(HAND, 2, stage, upper_bound=weak)
        assert b.verified and b.value <= 14 + TOL
