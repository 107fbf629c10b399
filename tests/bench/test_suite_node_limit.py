"""A suite's ``ip_node_limit``: validated, kept in suite.json and the settings, passed to the IP, recorded per trial.

No verdict here waits on a clock: the node limit decides, and the one safety-cap case uses a cap that has
passed at HiGHS's first clock check on any machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_helpers import tiny_suite

from llmopt.bench.harness import HarnessError, read_trials, run_suite
from llmopt.bench.suites import Suite, get_suite


def _run(suite: Suite, out: Path) -> list[dict]:
    return read_trials(run_suite(suite, out, executor="inline", progress=False))[0]


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "2000"])
def test_a_bad_node_limit_is_refused_naming_the_field(bad: object) -> None:
    with pytest.raises(ValueError, match=r"suite 'test-tiny': ip_node_limit must be an integer >= 1"):
        tiny_suite(ip_node_limit=bad)
    with pytest.raises(ValueError, match="ip_node_limit must be an integer >= 1"):
        Suite.from_dict({**tiny_suite().to_dict(), "ip_node_limit": bad})


def test_the_node_limit_round_trips_and_is_a_setting() -> None:
    s = tiny_suite(ip_node_limit=300)
    assert s.to_dict()["ip_node_limit"] == 300 and s.settings()["ip_node_limit"] == 300
    assert Suite.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    old = {k: v for k, v in tiny_suite().to_dict().items() if k != "ip_node_limit"}  # a suite.json from before
    assert Suite.from_dict(old).ip_node_limit is None


def test_each_trial_records_its_node_limit_and_a_folder_refuses_another(tmp_path: Path) -> None:
    # No bound stage: the IP runs on every instance that waits, so the limit reaches HiGHS.
    suite = tiny_suite(seeds=(0,), bounds=(), ip_node_limit=1, ip_time_limit=600.0)
    out = tmp_path / "run"
    records = _run(suite, out)
    assert {r["ip_node_limit"] for r in records} == {1}
    solved = [r for r in records if r["hindsight_stage_s"].get("IP") is not None]
    assert solved, "the IP ran on no instance"
    for r in solved:
        assert r["ip_time_capped"] is False and not r["warnings"], r
        assert r["status"] in ("optimal", "node_limit"), r
    meta = json.loads((out / "suite.json").read_text())
    assert meta["suite"]["ip_node_limit"] == 1 and meta["settings"]["ip_node_limit"] == 1
    with pytest.raises(HarnessError, match=r"different settings \(ip_node_limit\)"):
        _run(tiny_suite(seeds=(0,), bounds=(), ip_node_limit=2, ip_time_limit=600.0), out)


def test_a_trial_stopped_by_the_safety_cap_says_so(tmp_path: Path) -> None:
    # A cap of 1 ns has passed at HiGHS's first clock check on any machine, so the cap stops the solve.
    suite = tiny_suite(seeds=(0,), bounds=(), ip_node_limit=1000, ip_time_limit=1e-9)
    records = [r for r in _run(suite, tmp_path / "capped") if r["hindsight_stage_s"].get("IP") is not None]
    assert records
    for r in records:
        assert r["ip_time_capped"] is True and r["status"] == "time_limit"
        assert any("safety cap" in w and "depends on the machine" in w for w in r["warnings"]), r["warnings"]


def test_a_suite_without_a_node_limit_records_none() -> None:
    from llmopt.bench.hindsight_task import blank_record

    suite = tiny_suite()
    rec = blank_record(suite, next(suite.tasks()))
    assert rec["ip_node_limit"] is None and rec["ip_time_capped"] is None


def test_chen_theory_is_decided_by_nodes() -> None:
    suite = get_suite("chen-theory")
    assert suite.ip_node_limit == 12_000  # proves every trial the former 20-s limit proved (the hardest needs 11,029)
    assert suite.ip_time_limit is not None and suite.ip_time_limit >= 60  # a generous safety cap, not the limit
