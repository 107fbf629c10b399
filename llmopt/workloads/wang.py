"""Workloads of Wang, Ye and Zhou ("W"), *LLM Serving Optimization with Variable Prefill and Decode Lengths*.

Three things live here:

* :func:`wang_synthetic` — the five synthetic distributions of W App. EC.4.2 (Table EC.1):
  ``M = 100``, ``s_max = o_max = 50``, all arrivals at 0 (DIGEST §5.2, I-27). One small
  function per distribution (:func:`wang_uniform`, :func:`wang_normal`,
  :func:`wang_binomial`, :func:`wang_exponential`, :func:`wang_mixed_synthetic`) is
  registered as a workload (``"wang-uniform"`` …, ``"wang-mixed-synthetic"``).
* :func:`wang_mixed` — the W §7 mixed dataset: 1,600 LMSYS-Chat-1M conversations and 400
  arXiv long-summarization tasks merged by a random permutation (DIGEST §5.1), as a
  continuous-time instance with every arrival at 0 s (workload ``"wang-mixed"``).
* :func:`theorem1_instance` and :class:`~llmopt.papers.wang.theorem1.Type2First` — the adversarial instance of W
  Theorem 1 (App. EC.1) and the schedule Λ ("all type 2 requests before any type 1
  request") it is compared with (DIGEST §3.4, I-38).

Every generator is deterministic per seed (DESIGN §4 inv. 3): it draws from
``numpy.random.default_rng([seed, tag])`` with a fixed ``tag`` per distribution (the
J §5.1 workloads use tags 1 and 2, trace sampling 7).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from llmopt.model.instance import Instance, Request
from llmopt.model.timed_instance import TimedInstance, TimedRequest

__all__ = [
    "WANG_DISTRIBUTIONS",
    "wang_synthetic",
    "wang_uniform",
    "wang_normal",
    "wang_binomial",
    "wang_exponential",
    "wang_mixed_synthetic",
    "wang_mixed",
    "theorem1_instance",
]

#: Distribution name → second entry of the seed sequence (fixed forever: changing one changes every instance).
_TAGS = {"uniform": 11, "normal": 12, "binomial": 13, "exponential": 14, "mixed": 15}
_MIXED_DATASET_TAG = 16

#: The distributions of W App. EC.4.2, in Table EC.1's row order.
WANG_DISTRIBUTIONS = tuple(_TAGS)

#: W EC.4.2 parameters (verbatim): Normal μ, σ; Exponential scale (λ = 0.2); Mixed prompt components.
NORMAL_MEAN, NORMAL_STD = 25.0, 8.33
EXP_SCALE = 5.0
MIXED_EXP_SHARE, MIXED_EXP_SCALE = 0.8, 10.0
MIXED_LOGNORMAL_MU, MIXED_LOGNORMAL_SIGMA = math.log(40.0), 0.25


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    return int(seed)


def _check_positive(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _round_clip(x: np.ndarray, hi: int) -> np.ndarray:
    """Round half to even (``np.rint``), then clip to ``[1, hi]`` (DIGEST I-27)."""
    return np.clip(np.rint(x), 1, hi).astype(np.int64)


def _lengths(rng: np.random.Generator, dist: str, n: int, hi: int, *, prompt: bool) -> np.ndarray:
    """``n`` lengths in ``[1, hi]`` of distribution ``dist`` (``prompt`` selects the Mixed prompt law)."""
    if dist == "uniform":  # "U(1, 51)": integers 1..50 (numpy randint(1, 51); DIGEST I-27)
        return rng.integers(1, hi + 1, size=n)
    if dist == "normal":
        return _round_clip(rng.normal(NORMAL_MEAN, NORMAL_STD, size=n), hi)
    if dist == "binomial":  # Binomial(49, 0.5) + 1 at hi = 50
        return rng.binomial(hi - 1, 0.5, size=n) + 1
    if dist == "exponential" or (dist == "mixed" and not prompt):  # Exp(λ = 0.2), scale 5
        return _round_clip(rng.exponential(EXP_SCALE, size=n), hi)
    if dist == "mixed":
        short = rng.random(size=n) < MIXED_EXP_SHARE
        x = np.where(short, rng.exponential(MIXED_EXP_SCALE, size=n),
                     rng.lognormal(MIXED_LOGNORMAL_MU, MIXED_LOGNORMAL_SIGMA, size=n))
        over = x > hi  # "Values > 50 remapped to U(40, 50)": numpy randint(40, 50), i.e. 40..49
        x[over] = rng.integers(max(1, hi - 10), max(hi, 2), size=int(over.sum()))
        return _round_clip(x, hi)
    raise ValueError(f"unknown distribution {dist!r}; known: {', '.join(WANG_DISTRIBUTIONS)}")


def wang_synthetic(seed: int, dist: str = "uniform", n: int | None = None, M: int = 100, s_max: int = 50,
                   o_max: int = 50) -> Instance:
    """One instance of a W App. EC.4.2 synthetic distribution (Table EC.1), all arrivals at 0.

    The paper fixes ``M = 100`` and ``s_max = o_max = 50``; ``s_i`` and ``o_i`` are drawn
    independently (prompts first, then outputs, as two vectors). The paper leaves integer
    rounding open (DIGEST I-27); this is the literal integer reading:

    ===============  ==========================================================================
    ``uniform``      ``rng.integers(1, s_max + 1)`` — "U(1, 51)" read as numpy's
                     ``randint(1, 51)``, integers 1..50 (mean 25.5)
    ``normal``       ``N(25, 8.33²)``, rounded half to even (``np.rint``), clipped to ``[1, 50]``
    ``binomial``     ``Binomial(49, 0.5) + 1`` (``Binomial(max − 1, 0.5) + 1``; mean 25.5)
    ``exponential``  ``Exp(λ = 0.2)`` (scale 5), rounded, clipped to ``[1, 50]``
    ``mixed``        prompts: 80 % ``Exp(scale 10)``, 20 % ``lognormal(μ = ln 40, σ = 0.25)``;
                     values ``> 50`` remapped to ``U(40, 50)`` read like "U(1, 51)", i.e.
                     ``rng.integers(40, 50)`` (40..49); then rounded and clipped to ``[1, 50]``.
                     Outputs ``Exp(scale 5)`` rounded, clipped. Bimodal prompts (W Fig. EC.1).
    ===============  ==========================================================================

    The distribution constants (μ, σ, scales) are the paper's; ``s_max`` / ``o_max`` are the
    clip bounds (and the ranges of Uniform, Binomial and the Mixed remap, ``[s_max − 10,
    s_max)``). With ``s_max + o_max <= M`` every request is valid (``s + o <= 100 = M`` in
    the paper's setting).

    Note that the paper's Table EC.1 magnitudes are not reproducible under this model
    (DIGEST §5.2, I-27): compare algorithm orderings, not absolute TELs.

    Parameters
    ----------
    seed : int
        Seeds ``numpy.random.default_rng([seed, tag])`` with a fixed tag per distribution.
    dist : {"uniform", "normal", "binomial", "exponential", "mixed"}
    n : int, optional
        Number of requests; default 100 (``mixed``: 200), as in Table EC.1.
    M, s_max, o_max : int

    Returns
    -------
    Instance
        Ids ``r0 … r{n-1}``, named e.g. ``"wang-uniform/seed=3"``.

    Raises
    ------
    ValueError
        Unknown ``dist``, bad ``seed``/``n``, or ``s_max + o_max > M``.
    """
    if dist not in _TAGS:
        raise ValueError(f"unknown distribution {dist!r}; known: {', '.join(WANG_DISTRIBUTIONS)}")
    seed = _check_seed(seed)
    n = _check_positive(200 if dist == "mixed" and n is None else 100 if n is None else n, "n")
    s_max, o_max, M = _check_positive(s_max, "s_max"), _check_positive(o_max, "o_max"), _check_positive(M, "M")
    if s_max + o_max > M:
        raise ValueError(f"s_max + o_max = {s_max} + {o_max} exceeds M = {M}: requests could not fit")
    rng = np.random.default_rng([seed, _TAGS[dist]])
    prompts = _lengths(rng, dist, n, s_max, prompt=True)
    outputs = _lengths(rng, dist, n, o_max, prompt=False)
    reqs = tuple(Request(f"r{i}", 0, s, o) for i, (s, o) in enumerate(zip(prompts.tolist(), outputs.tolist())))
    label = "wang-mixed-synthetic" if dist == "mixed" else f"wang-{dist}"
    extra = "".join(f" {k}={v}" for k, v, d in (("n", n, 200 if dist == "mixed" else 100), ("M", M, 100),
                                                ("s_max", s_max, 50), ("o_max", o_max, 50)) if v != d)
    return Instance(M, reqs, name=f"{label}/seed={seed}{extra}")


def wang_uniform(seed: int, n: int = 100, M: int = 100) -> Instance:
    """W EC.4.2 Uniform: ``s_i, o_i`` integers 1..50, ``n = 100``, ``M = 100`` (see :func:`wang_synthetic`)."""
    return wang_synthetic(seed, "uniform", n, M)


def wang_normal(seed: int, n: int = 100, M: int = 100) -> Instance:
    """W EC.4.2 Normal: ``N(25, 8.33²)`` rounded, clipped to [1, 50] (see :func:`wang_synthetic`)."""
    return wang_synthetic(seed, "normal", n, M)


def wang_binomial(seed: int, n: int = 100, M: int = 100) -> Instance:
    """W EC.4.2 Binomial: ``Binomial(49, 0.5) + 1`` (see :func:`wang_synthetic`)."""
    return wang_synthetic(seed, "binomial", n, M)


def wang_exponential(seed: int, n: int = 100, M: int = 100) -> Instance:
    """W EC.4.2 Exponential: ``Exp(λ = 0.2)`` rounded, clipped to [1, 50] (see :func:`wang_synthetic`)."""
    return wang_synthetic(seed, "exponential", n, M)


def wang_mixed_synthetic(seed: int, n: int = 200, M: int = 100) -> Instance:
    """W EC.4.2 Mixed: bimodal prompts (80 % Exp(10), 20 % lognormal(ln 40, 0.25)), Exp(5) outputs,
    ``n = 200`` (see :func:`wang_synthetic`)."""
    return wang_synthetic(seed, "mixed", n, M)


# --- W §7 mixed LMSYS + arXiv dataset -----------------------------------------------------------------


def _trace_path(name: str) -> Path:
    from llmopt.workloads.traces.data import data_dir

    path = Path(name)
    return path if path.is_absolute() else data_dir() / "traces" / name


def wang_mixed(seed: int, n: int = 2000, lmsys: str = "lmsys_chat_1m_words_in256_out256.csv",
               arxiv: str = "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", n_lmsys: int = 1600,
               n_arxiv: int = 400, M: int = 16492) -> TimedInstance:
    """The W §7 mixed dataset: LMSYS-Chat-1M conversations and arXiv summarization tasks.

    W: "we randomly select 1600 short conversations and 400 long summarization tasks. By
    merging them with a random permutation, we create a mixed dataset of 2000 samples",
    and "we evaluate latency trends by subsampling the mixed dataset (200, 400, …, 2000
    requests)". Here, with ``rng = numpy.random.default_rng([seed, 16])``:

    1. ``n_lmsys`` distinct rows of the LMSYS file and ``n_arxiv`` distinct rows of the
       arXiv file are drawn uniformly without replacement (LMSYS first). The files are
       loaded as :func:`llmopt.workloads.traces.data.trace_workload` loads them (same cache),
       with ``M`` and ``on_bad_row="drop"``: the LMSYS file's 1,198 rows with a zero
       length are dropped (DESIGN §1 needs ``s, o >= 1``); the arXiv file has none.
    2. The ``n_lmsys + n_arxiv`` requests (LMSYS block, then arXiv block) are merged with
       one seeded random permutation.
    3. The instance is the **first** ``n`` requests of that permutation. "Subsampling" is
       read as taking prefixes: for a given seed, ``n = 200, 400, …, 2000`` are nested
       prefixes of one 2,000-request dataset (so the latency trend over ``n`` is not
       confounded by resampling), and each prefix is itself a uniformly random subset of
       the mix (about 80 % LMSYS).

    Every arrival is at 0.0 s: W does not state an arrival process, and its model and its
    FCFS ("order they arrive (determined by random shuffling)") imply all requests are
    available at once, in the shuffled order (DIGEST I-10). Request ids name the source and
    its 1-based file row, e.g. ``"lmsys-123"``, ``"arxiv-45"``; the request order is the
    permutation order (FCFS takes them in this order).

    Units (DIGEST I-16): the staged LMSYS file holds **word counts** of whole multi-turn
    conversations (shared/data/SOURCES.md), used as token counts; W reports tokens. The
    arXiv file is Llama-2 tokens, filtered to ``s + o <= 4096``.

    Measured on the staged files, the 2,000-request mix for seed 0 versus W Fig. 7:

    ======  ===============================  ===============================
    length  this (seed 0)                    W (Fig. 7)
    ======  ===============================  ===============================
    prompt  mean 551.38, median 26           mean 542.75, median 18
    output  mean 136.66, median 98           mean 127.50
    ======  ===============================  ===============================

    W's means are exactly ``0.8·41.84 + 0.2·2546.39`` and ``0.8·85.35 + 0.2·296.08``, the
    weighted means of its two sources. The staged files' means (LMSYS after dropping zeros
    42.80 / 94.27 words, arXiv 2588.08 / 291.43 tokens) give 551.85 / 133.70 in
    expectation; seeds 1 and 2 give prompt means 546.81 / 545.50 and output means 131.83 /
    138.63. The output mean and both medians are higher than W's because the staged LMSYS
    file counts the words of all turns of a conversation together and keeps only rows
    under 257 words each way (its median prompt / output is 18 / 75 words against W's
    12 / 43 tokens; SOURCES.md).

    Parameters
    ----------
    seed : int
    n : int
        Requests kept, ``1 <= n <= n_lmsys + n_arxiv`` (W: 200, 400, …, 2000).
    lmsys, arxiv : str
        File names under ``data_dir()/"traces"`` (or absolute paths); formats ``lmsys``
        and ``arxiv``.
    n_lmsys, n_arxiv : int
        Size of the two samples (W: 1,600 and 400).
    M : int
        KV capacity (W: 16,492); rows with ``s + o > M`` are dropped like zero-length rows.

    Returns
    -------
    TimedInstance
        Named e.g. ``"wang-mixed/seed=0 n=2000"``.

    Raises
    ------
    ValueError
        Bad ``seed``, ``n``, ``n_lmsys`` or ``n_arxiv``.
    TraceError
        A sample larger than the rows kept in its file, or an unreadable file.
    FileNotFoundError
        No data folder (see :func:`llmopt.workloads.traces.data.data_dir`).
    """
    from llmopt.workloads.traces import TraceError
    from llmopt.workloads.traces.data import cached_trace as _cached_trace

    seed = _check_seed(seed)
    n_lmsys, n_arxiv = _check_positive(n_lmsys, "n_lmsys"), _check_positive(n_arxiv, "n_arxiv")
    total = n_lmsys + n_arxiv
    n = _check_positive(n, "n")
    if n > total:
        raise ValueError(f"n = {n} exceeds the mixed dataset's n_lmsys + n_arxiv = {total} requests")
    M = _check_positive(M, "M")
    rng = np.random.default_rng([seed, _MIXED_DATASET_TAG])
    parts = []
    for source, name, fmt, k in (("lmsys", lmsys, "lmsys", n_lmsys), ("arxiv", arxiv, "arxiv", n_arxiv)):
        tr = _cached_trace(str(_trace_path(name)), fmt, M, "drop")
        if k > tr.n:
            raise TraceError(f"{tr.path}: {k:,} {source} requests asked but the trace has only {tr.n:,} usable rows")
        idx = rng.choice(tr.n, size=k, replace=False)
        parts.append(([f"{source}-{int(r)}" for r in tr.source_rows[idx]], tr.prompt[idx].tolist(),
                      tr.output[idx].tolist()))
    ids = parts[0][0] + parts[1][0]
    prompts = parts[0][1] + parts[1][1]
    outputs = parts[0][2] + parts[1][2]
    order = rng.permutation(total)[:n]
    reqs = tuple(TimedRequest(ids[j], 0.0, prompts[j], outputs[j]) for j in order.tolist())
    return TimedInstance(M=M, requests=reqs, name=f"wang-mixed/seed={seed} n={n}")


# --- W Theorem 1 (App. EC.1) ------------------------------------------------------------------------


def theorem1_instance(M: int, Y: int | None = None, *, exponent: float = 1.25) -> Instance:
    """The instance of W Theorem 1 (App. EC.1): MC-SF's competitive ratio is unbounded.

    All requests arrive at 0. Type 1: ``X = M`` requests with ``s = √M − 1``, ``o = 1``
    (ids ``t1-0 …``). Type 2: ``Y`` requests with ``s = 1``, ``o = 2`` (ids ``t2-0 …``).
    MC-SF (shortest output first) runs every type-1 request first; the schedule Λ
    (:class:`~llmopt.papers.wang.theorem1.Type2First`) runs type 2 first.

    W prints ``Y = M^1.5``, but its arithmetic is wrong (the type-2 self term
    ``(2M/3)·Σ_{j=1}^{3√M} j`` is ``3M² + M^1.5``, not ``3M^1.25``): with ``Y = M^1.5`` the
    ratio TEL(MC-SF)/TEL(Λ) tends to 4/3. The default here is the corrected ``Y =
    round(M^1.25)`` (DIGEST §3.4, I-38), for which the ratio grows like ``Θ(M^{1/4})``.
    Pass ``exponent=1.5`` (or ``Y``) for the literal instance.

    Leading terms, with ``r = √M`` (type 1 runs ``r`` at a time; type 2 runs ``M/3`` every
    two steps, so its self term is ``(2M/3)·Σ_{j<=3Y/M} j ≈ 3Y²/M``):
    ``TEL(MC-SF) ≈ r³/2 + Y·r + 3Y²/M`` and ``TEL(Λ) ≈ 3Y²/M + 6XY/M + r³/2``. For ``Y =
    M^1.5`` the ratio is ``≈ (4 + 0.5/r)/(3 + 6.5/r) < 4/3``; for ``Y = M^1.25`` it is
    ``≈ (3.5 + M^{1/4})/(3.5 + 6·M^{-1/4})``, which exceeds ``M^{1/4}/3.5``.

    Parameters
    ----------
    M : int
        KV capacity; a perfect square ``>= 4`` (so ``s = √M − 1 >= 1``).
    Y : int, optional
        Number of type-2 requests; default ``round(M ** exponent)``.
    exponent : float
        Used when ``Y`` is omitted.

    Raises
    ------
    ValueError
        ``M`` not a perfect square ``>= 4``, or ``Y < 0``.
    """
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)) or M < 4 or math.isqrt(int(M)) ** 2 != M:
        raise ValueError(f"M must be a perfect square >= 4 (type-1 prompts are √M − 1 >= 1), got {M!r}")
    M = int(M)
    root = math.isqrt(M)
    if Y is None:
        Y = round(M ** exponent)
    if isinstance(Y, bool) or not isinstance(Y, (int, np.integer)) or Y < 0:
        raise ValueError(f"Y must be an integer >= 0, got {Y!r}")
    reqs = [Request(f"t1-{i}", 0, root - 1, 1) for i in range(M)]
    reqs += [Request(f"t2-{j}", 0, 1, 2) for j in range(int(Y))]
    return Instance(M, tuple(reqs), name=f"wang-theorem1/M={M} Y={int(Y)}")
