"""Start windows: the pipeline stage between upper bounds and formulations.

A formulation of the hindsight problem is written over a finite set of start steps per
request. Its optimum equals OPT only if those **start windows contain the starts of some
optimal schedule**. This module produces only such windows, each with its proof, and
registers them by name in :data:`WINDOWS` (third parties add theirs through the
entry-point group ``llmopt.windows``).

Times are absolute (an instance whose arrivals are Unix timestamps gets windows around
those timestamps); formulations shift them to their own origin.

The independent checker (:func:`llmopt.verify.certificates.certified_windows`) derives the same
windows on its own from a schedule it has verified, and the pipeline uses a MIP bound
only when the formulation's windows contain the checker's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llmopt.model.instance import Instance
from llmopt.model.registry import Registry

__all__ = ["StartWindows", "completion_horizon", "start_windows", "horizon_windows", "WINDOWS"]


@dataclass(frozen=True)
class StartWindows:
    """Allowed start steps ``lo[i] <= k <= hi[i]`` per request (instance order).

    ``horizon`` is the last time a request can hold memory, ``max_i hi[i] + o_i``.
    """

    lo: tuple[int, ...]
    hi: tuple[int, ...]
    horizon: int
    reason: str

    def __post_init__(self) -> None:
        if len(self.lo) != len(self.hi):
            raise ValueError("lo and hi must have the same length")
        for i, (a, b) in enumerate(zip(self.lo, self.hi, strict=True)):
            if a > b:
                raise ValueError(f"empty start window for request #{i}: [{a}, {b}]")

    def contains(self, lo: tuple[int, ...] | list[int], hi: tuple[int, ...] | list[int]) -> bool:
        """Whether every window here contains the window ``[lo[i], hi[i]]``."""
        return len(lo) == len(self.lo) and all(
            a <= c and d <= b for a, b, c, d in zip(self.lo, self.hi, lo, hi, strict=True)
        )


def completion_horizon(instance: Instance) -> int:
    """Return ``T_c = max_i a_i + Σ_i o_i``, a makespan bound of some optimal schedule.

    Proof. Take an optimal schedule and suppose some step ``t >= max_i a_i`` before
    its makespan has nothing in process. Every request started before ``t`` has then
    completed by ``t``. Shift every request starting after ``t`` earlier by
    ``d = (first start after t) − t``: memory at each time ``τ`` equals the old memory
    at ``τ + d`` (the earlier requests hold nothing after ``t``), arrivals still hold
    because ``t >= max a``, and TEL drops by ``d`` per shifted request — contradicting
    optimality. So in every optimal schedule each step of ``[max a, C_max)`` processes
    at least one request, and a request is in process for ``o_i`` steps, hence
    ``C_max <= max a + Σ o``. ∎

    This is never larger than the paper's ``T̄ = Σ_i (a_i + o_i)`` (DIGEST I-8).
    """
    if instance.n == 0:
        return 0
    return max(r.arrival for r in instance.requests) + instance.total_output


def start_windows(instance: Instance, upper_bound_tel: int | None = None) -> StartWindows:
    """Per-request start windows that contain the starts of an optimal schedule.

    Parameters
    ----------
    instance : Instance
    upper_bound_tel : int, optional
        TEL of any feasible schedule (e.g. MC-SF's). Without it, only the horizon
        limits the windows.

    Notes
    -----
    Proof of the window. Let ``U`` be the TEL of a feasible schedule and ``W = U − Σ_j o_j``.
    In an optimal schedule every request waits ``w_i = k_i − a_i >= 0`` and
    ``TEL_OPT = Σ_j o_j + Σ_j w_j <= U``, so ``w_i <= Σ_j w_j <= W`` for every ``i``.
    Combined with :func:`completion_horizon` (the window of a request in an optimal
    schedule also satisfies ``k_i + o_i <= T_c``): ``a_i <= k_i <= min(a_i + W, T_c − o_i)``.
    Both restrictions hold simultaneously for an optimal schedule with minimum makespan
    among optimal ones, so the restricted problem has the same optimum. ∎
    """
    T_c = completion_horizon(instance)
    W = None if upper_bound_tel is None else int(upper_bound_tel) - instance.total_output
    if W is not None and W < 0:
        raise ValueError(f"upper_bound_tel={upper_bound_tel} is below Σ o = {instance.total_output}")
    lo, hi = [], []
    for r in instance.requests:
        top = T_c - r.output
        if W is not None:
            top = min(top, r.arrival + W)
        lo.append(r.arrival)
        hi.append(top)
    horizon = max((h + r.output for h, r in zip(hi, instance.requests, strict=True)), default=0)
    reason = f"T_c={T_c}" + ("" if W is None else f", wait<=U-Σo={W}")
    return StartWindows(tuple(lo), tuple(hi), horizon, reason)


def horizon_windows(instance: Instance, upper_bound_tel: int | None = None) -> StartWindows:
    """Windows limited by the completion horizon only (``upper_bound_tel`` is ignored)."""
    return start_windows(instance, None)


WindowsStage = Callable[[Instance, "int | None"], StartWindows]

WINDOWS: Registry[WindowsStage] = Registry("windows", "llmopt.windows")
WINDOWS.register("upper-bound", "llmopt.model.windows:start_windows",
                 "a_i <= k <= min(a_i + U − Σo, T_c − o_i) from the best verified schedule (TEL U)")
WINDOWS.register("horizon", "llmopt.model.windows:horizon_windows",
                 "a_i <= k <= T_c − o_i, T_c = max a + Σo (no schedule needed; much larger)")
