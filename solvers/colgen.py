"""The LP relaxation of the hindsight IP at trace scale, by column generation.

The time-indexed LP — J (1)–(3) with ``x >= 0``, which is W's Relax-LP (8)–(11) when all
arrivals are 0 — has one column per request and start step. At the scale of W §7
(n = 2,000, M = 16,492, horizon ``T̄ = Σ o_i ≈ 255,000``) that is ~5·10⁸ columns with
~6·10¹⁰ nonzeros (DIGEST §1.6): it cannot be written down. This module solves **the same
LP, over the same full horizon**, without enumerating it:

* The *restricted master* holds a few columns, the columns of a feasible schedule first
  (so it is always feasible), and is re-solved by HiGHS's simplex, warm-started, as
  columns are added.
* *Pricing* finds, for every request, the start of least reduced cost over its whole window
  ``a_i … T_c − o_i`` (``T_c = max a + Σ o``, the completion horizon of DIGEST §1.1, which
  for W is ``Σ o_i`` = W's ``T̄`` read as a completion bound, DIGEST I-8). With memory-row
  multipliers ``λ_t = −dual_t >= 0`` and assignment duals ``π_c``, the reduced cost of a
  start ``k`` is

      rc(k) = (k − a) − π_c + Σ_{τ=k+1}^{k+o} (s + τ − k)·λ_τ
            = (k − a) − π_c + (s − k)(P[k+o] − P[k]) + (Q[k+o] − Q[k]),

  with prefix sums ``P[t] = Σ_{τ<=t} λ_τ`` and ``Q[t] = Σ_{τ<=t} τ·λ_τ``, so one request's
  whole window costs one vectorised pass. Multipliers are 0 after the last memory row ``H``
  of the master, and for ``k >= H`` the sum vanishes: ``rc(k) = k − a − π_c`` grows with
  ``k``, so the minimum over the tail ``k >= H`` is at ``k = H``. Pricing therefore
  evaluates ``k ∈ [a, min(H, T_c − o)]`` only, and is still exact over the full window.

**Why the answer is the LP's.** At every round, for any multipliers, the Lagrangian (Farley)
bound ``z_master + Σ_c |c|·min_k rc_c(k)`` is a lower bound on the full LP (weak duality of
the LP with the columns of each class summing to ``|c|``); the master's optimum ``z_master``
is an upper bound on it (a feasible LP point). When pricing finds no column with
``rc < −tol`` the two agree within ``tol·n``: the master's solution is an optimal solution of
the full LP (up to that tolerance), which is what Sorted-LP and LP-Swap need (W Algs. 6–7
use an LP optimum; which one, when several exist, the paper leaves to its solver). The
multipliers are also a lower-bound certificate on OPT that
:func:`llmopt.verify.checker.check_lower_bound_certificate` re-verifies from the instance alone.

Identical requests (same ``a, s, o``) are merged into one class with an integer right-hand
side, as in :mod:`llmopt.formulations.hindsight_ip` (exact for the LP: average any solution
over the permutations of a class). Requests of one class then get the same expected start.

This is an algorithm around one solver, not a solver-neutral model: column generation
needs an LP that can be re-solved warm after adding columns, which the ``highspy`` API
gives directly. It is HiGHS-only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus

__all__ = ["ColGenResult", "solve_lp_colgen", "solve_lp_auto", "choose_bucket", "AUTO_BUCKET_ROWS"]

#: A column is added when its reduced cost is below ``−PRICING_TOL``.
PRICING_TOL = 1e-6
#: With ``bucket="auto"``: the number of memory rows the bucketed master aims at.
AUTO_BUCKET_ROWS = 500


@dataclass(frozen=True)
class ColGenResult:
    """Outcome of :func:`solve_lp_colgen`. Missing values are ``None``.

    Attributes
    ----------
    status : SolveStatus
        ``OPTIMAL`` when pricing proved that no column improves the master (within ``tol``):
        the master's solution is optimal for the LP that was solved — Relax-LP itself with
        ``bucket = 1``, its bucketed relaxation otherwise. ``TIME_LIMIT`` or ``NOT_SOLVED``
        (round limit, solver trouble) otherwise; ``objective`` and ``bound`` still bracket
        the optimum of the LP solved.
    objective : float or None
        Optimum of the last restricted master: an upper bound on the optimum of the LP solved
        (TEL units, ``Σ o_i`` included).
    bound : float or None
        The best Lagrangian lower bound of any round on the LP solved, hence on Relax-LP and on
        OPT; ``lam_times``/``lam_values`` are the multipliers of that round, so
        :func:`~llmopt.verify.checker.check_lower_bound_certificate` reproduces it.
    expected_start : dict
        ``y_i = Σ_k k·x_{i,k}`` of the master's solution, by request id (W Alg. 6).
    lam_times, lam_values : ndarray
        Memory-row multipliers ``λ_t >= 0`` (absolute times): the certificate of ``bound``.
    rounds, columns, rows : int
        Pricing rounds, columns and memory rows of the final master.
    runtime_s : float
    message : str
    """

    status: SolveStatus
    objective: float | None
    bound: float | None
    expected_start: dict[str, float] = field(repr=False)
    lam_times: np.ndarray = field(repr=False)
    lam_values: np.ndarray = field(repr=False)
    rounds: int = 0
    columns: int = 0
    rows: int = 0
    runtime_s: float = 0.0
    message: str = ""

    @property
    def gap(self) -> float | None:
        """Relative gap between the master's value and the Lagrangian bound."""
        if self.objective is None or self.bound is None:
            return None
        return max(0.0, self.objective - self.bound) / max(abs(self.objective), 1e-9)


@dataclass
class _Classes:
    """Identical requests merged: arrival, prompt, output, size, member positions (relative times)."""

    a: np.ndarray
    s: np.ndarray
    o: np.ndarray
    size: np.ndarray
    hi: np.ndarray
    members: list[list[int]]


def _classes(instance: Instance, origin: int) -> _Classes:
    from llmopt.formulations.hindsight_ip import request_classes

    classes = request_classes(instance)
    a = np.array([c.arrival - origin for c in classes], dtype=np.int64)
    s = np.array([c.prompt for c in classes], dtype=np.int64)
    o = np.array([c.output for c in classes], dtype=np.int64)
    horizon = int(a.max()) + sum(r.output for r in instance.requests)  # T_c, relative
    return _Classes(a, s, o, np.array([c.size for c in classes], dtype=np.int64), horizon - o,
                    [list(c.positions) for c in classes])


class _Master:
    """The restricted master LP in a live ``highspy.Highs`` object.

    Rows: one assignment row per class, then one memory row per bucket ``b`` of times
    ``bΔ+1 … (b+1)Δ`` (``Δ = 1``: one per time ``1..H``).
    """

    def __init__(self, classes: _Classes, M: int, bucket: int, threads: int) -> None:
        import highspy

        from llmopt.solvers.highs import new_highs

        self.cl, self.M, self.bucket = classes, M, bucket
        self.h = new_highs(highspy)
        for key, value in (("output_flag", False), ("presolve", "off"), ("threads", threads),
                           ("solver", "simplex")):
            self.h.setOptionValue(key, value)
        n_c = len(classes.size)
        size = classes.size.astype(float)
        self.h.addRows(n_c, size, size, 0, np.zeros(n_c, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        self.n_classes = n_c
        self.n_buckets = 0
        self.col_class: list[np.ndarray] = []
        self.col_k: list[np.ndarray] = []
        self.n_cols = 0

    @property
    def H(self) -> int:
        """Last time covered by a memory row."""
        return self.n_buckets * self.bucket

    def _grow_rows(self, n_buckets: int) -> None:
        if n_buckets <= self.n_buckets:
            return
        m = n_buckets - self.n_buckets
        cap = float(self.M * self.bucket)
        self.h.addRows(m, np.full(m, -np.inf), np.full(m, cap), 0, np.zeros(m, dtype=np.int32),
                       np.zeros(0, dtype=np.int32), np.zeros(0))
        self.n_buckets = n_buckets

    def add(self, cls: np.ndarray, k: np.ndarray) -> None:
        """Add the columns ``x_{cls, k}`` (start ``k``, relative time)."""
        if cls.size == 0:
            return
        cl, d = self.cl, self.bucket
        o, s = cl.o[cls], cl.s[cls]
        self._grow_rows(int(((k + o - 1) // d).max()) + 1)
        # memory entries: token j = 1..o of column c sits at time k + j, in bucket (k + j − 1) // Δ
        col_of = np.repeat(np.arange(cls.size), o)
        j = np.arange(int(o.sum())) - np.repeat(np.cumsum(o) - o, o) + 1
        b = (k[col_of] + j - 1) // d
        val = (s[col_of] + j).astype(float)
        key = col_of * (self.n_buckets + 1) + b
        first = np.concatenate([[0], np.flatnonzero(np.diff(key)) + 1])
        mem_col, mem_row, mem_val = col_of[first], self.n_classes + b[first], np.add.reduceat(val, first)
        # assemble column-wise: the assignment entry, then the bucket entries of each column
        rows = np.concatenate([cls, mem_row])
        cols = np.concatenate([np.arange(cls.size), mem_col])
        vals = np.concatenate([np.ones(cls.size), mem_val])
        order = np.lexsort((rows, cols))
        counts = np.bincount(cols, minlength=cls.size)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        cost = (k - cl.a[cls]).astype(float)
        self.h.addCols(cls.size, cost, np.zeros(cls.size), np.full(cls.size, np.inf), int(rows.size),
                       starts.astype(np.int32), rows[order].astype(np.int32), vals[order])
        self.col_class.append(cls)
        self.col_k.append(k)
        self.n_cols += cls.size

    def solve(self) -> tuple[bool, float, np.ndarray, np.ndarray, np.ndarray]:
        """``(ok, objective without Σo, π per class, λ per time 0..H, x)``.

        ``λ_t`` is the multiplier of ``t``'s bucket row: weighting a bucket row by ``μ_b`` is
        weighting every time row of the bucket by ``μ_b``."""
        import highspy

        self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return False, float("nan"), np.zeros(0), np.zeros(0), np.zeros(0)
        sol = self.h.getSolution()
        dual = np.asarray(sol.row_dual, dtype=float)
        mu = np.maximum(-dual[self.n_classes:], 0.0)
        lam = np.concatenate([[0.0], np.repeat(mu, self.bucket)])
        return (True, float(self.h.getInfo().objective_function_value), dual[:self.n_classes], lam,
                np.asarray(sol.col_value, dtype=float))


def _price(cl: _Classes, lam: np.ndarray, pi: np.ndarray, per_class: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least reduced cost of every class over its whole window, and up to ``per_class`` best starts.

    Returns ``(min_rc per class, classes of new columns, their starts)`` (columns with
    ``rc < −PRICING_TOL`` only). See the module docstring for the formula and the tail argument.
    """
    H = len(lam) - 1
    o_max = int(cl.o.max())
    tau = np.arange(H + 1, dtype=float)
    P = np.concatenate([np.cumsum(lam), np.full(o_max, lam.sum())])
    Q = np.concatenate([np.cumsum(tau * lam), np.full(o_max, (tau * lam).sum())])
    min_rc = np.empty(len(cl.size))
    new_c: list[int] = []
    new_k: list[int] = []
    for c in range(len(cl.size)):
        a, s, o = int(cl.a[c]), int(cl.s[c]), int(cl.o[c])
        k_hi = min(int(cl.hi[c]), max(H, a))
        k = np.arange(a, k_hi + 1)
        dP = P[k + o] - P[k]
        rc = (k - a) + (s - k) * dP + (Q[k + o] - Q[k]) - pi[c]
        if per_class == 1:
            j = int(np.argmin(rc))
            best = rc[j:j + 1]
            idx = np.array([j])
        else:
            idx = np.argsort(rc, kind="stable")[:per_class]
            best = rc[idx]
        min_rc[c] = best[0]
        for j, r in zip(idx.tolist(), best.tolist(), strict=True):
            if r < -PRICING_TOL:
                new_c.append(c)
                new_k.append(a + j)
    return min_rc, np.array(new_c, dtype=np.int64), np.array(new_k, dtype=np.int64)


def solve_lp_colgen(
    instance: Instance,
    *,
    initial_starts: Mapping[str, int],
    tol: float = 1e-7,
    time_limit: float | None = None,
    max_rounds: int = 5_000,
    columns_per_class: int = 1,
    bucket: int = 1,
    threads: int = 1,
    progress: Callable[[str], None] | None = None,
) -> ColGenResult:
    """Solve the LP relaxation of the hindsight IP (W Relax-LP (8)–(11)) by column generation.

    Parameters
    ----------
    instance : Instance
        Any arrivals (W's all-at-0 is the special case of Sorted-LP).
    initial_starts : mapping
        A feasible schedule ``{id: start}`` whose columns seed the master (callers pass a
        policy's schedule, e.g. MC-SF's; this module stands below the engines). It is
        trusted to be feasible only in the sense that the master must be: an
        infeasible seed makes the first master infeasible, which is reported.
    tol : float
        Stop when the Lagrangian bound is within ``tol`` (relative) of the master's value.
    time_limit : float, optional
        Seconds; the result then has status ``TIME_LIMIT`` and still brackets the LP.
    max_rounds : int
    columns_per_class : int
        Columns added per class and round (its best starts).
    threads : int
        HiGHS threads.
    progress : callable, optional
        Called with a one-line status every 5 s.

    Returns
    -------
    ColGenResult
    """
    t0 = time.perf_counter()
    if instance.n == 0:
        return ColGenResult(SolveStatus.OPTIMAL, 0.0, 0.0, {}, np.zeros(0, dtype=np.int64), np.zeros(0))
    origin = min(r.arrival for r in instance.requests)
    cl = _classes(instance, origin)
    master = _Master(cl, instance.M, bucket, threads)
    cls_of = np.empty(instance.n, dtype=np.int64)
    for c, members in enumerate(cl.members):
        cls_of[members] = c
    seed_k = np.array([initial_starts[r.id] - origin for r in instance.requests], dtype=np.int64)
    pairs = np.unique(np.stack([cls_of, seed_k], axis=1), axis=0)
    master.add(pairs[:, 0], pairs[:, 1])

    const = float(sum(r.output for r in instance.requests))
    status, message = SolveStatus.NOT_SOLVED, ""
    objective = bound = None
    best_lam = np.zeros(1)  # the multipliers of the best Lagrangian bound: its certificate
    x = np.zeros(0)
    rounds = 0
    last_print = t0
    while True:
        ok, z, pi, lam, x_round = master.solve()
        if not ok:  # keep the last good master solution and the best bound
            message = f"restricted master not solved to optimality ({master.h.getModelStatus()})"
            break
        x = x_round
        rounds += 1
        min_rc, new_c, new_k = _price(cl, lam, pi, columns_per_class)
        objective = z + const
        lagr = z + float(np.sum(cl.size * np.minimum(min_rc, 0.0))) + const
        if bound is None or lagr > bound:
            bound, best_lam = lagr, lam
        if new_c.size == 0 or objective - bound <= tol * max(1.0, abs(objective)):
            status, message = SolveStatus.OPTIMAL, f"no improving column after {rounds} rounds"
            break
        now = time.perf_counter()
        if time_limit is not None and now - t0 > time_limit:
            status, message = SolveStatus.TIME_LIMIT, f"time limit after {rounds} rounds"
            break
        if rounds >= max_rounds:
            message = f"round limit {max_rounds} reached"
            break
        if progress is not None and now - last_print > 5.0:
            progress(f"colgen round {rounds}: master {objective:.1f}, bound {bound:.1f}, "
                     f"{master.n_cols} columns, {master.H} rows")
            last_print = now
        master.add(new_c, new_k)

    expected: dict[str, float] = {}
    if x.size:
        col_class = np.concatenate(master.col_class)[:x.size]
        col_k = np.concatenate(master.col_k)[:x.size]
        y = np.bincount(col_class, weights=x * col_k, minlength=len(cl.size)) / cl.size
        for c, members in enumerate(cl.members):
            for i in members:
                expected[instance.requests[i].id] = float(y[c]) + origin
    nz = np.flatnonzero(best_lam > 0)
    return ColGenResult(
        status=status, objective=objective, bound=bound, expected_start=expected,
        lam_times=nz.astype(np.int64) + origin, lam_values=best_lam[nz], rounds=rounds, columns=master.n_cols,
        rows=master.H, runtime_s=time.perf_counter() - t0, message=message,
    )


def choose_bucket(bucket: int | str, seed_makespan: int) -> int:
    """``Δ``: ``bucket`` itself, or with ``"auto"`` ``ceil(seed_makespan / AUTO_BUCKET_ROWS)``
    (1 — the exact LP — when the seed schedule ends within :data:`AUTO_BUCKET_ROWS` steps)."""
    if bucket == "auto":
        return max(1, math.ceil(seed_makespan / AUTO_BUCKET_ROWS))
    if isinstance(bucket, bool) or not isinstance(bucket, int) or bucket < 1:
        raise ValueError(f"bucket must be a positive integer or 'auto', got {bucket!r}")
    return bucket


def solve_lp_auto(instance: Instance, *, initial_starts: Mapping[str, int],
                  bucket: int | str = "auto", time_limit: float | None = None) -> tuple[ColGenResult, int]:
    """:func:`solve_lp_colgen` seeded with ``initial_starts`` (a feasible schedule, e.g. MC-SF's),
    with ``Δ`` from :func:`choose_bucket` on the seed's makespan. Returns ``(result, Δ)``."""
    if instance.n == 0:
        return solve_lp_colgen(instance, initial_starts={}), 1
    origin = min(r.arrival for r in instance.requests)
    makespan = max(initial_starts[r.id] + r.output for r in instance.requests) - origin
    delta = choose_bucket(bucket, makespan)
    return solve_lp_colgen(instance, initial_starts=initial_starts, bucket=delta, time_limit=time_limit), delta
