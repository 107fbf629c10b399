"""The independent checker: verify schedules and lower-bound certificates from the Instance alone.

DESIGN §3 ("Checker"): every schedule and every solver solution is re-verified from the
:class:`~llmopt.instance.Instance` alone, and every lower bound carries what certifies it.
To stay independent this module imports nothing from the simulator, the policies, the
look-ahead module or the formulations — only :mod:`llmopt.instance`, numpy and the
standard library. Its memory accounting is written from the model of DESIGN §1 directly:

* a request that starts at step ``k`` completes at ``c = k + o`` and holds
  ``s + (t − k)`` KV-cache tokens at every integer time ``t = k+1 … k+o`` (0 otherwise);
* a schedule is feasible when every request starts at or after its arrival and the
  total usage is ``<= M`` at every integer time;
* ``TEL = Σ_i (k_i + o_i − a_i)``.

Two checks are provided:

:func:`check_schedule`
    Feasibility and TEL of a non-preemptive schedule ``{request id: start}``.
:func:`check_lower_bound_certificate`
    The weak-duality lower bound certified by a vector ``λ >= 0`` of memory-row
    multipliers (DIGEST §1.3, "General dual").
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from llmopt.instance import Instance

__all__ = ["CheckReport", "check_schedule", "check_lower_bound_certificate", "certificate_horizon"]

#: How many violations a :class:`CheckReport` lists before summarising the rest.
MAX_VIOLATIONS = 20
#: How many running requests a memory-overflow message names.
_MAX_NAMED = 12


@dataclass(frozen=True)
class CheckReport:
    """Outcome of :func:`check_schedule`.

    Attributes
    ----------
    ok : bool
        ``True`` iff the schedule is feasible for the instance.
    tel : int or None
        Total end-to-end latency recomputed from the instance; ``None`` unless ``ok``
        (an infeasible schedule has no verified TEL).
    violations : tuple of str
        The first :data:`MAX_VIOLATIONS` violations, human readable; a last entry
        ``"... and N more violations"`` summarises the rest.
    memory : tuple of int
        ``memory[t-1]`` is the KV-cache usage at integer time ``t = 1 … makespan``
        (computed from every request that has an integer start, feasible or not).
    makespan : int
        Largest completion time ``k_i + o_i`` (0 when no request has a valid start).
    """

    ok: bool
    tel: int | None
    violations: tuple[str, ...]
    memory: tuple[int, ...]
    makespan: int

    @property
    def peak_memory(self) -> int:
        """Largest usage over ``t = 1 … makespan`` (0 for an empty schedule)."""
        return max(self.memory, default=0)


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


def check_schedule(instance: Instance, starts: Mapping[str, Any]) -> CheckReport:
    """Verify a schedule ``{request id: start step}`` against ``instance`` (DESIGN §1).

    Checks, from the instance alone:

    1. every request of the instance has exactly one start, and it is an integer
       (a value may also be a one-element sequence; longer sequences are rejected);
    2. no start names an id that is not in the instance;
    3. ``k_i >= a_i`` for every request;
    4. the KV-cache usage ``Σ_i usage_i(t) <= M`` at every integer time ``t``, where a
       request started at ``k`` uses ``s_i + (t − k)`` at ``t = k+1 … k+o_i``.

    Non-preemption needs no separate check: a request with a single start ``k`` runs
    the ``o_i`` consecutive steps ``k … k+o_i−1`` by definition of the usage above, so
    a schedule given by one start per request cannot interrupt any request. (Schedules
    with evictions are checked through the start of each request's final run; the memory
    held by aborted runs before an eviction is not part of this check.)

    The memory profile is computed with difference arrays: a start at ``k`` adds
    ``(s − k)`` to a constant part and ``1`` to a slope part on ``(k, k+o]``, and
    ``usage(t) = D0(t) + t·D1(t)`` with ``D0``, ``D1`` the prefix sums.

    Parameters
    ----------
    instance : Instance
    starts : mapping of str to int
        Start step of every request.

    Returns
    -------
    CheckReport
        ``ok`` and the recomputed ``tel`` (``None`` unless feasible), the violations,
        the memory profile at ``t = 1 … makespan`` and the makespan.
    """
    violations: list[str] = []
    n_violations = 0

    def report(msg: str) -> None:
        nonlocal n_violations
        n_violations += 1
        if len(violations) < MAX_VIOLATIONS:
            violations.append(msg)

    known = set(instance.ids)
    for rid in starts:
        if rid not in known:
            report(f"unknown request id {rid!r} (not in the instance)")

    ids: list[str] = []
    ks: list[int] = []
    ss: list[int] = []
    os_: list[int] = []
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
        ids.append(r.id)
        ks.append(k)
        ss.append(r.prompt)
        os_.append(r.output)
        tel += k + r.output - r.arrival

    memory: tuple[int, ...] = ()
    makespan = 0
    if ks:
        k_arr = np.asarray(ks, dtype=np.int64)
        s_arr = np.asarray(ss, dtype=np.int64)
        o_arr = np.asarray(os_, dtype=np.int64)
        end = k_arr + o_arr
        makespan = max(int(end.max()), 0)
        base = min(int(k_arr.min()), 0)  # early starts may be negative; shift the time axis
        size = makespan - base + 2
        d0 = np.zeros(size, dtype=np.int64)
        d1 = np.zeros(size, dtype=np.int64)
        np.add.at(d0, k_arr + 1 - base, s_arr - k_arr)
        np.add.at(d0, end + 1 - base, -(s_arr - k_arr))
        np.add.at(d1, k_arr + 1 - base, 1)
        np.add.at(d1, end + 1 - base, -1)
        times = np.arange(base, base + size, dtype=np.int64)
        usage = np.cumsum(d0) + times * np.cumsum(d1)
        mem = usage[1 - base: makespan + 1 - base]  # t = 1 … makespan
        memory = tuple(int(u) for u in mem)
        for idx in np.flatnonzero(mem > instance.M):
            t = int(idx) + 1
            running = [ids[j] for j in range(len(ids)) if ks[j] < t <= ks[j] + os_[j]]
            names = ", ".join(running[:_MAX_NAMED]) + (", ..." if len(running) > _MAX_NAMED else "")
            report(f"memory at time {t} is {int(mem[idx])} > M = {instance.M} (running: {names})")
            if n_violations > MAX_VIOLATIONS:
                n_violations += int(np.count_nonzero(mem[idx + 1:] > instance.M))
                break

    if n_violations > len(violations):
        violations.append(f"... and {n_violations - len(violations)} more violations")
    ok = n_violations == 0
    return CheckReport(ok=ok, tel=tel if ok else None, violations=tuple(violations), memory=memory,
                       makespan=makespan)


# --- lower-bound certificates -------------------------------------------------------------------


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


def _lambda_array(lam: Mapping[int, float] | Sequence[float] | np.ndarray, tol: float) -> np.ndarray:
    """Dense float array ``λ[t]`` for ``t = 0 … T``; validates finiteness and ``λ >= 0``."""
    if isinstance(lam, Mapping):
        if not lam:
            return np.zeros(1)
        keys: list[int] = []
        for t in lam:
            if isinstance(t, (bool, np.bool_)) or not isinstance(t, numbers.Integral):
                raise ValueError(f"λ key {t!r} is not an integer time")
            if t < 0:
                raise ValueError(f"λ given at negative time {t}")
            keys.append(int(t))
        arr = np.zeros(max(keys) + 1)
        for t, v in lam.items():
            arr[int(t)] = float(v)
    else:
        arr = np.array(lam, dtype=float).ravel()
        if arr.size == 0:
            return np.zeros(1)
    bad = ~np.isfinite(arr)
    if bad.any():
        t = int(np.flatnonzero(bad)[0])
        raise ValueError(f"λ at time {t} is {arr[t]!r}, not a finite number")
    neg = arr < -tol
    if neg.any():
        t = int(np.flatnonzero(neg)[0])
        raise ValueError(f"λ at time {t} is {arr[t]!r} < 0; a certificate needs λ_t >= 0")
    return np.maximum(arr, 0.0)


def _windows_of(instance: Instance, windows: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-request ``(lo, hi)`` start windows, lo clamped to the arrival."""
    a = np.array([r.arrival for r in instance.requests], dtype=np.int64)
    o = np.array([r.output for r in instance.requests], dtype=np.int64)
    if windows is None:
        T_c = certificate_horizon(instance)
        return a, T_c - o
    if hasattr(windows, "lo") and hasattr(windows, "hi"):
        lo, hi = list(windows.lo), list(windows.hi)
    else:
        pairs = list(windows)
        lo = [p[0] for p in pairs]
        hi = [p[1] for p in pairs]
    if len(lo) != instance.n or len(hi) != instance.n:
        raise ValueError(f"windows give {len(lo)} start ranges for {instance.n} requests")
    lo_a = np.maximum(np.asarray(lo, dtype=np.int64), a)  # a start before arrival is never feasible
    hi_a = np.asarray(hi, dtype=np.int64)
    empty = lo_a > hi_a
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise ValueError(
            f"request {instance.requests[i].id!r}: empty start window [{int(lo_a[i])}, {int(hi_a[i])}]"
        )
    return lo_a, hi_a


def check_lower_bound_certificate(
    instance: Instance,
    lam: Mapping[int, float] | Sequence[float] | np.ndarray,
    windows: Any = None,
    *,
    tol: float = 1e-9,
) -> float:
    """Recompute the lower bound on OPT certified by memory-row multipliers ``λ >= 0``.

    For any ``λ_t >= 0`` and any start windows ``K_i`` (weak duality of the hindsight LP,
    DIGEST §1.3 "General dual")::

        bound(λ) = C + Σ_i min_{k ∈ K_i} ( k + Σ_{τ=k+1}^{k+o_i} (s_i + τ − k)·λ_τ ) − M·Σ_t λ_t,
        C = Σ_i (o_i − a_i).

    Proof. Let ``k_i ∈ K_i`` be the starts of any feasible schedule, ``m_t`` its memory at
    time ``t``. Then ``m_t <= M`` gives ``Σ_t λ_t (m_t − M) <= 0``, so
    ``TEL = C + Σ_i k_i >= C + Σ_i k_i + Σ_t λ_t m_t − M Σ_t λ_t``; and
    ``Σ_t λ_t m_t = Σ_i Σ_{τ=k_i+1}^{k_i+o_i} (s_i + τ − k_i) λ_τ``, so each request's term
    is at least its minimum over ``K_i``. ∎ The same holds for fractional (LP) schedules.

    The bound is therefore a valid lower bound on OPT whenever the windows contain the
    starts of *some* optimal schedule. With ``windows=None`` the windows are
    ``a_i … T_c − o_i``, ``T_c = max a + Σ o`` (:func:`certificate_horizon`), which do.
    Window lower ends below ``a_i`` are raised to ``a_i`` (never feasible anyway).

    Parameters
    ----------
    instance : Instance
    lam : mapping {t: λ_t}, or array indexed by time (``lam[t] = λ_t``, index 0 is time 0)
        Multipliers of the memory rows. Times not given (in particular past the end of
        the array) count as 0. A multiplier at time 0 is allowed (memory at time 0 is
        0 <= M) and only lowers the bound.
    windows : object with ``lo``/``hi`` sequences (e.g. ``StartWindows``), or a sequence
        of ``(lo, hi)`` pairs in instance order, optional
        Start windows ``K_i = lo_i … hi_i``.
    tol : float
        Negative multipliers down to ``−tol`` are clamped to 0 (solver round-off).

    Returns
    -------
    float
        ``bound(λ)``.

    Raises
    ------
    ValueError
        If some ``λ_t < −tol`` or is not finite (the message names the time ``t``), or a
        window is empty or does not match the instance.
    """
    lam_arr = _lambda_array(lam, tol)
    if instance.n == 0:
        return float(-instance.M * lam_arr.sum())
    lo, hi = _windows_of(instance, windows)
    s = np.array([r.prompt for r in instance.requests], dtype=np.int64)
    o = np.array([r.output for r in instance.requests], dtype=np.int64)
    a = np.array([r.arrival for r in instance.requests], dtype=np.int64)

    T = int((hi + o).max())
    size = max(T, lam_arr.size - 1) + 1
    full = np.zeros(size, dtype=np.longdouble)
    full[: lam_arr.size] = lam_arr
    tau = np.arange(size, dtype=np.longdouble)
    L0 = np.cumsum(full)  # L0[j] = Σ_{τ<=j} λ_τ
    L1 = np.cumsum(tau * full)  # L1[j] = Σ_{τ<=j} τ·λ_τ

    # Requests with the same (s, o) share one cost curve over k; evaluate it once on the
    # union of their windows and take the minimum over each window.
    total = np.longdouble(0.0)
    groups: dict[tuple[int, int], list[int]] = {}
    for i in range(instance.n):
        groups.setdefault((int(s[i]), int(o[i])), []).append(i)
    for (si, oi), members in groups.items():
        k_lo = int(lo[members].min())
        k_hi = int(hi[members].max())
        k = np.arange(k_lo, k_hi + 1, dtype=np.int64)
        kl = k.astype(np.longdouble)
        cost = kl + (si - kl) * (L0[k + oi] - L0[k]) + (L1[k + oi] - L1[k])
        windows_seen: dict[tuple[int, int], np.longdouble] = {}
        for i in members:
            key = (int(lo[i]), int(hi[i]))
            if key not in windows_seen:
                windows_seen[key] = cost[key[0] - k_lo: key[1] - k_lo + 1].min()
            total += windows_seen[key]
    C = int((o - a).sum())
    return float(C + total - instance.M * full.sum())
