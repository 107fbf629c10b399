"""The uncertified LP of any formulation (:func:`llmopt.opt.relaxation.formulation_lp`), the stage behind
``llmopt solve --relax --formulation F``: its value, its deadline and its failures."""

from __future__ import annotations

import time
from typing import Any

import pytest

from llmopt.formulations.hindsight_ip import HindsightIP
from llmopt.opt.bounds import BoundContext, lp_bound
from llmopt.opt.relaxation import formulation_lp
from llmopt.solvers.highs import HighsSolver
from llmopt.workloads.jaillet import jaillet_am1

INSTANCE = jaillet_am1(0, n_range=(8, 8))
FCFS_TEL = 290  # FCFS's verified TEL on INSTANCE: the windows come from it


def test_the_binary_formulation_lp_equals_the_aggregated_lp_and_is_uncertified():
    out = formulation_lp(INSTANCE, "hindsight-ip-binary", "highs", FCFS_TEL)
    assert out["status"] == "optimal" and out["certified"] is False
    assert out["model"]["cols"] > 0 and out["formulation"] == "hindsight-ip-binary"
    # The same LP as the certified `lp` bound over the same windows (aggregation is exact).
    from llmopt.model.windows import start_windows

    certified = lp_bound(INSTANCE, BoundContext(windows=start_windows(INSTANCE, FCFS_TEL)))
    assert out["value"] == pytest.approx(certified.claimed, rel=1e-6)
    assert out["value"] <= FCFS_TEL


def test_a_passed_deadline_builds_and_solves_nothing(monkeypatch):
    calls: list[Any] = []
    monkeypatch.setattr(HighsSolver, "solve", lambda *a, **k: calls.append(a))
    out = formulation_lp(INSTANCE, "hindsight-ip", "highs", FCFS_TEL, deadline=time.perf_counter() - 1.0)
    assert out["status"] == "time_limit" and out["value"] is None and "model" not in out and calls == []


def test_a_build_that_passes_the_deadline_is_not_solved(monkeypatch):
    calls: list[Any] = []
    monkeypatch.setattr(HighsSolver, "solve", lambda *a, **k: calls.append(a))
    real_build = HindsightIP.build
    deadline = time.perf_counter() + 3600.0

    def build(self: Any, instance: Any, windows: Any) -> Any:
        model = real_build(self, instance, windows)
        monkeypatch.setattr(time, "perf_counter", lambda: deadline + 1.0)  # the build "took" an hour
        return model

    monkeypatch.setattr(HindsightIP, "build", build)
    out = formulation_lp(INSTANCE, "hindsight-ip", "highs", FCFS_TEL, deadline=deadline)
    assert out["status"] == "time_limit" and out["value"] is None and "model" in out and calls == []


def test_a_failing_formulation_is_reported_not_raised(monkeypatch):
    def boom(self: Any, instance: Any, windows: Any) -> Any:
        raise RuntimeError("broken plug-in")

    monkeypatch.setattr(HindsightIP, "build", boom)
    out = formulation_lp(INSTANCE, "hindsight-ip", "highs", FCFS_TEL)
    assert out["value"] is None and out["status"] == "failed: RuntimeError: broken plug-in"
