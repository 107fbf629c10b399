"""Policies with prediction intervals (Chen–Ye–Zhou, "C"): H-SF, A_max, A_min, multi-interval
A_min, A_ℓ and A_random (C §3–§5, App. Algorithms 3–6; DIGEST §2.16–2.21).

Each request carries an interval ``[ℓ_i, u_i]`` that contains its output length ``o_i``
(:class:`llmopt.model.instance.Request` fields ``lower`` / ``upper``). The prediction-based
policies (A_max, A_min, A_ℓ) declare ``visibility = Visibility.HIDDEN``: the engines never
show them ``o_i`` before the request's last token, whatever the caller asks for. They know
how many tokens a running request has produced (``t − start``) and learn ``o_i`` when it
completes. H-SF and A_random are the paper's full-information yardsticks and see ``o_i``.

All of them admit waiting requests in a priority order while the look-ahead check (5)
holds with a *projected* output length per request, and stop at the first misfit
(J's prefix rule). They differ in the projection and the order:

========== ============================ ============================ ====================
policy     projected output             waiting order                cancellation
========== ============================ ============================ ====================
h-sf       ``o_i`` (true)               ``o_i``, then arrival        none
a-random   ``o_i`` (true)               a seeded random permutation  none
a-max      ``u_i``                      ``u_i``, ties at random      none
a-min      ``õ_i`` (starts at ``ℓ_i``)  ``õ_i``, ties at random      smallest ``õ`` first
a-ell      ``ℓ_i``, then ``u_i``        FIFO; promoted jobs at back  at ``ℓ_i`` tokens
========== ============================ ============================ ====================

Fixes of the printed pseudo-code (DIGEST §2.18, §7 I-32/I-33/I-34), each an option:
A_min re-queues cancelled jobs (Algorithm 2 never puts them back; ``readmit``) and projects
running jobs past their lower bound with ``max(õ_i, a_i + 1)`` (the printed check ignores
their memory; ``running_estimate``); see :class:`AMin`, which also flags its other
deviations (``õ`` never lowered, the cycle guard; :mod:`llmopt.policies.a_min`). A_ℓ cancels a job once it has produced
``ℓ_i`` tokens and still runs ("as soon as it generates ℓ tokens", I-34).

Random tie-breaking uses a ``random.Random(seed)`` re-seeded by ``reset``, so a run is
deterministic for a given seed (DESIGN §4 inv. 3).

Cost per event: ``O(log n)`` heap work per admitted or re-queued request, plus
``O(m)`` for the look-ahead profile (``m`` running requests); A_min's cancellation sorts the
running set (``O(m log m)``, C Thm 3) only when the one-step-ahead projection overflows.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Sequence

from llmopt.engine.discrete import Decision, RequestView, SimulationError, Visibility
from llmopt.engine.lookahead import LookaheadProfile
from llmopt.policies import LookaheadPrefixPolicy

__all__ = [
    "IntervalPolicyError",
    "interval_of",
    "HSF",
    "ARandom",
    "AMax",
    "ProjectedRunning",
    "AEll",
]


class IntervalPolicyError(SimulationError):
    """A prediction-based policy met a request whose interval it cannot use (none, or buckets
    that overlap for multi-interval A_min). Raised at run time; bad intervals in input files
    are :class:`llmopt.model.instance.InstanceError`."""


def interval_of(request: RequestView, policy: str, M: int) -> tuple[int, int]:
    """The interval ``(ℓ_i, u_i)`` of ``request``, both ends clamped to ``M − s_i``.

    The clamp uses only public facts: every request fits alone (``s_i + o_i <= M``, DESIGN
    §1), so ``o_i <= M − s_i`` whatever the prediction says; without it a request predicted
    above ``M − s_i`` could never be admitted. Raises :class:`IntervalPolicyError` when the
    request has no interval.
    """
    lo, hi = request.lower, request.upper
    if lo is None or hi is None:
        raise IntervalPolicyError(
            f"policy {policy!r} needs a prediction interval for every request, but request {request.id!r} has "
            "none (fields 'lower' and 'upper'; see llmopt.workloads.predictions for generators)")
    cap = M - request.prompt
    return min(lo, cap), min(hi, cap)


class HSF(LookaheadPrefixPolicy):
    """H-SF, hindsight shortest-first (C §3.1, App. Algorithm 3): MC-SF with the true ``o_i``.

    C's Algorithm 3 picks the *largest-cardinality* feasible set each step; its text says
    "include as many of the shortest remaining jobs … as possible". With identical prompts
    the two agree (the largest feasible set is a shortest-first prefix); with heterogeneous
    prompts (C §6) the largest-cardinality set is a knapsack problem the paper never solves,
    so H-SF here is the shortest-first prefix rule, i.e. MC-SF (DIGEST §2.16, I-28). It is
    C's denominator in every competitive ratio; it is not OPT (DIGEST T-5).
    """

    name = "h-sf"

    def key(self, request: RequestView) -> tuple[int, int]:
        return (request.output, request.arrival)


class _SeededPrefixPolicy(LookaheadPrefixPolicy):
    """A prefix-rule policy whose key draws from ``random.Random(seed)``, re-seeded by ``reset``."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        super().__init__()

    def reset(self, M: int) -> None:
        super().reset(M)
        self.rng = random.Random(self.seed)


class ARandom(_SeededPrefixPolicy):
    """A_random (C App. Algorithm 4): requests in a seeded uniformly random order, true ``o_i``.

    Requests are admitted in the order of a random permutation while check (5) holds, and
    the first misfit stops admission ("prefix with break", DIGEST I-35: the analysis needs the
    order preserved). The permutation is drawn as an i.i.d. uniform key per request at its
    arrival, from ``random.Random(seed)``.
    """

    name = "a-random"

    def key(self, request: RequestView) -> float:
        return self.rng.random()


class AMax(_SeededPrefixPolicy):
    """A_max (C §3.2, Algorithm 1): every request is projected with its upper end ``u_i``.

    Waiting requests are taken by ``u_i`` ascending with ties uniformly at random (seeded),
    and the largest prefix that passes check (5) with ``o := u`` is admitted. With one shared
    interval and identical prompts this is Algorithm 1's "largest ``m_t``, then a uniformly
    random subset of that size"; with per-request ``u_i`` or heterogeneous prompts Algorithm 1
    is undefined and this is DIGEST I-29's reading. Running requests keep their projection
    ``u_i`` until they complete (at their true ``o_i <= u_i``), so memory never overflows and
    nothing is cancelled. If predictions may miss (``o_i > u_i``), A_max's guarantee is gone:
    a run whose memory overflows stops with the engine's overflow error.
    """

    name = "a-max"
    visibility = Visibility.HIDDEN

    def key(self, request: RequestView) -> tuple[int, float]:
        return (interval_of(request, self.name, self.M)[1], self.rng.random())

    def output_estimate(self, request: RequestView) -> int:
        return interval_of(request, self.name, self.M)[1]


class ProjectedRunning:
    """Running requests with a projected output length each, in a look-ahead profile.

    ``refresh(t)`` re-projects every running request whose projection has run out
    (``start + estimate <= t``, so it has produced ``a >= estimate`` tokens and is still
    running) to complete at ``t + 1``, i.e. output ``a + 1``, the certified lower bound. A
    heap of projected completions finds them in ``O(log m)`` each.
    """

    def __init__(self, M: int, track_due: bool = True) -> None:
        self.track_due = track_due  # only refresh() reads the heap of projected completions
        self.profile = LookaheadProfile(M)
        self.items: dict[str, tuple[RequestView, int, int]] = {}  # id -> (request, start, estimate)
        self.base = 0  # Σ (s_j − p_j) over running requests
        self._due: list[tuple[int, str]] = []  # (projected completion, id); stale entries skipped

    def __len__(self) -> int:
        return len(self.items)

    def add(self, request: RequestView, start: int, estimate: int) -> None:
        self.items[request.id] = (request, start, estimate)
        self.profile.add(request.id, start, request.prompt, estimate)
        self.base += request.prompt - start
        if self.track_due:
            heapq.heappush(self._due, (start + estimate, request.id))

    def remove(self, request_id: str) -> tuple[RequestView, int, int]:
        request, start, estimate = self.items.pop(request_id)
        self.profile.remove(request_id)
        self.base -= request.prompt - start
        return request, start, estimate

    def refresh(self, t: int) -> None:
        due, items, profile = self._due, self.items, self.profile
        while due and due[0][0] <= t:
            c, rid = heapq.heappop(due)
            entry = items.get(rid)
            if entry is None or entry[1] + entry[2] != c:
                continue  # completed, evicted or already re-projected
            request, start, _ = entry
            estimate = t + 1 - start
            profile.remove(rid)
            profile.add(rid, start, request.prompt, estimate)
            items[rid] = (request, start, estimate)
            heapq.heappush(due, (t + 1, rid))

    def usage_after(self, t: int) -> int:
        """True KV usage after the batch of step ``t`` if every running request keeps running."""
        return self.base + (t + 1) * len(self.items)

    def overflow_step(self, t: int) -> int | None:
        """The first step ``t' > t`` whose batch would overflow ``M`` if nothing completes (so a
        cancelling policy must decide then), or ``None`` when nothing runs."""
        count = len(self.items)
        if not count:
            return None
        wake = (self.profile.M - self.base) // count  # smallest t' with base + (t' + 1)·count > M
        return max(wake, t + 1)


class AEll:
    """A_ℓ, "promote-ℓ" (C §5.1, App. Algorithm 6), for the two-point family ``o_i ∈ {ℓ, u}``.

    Every request is first projected with ``ℓ_i``. A running request that has produced
    ``ℓ_i`` tokens and is still running (so ``o_i > ℓ_i``) is cancelled at once, its tokens
    discarded, promoted to ``õ_i = u_i`` and moved to the *end* of the waiting queue, behind
    every request already waiting (DIGEST §2.20, I-34); requests promoted at the same step keep
    their arrival order. Waiting requests are admitted from the front of the queue (FIFO) while
    check (5) holds with their projection, and the first misfit stops admission. On any
    interval with ``o_i <= u_i`` the policy never overflows: a first-pass run is cancelled
    before it outgrows ``ℓ_i``, and a promoted one completes within ``u_i``.

    If predictions may miss (``o_i > u_i``), a promoted run that outlives ``u_i`` is cancelled
    once more, the same way, and re-queued with ``õ_i = M − s_i``, the public cap of every
    output (DESIGN §1), so it completes on its next run and memory never overflows.
    """

    name = "a-ell"
    visibility = Visibility.HIDDEN

    def __init__(self) -> None:
        self.reset(0)

    def reset(self, M: int) -> None:
        self.M = M
        self.queue: list[tuple[int, RequestView]] = []  # (sequence number, request): FIFO
        self.seq = 0
        self.running = ProjectedRunning(M, track_due=False)
        self.stage: dict[str, int] = {}  # 0: projected with ℓ, 1: with u (promoted), 2: with M − s
        self.cancellations = 0
        self._checks: list[tuple[int, int, int, str]] = []  # (start + õ, arrival, position, id) of runs to watch
        self._admitted: dict[str, tuple[int, RequestView]] = {}  # queue entries of the last decision's starts

    def _enqueue(self, request: RequestView) -> None:
        heapq.heappush(self.queue, (self.seq, request))
        self.seq += 1

    def _estimate(self, request: RequestView) -> int:
        stage = self.stage[request.id]
        if stage == 2:
            return self.M - request.prompt
        return interval_of(request, self.name, self.M)[stage]

    def on_arrival(self, t: int, request: RequestView) -> None:
        interval_of(request, self.name, self.M)
        self.stage[request.id] = 0
        self._enqueue(request)

    def on_complete(self, t: int, request: RequestView) -> None:
        self.running.remove(request.id)
        del self.stage[request.id]

    def on_refused(self, t: int, requests: Sequence[RequestView]) -> None:
        """The engine's batch limits deferred these starts of step ``t`` (:class:`llmopt.engine.core.Worker`).

        Each one leaves the projected running set as if never started and goes back into the FIFO
        queue with the sequence number it was admitted with, so it keeps its place (a promoted
        request stays where its promotion put it) and its projection stage is unchanged. The
        watch entry its start pushed goes stale: it names a start that never happened, and
        :meth:`decide` skips entries whose run no longer matches.

        Parameters
        ----------
        t : int
            The step whose starts were refused.
        requests : sequence of RequestView
            The refused starts, a suffix of the last decision's ``start``.
        """
        for request in requests:
            self.running.remove(request.id)
            heapq.heappush(self.queue, self._admitted.pop(request.id))

    def decide(self, t: int) -> Decision:
        running, checks = self.running, self._checks
        cancelled: list[str] = []
        while checks and checks[0][0] <= t:
            due, _, _, rid = heapq.heappop(checks)
            entry = running.items.get(rid)
            if entry is None or entry[1] + entry[2] != due:
                continue  # completed within its projection, or a stale entry of an earlier run
            request, _, _ = running.remove(rid)
            self.stage[rid] += 1
            self._enqueue(request)
            cancelled.append(rid)
        self.cancellations += len(cancelled)
        queue, profile = self.queue, running.profile
        started: list[str] = []
        wake = None
        admitted = self._admitted = {}
        while queue:
            request = queue[0][1]
            o_est = self._estimate(request)
            if not profile.fits(t, request.prompt, o_est):
                wake = profile.next_fit(t, request.prompt, o_est)
                break
            admitted[request.id] = heapq.heappop(queue)
            running.add(request, t, o_est)
            if o_est < self.M - request.prompt:  # a run projected with M − s cannot outlive it
                heapq.heappush(checks, (t + o_est, request.arrival, request.position, request.id))
            started.append(request.id)
        if checks and (wake is None or checks[0][0] < wake):
            wake = max(checks[0][0], t + 1)
        return Decision(start=tuple(started), evict=tuple(cancelled), wake_at=wake)
