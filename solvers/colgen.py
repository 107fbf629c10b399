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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus

__all__ = ["ColGenResult", "ClassArrays", "class_arrays", "solve_lp_colgen", "solve_lp_auto", "choose_bucket",
           "AUTO_BUCKET_ROWS"]

#: A clique row is added when the master's solution covers its time by more than ``1 + SEPARATION_TOL``.
SEPARATION_TOL = 1e-6
#: ``pricing="auto"`` prices every start while a round costs at most this many evaluations, and by
#: breakpoints beyond.
FULL_PRICING_MAX_WORK = 20_000_000
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
    clique_mu : tuple of (times, values)
        Per candidate clique, the multipliers of its rows in the bound's round (absolute times).
    clique_rows : int
        Clique rows separated.
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
    clique_mu: tuple[tuple[np.ndarray, np.ndarray], ...] = field(default=(), repr=False)
    clique_rows: int = 0

    @property
    def gap(self) -> float | None:
        """Relative gap between the master's value and the Lagrangian bound."""
        if self.objective is None or self.bound is None:
            return None
        return max(0.0, self.objective - self.bound) / max(abs(self.objective), 1e-9)


@dataclass
class ClassArrays:
    """Identical requests merged: arrival, prompt, output, size, member positions (relative times)."""

    a: np.ndarray
    s: np.ndarray
    o: np.ndarray
    size: np.ndarray
    hi: np.ndarray
    members: list[list[int]]


def class_arrays(instance: Instance, origin: int) -> ClassArrays:
    """The request classes of ``instance`` (identical requests merged) as arrays, times relative to ``origin``.

    Column generation and the Lagrangian stages price over these classes: ``a``, ``s``, ``o`` and ``size``
    per class, ``hi`` the last start that completes by the horizon ``T_c`` (``max a + Σo``), and each
    class's member positions in ``instance.requests``.
    """
    from llmopt.formulations.hindsight_ip import request_classes

    classes = request_classes(instance)
    a = np.array([c.arrival - origin for c in classes], dtype=np.int64)
    s = np.array([c.prompt for c in classes], dtype=np.int64)
    o = np.array([c.output for c in classes], dtype=np.int64)
    horizon = int(a.max()) + sum(r.output for r in instance.requests)  # T_c, relative
    return ClassArrays(a, s, o, np.array([c.size for c in classes], dtype=np.int64), horizon - o,
                    [list(c.positions) for c in classes])


class _Master:
    """The restricted master LP in a live ``highspy.Highs`` object.

    Rows: one assignment row per class, one memory row per bucket ``b`` of times ``bΔ+1 … (b+1)Δ``
    (``Δ = 1``: one per time ``1..H``), and the clique rows added so far (``Δ = 1`` only): row
    ``(q, τ)`` says that at most one zone of clique ``q`` covers time ``τ``
    (:mod:`llmopt.verify.clique_certificate`; a column ``(c, k)`` of a member class covers
    ``k + o_c − a … k + o_c + b``, exclusive of the first).
    """

    def __init__(self, classes: ClassArrays, M: int, bucket: int, threads: int,
                 cliques: Sequence[Mapping[int, tuple[int, int]]] = (), eager: bool = False,
                 primal: bool = False) -> None:
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
        self.n_rows = n_c
        self.mem_idx = np.zeros(0, dtype=np.int64)  # HiGHS row of each memory bucket
        self.cliques = [dict(q) for q in cliques]
        self.clique_rows: list[dict[int, int]] = [{} for _ in self.cliques]  # τ -> HiGHS row
        self.eager = eager
        if primal:
            # Primal simplex re-solves after added columns in about 2/3 of the time (measured: zone
            # rows, J AM1 n = 100). It is not the default without cliques: the LP optimum that
            # Sorted-LP / LP-Swap read (a degenerate LP's vertex) depends on the simplex path.
            self.h.setOptionValue("simplex_strategy", 4)
        self.col_class: list[np.ndarray] = []
        self.col_k: list[np.ndarray] = []
        self.n_cols = 0

    @property
    def n_buckets(self) -> int:
        return int(self.mem_idx.size)

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
        self.mem_idx = np.concatenate([self.mem_idx, np.arange(self.n_rows, self.n_rows + m)])
        self.n_rows += m

    def _clique_entries(self, cls: np.ndarray, k: np.ndarray) -> tuple[list[int], list[int]]:
        """``(rows, column offsets)`` of columns ``(cls, k)`` in the clique rows present."""
        rows: list[int] = []
        cols: list[int] = []
        for q, members in enumerate(self.cliques):
            present = self.clique_rows[q]
            if not present:
                continue
            for j, (c, kk) in enumerate(zip(cls.tolist(), k.tolist(), strict=True)):
                ab = members.get(c)
                if ab is None:
                    continue
                end = kk + int(self.cl.o[c])
                for tau in range(end - ab[0] + 1, end + ab[1] + 1):
                    row = present.get(tau)
                    if row is not None:
                        rows.append(row)
                        cols.append(j)
        return rows, cols

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
        mem_col, mem_row, mem_val = col_of[first], self.mem_idx[b[first]], np.add.reduceat(val, first)
        q_rows, q_cols = self._clique_entries(cls, k)
        # assemble column-wise: the assignment entry, then the bucket and clique entries of each column
        rows = np.concatenate([cls, mem_row, np.array(q_rows, dtype=np.int64)])
        cols = np.concatenate([np.arange(cls.size), mem_col, np.array(q_cols, dtype=np.int64)])
        vals = np.concatenate([np.ones(cls.size), mem_val, np.ones(len(q_rows))])
        order = np.lexsort((rows, cols))
        counts = np.bincount(cols, minlength=cls.size)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        cost = (k - cl.a[cls]).astype(float)
        self.h.addCols(cls.size, cost, np.zeros(cls.size), np.full(cls.size, np.inf), int(rows.size),
                       starts.astype(np.int32), rows[order].astype(np.int32), vals[order])
        self.col_class.append(cls)
        self.col_k.append(k)
        self.n_cols += cls.size
        if self.eager:  # every row a column could meet: times up to H + b
            for q, members in enumerate(self.cliques):
                last = self.H + max((b for _, b in members.values()), default=0)
                self.add_clique_rows(q, range(len(self.clique_rows[q]) + 1, last + 1))

    def columns(self) -> tuple[np.ndarray, np.ndarray]:
        """``(class, start)`` of every column, in HiGHS order."""
        if not self.col_class:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(self.col_class), np.concatenate(self.col_k)

    def add_clique_rows(self, q: int, taus: Iterable[int]) -> None:
        """Add the rows ``(q, τ)`` (at most one zone of clique ``q`` covers ``τ``) for new times ``τ``."""
        present = self.clique_rows[q]
        new = np.array(sorted({int(t) for t in taus} - present.keys()), dtype=np.int64)
        if new.size == 0:
            return
        members = self.cliques[q]
        col_c, col_k = self.columns()
        sel = np.flatnonzero(np.isin(col_c, list(members)))
        ab = np.array([members[int(c)] for c in col_c[sel]], dtype=np.int64).reshape(-1, 2)
        end = col_k[sel] + self.cl.o[col_c[sel]]
        width = ab.sum(axis=1)  # column j covers τ = end − a + 1 … end + b
        col = np.repeat(sel, width)
        tau = np.repeat(end - ab[:, 0] + 1, width) + (np.arange(int(width.sum())) - np.repeat(np.cumsum(width) - width,
                                                                                              width))
        row_of = np.full(int(max(new.max(), tau.max(initial=0))) + 1, -1, dtype=np.int64)
        row_of[new] = np.arange(new.size)
        keep = row_of[tau] >= 0
        row, col = row_of[tau[keep]], col[keep]
        order = np.lexsort((col, row))
        row, col = row[order], col[order]
        starts = np.searchsorted(row, np.arange(new.size))
        m = int(new.size)
        self.h.addRows(m, np.full(m, -np.inf), np.ones(m), int(col.size), starts.astype(np.int32),
                       col.astype(np.int32), np.ones(col.size))
        for x, t in enumerate(new.tolist()):
            present[t] = self.n_rows + x
        self.n_rows += m

    def solve(self, time_limit: float | None = None) -> tuple[bool, float, np.ndarray, np.ndarray, np.ndarray,
                                                              list[np.ndarray]]:
        """``(ok, objective without Σo, π per class, λ per time 0..H, x, ν per clique)``.

        ``λ_t`` is the multiplier of ``t``'s bucket row: weighting a bucket row by ``μ_b`` is
        weighting every time row of the bucket by ``μ_b``. ``ν_q[τ]`` is clique row ``(q, τ)``'s."""
        import highspy

        # HiGHS's time_limit is read against its run clock, which keeps counting across re-solves
        limit = float("inf") if time_limit is None else self.h.getRunTime() + max(time_limit, 1e-3)
        self.h.setOptionValue("time_limit", limit)
        self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return False, float("nan"), np.zeros(0), np.zeros(0), np.zeros(0), []
        sol = self.h.getSolution()
        dual = np.asarray(sol.row_dual, dtype=float)
        mu = np.maximum(-dual[self.mem_idx], 0.0)
        lam = np.concatenate([[0.0], np.repeat(mu, self.bucket)])
        nus = []
        for present in self.clique_rows:
            nu = np.zeros(max(present, default=0) + 1)
            for tau, row in present.items():
                nu[tau] = max(-dual[row], 0.0)
            nus.append(nu)
        return (True, float(self.h.getInfo().objective_function_value), dual[:self.n_classes], lam,
                np.asarray(sol.col_value, dtype=float), nus)


def _work(cl: ClassArrays, H: int) -> int:
    """Starts :func:`~llmopt.solvers.colgen_pricing.price_full` would evaluate."""
    return int(np.sum(np.minimum(cl.hi, np.maximum(H, cl.a)) - cl.a + 1))


def _separate(master: _Master, x: np.ndarray, limit: int) -> int:
    """Add up to ``limit`` clique rows that ``x`` violates by more than ``SEPARATION_TOL``, most violated
    first; return how many were added. A clique's coverage of ``τ`` is the mass of its members' columns
    whose zone ``(k + o − a, k + o + b]`` holds ``τ``."""
    col_c, col_k = master.columns()
    col_c, col_k = col_c[:x.size], col_k[:x.size]
    found: list[tuple[float, int, int]] = []
    for q, members in enumerate(master.cliques):
        sel = np.flatnonzero(np.isin(col_c, list(members)) & (x > 1e-12))
        if sel.size == 0:
            continue
        ab = np.array([members[int(c)] for c in col_c[sel]], dtype=np.int64).reshape(-1, 2)
        end = col_k[sel] + master.cl.o[col_c[sel]]
        lo, hi = end - ab[:, 0] + 1, end + ab[:, 1]  # covered: lo … hi
        keep = hi >= lo
        if not keep.any():
            continue
        diff = np.zeros(int(hi[keep].max()) + 2)
        np.add.at(diff, lo[keep], x[sel][keep])
        np.add.at(diff, hi[keep] + 1, -x[sel][keep])
        cover = np.cumsum(diff)
        present = master.clique_rows[q]
        for tau in np.flatnonzero(cover > 1.0 + SEPARATION_TOL).tolist():
            if tau not in present:
                found.append((float(cover[tau]), q, tau))
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    chosen = found[:limit]
    by_clique: dict[int, list[int]] = {}
    for _, q, tau in chosen:
        by_clique.setdefault(q, []).append(tau)
    for q, taus in sorted(by_clique.items()):
        master.add_clique_rows(q, sorted(taus))
    return len(chosen)


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
    cliques: Sequence[Mapping[int, tuple[int, int]]] = (),
    rows_per_round: int = 200,
    eager: bool = False,
    pricing: str = "full",
    primal: bool | None = None,
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
        Seconds, honoured inside a round too (the master solve and pricing stop at it); the
        result then has status ``TIME_LIMIT`` and still brackets the LP.
    max_rounds : int
    columns_per_class : int
        Columns added per class and round (its best starts).
    bucket : int
        ``Δ``, times per memory row (1: the exact LP).
    threads : int
        HiGHS threads.
    cliques : sequence of mappings
        Candidate completion-lag cliques over *request classes* (:func:`request_classes` order),
        ``{class: (a, b)}``; their rows are separated lazily (the LP is then the LP with every row of
        every clique; :mod:`llmopt.verify.clique_certificate` proves them valid). ``Δ = 1`` only.
        The caller vouches that each is valid for every pair of member *requests*, identical ones too.
    rows_per_round : int
        Most clique rows added per separation round.
    eager : bool
        Add every row of every clique as soon as a column can meet it, instead of separating
        (fewer rounds for one dense family such as the peak zones).
    pricing : {"full", "auto", "breakpoints"}
        :mod:`llmopt.solvers.colgen_pricing`: every start (``full``, the default: the committed
        Sorted-LP / LP-Swap results were computed that way, and among starts of equal reduced cost
        the two ways may add different columns, hence reach a different vertex of a degenerate LP), or
        the breakpoints of the multipliers (no cliques, ``columns_per_class = 1``); ``auto`` prices in
        full while that costs at most :data:`FULL_PRICING_MAX_WORK` evaluations per round. The LP value
        is the same.
    primal : bool, optional
        Re-solve the master by primal simplex (default: with cliques only, for the same reason).
    progress : callable, optional
        Called with a one-line status every 5 s.

    Returns
    -------
    ColGenResult
        With cliques, ``clique_mu`` holds the clique multipliers of the bound's round.
    """
    from llmopt.solvers.colgen_pricing import CliqueDuals, price_breakpoints, price_full

    if pricing not in ("auto", "full", "breakpoints"):
        raise ValueError(f"pricing must be 'auto', 'full' or 'breakpoints', got {pricing!r}")
    if cliques and bucket != 1:
        raise ValueError("clique rows need the exact LP (bucket = 1)")
    if pricing == "breakpoints" and (cliques or columns_per_class != 1):
        raise ValueError("breakpoint pricing takes no clique rows and one column per class")
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    if instance.n == 0:
        return ColGenResult(SolveStatus.OPTIMAL, 0.0, 0.0, {}, np.zeros(0, dtype=np.int64), np.zeros(0))
    origin = min(r.arrival for r in instance.requests)
    cl = class_arrays(instance, origin)
    master = _Master(cl, instance.M, bucket, threads, cliques, eager, bool(cliques) if primal is None else primal)
    cls_of = np.empty(instance.n, dtype=np.int64)
    for c, members in enumerate(cl.members):
        cls_of[members] = c
    seed_k = np.array([initial_starts[r.id] - origin for r in instance.requests], dtype=np.int64)
    pairs = np.unique(np.stack([cls_of, seed_k], axis=1), axis=0)
    master.add(pairs[:, 0], pairs[:, 1])

    const = float(sum(r.output for r in instance.requests))
    status, message = SolveStatus.NOT_SOLVED, ""
    objective: float | None = None
    bound: float | None = None
    best_lam = np.zeros(1)  # the multipliers of the best Lagrangian bound: its certificate
    best_nu: list[np.ndarray] = []
    x = np.zeros(0)
    rounds = cut_rows = 0
    last_print = t0
    while True:
        left = None if deadline is None else deadline - time.perf_counter()
        ok, z, pi, lam, x_round, nus = master.solve(left)
        if not ok:  # keep the last good master solution and the best bound
            if deadline is not None and time.perf_counter() >= deadline:
                status, message = SolveStatus.TIME_LIMIT, f"time limit in the master solve of round {rounds + 1}"
            else:
                message = f"restricted master not solved to optimality ({master.h.getModelStatus()})"
            break
        x = x_round
        rounds += 1
        duals = [CliqueDuals(nu, members) for nu, members in zip(nus, master.cliques, strict=True)]
        use_bp = not cliques and columns_per_class == 1 and (
            pricing == "breakpoints" or (pricing == "auto" and _work(cl, master.H) > FULL_PRICING_MAX_WORK))
        if use_bp:
            priced = price_breakpoints(cl.a, cl.s, cl.o, cl.hi, lam, pi, deadline=deadline)
        else:
            priced = price_full(cl.a, cl.s, cl.o, cl.hi, lam, pi, columns_per_class, duals, deadline=deadline)
        objective = z + const
        if not priced.complete:
            status, message = SolveStatus.TIME_LIMIT, f"time limit while pricing round {rounds}"
            break
        lagr = z + float(np.sum(cl.size * np.minimum(priced.min_rc, 0.0))) + const
        if bound is None or lagr > bound:
            bound, best_lam, best_nu = lagr, lam, nus
        converged = priced.new_class.size == 0 or objective - bound <= tol * max(1.0, abs(objective))
        if converged:
            added = _separate(master, x, rows_per_round) if master.cliques else 0
            cut_rows += added
            if added == 0:
                status, message = SolveStatus.OPTIMAL, f"no improving column after {rounds} rounds"
                if cliques:
                    message += f" and no violated clique row ({cut_rows} added)"
                break
        now = time.perf_counter()
        if deadline is not None and now > deadline:
            status, message = SolveStatus.TIME_LIMIT, f"time limit after {rounds} rounds"
            break
        if rounds >= max_rounds:
            message = f"round limit {max_rounds} reached"
            break
        if progress is not None and now - last_print > 5.0:
            progress(f"colgen round {rounds}: master {objective:.1f}, bound {bound:.1f}, "
                     f"{master.n_cols} columns, {master.H} rows, {cut_rows} clique rows")
            last_print = now
        if not converged:
            master.add(priced.new_class, priced.new_k)

    if bound is None:  # stopped before a round ended: λ = 0 certifies Σ o_i, and the seed is an LP point
        bound = const
        objective = const + float(sum(initial_starts[r.id] - r.arrival for r in instance.requests))
    expected: dict[str, float] = {}
    if x.size:
        col_class, col_k = master.columns()
        col_class, col_k = col_class[:x.size], col_k[:x.size]
        y = np.bincount(col_class, weights=x * col_k, minlength=len(cl.size)) / cl.size
        for c, members in enumerate(cl.members):
            for i in members:
                expected[instance.requests[i].id] = float(y[c]) + origin
    nz = np.flatnonzero(best_lam > 0)
    clique_mu = []
    for nu in best_nu:
        tz = np.flatnonzero(nu > 0)
        clique_mu.append((tz.astype(np.int64) + origin, nu[tz]))
    return ColGenResult(
        status=status, objective=objective, bound=bound, expected_start=expected,
        lam_times=nz.astype(np.int64) + origin, lam_values=best_lam[nz], rounds=rounds, columns=master.n_cols,
        rows=master.H, runtime_s=time.perf_counter() - t0, message=message, clique_mu=tuple(clique_mu),
        clique_rows=cut_rows,
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
                  bucket: int | str = "auto", time_limit: float | None = None, pricing: str = "full",
                  primal: bool | None = None) -> tuple[ColGenResult, int]:
    """:func:`solve_lp_colgen` seeded with ``initial_starts`` (a feasible schedule, e.g. MC-SF's),
    with ``Δ`` from :func:`choose_bucket` on the seed's makespan; ``pricing`` and ``primal`` as there.
    Returns ``(result, Δ)``."""
    if instance.n == 0:
        return solve_lp_colgen(instance, initial_starts={}), 1
    origin = min(r.arrival for r in instance.requests)
    makespan = max(initial_starts[r.id] + r.output for r in instance.requests) - origin
    delta = choose_bucket(bucket, makespan)
    return solve_lp_colgen(instance, initial_starts=initial_starts, bucket=delta, time_limit=time_limit,
                           pricing=pricing, primal=primal), delta
