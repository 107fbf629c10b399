"""Capacity planning through the API (``llmopt capacity``): how many workers does each (policy, router)
need to meet a latency target? (:func:`llmopt.capacity.planning.plan_capacity` per pair.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmopt.api.errors import BadInput, check_known, check_number
from llmopt.api.instances import _check_time_unit, sample_trace
from llmopt.model.timed_instance import TimedInstance

__all__ = ["plan_capacity", "capacity_instance", "check_capacity_arguments", "CapacityPlan"]

#: Poisson arrivals per second when a trace is sampled with neither a rate nor its timestamps.
DEFAULT_RATE = 50.0


@dataclass(frozen=True)
class CapacityPlan:
    """What :func:`plan_capacity` found.

    Attributes
    ----------
    instance : TimedInstance
    cost_model : str
    results : list of (policy, router, CapacityResult, list of ClusterRun)
        One per (target, policy, router), targets outermost; the runs are every K simulated.
    rows : list of dict
        One table row per result (:func:`llmopt.report.capacity.capacity_rows`): the smallest K
        (``workers``, ``None`` when no K up to ``k_max`` meets the target), its latency, GPU-seconds
        and energy per request, and every K evaluated.
    """

    instance: TimedInstance
    cost_model: str
    results: list[tuple[str, str, Any, list[Any]]]
    rows: list[dict[str, Any]]

    @property
    def met(self) -> bool:
        """Whether every (policy, router, target) meets its target at some K up to ``k_max``."""
        return all(row["workers"] is not None for row in self.rows)


def check_capacity_arguments(*, policies: Sequence[str] = ("mc-sf",), routers: Sequence[str] = ("round-robin",),
                             targets: Sequence[str] = ("mean:200",), cost_model: str | None = None,
                             n: int | None = None, seed: int = 0, M: int | None = None, k_max: int = 64,
                             rate: float | None = None, use_timestamps: bool = False,
                             time_unit: str | None = None) -> list[Any]:
    """Check :func:`plan_capacity`'s and :func:`capacity_instance`'s arguments before any work; returns the
    parsed targets (:class:`~llmopt.capacity.planning.LatencyTarget`).

    Raises
    ------
    BadInput
        Naming the argument (a policy or router spec with a bad parameter included).
    """
    from llmopt.capacity.planning import LatencyTarget
    from llmopt.engine.cost_model import COST_MODELS, DEFAULT_COST_MODEL
    from llmopt.model.params import check_params
    from llmopt.policies import POLICIES, make_policy_spec, parse_policy_spec
    from llmopt.policies.routers import ROUTERS, make_router_spec, parse_router_spec

    check_number("n", n, minimum=1)
    check_number("seed", seed, minimum=0)
    check_number("M", M, minimum=2)
    check_number("k_max", k_max, minimum=1)
    check_number("rate", rate, minimum=0, strict=True)
    if rate is not None and use_timestamps:
        raise BadInput("give at most one of {rate} and {use_timestamps}", "rate", "use_timestamps")
    _check_time_unit(time_unit)
    if time_unit is not None and not use_timestamps:
        raise BadInput("{time_unit} applies to the trace's own timestamps ({use_timestamps}), not to {rate}",
                       "time_unit", "use_timestamps", "rate")
    try:
        parsed = [LatencyTarget.parse(t) for t in targets]
        names = [(parse_policy_spec(p)[0], "policies") for p in policies]
        names += [(parse_router_spec(r)[0], "routers") for r in routers]
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    for name, param in names:
        check_known(POLICIES if param == "policies" else ROUTERS, param, name)
    # Parameters too, before any work (`alpha=abc`, `alpha=1`): one line here, not a traceback from the engine.
    for param, specs, registry, parse, make in (
            ("policies", policies, POLICIES, parse_policy_spec, make_policy_spec),
            ("routers", routers, ROUTERS, parse_router_spec, make_router_spec)):
        for spec in specs:
            try:
                name, params = parse(spec)
                check_params(registry.kind, name, registry.get(name), params)
                make(spec)
            except (TypeError, ValueError) as exc:
                raise BadInput(f"{{{param}}} {spec!r}: {exc}", param) from None
    check_known(COST_MODELS, "cost_model", cost_model or DEFAULT_COST_MODEL)
    return parsed


def capacity_instance(path: str | Path, *, n: int = 1000, rate: float | None = None, use_timestamps: bool = False,
                      seed: int = 0, format: str | None = None, M: int = 16_492, on_bad_row: str = "drop",
                      time_unit: str | None = None) -> TimedInstance:
    """The instance ``llmopt capacity`` plans for: a continuous-time instance file (``.json``) as it is, or
    ``n`` requests drawn from a trace file (:func:`~llmopt.api.instances.sample_trace`; Poisson arrivals at
    ``rate``, default 50 per second, or the trace's own timestamps).

    Raises
    ------
    BadInput
        For a bad argument, a discrete or empty instance, or ``time_unit`` with an instance file.
    llmopt.model.instance.InstanceError, llmopt.workloads.traces.TraceError
        For a bad file (naming the file, row and field).
    """
    from llmopt.model.timed_instance import load_any_instance

    check_capacity_arguments(n=n, seed=seed, M=M, rate=rate, use_timestamps=use_timestamps, time_unit=time_unit)
    path = Path(path)
    if path.suffix.lower() != ".json":
        return sample_trace(path, n, seed, rate=None if use_timestamps else (DEFAULT_RATE if rate is None else rate),
                            use_timestamps=use_timestamps, format=format, M=M, on_bad_row=on_bad_row,
                            time_unit=time_unit).instance
    if time_unit is not None:
        raise BadInput(f"{{time_unit}} applies to a trace file's timestamps, not to an instance ({path})", "time_unit")
    inst = load_any_instance(path)
    _check_instance(inst, str(path))
    return inst  # type: ignore[return-value]


def _check_instance(inst: Any, where: str, *params: str) -> None:
    if not isinstance(inst, TimedInstance):
        raise BadInput(f"{where}: a discrete instance; capacity planning needs seconds (a continuous-time instance "
                       "or a trace file)", *params)
    if inst.n == 0:
        raise BadInput(f"{where}: the instance has no requests; there is no latency to plan workers for", *params)


def plan_capacity(instance: TimedInstance, *, policies: Sequence[str] = ("mc-sf",),
                  routers: Sequence[str] = ("round-robin",), targets: Sequence[str] = ("mean:200",),
                  cost_model: str | None = None, seed: int = 0, k_max: int = 64, exhaustive: bool = False,
                  progress: Callable[[str, str, Any, Any], None] | None = None) -> CapacityPlan:
    """The smallest number of workers K each (policy, router) needs to meet each latency target.

    For every target, policy and router (in that order), K is searched by doubling and bisection
    (:func:`llmopt.capacity.planning.smallest_workers`), or ``exhaustive``-ly K = 1, 2, ...; every K
    is one simulation of K workers verified by the cluster checker.

    Parameters
    ----------
    instance : TimedInstance
        Arrivals in seconds (:func:`capacity_instance` reads one from a trace or an instance file).
    policies, routers : sequence of str
        Registered specs (``"alpha-protection:alpha=0.2"``, ``"p2c:seed=3"``).
    targets : sequence of str
        ``STAT:SECONDS``: ``mean``, ``p50``, ``p90`` or ``p99`` of the latency, or the same prefixed
        ``ttft_`` or ``tbt_`` (``"ttft_p99:2"``).
    cost_model : str, optional
        Registered batch-time model (default ``"llama2-70b-a100-tp2"``).
    seed : int
        Seed of seeded policies and routers.
    k_max : int
        Largest K tried.
    exhaustive : bool
        Try every K instead of doubling and bisecting (no monotonicity assumed).
    progress : callable, optional
        ``progress(policy, router, target, run)``: once with ``run=None`` as a pair starts, then once
        per simulated K (a :class:`~llmopt.capacity.planning.ClusterRun`).

    Raises
    ------
    BadInput
        For a bad argument, a discrete or an empty instance.
    """
    from llmopt.capacity.planning import plan_capacity as _plan
    from llmopt.engine.cost_model import DEFAULT_COST_MODEL, make_cost_model
    from llmopt.report.capacity import capacity_rows

    parsed = check_capacity_arguments(policies=policies, routers=routers, targets=targets, cost_model=cost_model,
                                      seed=seed, k_max=k_max)
    _check_instance(instance, "{instance}", "instance")
    name = cost_model or DEFAULT_COST_MODEL
    cost = make_cost_model(name)
    results: list[tuple[str, str, Any, list[Any]]] = []
    for target in parsed:
        for p in policies:
            for r in routers:
                if progress is not None:
                    progress(p, r, target, None)

                def show(run: Any, p: str = p, r: str = r, target: Any = target) -> None:
                    if progress is not None:
                        progress(p, r, target, run)

                res, runs = _plan(instance, p, r, target, cost, seed=seed, k_max=k_max, exhaustive=exhaustive,
                                  progress=show)
                results.append((p, r, res, list(runs)))
    return CapacityPlan(instance, name, results, capacity_rows(results))
