"""The certificate of a branch-and-bound tree over start windows (the bound stage ``zone-tree``).

Part of the independent checker (see :mod:`llmopt.verify`). A tree splits the certified start
windows (:func:`~llmopt.verify.certificates.certified_windows`) of one request at a time: a
:class:`TreeSplit` on request ``i`` at ``t`` sends the schedules with ``k_i <= t`` to its ``low``
child and those with ``k_i >= t + 1`` to its ``high`` child. Each :class:`TreeLeaf` carries memory
multipliers ``λ`` and peak-zone multipliers ``μ``.

**Theorem.** Let ``B_ℓ`` be the box of leaf ``ℓ`` (the certified windows cut by the splits on its
path) and ``L_ℓ`` the zone Lagrangian of :func:`~llmopt.verify.zone_certificate.check_zone_certificate`
with the leaf's multipliers, its minimum taken over ``B_ℓ`` only. Then
``OPT >= min_ℓ L_ℓ`` (leaves whose box empties a window are left out of the minimum).

*Proof.* Some optimal schedule ``S*`` lies in the certified windows. Each split sends every
schedule of its box to exactly one child (``k_i <= t`` or ``k_i >= t + 1``), so ``S*`` lies in the
box of exactly one leaf ``ℓ``, which is therefore not empty. For that leaf, the argument of
:func:`~llmopt.verify.certificates.check_lower_bound_certificate` with the zone rows
(``Σ λ_t (u_t − M) <= 0``, ``Σ μ_τ (z_τ − 1) <= 0`` for ``S*``) bounds ``TEL(S*)`` below by the
Lagrangian with each request's minimum over any set of starts that contains ``S*``'s start, here
``B_ℓ``. So ``OPT = TEL(S*) >= L_ℓ >= min_ℓ L_ℓ``. ∎

The checker walks the tree itself (the partition is structural: it never trusts a box the provider
states), proves the zones again (:func:`~llmopt.verify.zone_certificate.certified_zones`) and
recomputes every leaf's value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llmopt.model.instance import Instance
from llmopt.model.tolerance import LAMBDA_CHECK_TOL
from llmopt.verify.certificates import CertificateError, _multipliers, certified_windows
from llmopt.verify.clique_certificate import lagrangian_with_cliques
from llmopt.verify.zone_certificate import certified_zones

__all__ = ["TreeLeaf", "TreeSplit", "TreeCheck", "check_tree_certificate", "leaf_boxes"]


@dataclass(frozen=True)
class TreeSplit:
    """An inner node: request position ``request``, ``k <= t`` to node ``low``, ``k >= t + 1`` to ``high``."""

    request: int
    t: int
    low: int
    high: int


@dataclass(frozen=True)
class TreeLeaf:
    """A leaf: memory multipliers ``lam`` and zone multipliers ``mu``, each ``(times, values)`` or a mapping."""

    lam: Any
    mu: Any


@dataclass(frozen=True)
class TreeCheck:
    """What :func:`check_tree_certificate` found.

    Attributes
    ----------
    bound : float
        ``min`` over the non-empty leaves of their Lagrangian value: a lower bound on OPT.
    leaves : int
        Leaves evaluated.
    empty : int
        Leaves whose box empties some window (no schedule there).
    depth : int
        Longest root-to-leaf path.
    """

    bound: float
    leaves: int
    empty: int
    depth: int


def _int(value: Any, what: str) -> int:
    if isinstance(value, (bool,)) or not isinstance(value, numbers.Integral):
        raise CertificateError(f"{what} {value!r} is not an integer")
    return int(value)


def leaf_boxes(instance: Instance, nodes: Sequence[TreeSplit | TreeLeaf], lo: Any, hi: Any
               ) -> list[tuple[int, dict[int, tuple[int, int]], int]]:
    """``(leaf index, box, depth)`` for every leaf, boxes derived from the root windows ``lo … hi``.

    A box maps the positions split on the leaf's path to ``(first, last)`` start; a split of ``i``
    at ``t`` gives its low child ``(first, min(last, t))`` and its high child ``(max(first, t + 1), last)``.

    Raises
    ------
    CertificateError
        On a malformed tree: no node, a child index out of range, a node reached twice or never, a
        request position out of range, a non-integer index or split time, a node of another type.
    """
    if not nodes:
        raise CertificateError("the tree has no node")
    seen = [False] * len(nodes)
    out = []
    stack: list[tuple[int, dict[int, tuple[int, int]], int]] = [(0, {}, 0)]
    while stack:
        j, box, d = stack.pop()
        if not 0 <= j < len(nodes):
            raise CertificateError(f"node index {j} is outside the tree's {len(nodes)} nodes")
        if seen[j]:
            raise CertificateError(f"node {j} is reached twice: not a tree")
        seen[j] = True
        node = nodes[j]
        if isinstance(node, TreeSplit):
            i = _int(node.request, f"node {j}: request position")
            t = _int(node.t, f"node {j}: split time")
            if not 0 <= i < instance.n:
                raise CertificateError(f"node {j}: request position {i} is outside 0 … {instance.n - 1}")
            b_lo, b_hi = box.get(i, (int(lo[i]), int(hi[i])))
            stack.append((_int(node.low, f"node {j}: low child"), {**box, i: (b_lo, min(b_hi, t))}, d + 1))
            stack.append((_int(node.high, f"node {j}: high child"), {**box, i: (max(b_lo, t + 1), b_hi)}, d + 1))
        elif isinstance(node, TreeLeaf):
            out.append((j, box, d))
        else:
            raise CertificateError(f"node {j} is neither a TreeSplit nor a TreeLeaf: {type(node).__name__}")
    if not all(seen):
        raise CertificateError(f"{seen.count(False)} nodes are not reached from the root")
    return out


def check_tree_certificate(
    instance: Instance,
    nodes: Sequence[TreeSplit | TreeLeaf],
    split: Any,
    upper_bound_starts: Mapping[str, Any] | None = None,
    *,
    tol: float = LAMBDA_CHECK_TOL,
) -> TreeCheck:
    """Recompute the lower bound on OPT certified by a branch-and-bound tree (module docstring).

    Parameters
    ----------
    instance : Instance
    nodes : sequence of TreeSplit or TreeLeaf
        The tree, root at index 0; every node is reached exactly once.
    split : int
        The zone split ``h`` of every leaf's ``μ``.
    upper_bound_starts : mapping, optional
        A schedule whose TEL bounds the root windows (verified by the checker).
    tol : float
        Negative multipliers down to ``−tol`` are read as 0.

    Raises
    ------
    CertificateError
        On a malformed tree (a child index out of range, a node reached twice or never, a request
        position out of range, a non-integer split time), a bad multiplier or split, or an infeasible
        ``upper_bound_starts``.
    """
    zones = certified_zones(instance, split)
    lo, hi = certified_windows(instance, upper_bound_starts)
    best = math.inf
    leaves = empty = depth = 0
    for j, box, d in leaf_boxes(instance, nodes, lo, hi):
        leaves += 1
        depth = max(depth, d)
        if any(b_lo > b_hi for b_lo, b_hi in box.values()):
            empty += 1
            continue
        node = nodes[j]
        assert isinstance(node, TreeLeaf)
        try:
            lam = _multipliers(node.lam, tol)
            mu = _multipliers(node.mu, tol, "μ")
        except CertificateError as err:
            raise CertificateError(f"leaf {j}: {err}") from None
        best = min(best, lagrangian_with_cliques(instance, lam, [(zones, mu)], upper_bound_starts, box=box))
    if math.isinf(best):  # unreachable: a split of a non-empty box leaves one child non-empty
        raise CertificateError("every leaf of the tree is empty, but the root windows hold a schedule")
    return TreeCheck(best, leaves, empty, depth)
