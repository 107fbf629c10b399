"""LP-based priority policies of Wang–Ye–Zhou (W §6): Sorted-LP (Algorithm 6) and LP-Swap (Algorithm 7).

Both solve W's Relax-LP (8)–(11) — the LP relaxation of the hindsight IP with every request
available now — once per plan, read each request's expected start ``y_i = Σ_t t·x*_{i,t}``
(DIGEST §2.14), and execute W Algorithm 1's Phase 2 (prefix greedy with check (5),
:class:`~llmopt.policies.sorted_f.PlannedOrderPolicy`) over an order derived from ``y``:

* **Sorted-LP**: requests by ``y`` ascending. LP optima are degenerate and ties are common,
  so ``y`` is compared on a 10⁻⁶ grid and ties are broken by ``o_i``, then instance
  position (DIGEST §2.14).
* **LP-Swap**: repeatedly take the remaining requests in that order, fill a batch
  skip-and-continue under W's surrogate ``Σ(s+o) <= M``, improve it by local swaps (W
  Algorithm 4 lines 9–33 from that batch, candidates in ``y`` order), append it sorted by
  ``o`` and remove it (the printed "+ X / − X" is read as ``X*``, DIGEST I-22).

**The LP at scale.** The time-indexed LP is solved by column generation
(:func:`llmopt.solvers.colgen.solve_lp_colgen`), exact over W's whole horizon. With ``bucket=1`` it
is exactly Relax-LP. For large instances (W §7: n = 2,000, M = 16,492, ~5·10⁸ columns) the
``"auto"`` setting aggregates the memory rows over buckets of ``Δ`` consecutive times
(``Σ_{t∈b} mem_t <= Δ·M``), choosing ``Δ`` so that the master has about
:data:`llmopt.solvers.colgen.AUTO_BUCKET_ROWS` memory rows. What this keeps, proved:

* The bucketed LP is a **relaxation** of Relax-LP (every bucket row is a sum of Relax-LP
  rows), so its value is a lower bound on Relax-LP and on OPT, certified by the same
  multipliers (``λ_t = μ_b`` for ``t ∈ b``) that the independent checker re-verifies.
* Its start variables are Relax-LP's, unrestricted (every start of the full horizon is
  priced), so ``y`` is still an expected start over the paper's horizon and ``Δ = 1`` is
  the paper's LP exactly.
* What it does **not** keep is the exact LP optimum, so ``y`` (hence the order) can differ
  from the ``Δ = 1`` solution. ``llmopt/papers/wang/studies/lp_bucket_sensitivity.py`` measures how much
  (order agreement and TEL against ``Δ = 1`` where the exact LP is solvable); the table is in
  ``results/wang/mixed/lp_bucket.md``.

One LP solution is cached per (requests, M, Δ), so Sorted-LP and LP-Swap run on the same
instance in one process share it (no model built twice).

Arrivals over time (not in W, where everything arrives at 0): a plan is made at each arrival
epoch over the waiting requests, and its LP treats them as all available now and ignores the
memory that running requests still hold (Phase 2's check (5) accounts for it when admitting).

Determinism: with ``time_limit`` set, where the LP stops depends on the machine, and so can
the order; without it (the default) the policy is deterministic.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from llmopt.engine.discrete import RequestView, simulate
from llmopt.model.instance import Instance, Request
from llmopt.policies.base import MCSF
from llmopt.policies.sorted_f import PlannedOrderPolicy, greedy_fill, select_local_swap
from llmopt.solvers.colgen import ColGenResult, solve_lp_auto

__all__ = ["SortedLP", "LPSwap", "ExpectedStarts", "lp_expected_starts", "lp_order", "solve_cached"]

#: Expected starts closer than this are a tie (LP round-off).
Y_GRID = 1e-6


@functools.lru_cache(maxsize=4)
def solve_cached(requests: tuple[tuple[str, int, int], ...], M: int, bucket: int | str,
                 time_limit: float | None) -> tuple[ColGenResult, int]:
    """Relax-LP of the requests ``(id, prompt, output)``, all available at time 0, solved once per key.

    The last four solves are kept (:func:`functools.lru_cache`): Sorted-LP and LP-Swap on the same
    requests share one solve. Call ``solve_cached.cache_clear()`` before timing a solve.

    Returns
    -------
    tuple
        ``(the LP result, Δ)`` of :func:`llmopt.solvers.colgen.solve_lp_auto`, started from MC-SF's schedule.
    """
    instance = Instance(M, tuple(Request(rid, 0, s, o) for rid, s, o in requests))
    seed = simulate(instance, MCSF()).starts  # the master's first columns: MC-SF's schedule
    return solve_lp_auto(instance, initial_starts=seed, bucket=bucket, time_limit=time_limit)


def lp_expected_starts(requests: list[RequestView], outputs: list[int], M: int, *, bucket: int | str = "auto",
                       time_limit: float | None = None) -> tuple[np.ndarray, ColGenResult, int]:
    """``y_i`` of Relax-LP (bucketed by ``Δ``) for ``requests``, all taken as available now.

    Returns ``(y in the order of requests, the LP result, Δ)``.

    Raises
    ------
    RuntimeError
        If the LP was not solved (the message says why).
    """
    key = tuple((r.id, r.prompt, o) for r, o in zip(requests, outputs, strict=True))
    res, delta = solve_cached(key, M, bucket, time_limit)
    if not res.expected_start:
        raise RuntimeError(f"Relax-LP not solved: {res.status}: {res.message}")
    return np.array([res.expected_start[r.id] for r in requests]), res, delta


def lp_order(y: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    """Indices sorted by ``(y on the Y_GRID, o, index)``: Sorted-LP's order."""
    grid = np.round(np.asarray(y, dtype=float) / Y_GRID).astype(np.int64)
    return np.lexsort((np.arange(len(grid)), np.asarray(outputs), grid))


#: An LP solution computed elsewhere: ``(requests, outputs, M) -> y`` (one expected start per
#: request, in the order of ``requests``), for :class:`SortedLP` / :class:`LPSwap`'s ``expected_starts``.
ExpectedStarts = Callable[[list[RequestView], list[int], int], np.ndarray]


class _LPPolicy(PlannedOrderPolicy):
    """Shared parameters and LP call of Sorted-LP and LP-Swap."""

    def __init__(self, bucket: int | str = "auto", time_limit: float | None = None,
                 expected_starts: ExpectedStarts | None = None) -> None:
        self.bucket = bucket
        self.time_limit = time_limit
        self.expected_starts = expected_starts
        self.last_lp: ColGenResult | None = None
        self.last_bucket: int | None = None
        super().__init__()

    def _y(self, requests: list[RequestView], M: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        outputs = [self.output_estimate(r) for r in requests]
        if self.expected_starts is not None:
            y = np.asarray(self.expected_starts(requests, outputs, M), dtype=float)
            if y.shape != (len(requests),) or not np.isfinite(y).all():
                raise ValueError(f"{self.name}: expected_starts returned {y.shape} values (finite ones expected, "
                                 f"one per request: {len(requests)})")
            prompts = np.array([r.prompt for r in requests], dtype=np.int64)
            return y, prompts, np.array(outputs, dtype=np.int64)
        y, self.last_lp, self.last_bucket = lp_expected_starts(requests, outputs, M, bucket=self.bucket,
                                                               time_limit=self.time_limit)
        prompts = np.array([r.prompt for r in requests], dtype=np.int64)
        return y, prompts, np.array(outputs, dtype=np.int64)


class SortedLP(_LPPolicy):
    """Sorted-LP (W Algorithm 6): admit by Relax-LP expected start (see the module docstring).

    Parameters
    ----------
    bucket : int or "auto"
        Time aggregation of the LP's memory rows (1 = the paper's LP exactly).
    time_limit : float, optional
        Seconds for the LP; at the limit the master's current solution is used.
    expected_starts : callable, optional
        An LP solution computed elsewhere (issue 25: which optimum of the degenerate LP, which
        horizon): called as ``expected_starts(requests, outputs, M)`` at each plan, it returns
        ``y`` (one value per request, in the order given), which replaces the
        column-generation LP (``bucket`` and ``time_limit`` are then unused and ``last_lp``
        stays ``None``). The order is still :func:`lp_order` of that ``y``.
        ``llmopt.papers.wang.lp_optima`` computes such solutions. Default ``None``: the
        column-generation LP, unchanged.
    """

    name = "sorted-lp"

    def plan(self, requests: list[RequestView], M: int) -> list[RequestView]:
        y, _, outputs = self._y(requests, M)
        return [requests[i] for i in lp_order(y, outputs)]


class LPSwap(_LPPolicy):
    """LP-Swap (W Algorithm 7): LP-ordered greedy batches improved by local swaps (module docstring).

    Parameters are :class:`SortedLP`'s (``bucket``, ``time_limit``, ``expected_starts``).
    """

    name = "lp-swap"

    def plan(self, requests: list[RequestView], M: int) -> list[RequestView]:
        y, prompts, outputs = self._y(requests, M)
        self.last_batches: list[list[str]] = []  # the planned batches, for inspection
        rest = lp_order(y, outputs)  # remaining requests, in LP order
        weights = prompts + outputs
        pieces: list[np.ndarray] = []
        while rest.size:
            w = weights[rest]
            initial = greedy_fill(w, M)  # positions in `rest`, in LP order
            local = np.asarray(select_local_swap(prompts[rest], outputs[rest], M, initial=initial,
                                                 order=np.arange(rest.size)), dtype=np.int64)
            batch = rest[local]
            pieces.append(batch[np.lexsort((batch, outputs[batch]))])
            self.last_batches.append([requests[int(i)].id for i in pieces[-1]])
            keep = np.ones(rest.size, dtype=bool)
            keep[local] = False
            rest = rest[keep]
        return [requests[int(i)] for i in np.concatenate(pieces)] if pieces else []
