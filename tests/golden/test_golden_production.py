"""Golden numbers of ``results/production/vs-papers`` (suite ``production-vs-papers``): one committed task
recomputed from scratch, and the summary and the README's printed table recomputed from ``trials.jsonl``."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest

from llmopt.bench.suites import SUITES, Task
from llmopt.papers.printed import BLOCKS, production_gain_text
from llmopt.papers.production.vs_papers import KIND

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "results" / "production" / "vs-papers"
DATA = ROOT.parent / "shared" / "data"
TOL = 1e-9


def _trials() -> list[dict]:
    return [json.loads(line) for line in (FOLDER / "trials.jsonl").read_text(encoding="utf-8").splitlines() if line]


def _record(trace: str, rate: float, seed: int) -> dict:
    found = [r for r in _trials()
             if r["params"]["trace"] == trace and r["params"]["rate"] == rate and r["seed"] == seed]
    assert len(found) == 1
    return found[0]


@pytest.mark.skipif(not (DATA / "traces").is_dir(), reason=f"staged trace data not found at {DATA}")
@pytest.mark.parametrize("policies", [("mc-sf", "vllm", "fcfs", "sarathi")])
def test_one_committed_task_recomputed(policies: tuple[str, ...], monkeypatch) -> None:
    # LMSYS at λ = 50, seed 0 (the overloaded point): the four policies the README's table compares
    monkeypatch.setenv("LLMOPT_DATA", str(DATA))
    suite = dataclasses.replace(SUITES.get("production-vs-papers"), policies=policies, reference="vllm")
    spec = next(w for w in suite.workloads if w.params["trace"] == "lmsys" and w.params["rate"] == 50.0)
    task = Task(spec, 0)
    rec = KIND.blank_record(suite, task)
    KIND.fill_record(rec, suite, task)
    committed = _record("lmsys", 50.0, 0)
    assert rec["n"] == committed["n"] == 1000 and rec["M"] == committed["M"] == 16_492
    for p in policies:
        for field in ("status", "preemptions", "recomputed", "iterations", "budget"):
            assert rec[f"{field}_{p}"] == committed[f"{field}_{p}"], (p, field)
        for field in ("latency", "latency_p50", "latency_p99", "ttft_mean", "tbt_mean", "throughput_rps"):
            assert rec[f"{field}_{p}"] == pytest.approx(committed[f"{field}_{p}"], rel=TOL), (p, field)


def _cell(rows: list[dict], trace: str, rate: float, policy: str, column: str) -> str:
    return next(r[column] for r in rows if r["trace"] == trace and float(r["rate"]) == rate and r["policy"] == policy)


def test_gain_text_signs_and_zero() -> None:
    assert production_gain_text(30.9, 45.8) == "+33 %"
    assert production_gain_text(28.2, 25.9) == "−9 %"
    assert production_gain_text(14.21, 14.20) == "0 %"  # no "−0 %"


def test_summary_and_printed_table_recomputed_from_the_trials() -> None:
    trials = _trials()
    rows = list(csv.DictReader((FOLDER / "summary.csv").open(encoding="utf-8", newline="")))
    for trace, rate in (("lmsys", 50.0), ("azure-conv", 0.5)):
        recs = [r for r in trials if r["params"]["trace"] == trace and r["params"]["rate"] == rate]
        assert len(recs) == 3
        mean = {p: sum(r[f"latency_{p}"] for r in recs) / 3 for p in ("mc-sf", "fcfs", "vllm")}
        for p, value in mean.items():
            row = next(r for r in rows if r["trace"] == trace and float(r["rate"]) == rate and r["policy"] == p)
            assert float(row["latency"]) == pytest.approx(value, rel=TOL)
            assert float(row["vs_vllm"]) == pytest.approx(value / mean["vllm"], rel=TOL)
        table = BLOCKS["production-gain"].render()
        line = next(x for x in table.splitlines() if x.startswith(f"| {trace} | {rate:g} |"))
        gain_fcfs = round(100 * (1 - mean["mc-sf"] / mean["fcfs"]))
        gain_vllm = round(100 * (1 - mean["mc-sf"] / mean["vllm"]))
        assert production_gain_text(mean["mc-sf"], mean["fcfs"]) == (
            "0 %" if gain_fcfs == 0 else f"{gain_fcfs:+d} %".replace("-", "−"))
        assert f"| {mean['fcfs']:,.1f} | {mean['vllm']:,.1f} |" in line and f"| {mean['mc-sf']:,.1f} |" in line
        assert f"| {production_gain_text(mean['mc-sf'], mean['fcfs'])} | " \
               f"{production_gain_text(mean['mc-sf'], mean['vllm'])} |" in line
        assert gain_vllm == round(100 * (1 - float(_cell(rows, trace, rate, "mc-sf", "vs_vllm"))))
