"""The public Python API: the few entry points a notebook needs (re-exported by ``import llmopt``).

Everything here is a thin front to one wing; nothing is computed that the command line does not
compute the same way. Heavy modules (SciPy, the solvers, the hindsight pipeline, plotting) are
imported only when the function that needs them is called, so ``import llmopt`` stays fast.

Example (the README's "Python" section, with its output)::

    import llmopt

    trace = llmopt.load_trace("../shared/data/traces/lmsys_chat_1m_words_in256_out256.csv", on_bad_row="drop")
    timed = llmopt.sample(trace, n=1000, seed=0, rate=50.0)            # arrivals in seconds, M = 16,492
    for policy in ("mc-sf", "fcfs"):
        run = llmopt.simulate(timed, policy)                             # the continuous engine
        print(policy, f"{run.mean_latency:.1f} s", llmopt.check(timed, run).ok)

    inst = llmopt.discretize(llmopt.sample(trace, n=200, seed=0, M=2000), step_seconds=0.05)
    res = llmopt.solve(inst, bounds=("energy", "lp-colgen"), time_limit=60)
    tel = llmopt.simulate(inst, "mc-sf").tel
    print(f"{res.bound} <= OPT <= {res.incumbent} ({res.status.value}); MC-SF/OPT <= {tel / res.bound:.3f}")
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmopt._version import PUBLIC_NAMES
from llmopt.model.instance import Instance, Request, load_instance  # noqa: F401  (public names)
from llmopt.model.schedule import Schedule  # noqa: F401  (public name)
from llmopt.model.timed_instance import TimedInstance, TimedRequest, load_any_instance  # noqa: F401

if TYPE_CHECKING:
    from llmopt.model.registry import Registry
    from llmopt.opt.hindsight import HindsightResult
    from llmopt.workloads.traces.formats import Trace

__all__ = list(PUBLIC_NAMES)  # the one list of public names, shared with the package root


def __getattr__(name: str) -> Any:
    # TimedSchedule holds NumPy arrays: imported on first use, so a discrete command stays NumPy-free
    if name == "TimedSchedule":
        from llmopt.model.timed_schedule import TimedSchedule

        return TimedSchedule
    raise AttributeError(f"module 'llmopt.api' has no attribute {name!r}")


def load_trace(path: str | Path, format: str | None = None, *, M: int | None = None,
               on_bad_row: str = "error", time_unit: str | None = None) -> Trace:
    """Read a request trace (LMSYS-Chat-1M, arXiv summarization, Azure, vidur, Mooncake).

    Parameters
    ----------
    path : path
        A CSV or JSON-lines file (gzip allowed); see ``shared/data/SOURCES.md`` for the staged traces.
    format : str, optional
        A registered format (detected from the columns when omitted).
    M : int, optional
        KV capacity: rows with ``prompt + output > M`` are handled by ``on_bad_row``.
    on_bad_row : {"error", "clamp", "drop"}
    time_unit : {"s", "ms", "us"}, optional
        Unit of the trace's numeric timestamps, as ``llmopt trace --time-unit`` (default: the format's
        own, seconds; milliseconds for Mooncake). Without it, timestamps that look like a smaller unit
        (e.g. Unix milliseconds read as seconds) give the CLI's warning as a :class:`UserWarning`.

    Raises
    ------
    llmopt.workloads.traces.TraceError
        Naming the file, the row and the field of the first bad row; or a ``time_unit`` for a trace
        with no numeric timestamps.
    ValueError
        For an unknown ``time_unit``.
    """
    import warnings

    from llmopt.workloads.traces.formats import load_trace as _load
    from llmopt.workloads.traces.sampling import TIME_UNITS, apply_time_unit

    if time_unit is not None and time_unit not in TIME_UNITS:  # before the file is read, like the CLI
        raise ValueError(f"time unit must be one of {', '.join(TIME_UNITS)}, got {time_unit!r}")
    trace, warning = apply_time_unit(_load(path, format, M=M, on_bad_row=on_bad_row), time_unit)
    if warning is not None:
        warnings.warn(warning, UserWarning, stacklevel=2)
    return trace


def sample(trace: Trace, n: int, seed: int, *, rate: float | None = 50.0, use_timestamps: bool = False,
           M: int | None = None) -> TimedInstance:
    """``n`` requests drawn from ``trace`` as a continuous-time instance (seeded, reproducible).

    ``rate`` gives Poisson arrivals per second; ``use_timestamps=True`` (with ``rate=None``) keeps the
    trace's own. ``M`` defaults to the papers' 16,492 tokens (Llama2-70B on 2×A100).
    """
    from llmopt.workloads.traces.formats import DEFAULT_M
    from llmopt.workloads.traces.sampling import sample_instance

    return sample_instance(trace, n, seed, rate=None if use_timestamps else rate, use_timestamps=use_timestamps,
                           M=DEFAULT_M if M is None else M)


def discretize(instance: TimedInstance, step_seconds: float) -> Instance:
    """The discrete instance (DESIGN §1) with arrival step ``floor(arrival / step_seconds)``, for the
    hindsight IP and its bounds (:func:`llmopt.workloads.traces.to_discrete_instance`)."""
    from llmopt.workloads.traces.sampling import to_discrete_instance

    return to_discrete_instance(instance, step_seconds)


def make_instance(workload: str, seed: int, **params: Any) -> Instance | TimedInstance:
    """The instance of a registered workload (``llmopt.registries()["workload"]``) for ``seed``."""
    from llmopt.workloads import make_instance as _make

    return _make(workload, seed, **params)


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
        ``max_num_seqs``, ``max_num_batched_tokens`` and the KV ``block_size`` of one worker
        (:func:`llmopt.engine.discrete.simulate`; default none, token-exact), recorded on the schedule.

    Returns
    -------
    Schedule, TimedSchedule or ClusterSchedule
    """
    if workers is not None or router is not None:
        import functools

        from llmopt.engine.cluster import simulate_cluster
        from llmopt.policies import make_policy_spec

        limited = [k for k in ("max_num_seqs", "max_num_batched_tokens", "block_size")
                   if options.get(k) not in (None, 1 if k == "block_size" else None)]
        if limited:
            raise ValueError(f"{', '.join(limited)} apply to one worker; the multi-worker engine has no batch limits "
                             "or KV blocks yet (drop workers/router)")
        for k in ("max_num_seqs", "max_num_batched_tokens", "block_size"):
            options.pop(k, None)  # at their defaults
        factory = functools.partial(make_policy_spec, policy) if isinstance(policy, str) else policy
        timed = isinstance(instance, TimedInstance)
        if not timed and cost_model is not None:
            raise ValueError("cost_model applies to a TimedInstance (arrivals in seconds); a discrete instance "
                             "takes one step per batch")
        from llmopt.policies.routers import make_router_spec

        rt = make_router_spec(router or "round-robin") if router is None or isinstance(router, str) else router
        return simulate_cluster(instance, factory, rt, 1 if workers is None else workers,
                                cost_model=_cost_model(cost_model) if timed else None, **options)
    if isinstance(policy, str):
        from llmopt.policies import make_policy_spec

        policy = make_policy_spec(policy)
    if isinstance(instance, TimedInstance):
        from llmopt.engine.continuous import simulate_continuous

        return simulate_continuous(instance, policy, _cost_model(cost_model), **options)
    if cost_model is not None:
        raise ValueError("cost_model applies to a TimedInstance (arrivals in seconds); a discrete instance "
                         "takes one step per batch")
    from llmopt.engine.discrete import simulate as _simulate

    return _simulate(instance, policy, **options)


def _cost_model(cost_model: str | Any | None) -> Any:
    from llmopt.engine.cost_model import DEFAULT_COST_MODEL, make_cost_model

    if cost_model is None or isinstance(cost_model, str):
        return make_cost_model(cost_model or DEFAULT_COST_MODEL)
    return cost_model


def solve(instance: Instance, *, time_limit: float | None = 60.0, bounds: Sequence[str] | None = None,
          **options: Any) -> HindsightResult:
    """Bracket the hindsight optimum of a discrete instance: ``bound <= OPT <= incumbent``.

    Runs the hindsight pipeline of ``llmopt solve`` (upper-bound stages, windows, formulation,
    solver, certified bound stages; :func:`llmopt.opt.hindsight.solve_hindsight`). Every bound in the
    result is re-verified by the independent checker; ``status`` says whether OPT is proven.

    Parameters
    ----------
    instance : Instance
    time_limit : float, optional
        Seconds for the whole pipeline (``None``: no limit).
    bounds : sequence of str, optional
        Registered bound stages (default ``("auto",)``: energy, with the zone LP up to 40 requests
        or the column-generation LP up to 2,000; ``("energy", "lp-colgen")`` scale to thousands).
    **options
        Passed to :func:`~llmopt.opt.hindsight.solve_hindsight` (``formulation``, ``solver``,
        ``upper_bounds``, ``solve_ip``, ...).
    """
    if not isinstance(instance, Instance):
        raise TypeError(f"solve needs a discrete Instance, got {type(instance).__name__}; a TimedInstance "
                        "becomes one with llmopt.workloads.traces.to_discrete_instance(timed, step_seconds)")
    from llmopt.opt.hindsight import solve_hindsight

    if bounds is not None:
        options["bounds"] = tuple(bounds)
    return solve_hindsight(instance, time_limit=time_limit, **options)


def check(instance: Instance | TimedInstance, schedule: Any, *,
          cost_model: str | Any | None = None) -> Any:
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

    Returns
    -------
    CheckReport or TimedCheckReport
        ``ok``, ``violations`` and the recomputed TEL (discrete) or mean latency (continuous time). A
        multi-worker run goes to :func:`llmopt.verify.cluster.check_cluster_schedule`.

    Raises
    ------
    llmopt.model.schedule_file.ScheduleFileError
        For a mapping ``llmopt check`` would refuse, with the same message (naming ``schedule``
        and the field).
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
        if timed and cost_model is None and named is None:
            from llmopt.model.schedule_file import ScheduleFileError

            raise ScheduleFileError("schedule: no field 'cost_model'; pass cost_model=")
        model = _cost_model(cost_model if cost_model is not None else named) if timed else None
        return check_cluster_schedule(instance, schedule, model)
    if isinstance(instance, TimedInstance):
        return _check_timed(instance, schedule, cost_model)
    if not isinstance(instance, Instance):
        raise TypeError(f"check needs an Instance or a TimedInstance, got {type(instance).__name__}")
    from llmopt.verify.checker import check_schedule

    if isinstance(schedule, Schedule):
        return check_schedule(instance, schedule.starts, evictions=schedule.evictions, max_violations=None,
                              limits=None if schedule.limits.is_default else schedule.limits)
    if isinstance(schedule, Mapping):
        from llmopt.model.schedule_file import discrete_schedule

        starts, evictions = discrete_schedule(schedule)
        return check_schedule(instance, starts, evictions=evictions, max_violations=None,
                              limits=schedule.get("limits"))
    _refuse_solver_vector(schedule)
    from llmopt.opt.hindsight import HindsightResult

    if isinstance(schedule, HindsightResult):  # the IP's schedules never evict
        return check_schedule(instance, schedule.starts, max_violations=None)
    from llmopt.model.timed_schedule import TimedSchedule

    if isinstance(schedule, TimedSchedule):
        raise TypeError("a TimedSchedule is checked against a TimedInstance")
    raise TypeError(f"cannot check a {type(schedule).__name__}: give a Schedule, TimedSchedule, ClusterSchedule, "
                    "the result of llmopt.solve, or a schedule file's mapping ({'starts': {id: step}, ...})")


def _refuse_solver_vector(schedule: Any) -> None:
    from llmopt.model.result import SolveResult

    if isinstance(schedule, SolveResult):
        raise TypeError("a SolveResult is the solver's vector x, not a schedule; check the result of "
                        "llmopt.solve (its starts), or a Schedule")


def _check_timed(instance: TimedInstance, schedule: Any, cost_model: str | Any | None) -> Any:
    """:func:`check` for a continuous-time instance: a TimedSchedule or a schedule file's mapping."""
    from collections.abc import Mapping

    from llmopt.model.timed_schedule import TimedSchedule
    from llmopt.verify.timed import check_timed_schedule

    if isinstance(schedule, Mapping):
        from llmopt.model.schedule_file import ScheduleFileError, timed_schedule

        fields = timed_schedule(schedule)
        name = cost_model if cost_model is not None else fields["cost_model"]
        if name is None:
            raise ScheduleFileError("schedule: no field 'cost_model'; pass cost_model=")
        return check_timed_schedule(instance, fields["starts"], fields["batch_start"], fields["batch_duration"],
                                    _cost_model(name), evictions=fields["evictions"], stalls=fields["stalls"],
                                    limits=schedule.get("limits"))
    if isinstance(schedule, TimedSchedule):
        model = _cost_model(cost_model if cost_model is not None else schedule.cost_model)
        return check_timed_schedule(instance, schedule.starts, schedule.batch_start, schedule.batch_duration,
                                    model, evictions=schedule.evictions, stalls=schedule.stalls,
                                    limits=None if schedule.limits.is_default else schedule.limits)
    _refuse_solver_vector(schedule)
    raise TypeError(f"a {type(schedule).__name__} is checked against a discrete Instance, not a TimedInstance")


def run_suite(suite: str | Any, out_dir: str | Path | None = None, *, workers: int | None = None,
              progress: bool = True, allow_results: bool = False, **options: Any) -> Any:
    """Run a registered benchmark suite (resumable) and write its report; returns the summary table.

    Like ``llmopt bench run``: the run goes to ``runs/<suite>`` (in the working directory) unless
    ``out_dir`` says otherwise, and a task that failed is counted, not hidden.

    Parameters
    ----------
    suite : str or Suite
        A registered name (``llmopt.registries()["suite"]``) or a :class:`~llmopt.bench.suites.Suite`.
    out_dir : path, optional
        The results folder (default ``runs/<suite>``).
    workers : int, optional
        Tasks at once (default: every CPU).
    progress : bool
        A progress bar on a terminal, else one line per finished task.
    allow_results : bool
        Allow ``out_dir`` inside the checkout's committed ``results/`` folder (rebuilding the reference
        output on purpose, as the CLI's explicit ``--out results/...`` does); refused otherwise.
    **options
        Passed to :func:`llmopt.bench.harness.run_suite` (``executor``, ``time_limit``, ``retry_errors``, ...).

    Returns
    -------
    pandas.DataFrame
        The summary (as in ``summary.csv``). ``df.attrs`` holds ``out`` (the folder), ``errors`` (tasks
        whose latest record has an error, as ``llmopt bench run`` counts them for its exit status 1),
        ``missing`` (tasks with no record), ``failed`` (one ``(instance, seed, error)`` per failed task)
        and ``message`` (the CLI's one-line account of them, ``""`` when every task succeeded).

    Raises
    ------
    llmopt.bench.store.HarnessError
        If ``out_dir`` is a committed results folder and ``allow_results`` is false (nothing is written),
        or the folder holds another suite's results.
    """
    from llmopt.bench.harness import default_out_dir, refuse_committed_results, task_failures
    from llmopt.bench.harness import run_suite as _run
    from llmopt.bench.suites import Suite, get_suite
    from llmopt.report.summary import write_report

    s = suite if isinstance(suite, Suite) else get_suite(suite)
    out = Path(out_dir) if out_dir is not None else default_out_dir(s.name)
    refuse_committed_results(out, allow=allow_results)
    _run(s, out, workers=workers, progress=progress, **options)
    df = write_report(out, s)
    failures = task_failures(out, s)
    df.attrs.update(out=out, errors=len(failures.failed), missing=failures.missing, message=failures.message(),
                    failed=[(r.get("instance"), r.get("seed"), r["error"]) for r in failures.failed])
    return df


def registries() -> dict[str, Registry[Any]]:
    """Every registry by kind (policy, workload, solver, bound, suite, formulation, ...)."""
    from llmopt.bench.plugins import registries as _registries

    return _registries()


def run_study(name: str, out: str | Path | None = None, *, quick: bool = False,
              seeds: Sequence[int] | None = None, **options: Any) -> list[str]:
    """Run a registered study (``llmopt study list``) and write its files and ``manifest.json``.

    Parameters
    ----------
    name : str
        The study's name in :data:`llmopt.bench.studies.STUDIES`.
    out : str or Path, optional
        Output folder; default ``runs/<name>``, as ``llmopt study run`` (``results/`` only when named).
    quick : bool
        The study's short form.
    seeds : sequence of int, optional
        Seeds, where the study has them (default: the study's own).
    **options
        The study's own options (its module's ``OPTIONS``).

    Returns
    -------
    list of str
        The files written, ``manifest.json`` last.
    """
    from llmopt.bench.studies import run_study as _run

    return _run(name, out, quick=quick, seeds=seeds, **options)
