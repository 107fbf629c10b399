"""A retried task in ``trials.jsonl``: the last record of a task counts (``llmopt.bench.store.latest_records``).

``llmopt bench run --retry-errors`` appends a new record for every failed task and leaves the failed one
in the file (nothing computed is lost), so a folder can hold two records with the same task key. Every
reader goes through :func:`latest_records`: the summary, ``summary.md`` and the check that makes ``bench
run`` exit 1 on failed tasks. Here a task fails, is retried and succeeds, and each of them must use the
retry.

Breakage tried by hand (applied, the tests run, reverted; both fail): ``latest_records`` keeping the
first record of a task (``last.setdefault(task_key(rec), rec)``).
"""

from __future__ import annotations

from pathlib import Path

import bench_helpers
import pytest
import typer
from bench_helpers import tiny_suite

from llmopt.bench.harness import read_trials, run_suite
from llmopt.bench.store import latest_records, task_key
from llmopt.cli.bench import _exit_on_failed_tasks
from llmopt.report.summary import summarize, write_report
from llmopt.workloads.jaillet import jaillet_am1


def test_latest_records_keeps_the_last_record_in_first_seen_order() -> None:
    failed = {"workload": "w", "params": {"n": 3}, "seed": 1, "error": "ValueError: boom", "tel": None}
    other = {"workload": "w", "params": {"n": 3}, "seed": 2, "error": None, "tel": 7}
    retry = {"workload": "w", "params": {"n": 3}, "seed": 1, "error": None, "tel": 5}
    legacy = {"workload": "w", "seed": 3, "error": None, "tel": 9}  # written before params were in the key
    again = {"workload": "w", "params": {}, "seed": 3, "error": None, "tel": 8}
    got = latest_records([failed, other, retry, legacy, again])
    assert got == [retry, other, again]
    assert [task_key(r) for r in got] == [task_key(failed), task_key(other), task_key(legacy)]
    assert latest_records([]) == []


def test_reports_use_the_retry_of_a_failed_task(tmp_path: Path, monkeypatch) -> None:
    suite = tiny_suite(seeds=(0, 1), flaky_too=True)
    out = tmp_path / "run"
    run_suite(suite, out, executor="inline", progress=False)
    first = read_trials(out / "trials.jsonl")[0]
    assert [r["seed"] for r in first if r["error"]] == [1]
    with pytest.raises(typer.Exit):  # `bench run` exits 1 while the task's only record failed
        _exit_on_failed_tasks(out / "trials.jsonl", suite)

    # the cause is fixed (the inline executor resolves `bench_helpers:flaky` again); --retry-errors
    monkeypatch.setattr(bench_helpers, "flaky", lambda seed: jaillet_am1(seed, n_range=(4, 5), M_range=(8, 9)))
    run_suite(suite, out, executor="inline", progress=False, retry_errors=True)
    records = read_trials(out / "trials.jsonl")[0]
    assert len(records) == len(first) + 1  # the failed record stays in the file, the retry follows it
    failed, retry = (r for r in records if (r["workload"], r["seed"]) == ("bench_helpers:flaky", 1))
    assert failed["error"] and retry["error"] is None and retry["tel"] > 0

    _exit_on_failed_tasks(out / "trials.jsonl", suite)  # no failed task left: returns
    write_report(out)
    flaky_row = summarize(records, suite).set_index("workload").loc["bench_helpers:flaky"]
    assert (flaky_row["trials"], flaky_row["errors"]) == (2, 0)
    assert (out / "summary.csv").read_text(encoding="utf-8") == summarize(records, suite).to_csv(index=False)
    latest = latest_records(records)
    assert len(latest) == len(first) and retry in latest and failed not in latest
