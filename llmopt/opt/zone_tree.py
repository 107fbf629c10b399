"""Bound stage ``zone-tree``: branch-and-bound on the zone-LP, branching on start windows (issue 23).

Why. The zone-LP (``zone-lp``) is 0.1–1.2 % below proven OPT at n = 12–16 (J AM1) but 5–10 % below
at AM1 n = 20 and AM2 n = 13. HiGHS's branch-and-cut on the IP with zone rows closes part of that,
but its bound is the solver's word, not a certificate. This stage branches on a request's *start
window*: a node splits request ``i``'s window at ``t`` into ``k_i <= t`` and ``k_i >= t + 1`` — a
split of its completion time ``C_i = k_i + o_i`` at ``t + o_i``. The issue asked for branching on the
completion order of conflicting pairs (``C_i <= C_j`` or ``C_j <= C_i``); window splits reach such
orders one request at a time and, unlike an order constraint, keep every node an ordinary zone-LP over
smaller windows, so the node LP, its duals and the checker's Lagrangian are the root's, unchanged.

What it measures (``results/opt/zone-tree``, 120 s each on one thread, the OPT-frontier instances): its
checked bound is within a fraction of a percent of HiGHS's branch-and-cut bound, above it on the
larger instances and below it at AM1 n = 20 and AM2 n = 13, and it proves AM1 n = 16 only; it moves no
frontier point.

How.

* **Node LP.** One zone-LP (:func:`llmopt.formulations.zones.with_zone_rows`, split ``⌈M/2⌉``) over
  the root windows, one column per request and start (identical requests are *not* merged: a split
  concerns one request), held live in :class:`llmopt.solvers.warm_lp.WarmLP`; a node fixes the
  columns outside its box to 0 and re-solves by dual simplex from the last basis. The LP is solved in
  full at each node (no pricing), which is what n <= 40 allows; at larger n the node LP would need
  ``zone-colgen``'s column generation (branch-and-price proper), which is not built.
* **Node bound.** The node LP's memory-row and zone-row duals are a Lagrangian certificate for the
  node's box; its value is computed by the checker's own function
  (:func:`llmopt.verify.clique_certificate.lagrangian_with_cliques`), and that checked value is what
  prunes. A node whose LP is infeasible is closed by scaling HiGHS's dual ray until the checked value
  passes the incumbent (or, failing that, keeps its parent's multipliers).
* **Search.** Best first (least bound). Branch on the request whose start distribution in the LP
  solution is split most evenly around its weighted median, weighted by its peak ``s + o``; split at
  that median. Every node's LP solution also seeds a schedule: the serial scheme
  (:func:`llmopt.opt.serial_schedule.serial_starts`) in order of the LP's mean completion times; an
  integral LP solution is a schedule itself. Both are verified before they replace the incumbent.
* **Limits.** A node limit and a time limit; at either, the open nodes become leaves with their
  parent's multipliers, so the tree is still a certificate.
* **Certificate.** The tree (:mod:`llmopt.verify.tree_certificate`): the checker re-walks it from its
  own certified windows, proves the zones again and recomputes every leaf. The bound is the least
  leaf value; when it reaches the incumbent the incumbent is optimal.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus
from llmopt.model.windows import StartWindows
from llmopt.opt.bounds import (
    BoundContext,
    BoundResult,
    _no_bound,
    _too_large,
    _verdict,
    _without_column_bounds,
    seed_schedule,
    time_budget,
)
from llmopt.verify.tree_certificate import TreeLeaf, TreeSplit

__all__ = ["TreeResult", "DEFAULT_NODE_LIMIT", "DEFAULT_STRONG", "DEFAULT_TIME_LIMIT", "MAX_REQUESTS", "zone_tree",
           "zone_tree_bound"]

#: Nodes a tree explores unless told otherwise.
DEFAULT_NODE_LIMIT = 5_000
#: Seconds the stage runs when the context sets no time limit.
DEFAULT_TIME_LIMIT = 60.0
#: Largest instance the stage takes: every node LP holds every start of every request.
MAX_REQUESTS = 60
#: Branching candidates probed by strong branching: 4 reached the best bound in 60 s on J AM2 n = 13
#: (seed 0; 1, 4 and 10 tried).
DEFAULT_STRONG = 4
#: Integrality tolerance of an LP solution read as a schedule.
INTEGRAL_TOL = 1e-6

Multipliers = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class TreeResult:
    """Outcome of :func:`zone_tree`. Missing values are ``None``.

    Attributes
    ----------
    status : SolveStatus
        ``OPTIMAL`` when every leaf's checked bound reached the incumbent (the incumbent is then
        optimal); ``TIME_LIMIT`` at the time limit; ``NOT_SOLVED`` at the node limit, when the root
        LP was not solved, or when the tree closed with its least leaf below the incumbent (round-off).
    bound : float or None
        The least leaf value (checked by the checker's function as the tree was built; the stage
        re-checks the whole tree).
    incumbent : int or None
        TEL of the best verified schedule, ``starts`` that schedule.
    nodes : tuple
        The tree (:class:`~llmopt.verify.tree_certificate.TreeSplit` / ``TreeLeaf``), root first.
    explored : int
        Node LPs solved.
    runtime_s : float
    message : str
    """

    status: SolveStatus
    bound: float | None
    incumbent: int | None
    starts: dict[str, int] | None = field(repr=False)
    nodes: tuple[TreeSplit | TreeLeaf, ...] = field(repr=False)
    explored: int = 0
    runtime_s: float = 0.0
    message: str = ""


@dataclass
class _Open:
    """A node of the search: its tree index and box, and a checked bound with the multipliers that
    certify it — its parent's until the node's own LP is solved, then its own."""

    index: int
    box: dict[int, tuple[int, int]]
    bound: float
    lam: Multipliers
    mu: Multipliers


def _closes(value: float, incumbent: int) -> bool:
    """No schedule of TEL below ``incumbent`` (an integer) has TEL >= ``value``'s ceiling."""
    return math.isfinite(value) and math.ceil(value - 1e-6) >= incumbent


def _box_mask(box: Mapping[int, tuple[int, int]], col_req: np.ndarray, col_k: np.ndarray) -> np.ndarray:
    keep = np.ones(col_req.size, dtype=bool)
    for i, (lo, hi) in box.items():
        on = col_req == i
        keep &= ~on | ((col_k >= lo) & (col_k <= hi))
    return keep


def _candidates(x: np.ndarray, col_req: np.ndarray, col_k: np.ndarray, peak: np.ndarray
                ) -> list[tuple[float, int, int]]:
    """``(score, request, t)`` for every request whose LP start mass is split, best first: the split at
    its weighted median, scored by the lesser side's mass times the request's peak."""
    out = []
    on = np.flatnonzero(x > INTEGRAL_TOL)
    for i in np.unique(col_req[on]):
        cols = on[col_req[on] == i]
        if cols.size < 2:
            continue
        order = np.argsort(col_k[cols], kind="stable")
        k, w = col_k[cols][order], x[cols][order]
        below = np.cumsum(w)
        j = int(np.searchsorted(below, 0.5 * below[-1]))
        j = min(j, k.size - 2)  # both sides keep some mass
        out.append((float(min(below[j], below[-1] - below[j])) * float(peak[i]), int(i), int(k[j])))
    out.sort(key=lambda c: (-c[0], c[1]))
    return out


_FAR = 1 << 62  # an open end of a box side


def _child_boxes(box: Mapping[int, tuple[int, int]], i: int, t: int
                 ) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
    """The boxes of a split of request ``i`` at ``t``: ``k_i <= t`` and ``k_i >= t + 1``."""
    lo, hi = box.get(i, (-_FAR, _FAR))
    return {**box, i: (lo, min(hi, t))}, {**box, i: (max(lo, t + 1), hi)}


class _Search:
    """The state of one :func:`zone_tree` run: the live LP, the tree so far, the incumbent."""

    def __init__(self, instance: Instance, upper_bound_starts: Mapping[str, int], windows: StartWindows,
                 split: int, threads: int) -> None:
        from llmopt.formulations.hindsight_ip import formulate
        from llmopt.formulations.zones import with_zone_rows
        from llmopt.solvers.warm_lp import WarmLP
        from llmopt.verify.certificates import certified_windows
        from llmopt.verify.checker import check_schedule
        from llmopt.verify.zone_certificate import certified_zones

        report = check_schedule(instance, upper_bound_starts)
        if not report.ok or report.tel is None:
            raise ValueError(f"upper_bound_starts is not a feasible schedule: {report.violations[:1]}")
        self.instance, self.ub_starts = instance, upper_bound_starts
        self.incumbent, self.best_starts = int(report.tel), dict(upper_bound_starts)
        # the LP's windows cut to the checker's: every box the search forms then holds a start there
        c_lo, c_hi = certified_windows(instance, upper_bound_starts)
        lo = tuple(max(int(a), int(b)) for a, b in zip(windows.lo, c_lo, strict=True))
        hi = tuple(min(int(a), int(b)) for a, b in zip(windows.hi, c_hi, strict=True))
        windows = StartWindows(lo, hi, windows.horizon, windows.reason + ", cut to the certified windows")
        self.model = _without_column_bounds(with_zone_rows(formulate(instance, windows, aggregate=False),
                                                           instance, split).relax())
        x_block = self.model.cols("x")
        first = np.asarray(self.model.rows("eq2_assignment").labels["first"])
        self.col_req = first[np.asarray(x_block.labels["class"])]
        self.col_k = np.asarray(x_block.labels["k"])
        self.req_cols = [np.flatnonzero(self.col_req == i) for i in range(instance.n)]
        self.outputs = np.array([r.output for r in instance.requests], dtype=np.int64)
        self.peak = np.array([r.prompt + r.output for r in instance.requests], dtype=np.int64)
        self.ids = [r.id for r in instance.requests]
        self.zones = certified_zones(instance, split)
        self.lp = WarmLP(self.model, threads)
        self.nodes: list[TreeSplit | TreeLeaf | None] = [None]
        self.leaf_values: list[float] = []
        self.counts = {"infeasible": 0, "ray-closed": 0, "unsolved": 0, "cut": 0}

    # --- certificates -----------------------------------------------------------------------------
    def checked(self, lam: Multipliers, mu: Multipliers, box: Mapping[int, tuple[int, int]]) -> float:
        """The checker's own value of the zone Lagrangian over ``box``."""
        from llmopt.verify.clique_certificate import lagrangian_with_cliques

        return lagrangian_with_cliques(self.instance, lam, [(self.zones, mu)], self.ub_starts, box=box)

    def multipliers(self, row_dual: np.ndarray) -> tuple[Multipliers, Multipliers]:
        from llmopt.opt.bounds import zone_multipliers

        return zone_multipliers(self.model, row_dual)

    def leaf(self, index: int, lam: Multipliers, mu: Multipliers, value: float) -> None:
        self.nodes[index] = TreeLeaf(lam, mu)
        self.leaf_values.append(value)

    def branch(self, node: _Open, i: int, t: int) -> tuple[int, int]:
        """Make ``node`` a split of request ``i`` at ``t``; the indices of its two (undefined) children."""
        low, high = len(self.nodes), len(self.nodes) + 1
        self.nodes[node.index] = TreeSplit(i, t, low, high)
        self.nodes.extend([None, None])
        return low, high

    def ray_multipliers(self, ray: np.ndarray, box: Mapping[int, tuple[int, int]]
                        ) -> tuple[Multipliers, Multipliers] | None:
        """Multipliers along an infeasible node's dual ray whose checked value passes the incumbent."""
        for sign in (-1.0, 1.0):
            (lt, lv), (mt, mv) = self.multipliers(-np.maximum(sign * ray, 0.0))
            if lv.size + mv.size == 0:
                continue
            scale = 1.0
            for _ in range(40):
                lam, mu = (lt, scale * lv), (mt, scale * mv)
                if _closes(self.checked(lam, mu, box), self.incumbent):
                    return lam, mu
                scale *= 4.0
        return None

    # --- schedules ---------------------------------------------------------------------------------
    def offer(self, starts: dict[str, int]) -> None:
        """Keep ``starts`` if the checker accepts it and it beats the incumbent."""
        from llmopt.verify.checker import check_schedule

        rep = check_schedule(self.instance, starts)
        if rep.ok and rep.tel is not None and rep.tel < self.incumbent:
            self.incumbent, self.best_starts = int(rep.tel), starts

    def offer_from_lp(self, x: np.ndarray) -> None:
        """An integral LP solution is a schedule; any solution orders the serial scheme."""
        from llmopt.opt.serial_schedule import serial_starts

        on = x > INTEGRAL_TOL
        if np.all(np.abs(x[on] - 1.0) <= INTEGRAL_TOL):
            self.offer({self.ids[int(i)]: int(k) for i, k in zip(self.col_req[on], self.col_k[on], strict=True)})
        done = np.bincount(self.col_req, weights=x * (self.col_k + self.outputs[self.col_req]),
                           minlength=self.instance.n)
        self.offer(serial_starts(self.instance, [self.ids[i] for i in np.argsort(done, kind="stable")]))

    # --- node steps --------------------------------------------------------------------------------
    def upper(self, box: Mapping[int, tuple[int, int]]) -> np.ndarray:
        """Column upper bounds that keep the starts inside ``box`` only."""
        return np.where(_box_mask(box, self.col_req, self.col_k), np.inf, 0.0)

    def fix_by_reduced_cost(self, node: _Open, rc: np.ndarray, upper: np.ndarray) -> _Open:
        """Cut off the starts that lie in no schedule better than the incumbent.

        For the LP's own optimum ``z`` and duals, a start ``k`` of request ``i`` with reduced cost
        ``d`` lies in no schedule of TEL ``< z + d`` (the box with ``i``'s window cut to such starts
        has Lagrangian value ``>= z + d``). Here ``z`` is the checked value, which may differ from the
        LP's by round-off or narrower checker windows, so the rule only *proposes* cuts: the starts
        below (above) the least (greatest) start with ``z + d <= incumbent − 1`` become a leaf with the
        node's multipliers, kept only if the checker's value there closes it (that check is what
        makes a cut safe). Returns the node that remains, its box narrowed."""
        for i, cols in enumerate(self.req_cols):
            cols = cols[upper[cols] > 0]
            if cols.size < 2:
                continue
            ks = self.col_k[cols]
            kept = ks[node.bound + rc[cols] <= self.incumbent - 1 + 1e-6]
            if kept.size == 0:
                continue
            for t, cut_low in ((int(kept.min()) - 1, True), (int(kept.max()), False)):
                if t < ks.min() or t >= ks.max():
                    continue
                low_box, high_box = _child_boxes(node.box, i, t)
                cut_box, rest_box = (low_box, high_box) if cut_low else (high_box, low_box)
                cut_value = self.checked(node.lam, node.mu, cut_box)
                if not _closes(cut_value, self.incumbent):
                    continue
                low, high = self.branch(node, i, t)
                cut, rest = (low, high) if cut_low else (high, low)
                self.leaf(cut, node.lam, node.mu, cut_value)
                self.counts["cut"] += 1
                node = _Open(rest, rest_box, node.bound, node.lam, node.mu)
        return node

    def choose_split(self, node: _Open, x: np.ndarray, value: float, strong: int,
                     deadline: float | None = None) -> tuple[int, int] | None:
        """The split of the best of ``strong`` candidates by the product of its children's LP gains
        (strong branching; the first candidate alone when ``strong <= 1``). Must follow the node's
        own LP solve: each probe re-solves from the basis that solve left (J AM1 n = 40, M = 40, ten
        nodes: 25.8 s without the restart from it, 16.3 s with; one paired run)."""
        cands = _candidates(x, self.col_req, self.col_k, self.peak)[:max(1, strong)]
        if len(cands) <= 1:
            return (cands[0][1], cands[0][2]) if cands else None
        best, choice = -1.0, None
        start = self.lp.basis()  # the node's optimal basis: every probe starts from it
        for _, i, t in cands:
            gains = []
            for box in _child_boxes(node.box, i, t):
                left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
                sol = self.lp.solve(self.upper(box), time_limit=left, basis=start)
                gains.append(1e9 if sol.objective is None else max(sol.objective - value, 1e-6))
            if gains[0] * gains[1] > best:
                best, choice = gains[0] * gains[1], (i, t)
        return choice


def zone_tree(
    instance: Instance,
    *,
    upper_bound_starts: Mapping[str, int],
    windows: StartWindows,
    split: int,
    node_limit: int = DEFAULT_NODE_LIMIT,
    time_limit: float | None = None,
    threads: int = 1,
    strong: int = DEFAULT_STRONG,
    progress: Callable[[str], None] | None = None,
) -> TreeResult:
    """Branch-and-bound on the zone-LP over start windows (module docstring).

    Parameters
    ----------
    instance : Instance
    upper_bound_starts : mapping
        A verified schedule: the first incumbent, and what the checker derives its windows from.
    windows : StartWindows
        The root LP's windows (:func:`~llmopt.model.windows.start_windows` of that schedule's TEL).
    split : int
        Zone split ``h``.
    node_limit : int
        Most nodes solved (strong-branching probes not counted).
    time_limit : float, optional
        Seconds; the node LP in progress stops at it too.
    threads : int
    strong : int
        Candidates probed per branching (1: no probing).
    progress : callable, optional
        Called with a one-line status every 5 s.
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    tree = _Search(instance, upper_bound_starts, windows, split, threads)
    zero: Multipliers = (np.zeros(0, dtype=np.int64), np.zeros(0))
    heap: list[tuple[float, int, _Open]] = [(-math.inf, 0, _Open(0, {}, -math.inf, zero, zero))]
    explored = 0
    status, message = SolveStatus.OPTIMAL, ""
    last_print = t0
    while heap:
        if explored >= node_limit:
            status, message = SolveStatus.NOT_SOLVED, f"node limit {node_limit} reached"
            break
        if deadline is not None and time.perf_counter() >= deadline:
            status, message = SolveStatus.TIME_LIMIT, f"time limit after {explored} nodes"
            break
        _, _, node = heapq.heappop(heap)
        if _closes(node.bound, tree.incumbent):  # the incumbent improved since it was pushed
            tree.leaf(node.index, node.lam, node.mu, node.bound)
            continue
        upper = tree.upper(node.box)
        sol = tree.lp.solve(upper, time_limit=None if deadline is None else max(deadline - time.perf_counter(), 1e-3))
        explored += 1
        if sol.status is SolveStatus.TIME_LIMIT:
            heapq.heappush(heap, (node.bound, node.index, node))  # left open: closed below
            status, message = SolveStatus.TIME_LIMIT, f"time limit in node LP {explored}"
            break
        if sol.status is SolveStatus.INFEASIBLE:
            tree.counts["infeasible"] += 1
            ray = None if sol.dual_ray is None else tree.ray_multipliers(sol.dual_ray, node.box)
            if ray is None:
                tree.leaf(node.index, node.lam, node.mu, node.bound)
            else:
                tree.counts["ray-closed"] += 1
                tree.leaf(node.index, *ray, tree.checked(*ray, node.box))
            continue
        if sol.x is None or sol.row_dual is None:  # numerical trouble: the parent's certificate stays
            tree.counts["unsolved"] += 1
            tree.leaf(node.index, node.lam, node.mu, node.bound)
            continue
        lam, mu = tree.multipliers(sol.row_dual)
        value = tree.checked(lam, mu, node.box)
        if value >= node.bound:
            node = _Open(node.index, node.box, value, lam, mu)
            tree.offer_from_lp(sol.x)
            if sol.col_dual is not None and not _closes(value, tree.incumbent):
                node = tree.fix_by_reduced_cost(node, sol.col_dual, upper)
        else:  # round-off: the parent's multipliers certify more; the LP still guides the search
            tree.offer_from_lp(sol.x)
        choice = None
        if not _closes(node.bound, tree.incumbent):
            choice = tree.choose_split(node, sol.x, node.bound, strong, deadline)
        if choice is None:  # closed by its bound, or an integral LP solution: the node's optimum
            tree.leaf(node.index, node.lam, node.mu, node.bound)
            continue
        i, t = choice
        for j, box in zip(tree.branch(node, i, t), _child_boxes(node.box, i, t), strict=True):
            heapq.heappush(heap, (node.bound, j, _Open(j, box, node.bound, node.lam, node.mu)))
        now = time.perf_counter()
        if progress is not None and now - last_print > 5.0:
            low = min([b for b, _, _ in heap] + tree.leaf_values)
            progress(f"zone-tree: {explored} nodes, {len(heap)} open, bound {low:.1f}, incumbent {tree.incumbent}")
            last_print = now
    for open_bound, _, node in heap:  # open nodes: leaves with the multipliers their parent certified
        tree.leaf(node.index, node.lam, node.mu, open_bound)
    nodes = tuple(n for n in tree.nodes if n is not None)
    if len(nodes) != len(tree.nodes):
        raise AssertionError("a tree node was left undefined")
    least = min(tree.leaf_values, default=-math.inf)
    bound = None if math.isinf(least) else least  # -inf: the root was never solved
    if status is SolveStatus.OPTIMAL:
        if bound is None or not _closes(bound, tree.incumbent):
            status, message = SolveStatus.NOT_SOLVED, "tree closed below the incumbent (numerical trouble)"
        else:
            message = f"tree closed after {explored} nodes: the incumbent is optimal"
    counts = ", ".join(f"{v} {k}" for k, v in tree.counts.items() if v)
    if counts:
        message += f" ({counts})"
    return TreeResult(status, bound, tree.incumbent, tree.best_starts, nodes, explored,
                      time.perf_counter() - t0, message)


def zone_tree_bound(instance: Instance, ctx: BoundContext | None = None) -> BoundResult:
    """``zone-tree``: the least leaf bound of :func:`zone_tree`, re-checked over the whole tree.

    ``ctx.upper_bound_starts`` (else MC-SF's schedule) is the first incumbent and bounds the windows;
    ``ctx.time_limit`` (default :data:`DEFAULT_TIME_LIMIT`) and ``ctx.deadline`` stop the search, whose
    open nodes are then leaves certified by their parents' multipliers.
    """
    from llmopt.formulations.zones import default_split
    from llmopt.model.windows import start_windows
    from llmopt.verify.checker import check_schedule
    from llmopt.verify.tree_certificate import check_tree_certificate

    ctx = ctx or BoundContext()
    t0 = time.perf_counter()
    if instance.n == 0:
        return _no_bound("zone-tree", "no requests", t0)
    if instance.n > MAX_REQUESTS:
        return _no_bound("zone-tree", f"not run: {instance.n} requests (more than {MAX_REQUESTS}); every node LP "
                         "holds every start of every request — use zone-colgen", t0)
    seed = seed_schedule(instance, ctx)
    tel = check_schedule(instance, seed).tel
    windows = ctx.windows if ctx.windows is not None else start_windows(instance, tel)
    skipped = _too_large("zone-tree", instance, windows, ctx, t0)
    if skipped is not None:
        return skipped
    split = default_split(instance.M)
    res = zone_tree(instance, upper_bound_starts=seed, windows=windows, split=split,
                    time_limit=time_budget(ctx, DEFAULT_TIME_LIMIT), threads=ctx.threads)
    if res.bound is None:
        return _no_bound("zone-tree", f"no bound: {res.message}", t0)
    check = check_tree_certificate(instance, res.nodes, split, seed)
    what = (f"tree bound ({res.status}: {res.message}; {res.explored} node LPs, {check.leaves} leaves, "
            f"depth {check.depth}, incumbent {res.incumbent})")
    return _verdict("zone-tree", "zone-tree-checked", check.bound, res.bound, what, t0)
