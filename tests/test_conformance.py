"""Every registered item passes its conformance check; a broken item is caught."""

from __future__ import annotations

import pytest

from llmopt import conformance
from llmopt.plugins import load_plugins, registries
from llmopt.simulator import Decision

load_plugins()  # installed plug-ins are checked too
REG = registries()


@pytest.mark.parametrize("name", REG["policy"].names())
def test_policy_conforms(name):
    assert conformance.check_policy(name) == []


@pytest.mark.parametrize("name", REG["workload"].names())
def test_workload_conforms(name):
    assert conformance.check_workload(name) == []


@pytest.mark.parametrize("name", REG["solver"].names())
def test_solver_conforms(name):
    assert conformance.check_solver(name) == []


@pytest.mark.parametrize("name", REG["bound"].names())
def test_bound_conforms(name):
    assert conformance.check_bound(name) == []


@pytest.mark.parametrize("name", REG["formulation"].names())
def test_formulation_conforms(name):
    assert conformance.check_formulation(name) == []


@pytest.mark.parametrize("name", REG["suite"].names())
def test_suite_conforms(name):
    assert conformance.check_suite(name) == []


class _Greedy:
    """Starts everything at once, ignoring memory: must be caught (overflow)."""

    name = "greedy-bad"

    def decide(self, view):
        return Decision(start=tuple(w.id for w in view.waiting))


def test_broken_policy_is_reported():
    from llmopt.policies import POLICIES

    POLICIES.register("greedy-bad", _Greedy)
    try:
        problems = conformance.check_policy("greedy-bad")
    finally:
        POLICIES.unregister("greedy-bad")
    assert any("SimulationError" in p for p in problems)


def test_duplicate_registration_is_an_error():
    from llmopt.registry import RegistryError

    with pytest.raises(RegistryError, match="already registered"):
        REG["policy"].register("mc-sf", "llmopt.policies:MCSF")
