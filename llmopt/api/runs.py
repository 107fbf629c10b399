"""Runs and their verdicts: :func:`simulate` (``llmopt simulate``) and :func:`check` (``llmopt check``)."""

from __future__ import annotations

from typing import Any

from llmopt.api.errors import BadInput
from llmopt.model.instance import Instance
from llmopt.model.schedule_file import ScheduleFileError
from llmopt.model.timed_instance import TimedInstance

__all__ = ["simulate", "check", "resolve_cost_model", "MissingCostModel"]


class MissingCostModel(BadInput, ScheduleFileError):
    """A continuous-time schedule that names no cost model, checked without one."""


def simulate(instance: Instance | TimedInstance, policy: str | Any, *, cost_model: str | Any | None = None,
             workers: int | None = None, router: str | Any | None = None, **options: Any) -> Any:
    """Run a policy on an instance: the discrete engine for an :class:`Instance`, the continuous one
    (batches timed by ``cost_model``) for a :class:`TimedInstance`; with ``workers`` or ``router``, the
    multi-worker engine (:func:`llmopt.engine.cluster.simulate_cluster`: each worker its own KV cache,
    batch clock and copy of the policy).

    Parameters
    ----------
    instance : Instance or TimedInstance
    policy : str or policy object
        A registered name or spec (``"mc-sf"``, ``"alpha-protection:alpha=0.2,beta=0.1"``) or an object
        following :mod:`llmopt.policies.base`'s protocol.
    cost_model : str or CostModel, optional
        Continuous time only; a registered name or an object (default ``"llama2-70b-a100-tp2"``).
    workers : int, optional
        Number of workers K (default 1 when ``router`` is given).
    router : str or router object, optional
        A registered router spec (``"round-robin"`` by default, ``"jsq"``, ``"p2c:seed=3"``, …).
    **options
        Passed to the engine (``visibility``, ``loop_limit``, ...), among them the batch limits
        ``max_num_seqs``, ``max_num_batched_tokens`` and the KV ``block_size`` of one worker — of each
        worker with ``workers``/``router`` — (:func:`llmopt.engine.discrete.simulate`; default none,
        token-exact), recorded on the schedule.

    Returns
    -------
    Schedule, TimedSchedule or ClusterSchedule
    """
    if workers is not None or router is not None:
        import functools

        from llmopt.engine.cluster import simulate_cluster
        from llmopt.policies import make_policy_spec

        factory = functools.partial(make_policy_spec, policy) if isinstance(policy, str) else policy
        timed = isinstance(instance, TimedInstance)
        if not timed and cost_model is not None:
            raise ValueError("cost_model applies to a TimedInstance (arrivals in seconds); a discrete instance "
                             "takes one step per batch")
        from llmopt.policies.routers import make_router_spec

        rt = make_router_spec(router or "round-robin") if router is None or isinstance(router, str) else router
        return simulate_cluster(instance, factory, rt, 1 if workers is None else workers,
                                cost_model=resolve_cost_model(cost_model) if timed else None, **options)
    if isinstance(policy, str):
        from llmopt.policies import make_policy_spec

        policy = make_policy_spec(policy)
    if isinstance(instance, TimedInstance):
        from llmopt.engine.continuous import simulate_continuous

        return simulate_continuous(instance, policy, resolve_cost_model(cost_model), **options)
    if cost_model is not None:
        raise ValueError("cost_model applies to a TimedInstance (arrivals in seconds); a discrete instance "
                         "takes one step per batch")
    from llmopt.engine.discrete import simulate as _simulate

    return _simulate(instance, policy, **options)


def resolve_cost_model(cost_model: str | Any | None) -> Any:
    """A registered cost model by name (default ``"llama2-70b-a100-tp2"``), or ``cost_model`` itself if it is
    an object.

    Raises
    ------
    BadInput
        For an unknown name (``cost_model: unknown cost model 'x'; known: ...``).
    """
    from llmopt.api.errors import check_known
    from llmopt.engine.cost_model import COST_MODELS, DEFAULT_COST_MODEL, make_cost_model

    if cost_model is None or isinstance(cost_model, str):
        name = cost_model or DEFAULT_COST_MODEL
        check_known(COST_MODELS, "cost_model", name)
        return make_cost_model(name)
    return cost_model


def check(instance: Instance | TimedInstance, schedule: Any, *, cost_model: str | Any | None = None,
          max_violations: int | None = None, source: str = "schedule") -> Any:
    """Re-verify a schedule from the instance alone with the independent checker (:mod:`llmopt.verify`),
    answering as ``llmopt check`` does.

    Parameters
    ----------
    instance : Instance or TimedInstance
    schedule : Schedule, TimedSchedule, ClusterSchedule, HindsightResult or mapping
        A simulated run; the result of :func:`solve` (its best schedule, ``starts``); or a schedule
        file's mapping, read by the same rules as ``llmopt check`` (``{"starts": {id: step},
        "evictions": [...]}``, or for a continuous-time instance what ``llmopt simulate --json``
        writes: ``starts``, ``batch_start``, ``batch_duration``, ...); a multi-worker run's mapping
        (``K``, ``assignment``, ``workers``: what ``llmopt simulate --workers K --json`` writes).
    cost_model : str or CostModel, optional
        Continuous time only (default: the one the run or the mapping names).
    max_violations : int, optional
        Stop listing violations of a discrete schedule after this many (default: list them all).
    source : str
        How a message names the mapping (``llmopt check`` gives the file's path).

    Returns
    -------
    CheckReport or TimedCheckReport
        ``ok``, ``violations`` and the recomputed TEL (discrete) or mean latency (continuous time). A
        multi-worker run goes to :func:`llmopt.verify.cluster.check_cluster_schedule`.

    Raises
    ------
    llmopt.model.schedule_file.ScheduleFileError
        For a mapping ``llmopt check`` would refuse, with the same message (naming ``source``
        and the field).
    BadInput
        For an unknown cost model.
    TypeError
        For a schedule of the other clock, or a raw solver ``SolveResult`` (a vector ``x``, not a
        schedule: check the result of :func:`solve`).
    """
    from collections.abc import Mapping

    from llmopt.model.cluster_schedule import ClusterSchedule
    from llmopt.model.schedule_file import is_cluster_mapping

    if isinstance(schedule, ClusterSchedule) or is_cluster_mapping(schedule):
        from llmopt.verify.cluster import check_cluster_schedule

        timed = isinstance(instance, TimedInstance)
        named = schedule.get("cost_model") if isinstance(schedule, Mapping) else schedule.cost_model
        model = _named_cost_model(cost_model, named, source) if timed else None
        return check_cluster_schedule(instance, schedule, model)
    if isinstance(instance, TimedInstance):
        return _check_timed(instance, schedule, cost_model, source)
    if not isinstance(instance, Instance):
        raise TypeError(f"check needs an Instance or a TimedInstance, got {type(instance).__name__}")
    from llmopt.model.schedule import Schedule
    from llmopt.verify.checker import check_schedule

    if isinstance(schedule, Schedule):
        return check_schedule(instance, schedule.starts, evictions=schedule.evictions, max_violations=max_violations,
                              limits=None if schedule.limits.is_default else schedule.limits, chunks=schedule.chunks)
    if isinstance(schedule, Mapping):
        from llmopt.model.schedule_file import discrete_schedule

        starts, evictions = discrete_schedule(schedule, source)
        return check_schedule(instance, starts, evictions=evictions, max_violations=max_violations,
                              limits=schedule.get("limits"), chunks=schedule.get("chunks"))
    _refuse_solver_vector(schedule)
    from llmopt.opt.hindsight import HindsightResult

    if isinstance(schedule, HindsightResult):  # the IP's schedules never evict
        return check_schedule(instance, schedule.starts, max_violations=max_violations)
    from llmopt.model.timed_schedule import TimedSchedule

    if isinstance(schedule, TimedSchedule):
        raise TypeError("a TimedSchedule is checked against a TimedInstance")
    raise TypeError(f"cannot check a {type(schedule).__name__}: give a Schedule, TimedSchedule, ClusterSchedule, "
                    "the result of llmopt.solve, or a schedule file's mapping ({'starts': {id: step}, ...})")


def _named_cost_model(given: str | Any | None, named: str | None, source: str) -> Any:
    """The cost model a continuous-time check uses: ``given``, else the one the schedule names."""
    if given is None and named is None:
        raise MissingCostModel(f"{source}: no field 'cost_model'; pass {{cost_model}}", "cost_model")
    return resolve_cost_model(given if given is not None else named)


def _refuse_solver_vector(schedule: Any) -> None:
    from llmopt.model.result import SolveResult

    if isinstance(schedule, SolveResult):
        raise TypeError("a SolveResult is the solver's vector x, not a schedule; check the result of "
                        "llmopt.solve (its starts), or a Schedule")


def _check_timed(instance: TimedInstance, schedule: Any, cost_model: str | Any | None, source: str) -> Any:
    """:func:`check` for a continuous-time instance: a TimedSchedule or a schedule file's mapping."""
    from collections.abc import Mapping

    from llmopt.model.timed_schedule import TimedSchedule
    from llmopt.verify.timed import check_timed_run, check_timed_schedule

    if isinstance(schedule, Mapping):
        from llmopt.model.schedule_file import timed_schedule

        fields = timed_schedule(schedule, source)
        return check_timed_schedule(instance, fields["starts"], fields["batch_start"], fields["batch_duration"],
                                    _named_cost_model(cost_model, fields["cost_model"], source),
                                    evictions=fields["evictions"], stalls=fields["stalls"],
                                    limits=schedule.get("limits"), chunks=fields["chunks"], paused=fields["paused"],
                                    eviction_starts=fields["eviction_starts"])
    if isinstance(schedule, TimedSchedule):
        return check_timed_run(instance, schedule, _named_cost_model(cost_model, schedule.cost_model, source))
    _refuse_solver_vector(schedule)
    raise TypeError(f"a {type(schedule).__name__} is checked against a discrete Instance, not a TimedInstance")
