"""The K-worker zone checkers verify the schedule their windows rest on, on every worker.

The case (found in review): three requests ``(0, 1, 5)``, ``M = 10``, ``K = 2``. Pooled (one worker of
``2M = 20``) all three start at 0 (TEL 15 = Σo); on two workers of 10 two of them cannot run in
step, and ``OPT_2 = 17``. Windows from the pooled-only schedule's TEL are the single start 0, where
all three peak zones (split 5: ``a = b = 1``) cover ``τ = 5``; with ``μ_5 = 10^6`` the checker, given
that schedule as if it were a K-worker one, certified 1,000,015.

What is checked:

* :func:`~llmopt.verify.cluster_bounds.check_cluster_zone_certificate` verifies a K-worker schedule
  with the independent cluster checker before it narrows the windows: the pooled-only starts are
  rejected under every assignment, as are starts without an assignment (the old call) and starts of a
  request assigned to no worker;
* with a verified K-worker schedule, or none, the same certificate stays ``<= OPT_2`` (exhaustive), and a
  verified optimal schedule narrows the windows (the bound may only rise);
* the single-worker zone checker and ``lagrangian_with_cliques`` refuse a schedule with ``workers > 1``;
* on random tiny instances with random ``λ, μ`` and the exhaustive K-worker optimum's schedule, the bound
  never exceeds ``OPT_K`` (hypothesis).

Breakages tried by hand (each made the listed tests fail; the code was restored):

1. ``_verified_k_worker_starts`` returning ``dict(starts)`` unchecked: ``pooled_only_schedule_is_rejected``
   (it certified 1,000,015) and ``starts_need_their_assignment``.
2. The ``workers > 1`` guard in ``lagrangian_with_cliques`` removed: ``single_worker_checkers_refuse_k_worker_windows``.
"""

from __future__ import annotations

import itertools
import random

import pytest
from cluster_helpers import exhaustive_cluster_opt
from helpers import random_tiny_instance
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.model.instance import Instance
from llmopt.verify.certificates import CertificateError, _multipliers
from llmopt.verify.clique_certificate import lagrangian_with_cliques
from llmopt.verify.cluster_bounds import ClusterCertificate, check_cluster_certificate, check_cluster_zone_certificate
from llmopt.verify.zone_certificate import certified_zones, check_zone_certificate

INST = Instance.from_tuples(10, [(0, 1, 5)] * 3)
POOLED_ONLY = {"r0": 0, "r1": 0, "r2": 0}
MU = {5: 1e6}
SPLIT = 5


def test_the_case_is_what_it_says():
    opt, assignment, starts = exhaustive_cluster_opt(INST, 2)
    assert opt == 17
    assert certified_zones(INST, SPLIT) == {0: (1, 1), 1: (1, 1), 2: (1, 1)}


def test_pooled_only_schedule_is_rejected():
    for labels in itertools.product(range(2), repeat=3):
        assignment = {f"r{i}": w for i, w in enumerate(labels)}
        with pytest.raises(CertificateError, match="K-worker schedule the windows rest on is rejected: worker"):
            check_cluster_zone_certificate(INST, 2, {}, MU, SPLIT, assignment, POOLED_ONLY)


def test_starts_need_their_assignment():
    with pytest.raises(CertificateError, match="both the assignment and the starts"):
        check_cluster_zone_certificate(INST, 2, {}, MU, SPLIT, None, POOLED_ONLY)
    with pytest.raises(CertificateError, match="assigns it to no worker"):
        check_cluster_zone_certificate(INST, 2, {}, MU, SPLIT, {"r0": 0, "r1": 1}, POOLED_ONLY)


def test_a_verified_schedule_or_none_keeps_the_bound_below_opt():
    opt, assignment, starts = exhaustive_cluster_opt(INST, 2)
    horizon = check_cluster_zone_certificate(INST, 2, {}, MU, SPLIT)
    narrowed = check_cluster_zone_certificate(INST, 2, {}, MU, SPLIT, assignment, starts)
    assert horizon <= narrowed <= opt == 17
    # through the certificate record too
    cert = ClusterCertificate("cluster-zone-lp", "cluster-zone", 2, 20, claimed=narrowed, lam={}, mu=MU, split=SPLIT,
                              assignment=assignment, starts=starts)
    assert check_cluster_certificate(INST, 2, cert) == narrowed
    with pytest.raises(CertificateError, match="rejected"):
        check_cluster_certificate(INST, 2, ClusterCertificate("cluster-zone-lp", "cluster-zone", 2, 20, claimed=0.0,
                                                              lam={}, mu=MU, split=SPLIT,
                                                              assignment={"r0": 0, "r1": 0, "r2": 1},
                                                              starts=POOLED_ONLY))


def test_single_worker_checkers_refuse_k_worker_windows():
    with pytest.raises(CertificateError, match="K > 1 workers need a K-worker schedule"):
        check_zone_certificate(INST, {}, MU, SPLIT, POOLED_ONLY, workers=2)
    zones = certified_zones(INST, SPLIT)
    with pytest.raises(CertificateError, match="K > 1 workers need a K-worker schedule"):
        lagrangian_with_cliques(INST, _multipliers({}, 0.0), [(zones, _multipliers(MU, 0.0))], POOLED_ONLY, workers=2)
    # without a schedule (horizon windows) the K-worker value is still available, and below OPT_2
    assert check_zone_certificate(INST, {}, MU, SPLIT, workers=2) <= 17
    # one worker with its own schedule stays as it was
    assert check_zone_certificate(Instance.from_tuples(20, [(0, 1, 5)] * 3), {}, MU, SPLIT, POOLED_ONLY) <= 15


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), K=st.integers(2, 3))
def test_random_certificates_stay_below_opt_k(seed: int, K: int):
    rng = random.Random(seed)
    inst = random_tiny_instance(rng, n_range=(2, 4), M_range=(5, 9), max_arrival=2)
    opt, assignment, starts = exhaustive_cluster_opt(inst, K)
    T = max(r.arrival for r in inst.requests) + sum(r.output for r in inst.requests) + 2
    lam = {t: rng.choice([0.0, 0.05, 0.3, 1e6]) for t in range(T)}
    mu = {t: rng.choice([0.0, 0.5, 3.0, 1e6]) for t in range(T)}
    split = rng.randint(1, inst.M - 1)
    assert check_cluster_zone_certificate(inst, K, lam, mu, split, assignment, starts) <= opt
    assert check_cluster_zone_certificate(inst, K, lam, mu, split) <= opt
