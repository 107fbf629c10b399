"""The bound guard of the hindsight pipeline (llmopt.opt.hindsight): when the solver's MIP bound counts.

DESIGN §3: only the checker turns solver output into a certified number, and it derives the windows
it relies on itself. An exact formulation's optimum is OPT only over windows that contain an optimal
schedule, so the pipeline may take the solver's bound (certificate ``mip-bound-from-solver``) only when
the model's windows contain the windows :func:`llmopt.verify.checker.certified_windows` derives.

The instance (M = 6): ``r0`` (a 0, s 2, o 3) and ``r1`` (a 0, s 3, o 2) cannot overlap at all; OPT = 7
(``r1`` at 0, ``r0`` at 2; exhaustive search below). The only upper bound handed in is a worse,
verified schedule (``r0`` at 0, ``r1`` at 4: TEL 9). A windows stage that *pins* every request to that
schedule's starts makes an honest solver prove "optimal, bound 9" over its windows — true of the
windows, false of the instance.
"""

from __future__ import annotations

import pytest
from helpers import exhaustive_opt, is_feasible, memory_profile, tel_of

from llmopt.model.instance import Instance
from llmopt.model.result import SolveStatus
from llmopt.model.schedule import Schedule
from llmopt.model.windows import WINDOWS, StartWindows
from llmopt.opt.hindsight import solve_hindsight
from llmopt.verify.certificates import certified_windows
from llmopt.verify.checker import check_schedule

INSTANCE = Instance.from_tuples(6, [(0, 2, 3), (0, 3, 2)], name="guard/M=6")
LATE = {"r0": 0, "r1": 4}
PINNED = "test-guard-pinned-to-late"


def _schedule(starts: dict[str, int]) -> Schedule:
    comp = {r.id: starts[r.id] + r.output for r in INSTANCE.requests}
    return Schedule(policy="late", starts=starts, completions=comp, tel=tel_of(INSTANCE, starts),
                    memory=memory_profile(INSTANCE, starts))


def _pinned(instance: Instance, upper_bound_tel: int | None = None) -> StartWindows:
    """Windows ``[k, k]`` at the late schedule's starts: narrower than the checker's (``r1``'s window
    there is ``0 … 3``, which does not reach 4)."""
    ks = tuple(LATE[r.id] for r in instance.requests)
    return StartWindows(ks, ks, max(k + r.output for k, r in zip(ks, instance.requests, strict=True)), "pinned")


@pytest.fixture
def pinned_windows():
    WINDOWS.register(PINNED, _pinned)
    yield PINNED
    WINDOWS.unregister(PINNED)


def test_the_instance_and_the_late_schedule():
    """The facts the tests below rest on, from the independent model of tests/helpers.py."""
    assert is_feasible(INSTANCE, LATE) and tel_of(INSTANCE, LATE) == 9
    assert check_schedule(INSTANCE, LATE).tel == 9
    opt, starts = exhaustive_opt(INSTANCE, 9)
    assert opt == 7 and starts == {"r0": 2, "r1": 0}
    lo, hi = certified_windows(INSTANCE, LATE)
    assert lo.tolist() == [0, 0] and hi.tolist() == [2, 3]  # min(T_c − o, a + U − Σo), T_c = 5, U − Σo = 4
    assert not _pinned(INSTANCE).contains(lo.tolist(), hi.tolist())


def test_a_mip_bound_over_windows_narrower_than_the_checkers_is_no_certificate(pinned_windows):
    """With the pinned windows the solver's model has one point, the late schedule, and it reports
    optimal with bound 9. That bound says nothing about OPT (7): the pipeline must not certify it —
    no "optimal", no ``opt``, a bound that is still a valid lower bound (``<= 7``), and a note saying
    why the MIP bound was not used. It is not an error either: the solver told the truth about its
    model.

    Breakage caught: mutant guard-mip-bound-any-windows (``bound_eligible = form.exact and
    self.windows_valid`` → ``bound_eligible = form.exact``, the MIP bound certified over any windows).
    """
    res = solve_hindsight(INSTANCE, windows=pinned_windows, bounds=(), upper_bounds=(),
                          schedules={"late": _schedule(LATE)}, search_evals=0, ip_time_limit=30)
    assert res.incumbent == 9 and res.starts == LATE
    assert res.model_stats.get("windows") == "pinned"  # the IP did run, over the pinned windows
    assert res.status is not SolveStatus.OPTIMAL and res.opt is None
    assert res.bound_certificate != "mip-bound-from-solver"
    assert res.bound <= 7 and res.bound == INSTANCE.total_output  # only Σo = 5 is certified here
    assert res.gap == pytest.approx((9 - 5) / 9)
    assert "do not contain the checker's windows: the MIP bound is not used" in res.message
    assert res.errors == ()


def test_the_same_pipeline_over_the_checkers_windows_proves_opt():
    """The control: over the default windows (derived from the same late schedule, so they contain the
    checker's) the same exact formulation and solver find OPT = 7 and its bound certifies it."""
    res = solve_hindsight(INSTANCE, bounds=(), upper_bounds=(), schedules={"late": _schedule(LATE)},
                          search_evals=0, ip_time_limit=30)
    assert res.status is SolveStatus.OPTIMAL and res.opt == 7 and res.incumbent == 7
    assert res.bound == 7 and res.bound_certificate == "mip-bound-from-solver"
    assert res.errors == ()


def test_lp_colgen_refuses_a_time_axis_it_would_have_to_allocate_whole(monkeypatch):
    """Issue 27: arrivals at 0 and 10^12 made lp-colgen ask for 7.28 TiB. It now says why it does not
    run, and the energy bound (sparse in time) still certifies the instance."""
    from llmopt.model.instance import Instance
    from llmopt.opt.bounds import COLGEN_MAX_AXIS, compute_bound

    inst = Instance.from_tuples(10, [(0, 2, 3), (10**12, 2, 3), (0, 3, 4)])
    res = compute_bound("lp-colgen", inst)
    assert res.value is None and "time axis spans" in res.detail and f"{COLGEN_MAX_AXIS:,}" in res.detail
    energy = compute_bound("energy", inst)
    assert energy.verified and energy.value is not None and energy.value >= inst.total_output
    monkeypatch.setattr("llmopt.opt.bounds.COLGEN_MAX_AXIS", 1000)  # the boundary, without the memory
    inside = Instance.from_tuples(10, [(0, 2, 3), (994, 2, 3)])  # axis 994 + 6 = 1000 steps
    assert compute_bound("lp-colgen", inside).verified
    outside = Instance.from_tuples(10, [(0, 2, 3), (995, 2, 3)])
    assert compute_bound("lp-colgen", outside).value is None
