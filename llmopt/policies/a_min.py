"""A_min and multi-interval A_min (Chen–Ye–Zhou C §4, App. Algorithms 2 and 5; DIGEST §2.18–2.19).

The other interval policies and the shared machinery (:func:`interval_of`, the projected
running set) live in :mod:`llmopt.policies.intervals`, whose module docstring compares them.
A_min is the one that cancels on its own lower bounds, so its readings of the printed
pseudo-code, the cycle guard and the choice of default (by the table in
``results/chen/amin-readings/README.md``) are documented here.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Sequence

from llmopt.engine.discrete import Decision, RequestView, Visibility
from llmopt.policies.intervals import IntervalPolicyError, ProjectedRunning, interval_of

__all__ = ["AMin", "AMinMulti"]


class AMin:
    """A_min (C §4, Algorithm 2): admit on certified lower bounds, cancel when memory runs out.

    Each request keeps a pseudo output length ``õ_i``, a lower bound on ``o_i``: ``ℓ_i`` at
    arrival, raised to the number of tokens it had produced when it is cancelled. At each
    decision step ``t``:

    1. if the running set's usage after this step's batch, ``Σ (s_j + a_j + 1)``, would
       exceed ``M``, running requests are cancelled in ascending ``õ`` (ties uniformly at
       random) until it fits; a cancelled request loses its ``a_j`` tokens, gets
       ``õ_j ← max(õ_j, a_j)`` and returns to the waiting set;
    2. waiting requests are taken by ascending ``õ`` (ties uniformly at random) while check
       (5) holds with ``õ`` as their output, running ones projected with
       ``max(õ_j, a_j + 1)``; the first misfit stops admission.

    The policy asks to be woken at the first step whose batch would overflow, so step 1
    always runs in time and, with the default ``running_estimate``, the KV cache never
    overflows.

    **Why this default** (``results/chen/amin-readings/README.md``: every reading on C's theory
    instances and C §6): certified with ``õ ← max(õ, a)`` is the reading nearest C §6 (7 of 10 rows,
    though no reading agrees with C there: every one is at least 1.06× H-SF;
    ``õ ← a`` the other 3, within 3 %; repaired 1.2–3.2× slower); the repaired readings follow
    Lemma 2 / Figure 1 on ``ℓ = 1`` instances, where the default never cancels and orders like
    A_random. No reading matches all of C; the literal one overflows everywhere.

    **Deviations from the printed Algorithm 2, flagged** (besides the re-queueing and the
    projection ``max(õ_j, a_j + 1)`` above, DIGEST I-32/I-33):

    * *õ is never lowered.* Algorithm 2 sets ``õ_i ← a_i`` on cancellation; a request
      cancelled before it reaches its current ``õ_i`` (its ``ℓ_i``, or the ``a`` of an
      earlier cancellation) would get a *smaller* pseudo length, below a bound already
      certified, and jump ahead of fresh requests. The default keeps ``max(õ_i, a_i)`` (the
      text calls õ "a certified lower bound" that is "updated"); ``pseudo_update="assign"``
      is the printed rule.
    * *Ties and cycles.* C breaks ties "uniformly at random", and so does this class — drawing a
      waiting request's tie once, when it joins the queue, where C re-sorts with fresh ties every step
      (``ties="per-step"``; the amin-readings README measures the difference on C §6). A
      deterministic transcription that keeps equal-``õ`` requests in start order (e.g. a
      stable sort of the running set by ``õ`` alone) cancels the request with the *most*
      progress first, and two equal-``õ`` requests can then cancel each other forever:
      ``M = 9``, A arrives at 1 with ``s = 3, o = 4, [3, 4]``, B at 2 with ``s = 2, o = 4,
      [3, 8]``: from step 4 on, every other step cancels whichever of the two started first,
      at ``a = 3 = õ``, so ``õ`` never grows and nothing completes
      (``tests/papers/test_chen_readings_claims.py``).
      With random ties such a cycle ends with probability 1, but it may run long.
      **Cycle guard:** once the *stale* cancellations since the last completion (those that
      raise no ``õ``, as in the cycle above) reach twice the number of unfinished requests
      (each cancelled twice without progress, on average), the running request with the
      largest ``(õ, a)`` (ties at random) is cancelled last — i.e. never, since a running
      request alone always fits (``s + a + 1 <= s + o <= M``). Until then the order is
      exactly C's; cancellations that raise a bound (the churn of the repaired reading) do
      not count, and no committed schedule changed when the guard was added. It does change
      some runs that would finish without it (with C's random ties, 2 of 600 certified and 8
      of 600 repaired runs on small random instances; ``cycle_guard`` below). With
      ``pseudo_update="max"`` the guard ends every cycle: ``õ`` values only rise and are
      bounded by ``o − 1``, so from some step on they are fixed and every cancellation is
      stale; the guard then comes on, the running request with the largest ``õ`` and the
      most tokens is never cancelled while it is on, and it completes within ``o`` steps.
      With ``"assign"`` there is no such argument (``õ`` can fall); the engines'
      eviction-loop guard still stops a run.

    Parameters
    ----------
    seed : int
        Seed of the tie-breaking RNG.
    readmit : {"same-step", "next-step"}
        When cancelled requests may start again: in the same step's admission (default; the
        text forms batches from "unprocessed or restartable requests") or from the next step
        (DIGEST I-32).
    running_estimate : {"certified", "literal", "repaired"}
        How admission projects a running request that has produced ``a_j >= õ_j`` tokens:
        ``max(õ_j, a_j + 1)`` (default) or the printed rule, as already finished (I-33),
        which can overflow the KV cache. ``"repaired"`` admits by the printed rule and then,
        if the next batch would overflow, cancels requests of the whole batch in ascending
        ``õ`` (ties at random) until it fits — requests started at this step are simply
        not started. It keeps the over-admission and churn that C's analysis of A_min
        describes ("all requests are loaded into memory and processed until they are either
        completed or deleted", Lemma 1) while staying feasible.
    pseudo_update : {"max", "assign"}
        ``õ_j`` of a cancelled request: ``max(õ_j, a_j)`` (default) or Algorithm 2's
        ``õ_j ← a_j``, which may lower it (see above).
    ties : {"per-request", "per-step"}
        When a waiting request's random tie is drawn: once, when it joins the queue (default), or
        afresh for every waiting request at every decision, as C re-sorts the waiting requests with
        fresh random ties at each step (the order only matters when the policy decides, so a
        re-sort per decision is a re-sort per step). The running set is re-sorted with fresh ties
        at every cancellation under both.
    cycle_guard : {"stale", "repeat", "off"}
        When the cycle guard comes on: after twice as many stale cancellations since the last
        completion as unfinished requests (default, above); ``"repeat"`` — when a cancellation round
        meets a state it has met since the last completion (the running requests with their ``õ``
        and tokens, the number of unfinished requests and the sum of their ``õ``; with
        ``pseudo_update="max"`` equal sums of the same requests mean equal ``õ``), so a run whose
        states never repeat is never changed; ``"off"`` — never (a cycle then runs into the
        engines' loop guard). ``results/chen/amin-readings/README.md`` counts the runs each changes.
    """

    name = "a-min"
    visibility = Visibility.HIDDEN

    def __init__(self, seed: int = 0, readmit: str = "same-step", running_estimate: str = "certified",
                 pseudo_update: str = "max", ties: str = "per-request", cycle_guard: str = "stale") -> None:
        if readmit not in ("same-step", "next-step"):
            raise ValueError(f"readmit must be 'same-step' or 'next-step', got {readmit!r}")
        if running_estimate not in ("certified", "literal", "repaired"):
            raise ValueError(f"running_estimate must be 'certified', 'literal' or 'repaired', got {running_estimate!r}")
        if pseudo_update not in ("max", "assign"):
            raise ValueError(f"pseudo_update must be 'max' or 'assign', got {pseudo_update!r}")
        if ties not in ("per-request", "per-step"):
            raise ValueError(f"ties must be 'per-request' or 'per-step', got {ties!r}")
        if cycle_guard not in ("stale", "repeat", "off"):
            raise ValueError(f"cycle_guard must be 'stale', 'repeat' or 'off', got {cycle_guard!r}")
        self.seed = int(seed)
        self.ties = ties
        self.cycle_guard = cycle_guard
        self.readmit = readmit
        self.running_estimate = running_estimate
        self.pseudo_update = pseudo_update
        if readmit != "same-step" or running_estimate != "certified":
            self.name = f"{type(self).name}(readmit={readmit},running_estimate={running_estimate})"
        if pseudo_update != "max":
            base = self.name[:-1] + "," if self.name.endswith(")") else f"{type(self).name}("
            self.name = f"{base}pseudo_update={pseudo_update})"
        for key, value, default in (("ties", ties, "per-request"), ("cycle_guard", cycle_guard, "stale")):
            if value != default:
                base = self.name[:-1] + "," if self.name.endswith(")") else f"{self.name}("
                self.name = f"{base}{key}={value})"
        self.reset(0)

    def reset(self, M: int) -> None:
        self.M = M
        self.rng = random.Random(self.seed)
        self.queue: list[tuple[int, float, int, RequestView]] = []  # (õ, random tie, position, request)
        self.running = ProjectedRunning(M, track_due=self.running_estimate == "certified")
        self.pseudo: dict[str, int] = {}  # õ_i of every unfinished request
        self._admitted: dict[str, tuple[int, float, int, RequestView]] = {}  # queue entries of the last starts
        self.cancellations = 0
        self.since_completion = 0  # stale cancellations since the last completion (the cycle guard's clock)
        self.guarded = 0  # cancellation rounds whose order the cycle guard changed
        self._pseudo_sum = 0  # Σ õ over the unfinished requests (the "repeat" guard's state)
        self._states: set[tuple[frozenset[tuple[str, int, int]], int, int]] = set()  # met since the last completion
        self._repeated = False  # the "repeat" guard is on until the next completion

    def initial_estimate(self, request: RequestView) -> int:
        """``õ_i`` at arrival: the lower end ``ℓ_i`` of the request's interval."""
        return interval_of(request, self.name, self.M)[0]

    def _enqueue(self, request: RequestView) -> None:
        heapq.heappush(self.queue, (self.pseudo[request.id], self._tie(), request.position, request))

    def on_arrival(self, t: int, request: RequestView) -> None:
        self.pseudo[request.id] = self.initial_estimate(request)
        self._pseudo_sum += self.pseudo[request.id]
        self._enqueue(request)

    def on_complete(self, t: int, request: RequestView) -> None:
        self.running.remove(request.id)
        self._pseudo_sum -= self.pseudo.pop(request.id)
        self.since_completion = 0
        self._states.clear()
        self._repeated = False

    def on_refused(self, t: int, requests: Sequence[RequestView]) -> None:
        """The engine's batch limits deferred these starts of step ``t`` (:class:`llmopt.engine.core.Worker`).

        Each one leaves the projected running set as if never started and goes back into the queue
        with the entry it was admitted from — same ``õ``, same random tie — so it keeps its place in
        the ascending-``õ`` order and heads the next admission. Its ``õ`` is unchanged: it produced
        no token, so nothing new is certified.

        Parameters
        ----------
        t : int
            The step whose starts were refused.
        requests : sequence of RequestView
            The refused starts, a suffix of the last decision's ``start``.
        """
        for request in requests:
            self.running.remove(request.id)
            entry = self._admitted.pop(request.id, None)
            if entry is None:  # not admitted from the queue at t: cannot happen, but stay in order
                self._enqueue(request)
            else:
                heapq.heappush(self.queue, entry)

    def _tie(self) -> float:
        """The random key that breaks ties in ``õ`` (one draw per request and sort)."""
        return self.rng.random()

    def _guard_on(self) -> bool:
        """The cycle guard is on once the stale cancellations since the last completion reach twice
        the number of unfinished requests (class docstring)."""
        if self.cycle_guard == "stale":
            return self.since_completion >= 2 * len(self.pseudo)
        return self.cycle_guard == "repeat" and self._repeated

    def _note_state(self, t: int) -> None:
        """Record the state of this cancellation round for ``cycle_guard="repeat"``; a repeat turns the guard on."""
        pseudo, items = self.pseudo, self.running.items
        state = (frozenset((rid, pseudo[rid], t - entry[1]) for rid, entry in items.items()), len(pseudo),
                 self._pseudo_sum)
        if state in self._states:
            self._repeated = True
        else:
            self._states.add(state)

    def _cancel(self, t: int, started: dict[str, None]) -> list[RequestView]:
        """Drop running requests in ascending ``õ`` (ties at random) until the batch of step ``t``
        fits: one started at ``t`` (the repaired reading's over-admission) goes back to the queue
        unstarted and leaves ``started``; an older one is cancelled, ``õ`` updated, and returned.
        With the cycle guard on (see the class docstring) the request with the largest ``(õ, a)``
        goes last in the order."""
        running, pseudo, items = self.running, self.pseudo, self.running.items
        keys = {rid: (pseudo[rid], self._tie()) for rid in items}
        order = sorted(items, key=keys.__getitem__)
        if self.cycle_guard == "repeat" and not self._repeated:
            self._note_state(t)
        if self._guard_on():
            top = max(items, key=lambda rid: (keys[rid][0], t - items[rid][1], keys[rid][1]))
            if order[-1] != top:
                order.remove(top)
                order.append(top)
                self.guarded += 1
        assign = self.pseudo_update == "assign"
        cancelled = []
        for rid in order:
            if running.usage_after(t) <= self.M:
                break
            request, start, _ = running.remove(rid)
            if start == t:
                del started[rid]
                self._enqueue(request)
            else:
                new = t - start if assign else max(pseudo[rid], t - start)
                if new <= pseudo[rid]:
                    self.since_completion += 1  # a stale cancellation: no bound rose
                self._pseudo_sum += new - pseudo[rid]
                pseudo[rid] = new
                cancelled.append(request)
        self.cancellations += len(cancelled)
        return cancelled

    def decide(self, t: int) -> Decision:
        running = self.running
        started: dict[str, None] = {}  # an ordered set: the repaired reading takes back many at once
        cancelled = self._cancel(t, started) if running.usage_after(t) > self.M else []
        if self.readmit == "same-step":
            for request in cancelled:
                self._enqueue(request)
        if self.running_estimate == "certified":
            running.refresh(t)
        if self.ties == "per-step" and self.queue:
            self.queue = [(o_est, self._tie(), pos, request) for o_est, _, pos, request in self.queue]
            heapq.heapify(self.queue)
        queue, profile = self.queue, running.profile
        wake = None
        admitted = self._admitted = {}
        while queue:
            o_est, _, _, request = queue[0]
            if not profile.fits(t, request.prompt, o_est):
                wake = profile.next_fit(t, request.prompt, o_est)
                break
            admitted[request.id] = heapq.heappop(queue)
            running.add(request, t, o_est)
            started[request.id] = None
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
