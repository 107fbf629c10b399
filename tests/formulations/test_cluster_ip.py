"""The K-worker hindsight IP (:mod:`llmopt.formulations.cluster_ip`, :mod:`llmopt.opt.cluster_ip`) against
exhaustive K-worker search.

The exhaustive search (``tests/cluster_helpers.py``) enumerates the assignments of requests to
workers up to relabelling and takes, per worker, the single-worker exhaustive OPT of
``helpers.exhaustive_opt``; it shares no code with the formulation, the solver or the checker.

What is checked:

1. **IP = exhaustive OPT** for ``K = 2, 3`` on 40 random tiny instances (``n <= 5``, ``M <= 8``,
   arrivals ``<= 1``, so that the workers are contended: most have ``OPT_K > Σ o``), once with the
   default upper bound (greedy + MC-SF per worker) and the per-worker zone rows, and once with a
   deliberately weak upper bound (every request on worker 0, one after another), which widens the
   windows and leaves the work to the IP, without zone rows and without a MIP start.
   Every returned schedule is verified per worker by the independent checker on the worker's
   sub-instance (``check_schedule``) and by ``helpers.is_feasible``.
2. **By hand**: ``M = 6``, ``A = B = (a, s, o) = (0, 1, 5)``, ``C = (0, 3, 2)``. A and B each hold 6 = M
   at their last step, so on one worker they cannot overlap at all. C beside A from step 0 holds
   4 then 5 while A holds 2 then 3: 8 > 6 at ``t = 2``; C cannot start later than A either (it
   would need ``2 + t − k_A + 4 <= 6``). So on two workers the best is A and B apart and C first on
   one of them, delaying that one by 2: ``OPT_2 = (2 + 5) + 5 + 2 = 14``; three workers: ``Σ o = 12``;
   one worker: 21. And four ``(0, 3, 1)`` at ``M = 4`` (each alone fills the cache): ``OPT_K`` =
   10, 6, 5, 4 for ``K = 1 … 4``.
3. **K = 1 equals the single-worker IP**: optimum and LP relaxation equal to ``hindsight-ip-binary``'s.
4. **Symmetry breaking keeps an optimum**: the exhaustive optimum, relabelled by
   ``canonical_assignment``, is a feasible point of the model (symmetry rows included) with the
   optimal objective; the same schedule under a non-canonical labelling violates them.
5. The per-worker zone rows are per worker and raise the LP relaxation (HAND: A and B may overlap on
   two workers, not on one). The registered stage (``cluster-ip``: K = 1, exact), size guard,
   decode errors.

Breakages tried by hand (each edit applied to the source, this module and
``tests/opt/test_cluster_bounds.py`` run, the edit reverted; with none applied all pass):

* Per-worker memory rows replaced by one pooled row per time of capacity ``K·M`` (worker label
  dropped from ``eq3_memory``'s key) — ``test_ip_matches_exhaustive``, ``test_hand_cases`` and
  ``test_registered_stage_is_the_single_worker_case`` fail: the IP's optimum is rejected by the
  per-worker checker ("worker 0: memory at time 1 is 8 > M = 4 (running: r2, r3)" on FULL with K = 2)
  and the solver's bound 6 no longer meets the verified incumbent 10.
* ``M`` replaced by ``K·M`` in the per-worker rows — the same tests, the same way ("memory at time 1
  is 8 > M = 4").
* Symmetry columns ``w <= i − 1`` for ``i >= 1`` (off by one: requests 0 and 1 forced together) —
  ``test_hand_cases`` (17 instead of 14 on HAND with K = 2; 5 instead of 4 on FULL with K = 4),
  ``test_ip_matches_exhaustive``, ``test_canonical_labelling_is_feasible``,
  ``test_non_canonical_labelling_violates_the_symmetry_rows``, ``test_estimate_matches_the_model``.
* ``sym_first_use`` comparing with worker ``w`` instead of ``w − 1`` (the rule no longer follows the
  first-use relabelling, so nothing can open worker 1) — the same tests (21 instead of 14, 10
  instead of 6).
* ``canonical_assignment`` returning the labels unchanged — ``test_canonical_labelling_is_feasible``
  (a renamed optimum no longer encodes to a feasible point).
* ``solve_cluster_ip`` trusting the upper-bound schedule handed in (no re-verification) —
  ``test_weak_upper_bound_is_verified_again``, ``test_too_large_returns_the_verified_upper_bound``,
  ``test_hand_cases``, ``test_ip_matches_exhaustive`` (the claimed TEL sets the windows).
* ``check_worker_split`` checking each worker at ``K·M`` — ``test_weak_upper_bound_is_verified_again``.
* Per-worker zone rows keyed by time only (one pooled zone row ``<= 1`` per time, the worker label
  dropped) — ``test_hand_cases`` (19 instead of 14 on HAND with K = 2; A and B may no longer overlap
  on different workers), ``test_ip_matches_exhaustive``, ``test_zone_rows_are_per_worker_and_tighten_the_lp``.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from cluster_helpers import cluster_feasible, exhaustive_cluster_opt, serial_tel, set_partitions
from helpers import is_feasible, random_tiny_instance, tel_of

from llmopt.formulations import make_formulation
from llmopt.formulations.cluster_ip import (
    ClusterIP,
    canonical_assignment,
    decode_cluster,
    encode_cluster,
    estimate_cluster_size,
    formulate_cluster,
)
from llmopt.formulations.hindsight_ip import formulate
from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus
from llmopt.model.windows import start_windows
from llmopt.opt.cluster_ip import AssignedSchedule, cluster_upper_bound, solve_cluster_ip
from llmopt.solvers.highs import HighsSolver
from llmopt.verify.checker import check_schedule

SOLVER = HighsSolver()


def _tiny(seed: int) -> Instance:
    return random_tiny_instance(random.Random(2600 + seed), n_range=(3, 5), M_range=(4, 8), max_arrival=1)


def _serial_on_worker_0(inst: Instance) -> AssignedSchedule:
    t, starts = 0, {}
    for r in sorted(inst.requests, key=lambda r: (r.arrival, r.id)):
        starts[r.id] = max(t, r.arrival)
        t = starts[r.id] + r.output
    return AssignedSchedule({r.id: 0 for r in inst.requests}, starts, tel=-1, worker_tel=(), source="serial")


def _check_result(inst: Instance, K: int, res, opt: int) -> None:
    assert res.status is SolveStatus.OPTIMAL, res.message
    assert res.objective == opt and res.bound == opt
    assert cluster_feasible(inst, K, dict(res.assignment), dict(res.starts))
    assert tel_of(inst, res.starts) == opt
    for w, part in enumerate(res.per_worker()):
        reqs = tuple(r for r in inst.requests if r.id in part)
        if reqs:
            sub = Instance(inst.M, reqs)
            report = check_schedule(sub, part)
            assert report.ok and report.tel == res.schedule.worker_tel[w]


# --- the exhaustive search itself ------------------------------------------------------------------


def test_set_partitions_are_the_assignments_up_to_relabelling():
    # Σ_{j<=K} S(n, j): Stirling numbers of the second kind
    assert len(list(set_partitions(4, 2))) == 1 + 7
    assert len(list(set_partitions(5, 3))) == 1 + 15 + 25
    assert len(list(set_partitions(5, 5))) == 52  # Bell(5)
    assert list(set_partitions(0, 3)) == [()]


HAND = Instance.from_tuples(6, [(0, 1, 5), (0, 1, 5), (0, 3, 2)], name="hand")
FULL = Instance.from_tuples(4, [(0, 3, 1)] * 4, name="full")


@pytest.mark.parametrize(("inst", "K", "opt"), [(HAND, 1, 21), (HAND, 2, 14), (HAND, 3, 12),
                                                (FULL, 1, 10), (FULL, 2, 6), (FULL, 3, 5), (FULL, 4, 4)])
def test_hand_cases(inst, K, opt):
    assert exhaustive_cluster_opt(inst, K)[0] == opt
    res = solve_cluster_ip(inst, K, upper_bound=_serial_on_worker_0(inst))
    _check_result(inst, K, res, opt)
    if inst is HAND and K == 2:  # A and B apart, C first beside one of them, which waits 2
        a = res.assignment
        assert a["r0"] != a["r1"] and res.starts["r2"] == 0
        assert sorted([res.starts["r0"], res.starts["r1"]]) == [0, 2]


# --- IP == exhaustive OPT -----------------------------------------------------------------------------


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("seed", range(40))
def test_ip_matches_exhaustive(seed, K):
    inst = _tiny(seed)
    opt, _, _ = exhaustive_cluster_opt(inst, K)
    _check_result(inst, K, solve_cluster_ip(inst, K), opt)
    weak = solve_cluster_ip(inst, K, upper_bound=_serial_on_worker_0(inst), warm_start=False, zones=False)
    _check_result(inst, K, weak, opt)
    assert weak.model_stats.get("zones", False) is False
    assert weak.upper_bound == serial_tel(inst)


def test_random_instances_are_interesting():
    """Most instances must have contention on K workers, and the heuristic must miss OPT on some."""
    contended = misses = 0
    for seed in range(40):
        inst = _tiny(seed)
        opt = exhaustive_cluster_opt(inst, 2)[0]
        contended += opt > inst.total_output
        misses += cluster_upper_bound(inst, 2).tel > opt
    assert contended >= 25 and misses >= 1


def test_weak_upper_bound_is_verified_again():
    bad = AssignedSchedule({r.id: 0 for r in HAND.requests}, {r.id: 0 for r in HAND.requests}, 12, (12,), "bad")
    with pytest.raises(ValueError, match="rejected by the checker"):
        solve_cluster_ip(HAND, 2, upper_bound=bad)


# --- K = 1 and the symmetry rules ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_k1_equals_single_worker_ip(seed):
    inst = _tiny(seed)
    ub = cluster_upper_bound(inst, 1)
    windows = start_windows(inst, ub.tel)
    single, cluster = formulate(inst, windows, aggregate=False), formulate_cluster(inst, 1, windows)
    assert cluster.size == single.size and len(cluster.rows("sym_first_use")) == 0
    a, b = SOLVER.solve(single), SOLVER.solve(cluster)
    assert a.objective == pytest.approx(b.objective)
    la, lb = SOLVER.solve(single.relax()), SOLVER.solve(cluster.relax())
    assert la.objective == pytest.approx(lb.objective)


@pytest.mark.parametrize("seed", range(20))
def test_canonical_labelling_is_feasible(seed):
    inst = _tiny(seed)
    K = 3
    opt, assignment, starts = exhaustive_cluster_opt(inst, K)
    ub = cluster_upper_bound(inst, K)
    model = formulate_cluster(inst, K, start_windows(inst, ub.tel))
    x = encode_cluster(inst, model, assignment, starts)
    assert model.max_violation(x) <= 1e-9 and model.objective_value(x) == pytest.approx(opt)
    canon = canonical_assignment(inst, assignment)
    assert decode_cluster(inst, model, x) == (canon, starts)
    # the same schedule with the workers renamed (w -> K−1−w) encodes to the same canonical point
    renamed = {rid: K - 1 - w for rid, w in assignment.items()}
    assert canonical_assignment(inst, renamed) == canon
    assert np.array_equal(encode_cluster(inst, model, renamed, starts), x)
    # the first request is always on worker 0, and workers are opened in order
    seen = []
    for r in inst.requests:
        if canon[r.id] not in seen:
            seen.append(canon[r.id])
    assert seen == list(range(len(seen)))


def test_non_canonical_labelling_violates_the_symmetry_rows():
    model = formulate_cluster(HAND, 3, start_windows(HAND))
    xb = model.cols("x")
    cols = {(int(i), int(w), int(k)): j for j, (i, w, k) in
            enumerate(zip(xb.labels["request"], xb.labels["worker"], xb.labels["k"], strict=True))}
    assert (0, 1, 0) not in cols and (1, 2, 0) not in cols  # request i never on a worker above i

    def point(*picks: tuple[int, int, int]) -> np.ndarray:
        x = np.zeros(model.n_cols)
        for key in picks:
            x[cols[key]] = 1
        return x

    # canonical: r0 on worker 0, r2 opens worker 1
    assert model.max_violation(point((0, 0, 0), (1, 0, 5), (2, 1, 0))) == 0
    # the same schedule with r2 on worker 2 while worker 1 is empty: the row (i=2, w=2) is violated
    x = point((0, 0, 0), (1, 0, 5), (2, 2, 0))
    assert model.max_violation(x) == pytest.approx(1.0)
    sym = model.rows("sym_first_use")
    assert (model.A @ x)[sym.slice].max() == pytest.approx(1.0)


# --- stage, guards, decoding -----------------------------------------------------------------------------


def test_registered_stage_is_the_single_worker_case():
    form = make_formulation("cluster-ip")
    assert isinstance(form, ClusterIP) and form.workers == 1 and form.exact
    assert not ClusterIP(2).exact
    model = ClusterIP(2).build(HAND, start_windows(HAND))
    res = SOLVER.solve(model)
    assert res.objective == pytest.approx(14)
    assert ClusterIP(2).decode_assignment(HAND, model, res.x).keys() == set(HAND.ids)
    assert ClusterIP(2).describe(HAND, model) == {"workers": 2, "symmetry_rows": 2}
    with pytest.raises(ValueError, match="workers"):
        ClusterIP(0)


def test_estimate_matches_the_model():
    for seed in range(5):
        inst = _tiny(seed)
        for K in (1, 2, 4):
            w = start_windows(inst, serial_tel(inst))
            est, model = estimate_cluster_size(inst, K, w), formulate_cluster(inst, K, w)
            assert (est.cols, est.nnz) == (model.n_cols, model.nnz) and est.rows >= model.n_rows
            est, model = estimate_cluster_size(inst, K, w, zones=True), formulate_cluster(inst, K, w, zones=True)
            assert est.cols == model.n_cols and est.nnz >= model.nnz and est.rows >= model.n_rows


def test_zone_rows_are_per_worker_and_tighten_the_lp():
    """HAND: A and B (peak 6 = M) have zones; on one worker they cannot overlap, on two they can."""
    w = start_windows(HAND, serial_tel(HAND))
    plain, zoned = formulate_cluster(HAND, 2, w), formulate_cluster(HAND, 2, w, zones=True)
    zones = zoned.rows("peak_zones")
    assert set(zones.labels["worker"].tolist()) == {0, 1} and np.all(zoned.row_upper[zones.slice] == 1)
    lp_plain, lp_zoned = SOLVER.solve(plain.relax()).objective, SOLVER.solve(zoned.relax()).objective
    assert lp_plain < lp_zoned <= 14 + 1e-6
    assert SOLVER.solve(zoned).objective == pytest.approx(14)
    assert ClusterIP(2, zones=True).describe(HAND, zoned)["workers"] == 2


def test_too_large_returns_the_verified_upper_bound():
    res = solve_cluster_ip(HAND, 2, max_nnz=5, upper_bound=_serial_on_worker_0(HAND))
    assert res.status is SolveStatus.NOT_SOLVED and "max_nnz" in res.message
    assert res.objective == serial_tel(HAND) and res.bound == HAND.total_output


def test_decode_rejects_fractional_and_missing():
    model = formulate_cluster(HAND, 2, start_windows(HAND))
    x = np.zeros(model.n_cols)
    with pytest.raises(ValueError, match="no start"):
        decode_cluster(HAND, model, x)
    x[0] = 0.5
    with pytest.raises(ValueError, match="not integral"):
        decode_cluster(HAND, model, x)


def test_empty_and_trivial_instances():
    one = Instance.from_tuples(5, [(3, 2, 3)])
    res = solve_cluster_ip(one, 3)
    assert res.status is SolveStatus.OPTIMAL and res.objective == 3 and is_feasible(one, res.starts)
