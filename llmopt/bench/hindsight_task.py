"""The ``hindsight`` task kind: what one task of a discrete-time suite computes and records (DESIGN §3).

A task is one ``(workload, parameters, seed)`` of a :class:`~llmopt.bench.suites.Suite`:
generate the instance, simulate every policy of the suite and re-verify each schedule
with the independent checker, compute (or bound) the hindsight OPT with
:func:`~llmopt.opt.hindsight.solve_hindsight`, and return one flat, plain-JSON record.
It is run through :func:`llmopt.bench.tasks.run_task`, a pure function of the suite and the
task (deterministic for a seed, DESIGN §4 inv. 3): executors may run it anywhere.

Ratios and their certificates, with ``TEL`` the reference policy's verified TEL:

* ``ratio_vs_opt = TEL / OPT`` only when OPT is proven, else ``None``;
* ``ratio_vs_incumbent = TEL / best found`` — best found ``>= OPT``, so this is a
  *lower* bound on the true ratio;
* ``ratio_vs_bound = TEL / certified lower bound`` — an *upper* bound on the true ratio;
* ``reference_is_opt``: ``True`` when the reference TEL equals the proven OPT,
  ``False`` when it is above OPT or above a schedule found, else ``None``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from llmopt.bench.kinds import TaskKind
from llmopt.bench.suites import Suite, Task
from llmopt.bench.tasks import resolve_workload
from llmopt.opt.defaults import possible_bounds

__all__ = ["KIND", "blank_record", "fill_record"]
_MODEL_STATS = ("cols", "int_cols", "rows", "nnz", "horizon", "windows", "classes", "formulation")


def blank_record(suite: Suite, task: Task) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "suite": suite.name,
        "workload": task.spec.workload,
        "params": dict(task.spec.params),
        "seed": task.seed,
        "instance": None,
        "n": None,
        "M": None,
        "reference": suite.reference,
    }
    for p in suite.policies:
        rec[f"tel_{p}"] = None
        rec[f"verified_{p}"] = None
        rec[f"sim_s_{p}"] = None
    rec.update({
        "tel": None,
        "opt": None,
        "status": None,
        "incumbent": None,
        "incumbent_source": None,
        "incumbent_starts": None,
        "bound": None,
        "bound_certificate": None,
        "gap": None,
        "ratio_vs_opt": None,
        "ratio_vs_incumbent": None,
        "ratio_vs_bound": None,
        "reference_is_opt": None,
        "solver": suite.solver,
        "formulation": suite.formulation,
        "windows": suite.windows,
        "bounds": list(suite.bounds),
        "bounds_run": [],
        "upper_bounds": list(suite.upper_bounds),
        "ip_time_limit": suite.ip_time_limit,
        "ip_node_limit": suite.ip_node_limit,
        "ip_time_capped": None,
        "search_evals": suite.search_evals,
        "lns_iterations": suite.lns_iterations,
        "cp_sat_seconds": suite.cp_sat_seconds,
        **{f"bound_{b}": None for b in possible_bounds(suite.bounds)},
        **{f"bound_{b}_verified": None for b in possible_bounds(suite.bounds)},
        "hindsight_errors": [],
        "hindsight_stage_s": {},
        "ip_message": None,
        **{f"model_{k}": None for k in _MODEL_STATS},
        "hindsight_runtime_s": None,
        "runtime_s": None,
        "warnings": [],
        "error": None,
    })
    return rec


def _hindsight(instance: Any, suite: Suite, seed: int, schedules: Mapping[str, Any]) -> Any:
    """The hindsight pipeline for one task, as the suite configures it."""
    from llmopt.opt.hindsight import solve_hindsight

    # No overall budget: a suite limits the IP solve alone, so every task gets the same IP limit.
    return solve_hindsight(
        instance,
        solver=suite.solver,
        formulation=suite.formulation,
        windows=suite.windows,
        bounds=tuple(suite.bounds),
        upper_bounds=tuple(suite.upper_bounds),
        time_limit=None,
        ip_time_limit=suite.ip_time_limit,
        ip_node_limit=suite.ip_node_limit,
        threads=1,  # one thread: with a node limit, the same rows on every machine
        seed=seed,
        search_evals=suite.search_evals,
        lns_iterations=suite.lns_iterations,
        cp_sat_seconds=suite.cp_sat_seconds,
        max_nnz=suite.max_nnz,
        schedules=schedules,
    )


def _simulate_policies(instance: Any, suite: Suite, rec: dict[str, Any]) -> dict[str, Any]:
    from llmopt.engine.discrete import EvictionLoopError, simulate
    from llmopt.policies import make_policy_spec
    from llmopt.verify.checker import check_schedule

    warnings: list[str] = rec["warnings"]
    simulated = {}
    for p in suite.policies:
        t0 = time.perf_counter()
        try:
            sched = simulate(instance, make_policy_spec(p, seed=rec["seed"]), loop_limit=suite.loop_limit)
        except Exception as exc:  # one failing policy must not cost the others or the OPT solve
            rec[f"verified_{p}"] = False
            warnings.append(f"policy {p}: {type(exc).__name__}: {exc}")
            if not isinstance(exc, EvictionLoopError):  # a loop is the policy's outcome (as in trace tasks);
                # any other exception means the task failed: an error (summary, exit status, --retry-errors)
                rec["error"] = rec["error"] or f"policy {p} raised {type(exc).__name__}: {exc}"
            continue
        rec[f"sim_s_{p}"] = round(time.perf_counter() - t0, 3)
        simulated[p] = sched
        report = check_schedule(instance, sched.starts, evictions=sched.evictions)
        verified = bool(report.ok) and report.tel == sched.tel
        rec[f"tel_{p}"] = sched.tel
        rec[f"verified_{p}"] = verified
        if not verified:
            why = (report.violations[0] if report.violations
                   else f"checker TEL {report.tel} != simulator {sched.tel}")
            warnings.append(f"policy {p}: schedule rejected by the checker: {why}")
    return simulated


def _record_hindsight(rec: dict[str, Any], h: Any) -> None:
    rec.update(
        opt=h.opt,
        status=h.status.value,
        incumbent=h.incumbent,
        incumbent_source=h.incumbent_source,
        # The best schedule itself, so a reader can re-check its TEL (and a proof of OPT rests on
        # a stored schedule): request id -> start step, in the instance's order.
        incumbent_starts=dict(h.starts) if h.starts else None,
        bound=h.bound,
        bound_certificate=h.bound_certificate,
        gap=h.gap,
        ip_message=h.message or None,
        hindsight_runtime_s=round(float(h.runtime_s), 3),
        ip_time_capped=h.ip_time_capped,
    )
    if h.ip_time_capped:
        rec["warnings"].append(f"the IP stopped at its {rec['ip_time_limit']}-s safety cap before its node limit "
                               f"({rec['ip_node_limit']}): this row depends on the machine's speed and load")
    for k, v in dict(h.model_stats or {}).items():
        rec[f"model_{k}"] = v
    rec["hindsight_errors"] = [str(e) for e in h.errors]
    rec["hindsight_stage_s"] = {str(k): round(float(v), 3) for k, v in dict(h.stage_s).items()}
    rec["bounds_run"] = [b.name for b in h.bounds]
    if getattr(h, "bounds_skipped", ()):  # auto's stages that would not fit the time (absent otherwise)
        rec["bounds_skipped"] = [str(s) for s in h.bounds_skipped]
    for b in h.bounds:  # every bound stage's certified value, and whether it reproduced its claim
        rec[f"bound_{b.name}"] = b.value
        rec[f"bound_{b.name}_verified"] = b.verified
    for name, tel in dict(h.heuristics or {}).items():
        rec[f"heuristic_{name}"] = tel


def _fill_ratios(rec: dict[str, Any], suite: Suite) -> None:
    opt, incumbent, bound = rec["opt"], rec["incumbent"], rec["bound"]
    warnings: list[str] = rec["warnings"]
    # Invariant 1: bound <= OPT <= TEL of every feasible schedule.
    for p in suite.policies:
        tel_p = rec[f"tel_{p}"]
        if not rec[f"verified_{p}"]:
            continue
        if opt is not None and tel_p < opt:
            warnings.append(f"invariant violated: policy {p} TEL {tel_p} < proven OPT {opt}")
        if bound is not None and tel_p < bound:
            warnings.append(f"invariant violated: policy {p} TEL {tel_p} < certified bound {bound}")

    ref = suite.reference
    if not rec[f"verified_{ref}"]:
        rec["error"] = rec["error"] or f"CheckFailed: reference policy {ref!r} schedule was rejected; no ratio reported"
        return
    tel = rec[f"tel_{ref}"]
    rec["tel"] = tel
    if opt is not None and opt > 0:
        rec["ratio_vs_opt"] = tel / opt
    if incumbent is not None and incumbent > 0:
        rec["ratio_vs_incumbent"] = tel / incumbent
    if bound is not None and bound > 0:
        rec["ratio_vs_bound"] = tel / bound
    if opt is not None:
        rec["reference_is_opt"] = tel == opt
    elif incumbent is not None and tel > incumbent:
        rec["reference_is_opt"] = False


def fill_record(rec: dict[str, Any], suite: Suite, task: Task) -> None:
    instance = resolve_workload(task.spec.workload)(task.seed, **dict(task.spec.params))
    rec.update(instance=instance.name or f"{task.spec.workload}/seed={task.seed}", n=instance.n, M=instance.M)
    simulated = _simulate_policies(instance, suite, rec)
    _record_hindsight(rec, _hindsight(instance, suite, task.seed, simulated))
    _fill_ratios(rec, suite)


#: The ``hindsight`` task kind (registered in :data:`llmopt.bench.tasks.TASK_KINDS`).
KIND = TaskKind("hindsight", blank_record, fill_record, "llmopt.report.summary:write_hindsight_report")
