"""Discrete-time simulator of one worker (DESIGN §1): a small event loop.

The engine holds the truth (every output length) and a clock ``t`` that counts batches
(iterations). It jumps from event to event — an arrival, a completion, or a step the
policy asked to be woken at — and at each event time ``t``, in this order:

1. requests whose last token was produced in the batch of step ``t − 1`` complete
   (``policy.on_complete(t, request)``; with hidden lengths the policy learns ``o_i`` now);
2. requests with ``a_i = t`` arrive (``policy.on_arrival(t, request)``, in instance order);
3. unless nothing is waiting or running, the engine asks ``policy.decide(t)`` for a
   :class:`Decision`: requests to evict (they lose their tokens and return to waiting),
   requests to start, and optionally the next step ``wake_at`` at which the policy wants
   to be asked again even if nothing happens;
4. it checks the memory of the running set up to the next event and jumps there.

Nothing in the loop scans the waiting queue: the policy keeps its own structures,
updated by the hooks (see :mod:`llmopt.policies` for the protocol and a base class). The
memory check of step 4 is ``O(1)``: the next event is no later than the next completion,
so every running request stays active until then and the usage
``Σ_j (s_j − p_j) + τ · #running`` is linear on ``(t, t_next]`` — its maximum is at
``t_next``. Time origins cost nothing: the loop, the check and the recorded memory trace
(:class:`llmopt.model.schedule.MemoryTrace`) never allocate anything proportional to the time
span, so arrivals may be Unix timestamps and outputs millions of tokens long.

*Step policies* — any object with ``name`` and ``decide(view: StepView) -> Decision`` and
no ``on_arrival`` hook — still work: :class:`StepPolicyAdapter` shows them a fresh
:class:`StepView` of every waiting and running request at every step with work, exactly
as the pre-event simulator did (so they cost ``O(queue)`` per step).

Information model (:class:`Visibility`). A policy sees a request only from its arrival,
as a :class:`RequestView`. With ``Visibility.HIDDEN`` reading ``request.output`` raises
:class:`HiddenOutputError` until the request completes; the number of tokens a running
request has produced is ``t − start`` (the policy knows the starts it chose).

A continuous-time engine (batches of variable wall-clock duration) can drive the same
policies: ``t`` counts iterations, and the token accounting per iteration is the same.
"""

from __future__ import annotations

import enum
import heapq
from dataclasses import dataclass
from typing import Any

from llmopt.model.instance import Instance
from llmopt.model.schedule import Eviction, MemoryTrace, Schedule

__all__ = [
    "Visibility",
    "RequestView",
    "WaitingRequest",
    "RunningRequest",
    "StepView",
    "Decision",
    "SimulationError",
    "HiddenOutputError",
    "EvictionLoopError",
    "eviction_loop_error",
    "DEFAULT_LOOP_LIMIT",
    "StepPolicyAdapter",
    "is_event_policy",
    "effective_visibility",
    "simulate",
]


class Visibility(enum.Enum):
    """What a policy may know about output lengths."""

    FULL = "full"
    """``o_i`` of arrived requests is visible (the J §5.1 setting)."""
    HIDDEN = "hidden"
    """``o_i`` is hidden until the request completes (prediction-based policies)."""


class SimulationError(RuntimeError):
    """A policy broke the model (overflow, unknown id, stall)."""


class HiddenOutputError(SimulationError):
    """A policy read an output length its information model hides."""


#: Loop guard: a run is stopped as an eviction loop once this many evictions happen with no
#: request completing in between (see :class:`EvictionLoopError`).
DEFAULT_LOOP_LIMIT = 10_000


class EvictionLoopError(SimulationError):
    """A policy keeps evicting and nothing completes: an (apparently) infinite eviction loop.

    Raised when ``loop_limit`` evictions happen with no completion in between. For a
    deterministic clearing policy with no arrivals left, two clearings of the same running
    set with no completion between them already prove the loop (the state repeats); a
    count is used because it also bounds randomised clearing (β < 1), where a repeated
    state proves nothing (DIGEST §2.6). Attributes: ``t`` (step or iteration), ``evictions``
    (total so far), ``completed`` (requests done), ``recomputed_tokens``, and ``partial``,
    engine-specific state for reports (the continuous engine stores its partial schedule).
    """

    def __init__(self, message: str, *, t: int, evictions: int, completed: int, recomputed_tokens: int,
                 partial: Any = None) -> None:
        super().__init__(message)
        self.t = t
        self.evictions = evictions
        self.completed = completed
        self.recomputed_tokens = recomputed_tokens
        self.partial = partial


class RequestView:
    """What a policy may see of one arrived request.

    Attributes
    ----------
    id : str
    arrival : int
    prompt : int
    position : int
        Index in the instance (its order in the input file): the deterministic
        tie-breaker policies use after their own key.
    output : int
        The output length ``o_i``. Raises :class:`HiddenOutputError` while it is hidden
        (``Visibility.HIDDEN`` and the request has not completed).
    lower, upper : int or None
        The request's prediction interval ``[ℓ_i, u_i]`` of ``o_i`` (``None`` when the
        instance carries none); always visible.
    """

    __slots__ = ("id", "arrival", "prompt", "position", "_output", "lower", "upper")

    def __init__(self, id: str, arrival: int, prompt: int, position: int, output: int | None,
                 lower: int | None = None, upper: int | None = None) -> None:
        self.id = id
        self.arrival = arrival
        self.prompt = prompt
        self.position = position
        self._output = output
        self.lower = lower
        self.upper = upper

    @property
    def output(self) -> int:
        o = self._output
        if o is None:
            raise HiddenOutputError(
                f"request {self.id!r}: the output length is hidden (Visibility.HIDDEN); "
                "a policy learns it only when the request completes"
            )
        return o

    @property
    def output_known(self) -> bool:
        """Whether :attr:`output` may be read."""
        return self._output is not None

    def __repr__(self) -> str:
        o = self._output if self._output is not None else "hidden"
        return f"RequestView({self.id!r}, arrival={self.arrival}, prompt={self.prompt}, output={o})"


#: The name step policies know waiting requests by.
WaitingRequest = RequestView


@dataclass(frozen=True, slots=True)
class RunningRequest:
    """A running request (step-policy view): started at ``start``, ``generated`` tokens so far."""

    request: RequestView
    start: int
    generated: int

    @property
    def id(self) -> str:
        return self.request.id

    @property
    def arrival(self) -> int:
        return self.request.arrival

    @property
    def prompt(self) -> int:
        return self.request.prompt

    @property
    def position(self) -> int:
        return self.request.position

    @property
    def output(self) -> int:
        return self.request.output

    @property
    def memory(self) -> int:
        """KV usage now (prompt plus tokens produced so far)."""
        return self.request.prompt + self.generated


@dataclass(frozen=True, slots=True)
class StepView:
    """What a step policy sees at step ``t``."""

    t: int
    M: int
    running: tuple[RunningRequest, ...]
    waiting: tuple[RequestView, ...]


@dataclass(frozen=True, slots=True)
class Decision:
    """What a policy does at step ``t``.

    Attributes
    ----------
    start : tuple of str
        Waiting requests to start now (their prompt joins the batch of step ``t``).
    evict : tuple of str
        Running requests to evict first; they lose their tokens and return to waiting
        (they may be started again in the same decision).
    wake_at : int, optional
        A step ``> t`` at which to call ``decide`` again even if no arrival or
        completion happens before. Ignored for step policies (asked every step).
    """

    start: tuple[str, ...] = ()
    evict: tuple[str, ...] = ()
    wake_at: int | None = None


def eviction_loop_error(where: str, name: str, why: str, *, t: int, evictions: list[Eviction], done: int, n: int,
                        partial: Any = None) -> EvictionLoopError:
    """The :class:`EvictionLoopError` both engines raise when their loop guard trips."""
    lost = sum(e.tokens_lost for e in evictions)
    return EvictionLoopError(
        f"{where}: policy {name!r} is in an eviction loop: {why}; {done}/{n} requests done, {lost} tokens recomputed",
        t=t, evictions=len(evictions), completed=done, recomputed_tokens=lost, partial=partial)


def effective_visibility(policy: Any, visibility: Visibility | None) -> Visibility:
    """The information model a run uses: ``HIDDEN`` if the caller asks for it or the policy
    declares it (a ``visibility`` attribute, as prediction-based policies do), else ``FULL``.

    A policy that declares ``Visibility.HIDDEN`` is never shown true output lengths, even
    when the caller asks for ``FULL``: its information model is part of its definition.
    """
    if visibility is Visibility.HIDDEN or getattr(policy, "visibility", None) is Visibility.HIDDEN:
        return Visibility.HIDDEN
    return Visibility.FULL


def is_event_policy(policy: Any) -> bool:
    """Whether ``policy`` follows the event-driven protocol (it has an ``on_arrival`` hook)."""
    return callable(getattr(policy, "on_arrival", None))


class StepPolicyAdapter:
    """Runs a step policy (``decide(view: StepView)``) under the event-driven engine.

    It keeps the waiting and running requests in the order the pre-event simulator did
    (arrival order, evicted requests re-queued at the end; running in start order) and
    asks to be woken at every step while there is work.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name: str = inner.name
        self._M = 0
        self._waiting: dict[str, RequestView] = {}
        self._running: dict[str, tuple[RequestView, int]] = {}

    def reset(self, M: int) -> None:
        self._M = M
        self._waiting = {}
        self._running = {}
        if hasattr(self.inner, "reset"):
            self.inner.reset(M)

    def on_arrival(self, t: int, request: RequestView) -> None:
        self._waiting[request.id] = request

    def on_complete(self, t: int, request: RequestView) -> None:
        self._running.pop(request.id, None)

    def decide(self, t: int) -> Decision:
        if not self._waiting and not self._running:
            return Decision()
        view = StepView(
            t=t,
            M=self._M,
            running=tuple(RunningRequest(r, p, t - p) for r, p in self._running.values()),
            waiting=tuple(self._waiting.values()),
        )
        d = self.inner.decide(view)
        for rid in d.evict:  # invalid ids are the engine's to report
            if rid in self._running:
                self._waiting[rid] = self._running.pop(rid)[0]
        for rid in d.start:
            r = self._waiting.pop(rid, None)
            if r is not None:
                self._running[rid] = (r, t)
        return Decision(start=tuple(d.start), evict=tuple(d.evict), wake_at=t + 1)


def simulate(
    instance: Instance,
    policy: Any,
    *,
    visibility: Visibility | None = None,
    max_steps: int | None = None,
    loop_limit: int = DEFAULT_LOOP_LIMIT,
) -> Schedule:
    """Run ``policy`` on ``instance`` and return the :class:`~llmopt.model.schedule.Schedule`.

    Parameters
    ----------
    instance : Instance
    policy : Policy or StepPolicy
        An event-driven policy (``name``, ``on_arrival``, ``decide(t)``; optional
        ``reset(M)``, ``on_complete``), see :mod:`llmopt.policies`, or a step policy
        (``name``, ``decide(view)``; optional ``reset(M)``), run through
        :class:`StepPolicyAdapter`. ``reset(M)`` is called first when present.
    visibility : Visibility, optional
        ``HIDDEN`` hides output lengths until completion. By default the policy's own
        ``visibility`` attribute decides (``FULL`` when it has none); see
        :func:`effective_visibility`.
    max_steps : int, optional
        Safety cap on the clock; default ``max a + 10·Σo + 1000``.
    loop_limit : int
        Evictions allowed with no completion in between before the run stops with
        :class:`EvictionLoopError` (default :data:`DEFAULT_LOOP_LIMIT`).

    Returns
    -------
    Schedule
        Final starts, completions, TEL, evictions and the memory trace (relative to the
        first arrival, stored sparsely).

    Raises
    ------
    SimulationError
        If the policy starts an unknown or non-waiting request, evicts a non-running
        one, asks to be woken in the past, overflows the memory, or stops making
        progress (requests wait, nothing runs and no wake-up is pending, or the clock
        passes ``max_steps``).
    EvictionLoopError
        If ``loop_limit`` evictions happen with no completion in between.
    HiddenOutputError
        If it reads an output length its information model hides.
    """
    engine = policy if is_event_policy(policy) else StepPolicyAdapter(policy)
    name = policy.name
    reqs = instance.requests
    n, M = len(reqs), instance.M
    order = sorted(range(n), key=lambda i: (reqs[i].arrival, i))  # arrival order, ties by position
    origin = reqs[order[0]].arrival if n else 0
    if max_steps is None:
        max_steps = (reqs[order[-1]].arrival if n else 0) + 10 * instance.total_output + 1000
    if hasattr(engine, "reset"):
        engine.reset(M)
    on_arrival = engine.on_arrival
    on_complete = getattr(engine, "on_complete", None)
    decide = engine.decide
    show = effective_visibility(policy, visibility) is Visibility.FULL
    index = {r.id: i for i, r in enumerate(reqs)}

    views: list[RequestView | None] = [None] * n
    waiting: set[int] = set()
    running: dict[int, int] = {}  # position -> start of its current run
    completions_heap: list[tuple[int, int]] = []  # (completion time, position); stale after an eviction
    base = 0  # Σ_running (s_j − p_j): usage(τ) = base + τ·len(running) while all keep running
    starts: list[int] = [0] * n
    done_at: list[int] = [0] * n
    evictions: list[Eviction] = []
    runs: list[tuple[int, int, int]] = []  # (start, end, prompt) of every run, aborted ones too
    done = nxt = 0
    since_completion = 0  # evictions since the last completion (loop guard)
    t = origin

    while done < n:
        # 1. completions at t (the batch of step t − 1 produced their last token)
        while completions_heap and completions_heap[0][0] == t:
            _, i = heapq.heappop(completions_heap)
            r = reqs[i]
            p = running.get(i)
            if p is None or p + r.output != t:
                continue  # a run that was evicted
            del running[i]
            base -= r.prompt - p
            starts[i], done_at[i] = p, t
            runs.append((p, t, r.prompt))
            done += 1
            since_completion = 0
            view = views[i]
            assert view is not None
            view._output = r.output  # revealed at completion whatever the visibility
            if on_complete is not None:
                on_complete(t, view)
        # 2. arrivals at t
        while nxt < n and reqs[order[nxt]].arrival <= t:
            i = order[nxt]
            r = reqs[i]
            view = RequestView(r.id, r.arrival, r.prompt, i, r.output if show else None, r.lower, r.upper)
            views[i] = view
            waiting.add(i)
            nxt += 1
            on_arrival(t, view)
        if done == n:
            break
        # 3. the policy decides
        wake = None
        if waiting or running:
            d = decide(t)
            for rid in d.evict:
                i = index.get(rid, -1)
                if i not in running:
                    raise SimulationError(f"step {t}: policy {name!r} evicts {rid!r}, which is not running")
                p = running.pop(i)
                base -= reqs[i].prompt - p
                evictions.append(Eviction(t, rid, t - p))
                runs.append((p, t, reqs[i].prompt))
                waiting.add(i)
            since_completion += len(d.evict)
            if since_completion > loop_limit:
                raise eviction_loop_error(f"step {t}", name, f"{since_completion} evictions with no completion "
                                          f"(limit {loop_limit})", t=t, evictions=evictions, done=done, n=n)
            for rid in d.start:
                i = index.get(rid, -1)
                if i not in waiting:
                    raise SimulationError(f"step {t}: policy {name!r} starts {rid!r}, which is not waiting")
                waiting.remove(i)
                running[i] = t
                base += reqs[i].prompt - t
                heapq.heappush(completions_heap, (t + reqs[i].output, i))
            wake = d.wake_at
            if wake is not None and wake <= t:
                raise SimulationError(f"step {t}: policy {name!r} asks to be woken at {wake}, which is not after {t}")
        # 4. the next event, and the memory up to it
        while completions_heap:
            c, i = completions_heap[0]
            if running.get(i) == c - reqs[i].output:
                break
            heapq.heappop(completions_heap)  # drop a stale entry of an evicted run
        t_next = completions_heap[0][0] if completions_heap else None
        if nxt < n and (t_next is None or reqs[order[nxt]].arrival < t_next):
            t_next = reqs[order[nxt]].arrival
        if wake is not None and (t_next is None or wake < t_next):
            t_next = wake
        if t_next is None:
            raise SimulationError(
                f"step {t}: policy {name!r} made no progress: {len(waiting)} request(s) wait, nothing runs "
                "and it asked for no wake-up"
            )
        k = len(running)
        if k and base + t_next * k > M:  # usage is linear on (t, t_next]: first overflow time
            tau = max(t + 1, (M - base) // k + 1)
            raise SimulationError(
                f"step {tau - 1}: policy {name!r} overflows memory at time {tau}: {base + tau * k} > M = {M}"
            )
        if t_next > max_steps:
            if since_completion:
                raise eviction_loop_error(f"step {t}", name, f"the clock passed its cap of {max_steps} steps with "
                                          f"{since_completion} evictions since the last completion", t=t,
                                          evictions=evictions, done=done, n=n)
            raise SimulationError(f"policy {name!r} made no progress by step {max_steps}")
        t = t_next

    tel = sum(done_at[i] - reqs[i].arrival for i in range(n))
    return Schedule(
        policy=name,
        starts={r.id: starts[i] for i, r in enumerate(reqs)},
        completions={r.id: done_at[i] for i, r in enumerate(reqs)},
        tel=tel,
        memory=MemoryTrace(origin, runs),
        evictions=tuple(evictions),
        recomputed_tokens=sum(e.tokens_lost for e in evictions),
    )
