"""Tests of :mod:`llmopt.papers.chen.theory` (C's closed-form theory; DIGEST §5.4, §3.6, T-11, T-12).

Every quantity is checked against at least one derivation that shares no code with the
module: Cor. 1's matrices (Rayleigh quotient), the paper's period model (Prop. 1 / Lemma 1,
re-implemented here as a loop), the Thm 6 / Thm 7 / Thm 8 proof expressions, and the
DIGEST tables (values derived independently of this code).

Mutations tried by hand (each applied alone to ``llmopt/papers/chen/theory.py``; the whole file was
run; every one made tests fail; the module was restored byte-for-byte afterwards):

* ``lemma2_cr``: ``δ(ℓ) = 1`` → period-model, leading-zeros, two-point (values, proof, s = 1
  sup), general-s worst-case tests (the s = 0, ℓ = 1 Rayleigh test cannot see it: δ ≡ 1 there).
* ``lemma2_cr``: ``Σ_{i>k}(i−k)…`` computed over ``i ≥ k`` (suffix-sum shift dropped); the
  denominator tail ``Σ_{i>k} x_i`` computed over ``i ≥ k``; the factor 2 on the ``(i−k)`` sum
  dropped; ``x_i/(s+i)`` → ``x_i/(s+i+1)`` → each fails the Rayleigh, period-model, two-point,
  Figure 1 worst-distribution and Figure 3 tests (34–36 failures).
* ``amin_matrices``: ``½(i+j)² + m²`` instead of ``− m²`` → Figure 1 values, u = 2 exact,
  trace = H_u, T_1/T_2, Rayleigh, reduction-to-Cor. 1 tests.
* ``amin_b_inverse``: last diagonal ``1/(2u+1)`` → inverse, trace, T_1/T_2 tests.
* ``figure1_cr``: smallest instead of largest generalized eigenvalue → Figure 1 values, fit,
  Cholesky-reduction, worst-distribution tests.
* ``lemma2_matrices``: ``2(j−ℓ)`` → ``2(j−ℓ−1)`` → general-matrix and reduce-to-Cor. 1 tests.
* ``worst_case_distribution`` returning the unnormalised eigenvector; ``figure1_fit`` shift
  0.2793 → 0.2739 → one test each.
* ``two_point_ratio_amin``: ``2α²t`` → ``2αt`` → two-point proof / Lemma 2 tests.
* ``two_point_cr_al``: branch at ``α <= 0.4`` → Thm 7 sup test; ``two_point_ratio_al``:
  ``3α²`` → ``2α²`` → Thm 7 sup and A_ℓ TEL-pieces tests; ``tel_al_closed`` ``3ℓ(s+ℓ)`` →
  ``2ℓ(s+ℓ)`` → A_ℓ TEL-pieces test.
* ``two_point_ratio_random``: ``1 − α²`` → ``1 − α`` → A_random test.
* ``thm8_closed_form``: ``11q⁴`` → ``11q³`` → Figure 3 table and Thm 8 proof-pieces tests.
* ``amax_thm2_instance_sup``: ``r* = 1 + √(2 + α)``; ``amax_thm2_instance_ratio``:
  ``2αr`` → ``2r``; ``amax_upper_bound`` without the ``/2`` → A_max table test.
* ``outputs_with_proportions`` without the largest-remainder top-up; ``sample_outputs``
  without the ``+ ℓ`` offset → the helper tests.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from llmopt.papers.chen import theory as ct

# --------------------------------------------------------------------------- independent references


def _period_model_ratio(x: np.ndarray, ell: int, s: float) -> float:
    """E[TEL(A_min)] / TEL(H-SF) from C's period model, written as a plain loop.

    Period ``τ_k`` (k = ℓ..u): A_min completes ``c_kj`` requests of true length ``j >= k``
    (Prop. 1: ``(s+ℓ)/(s+j)·x_j`` if ``k = ℓ``, else ``x_j/(s+j)``); each completed request of
    length ``j`` costs ``j(s+j)/M`` time (``E[τ_k] = Σ_j j(s+j) c_kj / M``). Completed requests
    finish mid-period on average; everyone not yet completed waits the whole period. H-SF
    runs class ``k`` for ``k(s+k) x_k/M``. (Common factor ``n²/M`` dropped.)
    """
    u = ell + len(x) - 1
    xs = {k: float(x[k - ell]) for k in range(ell, u + 1)}
    remaining = dict(xs)
    tel_amin = 0.0
    for k in range(ell, u + 1):
        completed = {}
        for j in range(k, u + 1):
            completed[j] = (s + ell) / (s + j) * xs[j] if k == ell else xs[j] / (s + j)
        tau = sum(j * (s + j) * c for j, c in completed.items())
        for j, c in completed.items():
            remaining[j] -= c
        left = sum(remaining[j] for j in range(k + 1, u + 1))
        tel_amin += tau * (sum(completed.values()) / 2.0 + left)
        # Paper (L283): "the expected number of remaining requests is Σ_{i>k} (i−k)/(s+i) x_i n"
        assert left == pytest.approx(sum((i - k) / (s + i) * xs[i] for i in range(k + 1, u + 1)), abs=1e-12)
        assert remaining[k] == pytest.approx(0.0, abs=1e-12)  # class k is done by the end of τ_k
    tel_hsf = 0.0
    for k in range(ell, u + 1):
        tau = k * (s + k) * xs[k]
        tel_hsf += tau * (xs[k] / 2.0 + sum(xs[i] for i in range(k + 1, u + 1)))
    return tel_amin / tel_hsf


def _harmonic(u: int) -> float:
    return math.fsum(1.0 / i for i in range(1, u + 1))


# --------------------------------------------------------------------------- Lemma 2


def test_lemma2_equals_cor1_rayleigh_quotient_for_random_x() -> None:
    """s = 0, ℓ = 1: Lemma 2 (suffix sums) == xᵀA_u x / xᵀB_u x with Cor. 1's entries."""
    rng = np.random.default_rng(11)
    for u in (1, 2, 3, 7, 25, 120):
        A, B = ct.amin_matrices(u)
        for _ in range(5):
            x = rng.random(u) * (rng.random(u) < 0.8)  # zeros allowed
            if not x.any():
                x[0] = 1.0
            assert ct.lemma2_cr(x, 1, 0) == pytest.approx(x @ A @ x / (x @ B @ x), rel=1e-12)


@pytest.mark.parametrize(("ell", "s"), [(1, 0), (1, 1), (2, 0), (3, 1), (5, 2.5)])
def test_lemma2_equals_period_model_and_general_matrices(ell: int, s: float) -> None:
    rng = np.random.default_rng(ell * 100 + int(2 * s))
    for length in (1, 2, 6, 17):
        x = rng.random(length)
        x[rng.random(length) < 0.3] = 0.0
        if not x.any():
            x[-1] = 1.0
        cr = ct.lemma2_cr(x, ell, s)
        assert cr == pytest.approx(_period_model_ratio(x, ell, s), rel=1e-12)
        A, B = ct.lemma2_matrices(ell + length - 1, ell, s)
        assert cr == pytest.approx(x @ A @ x / (x @ B @ x), rel=1e-12)
        assert cr >= 1.0 - 1e-12


def test_lemma2_general_matrices_reduce_to_cor1() -> None:
    for u in (1, 4, 30):
        A1, B1 = ct.amin_matrices(u)
        A2, B2 = ct.lemma2_matrices(u, 1, 0)
        np.testing.assert_allclose(A2, A1, rtol=1e-13)
        np.testing.assert_array_equal(B2, B1)


def test_lemma2_scale_invariance_trailing_zeros_and_tel_pieces() -> None:
    x = np.array([0.2, 0.0, 0.5, 0.3])
    cr = ct.lemma2_cr(x, 2, 1)
    assert ct.lemma2_cr(7.0 * x, 2, 1) == pytest.approx(cr, rel=1e-14)
    assert ct.lemma2_cr(np.append(x, [0.0, 0.0]), 2, 1) == pytest.approx(cr, rel=1e-14)
    n, M = 1000.0, 5000.0
    hsf = ct.tel_hsf_closed(x, 2, 1, n, M)
    # TEL(H-SF) = (n²/(2M)) Σ_k k(s+k) x_k (x_k + 2 Σ_{i>k} x_i), by hand for k = 2, 4, 5:
    by_hand = 2 * 3 * 0.2 * (0.2 + 2 * 0.8) + 4 * 5 * 0.5 * (0.5 + 2 * 0.3) + 5 * 6 * 0.3 * 0.3
    assert hsf == pytest.approx(n * n / (2 * M) * by_hand, rel=1e-14)
    assert ct.tel_amin_closed(x, 2, 1, n, M) / hsf == pytest.approx(cr, rel=1e-14)
    assert ct.lemma2_cr([0.0, 1.0], 1, 1) == pytest.approx(1.0)  # one length only: A_min = H-SF


@pytest.mark.parametrize("s", [0, 1, 2.5, 7])
def test_lemma2_leading_zeros_equal_a_larger_ell(s: float) -> None:
    """An empty period τ_ℓ merges into τ_{ℓ+1} (δ = s+ℓ+1): the ratio does not depend on how
    far the lower bound ℓ lies below the support (a consistency property of Lemma 2)."""
    rng = np.random.default_rng(int(2 * s))
    for zeros in (1, 2, 5):
        x = rng.random(8)
        padded = np.concatenate([np.zeros(zeros), x])
        assert ct.lemma2_cr(padded, 1, s) == pytest.approx(ct.lemma2_cr(x, 1 + zeros, s), rel=1e-13)
        assert ct.lemma2_cr(padded, 1, s) == pytest.approx(_period_model_ratio(padded, 1, s), rel=1e-12)


@pytest.mark.parametrize("bad", [[], [0.0, 0.0], [1.0, -0.1], [1.0, float("nan")], [[1.0]]])
def test_lemma2_rejects_bad_distributions(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        ct.lemma2_cr(bad, 1, 0)


def test_lemma2_rejects_bad_ell_and_s() -> None:
    for ell, s in [(0, 0), (1.5, 0), (1, -1), (1, float("inf"))]:
        with pytest.raises(ValueError):
            ct.lemma2_cr([1.0], ell, s)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Figure 1 (T-11)


@pytest.mark.parametrize(("u", "value"), [(1, 1.0), (2, 1.25), (10, 1.7249), (100, 2.3333), (1000, 2.9239)])
def test_figure1_lambda_max(u: int, value: float) -> None:
    assert ct.figure1_cr(u) == pytest.approx(value, abs=1e-4)


def test_figure1_u2_exact() -> None:
    # A_2 = [[1, 7/4], [7/4, 4]], B_2 = [[1, 1], [1, 4]]: det(A − λB) = 4(1−λ)² − (7/4−λ)² → λ ∈ {1/4, 5/4}
    A, B = ct.amin_matrices(2)
    np.testing.assert_allclose(A, [[1.0, 1.75], [1.75, 4.0]])
    np.testing.assert_allclose(B, [[1.0, 1.0], [1.0, 4.0]])
    assert ct.figure1_cr(2) == pytest.approx(1.25, rel=1e-14)


def test_figure1_eigh_agrees_with_exact_cholesky_reduction() -> None:
    """B_u = C·diag(2k−1)·Cᵀ (C lower-triangular ones), so λ_max(A, B) is the top eigenvalue of
    D^{-1/2} Δ A Δᵀ D^{-1/2} (Δ = first differences): no Cholesky of an ill-conditioned B."""
    u = 400
    A, B = ct.amin_matrices(u)
    C = np.tril(np.ones((u, u)))
    d = 2.0 * np.arange(1, u + 1) - 1.0
    np.testing.assert_array_equal(C @ np.diag(d) @ C.T, B)
    Y = np.diff(np.vstack([np.zeros((1, u)), A]), axis=0)
    Y = np.diff(np.hstack([np.zeros((u, 1)), Y]), axis=1)
    lam = np.linalg.eigvalsh(Y / np.sqrt(np.outer(d, d)))[-1]
    assert ct.figure1_cr(u) == pytest.approx(lam, rel=1e-10)


@pytest.mark.parametrize("u", [1, 2, 3, 5, 10, 37, 100, 400])
def test_trace_of_binv_a_is_harmonic_number(u: int) -> None:
    A, B = ct.amin_matrices(u)
    h = _harmonic(u)
    assert float(np.trace(np.linalg.solve(B, A))) == pytest.approx(h, rel=1e-8)
    assert float(np.sum(ct.amin_b_inverse(u) * A)) == pytest.approx(h, rel=1e-12)  # tr(B⁻¹A), B⁻¹ symmetric
    assert ct.figure1_trace_bound(u) == pytest.approx(h, rel=1e-14)
    assert ct.figure1_cr(u) <= h + 1e-9


@pytest.mark.parametrize("u", [1, 2, 3, 8, 50, 300])
def test_trace_pieces_t1_t2_closed_forms(u: int) -> None:
    """C L339–364: T_1(u) = (u²+1)/2 + ½Σ1/(2i+1), 2T_2(u) = −(u²−1)/2 + Σ1/(i+1) − ½Σ1/(2i+1)."""
    A, _ = ct.amin_matrices(u)
    Binv = ct.amin_b_inverse(u)
    t1 = float(np.sum(np.diag(Binv) * np.diag(A)))
    t2 = float(np.sum(np.diag(Binv, 1) * np.diag(A, 1)))
    odd = math.fsum(1.0 / (2 * i + 1) for i in range(1, u))
    assert t1 == pytest.approx((u * u + 1) / 2 + odd / 2, rel=1e-12)
    assert 2 * t2 == pytest.approx(-(u * u - 1) / 2 + math.fsum(1.0 / (i + 1) for i in range(1, u)) - odd / 2, abs=1e-9)


@pytest.mark.parametrize("u", [1, 2, 3, 6, 20, 200])
def test_b_inverse_explicit_tridiagonal(u: int) -> None:
    _, B = ct.amin_matrices(u)
    Binv = ct.amin_b_inverse(u)
    np.testing.assert_allclose(B @ Binv, np.eye(u), atol=1e-9)
    i = np.arange(1, u + 1)
    if u > 1:
        np.testing.assert_allclose(np.diag(Binv)[:-1], 4 * i[:-1] / (4 * i[:-1] ** 2 - 1))
        np.testing.assert_allclose(np.diag(Binv, 1), -1.0 / (2 * i[:-1] + 1))
    assert Binv[-1, -1] == pytest.approx(1.0 / (2 * u - 1))
    assert np.count_nonzero(np.triu(Binv, 2)) == 0


@pytest.mark.parametrize("u", [1, 2, 5, 40, 300])
def test_a_and_b_positive_definite(u: int) -> None:
    A, B = ct.amin_matrices(u)
    np.linalg.cholesky(A)  # raises LinAlgError if not positive definite
    np.linalg.cholesky(B)
    assert np.linalg.eigvalsh(A)[0] > 0 and np.linalg.eigvalsh(B)[0] > 0
    np.testing.assert_array_equal(A, A.T)


def test_figure1_fit_within_001_for_u_50_to_1000() -> None:
    for u in (50, 60, 75, 100, 150, 200, 300, 400, 500, 650, 800, 1000):
        assert abs(ct.figure1_fit(u) - ct.figure1_cr(u)) < 0.01, u
    assert ct.figure1_fit(1) == pytest.approx(1.2216, abs=1e-4)  # poor below u ≈ 10
    assert ct.figure1_fit(1000) == pytest.approx(0.2555 * math.log(1000.2793) + 1.1587)


@pytest.mark.parametrize("u", [1, 2, 10, 100, 1000])
def test_figure1_worst_distribution_positive_and_attains_lambda_max(u: int) -> None:
    x = ct.figure1_worst_distribution(u)
    assert x.shape == (u,)
    assert np.all(x > 0)
    assert x.sum() == pytest.approx(1.0, rel=1e-12)
    lam = ct.figure1_cr(u)
    assert ct.lemma2_cr(x, 1, 0) == pytest.approx(lam, rel=1e-9)
    # and it beats random distributions
    rng = np.random.default_rng(u)
    for _ in range(20):
        assert ct.lemma2_cr(rng.random(u), 1, 0) <= lam + 1e-9


def test_worst_case_distribution_general_s_ell() -> None:
    lam, x = ct.worst_case_distribution(10, 1, 0)
    assert lam == pytest.approx(ct.figure1_cr(10), rel=1e-12)
    np.testing.assert_allclose(x, ct.figure1_worst_distribution(10), rtol=1e-9)
    for ell, s in [(1, 1), (2, 1), (3, 2)]:
        lam, x = ct.worst_case_distribution(30, ell, s)
        assert np.all(x > 0) and x.shape == (31 - ell,)
        assert ct.lemma2_cr(x, ell, s) == pytest.approx(lam, rel=1e-9)
        rng = np.random.default_rng(ell)
        assert max(ct.lemma2_cr(rng.random(31 - ell), ell, s) for _ in range(20)) <= lam + 1e-9


# --------------------------------------------------------------------------- two-point family (T-12)


def _thm6_proof_ratio(ell: int, u: int, xl: float, xu: float) -> float:
    """The Thm 6 proof's num/den (C L995–999), written independently."""
    num = (
        ell * (ell * xl + u * xu) * (xl + ell / u * xu + 2 * (u - ell) / u * xu)
        + u * u * xu * ((u - ell) / u) ** 2 * xu
    )
    den = ell**2 * xl**2 + 2 * ell**2 * xl * xu + u**2 * xu**2
    return num / den


@pytest.mark.parametrize(("ell", "u", "value"), [(1, 4, 1.375), (2, 10, 1.4), (5, 10, 1.25)])
def test_two_point_lemma2_values_at_worst_t(ell: int, u: int, value: float) -> None:
    alpha = ell / u
    t = ct.two_point_worst_t_amin(alpha)
    assert t == pytest.approx(u / ell)
    x = ct.two_point_distribution(ell, u, t)
    assert ct.lemma2_cr(x, ell, 0) == pytest.approx(value, rel=1e-12)
    assert ct.two_point_cr_amin(alpha) == pytest.approx(value, rel=1e-14)
    cr, t_star = ct.two_point_sup_amin(ell, u, 0)
    assert cr == pytest.approx(value, rel=1e-9)
    assert t_star == pytest.approx(u / ell, rel=1e-3)


@pytest.mark.parametrize(("ell", "u"), [(1, 2), (1, 4), (2, 10), (3, 7), (5, 10), (1, 50)])
def test_two_point_ratio_matches_lemma2_and_thm6_proof(ell: int, u: int) -> None:
    alpha = ell / u
    ts = np.concatenate([[0.0], np.geomspace(1e-3, 1e3, 301)])
    vals = []
    for t in ts:
        r = ct.two_point_ratio_amin(alpha, float(t))
        assert r == pytest.approx(ct.lemma2_cr(ct.two_point_distribution(ell, u, float(t)), ell, 0), rel=1e-12)
        assert r == pytest.approx(_thm6_proof_ratio(ell, u, float(t), 1.0), rel=1e-12)
        vals.append(r)
    # max over the grid is attained next to t = 1/α, and never exceeds (3 − α)/2
    assert max(vals) <= (3 - alpha) / 2 + 1e-12
    best = float(ts[int(np.argmax(vals))])
    assert abs(math.log(best) - math.log(1 / alpha)) < 0.05
    assert ct.two_point_ratio_amin(alpha, 1 / alpha) == pytest.approx((3 - alpha) / 2, rel=1e-14)


def test_thm7_bound_is_sup_of_al_ratio() -> None:
    for alpha in (0.01, 0.1, 0.2, 0.3, ct.ALPHA_STAR, 0.45, 0.5, 0.55, 0.7, 0.9, 0.99):
        ts = np.concatenate([[0.0], np.geomspace(1e-4, 1e4, 4001)])
        grid_max = max(ct.two_point_ratio_al(alpha, float(t)) for t in ts)
        bound = ct.two_point_cr_al(alpha)
        assert grid_max <= bound + 1e-12
        assert grid_max == pytest.approx(bound, rel=1e-5)
        assert ct.two_point_ratio_al(alpha, ct.two_point_worst_t_al(alpha)) == pytest.approx(bound, rel=1e-12)
    assert ct.two_point_cr_al(0.5) == pytest.approx(1.5) == pytest.approx(1 + 2 * 0.25)
    assert ct.two_point_cr_al(0.25) == pytest.approx(1 + 0.25 / 1.5)


def test_al_ratio_from_proof_tel_pieces_and_s_generalisation() -> None:
    for ell, u in [(1, 4), (2, 10), (3, 4)]:
        alpha = ell / u
        for t in (0.0, 0.3, 1.0, 2.5, 9.0):
            xl, xu = t / (1 + t), 1 / (1 + t)
            tel_al = u**2 / 2 * (alpha**2 * xl**2 + 3 * alpha**2 * xl * xu + (2 * alpha**2 + 1) * xu**2)
            tel_hsf = u**2 / 2 * (alpha**2 * xl**2 + 2 * alpha**2 * xl * xu + xu**2)
            assert ct.two_point_ratio_al(alpha, t) == pytest.approx(tel_al / tel_hsf, rel=1e-13)
            assert ct.al_cr(ell, u, t, 0) == pytest.approx(tel_al / tel_hsf, rel=1e-13)
            # n²/(2M)-units: the paper's (u²/2)[…] is TEL·M/n² with x normalised
            assert ct.tel_al_closed(xl, xu, ell, u, 0, 10.0, 7.0) == pytest.approx(100 / 7 * tel_al, rel=1e-13)
    # s > 0: pass 1 costs ℓ(s+ℓ) per request, pass 2 u(s+u) per long one (by hand, ℓ=1, u=4, s=1, t=1)
    by_hand = (2 * 0.25 + 3 * 2 * 0.25 + (2 * 2 + 20) * 0.25) / (2 * 0.25 + 2 * 2 * 0.25 + 20 * 0.25)
    assert ct.al_cr(1, 4, 1.0, 1) == pytest.approx(by_hand, rel=1e-13)


def test_alpha_star_and_crossing() -> None:
    a = ct.ALPHA_STAR
    assert a == pytest.approx((3 - math.sqrt(5)) / 2) == pytest.approx(0.381966, abs=1e-6)
    assert a * a - 3 * a + 1 == pytest.approx(0.0, abs=1e-15)
    assert ct.two_point_cr_al(a) == pytest.approx(ct.two_point_cr_amin(a), rel=1e-12)
    assert ct.two_point_cr_al(a - 0.05) < ct.two_point_cr_amin(a - 0.05)
    assert ct.two_point_cr_al(a + 0.05) > ct.two_point_cr_amin(a + 0.05)
    assert 1 / a == pytest.approx(2.618, abs=1e-3)  # "u ≳ 2.62 ℓ"


def test_random_two_point_ratio_sup() -> None:
    for alpha in (0.01, 0.1, 0.25, 0.5, 0.9):
        assert ct.two_point_ratio_random(alpha, 1 / alpha) == pytest.approx(ct.random_upper_bound(alpha), rel=1e-12)
        assert ct.random_upper_bound(alpha) == pytest.approx(1 + (1 - alpha**2) / (2 * (alpha + alpha**2)))
        grid = max(ct.two_point_ratio_random(alpha, float(t)) for t in np.geomspace(1e-3, 1e4, 2001))
        assert grid <= ct.random_upper_bound(alpha) + 1e-12
        # A_min's excess over 1 is α times A_random's (same t)
        for t in (0.5, 2.0, 7.0):
            assert ct.two_point_ratio_amin(alpha, t) - 1 == pytest.approx(
                alpha * (ct.two_point_ratio_random(alpha, t) - 1), rel=1e-12
            )
    assert [ct.random_upper_bound(a) for a in (0.5, 0.25, 0.1, 0.01)] == pytest.approx([1.5, 2.5, 5.5, 50.5])


def test_two_point_sup_with_prompt_size_is_grid_max() -> None:
    for ell, u in [(1, 4), (2, 10)]:
        cr, t_star = ct.two_point_sup_amin(ell, u, 1)
        grid = max(
            ct.lemma2_cr(ct.two_point_distribution(ell, u, float(t)), ell, 1) for t in np.geomspace(1e-2, 1e2, 801)
        )
        assert grid <= cr + 1e-9
        assert cr == pytest.approx(grid, rel=1e-5)


# --------------------------------------------------------------------------- Figure 3 / Thm 8

FIG3_Q = (0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99)
FIG3_G = (1.1455, 1.3912, 1.5561, 1.6448, 1.6788, 1.6814, 1.6822)
FIG3_LG = (1.2503, 1.4735, 1.5324, 1.5499, 1.5551, 1.5554, 1.5556)


@pytest.mark.parametrize(("q", "g", "lg"), list(zip(FIG3_Q, FIG3_G, FIG3_LG)))
def test_figure3_table(q: float, g: float, lg: float) -> None:
    assert ct.geometric_cr(q) == pytest.approx(g, abs=1e-4)
    assert ct.lg_cr(q) == pytest.approx(lg, abs=1e-4)
    assert ct.thm8_closed_form(q) == pytest.approx(lg, abs=1e-4)
    assert ct.lg_cr(q) == pytest.approx(ct.thm8_closed_form(q), rel=1e-10)


def test_figure3_monotone_and_limits() -> None:
    qs = np.linspace(0.02, 0.98, 49)
    g = [ct.geometric_cr(float(q), 1500) for q in qs]
    lg = [ct.thm8_closed_form(float(q)) for q in qs]
    assert all(b > a for a, b in zip(g, g[1:]))
    assert all(b > a for a, b in zip(lg, lg[1:]))
    assert max(g) < 1.7 and ct.geometric_cr(0.995, 6000) == pytest.approx(1.682, abs=1e-3)
    assert ct.thm8_closed_form(1 - 1e-7) == pytest.approx(ct.THM8_LIMIT, abs=1e-6)
    assert ct.THM8_LIMIT == pytest.approx(14 / 9) and max(lg) < 14 / 9 < 1.6


@pytest.mark.parametrize("q", [0.2, 0.5, 0.8])
def test_thm8_proof_pieces(q: float) -> None:
    """Thm 8 proof (L1062–1068), sums truncated at 2000: Lemma 2's num/den for LG without p⁴."""
    k = np.arange(1, 2001, dtype=float)
    w = k * q ** (k - 1)  # x_k / p²
    tail_gt = np.append(np.cumsum(w[::-1])[::-1][1:], 0.0)
    den = float(np.sum(k**2 * w * (w + 2 * tail_gt)))
    den_closed = (1 + 2 * q + 11 * q**2 + 8 * q**3 + 11 * q**4 + 2 * q**5 + q**6) / ((1 - q) ** 6 * (1 + q) ** 4)
    assert den == pytest.approx(den_closed, rel=1e-10)
    printed = float(np.sum(k**2 * w * (2 * w + tail_gt)))  # the proof's typo: 2 on the wrong term
    assert printed != pytest.approx(den_closed, rel=1e-3)
    num = 0.0
    for kk in range(1, 2001):
        i = k[kk - 1 :]
        num += float(np.sum(i**2 * q ** (i - 1))) * float(np.sum(q ** (i - 1)) + 2 * np.sum((i - kk) * q ** (i - 1)))
    num_closed = (1 + 3 * q + 6 * q**2 + 3 * q**3 + q**4) / ((1 - q) ** 6 * (1 + q) ** 2)
    assert num == pytest.approx(num_closed, rel=1e-10)
    assert num / den == pytest.approx(ct.thm8_closed_form(q), rel=1e-10)


# --------------------------------------------------------------------------- A_max, A_random (§3.6)


@pytest.mark.parametrize(
    ("alpha", "at_sqrt", "sup", "argmax", "paper"),
    [
        (0.5, 1.8673, 2.1547, 2.732, 2.4142),
        (0.25, 3.0000, 4.5298, 2.581, 6.0000),
        (0.1, 4.7097, 11.7420, 2.483, 20.8114),
        (0.01, 11.9565, 120.3598, 2.421, 550.0000),
    ],
)
def test_amax_thm2_table(alpha: float, at_sqrt: float, sup: float, argmax: float, paper: float) -> None:
    assert ct.amax_thm2_at_sqrt_alpha(alpha) == pytest.approx(at_sqrt, abs=1e-4)
    assert ct.amax_thm2_at_sqrt_alpha(alpha) == pytest.approx(
        alpha**-0.5 * (1 + alpha**0.5) ** 2 / (1 + alpha + 2 * alpha**1.5), rel=1e-12
    )
    value, r = ct.amax_thm2_instance_sup(alpha)
    assert value == pytest.approx(sup, abs=1e-4)
    assert r == pytest.approx(argmax, abs=1e-3)
    grid = max(ct.amax_thm2_instance_ratio(alpha, float(x)) for x in np.geomspace(1e-3, 1e3, 20001))
    assert grid <= value + 1e-9 and grid == pytest.approx(value, rel=1e-6)
    assert ct.amax_paper_lower_bound(alpha) == pytest.approx(paper, abs=1e-4)
    assert value < ct.amax_paper_lower_bound(alpha)  # DIGEST I-31: the instance does not reach Thm 2
    assert ct.amax_upper_bound(alpha) == pytest.approx((1 / alpha) * (1 + 1 / alpha) / 2)
    assert value <= ct.amax_upper_bound(alpha)


def test_amax_thm2_ratio_from_the_instance() -> None:
    """The paper's E[TEL(A_max)] and TEL(H-SF) for finite a, b approach the ratio formula."""
    ell, u, a, b = 2, 8, 3000, 2000
    exp_amax = (a * u + b * ell) * (a * u * ell + b * ell * u) / (2 * ell)
    hsf = u * ell * a * (a + 1) / 2 + b * ell * a * ell + u * ell * b * (b + 1) / 2
    assert exp_amax / hsf == pytest.approx(ct.amax_thm2_instance_ratio(ell / u, a / b), rel=1e-3)


def test_small_functions_reject_bad_alpha() -> None:
    for f in (ct.two_point_cr_amin, ct.two_point_cr_al, ct.amax_upper_bound, ct.random_upper_bound):
        for bad in (0.0, -0.1, 1.5, float("nan")):
            with pytest.raises(ValueError):
                f(bad)
    with pytest.raises(ValueError):
        ct.two_point_ratio_amin(0.5, -1.0)
    with pytest.raises(ValueError):
        ct.thm8_closed_form(1.0)
    with pytest.raises(ValueError):
        ct.two_point_distribution(4, 4, 1.0)


# --------------------------------------------------------------------------- simulation helpers


def test_sample_outputs_seeded_and_in_range() -> None:
    x = ct.figure1_worst_distribution(20)
    a = ct.sample_outputs(x, 1, 5000, np.random.default_rng(3))
    b = ct.sample_outputs(x, 1, 5000, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.int64 and a.min() >= 1 and a.max() <= 20
    emp = ct.empirical_distribution(a, 1, 20)
    assert np.abs(emp - x).max() < 0.03
    two = ct.sample_outputs(ct.two_point_distribution(3, 9, 3.0), 3, 4000, np.random.default_rng(0))
    assert set(np.unique(two).tolist()) == {3, 9}
    assert np.mean(two == 3) == pytest.approx(0.75, abs=0.03)


def test_outputs_with_proportions_exact_counts() -> None:
    rng = np.random.default_rng(5)
    cases: list[tuple[np.ndarray | list[float], int, int]] = [
        (ct.lg_distribution(0.5, 60), 1, 997),
        (ct.two_point_distribution(2, 10, 5.0), 2, 600),
        ([1.0], 4, 3),
    ]
    for probs, ell, n in cases:
        out = ct.outputs_with_proportions(probs, ell, n, rng)
        assert out.shape == (n,) and out.dtype == np.int64
        p = np.asarray(probs, dtype=float) / np.sum(probs)
        counts = np.bincount(out - ell, minlength=p.size)[: p.size]
        assert counts.sum() == n
        assert np.all(np.abs(counts - p * n) < 1.0 + 1e-9)
    out = ct.outputs_with_proportions(ct.two_point_distribution(2, 10, 5.0), 2, 600, np.random.default_rng(1))
    assert ct.lemma2_cr(ct.empirical_distribution(out, 2, 10), 2, 0) == pytest.approx(ct.two_point_ratio_amin(0.2, 5.0))
    with pytest.raises(ValueError):
        ct.empirical_distribution(np.array([1, 5]), 2)
