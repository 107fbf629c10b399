"""A C §6 workload matched to C's reported token statistics (issue 25, item 4).

C samples 2,000 LMSYS-Chat-1M conversations and reports (§6, L452–459; DIGEST §5.3): "input sizes
range from 1 to 468 tokens, with a mean of 41, median of 11, and variance of 4,961. The output
lengths range from 1 to 883 tokens, with a mean of 85, median of 43, and variance of 9,702". C
publishes the statistics (and a histogram, Figure 4), not the sample. The staged LMSYS files are
word counts of whole conversations, truncated at 256–599 words (``shared/data/SOURCES.md``), and
``chen-lmsys`` matches C's means but not its medians, ranges or variances
(``results/chen/lmsys/sample.md``).

**How the C-like sample is built.**

1. *Marginals* (:func:`c_like_values`): for each field, the ``n = 2,000`` values are the
   quantiles at ``p_i = (i − ½)/n`` of a distribution whose quantile function is piecewise
   **log-linear in the normal score** ``z = Φ⁻¹(p)``, with five knots: C's minimum at
   ``p_1``, ``q₁₀`` at 10 %, C's median at 50 %, ``q₉₅`` at 95 % and C's maximum at ``p_n``;
   the values are rounded to integers. The two free knots ``q₁₀, q₉₅`` are solved
   (:func:`fit_knots`) so that the sample's mean and (population) variance equal C's. The
   fitted knots are stored in :data:`KNOTS`. The result matches **all five** of C's statistics
   per field — minimum, maximum, median exactly; mean and variance within 0.01 % — and is
   the same multiset for every seed (C too had one sample).
2. *Pairing* (:func:`c_like_instance`): the prompts and outputs are paired as in a real LMSYS
   sample: ``chen_lmsys(seed, n=2000)`` (the ``chen-lmsys`` sample of that seed, word counts)
   is ranked per field (ties broken by a seeded random key), and the request of prompt rank
   ``r`` gets the ``r``-th smallest C-like prompt, likewise for outputs. So the joint rank
   structure (e.g. the prompt–output rank correlation) is the real data's and each marginal is
   C-like. Request order is the sample's draw order, and ``n = 200, …, 2,000`` are nested
   prefixes (each a uniformly random subset of the 2,000, C's "random subsets").

Everything else is ``chen-lmsys``'s: all requests at 0 s, ``M = 16,492`` (C states none,
DIGEST I-46), the Llama2-70B cost model, C's prediction specs. Outputs stop at 883 < 1,000, so
C's Exp. 1 interval ``[1, 1000]`` and Exp. 2's ten bins apply unchanged; 883 falls in the bin
``[801, 900]``, so Exp. 2 here has nine occupied bins (``chen-lmsys``: three).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
import scipy.optimize
import scipy.stats

from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.workloads.predictions import apply_prediction_spec

__all__ = [
    "C_STATS",
    "KNOTS",
    "KNOT_P",
    "c_like_instance",
    "c_like_values",
    "fit_knots",
    "sample_stats",
]

#: C §6's sample statistics per field: min, max, mean, median, variance (L452–459).
C_STATS: Mapping[str, Mapping[str, float]] = {
    "prompt": {"min": 1, "max": 468, "mean": 41, "median": 11, "variance": 4961},
    "output": {"min": 1, "max": 883, "mean": 85, "median": 43, "variance": 9702},
}
#: Probabilities of the two free knots of the quantile function.
KNOT_P = (0.10, 0.95)
#: Fitted free knots ``(q₁₀, q₉₅)`` per field for ``n = 2,000`` (:func:`fit_knots`; the tests refit them).
KNOTS: Mapping[str, tuple[float, float]] = {
    "prompt": (1.61236546, 244.203624),
    "output": (21.6652641, 320.338265),
}
#: ``chen_lmsys``'s sample size, C's 2,000 conversations.
SAMPLE = 2000

IntArray = npt.NDArray[np.int64]


def _values(n: int, stats: Mapping[str, float], q10: float, q95: float) -> IntArray:
    p = (np.arange(n) + 0.5) / n
    z = scipy.stats.norm.ppf(p)
    kz = np.array([z[0], scipy.stats.norm.ppf(KNOT_P[0]), 0.0, scipy.stats.norm.ppf(KNOT_P[1]), z[-1]])
    kv = np.log(np.array([stats["min"], q10, stats["median"], q95, stats["max"]], dtype=np.float64))
    v = np.rint(np.exp(np.interp(z, kz, kv)))
    return np.clip(v, stats["min"], stats["max"]).astype(np.int64)


def c_like_values(field: str, n: int = SAMPLE, knots: tuple[float, float] | None = None) -> IntArray:
    """The ``n`` sorted C-like values of ``field`` (``"prompt"`` or ``"output"``), see the module docstring.

    Parameters
    ----------
    field : {"prompt", "output"}
    n : int
        Sample size (the stored :data:`KNOTS` are fitted for ``n = 2,000``).
    knots : (float, float), optional
        ``(q₁₀, q₉₅)``; default :data:`KNOTS` of the field.

    Returns
    -------
    ndarray of int64
        Non-decreasing; first = C's minimum, last = C's maximum.
    """
    if field not in C_STATS:
        raise ValueError(f"field must be 'prompt' or 'output', got {field!r}")
    if isinstance(n, bool) or int(n) != n or n < 3:
        raise ValueError(f"n must be an integer >= 3, got {n!r}")
    q10, q95 = KNOTS[field] if knots is None else knots
    return _values(int(n), C_STATS[field], q10, q95)


def fit_knots(field: str, n: int = SAMPLE) -> tuple[float, float]:
    """Solve ``(q₁₀, q₉₅)`` so that :func:`c_like_values` has C's mean and variance (Nelder–Mead on
    the log knots from a 7 × 7 grid of starts; a few seconds)."""
    stats = C_STATS[field]
    lo, med, hi = math.log(stats["min"]), math.log(stats["median"]), math.log(stats["max"])

    def loss(x: npt.NDArray[np.float64]) -> float:
        q10, q95 = math.exp(x[0]), math.exp(x[1])
        if not (stats["min"] <= q10 < stats["median"] < q95 < stats["max"]):
            return 1e9
        v = _values(n, stats, q10, q95).astype(np.float64)
        return float(((v.mean() - stats["mean"]) / stats["mean"]) ** 2
                     + ((v.var() - stats["variance"]) / stats["variance"]) ** 2)

    best = None
    for a in np.linspace(0.05, 0.95, 7):
        for b in np.linspace(0.05, 0.95, 7):
            x0 = np.array([lo + a * (med - lo), med + b * (hi - med)])
            r = scipy.optimize.minimize(loss, x0, method="Nelder-Mead",
                                        options={"xatol": 1e-9, "fatol": 1e-18, "maxiter": 4000})
            if best is None or r.fun < best.fun:
                best = r
    assert best is not None
    return math.exp(best.x[0]), math.exp(best.x[1])


def sample_stats(values: Sequence[int] | npt.NDArray[np.int64]) -> dict[str, float]:
    """min, max, mean, median and population variance of ``values`` (C's statistics)."""
    v = np.asarray(values, dtype=np.float64)
    return {"min": float(v.min()), "max": float(v.max()), "mean": float(v.mean()),
            "median": float(np.median(v)), "variance": float(v.var())}


def _ranks(values: npt.NDArray[np.int64], rng: np.random.Generator) -> IntArray:
    """Rank of each value (0 = smallest), ties broken by a random key from ``rng``."""
    order = np.lexsort((rng.random(values.size), values))
    ranks = np.empty(values.size, dtype=np.int64)
    ranks[order] = np.arange(values.size)
    return ranks


@functools.lru_cache(maxsize=8)
def _pairs(seed: int) -> tuple[tuple[str, int, int], ...]:
    from llmopt.workloads.chen import chen_lmsys

    base = chen_lmsys(seed, n=SAMPLE)
    rng = np.random.default_rng([seed, 26])
    s = np.array([r.prompt for r in base.requests], dtype=np.int64)
    o = np.array([r.output for r in base.requests], dtype=np.int64)
    ps, os_ = c_like_values("prompt"), c_like_values("output")
    new_s, new_o = ps[_ranks(s, rng)], os_[_ranks(o, rng)]
    return tuple((r.id, int(a), int(b)) for r, a, b in zip(base.requests, new_s, new_o))


def c_like_instance(seed: int, n: int = SAMPLE, predictions: str = "none", M: int = 16492) -> TimedInstance:
    """C §6 with C-like token statistics: the ``chen-lmsys`` sample of ``seed`` with its prompts and
    outputs replaced, rank for rank, by the C-like values (module docstring; needs the trace data).

    Parameters
    ----------
    seed : int
        Seed of the ``chen-lmsys`` sample whose pairing and order are used.
    n : int
        Requests kept: the first ``n`` of the 2,000 (``1 <= n <= 2000``).
    predictions : str
        A prediction spec (:func:`llmopt.workloads.predictions.apply_prediction_spec`), e.g. C's
        ``"shared:lower=1,upper=1000"``.
    M : int
        KV capacity (default 16,492).

    Returns
    -------
    TimedInstance
        All arrivals at 0 s; ids ``c-like-<row>`` (the LMSYS row the pairing came from); name
        ``"chen-c-like/seed=<seed> n=<n>"`` plus ``" M=<M>"`` if not the default and the
        prediction suffix.
    """
    if isinstance(n, bool) or int(n) != n or not 1 <= n <= SAMPLE:
        raise ValueError(f"n must be an integer in [1, {SAMPLE}], got {n!r}")
    reqs = tuple(TimedRequest(f"c-like-{rid.split('-')[-1]}", 0.0, s, o) for rid, s, o in _pairs(int(seed))[:int(n)])
    name = f"chen-c-like/seed={seed} n={n}" + ("" if M == 16492 else f" M={M}")
    return apply_prediction_spec(TimedInstance(M=M, requests=reqs, name=name), predictions, int(seed))
