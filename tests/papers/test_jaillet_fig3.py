"""J Figure 3 (llmopt.papers.jaillet.fig3): the slope fit, the per-seed slopes, the cap and the report."""

from __future__ import annotations

import pytest

from llmopt.papers.jaillet.fig3 import (
    JAILLET_FIG3,
    JAILLET_FIG3_SEPARATE,
    cap_frame,
    display_name,
    fig3_suite,
    figure3,
    fit_slope,
    slope_frame,
    slope_summary,
)


def test_fit_slope_recovers_a_line_and_reports_its_fit():
    """Breakage caught: ``np.polyfit(x, y, 1)`` unpacked as ``(intercept, slope)``; R² from the wrong residual."""
    xs = [1000, 2000, 3000, 4000]
    fit = fit_slope(xs, [5 + x / 6 for x in xs])
    assert fit.slope == pytest.approx(1 / 6) and fit.intercept == pytest.approx(5) and fit.r2 == pytest.approx(1)
    noisy = fit_slope([0, 1, 2, 3], [0.0, 2.0, 1.0, 3.0])  # slope 0.8, intercept 0.3, R² = 3.2 / 5
    assert (noisy.slope, noisy.intercept, noisy.r2) == pytest.approx((0.8, 0.3, 0.64))
    with pytest.raises(ValueError):
        fit_slope([1000, 1000], [1.0, 2.0])


def _records(lat):
    """Records of a tiny fig3 run: ``lat(policy, rate, seed, n)`` gives the latency, ``None`` for a loop."""
    recs = []
    for rate in (50, 10):
        for seed in (0, 1):
            for n in (1000, 2000, 3000):
                rec = {"params": {"n": n, "rate": rate}, "seed": seed, "error": None}
                for p in ("mc-sf", "mc-benchmark"):
                    rec[f"latency_{p}"] = lat(p, rate, seed, n)
                recs.append(rec)
    return recs


def _suite():
    import dataclasses

    return dataclasses.replace(JAILLET_FIG3, policies=("mc-sf", "mc-benchmark"))


def test_slopes_per_seed_their_ratio_and_a_lost_volume():
    """MC-SF grows 1/100 s per request on seed 0 and 2/100 on seed 1, MC-Benchmark 3/100 and 10/100: ratio of
    means 0.065 / 0.015, per-seed ratios 3 and 5. A loop at n = 2000 (seed 1, λ = 10) is left out of that
    seed's fit and counted.

    Breakage caught: per-seed ratios against the other seed's reference slope; a lost volume fitted as 0.
    """
    def lat(p, rate, seed, n):
        if p == "mc-benchmark" and rate == 10 and seed == 1 and n == 2000:
            return None
        k = (1 if seed == 0 else 2) if p == "mc-sf" else (3 if seed == 0 else 10)
        return 10.0 + k * n / 100

    slopes = slope_frame(_records(lat), _suite())
    summary = slope_summary(slopes)
    row = summary[(summary["rate"] == 50) & (summary["policy"] == "mc-benchmark")].iloc[0]
    assert row["slope_mean"] == pytest.approx(0.065) and row["ratio"] == pytest.approx(0.065 / 0.015)
    assert (row["ratio_min"], row["ratio_max"]) == pytest.approx((3.0, 5.0))
    low = summary[(summary["rate"] == 10) & (summary["policy"] == "mc-benchmark")].iloc[0]
    assert low["missing_volumes"] == 1 and low["slope_mean"] == pytest.approx(0.065)
    caps = cap_frame(_records(lat), _suite(), cap=80.0)
    by = {(r["rate"], r["policy"]): r for r in caps.to_dict("records")}
    assert by[(50, "mc-sf")]["within_cap_up_to"] == 3000  # means 25, 40, 55 s
    assert by[(50, "mc-benchmark")]["within_cap_up_to"] == 1000  # 75 s, then 140 s
    assert by[(10, "mc-benchmark")]["within_cap_up_to"] == 1000 and by[(10, "mc-benchmark")]["n=2000"] is None


def test_the_report_writes_its_table_and_figure(tmp_path):
    recs = _records(lambda p, rate, seed, n: 10.0 + (1 if p == "mc-sf" else 2) * n / 100)
    made = figure3(tmp_path, _suite(), recs)
    text = (tmp_path / "figure3.md").read_text(encoding="utf-8")
    assert len(made) == 2 and (tmp_path / "figure3.png").stat().st_size > 10_000
    assert "| MC-Benchmark | 0.0200 (1/50) |" in text and "ratio **3×**" in text and "ratio **8×**" in text


def test_display_names():
    assert display_name("alpha-protection:alpha=0.2,beta=0.1") == "α = 0.2, β = 0.1"
    assert display_name("alpha-protection:alpha=0.25") == "α = 0.25"
    assert display_name("alpha-protection:alpha=0.1,beta=0.1,pass_cost=every-pass") == "α = 0.1, β = 0.1 (every-pass)"
    assert display_name("mc-sf") == "MC-SF"


def test_the_suite_is_the_papers_grid():
    labels = [s.label for s in JAILLET_FIG3.workloads]
    assert len(labels) == 20 and labels[0] == "lmsys n=1000 λ=50" and labels[-1] == "lmsys n=10000 λ=10"
    assert all(len(s.seeds) >= 3 for s in JAILLET_FIG3.workloads) and len(JAILLET_FIG3.policies) == 8


def _stream_trace(tmp_path):
    from llmopt.workloads.traces import load_trace

    rows = "\n".join(f"{1 + i % 37},{1 + (7 * i) % 53}" for i in range(500))
    path = tmp_path / "lmsys_stream.csv"
    path.write_text("question_length,answer_length\n" + rows + "\n")
    return load_trace(path, "lmsys")


def test_stream_makes_the_volumes_prefixes_of_one_stream(tmp_path):
    """The released code's Figure 3 sampling: with ``stream = N`` the instance of ``n`` requests is the first ``n``
    requests (rows and arrivals) of the ``N``-request one, and ``n = N`` is the plain sample.

    Breakage caught: ``stream`` ignored (each volume drawn on its own: ``choice(size=n)`` is not a prefix of
    ``choice(size=N)``), or the stream's length not checked against ``n`` and the trace.
    """
    from llmopt.workloads.traces import sample_instance

    tr = _stream_trace(tmp_path)

    def key(inst):
        return [(r.arrival, r.prompt, r.output) for r in inst.requests]

    full = key(sample_instance(tr, 400, 3, rate=5.0, stream=400))
    assert full == key(sample_instance(tr, 400, 3, rate=5.0))
    for n in (1, 100, 250):
        assert key(sample_instance(tr, n, 3, rate=5.0, stream=400)) == full[:n]
    assert key(sample_instance(tr, 100, 3, rate=5.0)) != full[:100]  # the separate-samples reading differs
    with pytest.raises(ValueError, match="stream"):
        sample_instance(tr, 100, 3, rate=5.0, stream=50)
    with pytest.raises(ValueError, match="stream"):
        sample_instance(tr, 100, 3, rate=5.0, stream=501)


def test_figure3_defaults_to_the_released_codes_prefixes():
    """``jaillet-fig3`` draws the volumes as prefixes of one 10,000-request stream (the released code's
    ``dfmain.head(n)``); ``jaillet-fig3-separate`` keeps the separate samples. Breakage caught: the default
    flipped back, or the stream shorter than the largest volume."""
    assert {w.params.get("stream") for w in JAILLET_FIG3.workloads} == {10_000}
    assert all("stream" not in w.params for w in JAILLET_FIG3_SEPARATE.workloads)
    assert JAILLET_FIG3_SEPARATE.name == "jaillet-fig3-separate" and fig3_suite() == JAILLET_FIG3
    assert [w.label for w in JAILLET_FIG3_SEPARATE.workloads] == [w.label for w in JAILLET_FIG3.workloads]
    with pytest.raises(ValueError, match="sampling"):
        fig3_suite("nested")
