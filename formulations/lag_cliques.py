"""Completion-lag cliques over request classes: the candidate rows of the ``lag-lp`` bound (issue 23).

Two requests that cannot hold their peaks ``p = s + o`` together (``p_i + p_j > M``) cannot complete
close together: if ``C_j <= C_i`` then ``C_i − C_j >= lag(i | j) = min(o_i, p_i + p_j − M)``. A *clique*
gives each member ``u`` a zone ``(C_u − a_u, C_u + b_u]``; when ``a_u + b_v <= lag(u | v)`` for every two
members, the zones never meet, and ``Σ_u [τ ∈ zone_u] <= 1`` is valid at every time ``τ``. Theorem and
proof: :mod:`llmopt.verify.clique_certificate` (the checker's copy, which re-proves every clique a
certificate uses); this module only proposes cliques, and a wrong proposal is caught there.

The families proposed (all with ``b = 0`` except the peak zones):

``zone``
    the peak zones of :mod:`llmopt.formulations.zones` (split ``⌈M/2⌉``), one clique.
``pair``
    every two conflicting classes ``c, d``: ``a_c = lag(c | d)``, ``a_d = lag(d | c)`` — the
    pairwise lag itself, for large and mid-size requests alike (zones need both peaks ``>= M/2``).
``threshold``
    for each peak value ``θ``, the classes with ``p >= θ`` when they conflict pairwise, each with
    ``a_c`` the least lag to another member; and each of those extended by one class of smaller peak
    that conflicts with all of them ("a zone clique extended by one mid-size request").

Classes are the identical-request groups of :func:`llmopt.formulations.hindsight_ip.request_classes`;
a class of ``m >= 2`` requests is in a clique only with a lag to itself (``2p > M``), every member
of it then counting in the row.
"""

from __future__ import annotations

from llmopt.formulations.hindsight_ip import RequestClass, request_classes
from llmopt.model.instance import Instance

__all__ = ["FAMILIES", "class_lag", "class_cliques", "positions_of"]

#: The families :func:`class_cliques` knows.
FAMILIES = ("zone", "pair", "threshold")


def class_lag(c: RequestClass, d: RequestClass, M: int) -> int:
    """``lag(c | d)`` for a request of class ``c`` completing after one of class ``d`` (0: no lag)."""
    excess = c.prompt + c.output + d.prompt + d.output - M
    return min(c.output, excess) if excess > 0 else 0


def _clique(classes: list[RequestClass], members: list[int], M: int) -> dict[int, tuple[int, int]] | None:
    """``{class: (a, 0)}`` with ``a_c`` the least lag to any other member request, or ``None`` if two
    member requests do not conflict (or no zone is left)."""
    out: dict[int, tuple[int, int]] = {}
    for c in members:
        others = [d for d in members if d != c] + ([c] if classes[c].size > 1 else [])
        lags = [class_lag(classes[c], classes[d], M) for d in others]
        if not lags or min(lags) <= 0:
            return None
        out[c] = (min(lags), 0)
    return out


def class_cliques(instance: Instance, families: tuple[str, ...] = FAMILIES) -> list[dict[int, tuple[int, int]]]:
    """Candidate cliques ``{class index: (a, b)}`` of the named families (module docstring), no repeats.

    Raises
    ------
    ValueError
        On an unknown family name.
    """
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        raise ValueError(f"unknown clique families {unknown}; known: {', '.join(FAMILIES)}")
    M = instance.M
    classes = request_classes(instance)
    out: list[dict[int, tuple[int, int]]] = []
    seen: set[tuple[tuple[int, int, int], ...]] = set()

    def keep(clique: dict[int, tuple[int, int]] | None) -> None:
        if not clique or sum(classes[c].size for c in clique) < 2:
            return
        key = tuple(sorted((c, a, b) for c, (a, b) in clique.items()))
        if key not in seen:
            seen.add(key)
            out.append(clique)

    if "zone" in families:
        from llmopt.formulations.zones import peak_zones

        zones = peak_zones(instance)
        pos_class = {i: c for c, cl in enumerate(classes) for i in cl.positions}
        keep({pos_class[i]: ab for i, ab in zones.items() if sum(ab) > 0})
    peak = [c.prompt + c.output for c in classes]
    if "pair" in families:
        for c in range(len(classes)):
            for d in range(c, len(classes)):
                if peak[c] + peak[d] > M and (c != d or classes[c].size > 1):
                    keep(_clique(classes, [c] if c == d else [c, d], M))
    if "threshold" in families:
        for theta in sorted(set(peak)):
            top = [c for c in range(len(classes)) if peak[c] >= theta]
            base = _clique(classes, top, M)
            if base is None:
                continue
            keep(base)
            low = min(peak[c] for c in top)
            for m in range(len(classes)):
                if peak[m] < theta and peak[m] + low > M:
                    keep(_clique(classes, top + [m], M))
    return out


def positions_of(instance: Instance, clique: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """The clique over request positions (every member of each class), as the checker takes it."""
    classes = request_classes(instance)
    return {i: ab for c, ab in clique.items() for i in classes[c].positions}
