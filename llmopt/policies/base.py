"""The policy protocol and the look-ahead prefix policies (MC-SF, FCFS / MC-Benchmark, J0).

The policy protocol (event-driven)
----------------------------------
The simulator (:mod:`llmopt.engine.discrete`) calls a policy only when something can change,
so a policy keeps its own waiting queue and running set, updated by hooks::

    class Policy(Protocol):
        name: str
        def reset(self, M: int) -> None: ...                            # before each run
        def on_arrival(self, t: int, request: RequestView) -> None: ...  # request arrives at t
        def on_complete(self, t: int, request: RequestView) -> None: ... # its last token is out
        def decide(self, t: int) -> Decision: ...                        # start / evict / wake_at

``decide(t)`` is called at every step where a request arrived or completed, and at the
step the policy last asked for with ``Decision(wake_at=...)``; never when nothing waits
and nothing runs. It returns which waiting requests to start now, which running ones to
evict (they lose their tokens and return to waiting; the policy re-queues them itself),
and optionally ``wake_at``, a later step at which to be asked again even if no event
happens (e.g. when a blocked request will fit because its own memory shrinks as it
starts later; :meth:`llmopt.engine.lookahead.LookaheadProfile.next_fit` computes that step).
Started requests run until they complete or the policy evicts them; the policy knows
their starts, so a running request has produced ``t − start`` tokens. Requests are
:class:`~llmopt.engine.discrete.RequestView` objects: ``id``, ``arrival``, ``prompt``,
``position`` (order in the instance, the last tie-breaker) and ``output``, which raises
:class:`~llmopt.engine.discrete.HiddenOutputError` under ``Visibility.HIDDEN`` until the request
completes. ``reset`` and ``on_complete`` are optional. Under the engine's batch limits
(``max_num_seqs``, ``max_num_batched_tokens``) the engine may refuse the tail of a decision's starts;
it hands them back through ``on_refused(t, requests)`` (the policy puts them back into its queue;
:class:`LookaheadPrefixPolicy` does) and a policy without that hook cannot run under batch limits.
An optional ``set_limits(limits)`` receives the limits and the KV ``block_size`` before ``reset``, and an
optional ``set_pausable(pausable)``, before that, whether the clock has paused iterations
(``Decision.prefill_only``; only the single-worker continuous clock has; see
:class:`llmopt.engine.core.Worker`). A policy must be deterministic
(DESIGN §4 inv. 3) and must not do work proportional to the queue at every event.

Most look-ahead policies are "admit waiting requests in a priority order while the
look-ahead check (5) holds, stop at the first misfit" (J Algorithm 1's rule (6)). Such a
policy is a key function on :class:`LookaheadPrefixPolicy`, which keeps the queue in a
heap and the running set in a shared :class:`~llmopt.engine.lookahead.LookaheadProfile`::

    from llmopt.policies import LookaheadPrefixPolicy

    class LargestPromptFirst(LookaheadPrefixPolicy):
        # Admit the largest prompts first, while the look-ahead check holds.
        name = "largest-prompt-first"

        def key(self, request):
            return (-request.prompt, request.arrival)  # smaller = earlier; ties by position

Step policies (simple, slow)
----------------------------
An object with ``name`` and ``decide(view: StepView) -> Decision`` and no ``on_arrival``
is a *step policy*: it is shown every waiting and running request at every step with
work, as before the event engine (``O(queue)`` per step, fine for small experiments).
:func:`greedy_prefix` implements the prefix rule for them.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from llmopt.engine.discrete import Decision, RequestView, StepView
from llmopt.engine.lookahead import LookaheadProfile

__all__ = [
    "Policy",
    "StepPolicy",
    "LookaheadPrefixPolicy",
    "MCSF",
    "MCSF2",
    "FCFSLookahead",
    "MCBenchmark",
    "J0SemiOnline",
    "J0OnlineStochastic",
    "greedy_prefix",
]


@runtime_checkable
class Policy(Protocol):
    """The event-driven policy protocol (see the module docstring)."""

    name: str

    def on_arrival(self, t: int, request: RequestView) -> None: ...

    def decide(self, t: int) -> Decision: ...


@runtime_checkable
class StepPolicy(Protocol):
    """A step policy: shown the whole state at every step with work."""

    name: str

    def decide(self, view: StepView) -> Decision: ...


class LookaheadPrefixPolicy:
    """Admit waiting requests in :meth:`key` order while check (5) holds; stop at the first misfit.

    Waiting requests sit in a heap ordered by ``(key(request), request.position)``; the
    running ones in a :class:`~llmopt.engine.lookahead.LookaheadProfile`. At each call of
    :meth:`decide` the head of the heap is started while it fits; when it does not, the
    policy asks to be woken at the first step it will fit if nothing else changes
    (:meth:`~llmopt.engine.lookahead.LookaheadProfile.next_fit`), so its schedule is exactly that
    of re-running the prefix rule at every step. Cost per event: ``O(log n)`` for the
    heap plus ``O(m)`` for the profile (``m`` running requests).

    Subclasses define :meth:`key` (smaller first; the instance position breaks ties) and
    may override :meth:`output_estimate`, the output length the check uses for a request
    (its true ``output`` here; a prediction in prediction-based policies).
    """

    name = "lookahead-prefix"

    def __init__(self) -> None:
        self.reset(0)

    def key(self, request: RequestView) -> Any:
        """Priority of a waiting request; smaller is admitted first."""
        raise NotImplementedError

    def output_estimate(self, request: RequestView) -> int:
        """Output length the look-ahead check assumes for ``request``."""
        return request.output

    # --- hooks --------------------------------------------------------------------------

    def reset(self, M: int) -> None:
        self.M = M
        self.queue: list[tuple[Any, int, RequestView]] = []
        self.profile = LookaheadProfile(M)
        self.running: dict[str, tuple[RequestView, int]] = {}  # id -> (request, start)

    def on_arrival(self, t: int, request: RequestView) -> None:
        heapq.heappush(self.queue, (self.key(request), request.position, request))

    def on_complete(self, t: int, request: RequestView) -> None:
        self.profile.remove(request.id)
        self.running.pop(request.id, None)

    def decide(self, t: int) -> Decision:
        queue, profile = self.queue, self.profile
        started: list[str] = []
        while queue:
            request = queue[0][2]
            o = self.output_estimate(request)
            if not profile.fits(t, request.prompt, o):
                return Decision(start=tuple(started), wake_at=profile.next_fit(t, request.prompt, o))
            heapq.heappop(queue)
            profile.add(request.id, t, request.prompt, o)
            self.running[request.id] = (request, t)
            started.append(request.id)
        return Decision(start=tuple(started))

    def on_refused(self, t: int, requests: Any) -> None:
        """The engine's batch limits deferred these starts (see :class:`llmopt.engine.core.Worker`):
        they go back to the queue, as if never started."""
        for request in requests:
            self.requeue(request.id)

    # --- for subclasses that evict ------------------------------------------------------

    def requeue(self, request_id: str) -> None:
        """Take a running request out of the profile and back into the queue (call it for
        every id a :class:`Decision` evicts)."""
        request, _ = self.running.pop(request_id)
        self.profile.remove(request_id)
        heapq.heappush(self.queue, (self.key(request), request.position, request))


class MCSF(LookaheadPrefixPolicy):
    """Memory-Constrained Shortest First (J §4, Algorithm 1).

    Running requests always continue; waiting requests are taken in ascending ``o_i``
    (ties by arrival, then position in the instance — the paper leaves ties open,
    DIGEST I-43) while the look-ahead check (5) holds at every completion time after ``t``.
    """

    name = "mc-sf"

    def key(self, request: RequestView) -> tuple[int, int]:
        return (request.output, request.arrival)


class MCSF2(LookaheadPrefixPolicy):
    """MC-SF₂ (W Thm EC.1): MC-SF with waiting requests taken by ``s_i + o_i`` ascending.

    Its theorem (the instance family on which it is Ω(√M) from OPT) is measured in
    :mod:`llmopt.papers.wang.theorem_ec1`.

    The look-ahead check (5) and the prefix rule are MC-SF's (J Algorithm 1); only the key
    changes: ``(s_i + o_i, a_i)``, then instance position (W leaves ties open, like MC-SF,
    DIGEST I-43). Outputs come from :meth:`output_estimate` (the true ``o_i``).
    """

    name = "mc-sf2"

    def key(self, request: RequestView) -> tuple[int, int]:
        return (request.prompt + self.output_estimate(request), request.arrival)


class FCFSLookahead(LookaheadPrefixPolicy):
    """FCFS with the MC-SF look-ahead check (J App. C Algorithm 2, "MC-Benchmark").

    Waiting requests are taken by arrival (ties by position in the instance) while check (5) holds;
    the first request that does not fit blocks the rest (head-of-line blocking).
    """

    name = "fcfs"

    def key(self, request: RequestView) -> tuple[int]:
        return (request.arrival,)


class MCBenchmark(FCFSLookahead):
    """MC-Benchmark (J App. C Algorithm 2): MC-SF's look-ahead check with requests taken in
    arrival order — the same rule as :class:`FCFSLookahead`, registered under the paper's name."""

    name = "mc-benchmark"


class J0SemiOnline(MCSF):
    """J0 §4 semi-online Algorithm 1 (all requests at ``t = 0``, identical ``s``), read as MC-SF.

    As printed it differs from J Algorithm 1 in three places, all fixed here (DIGEST §2.2):
    the candidate's own completion time is missing from the checked time list (a bug: its
    peak would go unchecked), it "processes U(t)" where the running requests must also be
    processed, and it checks ``t' >= t`` instead of ``t' > t`` (DESIGN §1's memory at time
    ``t`` is the cache before the batch of step ``t``, already counted). With the fixes it is
    MC-SF; its claimed optimality (J0 Thm 4.2) is false (DIGEST §8 T-5).
    """

    name = "j0-semi-online"


class J0OnlineStochastic(MCSF):
    """J0 §5.1 online stochastic Algorithm 2: MC-SF with online arrivals, with the same three
    fixes as :class:`J0SemiOnline` (DIGEST §2.3)."""

    name = "j0-online-stochastic"


def greedy_prefix(view: StepView, order: Iterable[RequestView]) -> Decision:
    """For step policies: admit waiting requests in ``order`` while the look-ahead check (5)
    holds; stop at the first request that does not fit (J Algorithm 1, rule (6))."""
    profile = LookaheadProfile(view.M)
    for r in view.running:
        profile.add(r.id, r.start, r.prompt, r.output)
    chosen = []
    for w in order:
        if not profile.fits(view.t, w.prompt, w.output):
            break
        profile.add(w.id, view.t, w.prompt, w.output)
        chosen.append(w.id)
    return Decision(start=tuple(chosen))
