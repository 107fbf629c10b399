"""The LP relaxation of any registered formulation, as a pipeline stage of its own (``llmopt solve --relax``
with a formulation other than J's).

The checker has no certificate for an arbitrary formulation's LP, so its value is reported as
*uncertified* and never joins the bound on OPT; the certified bounds are the bound stages'
(:mod:`llmopt.opt.bounds`).
"""

from __future__ import annotations

import time
from typing import Any

from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus

__all__ = ["formulation_lp"]


def formulation_lp(instance: Instance, formulation: str, solver: str, incumbent: int, *,
                   time_limit: float | None = None, deadline: float | None = None,
                   threads: int = 1) -> dict[str, Any]:
    """The LP relaxation of ``formulation`` over the start windows of a schedule of TEL ``incumbent``
    (uncertified).

    Parameters
    ----------
    instance : Instance
    formulation : str
        A registered formulation (:data:`llmopt.formulations.FORMULATIONS`).
    solver : str
        A registered solver with LP capability.
    incumbent : int
        TEL of a verified schedule; the windows are :func:`llmopt.model.windows.start_windows` of it.
    time_limit : float, optional
        Seconds for the solve.
    deadline : float, optional
        ``time.perf_counter()`` value by which the stage must end (a whole-command budget): a model
        build that ends past it is not solved (status ``time_limit``), and the solver gets it as its
        deadline.
    threads : int

    Returns
    -------
    dict
        ``formulation``, ``value`` (the LP optimum, ``None`` unless solved to optimality), ``status``
        (a :class:`~llmopt.model.result.SolveStatus` value, or ``"failed: …"`` when the formulation or
        the solver raised), ``certified`` (always ``False``) and, once built, ``model`` (its size).
    """
    from llmopt.formulations import make_formulation
    from llmopt.model.windows import start_windows
    from llmopt.solvers import get_solver

    out: dict[str, Any] = {"formulation": formulation, "value": None, "certified": False}
    if deadline is not None and time.perf_counter() >= deadline:
        return {**out, "status": SolveStatus.TIME_LIMIT.value}
    try:
        model = make_formulation(formulation).build(instance, start_windows(instance, incumbent)).relax()
        out["model"] = model.stats()
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0:
                return {**out, "status": SolveStatus.TIME_LIMIT.value}
            time_limit = left if time_limit is None else min(time_limit, left)
        res = get_solver(solver).solve(model, time_limit=time_limit, threads=threads, deadline=deadline)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # a broken plug-in formulation: say so, keep the certified bounds
        return {**out, "status": f"failed: {type(exc).__name__}: {exc}"}
    value = res.objective if res.status is SolveStatus.OPTIMAL else None
    return {**out, "value": value, "status": res.status.value}
