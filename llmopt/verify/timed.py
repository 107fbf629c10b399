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
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from llmopt.model.instance import Instance, Request
from llmopt.model.timed_instance import TimedInstance
from llmopt.verify.checker import check_schedule

__all__ = ["TimedCheckReport", "check_timed_schedule"]

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
    discrete = Instance(instance.M, tuple(Request(r.id, int(a), r.prompt, r.output)
                                          for r, a in zip(instance.requests, arrival_it.tolist())))
    base = check_schedule(discrete, starts, evictions=evictions, limits=limits)
    # its times are iterations: "memory at time τ" is the usage after iteration τ − 1
    violations.extend(f"(iteration units) {v}" for v in base.violations)
    if not base.ok:
        return TimedCheckReport(False, tuple(violations[:_MAX_LISTED]), None, None, None, base.recomputed_tokens, K)

    # the runs, aborted ones included: (start iteration, end iteration, prompt)
    runs: list[tuple[int, int, int]] = []
    for e in evictions or ():
        t, rid, lost = (e.t, e.id, e.tokens_lost) if hasattr(e, "t") else (
            (e["t"], e["id"], e["tokens_lost"]) if isinstance(e, Mapping) else tuple(e))
        runs.append((int(t) - int(lost), int(t), instance.by_id(rid).prompt))
    evicted_runs = runs[:]
    final_end: dict[str, int] = {}
    for r in instance.requests:
        k = int(starts[r.id][0] if isinstance(starts[r.id], (list, tuple)) else starts[r.id])
        runs.append((k, k + r.output, r.prompt))
        final_end[r.id] = k + r.output

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
    pre_tok = np.bincount(p_arr, weights=s_arr, minlength=K + 1)[:K]
    pre_sq = np.bincount(p_arr, weights=s_arr * s_arr, minlength=K + 1)[:K]
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
