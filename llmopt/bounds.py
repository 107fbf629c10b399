"""Lower-bound providers on the hindsight optimum, each with its certificate (DESIGN §3).

A provider is a function ``(instance, windows=None, time_limit=None) -> BoundResult``
registered in :data:`BOUNDS` (third-party providers join through the entry-point group
``llmopt.bounds``). Every value is re-derived by the independent checker
(:func:`llmopt.checker.check_lower_bound_certificate`) from a dual vector ``λ >= 0`` and
the Instance alone, so a reported bound never rests on a solver's word.

Validity. A bound computed over start windows ``K_i`` bounds the optimum *of the
schedules whose starts lie in those windows*. It is a lower bound on OPT only when the
windows provably contain the starts of some optimal schedule.
:func:`llmopt.formulations.hindsight_ip.start_windows` produces only such windows (the
completion horizon ``T_c = max a + Σ o``, and waits ``<= U − Σ o`` given a feasible
schedule of TEL ``U``; proofs in its docstring); hand-made windows carry no such
guarantee. ``windows=None`` means ``start_windows(instance)``.

Providers:

``lp``
    LP relaxation of the hindsight IP (1)–(4) solved with HiGHS; the memory-row duals
    give ``λ``; the checker's value is the bound. ``verified`` when it agrees with the LP
    optimum within ``1e-6`` relative (strong duality, re-derived independently).
``closed-form-dual``
    J App. B.3 (25)–(27) for identical requests all arriving at 0, with the exact
    ``Σ_t λ_t`` (never the paper's approximation, DIGEST I-14), re-checked by the checker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from llmopt.checker import check_lower_bound_certificate
from llmopt.instance import Instance
from llmopt.registry import Registry
from llmopt.result import SolveStatus

if TYPE_CHECKING:
    from llmopt.formulations.hindsight_ip import StartWindows

__all__ = ["BoundResult", "BoundProvider", "BOUNDS", "lp_bound", "closed_form_dual_bound", "compute_bound"]

#: Relative tolerance for "the checker's bound equals the LP optimum".
AGREEMENT_RTOL = 1e-6


@dataclass(frozen=True)
class BoundResult:
    """A lower bound on OPT and what certifies it.

    Attributes
    ----------
    name : str
        Provider name.
    value : float or None
        The bound (``None`` when the provider could not produce one).
    certificate : str
        What certifies it: ``"lp-dual-checked"``, ``"closed-form-dual-checked"``,
        ``"mip-bound-from-solver"``, or ``"none"``.
    verified : bool
        ``True`` when the independent checker re-derived the value and it matched the
        provider's own computation.
    detail : str
        Human-readable account (solver status, the two values compared, windows).
    """

    name: str
    value: float | None
    certificate: str
    verified: bool
    detail: str


BoundProvider = Callable[..., BoundResult]

BOUNDS: Registry[BoundProvider] = Registry("bound", "llmopt.bounds")


def _agree(a: float, b: float) -> bool:
    return abs(a - b) <= AGREEMENT_RTOL * max(1.0, abs(a), abs(b))


def lp_bound(
    instance: Instance,
    windows: StartWindows | None = None,
    time_limit: float | None = None,
) -> BoundResult:
    """LP-relaxation bound, certified by its memory-row duals.

    Solves the LP relaxation of :func:`~llmopt.formulations.hindsight_ip.formulate`
    with HiGHS, maps the memory-row duals to ``λ`` and returns the bound the checker
    recomputes from ``λ`` and the instance. The columns' upper bounds ``x <= |c|`` are
    dropped before solving: they are implied by the assignment rows and ``x >= 0``, so
    the LP is unchanged, and without them the row duals alone form a dual-feasible
    solution (no reduced cost hides in a bound).

    Parameters
    ----------
    instance : Instance
    windows : StartWindows, optional
        Default :func:`~llmopt.formulations.hindsight_ip.start_windows`. The bound is
        valid for OPT only if the windows contain an optimal schedule.
    time_limit : float, optional
        Seconds for the LP solve.

    Returns
    -------
    BoundResult
        ``certificate="lp-dual-checked"``; ``verified`` when the checker's value equals
        the LP optimum within 1e-6 relative. ``value=None`` if the LP was not solved.
    """
    from llmopt.formulations.dual import lambda_from_lp_duals
    from llmopt.formulations.hindsight_ip import formulate, start_windows
    from llmopt.solvers.highs import HighsSolver

    if windows is None:
        windows = start_windows(instance)
    model = formulate(instance, windows).relax()
    model = replace(model, col_upper=np.full(model.n_cols, np.inf))
    res = HighsSolver().solve(model, time_limit=time_limit)
    if res.status is not SolveStatus.OPTIMAL or res.duals is None or res.objective is None:
        return BoundResult("lp", None, "none", False, f"LP not solved: {res.status} {res.message}".strip())
    lam = lambda_from_lp_duals(model, res.duals)
    value = check_lower_bound_certificate(instance, lam, windows)
    ok = _agree(value, res.objective)
    detail = (f"checker bound {value:.9g} vs LP optimum {res.objective:.9g} "
              f"({'agree' if ok else 'DISAGREE'}); windows {windows.reason}; {res.runtime_s:.3f}s")
    return BoundResult("lp", value, "lp-dual-checked", ok, detail)


def closed_form_dual_bound(
    instance: Instance,
    windows: StartWindows | None = None,
    time_limit: float | None = None,
) -> BoundResult:
    """Closed-form dual bound (25)–(27) for identical requests all arriving at 0.

    ``windows`` and ``time_limit`` are ignored: the bound uses its own windows
    ``0 … n·o − o``, which contain an optimal schedule (``n·o = T_c`` here), so it is
    valid for OPT whatever windows the caller uses.

    Returns
    -------
    BoundResult
        ``value=None`` with the reason in ``detail`` when the instance is not
        identical-requests-at-0; otherwise ``min(D, checked)`` with
        ``certificate="closed-form-dual-checked"`` and ``verified`` when the checker's
        value is at least ``D`` (Lemma B.1) up to round-off.
    """
    from llmopt.formulations.closed_form_dual import closed_form_check

    try:
        cf, checked = closed_form_check(instance)
    except ValueError as exc:
        return BoundResult("closed-form-dual", None, "none", False, str(exc))
    ok = checked >= cf.bound - AGREEMENT_RTOL * max(1.0, abs(cf.bound))
    detail = (f"D = {cf.bound:.9g} (exact Σλ over t=1..{cf.horizon}), checker {checked:.9g}; "
              f"ȳ = {cf.ybar:.6g}, λ_1 = {cf.lambda_1:.6g}")
    return BoundResult("closed-form-dual", min(cf.bound, checked), "closed-form-dual-checked", ok, detail)


def compute_bound(
    name: str,
    instance: Instance,
    windows: StartWindows | None = None,
    time_limit: float | None = None,
) -> BoundResult:
    """Run the registered bound provider ``name``."""
    return BOUNDS.get(name)(instance, windows=windows, time_limit=time_limit)


BOUNDS.register("lp", "llmopt.bounds:lp_bound", "LP relaxation of the hindsight IP, certified by its duals")
BOUNDS.register(
    "closed-form-dual",
    "llmopt.bounds:closed_form_dual_bound",
    "J App. B.3 closed-form dual (25)-(27), identical requests at 0, exact sum",
)
