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

* A_min (Algorithm 2) never puts cancelled jobs back into the waiting set ``R``; the text
  says batches are formed from "unprocessed or restartable requests". Here a cancelled job
  returns to the waiting set at once and competes in the same step's admission
  (``readmit="same-step"``, default) or from the next step (``"next-step"``).
* Algorithm 2's check (3) treats a running job that has produced ``a_i >= õ_i`` tokens as
  finished (its indicator ``õ_i >= t' − p_i`` is false), so its memory is ignored. Here a
  running job is projected with ``max(õ_i, a_i + 1)`` — a certified lower bound, since it
  is still running (``running_estimate="certified"``, default); ``"literal"`` keeps the
  printed rule.
* A_ℓ cancels a job "as soon as it generates ℓ tokens" (text) / "with more than ℓ tokens"
  (pseudo-code): a job that has produced ``ℓ_i`` tokens and is still running has
  ``o_i > ℓ_i``, so it is cancelled then (I-34).

Random tie-breaking uses a ``random.Random(seed)`` re-seeded by ``reset``, so a run is
deterministic for a given seed (DESIGN §4 inv. 3).

Cost per event: ``O(log n)`` heap work per admitted or re-queued request, plus
``O(m)`` for the look-ahead profile (``m`` running requests); A_min's cancellation sorts the
running set (``O(m log m)``, C Thm 3) only when the one-step-ahead projection overflows.
"""

from __future__ import annotations

import heapq
import random

from llmopt.engine.discrete import Decision, RequestView, SimulationError, Visibility
from llmopt.engine.lookahead import LookaheadProfile
from llmopt.policies import LookaheadPrefixPolicy

__all__ = [
    "IntervalPolicyError",
    "interval_of",
    "HSF",
    "ARandom",
    "AMax",
    "AMin",
    "AMinMulti",
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


class _ProjectedRunning:
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


class AMin:
    """A_min (C §4, Algorithm 2): admit on certified lower bounds, cancel when memory runs out.

    Each request keeps a pseudo output length ``õ_i``, a lower bound on ``o_i``: ``ℓ_i`` at
    arrival, raised to the number of tokens it had produced when it is cancelled (never
    lowered). At each decision step ``t``:

    1. if the running set's usage after this step's batch, ``Σ (s_j + a_j + 1)``, would
       exceed ``M``, running requests are cancelled in ascending ``õ`` (ties uniformly at
       random) until it fits; a cancelled request loses its ``a_j`` tokens, gets
       ``õ_j ← max(õ_j, a_j)`` and returns to the waiting set;
    2. waiting requests are taken by ascending ``õ`` (ties uniformly at random) while check
       (5) holds with ``õ`` as their output, running ones projected with
       ``max(õ_j, a_j + 1)``; the first misfit stops admission.

    The policy asks to be woken at the first step whose batch would overflow, so step 1
    always runs in time and, with the default ``running_estimate``, the KV cache never
    overflows. The printed rule (``"literal"``) ignores running requests past ``õ`` in the
    admission check and can overflow it (the engines then stop with an overflow error); it is
    offered to show that gap of Algorithm 2.

    Parameters
    ----------
    seed : int
        Seed of the tie-breaking RNG.
    readmit : {"same-step", "next-step"}
        When cancelled requests may start again (DIGEST I-32; see the module docstring).
    running_estimate : {"certified", "literal", "repaired"}
        How admission projects a running request that has produced ``a_j >= õ_j`` tokens:
        ``max(õ_j, a_j + 1)`` (default) or the printed rule, as already finished (I-33),
        which can overflow the KV cache. ``"repaired"`` admits by the printed rule and then,
        if the next batch would overflow, cancels requests of the whole batch in ascending
        ``õ`` (ties at random) until it fits — requests started at this step are simply
        not started. It keeps the over-admission and churn that C's analysis of A_min
        describes ("all requests are loaded into memory and processed until they are either
        completed or deleted", Lemma 1) while staying feasible.
    """

    name = "a-min"
    visibility = Visibility.HIDDEN

    def __init__(self, seed: int = 0, readmit: str = "same-step", running_estimate: str = "certified") -> None:
        if readmit not in ("same-step", "next-step"):
            raise ValueError(f"readmit must be 'same-step' or 'next-step', got {readmit!r}")
        if running_estimate not in ("certified", "literal", "repaired"):
            raise ValueError(f"running_estimate must be 'certified', 'literal' or 'repaired', got {running_estimate!r}")
        self.seed = int(seed)
        self.readmit = readmit
        self.running_estimate = running_estimate
        if readmit != "same-step" or running_estimate != "certified":
            self.name = f"{type(self).name}(readmit={readmit},running_estimate={running_estimate})"
        self.reset(0)

    def reset(self, M: int) -> None:
        self.M = M
        self.rng = random.Random(self.seed)
        self.queue: list[tuple[int, float, int, RequestView]] = []  # (õ, random tie, position, request)
        self.running = _ProjectedRunning(M, track_due=self.running_estimate == "certified")
        self.pseudo: dict[str, int] = {}  # õ_i of every unfinished request
        self.cancellations = 0

    def initial_estimate(self, request: RequestView) -> int:
        """``õ_i`` at arrival: the lower end ``ℓ_i`` of the request's interval."""
        return interval_of(request, self.name, self.M)[0]

    def _enqueue(self, request: RequestView) -> None:
        heapq.heappush(self.queue, (self.pseudo[request.id], self.rng.random(), request.position, request))

    def on_arrival(self, t: int, request: RequestView) -> None:
        self.pseudo[request.id] = self.initial_estimate(request)
        self._enqueue(request)

    def on_complete(self, t: int, request: RequestView) -> None:
        self.running.remove(request.id)
        del self.pseudo[request.id]

    def _cancel(self, t: int, started: list[str]) -> list[RequestView]:
        """Drop running requests in ascending ``õ`` (ties at random) until the batch of step ``t``
        fits: one started at ``t`` (the repaired reading's over-admission) goes back to the queue
        unstarted and leaves ``started``; an older one is cancelled, ``õ ← max(õ, a)``, and returned."""
        running, pseudo = self.running, self.pseudo
        order = sorted(running.items, key=lambda rid: (pseudo[rid], self.rng.random()))
        cancelled = []
        for rid in order:
            if running.usage_after(t) <= self.M:
                break
            request, start, _ = running.remove(rid)
            if start == t:
                started.remove(rid)
                self._enqueue(request)
            else:
                pseudo[rid] = max(pseudo[rid], t - start)
                cancelled.append(request)
        self.cancellations += len(cancelled)
        return cancelled

    def decide(self, t: int) -> Decision:
        running = self.running
        started: list[str] = []
        cancelled = self._cancel(t, started) if running.usage_after(t) > self.M else []
        if self.readmit == "same-step":
            for request in cancelled:
                self._enqueue(request)
        if self.running_estimate == "certified":
            running.refresh(t)
        queue, profile = self.queue, running.profile
        wake = None
        while queue:
            o_est, _, _, request = queue[0]
            if not profile.fits(t, request.prompt, o_est):
                wake = profile.next_fit(t, request.prompt, o_est)
                break
            heapq.heappop(queue)
            running.add(request, t, o_est)
            started.append(request.id)
        if self.running_estimate == "repaired" and running.usage_after(t) > self.M:
            repaired = self._cancel(t, started)
            cancelled += repaired
            if self.readmit == "same-step":
                for request in repaired:
                    self._enqueue(request)
            wake = t + 1
        if self.readmit == "next-step":
            for request in cancelled:
                self._enqueue(request)
            if cancelled:
                wake = t + 1
        overflow = running.overflow_step(t)
        if overflow is not None and (wake is None or overflow < wake):
            wake = overflow
        return Decision(start=tuple(started), evict=tuple(r.id for r in cancelled), wake_at=wake)


class AMinMulti(AMin):
    """Multi-interval A_min (C §4.2, App. Algorithm 5): A_min with ``õ_i`` starting at the lower
    end of the bucket ``[ℓ_j, u_j]`` the request is classified into.

    The classification is the prediction (C Exp. 2: ten bins of width 100, made by
    :func:`llmopt.workloads.predictions.bin_intervals`), so the policy is A_min on per-request
    intervals; what it adds is Algorithm 5's premise, checked at every arrival: the
    intervals seen form *disjoint buckets* ``u_j <= ℓ_{j+1}`` — two requests' intervals are
    equal or share at most an end point. Per-request overlapping intervals (C Exp. 3) are
    A_min's business (DIGEST §2.19).
    """

    name = "a-min-multi"

    def reset(self, M: int) -> None:
        super().reset(M)
        self.buckets: dict[int, tuple[int, str]] = {}  # ℓ_j -> (u_j, first request seen in it)
        self._lowers: list[int] = []  # sorted ℓ_j

    def initial_estimate(self, request: RequestView) -> int:
        import bisect

        estimate = interval_of(request, self.name, self.M)[0]
        lo, hi = request.lower, request.upper  # the buckets as predicted, before the M − s clamp
        assert lo is not None and hi is not None
        known = self.buckets.get(lo)
        if known is not None:
            if known[0] != hi:
                raise IntervalPolicyError(f"policy {self.name!r}: request {request.id!r} has interval [{lo}, {hi}], "
                                      f"request {known[1]!r} has [{lo}, {known[0]}]: the buckets of Algorithm 5 "
                                      "must be disjoint (use a-min for overlapping intervals)")
            return estimate
        k = bisect.bisect_left(self._lowers, lo)
        clash = None
        if k and self.buckets[self._lowers[k - 1]][0] > lo:
            clash = self._lowers[k - 1]
        elif k < len(self._lowers) and self._lowers[k] < hi:
            clash = self._lowers[k]
        if clash is not None:
            u, other = self.buckets[clash]
            raise IntervalPolicyError(f"policy {self.name!r}: request {request.id!r} has interval [{lo}, {hi}], "
                                      f"which overlaps [{clash}, {u}] of request {other!r}: the buckets of "
                                      "Algorithm 5 must be disjoint (use a-min for overlapping intervals)")
        self.buckets[lo] = (hi, request.id)
        self._lowers.insert(k, lo)
        return estimate


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
        self.running = _ProjectedRunning(M, track_due=False)
        self.stage: dict[str, int] = {}  # 0: projected with ℓ, 1: with u (promoted), 2: with M − s
        self.cancellations = 0
        self._checks: list[tuple[int, int, int, str]] = []  # (start + õ, arrival, position, id) of runs to watch

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
        while queue:
            request = queue[0][1]
            o_est = self._estimate(request)
            if not profile.fits(t, request.prompt, o_est):
                wake = profile.next_fit(t, request.prompt, o_est)
                break
            heapq.heappop(queue)
            running.add(request, t, o_est)
            if o_est < self.M - request.prompt:  # a run projected with M − s cannot outlive it
                heapq.heappush(checks, (t + o_est, request.arrival, request.position, request.id))
            started.append(request.id)
        if checks and (wake is None or checks[0][0] < wake):
            wake = max(checks[0][0], t + 1)
        return Decision(start=tuple(started), evict=tuple(cancelled), wake_at=wake)
