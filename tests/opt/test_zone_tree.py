"""The ``zone-tree`` stage (branch-and-bound on the zone-LP over start windows) and its tree certificate.

What is checked:

* **Closes at exhaustive OPT.** On tiny random instances the tree closes: its incumbent is the
  exhaustive optimum of ``helpers.exhaustive_opt`` (which shares no code with it) and the checker's
  re-walk of the tree certifies that value.
* **Never above OPT when stopped early**, with open leaves certified by their parents' multipliers.
* **The tree theorem on its own** (:mod:`llmopt.verify.tree_certificate`): random splits with random
  multipliers never certify more than OPT, the optimal schedule's leaf is the one that counts, and
  malformed trees are rejected.
* **Node steps**: a warm re-solve equals a fresh solve of the LP over the narrowed windows; an
  infeasible box is closed by its dual ray; reduced-cost cut leaves are checked.

Breakages tried by hand (each made tests here fail): in the checker's walk, the low child ending at
``t − 1`` (a gap) or the high child starting at ``t`` (an overlap) — ``test_leaf_boxes_partition_the_root_windows``
and ``test_the_tree_closes_at_exhaustive_opt`` (the provider's boxes then disagree with the checker's);
the box mask ignoring the box's upper end — the closing, early-stop, ray and cut tests; reduced-cost
cuts at ``incumbent − 3`` (cutting starts of better schedules) *with* the checker's guard on cut leaves
removed — ``test_the_tree_closes_at_exhaustive_opt`` and the cut test (with the guard kept, the bad
cuts are refused and every test passes: the guard is what makes the cuts safe).
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from helpers import exhaustive_opt, random_tiny_instance

from llmopt.engine.discrete import simulate
from llmopt.formulations.zones import default_split
from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus
from llmopt.model.windows import start_windows
from llmopt.opt.bounds import BoundContext, compute_bound
from llmopt.opt.zone_tree import _child_boxes, _Search, zone_tree
from llmopt.policies import make_policy
from llmopt.verify.certificates import CertificateError, certified_windows
from llmopt.verify.checker import check_schedule
from llmopt.verify.tree_certificate import TreeLeaf, TreeSplit, check_tree_certificate, leaf_boxes


def _case(seed: int, max_arrival: int = 3) -> tuple[Instance, dict[str, int], int]:
    inst = random_tiny_instance(random.Random(9100 + seed), n_range=(3, 6), M_range=(6, 12), max_arrival=max_arrival)
    fcfs = simulate(inst, make_policy("fcfs"))
    opt, _ = exhaustive_opt(inst, fcfs.tel)
    return inst, dict(fcfs.starts), opt


def _tree(inst: Instance, starts: dict[str, int], **kw):
    tel = check_schedule(inst, starts).tel
    return zone_tree(inst, upper_bound_starts=starts, windows=start_windows(inst, tel),
                     split=default_split(inst.M), **kw)


@pytest.mark.parametrize("seed", range(12))
def test_the_tree_closes_at_exhaustive_opt(seed):
    inst, starts, opt = _case(seed, max_arrival=3 if seed % 2 else 0)
    res = _tree(inst, starts, strong=1 + seed % 3)
    assert res.status is SolveStatus.OPTIMAL, res.message
    assert res.incumbent == opt
    check = check_tree_certificate(inst, res.nodes, default_split(inst.M), starts)
    assert math.ceil(check.bound - 1e-6) == opt
    assert check.bound == pytest.approx(res.bound)


def test_the_stage_is_verified_and_proves_opt():
    inst, starts, opt = _case(3)
    res = compute_bound("zone-tree", inst, BoundContext(upper_bound_starts=starts))
    assert res.verified and res.certificate == "zone-tree-checked", res.detail
    assert math.ceil(res.value - 1e-6) == opt


@pytest.mark.parametrize("seed", range(6))
def test_stopped_early_the_tree_stays_below_opt(seed):
    inst, starts, opt = _case(20 + seed)
    res = _tree(inst, starts, node_limit=2, strong=1)
    check = check_tree_certificate(inst, res.nodes, default_split(inst.M), starts)
    assert check.bound <= opt + 1e-6
    assert check.bound >= res.bound - 1e-6  # the provider's bookkeeping matches the checker's walk


def test_an_instance_that_needs_branching_is_proved():
    """Two large requests and a mid-size one (M = 10): the zone-LP alone is below OPT here."""
    inst = Instance.from_tuples(10, [(0, 1, 9), (0, 2, 7), (1, 1, 8), (0, 3, 3), (2, 1, 5)])
    fcfs = simulate(inst, make_policy("fcfs"))
    opt, _ = exhaustive_opt(inst, fcfs.tel)
    root = compute_bound("zone-lp", inst, BoundContext(upper_bound_starts=fcfs.starts))
    assert root.value < opt - 1  # the root does not prove it
    res = _tree(inst, dict(fcfs.starts))
    assert res.status is SolveStatus.OPTIMAL and res.incumbent == opt and res.explored > 1


# --- the certificate on its own --------------------------------------------------------------------


def _random_tree(rng: random.Random, inst: Instance, starts: dict[str, int] | None, depth: int,
                 lo=None, hi=None) -> list:
    if lo is None:
        lo, hi = certified_windows(inst, starts)
    nodes: list = [None]

    def grow(j: int, box: dict[int, tuple[int, int]], d: int) -> None:
        if d == depth or rng.random() < 0.2:
            times = np.arange(0, int(hi.max()) + max(r.output for r in inst.requests) + 3)
            lam = (times, np.array([rng.choice([0.0, 0.0, rng.uniform(0, 2)]) for _ in times]))
            mu = (times, np.array([rng.choice([0.0, rng.uniform(0, 3)]) for _ in times]))
            nodes[j] = TreeLeaf(lam, mu)
            return
        i = rng.randrange(inst.n)
        b_lo, b_hi = box.get(i, (int(lo[i]), int(hi[i])))
        t = rng.randint(b_lo - 1, b_hi)
        low, high = len(nodes), len(nodes) + 1
        nodes[j] = TreeSplit(i, t, low, high)
        nodes.extend([None, None])
        lbox, hbox = _child_boxes(box, i, t)
        grow(low, lbox, d + 1)
        grow(high, hbox, d + 1)

    grow(0, {}, 0)
    return nodes


@pytest.mark.parametrize("seed", range(10))
def test_random_trees_never_certify_more_than_opt(seed):
    rng = random.Random(seed)
    inst, starts, opt = _case(40 + seed, max_arrival=2)
    for _ in range(8):
        nodes = _random_tree(rng, inst, starts, depth=4)
        check = check_tree_certificate(inst, nodes, default_split(inst.M), starts)
        assert check.bound <= opt + 1e-6


@pytest.mark.parametrize("seed", range(6))
def test_leaf_boxes_partition_the_root_windows(seed):
    """Every start vector of the (small) root box lies in exactly one leaf box."""
    import itertools

    rng = random.Random(seed)
    inst = Instance.from_tuples(10, [(0, 1, 4), (1, 2, 3), (0, 1, 2)])
    lo, hi = np.array([0, 1, 0]), np.array([5, 4, 6])
    nodes = _random_tree(rng, inst, None, depth=5, lo=lo, hi=hi)
    boxes = [box for _, box, _ in leaf_boxes(inst, nodes, lo, hi)]
    for ks in itertools.product(*(range(a, b + 1) for a, b in zip(lo, hi, strict=True))):
        inside = [all(b[0] <= ks[i] <= b[1] for i, b in box.items()) for box in boxes]
        assert sum(inside) == 1, (ks, boxes)


def test_the_leaf_holding_the_optimum_counts():
    """Split at the optimal start of a request: a leaf with huge multipliers on the other side is
    ignored only where no schedule lies — the other leaf keeps the bound at most OPT."""
    inst, starts, opt = _case(5)
    _, best = exhaustive_opt(inst, simulate(inst, make_policy("fcfs")).tel)
    i = 0
    k = best[inst.requests[i].id]
    times = np.arange(0, 200)
    big = TreeLeaf((times, np.full(times.size, 50.0)), (times[:0], np.zeros(0)))
    zero = TreeLeaf((times[:0], np.zeros(0)), (times[:0], np.zeros(0)))
    # the optimum (k_i = k) is in the low child (k_i <= k): the zero leaf there keeps the bound low
    check = check_tree_certificate(inst, [TreeSplit(i, k, 1, 2), zero, big], default_split(inst.M), starts)
    assert check.bound <= opt
    assert check.leaves == 2


def test_malformed_trees_are_rejected():
    inst, starts, _ = _case(1)
    h = default_split(inst.M)
    leaf = TreeLeaf({}, {})
    with pytest.raises(CertificateError, match="reached twice"):
        check_tree_certificate(inst, [TreeSplit(0, 2, 1, 1), leaf], h, starts)
    with pytest.raises(CertificateError, match="not reached"):
        check_tree_certificate(inst, [TreeSplit(0, 2, 1, 2), leaf, leaf, leaf], h, starts)
    with pytest.raises(CertificateError, match="outside the tree"):
        check_tree_certificate(inst, [TreeSplit(0, 2, 1, 5), leaf], h, starts)
    with pytest.raises(CertificateError, match="request position"):
        check_tree_certificate(inst, [TreeSplit(inst.n, 2, 1, 2), leaf, leaf], h, starts)
    with pytest.raises(CertificateError, match="not an integer"):
        check_tree_certificate(inst, [TreeSplit(0, 2.5, 1, 2), leaf, leaf], h, starts)  # type: ignore[arg-type]
    with pytest.raises(CertificateError, match="< 0"):
        check_tree_certificate(inst, [TreeLeaf({3: -1.0}, {})], h, starts)
    with pytest.raises(CertificateError, match="no node"):
        check_tree_certificate(inst, [], h, starts)


def test_empty_leaves_are_left_out():
    inst, starts, opt = _case(2)
    lo, _ = certified_windows(inst, starts)
    times = np.arange(0, 100)
    big = TreeLeaf((times, np.full(times.size, 1e6)), {})
    # k_0 <= lo_0 − 1 holds no schedule: its huge multipliers must not count, nor must they lower the bound
    check = check_tree_certificate(inst, [TreeSplit(0, int(lo[0]) - 1, 1, 2), big, TreeLeaf({}, {})],
                                   default_split(inst.M), starts)
    assert check.empty == 1 and check.bound <= opt


# --- node steps ------------------------------------------------------------------------------------


def test_warm_resolve_equals_a_fresh_solve():
    from llmopt.formulations.hindsight_ip import formulate
    from llmopt.formulations.zones import with_zone_rows
    from llmopt.model.windows import StartWindows
    from llmopt.solvers import DEFAULT_SOLVER, get_solver

    inst, starts, _ = _case(7)
    tel = check_schedule(inst, starts).tel
    windows = start_windows(inst, tel)
    search = _Search(inst, starts, windows, default_split(inst.M), 1)
    search.lp.solve()
    root_basis = search.lp.basis()  # what strong-branching probes restart from
    rng = random.Random(3)
    for _ in range(6):
        box = {}
        for i in rng.sample(range(inst.n), 2):
            lo, hi = windows.lo[i], windows.hi[i]
            a = rng.randint(lo, hi)
            box[i] = (a, rng.randint(a, hi))
        warm = search.lp.solve(search.upper(box))
        lo, hi = list(windows.lo), list(windows.hi)
        for i, (a, b) in box.items():
            lo[i], hi[i] = a, b
        narrowed = StartWindows(tuple(lo), tuple(hi), windows.horizon, "test: a box")
        fresh_model = with_zone_rows(formulate(inst, narrowed, aggregate=False), inst).relax()
        fresh = get_solver(DEFAULT_SOLVER).solve(fresh_model)
        from_root = search.lp.solve(search.upper(box), basis=root_basis)
        if fresh.objective is None:
            assert warm.status is SolveStatus.INFEASIBLE and from_root.status is SolveStatus.INFEASIBLE
        else:
            assert warm.objective == pytest.approx(fresh.objective, abs=1e-6)
            assert from_root.objective == pytest.approx(fresh.objective, abs=1e-6)


def test_a_basis_of_another_model_is_refused():
    inst, starts, _ = _case(7)
    other, other_starts, _ = _case(8)
    mine = _Search(inst, starts, start_windows(inst, check_schedule(inst, starts).tel), default_split(inst.M), 1)
    theirs = _Search(other, other_starts, start_windows(other, check_schedule(other, other_starts).tel),
                     default_split(other.M), 1)
    theirs.lp.solve()
    assert mine.lp.model.n_cols != theirs.lp.model.n_cols
    with pytest.raises(ValueError, match="basis rejected"):
        mine.lp.solve(basis=theirs.lp.basis())


def test_an_infeasible_box_is_closed_by_its_dual_ray():
    """Two requests that cannot run together (peaks 9 + 8 > M = 10) forced to start at the same step."""
    inst = Instance.from_tuples(10, [(0, 1, 8), (0, 1, 7), (0, 1, 2)])
    fcfs = simulate(inst, make_policy("fcfs"))
    windows = start_windows(inst, fcfs.tel)
    search = _Search(inst, dict(fcfs.starts), windows, default_split(inst.M), 1)
    box = {0: (0, 0), 1: (0, 0)}
    sol = search.lp.solve(search.upper(box))
    assert sol.status is SolveStatus.INFEASIBLE and sol.dual_ray is not None
    mult = search.ray_multipliers(sol.dual_ray, box)
    assert mult is not None
    assert math.ceil(search.checked(*mult, box) - 1e-6) >= search.incumbent  # closes: no better TEL in the box


def test_reduced_cost_cuts_are_leaves_the_checker_closes():
    inst = Instance.from_tuples(10, [(0, 1, 9), (0, 2, 7), (1, 1, 8), (0, 3, 3), (2, 1, 5), (0, 2, 4)])
    fcfs = simulate(inst, make_policy("fcfs"))
    res = _tree(inst, dict(fcfs.starts))
    assert "cut" in res.message, res.message
    check = check_tree_certificate(inst, res.nodes, default_split(inst.M), dict(fcfs.starts))
    assert math.ceil(check.bound - 1e-6) == res.incumbent


def test_windows_wider_than_the_checkers_are_cut_to_them():
    """Horizon windows (the pipeline's ``windows="horizon"``) reach past the certified ones: the tree
    cuts them, so no box leaves the checker's windows (this raised in review, issue 23)."""
    from llmopt.model.windows import horizon_windows

    inst = random_tiny_instance(random.Random(42), n_range=(3, 6), M_range=(6, 12), max_arrival=3)
    fcfs = simulate(inst, make_policy("fcfs"))
    opt, _ = exhaustive_opt(inst, fcfs.tel)
    res = zone_tree(inst, upper_bound_starts=dict(fcfs.starts), windows=horizon_windows(inst),
                    split=default_split(inst.M))
    assert res.status is SolveStatus.OPTIMAL and res.incumbent == opt
    res = compute_bound("zone-tree", inst, BoundContext(upper_bound_starts=dict(fcfs.starts),
                                                        windows=horizon_windows(inst)))
    assert res.verified and math.ceil(res.value - 1e-6) == opt, res.detail
