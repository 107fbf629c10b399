"""A Dantzig–Wolfe configuration master: the KV cache at each time as a multiset of request sizes.

Why. The memory row of time ``t`` is a knapsack: the requests running then hold ``u_i(t) = s_i + t − k_i``
tokens each and together at most ``M``. The LP relaxation only keeps the knapsack's *weighted sum*, so
it can run, say, 1.9 requests of 21 tokens at ``M = 40`` (0.95 each of two starts), which no integer
schedule can. Dantzig–Wolfe decomposition of the memory rows by time replaces each with the convex
hull of its integer *configurations*.

Master. A configuration of time ``t`` is a multiset ``γ`` of sizes ``w ∈ 2 … M`` (``s_i >= 1`` makes
every size ``>= 2``) with ``Σ_{w ∈ γ} w <= M``; ``γ(w)`` is how often ``w`` occurs. Columns ``z_{t,γ} >= 0``
join the hindsight LP's (``x``, with its memory and zone rows) through

* ``config_link`` rows, one per time ``t`` and size ``w`` some start can hold then:
  ``Σ_{(c,k): s_c + t − k = w, k < t <= k + o_c} x_{c,k} − Σ_γ γ(w)·z_{t,γ} <= 0``;
* ``config_convexity`` rows, one per time: ``Σ_γ z_{t,γ} <= 1``.

**Validity.** Any feasible schedule gives a solution: ``x`` its starts and, at each ``t``, ``z_{t,γ} = 1``
for ``γ`` the sizes of the requests running at ``t`` (a configuration, since memory ``<= M``). So the
master's LP optimum is ``<= OPT`` (it is a relaxation), and it is ``>=`` the LP without these rows
(more rows on ``x``; the configuration columns only serve them). Its Lagrangian dual, what the checker
re-derives (:mod:`llmopt.verify.cut_certificate`): for the link duals ``η_t(w) >= 0``, the rows
``Σ_{i running at t} η_t(u_i(t)) <= K(η_t)`` (``K`` the unbounded-knapsack optimum) are valid.

Aggregating by size (not by request) is the price of a cheap master: a configuration may hold one size
more often than requests of that size run, and it forgets which request holds it. The master is
therefore the convex hull of the *size* knapsack per time, weaker than one over (request, start)
items, but with ``T·M`` link rows instead of one per memory nonzero.

Pricing (:func:`price_configurations`): the reduced cost of ``z_{t,γ}`` is ``π_t − Σ_w γ(w)·η_t(w)``
(``π_t >= 0`` the convexity dual), so the best column of time ``t`` is an unbounded knapsack over
``w = 2 … M`` with values ``η_t(w)``, solved by dynamic programming over the capacity for all times at
once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from llmopt.model.canonical import Block, CanonicalModel
from llmopt.model.instance import Instance

__all__ = ["Configuration", "schedule_configurations", "with_configuration_master", "configuration_entries",
           "price_configurations", "link_tables"]

#: ``(t, sizes)``: a configuration of time ``t``, its sizes sorted (a multiset).
Configuration = tuple[int, tuple[int, ...]]


def schedule_configurations(instance: Instance, starts: Mapping[str, int]) -> list[Configuration]:
    """The configurations a schedule uses: at each time some request runs, the sizes of those running."""
    at: dict[int, list[int]] = {}
    for r in instance.requests:
        k = int(starts[r.id])
        for j in range(1, r.output + 1):
            at.setdefault(k + j, []).append(r.prompt + j)
    return [(t, tuple(sorted(sizes))) for t, sizes in sorted(at.items())]


def _link_index(model: CanonicalModel, M: int) -> tuple[dict[int, int], dict[int, int]]:
    """``({t·(M+1) + w: row}, {t: row})``: absolute rows of the ``config_link`` and ``config_convexity`` blocks."""
    link, conv = model.rows("config_link"), model.rows("config_convexity")
    keys = np.asarray(link.labels["t"]) * (M + 1) + np.asarray(link.labels["w"])
    return ({int(k): link.start + r for r, k in enumerate(keys.tolist())},
            {int(t): conv.start + r for r, t in enumerate(np.asarray(conv.labels["t"]).tolist())})


def configuration_entries(model: CanonicalModel, configs: Sequence[Configuration], M: int
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, j, values)``: the entries of the columns ``z`` of ``configs`` (``j`` = position in ``configs``)
    in ``model``'s ``config_link`` rows (``−γ(w)``) and ``config_convexity`` rows (1), absolute row indices."""
    index, conv_index = _link_index(model, M)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for j, (t, sizes) in enumerate(configs):
        ws, counts = np.unique(np.asarray(sizes, dtype=np.int64), return_counts=True)
        for w, cnt in zip(ws.tolist(), counts.tolist(), strict=True):
            r = index.get(int(t) * (M + 1) + w)
            if r is not None:
                rows.append(r)
                cols.append(j)
                vals.append(-float(cnt))
        if int(t) in conv_index:
            rows.append(conv_index[int(t)])
            cols.append(j)
            vals.append(1.0)
    return np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), np.asarray(vals, dtype=float)


def with_configuration_master(model: CanonicalModel, instance: Instance,
                              configs: Sequence[Configuration]) -> CanonicalModel:
    """``model`` (an LP over the hindsight IP's ``x`` with its ``eq3_memory`` block) plus the link and
    convexity rows of the module docstring and one column ``z`` per configuration.

    The new rows are the blocks ``config_link`` (labels ``t``, ``w``) and ``config_convexity`` (label
    ``t``); the new columns the block ``z`` (label ``t``), after every existing column. A configuration
    at a time without link rows, or a size without its link row, adds nothing there (such a row would
    only bound ``z`` by 0 from below).
    """
    mem = model.rows("eq3_memory")
    sub = model.A[mem.slice].tocoo()
    t_of = np.asarray(mem.labels["t"], dtype=np.int64)[sub.row]
    w_of = np.rint(sub.data).astype(np.int64)
    M = instance.M
    keys, link_row = np.unique(t_of * (M + 1) + w_of, return_inverse=True)
    n_link = keys.size
    link_t, link_w = keys // (M + 1), keys % (M + 1)
    times = np.unique(link_t)
    n_old, n_z, n_new = model.n_cols, len(configs), n_link + times.size
    last_r, last_c = model.row_blocks[-1].stop, model.col_blocks[-1].stop
    row_blocks = model.row_blocks + (Block("config_link", last_r, last_r + n_link, {"t": link_t, "w": link_w}),
                                     Block("config_convexity", last_r + n_link, last_r + n_new, {"t": times}))
    X = sp.csr_matrix((np.ones(sub.row.size), (link_row, sub.col)), shape=(n_link, n_old))
    A = sp.vstack([model.A, X, sp.csr_matrix((times.size, n_old))], format="csr")
    grown = replace(model, A=A, row_blocks=row_blocks,
                    row_lower=np.concatenate([model.row_lower, np.full(n_new, -np.inf)]),
                    row_upper=np.concatenate([model.row_upper, np.zeros(n_link), np.ones(times.size)]))
    zr, zj, zv = configuration_entries(grown, configs, M)
    Z = sp.csr_matrix((zv, (zr, zj)), shape=(grown.n_rows, n_z))
    z_t = np.array([t for t, _ in configs], dtype=np.int64)
    return replace(
        grown,
        name=model.name + "+configurations",
        c=np.concatenate([model.c, np.zeros(n_z)]),
        A=sp.hstack([A, Z], format="csr"),
        col_lower=np.concatenate([model.col_lower, np.zeros(n_z)]),
        col_upper=np.concatenate([model.col_upper, np.full(n_z, np.inf)]),
        integer=np.concatenate([model.integer, np.zeros(n_z, dtype=bool)]),
        col_blocks=model.col_blocks + (Block("z", last_c, last_c + n_z, {"t": z_t}),),
    )


def link_tables(model: CanonicalModel, duals: np.ndarray, M: int) -> dict[int, np.ndarray]:
    """``{t: η_t}`` from the row duals: ``η_t(w) = −dual`` of the ``config_link`` row ``(t, w)`` (a ``<=`` row of
    a minimisation has a dual ``<= 0``; round-off of the wrong sign becomes 0), a length-``M + 1`` table."""
    link = model.rows("config_link")
    eta = np.maximum(-np.asarray(duals, dtype=float)[link.slice], 0.0)
    out: dict[int, np.ndarray] = {}
    for t, w, v in zip(link.labels["t"].tolist(), link.labels["w"].tolist(), eta.tolist(), strict=True):
        if v > 0:
            out.setdefault(int(t), np.zeros(M + 1))[int(w)] = v
    return out


def price_configurations(model: CanonicalModel, duals: np.ndarray, M: int, *, tol: float = 1e-7,
                         known: set[Configuration] | None = None) -> tuple[list[Configuration], float]:
    """The best configuration of every time whose reduced cost ``π_t − K(η_t)`` is below ``−tol``
    (module docstring), skipping those in ``known``; and ``Σ_t max(0, K(η_t) − π_t)``, by which the
    Lagrangian bound of these duals falls short of the restricted master's optimum (0 at convergence)."""
    conv = model.rows("config_convexity")
    times = np.asarray(conv.labels["t"], dtype=np.int64)
    if times.size == 0:
        return [], 0.0
    pi = np.maximum(-np.asarray(duals, dtype=float)[conv.slice], 0.0)
    tables = link_tables(model, duals, M)
    pos = {int(t): r for r, t in enumerate(times.tolist())}
    eta = np.zeros((times.size, M + 1))
    for t, table in tables.items():
        eta[pos[t]] = table
    best = np.zeros((times.size, M + 1))
    choice = np.zeros((times.size, M + 1), dtype=np.int64)  # 0: capacity c unused
    for c in range(2, M + 1):
        best[:, c] = best[:, c - 1]
        for w in range(2, c + 1):
            v = best[:, c - w] + eta[:, w]
            better = v > best[:, c] + 1e-15
            best[better, c] = v[better]
            choice[better, c] = w
    out: list[Configuration] = []
    known = known or set()
    shortfall = float(np.maximum(best[:, M] - pi, 0.0).sum())
    for r in np.flatnonzero(best[:, M] > pi + tol).tolist():
        sizes, c = [], M
        while c >= 2:
            w = int(choice[r, c])
            if w == 0:
                c -= 1
            else:
                sizes.append(w)
                c -= w
        cfg = (int(times[r]), tuple(sorted(sizes)))
        if cfg not in known:
            out.append(cfg)
    return out, shortfall
