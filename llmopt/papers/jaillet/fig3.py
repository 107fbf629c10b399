"""J Figure 3 (= J0 Figure 5): mean latency vs request volume, its slopes, and J0 §8.2's 200 s cap.

The paper runs its eight §5.2 algorithms on 1,000, 2,000, …, 10,000 LMSYS requests under
high (λ = 50 /s) and low (λ = 10 /s) demand and reports that mean latency grows linearly
with the volume, with slopes (DIGEST §4.2):

* high demand: MC-SF ≈ 1/6, the best benchmark ≈ 1/2 (J0 §8.2: "approximately three times");
* low demand: MC-SF ≈ 1/800, the best benchmark ≈ 1/100 ("at least eight times"; J0 §7.2
  names α = 0.2 with β = 0.2 and β = 0.1 as the best);

and J0 §8.2 turns it into "with a 200 s latency cap, two A100s serve up to 10,000 arrivals
with Algorithm 2 (MC-SF)". The slopes' units are never stated (DIGEST I-17: read as seconds
per request they contradict Table 1), so only their *ratios* and the algorithms' order are
compared.

:data:`JAILLET_FIG3` is the suite (registered as ``jaillet-fig3``): the volumes of one seed are
prefixes of one 10,000-request stream, rows and Poisson arrivals (DIGEST I-44: the paper does not
say; the authors' released code, ``anonymouspeople111/neurips2025-code``, runs ``dfmain.head(n)``
for n = 1,000 … 10,000), seeds 0–2 by default (``llmopt bench run jaillet-fig3 --seeds 10`` for
more), the continuous engine with the Llama2-70B cost model. :data:`JAILLET_FIG3_SEPARATE`
(``jaillet-fig3-separate``) is the other reading: every volume and seed its own sample (the
default before the released code was read; ``results/jaillet/fig3/README.md`` compares the two).
:func:`figure3` is the suites' ``extra_report``: per seed and algorithm a least-squares line of
mean latency on volume (:func:`fit_slope`), the slopes' spread over seeds, their ratio to MC-SF
beside the paper's, the cap check and ``figure3.png`` in the paper's layout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from llmopt.bench.suites import Suite, WorkloadSpec
from llmopt.papers.jaillet.suites import J52_POLICIES, LMSYS_TRACE

__all__ = ["JAILLET_FIG3", "JAILLET_FIG3_SEPARATE", "SAMPLINGS", "fig3_suite", "VOLUMES", "RATES", "PAPER_SLOPES",
           "CAP_S", "SlopeFit", "fit_slope", "slope_frame", "slope_summary", "cap_frame", "figure3", "display_name"]

#: The paper's request volumes and demand levels.
VOLUMES: tuple[int, ...] = tuple(range(1000, 10_001, 1000))
RATES: tuple[int, ...] = (50, 10)
#: The paper's slopes (units unstated, DIGEST I-17): MC-SF and the best benchmark per demand level.
PAPER_SLOPES: Mapping[int, Mapping[str, float]] = {50: {"mc-sf": 1 / 6, "best": 1 / 2},
                                                   10: {"mc-sf": 1 / 800, "best": 1 / 100}}
#: J0 §8.2's latency cap (seconds).
CAP_S = 200.0

#: How the volumes of one seed are drawn: ``"prefixes"`` of one stream (the released code; default) or
#: ``"separate"`` samples.
SAMPLINGS: tuple[str, ...] = ("prefixes", "separate")


def fig3_suite(sampling: str = "prefixes") -> Suite:
    """The Figure 3 suite with the volumes of a seed drawn as ``sampling`` (one of :data:`SAMPLINGS`).

    ``"prefixes"`` passes ``stream = 10,000`` to the ``trace`` workload, so volume ``n`` of seed ``k``
    is the first ``n`` requests (rows and arrivals) of seed ``k``'s 10,000; ``"separate"`` draws each
    volume on its own. The 10,000-request instances are the same under both.

    Raises
    ------
    ValueError
        ``sampling`` not in :data:`SAMPLINGS`.
    """
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {', '.join(map(repr, SAMPLINGS))}, got {sampling!r}")
    prefixes = sampling == "prefixes"
    extra = {"stream": max(VOLUMES)} if prefixes else {}
    how = "prefixes of one 10,000-request stream per seed" if prefixes else "a separate sample per volume"
    return Suite(
        name="jaillet-fig3" if prefixes else "jaillet-fig3-separate",
        bounds=("lp",),  # unused by a trace suite; pinned so the stored settings do not follow a default
        description="Jaillet et al. Figure 3 (J0 Figure 5) reproduction: mean latency vs volume (1,000 … 10,000 "
                    f"LMSYS requests, {how}), Poisson λ = 50 /s and 10 /s, the eight Table 1 "
                    "algorithms, Llama2-70B on 2×A100 cost model, M = 16,492; seeds 0–2",
        workloads=tuple(
            WorkloadSpec("trace", (0, 1, 2), {"trace": LMSYS_TRACE, "format": "lmsys", "n": n, "rate": rate,
                                              "on_bad_row": "drop", **extra}, f"lmsys n={n} λ={rate}")
            for rate in RATES for n in VOLUMES
        ),
        policies=J52_POLICIES,
        kind="trace",
        extra_report="llmopt.papers.jaillet.fig3:figure3",
    )


#: J Figure 3 as the released code draws it (volumes are prefixes of one stream); registered as ``jaillet-fig3``.
JAILLET_FIG3 = fig3_suite("prefixes")
#: The separate-samples reading; registered as ``jaillet-fig3-separate``.
JAILLET_FIG3_SEPARATE = fig3_suite("separate")

_NAMES = {"mc-sf": "MC-SF", "mc-benchmark": "MC-Benchmark"}


def display_name(spec: str) -> str:
    """``"alpha-protection:alpha=0.2,beta=0.1"`` → ``"α = 0.2, β = 0.1"``; MC-SF and MC-Benchmark by name."""
    if spec in _NAMES:
        return _NAMES[spec]
    from llmopt.policies import parse_policy_spec

    name, params = parse_policy_spec(spec)
    if name != "alpha-protection":
        return spec
    text = f"α = {float(params.get('alpha', 0.3)):g}"
    if float(params.get("beta", 1.0)) != 1.0:
        text += f", β = {float(params['beta']):g}"
    if params.get("pass_cost", "free") != "free":
        text += f" ({params['pass_cost']})"
    return text


class SlopeFit(NamedTuple):
    """Least-squares line ``y = slope·x + intercept`` and its coefficient of determination."""

    slope: float
    intercept: float
    r2: float


def fit_slope(xs: Sequence[float], ys: Sequence[float]) -> SlopeFit:
    """Ordinary least squares of ``ys`` on ``xs`` (at least two distinct ``xs``).

    ``r2`` is ``1 − SS_res / SS_tot`` (1.0 when every ``y`` is equal and the line fits exactly).

    Raises
    ------
    ValueError
        Fewer than two points, different lengths, or all ``xs`` equal.
    """
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    if x.shape != y.shape or x.size < 2 or np.ptp(x) == 0:
        raise ValueError(f"a slope needs at least two points with distinct x (got {x.size} points)")
    slope, intercept = np.polyfit(x, y, 1)
    ss_res = float(np.sum((y - (slope * x + intercept)) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    return SlopeFit(float(slope), float(intercept), 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0)


# --- the records ------------------------------------------------------------------------------------------


def _points(records: Sequence[Mapping[str, Any]], policy: str) -> dict[tuple[int, int], dict[int, float | None]]:
    """``(rate, seed) → {volume: mean latency or None (loop / error)}`` of one policy."""
    out: dict[tuple[int, int], dict[int, float | None]] = {}
    for r in records:
        params = r.get("params") or {}
        if r.get("error") or "n" not in params or "rate" not in params:
            continue
        lat = r.get(f"latency_{policy}")
        out.setdefault((int(params["rate"]), int(r["seed"])), {})[int(params["n"])] = \
            None if lat is None else float(lat)
    return out


def slope_frame(records: Sequence[Mapping[str, Any]], suite: Suite) -> pd.DataFrame:
    """One row per (rate, policy, seed): the fitted line over the volumes that completed.

    A seed whose run loops (or fails) at some volume is fitted on the volumes that completed and
    says how many it lost (``missing``); ``None`` when fewer than two volumes remain.
    """
    rows = []
    for p in suite.policies:
        for (rate, seed), pts in sorted(_points(records, p).items()):
            ok = sorted((n, y) for n, y in pts.items() if y is not None)
            fit = fit_slope([n for n, _ in ok], [y for _, y in ok]) if len(ok) >= 2 else None
            rows.append({"rate": rate, "policy": p, "seed": seed, "volumes": len(ok), "missing": len(pts) - len(ok),
                         "slope": None if fit is None else fit.slope,
                         "intercept": None if fit is None else fit.intercept,
                         "r2": None if fit is None else fit.r2,
                         "latency_at_max": pts.get(max(pts)) if pts else None})
    return pd.DataFrame(rows, dtype=object)


def _best(summary: pd.DataFrame, rate: int, policies: Sequence[str]) -> str | None:
    sub = summary[(summary["rate"] == rate) & summary["policy"].isin(policies) & summary["slope_mean"].notna()]
    return None if sub.empty else str(sub.sort_values("slope_mean").iloc[0]["policy"])


def slope_summary(slopes: pd.DataFrame, reference: str = "mc-sf") -> pd.DataFrame:
    """Per (rate, policy): the slope's mean, std, min and max over seeds, R², and the ratio to the
    reference's slope (ratio of means over the seeds both were fitted on, and the range of the
    per-seed ratios)."""
    rows = []
    for (rate, p), sub in slopes.groupby(["rate", "policy"], sort=False):
        s = [float(v) for v in sub["slope"] if v is not None]
        ref = slopes[(slopes["rate"] == rate) & (slopes["policy"] == reference)]
        ref_by_seed = {int(r.seed): r.slope for r in ref.itertuples() if r.slope is not None}
        per_seed = [float(r.slope) / float(ref_by_seed[int(r.seed)]) for r in sub.itertuples()
                    if r.slope is not None and ref_by_seed.get(int(r.seed))]
        # the ratio of means over the seeds both have a slope for
        both = [int(r.seed) for r in sub.itertuples() if r.slope is not None and ref_by_seed.get(int(r.seed))]
        ref_mean = float(np.mean([ref_by_seed[k] for k in both])) if both else None
        own_mean = float(np.mean([float(r.slope) for r in sub.itertuples() if int(r.seed) in both])) if both else None
        mean = float(np.mean(s)) if s else None
        rows.append({"rate": rate, "policy": p, "seeds": len(sub), "fitted": len(s),
                     "missing_volumes": int(sum(int(m) for m in sub["missing"])),
                     "slope_mean": mean, "slope_std": float(np.std(s, ddof=1)) if len(s) > 1 else None,
                     "slope_min": min(s) if s else None, "slope_max": max(s) if s else None,
                     "r2_min": min(float(v) for v in sub["r2"] if v is not None) if s else None,
                     "ratio": own_mean / ref_mean if own_mean is not None and ref_mean else None,
                     "ratio_min": min(per_seed) if per_seed else None,
                     "ratio_max": max(per_seed) if per_seed else None})
    return pd.DataFrame(rows, dtype=object)


def cap_frame(records: Sequence[Mapping[str, Any]], suite: Suite, cap: float = CAP_S) -> pd.DataFrame:
    """Per (rate, policy): mean latency (over seeds) at each volume, and the largest volume up to which
    every volume's mean stays at or below ``cap`` seconds (``0`` if even the smallest exceeds it; a volume
    where some seed looped counts as above the cap)."""
    rows = []
    for p in suite.policies:
        by_rate: dict[int, dict[int, list[float | None]]] = {}
        for (rate, _seed), pts in _points(records, p).items():
            for n, y in pts.items():
                by_rate.setdefault(rate, {}).setdefault(n, []).append(y)
        for rate, vols in sorted(by_rate.items()):
            means = {n: None if any(y is None for y in ys) else float(np.mean([float(y) for y in ys if y is not None]))
                     for n, ys in sorted(vols.items())}
            within = 0
            for n, m in means.items():
                if m is None or m > cap:
                    break
                within = n
            rows.append({"rate": rate, "policy": p, "within_cap_up_to": within,
                         **{f"n={n}": m for n, m in means.items()}})
    return pd.DataFrame(rows, dtype=object)


# --- the report -------------------------------------------------------------------------------------------


def _f(v: Any, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _inverse(v: Any) -> str:
    """A slope as ``1/x`` (the paper's notation) beside its value."""
    if v is None or not v > 0:
        return "–"
    return f"{v:.4f} (1/{1 / v:.0f})"


def _sampling_text(suite: Suite) -> str:
    if all("stream" in w.params for w in suite.workloads):
        return "the volumes of a seed are prefixes of one stream (the released code's way)"
    return "a separate sample per volume and seed"


def figure3(out_dir: str | Path, suite: Suite, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Write ``figure3.md``, ``figure3_slopes.csv``, ``figure3_cap.csv`` and ``figure3.png``.

    The suite's ``extra_report`` (see the module docstring); returns one line per file written.
    """
    out = Path(out_dir)
    slopes = slope_frame(records, suite)
    if slopes.empty:
        return []
    summary = slope_summary(slopes, suite.reference)
    caps = cap_frame(records, suite)
    slopes.to_csv(out / "figure3_slopes.csv", index=False)
    caps.to_csv(out / "figure3_cap.csv", index=False)
    seeds = sorted({int(s) for s in slopes["seed"]})
    benchmarks = [p for p in suite.policies if p != suite.reference]
    j0_set = [p for p in benchmarks if p != "mc-benchmark"]
    lines = [f"# {suite.name}: J Figure 3 — mean latency vs volume", "",
             f"Seeds {', '.join(map(str, seeds))}; {_sampling_text(suite)}. Slope = least-squares "
             "line of a run's mean end-to-end latency (s) on the number of requests, fitted per seed over the "
             "volumes that completed; *spread* = min–max over seeds; *÷ MC-SF* = mean slope ÷ MC-SF's mean slope "
             "over the seeds both were fitted on (per-seed range in brackets). The paper's slopes have no stated "
             "unit (DIGEST I-17): only their "
             "ratios are comparable.", ""]
    for rate in sorted({int(r) for r in summary["rate"]}, reverse=True):
        sub = summary[summary["rate"] == rate]
        paper = PAPER_SLOPES.get(rate, {})
        best_all, best_j0 = _best(summary, rate, benchmarks), _best(summary, rate, j0_set)
        lines += [f"## λ = {rate} /s ({'high' if rate >= 50 else 'low'} demand)", "",
                  "| algorithm | slope, s per request (mean) | std | spread | min R² | ÷ MC-SF | volumes lost to "
                  "loops |",
                  "|---|---|---|---|---|---|---|"]
        for r in sub.itertuples():
            spread = f"{_f(r.slope_min, 4)}–{_f(r.slope_max, 4)}"
            ratio = f"{_f(r.ratio)} [{_f(r.ratio_min)}–{_f(r.ratio_max)}]" if r.ratio is not None else "–"
            lines.append(f"| {display_name(str(r.policy))} | {_inverse(r.slope_mean)} | {_f(r.slope_std, 4)} | "
                         f"{spread} | {_f(r.r2_min, 3)} | {ratio} | {r.missing_volumes} |")
        ref_row = sub[sub["policy"] == suite.reference]
        ours_best = sub[sub["policy"] == best_all]["ratio"].iloc[0] if best_all else None
        ours_j0 = sub[sub["policy"] == best_j0]["ratio"].iloc[0] if best_j0 else None
        lines += ["", f"Paper: MC-SF ≈ {_inverse(paper.get('mc-sf'))}, best benchmark ≈ "
                  f"{_inverse(paper.get('best'))}, ratio **{paper['best'] / paper['mc-sf']:.0f}×**. "
                  f"Ours: MC-SF {_inverse(ref_row['slope_mean'].iloc[0] if not ref_row.empty else None)}; best "
                  f"benchmark {display_name(best_all) if best_all else '–'} at **{_f(ours_best)}×** MC-SF's slope; "
                  f"best of J0's six α/β configurations {display_name(best_j0) if best_j0 else '–'} at "
                  f"**{_f(ours_j0)}×**.", ""] if paper else [""]
    lines += [f"## J0 §8.2: the {CAP_S:.0f} s cap", "",
              "Mean latency (s, mean over seeds) at each volume; *within cap up to* = the largest volume up to "
              f"which every volume's mean is at most {CAP_S:.0f} s (a volume where a seed looped counts as above).",
              ""]
    vol_cols = [c for c in caps.columns if c.startswith("n=")]
    shown = [c for c in vol_cols if c in ("n=1000", "n=5000", "n=10000")] or vol_cols
    lines += ["| λ | algorithm | within cap up to | " + " | ".join(c.replace("n=", "n = ") for c in shown) + " |",
              "|---|---|---|" + "---|" * len(shown)]
    for r in caps.sort_values("rate", ascending=False, kind="stable").to_dict("records"):
        lines.append(f"| {r['rate']} | {display_name(str(r['policy']))} | {r['within_cap_up_to']:,} | "
                     + " | ".join(_f(r[c], 1) for c in shown) + " |")
    lines += ["", "J0 §8.2: \"if the latency cap is set at 200 seconds, then with Algorithm 2, two linked A100 GPUs "
              "could handle up to 10,000 arrivals while remaining below this latency cap\"."]
    (out / "figure3.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    made = ["figure3.md / figure3_slopes.csv / figure3_cap.csv: slopes per algorithm and seed, their ratio to "
            "MC-SF beside the paper's, the 200 s cap"]
    if _plot(records, suite, summary, out / "figure3.png"):
        made.append("figure3.png: mean latency vs volume per algorithm (band: min–max over seeds), the paper's "
                    "slope ratio drawn from our MC-SF line")
    return made


def _plot(records: Sequence[Mapping[str, Any]], suite: Suite, summary: pd.DataFrame, path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rates = sorted({int(r) for r in summary["rate"]}, reverse=True)
    if not rates:
        return False
    fig, axes = plt.subplots(1, len(rates), figsize=(6.4 * len(rates), 4.8), squeeze=False)
    for ax, rate in zip(axes[0], rates):
        for j, p in enumerate(suite.policies):
            series = {seed: pts for (r, seed), pts in _points(records, p).items() if r == rate}
            vols = sorted({n for pts in series.values() for n in pts})
            mean, lo, hi, xs = [], [], [], []
            for n in vols:
                ys = [pts.get(n) for pts in series.values()]
                if any(y is None for y in ys):
                    continue
                vals = [float(y) for y in ys if y is not None]
                xs.append(n)
                mean.append(float(np.mean(vals)))
                lo.append(min(vals))
                hi.append(max(vals))
            if not xs:
                continue
            color = f"C{j % 10}"
            ax.plot(xs, mean, marker="o", ms=3, color=color, label=display_name(p),
                    lw=2.0 if p == suite.reference else 1.0)
            ax.fill_between(xs, lo, hi, color=color, alpha=0.15)
            if p == suite.reference and rate in PAPER_SLOPES:
                fit = fit_slope(xs, mean)
                factor = PAPER_SLOPES[rate]["best"] / PAPER_SLOPES[rate]["mc-sf"]
                x = np.array([min(xs), max(xs)], dtype=float)
                ax.plot(x, fit.intercept + factor * fit.slope * x, color="k", ls="--", lw=1,
                        label=f"paper's best benchmark: {factor:.0f}× MC-SF's slope")
        ax.axhline(CAP_S, color="red", ls=":", lw=1, label=f"{CAP_S:.0f} s cap (J0 §8.2)")
        ax.set_title(f"λ = {rate} /s ({'high' if rate >= 50 else 'low'} demand)")
        ax.set_xlabel("number of requests")
        ax.set_ylabel("average end-to-end latency (s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("J Figure 3: average latency vs volume (ours; dashed: the paper's slope ratio)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
