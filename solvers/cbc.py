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
"""

from __future__ import annotations

import functools
import math
import os
import re
import tempfile
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
    check_warm_start,
    finish,
    package_installed,
    package_version,
    unavailable_result,
)

__all__ = ["CbcSolver"]

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


class CbcSolver:
    """Solve a :class:`CanonicalModel` with COIN-OR CBC (via PuLP; CLP simplex for LPs)."""

    info: ClassVar[SolverInfo] = SolverInfo(
        name="cbc",
        package="pulp",
        capabilities=frozenset({Capability.MIP, Capability.LP_DUALS, Capability.WARM_START, Capability.TIME_LIMIT,
                                Capability.THREADS}),
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
        deadline : float, optional
            Ignored (only ``time_limit`` is passed on).
        progress : callable, optional
            Ignored: CBC runs as a subprocess whose log PuLP reads only at the end.

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
        csr = model.A.tocsr()
        row_len = np.diff(csr.indptr)
        empty = row_len == 0
        if _empty_rows_infeasible(model, empty):
            return finish(self.info.name, model, SolveStatus.INFEASIBLE, None, None, 0.0,
                          message="a constraint row without coefficients has infeasible bounds")

        with warnings.catch_warnings():
            # PuLP 3 flags PULP_CBC_CMD and variable registration as deprecated for PuLP 4.
            warnings.simplefilter("ignore", DeprecationWarning)
            prob, xs, row_cons = self._build(pulp, model, csr, empty)
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
                )
                if not cmd.available():
                    why = "PuLP's bundled CBC executable is missing or not executable"
                    return unavailable_result(self.info.name, why)
                start = time.perf_counter()
                try:
                    prob.solve(cmd)
                except KeyboardInterrupt:
                    # The cbc child keeps running unless the signal reached its process group too;
                    # stop it, then let the interrupt propagate (CBC's partial result is lost).
                    _kill_children("cbc")
                    raise
                except pulp.PulpSolverError as exc:
                    runtime = time.perf_counter() - start
                    return finish(self.info.name, model, SolveStatus.NOT_SOLVED, None, None, runtime,
                                  message=f"CBC failed: {exc}")
                runtime = time.perf_counter() - start
                log = log_path.read_text() if log_path.exists() else ""
        if verbose:
            print(log)
        return self._result(pulp, model, prob, xs, row_cons, cmd.first_line, log, runtime,
                            float(mip_gap))

    # ------------------------------------------------------------------------------------------

    @staticmethod
    def _build(
        pulp: Any, model: CanonicalModel, csr: Any, empty: np.ndarray
    ) -> tuple[Any, list[Any], list[list[Any]]]:
        """PuLP problem with one variable per column; ``row_cons[i]`` holds the constraints of row ``i``
        (none, one, or two for a range row split into ``>=`` and ``<=``)."""
        prob = pulp.LpProblem("llmopt", pulp.LpMinimize)
        lo = np.asarray(model.col_lower, dtype=float)
        up = np.asarray(model.col_upper, dtype=float)
        xs = [
            pulp.LpVariable(
                f"x{j}",
                lowBound=None if np.isneginf(lo[j]) else float(lo[j]),
                upBound=None if np.isposinf(up[j]) else float(up[j]),
                cat=pulp.LpInteger if model.integer[j] else pulp.LpContinuous,
            )
            for j in range(model.n_cols)
        ]
        # Every column enters the objective (zero coefficients included) so that PuLP writes it to the
        # MPS file even when it appears in no row. The offset stays out: CBC's printed bound is then
        # for c·x, and finish() recomputes the objective from x.
        prob.setObjective(pulp.LpAffineExpression(list(zip(xs, np.asarray(model.c, dtype=float).tolist()))))

        indptr, indices, data = csr.indptr, csr.indices, csr.data.astype(float)
        row_cons: list[list[Any]] = []
        for i in range(model.n_rows):
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
