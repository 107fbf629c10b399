"""The independent checker of discrete-time schedules: feasibility and TEL from the Instance alone.

DESIGN §3 ("Checker"): every schedule and every solver solution is re-verified from the
:class:`~llmopt.model.instance.Instance` alone, and every lower bound carries what certifies it.
To stay independent this module imports nothing from the simulator, the policies, the
look-ahead module or the formulations — only :mod:`llmopt.model.instance`, the constants of
:mod:`llmopt.model.tolerance` (a leaf module) and the standard library (not even NumPy: a
command-line ``simulate`` verifies its schedule without paying NumPy's import). Its memory
accounting is written from the model of DESIGN §1 directly:

* a request that starts at step ``k`` completes at ``c = k + o`` and holds
  ``s + (t − k)`` KV-cache tokens at every integer time ``t = k+1 … k+o`` (0 otherwise);
* a schedule is feasible when every request starts at or after its arrival and the
  total usage is ``<= M`` at every integer time;
* ``TEL = Σ_i (k_i + o_i − a_i)``.

:func:`check_schedule`
    Feasibility and TEL of a schedule ``{request id: final start}`` and its evictions, if
    any (the memory an evicted run held before its eviction counts). The time axis is
    sparse, so arrivals may be Unix timestamps and outputs millions of tokens long.

The lower-bound certificates are checked beside it: :mod:`llmopt.verify.certificates` (memory
multipliers ``λ`` over certified windows), :mod:`llmopt.verify.zone_certificate` (``λ`` and
peak-zone multipliers ``μ``) and :mod:`llmopt.verify.energy_certificate` (the energy bound's order).
"""

from __future__ import annotations

import bisect
import numbers
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmopt.model.instance import Instance

__all__ = ["CheckReport", "check_schedule", "PrefillChunks", "prefill_chunks"]

#: How many violations a :class:`CheckReport` lists before summarising the rest.
MAX_VIOLATIONS = 20
#: How many running requests a memory-overflow message names.
_MAX_NAMED = 12
#: When every violation is listed, an overflow longer than this many consecutive times is one entry.
_MAX_TIMES_LISTED = 20


@dataclass(frozen=True)
class CheckReport:
    """Outcome of :func:`check_schedule`.

    Attributes
    ----------
    ok : bool
        ``True`` iff the schedule is feasible for the instance.
    tel : int or None
        Total end-to-end latency recomputed from the instance (arrival to final
        completion); ``None`` unless ``ok`` (an infeasible schedule has no verified TEL).
    violations : tuple of str
        The first :data:`MAX_VIOLATIONS` violations, human readable; a last entry
        ``"... and N more violations"`` summarises the rest.
    makespan : int
        Largest completion time ``k_i + o_i`` (0 when no request has a valid start).
    origin : int
        Time the memory trace starts from: the first arrival (or an earlier start).
    recomputed_tokens : int
        Tokens thrown away by the evictions checked.
    segments : tuple of (b, C, S)
        The memory profile, sparse: usage is ``C + S·(τ − origin)`` for
        ``b < τ − origin <= b'`` (``b'`` the next breakpoint), 0 outside. Computed from
        every run with an integer start (aborted runs included), feasible or not.
    """

    ok: bool
    tel: int | None
    violations: tuple[str, ...]
    makespan: int
    origin: int = 0
    recomputed_tokens: int = 0
    segments: tuple[tuple[int, int, int], ...] = field(default=(), repr=False)

    def memory_at(self, t: int) -> int:
        """KV-cache usage at absolute integer time ``t``."""
        rel = t - self.origin
        i = bisect.bisect_left(self.segments, (rel,)) - 1  # b_i < rel <= b_{i+1}
        if i < 0 or i + 1 >= len(self.segments):
            return 0
        _, c, s = self.segments[i]
        return c + s * rel

    @property
    def memory(self) -> tuple[int, ...]:
        """Dense usage at ``origin + 1 … makespan`` (for an instance whose first arrival is 0:
        ``memory[t-1]`` is the usage at time ``t``). Materialised on demand; prefer
        :meth:`memory_at` and :attr:`peak_memory` on long horizons."""
        out: list[int] = []
        segs = self.segments
        for i in range(len(segs) - 1):
            b, c, s = segs[i]
            hi = min(segs[i + 1][0], self.makespan - self.origin)
            if len(out) < b:
                out.extend([0] * (b - len(out)))
            if hi > b:
                out.extend(c + s * rel for rel in range(b + 1, hi + 1))
        out.extend([0] * (self.makespan - self.origin - len(out)))
        return tuple(out)

    @property
    def peak_memory(self) -> int:
        """Largest usage at any time (0 for an empty schedule)."""
        segs = self.segments
        return max((segs[i][1] + segs[i][2] * segs[i + 1][0] for i in range(len(segs) - 1)), default=0)


def _as_start(value: Any) -> tuple[int | None, str | None]:
    """Parse one start value: an integer, or a one-element sequence of integers.

    Returns ``(start, None)`` or ``(None, reason)``.
    """
    np = sys.modules.get("numpy")  # a NumPy array can only reach here if NumPy is loaded
    if np is not None and isinstance(value, np.ndarray):
        value = list(value.ravel())
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        if len(items) != 1:
            return None, f"has {len(items)} starts; exactly one is required (the model is non-preemptive)"
        value = items[0]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):  # NumPy's bool_ is not Integral
        return None, f"has start {value!r}, which is not an integer"
    return int(value), None


def _as_eviction(item: Any) -> tuple[Any, Any, Any]:
    """``(t, id, tokens_lost)`` of an eviction given as an object, a mapping or a triple."""
    if isinstance(item, Mapping):
        return item.get("t"), item.get("id"), item.get("tokens_lost")
    if isinstance(item, (tuple, list)) and len(item) == 3:
        return item[0], item[1], item[2]
    return getattr(item, "t", None), getattr(item, "id", None), getattr(item, "tokens_lost", None)


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True)
class PrefillChunks:
    """Chunked prefill as :func:`prefill_chunks` reads it from a schedule.

    Attributes
    ----------
    before : dict of (str, int) to int
        ``(id, run start) → prompt tokens prefilled by partial chunks before that start``: the batch
        of the start holds the other ``s − before`` prompt tokens (0 for a start with no chunks).
    pieces : list of (int, str, int, int)
        Every partial chunk as ``(step, id, tokens c, tokens prefilled before it q)``.
    holdings : list of (int, int, int, str)
        ``(a, b, h, id)``: the request holds ``h`` prefilled prompt tokens at every time of ``(a, b]``.
    """

    before: dict[tuple[str, int], int]
    pieces: list[tuple[int, str, int, int]]
    holdings: list[tuple[int, int, int, str]]


def _as_chunk(item: Any) -> tuple[Any, Any, Any]:
    """``(t, id, tokens)`` of a chunk given as a mapping or a triple."""
    if isinstance(item, Mapping):
        return item.get("t"), item.get("id"), item.get("tokens")
    if isinstance(item, (tuple, list)) and len(item) == 3:
        return item[0], item[1], item[2]
    return None, None, None


def prefill_chunks(instance: Instance, runs: Mapping[str, list[tuple[int, int]]], chunks: Any,
                   report: Any) -> PrefillChunks:
    """Read the partial prefill chunks of a schedule against its runs, reporting what is wrong.

    A partial chunk ``(t, id, c)`` puts ``c`` more prompt tokens of request ``id`` into the batch of
    step ``t`` without completing its prompt; it belongs to the request's first run that starts
    after ``t`` (the start's batch holds the rest of the prompt and produces the first token), and
    must lie after the end of the run before that one. ``c = 0`` marks a preempted partial prefill:
    at step ``t`` (before that step's batch) the chunks since the request's last start or preemption
    are dropped. Checked: known ids, integer ``t`` and ``c >= 0``, ``t >= a_i``, at most one chunk of
    a request per step, a run to belong to, a preemption only after a chunk, and fewer than ``s_i``
    tokens prefilled before the start.

    Parameters
    ----------
    instance : Instance
    runs : mapping of str to list of (int, int)
        Every run ``(start, end)`` of each request, aborted and final, sorted by start.
    chunks : iterable
        ``(t, id, tokens)`` triples or mappings with those keys.
    report : callable
        Called with one message per violation.

    Returns
    -------
    PrefillChunks
    """
    by_id: dict[str, list[tuple[int, int]]] = {}
    known = set(instance.ids)
    for j, item in enumerate(chunks or ()):
        t, rid, c = _as_chunk(item)
        where = f"chunk #{j} ({rid!r} at {t!r})"
        if not isinstance(rid, str) or rid not in known:
            report(f"{where}: unknown request id {rid!r} (not in the instance)")
            continue
        if not _is_int(t) or not _is_int(c) or c < 0:
            report(f"{where}: t and tokens must be integers, tokens >= 0, got {t!r} and {c!r}")
            continue
        if t < instance.by_id(rid).arrival:
            report(f"{where}: the chunk is before the arrival {instance.by_id(rid).arrival}")
            continue
        by_id.setdefault(rid, []).append((int(t), int(c)))
    before: dict[tuple[str, int], int] = {}
    pieces: list[tuple[int, str, int, int]] = []
    holdings: list[tuple[int, int, int, str]] = []
    for rid, items in by_id.items():
        items.sort()
        s = instance.by_id(rid).prompt
        rr = runs.get(rid, [])
        ks = [k for k, _e in rr]
        attempt: dict[int, list[tuple[int, int]]] = {}
        for t, c in items:
            # the first run starting after t; a preemption at t comes before a start at t (evictions first)
            j = bisect.bisect_right(ks, t) if c else bisect.bisect_left(ks, t)
            if j == len(ks):
                report(f"request {rid!r}: prefill chunk at step {t} after its last start"
                       + (f" {ks[-1]}" if ks else " (it has none)"))
                continue
            if j and rr[j - 1][1] > t:
                report(f"request {rid!r}: prefill chunk at step {t} while its run ({rr[j - 1][0]}, "
                       f"{rr[j - 1][1]}] runs")
                continue
            attempt.setdefault(ks[j], []).append((t, c))
        for k, seq in attempt.items():
            q = 0
            prev: int | None = None
            for t, c in seq:
                if not c:  # preempted: the chunks so far are dropped at t
                    if prev is None or t <= prev:
                        report(f"request {rid!r}: partial prefill preempted at step {t} with no chunk before it")
                        continue
                    holdings.append((prev, t, q, rid))
                    q, prev = 0, None
                    continue
                if t == prev:
                    report(f"request {rid!r}: two prefill chunks in the batch of step {t}")
                if prev is not None:
                    holdings.append((prev, t, q, rid))
                pieces.append((t, rid, c, q))
                q += c
                prev = t
                if q >= s:
                    report(f"request {rid!r}: {q} prompt tokens prefilled in chunks before its start at {k}, "
                           f"but its prompt has {s}: the start's batch must hold the last of them")
            if prev is not None:
                holdings.append((prev, k, q, rid))
            before[(rid, k)] = q
    return PrefillChunks(before, pieces, holdings)


def _limit(limits: Any, name: str, default: Any) -> Any:
    """Field ``name`` of ``limits`` given as an object (``BatchLimits``) or a mapping (its JSON)."""
    if limits is None:
        return default
    v = limits.get(name, default) if isinstance(limits, Mapping) else getattr(limits, name, default)
    return default if v is None else v


def _check_limits(M: int, runs: list[tuple[str, int, int, int]], limits: Any, report: Any,
                  pc: PrefillChunks | None = None) -> None:
    """Batch limits and the block count of ``runs`` (``(id, start, end, prompt)``), from the runs alone.

    A run ``(k, e]`` is in the batches of steps ``k … e − 1``: with its prompt (``s`` tokens) in the
    batch of ``k``, and one decode token in each later one. The requests in a batch only grow at
    a step where a run starts, and a batch with no start holds only decode tokens, one per request
    — at most the count of the last batch with a start — so both batch limits are checked at the
    start steps. A run's block count ``ceil((s + τ − k) / block_size)`` never falls while it runs,
    so the total is nondecreasing between consecutive run starts and ends: it is checked at each
    such piece's right end, and the first time over the capacity is found by bisection.

    With chunked prefill (``pc``), a start's batch holds only the rest of its prompt, a batch with
    partial chunks is checked too (each chunk is a request of it, with its tokens), and every
    holding ``h`` of a partial prefill adds ``ceil(h / block_size)`` blocks on its interval.
    """
    max_seqs = _limit(limits, "max_num_seqs", None)
    max_tokens = _limit(limits, "max_num_batched_tokens", None)
    block = _limit(limits, "block_size", 1)
    for name, v in (("max_num_seqs", max_seqs), ("max_num_batched_tokens", max_tokens), ("block_size", block)):
        if v is not None and (not _is_int(v) or v < 1):
            report(f"limits: {name} = {v!r} is not a positive integer")
            return
    if max_seqs is not None or max_tokens is not None:
        # start step -> [requests starting, their prompt tokens in this batch, partial chunks, their tokens]
        prefill: dict[int, list[int]] = {}
        before = pc.before if pc else {}
        for rid, k, _e, s in runs:
            acc = prefill.setdefault(k, [0, 0, 0, 0])
            acc[0] += 1
            acc[1] += s - before.get((rid, k), 0) if before else s
        events: dict[int, int] = {}
        for _rid, k, e, _s in runs:
            events[k] = events.get(k, 0) + 1
            events[e] = events.get(e, 0) - 1
        for t, _rid, c, _q in pc.pieces if pc else ():
            acc = prefill.setdefault(t, [0, 0, 0, 0])
            acc[2] += 1
            acc[3] += c
            events.setdefault(t, 0)
        active = 0
        for tau in sorted(events):
            active += events[tau]
            if tau not in prefill:
                continue
            n_new, start_tokens, n_chunks, chunk_tokens = prefill[tau]
            tokens_new = start_tokens + chunk_tokens
            seqs, tokens = active + n_chunks, (active - n_new) + tokens_new
            n_new += n_chunks
            if max_seqs is not None and seqs > max_seqs:
                report(f"batch of step {tau}: {seqs} requests > max_num_seqs = {max_seqs}")
            if max_tokens is not None and tokens > max_tokens:
                what = "starts and chunks" if n_chunks else "starts"
                report(f"batch of step {tau}: {tokens} tokens ({tokens_new} prompt tokens of {n_new} {what} "
                       f"+ {seqs - n_new} decodes) > max_num_batched_tokens = {max_tokens}")
    if block > 1:
        cap = M // block
        holds = sorted(pc.holdings) if pc else []
        points = sorted({k for _r, k, _e, _s in runs} | {e for _r, _k, e, _s in runs}
                        | {a for a, _b, _h, _r in holds} | {b for _a, b, _h, _r in holds})
        held = 0  # blocks of the partial prefills holding on the current piece

        def blocks(tau: int, live: list[tuple[str, int, int, int]]) -> int:
            return held + sum(-(-(s + tau - k) // block) for _r, k, _e, s in live)

        by_start = sorted(runs, key=lambda run: run[1])
        live: list[tuple[str, int, int, int]] = []
        live_holds: list[tuple[int, int, int, str]] = []
        j = jh = 0
        for lo, hi in zip(points, points[1:]):  # the same runs hold memory at every time of (lo, hi]
            while j < len(by_start) and by_start[j][1] <= lo:
                live.append(by_start[j])
                j += 1
            live = [run for run in live if run[2] > lo]
            if holds:
                while jh < len(holds) and holds[jh][0] <= lo:
                    live_holds.append(holds[jh])
                    jh += 1
                live_holds = [x for x in live_holds if x[1] > lo]
                held = sum(-(-h // block) for _a, _b, h, _r in live_holds)
            if (not live and not held) or blocks(hi, live) <= cap:
                continue
            a, b = lo + 1, hi  # first time over the capacity: blocks() is nondecreasing on (lo, hi]
            while a < b:
                mid = (a + b) // 2
                if blocks(mid, live) > cap:
                    b = mid
                else:
                    a = mid + 1
            ids = [run[0] for run in live] + [x[3] for x in live_holds]
            names = ", ".join(ids[:_MAX_NAMED]) + (", ..." if len(ids) > _MAX_NAMED else "")
            report(f"memory at time {a} is {blocks(a, live)} blocks of {block} > M // block_size = {cap} "
                   f"blocks (running: {names})")


def check_schedule(
    instance: Instance, starts: Mapping[str, Any], *, evictions: Any = None,
    max_violations: int | None = MAX_VIOLATIONS, limits: Any = None, chunks: Any = None,
) -> CheckReport:
    """Verify a schedule against ``instance`` (DESIGN §1): final starts, and evictions if any.

    Checks, from the instance alone:

    1. every request of the instance has exactly one final start, and it is an integer
       (a value may also be a one-element sequence; longer sequences are rejected);
    2. no start or eviction names an id that is not in the instance;
    3. ``k_i >= a_i`` for every run (aborted runs included);
    4. every eviction ``(t, id, tokens_lost)`` describes an aborted run
       ``(t − tokens_lost, t]`` with ``1 <= tokens_lost <= o_i − 1`` (a run that produced
       ``o_i`` tokens completed), and a request's runs do not overlap and all end by its
       final start;
    5. the KV-cache usage ``Σ usage(t) <= M`` at every integer time ``t``, where a run
       started at ``k`` uses ``s_i + (t − k)`` at ``t = k+1 … end`` (``end = k + o_i`` for
       the final run, the eviction step for an aborted one) — so the memory an evicted
       run held before its eviction counts.

    Non-preemption needs no separate check: a run started at ``k`` holds the ``o_i``
    consecutive steps ``k … k+o_i−1`` (or until its eviction) by definition of the usage
    above. ``TEL = Σ_i (k_i + o_i − a_i)`` with ``k_i`` the final start.

    The memory profile is sparse: a run ``(k, end]`` adds ``(s − k)`` to a constant part and
    ``1`` to a slope part, so between consecutive breakpoints (run starts and ends) the
    usage is ``C + S·t`` with ``S >= 0``; it is checked at every integer time through the
    segment's right end, and the overflowing times of a segment are counted in closed
    form. Nothing is proportional to the time span (arrivals may be Unix timestamps).

    Parameters
    ----------
    instance : Instance
    starts : mapping of str to int
        Final start step of every request.
    evictions : iterable, optional
        Evictions as objects with ``t``, ``id``, ``tokens_lost`` (e.g.
        :class:`llmopt.model.schedule.Eviction`), mappings with those keys (the JSON of
        ``Schedule.to_dict()``), or ``(t, id, tokens_lost)`` triples.
    max_violations : int or None
        How many violations to list before summarising the rest in one last entry
        (default :data:`MAX_VIOLATIONS`; ``None`` lists them all).
    limits : BatchLimits or mapping, optional
        The limits the schedule claims to respect (``Schedule.limits`` or the ``"limits"`` of its
        JSON: ``max_num_seqs``, ``max_num_batched_tokens``, ``block_size``). Then also:

        6. the batch of every step ``τ`` holds at most ``max_num_seqs`` requests (runs with
           ``k <= τ < end``) and at most ``max_num_batched_tokens`` tokens (the prompts of the
           runs starting at ``τ`` plus one per other request);
        7. with ``block_size = B > 1``, ``Σ ceil(usage_i(t) / B) <= M // B`` blocks at every time.
    chunks : iterable, optional
        Chunked prefill: ``(t, id, tokens)`` of every *partial* prefill chunk (see
        :func:`prefill_chunks`, which checks them). A request prefilled in chunks holds its prefilled
        prompt tokens from the batch of its first chunk until its start, and they count in checks 5
        and 7; in check 6 a batch holds each chunk's tokens and each start's *rest* of its prompt,
        and a request with a chunk in it counts as one of its requests.

    Returns
    -------
    CheckReport
        ``ok`` and the recomputed ``tel`` (``None`` unless feasible), the violations,
        the sparse memory profile, the makespan and the recomputed tokens.
    """
    violations: list[str] = []
    n_violations = 0
    cap = float("inf") if max_violations is None else max(1, max_violations)

    def report(msg: str) -> None:
        nonlocal n_violations
        n_violations += 1
        if len(violations) < cap:
            violations.append(msg)

    known = set(instance.ids)
    for rid in starts:
        if rid not in known:
            report(f"unknown request id {rid!r} (not in the instance)")

    final: dict[str, int] = {}
    tel = 0
    for r in instance.requests:
        if r.id not in starts:
            report(f"request {r.id!r} has no start")
            continue
        k, why = _as_start(starts[r.id])
        if k is None:
            report(f"request {r.id!r} {why}")
            continue
        if k < r.arrival:
            report(f"request {r.id!r} starts at {k} before its arrival {r.arrival}")
        final[r.id] = k
        tel += k + r.output - r.arrival

    aborted: dict[str, list[tuple[int, int]]] = {}
    recomputed = 0
    for j, item in enumerate(evictions or ()):
        t, rid, lost = _as_eviction(item)
        where = f"eviction #{j} ({rid!r} at {t!r})"
        if not isinstance(rid, str) or rid not in known:
            report(f"{where}: unknown request id {rid!r} (not in the instance)")
            continue
        if not _is_int(t) or not _is_int(lost):
            report(f"{where}: t and tokens_lost must be integers, got {t!r} and {lost!r}")
            continue
        r = instance.by_id(rid)
        t, lost = int(t), int(lost)
        if not 1 <= lost <= r.output - 1:
            report(f"{where}: tokens_lost = {lost}, but an aborted run of request {rid!r} produces "
                   f"1 … {r.output - 1} tokens (o = {r.output})")
            continue
        if t - lost < r.arrival:
            report(f"{where}: the aborted run starts at {t - lost} before the arrival {r.arrival}")
        aborted.setdefault(rid, []).append((t - lost, t))
        recomputed += lost

    run_ids: list[str] = []
    run_k: list[int] = []
    run_end: list[int] = []
    run_s: list[int] = []
    for r in instance.requests:
        runs = sorted(aborted.get(r.id, ()))
        for (k0, e0), (k1, _e1) in zip(runs, runs[1:]):
            if k1 < e0:
                report(f"request {r.id!r}: aborted runs ({k0}, {e0}] and ({k1}, {_e1}] overlap")
        if r.id in final and runs and runs[-1][1] > final[r.id]:
            k_last, e_last = max(runs, key=lambda run: run[1])
            report(f"request {r.id!r}: aborted run ({k_last}, {e_last}] ends after its final start {final[r.id]}")
        if r.id in final:
            runs.append((final[r.id], final[r.id] + r.output))
        for k, e in runs:
            run_ids.append(r.id)
            run_k.append(k)
            run_end.append(e)
            run_s.append(r.prompt)

    pc: PrefillChunks | None = None
    if chunks:
        by_run: dict[str, list[tuple[int, int]]] = {}
        for rid, k, e in zip(run_ids, run_k, run_end):
            by_run.setdefault(rid, []).append((k, e))
        for v in by_run.values():
            v.sort()
        pc = prefill_chunks(instance, by_run, chunks, report)

    makespan = max((final[r.id] + r.output for r in instance.requests if r.id in final), default=0)
    first = min((r.arrival for r in instance.requests), default=0)
    origin = min([first, *run_k]) if run_k else first
    segments: tuple[tuple[int, int, int], ...] = ()
    if run_k:
        # usage is C + S·τ on each segment (bps[i], bps[i+1]], τ relative to the origin: a run
        # (k, e] of prompt s adds s − k per unit of C and 1 to S on (k, e]
        delta: dict[int, list[int]] = {}
        for k, e, s in zip(run_k, run_end, run_s):
            k, e = k - origin, e - origin
            dk = delta.setdefault(k, [0, 0])
            dk[0] += s - k
            dk[1] += 1
            de = delta.setdefault(e, [0, 0])
            de[0] -= s - k
            de[1] -= 1
        for a, b, h, _rid in pc.holdings if pc else ():  # a partial prefill holds h tokens on (a, b]
            delta.setdefault(a - origin, [0, 0])[0] += h
            delta.setdefault(b - origin, [0, 0])[0] -= h
        bps = sorted(delta)
        C: list[int] = []
        S: list[int] = []
        c = n_run = 0
        for bp in bps:
            dc, ds = delta[bp]
            c += dc
            n_run += ds
            C.append(c)
            S.append(n_run)
        segments = tuple(zip(bps, C, S))
        M = instance.M
        # usage at a segment's right end is its maximum (S >= 0): the overflowing segments
        over = [i for i in range(len(bps) - 1) if C[i] + S[i] * bps[i + 1] > M]
        if over:
            first_over = []  # first overflowing time of each: usage is nondecreasing on a segment
            for i in over:
                lo = bps[i] + 1
                first_over.append(max((M - C[i]) // S[i] + 1 if S[i] > 0 else lo, lo))
            counts = [bps[i + 1] - f + 1 for i, f in zip(over, first_over)]
            remaining = sum(counts)
            for seg, tau0, cnt in zip(over, first_over, counts):
                # the running set is the same at every time of a segment: name it once
                t_first = tau0 + origin
                running = list(dict.fromkeys(run_ids[j] for j in range(len(run_ids))
                                             if run_k[j] < t_first <= run_end[j]))
                names = ", ".join(running[:_MAX_NAMED]) + (", ..." if len(running) > _MAX_NAMED else "")
                if max_violations is None and cnt > _MAX_TIMES_LISTED:  # list all: one entry per long stretch
                    t_last = t_first + cnt - 1
                    peak = int(C[seg] + S[seg] * (tau0 + cnt - 1))
                    report(f"memory exceeds M = {M} at every time {t_first}..{t_last} ({cnt} times, up to {peak}) "
                           f"(running: {names})")
                    remaining -= cnt
                else:
                    for tau in range(tau0, tau0 + cnt):
                        report(f"memory at time {tau + origin} is {int(C[seg] + S[seg] * tau)} > M = {M} "
                               f"(running: {names})")
                        remaining -= 1
                        if n_violations > cap:
                            break
                if n_violations > cap:
                    n_violations += remaining
                    break

    if limits is not None and run_k:
        _check_limits(instance.M, list(zip(run_ids, run_k, run_end, run_s)), limits, report, pc)

    if n_violations > len(violations):
        violations.append(f"... and {n_violations - len(violations)} more violations")
    ok = n_violations == 0
    return CheckReport(ok=ok, tel=tel if ok else None, violations=tuple(violations), makespan=makespan,
                       origin=origin, recomputed_tokens=recomputed, segments=segments)


#: The certificate checks that lived in this module until the certificates got modules of their own;
#: still reachable here for one release.
_MOVED_TO = {"CertificateError": "certificates", "certificate_horizon": "certificates",
             "certified_windows": "certificates", "check_lower_bound_certificate": "certificates",
             "certified_zones": "zone_certificate", "check_zone_certificate": "zone_certificate",
             "check_energy_certificate": "energy_certificate"}


def __getattr__(name: str) -> Any:
    if name not in _MOVED_TO:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    import warnings

    home = f"llmopt.verify.{_MOVED_TO[name]}"
    warnings.warn(f"llmopt.verify.checker.{name} moved to {home}.{name}", DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(home), name)
