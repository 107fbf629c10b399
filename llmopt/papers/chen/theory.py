"""Closed-form theory of Chen–Ye–Zhou ("C", ``shared/seeds/000_7644d90d3caf438b.txt``).

C measures a policy by its competitive ratio against the hindsight shortest-first
benchmark H-SF (Def. 1, L108; DIGEST §2.16):

    CR(π) = sup_o E[TEL(o; π)] / TEL(o; H-SF),

and evaluates it in the fluid limit ``M → ∞`` (then ``n → ∞``), for identical prompt size
``s`` and all requests at time 0. Everything here is that limit: the ``O(1/M)`` terms of the
paper are dropped. The numbers are the paper's closed forms, not simulations; a simulation
suite can compare its measured ratios with them (helpers at the end of the module).

Contents (paper line, DIGEST section):

* Lemma 2 (L261–293, DIGEST §5.4): :func:`lemma2_cr`, :func:`tel_hsf_closed`,
  :func:`tel_amin_closed`; its matrix form :func:`lemma2_matrices` (Cor. 1 generalised to any
  ``s``, ``ℓ``) and :func:`worst_case_distribution`.
* Figure 1 (L377, Cor. 1 L295–303, Lemma 3, DIGEST §2.18, §5.4, T-11): :func:`amin_matrices`,
  :func:`amin_b_inverse`, :func:`figure1_cr`, :func:`figure1_worst_distribution`,
  :func:`figure1_fit`, :func:`figure1_trace_bound`.
* Two-point family D₂ (Thms 6–7 L401–423, proofs L993–1057, DIGEST §2.20, §3.6, T-12):
  :func:`two_point_cr_amin`, :func:`two_point_cr_al`, :data:`ALPHA_STAR`,
  :func:`two_point_ratio_amin`, :func:`two_point_ratio_al`, :func:`two_point_ratio_random`,
  :func:`two_point_worst_t_amin`, :func:`two_point_worst_t_al`, :func:`tel_al_closed`,
  :func:`al_cr`, :func:`two_point_sup_amin`.
* Figure 3 / Thm 8 (L432–446, proof L1060–1072, DIGEST §5.4): :func:`geometric_distribution`,
  :func:`lg_distribution`, :func:`geometric_cr`, :func:`lg_cr`, :func:`thm8_closed_form`,
  :data:`THM8_LIMIT`.
* A_max and A_random (Thms 1–2 L148–166, Thm EC.1 L624/L665–745, DIGEST §3.6, I-31):
  :func:`amax_upper_bound`, :func:`amax_paper_lower_bound`, :func:`amax_thm2_instance_ratio`,
  :func:`amax_thm2_at_sqrt_alpha`, :func:`amax_thm2_instance_sup`, :func:`random_upper_bound`.
* Simulation helpers: :func:`two_point_distribution`, :func:`sample_outputs`,
  :func:`outputs_with_proportions`, :func:`empirical_distribution`.

Conventions. A distribution ``x`` over output lengths ``ℓ..u`` is a 1-D array with
``x[k − ℓ]`` = the fraction (or any non-negative weight) of requests with output ``k``;
``u = ℓ + len(x) − 1``. Ratios are invariant to scaling ``x``, so it need not sum to 1.
Leading zeros do not change Lemma 2 either: ``lemma2_cr([0, *x], ℓ, s) == lemma2_cr(x, ℓ+1, s)``
(an empty period ``τ_ℓ`` merges into ``τ_{ℓ+1}``, whose ``δ`` becomes ``s+ℓ+1``; checked in the
tests), so in the fluid limit A_min's ratio depends on the distribution only, not on how far
below its support the lower bound ``ℓ`` lies.

Findings while transcribing (also in the docstrings):

* Lemma 2's denominator is printed ``Σ_{i=ℓ}^{u} k(s+k)…`` in the main text (L265); the proof
  (L291) sums over ``k`` — that is what is implemented (DIGEST §5.4, I-42).
* Thm 8's proof (L1062) prints the denominator sum as ``Σ k³q^{k−1}(2kq^{k−1} + Σ_{i>k} iq^{i−1})``;
  its stated value ``(1+2q+…)/((1−q)⁶(1+q)⁴)`` is the Lemma 2 denominator
  ``Σ k³q^{k−1}(kq^{k−1} + 2Σ_{i>k} iq^{i−1})`` (the ``2`` is on the wrong term in print).
* Thm 7's bound is exactly the supremum over ``t = x_ℓ/x_u`` of the ratio in its proof,
  attained at ``t = 1/α − 2`` (``α < ½``) and as ``t → 0`` (``α ≥ ½``); the proof's one-line
  justification for ``α ≤ ½`` does not by itself give it, but the bound is right and tight.
* Thm 2's instance does not reach the stated lower bound (DIGEST I-31): see
  :func:`amax_thm2_instance_sup`.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import scipy.linalg
import scipy.optimize

from llmopt.workloads.chen import _top_generalized_eig, amin_matrices, figure1_worst_distribution

__all__ = [
    "ALPHA_STAR",
    "FIGURE1_FIT",
    "THM8_LIMIT",
    "al_cr",
    "amax_paper_lower_bound",
    "amax_thm2_at_sqrt_alpha",
    "amax_thm2_instance_ratio",
    "amax_thm2_instance_sup",
    "amax_upper_bound",
    "amin_b_inverse",
    "amin_matrices",
    "empirical_distribution",
    "figure1_cr",
    "figure1_fit",
    "figure1_trace_bound",
    "figure1_worst_distribution",
    "geometric_cr",
    "geometric_distribution",
    "lemma2_cr",
    "lemma2_matrices",
    "lg_cr",
    "lg_distribution",
    "outputs_with_proportions",
    "random_upper_bound",
    "sample_outputs",
    "tel_al_closed",
    "tel_amin_closed",
    "tel_hsf_closed",
    "thm8_closed_form",
    "two_point_cr_al",
    "two_point_cr_amin",
    "two_point_distribution",
    "two_point_ratio_al",
    "two_point_ratio_amin",
    "two_point_ratio_random",
    "two_point_sup_amin",
    "two_point_worst_t_al",
    "two_point_worst_t_amin",
    "worst_case_distribution",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: ``α* = (3 − √5)/2 ≈ 0.382``: below it Thm 7's bound for A_ℓ is smaller than Thm 6's for
#: A_min (C §5.1 L417–423, root of ``α² − 3α + 1 = 0``; DIGEST §3.6).
ALPHA_STAR: float = (3.0 - math.sqrt(5.0)) / 2.0

#: Thm 8's bound ``14/9`` (C L446): the LG(p) closed form at ``q → 1``.
THM8_LIMIT: float = 14.0 / 9.0

#: Figure 1's fit ``0.2555·ln(u + 0.2793) + 1.1587`` (C L377): (slope, shift, intercept).
FIGURE1_FIT: tuple[float, float, float] = (0.2555, 0.2793, 1.1587)


# --------------------------------------------------------------------------- validation


def _check_ell_s(ell: int, s: float) -> None:
    if isinstance(ell, bool) or int(ell) != ell or ell < 1:
        raise ValueError(f"ell must be an integer >= 1 (output lengths are >= 1), got {ell!r}")
    if not (math.isfinite(s) and s >= 0):
        raise ValueError(f"s must be a finite number >= 0, got {s!r}")


def _as_distribution(x: npt.ArrayLike, name: str = "x") -> FloatArray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and non-negative")
    if not np.any(arr > 0):
        raise ValueError(f"{name} must have at least one positive entry")
    return arr


def _check_alpha(alpha: float, *, allow_one: bool = True) -> None:
    hi_ok = alpha <= 1 if allow_one else alpha < 1
    if not (math.isfinite(alpha) and alpha > 0 and hi_ok):
        rng = "(0, 1]" if allow_one else "(0, 1)"
        raise ValueError(f"alpha = ell/u must lie in {rng}, got {alpha!r}")


def _check_t(t: float) -> None:
    if not (math.isfinite(t) and t >= 0):
        raise ValueError(f"t = x_ell/x_u must be finite and >= 0, got {t!r}")


def _check_q(q: float) -> None:
    if not (math.isfinite(q) and 0 < q < 1):
        raise ValueError(f"q = 1 - p must lie in (0, 1), got {q!r}")


def _suffix_sum(v: FloatArray) -> FloatArray:
    """``out[j] = Σ_{i >= j} v[i]`` (a sum of non-negative terms: no cancellation)."""
    return np.cumsum(v[::-1])[::-1]


# --------------------------------------------------------------------------- Lemma 2


def _lemma2_parts(x: FloatArray, ell: int, s: float) -> tuple[float, float]:
    """Numerator and denominator of Lemma 2 (both without the factor ``n²/(2M)``)."""
    k = np.arange(ell, ell + x.size, dtype=np.float64)
    delta = np.ones_like(k)
    delta[0] = s + ell  # δ_{s,ℓ}(k) = s + ℓ at k = ℓ, else 1
    w = x / (s + k)  # x_i / (s + i)
    s1 = _suffix_sum(k * x)  # Σ_{i>=k} i x_i
    s2 = _suffix_sum(w)  # Σ_{i>=k} x_i/(s+i)
    # Σ_{i>k} (i−k) x_i/(s+i) = Σ_{j>k} Σ_{i>=j} x_i/(s+i)   (each i>k counted i−k times)
    s3 = np.append(_suffix_sum(s2[1:]), 0.0)
    num = float(np.sum(delta * s1 * (delta * s2 + 2.0 * s3)))
    tail_gt = np.append(_suffix_sum(x)[1:], 0.0)  # Σ_{i>k} x_i
    den = float(np.sum(k * (s + k) * x * (x + 2.0 * tail_gt)))
    return num, den


def lemma2_cr(x: npt.ArrayLike, ell: int, s: float = 0) -> float:
    """C Lemma 2: ``CR(A_min)`` (the limit ``M → ∞``) for the output-length distribution ``x``.

    With ``δ(k) = s + ℓ`` if ``k = ℓ`` and ``1`` otherwise (C L261–267, proof L269–293;
    DIGEST §5.4)::

        CR = Σ_{k=ℓ}^{u} δ(k) (Σ_{i≥k} i x_i) (Σ_{i≥k} δ(k) x_i/(s+i) + 2 Σ_{i>k} (i−k) x_i/(s+i))
             ───────────────────────────────────────────────────────────────────────────────
                          Σ_{k=ℓ}^{u} k (s+k) x_k (x_k + 2 Σ_{i>k} x_i)

    The denominator is the sum over ``k`` (the main text prints ``Σ_{i=ℓ}^{u}`` with summand
    in ``k``, L265; the proof's final line L291 has ``Σ_{k=ℓ}^{u}``; DIGEST §5.4 / I-42).
    The numerator is ``E[TEL(A_min)]`` in the paper's period model (period ``τ_k`` lasts
    ``δ(k) Σ_{i≥k} i x_i n/M``; it completes ``Σ_{i≥k} δ(k) x_i n/(s+i)`` requests and leaves
    ``Σ_{i>k} (i−k) x_i n/(s+i)``), the denominator ``TEL(H-SF)``, both in units of
    ``n²/(2M)``.

    Parameters
    ----------
    x : array_like
        ``x[k − ℓ]`` = fraction of requests with output ``k``, for ``k = ℓ..u``. Need not be
        normalised (the ratio is scale-invariant); zeros allowed; at least one positive entry.
    ell : int
        The length of ``x[0]``: the lower end ``ℓ >= 1`` of the prediction interval (every
        request starts at ``õ = ℓ``). Prepending zeros and lowering ``ℓ`` leaves the value
        unchanged.
    s : float, default 0
        The common prompt size (the paper's figures use ``s = 0``; DESIGN requires ``s >= 1``
        for simulations).

    Returns
    -------
    float
        The asymptotic ratio ``E[TEL(A_min)] / TEL(H-SF)`` (``>= 1`` up to rounding).
    """
    _check_ell_s(ell, s)
    num, den = _lemma2_parts(_as_distribution(x), int(ell), float(s))
    return num / den


def _normalised(x: npt.ArrayLike) -> FloatArray:
    arr = _as_distribution(x)
    return arr / arr.sum()


def _check_n_M(n: float, M: float) -> None:
    if not (n > 0 and M > 0 and math.isfinite(n) and math.isfinite(M)):
        raise ValueError(f"n and M must be positive and finite, got n={n!r}, M={M!r}")


def tel_hsf_closed(x: npt.ArrayLike, ell: int, s: float, n: float, M: float) -> float:
    """Leading term of ``TEL(H-SF)`` from the proof of C Lemma 2 (L273–277; DIGEST §5.4).

    ``TEL(H-SF) = (n²/(2M)) Σ_k k(s+k) x_k (x_k + 2 Σ_{i>k} x_i)·(1 + O(1/M))``: class ``k``
    takes ``k(s+k) x_k n/M`` time (batches of ``M/(s+k)`` requests, ``k`` steps each); its
    requests wait half of it on average and all longer requests wait all of it.

    Parameters
    ----------
    x : array_like
        Distribution over ``ℓ..u`` (normalised here to sum 1, so ``x_k n`` is a count).
    ell, s : int, float
        Lower bound ``ℓ`` (only fixes the indexing here) and prompt size.
    n, M : float
        Number of requests and memory limit.

    Returns
    -------
    float
        The fluid-limit TEL (drops the ``O(1/M)`` relative error and the ``Σ o_i``-order terms).
    """
    _check_ell_s(ell, s)
    _check_n_M(n, M)
    _, den = _lemma2_parts(_normalised(x), int(ell), float(s))
    return n * n / (2.0 * M) * den


def tel_amin_closed(x: npt.ArrayLike, ell: int, s: float, n: float, M: float) -> float:
    """Leading term of ``E[TEL(A_min)]`` from the proof of C Lemma 2 (L279–287; DIGEST §5.4).

    ``E[TEL(A_min)] = (n²/(2M)) Σ_k δ(k)(Σ_{i≥k} i x_i)(Σ_{i≥k} δ(k) x_i/(s+i)
    + 2Σ_{i>k}(i−k) x_i/(s+i))·(1 + O(1/M))``; see :func:`lemma2_cr` for ``δ`` and the terms.
    ``x`` is normalised here; ``tel_amin_closed / tel_hsf_closed == lemma2_cr``.
    """
    _check_ell_s(ell, s)
    _check_n_M(n, M)
    num, _ = _lemma2_parts(_normalised(x), int(ell), float(s))
    return n * n / (2.0 * M) * num


def lemma2_matrices(u: int, ell: int = 1, s: float = 0) -> tuple[FloatArray, FloatArray]:
    """Lemma 2 as a Rayleigh quotient: symmetric ``(A, B)`` with ``CR = xᵀAx / xᵀBx``.

    Cor. 1 (C L295–303, proof L894–915) does this for ``s = 0, ℓ = 1``; the same expansion
    for any ``s >= 0``, ``ℓ >= 1`` (derived here) gives, for ``i, j ∈ ℓ..u`` and
    ``m = min(i, j)``, ``d = s + ℓ``::

        A⁰_ij = i/(s+j) · [ d(d + 2(j−ℓ)) + Σ_{k=ℓ+1}^{m} (1 + 2(j−k)) ],   A = (A⁰ + A⁰ᵀ)/2,
        B_ij  = m (s + m).

    ``B`` is positive definite (``m(s+m)`` increases in ``m``, so ``B`` is a positive
    combination of the Gram matrices of ``1{i ≥ k}``). At ``s = 0, ℓ = 1`` these are exactly
    Cor. 1's ``A_u, B_u`` (:func:`amin_matrices`).

    Parameters
    ----------
    u : int
        Upper end of the interval (``u >= ℓ``); the matrices are ``(u−ℓ+1) × (u−ℓ+1)``.
    ell : int, default 1
    s : float, default 0

    Returns
    -------
    (A, B) : tuple of ndarray
        Indexed by output length ``ℓ..u`` (row ``r`` is length ``ℓ + r``).
    """
    _check_ell_s(ell, s)
    if int(u) != u or u < ell:
        raise ValueError(f"u must be an integer >= ell = {ell}, got {u!r}")
    idx = np.arange(ell, int(u) + 1, dtype=np.float64)
    i = idx[:, None]
    j = idx[None, :]
    m = np.minimum(i, j)
    d = float(s) + ell
    # Σ_{k=ℓ+1}^{m} (1 + 2j − 2k) = (m−ℓ)(1+2j) − (m(m+1) − ℓ(ℓ+1))
    rest = (m - ell) * (1.0 + 2.0 * j) - (m * (m + 1.0) - ell * (ell + 1.0))
    a0 = i / (float(s) + j) * (d * (d + 2.0 * (j - ell)) + rest)
    A = 0.5 * (a0 + a0.T)
    B = m * (float(s) + m)
    return A, B


def worst_case_distribution(u: int, ell: int = 1, s: float = 0) -> tuple[float, FloatArray]:
    """``sup_x`` of Lemma 2 over distributions on ``ℓ..u`` and a maximiser (C Thm 5 Part 2).

    The supremum over all real ``x`` of the Rayleigh quotient of :func:`lemma2_matrices` is
    the largest generalized eigenvalue ``λ_max(A, B)``; when its eigenvector is entrywise
    positive it is a distribution and ``λ_max`` is the supremum over distributions (the
    quantity of C Figure 1 for ``s = 0, ℓ = 1``; DIGEST §5.4).

    Returns
    -------
    (cr, x) : tuple
        ``cr = λ_max`` and ``x`` = the eigenvector normalised to sum 1 (``x[k−ℓ]`` for ``k``).

    Raises
    ------
    ValueError
        If the top eigenvector is not entrywise positive (then ``λ_max`` is only an upper
        bound on the supremum over distributions). It was positive in every case tried:
        ``s = 0, ℓ = 1, u <= 3000`` and ``s ∈ {0, 1, 2}, ℓ ∈ {1, 2, 5}, u <= 200``.
    """
    A, B = lemma2_matrices(u, ell, s)
    lam, vec = _top_generalized_eig(A, B)
    if not np.all(vec > 0):
        raise ValueError(
            f"top generalized eigenvector for u={u}, ell={ell}, s={s} is not entrywise positive "
            f"(min {vec.min():.3g}); lambda_max = {lam:.6g} only bounds the sup over distributions"
        )
    return lam, vec / vec.sum()


# --------------------------------------------------------------------------- Figure 1


def amin_b_inverse(u: int) -> FloatArray:
    """The paper's explicit tridiagonal ``B_u⁻¹`` (C L335; DIGEST §2.18).

    ``(B⁻¹)_ii = 4i/(4i²−1)`` for ``i < u``, ``1/(2u−1)`` for ``i = u``, and
    ``−1/(2 min(i,j) + 1)`` for ``|i − j| = 1``; zero elsewhere. (The formula gives ``1``
    for ``u = 1``, i.e. ``B_1 = [1]``.)
    """
    if int(u) != u or u < 1:
        raise ValueError(f"u must be an integer >= 1, got {u!r}")
    u = int(u)
    i = np.arange(1, u + 1, dtype=np.float64)
    diag = 4.0 * i / (4.0 * i * i - 1.0)
    diag[-1] = 1.0 / (2.0 * u - 1.0)
    off = -1.0 / (2.0 * i[:-1] + 1.0)
    return np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)


def figure1_cr(u: int) -> float:
    """C Figure 1: ``CR(A_min)`` for ``s = 0, ℓ = 1``, interval ``[1, u]`` (C L377; DIGEST T-11).

    The plotted quantity is ``max_{x>0} R(x) = λ_max(A_u, B_u)`` (the top eigenvector is
    entrywise positive; see :func:`figure1_worst_distribution`). Computed with
    ``scipy.linalg.eigh(A, B, subset_by_index=...)``: about 0.1 s at ``u = 1000`` and 2 s at
    ``u = 3000``. Values: ``u = 2 → 1.25``, ``10 → 1.7249``, ``100 → 2.3333``,
    ``1000 → 2.9239`` (DIGEST §5.4 table).
    """
    A, B = amin_matrices(u)
    return _top_generalized_eig(A, B)[0]


def figure1_fit(u: float) -> float:
    """C Figure 1's fitted curve ``0.2555·ln(u + 0.2793) + 1.1587`` (L377; natural log).

    Within 0.007 of :func:`figure1_cr` for ``50 <= u <= 1000``; poor for ``u < 10``
    (``u = 1``: 1.2216 vs 1.0). The paper does not state the fitted range (DIGEST §5.4).
    """
    a, b, c = FIGURE1_FIT
    return a * math.log(u + b) + c


def figure1_trace_bound(u: int) -> float:
    """``tr(B_u⁻¹A_u) = H_u = Σ_{i=1}^{u} 1/i`` (C L331–366; DIGEST §2.18), Thm 5's bound.

    Since the eigenvalues of ``B⁻¹A`` are positive, ``λ_max <= tr(B⁻¹A) = H_u = O(log u)``.
    Returns the harmonic number (the tests check the trace equals it).
    """
    if int(u) != u or u < 1:
        raise ValueError(f"u must be an integer >= 1, got {u!r}")
    return float(np.sum(1.0 / np.arange(1, int(u) + 1, dtype=np.float64)))


# --------------------------------------------------------------------------- two-point family D₂


def two_point_cr_amin(alpha: float) -> float:
    """C Thm 6: ``CR(A_min) <= (3 − α)/2`` on D₂ (``o ∈ {ℓ, u}``, ``α = ℓ/u``; L401–403).

    Tight in the fluid limit with ``s = 0``: it is ``max_t`` of :func:`two_point_ratio_amin`,
    attained at ``t = x_ℓ/x_u = 1/α`` (proof L993–1010; DIGEST §3.6, T-12).
    """
    _check_alpha(alpha)
    return (3.0 - alpha) / 2.0


def two_point_ratio_amin(alpha: float, t: float) -> float:
    """Lemma 2 on D₂ with ``s = 0`` as a function of ``t = x_ℓ/x_u`` (proof of Thm 6, L997–1003).

    ``CR_Amin(t) = 1 + α(1 − α²)t / (α²t² + 2α²t + 1)``; equals :func:`lemma2_cr` of
    :func:`two_point_distribution` for every integer ``ℓ < u`` with ``ℓ/u = α``.
    """
    _check_alpha(alpha)
    _check_t(t)
    return 1.0 + alpha * (1.0 - alpha * alpha) * t / (alpha * alpha * t * t + 2.0 * alpha * alpha * t + 1.0)


def two_point_worst_t_amin(alpha: float) -> float:
    """The maximiser ``t = 1/α`` of :func:`two_point_ratio_amin` (``(αt − 1)² >= 0``, L1005)."""
    _check_alpha(alpha)
    return 1.0 / alpha


def two_point_cr_al(alpha: float) -> float:
    """C Thm 7: bound on ``CR(A_ℓ)`` on D₂ (L409–413, proof L1035–1057; DIGEST §2.20).

    ``1 + α/(2(1−α))`` for ``0 < α <= ½`` and ``1 + 2α²`` for ``½ <= α < 1`` (equal at ½).

    Checked against the proof: this is *exactly* ``sup_{t>=0}`` of :func:`two_point_ratio_al`
    (``1 + h(t)``, ``h(t) = (α²t + 2α²)/(α²t² + 2α²t + 1)``). ``h'(t)`` has the sign of
    ``1 − 4α² − 4α²t − α²t²``: for ``α < ½`` the maximiser is ``t* = 1/α − 2`` with
    ``h(t*) = 1/(2(t*+1)) = α/(2(1−α))``; for ``α >= ½`` ``h`` decreases and the sup is
    ``h(0) = 2α²`` (only long requests: each pays a wasted ``ℓ``-token pass). So the bound is
    tight; but the proof's justification for ``α <= ½`` ("``α²t² + 2α²t + 1 >= 2α(1+α)t``
    implies ``h <= α/(2(1−α))``") does not follow as written (it gives
    ``h <= α(t+2)/(2(1+α)t)``, unbounded as ``t → 0``).
    """
    _check_alpha(alpha)
    if alpha <= 0.5:
        return 1.0 + alpha / (2.0 * (1.0 - alpha))
    return 1.0 + 2.0 * alpha * alpha


def two_point_ratio_al(alpha: float, t: float) -> float:
    """``TEL(A_ℓ)/TEL(H-SF)`` on D₂ (``s = 0``) from the proof of Thm 7 (L1037–1049).

    ``TEL(A_ℓ) = (u²/2)[α²x_ℓ² + 3α²x_ℓx_u + (2α²+1)x_u²]`` and
    ``TEL(H-SF) = (u²/2)[α²x_ℓ² + 2α²x_ℓx_u + x_u²]`` (units ``n²/M``), so with ``t = x_ℓ/x_u``
    the ratio is ``1 + (α²t + 2α²)/(α²t² + 2α²t + 1)``. Its sup over ``t`` is
    :func:`two_point_cr_al` (see there), attained at :func:`two_point_worst_t_al`.
    """
    _check_alpha(alpha)
    _check_t(t)
    a2 = alpha * alpha
    return 1.0 + (a2 * t + 2.0 * a2) / (a2 * t * t + 2.0 * a2 * t + 1.0)


def two_point_worst_t_al(alpha: float) -> float:
    """Maximiser of :func:`two_point_ratio_al`: ``1/α − 2`` for ``α < ½``, ``0`` for ``α >= ½``.

    (``t = 0`` means no short requests; derived here, see :func:`two_point_cr_al`.)
    """
    _check_alpha(alpha)
    return max(1.0 / alpha - 2.0, 0.0)


def two_point_ratio_random(alpha: float, t: float) -> float:
    """The A_random ratio bound of Thm EC.1's proof on D₂ with ``s = 0`` (C L733–741).

    ``(N_ℓ+N_u)(N_ℓℓ(s+ℓ) + N_u u(s+u)) / (ℓ(s+ℓ)N_ℓ² + 2ℓ(s+ℓ)N_ℓN_u + u(s+u)N_u²)`` at
    ``s = 0``, ``t = N_ℓ/N_u``: ``1 + (1 − α²)t/(α²t² + 2α²t + 1)`` (derived here). Its sup,
    at ``t = 1/α``, is :func:`random_upper_bound` ``(1 + 1/α)/2`` — note A_min's excess
    (:func:`two_point_ratio_amin`) is exactly ``α`` times this one.
    """
    _check_alpha(alpha)
    _check_t(t)
    a2 = alpha * alpha
    return 1.0 + (1.0 - a2) * t / (a2 * t * t + 2.0 * a2 * t + 1.0)


def _two_point_check(ell: int, u: int, s: float) -> None:
    _check_ell_s(ell, s)
    if int(u) != u or u <= ell:
        raise ValueError(f"the two-point family needs integers ell < u, got ell={ell!r}, u={u!r}")


def two_point_distribution(ell: int, u: int, t: float) -> FloatArray:
    """The D₂ distribution with ``x_ℓ/x_u = t`` as an array over ``ℓ..u`` (zeros between).

    ``x[0] = t/(1+t)``, ``x[u−ℓ] = 1/(1+t)``. For the worst case of A_min at ``s = 0`` use
    ``t = u/ℓ`` (:func:`two_point_worst_t_amin`).
    """
    _two_point_check(ell, u, 0.0)
    _check_t(t)
    x = np.zeros(int(u) - int(ell) + 1, dtype=np.float64)
    x[0] = t / (1.0 + t)
    x[-1] = 1.0 / (1.0 + t)
    return x


def tel_al_closed(x_ell: float, x_u: float, ell: int, u: int, s: float, n: float, M: float) -> float:
    """Fluid ``TEL(A_ℓ)`` on D₂ with prompt size ``s`` (proof of Thm 7, L1037–1039, generalised).

    Pass 1 runs every request to ``ℓ`` tokens in batches of ``M/(s+ℓ)`` (duration
    ``D₁ = ℓ(s+ℓ)(x_ℓ+x_u)n/M``; short requests finish at ``D₁/2`` on average); pass 2 runs the
    long ones from scratch (``D₂ = u(s+u)x_u n/M``; they finish at ``D₁ + D₂/2``)::

        TEL(A_ℓ) = (n²/(2M)) [ ℓ(s+ℓ)x_ℓ² + 3ℓ(s+ℓ)x_ℓx_u + (2ℓ(s+ℓ) + u(s+u))x_u² ].

    At ``s = 0`` this is the paper's ``(u²/2)[α²x_ℓ² + 3α²x_ℓx_u + (2α²+1)x_u²]`` (in units
    ``n²/M``); the ``s`` generalisation is derived here by the paper's own argument.
    ``x_ell, x_u`` are normalised to sum 1.
    """
    _two_point_check(ell, u, s)
    _check_n_M(n, M)
    tot = x_ell + x_u
    if not (x_ell >= 0 and x_u >= 0 and tot > 0):
        raise ValueError(f"x_ell, x_u must be >= 0 with a positive sum, got {x_ell!r}, {x_u!r}")
    xl, xu = x_ell / tot, x_u / tot
    cl, cu = ell * (s + ell), u * (s + u)
    return n * n / (2.0 * M) * (cl * xl * xl + 3.0 * cl * xl * xu + (2.0 * cl + cu) * xu * xu)


def al_cr(ell: int, u: int, t: float, s: float = 0) -> float:
    """Fluid ``TEL(A_ℓ)/TEL(H-SF)`` on D₂ with ``t = x_ℓ/x_u`` and prompt size ``s``.

    Ratio of :func:`tel_al_closed` and :func:`tel_hsf_closed`; at ``s = 0`` equals
    :func:`two_point_ratio_al` ``(ℓ/u, t)``. For simulations with ``s = 1``.
    """
    _two_point_check(ell, u, s)
    _check_t(t)
    x = two_point_distribution(ell, u, t)
    return tel_al_closed(t, 1.0, ell, u, s, 1.0, 1.0) / tel_hsf_closed(x, ell, s, 1.0, 1.0)


def two_point_sup_amin(ell: int, u: int, s: float = 0) -> tuple[float, float]:
    """``max_t`` of Lemma 2 on D₂ for prompt size ``s``, and the maximising ``t = x_ℓ/x_u``.

    At ``s = 0`` this is ``((3 − α)/2, 1/α)`` (Thm 6). For ``s > 0`` (what a simulation with
    ``s >= 1`` should compare with) it is found numerically (bounded scalar search over
    ``log t ∈ [−12, 12]``; the ratio is unimodal in ``t`` in every case tried).

    Returns
    -------
    (cr, t) : tuple of float
    """
    _two_point_check(ell, u, s)

    def neg(log_t: float) -> float:
        return -lemma2_cr(two_point_distribution(ell, u, math.exp(log_t)), ell, s)

    res = scipy.optimize.minimize_scalar(neg, bounds=(-12.0, 12.0), method="bounded", options={"xatol": 1e-10})
    return -float(res.fun), math.exp(float(res.x))


# --------------------------------------------------------------------------- Figure 3 / Thm 8


def geometric_distribution(q: float, u_max: int = 3000) -> FloatArray:
    """G(p) truncated to ``1..u_max``: ``x[k−1] = p q^{k−1}``, ``p = 1 − q`` (C L432–436).

    Not renormalised (Lemma 2 is scale-invariant; the sampling helpers normalise).
    """
    _check_q(q)
    k = np.arange(1, int(u_max) + 1, dtype=np.float64)
    return (1.0 - q) * q ** (k - 1.0)


def lg_distribution(q: float, u_max: int = 3000) -> FloatArray:
    """LG(p) truncated to ``1..u_max``: ``x[k−1] = k p² q^{k−1}``, ``p = 1 − q`` (C L438–440)."""
    _check_q(q)
    k = np.arange(1, int(u_max) + 1, dtype=np.float64)
    return k * (1.0 - q) ** 2 * q ** (k - 1.0)


def geometric_cr(q: float, u_max: int = 3000) -> float:
    """C Figure 3 (left): Lemma 2 (``s = 0, ℓ = 1``) for G(p) truncated at ``u_max``.

    DIGEST §5.4: ``q = 0.1 → 1.1455``, ``0.5 → 1.5561``, ``0.9 → 1.6788``, ``0.99 → 1.6822``;
    increasing in ``q``, limit ≈ 1.682 < 1.7 (the paper's "bounded by 1.7", L436). For
    ``q`` close to 1 raise ``u_max`` so that ``q^{u_max}`` is negligible.
    """
    return lemma2_cr(geometric_distribution(q, u_max), 1, 0)


def lg_cr(q: float, u_max: int = 3000) -> float:
    """C Figure 3 (right): Lemma 2 (``s = 0, ℓ = 1``) for LG(p) truncated at ``u_max``.

    Agrees with :func:`thm8_closed_form` (``q = 0.5 → 1.5324``); DIGEST §5.4 table.
    """
    return lemma2_cr(lg_distribution(q, u_max), 1, 0)


def thm8_closed_form(q: float) -> float:
    """C Thm 8: ``CR(A_min)`` under LG(p) as ``u, M → ∞`` (L444–446, proof L1060–1072).

    ``(1+q)²(1+3q+6q²+3q³+q⁴) / (1+2q+11q²+8q³+11q⁴+2q⁵+q⁶)``, increasing to ``14/9`` at
    ``q → 1`` (:data:`THM8_LIMIT`). The proof's printed denominator sum
    ``Σ k³q^{k−1}(2kq^{k−1} + Σ_{i>k} iq^{i−1})`` has the factor 2 on the wrong term: the
    stated value ``(1+2q+…)/((1−q)⁶(1+q)⁴)`` is ``Σ k³q^{k−1}(kq^{k−1} + 2Σ_{i>k} iq^{i−1})``,
    i.e. Lemma 2's denominator (checked numerically in the tests).
    """
    _check_q(q)
    num = (1 + q) ** 2 * (1 + 3 * q + 6 * q**2 + 3 * q**3 + q**4)
    den = 1 + 2 * q + 11 * q**2 + 8 * q**3 + 11 * q**4 + 2 * q**5 + q**6
    return float(num / den)


# --------------------------------------------------------------------------- A_max, A_random


def amax_upper_bound(alpha: float) -> float:
    """C Thm 1: ``CR(A_max) <= α⁻¹(1 + α⁻¹)/2`` (+O(1/M)) (L148–150; DIGEST §2.17, §3.6)."""
    _check_alpha(alpha)
    return (1.0 / alpha) * (1.0 + 1.0 / alpha) / 2.0


def amax_paper_lower_bound(alpha: float) -> float:
    """C Thm 2 as printed: ``CR(A_max) >= α⁻¹(1 + α⁻¹ᐟ²)/2`` (L156–158).

    Its instance does not reach this value (DIGEST I-31): compare
    :func:`amax_thm2_instance_sup`. Do not treat this as verified.
    """
    _check_alpha(alpha)
    return (1.0 / alpha) * (1.0 + alpha**-0.5) / 2.0


def amax_thm2_instance_ratio(alpha: float, ratio_ab: float) -> float:
    """The ratio of Thm 2's instance (proof L160–166; DIGEST §3.6).

    ``s = 0``, ``M = ℓu``, ``N_ℓ = a·u`` requests of length ``ℓ``, ``N_u = b·ℓ`` of length
    ``u``; the paper's ``E[TEL(A_max)] = (au + bℓ)(auℓ + bℓu)/(2ℓ)`` and
    ``TEL(H-SF) = uℓ(1+…+a) + bℓ·aℓ + uℓ(1+…+b)`` give (large ``a, b``)::

        (u/ℓ)(au + bℓ)(a + b)/(ua² + 2ℓab + ub²) = α⁻¹ (r + α)(r + 1)/(r² + 2αr + 1),  r = a/b.
    """
    _check_alpha(alpha)
    if not (math.isfinite(ratio_ab) and ratio_ab > 0):
        raise ValueError(f"ratio_ab = a/b must be positive and finite, got {ratio_ab!r}")
    r = ratio_ab
    return (r + alpha) * (r + 1.0) / (alpha * (r * r + 2.0 * alpha * r + 1.0))


def amax_thm2_at_sqrt_alpha(alpha: float) -> float:
    """Thm 2's instance ratio at the paper's choice ``a/b = √α``.

    Equals ``α^{−1/2}(1 + √α)²/(1 + α + 2α^{3/2})`` (DIGEST §3.6; derived there), *not* the
    printed ``α⁻¹(1 + α^{−1/2})/2``: α = 0.5 → 1.8673 (paper 2.4142), 0.25 → 3.0 (6.0),
    0.1 → 4.7097 (20.8114), 0.01 → 11.9565 (550).
    """
    return amax_thm2_instance_ratio(alpha, math.sqrt(alpha))


def amax_thm2_instance_sup(alpha: float) -> tuple[float, float]:
    """``sup_{a/b}`` of Thm 2's instance ratio and its maximiser (derived here; DIGEST §3.6).

    ``d/dr`` of ``(r+α)(r+1)/(r²+2αr+1)`` has the sign of ``(1−α)(1 + 2α + 2r − r²)``, so for
    ``α < 1`` the maximiser is ``r* = 1 + √(2 + 2α)``: α = 0.5 → 2.1547 at 2.732,
    0.25 → 4.5298 (2.581), 0.1 → 11.7420 (2.483), 0.01 → 120.3598 (2.421). As ``α → 0`` the
    sup is ``≈ ((1+√2)/2)·α⁻¹ ≈ 1.207·α⁻¹`` — far below the printed Thm 2 bound
    ``~α^{−3/2}/2`` (DIGEST I-31). At ``α = 1`` the ratio is 1 for every ``r``.

    Returns
    -------
    (value, ratio_ab) : tuple of float
    """
    _check_alpha(alpha)
    r = 1.0 + math.sqrt(2.0 + 2.0 * alpha)
    return amax_thm2_instance_ratio(alpha, r), r


def random_upper_bound(alpha: float) -> float:
    """C Thm EC.1: ``CR(A_random) <= (1 + α⁻¹)/2`` (+O(1/M)) (L624, proof L733–743).

    The proof's intermediate ``1 + (1−α²)/(2(α+α²))`` is the same number; it is the sup over
    ``t`` of :func:`two_point_ratio_random` (``s = 0``; DIGEST §2.21).
    """
    _check_alpha(alpha)
    return (1.0 + 1.0 / alpha) / 2.0


# --------------------------------------------------------------------------- simulation helpers


def _check_n(n: int) -> int:
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    return int(n)


def sample_outputs(dist_probs: npt.ArrayLike, ell: int, n: int, rng: np.random.Generator) -> IntArray:
    """Draw ``n`` i.i.d. output lengths from the distribution ``x`` over ``ℓ..u``.

    Parameters
    ----------
    dist_probs : array_like
        ``x[k − ℓ]`` weights (normalised here), e.g. :func:`figure1_worst_distribution`,
        :func:`two_point_distribution`, :func:`geometric_distribution`, :func:`lg_distribution`.
    ell : int
        The length of ``dist_probs[0]``.
    n : int
        Number of requests.
    rng : numpy.random.Generator
        Seeded generator (advanced in place), e.g. ``np.random.default_rng(seed)``.

    Returns
    -------
    ndarray of int64
        Output lengths in ``ℓ..u``. The realised proportions differ from ``x`` by
        ``O(1/√n)``; evaluate :func:`lemma2_cr` on :func:`empirical_distribution` of the sample
        (Lemma 2 is about the request set's proportions), or use
        :func:`outputs_with_proportions` for exact proportions.
    """
    _check_ell_s(ell, 0.0)
    p = _normalised(dist_probs)
    draws = rng.choice(p.size, size=_check_n(n), p=p)
    return np.asarray(draws, dtype=np.int64) + int(ell)


def outputs_with_proportions(dist_probs: npt.ArrayLike, ell: int, n: int, rng: np.random.Generator) -> IntArray:
    """``n`` output lengths whose counts are ``x·n`` rounded by largest remainder, shuffled.

    Counts are ``⌊x_k n⌋`` plus one for the ``n − Σ⌊x_k n⌋`` largest fractional parts (ties to
    the shorter length), so each count is within 1 of ``x_k n`` and they sum to ``n``. The
    order is a ``rng`` permutation (policies that break ties at random see no structure).
    """
    _check_ell_s(ell, 0.0)
    n = _check_n(n)
    p = _normalised(dist_probs)
    exact = p * n
    counts = np.floor(exact).astype(np.int64)
    short = n - int(counts.sum())
    if short > 0:
        order = np.argsort(-(exact - counts), kind="stable")
        counts[order[:short]] += 1
    out = np.repeat(np.arange(int(ell), int(ell) + p.size, dtype=np.int64), counts)
    return np.asarray(rng.permutation(out), dtype=np.int64)


def empirical_distribution(outputs: npt.ArrayLike, ell: int, u: int | None = None) -> FloatArray:
    """Proportions ``x[k − ℓ]`` of output lengths ``k = ℓ..u`` in ``outputs`` (sums to 1).

    ``u`` defaults to ``max(outputs)``. Raises ``ValueError`` if some output is outside ``ℓ..u``.
    """
    _check_ell_s(ell, 0.0)
    o = np.asarray(outputs)
    if o.ndim != 1 or o.size == 0 or not np.issubdtype(o.dtype, np.integer):
        raise ValueError("outputs must be a non-empty 1-D integer array")
    hi = int(o.max()) if u is None else int(u)
    if int(o.min()) < ell or int(o.max()) > hi:
        raise ValueError(f"outputs must lie in [{ell}, {hi}], got range [{int(o.min())}, {int(o.max())}]")
    counts = np.bincount(o - int(ell), minlength=hi - int(ell) + 1).astype(np.float64)
    return counts / counts.sum()
