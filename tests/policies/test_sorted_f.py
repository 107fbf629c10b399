"""Sorted-F (W Algorithm 1) and its Phase-1 selectors (W Algorithms 2–5), :mod:`llmopt.policies.sorted_f`.

The references here are independent of the module: a literal transcription of W
Algorithms 4 and 5 in plain Python, subset enumeration written out in the tests, an
integer programme solved by HiGHS (``scipy.optimize.milp``), the checker, and the
exhaustive OPT search of ``tests/formulations/test_ip_exhaustive.py``.
"""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from helpers import exhaustive_opt, is_feasible
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp

from llmopt.engine.discrete import RequestView, simulate
from llmopt.model.instance import Instance
from llmopt.policies import POLICIES, make_policy, make_policy_spec
from llmopt.policies.sorted_f import (
    PHASE1,
    PlannedOrderPolicy,
    SortedF,
    f_metric,
    plan_sorted_f,
    scaled_dp,
    select_brute_force,
    select_exact_dp,
    select_local_swap,
    select_quantile,
    select_scaled_dp,
)
from llmopt.verify.checker import check_schedule

SORTED_F_NAMES = ("sorted-f", "sorted-f-dp", "sorted-f-scaled-dp", "sorted-f-swap", "sorted-f-quantile")
FAST = settings(max_examples=100, deadline=None)


def _rows(s, o):
    return [(0, int(a), int(b)) for a, b in zip(s, o)]


def _key(o, X):
    """The tie-rule key of batch X, for brute-force comparisons written here."""
    return (Fraction(sum(o[i] for i in X), len(X) ** 2), -len(X))


@st.composite
def requests(draw, n_max=10, v_max=4, M_max=20):
    n = draw(st.integers(1, n_max))
    s = draw(st.lists(st.integers(1, v_max), min_size=n, max_size=n))
    o = draw(st.lists(st.integers(1, v_max), min_size=n, max_size=n))
    M = draw(st.integers(max(a + b for a, b in zip(s, o)), M_max))
    return s, o, M


# --- W Example 1 (DIGEST T-2) ------------------------------------------------------------------------


EXAMPLE1 = Instance.from_tuples(64, [(0, 63, 1)] + [(0, 1, 2)] * 21, name="W example 1")


def test_example1_mcsf_64():
    sched = simulate(EXAMPLE1, make_policy("mc-sf"))
    assert sched.tel == 64
    assert sched.starts["r0"] == 0 and all(sched.starts[f"r{i}"] == 1 for i in range(1, 22))


@pytest.mark.parametrize("name", SORTED_F_NAMES)
def test_example1_sorted_f_45(name):
    sched = simulate(EXAMPLE1, make_policy(name))
    assert sched.tel == 45  # 21 × 2 + 3
    assert sched.starts["r0"] == 2 and all(sched.starts[f"r{i}"] == 0 for i in range(1, 22))
    assert check_schedule(EXAMPLE1, sched.starts).tel == 45


def test_example1_exact_dp_picks_the_21_type2():
    s = [63] + [1] * 21
    o = [1] + [2] * 21
    assert select_exact_dp(s, o, 64) == tuple(range(1, 22))
    assert f_metric([2] * 21) == Fraction(42, 441) < f_metric([1])
    assert plan_sorted_f(s, o, 64, "dp") == list(range(1, 22)) + [0]
    with pytest.raises(ValueError, match="n = 22"):
        select_brute_force(s, o, 64)


# --- W Example 2 (T-3): two homogeneous batches of memory M each ---------------------------------------


@st.composite
def two_batches(draw):
    n1 = draw(st.integers(1, 8))
    w1 = draw(st.integers(2, 12))
    M = n1 * w1
    n2 = draw(st.sampled_from([d for d in range(1, 13) if M % d == 0 and M // d >= 2]))
    w2 = M // n2
    o1 = draw(st.integers(1, w1 - 1))
    o2 = draw(st.integers(1, w2 - 1))
    return M, (w1 - o1, o1, n1), (w2 - o2, o2, n2)


@FAST
@given(two_batches())
def test_example2_smaller_f_batch_first(case):
    """Batch-sequential TEL is ``o_1n_1 + o_2n_2 + o_first·n_second``, so the smaller ``F = o/n``
    goes first (W Example 2). The exact DP picks exactly that batch first: a mixture of ``a``
    type-1 and ``b`` type-2 requests (``x_1 = a/n_1``, ``x_2 = b/n_2``, ``x_1 + x_2 <= 1``) has
    ``Σo = f_1a²/x_1 + f_2b²/x_2 >= f(a+b)²/(x_1+x_2) >= f·(a+b)²`` (Titu), strictly unless the
    types coincide, and a partial pure batch has ``o/k > o/n``. Phase 2 may start a second-batch
    request early (if it finishes before the first batch peaks), so Sorted-F's TEL is at most
    the formula."""
    M, (s1, o1, n1), (s2, o2, n2) = case
    inst = Instance.from_tuples(M, [(0, s1, o1)] * n1 + [(0, s2, o2)] * n2)

    def sequential(first_is_1: bool) -> int:
        starts = {r.id: 0 for r in inst.requests}
        late = range(n1, n1 + n2) if first_is_1 else range(n1)
        for i in late:
            starts[f"r{i}"] = o1 if first_is_1 else o2
        report = check_schedule(inst, starts)
        assert report.ok
        return report.tel

    tel12, tel21 = sequential(True), sequential(False)
    assert tel12 == o1 * n1 + o2 * n2 + o1 * n2 and tel21 == o1 * n1 + o2 * n2 + o2 * n1
    f1, f2 = Fraction(o1, n1), Fraction(o2, n2)
    if f1 != f2:
        assert min(tel12, tel21) == (tel12 if f1 < f2 else tel21)
    first_is_1 = (f1, -n1) <= (f2, -n2)
    batch = select_exact_dp([s1] * n1 + [s2] * n2, [o1] * n1 + [o2] * n2, M)
    assert batch == (tuple(range(n1)) if first_is_1 else tuple(range(n1, n1 + n2)))
    tel = simulate(inst, make_policy("sorted-f-dp")).tel
    assert tel <= (tel12 if first_is_1 else tel21) == min(tel12, tel21)


# --- exact DP against enumeration, the IP, and Lemma 1 -----------------------------------------------


def _enumerate(s, o, M):
    """The tie rule written out: min (F, −|X|, Σ(s+o), sorted ids) over feasible subsets."""
    n = len(s)
    best = None
    for k in range(1, n + 1):
        for X in combinations(range(n), k):
            mem = sum(s[i] + o[i] for i in X)
            if mem <= M:
                key = (*_key(o, X), mem, X)
                best = key if best is None or key < best else best
    return best[-1]


@FAST
@given(requests())
def test_exact_dp_equals_enumeration_with_tie_rule(case):
    s, o, M = case
    expected = _enumerate(s, o, M)
    assert select_exact_dp(s, o, M) == expected
    assert select_brute_force(s, o, M) == expected


def test_tie_rule_by_hand():
    # F ties between {0} (1/1) and {1, 2} (4/4 = 1); {0, 1} does not fit: the larger batch wins
    assert select_exact_dp([4, 1, 1], [1, 2, 2], 6) == (1, 2)
    # equal F and size: the smaller memory wins over the lexicographically smaller {0, 1, 2}
    assert select_exact_dp([2, 1, 1, 1], [1, 1, 1, 1], 7) == (1, 2, 3)
    # all equal: lexicographically smallest ids
    assert select_exact_dp([1] * 5, [1] * 5, 6) == (0, 1, 2)


@FAST
@given(requests(n_max=12, v_max=9, M_max=40))
def test_lemma1_mean_output_of_dp_batches(case):
    """W Lemma 1 (T-13): ``mean(o) >= |X|/(2|X|−1)·max(o) > max(o)/2`` — in integers
    ``Σo·(2k−1) >= k²·max o``; it uses only that dropping the largest ``o`` keeps the batch
    feasible and does not lower ``(F, −|X|)``."""
    s, o, M = case
    X = select_exact_dp(s, o, M)
    k, total, top = len(X), sum(o[i] for i in X), max(o[i] for i in X)
    assert total * (2 * k - 1) >= k * k * top
    assert 2 * total > k * top


def _ip_optimum(s, o, M) -> tuple[Fraction, int]:
    """min over k of (opt_k/k², −k), opt_k = min Σo s.t. Σx = k, Σ(s+o)x <= M, x binary (HiGHS)."""
    n = len(s)
    w = np.add(s, o)
    best = None
    for k in range(1, n + 1):
        cons = LinearConstraint(np.vstack([np.ones(n), w]), [k, -np.inf], [k, M])
        res = milp(np.asarray(o, float), constraints=cons, integrality=np.ones(n), bounds=Bounds(0, 1))
        if res.status == 2:  # infeasible: no k requests fit
            continue
        assert res.status == 0, res.message
        key = (Fraction(round(res.fun), k * k), -k)
        best = key if best is None or key < best else best
    assert best is not None
    return best[0], -best[1]


@pytest.mark.parametrize("seed", range(8))
def test_exact_dp_equals_ip_optimum(seed):
    rng = random.Random(seed)
    n = rng.randint(12, 30)
    s = [rng.randint(1, 20) for _ in range(n)]
    o = [rng.randint(1, 20) for _ in range(n)]
    M = rng.randint(max(a + b for a, b in zip(s, o)), 150)
    X = select_exact_dp(s, o, M)
    F, k = _ip_optimum(s, o, M)
    assert (f_metric([o[i] for i in X]), len(X)) == (F, k)
    assert sum(s[i] + o[i] for i in X) <= M


def test_exact_dp_refuses_huge_tables():
    with pytest.raises(ValueError, match="max_cells"):
        select_exact_dp([1] * 50, [1] * 50, 1000, max_cells=1e4)


# --- brute force with the true (all-start-together) constraint -----------------------------------------


def test_true_constraint_allows_larger_batch():
    # 4 × (1, 1) and 1 × (1, 2), M = 10: surrogate weight 11 > 10, but starting all five at once
    # peaks at 5 × 2 = 10 at t = 1 and 3 at t = 2
    s, o = [1] * 5, [1, 1, 1, 1, 2]
    assert select_brute_force(s, o, 10) == (0, 1, 2, 3)  # F = 1/4
    assert select_brute_force(s, o, 10, exact_constraint=True) == (0, 1, 2, 3, 4)  # F = 6/25


@FAST
@given(requests(n_max=8, v_max=6, M_max=24))
def test_true_constraint_batch_runs_together(case):
    s, o, M = case
    X = select_brute_force(s, o, M, exact_constraint=True)
    sub = Instance.from_tuples(M, [(0, s[i], o[i]) for i in X])
    assert check_schedule(sub, {r.id: 0 for r in sub.requests}).ok
    surrogate = select_brute_force(s, o, M)
    assert _key(o, X) <= _key(o, surrogate)
    # ... and it is the best such batch: no subset that starts together does better
    for k in range(1, len(s) + 1):
        for Y in combinations(range(len(s)), k):
            ok = all(sum(s[i] + o[j] for i in Y if o[i] >= o[j]) <= M for j in Y)
            assert not ok or _key(o, X) <= _key(o, Y)


# --- scaled DP -----------------------------------------------------------------------------------------


@FAST
@given(requests(n_max=12, v_max=30, M_max=80), st.sampled_from([0.05, 0.1, 0.3, 0.5]), st.integers(1, 12))
def test_scaled_dp_feasible_and_no_better_than_dp(case, eps, B):
    s, o, M = case
    res = scaled_dp(s, o, M, eps=eps, B=B)
    X = res.batch
    assert X and sum(s[i] + o[i] for i in X) <= M
    F_dp = f_metric([o[i] for i in select_exact_dp(s, o, M)])
    F = f_metric([o[i] for i in X])
    assert F >= F_dp  # the exact DP is optimal among feasible batches
    if not res.dropped:  # floored weights relax the constraint: an unrepaired answer is optimal
        assert F == F_dp
    assert set(res.dropped) | set(X) == set(res.raw)
    if res.lam == 1:
        assert X == select_exact_dp(s, o, M)
    assert select_scaled_dp(s, o, M, eps=eps, B=B) == X


def test_scaled_dp_repairs_an_infeasible_floor():
    # λ = 0.5·10/1 = 5: weights 6, 6 floor to 1, 1 <= ⌊10/5⌋ = 2, but 12 > 10
    res = scaled_dp([1, 1], [5, 5], 10, eps=0.5, B=1)
    assert res.lam == 5 and res.raw == (0, 1)
    assert res.batch == (0,) and res.dropped == (1,)
    # the repair drops the heaviest first: raw {A, B, C} (F = 3/9) weighs 9 + 2 + 2 = 13 > 10
    res = scaled_dp([8, 1, 1], [1, 1, 1], 10, eps=0.5, B=1)
    assert res.raw == (0, 1, 2) and res.dropped == (0,) and res.batch == (1, 2)


# --- local swap (W Algorithm 4), against a literal transcription ----------------------------------------


def literal_swap(s, o, M, initial=None, order=None):
    n = len(s)
    w = [s[i] + o[i] for i in range(n)]
    srt = sorted(range(n), key=lambda i: (w[i], i))
    cand = srt if order is None else list(order)
    if initial is None:
        X, mem = [], 0
        for r in srt:
            if mem + w[r] <= M:
                X.append(r)
                mem += w[r]
    else:
        X, mem = list(initial), sum(w[i] for i in initial)
    improved = True
    while improved:
        improved = False
        cur = Fraction(sum(o[i] for i in X), len(X) ** 2)
        for r_out in X:
            for r_in in cand:
                if r_in in X or mem + w[r_in] - w[r_out] > M:
                    continue
                if Fraction(sum(o[i] for i in X) + o[r_in] - o[r_out], len(X) ** 2) < cur:
                    X.remove(r_out)
                    X.append(r_in)
                    mem += w[r_in] - w[r_out]
                    improved = True
                    break
            if improved:
                break
    return tuple(sorted(X))


def _is_local_optimum(s, o, M, X):
    mem = sum(s[i] + o[i] for i in X)
    out = set(range(len(s))) - set(X)
    return all(not (o[i] < o[j] and mem - s[j] - o[j] + s[i] + o[i] <= M) for j in X for i in out)


@FAST
@given(requests(n_max=25, v_max=30, M_max=120), st.randoms(use_true_random=False))
def test_local_swap_is_algorithm4(case, rnd):
    s, o, M = case
    X = select_local_swap(s, o, M)
    assert X == literal_swap(s, o, M)
    assert sum(s[i] + o[i] for i in X) <= M and _is_local_optimum(s, o, M, X)
    # LP-Swap's entry: a given initial batch (in its insertion order) and candidate order
    order = list(range(len(s)))
    rnd.shuffle(order)
    init, mem = [], 0
    for r in order:
        if mem + s[r] + o[r] <= M:
            init.append(r)
            mem += s[r] + o[r]
    Y = select_local_swap(s, o, M, initial=init, order=order)
    assert Y == literal_swap(s, o, M, initial=init, order=order)
    assert _is_local_optimum(s, o, M, Y)


def test_local_swap_rejects_bad_arguments():
    with pytest.raises(ValueError, match="Σ\\(s\\+o\\)"):
        select_local_swap([1, 1], [5, 5], 10, initial=[0, 1])
    with pytest.raises(ValueError, match="permutation"):
        select_local_swap([1, 1], [5, 5], 10, order=[0, 0])


# --- quantile greedy (W Algorithm 5), against a literal transcription -----------------------------------


def literal_quantile(s, o, M, seed):
    n = len(s)
    w = [s[i] + o[i] for i in range(n)]
    rng = np.random.default_rng(seed)
    sample = rng.choice(n, size=max(1, n // 2), replace=False)
    q_p = np.quantile([w[i] for i in sample], 0.3)
    q_o = np.quantile([o[i] for i in sample], 0.3)
    X, mem = [], 0
    for r in sorted(range(n), key=lambda i: (o[i], i)):
        if w[r] <= q_p and o[r] <= q_o and mem + w[r] <= M:
            X.append(r)
            mem += w[r]
    for r in sorted(set(range(n)) - set(X), key=lambda i: (Fraction(o[i], w[i]), i)):
        if mem + w[r] <= M:
            X.append(r)
            mem += w[r]
    return tuple(sorted(X))


@FAST
@given(requests(n_max=25, v_max=30, M_max=120), st.integers(0, 2**32 - 1))
def test_quantile_is_algorithm5(case, seed):
    s, o, M = case
    X = select_quantile(s, o, M, seed=seed)
    assert X == literal_quantile(s, o, M, seed)
    assert X == select_quantile(s, o, M, seed=seed)  # deterministic per seed
    assert sum(s[i] + o[i] for i in X) <= M


# --- plans and schedules ---------------------------------------------------------------------------------


@FAST
@given(requests(n_max=14, v_max=12, M_max=40), st.sampled_from(sorted(PHASE1)))
def test_plan_is_a_permutation_of_batches(case, phase1):
    s, o, M = case
    order = plan_sorted_f(s, o, M, phase1)
    assert sorted(order) == list(range(len(s)))
    assert plan_sorted_f(s, o, M, phase1) == order
    if phase1 == "dp":  # the first block is the DP's batch, sorted by o (ties by index)
        X = select_exact_dp(s, o, M)
        assert order[: len(X)] == sorted(X, key=lambda i: (o[i], i))


def _random_instance(rng: random.Random, n: int, arrivals: bool) -> Instance:
    M = rng.randint(20, 60)
    rows = []
    for _ in range(n):
        s = rng.randint(1, 12)
        rows.append((rng.randint(0, 8) if arrivals else 0, s, rng.randint(1, min(25, M - s))))
    return Instance.from_tuples(M, rows)


@pytest.mark.parametrize("arrivals", [False, True])
@pytest.mark.parametrize("name", SORTED_F_NAMES)
def test_schedules_pass_the_checker(name, arrivals):
    rng = random.Random(7)
    for _ in range(12):
        inst = _random_instance(rng, rng.randint(1, 25), arrivals)
        policy = make_policy(name)
        sched = simulate(inst, policy)
        report = check_schedule(inst, sched.starts)
        assert report.ok, report.violations
        assert report.tel == sched.tel
        assert is_feasible(inst, sched.starts)
        if not arrivals:
            assert policy.plans == 1  # W: one plan at t = 0


def test_all_arrivals_at_zero_follow_the_plan():
    """With everything at t = 0, Phase 2 is the prefix rule over the plan: starts are
    nondecreasing along the planned order."""
    rng = random.Random(3)
    for _ in range(10):
        inst = _random_instance(rng, 30, arrivals=False)
        s = [r.prompt for r in inst.requests]
        o = [r.output for r in inst.requests]
        order = plan_sorted_f(s, o, inst.M, "swap")
        starts = simulate(inst, make_policy("sorted-f-swap")).starts
        along = [starts[inst.requests[i].id] for i in order]
        assert along == sorted(along)


class _Recorder(PlannedOrderPolicy):
    """Plans by position reversed, and records every plan."""

    name = "recorder"

    def reset(self, M):
        super().reset(M)
        self.seen = []

    def plan(self, requests, M):
        self.seen.append([r.id for r in requests])
        return requests[::-1]


def test_replans_at_each_arrival_epoch_over_all_waiting():
    inst = Instance.from_tuples(4, [(0, 1, 3), (0, 1, 3), (1, 1, 1), (5, 1, 1)])
    policy = _Recorder()
    sched = simulate(inst, policy)
    # t = 0: plan [r0, r1] → r1 first (only one fits); t = 1: r0 still waits, r2 arrives
    assert policy.seen == [["r0", "r1"], ["r0", "r2"], ["r3"]]
    assert sched.starts["r1"] == 0 and check_schedule(inst, sched.starts).ok


def test_a_plan_must_be_a_permutation():
    class Bad(PlannedOrderPolicy):
        name = "bad"

        def plan(self, requests, M):
            return requests[:-1]

    with pytest.raises(RuntimeError, match="permutation"):
        simulate(Instance.from_tuples(10, [(0, 1, 1), (0, 1, 1)]), Bad())


@pytest.mark.parametrize("seed", range(25))
def test_sorted_f_dp_is_no_better_than_opt(seed):
    """Tiny instances, all arrivals at 0: OPT by exhaustive search <= Sorted-F (exact DP)."""
    rng = random.Random(500 + seed)
    M = rng.randint(4, 10)
    rows = []
    for _ in range(rng.randint(2, 6)):
        s = rng.randint(1, 3)
        rows.append((0, s, rng.randint(1, M - s)))
    inst = Instance.from_tuples(M, rows)
    tel = simulate(inst, make_policy("sorted-f-dp")).tel
    opt, _ = exhaustive_opt(inst, tel)
    assert opt <= tel


# --- registry, parameters, errors -------------------------------------------------------------------------


def test_registered_with_seed_and_params():
    for name in SORTED_F_NAMES:
        assert name in POLICIES
        assert make_policy(name).name == name
    p = make_policy_spec("sorted-f-quantile", seed=11)
    assert p.seed == 11 and p.phase1 == "quantile"
    q = make_policy_spec("sorted-f:phase1=scaled-dp,eps=0.2,B=50", seed=3)
    assert (q.phase1, q.eps, q.B, q.seed) == ("scaled-dp", 0.2, 50, 3)
    assert make_policy("sorted-f").phase1 == "swap"
    with pytest.raises(ValueError, match="unknown phase1"):
        SortedF(phase1="nope")


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="index 1 .* > M = 5"):
        select_exact_dp([1, 4], [1, 2], 5)
    with pytest.raises(ValueError, match="no requests"):
        select_local_swap([], [], 5)
    with pytest.raises(ValueError, match="empty batch"):
        f_metric([])
    assert plan_sorted_f([], [], 5) == []
    with pytest.raises(ValueError, match="unknown phase1"):
        plan_sorted_f([1], [1], 5, "nope")


def test_request_views_only():
    """The plan sees RequestViews in position order."""
    got = []

    class Spy(PlannedOrderPolicy):
        name = "spy"

        def plan(self, requests, M):
            got.append(requests)
            return requests

    simulate(Instance.from_tuples(10, [(0, 1, 1)] * 3), Spy())
    assert all(isinstance(r, RequestView) for r in got[0]) and [r.position for r in got[0]] == [0, 1, 2]
