"""Sorted-F (Wang, Ye, Zhou, "W", §3 Algorithm 1) and its Phase-1 batch selectors (W §5, Algorithms 2–5).

Sorted-F schedules requests in two phases (DIGEST §2.8):

* **Phase 1** builds an order: repeatedly pick the batch ``X*`` of the remaining requests
  with the smallest F-metric ``F(X) = Σ_{i∈X} o_i / |X|²`` among the batches that fit in
  memory, sort it by ``o`` and append it (:func:`plan_sorted_f`);
* **Phase 2** executes that order with the prefix-greedy rule and the look-ahead check (5):
  admit requests in the planned order while they fit, stop at the first misfit
  (:class:`PlannedOrderPolicy`).

The batch problem of Phase 1 is solved by one of the selectors in :data:`PHASE1`:

==================== =========================== =========================================
name                 paper                       what it returns
==================== =========================== =========================================
``"dp"``             W §5.1, Algorithm 2         the exact argmin (for the surrogate)
``"scaled-dp"``      W §5.2, Algorithm 3         the argmin on floored weights, repaired
``"swap"``           W §5.3, Algorithm 4         a local optimum of pairwise swaps
``"quantile"``       W §5.4, Algorithm 5         a two-pass quantile greedy
``"brute-force"``    —                           enumeration of all subsets (``n <= 16``)
==================== =========================== =========================================

The memory constraint (DIGEST I-24). W Algorithm 1 states the batch constraint as
``M(X, p_i + o_i) <= M`` for every ``i ∈ X``; all of ``X`` starts together, so it reads
``Σ_{i∈X, o_i >= o_j} (s_i + o_j) <= M`` for every ``j ∈ X``. Every solver of W (Algorithms
2–5 and 7) uses instead the stricter **surrogate** ``Σ_{i∈X} (s_i + o_i) <= M`` (every
request at its peak at once), and so does every selector here; "exact DP" is exact for
the surrogate. :func:`select_brute_force` with ``exact_constraint=True`` solves the true
constraint, for tiny instances.

Tie rule (DIGEST I-23), used by every exact selector: minimise ``F``, then maximise
``|X|`` (Algorithm 1's lexicographic ``(F, −|X|)``; Algorithm 2's strict ``<`` over
ascending ``k`` would keep the smaller batch), then minimise the memory ``Σ(s+o)``, then
take the lexicographically smallest sorted tuple of indices. ``F`` is compared exactly in
integers (``a/k² < a'/k'²`` iff ``a·k'² < a'·k²``).

Indices. Every selector takes ``prompts`` and ``outputs`` (equal-length integer
sequences) and returns the selected indices into them, as a sorted tuple. Index order
breaks every remaining tie, so callers that want "ties by instance position" pass the
requests in position order (the policies here do).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from llmopt.engine.discrete import Decision, RequestView
from llmopt.policies import LookaheadPrefixPolicy

__all__ = [
    "f_metric",
    "greedy_fill",
    "select_exact_dp",
    "select_brute_force",
    "select_scaled_dp",
    "scaled_dp",
    "ScaledDP",
    "select_local_swap",
    "select_quantile",
    "PHASE1",
    "DP_MAX_CELLS",
    "BRUTE_FORCE_MAX_N",
    "plan_sorted_f",
    "PlannedOrderPolicy",
    "SortedF",
    "SortedFDP",
    "SortedFScaledDP",
    "SortedFSwap",
    "SortedFQuantile",
]

IntArray = npt.NDArray[np.int64]
IntLike = Sequence[int] | npt.NDArray[np.integer[Any]]

#: Largest DP table (cells ``Σ_items (k-range) × (capacity + 1)``) :func:`select_exact_dp` and
#: :func:`select_scaled_dp` accept by default; the back-pointer bits take ``cells / 8`` bytes.
DP_MAX_CELLS = 2_000_000_000

#: Largest ``n`` :func:`select_brute_force` enumerates (``2^n`` subsets).
BRUTE_FORCE_MAX_N = 16

_INF = np.int64(2**62)


# --- helpers ---------------------------------------------------------------------------------


def f_metric(outputs: IntLike) -> Fraction:
    """The F-metric ``F(X) = Σ_{i∈X} o_i / |X|²`` of a batch (W §3), as an exact fraction.

    Parameters
    ----------
    outputs : sequence of int
        Output lengths ``o_i`` of the requests in the batch.

    Returns
    -------
    Fraction

    Raises
    ------
    ValueError
        If the batch is empty (``F`` is undefined).
    """
    values = [int(v) for v in outputs]
    if not values:
        raise ValueError("f_metric: the F-metric of an empty batch is undefined")
    return Fraction(sum(values), len(values) ** 2)


def _validate(prompts: IntLike, outputs: IntLike, M: int, where: str) -> tuple[IntArray, IntArray, IntArray]:
    """Integer arrays ``s, o, w = s + o``; raise a clear error on bad input or a request with ``s + o > M``."""
    s = np.asarray(prompts)
    o = np.asarray(outputs)
    if s.ndim != 1 or o.ndim != 1 or s.shape != o.shape:
        raise ValueError(f"{where}: prompts and outputs must be 1-D sequences of the same length, "
                         f"got shapes {s.shape} and {o.shape}")
    if s.size == 0:
        raise ValueError(f"{where}: no requests to select from")
    if not (np.issubdtype(s.dtype, np.integer) and np.issubdtype(o.dtype, np.integer)):
        raise ValueError(f"{where}: prompts and outputs must be integers")
    s = s.astype(np.int64)
    o = o.astype(np.int64)
    bad = np.flatnonzero((s < 1) | (o < 1))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{where}: request at index {i} has prompt {s[i]} and output {o[i]}; both must be >= 1")
    w = s + o
    too_big = np.flatnonzero(w > M)
    if too_big.size:
        i = int(too_big[0])
        raise ValueError(f"{where}: request at index {i} has s + o = {s[i]} + {o[i]} = {w[i]} > M = {M}; "
                         "it fits in no batch (and can never run)")
    return s, o, w


def _better(a: int, k: int, a2: int, k2: int) -> bool:
    """Whether ``(a/k², −k)`` is lexicographically smaller than ``(a2/k2², −k2)`` (exact integers)."""
    lhs, rhs = a * k2 * k2, a2 * k * k
    return lhs < rhs or (lhs == rhs and k > k2)


def greedy_fill(weights: IntArray, cap: int) -> IntArray:
    """Skip-and-continue greedy: walk ``weights`` in order and take each one that still fits.

    Returns the positions taken (ascending). Vectorised by runs: from the next position
    that fits, take the longest run whose cumulative weight fits, then skip ahead; the loop
    runs once per maximal run, at most ``1 +`` the number of taken items.
    """
    taken: list[IntArray] = []
    pos, n, slack = 0, len(weights), int(cap)
    while pos < n:
        fit = np.flatnonzero(weights[pos:] <= slack)
        if fit.size == 0:
            break
        j = pos + int(fit[0])
        cs = np.cumsum(weights[j:])
        run = int(np.searchsorted(cs, slack, side="right"))  # >= 1 since weights[j] <= slack
        taken.append(np.arange(j, j + run))
        slack -= int(cs[run - 1])
        pos = j + run
    return np.concatenate(taken) if taken else np.zeros(0, dtype=np.int64)




# --- exact dynamic programme -----------------------------------------------------------------


def _dp_select(w: IntArray, o: IntArray, cap: int, max_cells: float, where: str) -> tuple[int, ...]:
    """The DP core shared by the exact and the scaled DP: argmin of ``(F, −|X|, Σw, sorted ids)``
    over the subsets with ``Σ_{i∈X} w_i <= cap`` (``w`` may contain zeros).

    See :func:`select_exact_dp` for the recurrence, the proof and the cost.
    """
    n = len(w)
    order = np.sort(w)
    kmax = int(np.searchsorted(np.cumsum(order), cap, side="right"))  # largest k that fits at all
    if kmax == 0:
        raise ValueError(f"{where}: no single request fits the capacity {cap}")
    cells = sum(min(kmax, n - i) for i in range(n)) * (cap + 1)
    if cells > max_cells:
        raise ValueError(
            f"{where}: the DP table would have {cells:.3g} cells (n = {n}, k <= {kmax}, capacity {cap}), "
            f"above max_cells = {max_cells:.3g}; use a coarser scale (scaled DP) or the local swap or "
            "quantile selectors, or raise max_cells"
        )
    dp = np.full((kmax + 1, cap + 1), _INF, dtype=np.int64)
    dp[0, 0] = 0
    take_bits: list[npt.NDArray[np.uint8] | None] = [None] * n
    for i in range(n - 1, -1, -1):  # suffix DP: after item i, dp = tables over items i..n-1
        wi, oi = int(w[i]), int(o[i])
        kk = min(kmax, n - i)  # at most n − i items in the suffix
        width = cap + 1 - wi
        cand = dp[:kk, :width] + oi  # take i: dp_{i+1}[k−1][m−w_i] + o_i
        target = dp[1 : kk + 1, wi:]  # skip i: dp_{i+1}[k][m] (a view, updated in place)
        take = cand <= target  # ties: take i (smaller indices first → lexicographically smallest)
        np.minimum(target, cand, out=target)
        take_bits[i] = np.packbits(take, axis=1)
    # argmin over (k, m) of (dp[k][m]/k², −k, m)
    best: tuple[int, int, int] | None = None  # (a, k, m)
    for k in range(1, kmax + 1):
        row = dp[k]
        m = int(np.argmin(row))  # first minimum: the smallest memory among this k's best
        a = int(row[m])
        if a >= _INF:
            continue
        if best is None or _better(a, k, best[0], best[1]):
            best = (a, k, m)
    assert best is not None
    _, k, m = best
    chosen: list[int] = []
    for i in range(n):  # take i whenever an optimal completion contains it: lexicographically smallest
        if k == 0:
            break
        wi = int(w[i])
        bits = take_bits[i]
        assert bits is not None
        if k - 1 < bits.shape[0] and m >= wi and (bits[k - 1, (m - wi) >> 3] >> (7 - ((m - wi) & 7))) & 1:
            chosen.append(i)
            k -= 1
            m -= wi
    assert k == 0 and m == 0, "DP reconstruction did not end at the empty state"
    return tuple(chosen)


def select_exact_dp(prompts: IntLike, outputs: IntLike, M: int, *, max_cells: float = DP_MAX_CELLS) -> tuple[int, ...]:
    """Exact Phase-1 batch by dynamic programming (W §5.1, Algorithm 2), for the surrogate constraint.

    Returns the batch ``X`` minimising ``(F(X), −|X|, Σ_{i∈X}(s_i+o_i), sorted(X))``
    lexicographically over all nonempty ``X`` with ``Σ_{i∈X} (s_i + o_i) <= M`` (the
    surrogate of W's solvers, module docstring; the true batch constraint of Algorithm 1
    is looser — :func:`select_brute_force` with ``exact_constraint=True``).

    Parameters
    ----------
    prompts, outputs : sequence of int
        ``s_i >= 1`` and ``o_i >= 1``, equal length.
    M : int
        Memory limit.
    max_cells : float
        Refuse (``ValueError``) when the table would exceed this many cells.

    Returns
    -------
    tuple of int
        Sorted indices of the batch.

    Raises
    ------
    ValueError
        On empty or invalid input, a request with ``s + o > M``, or a table above ``max_cells``.

    Notes
    -----
    **Recurrence.** With ``w_i = s_i + o_i`` and the items taken as a *suffix*
    ``i, …, n−1``, let ``D_i[k][m]`` be the least ``Σ o`` over the ``k``-subsets of the
    suffix whose weight is **exactly** ``m`` (``∞`` if none), ``0 <= m <= M``. Then
    ``D_n[0][0] = 0``, ``D_n = ∞`` elsewhere, and
    ``D_i[k][m] = min(D_{i+1}[k][m], D_{i+1}[k−1][m−w_i] + o_i)`` (skip or take item ``i``;
    each item once, since ``D_i`` reads only ``D_{i+1}``). The update is vectorised with
    numpy over all ``(k, m)`` of one item.

    **Why the argmin over the table is the tie rule.** Every feasible ``X`` with
    ``|X| = k`` and weight ``m`` has ``Σo >= D_0[k][m]``, which some such ``X`` attains, so
    the least key ``(Σo/k², −k, m)`` over feasible subsets equals the least key
    ``(D_0[k][m]/k², −k, m)`` over the finite cells ``m <= M``. For each ``k`` the best cell
    is the smallest ``m`` with the row minimum (``F`` is ``D/k²`` with ``k`` fixed), and
    the rows are compared exactly in integers. (With "weight ``<= m``" cells the table's
    last column would give ``F`` directly, but the memory tie-break needs exact weights.)

    **Reconstruction.** A bit ``take_i[k][m]`` records whether
    ``D_{i+1}[k−1][m−w_i] + o_i <= D_{i+1}[k][m]``, i.e. whether some optimal subset for
    ``D_i[k][m]`` contains item ``i``. Walking ``i = 0, 1, …`` from the chosen cell and
    taking ``i`` whenever its bit is set keeps the value optimal at every step and picks
    the smallest possible next index each time: it returns the lexicographically smallest
    sorted index tuple among the optimal subsets of that cell. The bits are stored packed
    (``np.packbits``), so no sets are stored.

    **Cost.** Time and bits ``O(n · k_max · M)``, where ``k_max <= n`` is the largest
    number of requests whose weights fit together (the "``O(n²M)``" of W Table 3);
    memory ``O(k_max · M)`` integers plus ``n · k_max · M / 8`` bytes of bits.
    ``k_max`` is found by sorting the weights, and item ``i`` (suffix length ``n − i``)
    only updates ``k <= n − i``. Measured in ``benchmarks/sorted_f_speed.py``.
    """
    _, o, w = _validate(prompts, outputs, M, "select_exact_dp")
    return _dp_select(w, o, int(M), max_cells, "select_exact_dp")


# --- brute force -----------------------------------------------------------------------------


def select_brute_force(
    prompts: IntLike, outputs: IntLike, M: int, *, exact_constraint: bool = False
) -> tuple[int, ...]:
    """The Phase-1 argmin by enumerating all ``2^n − 1`` nonempty subsets (``n <= 16``).

    Parameters
    ----------
    prompts, outputs : sequence of int
    M : int
    exact_constraint : bool
        ``False``: the surrogate ``Σ_{i∈X}(s_i+o_i) <= M`` (then the result equals
        :func:`select_exact_dp`'s). ``True``: W Algorithm 1's true constraint: all of ``X``
        start together, so ``X`` fits iff ``Σ_{i∈X, o_i >= o_j} (s_i + o_j) <= M`` for every
        ``j ∈ X`` (the memory at ``X``'s completion times, where it peaks; DESIGN §1).

    Returns
    -------
    tuple of int
        Sorted indices; same tie rule as :func:`select_exact_dp` (``F``, then larger
        ``|X|``, then smaller ``Σ(s+o)``, then the lexicographically smallest sorted tuple).

    Raises
    ------
    ValueError
        If ``n > 16`` (:data:`BRUTE_FORCE_MAX_N`), or on invalid input.
    """
    s, o, w = _validate(prompts, outputs, M, "select_brute_force")
    n = len(s)
    if n > BRUTE_FORCE_MAX_N:
        raise ValueError(f"select_brute_force: n = {n} > {BRUTE_FORCE_MAX_N} requests (2^n subsets); "
                         "use select_exact_dp")
    masks = np.arange(1, 1 << n, dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(n)) & 1).astype(np.int64)  # (2^n − 1) × n
    size = bits.sum(axis=1)
    total_o = bits @ o
    memory = bits @ w
    if exact_constraint:
        ok = np.ones(len(masks), dtype=bool)
        for j in range(n):
            ge = (o >= o[j]).astype(np.int64)
            peak = bits @ (ge * s) + o[j] * (bits @ ge)  # memory at X's time p + o_j, if j ∈ X
            ok &= (bits[:, j] == 0) | (peak <= M)
    else:
        ok = memory <= M
    best: tuple[int, int] | None = None  # (Σo, k)
    for k in range(1, n + 1):
        sel = ok & (size == k)
        if sel.any():
            a = int(total_o[sel].min())
            if best is None or _better(a, k, best[0], best[1]):
                best = (a, k)
    assert best is not None  # every single request fits either constraint (s + o <= M)
    a, k = best
    sel = ok & (size == k) & (total_o == a)
    sel &= memory == memory[sel].min()
    tuples = [tuple(int(i) for i in np.flatnonzero(row)) for row in bits[sel]]
    return min(tuples)


# --- scaled dynamic programme -----------------------------------------------------------------


@dataclass(frozen=True)
class ScaledDP:
    """What :func:`scaled_dp` found.

    Attributes
    ----------
    batch : tuple of int
        The returned batch (sorted indices); always surrogate-feasible.
    raw : tuple of int
        The DP's argmin on the floored weights, before the repair.
    lam : Fraction
        The scale ``λ = max(1, εM/B)``.
    dropped : tuple of int
        Indices the repair removed (in removal order); empty when ``raw`` fitted.
    """

    batch: tuple[int, ...]
    raw: tuple[int, ...]
    lam: Fraction
    dropped: tuple[int, ...]


def scaled_dp(
    prompts: IntLike, outputs: IntLike, M: int, *, eps: float = 0.1, B: int | None = None,
    max_cells: float = DP_MAX_CELLS,
) -> ScaledDP:
    """Scaled DP (W §5.2, Algorithm 3) with the feasibility repair; see :func:`select_scaled_dp`."""
    _, o, w = _validate(prompts, outputs, M, "select_scaled_dp")
    n = len(w)
    if not eps > 0:
        raise ValueError(f"select_scaled_dp: eps must be > 0, got {eps}")
    b = n if B is None else int(B)
    if b < 1:
        raise ValueError(f"select_scaled_dp: B must be >= 1, got {B}")
    lam = max(Fraction(1), Fraction(repr(float(eps))) * int(M) / b)  # ε as written (0.1 is 1/10)
    num, den = lam.numerator, lam.denominator
    cap = int(M) * den // num  # ⌊M/λ⌋, exact (Python integers)
    w_hat = np.array([int(x) * den // num for x in w.tolist()], dtype=np.int64)  # ⌊w_i/λ⌋
    raw = _dp_select(w_hat, o, cap, max_cells, "select_scaled_dp")
    batch = list(raw)
    mem = int(w[batch].sum())
    dropped: list[int] = []
    # repair: drop the largest s+o first (then the larger o, then the larger index) until it fits
    for i in sorted(raw, key=lambda i: (-int(w[i]), -int(o[i]), -i)):
        if mem <= M:
            break
        batch.remove(i)
        dropped.append(i)
        mem -= int(w[i])
    return ScaledDP(tuple(batch), raw, lam, tuple(dropped))


def select_scaled_dp(
    prompts: IntLike, outputs: IntLike, M: int, *, eps: float = 0.1, B: int | None = None,
    max_cells: float = DP_MAX_CELLS,
) -> tuple[int, ...]:
    """Phase-1 batch by the scaled DP (W §5.2, Algorithm 3), repaired to fit the surrogate.

    With ``λ = max(1, εM/B)`` (Algorithm 3's line 1; the text drops the ``max``, DIGEST
    I-26), the DP of :func:`select_exact_dp` runs on the floored weights
    ``ŵ_i = ⌊(s_i+o_i)/λ⌋`` and capacity ``M̂ = ⌊M/λ⌋`` (same tie rule, with the scaled
    memory ``Σŵ`` as the memory tie-break). ``λ`` is an exact fraction, so the floors are
    exact.

    Parameters
    ----------
    prompts, outputs : sequence of int
    M : int
    eps : float
        Precision ``ε > 0`` (W gives no value; default 0.1).
    B : int, optional
        W's precision parameter; default ``n``, the number of requests passed in (in
        :func:`plan_sorted_f`, the requests still unplanned).
    max_cells : float
        Table-size guard, as in :func:`select_exact_dp`.

    Returns
    -------
    tuple of int
        Sorted indices; the batch always satisfies ``Σ(s_i+o_i) <= M``.

    Notes
    -----
    **Flooring is optimistic.** Every truly feasible ``X`` has
    ``Σŵ <= Σw/λ <= M/λ``, hence ``Σŵ <= M̂`` (an integer): the scaled problem is a
    relaxation, so its argmin has ``F <= F*`` (the exact DP's value) — but it may violate
    the true surrogate (DIGEST I-26). It is therefore re-checked and **repaired**: the
    requests with the largest ``s+o`` (ties: larger ``o``, then larger index) are dropped
    until it fits (a single request always fits, so the result is nonempty). Consequences
    (tested):

    * when no repair is needed the result has ``F = F*`` exactly (``F <= F*`` as a
      relaxation optimum, ``F >= F*`` as a feasible batch);
    * with ``λ = 1`` (``εM <= B``) it *is* the exact DP, tie rule included;
    * after a repair only ``F >= F*`` is guaranteed. The paper's ``F <= (1+ε)F*`` is not a
      theorem for the floored DP (the repair can cost more than ``ε``); W proves no bound.

    **Cost.** ``O(n · k_max · M̂)`` with ``M̂ = ⌊M/λ⌋ = ⌊B/ε⌋`` when ``λ > 1``: W Table 3's
    ``O(nB/ε)`` omits the factor ``k_max <= n`` of the cardinality dimension.
    """
    return scaled_dp(prompts, outputs, M, eps=eps, B=B, max_cells=max_cells).batch


# --- local swap search -----------------------------------------------------------------------


def _permutation(order: IntLike, n: int, what: str) -> IntArray:
    arr = np.asarray(order)
    if arr.ndim != 1 or len(arr) != n or not np.issubdtype(arr.dtype, np.integer) or \
            not np.array_equal(np.sort(arr), np.arange(n)):
        raise ValueError(f"select_local_swap: {what} must be a permutation of range({n})")
    return arr.astype(np.int64)


def select_local_swap(
    prompts: IntLike, outputs: IntLike, M: int, *, initial: IntLike | None = None, order: IntLike | None = None
) -> tuple[int, ...]:
    """Phase-1 batch by local swap search (W §5.3, Algorithm 4).

    Start from ``initial`` (default: the skip-and-continue greedy over the requests sorted
    by ``s_i + o_i`` ascending, ties by index — Algorithm 4 lines 1–8), then repeat
    first-improvement swaps until none exists: scan ``r_out`` over ``X`` in insertion order
    and, for the first ``r_out`` that has one, swap in the first ``r_in ∉ X`` in the
    candidate ``order`` (default: the same ``s+o`` order) with ``o_in < o_out`` and
    ``mem − w_out + w_in <= M``; ``r_in`` joins ``X`` last in insertion order. Since ``|X|``
    never changes, ``F(X') < F(X)`` iff ``o_in < o_out`` — the exact form of line 21's
    comparison. Every swap lowers ``Σo`` by at least 1, so the search terminates, at a
    local optimum: no pair ``(r_out, r_in)`` is an improving feasible swap.

    Parameters
    ----------
    prompts, outputs : sequence of int
    M : int
    initial : sequence of int, optional
        A starting batch (distinct indices, nonempty, ``Σ(s+o) <= M``), in the insertion
        order to use. LP-Swap (W Algorithm 7) passes its LP-ordered greedy batch.
    order : sequence of int, optional
        The candidate order for ``r_in``: a permutation of ``range(n)``. LP-Swap passes the
        LP order.

    Returns
    -------
    tuple of int
        Sorted indices of the local optimum.

    Notes
    -----
    The search is Algorithm 4 step for step (same swaps, same order), vectorised: with the
    requests outside ``X`` sorted by ``o``, the prefix minimum of their weights tells for
    every ``r_out`` at once whether an improving swap exists (the lightest outside request
    with ``o_in < o_out`` fits iff any does), and one masked ``argmax`` over the candidate
    order finds the literal first ``r_in``. Each swap costs ``O(n)`` numpy work instead of
    the literal ``O(|X|·n)`` Python steps.
    """
    _, o, w = _validate(prompts, outputs, M, "select_local_swap")
    n = len(o)
    idx = np.arange(n)
    by_w = np.lexsort((idx, w))
    cand = by_w if order is None else _permutation(order, n, "order")
    if initial is None:
        X = [int(i) for i in by_w[greedy_fill(w[by_w], int(M))]]
    else:
        X = [int(i) for i in np.asarray(initial, dtype=np.int64).ravel()]
        if not X or len(set(X)) != len(X) or min(X) < 0 or max(X) >= n:
            raise ValueError("select_local_swap: initial must be a nonempty sequence of distinct indices "
                             f"in range({n})")
        if int(w[X].sum()) > M:
            raise ValueError(f"select_local_swap: the initial batch has Σ(s+o) = {int(w[X].sum())} > M = {M}")
    inside = np.zeros(n, dtype=bool)
    inside[X] = True
    mem = int(w[X].sum())
    by_o = np.lexsort((idx, o))
    o_sorted = o[by_o]
    w_by_o = w[by_o]
    o_cand, w_cand = o[cand], w[cand]
    big = np.int64(2**62)
    while True:
        slack = int(M) - mem
        pm = np.minimum.accumulate(np.where(inside[by_o], big, w_by_o))  # lightest outside, by o
        Xa = np.asarray(X, dtype=np.int64)
        below = np.searchsorted(o_sorted, o[Xa], side="left")  # outside requests with o_in < o_out: pm[below−1]
        lightest = np.where(below > 0, pm[np.maximum(below - 1, 0)], big)
        ok = lightest <= slack + w[Xa]
        if not ok.any():
            return tuple(sorted(X))
        j = int(np.argmax(ok))
        r_out = X[j]
        mask = (~inside[cand]) & (o_cand < o[r_out]) & (w_cand <= slack + w[r_out])
        first = int(np.argmax(mask))
        assert mask[first], "local swap: the prefix-minimum test and the candidate scan disagree"
        r_in = int(cand[first])
        inside[r_out], inside[r_in] = False, True
        del X[j]
        X.append(r_in)
        mem += int(w[r_in]) - int(w[r_out])


# --- quantile greedy -------------------------------------------------------------------------


def _ratio_order(o: IntArray, w: IntArray, items: IntArray) -> IntArray:
    """``items`` sorted by ``o_i / w_i`` ascending, ties by index, compared exactly.

    With every ``w <= 2^26`` the float quotients are ordered exactly: two distinct fractions
    with such denominators differ by at least ``1/(w·w') >= 2^-52``, more than the two
    roundings (each at most half an ulp, ``<= 2^-54`` below 1) can close. Larger weights
    fall back to :class:`fractions.Fraction` keys.
    """
    if items.size == 0:
        return items
    if int(w[items].max()) <= 2**26:
        return items[np.lexsort((items, o[items] / w[items]))]
    return np.array(sorted(items.tolist(), key=lambda i: (Fraction(int(o[i]), int(w[i])), i)), dtype=np.int64)


def select_quantile(
    prompts: IntLike, outputs: IntLike, M: int, *, seed: int | np.random.Generator = 0,
    sample_fraction: float = 0.5, q: float = 0.3,
) -> tuple[int, ...]:
    """Phase-1 batch by quantile greedy (W §5.4, Algorithm 5).

    1. Draw a uniform sample of ``max(1, ⌊sample_fraction·n⌋)`` requests without
       replacement (``numpy.random.Generator.choice``) and take the ``q``-quantiles
       ``Q_p`` of their ``s+o`` and ``Q_o`` of their ``o`` (numpy's ``'linear'`` method;
       W does not name one).
    2. Walk all requests by ``o`` ascending (ties by index) and take each with
       ``s+o <= Q_p``, ``o <= Q_o`` that still fits (skip-and-continue).
    3. Walk the rest by ``o/(s+o)`` ascending (ties by index; compared exactly) and take each
       that still fits.

    Parameters
    ----------
    prompts, outputs : sequence of int
    M : int
    seed : int or numpy.random.Generator
        An int seeds a fresh ``numpy.random.default_rng``; a Generator is used (and
        advanced) as is — :func:`plan_sorted_f` passes one Generator through all rounds.
    sample_fraction, q : float
        W's constants 0.5 and 0.3.

    Returns
    -------
    tuple of int
        Sorted indices; ``Σ(s+o) <= M`` always (every step checks the memory).
    """
    _, o, w = _validate(prompts, outputs, M, "select_quantile")
    n = len(o)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    size = max(1, int(np.floor(sample_fraction * n)))
    sample = rng.choice(n, size=min(size, n), replace=False)
    q_p = float(np.quantile(w[sample], q, method="linear"))
    q_o = float(np.quantile(o[sample], q, method="linear"))
    by_o = np.lexsort((np.arange(n), o))
    core = by_o[(w[by_o] <= q_p) & (o[by_o] <= q_o)]
    first = core[greedy_fill(w[core], int(M))]
    mem = int(w[first].sum())
    inside = np.zeros(n, dtype=bool)
    inside[first] = True
    rest = _ratio_order(o, w, np.flatnonzero(~inside))
    second = rest[greedy_fill(w[rest], int(M) - mem)]
    return tuple(sorted(int(i) for i in np.concatenate([first, second])))


#: Phase-1 selectors by name (registry-free; :func:`plan_sorted_f` looks them up here).
PHASE1: dict[str, Callable[..., tuple[int, ...]]] = {
    "dp": select_exact_dp,
    "scaled-dp": select_scaled_dp,
    "swap": select_local_swap,
    "quantile": select_quantile,
    "brute-force": select_brute_force,
}


# --- Phase 1: the order ----------------------------------------------------------------------


def plan_sorted_f(prompts: IntLike, outputs: IntLike, M: int, phase1: str = "swap", **params: Any) -> list[int]:
    """Sorted-F Phase 1 (W Algorithm 1): the planned order of all requests.

    Repeatedly select ``X*`` from the requests not yet planned with ``PHASE1[phase1]``,
    append it sorted by ``o`` ascending (ties by index) and remove it, until none is left.

    Parameters
    ----------
    prompts, outputs : sequence of int
        ``s_i``, ``o_i`` of the requests (index order breaks ties).
    M : int
        Memory limit.
    phase1 : str
        A key of :data:`PHASE1`.
    **params
        Passed to the selector at every round (e.g. ``eps``, ``B`` for ``"scaled-dp"``;
        ``seed`` for ``"quantile"``, which is turned into one Generator used through all
        rounds, so the plan is deterministic per seed).

    Returns
    -------
    list of int
        A permutation of ``range(n)``; empty for no requests.

    Notes
    -----
    Each round costs the selector's time on the remaining requests plus ``O(n)`` numpy
    work (no per-request Python loop), and each round plans at least one request.
    """
    if phase1 not in PHASE1:
        raise ValueError(f"plan_sorted_f: unknown phase1 {phase1!r}; known: {', '.join(PHASE1)}")
    s = np.asarray(prompts)
    o = np.asarray(outputs)
    if s.size == 0 and o.size == 0:
        return []
    s, o, _ = _validate(s, o, M, "plan_sorted_f")
    select = PHASE1[phase1]
    if phase1 == "quantile":
        params = dict(params)
        params["seed"] = np.random.default_rng(params.get("seed", 0))
    alive = np.ones(len(s), dtype=bool)
    rest = np.arange(len(s))
    pieces: list[IntArray] = []
    while rest.size:
        local = np.asarray(select(s[rest], o[rest], M, **params), dtype=np.int64)
        if local.size == 0:
            raise RuntimeError(f"plan_sorted_f: phase-1 selector {phase1!r} returned an empty batch")
        batch = rest[local]
        pieces.append(batch[np.lexsort((batch, o[batch]))])
        alive[batch] = False
        rest = np.flatnonzero(alive)
    return [int(i) for i in np.concatenate(pieces)]


# --- Phase 2: the policies -------------------------------------------------------------------


class PlannedOrderPolicy(LookaheadPrefixPolicy):
    """Prefix greedy with the look-ahead check (5) over a planned order (W Algorithm 1, Phase 2).

    A subclass writes one method, :meth:`plan`: given the waiting requests (in position
    order) and ``M``, return them in the order to admit. At each :meth:`decide` the policy
    admits the requests in that order while check (5) holds and stops at the first misfit,
    asking to be woken when it will fit (everything of :class:`LookaheadPrefixPolicy`).

    Re-planning. W has every request at ``t = 0``: it plans once, then executes. Here
    arrivals are buffered and, at the first :meth:`decide` after one or more arrivals, the
    policy re-plans over **all** waiting (not running) requests and rebuilds its queue so
    that the priority is the rank in the new plan. With all arrivals at 0 this is exactly
    the paper (one plan, at ``t = 0``); with online arrivals it re-plans at every arrival
    epoch, which costs one :meth:`plan` call on the whole queue plus ``O(queue)`` per epoch
    (not per step: between arrivals only the heap and the look-ahead profile work). The
    attribute :attr:`plans` counts the :meth:`plan` calls of the current run.

    These policies never evict; if a subclass does, :meth:`requeue` returns the request to
    the waiting set and the next :meth:`decide` re-plans.
    """

    name = "planned-order"

    def plan(self, requests: list[RequestView], M: int) -> list[RequestView]:
        """The order in which to admit ``requests`` (all waiting, sorted by position).

        Must return a permutation of ``requests``.
        """
        raise NotImplementedError

    def reset(self, M: int) -> None:
        super().reset(M)
        self._waiting: dict[str, RequestView] = {}
        self._rank: dict[str, int] = {}
        self._stale = False
        self.plans = 0

    def key(self, request: RequestView) -> int:
        """Rank of ``request`` in the latest plan."""
        return self._rank[request.id]

    def on_arrival(self, t: int, request: RequestView) -> None:
        self._waiting[request.id] = request
        self._stale = True

    def requeue(self, request_id: str) -> None:
        request, _ = self.running.pop(request_id)
        self.profile.remove(request_id)
        self._waiting[request_id] = request
        self._stale = True

    def _replan(self) -> None:
        requests = sorted(self._waiting.values(), key=lambda r: r.position)
        order = self.plan(requests, self.M)
        if len(order) != len(requests) or {r.id for r in order} != self._waiting.keys():
            raise RuntimeError(f"policy {self.name!r}: plan() must return a permutation of the "
                               f"{len(requests)} waiting requests, got {len(order)} items")
        self._rank = {r.id: rank for rank, r in enumerate(order)}
        self.queue = [(rank, r.position, r) for rank, r in enumerate(order)]  # sorted, hence a heap
        self.plans += 1
        self._stale = False

    def decide(self, t: int) -> Decision:
        if self._stale:
            self._replan()
        decision = super().decide(t)
        for rid in decision.start:
            del self._waiting[rid]
        return decision


class SortedF(PlannedOrderPolicy):
    """Sorted-F (W §3, Algorithm 1): Phase 1 by F-metric batches, Phase 2 prefix greedy.

    Parameters
    ----------
    phase1 : str
        Phase-1 selector, a key of :data:`PHASE1`: ``"swap"`` (W's "Sorted-F (Swap)",
        default), ``"quantile"`` ("Sorted-F (quantile)"), ``"dp"``, ``"scaled-dp"``,
        ``"brute-force"`` (tiny instances only).
    seed : int
        Seed of the quantile sampler (one Generator per plan); ignored otherwise.
    eps : float
        ``ε`` of the scaled DP; ignored otherwise.
    B : int, optional
        ``B`` of the scaled DP (default: the number of requests being planned).

    Notes
    -----
    The plan sees the waiting requests in position order, so every tie of the selectors
    and of the ``o``-sort inside a batch is broken by instance position. Output lengths
    come from :meth:`output_estimate` (the true ``o_i``: Sorted-F assumes them known).
    """

    name = "sorted-f"

    def __init__(self, phase1: str = "swap", seed: int = 0, eps: float = 0.1, B: int | None = None) -> None:
        if phase1 not in PHASE1:
            raise ValueError(f"{self.name}: unknown phase1 {phase1!r}; known: {', '.join(PHASE1)}")
        self.phase1 = phase1
        self.seed = seed
        self.eps = eps
        self.B = B
        super().__init__()

    def phase1_params(self) -> dict[str, Any]:
        """The keyword arguments :func:`plan_sorted_f` passes to the selector."""
        if self.phase1 == "quantile":
            return {"seed": self.seed}
        if self.phase1 == "scaled-dp":
            return {"eps": self.eps, "B": self.B}
        return {}

    def plan(self, requests: list[RequestView], M: int) -> list[RequestView]:
        prompts = np.fromiter((r.prompt for r in requests), dtype=np.int64, count=len(requests))
        outputs = np.fromiter((self.output_estimate(r) for r in requests), dtype=np.int64, count=len(requests))
        order = plan_sorted_f(prompts, outputs, M, self.phase1, **self.phase1_params())
        return [requests[i] for i in order]


class _FixedPhase1(SortedF):
    """A :class:`SortedF` whose Phase-1 selector is fixed by the class attribute ``fixed_phase1``."""

    fixed_phase1 = "swap"

    def __init__(self, seed: int = 0, eps: float = 0.1, B: int | None = None) -> None:
        super().__init__(self.fixed_phase1, seed=seed, eps=eps, B=B)


class SortedFDP(_FixedPhase1):
    """Sorted-F with the exact DP Phase 1 (W Algorithms 1 + 2); tractable for ``n·k_max·M`` up to ~1e9."""

    name = "sorted-f-dp"
    fixed_phase1 = "dp"


class SortedFScaledDP(_FixedPhase1):
    """Sorted-F with the scaled-DP Phase 1 (W Algorithms 1 + 3), repaired to stay feasible."""

    name = "sorted-f-scaled-dp"
    fixed_phase1 = "scaled-dp"


class SortedFSwap(_FixedPhase1):
    """Sorted-F (Swap): local swap search Phase 1 (W Algorithms 1 + 4)."""

    name = "sorted-f-swap"
    fixed_phase1 = "swap"


class SortedFQuantile(_FixedPhase1):
    """Sorted-F (quantile): quantile greedy Phase 1 (W Algorithms 1 + 5)."""

    name = "sorted-f-quantile"
    fixed_phase1 = "quantile"
