"""Which optimum of W's Relax-LP drives Sorted-LP and LP-Swap (issue 25, item 1).

W's Sorted-LP (Algorithm 6) and LP-Swap (Algorithm 7) read an optimal solution ``x*`` of
Relax-LP (8)–(11) and order the requests by ``y_i = Σ_t t·x*_{i,t}``. The LP is highly
degenerate, so ``x*`` — hence the order — depends on which optimum the solver returns, and
W states neither its solver settings nor its horizon ``T̄`` (DIGEST I-8). This module solves
the LP to *different* optima, over the horizons W could have used, so that
``llmopt/papers/wang/studies/lp_optima.py`` can run both policies from each.

**Horizons** (:data:`HORIZONS`; ``T̄`` and the reading of the printed (8)–(11)):

* ``"sum-o"`` — ``T̄ = Σ o_i`` (J's ``T̄ = Σ(a_i + o_i)`` with ``a = 0``; W cites J for the IP),
  read as a completion horizon: starts ``k <= T̄ − o_i``, memory rows ``1..T̄``. This is the
  LP that the project's Sorted-LP solves (:mod:`llmopt.solvers.colgen`, ``bucket=1``).
* ``"makespan"`` — ``T̄`` = the makespan of MC-SF's schedule (a short horizon that keeps a
  feasible schedule), completion reading.
* ``"makespan-literal"`` — the same ``T̄`` read as printed: starts ``k ∈ 0..T̄`` and memory
  rows ``t ∈ [T̄] = 1..T̄`` only, so tokens produced after ``T̄`` are not counted.
* ``"volume-literal"`` — the printed reading with a ``T̄`` that is *not* an upper bound: the
  memory-volume bound ``⌈Σ_i (o_i s_i + o_i(o_i+1)/2) / M⌉`` on the makespan. Requests that do
  not fit before ``T̄`` start at ``T̄`` for free, so many ``y_i`` tie at ``T̄`` — this shows what
  a too-short horizon does to the order.
* ``"n-literal"`` — the printed reading with ``T̄ = n`` (one step per request), a horizon far
  shorter than any schedule: most requests start at ``T̄`` and tie there, so the order of the
  tail is the tie-break's. Neither this nor ``"volume-literal"`` is an upper bound on the
  makespan, as W's "upper bound of the time horizon" asks; they show what a horizon that cuts
  the LP's support would do.

**Optima** (:data:`METHODS`), all of the same LP:

1. :func:`solve_horizon_lp` solves the horizon's LP by column generation (one column per
   request and start, identical requests *not* merged, pricing over every start of the
   window, as in :mod:`llmopt.solvers.colgen`) and keeps the final duals ``(π, λ)``, which are
   optimal for the full LP. By complementary slackness every optimal solution of the full LP
   is supported on the columns of zero reduced cost under these duals, so the LP restricted to
   the columns with ``rc <= FACE_TOL`` (the *face LP*) has the same optimum and the same
   optimal face (up to that tolerance).
2. :func:`solve_on_face` solves the face LP from scratch with HiGHS (presolve off) by:
   ``"dual-simplex"`` (``simplex_strategy=1``) and ``"primal-simplex"`` (``4``) — two optimal
   vertices (basic solutions of the face LP are basic for the full LP); ``"ipm"`` (IPX,
   ``run_crossover="off"``) — an interior point of the optimal face; ``"ipm-centring"`` —
   the same with IPX's centring steps (``run_centring=True``), our cheap stand-in for the
   **analytic centre** of the optimal face (the limit of the central path; the exact centre
   needs a barrier solve on the face that HiGHS does not offer); and ``"face-min-s"`` /
   ``"face-max-s"`` — the optimal vertices that minimise / maximise ``Σ_i s_i y_i`` (objective
   cut at the optimum, dual simplex): the two extremes of how early the optimal face can put
   large prompts.

Every solution's objective is checked against the column-generation optimum (relative
:data:`VALUE_TOL`, :data:`IPM_VALUE_TOL` for interior points); a mismatch raises.
:func:`solve_full` builds the whole LP (every start of every window) for small instances, as
the cross-check that the face LP changes nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance
from llmopt.policies import MCSF

__all__ = ["HORIZONS", "METHODS", "FACE_TOL", "VALUE_TOL", "IPM_VALUE_TOL", "HorizonLP", "LPPoint", "horizon_of",
           "solve_horizon_lp", "solve_on_face", "face_spread", "solve_full", "spearman"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

HORIZONS = ("sum-o", "makespan", "makespan-literal", "volume-literal", "n-literal")
METHODS = ("dual-simplex", "primal-simplex", "ipm", "ipm-centring", "face-min-s", "face-max-s")
#: Columns with reduced cost at most this (TEL units) form the face LP.
FACE_TOL = 1e-6
#: Pricing adds a column when its reduced cost is below ``−PRICE_TOL``.
PRICE_TOL = 1e-7
#: Every solution's objective must be within this relative distance of the LP optimum
#: (:data:`IPM_VALUE_TOL` for interior points: IPX stops at its own tolerance, and its centring
#: steps trade a little optimality for centrality — 3.4e-6 relative measured on one Normal instance).
VALUE_TOL = 1e-6
IPM_VALUE_TOL = 1e-5

_OPTIONS: dict[str, dict[str, object]] = {
    "dual-simplex": {"solver": "simplex", "simplex_strategy": 1},
    "primal-simplex": {"solver": "simplex", "simplex_strategy": 4},
    "ipm": {"solver": "ipm", "run_crossover": "off"},
    "ipm-centring": {"solver": "ipm", "run_crossover": "off", "run_centring": True, "max_centring_steps": 50},
    "face-min-s": {"solver": "simplex", "simplex_strategy": 1},
    "face-max-s": {"solver": "simplex", "simplex_strategy": 1},
}


@dataclass(frozen=True)
class HorizonLP:
    """Relax-LP over one horizon, solved by column generation, with the support of its optimal face.

    Attributes
    ----------
    prompts, outputs : ndarray
        ``s_i``, ``o_i`` (request order of the instance).
    M, horizon : int
        Memory limit and ``T̄``.
    literal : bool
        Printed reading (starts ``0..T̄``, rows ``1..T̄``) rather than the completion reading.
    value : float
        The LP optimum, ``Σ o_i`` included (TEL units).
    face_req, face_k : ndarray
        The face LP's columns: request index and start.
    rounds, master_columns : int
    runtime_s : float
    """

    prompts: IntArray = field(repr=False)
    outputs: IntArray = field(repr=False)
    M: int
    horizon: int
    literal: bool
    value: float
    face_req: IntArray = field(repr=False)
    face_k: IntArray = field(repr=False)
    rounds: int
    master_columns: int
    runtime_s: float


@dataclass(frozen=True)
class LPPoint:
    """One optimal solution: ``y`` (expected starts, instance order), its objective and how it was found."""

    method: str
    y: FloatArray = field(repr=False)
    value: float
    runtime_s: float
    columns: int


def _highs() -> Any:
    import highspy

    from llmopt.solvers.highs import new_highs

    h = new_highs(highspy)
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")
    h.setOptionValue("threads", 1)
    return h


def _columns(s: IntArray, o: IntArray, req: IntArray, k: IntArray, n: int, rows: int
             ) -> tuple[IntArray, IntArray, FloatArray]:
    """CSC pieces of the columns ``x_{req, k}``: assignment row ``req``, memory rows ``n + τ − 1``
    for ``τ = k+1 … min(k+o, rows)`` with coefficient ``s + τ − k``."""
    length = np.minimum(k + o[req], rows) - k  # tokens inside the rows (>= 0)
    length = np.maximum(length, 0)
    col = np.repeat(np.arange(req.size), length)
    j = np.arange(int(length.sum())) - np.repeat(np.cumsum(length) - length, length) + 1
    mem_row = n + k[col] + j - 1
    mem_val = (s[req][col] + j).astype(float)
    starts = np.concatenate([[0], np.cumsum(length + 1)[:-1]]).astype(np.int64)
    index = np.empty(int(length.sum()) + req.size, dtype=np.int64)
    value = np.empty(index.size)
    index[starts] = req
    value[starts] = 1.0
    body = np.ones(index.size, dtype=bool)
    body[starts] = False
    index[body] = mem_row
    value[body] = mem_val
    return starts, index, value


def _add(h: Any, s: IntArray, o: IntArray, req: IntArray, k: IntArray, n: int, rows: int,
         extra: FloatArray | None = None) -> None:
    starts, index, value = _columns(s, o, req, k, n, rows)
    cost = k.astype(float) if extra is None else extra
    h.addCols(req.size, cost, np.zeros(req.size), np.full(req.size, np.inf), index.size,
              starts.astype(np.int32), index.astype(np.int32), value)


def _model(s: IntArray, o: IntArray, M: int, rows: int) -> Any:
    n = s.size
    h = _highs()
    h.addRows(n, np.ones(n), np.ones(n), 0, np.zeros(n, dtype=np.int32), np.zeros(0, dtype=np.int32),
              np.zeros(0))
    h.addRows(rows, np.full(rows, -np.inf), np.full(rows, float(M)), 0, np.zeros(rows, dtype=np.int32),
              np.zeros(0, dtype=np.int32), np.zeros(0))
    return h


def _reduced_costs(s: int, o: int, hi: int, pi: float, P: FloatArray, Q: FloatArray, rows: int) -> FloatArray:
    """``rc(k) = k − π + Σ_{τ=k+1}^{min(k+o, rows)} (s + τ − k)·λ_τ`` for ``k = 0 … hi`` (prefix sums)."""
    k = np.arange(hi + 1)
    end = np.minimum(k + o, rows)
    return k - pi + (s - k) * (P[end] - P[k]) + (Q[end] - Q[k])


def horizon_of(name: str, instance: Instance) -> tuple[int, bool]:
    """``(T̄, literal)`` of horizon ``name`` (:data:`HORIZONS`) for ``instance`` (all at 0)."""
    o = np.array([r.output for r in instance.requests], dtype=np.int64)
    s = np.array([r.prompt for r in instance.requests], dtype=np.int64)
    if name == "sum-o":
        return int(o.sum()), False
    if name in ("makespan", "makespan-literal"):
        sched = simulate(instance, MCSF())
        return max(sched.starts[r.id] + r.output for r in instance.requests), name.endswith("literal")
    if name == "volume-literal":
        return math.ceil(int((o * s + o * (o + 1) // 2).sum()) / instance.M), True
    if name == "n-literal":
        return instance.n, True
    raise ValueError(f"unknown horizon {name!r}; known: {', '.join(HORIZONS)}")


def solve_horizon_lp(instance: Instance, horizon: int, literal: bool, *, per_round: int = 3,
                     max_rounds: int = 20_000, warm: HorizonLP | None = None) -> HorizonLP:
    """Relax-LP over ``horizon`` by column generation, and the columns of its optimal face.

    Parameters
    ----------
    instance : Instance
        All requests at one time (W's model).
    horizon : int
        ``T̄``.
    literal : bool
        Printed reading (see the module docstring).
    per_round : int
        Columns added per request and round (its best starts).
    max_rounds : int
    warm : HorizonLP, optional
        Another horizon's solution of the same instance: its face columns that lie in this
        horizon's windows join the first master (a warm start; the optimum does not depend on it).

    Raises
    ------
    RuntimeError
        If the master is not solved to optimality or the round limit is hit.
    """
    t0 = time.perf_counter()
    s = np.array([r.prompt for r in instance.requests], dtype=np.int64)
    o = np.array([r.output for r in instance.requests], dtype=np.int64)
    n, rows = s.size, int(horizon)
    hi = np.full(n, rows) if literal else rows - o
    if (hi < 0).any():
        raise ValueError(f"horizon {horizon} is shorter than a request's output (completion reading)")
    base = min(r.arrival for r in instance.requests)
    seed = simulate(instance, MCSF()).starts  # a feasible schedule; clipped to T̄ it stays feasible (literal)
    k0 = np.array([seed[r.id] - base for r in instance.requests], dtype=np.int64)
    if not literal and (k0 > hi).any():
        raise ValueError(f"horizon {horizon} is shorter than MC-SF's makespan (completion reading)")
    k0 = np.minimum(k0, hi)
    h = _model(s, o, instance.M, rows)
    col_req, col_k = [np.arange(n)], [k0]
    if warm is not None:
        keep = warm.face_k <= hi[warm.face_req]
        col_req.append(warm.face_req[keep])
        col_k.append(warm.face_k[keep])
    req0, k_0 = np.concatenate(col_req), np.concatenate(col_k)
    pairs = np.unique(np.stack([req0, k_0], axis=1), axis=0)
    _add(h, s, o, pairs[:, 0], pairs[:, 1], n, rows)
    col_req, col_k = [pairs[:, 0]], [pairs[:, 1]]
    rounds = 0
    import highspy

    while True:
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"restricted master not optimal: {h.getModelStatus()}")
        rounds += 1
        dual = np.asarray(h.getSolution().row_dual, dtype=np.float64)
        pi, lam = dual[:n], np.concatenate([[0.0], np.maximum(-dual[n:], 0.0)])
        tau = np.arange(rows + 1, dtype=np.float64)
        P, Q = np.cumsum(lam), np.cumsum(tau * lam)
        new_r: list[IntArray] = []
        new_k: list[IntArray] = []
        for i in range(n):
            rc = _reduced_costs(int(s[i]), int(o[i]), int(hi[i]), float(pi[i]), P, Q, rows)
            best = np.argsort(rc, kind="stable")[:per_round]
            best = best[rc[best] < -PRICE_TOL]
            if best.size:
                new_r.append(np.full(best.size, i))
                new_k.append(best.astype(np.int64))
        if not new_r:
            break
        if rounds >= max_rounds:
            raise RuntimeError(f"column generation: round limit {max_rounds} reached")
        req, k = np.concatenate(new_r), np.concatenate(new_k)
        _add(h, s, o, req, k, n, rows)
        col_req.append(req)
        col_k.append(k)
    value = float(h.getInfo().objective_function_value) + float(o.sum())
    face_r: list[IntArray] = []
    face_k: list[IntArray] = []
    for i in range(n):
        rc = _reduced_costs(int(s[i]), int(o[i]), int(hi[i]), float(pi[i]), P, Q, rows)
        ks = np.flatnonzero(rc <= FACE_TOL)
        face_r.append(np.full(ks.size, i))
        face_k.append(ks.astype(np.int64))
    return HorizonLP(s, o, int(instance.M), rows, literal, value, np.concatenate(face_r), np.concatenate(face_k),
                     rounds, int(sum(c.size for c in col_req)), time.perf_counter() - t0)


def _solve_columns(s: IntArray, o: IntArray, M: int, rows: int, req: IntArray, k: IntArray, method: str,
                   optimum: float | None) -> tuple[FloatArray, float]:
    """Solve the LP on the columns ``(req, k)`` by ``method``; returns ``(y, objective with Σo)``."""
    import highspy

    if method not in _OPTIONS:
        raise ValueError(f"unknown LP method {method!r}; known: {', '.join(METHODS)}")
    n = s.size
    h = _model(s, o, M, rows)
    secondary = method in ("face-min-s", "face-max-s")
    if secondary:
        if optimum is None:
            raise ValueError(f"{method} needs the LP optimum (it optimises over the optimal face)")
        sign = 1.0 if method == "face-min-s" else -1.0
        _add(h, s, o, req, k, n, rows, extra=sign * s[req] * k.astype(float))
        cut = optimum - float(o.sum())
        h.addRow(-np.inf, cut + VALUE_TOL * max(1.0, abs(optimum)) / 10, req.size,
                 np.arange(req.size, dtype=np.int32), k.astype(float))
    else:
        _add(h, s, o, req, k, n, rows)
    for key, value in _OPTIONS[method].items():
        h.setOptionValue(key, value)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"{method}: LP not solved to optimality: {h.getModelStatus()}")
    x = np.maximum(np.asarray(h.getSolution().col_value, dtype=np.float64), 0.0)
    mass = np.bincount(req, weights=x, minlength=n)
    y = np.bincount(req, weights=x * k, minlength=n) / mass
    return y, float(x @ k) + float(o.sum())


def solve_on_face(lp: HorizonLP, method: str) -> LPPoint:
    """An optimal solution of ``lp``'s Relax-LP found by ``method`` (:data:`METHODS`) on its face LP.

    Raises
    ------
    RuntimeError
        If the solve fails, or its objective is not the LP optimum within :data:`VALUE_TOL`
        (:data:`IPM_VALUE_TOL` for the interior-point methods).
    """
    t0 = time.perf_counter()
    y, value = _solve_columns(lp.prompts, lp.outputs, lp.M, lp.horizon, lp.face_req, lp.face_k, method, lp.value)
    tol = IPM_VALUE_TOL if method.startswith("ipm") else VALUE_TOL
    if abs(value - lp.value) > tol * max(1.0, abs(lp.value)):
        raise RuntimeError(f"{method}: objective {value} is not the LP optimum {lp.value}")
    return LPPoint(method, y, value, time.perf_counter() - t0, int(lp.face_req.size))


def face_spread(lp: HorizonLP) -> tuple[FloatArray, FloatArray]:
    """The least and the largest ``y_i`` over the LP's optimal face, for every request.

    ``2n`` LPs on the face LP with the objective cut at the optimum (dual simplex, each warm-started
    from the previous basis). Where ``lo == hi`` for every request, ``y`` is the same at *every*
    optimal solution — every vertex, the analytic centre, any interior point — so no choice of optimum
    can change Sorted-LP's or LP-Swap's order.
    """
    import highspy

    s, o, n, rows = lp.prompts, lp.outputs, lp.prompts.size, lp.horizon
    req, k = lp.face_req, lp.face_k
    h = _model(s, o, lp.M, rows)
    _add(h, s, o, req, k, n, rows, extra=np.zeros(req.size))
    cut = lp.value - float(o.sum())
    h.addRow(-np.inf, cut + VALUE_TOL * max(1.0, abs(lp.value)) / 10, req.size, np.arange(req.size, dtype=np.int32),
             k.astype(float))
    for key, value in _OPTIONS["dual-simplex"].items():
        h.setOptionValue(key, value)
    lo, hi = np.empty(n), np.empty(n)
    idx = np.arange(req.size, dtype=np.int32)
    for i in range(n):
        for sign, out in ((1.0, lo), (-1.0, hi)):
            h.changeColsCost(req.size, idx, np.where(req == i, sign * k, 0.0).astype(float))
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                raise RuntimeError(f"face spread of request {i}: {h.getModelStatus()}")
            out[i] = sign * float(h.getInfo().objective_function_value)
    return lo, hi


def solve_full(instance: Instance, horizon: int, literal: bool, method: str,
               optimum: float | None = None) -> LPPoint:
    """Relax-LP over ``horizon`` with every column written out, solved by ``method`` (small instances).

    ``optimum`` is needed by the ``face-*`` methods only.
    """
    t0 = time.perf_counter()
    s = np.array([r.prompt for r in instance.requests], dtype=np.int64)
    o = np.array([r.output for r in instance.requests], dtype=np.int64)
    hi = np.full(s.size, horizon) if literal else horizon - o
    req = np.repeat(np.arange(s.size), hi + 1)
    k = np.concatenate([np.arange(h + 1) for h in hi.tolist()]).astype(np.int64)
    y, value = _solve_columns(s, o, int(instance.M), int(horizon), req, k, method, optimum)
    return LPPoint(method, y, value, time.perf_counter() - t0, int(req.size))


def spearman(a: Sequence[float] | npt.NDArray[Any], b: Sequence[float] | npt.NDArray[Any]) -> float:
    """Spearman rank correlation (average ranks for ties); ``nan`` when either side is constant."""
    from scipy.stats import spearmanr

    if np.ptp(np.asarray(a, dtype=np.float64)) == 0 or np.ptp(np.asarray(b, dtype=np.float64)) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)
