"""The independent checker: verify schedules and lower-bound certificates from the Instance alone.

DESIGN §3 ("Checker"): every schedule and every solver solution is re-verified from the
:class:`~llmopt.model.instance.Instance` alone, and every lower bound carries what certifies it.
To stay independent this module imports nothing from the simulator, the policies, the
look-ahead module or the formulations — only :mod:`llmopt.model.instance`, the constants of
:mod:`llmopt.model.tolerance` (a leaf module), numpy and the standard library. It is the only
place where solver output becomes a *certified* number. Its memory accounting is written
from the model of DESIGN §1 directly:

* a request that starts at step ``k`` completes at ``c = k + o`` and holds
  ``s + (t − k)`` KV-cache tokens at every integer time ``t = k+1 … k+o`` (0 otherwise);
* a schedule is feasible when every request starts at or after its arrival and the
  total usage is ``<= M`` at every integer time;
* ``TEL = Σ_i (k_i + o_i − a_i)``.

Two checks are provided:

:func:`check_schedule`
    Feasibility and TEL of a schedule ``{request id: final start}`` and its evictions, if
    any (the memory an evicted run held before its eviction counts). The time axis is
    sparse, so arrivals may be Unix timestamps and outputs millions of tokens long.
:func:`check_lower_bound_certificate`
    The weak-duality lower bound certified by a vector ``λ >= 0`` of memory-row
    multipliers (DIGEST §1.3, "General dual"), over start windows this module derives
    itself (:func:`certified_windows`) from the instance and a schedule it has verified —
    never from windows handed in by the caller.
:func:`check_zone_certificate`
    The same with a second family of multipliers ``μ >= 0`` on the *peak-zone* rows, whose
    validity (:func:`certified_zones`) is proved here from DESIGN §1.
"""

from __future__ import annotations

import bisect
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from llmopt.model.instance import Instance
from llmopt.model.tolerance import LAMBDA_CHECK_TOL

__all__ = ["CheckReport", "CertificateError", "check_schedule", "check_lower_bound_certificate", "certificate_horizon",
           "certified_windows"]

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
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
        items = list(value.ravel()) if isinstance(value, np.ndarray) else list(value)
        if len(items) != 1:
            return None, f"has {len(items)} starts; exactly one is required (the model is non-preemptive)"
        value = items[0]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
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
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_schedule(
    instance: Instance, starts: Mapping[str, Any], *, evictions: Any = None, max_violations: int | None = MAX_VIOLATIONS
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

    makespan = max((final[r.id] + r.output for r in instance.requests if r.id in final), default=0)
    first = min((r.arrival for r in instance.requests), default=0)
    origin = min([first, *run_k]) if run_k else first
    segments: tuple[tuple[int, int, int], ...] = ()
    if run_k:
        k_arr = np.asarray(run_k, dtype=np.int64) - origin  # times relative to the origin: small numbers
        e_arr = np.asarray(run_end, dtype=np.int64) - origin
        base = np.asarray(run_s, dtype=np.int64) - k_arr
        bps, inv = np.unique(np.concatenate([k_arr, e_arr]), return_inverse=True)
        dc = np.zeros(bps.size, dtype=np.int64)
        ds = np.zeros(bps.size, dtype=np.int64)
        np.add.at(dc, inv, np.concatenate([base, -base]))
        np.add.at(ds, inv, np.concatenate([np.ones_like(base), -np.ones_like(base)]))
        C = np.cumsum(dc)
        S = np.cumsum(ds)  # usage is C[i] + S[i]·τ on (bps[i], bps[i+1]], τ relative
        segments = tuple(zip(bps.tolist(), C.tolist(), S.tolist()))
        M = instance.M
        right = C[:-1] + S[:-1] * bps[1:]  # usage at each segment's right end: its maximum
        over = np.flatnonzero(right > M)
        if over.size:
            lo = bps[over] + 1
            # first overflowing time of each segment: usage is nondecreasing on it
            first_over = np.where(S[over] > 0, (M - C[over]) // np.maximum(S[over], 1) + 1, lo)
            first_over = np.maximum(first_over, lo)
            counts = bps[over + 1] - first_over + 1
            remaining = int(counts.sum())
            for seg, tau0, cnt in zip(over.tolist(), first_over.tolist(), counts.tolist()):
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

    if n_violations > len(violations):
        violations.append(f"... and {n_violations - len(violations)} more violations")
    ok = n_violations == 0
    return CheckReport(ok=ok, tel=tel if ok else None, violations=tuple(violations), makespan=makespan,
                       origin=origin, recomputed_tokens=recomputed, segments=segments)


# --- lower-bound certificates -------------------------------------------------------------------


class CertificateError(ValueError):
    """A certificate (multipliers, or the schedule its windows rest on) is malformed or infeasible."""


def certificate_horizon(instance: Instance) -> int:
    """Return ``T_c = max_i a_i + Σ_i o_i``, the default completion horizon of the certificate.

    Some optimal schedule completes by ``T_c``: in an optimal schedule no step
    ``t >= max_i a_i`` before the makespan can be idle (otherwise shifting every later
    request ``d`` steps earlier keeps memory and arrivals feasible and lowers TEL), so
    the steps of ``[max a, makespan)`` each process a request, and there are at most
    ``Σ o_i`` of them. Hence the windows ``a_i … T_c − o_i`` contain an optimal schedule.
    (Derived here independently of the formulations, as the checker must be.)
    """
    if instance.n == 0:
        return 0
    return max(r.arrival for r in instance.requests) + sum(r.output for r in instance.requests)


def certified_windows(instance: Instance, upper_bound_starts: Mapping[str, Any] | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Start windows ``lo_i … hi_i`` that contain an optimal schedule, derived here alone.

    Without a schedule: ``a_i … T_c − o_i`` (:func:`certificate_horizon`). With
    ``upper_bound_starts`` — a schedule this function first verifies with
    :func:`check_schedule` — of TEL ``U``: ``a_i … min(a_i + U − Σ o, T_c − o_i)``.

    Proof of the second form. In an optimal schedule ``Σ_j (k_j − a_j) = OPT − Σ o <= U − Σ o``,
    and every wait is ``>= 0``, so each single wait is ``<= U − Σ o``. An optimal schedule of
    minimum makespan satisfies both this and the horizon. ∎

    Raises
    ------
    CertificateError
        If ``upper_bound_starts`` is not a feasible schedule of the instance.
    """
    a = np.array([r.arrival for r in instance.requests], dtype=np.int64)
    o = np.array([r.output for r in instance.requests], dtype=np.int64)
    hi = certificate_horizon(instance) - o
    if upper_bound_starts is not None:
        report = check_schedule(instance, upper_bound_starts)
        if not report.ok or report.tel is None:
            why = report.violations[0] if report.violations else "infeasible"
            raise CertificateError(f"the upper-bound schedule the windows rest on is rejected: {why}")
        hi = np.minimum(hi, a + (report.tel - int(o.sum())))
    return a, hi


def _multipliers(lam: Any, tol: float, name: str = "λ") -> tuple[np.ndarray, np.ndarray]:
    """``(times, values)`` sorted by time, validated (integer times, finite, ``λ >= −tol``), clamped at 0.

    Accepts a mapping ``{t: λ_t}``, a pair ``(times, values)`` of sequences, or a 1-D array indexed
    by time (``lam[t] = λ_t``, index 0 is time 0)."""
    if isinstance(lam, Mapping):
        keys, vals = list(lam.keys()), [lam[k] for k in lam]
    elif isinstance(lam, tuple) and len(lam) == 2:
        keys, vals = list(np.asarray(lam[0]).ravel()), list(np.asarray(lam[1], dtype=float).ravel())
        if len(keys) != len(vals):
            raise CertificateError(f"{name} has {len(keys)} times but {len(vals)} values")
    else:
        vals = list(np.asarray(lam, dtype=float).ravel())
        keys = list(range(len(vals)))
    for t in keys:
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, numbers.Integral):
            raise CertificateError(f"{name} key {t!r} is not an integer time")
    times = np.asarray(keys, dtype=np.int64)
    values = np.asarray(vals, dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CertificateError(f"{name} at time {int(times[i])} is {values[i]!r}, not a finite number")
    neg = values < -tol
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise CertificateError(f"{name} at time {int(times[i])} is {values[i]!r} < 0; a certificate needs {name} >= 0")
    order = np.argsort(times, kind="stable")
    times, values = times[order], np.maximum(values[order], 0.0)
    if times.size > 1 and np.any(times[1:] == times[:-1]):
        t = int(times[1:][times[1:] == times[:-1]][0])
        raise CertificateError(f"{name} is given twice at time {t}")
    return times, values


def check_lower_bound_certificate(
    instance: Instance,
    lam: Any,
    upper_bound_starts: Mapping[str, Any] | None = None,
    *,
    tol: float = LAMBDA_CHECK_TOL,
) -> float:
    """Recompute the lower bound on OPT certified by memory-row multipliers ``λ >= 0``.

    For any ``λ_t >= 0`` and any start windows ``K_i`` that contain an optimal schedule
    (weak duality of the hindsight LP, DIGEST §1.3 "General dual")::

        bound(λ) = C + Σ_i min_{k ∈ K_i} ( k + Σ_{τ=k+1}^{k+o_i} (s_i + τ − k)·λ_τ ) − M·Σ_t λ_t,
        C = Σ_i (o_i − a_i).

    Proof. Let ``k_i ∈ K_i`` be the starts of an optimal schedule, ``m_t`` its memory at
    time ``t``. Then ``m_t <= M`` gives ``Σ_t λ_t (m_t − M) <= 0``, so
    ``OPT = C + Σ_i k_i >= C + Σ_i k_i + Σ_t λ_t m_t − M Σ_t λ_t``; and
    ``Σ_t λ_t m_t = Σ_i Σ_{τ=k_i+1}^{k_i+o_i} (s_i + τ − k_i) λ_τ``, so each request's term
    is at least its minimum over ``K_i``. ∎

    The windows are never taken from the caller: they are :func:`certified_windows`,
    derived here from the instance and, if given, a schedule this module verifies first.

    Evaluation. For one request the inner cost ``f(k)`` is linear in ``k`` on every run of
    ``k`` over which the set ``{τ : λ_τ > 0, k < τ <= k + o}`` stays the same, so its minimum
    over a window is attained at the window's ends or where that set changes
    (``k ∈ {τ−o−1, τ−o, τ−1, τ}``). Wide windows are evaluated at those points only, narrow ones
    at every ``k``; either way the minimum is exact and the cost does not depend on where the
    time origin lies (arrivals may be Unix timestamps).

    Parameters
    ----------
    instance : Instance
    lam : mapping {t: λ_t}, pair ``(times, values)``, or array indexed by time (``lam[t] = λ_t``)
        Multipliers of the memory rows; times not given count as 0. A multiplier at a time
        when nothing can run only lowers the bound.
    upper_bound_starts : mapping, optional
        A feasible schedule; its TEL narrows the windows (and so raises the bound).
    tol : float
        Negative multipliers down to ``−tol`` are clamped to 0 (solver round-off).

    Returns
    -------
    float
        ``bound(λ)``.

    Raises
    ------
    CertificateError
        If some ``λ_t < −tol``, is not finite, or sits at a non-integer time (the message
        names the time), or ``upper_bound_starts`` is not a feasible schedule.
    """
    times, values = _multipliers(lam, tol)
    total_lambda = float(np.sum(values, dtype=np.longdouble))
    if instance.n == 0:
        return -instance.M * total_lambda
    lo, hi = certified_windows(instance, upper_bound_starts)
    origin = int(lo.min())
    rel = times - origin
    prefix = _prefix_sums(times, values, origin)
    groups: dict[tuple[int, int, int, int], int] = {}
    for i, r in enumerate(instance.requests):
        key = (r.prompt, r.output, int(lo[i]) - origin, int(hi[i]) - origin)
        groups[key] = groups.get(key, 0) + 1
    total = np.longdouble(0.0)
    for (s, o, k_lo, k_hi), count in groups.items():
        i0 = np.searchsorted(rel, k_lo, side="left")
        i1 = np.searchsorted(rel, k_hi + o + 1, side="right")
        near = rel[i0:i1]
        if k_hi - k_lo + 1 <= 4 * near.size + 2:
            k = np.arange(k_lo, k_hi + 1, dtype=np.int64)
        else:
            cand = np.concatenate([near - o - 1, near - o, near - 1, near, [k_lo, k_hi]])
            k = np.unique(cand[(cand >= k_lo) & (cand <= k_hi)])
        a0, a1 = prefix(k)
        b0, b1 = prefix(k + o)
        kl = k.astype(np.longdouble)
        cost = kl + (s - kl) * (b0 - a0) + (b1 - a1)
        total += count * cost.min()
    C = sum(r.output - (r.arrival - origin) for r in instance.requests)
    return float(C + total - instance.M * np.longdouble(total_lambda))


def _prefix_sums(times: np.ndarray, values: np.ndarray, origin: int):
    """``prefix(x) = (Σ_{t <= x} λ_t, Σ_{t <= x} (t − origin)·λ_t)`` for relative times ``x`` (arrays),
    in extended precision; ``times`` sorted."""
    lv = values.astype(np.longdouble)
    c0 = np.concatenate([[0.0], np.cumsum(lv)]).astype(np.longdouble)  # c0[j] = Σ of the first j λ's
    c1 = np.concatenate([[0.0], np.cumsum((times - origin).astype(np.longdouble) * lv)]).astype(np.longdouble)

    def prefix(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        j = np.searchsorted(times, x + origin, side="right")  # number of λ times <= x
        return c0[j], c1[j]

    return prefix


# --- the zone-LP certificate (memory and peak-zone multipliers) ---------------------------------


def certified_zones(instance: Instance, split: Any) -> dict[int, tuple[int, int]]:
    """``{position: (a_i, b_i)}``: the peak zones of split ``h``, derived here from DESIGN §1 alone.

    Zone set ``Z = {i : s_i + o_i >= max(h, M − h), s_i <= h}``; for ``i ∈ Z``, with ``σ_i`` the
    largest prompt of the *other* members (0 if none), ``a_i = s_i + o_i − h`` and
    ``b_i = max(0, min(s_i + o_i − M + h, h − σ_i))``; the zone of ``i`` is the integer times
    ``(C_i − a_i, C_i + b_i]``, ``C_i`` its completion.

    Why no two zones meet in a feasible schedule. Let ``C_j <= C_i``. If ``i`` starts at or after
    ``C_j``, then ``C_i − C_j >= o_i = a_i + h − s_i >= a_i + b_j`` (``s_i <= σ_j``). Otherwise ``i``
    runs at time ``C_j`` (it started before and has not completed) with ``s_i + o_i − (C_i − C_j)``
    tokens beside ``j``'s ``s_j + o_j``; memory ``<= M`` gives
    ``C_i − C_j >= (s_i + o_i − h) + (s_j + o_j − M + h) >= a_i + b_j``. Either way
    ``C_i − a_i >= C_j + b_j``. ∎ (The ``>= max(h, M − h)`` condition keeps ``a_i`` and the second
    lag non-negative; ``s_i <= h`` keeps the first.)

    Raises
    ------
    CertificateError
        If ``split`` is not an integer with ``0 < split < M``.
    """
    M = instance.M
    if isinstance(split, (bool, np.bool_)) or not isinstance(split, numbers.Integral) or not 0 < int(split) < M:
        raise CertificateError(f"zone split {split!r} is not an integer between 1 and M − 1 = {M - 1}")
    h = int(split)
    inside = [(i, r.prompt, r.prompt + r.output) for i, r in enumerate(instance.requests)
              if r.prompt + r.output >= max(h, M - h) and r.prompt <= h]
    top = sorted((s for _, s, _ in inside), reverse=True)[:2]
    zones = {}
    for i, s, p in inside:
        others_max = top[1] if (s == top[0] and len(top) > 1) else (0 if s == top[0] else top[0])
        zones[i] = (p - h, max(0, min(p - M + h, h - others_max)))
    return zones


def check_zone_certificate(
    instance: Instance,
    lam: Any,
    mu: Any,
    split: Any,
    upper_bound_starts: Mapping[str, Any] | None = None,
    *,
    tol: float = LAMBDA_CHECK_TOL,
) -> float:
    """Recompute the lower bound on OPT certified by memory multipliers ``λ`` and zone multipliers ``μ``.

    For the peak zones of split ``h`` (:func:`certified_zones`, which proves that at most one zone
    covers each time in any feasible schedule), any ``λ_t, μ_τ >= 0`` and start windows ``K_i``
    that contain an optimal schedule::

        bound = C + Σ_i min_{k ∈ K_i} ( k + Σ_{τ=k+1}^{k+o_i} (s_i + τ − k)·λ_τ
                                          + [i ∈ Z] Σ_{τ=k+o_i−a_i+1}^{k+o_i+b_i} μ_τ )
                − M·Σ_t λ_t − Σ_τ μ_τ,          C = Σ_i (o_i − a_i).

    Proof: as in :func:`check_lower_bound_certificate`, adding ``Σ_τ μ_τ (z_τ − 1) <= 0`` for the
    optimal schedule's zone counts ``z_τ <= 1``. ∎ The windows are :func:`certified_windows`;
    every ``k`` of every window is evaluated (identical requests once), so the cost is the total
    window width, which the stage keeps to LP-sized instances.

    Raises
    ------
    CertificateError
        On a bad ``λ`` or ``μ`` (negative beyond ``tol``, not finite, non-integer time, given
        twice), a bad ``split``, or an infeasible ``upper_bound_starts``.
    """
    lt, lv = _multipliers(lam, tol)
    mt, mv = _multipliers(mu, tol, "μ")
    zones = certified_zones(instance, split)
    total = -instance.M * np.sum(lv, dtype=np.longdouble) - np.sum(mv, dtype=np.longdouble)
    if instance.n == 0:
        return float(total)
    lo, hi = certified_windows(instance, upper_bound_starts)
    origin = int(lo.min())
    mem = _prefix_sums(lt, lv, origin)
    zone = _prefix_sums(mt, mv, origin)
    groups: dict[tuple[int, int, int, int, int, int], int] = {}
    for i, r in enumerate(instance.requests):
        a, b = zones.get(i, (0, 0))
        key = (r.prompt, r.output, int(lo[i]) - origin, int(hi[i]) - origin, a, b)
        groups[key] = groups.get(key, 0) + 1
    for (s, o, k_lo, k_hi, a, b), count in groups.items():
        k = np.arange(k_lo, k_hi + 1, dtype=np.int64)
        a0, a1 = mem(k)
        b0, b1 = mem(k + o)
        kl = k.astype(np.longdouble)
        cost = kl + (s - kl) * (b0 - a0) + (b1 - a1)
        if a + b > 0:
            cost = cost + zone(k + o + b)[0] - zone(k + o - a)[0]
        total += count * cost.min()
    C = sum(r.output - (r.arrival - origin) for r in instance.requests)
    return float(C + total)


# --- the energy bound's certificate (a priority order of the fluid relaxation) ------------------


def check_energy_certificate(instance: Instance, order: Any, claimed: Any = None) -> int:
    """Verify the energy bound's certificate and return the bound on ``OPT`` (TEL) it certifies.

    Derived here from DESIGN §1 alone (nothing is taken from :mod:`llmopt.opt.bounds`). A request
    started at ``k`` holds ``s + (t − k)`` tokens at ``t = k+1 … k+o``, so in any feasible
    schedule it puts its whole *energy* ``E = Σ_{j=1..o} (s + j) = s·o + o(o+1)/2`` into the
    integer times ``t`` with ``a < t <= c`` (its completion ``c``), while the memory rows give
    at most ``M`` per time. Relaxing "the usage profile is ``s+1 … s+o`` on ``o`` consecutive
    times" to "any amount at any time in ``(a, c]``" gives a *fluid* schedule. The
    shortest-remaining-energy-first fluid schedule (SRPT) completes, by every integer time
    ``T``, at least as many requests as any fluid schedule — so at least as many as any
    feasible schedule completes by ``T`` (proof in :func:`llmopt.opt.bounds.energy_bound`). With
    ``e_(k)`` the ``k``-th smallest SRPT completion and ``q_(k)`` the ``k``-th smallest of
    ``a_i + o_i``, the ``k``-th smallest completion of any feasible schedule is
    ``>= max(e_(k), q_(k))``, and ``OPT >= Σ_k max(e_(k), q_(k)) − Σ_i a_i``.

    The certificate is ``order``, a priority list of the request ids. This function builds the
    preemptive *priority-list* fluid schedule of ``order`` — each unit of capacity, times
    ``1, 2, …`` with ``M`` each, goes to the first request in ``order`` that has arrived
    (``a < t``) and is not done — and checks that it *is* an SRPT schedule: whenever a request
    is picked (after a completion, or when arrivals join) its remaining energy is the least of
    all arrived, unfinished requests (ties either way). Between two such events the picked
    request's remaining energy only falls and nobody else's changes, so the check at the events
    suffices. A request completes at time ``ceil(q / M)`` where ``q`` is the cumulative
    capacity position at which its energy runs out (times are counted from the first arrival).

    An SRPT schedule's completion order is such a priority list (a request SRPT serves while
    another is waiting finishes first), which is how :func:`llmopt.opt.bounds.energy_certificate`
    makes one; any list that passes the check certifies the same value (all SRPT schedules
    complete equally many requests by every ``T``).

    Parameters
    ----------
    instance : Instance
    order : sequence of str
        Every request id exactly once.
    claimed : number, optional
        The value the certificate claims; rejected if above the value verified here.

    Returns
    -------
    int
        ``Σ_k max(e_(k), q_(k)) − Σ_i a_i``, a lower bound on every feasible schedule's TEL.

    Raises
    ------
    CertificateError
        If ``order`` is not a permutation of the instance's ids, if its priority-list schedule
        serves a request while another arrived, unfinished one has strictly less energy left
        (naming both), or if ``claimed`` exceeds the verified value.
    """
    reqs = instance.requests
    n, M = len(reqs), instance.M
    if isinstance(order, (str, bytes)):
        raise CertificateError("the energy certificate's order must be a sequence of request ids, not a string")
    order = list(order)
    index = {r.id: i for i, r in enumerate(reqs)}
    rank = [-1] * n
    for pos, rid in enumerate(order):
        i = index.get(rid) if isinstance(rid, str) else None
        if i is None:
            raise CertificateError(f"energy certificate: position {pos} names {rid!r}, not a request of the instance")
        if rank[i] >= 0:
            raise CertificateError(f"energy certificate: request {rid!r} appears twice (positions {rank[i]} and {pos})")
        rank[i] = pos
    if len(order) != n:
        missing = next(r.id for r, k in zip(reqs, rank) if k < 0)
        raise CertificateError(f"energy certificate: {n - len(order)} request(s) missing from the order, "
                               f"e.g. {missing!r}")
    value = 0
    if n:
        origin = min(r.arrival for r in reqs)
        left = [r.prompt * r.output + r.output * (r.output + 1) // 2 for r in reqs]  # energy not yet served
        by_rank = [0] * n
        for i, k in enumerate(rank):
            by_rank[k] = i
        arrive = sorted(range(n), key=lambda i: reqs[i].arrival)
        rel = [reqs[i].arrival - origin for i in arrive]
        # Arrived, unfinished requests, as sorted lists whose *last* entry is the one wanted:
        waiting: list[int] = []  # −rank: the first of them in ``order`` is last
        pending: list[tuple[int, int]] = []  # (−energy left, request): the least energy left is last
        ends: list[int] = []  # completion times (relative), in completion order: nondecreasing
        cap = 0  # capacity position: times 1..t have offered M·t units; (M(t-1), M·t] is time t
        nxt = 0
        while nxt < n or waiting:
            if not waiting:
                cap = max(cap, M * rel[nxt])
            while nxt < n and M * rel[nxt] <= cap:  # arrived at a <= t − 1: may use times t >= a + 1
                i = arrive[nxt]
                bisect.insort(waiting, -rank[i])
                bisect.insort(pending, (-left[i], i))
                nxt += 1
            stop = M * rel[nxt] if nxt < n else None  # next arrival: a new priority check then
            while waiting and (stop is None or cap < stop):
                i = by_rank[-waiting[-1]]
                least, j = -pending[-1][0], pending[-1][1]
                if left[i] > least:
                    raise CertificateError(
                        f"energy certificate: the order serves {reqs[i].id!r} ({left[i]} token-steps left) while "
                        f"{reqs[j].id!r} has only {least} left at time {origin + cap // M}: not "
                        "shortest-remaining-energy-first")
                where = bisect.bisect_left(pending, (-left[i], i))
                del pending[where]
                if stop is None or cap + left[i] <= stop:
                    cap += left[i]
                    left[i] = 0
                    waiting.pop()
                    ends.append(-(-cap // M))
                else:
                    left[i] -= stop - cap
                    cap = stop
                    bisect.insort(pending, (-left[i], i))
        release = sorted(r.arrival - origin + r.output for r in reqs)  # C_i >= a_i + o_i
        value = sum(max(e, q) for e, q in zip(ends, release)) - sum(r.arrival - origin for r in reqs)
    if claimed is not None:
        if isinstance(claimed, (bool, np.bool_)) or not isinstance(claimed, numbers.Real) or \
                not np.isfinite(float(claimed)):
            raise CertificateError(f"energy certificate: claimed value {claimed!r} is not a finite number")
        if float(claimed) > value:
            raise CertificateError(f"energy certificate claims {claimed!r} but the order certifies only {value}")
    return value
