"""SCIP adapter (``pyscipopt``, optional: ``pip install 'llmopt[scip]'``; the wheel ships SCIP itself).

Build. Columns become SCIP variables one ``addVar`` call each and rows one linear constraint each,
built from a ``{Term: coefficient}`` dict over the row's slice of the CSR matrix: PySCIPOpt has no call
that takes a whole sparse matrix, so one dict entry per nonzero is the least it forces. Measured once on
the J §5.1 AM1 seed-0 hindsight IP (n = 58, ``hindsight-ip`` with MC-SF's windows: 49,212 columns,
1,071 rows, 962,118 nonzeros): 0.56–0.60 s for the whole build (MIP or LP), load average 1.5–2 on 2 cores. Rows without
coefficients are not passed to SCIP (their bounds are checked here). The build checks the caller's
``deadline`` every :data:`CHECK_EVERY` rows and ends with status ``time_limit`` without solving once
it has passed.

Solve. SCIP runs in a worker thread (``optimizeNogil``) while the calling thread waits in short slices,
as in the HiGHS adapter: a Ctrl-C (or SIGTERM turned into ``KeyboardInterrupt`` by the CLI) or the
caller's ``deadline`` calls ``interruptSolve``, and the result carries the incumbent and bound found so
far with status ``interrupted`` (Ctrl-C) or ``time_limit`` (deadline). SCIP's own SIGINT handler is
switched off (``misc/catchctrlc``) so that the signal reaches Python. SCIP checks the interrupt flag
between nodes and LP iterations; if it has not stopped within :data:`STOP_GRACE_S` seconds the adapter
returns with the last incumbent and bound its event handler saw and leaves SCIP to stop in the background.

Threads. SCIP's branch-and-bound is single-threaded, so ``threads`` is accepted and ignored and the
adapter does not declare :attr:`~llmopt.solvers.base.Capability.THREADS`.

LPs. A model without integer columns is solved with presolve, propagation and heuristics off, so every
row stays an LP row and its dual (``getDualsolLinear``) belongs to the model as given; a row with one
variable also gets a variable fixed at 0, as SCIP otherwise turns it into a bound and its dual is lost
(found by the complementary-slackness test). SCIP's sign
convention is HiGHS's: for a minimisation, a binding ``<=`` row has a dual ``<= 0``.
"""

from __future__ import annotations

import threading
import time
from typing import Any, ClassVar

import numpy as np

from llmopt.model.canonical import CanonicalModel
from llmopt.model.result import SolveResult, SolveStatus
from llmopt.model.tolerance import FEASIBILITY_TOL
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

__all__ = ["ScipSolver", "status_of"]

#: Seconds between two progress lines during a solve.
PROGRESS_EVERY_S = 5.0
#: Seconds an interrupted solve may take to stop before the adapter returns without SCIP's final results.
STOP_GRACE_S = 1.0
#: The build checks the deadline every this many rows.
CHECK_EVERY = 500
#: Seconds between two waits of the calling thread (how soon a deadline or a Ctrl-C is acted upon).
WAIT_SLICE_S = 0.2

_MISSING_MESSAGE = "pyscipopt is not installed (pip install 'llmopt[scip]')"

#: SCIP's status strings (``Model.getStatus()``) → the project's status. ``gaplimit`` is the requested MIP gap
#: reached, which the other adapters report as optimal; statuses not listed (node, memory, solution limits,
#: unknown) become ``not_solved``; ``nodelimit`` is ``node_limit``.
_STATUS = {
    "optimal": SolveStatus.OPTIMAL,
    "gaplimit": SolveStatus.OPTIMAL,
    "infeasible": SolveStatus.INFEASIBLE,
    "unbounded": SolveStatus.UNBOUNDED,
    "inforunbd": SolveStatus.UNBOUNDED,  # as HiGHS's kUnboundedOrInfeasible
    "timelimit": SolveStatus.TIME_LIMIT,
    "nodelimit": SolveStatus.NODE_LIMIT,
    "userinterrupt": SolveStatus.INTERRUPTED,
    "terminate": SolveStatus.INTERRUPTED,
}


def status_of(scip_status: str) -> SolveStatus:
    """The :class:`SolveStatus` of a SCIP status string (``Model.getStatus()``).

    Parameters
    ----------
    scip_status : str
        E.g. ``"optimal"``, ``"timelimit"``, ``"userinterrupt"``.

    Returns
    -------
    SolveStatus
        ``not_solved`` for a status without a counterpart (node, memory or solution limits).
    """
    return _STATUS.get(scip_status, SolveStatus.NOT_SOLVED)


class _TooLate(Exception):
    """The caller's deadline passed before SCIP could start."""


class ScipSolver:
    """Solve a :class:`CanonicalModel` with SCIP (SoPlex for LPs, branch-and-cut for MIPs)."""

    info: ClassVar[SolverInfo] = SolverInfo(
        name="scip",
        package="pyscipopt",
        capabilities=frozenset({Capability.MIP, Capability.LP_DUALS, Capability.WARM_START, Capability.TIME_LIMIT,
                                Capability.INTERRUPT, Capability.NODE_LIMIT}),
        open_source=True,
    )

    def __init__(self, **options: object) -> None:
        """``options`` are SCIP parameter names and values (e.g. ``**{"presolving/maxrounds": 0}``), applied
        after llmopt's own settings."""
        self.options = dict(options)

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if package_installed("pyscipopt"):
            return True, ""
        return False, _MISSING_MESSAGE

    @classmethod
    def version(cls) -> str | None:
        return package_version("pyscipopt")

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
        """Solve ``model`` with SCIP.

        Parameters
        ----------
        model : CanonicalModel
            The model to solve (minimised).
        time_limit : float, optional
            SCIP's own limit (``limits/time``), cut to what is left before ``deadline``.
        mip_gap : float
            Relative gap at which SCIP may stop (``limits/gap``).
        threads : int
            Ignored: SCIP solves with one thread.
        warm_start : ndarray, optional
            A full primal vector handed to SCIP as a solution before the solve (ignored for LPs); a vector
            SCIP finds infeasible is dropped and the message says so.
        verbose : bool
            Show SCIP's log.
        progress : callable, optional
            Receives a line every :data:`PROGRESS_EVERY_S` seconds with the incumbent and bound.
        node_limit : int, optional
            ``limits/nodes``: stop after that many branch-and-bound nodes (status ``node_limit``).
        deadline : float, optional
            ``time.perf_counter()`` value by which the whole call must end: checked during the build (status
            ``time_limit`` without solving once it has passed) and enforced during the solve with
            ``interruptSolve``.

        Returns
        -------
        SolveResult
            ``duals`` are set for LPs solved to optimality (HiGHS sign convention).
        """
        ok, why = self.available()
        if not ok:
            return unavailable_result(self.info.name, why)
        import pyscipopt

        check_warm_start(model, warm_start)
        check_node_limit(node_limit)
        began = time.perf_counter()
        csr = model.A.tocsr()
        empty = np.diff(csr.indptr) == 0
        if np.any(empty & ((model.row_lower > FEASIBILITY_TOL) | (model.row_upper < -FEASIBILITY_TOL))):
            return finish(self.info.name, model, SolveStatus.INFEASIBLE, None, None, 0.0,
                          message="a constraint row without coefficients has infeasible bounds")
        try:
            m, xs, conss = _build(pyscipopt, model, csr, empty, deadline)
        except _TooLate as exc:
            return _too_late(model, began, str(exc))
        m.hideOutput(not verbose)
        m.setParam("misc/catchctrlc", False)  # the signal goes to Python, which interrupts SCIP (see module doc)
        m.setParam("randomization/randomseedshift", 0)
        if model.is_mip:
            m.setParam("limits/gap", float(mip_gap))
        else:
            # Keep every row an LP row so its dual belongs to the model as given.
            m.setPresolve(pyscipopt.SCIP_PARAMSETTING.OFF)
            m.setHeuristics(pyscipopt.SCIP_PARAMSETTING.OFF)
            m.disablePropagation()
        for key, value in self.options.items():
            m.setParam(key, value)
        message = ""
        if warm_start is not None and model.is_mip:
            sol = m.createSol()
            # A vector from another solver may miss an integer by about SCIP's own 1e-6 integrality tolerance.
            planted = np.asarray(warm_start, dtype=float)
            planted = np.where(model.integer, np.round(planted), planted)
            for var, val in zip(xs, planted.tolist()):
                if val != 0.0:
                    m.setSolVal(sol, var, val)
            # In SCIP's problem stage addSol stores any vector unchecked, so check it against the model first.
            if not m.checkSol(sol, printreason=False, original=True):
                m.freeSol(sol)
                message = "warm start rejected by SCIP (infeasible); "
            elif not m.addSol(sol, free=True):
                message = "warm start not stored by SCIP; "

        start = time.perf_counter()
        if deadline is not None and start >= deadline:
            return _too_late(model, began, "the deadline had passed before SCIP could start")
        limit = None if time_limit is None else max(float(time_limit), 0.0)
        if deadline is not None:
            limit = deadline - start if limit is None else min(limit, deadline - start)
        if limit is not None:
            m.setParam("limits/time", max(limit, 0.0))
        if node_limit is not None:
            m.setParam("limits/nodes", int(node_limit))

        latest: dict[str, float] = {}
        if model.is_mip:
            m.includeEventhdlr(_recorder(pyscipopt, latest), "llmopt_progress", "incumbent and bound for progress")
        stop, finished, error = _run(m, model, progress, start, deadline, latest)
        runtime = time.perf_counter() - start
        if error is not None:
            return finish(self.info.name, model, SolveStatus.NOT_SOLVED, None, None, runtime,
                          message=f"SCIP failed: {type(error).__name__}: {error}")
        if not finished:
            status = SolveStatus.INTERRUPTED if stop == "user" else SolveStatus.TIME_LIMIT
            bound = latest.get("dual")
            bound = bound + model.offset if bound is not None and model.is_mip and abs(bound) < 1e19 else None
            why = "interrupted by the user" if stop == "user" else "time limit (interrupted by llmopt)"
            return finish(self.info.name, model, status, None, bound, runtime,
                          message=f"{why}; SCIP left to stop in the background")
        return self._result(m, model, xs, conss, runtime, stop, message)

    def _result(self, m: Any, model: CanonicalModel, xs: list[Any], conss: list[Any], runtime: float, stop: str,
                message: str) -> SolveResult:
        scip_status = m.getStatus()
        st = status_of(scip_status)
        if stop == "user":
            st = SolveStatus.INTERRUPTED
        elif stop == "time" and st is SolveStatus.INTERRUPTED:
            st = SolveStatus.TIME_LIMIT
        x = None
        if m.getNSols() > 0 and st not in (SolveStatus.INFEASIBLE, SolveStatus.UNBOUNDED):
            best = m.getBestSol()
            x = np.array([m.getSolVal(best, v) for v in xs], dtype=float)
        bound: float | None = None
        duals = None
        if model.is_mip:
            if st in (SolveStatus.OPTIMAL, SolveStatus.TIME_LIMIT, SolveStatus.NODE_LIMIT, SolveStatus.INTERRUPTED,
                      SolveStatus.NOT_SOLVED):
                dual = float(m.getDualbound())
                bound = dual + model.offset if abs(dual) < m.infinity() else None
        elif st is SolveStatus.OPTIMAL and x is not None:
            bound = model.objective_value(x)
            duals = np.zeros(model.n_rows)
            for i, cons in conss:
                duals[i] = m.getDualsolLinear(cons)
        if stop == "user":
            message += f"interrupted by the user ({scip_status})"
        elif stop == "time":
            message += f"time limit (interrupted by llmopt; SCIP status {scip_status})"
        else:
            message += scip_status
        return finish(self.info.name, model, st, x, bound, runtime, duals=duals, message=message)


def _too_late(model: CanonicalModel, began: float, why: str) -> SolveResult:
    return finish("scip", model, SolveStatus.TIME_LIMIT, None, None, time.perf_counter() - began,
                  message=f"time limit: {why}")


def _build(pyscipopt: Any, model: CanonicalModel, csr: Any, empty: np.ndarray, deadline: float | None
           ) -> tuple[Any, list[Any], list[tuple[int, Any]]]:
    """The SCIP model of ``model``: its variables in column order and ``(row index, constraint)`` pairs.

    The objective's offset is left out (the adapter adds it to SCIP's bound; objectives are recomputed from
    ``x``). Raises :class:`_TooLate` when ``deadline`` passes during the build.
    """
    from pyscipopt.scip import Expr, ExprCons, Term

    m = pyscipopt.Model(model.name[:200] or "llmopt")
    m.hideOutput()
    inf = m.infinity()
    lower = np.clip(np.asarray(model.col_lower, dtype=float), -inf, inf).tolist()
    upper = np.clip(np.asarray(model.col_upper, dtype=float), -inf, inf).tolist()
    cost = np.asarray(model.c, dtype=float).tolist()
    integer = np.asarray(model.integer, dtype=bool).tolist()
    names = _names(model.col_blocks, model.n_cols, "x")
    xs = [m.addVar(name=names[j], vtype="I" if integer[j] else "C", lb=lower[j], ub=upper[j], obj=cost[j])
          for j in range(model.n_cols)]
    terms = [Term(v) for v in xs]
    indptr = csr.indptr.tolist()
    indices = csr.indices.tolist()
    data = csr.data.astype(float).tolist()
    rlo = [None if v == -np.inf else float(v) for v in np.asarray(model.row_lower, dtype=float).tolist()]
    rhi = [None if v == np.inf else float(v) for v in np.asarray(model.row_upper, dtype=float).tolist()]
    row_names = _names(model.row_blocks, model.n_rows, "r")
    skip = empty.tolist()
    # SCIP turns a one-variable row into a bound of its variable, and its dual is lost; in an LP each such row
    # also gets a variable fixed at 0 (presolve is off there, so it stays), which keeps the row an LP row.
    pad = m.addVar(name="llmopt_fixed_zero", vtype="C", lb=0.0, ub=0.0, obj=0.0) if not model.is_mip else None
    pad_term = None if pad is None else Term(pad)
    conss: list[tuple[int, Any]] = []
    for i in range(model.n_rows):
        if deadline is not None and i % CHECK_EVERY == 0 and time.perf_counter() >= deadline:
            raise _TooLate(f"the deadline passed while the SCIP model was built (row {i:,} of {model.n_rows:,}); "
                           "SCIP not started")
        if skip[i] or (rlo[i] is None and rhi[i] is None):
            continue
        a, b = indptr[i], indptr[i + 1]
        coefs = dict(zip([terms[k] for k in indices[a:b]], data[a:b]))
        if pad_term is not None and len(coefs) == 1:
            coefs[pad_term] = 1.0
        expr = Expr(coefs)
        conss.append((i, m.addCons(ExprCons(expr, rlo[i], rhi[i]), name=row_names[i])))
    if deadline is not None and time.perf_counter() >= deadline:
        raise _TooLate("the deadline passed while the SCIP model was built; SCIP not started")
    return m, xs, conss


def _names(blocks: tuple[Any, ...], size: int, prefix: str) -> list[str]:
    """Readable, unique names (``block[i]``): blocks tile the range, so a name appears once."""
    out = [f"{prefix}{i}" for i in range(size)]
    for b in blocks:
        for i in range(b.start, b.stop):
            out[i] = f"{b.name}[{i - b.start}]"
    return out


def _recorder(pyscipopt: Any, latest: dict[str, float]) -> Any:
    """An event handler that records SCIP's incumbent and bound in ``latest`` after each LP, node and new solution.

    It runs in SCIP's thread, where reading SCIP's state is safe; the waiting thread only reads the floats.
    """
    # LPSOLVED too: SCIP may spend minutes in the root's cut loop before the first node is solved.
    kind = pyscipopt.SCIP_EVENTTYPE
    events = kind.NODESOLVED | kind.BESTSOLFOUND | kind.LPSOLVED

    class Recorder(pyscipopt.Eventhdlr):  # type: ignore[misc]
        def eventinit(self) -> None:
            self.model.catchEvent(events, self)

        def eventexit(self) -> None:
            self.model.dropEvent(events, self)

        def eventexec(self, event: Any) -> None:
            latest["primal"] = float(self.model.getPrimalbound())
            latest["dual"] = float(self.model.getDualbound())

    return Recorder()


def _run(m: Any, model: CanonicalModel, progress: Progress | None, start: float, deadline: float | None,
         latest: dict[str, float]) -> tuple[str, bool, BaseException | None]:
    """Run ``m.optimizeNogil()`` in a worker thread and wait for it.

    Returns ``(stop, finished, error)``: ``stop`` is ``""`` (SCIP ended by itself), ``"user"`` (Ctrl-C)
    or ``"time"`` (the deadline passed and the solve was interrupted); ``finished`` whether SCIP has
    stopped (its results may be read); ``error`` an exception the solve raised.
    """
    done = threading.Event()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            m.optimizeNogil()
        except BaseException as exc:  # reported by the waiting thread
            errors.append(exc)
        finally:
            done.set()

    worker = threading.Thread(target=work, name="llmopt-scip", daemon=True)
    worker.start()
    next_report = start + PROGRESS_EVERY_S
    stop = ""
    try:
        while not done.wait(WAIT_SLICE_S):
            now = time.perf_counter()
            if deadline is not None and now >= deadline:
                stop = "time"
                break
            if progress is not None and now >= next_report:
                next_report = now + PROGRESS_EVERY_S
                progress(_progress_line(model, latest, now - start))
    except KeyboardInterrupt:
        stop = "user"
    if stop:
        m.interruptSolve()
        done.wait(STOP_GRACE_S)
    finished = done.is_set()
    return stop, finished, errors[0] if errors and finished else None


def _progress_line(model: CanonicalModel, latest: dict[str, float], elapsed: float) -> str:
    what = "MIP" if model.is_mip else "LP"
    if not latest:
        return f"{what} solve running (SCIP) for {elapsed:.0f} s (root relaxation)"
    inc, dual = latest["primal"] + model.offset, latest["dual"] + model.offset
    inc_s = f"{inc:.0f}" if abs(inc) < 1e19 else "none"
    dual_s = f"{dual:.1f}" if abs(dual) < 1e19 else "none yet"
    return f"{what} solve running (SCIP) for {elapsed:.0f} s: incumbent {inc_s}, bound {dual_s}"
