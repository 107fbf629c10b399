"""The energy bound's certificate: a priority order whose fluid schedule is shortest-remaining-energy-first.

Part of the independent checker (see :mod:`llmopt.verify`); nothing is taken from
:mod:`llmopt.opt.bounds`.
"""

from __future__ import annotations

import bisect
import math
import numbers
from typing import Any

from llmopt.model.instance import Instance
from llmopt.verify.certificates import CertificateError

__all__ = ["check_energy_certificate"]


def check_energy_certificate(instance: Instance, order: Any, claimed: Any = None) -> int:
    """Verify the energy bound's certificate and return the bound on ``OPT`` (TEL) it certifies.

    Derived here from DESIGN §1 alone (nothing is taken from :mod:`llmopt.opt.bounds`). A request
    started at ``k`` holds ``s + (t − k)`` tokens at ``t = k+1 … k+o``, so in any feasible
    schedule it puts its whole *energy* ``E = Σ_{j=1..o} (s + j) = s·o + o(o+1)/2`` into the
    integer times ``t`` with ``a < t <= c`` (its completion ``c``), while the memory rows give
    at most ``M`` per time. Relaxing "the usage profile is ``s+1 … s+o`` on ``o`` consecutive
    times" to "any amount at any time in ``(a, c]``" gives a *fluid* schedule. The
    shortest-remaining-energy-first fluid schedule (SRPT) completes, by every integer time
    ``T``, at least as many requests as any fluid schedule — so at least as many as any
    feasible schedule completes by ``T`` (proof in :func:`llmopt.opt.bounds.energy_bound`). With
    ``e_(k)`` the ``k``-th smallest SRPT completion and ``q_(k)`` the ``k``-th smallest of
    ``a_i + o_i``, the ``k``-th smallest completion of any feasible schedule is
    ``>= max(e_(k), q_(k))``, and ``OPT >= Σ_k max(e_(k), q_(k)) − Σ_i a_i``.

    The certificate is ``order``, a priority list of the request ids. This function builds the
    preemptive *priority-list* fluid schedule of ``order`` — each unit of capacity, times
    ``1, 2, …`` with ``M`` each, goes to the first request in ``order`` that has arrived
    (``a < t``) and is not done — and checks that it *is* an SRPT schedule: whenever a request
    is picked (after a completion, or when arrivals join) its remaining energy is the least of
    all arrived, unfinished requests (ties either way). Between two such events the picked
    request's remaining energy only falls and nobody else's changes, so the check at the events
    suffices. A request completes at time ``ceil(q / M)`` where ``q`` is the cumulative
    capacity position at which its energy runs out (times are counted from the first arrival).

    An SRPT schedule's completion order is such a priority list (a request SRPT serves while
    another is waiting finishes first), which is how :func:`llmopt.opt.bounds.energy_certificate`
    makes one; any list that passes the check certifies the same value (all SRPT schedules
    complete equally many requests by every ``T``).

    Parameters
    ----------
    instance : Instance
    order : sequence of str
        Every request id exactly once.
    claimed : number, optional
        The value the certificate claims; rejected if above the value verified here.

    Returns
    -------
    int
        ``Σ_k max(e_(k), q_(k)) − Σ_i a_i``, a lower bound on every feasible schedule's TEL.

    Raises
    ------
    CertificateError
        If ``order`` is not a permutation of the instance's ids, if its priority-list schedule
        serves a request while another arrived, unfinished one has strictly less energy left
        (naming both), or if ``claimed`` exceeds the verified value.
    """
    reqs = instance.requests
    n, M = len(reqs), instance.M
    if isinstance(order, (str, bytes)):
        raise CertificateError("the energy certificate's order must be a sequence of request ids, not a string")
    order = list(order)
    index = {r.id: i for i, r in enumerate(reqs)}
    rank = [-1] * n
    for pos, rid in enumerate(order):
        i = index.get(rid) if isinstance(rid, str) else None
        if i is None:
            raise CertificateError(f"energy certificate: position {pos} names {rid!r}, not a request of the instance")
        if rank[i] >= 0:
            raise CertificateError(f"energy certificate: request {rid!r} appears twice (positions {rank[i]} and {pos})")
        rank[i] = pos
    if len(order) != n:
        missing = next(r.id for r, k in zip(reqs, rank) if k < 0)
        raise CertificateError(f"energy certificate: {n - len(order)} request(s) missing from the order, "
                               f"e.g. {missing!r}")
    value = 0
    if n:
        origin = min(r.arrival for r in reqs)
        left = [r.prompt * r.output + r.output * (r.output + 1) // 2 for r in reqs]  # energy not yet served
        by_rank = [0] * n
        for i, k in enumerate(rank):
            by_rank[k] = i
        arrive = sorted(range(n), key=lambda i: reqs[i].arrival)
        rel = [reqs[i].arrival - origin for i in arrive]
        # Arrived, unfinished requests, as sorted lists whose *last* entry is the one wanted:
        waiting: list[int] = []  # −rank: the first of them in ``order`` is last
        pending: list[tuple[int, int]] = []  # (−energy left, request): the least energy left is last
        ends: list[int] = []  # completion times (relative), in completion order: nondecreasing
        cap = 0  # capacity position: times 1..t have offered M·t units; (M(t-1), M·t] is time t
        nxt = 0
        while nxt < n or waiting:
            if not waiting:
                cap = max(cap, M * rel[nxt])
            while nxt < n and M * rel[nxt] <= cap:  # arrived at a <= t − 1: may use times t >= a + 1
                i = arrive[nxt]
                bisect.insort(waiting, -rank[i])
                bisect.insort(pending, (-left[i], i))
                nxt += 1
            stop = M * rel[nxt] if nxt < n else None  # next arrival: a new priority check then
            while waiting and (stop is None or cap < stop):
                i = by_rank[-waiting[-1]]
                least, j = -pending[-1][0], pending[-1][1]
                if left[i] > least:
                    raise CertificateError(
                        f"energy certificate: the order serves {reqs[i].id!r} ({left[i]} token-steps left) while "
                        f"{reqs[j].id!r} has only {least} left at time {origin + cap // M}: not "
                        "shortest-remaining-energy-first")
                where = bisect.bisect_left(pending, (-left[i], i))
                del pending[where]
                if stop is None or cap + left[i] <= stop:
                    cap += left[i]
                    left[i] = 0
                    waiting.pop()
                    ends.append(-(-cap // M))
                else:
                    left[i] -= stop - cap
                    cap = stop
                    bisect.insort(pending, (-left[i], i))
        release = sorted(r.arrival - origin + r.output for r in reqs)  # C_i >= a_i + o_i
        value = sum(max(e, q) for e, q in zip(ends, release)) - sum(r.arrival - origin for r in reqs)
    if claimed is not None:
        if isinstance(claimed, bool) or not isinstance(claimed, numbers.Real) or \
                not math.isfinite(float(claimed)):
            raise CertificateError(f"energy certificate: claimed value {claimed!r} is not a finite number")
        if float(claimed) > value:
            raise CertificateError(f"energy certificate claims {claimed!r} but the order certifies only {value}")
    return value
