"""The hindsight optimum through the API: :func:`solve` (``llmopt solve``) and what its command prints
beside it (:func:`uncertified_lp` for ``--relax`` with a formulation of its own).

A third-party formulation that declares itself exact proves OPT only after its conformance check
(:func:`llmopt.bench.plugins.conformance.cached_check_formulation`); one that fails it gives a
:class:`UserWarning` and its solver's bound is not used as a proof.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from llmopt.api.errors import BadInput, SolverUnavailable, check_known, check_number
from llmopt.model.instance import Instance

if TYPE_CHECKING:
    from llmopt.opt.hindsight import HindsightResult

__all__ = ["solve", "check_solve_arguments", "uncertified_lp", "DEFAULT_FORMULATION", "DEFAULT_WINDOWS"]

DEFAULT_FORMULATION = "hindsight-ip"
DEFAULT_WINDOWS = "upper-bound"

#: numeric options of :func:`solve` → (minimum, strictly above it)
_NUMBERS: dict[str, tuple[float, bool]] = {
    "time_limit": (0, True), "threads": (1, False), "seed": (0, False), "search_evals": (0, False),
    "lns_iterations": (0, False), "cp_sat_seconds": (0, True), "max_nnz": (1, False),
}


def check_solve_arguments(*, solver: str | None = None, formulation: str | None = None, windows: str | None = None,
                          bounds: Sequence[str] | None = None, upper_bounds: Sequence[str] | None = None,
                          **numbers: float | int | None) -> None:
    """Check :func:`solve`'s arguments before any work (``llmopt solve`` calls it before reading the file).

    Parameters
    ----------
    solver, formulation, windows : str, optional
        Registered names (``None``: the default).
    bounds, upper_bounds : sequence of str, optional
        Registered bound stages (or ``"auto"``), upper-bound stages or policies.
    **numbers
        ``time_limit``, ``threads``, ``seed``, ``search_evals``, ``lns_iterations``, ``cp_sat_seconds``,
        ``max_nnz``; ``None`` is left to the default.

    Raises
    ------
    BadInput
        Naming the argument; :class:`SolverUnavailable` for a known solver that cannot run here.
    """
    from llmopt.formulations import FORMULATIONS
    from llmopt.model.windows import WINDOWS
    from llmopt.opt.bounds import BOUNDS
    from llmopt.opt.defaults import AUTO_BOUNDS
    from llmopt.opt.upper_bounds import UPPER_BOUNDS
    from llmopt.policies import POLICIES
    from llmopt.solvers import SOLVERS, solver_status

    for key, (minimum, strict) in _NUMBERS.items():
        check_number(key, numbers.get(key), minimum=minimum, strict=strict)
    if solver is not None:
        if solver not in SOLVERS:
            raise BadInput(f"unknown solver {solver!r}; known: {', '.join(SOLVERS.names())}")
        ok, why = solver_status(solver)
        if not ok:
            raise SolverUnavailable(f"solver {solver!r} is unavailable: {why}")
    if formulation is not None:
        check_known(FORMULATIONS, "formulation", formulation)
    if windows is not None:
        check_known(WINDOWS, "windows", windows)
    for b in bounds or ():
        if b != AUTO_BOUNDS:
            check_known(BOUNDS, "bounds", b)
    for name in upper_bounds or ():
        if name not in UPPER_BOUNDS and name not in POLICIES:
            known = ", ".join(sorted(set(UPPER_BOUNDS.names()) | set(POLICIES.names())))
            raise BadInput(f"{{upper_bounds}}: unknown upper-bound stage {name!r}; known: {known}", "upper_bounds")


def solve(instance: Instance, *, time_limit: float | None = 60.0, bounds: Sequence[str] | None = None,
          upper_bounds: Sequence[str] | None = None, solver: str | None = None, formulation: str | None = None,
          windows: str | None = None, relax: bool = False, progress: Callable[[str], None] | None = None,
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
    upper_bounds : sequence of str, optional
        Upper-bound stages or policies (default: MC-SF, FCFS and the local search).
    solver, formulation, windows : str, optional
        Registered names (default: the default solver, ``"hindsight-ip"``, ``"upper-bound"``).
    relax : bool
        Lower bounds only: the pipeline without its IP (``llmopt solve --relax``).
    progress : callable, optional
        Receives one line per stage.
    **options
        Passed to :func:`~llmopt.opt.hindsight.solve_hindsight` (``threads``, ``seed``, ``search_evals``,
        ``lns_iterations``, ``cp_sat_seconds``, ``max_nnz``, ``trust_exact``, ...).

    Raises
    ------
    BadInput
        For a bad argument (:func:`check_solve_arguments`) or a formulation that cannot model ``instance``.
    TypeError
        For a :class:`~llmopt.model.timed_instance.TimedInstance`.
    llmopt.opt.hindsight.PipelineInterrupted
        Interrupted before any schedule was found.
    """
    if not isinstance(instance, Instance):
        raise TypeError(f"solve needs a discrete Instance, got {type(instance).__name__}; a TimedInstance "
                        "becomes one with llmopt.workloads.traces.to_discrete_instance(timed, step_seconds)")
    check_solve_arguments(solver=solver, formulation=formulation, windows=windows, bounds=bounds,
                          upper_bounds=upper_bounds, time_limit=time_limit,
                          **{k: v for k, v in options.items() if k in _NUMBERS})
    from llmopt.formulations import make_formulation
    from llmopt.opt.hindsight import solve_hindsight

    relax = relax or not options.pop("solve_ip", True)
    formulation = formulation or DEFAULT_FORMULATION
    accepts = getattr(make_formulation(formulation), "accepts", None)
    if not relax and accepts is not None and (why := accepts(instance)) is not None:
        raise BadInput(f"{{formulation}} {formulation}: cannot model {{instance}}: {why}", "formulation", "instance")
    if "trust_exact" not in options:
        options["trust_exact"] = _plugin_formulation_trusted(formulation, relax, progress)
    for key, value in (("bounds", bounds), ("upper_bounds", upper_bounds)):
        if value is not None:
            options[key] = tuple(value)
    for key, value in (("solver", solver), ("windows", windows)):
        if value is not None:
            options[key] = value
    return solve_hindsight(instance, formulation=formulation, time_limit=time_limit, progress=progress,
                           solve_ip=not relax, **options)


def _plugin_formulation_trusted(name: str, relax: bool, progress: Callable[[str], None] | None) -> bool:
    """Whether formulation ``name``'s solver bound may prove OPT (:func:`~llmopt.bench.plugins.conformance.
    formulation_trust_problems`); a plug-in that fails its check gives a :class:`UserWarning`."""
    import warnings

    from llmopt.bench.plugins.conformance import formulation_trust_problems

    if relax:
        return True
    problems = formulation_trust_problems(name, progress)
    if problems:
        warnings.warn(f"plug-in formulation {name!r} declares itself exact but fails its conformance check "
                      f"({problems[0]}{f'; {len(problems) - 1} more' if len(problems) > 1 else ''}); its solver "
                      "bound will not be used as a proof of OPT", UserWarning, stacklevel=3)
    return not problems


def uncertified_lp(instance: Instance, result: HindsightResult, *, formulation: str, solver: str | None = None,
                   deadline: float | None = None, threads: int = 1) -> dict[str, Any] | None:
    """For ``solve(..., relax=True)`` with a formulation other than the default: that formulation's LP
    relaxation over the windows of ``result``'s best schedule, labelled uncertified (the checker has no
    certificate for it); ``None`` for the default formulation or an interrupted run.

    Parameters
    ----------
    instance : Instance
    result : HindsightResult
        What :func:`solve` returned.
    formulation, solver : str
        As given to :func:`solve`.
    deadline : float, optional
        ``time.perf_counter()`` value by which the stage must end (the whole command's budget).
    threads : int

    Returns
    -------
    dict or None
        :func:`llmopt.opt.relaxation.formulation_lp`'s ``value`` and ``status``.
    """
    from llmopt.model.result import SolveStatus
    from llmopt.opt.relaxation import formulation_lp
    from llmopt.solvers import DEFAULT_SOLVER

    if formulation == DEFAULT_FORMULATION or result.status is SolveStatus.INTERRUPTED:
        return None
    return formulation_lp(instance, formulation, solver or DEFAULT_SOLVER, result.incumbent, deadline=deadline,
                          threads=threads)
