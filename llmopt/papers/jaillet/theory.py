"""J0's theory, measured: Thm 6.2's adversarial family, J Thm 4.3's O(1) ratio, J0 Thm 5.3's regret.

Sources: J0 = ``shared/seeds/004_aa15f1132afc7f4b.txt`` (§5 L178–338, §6 L340–433), J =
``002_6c46cf2e5a2e50cf.txt`` (§4 L164–308); DIGEST §2.1, §2.3, §3.2–3.3, I-41. Model: DESIGN §1.

**J0 Theorem 6.2** (no deterministic algorithm has a constant competitive ratio). The adversary's
instance for a deterministic algorithm ``A`` (``s = εM``): one request ``o = (1−ε)M`` at ``t = 0``
(so ``s + o = M``; the proof's "output length M" is a slip, DIGEST I-41); ``A`` starts it at ``t'``
(found by running ``A`` on that request alone: :func:`first_start`); then ``εM`` requests ``o = 1``
arrive at ``t' + (1−2ε)M`` (:func:`thm62_instance`). The proof bounds ``A_1`` (continue the long
request), ``A_2`` (interrupt it) and the offline ``A_3`` (:func:`paper_tel_a1`, ``_a2``, ``_a3``,
as printed) and concludes ``CR >= min{2/ε, 1/ε} = 1/ε``. Differences under DESIGN §1, measured:

* a unit request peaks at ``s + 1 = εM + 1``, so ``m = ⌊M/(εM+1)⌋`` of them run at once (``⌈1/ε⌉ − 1``
  once ``M`` is large; the proof uses ``1/ε``). Then the printed ``OPT <= TEL(A_3)`` fails for large ``M`` (e.g.
  ``M = 36, ε = 1/3``: OPT = 84 > 78), and a continuing algorithm's ratio tends to ``2m + 1``
  (:func:`thm62_ratio_limit`, ``2/ε − 1`` for ``ε = 1/k``), not ``1 + 2/ε``; it is ``>= 1/ε`` only
  once ``M`` is large, since the ``O(M)`` terms dominate while ``ε³M² <~ M``;
* the printed ``TEL(A_3)`` drops the ``ε²M`` term of its own middle step;
* ``A_2`` keeps the interrupted request's cache (a pause). DESIGN's eviction discards it and the
  request restarts, and its latency counts to its final completion; :class:`PreemptShortestFirst`
  (evict for a shorter waiting request, restart later) then reaches OPT or comes close on this family
  (``results/jaillet/j0-theory``), so the family alone proves the bound only for algorithms that do not evict.

OPT of the family is exact by enumeration (:func:`thm62_opt`, proof in its docstring).

**J Theorem 4.3** (all arrivals at 0, identical ``s``, ``M >= 2 max_i (s + o_i)``: MC-SF is
``O(1)``-competitive; the lemmas give ``MC-SF <= 1536·X/M + 24·Y`` and ``OPT >= X/(6M) + Y/6``, i.e. a
constant ``<= 9216``). :func:`thm43_instance`, :func:`thm43_point` measure MC-SF against the best
certified lower bound (a ratio against a *bound*, at least the true ratio) and against OPT where
the IP proves it.

**J0 Theorem 5.3** (regret ``E[AEL(A) − OPT/n] <= C`` independent of ``T``, stable and overloaded).
Setting (J0 §3 L118, §5 L178, App. L701): periods ``t = 1..T``; the number of arrivals in each period
i.i.d. from ``D`` with support ``[0, B]`` and mean ``λ``; outputs i.i.d. from ``F``, known on arrival;
one prompt size ``s``. Our reading (:func:`thm53_instance`): ``D = Binomial(B, λ/B)``, ``F = U{1..o_max}``,
latency counted to completion (requests left at ``T`` are served after it). :func:`thm53_point`
brackets ``AEL − OPT/n`` by ``[AEL − UB/n, AEL − LB/n]`` (UB: best verified schedule, LB: best
certified bound); :func:`energy_throughput` is the rate no schedule can exceed (above it: overloaded).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from heapq import heappush
from typing import Any

import numpy as np

from llmopt.engine.discrete import Decision, RequestView, simulate
from llmopt.model.instance import Instance, Request
from llmopt.model.schedule import Schedule, schedule_from_starts
from llmopt.model.tolerance import integer_lower_bound
from llmopt.opt.hindsight import HindsightResult, solve_hindsight
from llmopt.policies import MCSF, make_policy_spec
from llmopt.solvers.highs import node_limited_highs
from llmopt.verify.checker import check_schedule

__all__ = [
    "PreemptShortestFirst", "first_start", "thm62_sizes", "thm62_instance", "paper_tel_a1", "paper_tel_a2",
    "paper_tel_a3", "thm62_mcsf_tel", "thm62_ratio_limit", "thm62_opt", "thm62_a3_starts", "Thm62Run", "run_thm62",
    "thm43_instance", "lemma44_upper", "lemma47_lower", "Bracket", "bracket", "thm43_point", "thm53_instance",
    "energy_throughput", "thm53_point", "verified_tel", "schedule_of", "node_limited_highs",
]

PolicyLike = Any  # a policy spec string ("mc-sf", "alpha-protection:alpha=0.1") or a policy object


def _policy(policy: PolicyLike) -> Any:
    return make_policy_spec(policy) if isinstance(policy, str) else policy


def _policy_name(policy: PolicyLike) -> str:
    return policy if isinstance(policy, str) else str(getattr(policy, "name", type(policy).__name__))


def verified_tel(instance: Instance, schedule: Schedule) -> int:
    """TEL of ``schedule`` recomputed by the independent checker (evictions included).

    Raises
    ------
    AssertionError
        If the checker rejects the schedule or disagrees with the simulator's TEL.
    """
    report = check_schedule(instance, schedule.starts, evictions=schedule.evictions)
    assert report.ok and report.tel == schedule.tel, (schedule.policy, report.violations, report.tel, schedule.tel)
    return schedule.tel


class PreemptShortestFirst(MCSF):
    """MC-SF that evicts for a shorter request: ``A_2`` of Thm 6.2 under DESIGN's eviction (restart).

    When the first waiting request (shortest output) does not fit, running requests with a longer
    output are evicted, latest planned completion first, until it fits; if evicting all of them
    would not make it fit, none is evicted. Evicted requests lose their tokens and rejoin the queue.
    Then MC-SF's prefix rule admits as usual. Not registered: a device of this study.
    """

    name = "preempt-shortest-first"

    def decide(self, t: int) -> Decision:
        evicted: list[str] = []
        if self.queue:
            head = self.queue[0][2]
            victims = sorted((v for v in self.running.values() if v[0].output > head.output),
                             key=lambda v: (v[1] + v[0].output, v[0].position), reverse=True)
            removed: list[tuple[RequestView, int]] = []
            while victims and not self.profile.fits(t, head.prompt, head.output):
                request, start = victims.pop(0)
                self.profile.remove(request.id)
                removed.append((request, start))
            if self.profile.fits(t, head.prompt, head.output):
                for request, _ in removed:
                    del self.running[request.id]
                    heappush(self.queue, (self.key(request), request.position, request))
                    evicted.append(request.id)
            else:
                for request, start in removed:
                    self.profile.add(request.id, start, request.prompt, request.output)
        decision = super().decide(t)
        return Decision(start=decision.start, evict=tuple(evicted), wake_at=decision.wake_at)


# --- Thm 6.2 ----------------------------------------------------------------------------------


def thm62_sizes(M: int, eps: float | Fraction) -> tuple[Fraction, int, int]:
    """``(ε, s = εM, d = (1−2ε)M)`` for the family; ``εM`` unit requests arrive ``d`` after ``t'``.

    Raises
    ------
    ValueError
        Unless ``0 < ε < 1/2`` and ``εM`` is a positive integer (so ``d >= 1`` is one too).
    """
    e = Fraction(eps).limit_denominator(10_000) if isinstance(eps, float) else Fraction(eps)
    if not 0 < e < Fraction(1, 2):
        raise ValueError(f"eps must lie in (0, 1/2), got {eps}")
    if (e * M).denominator != 1 or e * M < 1:
        raise ValueError(f"eps·M must be a positive integer, got eps = {e}, M = {M}")
    s = int(e * M)
    return e, s, M - 2 * s


def first_start(M: int, eps: float | Fraction, policy: PolicyLike = "mc-sf") -> int:
    """``t'``: when ``policy`` starts the first request ``(a = 0, s = εM, o = (1−ε)M)`` seen alone."""
    _, s, _ = thm62_sizes(M, eps)
    alone = Instance(M, (Request("long", 0, s, M - s),), name="j0-thm62/first")
    return int(simulate(alone, _policy(policy)).starts["long"])


def thm62_instance(M: int, eps: float | Fraction, policy: PolicyLike | None = "mc-sf", *,
                   t_first: int | None = None) -> Instance:
    """J0 Thm 6.2's instance for ``policy``: ``long`` at 0, ``εM`` unit requests at ``t' + (1−2ε)M``.

    Parameters
    ----------
    M : int
    eps : float or Fraction
        ``ε``; ``εM`` must be an integer (:func:`thm62_sizes`).
    policy : str or policy, optional
        Sets ``t'`` by :func:`first_start` (the adversary adapts to a deterministic algorithm).
    t_first : int, optional
        ``t'`` given directly (overrides ``policy``; with neither, ``t' = 0``).
    """
    e, s, d = thm62_sizes(M, eps)
    tp = t_first if t_first is not None else (first_start(M, e, policy) if policy is not None else 0)
    shorts = tuple(Request(f"short-{i}", tp + d, s, 1) for i in range(s))
    return Instance(M, (Request("long", 0, s, M - s), *shorts), name=f"j0-thm62/M={M} eps={e} t'={tp}")


def paper_tel_a1(M: int, eps: float | Fraction) -> float:
    """J0's ``TEL(A_1) >= (ε³/2 + ε²)M² + (1 − ε/2)M`` (continue the long request; ``t' = 0``)."""
    e = float(eps)
    return (e**3 / 2 + e**2) * M * M + (1 - e / 2) * M


def paper_tel_a2(M: int, eps: float | Fraction) -> float:
    """J0's ``TEL(A_2) >= ε²M²/2 + (2 − ε/2)M`` (interrupt the long request, keeping its cache)."""
    e = float(eps)
    return e**2 * M * M / 2 + (2 - e / 2) * M


def paper_tel_a3(M: int, eps: float | Fraction) -> float:
    """J0's ``OPT <= TEL(A_3) = (ε³/2)M² + (2 − 3ε/2)M`` as printed (its middle step has ``+ε²M`` more)."""
    e = float(eps)
    return e**3 / 2 * M * M + (2 - 3 * e / 2) * M


def _per_step(M: int, s: int) -> int:
    """Unit requests that fit at once: each holds ``s + 1`` at its completion."""
    return M // (s + 1)


def thm62_mcsf_tel(M: int, eps: float | Fraction) -> int:
    """Exact TEL under DESIGN §1 of an algorithm that starts the long request at 0 and never evicts it
    (MC-SF, FCFS): the long request ends at ``(1−ε)M``; until then no unit request fits (the long one
    holds ``> (1−ε)M`` after the arrival at ``(1−2ε)M``), so each waits ``εM``, and then they run
    ``m = ⌊M/(εM+1)⌋`` per step: ``TEL = (1−ε)M + Σ_{i<εM} (εM + 1 + ⌊i/m⌋)``."""
    _, s, _ = thm62_sizes(M, eps)
    m = _per_step(M, s)
    return (M - s) + sum(s + 1 + i // m for i in range(s))


def thm62_ratio_limit(eps: float | Fraction) -> int:
    """``lim_{M→∞} TEL/OPT = 2m + 1`` with ``m = ⌈1/ε⌉ − 1`` for a continuing algorithm under DESIGN
    (J0's ``A_1/A_3`` tends to ``1 + 2/ε``): TEL ≈ ``ε²M²(1 + 1/(2m))``, OPT ≈ ``ε²M²/(2m)``."""
    m = math.ceil(1 / Fraction(eps)) - 1
    return 2 * m + 1


def _family(instance: Instance) -> tuple[Request, list[Request]]:
    """The long request and the unit requests of a Thm 6.2 instance (checked)."""
    longs = [r for r in instance.requests if r.output > 1 or r.arrival == 0]
    shorts = [r for r in instance.requests if r not in longs]
    ok = (len(longs) == 1 and longs[0].arrival == 0 and longs[0].peak == instance.M and shorts
          and len({(r.arrival, r.prompt, r.output) for r in shorts}) == 1 and shorts[0].prompt == longs[0].prompt)
    if not ok:
        raise ValueError(f"{instance.name!r} is not a Thm 6.2 instance")
    return longs[0], shorts


def _shorts_greedy(M: int, s: int, n: int, r: int, k_long: int | None, o_long: int) -> np.ndarray:
    """Steps ``r, r+1, …`` at which unit requests start when each step takes as many as fit beside the
    long request started at ``k_long`` (``None``: no long request); one entry per request."""
    horizon = r + (o_long if k_long is not None else 0) + n + 2
    tau = np.arange(r + 1, horizon + 1)  # the time at which a unit request started at tau − 1 peaks
    held = np.zeros_like(tau)
    if k_long is not None:
        active = (tau > k_long) & (tau <= k_long + o_long)
        held[active] = s + tau[active] - k_long
    cap = (M - held) // (s + 1)
    starts = np.repeat(tau - 1, cap)[:n]
    assert len(starts) == n
    return starts


def thm62_opt(instance: Instance) -> tuple[int, dict[str, int]]:
    """Exact OPT of a Thm 6.2 instance, with an optimal schedule, by enumerating the long request's start.

    Proof. Fix the long request's start ``k``. A unit request started at ``t`` holds memory only at
    ``t + 1`` (``s + 1``), so the unit requests interact with each other only through the per-time
    capacity ``c(t) = ⌊(M − L_k(t+1))/(s+1)⌋`` (``L_k`` the long request's usage; it fits alone since
    ``s + o = M``). For identical requests released together, starting as many as fit at each step from
    ``r`` on (greedy) is optimal: the ``j``-th unit start of any feasible schedule is no earlier than
    greedy's ``j``-th, since greedy has started the most by every step. So ``OPT = min_k (k + o +
    greedy_k)``. Starts ``k >= K``, where ``K`` is when greedy without the long request has finished,
    leave the unit requests undisturbed and only delay the long one, so ``k ∈ [0, K]`` suffices.
    ``O(K·(o + εM))`` with NumPy; the schedule returned passes the checker (asserted).
    """
    long, shorts = _family(instance)
    M, s, o, r, n = instance.M, long.prompt, long.output, shorts[0].arrival, len(shorts)
    free = _shorts_greedy(M, s, n, r, None, o)
    K = int(free[-1]) + 1
    best: tuple[int, int] | None = None
    for k in range(K + 1):
        starts = _shorts_greedy(M, s, n, r, k, o)
        tel = k + o + int((starts + 1 - r).sum())
        if best is None or tel < best[0]:
            best = (tel, k)
    assert best is not None
    tel, k = best
    out = {long.id: k} | {q.id: int(x) for q, x in zip(shorts, _shorts_greedy(M, s, n, r, k, o))}
    report = check_schedule(instance, out)
    assert report.ok and report.tel == tel, report.violations
    return tel, out


def thm62_a3_starts(instance: Instance) -> dict[str, int]:
    """J0's offline ``A_3`` under DESIGN: unit requests greedily from their arrival, the long request
    once they have all completed. A feasible schedule, so its TEL bounds OPT from above."""
    long, shorts = _family(instance)
    r = shorts[0].arrival
    starts = _shorts_greedy(instance.M, long.prompt, len(shorts), r, None, long.output)
    return {long.id: int(starts[-1]) + 1} | {q.id: int(x) for q, x in zip(shorts, starts)}


@dataclass(frozen=True)
class Thm62Run:
    """One policy on its own Thm 6.2 instance (every TEL verified by the checker).

    Attributes
    ----------
    M, eps, policy, t_first, n : the instance (``t_first`` = ``t'``).
    tel : int
        The policy's TEL; ``evictions`` its evictions.
    opt : int
        Exact OPT (:func:`thm62_opt`); ``ratio = tel / opt``; ``bound = 1/ε`` (the theorem's).
    a3_design : int
        TEL of ``A_3`` under DESIGN (:func:`thm62_a3_starts`), an upper bound on OPT.
    paper : mapping
        The printed closed forms ``A1``, ``A2``, ``A3`` (valid for ``t' = 0``).
    """

    M: int
    eps: Fraction
    policy: str
    t_first: int
    n: int
    tel: int
    evictions: int
    opt: int
    ratio: float
    bound: float
    a3_design: int
    paper: Mapping[str, float] = field(default_factory=dict)


def run_thm62(M: int, eps: float | Fraction, policy: PolicyLike = "mc-sf") -> Thm62Run:
    """Build ``policy``'s Thm 6.2 instance, simulate it, and compare with exact OPT and the closed forms."""
    e, _, _ = thm62_sizes(M, eps)
    tp = first_start(M, e, policy)
    inst = thm62_instance(M, e, t_first=tp)
    sched = simulate(inst, _policy(policy))
    tel = verified_tel(inst, sched)
    opt, _ = thm62_opt(inst)
    a3 = thm62_a3_starts(inst)
    a3_tel = check_schedule(inst, a3).tel
    assert a3_tel is not None
    paper = {"A1": paper_tel_a1(M, e), "A2": paper_tel_a2(M, e), "A3": paper_tel_a3(M, e)}
    return Thm62Run(M, e, _policy_name(policy), tp, inst.n, tel, len(sched.evictions), opt, tel / opt, float(1 / e),
                    a3_tel, paper)


# --- shared: certified brackets ---------------------------------------------------------------


@dataclass(frozen=True)
class Bracket:
    """``bound <= OPT <= ub`` for one instance, from :func:`llmopt.opt.hindsight.solve_hindsight`.

    Attributes
    ----------
    ub, ub_source : TEL and stage of the best verified schedule.
    bound, certificate : best certified lower bound (integer) and what certifies it.
    bound_stage : str
        The stage that gave ``bound``: a bound provider's name, ``ip`` (the solver's MIP bound) or
        ``sum-of-outputs``.
    bound_values : mapping
        Each bound stage's checked value (``None`` where it produced none).
    status : str
        ``optimal`` when a certified bound meets ``ub``; else the IP's status (``time_limit``: hit
        its limit) or ``not_solved`` (no IP run).
    opt : int or None
        OPT when proven; ``gap = (ub − bound)/ub``.
    starts : mapping
        Start steps of the best verified schedule.
    """

    ub: int
    ub_source: str
    bound: int
    certificate: str
    bound_stage: str
    bound_values: Mapping[str, float | None]
    status: str
    opt: int | None
    gap: float
    runtime_s: float
    starts: Mapping[str, int] = field(default_factory=dict)


def bracket(instance: Instance, schedules: Mapping[str, Schedule], *, bounds: Sequence[str] = ("energy",),
            upper_bounds: Sequence[str] = ("mc-sf", "fcfs", "local-search"), search_evals: int = 200,
            ip_time_limit: float | None = None, ip_node_limit: int | None = None, seed: int = 0) -> Bracket:
    """Certified bracket on OPT: the pipeline's upper-bound stages plus ``schedules`` (verified by the
    checker there), the named bound stages, and the IP when ``ip_node_limit`` (branch-and-bound nodes of
    :func:`node_limited_highs`: the same answer on any machine) or ``ip_time_limit`` (seconds: the answer can
    move with the machine's load) is given. An IP stopped by its node limit before proving OPT has status
    ``node_limit``."""
    from llmopt.solvers import DEFAULT_SOLVER

    res: HindsightResult = solve_hindsight(
        instance, bounds=tuple(bounds), upper_bounds=tuple(upper_bounds), schedules=schedules,
        search_evals=search_evals, solve_ip=ip_time_limit is not None or ip_node_limit is not None,
        ip_time_limit=ip_time_limit, seed=seed,
        solver=node_limited_highs(ip_node_limit) if ip_node_limit is not None else DEFAULT_SOLVER)
    if res.errors:
        raise RuntimeError(f"{instance.name}: {res.errors}")
    values = {b.name: b.value for b in res.bounds if b.value is not None}
    stage = "ip" if res.bound_certificate == "mip-bound-from-solver" else next(
        (k for k, v in values.items() if integer_lower_bound(v) == res.bound), res.bound_certificate)
    status = res.status.value
    if ip_node_limit is not None and res.opt is None and ip_time_limit is None:
        status = "node_limit"
    return Bracket(res.incumbent, res.incumbent_source, res.bound, res.bound_certificate, stage,
                   {b.name: b.value for b in res.bounds}, status, res.opt, res.gap, res.runtime_s,
                   dict(res.starts))


# --- J Thm 4.3 --------------------------------------------------------------------------------


def thm43_instance(n: int, seed: int, *, s: int = 2, o_max: int = 10, dist: str = "uniform",
                   M: int | None = None) -> Instance:
    """``n`` requests at 0 with prompt ``s`` and outputs from ``dist``: ``uniform`` (``U{1..o_max}``) or
    ``two-point`` (1 or ``o_max``, each w.p. 1/2). ``M`` defaults to ``2(s + o_max)``, the smallest the
    theorem allows for any draw (``M >= 2·max(s + o_i)``)."""
    rng = np.random.default_rng([seed, 43, n])
    if dist == "uniform":
        outs = rng.integers(1, o_max + 1, size=n)
    elif dist == "two-point":
        outs = np.where(rng.random(n) < 0.5, 1, o_max)
    else:
        raise ValueError(f"unknown output distribution {dist!r} (uniform, two-point)")
    M = 2 * (s + o_max) if M is None else M
    if M < 2 * (s + int(outs.max())):
        raise ValueError(f"M = {M} is below Thm 4.3's condition 2·max(s + o) = {2 * (s + int(outs.max()))}")
    return Instance.from_tuples(M, [(0, s, int(o)) for o in outs], name=f"j-thm43/{dist} n={n} seed={seed}")


def _lemma_sums(instance: Instance) -> tuple[float, int]:
    """``X = Σ_o n_o Σ_{o'<=o} n_o' vol_o'`` (``vol_o = s·o + o(o+1)/2``) and ``Y = Σ_i o_i``."""
    s = instance.requests[0].prompt
    counts: dict[int, int] = {}
    for r in instance.requests:
        counts[r.output] = counts.get(r.output, 0) + 1
    X, prefix = 0.0, 0.0
    for o in sorted(counts):
        prefix += counts[o] * (s * o + o * (o + 1) / 2)
        X += counts[o] * prefix
    return X, instance.total_output


def lemma44_upper(instance: Instance) -> float:
    """J Lemma 4.4: ``MC-SF <= (1536/M)·X + 24·Y`` (all at 0, identical ``s``)."""
    X, Y = _lemma_sums(instance)
    return 1536 * X / instance.M + 24 * Y


def lemma47_lower(instance: Instance) -> float:
    """J Lemma 4.7: ``OPT >= X/(6M) + Y/6`` (the paper's bound; llmopt's checker does not certify it)."""
    X, Y = _lemma_sums(instance)
    return X / (6 * instance.M) + Y / 6


def thm43_point(instance: Instance, *, bounds: Sequence[str] = ("energy", "lp-colgen"), search_evals: int = 200,
                ip_time_limit: float | None = None, ip_node_limit: int | None = None) -> dict[str, Any]:
    """MC-SF on one Thm 4.3 instance: its TEL over the certified bound and over the best schedule
    (``ratio_vs_bound >= TEL/OPT >= ratio_vs_best``), OPT where proven (with ``opt_starts``, the optimal
    schedule's start steps, for the checker to re-verify), and Lemmas 4.4 / 4.7. ``ip_node_limit`` /
    ``ip_time_limit``: the IP's limit (:func:`bracket`)."""
    sched = simulate(instance, MCSF())
    tel = verified_tel(instance, sched)
    br = bracket(instance, {"mc-sf": sched}, bounds=bounds, search_evals=search_evals, ip_time_limit=ip_time_limit,
                 ip_node_limit=ip_node_limit)
    return {"n": instance.n, "M": instance.M, "mcsf": tel, "ub": br.ub, "ub_source": br.ub_source,
            "bound": br.bound, "certificate": br.certificate, "bound_stage": br.bound_stage, "status": br.status,
            "opt": br.opt, "gap": br.gap,
            "ratio_vs_bound": tel / br.bound, "ratio_vs_best": tel / br.ub,
            "ratio_vs_opt": tel / br.opt if br.opt else None, "lemma44": lemma44_upper(instance),
            "lemma47": lemma47_lower(instance), "bound_values": dict(br.bound_values), "runtime_s": br.runtime_s,
            "opt_starts": dict(br.starts) if br.opt is not None else None}


# --- J0 Thm 5.3 -------------------------------------------------------------------------------


def thm53_instance(T: int, lam: float, seed: int, *, s: int = 2, o_max: int = 10, B: int = 4,
                   M: int | None = None) -> Instance:
    """Per-period i.i.d. arrivals: ``N_t ~ Binomial(B, λ/B)`` (support ``[0, B]``, mean ``λ``) at
    ``t = 1..T``, outputs ``U{1..o_max}`` i.i.d., prompt ``s``; ``M`` defaults to ``2(s + o_max)``.
    A draw with no arrival is redrawn (AEL needs ``n >= 1``)."""
    if not 0 < lam <= B:
        raise ValueError(f"lam must lie in (0, B = {B}], got {lam}")
    rng = np.random.default_rng([seed, 53, T, int(round(lam * 1000))])
    counts = rng.binomial(B, lam / B, size=T)
    while counts.sum() == 0:
        counts = rng.binomial(B, lam / B, size=T)
    arrivals = np.repeat(np.arange(1, T + 1), counts)
    outs = rng.integers(1, o_max + 1, size=len(arrivals))
    M = 2 * (s + o_max) if M is None else M
    return Instance.from_tuples(M, [(int(a), s, int(o)) for a, o in zip(arrivals, outs)],
                                name=f"j0-thm53/T={T} lam={lam} seed={seed}")


def energy_throughput(M: int, s: int, o_max: int) -> float:
    """``M / E[s·o + o(o+1)/2]`` for ``o ~ U{1..o_max}``: no schedule completes more requests per step in
    the long run (each holds its energy in token-steps, ``M`` per step exist), so ``λ`` above it is
    overloaded for OPT as well."""
    o = np.arange(1, o_max + 1)
    return M / float(np.mean(s * o + o * (o + 1) / 2))


def thm53_point(instance: Instance, T: int, *, bounds: Sequence[str] = ("energy",), search_evals: int = 200,
                ip_time_limit: float | None = None, ip_node_limit: int | None = None) -> dict[str, Any]:
    """MC-SF's AEL on one Thm 5.3 instance and the bracket ``AEL − UB/n <= AEL − OPT/n <= AEL − LB/n``;
    ``backlog`` = requests arrived by ``T`` and not started by ``T`` under MC-SF; ``makespan_*`` = last
    completion of MC-SF's and of the best schedule (the same work in less time = memory packed fuller);
    ``opt_starts``: the optimal schedule's start steps where OPT is proven. ``ip_node_limit`` /
    ``ip_time_limit``: the IP's limit (:func:`bracket`)."""
    sched = simulate(instance, MCSF())
    tel = verified_tel(instance, sched)
    br = bracket(instance, {"mc-sf": sched}, bounds=bounds, search_evals=search_evals, ip_time_limit=ip_time_limit,
                 ip_node_limit=ip_node_limit)
    n = instance.n
    backlog = sum(1 for r in instance.requests if r.arrival <= T < sched.starts[r.id])
    return {"n": n, "ael": tel / n, "ub_n": br.ub / n, "lb_n": br.bound / n, "regret_lo": (tel - br.ub) / n,
            "regret_hi": (tel - br.bound) / n, "certificate": br.certificate, "bound_stage": br.bound_stage,
            "status": br.status, "gap": br.gap,
            "opt": br.opt, "backlog": backlog, "ub_source": br.ub_source, "runtime_s": br.runtime_s,
            "makespan_mcsf": max(sched.completions.values()),
            "makespan_ub": max(br.starts[r.id] + r.output for r in instance.requests),
            "opt_starts": dict(br.starts) if br.opt is not None else None}


def schedule_of(instance: Instance, starts: Mapping[str, int], name: str) -> Schedule:
    """A :class:`Schedule` for hand-built ``starts`` (e.g. :func:`thm62_opt`'s), checked first."""
    report = check_schedule(instance, starts)
    assert report.ok, report.violations
    return schedule_from_starts(instance, starts, name)
