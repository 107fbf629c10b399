"""Workloads of Chen, Ye and Zhou ("C"), prediction intervals of output lengths (``shared/seeds/000_…``).

C schedules requests whose output lengths are known only through an interval ``[ℓ, u]``
(A_max, A_min; DIGEST §2.16–2.21). Its workloads:

* **Synthetic** (C §5, the distributions its competitive ratios are computed for; all
  requests at step 0, identical prompt ``s``, every request with the shared interval of
  the family), returning a discrete :class:`~llmopt.model.instance.Instance`:

  ====================  ===========================================================================
  ``chen-two-point``    :func:`chen_two_point` — ``o ∈ {ℓ, u}`` with ``x_ℓ/x_u = t`` (D₂, §5.1)
  ``chen-geometric``    :func:`chen_geometric` — ``P(o=k) = p q^{k−1}`` truncated at ``u_max`` (§5.2)
  ``chen-lg``           :func:`chen_lg` — ``P(o=k) = k p² q^{k−1}`` truncated at ``u_max`` (§5.3)
  ``chen-worst-case``   :func:`chen_worst_case` — Figure 1's worst distribution for A_min on ``1..u``
  ====================  ===========================================================================

* **LMSYS** (C §6): :func:`chen_lmsys` (``chen-lmsys``), 2,000 sampled conversations as a
  continuous-time instance, all at 0 s, ``M = 16,492``, with one of C's three prediction
  settings applied by a spec string (:mod:`llmopt.workloads.predictions`).

C's ratios are asymptotic (``M → ∞`` with ``n ∝ M``; DIGEST §5.4). The synthetic
workloads therefore default to a memory that needs many rounds of batches: unless ``M``
is given, ``M = max(s + u, ⌈n·(s + E[o]) / 10⌉)`` — the requests' total peak memory is ten
memories' worth (so a schedule runs of the order of ten or more "waves" of batches), and
``M >= s + u`` so that a policy that reserves the upper end ``u`` for every request
(A_max) can always admit one. For a study of the limit, scale ``n`` and ``M`` together.

The model needs prompts ``s >= 1`` (DESIGN §1); C's closed forms are mostly stated for
``s = 0``. Compare a simulated ratio with Lemma 2 evaluated at the instance's ``s``
(:func:`llmopt.papers.chen.theory.lemma2_cr`), not with the ``s = 0`` figures.

Request ids are ``r0, r1, …`` in the (seeded, shuffled) request order and say nothing
about the output length (policies may see ids). Every generator is deterministic per seed
(DESIGN §4 inv. 3): it draws from ``numpy.random.default_rng([seed, tag])`` with a fixed
tag per workload (21–25; the J workloads use 1–2, trace sampling 7, the W workloads 11–16,
noisy predictions 31).
"""

from __future__ import annotations

import functools
import inspect
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from llmopt.model.instance import Instance, Request
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.workloads.predictions import apply_prediction_spec
from llmopt.workloads.wang import _check_positive, _check_seed, _trace_path

__all__ = [
    "CHEN_LMSYS_TRACE",
    "chen_geometric",
    "chen_lg",
    "chen_lmsys",
    "chen_two_point",
    "chen_worst_case",
    "geometric_pmf",
    "lg_pmf",
]

#: Seed-sequence tags (fixed forever: changing one changes every instance).
_TAGS = {"two-point": 21, "geometric": 22, "lg": 23, "worst-case": 24, "lmsys": 25}

#: Default memory: the requests' total peak memory ``n·(s + E[o])`` is this many times ``M``.
_WAVES = 10

#: Default ``q`` of G(p) and LG(p): near the top of C Figure 3's range, where the ratios approach their limits.
_DEFAULT_Q = 0.9

#: The staged LMSYS file closest to C's §6 statistics (see :func:`chen_lmsys`).
CHEN_LMSYS_TRACE = "lmsys_chat_1m_words_in256_out256.csv"

FloatArray = npt.NDArray[np.float64]


# --- helpers ------------------------------------------------------------------------------------------


def _check_q(q: Any, p: Any) -> float:
    """``q = 1 − p`` from at most one of ``q`` and ``p`` (C writes G(p), its Figure 3 plots q); default 0.9."""
    if p is not None and q is not None:
        raise ValueError(f"give q or p = 1 − q, not both (got q={q!r}, p={p!r})")
    value = _DEFAULT_Q if p is None and q is None else q
    if p is not None and isinstance(p, (int, float)) and not isinstance(p, bool):
        value = 1.0 - p
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
        raise ValueError(f"q = 1 − p must lie strictly between 0 and 1, got q={q!r}, p={p!r}")
    return float(value)


def _default_M(M: int | None, n: int, s: int, u: int, mean_output: float) -> int:
    if M is None:
        return max(s + u, math.ceil(n * (s + mean_output) / _WAVES))
    M = _check_positive(M, "M")
    if M < s + u:
        raise ValueError(f"M = {M} is below s + u = {s} + {u} = {s + u}: a request whose output reaches the upper "
                         "end u could not run, and A_max (which reserves u) could admit nothing")
    return M


def _counts(pmf: FloatArray, n: int) -> npt.NDArray[np.int64]:
    """Largest-remainder rounding of ``pmf·n``: ``⌊p_k n⌋`` plus one for the largest fractional parts
    (ties to the shorter length); each count is within 1 of ``p_k n`` and they sum to ``n``."""
    exact = pmf / pmf.sum() * n
    counts = np.floor(exact).astype(np.int64)
    extra = n - int(counts.sum())
    counts[np.argsort(-(exact - counts), kind="stable")[:extra]] += 1
    return counts


def _outputs(rng: np.random.Generator, pmf: FloatArray, n: int, exact: bool) -> npt.NDArray[np.int64]:
    """``n`` outputs on ``1..len(pmf)``: i.i.d. draws, or exact (largest-remainder) proportions shuffled."""
    if exact:
        lengths = np.repeat(np.arange(1, pmf.size + 1, dtype=np.int64), _counts(pmf, n))
        return np.asarray(rng.permutation(lengths), dtype=np.int64)
    return np.asarray(rng.choice(pmf.size, size=n, p=pmf / pmf.sum()), dtype=np.int64) + 1


def _name(prefix: str, function: Any, given: dict[str, Any]) -> str:
    """``prefix`` plus `` key=value`` for each argument in ``given`` that differs from ``function``'s default."""
    defaults = inspect.signature(function).parameters
    return prefix + "".join(f" {k}={v}" for k, v in given.items() if v != defaults[k].default)


def _instance(name: str, outputs: npt.NDArray[np.int64], s: int, M: int, lower: int, upper: int) -> Instance:
    """All requests at step 0 with prompt ``s`` and interval ``[lower, upper]``; ids ``r0 …`` in order."""
    reqs = tuple(Request(f"r{i}", 0, s, int(o), lower, upper) for i, o in enumerate(outputs.tolist()))
    return Instance(M, reqs, name=name)


def geometric_pmf(q: float, u_max: int) -> FloatArray:
    """G(p) conditioned on ``1..u_max``: ``P(o=k) ∝ p q^{k−1}`` (C §5.2), normalised; ``pmf[k−1]``."""
    k = np.arange(1, u_max + 1, dtype=np.float64)
    w = (1.0 - q) * q ** (k - 1.0)
    return w / w.sum()


def lg_pmf(q: float, u_max: int) -> FloatArray:
    """LG(p) conditioned on ``1..u_max``: ``P(o=k) ∝ k p² q^{k−1}`` (C §5.3), normalised; ``pmf[k−1]``."""
    k = np.arange(1, u_max + 1, dtype=np.float64)
    w = k * (1.0 - q) ** 2 * q ** (k - 1.0)
    return w / w.sum()


# --- C §5 synthetic families --------------------------------------------------------------------------


def chen_two_point(seed: int, n: int = 2000, ell: int = 10, u: int = 100, t: float | None = None, s: int = 1,
                   M: int | None = None, exact: bool = True) -> Instance:
    """The two-point family D₂ of C §5.1: every output is ``ℓ`` or ``u``; every interval is ``[ℓ, u]``.

    ``t = x_ℓ/x_u`` is the ratio of short to long requests (C's proof of Thm 6, L999). Its
    default ``t = u/ℓ = 1/α`` is A_min's worst case: the ratio of Thm 6's proof,
    ``1 + α(1−α²)t/(α²t² + 2α²t + 1)``, is maximal at ``t = 1/α`` and there equals the bound
    ``(3 − α)/2`` (at ``s = 0``; 1.45 for the default ``α = 0.1``). The default ``α = 0.1`` is
    below ``α* ≈ 0.382``, where A_ℓ's bound (Thm 7) beats A_min's.

    With ``exact=True`` (default) the counts are exact: ``n_ℓ = n·t/(1+t)`` rounded to the
    nearest integer (a half goes to the short length), ``n_u = n − n_ℓ``, so the instance
    *is* the distribution whose ratio the theorem states, without sampling noise. With
    ``exact=False`` each output is an i.i.d. draw (``ℓ`` with probability ``t/(1+t)``). The
    request order is a seeded random permutation.

    Parameters
    ----------
    seed : int
    n : int
        Number of requests.
    ell, u : int
        The two lengths, ``1 <= ℓ < u``.
    t : float, optional
        ``x_ℓ/x_u >= 0``; default ``u/ℓ``.
    s : int
        Prompt size of every request (``>= 1``; C's theorems use ``s = 0``).
    M : int, optional
        Default ``max(s + u, ⌈n·(s + E[o])/10⌉)`` (module docstring): 3,837 for the defaults.
    exact : bool
        Exact proportions (default) or i.i.d. draws.

    Returns
    -------
    Instance
        Named e.g. ``"chen-two-point/seed=0"`` plus the parameters given that differ from the
        defaults.

    Raises
    ------
    ValueError
        Bad parameters (``ℓ >= u``, ``t < 0``, ``M < s + u``, …).
    """
    given = {"n": n, "ell": ell, "u": u, "t": t, "s": s, "M": M, "exact": exact}
    seed = _check_seed(seed)
    n, ell, u, s = (_check_positive(v, k) for v, k in ((n, "n"), (ell, "ell"), (u, "u"), (s, "s")))
    if ell >= u:
        raise ValueError(f"the two-point family needs ell < u, got ell={ell}, u={u}")
    ratio = u / ell if t is None else t
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not (math.isfinite(ratio) and ratio >= 0):
        raise ValueError(f"t = x_ell/x_u must be a finite number >= 0, got {t!r}")
    share = ratio / (1.0 + ratio)
    pmf = np.zeros(u, dtype=np.float64)
    pmf[ell - 1], pmf[u - 1] = share, 1.0 - share
    M = _default_M(M, n, s, u, share * ell + (1.0 - share) * u)
    rng = np.random.default_rng([seed, _TAGS["two-point"]])
    outputs = _outputs(rng, pmf, n, bool(exact))
    return _instance(_name(f"chen-two-point/seed={seed}", chen_two_point, given), outputs, s, M, ell, u)


def _geometric_family(workload: str, function: Any, pmf_of: Any, seed: int, given: dict[str, Any]) -> Instance:
    seed = _check_seed(seed)
    q = _check_q(given["q"], given["p"])
    n, u_max, s = (_check_positive(given[k], k) for k in ("n", "u_max", "s"))
    pmf = pmf_of(q, u_max)
    M = _default_M(given["M"], n, s, u_max, float(pmf @ np.arange(1, u_max + 1)))
    rng = np.random.default_rng([seed, _TAGS[workload.removeprefix("chen-")]])
    outputs = _outputs(rng, pmf, n, bool(given["exact"]))
    return _instance(_name(f"{workload}/seed={seed}", function, given), outputs, s, M, 1, u_max)


def chen_geometric(seed: int, n: int = 2000, q: float | None = None, p: float | None = None, u_max: int = 1000,
                   s: int = 1, M: int | None = None, exact: bool = False) -> Instance:
    """C §5.2's geometric distribution G(p), ``P(o = k) = p q^{k−1}`` (``q = 1 − p``), on ``1..u_max``.

    Outputs are i.i.d. draws (``exact=True``: exact largest-remainder proportions, shuffled)
    from G(p) **conditioned** on ``o <= u_max`` (C: "an exponential decay of o on the
    discrete space [1, u]"; the probabilities are renormalised, which for ``q^{u_max} ≈ 0``
    changes nothing). Every request has the interval ``[1, u_max]``. The default ``u_max =
    1000`` is C §6's interval ``[1, 1000]``; its truncated mass ``q^{1000}`` is ``4·10⁻⁵`` at
    ``q = 0.99``. C's Figure 3 sweeps ``q``; its ratio for A_min increases in ``q`` to ≈ 1.682
    (DIGEST §5.4: 1.6788 at ``q = 0.9``).

    Parameters
    ----------
    seed : int
    n : int
    q, p : float, optional
        At most one, ``0 < q = 1 − p < 1``; default ``q = 0.9``.
    u_max : int
        Truncation and upper end of every interval.
    s : int
        Prompt size (``>= 1``).
    M : int, optional
        Default ``max(s + u_max, ⌈n·(s + E[o])/10⌉)``: 2,201 for the defaults.
    exact : bool

    Returns
    -------
    Instance
        Named e.g. ``"chen-geometric/seed=0"`` plus the parameters given.

    Raises
    ------
    ValueError
        Bad parameters, or both ``q`` and ``p``.
    """
    given = {"n": n, "q": q, "p": p, "u_max": u_max, "s": s, "M": M, "exact": exact}
    return _geometric_family("chen-geometric", chen_geometric, geometric_pmf, seed, given)


def chen_lg(seed: int, n: int = 2000, q: float | None = None, p: float | None = None, u_max: int = 1000, s: int = 1,
            M: int | None = None, exact: bool = False) -> Instance:
    """C §5.3's linearly weighted geometric distribution LG(p), ``P(o = k) = k p² q^{k−1}``, on ``1..u_max``.

    As :func:`chen_geometric` (i.i.d. draws conditioned on ``o <= u_max``, interval ``[1,
    u_max]``, default ``q = 0.9``), with LG(p): mean ``(1 + q)/p`` (19 at ``q = 0.9``), mode
    near ``1/ln(1/q)``. Thm 8 gives A_min's ratio in closed form, increasing in ``q`` to
    ``14/9 ≈ 1.5556`` (1.5551 at ``q = 0.9``). The truncated mass at ``q = 0.99``, ``u_max =
    1000`` is about ``4·10⁻³``; raise ``u_max`` for ``q`` nearer 1.

    Parameters
    ----------
    seed, n, q, p, u_max, s, M, exact
        As in :func:`chen_geometric`; default ``M`` is 4,001 for the defaults.

    Returns
    -------
    Instance
        Named e.g. ``"chen-lg/seed=0"``.
    """
    given = {"n": n, "q": q, "p": p, "u_max": u_max, "s": s, "M": M, "exact": exact}
    return _geometric_family("chen-lg", chen_lg, lg_pmf, seed, given)


# --- C Figure 1's worst distribution for A_min (its theory: llmopt.papers.chen.theory) --------------


def _top_generalized_eig(A: FloatArray, B: FloatArray) -> tuple[float, FloatArray]:
    """Largest eigenpair of the symmetric-definite pencil ``(A, B)`` (scipy.linalg.eigh)."""
    import scipy.linalg

    size = A.shape[0]
    w, v = scipy.linalg.eigh(A, B, subset_by_index=[size - 1, size - 1])
    vec = np.asarray(v[:, 0], dtype=np.float64)
    if vec.sum() < 0:
        vec = -vec
    return float(w[0]), vec


def amin_matrices(u: int) -> tuple[FloatArray, FloatArray]:
    """C Cor. 1's ``A_u, B_u`` (``s = 0, ℓ = 1``; C L295–303; DIGEST §2.18).

    ``a_ij = (min(i,j)²/(ij))·(½(i+j)² − min(i,j)²)``, ``b_ij = min(i,j)²`` for ``i, j = 1..u``,
    so that ``CR(A_min) = max_x xᵀA_u x / xᵀB_u x`` (Lemma 3: both positive definite).
    Built with vectorised numpy in ``O(u²)`` memory (u = 3000: two 72 MB arrays).
    """
    if int(u) != u or u < 1:
        raise ValueError(f"u must be an integer >= 1, got {u!r}")
    idx = np.arange(1, int(u) + 1, dtype=np.float64)
    m2 = np.minimum.outer(idx, idx) ** 2
    A = m2 / np.outer(idx, idx) * (0.5 * np.add.outer(idx, idx) ** 2 - m2)
    return A, m2


def figure1_worst_distribution(u: int) -> FloatArray:
    """The distribution on ``1..u`` attaining Figure 1's ratio (``s = 0, ℓ = 1``).

    The eigenvector of ``λ_max(A_u, B_u)`` normalised to sum 1 (``x[k−1]`` for length ``k``);
    :func:`lemma2_cr` of it equals :func:`figure1_cr` (the Rayleigh quotient at an
    eigenvector is its eigenvalue). Raises ``RuntimeError`` if the eigenvector is not
    entrywise positive (never observed for ``u <= 3000``). Shape (u = 1000): 0.64 on
    ``k = 1``, a tail ``x_k ≈ 0.53–0.58/k²``, and an atom ≈ ``0.46/u`` on ``k = u``.
    """
    A, B = amin_matrices(u)
    _, vec = _top_generalized_eig(A, B)
    if not np.all(vec > 0):
        raise RuntimeError(f"Figure 1 eigenvector for u={u} is not entrywise positive (min {vec.min():.3g})")
    return vec / vec.sum()



@functools.lru_cache(maxsize=8)
def _worst_distribution(u: int) -> FloatArray:
    pmf = np.array(figure1_worst_distribution(u), dtype=np.float64)
    pmf.flags.writeable = False
    return pmf


def chen_worst_case(seed: int, u: int = 100, n: int = 2000, s: int = 1, M: int | None = None,
                    exact: bool = False, predictions: str | None = None) -> Instance:
    """Outputs from the distribution on ``1..u`` that is worst for A_min (C Figure 1, Cor. 1).

    The distribution is :func:`llmopt.papers.chen.theory.figure1_worst_distribution`: the positive
    eigenvector of the largest generalized eigenvalue of C's matrices ``(A_u, B_u)``
    (``s = 0``, ``ℓ = 1``), whose Rayleigh quotient — A_min's ratio by Lemma 2 — is Figure
    1's value (2.3333 at ``u = 100``; DIGEST §5.4). Its shape: most mass on ``o = 1``, a tail
    ``≈ c/k²`` and an atom on ``o = u``. Every request has the interval ``[1, u]``.

    Outputs are i.i.d. draws by default (``exact=True``: exact largest-remainder proportions,
    shuffled; use it for a small ``n`` so that the atom on ``u`` is represented). The
    figure is for ``s = 0``, the model needs ``s >= 1``: compare a measured ratio with
    Lemma 2 at the instance's ``s`` and its empirical distribution.

    Parameters
    ----------
    seed : int
    u : int
        Upper end, ``>= 1``. The eigenproblem is dense ``u × u``: ``u = 1000`` took about 6 s
        on the development machine (``u = 100``: 0.03 s); the distribution is cached per ``u``.
    n : int
    s : int
    M : int, optional
        Default ``max(s + u, ⌈n·(s + E[o])/10⌉)``: 884 for the defaults.
    exact : bool
    predictions : str, optional
        A prediction spec (:func:`llmopt.workloads.predictions.apply_prediction_spec`) that
        replaces the shared interval ``[1, u]``, e.g. ``"bins:width=10,count=5"`` for the
        buckets of multi-interval A_min (C Cor. 2, suite ``chen-cor2``). Default ``None``:
        keep ``[1, u]``.

    Returns
    -------
    Instance
        Named e.g. ``"chen-worst-case/seed=0"`` plus the parameters given (and the
        prediction suffix).
    """
    given = {"u": u, "n": n, "s": s, "M": M, "exact": exact}
    seed = _check_seed(seed)
    u, n, s = _check_positive(u, "u"), _check_positive(n, "n"), _check_positive(s, "s")
    pmf = _worst_distribution(u)
    M = _default_M(M, n, s, u, float(pmf @ np.arange(1, u + 1)))
    rng = np.random.default_rng([seed, _TAGS["worst-case"]])
    outputs = _outputs(rng, pmf, n, bool(exact))
    inst = _instance(_name(f"chen-worst-case/seed={seed}", chen_worst_case, given), outputs, s, M, 1, u)
    return inst if predictions is None else apply_prediction_spec(inst, predictions, seed)


# --- C §6 LMSYS ---------------------------------------------------------------------------------------


def chen_lmsys(seed: int, n: int = 2000, predictions: str = "none", trace: str = CHEN_LMSYS_TRACE,
               format: str | None = "lmsys", sample: int = 2000, max_output: int | None = 1000,
               M: int = 16492) -> TimedInstance:
    """C §6's LMSYS workload: 2,000 sampled conversations, all at 0 s, ``M = 16,492``, with predictions.

    C: "we randomly sample a subset of 2,000 conversations" of LMSYS-Chat-1M and evaluates
    A_max, A_min and H-SF on "random subsets of size 200, 400, ..., up to 2,000" under three
    prediction settings (DIGEST §5.3). Here, with ``rng = numpy.random.default_rng([seed, 25])``:

    1. The trace is loaded as :func:`llmopt.workloads.wang.wang_mixed` loads it (same cache,
       ``M``, ``on_bad_row="drop"``: rows with a zero length are dropped, DESIGN §1).
    2. Rows with an output above ``max_output`` are removed (none in the staged LMSYS files,
       whose outputs stop at 256–599 words). The default 1,000 is the top of C's Experiment
       1 interval ``[1, 1000]`` and of its ten bins, so every C setting applies to every
       sample; C's own sample had maximum 883.
    3. ``sample`` distinct rows are drawn uniformly without replacement; the instance is the
       **first** ``n`` of them, in draw order. For one seed, ``n = 200, 400, …, 2000`` are
       nested prefixes of one sample (like ``wang-mixed``), each a uniformly random subset.
    4. The prediction spec ``predictions`` (:func:`llmopt.workloads.predictions.apply_prediction_spec`,
       with this ``seed``) sets the intervals: C's Exp. 1 ``"shared:lower=1,upper=1000"``,
       Exp. 2 ``"bins:width=100,count=10"``, Exp. 3 ``"relative:x=0.1"`` (``0.95``, ``0.99``).

    All arrivals are at 0.0 s (C states no arrival process; its model has all requests at
    time 0; DIGEST §5.3) and ``M = 16,492`` (C states none; DIGEST I-46). Ids are
    ``"<format>-<file row>"``.

    **Which file.** C reports (tokens, though its Fig. 4 caption says words; DIGEST I-16)
    inputs 1–468, mean 41, median 11, variance 4,961 and outputs 1–883, mean 85, median 43,
    variance 9,702. The staged LMSYS files are word counts of whole conversations,
    truncated (shared/data/SOURCES.md); after dropping zeros, prompt / output mean, median,
    variance:

    ======================================  =========================  ==========================
    file                                    prompt                     output
    ======================================  =========================  ==========================
    ``…_words_in256_out256.csv`` (default)  42.8 / 18 / 3,350 (≤ 256)   94.3 / 75 / 6,078 (≤ 256)
    ``…_words_sample100k_in499_out599.csv`` 59.1 / 21 / 7,785 (≤ 499)   159.9 / 125 / 20,616 (≤ 599)
    ``…_words_sample20k_in199_out499.csv``  34.8 / 19 / 1,654 (≤ 199)   147.1 / 116 / 16,215 (≤ 499)
    ======================================  =========================  ==========================

    The default is closest: both means within 10 % of C's, the medians nearest (the
    other files' output means are almost twice C's). It cannot reproduce C's range (its
    lengths stop at 256) or medians (18 / 75 against 11 / 43). The seed-0 sample of 2,000:
    prompt 1–256, mean 42.88, median 20, variance 3,191; output 1–256, mean 92.93, median
    73, variance 5,948.

    Parameters
    ----------
    seed : int
    n : int
        Requests kept, ``1 <= n <= sample`` (C: 200, 400, …, 2000).
    predictions : str
        A prediction spec (default ``"none"``: no intervals).
    trace : str
        File name under ``data_dir()/"traces"`` or an absolute path.
    format : str, optional
        Trace format (``None``: detected from the columns).
    sample : int
        Size of the one sample the prefixes come from (C: 2,000).
    max_output : int, optional
        Rows with a longer output are excluded before sampling; ``None`` keeps all.
    M : int
        KV capacity; rows with ``s + o > M`` are dropped like zero-length rows.

    Returns
    -------
    TimedInstance
        Named e.g. ``"chen-lmsys/seed=0 n=2000"`` plus the other parameters given and the
        prediction suffix, e.g. ``" predictions=bins:width=100,count=10"``.

    Raises
    ------
    ValueError
        Bad ``seed``, ``n``, ``sample``, ``max_output`` or prediction spec.
    TraceError
        Fewer usable rows than ``sample``, or an unreadable file.
    FileNotFoundError
        No data folder (see :func:`llmopt.workloads.traces.data.data_dir`).
    """
    from llmopt.workloads.traces import TraceError
    from llmopt.workloads.traces.data import cached_trace as _cached_trace

    given = {"trace": trace, "format": format, "sample": sample, "max_output": max_output, "M": M}
    seed = _check_seed(seed)
    n, sample, M = _check_positive(n, "n"), _check_positive(sample, "sample"), _check_positive(M, "M")
    if n > sample:
        raise ValueError(f"n = {n} exceeds the sample of {sample} conversations it is a prefix of")
    if max_output is not None:
        max_output = _check_positive(max_output, "max_output")
    tr = _cached_trace(str(_trace_path(trace)), format, M, "drop")
    keep = np.arange(tr.n) if max_output is None else np.flatnonzero(tr.output <= max_output)
    if sample > keep.size:
        cut = "" if max_output is None else f" with output <= max_output = {max_output}"
        raise TraceError(f"{tr.path}: a sample of {sample:,} asked but the trace has only {keep.size:,} usable rows"
                         f"{cut}")
    rng = np.random.default_rng([seed, _TAGS["lmsys"]])
    idx = keep[rng.choice(keep.size, size=sample, replace=False)][:n]
    reqs = tuple(TimedRequest(f"{tr.format}-{int(row)}", 0.0, int(p), int(o))
                 for row, p, o in zip(tr.source_rows[idx], tr.prompt[idx], tr.output[idx]))
    name = _name(f"chen-lmsys/seed={seed} n={n}", chen_lmsys, given)
    return apply_prediction_spec(TimedInstance(M=M, requests=reqs, name=name), predictions, seed)
