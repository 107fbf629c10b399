"""CBC adapter through PuLP's bundled binary (``pulp.PULP_CBC_CMD``).

PuLP writes the model to an MPS file, runs the ``cbc`` executable and reads its
solution file back. PuLP collapses CBC's outcome into a coarse ``(status, sol_status)``
pair — a run stopped by the time limit with an incumbent comes back as
``LpStatusOptimal`` with ``LpSolutionIntegerFeasible`` — so this adapter also keeps the
first line of CBC's solution file (``"Optimal - objective value …"``, ``"Stopped on time
- objective value …"``, ``"Stopped on time (no integer solution - continuous used) …"``,
``"Infeasible …"``, ``"Integer infeasible …"``, ``"Unbounded …"``) and maps that.

Bound. CBC's best bound is not in the solution file; it is printed in the closing
summary of the log (``Lower bound: %.3f``) whenever the search did not finish. The
adapter runs CBC with a log file and reads that line: fixed three decimals, so the
value is lowered by ``5e-4`` to stay a valid bound. When the line is missing (a future
CBC with another log format) a time-limited bound is ``None``; a run CBC reports as
"Optimal" (tree exhausted) has bound = objective.

Ctrl-C. PuLP gives no handle on the ``cbc`` child process. A terminal's Ctrl-C reaches it
through the process group; a SIGINT sent to this process alone does not, so on
``KeyboardInterrupt`` the adapter kills its own children named ``cbc*`` (found through
Linux's ``/proc``; elsewhere the child finishes on its own time limit) and the interrupt
propagates: CBC's partial result is lost, so the adapter does not declare
:attr:`~llmopt.solvers.base.Capability.INTERRUPT`.

Deadline and progress. Much of a large model's time is not CBC's search: for a 1.08M-nonzero model
(J AM1 n = 58, ``-sec 5``, load average 3.9 on 2 cores) PuLP built its problem in 1.5 s and wrote the
MPS file in 3.1 s, CBC ran 6.3 s (1.3 s past its limit, reading the file) and reading the solution
back took 0.1 s: 11.8 s in all; a loaded machine stretches every part. A caller's ``deadline``
therefore covers all of it: the build checks it every :data:`CHECK_EVERY` columns, rows or nonzeros
and stops with status ``time_limit`` without starting CBC, CBC's ``-sec`` is what is left after the
MPS file is written (less :data:`READ_BACK_RESERVE` for CBC reading the file and PuLP reading the
solution), and CBC is killed if it is still running at the deadline. CBC's log is buffered until it
exits, so the progress lines (every :data:`PROGRESS_EVERY_S` seconds) say which phase is running and
for how long, not the incumbent.
"""

from __future__ import annotations

import functools
import math
import os
import re
import tempfile
import threading
import time
import warnings
from pathlib import Path
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

__all__ = ["CbcSolver"]

#: Seconds between two progress lines (PuLP build, CBC run).
PROGRESS_EVERY_S = 5.0
#: The PuLP build checks the deadline (and whether a progress line is due) every this many columns and rows.
CHECK_EVERY = 500
#: Seconds kept back from CBC's ``-sec``, per second the MPS file took to write, for CBC reading that file and
#: PuLP reading the solution (2.3 s after a 3.1 s write in the measurement of the module docstring).
READ_BACK_RESERVE = 1.5

_LOWER_BOUND = re.compile(r"^Lower bound:\s*(\S+)\s*$", re.MULTILINE)
_PRINT_SLACK = 5e-4  # CBC prints the bound with "%.3f"


@functools.cache
def _recording_cbc_class(pulp: Any) -> type:
    """``PULP_CBC_CMD`` subclass that remembers the first line of CBC's solution file."""
    base = getattr(pulp, "PULP_CBC_CMD", None) or pulp.COIN_CMD

    class _RecordingCbc(base):  # type: ignore[misc, valid-type]
        first_line = ""

        def get_status(self, filename):  # type: ignore[no-untyped-def]
            with open(filename) as f:
                self.first_line = f.readline().strip()
            return super().get_status(filename)

    return _RecordingCbc


def _parse_lower_bound(log: str) -> float | None:
    """CBC's best bound from its closing summary, lowered by the print rounding; ``None`` if absent."""
    found = _LOWER_BOUND.findall(log)
    if not found:
        return None
    try:
        value = float(found[-1])
    except ValueError:
        return None
    if not math.isfinite(value) or abs(value) >= 1e30:
        return None
    return value - _PRINT_SLACK


def _feasible(model: CanonicalModel, x: np.ndarray) -> bool:
    """Whether ``x`` satisfies every bound and integrality flag up to a scaled tolerance."""
    return model.max_violation(x) <= FEASIBILITY_TOL * (1.0 + float(np.abs(x).max(initial=0.0)))


def _empty_rows_infeasible(model: CanonicalModel, empty: np.ndarray, tol: float = FEASIBILITY_TOL) -> bool:
    """Whether a row with no nonzeros demands ``lower <= 0 <= upper`` in vain."""
    return bool(np.any(model.row_lower[empty] > tol) or np.any(model.row_upper[empty] < -tol))


def _kill_children(command: str) -> None:
    """Kill this process's children whose command name starts with ``command`` (Linux ``/proc``)."""
    me = os.getpid()
    try:
        entries = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return
    for pid in entries:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        name = stat[stat.find("(") + 1: stat.rfind(")")]
        ppid = int(stat[stat.rfind(")") + 2:].split()[1])
        if ppid == me and name.startswith(command):
            try:
                os.kill(int(pid), 9)
            except OSError:
                pass


class _DeadlinePassed(Exception):
    """The caller's deadline passed before CBC could start; the message says during what."""


class _Clock:
    """The deadline and the progress lines of one solve."""

    def __init__(self, deadline: float | None, progress: Progress | None, start: float) -> None:
        self.deadline = deadline
        self.progress = progress
        self.start = start
        self.next_report = start + PROGRESS_EVERY_S

    def check(self, what: str = "", i: int = 0, n: int = 0) -> None:
        """Raise :class:`_DeadlinePassed` if the deadline has passed; print a progress line when one is due
        (while the PuLP model is built: its ``what`` ``i`` of ``n``)."""
        if self.deadline is None and self.progress is None:
            return
        now = time.perf_counter()
        doing = f"building the PuLP model, {what} {i:,} of {n:,}" if what else "before the PuLP model"
        if self.deadline is not None and now >= self.deadline:
            raise _DeadlinePassed(f"the deadline passed {doing}; CBC not started")
        if self.progress is not None and now >= self.next_report:
            self.next_report = now + PROGRESS_EVERY_S
            self.progress(f"CBC: {doing} ({now - self.start:.0f} s)")


class _Watch(threading.Thread):
    """While CBC runs: a progress line every :data:`PROGRESS_EVERY_S` seconds, and CBC killed at the deadline."""

    def __init__(self, clock: _Clock, what: str) -> None:
        super().__init__(daemon=True)
        self.clock, self.what = clock, what
        self.done = threading.Event()
        self.killed = False

    def run(self) -> None:
        began = time.perf_counter()
        next_report = began + PROGRESS_EVERY_S
        while not self.done.wait(0.2):
            now = time.perf_counter()
            if self.clock.deadline is not None and now >= self.clock.deadline:
                self.killed = True
                _kill_children("cbc")
                return
            if self.clock.progress is not None and now >= next_report:
                next_report = now + PROGRESS_EVERY_S
                self.clock.progress(f"{self.what} solve running (CBC, with PuLP writing the model and reading the "
                                    f"solution) for {now - began:.0f} s")


class CbcSolver:
    """Solve a :class:`CanonicalModel` with COIN-OR CBC (via PuLP; CLP simplex for LPs)."""

    info: ClassVar[SolverInfo] = SolverInfo(
        name="cbc",
        package="pulp",
        capabilities=frozenset({Capability.MIP, Capability.LP_DUALS, Capability.WARM_START, Capability.TIME_LIMIT,
                                Capability.THREADS, Capability.NODE_LIMIT}),
        open_source=True,
    )

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if package_installed("pulp"):
            return True, ""
        return False, "pulp is not installed (pip install pulp)"

    @classmethod
    def version(cls) -> str | None:
        return package_version("pulp")

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
        """Solve ``model`` with CBC.

        Parameters
        ----------
        model : CanonicalModel
            The model to solve (minimised).
        time_limit : float, optional
            Wall-clock seconds for CBC (``-sec`` with ``timeMode elapsed``).
        mip_gap : float
            Relative gap at which CBC may stop (``ratio``).
        threads : int
            CBC threads.
        warm_start : ndarray, optional
            A full primal vector passed as a MIP start (ignored for LPs, like HiGHS).
        verbose : bool
            Print CBC's log after the run.
        node_limit : int, optional
            CBC's ``maxNodes``: stop after that many branch-and-bound nodes (status ``not_solved``: CBC's log
            does not tell a node limit from its other stops, so its bound is not offered as one).
        deadline : float, optional
            ``time.perf_counter()`` value by which the whole call must end: checked while the PuLP
            problem is built and after the MPS file is written (status ``time_limit`` without starting
            CBC once it has passed), CBC's ``-sec`` cut to what is left, CBC killed at it.
        progress : callable, optional
            Receives a line every :data:`PROGRESS_EVERY_S` seconds: the build's column or row, then the
            time CBC has run (its log is buffered until it exits, so no incumbent).

        Returns
        -------
        SolveResult
            ``duals`` are set for LPs solved to optimality, with the HiGHS sign convention
            (for a minimisation, a binding ``<=`` row has a dual ``<= 0``).
        """
        ok, why = self.available()
        if not ok:
            return unavailable_result(self.info.name, why)
        import pulp

        check_warm_start(model, warm_start)
        check_node_limit(node_limit)
        clock = _Clock(deadline, progress, time.perf_counter())
        try:
            clock.check()
        except _DeadlinePassed as exc:
            return self._too_late(model, clock, str(exc))
        csr = model.A.tocsr()
        row_len = np.diff(csr.indptr)
        empty = row_len == 0
        if _empty_rows_infeasible(model, empty):
            return finish(self.info.name, model, SolveStatus.INFEASIBLE, None, None, 0.0,
                          message="a constraint row without coefficients has infeasible bounds")

        with warnings.catch_warnings():
            # PuLP 3 flags PULP_CBC_CMD and variable registration as deprecated for PuLP 4.
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                prob, xs, row_cons = self._build(pulp, model, csr, empty, clock)
            except _DeadlinePassed as exc:
                return self._too_late(model, clock, str(exc))
            if warm_start is not None and model.is_mip:
                for var, val in zip(xs, np.asarray(warm_start, dtype=float)):
                    var.setInitialValue(float(val), check=False)
            with tempfile.TemporaryDirectory(prefix="llmopt-cbc-") as tmp:
                log_path = Path(tmp) / "cbc.log"
                cmd = _recording_cbc_class(pulp)(
                    mip=model.is_mip,
                    msg=False,
                    timeLimit=None if time_limit is None else max(float(time_limit), 0.0),
                    gapRel=float(mip_gap) if model.is_mip else None,
                    # "-threads 1" takes CBC's threaded code path, which now and then stalls for 10 s;
                    # one thread is CBC's default, so the option is passed only for more.
                    threads=int(threads) if threads > 1 else None,
                    warmStart=warm_start is not None and model.is_mip,
                    logPath=str(log_path),
                    timeMode="elapsed",
                    maxNodes=node_limit if model.is_mip else None,
                )
                if not cmd.available():
                    why = "PuLP's bundled CBC executable is missing or not executable"
                    return unavailable_result(self.info.name, why)
                self._cut_to_deadline(prob, cmd, clock)
                start = time.perf_counter()
                watch = _Watch(clock, "MIP" if model.is_mip else "LP")
                watch.start()
                try:
                    prob.solve(cmd)
                except KeyboardInterrupt:
                    # The cbc child keeps running unless the signal reached its process group too;
                    # stop it, then let the interrupt propagate (CBC's partial result is lost).
                    _kill_children("cbc")
                    raise
                except _DeadlinePassed as exc:
                    return self._too_late(model, clock, str(exc))
                except pulp.PulpSolverError as exc:
                    runtime = time.perf_counter() - start
                    if watch.killed:
                        return finish(self.info.name, model, SolveStatus.TIME_LIMIT, None, None, runtime,
                                      message="time limit: CBC was still running at the deadline and was "
                                              "stopped (its incumbent is lost)")
                    return finish(self.info.name, model, SolveStatus.NOT_SOLVED, None, None, runtime,
                                  message=f"CBC failed: {exc}")
                finally:
                    watch.done.set()
                    watch.join()
                runtime = time.perf_counter() - start
                log = log_path.read_text() if log_path.exists() else ""
        if verbose:
            print(log)
        return self._result(pulp, model, prob, xs, row_cons, cmd.first_line, log, runtime,
                            float(mip_gap))

    # ------------------------------------------------------------------------------------------

    def _too_late(self, model: CanonicalModel, clock: _Clock, why: str) -> SolveResult:
        return finish(self.info.name, model, SolveStatus.TIME_LIMIT, None, None, time.perf_counter() - clock.start,
                      message=f"time limit: {why}")

    @staticmethod
    def _cut_to_deadline(prob: Any, cmd: Any, clock: _Clock) -> None:
        """Make PuLP's MPS writing check the deadline and cut CBC's ``-sec`` to what it leaves.

        PuLP reads ``cmd.timeLimit`` only after writing the MPS file, so the writer is wrapped on this
        problem object: once it returns, the time left to the deadline (less a reserve for reading the
        solution back) becomes CBC's limit, or :class:`_DeadlinePassed` stops the call before CBC starts.
        """
        write = prob.writeMPS

        def write_then_cut(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            out = write(*args, **kwargs)
            now = time.perf_counter()
            if clock.deadline is not None:
                left = clock.deadline - now - READ_BACK_RESERVE * (now - began)
                if left <= 0:
                    raise _DeadlinePassed("the deadline passed while the model was written for CBC; CBC not started")
                cmd.timeLimit = left if cmd.timeLimit is None else min(float(cmd.timeLimit), left)
            return out

        prob.writeMPS = write_then_cut

    @staticmethod
    def _build(
        pulp: Any, model: CanonicalModel, csr: Any, empty: np.ndarray, clock: _Clock | None = None
    ) -> tuple[Any, list[Any], list[list[Any]]]:
        """PuLP problem with one variable per column; ``row_cons[i]`` holds the constraints of row ``i``
        (none, one, or two for a range row split into ``>=`` and ``<=``). With a ``clock``, the deadline
        is checked every :data:`CHECK_EVERY` columns, and rows or :data:`CHECK_EVERY` nonzeros
        (:class:`_DeadlinePassed`)."""
        prob = pulp.LpProblem("llmopt", pulp.LpMinimize)
        lo = np.asarray(model.col_lower, dtype=float)
        up = np.asarray(model.col_upper, dtype=float)
        xs = []
        for j in range(model.n_cols):
            if clock is not None and j % CHECK_EVERY == 0:
                clock.check("column", j, model.n_cols)
            xs.append(pulp.LpVariable(
                f"x{j}",
                lowBound=None if np.isneginf(lo[j]) else float(lo[j]),
                upBound=None if np.isposinf(up[j]) else float(up[j]),
                cat=pulp.LpInteger if model.integer[j] else pulp.LpContinuous,
            ))
        # Every column enters the objective (zero coefficients included) so that PuLP writes it to the
        # MPS file even when it appears in no row. The offset stays out: CBC's printed bound is then
        # for c·x, and finish() recomputes the objective from x.
        prob.setObjective(pulp.LpAffineExpression(list(zip(xs, np.asarray(model.c, dtype=float).tolist()))))

        indptr, indices, data = csr.indptr, csr.indices, csr.data.astype(float)
        row_cons: list[list[Any]] = []
        next_check = 0
        for i in range(model.n_rows):
            if clock is not None and (i % CHECK_EVERY == 0 or indptr[i] >= next_check):
                clock.check("row", i, model.n_rows)
                next_check = indptr[i] + CHECK_EVERY
            lo_i, up_i = float(model.row_lower[i]), float(model.row_upper[i])
            has_lo, has_up = math.isfinite(lo_i), math.isfinite(up_i)
            if empty[i] or not (has_lo or has_up):
                row_cons.append([])
                continue
            a, b = indptr[i], indptr[i + 1]
            terms = [(xs[j], v) for j, v in zip(indices[a:b].tolist(), data[a:b].tolist())]
            if has_lo and has_up and lo_i == up_i:
                parts = [(pulp.LpConstraintEQ, lo_i, f"r{i}")]
            else:
                parts = []
                if has_lo:
                    parts.append((pulp.LpConstraintGE, lo_i, f"r{i}_lo"))
                if has_up:
                    parts.append((pulp.LpConstraintLE, up_i, f"r{i}_up"))
            cons = []
            for sense, rhs, name in parts:
                con = pulp.LpConstraint(pulp.LpAffineExpression(terms), sense=sense, name=name, rhs=rhs)
                prob.addConstraint(con)
                cons.append(con)
            row_cons.append(cons)
        return prob, xs, row_cons

    def _result(
        self,
        pulp: Any,
        model: CanonicalModel,
        prob: Any,
        xs: list[Any],
        row_cons: list[list[Any]],
        first_line: str,
        log: str,
        runtime: float,
        mip_gap: float,
    ) -> SolveResult:
        # Without CBC's own first line we cannot tell "optimal" from "stopped on time" (PuLP maps
        # both to Optimal), so nothing is claimed.
        line = first_line or "undefined: CBC wrote no solution status"
        head = line.lower()
        no_solution = "no integer solution" in head or prob.sol_status not in (
            pulp.LpSolutionOptimal,
            pulp.LpSolutionIntegerFeasible,
        )
        bound: float | None = None
        duals = None
        x: np.ndarray | None
        if head.startswith("optimal") and prob.status == pulp.LpStatusOptimal:
            st = SolveStatus.OPTIMAL
            x = self._primal(model, xs)
            if model.is_mip and "gap" in head:
                # Stopped within the requested gap, so bound = objective would overstate it. CBC prints
                # its bound; failing that, its stopping rule (objective − bound < ratio·max(|objective|,
                # |bound|) + 1e-10) implies bound >= objective − 2·ratio·max(|objective|, 1), ratio <= ½.
                parsed = _parse_lower_bound(log)
                if parsed is not None:
                    bound = parsed + float(model.offset)
                elif x is not None and mip_gap <= 0.5:
                    obj = model.objective_value(x)
                    bound = obj - 2.0 * mip_gap * max(abs(obj), 1.0) - 1e-9
            elif not model.is_mip:
                duals = self._duals(model, row_cons)
        elif head.startswith("stopped on time"):
            st = SolveStatus.TIME_LIMIT
            x = None if no_solution else self._primal(model, xs)
            if model.is_mip:
                bound = _parse_lower_bound(log)
                if bound is not None:
                    bound += float(model.offset)
            elif x is not None and not _feasible(model, x):
                x = None  # an interrupted simplex point need not be primal feasible
        elif head.startswith(("infeasible", "integer infeasible")) or prob.status == pulp.LpStatusInfeasible:
            st, x = SolveStatus.INFEASIBLE, None
        elif head.startswith("unbounded") or prob.status == pulp.LpStatusUnbounded:
            st, x = SolveStatus.UNBOUNDED, None
        else:
            # Stopped on nodes / solutions / iterations / difficulties, or an unrecognised line.
            st = SolveStatus.NOT_SOLVED
            x = None if no_solution else self._primal(model, xs)
            if x is not None and not _feasible(model, x):
                x = None
        if model.offset != 0 and first_line:
            line += f" (CBC's objective excludes the offset {float(model.offset):g})"
        return finish(self.info.name, model, st, x, bound, runtime, duals=duals, message=line)

    @staticmethod
    def _primal(model: CanonicalModel, xs: list[Any]) -> np.ndarray:
        values = np.array([np.nan if v.varValue is None else float(v.varValue) for v in xs], dtype=float)
        missing = np.isnan(values)
        if missing.any():  # a column PuLP did not write: any value within its bounds is optimal
            fill = np.clip(0.0, model.col_lower[missing], model.col_upper[missing])
            values[missing] = np.where(model.integer[missing], np.ceil(fill), fill)
        return values

    @staticmethod
    def _duals(model: CanonicalModel, row_cons: list[list[Any]]) -> np.ndarray:
        # CBC/CLP row duals are d(objective)/d(rhs) for a minimisation, the HiGHS convention: a binding
        # "<=" row has dual <= 0, a binding ">=" row dual >= 0. A split range row has at most one
        # non-zero part, so the parts are summed.
        duals = np.zeros(model.n_rows)
        for i, cons in enumerate(row_cons):
            duals[i] = sum(float(c.pi) for c in cons if c.pi is not None)
        return duals
