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

import llmopt
from llmopt.model.instance import Instance, Request, load_instance  # noqa: F401  (public names)
from llmopt.model.schedule import Schedule  # noqa: F401  (public name)
from llmopt.model.timed_instance import TimedInstance, TimedRequest, load_any_instance  # noqa: F401
from llmopt.model.timed_schedule import TimedSchedule

if TYPE_CHECKING:
    from llmopt.model.registry import Registry
    from llmopt.opt.hindsight import HindsightResult
    from llmopt.workloads.traces.formats import Trace

__all__ = list(llmopt.__all__)  # the one list of public names is the package's


def load_trace(path: str | Path, format: str | None = None, *, M: int | None = None,
               on_bad_row: str = "error") -> Trace:
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

    Raises
    ------
    llmopt.workloads.traces.TraceError
        Naming the file, the row and the field of the first bad row.
    """
    from llmopt.workloads.traces.formats import load_trace as _load

    return _load(path, format, M=M, on_bad_row=on_bad_row)


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
        Passed to the engine (``visibility``, ``loop_limit``, ...).

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
        return simulate_cluster(instance, factory, router or "round-robin", 1 if workers is None else workers,
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
    """Re-verify a schedule from the instance alone with the independent checker (:mod:`llmopt.verify`).

    A continuous-time schedule is checked against ``cost_model`` (default: the one the run names).
    Returns the checker's report (``ok``, ``violations``, and the recomputed TEL or mean latency). A
    multi-worker run (``ClusterSchedule``) goes to :func:`llmopt.verify.cluster.check_cluster_schedule`.
    """
    from llmopt.model.cluster_schedule import ClusterSchedule

    if isinstance(schedule, ClusterSchedule):
        from llmopt.verify.cluster import check_cluster_schedule

        timed = isinstance(instance, TimedInstance)
        model = _cost_model(cost_model if cost_model is not None else schedule.cost_model) if timed else None
        return check_cluster_schedule(instance, schedule, model)
    if isinstance(schedule, TimedSchedule):
        if not isinstance(instance, TimedInstance):
            raise TypeError("a TimedSchedule is checked against a TimedInstance")
        from llmopt.verify.timed import check_timed_schedule

        model = _cost_model(cost_model if cost_model is not None else schedule.cost_model)
        return check_timed_schedule(instance, schedule.starts, schedule.batch_start, schedule.batch_duration,
                                    model, evictions=schedule.evictions, stalls=schedule.stalls)
    if not isinstance(instance, Instance):
        raise TypeError("a Schedule is checked against a discrete Instance")
    from llmopt.verify.checker import check_schedule

    return check_schedule(instance, schedule.starts, evictions=schedule.evictions)


def run_suite(suite: str | Any, out_dir: str | Path | None = None, *, workers: int | None = None,
              progress: bool = True, **options: Any) -> Any:
    """Run a registered benchmark suite (resumable) and write its report; returns the summary table.

    ``out_dir`` defaults to ``results/<suite>``; ``options`` go to
    :func:`llmopt.bench.harness.run_suite` (``executor``, ``time_limit``, ...).
    """
    from llmopt.bench.harness import run_suite as _run
    from llmopt.bench.report import write_report
    from llmopt.bench.suites import Suite, get_suite

    s = suite if isinstance(suite, Suite) else get_suite(suite)
    out = Path(out_dir) if out_dir is not None else Path("results") / s.name
    _run(s, out, workers=workers, progress=progress, **options)
    return write_report(out, s)


def registries() -> dict[str, Registry[Any]]:
    """Every registry by kind (policy, workload, solver, bound, suite, formulation, ...)."""
    from llmopt.bench.plugins import registries as _registries

    return _registries()
