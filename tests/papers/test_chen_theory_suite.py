"""Suite ``chen-theory`` (C Figures 1–3 by simulation) and its report, :mod:`llmopt.papers.chen.theory_report`.

What is checked:

* the suite conforms (:func:`llmopt.bench.plugins.conformance.check_suite`) and is what the report expects
  (H-SF the reference, the figure / ``conv`` / ``opt`` entries, the M-for-50-waves rule);
* the report's ratios on hand-made records: against H-SF (C's ratio), against the certified
  bound (an upper bound on the ratio to OPT) and against a proven OPT only where one is proven;
  errors and unverified schedules are left out; the closed forms on each record's regenerated
  instance equal an independent evaluation of Lemma 2; every table and figure is written;
* one cheap real run end to end through the harness (:func:`llmopt.bench.harness.run_suite`, inline);
* an independent cross-check against the fluid closed forms at many waves (see
  :func:`test_two_point_cross_check_against_the_s1_closed_forms` for the tolerances and the
  A_min discrepancy they document).

Mutation check (done by hand while writing these tests, then reverted): (1) computing
``hsf_<p>`` as ``TEL(reference)/TEL(p)`` in :func:`record_metrics` made
``test_report_ratios_on_synthetic_records`` fail (mean 0.733 instead of 1.375); (2) letting
``opt_<p>`` fall back to the best schedule found when OPT is not proven made the same test fail
on the ``opt_a-min`` mean (1.484 instead of 1.389); (3) making :func:`crossing` return the left
end of the bracket instead of interpolating made ``test_crossing_interpolates`` fail (0.3
instead of 0.4).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from llmopt.bench.harness import read_trials, run_suite
from llmopt.bench.plugins.conformance import check_suite
from llmopt.bench.suites import SUITES, WorkloadSpec
from llmopt.engine.discrete import simulate
from llmopt.papers.chen import theory as ct
from llmopt.papers.chen import theory_report as report_module
from llmopt.papers.chen.theory_report import (
    AL_ALL_LONG_N,
    CHEN_THEORY,
    MAIN_N,
    MAIN_WAVES,
    POLICIES,
    crossing,
    random_two_point_ratio,
    record_metrics,
    theory_frame,
    theory_report,
)
from llmopt.policies import make_policy_spec
from llmopt.report.summary import write_report
from llmopt.workloads import WORKLOADS


@pytest.fixture(autouse=True)
def _small_figure1_grid(monkeypatch):
    """Figure 1's curves up to u = 1000 cost seconds of eigenproblems; the tests draw them up to u = 20."""
    monkeypatch.setattr(report_module, "FIG1_GRID", (1, 2, 5, 10, 20))


def test_suite_is_registered_and_conforms():
    suite = SUITES.get("chen-theory")
    assert suite is CHEN_THEORY
    assert check_suite("chen-theory") == []
    assert suite.kind == "hindsight" and suite.reference == "h-sf" and suite.policies == POLICIES
    assert suite.bounds == ("lp-colgen",) and suite.extra_report == "llmopt.papers.chen.theory_report:theory_report"
    roles = {w.label.split()[0] for w in suite.workloads}
    assert roles == {"F1", "F2", "F3", "conv", "opt"}
    for w in suite.workloads:
        if not w.label.startswith("F"):
            continue
        # figure entries: n = 20,000 (8,000 for the all-long two-point instances, under the simulator's loop
        # guard), M for 50 waves unless the floor M >= 20(s + u) binds
        all_long = w.params.get("t") == 0
        assert w.params["n"] == (AL_ALL_LONG_N if all_long else MAIN_N)
        inst = WORKLOADS.get(w.workload)(w.seeds[0], **dict(w.params))
        waves = inst.n * (1 + np.mean([r.output for r in inst.requests])) / inst.M
        u = inst.requests[0].upper
        assert abs(waves - MAIN_WAVES) / MAIN_WAVES < 0.05 or inst.M == 20 * (1 + u)


def _rec(workload, params, seed, tels, bound=None, opt=None, incumbent=None, **extra):
    rec = {"suite": "t", "workload": workload, "params": params, "seed": seed, "error": None,
           "n": params.get("n"), "M": None, "bound": bound, "opt": opt, "incumbent": incumbent}
    for p in POLICIES:
        rec[f"tel_{p}"] = tels.get(p)
        rec[f"verified_{p}"] = p in tels
    rec.update(extra)
    return rec


def _tiny_suite(workloads):
    return dataclasses.replace(CHEN_THEORY, name="tiny-chen-theory", workloads=tuple(workloads))


def test_report_ratios_on_synthetic_records(tmp_path):
    tp = {"ell": 1, "u": 4, "n": 50}
    wc = {"u": 5, "n": 40}
    suite = _tiny_suite([WorkloadSpec("chen-two-point", (0, 1, 2), tp, "F2 ℓ=1 t=1/α"),
                         WorkloadSpec("chen-worst-case", (0,), wc, "F1 u=5"),
                         WorkloadSpec("chen-two-point", (0,), {"ell": 1, "u": 4, "n": 30}, "opt tp")])
    records = [
        _rec("chen-two-point", tp, 0, {"h-sf": 100, "a-min": 125, "a-ell": 110, "a-max": 200, "a-random": 150},
             bound=80.0, opt=90, incumbent=90),
        _rec("chen-two-point", tp, 1, {"h-sf": 200, "a-min": 300, "a-ell": 220, "a-max": 400, "a-random": 300},
             bound=160.0, incumbent=190),  # OPT not proven
        # left out: an error, and an unverified reference schedule
        _rec("chen-two-point", tp, 2, {"h-sf": 1, "a-min": 1}, bound=1.0, error="boom"),
        _rec("chen-two-point", tp, 2, {"a-min": 1}, bound=1.0),
        _rec("chen-worst-case", wc, 0, {"h-sf": 50, "a-min": 75, "a-random": 75}, bound=40.0, incumbent=48),
    ]
    df = theory_frame(records, suite).set_index("label")
    row = df.loc["F2 ℓ=1 t=1/α"]
    assert row["trials"] == 2 and row["opt_proven"] == 1
    assert row["hsf_a-min"] == pytest.approx((1.25 + 1.5) / 2)  # C's ratio: TEL(p)/TEL(H-SF), mean over seeds
    assert row["hsf_a-min_min"] == pytest.approx(1.25) and row["hsf_a-min_max"] == pytest.approx(1.5)
    assert row["bound_a-min"] == pytest.approx((125 / 80 + 300 / 160) / 2)  # TEL / certified bound
    assert row["bound_h-sf"] == pytest.approx(1.25)
    assert row["opt_a-min"] == pytest.approx(125 / 90)  # only the trial with proven OPT
    assert row["best_a-min"] == pytest.approx((125 / 90 + 300 / 190) / 2)
    assert row["amin_eq_random"] == "1/2"  # seed 1: 300 == 300
    assert row["gap"] == pytest.approx(((90 - 80) / 90 + (190 - 160) / 190) / 2)
    # closed forms on the regenerated instances, recomputed independently
    lem = []
    for seed in (0, 1):
        inst = WORKLOADS.get("chen-two-point")(seed, **tp)
        outs = np.array([r.output for r in inst.requests])
        lem.append(ct.lemma2_cr(np.bincount(outs - 1, minlength=4) / outs.size, 1, 1))
        assert outs.size == 50
    assert row["lemma2_s"] == pytest.approx(np.mean(lem))
    t = 40 / 10  # exact proportions: t = u/ℓ = 4 -> 40 short, 10 long
    assert row["t"] == pytest.approx(t)
    assert row["amin_s0_t"] == pytest.approx(ct.two_point_cr_amin(0.25))
    assert row["al_s"] == pytest.approx(ct.al_cr(1, 4, t, 1))
    wrow = df.loc["F1 u=5"]
    assert wrow["trials"] == 1 and wrow["amin_eq_random"] == "1/1" and math.isnan(wrow["opt_a-min"])
    assert wrow["hsf_a-min"] == pytest.approx(1.5) and wrow["bound_a-min"] == pytest.approx(75 / 40)
    assert df.loc["opt tp"]["trials"] == 0

    made = theory_report(tmp_path, suite, records)
    for name in ("figure1", "figure2", "figure3", "amax_arandom", "convergence", "opt"):
        assert (tmp_path / f"{name}.md").stat().st_size > 0 and (tmp_path / f"{name}.csv").exists()
    for name in ("figure1", "figure2", "figure3"):
        assert (tmp_path / f"{name}.png").stat().st_size > 0
    assert len(made) >= 9 and (tmp_path / "theory.csv").exists()
    fig2 = (tmp_path / "figure2.md").read_text()
    assert "1.375" in fig2 and "α* = 0.3820" in fig2 and "1.375 [1.250, 1.500]" in fig2
    fig1 = (tmp_path / "figure1.md").read_text()
    assert "1.5309" in fig1 and "1.5838" in fig1  # λ_max(5) and the fit at u = 5


def test_record_metrics_skips_unusable_records():
    assert record_metrics({"error": "x", "tel_h-sf": 1, "verified_h-sf": True}, POLICIES) is None
    assert record_metrics({"error": None, "tel_h-sf": 1, "verified_h-sf": False}, POLICIES) is None
    m = record_metrics({"error": None, "tel_h-sf": 10, "verified_h-sf": True, "tel_a-min": 12,
                        "verified_a-min": False, "bound": None, "opt": None, "incumbent": None,
                        "workload": "x", "params": {}, "seed": 0}, POLICIES, closed_forms=False)
    assert m is not None and m["hsf_h-sf"] == 1.0 and "hsf_a-min" not in m and "bound_h-sf" not in m


def test_random_two_point_ratio_matches_the_paper_at_s0():
    for ell, u, t in ((1, 4, 4.0), (2, 20, 10.0), (5, 10, 0.3), (3, 7, 0.0)):
        assert random_two_point_ratio(ell, u, t, 0) == pytest.approx(ct.two_point_ratio_random(ell / u, t))
    # its sup over t at s = 0 is Thm EC.1's bound (1 + 1/α)/2, attained at t = 1/α
    assert random_two_point_ratio(1, 10, 10.0, 0) == pytest.approx(ct.random_upper_bound(0.1))


def test_crossing_interpolates():
    assert crossing([0.1, 0.3, 0.5], [1.5, 1.4, 1.2], [1.1, 1.2, 1.4]) == pytest.approx(0.3 + 0.2 * 0.2 / 0.4)
    assert crossing([0.1, 0.2], [1.0, 1.0], [2.0, 2.0]) is None
    alphas = np.linspace(0.05, 0.95, 19)
    x = crossing(alphas, [ct.two_point_cr_amin(a) for a in alphas], [ct.two_point_cr_al(a) for a in alphas])
    assert x == pytest.approx(ct.ALPHA_STAR, abs=0.01)


def test_one_real_run_end_to_end(tmp_path):
    suite = _tiny_suite([WorkloadSpec("chen-two-point", (0,), {"ell": 1, "u": 4, "n": 60}, "F2 ℓ=1 t=1/α"),
                         WorkloadSpec("chen-worst-case", (0,), {"u": 3, "n": 40}, "F1 u=3")])
    suite = dataclasses.replace(suite, ip_time_limit=3.0, search_evals=5)
    out = tmp_path / "run"
    records = read_trials(run_suite(suite, out, executor="inline", progress=False, log=lambda _: None))[0]
    assert len(records) == 2
    for r in records:
        assert r["error"] is None and r["bound"] is not None
        for p in POLICIES:
            assert r[f"verified_{p}"] is True and r[f"tel_{p}"] >= r["bound"] - 1e-6  # DESIGN §4 inv. 1
    write_report(out)
    assert (out / "figure1.png").exists() and (out / "figure2.png").exists()
    assert "figure1.md" in (out / "summary.md").read_text()
    df = theory_frame(records, suite).set_index("label")
    r = [x for x in records if x["workload"] == "chen-two-point"][0]
    assert df.loc["F2 ℓ=1 t=1/α"]["hsf_a-min"] == pytest.approx(r["tel_a-min"] / r["tel_h-sf"])


def test_two_point_cross_check_against_the_s1_closed_forms():
    """Two-point ``ℓ = 1, u = 4, t = 1/α = 4``, ``s = 1``, ``n = 20,000``, ``M = 260`` (200 waves).

    Independent of the report: simulate, then compare with the fluid closed forms at ``s = 1``.
    Tolerances from measurement (seed 0): H-SF's TEL is within 1.5 % of Lemma 2's fluid TEL
    (measured +0.8 %); A_ℓ/H-SF within 1.5 % of the closed form of Thm 7's proof at s = 1
    (measured 1.1704 vs 1.1765, −0.5 %). A_min does **not** approach Lemma 2 (1.4235 at s = 1):
    measured 1.6273 (+14.3 %), with A_min's schedule identical to A_random's (no cancellation
    happens). The test pins that documented discrepancy (+8 % … +20 %; see
    results/chen/theory/README.md): if A_min is changed to follow the paper's period dynamics, this
    assertion should be revisited. At the workloads' default ``M`` (10 waves) A_min/H-SF happens
    to land within 0.5 % of Lemma 2 (n = 20,000: 1.4176) only because both TELs are ~15 % above
    their fluid values; that coincidence is not used as a check.
    """
    inst = WORKLOADS.get("chen-two-point")(0, ell=1, u=4, n=20_000, M=260)
    tel = {p: simulate(inst, make_policy_spec(p, seed=0)).tel for p in ("h-sf", "a-min", "a-ell", "a-random")}
    outs = np.array([r.output for r in inst.requests])
    x = ct.empirical_distribution(outs, 1, 4)
    assert tel["h-sf"] / ct.tel_hsf_closed(x, 1, 1, inst.n, inst.M) == pytest.approx(1.0, abs=0.015)
    t = (outs == 1).sum() / (outs == 4).sum()
    assert tel["a-ell"] / tel["h-sf"] == pytest.approx(ct.al_cr(1, 4, t, 1), rel=0.015)
    gap = (tel["a-min"] / tel["h-sf"]) / ct.lemma2_cr(x, 1, 1) - 1
    assert 0.08 < gap < 0.20
    assert tel["a-min"] == tel["a-random"]
