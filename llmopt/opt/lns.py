"""Large-neighbourhood search over the hindsight IP: an upper-bound stage (``lns``).

Start from the best schedule the earlier stages found, then repeat: *destroy* — free a
few requests (``free`` of them), chosen as the requests whose starts lie near a random
request's start, whose completions lie near a random request's completion, or at random;
*repair* — re-place the freed requests optimally while every other request keeps its
start, by solving the hindsight IP (1)–(4) of the freed requests alone, in windows of
``±span`` steps around their current starts, with the memory of the fixed requests
subtracted from ``M`` in every row (3). The sub-IP's optimum is never worse than the
current placement (which it contains), so TEL never rises; a repair that keeps TEL equal
but moves starts is kept too (it lets the search drift across plateaus).

Each sub-IP is small (``free × (2·span + 1)`` columns) and is solved by HiGHS
(``highspy``, warm-started at the current placement) with a node limit rather than a clock limit, so the result
depends only on the instance, the start schedule and the seed (DESIGN §4 invariant 3) —
unless a ``deadline`` stops the search early (the schedule's ``policy`` then says how many
iterations ran).

Why an IP and not CP-SAT for the repair: measured on J §5.1 instances (n = 27–68), CP-SAT
on the whole instance (:mod:`llmopt.opt.cp_sat`) did not improve its hint within 10–20 s with
one or two workers, whereas these sub-IPs solve in well under a second.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from llmopt.model.instance import Instance
from llmopt.model.schedule import Schedule, schedule_from_starts

if TYPE_CHECKING:
    from llmopt.opt.upper_bounds import SearchContext

__all__ = ["lns", "lns_stage", "DEFAULT_FREE", "DEFAULT_SPAN", "SUB_IP_NODE_LIMIT"]

#: Requests freed per iteration.
DEFAULT_FREE = 5
#: A freed request may move this many steps either way (within its certified window).
DEFAULT_SPAN = 25
#: Branch-and-bound nodes per sub-IP (a deterministic limit; the sub-IPs rarely reach it).
SUB_IP_NODE_LIMIT = 200


def _add_usage(use: np.ndarray, o: np.ndarray, s: np.ndarray, k: np.ndarray, origin: int, sign: int) -> None:
    """Add (``sign = 1``) or remove (``−1``) the memory of requests started at ``k`` to the dense
    profile ``use`` (``use[t − origin]`` = usage at time ``t``)."""
    for oi, si, ki in zip(o.tolist(), s.tolist(), k.tolist(), strict=True):
        lo = ki + 1 - origin
        use[lo:lo + oi] += sign * (si + np.arange(1, oi + 1))


def _repair(o: np.ndarray, s: np.ndarray, lo: np.ndarray, hi: np.ndarray, cap: np.ndarray, origin: int,
            current: np.ndarray) -> np.ndarray | None:
    """Optimal starts of the freed requests (windows ``lo … hi``) under capacities ``cap[t − origin]``.

    The IP (1)–(4) restricted to these requests: ``min Σ k·x`` subject to one start each and
    ``Σ (s + t − k)·x <= cap_t``, warm-started at ``current`` (feasible by construction).
    Returns ``None`` when HiGHS ends without a solution."""
    import highspy

    from llmopt.solvers.highs import new_highs

    widths = hi - lo + 1
    col_req = np.repeat(np.arange(len(o)), widths)
    col_k = lo[col_req] + (np.arange(int(widths.sum())) - np.repeat(np.cumsum(widths) - widths, widths))
    oc = o[col_req]
    entry_col = np.repeat(np.arange(col_req.size), oc)
    j = np.arange(int(oc.sum())) - np.repeat(np.cumsum(oc) - oc, oc) + 1
    used, row = np.unique(col_k[entry_col] + j - origin, return_inverse=True)
    n_req = len(o)
    rows = np.concatenate([col_req, n_req + row])
    vals = np.concatenate([np.ones(col_req.size), (s[col_req][entry_col] + j).astype(float)])
    A = sp.csc_matrix((vals, (rows, np.concatenate([np.arange(col_req.size), entry_col]))),
                      shape=(n_req + used.size, col_req.size))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = col_req.size, n_req + used.size
    lp.col_cost_ = (col_k - origin).astype(float)
    lp.col_lower_, lp.col_upper_ = np.zeros(col_req.size), np.ones(col_req.size)
    lp.row_lower_ = np.concatenate([np.ones(n_req), np.full(used.size, -highspy.kHighsInf)])
    lp.row_upper_ = np.concatenate([np.ones(n_req), cap[used].astype(float)])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_ = A.indptr.astype(np.int32), A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    lp.integrality_ = [highspy.HighsVarType.kInteger] * col_req.size
    h = new_highs(highspy)
    for key, value in (("output_flag", False), ("threads", 1), ("random_seed", 0),
                       ("mip_max_nodes", SUB_IP_NODE_LIMIT)):
        h.setOptionValue(key, value)
    h.passModel(lp)
    warm = highspy.HighsSolution()
    warm.col_value = list((col_k == current[col_req]).astype(float))
    warm.value_valid = True
    h.setSolution(warm)
    h.run()
    if h.getInfo().primal_solution_status != 2:  # 2: a feasible solution
        return None
    x = np.asarray(h.getSolution().col_value)
    chosen = np.flatnonzero(x > 0.5)
    out = np.empty(n_req, dtype=np.int64)
    out[col_req[chosen]] = col_k[chosen]
    return out


def lns(
    instance: Instance,
    start: Schedule,
    *,
    iterations: int,
    seed: int = 0,
    free: int = DEFAULT_FREE,
    span: int = DEFAULT_SPAN,
    deadline: float | None = None,
) -> Schedule:
    """Improve ``start`` by ``iterations`` destroy-and-repair steps (see the module docstring).

    Parameters
    ----------
    instance : Instance
        The instance ``start`` schedules.
    start : Schedule
        A feasible schedule (final starts only are used; evictions are dropped).
    iterations : int
        Number of sub-IPs solved.
    seed : int
        Seed of the choice of neighbourhoods.
    free, span : int
        Requests freed per iteration, and how far each may move.
    deadline : float, optional
        ``time.perf_counter()`` value after which the search stops early.

    Returns
    -------
    Schedule
        A schedule with no evictions and TEL ``<= start``'s (rebuilt from its starts).
    """
    n = instance.n
    reqs = instance.requests
    if n == 0 or iterations <= 0:
        return schedule_from_starts(instance, dict(start.starts), policy=start.policy)
    rng = np.random.default_rng(seed)
    a = np.array([r.arrival for r in reqs], dtype=np.int64)
    s = np.array([r.prompt for r in reqs], dtype=np.int64)
    o = np.array([r.output for r in reqs], dtype=np.int64)
    k = np.array([start.starts[r.id] for r in reqs], dtype=np.int64)
    origin = int(a.min())
    total_o = int(o.sum())
    # Every start, now and later, is <= a + (initial slack): TEL only falls. One profile covers them all
    # and is updated by the moved requests only.
    length = int(max((k + o).max(), (a + o).max() + int((k - a).sum())) - origin + 2)
    use = np.zeros(length, dtype=np.int64)
    _add_usage(use, o, s, k, origin, 1)
    q = min(free, n)
    done = 0
    for _ in range(iterations):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        done += 1
        tel = int((k + o - a).sum())
        slack = tel - total_o  # no request of an improving schedule waits longer (certified_windows)
        centre = int(rng.integers(n))
        kind = int(rng.integers(3))
        if kind == 0:
            chosen = np.argsort(np.abs(k - k[centre]), kind="stable")[:q]
        elif kind == 1:
            c = k + o
            chosen = np.argsort(np.abs(c - c[centre]), kind="stable")[:q]
        else:
            chosen = rng.choice(n, size=q, replace=False)
        chosen = np.sort(chosen)
        lo = np.maximum(a[chosen], k[chosen] - span)
        hi = np.minimum(k[chosen] + span, a[chosen] + slack)  # >= k: no wait exceeds the total slack
        _add_usage(use, o[chosen], s[chosen], k[chosen], origin, -1)
        new = _repair(o[chosen], s[chosen], lo, hi, instance.M - use, origin, k[chosen])
        if new is not None and new.sum() <= k[chosen].sum():
            k[chosen] = new
        _add_usage(use, o[chosen], s[chosen], k[chosen], origin, 1)
    starts = {r.id: int(k[i]) for i, r in enumerate(reqs)}
    return schedule_from_starts(instance, starts, policy=f"lns({done} iterations)")


def lns_stage(instance: Instance, ctx: SearchContext) -> Schedule:
    """Upper-bound stage ``lns``.

    Parameters
    ----------
    instance : Instance
    ctx : SearchContext
        :func:`lns` runs ``ctx.lns_iterations`` sub-IPs with ``ctx.seed`` until ``ctx.deadline``,
        from the best verified schedule found so far (:func:`~llmopt.opt.upper_bounds.best_verified`).

    Returns
    -------
    Schedule
    """
    from llmopt.opt.upper_bounds import best_verified

    return lns(instance, best_verified(instance, ctx), iterations=ctx.lns_iterations, seed=ctx.seed,
               deadline=ctx.deadline)
