"""Test configuration: a guard against mixed checkouts, a load-proof Hypothesis profile, the ``slow``
marker, and a fixture over every available solver."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent

# No Hypothesis test may fail because the machine is busy: no per-example deadline, and no
# "too slow" health check (generating examples slowly under load is not a bug). A test's own
# @settings(...) inherits these and changes only what it names.
settings.register_profile("llmopt", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("llmopt")


def _imported_from_this_checkout() -> list[str]:
    """``llmopt.formulations`` and ``llmopt.solvers`` are mapped from top-level folders by setuptools'
    ``package-dir``; an editable install of another checkout (or a stale wheel) could serve them
    while ``llmopt`` itself comes from here, and the tests would then test the wrong code."""
    import llmopt
    import llmopt.formulations
    import llmopt.solvers  # noqa: F401  (imported for sys.modules below)

    expected = {
        "llmopt": ROOT / "llmopt",
        "llmopt.formulations": ROOT / "formulations",
        "llmopt.solvers": ROOT / "solvers",
    }
    problems = []
    for name, folder in expected.items():
        where = Path(sys.modules[name].__file__ or "").resolve().parent
        if where != folder:
            problems.append(f"{name} is imported from {where}, not from this checkout's {folder}")
    return problems


def pytest_configure(config: pytest.Config) -> None:
    problems = _imported_from_this_checkout()
    if problems:
        raise pytest.UsageError(
            "; ".join(problems) + " — reinstall this checkout (pip install -e '.[dev]') before testing it"
        )


def _solvers_under_test() -> list[str]:
    """HiGHS and CBC always; Gurobi where gurobipy imports and its licence solves a tiny model
    (the pip wheel's size-limited licence does)."""
    from llmopt.bench.plugins.conformance import check_solver
    from llmopt.solvers import solver_status

    names = []
    for name in ("highs", "cbc", "gurobi"):
        ok, _why = solver_status(name)
        if not ok:
            continue
        if name == "gurobi" and check_solver(name):
            continue  # installed but no usable licence here
        names.append(name)
    return names


SOLVERS_UNDER_TEST = _solvers_under_test()
# HiGHS and CBC come with the package's dependencies; without them the solver tests would silently
# run on nothing.
assert {"highs", "cbc"} <= set(SOLVERS_UNDER_TEST), f"solvers under test: {SOLVERS_UNDER_TEST}"


@pytest.fixture(scope="session", params=SOLVERS_UNDER_TEST)
def mip_solver(request: pytest.FixtureRequest):
    """Each available MIP solver in turn (exhaustive-search and invariant tests run on all of them)."""
    from llmopt.solvers import get_solver

    return get_solver(request.param)
