"""Conformance checks run over every registered item (Gymnasium's ``check_env`` idea).

Each ``check_*`` function returns the list of problems found (empty when the item
conforms), so a plug-in author can run it on their own item before publishing, and the
test suite runs it over every built-in and installed registry entry.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from llmopt.checker import check_schedule
from llmopt.instance import Instance
from llmopt.model import CanonicalModel
from llmopt.result import SolveStatus

__all__ = ["reference_instances", "check_policy", "check_workload", "check_solver", "check_bound",
           "check_formulation", "check_suite"]


def reference_instances() -> dict[str, tuple[Instance, int]]:
    """Small instances with their optimal TEL (proved in the test suite by exhaustive search)."""
    return {
        # DIGEST T-5: MC-SF 13, OPT 12.
        "t5": (Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)], name="t5"), 12),
        # DIGEST T-17: two requests co-run because the short one finishes first.
        "t17": (Instance.from_tuples(10, [(0, 2, 3), (0, 2, 6)], name="t17"), 9),
        # J Theorem 4.1 instance, M = 16: a long request at 0, 8 short ones at r = 14.
        "thm41-16": (Instance.from_tuples(16, [(0, 1, 15)] + [(14, 1, 1)] * 8, name="thm41-16"), 31),
    }


def check_policy(name: str) -> list[str]:
    """Run policy ``name`` on :func:`reference_instances`: no error, checker-verified,
    TEL ≥ OPT, and deterministic (two runs give the same schedule)."""
    from llmopt.policies import make_policy
    from llmopt.simulator import simulate

    problems = []
    for label, (inst, opt) in reference_instances().items():
        try:
            first = simulate(inst, make_policy(name))
            second = simulate(inst, make_policy(name))
        except Exception as exc:
            problems.append(f"policy {name!r} on {label}: {type(exc).__name__}: {exc}")
            continue
        report = check_schedule(inst, first.starts)
        if not report.ok:
            problems.append(f"policy {name!r} on {label}: checker rejects the schedule: {report.violations[0]}")
        elif report.tel != first.tel:
            problems.append(f"policy {name!r} on {label}: simulator TEL {first.tel} != checker TEL {report.tel}")
        elif first.tel < opt:
            problems.append(f"policy {name!r} on {label}: TEL {first.tel} below OPT {opt}")
        if first.starts != second.starts:
            problems.append(f"policy {name!r} on {label}: two runs gave different schedules")
    return problems


def check_workload(name: str, seeds: tuple[int, ...] = (0, 1)) -> list[str]:
    """Workload ``name`` returns an :class:`Instance`, the same one for the same seed."""
    from llmopt.workloads import make_instance

    problems = []
    for seed in seeds:
        try:
            a, b = make_instance(name, seed), make_instance(name, seed)
        except Exception as exc:
            problems.append(f"workload {name!r} seed {seed}: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(a, Instance):
            problems.append(f"workload {name!r} seed {seed}: returned {type(a).__name__}, not Instance")
        elif a != b:
            problems.append(f"workload {name!r} seed {seed}: not deterministic")
    return problems


def _tiny_models() -> list[tuple[CanonicalModel, float]]:
    # LP: min x + 2y s.t. x + y >= 1, x <= 0.5 → 0.5 + 2·0.5 = 1.5.
    # MIP: max 5a + 4b + 3c s.t. 2a + 3b + c <= 5 (binaries) → a = b = 1 → 9 (we minimise −obj).
    def model(name, c, A, lo, up, col_up, integer):
        n = len(c)
        return CanonicalModel(
            name, np.array(c, float), 0.0, sp.csr_matrix(np.array(A, float)), np.array(lo, float),
            np.array(up, float), np.zeros(n), np.array(col_up, float), np.array(integer, bool),
            tuple(f"x{i}" for i in range(n)), tuple(f"r{i}" for i in range(len(A))),
        )

    lp = model("conf-lp", [1, 2], [[1, 1]], [1], [np.inf], [0.5, np.inf], [False, False])
    mip = model("conf-mip", [-5, -4, -3], [[2, 3, 1]], [-np.inf], [5], [1, 1, 1], [True] * 3)
    return [(lp, 1.5), (mip, -9.0)]


def check_solver(name: str) -> list[str]:
    """Solver ``name`` follows the protocol: an unavailable backend answers ``NOT_SOLVED``
    with a reason (no exception); an available one solves a tiny LP and MIP exactly."""
    from llmopt.solvers import get_solver, solver_status

    ok, reason = solver_status(name)
    solver = get_solver(name)
    problems = []
    for model, expected in _tiny_models():
        try:
            res = solver.solve(model, time_limit=30)
        except Exception as exc:
            problems.append(f"solver {name!r} on {model.name}: raised {type(exc).__name__}: {exc}")
            continue
        if not ok:
            if res.status is not SolveStatus.NOT_SOLVED or not res.message:
                problems.append(f"solver {name!r} is unavailable ({reason}) but returned {res.status}")
            continue
        if res.status is not SolveStatus.OPTIMAL or res.objective is None or abs(res.objective - expected) > 1e-6:
            problems.append(f"solver {name!r} on {model.name}: {res.status} {res.objective}, expected {expected}")
        elif res.bound is None or res.bound > res.objective + 1e-6:
            problems.append(f"solver {name!r} on {model.name}: bound {res.bound} not <= objective")
    return problems


def check_bound(name: str) -> list[str]:
    """Bound provider ``name`` never exceeds OPT on :func:`reference_instances`."""
    from llmopt.bounds import compute_bound

    problems = []
    for label, (inst, opt) in reference_instances().items():
        try:
            res = compute_bound(name, inst)
        except Exception as exc:
            problems.append(f"bound {name!r} on {label}: {type(exc).__name__}: {exc}")
            continue
        if res.value is not None and res.value > opt + 1e-6:
            problems.append(f"bound {name!r} on {label}: {res.value} exceeds OPT {opt}")
    return problems


def check_formulation(name: str) -> list[str]:
    """Formulation ``name`` builds a :class:`CanonicalModel` for each reference instance
    whose LP, solved with HiGHS, is finite. A primal formulation's LP must not exceed OPT;
    a dual's (which minimises the negated dual objective) must not fall below −OPT."""
    from llmopt.formulations import FORMULATIONS
    from llmopt.solvers import get_solver

    problems = []
    for label, (inst, opt) in reference_instances().items():
        try:
            model = FORMULATIONS.get(name)(inst)
        except Exception as exc:
            problems.append(f"formulation {name!r} on {label}: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(model, CanonicalModel):
            problems.append(f"formulation {name!r} returned {type(model).__name__}, not CanonicalModel")
            continue
        res = get_solver("highs").solve(model.relax(), time_limit=30)
        if res.status is not SolveStatus.OPTIMAL or res.objective is None:
            problems.append(f"formulation {name!r} on {label}: LP {res.status}")
        elif abs(res.objective) > opt + 1e-6:
            problems.append(f"formulation {name!r} on {label}: |LP value| {res.objective} exceeds OPT {opt}")
    return problems


def check_suite(name: str) -> list[str]:
    """Suite ``name`` names only registered workloads, policies and solvers."""
    from llmopt.policies import POLICIES
    from llmopt.solvers import SOLVERS
    from llmopt.suites import get_suite
    from llmopt.workloads import WORKLOADS

    suite = get_suite(name)
    problems = [f"suite {name!r}: unknown workload {w.workload!r}" for w in suite.workloads
                if w.workload not in WORKLOADS and ":" not in w.workload]
    problems += [f"suite {name!r}: unknown policy {p!r}" for p in suite.policies if p not in POLICIES]
    if suite.solver not in SOLVERS:
        problems.append(f"suite {name!r}: unknown solver {suite.solver!r}")
    return problems
