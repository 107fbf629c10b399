"""Completion-lag clique rows written over the hindsight LP's start columns, for cut loops on that LP.

A clique (:mod:`llmopt.formulations.lag_cliques`; theorem and proof in :mod:`llmopt.verify.clique_certificate`)
gives each member request ``u`` a zone ``(C_u − a_u, C_u + b_u]`` around its completion ``C_u``; the zones of
two members never meet, so at every time ``τ``

    ``Σ_{u} Σ_{k : τ ∈ (k + o_u − a_u, k + o_u + b_u]} x_{u,k} <= 1``.

These are the rows :func:`clique_rows` writes (the peak-zone rows of :mod:`llmopt.formulations.zones` are the
zone clique's); a column that counts several identical requests takes the row's coefficient per request, as
the zone rows do. :func:`separate_cliques` picks the most violated rows of an LP solution.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from llmopt.formulations.zones import zone_incidence
from llmopt.model.canonical import CanonicalModel
from llmopt.model.instance import Instance

__all__ = ["clique_rows", "separate_cliques"]


def clique_rows(model: CanonicalModel, instance: Instance, members: Mapping[int, tuple[int, int]]
                ) -> tuple[np.ndarray, sp.csr_matrix]:
    """``(times, A)``: the clique's row of every time ``τ`` some member start's zone covers (module docstring).

    Parameters
    ----------
    model : CanonicalModel
        The hindsight LP of :func:`llmopt.formulations.hindsight_ip.formulate` (its ``x`` block and
        ``eq2_assignment`` classes), possibly with more blocks.
    instance : Instance
    members : mapping
        ``{request position: (a, b)}`` (every member of a class, as
        :func:`~llmopt.formulations.lag_cliques.positions_of` gives).

    Returns
    -------
    times : ndarray of int
        ``τ`` of each row, increasing.
    A : scipy.sparse.csr_matrix
        ``len(times) × model.n_cols``; entries only on the ``x`` block.
    """
    return zone_incidence(model, instance, members)


def separate_cliques(tables: Sequence[tuple[np.ndarray, sp.csr_matrix]], x: np.ndarray, *, max_rows: int = 40,
                     min_violation: float = 1e-6, known: set[tuple[int, int]] | None = None
                     ) -> list[tuple[int, int]]:
    """The most violated clique rows of the LP solution ``x``: ``(clique index, τ)``, largest violation first.

    Parameters
    ----------
    tables : sequence of ``(times, A)``
        :func:`clique_rows` of each candidate clique.
    x : ndarray
        Values of the model's columns, or of its ``x`` block alone.
    max_rows : int
    min_violation : float
        Rows with ``A x − 1`` at or below it are not returned.
    known : set, optional
        Rows already in the LP.

    Returns
    -------
    list of ``(q, τ)``
    """
    found: list[tuple[float, int, int]] = []
    known = known or set()
    xa = np.asarray(x, dtype=float)
    for q, (times, A) in enumerate(tables):
        if times.size == 0:
            continue
        width = min(A.shape[1], xa.size)  # x may be the x block alone (the rows have entries only there)
        act = A[:, :width] @ xa[:width]
        for r in np.flatnonzero(act > 1.0 + min_violation).tolist():
            if (q, int(times[r])) not in known:
                found.append((float(act[r]) - 1.0, q, int(times[r])))
    found.sort(key=lambda v: (-v[0], v[1], v[2]))
    return [(q, t) for _, q, t in found[:max_rows]]
