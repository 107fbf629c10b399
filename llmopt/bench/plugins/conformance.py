"""Validating plug-ins: conformance checks run over every registered item (Gymnasium's ``check_env`` idea).

Each ``check_*`` function returns the list of problems found (empty when the item
conforms), so a plug-in author can run it on their own item before publishing, and the
test suite runs it over every built-in and installed registry entry. :func:`check` is the one
entry: it runs the check that :data:`llmopt.bench.plugins.loading.REGISTRY_TABLE` names for the
item's kind (:data:`CHECKS`). :func:`formulation_trust_problems` is what ``llmopt solve`` and
:func:`llmopt.solve` ask before a plug-in formulation's solver bound may prove OPT.
"""

from __future__ import annotations

import inspect
import json
import math
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from llmopt.bench.plugins.loading import REGISTRY_TABLE
from llmopt.model.canonical import Block, CanonicalModel
from llmopt.model.instance import Instance, InstanceError, Request
from llmopt.model.registry import Registry
from llmopt.model.result import SolveStatus
from llmopt.model.tolerance import VALUE_TOL
from llmopt.verify.checker import check_schedule

if TYPE_CHECKING:
    from llmopt.bench.suites import Suite

__all__ = ["reference_instances", "check", "check_policy", "check_workload", "check_solver", "check_bound",
           "check_formulation", "check_suite", "check_windows", "check_upper_bound",
           "check_prediction", "check_task_kind", "check_cost_model", "check_trace_format", "check_router",
           "check_study", "CHECKS", "is_builtin", "cached_check_formulation", "formulation_trust_problems"]


def reference_instances() -> dict[str, tuple[Instance, int]]:
    """Small instances with their optimal TEL (proved in the test suite by exhaustive search).

    Every request carries a prediction interval containing its output (the power-of-two
    bucket ``[2^k, 2^(k+1) − 1]`` of ``o``, disjoint buckets as C's Algorithm 5 assumes,
    unless the example fixes one), so prediction-based policies run on them too; the
    others ignore the intervals.
    """
    def with_intervals(inst: Instance, interval: tuple[int, int] | None = None) -> Instance:
        def bucket(o: int) -> tuple[int, int]:
            k = o.bit_length() - 1
            return interval if interval else (2**k, 2 ** (k + 1) - 1)

        reqs = tuple(replace(r, lower=bucket(r.output)[0], upper=bucket(r.output)[1]) for r in inst.requests)
        return replace(inst, requests=reqs)

    return {
        # DIGEST T-5: MC-SF 13, OPT 12.
        "t5": (with_intervals(Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)], name="t5")), 12),
        # DIGEST T-17: two requests co-run because the short one finishes first.
        "t17": (with_intervals(Instance.from_tuples(10, [(0, 2, 3), (0, 2, 6)], name="t17")), 9),
        # J Theorem 4.1 instance, M = 16: a long request at 0, 8 short ones at r = 14.
        "thm41-16": (with_intervals(Instance.from_tuples(16, [(0, 1, 15)] + [(14, 1, 1)] * 8, name="thm41-16")), 31),
        # DIGEST T-1, C Example 1: five o = 1 requests predicted in [1, 4], M = 10.
        "c-example1": (with_intervals(Instance.from_tuples(10, [(0, 1, 1)] * 5, name="c-example1"), (1, 4)), 5),
        # DIGEST T-9: A_min cancels once; o = (1, 3, 3) predicted in [1, 4], M = 6.
        "t9": (with_intervals(Instance.from_tuples(6, [(0, 1, 1), (0, 1, 3), (0, 1, 3)], name="t9"), (1, 4)), 9),
    }


def check_policy(name: str) -> list[str]:
    """Run policy ``name`` on :func:`reference_instances`: it follows the event-driven or the step
    protocol; its schedule (evictions included) is accepted by the checker with the simulator's TEL,
    which is at least OPT; it is deterministic (the same object reused — so ``reset`` works — and a
    fresh one give the same starts and evictions); and with output lengths hidden it either runs or
    fails with :class:`~llmopt.engine.discrete.HiddenOutputError`, nothing else."""
    from llmopt.engine.discrete import HiddenOutputError, Visibility, simulate
    from llmopt.policies import Policy, StepPolicy, make_policy

    problems = []
    try:
        policy = make_policy(name)
    except Exception as exc:
        return [f"policy {name!r}: cannot be created: {type(exc).__name__}: {exc}"]
    if not isinstance(policy, (Policy, StepPolicy)):
        return [f"policy {name!r}: has neither on_arrival(t, request) + decide(t) nor decide(view)"]
    for label, (inst, opt) in reference_instances().items():
        try:
            first = simulate(inst, policy)
            again = simulate(inst, policy)
            fresh = simulate(inst, make_policy(name))
        except Exception as exc:
            problems.append(f"policy {name!r} on {label}: {type(exc).__name__}: {exc}")
            continue
        report = check_schedule(inst, first.starts, evictions=first.evictions)
        if not report.ok:
            problems.append(f"policy {name!r} on {label}: checker rejects the schedule: {report.violations[0]}")
        elif report.tel != first.tel:
            problems.append(f"policy {name!r} on {label}: simulator TEL {first.tel} != checker TEL {report.tel}")
        elif first.tel < opt:
            problems.append(f"policy {name!r} on {label}: TEL {first.tel} below OPT {opt}")
        for other, how in ((again, "the same object run twice"), (fresh, "a fresh object")):
            if dict(first.starts) != dict(other.starts) or first.evictions != other.evictions:
                problems.append(f"policy {name!r} on {label}: {how} gave a different schedule")
        try:
            simulate(inst, make_policy(name), visibility=Visibility.HIDDEN)
        except HiddenOutputError:
            pass  # needs output lengths: fine, as long as it says so
        except Exception as exc:
            problems.append(f"policy {name!r} on {label} with hidden outputs: {type(exc).__name__}: {exc} "
                            "(expected success or HiddenOutputError)")
    return problems


def check_workload(name: str, seeds: tuple[int, ...] = (0, 1)) -> list[str]:
    """Workload ``name`` returns an :class:`Instance` (or, for trace workloads, a
    :class:`~llmopt.model.timed_instance.TimedInstance`), the same one for the same seed."""
    from llmopt.model.timed_instance import TimedInstance
    from llmopt.workloads import make_instance

    problems = []
    for seed in seeds:
        try:
            a, b = make_instance(name, seed), make_instance(name, seed)
        except Exception as exc:
            problems.append(f"workload {name!r} seed {seed}: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(a, (Instance, TimedInstance)):
            problems.append(f"workload {name!r} seed {seed}: returned {type(a).__name__}, not Instance "
                            "or TimedInstance")
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
            (Block("rows", 0, len(A)),), (Block("x", 0, n),),
        )

    lp = model("conf-lp", [1, 2], [[1, 1]], [1], [np.inf], [0.5, np.inf], [False, False])
    mip = model("conf-mip", [-5, -4, -3], [[2, 3, 1]], [-np.inf], [5], [1, 1, 1], [True] * 3)
    return [(lp, 1.5), (mip, -9.0)]


def check_solver(name: str) -> list[str]:
    """Solver ``name`` follows the protocol: it declares its capabilities and version without
    importing its backend; an unavailable backend answers ``NOT_SOLVED`` with a reason (no
    exception); an available one solves a tiny LP (with duals, if it declares LP duals) and a
    tiny MIP (if it declares MIP) exactly."""
    from llmopt.solvers import SOLVERS, get_solver, solver_status
    from llmopt.solvers.base import Capability, SolverInfo

    cls = SOLVERS.get(name)
    problems = []
    info = getattr(cls, "info", None)
    if not isinstance(info, SolverInfo):
        return [f"solver {name!r}: class attribute 'info' must be a SolverInfo"]
    try:
        cls.version()
    except Exception as exc:
        problems.append(f"solver {name!r}: version() raised {type(exc).__name__}: {exc}")
    ok, reason = solver_status(name)
    solver = get_solver(name)
    for model, expected in _tiny_models():
        if model.is_mip and not info.has(Capability.MIP):
            continue
        try:
            res = solver.solve(model, time_limit=30)
        except Exception as exc:
            problems.append(f"solver {name!r} on {model.name}: raised {type(exc).__name__}: {exc}")
            continue
        if not ok:
            if res.status is not SolveStatus.NOT_SOLVED or not res.message:
                problems.append(f"solver {name!r} is unavailable ({reason}) but returned {res.status}")
            continue
        if res.status is not SolveStatus.OPTIMAL or res.objective is None or abs(res.objective - expected) > VALUE_TOL:
            problems.append(f"solver {name!r} on {model.name}: {res.status} {res.objective}, expected {expected}")
        elif res.bound is None or res.bound > res.objective + VALUE_TOL:
            problems.append(f"solver {name!r} on {model.name}: bound {res.bound} not <= objective")
        elif not model.is_mip and info.has(Capability.LP_DUALS) and (res.duals is None or len(res.duals) != 1
                                                                      or abs(res.duals[0] - 2.0) > VALUE_TOL):
            # min x + 2y, x + y >= 1, x <= 0.5: the row's dual is 2 (raising the rhs by d costs 2d)
            problems.append(f"solver {name!r} declares LP duals but returned {res.duals}, expected [2.0]")
    return problems


def _mcsf_starts(inst: Instance) -> dict[str, int]:
    from llmopt.engine.discrete import simulate
    from llmopt.policies import make_policy

    return dict(simulate(inst, make_policy("mc-sf")).starts)


def check_bound(name: str) -> list[str]:
    """Bound provider ``name`` returns a :class:`~llmopt.opt.bounds.BoundResult` whose certified value
    never exceeds OPT on :func:`reference_instances` (with and without an upper-bound schedule)."""
    from llmopt.opt.bounds import BoundContext, BoundResult, compute_bound

    problems = []
    for label, (inst, opt) in reference_instances().items():
        for ctx in (BoundContext(), BoundContext(upper_bound_starts=_mcsf_starts(inst))):
            try:
                res = compute_bound(name, inst, ctx)
            except Exception as exc:
                problems.append(f"bound {name!r} on {label}: {type(exc).__name__}: {exc}")
                continue
            if not isinstance(res, BoundResult):
                problems.append(f"bound {name!r} returned {type(res).__name__}, not BoundResult")
            elif res.value is not None and res.value > opt + VALUE_TOL:
                problems.append(f"bound {name!r} on {label}: {res.value} exceeds OPT {opt}")
    return problems


def check_formulation(name: str) -> list[str]:
    """Formulation ``name`` follows :class:`llmopt.formulations.Formulation`: on each reference
    instance, with horizon windows and with windows from MC-SF's schedule, it builds a
    :class:`CanonicalModel` whose LP relaxation is at most OPT, and whose MIP solution
    decodes to a schedule the checker accepts — with TEL = OPT if the formulation is ``exact``.

    A formulation with a restricted domain declares it with ``accepts(instance) -> str | None``
    (why it cannot model the instance, or ``None``): on an instance it declines, ``build`` must
    raise :class:`~llmopt.model.instance.InstanceError`, and it must accept at least one reference instance."""
    from llmopt.formulations import make_formulation
    from llmopt.model.windows import start_windows
    from llmopt.solvers import Capability, get_solver, pick_solver

    try:
        form = make_formulation(name)
    except Exception as exc:
        return [f"formulation {name!r}: {type(exc).__name__}: {exc}"]
    problems = []
    solver = pick_solver(Capability.MIP)
    if solver is None:
        return [f"formulation {name!r}: no available MIP solver to check it with"]
    mip = get_solver(solver)
    accepts = getattr(form, "accepts", None)
    accepted = 0
    for label, (inst, opt) in reference_instances().items():
        ub = check_schedule(inst, _mcsf_starts(inst)).tel
        why = accepts(inst) if accepts is not None else None
        if why is not None:
            try:
                form.build(inst, start_windows(inst))
                problems.append(f"formulation {name!r} declines {label} ({why}) but builds a model for it")
            except InstanceError:
                pass
            except Exception as exc:
                problems.append(f"formulation {name!r} on declined {label}: {type(exc).__name__} "
                                "instead of InstanceError")
            continue
        accepted += 1
        for win in (start_windows(inst), start_windows(inst, ub)):
            try:
                model = form.build(inst, win)
            except Exception as exc:
                problems.append(f"formulation {name!r} on {label}: {type(exc).__name__}: {exc}")
                continue
            if not isinstance(model, CanonicalModel):
                problems.append(f"formulation {name!r} returned {type(model).__name__}, not CanonicalModel")
                continue
            lp = mip.solve(model.relax(), time_limit=30)
            if lp.status is not SolveStatus.OPTIMAL or lp.objective is None:
                problems.append(f"formulation {name!r} on {label}: LP {lp.status}")
            elif lp.objective > opt + VALUE_TOL:
                problems.append(f"formulation {name!r} on {label}: LP value {lp.objective} exceeds OPT {opt}")
            res = mip.solve(model, time_limit=60)
            if res.x is None:
                problems.append(f"formulation {name!r} on {label}: MIP {res.status}, no solution")
                continue
            try:
                starts = form.decode(inst, model, res.x)
            except Exception as exc:
                problems.append(f"formulation {name!r} on {label}: decode raised {type(exc).__name__}: {exc}")
                continue
            report = check_schedule(inst, starts)
            if not report.ok:
                problems.append(f"formulation {name!r} on {label}: decoded schedule rejected: {report.violations[0]}")
            elif getattr(form, "exact", False) and res.status is SolveStatus.OPTIMAL and report.tel != opt:
                problems.append(f"formulation {name!r} on {label}: declared exact, "
                                f"optimum TEL {report.tel} != OPT {opt}")
    if accepted == 0:
        problems.append(f"formulation {name!r} declines every reference instance; nothing could be checked")
    return problems


def check_windows(name: str) -> list[str]:
    """Windows stage ``name`` returns windows that contain the checker's own windows (so a
    model built on them keeps an optimal schedule) on :func:`reference_instances`."""
    from llmopt.model.windows import WINDOWS, StartWindows
    from llmopt.verify.certificates import certified_windows

    problems = []
    for label, (inst, _opt) in reference_instances().items():
        starts = _mcsf_starts(inst)
        tel = check_schedule(inst, starts).tel
        try:
            win = WINDOWS.get(name)(inst, tel)
        except Exception as exc:
            problems.append(f"windows {name!r} on {label}: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(win, StartWindows):
            problems.append(f"windows {name!r} returned {type(win).__name__}, not StartWindows")
            continue
        lo, hi = certified_windows(inst, starts)
        if not win.contains(lo.tolist(), hi.tolist()):
            problems.append(f"windows {name!r} on {label}: do not contain the checker's windows")
    return problems


def check_upper_bound(name: str) -> list[str]:
    """Upper-bound stage ``name`` returns a schedule the checker accepts, with TEL >= OPT, the
    same for the same seed, on :func:`reference_instances`."""
    from llmopt.opt.upper_bounds import SearchContext, find_schedule

    problems = []
    for label, (inst, opt) in reference_instances().items():
        ctx = SearchContext(seed=0, search_evals=20, lns_iterations=5, cp_sat_seconds=2.0)
        try:
            first, second = find_schedule(name, inst, ctx), find_schedule(name, inst, ctx)
        except Exception as exc:
            problems.append(f"upper bound {name!r} on {label}: {type(exc).__name__}: {exc}")
            continue
        report = check_schedule(inst, first.starts)
        if not report.ok:
            problems.append(f"upper bound {name!r} on {label}: schedule rejected: {report.violations[0]}")
        elif report.tel is not None and report.tel < opt:
            problems.append(f"upper bound {name!r} on {label}: TEL {report.tel} below OPT {opt}")
        if dict(first.starts) != dict(second.starts):
            problems.append(f"upper bound {name!r} on {label}: two runs gave different schedules")
    return problems


def check_suite(suite: str | Suite) -> list[str]:
    """Suite ``suite`` (a registered name or a :class:`~llmopt.bench.suites.Suite`) names only registered
    stages — workloads (``"module:attr"`` paths must resolve, and the parameters must fit the
    workload's signature), policies, solver, formulation, windows, bounds, upper bounds — and
    every key of its ``paper`` numbers is one of its workload labels."""
    from llmopt.bench.suites import get_suite
    from llmopt.bench.tasks import resolve_workload
    from llmopt.formulations import FORMULATIONS
    from llmopt.model.params import check_params
    from llmopt.model.windows import WINDOWS
    from llmopt.opt.bounds import BOUNDS
    from llmopt.opt.defaults import AUTO_BOUNDS
    from llmopt.opt.upper_bounds import UPPER_BOUNDS
    from llmopt.policies import POLICIES, make_policy_spec, parse_policy_spec
    from llmopt.solvers import SOLVERS

    if isinstance(suite, str):
        suite = get_suite(suite)
    where = f"suite {suite.name!r}"
    problems = []
    for spec in suite.workloads:
        try:
            fn = resolve_workload(spec.workload)
        except Exception as exc:
            problems.append(f"{where}: workload {spec.workload!r} does not resolve ({type(exc).__name__}: {exc})")
            continue
        try:
            sig = inspect.signature(fn)
        except ValueError:  # no signature to check (a builtin)
            continue
        try:
            sig.bind(0, **dict(spec.params))
        except TypeError as exc:
            problems.append(f"{where}: workload {spec.workload!r} does not take the parameters "
                            f"{dict(spec.params)} ({exc})")
            continue
        try:  # the types too (`n_range: "x"`), by the workload's annotations; its first parameter is the seed
            check_params("workload", spec.workload, fn, dict(spec.params), skip=(next(iter(sig.parameters)),))
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
    named: list[tuple[str, str, Registry[Any]]] = []
    for p in suite.policies:
        try:
            pname, pparams = parse_policy_spec(p)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        named.append(("policy", pname, POLICIES))
        if pname in POLICIES and pparams:
            try:  # names, types (`alpha=abc`) and values (`alpha=1`), by making the policy once
                check_params("policy", pname, POLICIES.get(pname), pparams)
                make_policy_spec(p)
            except (TypeError, ValueError) as exc:
                problems.append(f"{where}: policy {p!r}: {exc}")
    if suite.kind in ("trace", "capacity"):
        from llmopt.engine.cost_model import COST_MODELS

        named.append(("cost model", suite.cost_model, COST_MODELS))
    if suite.kind == "capacity":
        from llmopt.policies.routers import ROUTERS, parse_router_spec

        for r in suite.routers:
            try:
                named.append(("router", parse_router_spec(r)[0], ROUTERS))
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
    named += [("solver", suite.solver, SOLVERS), ("formulation", suite.formulation, FORMULATIONS),
              ("windows", suite.windows, WINDOWS)]
    named += [("bound", b, BOUNDS) for b in suite.bounds if b != AUTO_BOUNDS]
    for kind, name, registry in named:
        if name not in registry:
            problems.append(f"{where}: unknown {kind} {name!r}; known: {', '.join(registry.names())}")
    for u in suite.upper_bounds:
        if u not in UPPER_BOUNDS and u not in POLICIES:
            known = ", ".join(sorted(set(UPPER_BOUNDS.names()) | set(POLICIES.names())))
            problems.append(f"{where}: unknown upper-bound stage {u!r}; known: {known}")
    labels = {suite.label_for(spec.workload, spec.params) for spec in suite.workloads}
    problems += [f"{where}: paper numbers for {k!r}, which is not a workload label of the suite"
                 for k in suite.paper if k not in labels]
    return problems


def check_prediction(name: str) -> list[str]:
    """Prediction generator ``name`` (default parameters), applied to :func:`reference_instances`
    with their intervals removed, returns a valid instance of the same type with the same
    requests, an interval on every request (unless it is ``"none"``) that contains the
    output unless the instance declares ``predictions_may_miss``, and the same result for
    the same seed."""
    from llmopt.workloads.predictions import apply_prediction_spec, clear_intervals

    problems = []
    for label, (inst, _opt) in reference_instances().items():
        bare = clear_intervals(inst)
        try:
            a, b = apply_prediction_spec(bare, name, seed=1), apply_prediction_spec(bare, name, seed=1)
        except Exception as exc:
            problems.append(f"prediction {name!r} on {label}: {type(exc).__name__}: {exc}")
            continue
        if type(a) is not type(bare) or a.ids != bare.ids or a.M != bare.M or \
                [(r.arrival, r.prompt, r.output) for r in a.requests] != \
                [(r.arrival, r.prompt, r.output) for r in bare.requests]:
            problems.append(f"prediction {name!r} on {label}: changed the requests, not only their intervals")
        elif a != b:
            problems.append(f"prediction {name!r} on {label}: not deterministic for a given seed")
        elif name != "none" and any(r.lower is None for r in a.requests):
            problems.append(f"prediction {name!r} on {label}: left a request without an interval")
        elif not a.predictions_may_miss and any(r.lower is not None and not r.lower <= r.output <= (r.upper or 0)
                                                for r in a.requests):
            problems.append(f"prediction {name!r} on {label}: an interval misses its output without "
                            "predictions_may_miss")
    return problems


def check_task_kind(name: str) -> list[str]:
    """Task kind ``name`` resolves to a :class:`~llmopt.bench.kinds.TaskKind` of that name whose
    report writer resolves, and whose blank record, for the first task of every registered suite
    of that kind, is plain JSON with the fields the harness reads (``suite``, ``seed``, ``error``)."""
    from llmopt.bench.kinds import TASK_KINDS, TaskKind
    from llmopt.bench.store import RecordError, plain_record
    from llmopt.bench.suites import SUITES, get_suite

    where = f"task kind {name!r}"
    try:
        kind = TASK_KINDS.get(name)
    except Exception as exc:
        return [f"{where}: does not resolve ({type(exc).__name__}: {exc})"]
    if not isinstance(kind, TaskKind):
        return [f"{where}: resolves to {type(kind).__name__}, not a TaskKind"]
    problems = []
    if kind.name != name:
        problems.append(f"{where}: its TaskKind is named {kind.name!r}")
    try:
        if not callable(kind.report_writer()):
            problems.append(f"{where}: report {kind.report!r} is not callable")
    except Exception as exc:
        problems.append(f"{where}: report {kind.report!r} does not resolve ({type(exc).__name__}: {exc})")
    for suite_name in SUITES.names():
        suite = get_suite(suite_name)
        if suite.kind != name:
            continue
        rec = kind.blank_record(suite, next(iter(suite.tasks())))
        missing = sorted({"suite", "seed", "error"} - set(rec))
        if missing:
            problems.append(f"{where}: blank record of suite {suite_name!r} lacks {', '.join(missing)}")
        try:
            plain_record(rec)
        except RecordError as exc:
            problems.append(f"{where}: blank record of suite {suite_name!r} is not plain JSON: {exc}")
    return problems


def check_cost_model(name: str) -> list[str]:
    """Cost model ``name`` (default parameters) builds a :class:`~llmopt.engine.cost_model.CostModel`
    whose batch time is finite, positive, the same on a second call, and does not drop when a
    batch gains a prompt token, a decode request or decode context."""
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.model.batch import BatchShape

    where = f"cost model {name!r}"
    try:
        model = make_cost_model(name)
    except Exception as exc:
        return [f"{where}: does not build with default parameters ({type(exc).__name__}: {exc})"]
    shapes = [BatchShape.of(prompts, contexts) for prompts, contexts in
              [((1,), ()), ((500,), ()), ((), (10,)), ((200, 300), (1000, 2000)), ((), (4000,) * 64)]]
    problems = []
    for shape in shapes:
        t = model.batch_time(shape)
        if not (isinstance(t, float | int) and math.isfinite(t) and t > 0):
            problems.append(f"{where}: batch time {t!r} for {shape} is not a finite positive number")
            continue
        if model.batch_time(shape) != t:
            problems.append(f"{where}: batch time for {shape} differs between two calls")
        grown = [replace(shape, prefill_tokens=shape.prefill_tokens + 1,
                                     prefill_tokens_sq=shape.prefill_tokens_sq + 2 * shape.prefill_tokens + 1)
                 if shape.prefill_requests else shape,
                 replace(shape, decode_requests=shape.decode_requests + 1,
                                     decode_context=shape.decode_context + 100),
                 replace(shape, decode_context=shape.decode_context + 100)
                 if shape.decode_requests else shape]
        for g in grown:
            if model.batch_time(g) < t:
                problems.append(f"{where}: batch time drops from {shape} to the larger {g}")
    return problems


def check_trace_format(name: str) -> list[str]:
    """Trace format ``name`` resolves to a loader callable as ``loader(path, *, M=None, on_bad_row=...)``."""
    from llmopt.workloads.traces.formats import TRACE_FORMATS

    where = f"trace format {name!r}"
    try:
        loader = TRACE_FORMATS.get(name)
    except Exception as exc:
        return [f"{where}: does not resolve ({type(exc).__name__}: {exc})"]
    if not callable(loader):
        return [f"{where}: resolves to {type(loader).__name__}, not a loader"]
    try:
        inspect.signature(loader).bind("trace.csv", M=100, on_bad_row="error")
    except TypeError as exc:
        return [f"{where}: cannot be called as loader(path, M=..., on_bad_row=...): {exc}"]
    except ValueError:  # no signature (a builtin): nothing more to check
        pass
    return []


def check_router(name: str) -> list[str]:
    """Router ``name`` (default parameters) runs MC-SF on 3 workers over a small discrete and a small
    continuous instance: every request goes to a worker ``0 … K−1`` (the engine refuses anything else),
    the independent cluster checker accepts both runs, and a second run gives the same assignment
    (a seeded router re-seeds on ``reset``)."""
    import functools

    from llmopt.engine.cluster import simulate_cluster
    from llmopt.engine.cost_model import ConstantCostModel
    from llmopt.model.timed_instance import TimedInstance, TimedRequest
    from llmopt.policies import make_policy_spec
    from llmopt.policies.routers import make_router
    from llmopt.verify.cluster import check_cluster_schedule

    where = f"router {name!r}"
    try:
        router = make_router(name)
    except Exception as exc:
        return [f"{where}: does not build with default parameters ({type(exc).__name__}: {exc})"]
    discrete = Instance(12, tuple(Request(f"r{i}", i // 3, 1 + i % 3, 2 + (5 * i) % 7, 1, 10) for i in range(12)))
    timed = TimedInstance(12, tuple(TimedRequest(f"r{i}", 0.4 * i, 1 + i % 3, 2 + (5 * i) % 7, 1, 10)
                                    for i in range(12)))
    problems = []
    for inst, cost in ((discrete, None), (timed, ConstantCostModel(1.0))):
        try:
            runs = [simulate_cluster(inst, functools.partial(make_policy_spec, "mc-sf"), router, 3, cost_model=cost)
                    for _ in range(2)]
        except Exception as exc:
            problems.append(f"{where}: a 3-worker run fails ({type(exc).__name__}: {exc})")
            continue
        rep = check_cluster_schedule(inst, runs[0], cost)
        if not rep.ok:
            problems.append(f"{where}: the cluster checker rejects its run: {rep.violations[0]}")
        if dict(runs[0].assignment) != dict(runs[1].assignment):
            problems.append(f"{where}: two runs of the same instance assign requests differently")
    return problems


def check_study(name: str) -> list[str]:
    """Study ``name`` resolves to a :class:`~llmopt.bench.studies.Study` of that name whose module imports
    and defines ``run`` and ``report`` with the study signature (``run(out, *, seeds, quick, **options)``,
    ``report(out)``) and an ``OPTIONS`` mapping of option name to help text. Nothing is run."""
    import inspect

    from llmopt.bench.studies import STUDIES

    problems: list[str] = []
    try:
        study = STUDIES.get(name)
    except Exception as exc:  # noqa: BLE001 - report a broken entry, do not crash the check
        return [f"study {name!r} does not resolve: {exc}"]
    if getattr(study, "name", None) != name:
        problems.append(f"study {name!r} resolves to an object named {getattr(study, 'name', None)!r}")
        return problems
    try:
        module = study.load()
    except Exception as exc:  # noqa: BLE001
        return [f"study {name!r}: module {study.module!r} does not import: {exc}"]
    for attr in ("run", "report"):
        if not callable(getattr(module, attr, None)):
            problems.append(f"study {name!r}: module {study.module!r} has no callable {attr!r}")
    run = getattr(module, "run", None)
    if callable(run):
        params = inspect.signature(run).parameters
        for kw in ("seeds", "quick"):
            if kw not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
                problems.append(f"study {name!r}: run() takes no {kw!r} keyword")
    opts = getattr(module, "OPTIONS", {})
    if not isinstance(opts, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in opts.items()):
        problems.append(f"study {name!r}: OPTIONS must map option names to one line of help")
    return problems


#: Registry kind (as in :func:`llmopt.bench.plugins.registries`) → its conformance check, as the kind table names it.
CHECKS: dict[str, Any] = {kind: globals()[entry.check] for kind, entry in REGISTRY_TABLE.items()}


def check(kind: str, name: str) -> list[str]:
    """The problems of the item ``name`` of registry ``kind`` (``"policy"``, ``"formulation"``, ...): the
    check :data:`CHECKS` names for the kind; empty when it conforms.

    Raises
    ------
    KeyError
        For a kind no registry has.
    """
    return list(CHECKS[kind](name))


# --- plug-ins checked before they are trusted ---------------------------------------------------


def is_builtin(obj: Any) -> bool:
    """Whether ``obj`` (a registered class, factory or instance) ships with llmopt."""
    module = str(getattr(obj, "__module__", None) or getattr(type(obj), "__module__", ""))
    return module == "llmopt" or module.startswith("llmopt.")


def _cache_file() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "llmopt" / "conformance.json"


def _source_key(obj: Any) -> str:
    """What a cached verdict is valid for: the object's name, its source file's hash and llmopt's version."""
    import hashlib

    from llmopt._version import __version__

    target = obj if inspect.isclass(obj) or inspect.isfunction(obj) else type(obj)
    try:
        source = Path(inspect.getsourcefile(target) or "").read_bytes()
    except (OSError, TypeError):
        source = b""
    digest = hashlib.sha256(source).hexdigest()[:16]
    return f"{target.__module__}:{target.__qualname__}|{digest}|llmopt {__version__}"


def cached_check_formulation(name: str, progress: Any = None) -> list[str]:
    """:func:`check_formulation`, remembered per formulation source (``$XDG_CACHE_HOME/llmopt``,
    default ``~/.cache/llmopt``): a plug-in is checked once per version of its code. A cache that
    cannot be read or written only costs the check again."""
    from llmopt.formulations import FORMULATIONS

    key = f"{name}|{_source_key(FORMULATIONS.get(name))}"
    path = _cache_file()
    try:
        cache = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = {}
    if isinstance(cache, dict) and isinstance(cache.get(key), list):
        return [str(p) for p in cache[key]]
    if progress is not None:
        progress(f"checking plug-in formulation {name!r} on the reference instances (once per version of its code)")
    problems = check_formulation(name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        cache = cache if isinstance(cache, dict) else {}
        cache[key] = problems
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(cache, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass
    return problems


def formulation_trust_problems(name: str, progress: Any = None) -> list[str]:
    """Why formulation ``name``'s solver bound may not prove OPT: nothing for a built-in formulation (tested
    here) or one that does not declare itself ``exact``; else the problems of its conformance check, run once
    per version of its code (:func:`cached_check_formulation`; ``progress`` hears when it runs)."""
    from llmopt.formulations import FORMULATIONS, make_formulation

    if is_builtin(FORMULATIONS.get(name)) or not getattr(make_formulation(name), "exact", False):
        return []
    return cached_check_formulation(name, progress)
