"""The record of one simulated run: starts, evictions, completions, memory trace."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from llmopt.model.instance import Instance

__all__ = ["Eviction", "Run", "BatchLimits", "MemoryTrace", "Schedule", "schedule_from_starts"]


@dataclass(frozen=True, slots=True)
class Eviction:
    """Request ``id`` was evicted at step ``t`` after producing ``tokens_lost`` tokens.

    The aborted run started at step ``t − tokens_lost`` and held ``s + (τ − start)`` KV
    tokens at times ``start < τ <= t``.
    """

    t: int
    id: str
    tokens_lost: int

    @property
    def start(self) -> int:
        """Start step of the aborted run."""
        return self.t - self.tokens_lost


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """The batch and memory limits a run was simulated under (recorded so the checker can verify them).

    The defaults (no batch limits, ``block_size = 1``) are the papers' token-exact model (DESIGN §1).

    Attributes
    ----------
    max_num_seqs : int or None
        Most requests in one batch (vLLM's ``max_num_seqs``; ``None``: no limit).
    max_num_batched_tokens : int or None
        Most tokens in one batch: the prompts started in it plus one per decoding request
        (vLLM's ``max_num_batched_tokens``; ``None``: no limit).
    block_size : int
        KV memory is allocated in blocks of this many tokens (vLLM: 16): a request holding ``m``
        tokens occupies ``ceil(m / block_size)`` blocks, and a capacity of ``M`` tokens is
        ``M // block_size`` blocks. 1 is token-exact accounting.
    """

    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    block_size: int = 1

    def __post_init__(self) -> None:
        for name in ("max_num_seqs", "max_num_batched_tokens", "block_size"):
            v = getattr(self, name)
            if v is None and name != "block_size":
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")

    @property
    def is_default(self) -> bool:
        """Whether these are the token-exact, unlimited defaults."""
        return self.max_num_seqs is None and self.max_num_batched_tokens is None and self.block_size == 1

    @property
    def batch_limited(self) -> bool:
        """Whether a batch limit (``max_num_seqs`` or ``max_num_batched_tokens``) is set."""
        return self.max_num_seqs is not None or self.max_num_batched_tokens is not None

    def capacity_blocks(self, M: int) -> int:
        """KV capacity in blocks for a capacity of ``M`` tokens: ``M // block_size``."""
        return M // self.block_size

    def to_dict(self) -> dict[str, int | None]:
        """JSON form (what :func:`llmopt.verify.checker.check_schedule` reads as ``limits``)."""
        return {"max_num_seqs": self.max_num_seqs, "max_num_batched_tokens": self.max_num_batched_tokens,
                "block_size": self.block_size}


@dataclass(frozen=True, slots=True)
class Run:
    """One run of request ``id``: it held ``s + (τ − start)`` tokens at ``start < τ <= end``.

    ``completed`` runs end at the completion time ``start + o``; aborted runs end at the
    eviction step.
    """

    id: str
    start: int
    end: int
    completed: bool


class MemoryTrace(Sequence[int]):
    """KV-cache usage at every integer time, stored sparsely.

    Usage is piecewise linear in time with breakpoints at the starts and ends of runs, so
    the trace keeps one ``(constant, slope)`` pair per breakpoint, never one number per
    step: an instance whose arrivals are Unix timestamps in milliseconds, or whose outputs
    are millions of tokens long, costs ``O(#runs)``.

    As a sequence it is the dense trace *relative to its origin*: ``trace[i]`` is the
    usage at time ``origin + 1 + i``, for ``i < len(trace) = end − origin`` (for an
    instance whose first arrival is 0 that is the classic ``memory[t − 1]`` = usage at
    time ``t``). Use :meth:`at` for absolute times.

    Parameters
    ----------
    origin : int
        Time the trace starts from (the simulator uses the first arrival).
    runs : iterable of (start, end, prompt)
        Every run, aborted runs included.
    paused : iterable of int, optional
        Paused iterations, ascending (vLLM v0's prefill-only batches, continuous clock): a run holding
        tokens across a paused ``t`` (``start < t < end``) gains no token in it, so from ``t + 1`` on it
        holds one token less than ``prompt + (τ − start)``. Default none. One number per pause, not one
        run per paused run and pause.
    """

    __slots__ = ("origin", "_runs", "_built", "_paused")

    def __init__(self, origin: int, runs: Iterable[tuple[int, int, int]] = (), paused: Iterable[int] = ()) -> None:
        self.origin = origin
        self._runs = tuple(runs)
        self._paused = tuple(paused)
        self._built: tuple[list[int], list[int], list[int], int] | None = None

    @classmethod
    def from_values(cls, values: Iterable[int], origin: int = 0) -> MemoryTrace:
        """The trace whose usage at ``origin + 1 + i`` is ``values[i]`` (a dense tuple)."""
        runs = []
        for i, v in enumerate(values):
            if v:  # a run of one step holding exactly v tokens at time origin + 1 + i
                runs.append((origin + i, origin + i + 1, v - 1))
        return cls(origin, runs)

    # --- the sparse form ------------------------------------------------------------------

    def _segments(self) -> tuple[list[int], list[int], list[int], int]:
        """Breakpoints ``b``, constants ``C`` and slopes ``S``: usage is ``C[i] + S[i]·τ`` on
        ``(b[i], b[i+1]]`` (0 before ``b[0]`` and after the last breakpoint); and the end."""
        if self._built is None:
            delta: dict[int, list[int]] = {}
            paused = self._paused
            across = [0] * (len(paused) + 1)  # difference array: runs holding tokens across each pause
            for p, e, s in self._runs:
                if e <= p:
                    continue
                d = delta.setdefault(p, [0, 0])
                d[0] += s - p
                d[1] += 1
                lost = 0
                if paused:  # the pauses in (p, e): each takes one token off the rest of the run
                    lo, hi = bisect_right(paused, p), bisect_left(paused, e)
                    lost = hi - lo
                    across[lo] += 1
                    across[hi] -= 1
                d = delta.setdefault(e, [0, 0])
                d[0] -= s - p - lost
                d[1] -= 1
            k = 0
            for j, t in enumerate(paused):
                k += across[j]
                if k:
                    delta.setdefault(t, [0, 0])[0] -= k
            bps: list[int] = []
            C: list[int] = []
            S: list[int] = []
            c = sl = 0
            for b in sorted(delta):
                dc, ds = delta[b]
                c += dc
                sl += ds
                if (C[-1], S[-1]) == (c, sl) if C else (c, sl) == (0, 0):
                    continue  # nothing changes here
                bps.append(b)
                C.append(c)
                S.append(sl)
            end = max((e for p, e, _s in self._runs if e > p), default=self.origin)
            self._built = (bps, C, S, max(end, self.origin))
        return self._built

    @property
    def end(self) -> int:
        """Last time covered (the makespan for a simulated schedule)."""
        return self._segments()[3]

    def at(self, t: int) -> int:
        """Usage at absolute integer time ``t`` (0 where nothing runs)."""
        bps, C, S, _ = self._segments()
        i = bisect_left(bps, t) - 1  # b[i] < t <= b[i+1]
        if i < 0:
            return 0
        return C[i] + S[i] * t

    @property
    def peak(self) -> int:
        """Largest usage at any time (0 for an empty trace)."""
        bps, C, S, _ = self._segments()
        # linear with slope >= 0 on each segment: the maximum is at its right end
        return max((C[i] + S[i] * bps[i + 1] for i in range(len(bps) - 1)), default=0)

    def segments(self) -> tuple[tuple[int, int, int], ...]:
        """``(b, C, S)`` triples: usage is ``C + S·τ`` from ``τ = b + 1`` to the next ``b``."""
        bps, C, S, _ = self._segments()
        return tuple(zip(bps, C, S))

    def values(self, start: int, stop: int) -> list[int]:
        """Usage at the absolute times ``start, start+1, …, stop − 1``."""
        bps, C, S, _ = self._segments()
        out: list[int] = []
        t = start
        i = bisect_left(bps, t) - 1
        while t < stop:
            nxt = bps[i + 1] if i + 1 < len(bps) else stop  # segment i covers (b[i], b[i+1]]
            hi = min(stop - 1, nxt)
            if i < 0 or i + 1 >= len(bps):
                out.extend([0] * (hi - t + 1))
            elif S[i]:
                out.extend(range(C[i] + S[i] * t, C[i] + S[i] * hi + 1, S[i]))
            else:
                out.extend([C[i]] * (hi - t + 1))
            t = hi + 1
            i += 1
        return out

    def dense(self) -> tuple[int, ...]:
        """The usage at ``origin + 1 … end`` (one number per step)."""
        return tuple(self.values(self.origin + 1, self.end + 1))

    # --- the sequence protocol (dense, relative to the origin) ------------------------------

    def __len__(self) -> int:
        return self.end - self.origin

    @overload
    def __getitem__(self, i: int) -> int: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[int, ...]: ...

    def __getitem__(self, i: int | slice) -> int | tuple[int, ...]:
        n = len(self)
        if isinstance(i, slice):
            lo, hi, step = i.indices(n)
            if step == 1:
                return tuple(self.values(self.origin + 1 + lo, self.origin + 1 + max(lo, hi)))
            return tuple(self.at(self.origin + 1 + j) for j in range(lo, hi, step))
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("memory trace index out of range")
        return self.at(self.origin + 1 + i)

    def __iter__(self) -> Iterator[int]:
        return iter(self.dense())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryTrace):
            return NotImplemented
        if (self.origin, self.end) != (other.origin, other.end):
            return False
        if self._segments()[:3] == other._segments()[:3]:
            return True
        # Both are linear between consecutive points of the union of their breakpoints, so they agree
        # at every integer time iff they agree at both ends of each piece (no dense arrays).
        points = sorted(set(self._segments()[0]) | set(other._segments()[0]))
        return all(self.at(t) == other.at(t) for a, b in zip(points, points[1:]) for t in (a + 1, b))

    def __hash__(self) -> int:
        return hash((self.origin, self.end, self.peak))

    def __repr__(self) -> str:
        n_breaks = len(self._segments()[0])
        return f"MemoryTrace(origin={self.origin}, end={self.end}, peak={self.peak}, breakpoints={n_breaks})"


@dataclass(frozen=True)
class Schedule:
    """Outcome of a simulation (DESIGN §1 semantics).

    Attributes
    ----------
    policy : str
    starts : mapping
        Request id → its *final* start step (the run that completed).
    completions : mapping
        Request id → completion time ``c_i = start + o_i``.
    tel : int
        Total end-to-end latency ``Σ_i (c_i − a_i)``, from arrival to final completion.
    memory : MemoryTrace
        KV usage over time, aborted runs included (sparse; as a sequence, the dense trace
        from the first arrival: ``memory[i]`` is the usage at ``memory.origin + 1 + i``;
        ``memory.at(t)`` for absolute times). A plain sequence given here is read as the
        dense trace from time 1.
    evictions : tuple of Eviction
    recomputed_tokens : int
        Tokens produced and then thrown away by evictions.
    limits : BatchLimits
        The batch limits and block size the run was simulated under (default: none, token-exact).
    chunks : tuple of (int, str, int)
        Chunked prefill (e.g. ``sarathi``): ``(step, id, tokens)`` of every *partial* prefill chunk — the
        chunk that completes a prompt is its start's — and ``(step, id, 0)`` for a partial prefill
        preempted at that step (see :func:`llmopt.verify.checker.prefill_chunks`). Empty by default: every
        prompt is prefilled whole in the batch of its start (DESIGN §1).
    """

    policy: str
    starts: Mapping[str, int]
    completions: Mapping[str, int]
    tel: int
    memory: MemoryTrace = field(repr=False)
    evictions: tuple[Eviction, ...] = ()
    recomputed_tokens: int = 0
    limits: BatchLimits = BatchLimits()
    chunks: tuple[tuple[int, str, int], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.memory, MemoryTrace):
            object.__setattr__(self, "memory", MemoryTrace.from_values(self.memory))

    @property
    def n(self) -> int:
        return len(self.starts)

    @property
    def makespan(self) -> int:
        return max(self.completions.values(), default=0)

    @property
    def peak_memory(self) -> int:
        return self.memory.peak

    def memory_at(self, t: int) -> int:
        """KV usage at absolute time ``t``."""
        return self.memory.at(t)

    @property
    def runs(self) -> tuple[Run, ...]:
        """Every run: the aborted ones (from the evictions) and the final, completed ones."""
        aborted = [Run(e.id, e.start, e.t, False) for e in self.evictions]
        final = [Run(i, k, self.completions[i], True) for i, k in self.starts.items()]
        return tuple(sorted(aborted + final, key=lambda r: (r.start, r.end)))

    def to_dict(self) -> dict[str, Any]:
        """JSON form; ``{"starts": ..., "evictions": ...}`` is what :mod:`llmopt.verify.checker` reads."""
        return {
            "policy": self.policy,
            "tel": self.tel,
            "starts": dict(self.starts),
            "evictions": [{"t": e.t, "id": e.id, "tokens_lost": e.tokens_lost} for e in self.evictions],
            "recomputed_tokens": self.recomputed_tokens,
        } | ({} if self.limits.is_default else {"limits": self.limits.to_dict()}) | (
            {"chunks": [list(c) for c in self.chunks]} if self.chunks else {})


def schedule_from_starts(instance: Instance, starts: Mapping[str, int], policy: str) -> Schedule:
    """The :class:`Schedule` (no evictions) of an :class:`~llmopt.model.instance.Instance` whose requests
    start at ``starts`` — for search stages that place starts directly instead of simulating.

    Nothing is checked here: the hindsight pipeline verifies every schedule with the checker."""
    completions = {r.id: starts[r.id] + r.output for r in instance.requests}
    origin = min((r.arrival for r in instance.requests), default=0)
    runs = [(starts[r.id], completions[r.id], r.prompt) for r in instance.requests]
    tel = sum(completions[r.id] - r.arrival for r in instance.requests)
    return Schedule(policy=policy, starts=dict(starts), completions=completions, tel=tel,
                    memory=MemoryTrace(origin, runs))
