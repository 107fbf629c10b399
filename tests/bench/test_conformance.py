"""Every registered item passes its conformance check; a broken item is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmopt.bench.plugins import conformance, load_plugins, registries
from llmopt.engine.discrete import Decision

load_plugins()  # installed plug-ins are checked too
REG = registries()


CHECKS = conformance.CHECKS
DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def test_every_registry_has_a_check():
    assert set(CHECKS) == set(REG)


def test_the_one_table_of_kinds_names_each_kind_s_own_check():
    """Loading and validation share one table (``REGISTRY_TABLE``: registry, group, check). Breakage
    caught: an entry naming another kind's check (``"router": ..., "check_policy"``)."""
    from llmopt.bench.plugins.loading import REGISTRY_TABLE

    for kind, entry in REGISTRY_TABLE.items():
        assert entry.check == "check_" + kind.replace(" ", "_")
        assert CHECKS[kind] is getattr(conformance, entry.check)


def test_built_in_formulations_need_no_trust_check():
    """``llmopt solve`` and ``llmopt.solve`` ask :func:`formulation_trust_problems` before a formulation's
    solver bound may prove OPT: a built-in one passes without running its check."""
    from llmopt.formulations import FORMULATIONS

    assert all(conformance.formulation_trust_problems(name) == [] for name in FORMULATIONS.names())


@pytest.mark.parametrize(("kind", "name"), [(k, n) for k in CHECKS for n in REG[k].names()])
def test_registered_item_conforms(kind, name):
    if kind == "workload" and name == "trace" and not (DATA / "traces").is_dir():
        pytest.skip(f"the trace workload reads the staged data, not found at {DATA}")
    assert CHECKS[kind](name) == []


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
        assert conformance.check("policy", "greedy-bad") == problems  # the one entry dispatches by kind
    finally:
        POLICIES.unregister("greedy-bad")
    assert any("SimulationError" in p for p in problems)


class _ShrinkingCost:
    """Cheaper with more decode requests: must be caught."""

    name = "shrinking"

    def batch_time(self, shape):
        return 1.0 / (1 + shape.decode_requests)


def test_a_cost_model_that_gets_cheaper_as_the_batch_grows_is_reported():
    from llmopt.engine.cost_model import COST_MODELS

    COST_MODELS.register("shrinking", _ShrinkingCost)
    try:
        problems = conformance.check_cost_model("shrinking")
    finally:
        COST_MODELS.unregister("shrinking")
    assert any("drops" in p for p in problems)


def test_duplicate_registration_is_an_error():
    from llmopt.model.registry import RegistryError

    with pytest.raises(RegistryError, match="already registered"):
        REG["policy"].register("mc-sf", "llmopt.policies:MCSF")


def test_a_task_kind_without_the_harness_fields_is_caught(monkeypatch):
    """A kind whose blank record has no ``error`` field (the harness writes failures there) or whose
    report does not resolve fails the check; restoring the real kind passes it."""
    from llmopt.bench.kinds import TASK_KINDS, TaskKind

    real = TASK_KINDS.get("hindsight")
    broken = TaskKind("hindsight", lambda suite, task: {"suite": suite.name, "seed": task.seed},
                      real.fill_record, "llmopt.report.summary:no_such_writer")
    monkeypatch.setitem(TASK_KINDS._entries, "hindsight", broken)
    problems = conformance.check_task_kind("hindsight")
    assert any("lacks error" in p for p in problems)
    assert any("does not resolve" in p for p in problems)
    monkeypatch.setitem(TASK_KINDS._entries, "hindsight", real)
    assert conformance.check_task_kind("hindsight") == []


class _OffByOne:
    """Routes every request to worker K (one past the last): must be caught."""

    name = "off-by-one"

    def reset(self, K, M):
        self.K = K

    def route(self, request, cluster):
        return self.K


def test_a_router_that_answers_no_worker_is_reported():
    from llmopt.policies.routers import ROUTERS

    ROUTERS.register("off-by-one-bad", _OffByOne)
    try:
        problems = conformance.check_router("off-by-one-bad")
    finally:
        ROUTERS.unregister("off-by-one-bad")
    assert problems and "fails" in problems[0]


def test_a_study_module_without_report_or_with_a_bad_run_is_reported(monkeypatch):
    import types

    from llmopt.bench import studies
    from llmopt.bench.plugins import conformance

    name = studies.STUDIES.names()[0]
    broken = types.SimpleNamespace(run=lambda out: [], OPTIONS={"x": 1})
    monkeypatch.setattr(studies.Study, "load", lambda self: broken)
    problems = conformance.check_study(name)
    assert any("'report'" in p for p in problems)
    assert any("'seeds'" in p for p in problems) and any("'quick'" in p for p in problems)
    assert any("OPTIONS" in p for p in problems)
