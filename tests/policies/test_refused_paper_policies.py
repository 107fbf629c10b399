"""The evicting paper policies (α-protection / α-β clearing, A_min, A_ℓ) under the engine's batch limits:
the starts a full batch refuses go back into the policy's queue in their order (``on_refused``), against
hand-traced instances, and random instances under tight limits pass the checker on both clocks."""

from __future__ import annotations

import random
from typing import Any

import pytest

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import EvictionLoopError, simulate
from llmopt.model.instance import Instance, Request
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import make_policy, make_policy_spec
from llmopt.verify.checker import check_schedule
from llmopt.verify.timed import check_timed_schedule


def _checked(inst: Instance, policy: Any, **limits: Any) -> dict[str, int]:
    s = simulate(inst, policy, **limits)
    rep = check_schedule(inst, s.starts, evictions=s.evictions, limits=s.limits)
    assert rep.ok and rep.tel == s.tel, rep.violations
    return dict(s.starts)


def test_alpha_protection_keeps_a_refused_request_ahead_of_later_arrivals() -> None:
    # max_num_seqs = 1. t0: α-protection admits a and b (FCFS), the batch takes a and refuses b.
    # t1: c arrives; the policy admits b then c, both refused (a runs). t3: a completes; b (arrived
    # at 0) starts before c (arrived at 1), which is refused once more and starts when b completes at 4.
    inst = Instance(100, (Request("a", 0, 1, 3), Request("b", 0, 1, 1), Request("c", 1, 1, 1)))
    starts = _checked(inst, make_policy("alpha-protection", alpha=0.0), max_num_seqs=1)
    assert starts == {"a": 0, "b": 3, "c": 4}


def test_alpha_protection_forgets_the_memory_of_a_refused_start() -> None:
    # M = 10, α = 0: a (s = 4, o = 4) and b (s = 4, o = 2) arrive at 0; the token budget 5 takes a's
    # prompt and refuses b's. At t1 the projection is a's 4 + 2 = 6 tokens, plus b's 5 = 11 > 10: b waits,
    # until a's completion at 4. A refused start left in the projection (4 + 1 tokens from t0 on) would
    # count b twice and overflow at once: the policy would clear a, which never happens here.
    inst = Instance(10, (Request("a", 0, 4, 4), Request("b", 0, 4, 2)))
    s = simulate(inst, make_policy("alpha-protection", alpha=0.0), max_num_batched_tokens=5)
    assert dict(s.starts) == {"a": 0, "b": 4} and s.evictions == ()
    assert check_schedule(inst, s.starts, evictions=s.evictions, limits=s.limits).ok


def test_a_min_keeps_a_refused_request_in_its_pseudo_length_order() -> None:
    # max_num_seqs = 1, exact intervals (õ = o). t0: A_min admits a (õ 2) and b (õ 4); b is refused.
    # t1: c (õ 5) arrives; b, c admitted and refused. t2: a completes; b starts, c is refused; c starts
    # when b completes at 6.
    inst = Instance(100, (Request("a", 0, 1, 2, 2, 2), Request("b", 0, 1, 4, 4, 4), Request("c", 1, 1, 5, 5, 5)))
    starts = _checked(inst, make_policy("a-min"), max_num_seqs=1)
    assert starts == {"a": 0, "b": 2, "c": 6}


def test_a_min_refused_start_leaves_the_projection() -> None:
    # M = 12, token budget 5. a (s = 4, o = 2) and b (s = 4, o = 3), exact intervals: A_min admits both at
    # t0 (peaks 6 + 6 at t2), the budget takes a's prompt and refuses b's. At t1, a's decode (1) + b's prompt
    # (4) = 5 fit: b starts at 1; after the batch a holds 6, b 5 — 11 <= 12, nothing is cancelled.
    inst = Instance(12, (Request("a", 0, 4, 2, 2, 2), Request("b", 0, 4, 3, 3, 3)))
    s = simulate(inst, make_policy("a-min"), max_num_batched_tokens=5)
    assert dict(s.starts) == {"a": 0, "b": 1} and s.evictions == ()
    assert check_schedule(inst, s.starts, evictions=s.evictions, limits=s.limits).ok


def test_a_ell_keeps_a_refused_request_in_its_fifo_place() -> None:
    # M = 10, max_num_seqs = 1, exact intervals, all at 0 in FIFO order a (s 1, o 1), b (1, 3), c (7, 2).
    # t0: a and b pass check (5); c (8 tokens at t1 beside a's 2 and b's 2) does not and stops admission;
    # the batch takes a and refuses b, which must stay ahead of c. t1: a has completed; b starts, and c
    # (9 at t2 beside b's 3) waits until b completes at 4. (Re-queued behind c, b would let c start at 1.)
    inst = Instance(10, (Request("a", 0, 1, 1, 1, 1), Request("b", 0, 1, 3, 3, 3), Request("c", 0, 7, 2, 2, 2)))
    starts = _checked(inst, make_policy("a-ell"), max_num_seqs=1)
    assert starts == {"a": 0, "b": 1, "c": 4}


def test_a_ell_promotion_survives_a_refusal() -> None:
    # b's interval [1, 3] with o = 3: its first run is cancelled after ℓ = 1 token and it is re-queued
    # with u = 3. max_num_seqs = 1: a (o = 2) runs 0-2; b starts at 2, is cancelled at 3 (1 token) and
    # re-queued behind c (arrived at 1); c starts at 3 and completes at 4; b, projected with u = 3 now,
    # starts at 4 and completes at 7 — a refusal at 3 keeps its stage (b is admitted beside c, refused).
    inst = Instance(100, (Request("a", 0, 1, 2, 2, 2), Request("b", 0, 1, 3, 1, 3), Request("c", 1, 1, 1, 1, 1)))
    s = simulate(inst, make_policy("a-ell"), max_num_seqs=1)
    assert dict(s.starts) == {"a": 0, "b": 4, "c": 3}
    assert [(e.t, e.id, e.tokens_lost) for e in s.evictions] == [(3, "b", 1)]
    assert check_schedule(inst, s.starts, evictions=s.evictions, limits=s.limits).ok


# (spec, M): α-greedy loops at M = 30 on these instances with or without limits (J0 Fig. 7's clearing
# loop), so it runs at M = 60; the others clear or cancel under the limits at M = 30
POLICIES = (("alpha-protection:alpha=0.2", 60), ("alpha-protection:alpha=0.1,beta=0.5", 30), ("a-min", 30),
            ("a-min:running_estimate=repaired", 30), ("a-ell", 30))


def _random_requests(seed: int, n: int, M: int) -> list[tuple[str, int, int, int, int, int]]:
    rng = random.Random(seed)
    rows = []
    t = 0
    for i in range(n):
        t += rng.randint(0, 2)
        s = rng.randint(1, 6)
        o = rng.randint(1, min(12, M - s))
        lo = rng.randint(1, o)
        rows.append((f"q{i}", t, s, o, lo, min(M - s, o + rng.randint(0, 4))))
    return rows


@pytest.mark.parametrize(("spec", "M"), POLICIES)
@pytest.mark.parametrize("seed", range(4))
def test_tight_limits_discrete_clock_checker_passes(spec: str, M: int, seed: int) -> None:
    inst = Instance(M, tuple(Request(*row) for row in _random_requests(seed, 40, M)))
    s = simulate(inst, make_policy_spec(spec, seed=seed), max_num_seqs=3, max_num_batched_tokens=8)
    rep = check_schedule(inst, s.starts, evictions=s.evictions, limits=s.limits)
    assert rep.ok and rep.tel == s.tel, rep.violations
    assert len(s.starts) == inst.n
    try:
        free = simulate(inst, make_policy_spec(spec, seed=seed))
    except EvictionLoopError:  # α-greedy without the limits: its clearing loop (the limits broke it)
        return
    assert s.starts != free.starts  # the limits bind on these instances


@pytest.mark.parametrize(("spec", "M"), POLICIES)
def test_tight_limits_continuous_clock_checker_passes(spec: str, M: int) -> None:
    rows = _random_requests(7, 60, M)
    inst = TimedInstance(M, tuple(TimedRequest(r[0], 0.1 * r[1], r[2], r[3], r[4], r[5]) for r in rows))
    cost = make_cost_model("constant")
    s = simulate_continuous(inst, make_policy_spec(spec, seed=1), cost, max_num_seqs=4, max_num_batched_tokens=9)
    rep = check_timed_schedule(inst, s.starts, s.batch_start, s.batch_duration, cost, evictions=s.evictions,
                               stalls=s.stalls, limits=s.limits)
    assert rep.ok, rep.violations
    assert len(s.starts) == inst.n
