"""Peak zones: a valid inequality that keeps the staircase of the large requests whole (issue 9).

Why. The time-indexed LP relaxation of the hindsight IP lies 25–33 % below OPT on the J §5.1
instances. In an optimal schedule the requests whose peak ``p_i = s_i + o_i`` exceeds ``M/2`` run
almost one after another: when one completes it holds ``p_j`` tokens, so any other running request
holds at most ``M − p_j`` then, i.e. it still has ``p_i + p_j − M`` steps to go. The LP spreads each
request over many starts and packs the fractional ramps side by side, which integer schedules
cannot do. The zones below turn that pairwise time lag into one clique row per time step.

Definitions (DESIGN §1 semantics: a request starting at ``k`` holds ``s_i + t − k`` tokens at
``t = k+1 … k+o_i`` and completes at ``C_i = k + o_i``). Fix an integer *split* ``h`` with
``0 < h < M``. The *zone set* is

    ``Z_h = {i : p_i >= max(h, M − h) and s_i <= h}``,

and for ``i ∈ Z_h``, with ``σ_i = max{s_j : j ∈ Z_h, j ≠ i}`` (0 if ``i`` is alone),

    ``a_i = p_i − h``,   ``b_i = max(0, min(p_i − (M − h), h − σ_i))``.

The *zone* of ``i`` in a schedule is the set of integer times ``(C_i − a_i, C_i + b_i]`` — the last
``a_i`` steps of its run and ``b_i`` steps after it (the after-part is a phantom: nothing is held
then; it stands for the wait the *next* large request must still serve).

**Theorem (zones are disjoint).** In every feasible schedule the zones of ``Z_h`` are pairwise
disjoint; hence for every integer time ``τ``, ``Σ_{i ∈ Z_h} [τ ∈ zone_i] <= 1``.

*Proof.* Take ``i ≠ j`` in ``Z_h`` with ``C_j <= C_i``; disjointness is ``C_i − a_i >= C_j + b_j``,
i.e. ``C_i − C_j >= a_i + b_j``. Case 1, ``k_i >= C_j`` (``i`` starts after ``j`` completes):
``C_i − C_j >= o_i = a_i + (h − s_i) >= a_i + (h − σ_j) >= a_i + b_j``, since ``s_i <= σ_j``.
Case 2, ``k_i < C_j``: then ``k_i + 1 <= C_j <= C_i = k_i + o_i``, so ``i`` runs at time ``C_j``
and holds ``s_i + C_j − k_i = p_i − (C_i − C_j)`` tokens, while ``j`` holds ``p_j``. Memory at
``C_j`` is at most ``M``, so ``C_i − C_j >= p_i + p_j − M = a_i + (p_j − (M − h)) >= a_i + b_j``. ∎

The requirements on ``Z_h`` are what the two cases use: ``p_i >= h`` makes ``a_i >= 0``,
``p_j >= M − h`` makes case 2's lag non-negative, ``s_i <= h`` makes case 1 hold. (Dropping
``p >= max(h, M − h)``, e.g. ``h = M/2 − 6`` with two requests of peak ``M/2`` that can complete
together, gives rows that cut off feasible schedules; an early experiment with such rows produced
a "bound" above a verified schedule, which is what the tests in ``tests/formulations/test_zones.py`` guard.)

Dominance. Adding valid rows to the LP can only raise its optimum, so the LP with zone rows is
``>=`` ``lp`` over the same windows. It reaches exact OPT where the large requests can only run one
after another: ``n`` requests ``(s, o) = (1, M − 1)`` at 0 have, with ``h = ⌈M/2⌉``, zones of
length ``a + b = (M − h) + (h − 1) = o`` each, so the zone rows are the time-indexed rows of a single
machine; on such instances the stage returns OPT ``= o·n(n+1)/2`` where ``lp`` is about half of it
(``tests/formulations/test_zones.py``).
What it measures on the J §5.1 instances is in ``results/jaillet/zone-bound/README.md``.

The checker (:func:`llmopt.verify.checker.check_zone_certificate`) derives the zones again from the
instance alone; :func:`peak_zones` here is the provider's copy, and ``tests/formulations/test_zones.py`` checks
that the two agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from llmopt.model.canonical import Block, CanonicalModel, ModelSize
from llmopt.model.instance import Instance

__all__ = ["default_split", "peak_zones", "with_zone_rows", "zone_incidence", "zone_model_size"]


def default_split(M: int) -> int:
    """The split ``h = ⌈M/2⌉`` the ``zone-lp`` stage uses (the zone set is then ``p_i >= ⌈M/2⌉``)."""
    return (M + 1) // 2


def peak_zones(instance: Instance, split: int | None = None) -> dict[int, tuple[int, int]]:
    """``{position i: (a_i, b_i)}`` for the requests of the zone set ``Z_h`` (module docstring).

    Parameters
    ----------
    instance : Instance
    split : int, optional
        ``h``, with ``0 < h < M``; default :func:`default_split`.

    Raises
    ------
    ValueError
        If ``split`` is outside ``1 … M − 1``.
    """
    M = instance.M
    h = default_split(M) if split is None else int(split)
    if not 0 < h < M:
        raise ValueError(f"zone split h={h} must satisfy 0 < h < M={M}")
    reqs = instance.requests
    members = [i for i, r in enumerate(reqs) if r.prompt + r.output >= max(h, M - h) and r.prompt <= h]
    prompts = sorted((reqs[i].prompt for i in members), reverse=True)
    out = {}
    for i in members:
        r = reqs[i]
        p = r.prompt + r.output
        # σ_i: the largest prompt among the *other* members
        sigma = (prompts[1] if len(prompts) > 1 else 0) if r.prompt == prompts[0] else prompts[0]
        out[i] = (p - h, max(0, min(p - (M - h), h - sigma)))
    return out


def zone_model_size(instance: Instance, base: ModelSize) -> ModelSize:
    """An upper bound on the size of the hindsight IP (or LP) with zone rows, from ``base``, the plain
    model's size (:func:`llmopt.formulations.hindsight_ip.estimate_size`): at most ``o_i + s_i`` zone
    entries more per column (``a_i + b_i <= 2 p_i − M <= p_i``) and a row per time step."""
    s_max = max((r.prompt for r in instance.requests), default=0)
    return ModelSize(rows=2 * base.rows, cols=base.cols, nnz=2 * base.nnz + base.cols * s_max)


def zone_incidence(model: CanonicalModel, instance: Instance, zones: Mapping[int, tuple[int, int]]
                   ) -> tuple[np.ndarray, sp.csr_matrix]:
    """The rows ``Σ_{i} Σ_{k : τ ∈ zone_i(k)} x_{i,k}``, one per time ``τ`` some start's zone covers, where
    ``zones[p] = (a, b)`` gives request ``p``'s zone ``zone_i(k) = [k + o_i − a + 1, k + o_i + b]`` (its
    last ``a`` steps of the run and ``b`` after it).

    A class of the model is in when its first request is a key of ``zones`` (members of a class share
    ``(s, o)``, so the whole class is in or out); a column then counts the requests of its class that
    start at ``k``. Used by the peak-zone rows here and the lag cliques of
    :mod:`llmopt.formulations.clique_rows`.

    Returns
    -------
    times : ndarray of int
        ``τ`` of each row, increasing.
    A : scipy.sparse.csr_matrix
        ``len(times) × model.n_cols``; entries only on the ``x`` block.
    """
    x = model.cols("x")
    first = model.rows("eq2_assignment").labels["first"]  # position of each class's first request
    col_class = np.asarray(x.labels["class"])
    col_k = np.asarray(x.labels["k"])
    outputs = np.array([instance.requests[int(f)].output for f in first], dtype=np.int64)
    a = np.full(len(first), -1, dtype=np.int64)
    b = np.zeros(len(first), dtype=np.int64)
    for c, f in enumerate(first.tolist()):
        if int(f) in zones:
            a[c], b[c] = zones[int(f)]
    cols = np.flatnonzero(a[col_class] >= 0)
    length = (a + b)[col_class[cols]]
    cols, length = cols[length > 0], length[length > 0]
    col_idx = np.repeat(cols, length)
    offs = np.arange(int(length.sum()), dtype=np.int64) - np.repeat(np.cumsum(length) - length, length)
    cls = col_class[col_idx]
    tau = col_k[col_idx] + outputs[cls] - a[cls] + 1 + offs
    times, rows = np.unique(tau, return_inverse=True)
    return times, sp.csr_matrix((np.ones(rows.size), (rows, x.start + col_idx)), shape=(times.size, model.n_cols))


def with_zone_rows(model: CanonicalModel, instance: Instance, split: int | None = None) -> CanonicalModel:
    """``model`` (the hindsight IP of :func:`formulations.hindsight_ip.formulate`) plus one zone row
    ``Σ_{i ∈ Z_h} Σ_{k : τ ∈ zone_i(k)} x_{i,k} <= 1`` per time ``τ`` that some start's zone covers.

    The rows form the block ``peak_zones`` (label ``t`` = ``τ``). With aggregated classes a
    column counts the requests of its class that start at ``k``; a member's zone row then takes
    that count, which is what the theorem bounds.
    """
    used, Z = zone_incidence(model, instance, peak_zones(instance, split))
    n_new = len(used)
    last = model.row_blocks[-1].stop
    return replace(
        model,
        name=model.name + "+zones",
        A=sp.vstack([model.A, Z], format="csr"),
        row_lower=np.concatenate([model.row_lower, np.full(n_new, -np.inf)]),
        row_upper=np.concatenate([model.row_upper, np.ones(n_new)]),
        row_blocks=model.row_blocks + (Block("peak_zones", last, last + n_new, {"t": used}),),
    )
