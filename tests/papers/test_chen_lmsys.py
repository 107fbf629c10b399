"""The ``chen-lmsys`` suite (C §6, Figures 5–7) and its report (:mod:`llmopt.papers.chen.lmsys_report`).

The report is tested on hand-made records, where every number is known: the ratios are
ratios of means over the seeds where both schedules are verified, an unverified schedule
never enters a number, and a claim flips from *holds* to *does not hold* when one
latency moves past its threshold. The data-dependent tests (one small real task through
the harness, the memory study, the discrete engine) are skipped when ``shared/data`` is
absent.

Checked by breaking the report by hand (then restored): (1) making ``_latency`` ignore
``verified_<p>`` fails ``test_unverified_schedules_never_count``; (2) making a claim hold
when it is met at *any* size (``HOLDS if held`` instead of ``if not failed``) fails
``test_claims_flip_when_one_latency_crosses_the_threshold``; (3) using the mean of
per-seed ratios instead of the ratio of means fails ``test_ratio_is_ratio_of_means``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from llmopt.bench.plugins.conformance import check_suite
from llmopt.bench.suites import SUITES, Suite, WorkloadSpec
from llmopt.papers.chen.lmsys_report import (
    CHEN_LMSYS,
    CLAIMS,
    CLOSE,
    FAILS,
    HOLDS,
    NO_DATA,
    POLICIES,
    SETTINGS,
    SIZES,
    evaluate_claims,
    figures_5_7,
    figures_frame,
)
from llmopt.papers.chen.lmsys_study import claims_by_m

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
needs_data = pytest.mark.skipif(not (DATA / "traces").is_dir(),
                                reason=f"staged trace data not found at {DATA} (shared/data is not in the repository)")

# A world in which every claim of C holds: latency per (setting key, policy).
_GOOD = {
    "exp1": {"h-sf": 100.0, "a-max": 300.0, "a-min": 102.0},
    "exp2": {"h-sf": 100.0, "a-max": 150.0, "a-min": 101.0},
    "exp3 x=0.1": {"h-sf": 100.0, "a-max": 101.0, "a-min": 101.0},
    "exp3 x=0.95": {"h-sf": 100.0, "a-max": 130.0, "a-min": 103.0},
    "exp3 x=0.99": {"h-sf": 100.0, "a-max": 135.0, "a-min": 104.0},
}


def _tiny_suite(settings: Any = SETTINGS, sizes: tuple[int, ...] = (200, 400), seeds: tuple[int, ...] = (0, 1)) -> Any:
    return dataclasses.replace(CHEN_LMSYS, name="tiny-chen-lmsys", workloads=tuple(
        WorkloadSpec("chen-lmsys", seeds, {"n": n, "predictions": s.spec}, f"{s.key} n={n}")
        for s in settings for n in sizes))


def _records(table: dict[str, dict[str, float]] = _GOOD, sizes: tuple[int, ...] = (200, 400),
             seeds: tuple[int, ...] = (0, 1)) -> list[dict[str, Any]]:
    recs = []
    for s in SETTINGS:
        if s.key not in table:
            continue
        for n in sizes:
            for seed in seeds:
                rec: dict[str, Any] = {"workload": "chen-lmsys", "params": {"n": n, "predictions": s.spec},
                                       "seed": seed, "error": None}
                for p in POLICIES:
                    rec[f"latency_{p}"] = table[s.key][p]
                    rec[f"verified_{p}"] = True
                    rec[f"evictions_{p}"] = 7 if p == "a-min" else 0
                    rec[f"recomputed_{p}"] = 70 if p == "a-min" else 0
                    rec[f"sim_s_{p}"] = 0.01
                recs.append(rec)
    return recs


def _find(recs: list[dict[str, Any]], key: str, n: int, seed: int) -> dict[str, Any]:
    spec = next(s.spec for s in SETTINGS if s.key == key)
    return next(r for r in recs if r["params"] == {"n": n, "predictions": spec} and r["seed"] == seed)


def _verdicts(recs: list[dict[str, Any]], suite: Any) -> dict[str, Any]:
    return {r.spec.key: r for r in evaluate_claims(recs, suite)}


def test_suite_is_registered_and_conforms():
    suite = SUITES.get("chen-lmsys")
    assert suite == CHEN_LMSYS
    assert check_suite(suite) == []
    assert suite.kind == "trace" and suite.reference == "h-sf" and suite.policies == ("h-sf", "a-max", "a-min")
    assert suite.n_tasks == len(SETTINGS) * len(SIZES) * 3
    labels = [w.label for w in suite.workloads]
    assert "exp1 n=200" in labels and "exp3 x=0.99 n=2000" in labels and len(set(labels)) == len(labels)
    assert {w.params["predictions"] for w in suite.workloads} == {
        "shared:lower=1,upper=1000", "bins:width=100,count=10", "relative:x=0.1", "relative:x=0.95",
        "relative:x=0.99"}
    assert suite.extra_report == "llmopt.papers.chen.lmsys_report:figures_5_7"
    assert Suite.from_dict(suite.to_dict()) == suite  # a results folder's suite.json gives the same suite


def test_every_claim_holds_in_a_world_built_to_satisfy_them():
    suite = _tiny_suite()
    res = _verdicts(_records(), suite)
    assert set(res) == {c.key for c in CLAIMS}
    assert all(r.verdict == HOLDS for r in res.values()), {k: r.verdict for k, r in res.items()}
    assert res["fig6-amax-halved"].values == {200: 0.5, 400: 0.5}
    assert res["fig7-amax-worse-0.95"].values[400] == pytest.approx(130 / 101)


def test_claims_flip_when_one_latency_crosses_the_threshold():
    suite = _tiny_suite()
    recs = _records()
    _find(recs, "exp1", 400, 1)["latency_a-min"] = 120.0  # mean over seeds: 111 → 11 % above H-SF
    res = _verdicts(recs, suite)["fig5-amin-close"]
    assert res.verdict == FAILS
    assert res.held_at == (200,) and res.failed_at == (400,)
    assert res.worst_n == 400 and res.worst == pytest.approx(1.11) and res.worst_seed == pytest.approx(1.2)
    # exactly at the threshold still holds; just above it does not
    recs = _records()
    for seed in (0, 1):
        _find(recs, "exp1", 400, seed)["latency_a-min"] = 100.0 * (1 + CLOSE)
    assert _verdicts(recs, suite)["fig5-amin-close"].verdict == HOLDS
    _find(recs, "exp1", 400, 0)["latency_a-min"] = 100.0 * (1 + CLOSE) + 0.5
    assert _verdicts(recs, suite)["fig5-amin-close"].verdict == FAILS
    # A_max in Exp. 2 no longer "nearly halved" when it drops to a fifth of Exp. 1
    recs = _records()
    for r in recs:
        if r["params"]["predictions"].startswith("bins"):
            r["latency_a-max"] = 60.0
    res = _verdicts(recs, suite)
    assert res["fig6-amax-halved"].verdict == FAILS and res["fig6-amax-improves"].verdict == HOLDS


def test_ratio_is_ratio_of_means():
    suite = _tiny_suite()
    recs = _records()
    _find(recs, "exp2", 200, 0).update({"latency_a-min": 100.0, "latency_h-sf": 50.0})  # seed ratio 2.0
    _find(recs, "exp2", 200, 1).update({"latency_a-min": 100.0, "latency_h-sf": 150.0})  # seed ratio 0.667
    res = _verdicts(recs, suite)["fig6-amin-close"]
    assert res.values[200] == pytest.approx(100.0 / 100.0)  # the mean of the ratios would be 1.333
    assert res.worst_seed == pytest.approx(2.0)


def test_unverified_schedules_never_count():
    suite = _tiny_suite()
    recs = _records()
    bad = _find(recs, "exp1", 400, 0)
    bad["latency_a-min"] = 10_000.0
    bad["verified_a-min"] = False  # a rejected schedule: its number must not enter any mean or ratio
    res = _verdicts(recs, suite)
    assert res["fig5-amin-close"].verdict == HOLDS and res["fig5-amin-close"].values[400] == pytest.approx(1.02)
    df = figures_frame(recs, suite)
    row = df[(df["setting"] == "exp1") & (df["n"] == 400) & (df["algorithm"] == "a-min")].iloc[0]
    assert row["tasks"] == 2 and row["trials"] == 1 and row["latency_mean"] == pytest.approx(102.0)
    # a task that failed as a whole is left out too
    _find(recs, "exp1", 200, 1)["error"] = "boom"
    df = figures_frame(recs, suite)
    assert df[(df["setting"] == "exp1") & (df["n"] == 200)]["tasks"].tolist() == [1, 1, 1]


def test_claims_of_settings_not_run_are_not_evaluated():
    suite = _tiny_suite(settings=SETTINGS[:1])
    res = _verdicts(_records({"exp1": _GOOD["exp1"]}), suite)
    assert res["fig5-amin-close"].verdict == HOLDS
    assert res["fig6-amin-close"].verdict == NO_DATA and res["fig7-amax-worse-0.95"].verdict == NO_DATA


def test_figures_5_7_writes_tables_plots_and_verdicts(tmp_path):
    suite = _tiny_suite()
    recs = _records()
    for seed in (0, 1):
        _find(recs, "exp3 x=0.95", 400, seed)["latency_a-min"] = 170.0
    made = figures_5_7(tmp_path, suite, recs)
    assert any(m.startswith("figures_5_7.md") for m in made)
    for f in ("figure5.png", "figure6.png", "figure7.png"):
        assert (tmp_path / f).stat().st_size > 0 and any(m.startswith(f) for m in made)
    md = (tmp_path / "figures_5_7.md").read_text()
    for heading in ("## At n = 400", "## Figure 5", "## Figure 6", "## Figure 7", "## C's claims"):
        assert heading in md
    line = next(x for x in md.splitlines() if x.startswith("| fig7-amin-close-0.95 |"))
    assert "**does not hold** (1 of 2 sizes)" in line and "1.700" in line
    line = next(x for x in md.splitlines() if x.startswith("| fig5-amin-close |"))
    assert "**holds**" in line
    # A_min's row at n = 400 in Exp. 1: latencies, ratios, evictions, recomputed tokens
    assert "| 400 | 2 | 100.00 | 300.00 | 102.00 | 3.000 | 1.020 | 1.020 | 7 | 70 |" in md
    csv = pd.read_csv(tmp_path / "figures_5_7.csv")
    assert len(csv) == len(SETTINGS) * 2 * len(POLICIES)


@needs_data
def test_small_real_task_runs_through_the_harness(tmp_path, monkeypatch):
    from llmopt.bench.harness import read_trials, run_suite
    from llmopt.report.summary import write_report

    monkeypatch.setenv("LLMOPT_DATA", str(DATA))
    suite = dataclasses.replace(CHEN_LMSYS, name="tiny-chen-lmsys", workloads=(
        WorkloadSpec("chen-lmsys", (0,), {"n": 400, "predictions": SETTINGS[0].spec}, "exp1 n=400"),
        WorkloadSpec("chen-lmsys", (0,), {"n": 400, "predictions": SETTINGS[1].spec}, "exp2 n=400")))
    out = tmp_path / "run"
    records = read_trials(run_suite(suite, out, executor="inline", progress=False))[0]
    assert len(records) == 2
    for r in records:
        assert r["error"] is None and r["M"] == 16492 and r["n"] == 400
        for p in suite.policies:
            assert r[f"verified_{p}"] is True and r[f"latency_{p}"] > 0
        assert r["evictions_a-max"] == 0 and r["evictions_h-sf"] == 0
    write_report(out)
    md = (out / "figures_5_7.md").read_text()
    assert "## Figure 5" in md and "## Figure 6" in md and "fig6-amax-improves" in md
    assert "figures_5_7.md" in (out / "summary.md").read_text()


@needs_data
def test_memory_study_and_discrete_engine_on_a_small_sample(monkeypatch):
    from llmopt.papers.chen.lmsys_study import discrete_records, m_sensitivity_frame

    monkeypatch.setenv("LLMOPT_DATA", str(DATA))
    df = m_sensitivity_frame(seed=0, n=400, factors=(1,), settings=SETTINGS[:2])
    assert len(df) == 4 and df["M"].tolist()[:2] == [16492, 16492]
    big = df[df["M"] > 16492].iloc[0]  # M = Σ(s+o): everything starts at once, so A_min = H-SF exactly
    assert big["cont_a-min"] == big["cont_h-sf"] and big["disc_a-min"] == big["disc_h-sf"]
    assert big["evictions_a-min"] == 0
    cm = claims_by_m(df, "cont", 0, 400)
    assert list(cm["claim"]) == [c.key for c in CLAIMS]
    assert cm.set_index("claim").loc["fig6-amin-close", f"{int(big['M']):,}"] == "1.00 ✓"
    recs = discrete_records(seeds=(0,), sizes=(400,), settings=SETTINGS[:1])
    assert len(recs) == 1 and all(recs[0][f"verified_{p}"] for p in POLICIES)
    assert recs[0]["latency_a-min"] >= recs[0]["latency_h-sf"] > 0


def test_c_like_distribution_has_cs_median_and_lemma2_is_far_from_one():
    import numpy as np

    from llmopt.papers.chen.lmsys_study import c_like_outputs, lemma2_c_like

    x = c_like_outputs()
    k = np.arange(1, 884)
    assert x.sum() == pytest.approx(1.0) and (x > 0).all()
    assert k[np.searchsorted(np.cumsum(x), 0.5)] == 43
    assert (k * x).sum() == pytest.approx(78.79, abs=0.01)
    ratios = lemma2_c_like()
    assert 1.85 < ratios["s = 1"] < ratios["s = 11"] < ratios["s = 41"] < 2.1
