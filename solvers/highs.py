"""HiGHS adapter (``highspy``), the open-source default.

The solve runs in HiGHS's own thread (``Highs.startSolve``) while this thread waits in
short slices, so a Ctrl-C (or SIGTERM turned into ``KeyboardInterrupt`` by the CLI)
cancels the solve within about a second and the result carries the incumbent and bound
found so far with status ``interrupted``. The same loop enforces a caller's hard
``deadline`` (HiGHS's own time limit misses its setup phase on large models: a
9M-nonzero model overran a 22 s limit by 14 s) and prints a progress line every
:data:`PROGRESS_EVERY_S` seconds when a ``progress`` callback is given; a deadline that has
already passed once the model is handed over ends the call with status ``time_limit`` before
HiGHS starts.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from llmopt.model.canonical import CanonicalModel
from llmopt.model.result import SolveResult, SolveStatus
from llmopt.solvers.base import (
    Capability,
    Progress,
    SolverInfo,
    check_node_limit,
    check_warm_start,
    finish,
    package_installed,
    package_version,
    unavailable_result,
)

__all__ = ["HighsSolver", "node_limited_highs", "LP_PRESOLVE", "PRESOLVE_NNZ_LIMIT", "new_highs", "highs_lp",
           "solve_still_running"]

#: Above this many nonzeros the MIP presolve is switched off. Measured once by hand on
#: Arrival-Model-1 instances (M = 40): at n = 58 (962k nonzeros) presolve took 21.7 s,
#: reduced nothing and overran a 10 s time limit; at n = 10–12 (≤ 50k nonzeros) it halved
#: the solve time (20 s with presolve vs 39–49 s without).
PRESOLVE_NNZ_LIMIT = 200_000

#: LPs are solved without presolve. Measured on this project's LPs (LP relaxation of (1)–(4)
#: and the dual LP (22)–(24) of Arrival-Model instances, 0.36–0.96M nonzeros): presolve off
#: took 0.59–0.98× the time of presolve on (it reduces nothing), and highspy 1.16.0's presolve
#: ran past 90 s without checking its time limit on a 2M-row, 2-column LP that takes 2.4 s
#: without it (highspy 1.15.1: 3.6 s either way). ``benchmarks/highs_presolve.py`` re-measures
#: (table in ``results/perf/highs-presolve``); ``HighsSolver(presolve="on")`` restores it.
LP_PRESOLVE = "off"

#: Seconds between two progress lines during a solve.
PROGRESS_EVERY_S = 5.0
#: Seconds a cancelled solve may take to stop before the adapter returns without its results.
STOP_GRACE_S = 1.0


class HighsSolver:
    """Solve a :class:`CanonicalModel` with HiGHS (simplex for LPs, branch-and-cut for MIPs)."""

    info: ClassVar[SolverInfo] = SolverInfo(
        name="highs",
        package="highspy",
        capabilities=frozenset(Capability),
        open_source=True,
    )

    def __init__(self, **options: object) -> None:
        """``options`` are HiGHS option names and values (e.g. ``presolve="off"``), applied
        after llmopt's own settings."""
        self.options = dict(options)

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if package_installed("highspy"):
            return True, ""
        return False, "highspy is not installed (pip install highspy)"

    @classmethod
    def version(cls) -> str | None:
        return package_version("highspy")

    def _settings(self, model: CanonicalModel) -> dict[str, object]:
        """llmopt's tuning for this model, then the caller's options on top."""
        tuned: dict[str, object] = {}
        if not model.is_mip:
            tuned["presolve"] = LP_PRESOLVE
        elif model.nnz > PRESOLVE_NNZ_LIMIT:
            tuned["presolve"] = "off"
        return {**tuned, **self.options}

    def solve(
        self,
        model: CanonicalModel,
        time_limit: float | None = None,
        mip_gap: float = 1e-9,
        threads: int = 1,
        warm_start: np.ndarray | None = None,
        verbose: bool = False,
        progress: Progress | None = None,
        deadline: float | None = None,
        node_limit: int | None = None,
    ) -> SolveResult:
        ok, why = self.available()
        if not ok:
            return unavailable_result(self.info.name, why)
        import highspy

        check_warm_start(model, warm_start)
        check_node_limit(node_limit)
        waited_from = time.perf_counter()
        if not _wait_for_earlier_solve(highspy, waited_from, time_limit):
            return finish(self.info.name, model, SolveStatus.NOT_SOLVED, None, None,
                          time.perf_counter() - waited_from,
                          message="HiGHS is still stopping an earlier cancelled solve (highspy runs one at a "
                                  "time) and the time limit passed while waiting")
        if time_limit is not None:
            time_limit = max(0.0, time_limit - (time.perf_counter() - waited_from))
        h = new_highs(highspy)
        h.setOptionValue("output_flag", bool(verbose))
        if time_limit is not None:
            h.setOptionValue("time_limit", max(float(time_limit), 0.0))
        h.setOptionValue("mip_rel_gap", float(mip_gap))
        h.setOptionValue("threads", int(threads))
        h.setOptionValue("random_seed", 0)
        if node_limit is not None:
            h.setOptionValue("mip_max_nodes", int(node_limit))
        for key, value in self._settings(model).items():
            if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:  # type: ignore[arg-type]
                raise ValueError(f"HiGHS rejected option {key}={value!r}")
        h.passModel(highs_lp(highspy, model))
        if warm_start is not None and model.is_mip:
            sol = highspy.HighsSolution()
            sol.col_value = list(np.asarray(warm_start, dtype=float))
            sol.value_valid = True
            h.setSolution(sol)

        start = time.perf_counter()
        if deadline is not None and start >= deadline:  # e.g. a model build that used up the whole budget
            return finish(self.info.name, model, SolveStatus.TIME_LIMIT, None, None, start - waited_from,
                          message="time limit: the deadline had passed before HiGHS could start")
        stop, finished, latest = _run(h, model, progress, start, deadline)
        runtime = time.perf_counter() - start
        status = SolveStatus.INTERRUPTED if stop == "user" else SolveStatus.TIME_LIMIT
        if not finished:
            # HiGHS is still unwinding in its thread: report only what its callbacks said.
            dual = latest.get("dual")
            bound = dual if model.is_mip and dual is not None and np.isfinite(dual) else None
            why = "interrupted by the user" if stop == "user" else "time limit (cancelled by llmopt)"
            return finish(self.info.name, model, status, None, bound, runtime,
                          message=f"{why}; HiGHS left to stop in the background")
        res = self._result(highspy, h, model, runtime, stop == "user")
        if stop == "time" and res.status is SolveStatus.INTERRUPTED:
            res = replace(res, status=SolveStatus.TIME_LIMIT, message="time limit (cancelled by llmopt)")
        elif (node_limit is not None and stop == "" and model.is_mip and res.status is SolveStatus.NOT_SOLVED
              and h.getModelStatus() == highspy.HighsModelStatus.kSolutionLimit
              and h.getInfo().mip_node_count >= node_limit):
            # HiGHS reports its node limit as a "solution limit"; the bound it has is a valid MIP bound.
            res = replace(res, status=SolveStatus.NODE_LIMIT, message=f"node limit ({node_limit} nodes) reached")
        return res

    def _result(self, highspy: Any, h: Any, model: CanonicalModel, runtime: float, interrupted: bool) -> SolveResult:
        status = h.getModelStatus()
        info = h.getInfo()
        MS = highspy.HighsModelStatus
        interrupt_codes = {MS.kInterrupt, getattr(MS, "kHighsInterrupt", MS.kInterrupt)}
        has_primal = info.primal_solution_status == 2  # kSolutionStatusFeasible
        x = np.array(h.getSolution().col_value) if has_primal else None
        duals = None
        bound: float | None = None
        if status == MS.kOptimal and not interrupted:
            st = SolveStatus.OPTIMAL
            if model.is_mip:
                bound = float(info.mip_dual_bound)
            else:
                duals = np.array(h.getSolution().row_dual)
                bound = float(info.objective_function_value)
        elif interrupted or status in interrupt_codes or status in (
            MS.kTimeLimit, MS.kIterationLimit, MS.kSolutionLimit
        ):
            if interrupted or status in interrupt_codes:
                st = SolveStatus.INTERRUPTED
            elif status == MS.kTimeLimit:
                st = SolveStatus.TIME_LIMIT
            else:
                st = SolveStatus.NOT_SOLVED
            if model.is_mip and np.isfinite(info.mip_dual_bound):
                bound = float(info.mip_dual_bound)
        elif status == MS.kInfeasible:
            st = SolveStatus.INFEASIBLE
        elif status in (MS.kUnbounded, MS.kUnboundedOrInfeasible):
            st = SolveStatus.UNBOUNDED
        else:
            st = SolveStatus.NOT_SOLVED
        if not model.is_mip and st is not SolveStatus.OPTIMAL:
            bound = None  # an unfinished simplex run proves no bound
        message = h.modelStatusToString(status)
        if interrupted:
            message = f"interrupted by the user ({message})"
        return finish(self.info.name, model, st, x, bound, runtime, duals=duals, message=message)


_STDOUT_LOCK = threading.Lock()


def new_highs(highspy: Any) -> Any:
    """A new ``highspy.Highs`` object whose construction prints nothing.

    From highspy 1.16 the C++ constructor writes its banner ("Running HiGHS ...") to the
    process's standard output before any option can be set, which corrupts ``--json`` output
    and piped results. The banner is dropped by pointing file descriptor 1 at the null device
    for the duration of the constructor only; Python's buffered stdout is flushed first so
    that none of our own output falls into that window.
    """
    with _STDOUT_LOCK:
        try:
            sys.stdout.flush()
            saved = os.dup(1)
        except (OSError, ValueError):  # no usable stdout (closed, or not a real descriptor)
            return highspy.Highs()
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, 1)
                return highspy.Highs()
            finally:
                os.dup2(saved, 1)
                os.close(devnull)
        finally:
            os.close(saved)


def solve_still_running() -> bool:
    """Whether a solve this process cancelled is still unwinding in HiGHS's thread (``False`` when
    highspy was never imported: this never imports it)."""
    import sys

    highspy = sys.modules.get("highspy")
    return highspy is not None and bool(new_highs(highspy).is_solver_running())


def _wait_for_earlier_solve(highspy: Any, start: float, time_limit: float | None) -> bool:
    """Wait until no earlier solve of this process is still running; ``False`` if the time limit passed.

    highspy keeps the lock of its threaded solve at class level and resets HiGHS's global scheduler
    when a solve ends, so a solve cancelled by :func:`_run` that is still unwinding must finish
    before another starts. A Ctrl-C while waiting propagates (nothing has been solved yet).
    """
    probe = new_highs(highspy)
    while probe.is_solver_running():
        if time_limit is not None and time.perf_counter() - start >= time_limit:
            return False
        time.sleep(0.1)
    return True


def highs_lp(highspy: Any, model: CanonicalModel) -> Any:
    """``model`` as a ``highspy.HighsLp`` (columns, rows, costs, bounds, integrality and the objective's offset).

    For callers that keep a live ``Highs`` object (warm-started LPs, added cuts): ``h.passModel(highs_lp(highspy,
    model))``. Infinite bounds become HiGHS's own infinity.
    """
    A = model.A.tocsc()
    lp = highspy.HighsLp()
    lp.num_col_ = model.n_cols
    lp.num_row_ = model.n_rows
    lp.col_cost_ = np.asarray(model.c, dtype=float)
    lp.col_lower_ = np.asarray(model.col_lower, dtype=float)
    lp.col_upper_ = np.asarray(model.col_upper, dtype=float)
    lp.row_lower_ = np.where(np.isinf(model.row_lower), -highspy.kHighsInf, model.row_lower)
    lp.row_upper_ = np.where(np.isinf(model.row_upper), highspy.kHighsInf, model.row_upper)
    lp.offset_ = float(model.offset)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data.astype(float)
    if model.is_mip:
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if f else highspy.HighsVarType.kContinuous for f in model.integer
        ]
    return lp


def _run(h: Any, model: CanonicalModel, progress: Progress | None, start: float, deadline: float | None
         ) -> tuple[str, bool, dict[str, float]]:
    """Run the solve in HiGHS's thread and wait for it.

    Returns ``(stop, finished, latest)``: ``stop`` is ``""`` (HiGHS ended by itself), ``"user"``
    (Ctrl-C) or ``"time"`` (the caller's hard ``deadline`` passed — HiGHS's own clock checks miss
    its setup phase on large models — and the solve was cancelled); ``finished`` whether HiGHS
    has stopped (its results may be read); ``latest`` the last incumbent/bound its MIP callbacks
    reported.
    """
    latest: dict[str, float] = {}
    h.HandleUserInterrupt = True  # lets cancelSolve() stop simplex, IPM and MIP
    if model.is_mip:
        def record(event: Any) -> None:
            latest["primal"] = float(event.data_out.mip_primal_bound)
            latest["dual"] = float(event.data_out.mip_dual_bound)

        h.cbMipInterrupt += record
    h.startSolve()
    next_report = start + PROGRESS_EVERY_S
    stop = ""
    try:
        while True:
            done, _ = h.wait(0.2)
            if done:
                return "", True, latest
            now = time.perf_counter()
            if deadline is not None and now >= deadline:
                stop = "time"
                break
            if progress is not None and now >= next_report:
                next_report = now + PROGRESS_EVERY_S
                progress(_progress_line(model, latest, now - start))
    except KeyboardInterrupt:
        stop = "user"
    h.cancelSolve()
    # HiGHS checks the flag at its next callback; in its setup phase that can take seconds, so wait at
    # most STOP_GRACE_S and otherwise leave the cancelled solve to stop in its own thread.
    done, _ = h.wait(STOP_GRACE_S)
    return stop, bool(done), latest


def _progress_line(model: CanonicalModel, latest: dict[str, float], elapsed: float) -> str:
    what = "MIP" if model.is_mip else "LP"
    if not latest:
        return f"{what} solve running for {elapsed:.0f} s (root relaxation)"
    inc, dual = latest["primal"], latest["dual"]
    inc_s = f"{inc:.0f}" if np.isfinite(inc) and abs(inc) < 1e30 else "none"
    dual_s = f"{dual:.1f}" if np.isfinite(dual) and abs(dual) < 1e30 else "none yet"
    return f"{what} solve running for {elapsed:.0f} s: incumbent {inc_s}, bound {dual_s}"


def node_limited_highs(nodes: int) -> str:
    """The registered name of HiGHS stopped after ``nodes`` branch-and-bound nodes and by no clock (one thread,
    seed 0, as every llmopt HiGHS solve), registering it on first use. Its result depends on the model alone,
    not on the machine's speed or load, so a row solved with it is the same on every rerun."""
    from llmopt.solvers import SOLVERS

    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
        raise ValueError(f"nodes must be an integer >= 1, got {nodes!r}")
    name = f"highs-max-nodes-{nodes}"
    if name not in SOLVERS:
        class NodeLimitedHighs(HighsSolver):
            def __init__(self, **options: Any) -> None:
                super().__init__(**({"mip_max_nodes": nodes} | options))

        SOLVERS.register(name, NodeLimitedHighs, doc=f"HiGHS limited to {nodes} branch-and-bound nodes, no clock")
    return name
