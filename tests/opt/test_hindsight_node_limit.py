"""A node-limited hindsight IP (``ip_node_limit``): the same answer on every run, the clock only a safety cap.

No test here depends on the machine's speed: a node limit stops HiGHS where the model alone says, and a
safety cap of 0 s has passed at HiGHS's first clock check on any machine.
"""

from __future__ import annotations

import pytest
from helpers import fake_solver

from llmopt.model.result import SolveStatus
from llmopt.opt.hindsight import solve_hindsight
from llmopt.solvers import SOLVERS, get_solver
from llmopt.solvers.base import Capability
from llmopt.verify.checker import check_schedule
from llmopt.workloads.jaillet import jaillet_am1


def _instance():  # type: ignore[no-untyped-def]
    # One branch-and-bound node (the root) does not prove this one: its MIP bound stays below the incumbent.
    return jaillet_am1(3, n_range=(10, 10), M_range=(12, 12))


def _solve(nodes: int | None, cap: float | None = None):  # type: ignore[no-untyped-def]
    # No bound stage: the IP always runs, and its MIP bound is the only bound above sum-of-outputs.
    return solve_hindsight(_instance(), bounds=(), search_evals=20, ip_time_limit=cap, ip_node_limit=nodes)


def test_a_node_limited_ip_gives_the_same_answer_twice_and_stops_at_its_limit() -> None:
    first, second = _solve(1), _solve(1)
    for res in (first, second):
        assert res.solver == "highs" and res.ip_time_capped is False
        assert res.status is SolveStatus.NODE_LIMIT and "node limit (1 nodes) reached" in res.message
        # The bound of a node-limited stop is the solver's MIP bound, above Σo (48) and below the incumbent.
        assert res.bound_certificate == "mip-bound-from-solver"
        assert _instance().total_output < res.bound < res.incumbent
        assert check_schedule(_instance(), res.starts).tel == res.incumbent
    assert (first.status, first.bound, first.incumbent, dict(first.starts)) == \
           (second.status, second.bound, second.incumbent, dict(second.starts))


def test_the_safety_cap_is_recorded_when_it_stops_the_solve_first() -> None:
    # A cap of 0 s has passed at HiGHS's first clock check on any machine, before any node.
    res = _solve(10, cap=0.0)
    assert res.status is SolveStatus.TIME_LIMIT and res.ip_time_capped is True
    assert "safety cap" in res.message and "depends on the machine" in res.message


def test_the_node_limit_reaches_the_solver_and_a_solver_without_one_is_refused() -> None:
    seen: list[dict] = []
    base = fake_solver("fake-nodes", frozenset({Capability.MIP, Capability.NODE_LIMIT}))

    class Recording(base):  # type: ignore[misc, valid-type]
        def solve(self, model, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(kwargs)
            return super().solve(model, **kwargs)

    SOLVERS.register("fake-nodes", Recording)
    SOLVERS.register("fake-no-nodes", fake_solver("fake-no-nodes", frozenset({Capability.MIP})))
    try:
        solve_hindsight(_instance(), solver="fake-nodes", bounds=("lp",), search_evals=5, ip_node_limit=7)
        assert seen and seen[-1]["node_limit"] == 7
        solve_hindsight(_instance(), solver="fake-nodes", bounds=("lp",), search_evals=5)
        assert "node_limit" not in seen[-1]  # no limit: adapters without the keyword keep working
        with pytest.raises(ValueError, match="ip_node_limit: solver 'fake-no-nodes' cannot stop at a node limit"):
            solve_hindsight(_instance(), solver="fake-no-nodes", bounds=("lp",), search_evals=5, ip_node_limit=7)
    finally:
        SOLVERS.unregister("fake-nodes")
        SOLVERS.unregister("fake-no-nodes")


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "100"])
def test_a_bad_node_limit_names_the_field(bad: object) -> None:
    with pytest.raises(ValueError, match="ip_node_limit must be an integer >= 1"):
        solve_hindsight(_instance(), bounds=("lp",), search_evals=5, ip_node_limit=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="node_limit must be an integer >= 1"):
        get_solver("highs").solve(_model(), node_limit=bad)


def _model():  # type: ignore[no-untyped-def]
    from llmopt.formulations import make_formulation
    from llmopt.model.windows import WINDOWS

    inst = _instance()
    form = make_formulation("hindsight-ip")
    best = solve_hindsight(inst, bounds=(), search_evals=5, solve_ip=False).incumbent
    return form.build(inst, WINDOWS.get("upper-bound")(inst, best))


def test_every_open_source_mip_adapter_declares_a_node_limit() -> None:
    for name in ("highs", "cbc", "scip", "gurobi"):
        assert SOLVERS.get(name).info.has(Capability.NODE_LIMIT), name
