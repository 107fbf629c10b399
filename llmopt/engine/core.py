"""The engine core: one worker's requests, running set, evictions and loop guard (DESIGN §1–§3).

Both clocks — :func:`llmopt.engine.discrete.simulate` (steps, jumping from event to event)
and :func:`llmopt.engine.continuous.simulate_continuous` (iterations timed by a cost
model) — run the same bookkeeping. It lives here, once, in :class:`Worker`:

* the policy set-up: a step policy is wrapped in :class:`StepPolicyAdapter`, ``reset(M)``
  is called, and the information model (:func:`effective_visibility`) decides whether the
  :class:`RequestView` a policy gets shows ``o_i`` before completion;
* the state: the waiting set, the running dict ``position → start``, the completion heap
  (stale entries of evicted runs stay in it until they reach its top), the aggregate
  ``base = Σ_running (s_j − p_j)`` — the usage at clock ``τ`` is ``base + τ·#running``
  while the running set stays the same — the evictions, every run (for the memory trace)
  and the loop-guard counter;
* the operations: :meth:`Worker.complete` (reveal ``o_i``, ``on_complete``),
  :meth:`Worker.arrive` / :meth:`Worker.arrive_due` (a request routed to this worker becomes
  visible, ``on_arrival``), :meth:`Worker.decide` (ask the policy, apply its
  :class:`Decision`: evictions and starts with their checks, the loop guard, the ``wake_at``
  check), :meth:`Worker.prefill` (what the decision put into the batch) and
  :meth:`Worker.next_completion` (past the stale heap entries).

The clock itself — what time is, when to ask the policy, how the memory is checked up to
the next event, when to stop — stays in the two loops.

A worker does not own the arrival cursor: requests reach it one by one (:meth:`Worker.arrive`)
or, for a single-worker run, as a prefix of the arrival order that the caller's cursor walks
(:meth:`Worker.arrive_due`). Several workers are a parameter, not a third loop: a cluster
engine holds ``K`` workers — each its own ``M``, running set and clock — and a router that
calls ``arrive`` on the one a request goes to; request positions stay the instance's.

Speed
-----
Every loop over requests runs inside a method, so a clock pays a few method calls per
event, never one per request, and nothing per continuous-time iteration without an event.
Two things about CPython 3.11 (the project's interpreter) matter:

* it specialises a function's bytecode once the function has warmed up, and a running loop
  warms it only through an *unconditional* backward jump, which ``while cond:`` does not
  end with. A long loop in a function called once — the engines' main loops,
  :meth:`Worker.arrive_due` when every request arrives at 0 — is therefore written
  ``while True:`` or ``for``: ``while n:`` left the whole continuous loop unspecialised
  (20 % more instructions);
* state on an object costs more than a loop's locals, and a call more than inline code.
  The discrete engine, whose every loop turn is an event, pays that: about 3 % more
  instructions, and up to about 9 % more CPU when events are cheap and many (Poisson
  arrivals); the continuous engine, whose time goes into iterations, does not.

Why two loops, not one
----------------------
One loop over a clock strategy (an object with ``arrival_bound`` / ``should_decide`` /
``advance`` hooks, the discrete and the continuous clock as two such objects) was built
and measured against two thin loops over :class:`Worker`; both gave identical schedules.
The continuous engine runs 13 to 100 times more iterations than it has events (n = 10,000:
260,163 batches for 19,231 events with Poisson arrivals, 275,881 for 2,680 with all at 0),
and the strategy costs hook calls and attribute reads on every iteration: 15–22 % more
instructions. The two clocks also differ in more than time (when the policy is asked, the
idle jump, the memory check over an interval or after a batch, the caps), so two loops of
about 50 lines each are also the clearer code. Instructions per run (``valgrind
--tool=callgrind``, deterministic; MC-SF, ``M = 16,492``, ``n = 2,000``, the seeded
instances of ``benchmarks/engine_core_speed.py``; old = the two loops before this module):

===========================  =======  =================  =================
MC-SF, n = 2,000             old      two loops (these)  one loop + clock
===========================  =======  =================  =================
discrete, all arrive at 0    266.1 M  269.3 M (+1.2 %)   275.4 M (+3.5 %)
discrete, Poisson ρ = 0.8    288.7 M  297.1 M (+2.9 %)   312.6 M (+8.3 %)
continuous, all at 0         674.2 M  669.1 M (−0.8 %)   772.9 M (+14.6 %)
continuous, Poisson ρ = 0.8  605.2 M  612.1 M (+1.1 %)   738.9 M (+22.1 %)
===========================  =======  =================  =================

CPU seconds (``python benchmarks/engine_core_speed.py --reference DIR --repeat 9``, DIR
holding the old ``discrete.py`` and ``continuous.py``: ``time.process_time``, best of 9,
old and new alternating in one process, since on this shared 2-core machine the same code
timed an hour apart differs by 20 %); the schedules are identical in every case, the
evicting ones (α-protection, A_min) included:

=========================================  =====  =====  =====
MC-SF, M = 16,492                          old    new    ratio
=========================================  =====  =====  =====
discrete, all at 0, n = 2,000              0.039  0.040  1.02
discrete, all at 0, n = 10,000             0.140  0.142  1.01
discrete, Poisson ρ = 0.8, n = 2,000       0.042  0.046  1.09
discrete, Poisson ρ = 0.8, n = 10,000      0.189  0.202  1.07
continuous, all at 0, n = 2,000            0.088  0.087  0.98
continuous, all at 0, n = 10,000           0.422  0.436  1.03
continuous, Poisson ρ = 0.8, n = 2,000     0.088  0.089  1.01
continuous, Poisson ρ = 0.8, n = 10,000    0.448  0.457  1.02
continuous, LMSYS λ = 50 /s, n = 10,000    0.209  0.211  1.01
all nine                                   1.666  1.709  1.03
=========================================  =====  =====  =====
"""

from __future__ import annotations

import enum
import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llmopt.engine.blocks import BlockLedger
from llmopt.model.schedule import BatchLimits, Eviction

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
    "Worker",
    "BatchLimits",
    "check_limits_fit",
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
    stall : int
        Iterations the worker loses before this batch, producing nothing (default 0): e.g.
        clearing passes that cost time (α-β clearing's ``pass_cost``). Each lasts
        the cost model's time of a decode batch of the requests that ran when the decision
        began (the batch that did not fit). Only the continuous engine has such a clock; the
        discrete engine, whose clock is the token count (DESIGN §1), refuses a stall.
    chunk : tuple of (str, int)
        Chunked prefill: ``(id, c)`` puts the next ``c`` tokens of waiting
        request ``id``'s prompt into this batch *without* completing it; the request keeps waiting,
        holding the prompt tokens prefilled so far in the KV cache, and must not be evicted
        (it does not run) unless it is preempted: evicting it (:attr:`evict`) drops its prefilled tokens.
        The chunk that completes the prompt is a ``start``: its batch holds the
        remaining ``s − prefilled`` tokens and produces the first output token. Default: none
        (every start prefills its whole prompt, DESIGN §1).
    prefill_only : bool
        A *paused* iteration (vLLM v0's prefill-priority batches): when the decision starts at least
        one request, the batch holds only the starts' prefills; every request that ran before keeps
        its KV cache and tokens (no decode, memory unchanged) and completes one iteration later.
        When nothing is started the flag is ignored (an ordinary decode batch). Only the
        single-worker continuous engine times such a batch; the discrete engine, whose clock is the
        token count (DESIGN §1), and the K-worker clocks refuse it, as do decisions that also chunk
        or stall. Default False.
    """

    start: tuple[str, ...] = ()
    evict: tuple[str, ...] = ()
    wake_at: int | None = None
    stall: int = 0
    chunk: tuple[tuple[str, int], ...] = ()
    prefill_only: bool = False


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


def check_limits_fit(requests: Sequence[Any], M: int, limits: BatchLimits, name: str, refusable: bool,
                     chunked: bool = False) -> None:
    """Refuse a run the limits make impossible, before it starts.

    Raises
    ------
    SimulationError
        If a request needs more blocks than the cache has (``ceil((s + o) / B) > M // B``), policy
        ``name`` has no ``on_refused`` hook (``refusable`` false) while a batch limit is set, or a
        request's prompt alone exceeds ``max_num_batched_tokens`` (it could never start) and the
        policy does not prefill in chunks (``chunked`` false).
    """
    b = limits.block_size
    if b > 1:
        for r in requests:
            if -(-(r.prompt + r.output) // b) > M // b:
                raise SimulationError(f"request {r.id!r}: s + o = {r.prompt + r.output} tokens need "
                                      f"{-(-(r.prompt + r.output) // b)} blocks of {b}, more than the "
                                      f"M // block_size = {M // b} blocks of the KV cache; it can never complete")
    if not limits.batch_limited:
        return
    if not refusable:
        raise SimulationError(f"policy {name!r} cannot run under batch limits (max_num_seqs / "
                              "max_num_batched_tokens): it has no on_refused(t, requests) hook to take back "
                              "the starts a full batch refuses")
    cap = limits.max_num_batched_tokens
    if cap is not None and not chunked:
        for r in requests:
            if r.prompt > cap:
                raise SimulationError(f"request {r.id!r}: prompt of {r.prompt} tokens > max_num_batched_tokens = "
                                      f"{cap}; it could never start (no chunked prefill)")


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

    def set_limits(self, limits: BatchLimits) -> None:
        if hasattr(self.inner, "set_limits"):
            self.inner.set_limits(limits)

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

    def on_refused(self, t: int, requests: Sequence[RequestView]) -> None:
        for r in requests:
            self._running.pop(r.id, None)
        # ahead of the rest: the policy chose them first, and the engine only deferred them
        self._waiting = {**{r.id: r for r in requests}, **self._waiting}

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
        return Decision(start=tuple(d.start), evict=tuple(d.evict), wake_at=t + 1, stall=d.stall)


class Worker:
    """One worker's state and operations, whatever its clock.

    The clock (``t``) is the caller's: steps in discrete time, iterations in continuous
    time. A run started at ``p`` holds ``s + (τ − p)`` tokens at clock ``τ`` and completes
    at ``p + o``; the worker keeps ``base = Σ_running (s_j − p_j)`` so the usage at ``τ`` is
    ``base + τ·len(running)`` until the running set changes.

    Parameters
    ----------
    requests : sequence of Request or TimedRequest
        Every request of the instance, by position (``id``, ``arrival``, ``prompt``,
        ``output``, ``lower``, ``upper``). The worker sees only those that :meth:`arrive`.
    M : int
        KV capacity in tokens (passed to the policy's ``reset``).
    policy : Policy or StepPolicy
        An event-driven policy, or a step policy (wrapped in :class:`StepPolicyAdapter`).
        ``reset(M)`` is called here when present.
    visibility : Visibility, optional
        As in :func:`effective_visibility`.
    loop_limit : int
        Evictions allowed with no completion in between (the loop guard).
    unit : str
        What the clock counts, as error messages name it (``"step"``, ``"iteration"``).
    partial : callable, optional
        ``partial(worker) -> Any``: what the loop guard's :class:`EvictionLoopError` carries as
        ``partial`` (the continuous engine: its partial schedule).
    index : mapping of str to int, optional
        ``request id → position`` of ``requests``, when the caller has it already (a cluster's
        workers share one); built here otherwise.
    limits : BatchLimits, optional
        Batch limits and KV block size (default: none, token-exact). See "Batch limits" below.
    pausable : bool
        Whether the clock times paused iterations (:attr:`Decision.prefill_only`); only the single-worker
        continuous engine does. Otherwise a decision that asks for one is a :class:`SimulationError`. A policy
        with a ``set_pausable(pausable)`` hook is told, before ``set_limits`` and ``reset`` (``vllm`` picks
        its default batching by it).

    Batch limits
    ------------
    With ``max_num_seqs`` or ``max_num_batched_tokens`` set, the worker caps what a decision may
    start. The batch of clock ``t`` holds every running request (one decode token each) and the
    prompts of the requests started at ``t``; the running requests count first. The starts are
    admitted in the policy's order while both limits hold; at the first one that would break a
    limit, it and every later start of the decision are *refused*: they stay waiting, the policy
    is told through its ``on_refused(t, requests)`` hook (it must put them back into its queue),
    and it is asked again at ``t + 1`` (the batch then holds decodes only, so the budget frees).
    A policy without ``on_refused`` cannot run under batch limits (:class:`SimulationError` when
    the worker is built), and a request whose prompt alone exceeds ``max_num_batched_tokens``
    can never start (:class:`SimulationError` naming it). The cost is ``O(starts)`` per decision:
    nothing scans the queue. Before ``reset(M)`` a policy with a ``set_limits(limits)`` hook is
    given the limits (block-aware policies read ``block_size`` there).

    ``block_size = B > 1`` is applied by the clocks' memory checks (:meth:`blocks_at`): a
    request holding ``m`` tokens occupies ``ceil(m / B)`` blocks of the ``M // B`` available.
    That check costs ``O(#running)`` per check instead of ``O(1)``, and only when ``B > 1``.

    Attributes
    ----------
    name : str
        The policy's name.
    n : int
        Requests in the instance (the ``done/n`` of loop-guard messages).
    waiting : set of int
        Positions of arrived requests that do not run.
    running : dict of int to int
        Position → start ``p`` of its current run, in decode iterations (the clock less :attr:`npaused`;
        the clock itself when nothing pauses): the run holds ``s + (τ − npaused) − p`` tokens at clock ``τ``.
    heap : list of (int, int)
        ``(completion, position)`` of every run started, the completion in decode iterations (``p + o``);
        entries of evicted runs are stale.
    base : int
        ``Σ_running (s_j − p_j)``.
    npaused : int
        Paused iterations so far (``len(paused)``): the clock ``τ`` is decode iteration ``τ − npaused``.
    rstart : list of int
        The clock at which each request's current (or last) run started.
    ledger : BlockLedger or None
        With ``block_size > 1``: the running set's offsets ``s_j − p_j``, so that its blocks at any clock
        cost ``O(block_size)`` (:meth:`blocks_at`, :meth:`block_overflow`).
    starts, ends : list of int
        Start and completion of the final run of every completed request (0 for others).
    completed : list of int
        Positions in the order they completed.
    evictions : list of Eviction
    runs : list of (int, int, int)
        ``(start, end, prompt)`` of every run that ended, evicted ones included.
    done : int
        Requests completed.
    since_completion : int
        Evictions since the last completion.
    started : tuple of str
        The ids the last :meth:`decide` started (see :meth:`prefill`).
    stall : int
        The last decision's :attr:`Decision.stall`.
    prefilled : dict of int to int
        Position → prompt tokens in the KV cache of a waiting request whose prompt is being
        prefilled in chunks (:attr:`Decision.chunk`); empty unless the policy chunks.
    held : int
        ``Σ prefilled``: KV tokens held by partial prefills (added to the usage of the running set).
    chunked : tuple of (int, int, int)
        The last decision's partial chunks: ``(position, tokens, prefilled before)``.
    chunk_log : list of (int, int, int)
        ``(clock, position, tokens)`` of every partial chunk so far (the final chunk of a prompt is its start);
        ``tokens = 0``: the partial prefill was evicted at that clock.
    pause : bool
        Whether the last :meth:`decide` paused the running requests (:attr:`Decision.prefill_only`).
    paused : list of int
        Every paused clock so far, ascending (only on a worker built with ``pausable=True``).
    eviction_starts : list of int
        The clock at which each evicted run started, parallel to :attr:`evictions`.

    Paused iterations
    -----------------
    A paused iteration (:attr:`Decision.prefill_only`) gives no token to the requests that ran before it.
    Rather than moving every running request's start one iteration later (``O(#running)`` per pause), the
    running set, the completion heap and :attr:`base` count in *decode iterations*, ``τ − npaused``: a pause
    moves nobody, it adds one to :attr:`npaused` (the requests it starts are placed one decode iteration
    earlier, as their prefill gives them their first token). Clocks convert where a real time is needed:
    :meth:`complete` at ``t`` looks for completions at ``t − npaused``, :meth:`blocks_at` and the clocks'
    memory checks evaluate at ``τ − npaused``, and :attr:`runs` keeps one ``(start clock, end clock, s)``
    per run, which :class:`~llmopt.model.schedule.MemoryTrace` reads together with :attr:`paused`.

    Chunked prefill
    ---------------
    A partial chunk adds ``c`` prompt tokens to the cache of a request that keeps waiting; its start
    later prefills the rest, ``s − prefilled``, and from then on the run is the usual one (``s + τ − p``
    tokens at clock ``τ``). Evicting a partial prefill drops its tokens (a chunk of 0 tokens in
    :attr:`chunk_log`; the loop guard counts it as an eviction). Their holdings enter the memory trace
    as one-step runs (one per clock they are held), and the clocks add :attr:`held` to the usage. A
    run with no chunks touches none of this but one emptiness test per decision.
    """

    __slots__ = ("heap", "running", "waiting", "base", "requests", "views", "index", "done", "since_completion",
                 "loop_limit", "started", "stall", "_decide", "_on_arrival", "_on_complete", "_show", "starts", "ends",
                 "completed", "runs", "evictions", "M", "name", "policy", "n", "unit", "partial", "limits",
                 "_capped", "_max_seqs", "_max_tokens", "_on_refused", "prefilled", "held", "chunked", "chunk_log",
                 "_since", "_finals", "pause", "paused", "pausable", "eviction_starts", "npaused", "rstart",
                 "ledger")  # hot ones first

    def __init__(self, requests: Sequence[Any], M: int, policy: Any, *, visibility: Visibility | None = None,
                 loop_limit: int = DEFAULT_LOOP_LIMIT, unit: str = "step",
                 partial: Callable[[Worker], Any] | None = None, index: Mapping[str, int] | None = None,
                 limits: BatchLimits | None = None, pausable: bool = False) -> None:
        engine = policy if is_event_policy(policy) else StepPolicyAdapter(policy)
        limits = BatchLimits() if limits is None else limits
        self.limits = limits
        self._capped = limits.batch_limited
        self._max_seqs = limits.max_num_seqs or len(requests) + 1
        self._max_tokens = limits.max_num_batched_tokens
        self._on_refused = getattr(engine, "on_refused", None)
        if not limits.is_default:
            check_limits_fit(requests, M, limits, policy.name, self._on_refused is not None,
                             bool(getattr(engine, "chunked_prefill", False)))
        if hasattr(engine, "set_pausable"):
            engine.set_pausable(pausable)
        if hasattr(engine, "set_limits"):
            engine.set_limits(limits)
        if hasattr(engine, "reset"):
            engine.reset(M)
        n = len(requests)
        self.requests = requests
        self.M = M
        self.name: str = policy.name
        self.policy = engine
        self.n = n
        self.loop_limit = loop_limit
        self.unit = unit
        self.partial = partial
        self.index = {r.id: i for i, r in enumerate(requests)} if index is None else index
        self.views: list[RequestView | None] = [None] * n
        self.waiting: set[int] = set()
        self.running: dict[int, int] = {}
        self.heap: list[tuple[int, int]] = []
        self.base = 0
        self.starts = [0] * n
        self.ends = [0] * n
        self.completed: list[int] = []
        self.evictions: list[Eviction] = []
        self.runs: list[tuple[int, int, int]] = []
        self.done = 0
        self.since_completion = 0
        self.started: tuple[str, ...] = ()
        self.stall = 0
        self.prefilled: dict[int, int] = {}
        self.held = 0
        self.chunked: tuple[tuple[int, int, int], ...] = ()
        self.chunk_log: list[tuple[int, int, int]] = []
        self._since: dict[int, int] = {}
        self._finals: list[tuple[int, int]] = []
        self.pause = False
        self.paused: list[int] = []
        self.pausable = pausable
        self.npaused = 0
        self.rstart = [0] * n
        self.ledger = BlockLedger(limits.block_size) if limits.block_size > 1 else None
        self.eviction_starts: list[int] = []
        self._show = effective_visibility(policy, visibility) is Visibility.FULL
        self._on_arrival = engine.on_arrival
        self._on_complete = getattr(engine, "on_complete", None)
        self._decide = engine.decide

    def arrive(self, t: int, i: int) -> None:
        """Request ``i`` reaches this worker at clock ``t``: it waits, and the policy sees it."""
        r = self.requests[i]
        view = RequestView(r.id, r.arrival, r.prompt, i, r.output if self._show else None, r.lower, r.upper)
        self.views[i] = view
        self.waiting.add(i)
        self._on_arrival(t, view)

    def arrive_due(self, t: int, order: Sequence[int], nxt: int, until: float) -> int:
        """:meth:`arrive` ``order[nxt], order[nxt + 1], …`` while their arrival is ``<= until``.

        Parameters
        ----------
        t : int
            The clock the policy is told.
        order : sequence of int
            Positions in arrival order (the caller's arrival feed).
        nxt : int
            The caller's cursor in ``order``.
        until : int or float
            Deliver the requests that arrived by then (same unit as ``arrival``).

        Returns
        -------
        int
            The cursor after the last request delivered.
        """
        reqs, views, show = self.requests, self.views, self._show
        end = len(order)
        while True:  # not `while cond` (see "Speed" above); no range object either: usually one arrival
            if nxt == end:
                return nxt
            i = order[nxt]
            r = reqs[i]
            if r.arrival > until:
                return nxt
            view = RequestView(r.id, r.arrival, r.prompt, i, r.output if show else None, r.lower, r.upper)
            views[i] = view
            self.waiting.add(i)
            self._on_arrival(t, view)
            nxt += 1

    def complete(self, t: int) -> int:
        """Complete the runs that end at ``t``; return how many did.

        Each completed request leaves the running set, its output length is revealed to its
        view whatever the visibility, and ``on_complete(t, view)`` is called, in heap order.
        Stale heap entries (evicted runs) ending at ``t`` are dropped. The heap is keyed in
        decode iterations (``t −`` :attr:`npaused`, see "Paused iterations").
        """
        heap = self.heap
        key = t - self.npaused
        count = 0
        while True:  # not `while cond` (see "Speed" above)
            if not heap or heap[0][0] != key:
                break
            _, i = heapq.heappop(heap)
            r = self.requests[i]
            p = self.running.get(i)
            if p is None or p + r.output != key:
                continue  # a run that was evicted
            del self.running[i]
            s = r.prompt
            self.base -= s - p
            if self.ledger is not None:
                self.ledger.remove(s - p)
            self.ends[i] = t
            self.completed.append(i)
            self.starts[i] = real = self.rstart[i]
            self.runs.append((real, t, s))  # a paused run too: the memory trace takes the paused iterations
            count += 1
            view = self.views[i]
            assert view is not None
            view._output = r.output
            if self._on_complete is not None:
                self._on_complete(t, view)
        if count:
            self.done += count
            self.since_completion = 0
        return count

    def decide(self, t: int, seconds: float | None = None) -> int | None:
        """Ask the policy at clock ``t`` and apply its :class:`Decision`; return its ``wake_at``.

        Evictions come first (each run ends at ``t`` and is recorded; the request waits
        again), then the loop guard, then the starts (each joins the batch of ``t`` and its
        completion ``t + o`` is pushed). Sets :attr:`started`. ``seconds``, the wall-clock
        time of ``t`` when the clock has one, is only named in the loop guard's message.

        Raises
        ------
        SimulationError
            If the policy evicts a request that does not run, starts one that does not
            wait, asks to be woken at or before ``t``, or asks for a stall on a clock
            without seconds (``unit != "iteration"``).
        EvictionLoopError
            If more than ``loop_limit`` evictions happened since the last completion.
        """
        d = self._decide(t)
        evict = d.evict
        if evict:
            running, index, base = self.running, self.index, self.base
            for rid in evict:
                i = index.get(rid, -1)
                if i not in running:
                    if i in self.prefilled:  # a partial prefill: its chunks are dropped
                        self._abort_prefill(t, i)
                        continue
                    raise SimulationError(f"{self.unit} {t}: policy {self.name!r} evicts {rid!r}, which is not running")
                p = running.pop(i)
                s = self.requests[i].prompt
                base -= s - p
                if self.ledger is not None:
                    self.ledger.remove(s - p)
                self.evictions.append(Eviction(t, rid, t - self.npaused - p))  # tokens produced (decode units)
                real = self.rstart[i]
                self.runs.append((real, t, s))
                self.eviction_starts.append(real)
                self.waiting.add(i)
            self.base = base
            self.since_completion += len(evict)
        if self.since_completion > self.loop_limit:
            since, limit = self.since_completion, self.loop_limit
            where = f"{self.unit} {t}" if seconds is None else f"{self.unit} {t} (t = {seconds:.3f} s)"
            raise self.loop_error(t, where, f"{since} evictions with no completion (limit {limit})",
                                  partial=self.partial(self) if self.partial else None)
        if self._finals:
            self._finals = []
        if d.chunk or self.chunked:
            self._chunk(t, d.chunk)
        start = d.start
        refused = False
        if start and self._capped:
            admitted = self._cap(t, start)
            refused = len(admitted) < len(start)
            start = admitted
        self.started = start
        if start:
            reqs, index, waiting, running, heap = self.requests, self.index, self.waiting, self.running, self.heap
            base = self.base
            prefilled, rstart, ledger = self.prefilled, self.rstart, self.ledger
            # the start in decode iterations: a paused batch (running requests before it) adds no decode
            q = t - self.npaused - (1 if d.prefill_only and running else 0)
            for rid in start:
                i = index.get(rid, -1)
                if i not in waiting:
                    raise SimulationError(f"{self.unit} {t}: policy {self.name!r} starts {rid!r}, which is not waiting")
                if prefilled and i in prefilled:
                    self._finish_prefill(t, i)
                waiting.remove(i)
                running[i] = q
                rstart[i] = t
                r = reqs[i]
                base += r.prompt - q
                if ledger is not None:
                    ledger.add(r.prompt - q)
                heapq.heappush(heap, (q + r.output, i))
            self.base = base
        self.pause = False
        if d.prefill_only:
            self._pause(t, d, start)
        stall = self.stall = d.stall
        if stall:
            if self.unit != "iteration" or not isinstance(stall, int) or stall < 0:
                raise SimulationError(f"{self.unit} {t}: policy {self.name!r} asks for a stall of {stall!r}; only "
                                      "the continuous engine has a clock to lose (a non-negative iteration count)")
        wake = d.wake_at
        if wake is not None and wake <= t:
            raise SimulationError(f"{self.unit} {t}: policy {self.name!r} asks to be woken at {wake}, "
                                  f"which is not after {t}")
        if refused and (wake is None or wake > t + 1):
            wake = t + 1  # the refused starts may fit once this batch's prompts have become decodes
        return wake

    def _pause(self, t: int, d: Decision, start: tuple[str, ...]) -> None:
        """Apply :attr:`Decision.prefill_only`: the batch of ``t`` holds only ``start``'s prefills.

        Every request that ran before keeps its tokens. Nobody moves: the running set, the completion heap
        and :attr:`base` count in decode iterations (see "Paused iterations"), so a pause is one more
        :attr:`npaused` (the starts of this batch were already placed one decode iteration earlier by
        :meth:`decide`). ``O(1)`` per paused iteration; :attr:`runs` keeps one ``(start, end, prompt)`` per run,
        and the memory trace takes :attr:`paused` (:class:`~llmopt.model.schedule.MemoryTrace`).
        """
        if not self.pausable:
            raise SimulationError(f"{self.unit} {t}: policy {self.name!r} asks for a prefill-only batch; only the "
                                  "single-worker continuous engine has paused iterations (a prefill-only batch "
                                  "on the token clock, or on a K-worker clock, is not modelled)")
        if d.chunk or self.chunked or d.stall or self._since:
            raise SimulationError(f"{self.unit} {t}: policy {self.name!r} asks for a prefill-only batch together with "
                                  "chunked prefill or a stall, which the engine does not combine")
        if start and len(self.running) > len(start):  # someone ran before: the iteration pauses them
            self.npaused += 1
            self.pause = True
            self.paused.append(t)

    def _cap(self, t: int, start: tuple[str, ...]) -> tuple[str, ...]:
        """The prefix of ``start`` the batch limits admit at ``t``; the rest go back to the policy."""
        seqs = tokens = len(self.running)  # every running request decodes one token in this batch
        max_seqs, max_tokens = self._max_seqs, self._max_tokens
        reqs, index, waiting, prefilled = self.requests, self.index, self.waiting, self.prefilled
        if self.chunked:  # the partial chunks were placed first; the policy answers for them
            seqs += len(self.chunked)
            tokens += sum(c for _i, c, _b in self.chunked)
            if seqs > max_seqs or (max_tokens is not None and tokens > max_tokens):
                raise SimulationError(f"{self.unit} {t}: policy {self.name!r} puts {len(self.chunked)} prefill "
                                      f"chunk(s) into a batch of {seqs} requests and {tokens} tokens, over the "
                                      f"batch limits (max_num_seqs = {self.limits.max_num_seqs}, "
                                      f"max_num_batched_tokens = {max_tokens})")
        for j, rid in enumerate(start):
            i = index.get(rid, -1)
            if i not in waiting:
                return start  # the caller reports it
            s = reqs[i].prompt - prefilled.get(i, 0)
            if seqs + 1 > max_seqs or (max_tokens is not None and tokens + s > max_tokens):
                views = []
                for other in start[j:]:
                    i = index.get(other, -1)
                    if i not in waiting:
                        raise SimulationError(f"{self.unit} {t}: policy {self.name!r} starts {other!r}, "
                                              "which is not waiting")
                    view = self.views[i]
                    assert view is not None
                    views.append(view)
                assert self._on_refused is not None
                self._on_refused(t, views)
                return start[:j]
            seqs += 1
            tokens += s
        return start

    def blocks_at(self, tau: int) -> int:
        """KV blocks the running set holds at clock ``tau`` (``Σ ceil((s_j + τ − p_j) / block_size)``), plus
        ``ceil(h / block_size)`` for each partial prefill holding ``h`` prompt tokens."""
        b = self.limits.block_size
        held = sum(-(-h // b) for h in self.prefilled.values()) if self.prefilled else 0
        if self.ledger is None:  # token-exact: one block per token
            return held + self.base + (tau - self.npaused) * len(self.running)
        return held + self.ledger.total(tau - self.npaused)

    def block_overflow(self, tau: int) -> int | float:
        """The first clock ``≥ tau`` at which :meth:`blocks_at` exceeds the ``M // block_size`` blocks, if the
        running set and the partial prefills stay as they are and no iteration pauses (``inf`` if never).

        ``O(block_size + #partial prefills)`` (:meth:`BlockLedger.first_over
        <llmopt.engine.blocks.BlockLedger.first_over>`); only for ``block_size > 1``. A clock that checks
        the blocks after every batch asks this once per decision instead of counting every iteration.
        """
        b = self.limits.block_size
        assert self.ledger is not None, "block_overflow is for block_size > 1"
        held = sum(-(-h // b) for h in self.prefilled.values()) if self.prefilled else 0
        x = self.ledger.first_over(self.M // b - held, tau - self.npaused)
        if x is None:
            return tau if held > self.M // b else float("inf")
        return x + self.npaused

    def prefill(self) -> tuple[int, int, int, int, int]:
        """The prefill part of the last :meth:`decide`'s batch, as a cost model times it.

        Returns ``(requests, tokens, quadratic term, starts, Σ prompt of the starts)``: the requests
        with prompt tokens in the batch (starts and partial chunks), those tokens, and the attention
        term ``Σ ((p + c)² − p²)`` over their chunks of ``c`` tokens after ``p`` already in the cache
        (``Σ s²`` without chunking: see :class:`~llmopt.model.batch.BatchShape`); then how many requests
        started and their whole prompts, which the decode part (every other running request) needs
        (see :func:`llmopt.engine.continuous.simulate_continuous`).
        """
        reqs, index = self.requests, self.index
        new_n = new_tokens = new_sq = 0
        for rid in self.started:
            s = reqs[index[rid]].prompt
            new_n += 1
            new_tokens += s
            new_sq += s * s
        if not self.chunked and not self._finals:
            return new_n, new_tokens, new_sq, new_n, new_tokens
        fresh = new_tokens
        for _c, before in self._finals:  # a start after partial chunks prefills only the rest of its prompt
            new_tokens -= before
            new_sq -= before * before
        for _i, c, before in self.chunked:
            new_n += 1
            new_tokens += c
            new_sq += c * c + 2 * c * before
        return new_n, new_tokens, new_sq, len(self.started), fresh

    def _chunk(self, t: int, chunk: tuple[tuple[str, int], ...]) -> None:
        """Apply a decision's partial chunks (:attr:`Decision.chunk`); sets :attr:`chunked`."""
        out: list[tuple[int, int, int]] = []
        seen: set[int] = set()
        reqs, index, waiting, prefilled, since = self.requests, self.index, self.waiting, self.prefilled, self._since
        for item in chunk:
            try:
                rid, c = item
            except (TypeError, ValueError):
                raise SimulationError(f"{self.unit} {t}: policy {self.name!r} gives chunk {item!r}, not an "
                                      "(id, tokens) pair") from None
            i = index.get(rid, -1)
            if i not in waiting or i in seen:
                raise SimulationError(f"{self.unit} {t}: policy {self.name!r} prefills a chunk of {rid!r}, which is "
                                      + ("not waiting" if i not in waiting else "chunked twice in one batch"))
            before = prefilled.get(i, 0)
            s = reqs[i].prompt
            if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c < s - before:
                raise SimulationError(f"{self.unit} {t}: policy {self.name!r} prefills a chunk of {c!r} tokens of "
                                      f"{rid!r} ({before} of its {s} prompt tokens prefilled): a partial chunk "
                                      f"has 1 … {s - before - 1} tokens; the chunk that completes a prompt is a start")
            seen.add(i)
            if before:
                self._hold(i, before, t)
            prefilled[i] = before + c
            since[i] = t
            self.held += c
            self.chunk_log.append((t, i, c))
            out.append((i, c, before))
        self.chunked = tuple(out)

    def _hold(self, i: int, h: int, t: int) -> None:
        """Record that request ``i`` held ``h`` prefilled tokens at every clock of ``(since, t]`` (memory trace)."""
        runs = self.runs
        for tau in range(self._since[i] + 1, t + 1):
            runs.append((tau - 1, tau, h - 1))  # a one-step run holds prompt + 1 tokens

    def _abort_prefill(self, t: int, i: int) -> None:
        """Request ``i``'s partial prefill is preempted at ``t``: its prefilled tokens are dropped (logged as a
        chunk of 0 tokens); it keeps waiting."""
        h = self.prefilled.pop(i)
        self._hold(i, h, t)
        del self._since[i]
        self.held -= h
        self.chunk_log.append((t, i, 0))

    def _finish_prefill(self, t: int, i: int) -> None:
        """Request ``i``, partly prefilled, starts at ``t``: its holding becomes the run's."""
        if self._since[i] == t:
            raise SimulationError(f"{self.unit} {t}: policy {self.name!r} starts {self.requests[i].id!r} and "
                                  "prefills a partial chunk of it in the same batch")
        h = self.prefilled.pop(i)
        self._hold(i, h, t)
        del self._since[i]
        self.held -= h
        self._finals.append((self.requests[i].prompt - h, h))

    def next_completion(self) -> int | None:
        """The clock at which the next run completes if no iteration pauses before (``None`` if nothing runs);
        drops stale heap entries."""
        heap = self.heap
        while heap:
            c, i = heap[0]
            if self.running.get(i) == c - self.requests[i].output:
                return c + self.npaused
            heapq.heappop(heap)  # a stale entry of an evicted run
        return None

    def loop_error(self, t: int, where: str, why: str, partial: Any = None) -> EvictionLoopError:
        """The :class:`EvictionLoopError` for this worker's state (see :func:`eviction_loop_error`)."""
        return eviction_loop_error(where, self.name, why, t=t, evictions=self.evictions, done=self.done, n=self.n,
                                   partial=partial)
