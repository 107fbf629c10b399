"""The look-ahead memory check (5) of Jaillet et al. (J §4, eq. (5)), exact and incremental.

A look-ahead policy admits a candidate request ``(s, o)`` at step ``t`` only if the KV
cache stays within ``M`` at every future time, given the requests already running. This
module keeps the running requests in a :class:`LookaheadProfile` that answers that
question in ``O(log m)`` (``m`` = number of distinct completion times), updates in
``O(m)`` per start or completion, and also answers the question the event-driven
simulator needs: *if nothing else changes, at which later step will the candidate fit?*
(:meth:`LookaheadProfile.next_fit`). Every look-ahead policy (MC-SF, FCFS/MC-Benchmark,
priority lists; α-protection and prediction-interval policies later) shares it.

Model (DESIGN §1)
-----------------
An item ``(p, s, o)`` (start step, prompt, output or predicted output) uses
``s + τ − p`` KV tokens at integer times ``p < τ <= c := p + o`` and 0 otherwise.

Correctness argument
--------------------
Let ``t`` be the current step; every item in the profile has ``p <= t`` and, after
:meth:`LookaheadProfile.advance`, completion ``c > t``. For ``τ > t`` every item has
already started, so the running usage is a function of the completion times alone::

    usage(τ) = Σ_{c_j >= τ} (s_j − p_j)  +  τ · #{j : c_j >= τ}  =  A(τ) + τ·B(τ).

``A`` and ``B`` are suffix sums over the sorted distinct completion times
``c_(0) < c_(1) < …``; they are constant on each segment ``(c_(k−1), c_(k)]``, where
``usage`` is therefore linear with slope ``B >= 0`` — usage is linear between completion
times, so its maximum on a segment is at the segment's right end. A candidate started at
``t`` adds ``s + τ − t`` on ``(t, t+o]`` (also nondecreasing in ``τ``), so the sum is
nondecreasing on every piece of ``(t, t+o]`` cut at the completion times, and the
candidate fits iff it fits at

* every completion time ``c_(j)`` in ``(t, t+o]``:
  ``usage(c_(j)) + s + c_(j) − t <= M``, i.e. ``V_j := usage(c_(j)) + c_(j) <= M − s + t``
  (this is the form ``max_{t<τ<=t+o} (U[τ] + τ) <= M − s + t`` with ``U`` the absolute-time
  profile, evaluated only where it can peak); and
* its own completion ``τ = t+o``: ``A + (t+o)·B + s + o <= M`` with the suffix sums of
  the completion times ``> t+o``.

Checking completion times only is exactly J's argument (J L153), and it stays exact here
because the structure never evaluates ``usage`` anywhere else: it stores, per distinct
completion time, the aggregate ``Σ (s_j − p_j)`` and the count, so ``A``, ``B`` and ``V``
are recomputed *exactly* (integers, no approximation) from those aggregates after every
change, and a query only reads them. Since every stored completion time is ``> t``, the
completion times in ``(t, t+o]`` form a *prefix* of the sorted list, so the first
condition is one comparison with a prefix maximum of ``V``: ``fits`` costs one bisection.

Wake-up times. Between events the stored items do not change, but a blocked candidate's
own contribution ``s + τ − t'`` shrinks as its start ``t'`` moves later, so it can become
feasible at a step with no arrival or completion (example: ``M = 14``, running
``(p, s, o) = (0, 1, 10)``, candidate ``s = 1, o = 3``: fits at ``t' <= 6`` and ``t' >= 8``
but not at 7). :meth:`LookaheadProfile.next_fit` returns the first such step before the
earliest stored completion ``c_(0)``, exactly: for ``t' < c_(0)`` no completion time
leaves the window, the prefix length ``k(t') = #{c <= t'+o}`` is nondecreasing, and on
each range of ``t'`` with a fixed ``k`` the two conditions read
``t' >= max_{j<k} V_j − (M − s)`` and ``t' <= ⌊(M − s − o − A_k) / B_k⌋ − o``; the answer is
the smallest ``t'`` in the first nonempty such interval. If there is none it returns
``c_(0)``, when the profile changes anyway.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Sequence

__all__ = ["LookaheadProfile", "usage_at", "fits"]

Item = tuple[int, int, int]


class LookaheadProfile:
    """Running requests (or their predictions) keyed by completion time, for check (5).

    Parameters
    ----------
    M : int
        KV-cache capacity.

    Notes
    -----
    Items are identified by a key (the request id). :meth:`add` and :meth:`remove` cost
    ``O(m)`` (one insertion into the sorted list of distinct completion times, plus a
    lazy ``O(m)`` rebuild of the suffix sums before the next query); :meth:`fits` costs
    ``O(log m)``; :meth:`next_fit` ``O(log m)`` plus one step per completion time it
    passes. ``m`` is the number of distinct completion times stored, at most the number
    of running requests.
    """

    __slots__ = ("M", "_items", "_by_c", "_d0", "_d1", "_cs", "_A", "_B", "_PM", "_dirty")

    def __init__(self, M: int) -> None:
        self.M = M
        self._items: dict[str, tuple[int, int]] = {}  # key -> (completion c, s − p)
        self._by_c: dict[int, dict[str, None]] = {}  # c -> keys completing at c (an ordered set: O(1) removal)
        self._d0: dict[int, int] = {}  # c -> Σ (s − p) of the items completing at c
        self._d1: dict[int, int] = {}  # c -> how many items complete at c
        self._cs: list[int] = []  # sorted distinct completion times
        self._A: list[int] = [0]  # A[k] = Σ_{j>=k} d0[cs[j]]   (A[m] = 0)
        self._B: list[int] = [0]  # B[k] = Σ_{j>=k} d1[cs[j]]   (B[m] = 0)
        self._PM: list[int] = []  # PM[k] = max_{j<=k} (A[j] + cs[j]·(B[j] + 1))
        self._dirty = False

    # --- updates -----------------------------------------------------------------------

    def add(self, key: str, start: int, prompt: int, output: int) -> None:
        """Store an item that started at ``start`` and completes at ``start + output``."""
        if key in self._items:
            raise KeyError(f"{key!r} is already in the look-ahead profile")
        if output < 1:
            raise ValueError(f"{key!r}: output length must be >= 1, got {output}")
        c = start + output
        self._items[key] = (c, prompt - start)
        if c in self._d1:
            self._d0[c] += prompt - start
            self._d1[c] += 1
            self._by_c[c][key] = None
        else:
            self._d0[c] = prompt - start
            self._d1[c] = 1
            self._by_c[c] = {key: None}
            insort(self._cs, c)
        self._dirty = True

    def remove(self, key: str) -> None:
        """Forget item ``key`` (completed or evicted); a key already expired is ignored."""
        entry = self._items.pop(key, None)
        if entry is None:
            return
        c, base = entry
        del self._by_c[c][key]
        self._d1[c] -= 1
        self._d0[c] -= base
        if self._d1[c] == 0:
            del self._d0[c], self._d1[c], self._by_c[c]
            del self._cs[bisect_left(self._cs, c)]
        self._dirty = True

    def advance(self, t: int) -> None:
        """Drop every item whose completion time is ``<= t`` (it holds no memory after ``t``)."""
        cs = self._cs
        if not cs or cs[0] > t:
            return
        k = bisect_right(cs, t)
        for c in cs[:k]:
            for key in self._by_c.pop(c):
                del self._items[key]
            del self._d0[c], self._d1[c]
        del cs[:k]
        self._dirty = True

    def _rebuild(self) -> None:
        cs, d0, d1 = self._cs, self._d0, self._d1
        m = len(cs)
        A = [0] * (m + 1)
        B = [0] * (m + 1)
        a = b = 0
        for j in range(m - 1, -1, -1):
            c = cs[j]
            a += d0[c]
            b += d1[c]
            A[j] = a
            B[j] = b
        PM = [0] * m
        if m:
            best = A[0] + cs[0] * (B[0] + 1)
            for j in range(m):
                v = A[j] + cs[j] * (B[j] + 1)
                if v > best:
                    best = v
                PM[j] = best
        self._A, self._B, self._PM = A, B, PM
        self._dirty = False

    # --- queries -----------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def completion_times(self) -> tuple[int, ...]:
        """The distinct completion times stored, ascending."""
        return tuple(self._cs)

    def peaks_fit(self, t: int) -> bool:
        """Whether the stored items alone stay within ``M`` after ``t`` (usage at every stored
        completion time, where the linear-between-completions profile peaks)."""
        self.advance(t)
        if self._dirty:
            self._rebuild()
        A, B, M = self._A, self._B, self.M
        return all(A[j] + c * B[j] <= M for j, c in enumerate(self._cs))

    def usage_at(self, tau: int) -> int:
        """Usage of the stored items at time ``tau`` (valid for ``tau`` after every stored start)."""
        if self._dirty:
            self._rebuild()
        k = bisect_left(self._cs, tau)  # items with c >= tau are active at tau
        return self._A[k] + tau * self._B[k]

    def fits(self, t: int, prompt: int, output: int) -> bool:
        """Whether a candidate ``(prompt, output)`` started at ``t`` keeps usage ``<= M`` at
        every time after ``t`` (J eq. (5) with ``t' >= t + 1``; see the module docstring).

        Only the candidate's window ``(t, t + output]`` is examined: the stored items are
        assumed to stay within ``M`` on their own, which holds by induction when every item
        was admitted through this check (:meth:`peaks_fit` verifies it)."""
        self.advance(t)
        if self._dirty:
            self._rebuild()
        end = t + output
        k = bisect_right(self._cs, end)  # completion times in (t, end] are cs[:k]
        if k and self._PM[k - 1] > self.M - prompt + t:
            return False
        return self._A[k] + end * self._B[k] + prompt + output <= self.M

    def next_fit(self, t: int, prompt: int, output: int) -> int | None:
        """The first step ``t' > t`` at which the candidate fits if nothing is added or
        removed meanwhile, searched up to the earliest stored completion ``c_(0)``;
        ``c_(0)`` itself when it fits at no step before (the profile changes then), and
        ``None`` when the profile is empty (the candidate fits at once)."""
        self.advance(t)
        if self._dirty:
            self._rebuild()
        cs, A, B, PM, M = self._cs, self._A, self._B, self._PM, self.M
        if not cs:
            return None
        c0, m = cs[0], len(cs)
        tp = t + 1
        k = bisect_right(cs, tp + output)
        while tp < c0:
            # t' in [tp, hi] all have exactly cs[:k] inside their window (t', t' + output]
            hi = c0 - 1 if k == m else min(c0 - 1, cs[k] - output - 1)
            lo = tp if k == 0 else max(tp, PM[k - 1] - (M - prompt))
            if B[k]:
                hi = min(hi, (M - prompt - output - A[k]) // B[k] - output)
            if lo <= hi:
                return lo
            if k == m:
                break
            tp = cs[k] - output
            k += 1
        return c0


def usage_at(items: Iterable[Item], tau: int) -> int:
    """Total KV usage of items ``(p, s, o)`` at integer time ``tau`` (direct sum)."""
    return sum(s + tau - p for (p, s, o) in items if p < tau <= p + o)


def fits(items: Sequence[Item], t: int, M: int) -> bool:
    """Whether items ``(p, s, o)`` (running requests plus candidates starting at ``t``, all
    with ``p <= t``) stay within ``M`` at every time after ``t``.

    A one-shot convenience over :class:`LookaheadProfile` for step policies; an
    event-driven policy keeps one profile and updates it instead.
    """
    prof = LookaheadProfile(M)
    for i, (p, s, o) in enumerate(items):
        prof.add(str(i), p, s, o)
    return prof.peaks_fit(t)
