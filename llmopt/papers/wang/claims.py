"""Measurements for W's claims that no suite covers (issue 25, item 2): the scaled DP's ``(1+ε)``
guarantee (W §5.2, Table 3) and "local swap converges in constant iterations" (W §5.3).

* :func:`scaled_dp_ratio` — ``F(scaled DP) / F*`` for one Phase-1 selection, with ``F*`` from the
  exact DP (both under W's surrogate ``Σ(s+o) <= M``, DIGEST I-24), and whether the DP's raw answer
  on floored weights was infeasible (it is then repaired, :func:`llmopt.policies.sorted_f.scaled_dp`);
  :func:`scaled_dp_rounds` does it for every round of Sorted-F's Phase 1.
* :func:`smallest_scaled_dp_counterexample` — exhaustive search, in increasing size, for an
  instance where the repaired scaled DP misses ``F <= (1+ε)F*``.
* :func:`local_swap_with_count` — W Algorithm 4 exactly as
  :func:`llmopt.policies.sorted_f.select_local_swap` runs it (same swaps, same order), plus the
  number of improving swaps; :func:`swap_rounds` runs Sorted-F (Swap)'s Phase 1 with it and
  reports every round's swap count.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from llmopt.policies.sorted_f import f_metric, greedy_fill, scaled_dp, select_exact_dp

__all__ = ["ScaledRatio", "scaled_dp_ratio", "scaled_dp_rounds", "smallest_scaled_dp_counterexample",
           "local_swap_with_count", "SwapRound", "swap_rounds"]

IntArray = npt.NDArray[np.int64]
IntLike = Sequence[int] | npt.NDArray[np.integer[Any]]
T = TypeVar("T")


@dataclass(frozen=True)
class ScaledRatio:
    """One scaled-DP selection against the exact DP.

    Attributes
    ----------
    ratio : Fraction
        ``F(scaled DP, repaired) / F*`` (``>= 1``; W claims ``<= 1 + ε``).
    raw_infeasible : bool
        The DP's argmin on floored weights violated ``Σ(s+o) <= M`` (W's Algorithm 3 would return it).
    lam : Fraction
        ``λ = max(1, εM/B)``.
    batch, exact : tuple of int
        The repaired scaled-DP batch and the exact DP's batch.
    """

    ratio: Fraction
    raw_infeasible: bool
    lam: Fraction
    batch: tuple[int, ...]
    exact: tuple[int, ...]


def scaled_dp_ratio(prompts: IntLike, outputs: IntLike, M: int, *, eps: float, B: int | None = None) -> ScaledRatio:
    """``F`` of the scaled DP (W Algorithm 3, repaired) over the exact optimum ``F*`` (Algorithm 2)."""
    o = [int(v) for v in outputs]
    res = scaled_dp(prompts, outputs, M, eps=eps, B=B)
    exact = select_exact_dp(prompts, outputs, M)
    ratio = f_metric([o[i] for i in res.batch]) / f_metric([o[i] for i in exact])
    return ScaledRatio(ratio, bool(res.dropped), res.lam, res.batch, exact)


def scaled_dp_rounds(prompts: IntLike, outputs: IntLike, M: int, *, eps: float, B: int | None = None
                     ) -> list[ScaledRatio]:
    """Every Phase-1 round of Sorted-F with the scaled DP (W Algorithms 1 + 3): each round's
    :func:`scaled_dp_ratio` on the requests still unplanned, whose scaled-DP batch is then removed
    (the order :func:`~llmopt.policies.sorted_f.plan_sorted_f` builds with ``phase1="scaled-dp"``)."""
    def select(s: IntArray, o: IntArray) -> tuple[Sequence[int], ScaledRatio]:
        r = scaled_dp_ratio(s, o, M, eps=eps, B=B)
        return r.batch, r

    return _phase1_rounds(prompts, outputs, select)


def _phase1_rounds(prompts: IntLike, outputs: IntLike,
                   select: Callable[[IntArray, IntArray], tuple[Sequence[int], T]]) -> list[T]:
    """Phase 1 of Sorted-F round by round: ``select(s, o)`` on the requests still unplanned returns the
    round's batch (indices into them) and what to record; the batch is then removed."""
    s = np.asarray(prompts, dtype=np.int64)
    o = np.asarray(outputs, dtype=np.int64)
    alive = np.ones(len(s), dtype=bool)
    out: list[T] = []
    while alive.any():
        rest = np.flatnonzero(alive)
        batch, record = select(s[rest], o[rest])
        out.append(record)
        alive[rest[list(batch)]] = False
    return out


def _instances(n: int, v_max: int, M: int) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every ``(s, o)`` with ``n`` requests, values ``1..v_max``, ``s + o <= M``, requests sorted (no repeats
    up to permutation)."""
    pairs = [(s, o) for s in range(1, v_max + 1) for o in range(1, v_max + 1) if s + o <= M]
    for combo in itertools.combinations_with_replacement(pairs, n):
        yield tuple(p[0] for p in combo), tuple(p[1] for p in combo)


def smallest_scaled_dp_counterexample(*, eps_values: Sequence[float] = (0.1, 0.25, 0.5, 1.0), n_max: int = 4,
                                      v_max: int = 8, M_max: int = 16) -> dict[str, Any] | None:
    """The first instance, in order of ``(n, M, Σ(s+o))``, where the repaired scaled DP has
    ``F > (1+ε)F*`` for some ``ε`` in ``eps_values`` and ``B ∈ 1..n``.

    Returns ``None`` if there is none in the searched range, else a dict with ``prompts``,
    ``outputs``, ``M``, ``eps``, ``B``, ``ratio``, ``lam``, ``batch`` and ``exact``.
    """
    for n in range(1, n_max + 1):
        for M in range(2, M_max + 1):
            found: list[dict[str, Any]] = []
            for s, o in _instances(n, v_max, M):
                for eps in eps_values:
                    for B in range(1, n + 1):
                        r = scaled_dp_ratio(s, o, M, eps=eps, B=B)
                        if r.ratio > 1 + Fraction(repr(eps)):
                            found.append({"prompts": s, "outputs": o, "M": M, "eps": eps, "B": B,
                                          "ratio": r.ratio, "lam": r.lam, "batch": r.batch, "exact": r.exact})
            if found:
                return min(found, key=lambda d: (sum(d["prompts"]) + sum(d["outputs"]), -d["eps"], d["B"]))
    return None


def local_swap_with_count(prompts: IntLike, outputs: IntLike, M: int, *, initial: IntLike | None = None,
                          order: IntLike | None = None) -> tuple[tuple[int, ...], int]:
    """W Algorithm 4 as :func:`~llmopt.policies.sorted_f.select_local_swap` runs it, and its swap count.

    Same start (skip-and-continue greedy by ``s+o``, or ``initial``), same first-improvement rule
    (``r_out`` over ``X`` in insertion order, the first ``r_in`` in ``order`` with ``o_in < o_out``
    that fits), same local optimum; ``tests/papers/test_wang_claims_lp_hook.py`` checks the batches agree.
    An "iteration" of W's ``while improved`` loop that changes ``X`` is one swap; the last pass,
    which finds none, is not counted.

    Returns
    -------
    (batch, swaps)
        Sorted indices of the local optimum and the number of improving swaps made.
    """
    s = np.asarray(prompts, dtype=np.int64)
    o = np.asarray(outputs, dtype=np.int64)
    w = s + o
    n = len(o)
    idx = np.arange(n)
    by_w = np.lexsort((idx, w))
    cand = by_w if order is None else np.asarray(order, dtype=np.int64)
    X = ([int(i) for i in by_w[greedy_fill(w[by_w], int(M))]] if initial is None
         else [int(i) for i in np.asarray(initial, dtype=np.int64).ravel()])
    inside = np.zeros(n, dtype=bool)
    inside[X] = True
    mem = int(w[X].sum())
    o_cand, w_cand = o[cand], w[cand]
    swaps = 0
    while True:
        slack = int(M) - mem
        for r_out in X:
            mask = (~inside[cand]) & (o_cand < o[r_out]) & (w_cand <= slack + w[r_out])
            if mask.any():
                r_in = int(cand[int(np.argmax(mask))])
                break
        else:
            return tuple(sorted(X)), swaps
        inside[r_out], inside[r_in] = False, True
        X.remove(r_out)
        X.append(r_in)
        mem += int(w[r_in]) - int(w[r_out])
        swaps += 1


@dataclass(frozen=True)
class SwapRound:
    """One Phase-1 round of Sorted-F (Swap): requests left, batch size, improving swaps."""

    remaining: int
    batch: int
    swaps: int


def swap_rounds(prompts: IntLike, outputs: IntLike, M: int) -> list[SwapRound]:
    """Sorted-F (Swap)'s Phase 1 (W Algorithms 1 + 4), round by round, with each round's swap count.

    The batches are :func:`~llmopt.policies.sorted_f.plan_sorted_f`'s with ``phase1="swap"``.
    """
    def select(s: IntArray, o: IntArray) -> tuple[Sequence[int], SwapRound]:
        batch, swaps = local_swap_with_count(s, o, M)
        return batch, SwapRound(int(s.size), len(batch), swaps)

    return _phase1_rounds(prompts, outputs, select)
