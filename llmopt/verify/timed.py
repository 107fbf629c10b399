"""The independent checker's continuous-time mode (DESIGN §2, §3 "Checker").

:func:`check_timed_schedule` re-verifies a continuous-time run from the
:class:`~llmopt.model.timed_instance.TimedInstance`, the cost model, and what the run claims —
each request's final start iteration, the evictions, and the clock of every batch (start
and duration in seconds). Like :mod:`llmopt.verify.checker` it imports nothing from the engines,
the policies or the look-ahead module. It checks:

1. **Arrivals.** Iteration ``k`` may hold a request only if the request had arrived when
   the batch began: its arrival iteration is the first batch starting at or after its
   arrival time. With those integer arrivals the run becomes a discrete schedule in
   iteration units, verified by :func:`llmopt.verify.checker.check_schedule` — starts after
   arrivals, evicted runs well formed, and **memory within M after every batch, evicted
   runs included**.
2. **Every run lies within the recorded batches** (a final run needs ``o_i`` batches).
3. **Batch durations.** The batch shape of every iteration — prompts started, their
   tokens and squared tokens, decoding requests and their KV context ``Σ (s_j + tokens
   so far)`` — is recomputed from the runs alone, and the recorded duration must equal
   ``cost_model(shape)`` (relative tolerance 1e-9). An empty batch is an error.
4. **The clock.** The first batch starts at the first arrival; a batch that continues a
   request of the previous one starts exactly when that one ends; otherwise the worker
   was idle, and the batch starts at the previous end or at an arrival time after it.
   A *stall* (``stalls[k] = m``: clearing passes that cost time) delays batch ``k`` by
   exactly ``m`` times the cost model's time of a decode batch of the requests that ran
   when iteration ``k``'s decision began — recomputed from the runs: those decoding in
   ``k`` plus those evicted at ``k``, each with context ``s + (k − p)``.
5. **Latencies** are recomputed: completion = end of the batch of the last token.

**Chunked prefill** (``chunks``: every *partial* prefill chunk ``(iteration, id, tokens)``): a
prompt may be prefilled over several batches before its start, whose batch holds the rest of it
and produces the first token. Check 1 then also verifies the chunks
(:func:`llmopt.verify.checker.prefill_chunks`: each belongs to a later start of its request, the
prompt is fully prefilled only in the start's batch — so never decoded before — and the prefilled
tokens count in the memory and block checks, the chunk tokens in ``max_num_batched_tokens``);
check 3 times a chunk of ``c`` tokens after ``p`` in the cache as ``c`` prefill tokens with
attention term ``(p + c)² − p²`` (:class:`~llmopt.model.batch.BatchShape`), a start after chunks
as the rest of its prompt.

**Paused iterations** (``paused``: vLLM v0's prefill-priority batches, ``Decision.prefill_only``): a
paused iteration's batch holds only the prefills of the runs that start there; every other run keeps
its tokens. The checks then run on the runs alone, with the paused iterations counted in
(:func:`_check_paused`): a run started at ``k`` ends at the first ``e`` with ``e − k − (paused in
(k, e)) = o`` (an evicted run at ``t`` has produced ``t − k − (paused in (k, t))`` tokens, and its start
is given by ``eviction_starts``); after iteration ``j`` it holds ``s + 1 + (j − k) − (paused in (k, j])``
tokens, so the memory and block counts stay flat across a pause; a paused batch is timed with no
decodes and must hold a prefill; batch limits count every running request, paused or not, as the
engine does. Paused iterations are not combined with chunks or stalls (a violation).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from llmopt.model.instance import Instance, Request
from llmopt.model.timed_instance import TimedInstance
from llmopt.verify.checker import check_schedule, prefill_chunks

__all__ = ["TimedCheckReport", "check_timed_run", "check_timed_schedule"]

_REL_TOL = 1e-9
_MAX_LISTED = 20


@dataclass(frozen=True)
class TimedCheckReport:
    """Outcome of :func:`check_timed_schedule`.

    ``mean_latency`` and ``latencies`` are ``None`` unless the run is feasible.
    """

    ok: bool
    violations: tuple[str, ...]
    mean_latency: float | None
    latencies: Mapping[str, float] | None
    peak_memory: int | None
    recomputed_tokens: int
    iterations: int


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _REL_TOL * max(1.0, abs(a), abs(b))


def check_timed_run(instance: TimedInstance, schedule: Any, cost_model: Any) -> TimedCheckReport:
    """:func:`check_timed_schedule` of a :class:`~llmopt.model.timed_schedule.TimedSchedule` with every
    record it carries (evictions, stalls, batch limits, prefill chunks, paused iterations), so that no
    caller checks a run against less than it claims."""
    limits = getattr(schedule, "limits", None)
    return check_timed_schedule(instance, schedule.starts, schedule.batch_start, schedule.batch_duration, cost_model,
                                evictions=schedule.evictions, stalls=schedule.stalls,
                                limits=None if limits is None or limits.is_default else limits,
                                chunks=schedule.chunks, paused=schedule.paused,
                                eviction_starts=schedule.eviction_starts)


def check_timed_schedule(
    instance: TimedInstance,
    starts: Mapping[str, Any],
    batch_start: Sequence[float] | np.ndarray,
    batch_duration: Sequence[float] | np.ndarray,
    cost_model: Any,
    *,
    evictions: Any = None,
    stalls: Mapping[Any, Any] | None = None,
    limits: Any = None,
    chunks: Any = None,
    paused: Sequence[int] | None = None,
    eviction_starts: Sequence[int] | None = None,
) -> TimedCheckReport:
    """Verify a continuous-time run (see the module docstring for the checks).

    Parameters
    ----------
    instance : TimedInstance
    starts : mapping of str to int
        Final start iteration of every request.
    batch_start, batch_duration : sequences of float
        Start (s) and duration (s) of every iteration.
    cost_model : CostModel
        Must give ``batch_time(BatchShape)`` (see :mod:`llmopt.engine.cost_model`).
    evictions : iterable, optional
        ``(t, id, tokens_lost)`` in iteration units, as :func:`llmopt.verify.checker.check_schedule` reads them.
    stalls : mapping of int to int, optional
        Iteration → iterations lost before its batch (:attr:`TimedSchedule.stalls`; JSON keys may be strings).
    limits : BatchLimits or mapping, optional
        The batch limits and block size the run claims (:attr:`TimedSchedule.limits`), verified in
        iteration units by :func:`llmopt.verify.checker.check_schedule` (checks 6 and 7 there).
    chunks : iterable, optional
        The partial prefill chunks ``(iteration, id, tokens)`` the run claims (:attr:`TimedSchedule.chunks`;
        JSON: lists or mappings with ``t``, ``id``, ``tokens``). Default: none (whole prompts).
    paused : sequence of int, optional
        The paused (prefill-only) iterations the run claims (:attr:`TimedSchedule.paused`). Default: none.
    eviction_starts : sequence of int, optional
        With ``paused``: the start iteration of every evicted run, parallel to ``evictions``.

    Returns
    -------
    TimedCheckReport
    """
    from llmopt.model.batch import BatchShape

    bs = np.asarray(batch_start, dtype=np.float64)
    bd = np.asarray(batch_duration, dtype=np.float64)
    K = int(bs.size)
    violations: list[str] = []

    def report(msg: str) -> None:
        violations.append(msg)

    if bd.size != K:
        report(f"{K} batch starts but {bd.size} durations")
        return TimedCheckReport(False, tuple(violations), None, None, None, 0, K)
    if K and not (np.all(np.isfinite(bs)) and np.all(np.isfinite(bd)) and np.all(bd > 0)):
        report("batch starts and durations must be finite, durations > 0")
        return TimedCheckReport(False, tuple(violations), None, None, None, 0, K)

    # 1. arrivals in iteration units, then the discrete check (memory after every batch)
    arrivals = np.array([r.arrival for r in instance.requests], dtype=np.float64)
    arrival_it = np.searchsorted(bs, arrivals, side="left")
    if paused:
        return _check_paused(instance, starts, bs, bd, cost_model, evictions, eviction_starts, paused, stalls,
                             limits, chunks, arrivals, arrival_it)
    discrete = Instance(instance.M, tuple(Request(r.id, int(a), r.prompt, r.output)
                                          for r, a in zip(instance.requests, arrival_it.tolist())))
    base = check_schedule(discrete, starts, evictions=evictions, limits=limits, chunks=chunks)
    # its times are iterations: "memory at time τ" is the usage after iteration τ − 1
    violations.extend(f"(iteration units) {v}" for v in base.violations)
    if not base.ok:
        return TimedCheckReport(False, tuple(violations[:_MAX_LISTED]), None, None, None, base.recomputed_tokens, K)

    # the runs, aborted ones included: (start iteration, end iteration, prompt)
    runs: list[tuple[int, int, int]] = []
    run_ids: list[str] = []
    for e in evictions or ():
        t, rid, lost = (e.t, e.id, e.tokens_lost) if hasattr(e, "t") else (
            (e["t"], e["id"], e["tokens_lost"]) if isinstance(e, Mapping) else tuple(e))
        runs.append((int(t) - int(lost), int(t), instance.by_id(rid).prompt))
        run_ids.append(rid)
    evicted_runs = runs[:]
    final_end: dict[str, int] = {}
    for r in instance.requests:
        k = int(starts[r.id][0] if isinstance(starts[r.id], (list, tuple)) else starts[r.id])
        runs.append((k, k + r.output, r.prompt))
        run_ids.append(r.id)
        final_end[r.id] = k + r.output
    pc = None
    if chunks:  # already verified by check_schedule; read again for the batch shapes
        by_run: dict[str, list[tuple[int, int]]] = {}
        for rid, (p, e, _s) in zip(run_ids, runs):
            by_run.setdefault(rid, []).append((p, e))
        for v in by_run.values():
            v.sort()
        pc = prefill_chunks(discrete, by_run, chunks, lambda _msg: None)
        if pc.pieces and max(t for t, _r, _c, _q in pc.pieces) >= K:
            report(f"a prefill chunk lies outside the {K} recorded batches")

    # 2. runs within the recorded batches
    for p, e, _s in runs:
        if p < 0 or e > K:
            report(f"a run over iterations {p}..{e - 1} lies outside the {K} recorded batches")
            break
    if violations:
        return TimedCheckReport(False, tuple(violations), None, None, None, base.recomputed_tokens, K)

    # 3. batch shapes from the runs alone (difference arrays over iterations)
    p_arr = np.array([r[0] for r in runs], dtype=np.int64)
    e_arr = np.array([r[1] for r in runs], dtype=np.int64)
    s_arr = np.array([r[2] for r in runs], dtype=np.int64)
    pre_n = np.bincount(p_arr, minlength=K + 1)[:K]
    if pc is None:
        pre_tok = np.bincount(p_arr, weights=s_arr, minlength=K + 1)[:K]
        pre_sq = np.bincount(p_arr, weights=s_arr * s_arr, minlength=K + 1)[:K]
    else:  # a start after partial chunks holds the rest s − q of its prompt: term s² − q²; each chunk its c
        q_arr = np.array([pc.before.get((rid, p), 0) for rid, (p, _e, _s) in zip(run_ids, runs)], dtype=np.int64)
        pre_tok = np.bincount(p_arr, weights=s_arr - q_arr, minlength=K + 1)[:K]
        pre_sq = np.bincount(p_arr, weights=s_arr * s_arr - q_arr * q_arr, minlength=K + 1)[:K]
        for t, _rid, c, q in pc.pieces:
            pre_n[t] += 1
            pre_tok[t] += c
            pre_sq[t] += c * c + 2 * c * q
    # decoding in iteration k: runs with p < k < e, context s + (k − p) = (s − p) + k
    dec = e_arr > p_arr + 1
    dn = np.zeros(K + 1, dtype=np.int64)
    dsum = np.zeros(K + 1, dtype=np.int64)
    np.add.at(dn, p_arr[dec] + 1, 1)
    np.add.at(dn, e_arr[dec], -1)
    np.add.at(dsum, p_arr[dec] + 1, (s_arr - p_arr)[dec])
    np.add.at(dsum, e_arr[dec], -(s_arr - p_arr)[dec])
    dec_n = np.cumsum(dn)[:K]
    dec_ctx = np.cumsum(dsum)[:K] + np.arange(K, dtype=np.int64) * dec_n
    listed = 0
    for k in range(K):
        pn, dn_k = int(pre_n[k]), int(dec_n[k])
        if pn + dn_k == 0:
            report(f"iteration {k} runs an empty batch")
            listed += 1
        else:
            shape = BatchShape(pn, int(round(pre_tok[k])), int(round(pre_sq[k])), dn_k, int(dec_ctx[k]))
            expect = float(cost_model.batch_time(shape))
            if not _close(float(bd[k]), expect):
                report(f"iteration {k}: duration {float(bd[k])!r} s, but the cost model gives {expect!r} s "
                       f"for {shape}")
                listed += 1
        if listed >= _MAX_LISTED:
            break

    # 4. the clock
    stall_s = _stall_seconds(stalls, evicted_runs, dec_n, dec_ctx, cost_model, report)
    if K:
        first = float(arrivals.min())
        if not _close(float(bs[0]), first):
            report(f"the first batch starts at {float(bs[0])!r} s, not at the first arrival {float(first)!r} s")
        arrival_set = np.unique(arrivals)
        for k in range(1, K):
            end_prev = float(bs[k - 1] + bd[k - 1])
            if k in stall_s:  # the batch waits exactly the stalled passes
                if not _close(float(bs[k]), end_prev + stall_s[k]):
                    report(f"iteration {k} starts at {float(bs[k])!r} s, but after a stall of {stall_s[k]!r} s it "
                           f"should start at {end_prev + stall_s[k]!r} s")
            elif dec_n[k] > 0:  # a request of batch k − 1 continues: no gap
                if not _close(float(bs[k]), end_prev):
                    report(f"iteration {k} continues running requests but starts at {float(bs[k])!r} s, "
                           f"not at the end of iteration {k - 1} ({float(end_prev)!r} s)")
            elif bs[k] < end_prev and not _close(float(bs[k]), end_prev):
                report(f"iteration {k} starts at {float(bs[k])!r} s, before iteration {k - 1} ends "
                       f"({float(end_prev)!r} s)")
            elif not _close(float(bs[k]), end_prev):
                j = int(np.searchsorted(arrival_set, bs[k]))
                if not (j < arrival_set.size and _close(float(arrival_set[j]), float(bs[k]))):
                    report(f"iteration {k}: the idle worker resumes at {float(bs[k])!r} s, which is no arrival time")
            if len(violations) >= _MAX_LISTED:
                break

    if violations:
        return TimedCheckReport(False, tuple(violations), None, None, None, base.recomputed_tokens, K)

    # 5. latencies
    ends = bs + bd
    lat = {r.id: float(ends[final_end[r.id] - 1]) - r.arrival for r in instance.requests}
    mean = math.fsum(lat.values()) / len(lat) if lat else None
    peak = _segment_peak(base.segments)
    return TimedCheckReport(True, (), mean, lat, peak, base.recomputed_tokens, K)


def _stall_seconds(stalls: Mapping[Any, Any] | None, evicted_runs: Sequence[tuple[int, int, int]],
                   dec_n: np.ndarray, dec_ctx: np.ndarray, cost_model: Any,
                   report: Any) -> dict[int, float]:
    """Seconds lost before each stalled iteration (see check 4), or a violation for a bad stall."""
    from llmopt.model.batch import BatchShape

    out: dict[int, float] = {}
    K = int(dec_n.size)
    if not stalls:
        return out
    gone_at: dict[int, list[tuple[int, int]]] = {}  # iteration → (start, prompt) of the runs evicted there
    for p, e, s in evicted_runs:
        if p < e:
            gone_at.setdefault(e, []).append((p, s))
    for key, m in stalls.items():
        try:
            k, passes = int(key), int(m)
        except (TypeError, ValueError):
            report(f"stall {key!r}: {m!r} is not an iteration → count pair")
            continue
        if passes == 0:
            continue
        if not 0 < k < K or passes < 0:
            report(f"stall of {passes} before iteration {k}: needs 0 < iteration < {K} and a count >= 0")
            continue
        gone = gone_at.get(k, ())  # ran when the decision began
        n_before = int(dec_n[k]) + len(gone)
        ctx_before = int(dec_ctx[k]) + sum(s + k - p for p, s in gone)
        if n_before == 0:
            report(f"stall of {passes} before iteration {k}, but nothing ran when its decision began")
            continue
        out[k] = passes * float(cost_model.batch_time(BatchShape(0, 0, 0, n_before, ctx_before)))
    return out


def _segment_peak(segments: Sequence[tuple[int, int, int]]) -> int:
    """Peak usage of the sparse profile (usage ``C + S·τ`` on ``(b_i, b_{i+1}]``)."""
    peak = 0
    for (_b0, C, S), (b1, _C1, _S1) in zip(segments, segments[1:]):
        peak = max(peak, C + S * b1)
    return peak


def _limits_of(limits: Any) -> tuple[Any, Any, Any]:
    """``(max_num_seqs, max_num_batched_tokens, block_size)`` of a BatchLimits or its JSON mapping."""
    if limits is None:
        return None, None, 1
    get = limits.get if isinstance(limits, Mapping) else (lambda k, d: getattr(limits, k, d))
    return get("max_num_seqs", None), get("max_num_batched_tokens", None), get("block_size", 1) or 1


def _check_paused(instance: TimedInstance, starts: Mapping[str, Any], bs: np.ndarray, bd: np.ndarray,
                  cost_model: Any, evictions: Any, eviction_starts: Sequence[int] | None, paused: Sequence[int],
                  stalls: Mapping[Any, Any] | None, limits: Any, chunks: Any, arrivals: np.ndarray,
                  arrival_it: np.ndarray) -> TimedCheckReport:
    """:func:`check_timed_schedule` for a run with paused iterations (see the module docstring).

    Everything is recomputed from the runs and the paused iterations: with ``P(j)`` the paused
    iterations below ``j``, a run ``(k, e)`` decodes in the non-paused iterations of ``(k, e)``, holds
    ``(s + 1 − k + P(k + 1)) + (j − P(j + 1))`` tokens after iteration ``j`` of ``[k, e)``, and its KV
    context in a decode at ``j`` is ``(s − k + P(k + 1)) + (j − P(j))``. ``O(K + #runs)`` with difference
    arrays, plus ``O(Σ run lengths)`` for the block count when ``block_size > 1``.
    """
    from llmopt.model.batch import BatchShape

    K = int(bs.size)
    violations: list[str] = []

    def fail() -> TimedCheckReport:
        return TimedCheckReport(False, tuple(violations[:_MAX_LISTED]), None, None, None, 0, K)

    if chunks or any(int(v) for v in (stalls or {}).values()):
        violations.append("paused iterations are not combined with prefill chunks or stalls")
        return fail()
    try:
        pz = sorted(int(k) for k in paused)
    except (TypeError, ValueError):
        violations.append(f"paused: {list(paused)!r} is not a list of iterations")
        return fail()
    if len(set(pz)) != len(pz) or (pz and (pz[0] < 0 or pz[-1] >= K)):
        violations.append(f"paused: iterations must be distinct and within the {K} recorded batches")
        return fail()
    is_paused = np.zeros(K + 1, dtype=bool)
    is_paused[pz] = True
    P = np.concatenate(([0], np.cumsum(is_paused[:K]))).astype(np.int64)  # P[j]: paused iterations below j
    g = np.arange(K + 1, dtype=np.int64) - P  # non-paused iterations below j (non-decreasing)

    # the runs: (id, start, end, prompt); evicted ones from (t, id, tokens_lost) and their starts
    runs: list[tuple[str, int, int, int]] = []
    ev = list(evictions or ())
    es = list(eviction_starts or ())
    if len(es) != len(ev):
        violations.append(f"{len(ev)} evictions but {len(es)} eviction starts (needed with paused iterations)")
        return fail()
    recomputed = 0
    for e, k in zip(ev, es):
        t, rid, lost = (e.t, e.id, e.tokens_lost) if hasattr(e, "t") else (
            (e["t"], e["id"], e["tokens_lost"]) if isinstance(e, Mapping) else tuple(e))
        t, k, lost = int(t), int(k), int(lost)
        if not 0 <= k < t <= K:
            violations.append(f"eviction of {rid!r} at iteration {t}: its run from {k} lies outside the batches")
            continue
        made = (t - k) - int(P[t] - P[k + 1])
        if made != lost:
            violations.append(f"eviction of {rid!r} at iteration {t}: a run from {k} has produced {made} tokens "
                              f"(paused iterations counted), not {lost}")
        runs.append((rid, k, t, instance.by_id(rid).prompt))
        recomputed += lost
    final_end: dict[str, int] = {}
    for r in instance.requests:
        if r.id not in starts:
            violations.append(f"request {r.id!r} has no start")
            continue
        v = starts[r.id]
        k = int(v[0] if isinstance(v, (list, tuple)) else v)
        target = r.output + k - int(P[min(k + 1, K)]) if 0 <= k < K else -1
        # the first e > k with g(e) = target (g is flat across a pause, so g(k) may equal it already)
        e = k + 1 + int(np.searchsorted(g[k + 1:], target, side="left")) if target >= 0 else K + 1
        if not 0 <= k < K or e > K:
            violations.append(f"request {r.id!r}: its run from iteration {k} ({r.output} tokens) lies outside the "
                              f"{K} recorded batches")
            continue
        runs.append((r.id, k, e, r.prompt))
        final_end[r.id] = e
    if violations:
        return fail()
    index = {r.id: j for j, r in enumerate(instance.requests)}
    by_req: dict[str, list[tuple[int, int]]] = {}
    for rid, k, e, _s in runs:
        if k < int(arrival_it[index[rid]]):
            violations.append(f"request {rid!r} runs from iteration {k}, before its arrival")
        by_req.setdefault(rid, []).append((k, e))
    for rid, spans in by_req.items():
        spans.sort()
        for (_k0, e0), (k1, _e1) in zip(spans, spans[1:]):
            if k1 < e0:
                violations.append(f"request {rid!r}: a run from iteration {k1} overlaps its run ending at {e0}")
        if final_end[rid] != max(e for _k, e in spans):
            violations.append(f"request {rid!r}: its final run is not its last")
    if violations:
        return fail()

    k_arr = np.array([r[1] for r in runs], dtype=np.int64)
    e_arr = np.array([r[2] for r in runs], dtype=np.int64)
    s_arr = np.array([r[3] for r in runs], dtype=np.int64)
    Pk1 = P[k_arr + 1]
    # holding after iteration j ∈ [k, e): A + (j − P[j + 1]); active (running, paused or not) count
    act = np.zeros(K + 1, dtype=np.int64)
    hold = np.zeros(K + 1, dtype=np.int64)
    np.add.at(act, k_arr, 1)
    np.add.at(act, e_arr, -1)
    np.add.at(hold, k_arr, s_arr + 1 - k_arr + Pk1)
    np.add.at(hold, e_arr, -(s_arr + 1 - k_arr + Pk1))
    active = np.cumsum(act)[:K]
    jj = np.arange(K, dtype=np.int64)
    usage = np.cumsum(hold)[:K] + active * (jj - P[1:K + 1])
    for j in np.flatnonzero(usage > instance.M)[:_MAX_LISTED].tolist():
        violations.append(f"memory after iteration {j}: {int(usage[j])} > M = {instance.M}")
    max_seqs, max_tokens, block = _limits_of(limits)
    if block > 1:
        blocks = np.zeros(K, dtype=np.int64)
        for k, e, s, pk in zip(k_arr.tolist(), e_arr.tolist(), s_arr.tolist(), Pk1.tolist()):
            j = np.arange(k, e, dtype=np.int64)
            blocks[k:e] += -(-(s + 1 - k + pk + j - P[j + 1]) // block)
        for j in np.flatnonzero(blocks > instance.M // block)[:_MAX_LISTED].tolist():
            violations.append(f"blocks after iteration {j}: {int(blocks[j])} of {block} > "
                              f"M // block_size = {instance.M // block}")

    # batch shapes: prefills of the runs starting at j; decodes of the runs with k < j < e unless j is paused
    pre_n = np.bincount(k_arr, minlength=K + 1)[:K]
    pre_tok = np.bincount(k_arr, weights=s_arr, minlength=K + 1)[:K]
    pre_sq = np.bincount(k_arr, weights=s_arr * s_arr, minlength=K + 1)[:K]
    dn = np.zeros(K + 1, dtype=np.int64)
    dsum = np.zeros(K + 1, dtype=np.int64)
    np.add.at(dn, k_arr + 1, 1)
    np.add.at(dn, e_arr, -1)
    np.add.at(dsum, k_arr + 1, s_arr - k_arr + Pk1)
    np.add.at(dsum, e_arr, -(s_arr - k_arr + Pk1))
    running = np.cumsum(dn)[:K]  # runs started before j and still held in j
    live = ~is_paused[:K]
    dec_n = np.where(live, running, 0)
    dec_ctx = np.where(live, np.cumsum(dsum)[:K] + running * (jj - P[:K]), 0)
    seqs = pre_n + running
    for j in range(K):
        if is_paused[j] and (pre_n[j] == 0 or running[j] == 0):
            violations.append(f"iteration {j} is paused but " + ("holds no prefill" if pre_n[j] == 0
                                                                   else "nothing runs to pause"))
        elif pre_n[j] + dec_n[j] == 0:
            violations.append(f"iteration {j} runs an empty batch")
        else:
            shape = BatchShape(int(pre_n[j]), int(round(pre_tok[j])), int(round(pre_sq[j])), int(dec_n[j]),
                               int(dec_ctx[j]))
            expect = float(cost_model.batch_time(shape))
            if not _close(float(bd[j]), expect):
                violations.append(f"iteration {j}{' (paused)' if is_paused[j] else ''}: duration {float(bd[j])!r} s, "
                                  f"but the cost model gives {expect!r} s for {shape}")
        if max_seqs is not None and seqs[j] > max_seqs:
            violations.append(f"iteration {j}: {int(seqs[j])} requests > max_num_seqs = {max_seqs}")
        if max_tokens is not None and pre_tok[j] + running[j] > max_tokens:
            violations.append(f"iteration {j}: {int(pre_tok[j] + running[j])} tokens > "
                              f"max_num_batched_tokens = {max_tokens}")
        if len(violations) >= _MAX_LISTED:
            break
    if violations:
        return fail()

    # the clock: as check 4, a batch that holds a run of the previous one (paused or not) starts at its end
    first = float(arrivals.min())
    if not _close(float(bs[0]), first):
        violations.append(f"the first batch starts at {float(bs[0])!r} s, not at the first arrival {first!r} s")
    arrival_set = np.unique(arrivals)
    for j in range(1, K):
        end_prev = float(bs[j - 1] + bd[j - 1])
        if running[j] > 0:
            if not _close(float(bs[j]), end_prev):
                violations.append(f"iteration {j} continues running requests but starts at {float(bs[j])!r} s, "
                                  f"not at the end of iteration {j - 1} ({end_prev!r} s)")
        elif not _close(float(bs[j]), end_prev):
            i = int(np.searchsorted(arrival_set, bs[j]))
            if bs[j] < end_prev or not (i < arrival_set.size and _close(float(arrival_set[i]), float(bs[j]))):
                violations.append(f"iteration {j}: the idle worker resumes at {float(bs[j])!r} s, which is no "
                                  "arrival time after the previous batch")
        if len(violations) >= _MAX_LISTED:
            break
    if violations:
        return fail()
    ends = bs + bd
    lat = {r.id: float(ends[final_end[r.id] - 1]) - r.arrival for r in instance.requests}
    mean = math.fsum(lat.values()) / len(lat) if lat else None
    peak = int(usage.max()) if K else 0
    return TimedCheckReport(True, (), mean, lat, peak, recomputed, K)
