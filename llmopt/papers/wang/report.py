"""Reports of the Wang–Ye–Zhou reproductions: Table EC.1 (``wang-synthetic``) and Figure 8 (``wang-mixed``).

Each function is a suite's ``extra_report``: ``(out_dir, suite, records) -> list[str]``. It
writes its tables (Markdown and CSV) and figures into ``out_dir`` and returns one line per
file for ``summary.md``. Only verified schedules enter a mean (the harness records
``verified_*`` / ``latency_*`` only for schedules the checker accepted); every mean says
over how many trials it is taken.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from llmopt.bench.suites import Suite
from llmopt.report.summary import format_cell

__all__ = ["table_ec1_frame", "table_ec1", "figure8_frame", "figure8", "FIG8_CLAIMS"]


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _fmt(v: Any, digits: int = 1) -> str:
    return format_cell(v, digits)


def _label(rec: Mapping[str, Any], suite: Suite) -> str:
    return suite.label_for(rec["workload"], rec.get("params") or {})


def _md(df: pd.DataFrame, digits: Mapping[str, int] | None = None) -> str:
    digits = digits or {}
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(_fmt(row[c], digits.get(c, 1)) for c in df.columns) + " |")
    return "\n".join(lines) + "\n"


def _order(means: Mapping[str, float | None]) -> str:
    known = sorted(((float(v), k) for k, v in means.items() if v is not None and pd.notna(v)))
    return " < ".join(k for _, k in known) if known else "—"


# --- Table EC.1 ------------------------------------------------------------------------------


def table_ec1_frame(records: Sequence[Mapping[str, Any]], suite: Suite) -> pd.DataFrame:
    """One row per (distribution, algorithm): our mean TEL, the paper's, and the certified context.

    Columns: ``distribution``, ``algorithm``, ``trials`` (verified schedules), ``tel_mean``,
    ``paper`` (W's value, for the three EC.1 algorithms), ``bound_mean`` (certified lower bound
    on OPT, mean over the same trials), ``best_found_mean``, ``opt_proven``, ``ratio_vs_bound``
    (mean of TEL / bound per trial: an upper bound on the ratio to OPT), ``bound_above_paper``
    (trials whose certified bound exceeds the paper's mean TEL for this algorithm).
    """
    rows = []
    for spec in suite.workloads:
        recs = [r for r in records if _label(r, suite) == spec.label and not r.get("error")]
        paper = suite.paper.get(spec.label, {})
        for p in suite.policies:
            ok = [r for r in recs if r.get(f"verified_{p}") and r.get(f"tel_{p}") is not None]
            bounds = [r["bound"] for r in ok if r.get("bound") is not None]
            ratios = [r[f"tel_{p}"] / r["bound"] for r in ok if r.get("bound")]
            pv = paper.get(p)
            rows.append({
                "distribution": spec.label,
                "algorithm": p,
                "trials": len(ok),
                "tel_mean": _mean([r[f"tel_{p}"] for r in ok]),
                "paper": pv,
                "bound_mean": _mean(bounds),
                "best_found_mean": _mean([r["incumbent"] for r in ok if r.get("incumbent") is not None]),
                "opt_proven": sum(1 for r in ok if r.get("opt") is not None),
                "ratio_vs_bound": _mean(ratios),
                "bound_above_paper": None if pv is None else sum(1 for b in bounds if b > pv),
                "sim_s_mean": _mean([r[f"sim_s_{p}"] for r in ok if r.get(f"sim_s_{p}") is not None]),
            })
    return pd.DataFrame(rows)


def table_ec1(out_dir: str | Path, suite: Suite, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Write ``table_ec1.md``, ``table_ec1.csv`` and ``table_ec1.png`` (see :func:`table_ec1_frame`)."""
    out = Path(out_dir)
    df = table_ec1_frame(records, suite)
    df.to_csv(out / "table_ec1.csv", index=False)
    ec1 = [p for p in suite.policies if any(p in suite.paper.get(s.label, {}) for s in suite.workloads)]
    lines = [f"# {suite.name}: W Table EC.1 side by side\n",
             "Average TEL (iterations) per distribution, over the trials (*trials*) in which the checker verified "
             "the schedules of all three algorithms and a certified bound exists. *bound* is the mean certified "
             "lower bound on OPT over those trials (the column-generation LP, or the MIP bound where the IP ran); "
             "*best found* the mean best verified schedule of each trial (policies and local search). "
             "*TEL/bound* bounds the ratio to OPT from above.\n"]
    head = ["distribution", "trials"] + [f"{p} ours" for p in ec1] + [f"{p} paper" for p in ec1] + \
        ["best found", "bound", "OPT proven", "gap (best − bound)/best", "bound > paper (trials, all three)",
         "order ours", "order paper"]
    table = []
    for spec in suite.workloads:
        paper = {p: suite.paper.get(spec.label, {}).get(p) for p in ec1}
        recs = [r for r in records if _label(r, suite) == spec.label and not r.get("error")
                and r.get("bound") is not None and all(r.get(f"verified_{p}") for p in ec1)]
        ours = {p: _mean([r[f"tel_{p}"] for r in recs]) for p in ec1}
        gaps = [(r["incumbent"] - r["bound"]) / r["incumbent"] for r in recs
                if r.get("incumbent") and r.get("bound") is not None]
        above = sum(1 for r in recs if r.get("bound") is not None and paper and
                    all(v is not None and r["bound"] > v for v in paper.values()))
        table.append([spec.label, len(recs)] + [ours[p] for p in ec1] + [paper[p] for p in ec1] + [
            _mean([r["incumbent"] for r in recs if r.get("incumbent") is not None]),
            _mean([r["bound"] for r in recs if r.get("bound") is not None]),
            sum(1 for r in recs if r.get("opt") is not None),
            _mean(gaps), f"{above} of {len(recs)}", _order(ours), _order(paper)])
    frame = pd.DataFrame(table, columns=head)
    lines.append(_md(frame, {"gap (best − bound)/best": 4}))
    lines.append("\n## Every algorithm\n\nMean TEL over verified schedules, mean TEL/bound (an upper bound on the "
                 "ratio to OPT) and the mean simulation time per instance (LP solves included).\n")
    lines.append(_md(df[["distribution", "algorithm", "trials", "tel_mean", "ratio_vs_bound", "sim_s_mean"]],
                     {"ratio_vs_bound": 4, "sim_s_mean": 3}))
    (out / "table_ec1.md").write_text("\n".join(lines), encoding="utf-8")
    made = ["table_ec1.md / table_ec1.csv: Table EC.1 beside the paper, with bounds and gaps"]
    if _plot_ec1(df, ec1, suite, out / "table_ec1.png"):
        made.append("table_ec1.png: mean TEL per algorithm and distribution, ours vs paper, with the certified bound")
    return made


def _plot_ec1(df: pd.DataFrame, ec1: Sequence[str], suite: Suite, path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [s.label for s in suite.workloads]
    if df.empty:
        return False
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / (2 * len(ec1))
    x = np.arange(len(labels))
    for j, p in enumerate(ec1):
        sub = df[df["algorithm"] == p].set_index("distribution")
        ours = [sub.loc[lbl, "tel_mean"] if lbl in sub.index else np.nan for lbl in labels]
        paper = [suite.paper.get(lbl, {}).get(p, np.nan) for lbl in labels]
        ax.bar(x + (2 * j) * width - 0.4, np.asarray(ours, dtype=float), width, label=f"{p} (ours)")
        ax.bar(x + (2 * j + 1) * width - 0.4, np.asarray(paper, dtype=float), width, label=f"{p} (paper)",
               hatch="//", alpha=0.6)
    bnd = df.groupby("distribution")["bound_mean"].max()
    first = True
    for i, lbl in enumerate(labels):
        if lbl in bnd.index and bnd[lbl] is not None and not pd.isna(bnd[lbl]):
            ax.hlines(bnd[lbl], i - 0.45, i + 0.45, colors="k", linestyles="--",
                      label="certified bound on OPT (ours)" if first else "_nolegend_")
            first = False
    ax.set_xticks(x, labels)
    ax.set_yscale("log")
    ax.set_ylabel("average TEL (iterations)")
    ax.set_title("W Table EC.1: ours vs paper (the paper's values lie below valid lower bounds)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


# --- Figure 8 --------------------------------------------------------------------------------

#: W §7's qualitative claims, as (name, better, worse): "better" should have the lower latency.
FIG8_CLAIMS = (
    ("MC-SF inferior to Sorted-F (Swap)", "sorted-f-swap", "mc-sf"),
    ("MC-SF inferior to Sorted-LP", "sorted-lp", "mc-sf"),
    ("local swap better latency than quantile", "sorted-f-swap", "sorted-f-quantile"),
    ("LP-Swap reduces latency over Sorted-LP", "lp-swap", "sorted-lp"),
)


def figure8_frame(records: Sequence[Mapping[str, Any]], suite: Suite) -> pd.DataFrame:
    """Long frame: one row per (n, algorithm) with mean/min/max latency (s), trials and mean run time (s)."""
    rows = []
    for spec in suite.workloads:
        recs = [r for r in records if _label(r, suite) == spec.label and not r.get("error")]
        n = spec.params.get("n")
        for p in suite.policies:
            lat = [r[f"latency_{p}"] for r in recs if r.get(f"latency_{p}") is not None]
            sim = [r[f"sim_s_{p}"] for r in recs if r.get(f"sim_s_{p}") is not None]
            rows.append({"n": n, "algorithm": p, "trials": len(lat), "latency_mean": _mean(lat),
                         "latency_min": min(lat) if lat else None, "latency_max": max(lat) if lat else None,
                         "sim_s_mean": _mean(sim)})
    return pd.DataFrame(rows)


def figure8(out_dir: str | Path, suite: Suite, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Write ``figure8.md``/``.csv``, ``figure8.png`` (all algorithms) and ``figure_ec2.png`` (Swap vs LP-Swap)."""
    out = Path(out_dir)
    df = figure8_frame(records, suite)
    df.to_csv(out / "figure8.csv", index=False)
    wide = df.pivot(index="n", columns="algorithm", values="latency_mean")[list(suite.policies)]
    times = df.pivot(index="n", columns="algorithm", values="sim_s_mean")[list(suite.policies)]
    trials = df.groupby("n")["trials"].min()
    lines = [f"# {suite.name}: W Figure 8 (average end-to-end latency, seconds)\n",
             "Mean over seeds of the average latency of verified schedules (continuous-time engine, "
             f"cost model {suite.cost_model}).\n"]
    w = wide.reset_index()
    w.insert(1, "trials", [int(trials.get(n, 0)) for n in w["n"]])
    w["order (best first)"] = [_order({p: wide.loc[n, p] for p in suite.policies}) for n in wide.index]
    lines.append(_md(w, {"n": 0}))
    lines.append("\n## W §7's claims, checked at every n\n")
    for name, better, worse in FIG8_CLAIMS:
        if better in wide and worse in wide:
            held = [int(n) for n in wide.index if pd.notna(wide.loc[n, better]) and pd.notna(wide.loc[n, worse])
                    and wide.loc[n, better] < wide.loc[n, worse]]
            lines.append(f"- {name}: holds at {len(held)} of {len(wide.index)} sizes"
                         + ("" if len(held) == len(wide.index) else
                            f" (fails at n = {', '.join(str(int(n)) for n in wide.index if int(n) not in held)})"))
    if "lp-swap" in wide and "sorted-f-swap" in wide:
        rel = (wide["lp-swap"] - wide["sorted-f-swap"]) / wide["sorted-f-swap"]
        lines.append(f"- LP-Swap vs Sorted-F (Swap) (paper: \"nearly identical\"): relative difference "
                     f"{rel.min():+.2%} … {rel.max():+.2%} over n")
    lines.append("\n## Run time per instance (s, mean over seeds; LP solves included, shared LP counted once)\n")
    t = times.reset_index()
    lines.append(_md(t, {"n": 0, **{p: 3 for p in suite.policies}}))
    (out / "figure8.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    made = ["figure8.md / figure8.csv: latency and run time per n and algorithm, W §7's claims checked"]
    if _plot_fig8(df, list(suite.policies), out / "figure8.png", "W Figure 8: average latency vs n"):
        made.append("figure8.png: average latency vs n, all algorithms (band: min–max over seeds)")
    pair = [p for p in ("sorted-f-swap", "lp-swap") if p in suite.policies]
    if len(pair) == 2 and _plot_fig8(df, pair, out / "figure_ec2.png", "W Figure EC.2: Sorted-F (Swap) vs LP-Swap"):
        made.append("figure_ec2.png: Sorted-F (Swap) vs LP-Swap only")
    return made


def _plot_fig8(df: pd.DataFrame, policies: Sequence[str], path: Path, title: str) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for p in policies:
        sub = df[(df["algorithm"] == p) & df["latency_mean"].notna()].sort_values("n")
        if sub.empty:
            continue
        drawn = True
        ax.plot(sub["n"], sub["latency_mean"].astype(float), marker="o", label=p)
        ax.fill_between(sub["n"], sub["latency_min"].astype(float), sub["latency_max"].astype(float), alpha=0.15)
    if not drawn:
        plt.close(fig)
        return False
    ax.set_xlabel("number of requests n")
    ax.set_ylabel("average end-to-end latency (s)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
