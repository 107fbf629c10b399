"""Reports of trace suites (``Suite(kind="trace")``): latency tables, the α grid, figures.

:func:`write_trace_report` writes, from ``trials.jsonl``:

* ``summary.csv`` / ``summary.md`` — one row per (workload entry, policy): trials, runs
  that completed and were verified, eviction loops, mean / std / max / min over trials of
  the mean end-to-end latency (seconds), recomputed tokens, the ratio to the reference
  policy's latency, and the paper's numbers beside ours;
* the smallest loop-free α of the α-protection greedy grid, per workload entry (over all its
  trials, and per seed);
* figures: latency vs α (β fixed) and vs β (α fixed) for the β-clearing sweeps (one line per
  fixed value and clearing-cost reading, ``pass_cost``; band: min–max over seeds), and
  memory over time of the reference policy and of the first looping α-greedy run
  (re-simulated from the suite, which is deterministic for a seed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from llmopt.bench.suites import Suite
from llmopt.bench.tasks import resolve_workload
from llmopt.report.summary import _runs_text

__all__ = ["trace_summary", "smallest_loop_free_alpha", "smallest_alpha_by_seed", "write_trace_report"]


def _latest(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    from llmopt.bench.store import latest_records, task_key

    # In task order, not the order the workers finished: a mean summed in finishing order changes in
    # its last digits from one run to the next.
    return sorted(latest_records(records), key=task_key)


def _label(rec: Mapping[str, Any], suite: Suite) -> str:
    return suite.label_for(rec["workload"], rec.get("params") or {})


def trace_summary(records: Iterable[dict[str, Any]], suite: Suite) -> pd.DataFrame:
    """One row per (workload label, policy) (see the module docstring)."""
    recs = _latest(records)
    rows = []
    for spec in suite.workloads:
        mine = [r for r in recs if _label(r, suite) == spec.label]
        paper = suite.paper.get(spec.label, {})
        ref_lat = [r.get(f"latency_{suite.reference}") for r in mine]
        ref_mean = float(np.mean([x for x in ref_lat if x is not None])) if any(x is not None for x in ref_lat) \
            else None
        paper_ref = (paper.get(suite.reference) or {}).get("mean")
        for p in suite.policies:
            lat = [float(r[f"latency_{p}"]) for r in mine if r.get(f"latency_{p}") is not None]
            loops = sum(1 for r in mine if r.get(f"status_{p}") == "eviction-loop")
            rec_tok = [float(r[f"recomputed_{p}"]) for r in mine if r.get(f"recomputed_{p}") is not None
                       and r.get(f"latency_{p}") is not None]
            pp = paper.get(p) or {}
            mean = float(np.mean(lat)) if lat else None
            rows.append({
                "workload": spec.label,
                "policy": p,
                "trials": len(mine),
                "verified": len(lat),
                "loops": loops,
                "errors": sum(1 for r in mine if r.get(f"status_{p}") in ("error", "rejected") or r.get("error")),
                "latency_mean": mean,
                "latency_std": float(np.std(lat, ddof=1)) if len(lat) > 1 else None,
                "latency_max": float(np.max(lat)) if lat else None,
                "latency_min": float(np.min(lat)) if lat else None,
                "recomputed_mean": float(np.mean(rec_tok)) if rec_tok else None,
                "gpu_s_mean": _mean_of(mine, f"gpu_s_{p}", p),
                "energy_j_mean": _mean_of(mine, f"energy_j_{p}", p),
                "ratio_to_reference": mean / ref_mean if mean is not None and ref_mean else None,
                "paper_mean": pp.get("mean"),
                "paper_std": pp.get("std"),
                "paper_max": pp.get("max"),
                "paper_min": pp.get("min"),
                "paper_ratio_to_reference": pp["mean"] / paper_ref if pp.get("mean") and paper_ref else None,
            })
    return pd.DataFrame(rows, dtype=object)


def _alpha_beta(spec: str) -> tuple[float | None, float | None, str]:
    """``(α, β, pass_cost)`` of an α-protection spec; ``(None, None, "")`` for any other policy."""
    from llmopt.policies import parse_policy_spec

    name, params = parse_policy_spec(spec)
    if name != "alpha-protection":
        return None, None, ""
    return float(params.get("alpha", 0.3)), float(params.get("beta", 1.0)), str(params.get("pass_cost", "free"))


def _greedy_alpha(spec: str) -> float | None:
    """α of an α-protection *greedy* spec (β = 1, default requeue and pass cost), else ``None``."""
    from llmopt.policies import parse_policy_spec

    name, params = parse_policy_spec(spec)
    if name != "alpha-protection" or set(params) - {"alpha", "beta"} or float(params.get("beta", 1.0)) != 1.0:
        return None
    return float(params.get("alpha", 0.3))


def _first_loop_free(grid: list[tuple[float, bool]]) -> tuple[float | None, bool]:
    grid.sort()
    free = [a for a, ok in grid if ok]
    if not free:
        return None, False
    best = free[0]
    return best, all(ok for a, ok in grid if a >= best)


def smallest_loop_free_alpha(df: pd.DataFrame, workload: str) -> tuple[float | None, bool]:
    """Smallest α of the α-protection *greedy* grid (β = 1) with no eviction loop in any trial,
    and whether every larger α of the grid is loop-free too."""
    grid = []
    for _, row in df[df["workload"] == workload].iterrows():
        a = _greedy_alpha(row["policy"])
        if a is not None and row["verified"] + row["loops"] > 0:
            grid.append((a, row["loops"] == 0))
    return _first_loop_free(grid)


def smallest_alpha_by_seed(records: Iterable[dict[str, Any]], suite: Suite,
                           workload: str) -> dict[int, tuple[float | None, bool]]:
    """Seed → :func:`smallest_loop_free_alpha` of that seed's run alone (its sampling spread)."""
    greedy = [(p, a) for p in suite.policies if (a := _greedy_alpha(p)) is not None]
    out: dict[int, tuple[float | None, bool]] = {}
    for r in _latest(records):
        if _label(r, suite) != workload or r.get("error"):
            continue
        grid = [(a, r.get(f"status_{p}") == "ok") for p, a in greedy if r.get(f"status_{p}") in ("ok", "eviction-loop")]
        if grid:
            out[int(r["seed"])] = _first_loop_free(grid)
    return dict(sorted(out.items()))


_MD = (("policy", "policy"), ("trials", "trials"), ("verified", "verified"), ("loops", "eviction loops"),
       ("latency_mean", "mean latency (s)"), ("paper_mean", "paper"), ("latency_std", "std"),
       ("paper_std", "paper std"),
       ("latency_max", "max"), ("paper_max", "paper max"), ("latency_min", "min"), ("paper_min", "paper min"),
       ("ratio_to_reference", "÷ ref"), ("paper_ratio_to_reference", "paper ÷ ref"),
       ("recomputed_mean", "recomputed tokens"))
#: GPU cost columns, shown when the records have them (written since issue 26).
_COST_MD = (("gpu_s_mean", "GPU-s / request"), ("energy_j_mean", "J / request (400 W/GPU)"))


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)


def _headline(suite: Suite, label: str) -> tuple[str, ...]:
    """Policies shown in the Markdown table: those with paper numbers, else the first eight."""
    paper = suite.paper.get(label, {})
    with_paper = tuple(p for p in suite.policies if isinstance(paper.get(p), Mapping))
    return with_paper or suite.policies[:8]


def _mean_of(records: list[dict[str, Any]], key: str, policy: str) -> float | None:
    """Mean of ``key`` over the records where ``policy`` has a verified latency (``None`` if none has it:
    records written before the field existed)."""
    vals = [float(r[key]) for r in records if r.get(key) is not None and r.get(f"latency_{policy}") is not None]
    return float(np.mean(vals)) if vals else None


def _markdown(df: pd.DataFrame, suite: Suite, meta: Mapping[str, Any], records: list[dict[str, Any]],
              figures: list[str]) -> str:
    lines = [f"# Suite `{suite.name}`", "", suite.description, "",
             f"Continuous-time engine, cost model `{suite.cost_model}`, loop guard {suite.loop_limit:,} evictions "
             f"with no completion. Latency = mean end-to-end latency of a run (arrival to final completion, "
             f"seconds), re-verified by the checker's continuous-time mode; statistics are over trials "
             f"(seeds). A run stopped by the loop guard counts under *eviction loops* and has no latency. "
             f"*÷ ref* = mean latency ÷ the reference policy's ({suite.reference}).", ""]
    for spec in suite.workloads:
        sub = df[df["workload"] == spec.label]
        shown = sub[sub["policy"].isin(_headline(suite, spec.label))]
        lines += [f"## {spec.label}", "", f"Parameters: `{dict(spec.params)}`, seeds {spec.seeds[0]}…{spec.seeds[-1]} "
                  f"({len(spec.seeds)}).", ""]
        cols = _MD + tuple(c for c in _COST_MD if shown[c[0]].notna().any())  # absent from older records
        lines.append("| " + " | ".join(h for _, h in cols) + " |")
        lines.append("|" + "---|" * len(cols))
        for _, row in shown.iterrows():
            lines.append("| " + " | ".join(_fmt(row[c]) for c, _ in cols) + " |")
        a, mono = smallest_loop_free_alpha(df, spec.label)
        paper_alpha = suite.paper.get(spec.label, {}).get("smallest_alpha")
        grid_size = sum(1 for p in suite.policies if _greedy_alpha(p) is not None)
        if paper_alpha is not None or (a is not None and grid_size >= _MIN_GRID):
            lines += ["", f"Smallest loop-free α of the α-greedy grid: **{_fmt(a)}**"
                      + (" on every seed" if len(spec.seeds) > 1 else "")
                      + ("" if mono or a is None else " (but some larger α of the grid loops)")
                      + (f"; paper: {paper_alpha:g}" if paper_alpha is not None else "") + "."]
            by_seed = smallest_alpha_by_seed(records, suite, spec.label)
            if len(by_seed) > 1:
                vals = [v for v, _ in by_seed.values() if v is not None]
                if len(by_seed) <= 10:
                    per = ", ".join(f"seed {k}: {_fmt(v)}" + ("" if m or v is None else "*")
                                    for k, (v, m) in by_seed.items())
                else:
                    per = ", ".join(f"{_fmt(v)} on {sum(1 for w, _ in by_seed.values() if w == v)} seeds"
                                    for v in sorted(set(vals)))
                lines += ["", "Per seed: " + per
                          + (f" (mean {np.mean(vals):.3f}, range {min(vals):g}–{max(vals):g})" if vals else "")
                          + (" — * some larger α loops on that seed" if not all(m for _, m in by_seed.values())
                             else "") + "."]
        if len(sub) > len(shown):
            lines += ["", f"{len(sub) - len(shown)} more policy configurations (the α / β sweeps) are in "
                      "`summary.csv` and the figures."]
        lines.append("")
    if figures:
        lines += ["## Figures", ""] + [f"- `{f}`" for f in figures] + [""]
    lines += ["## Runs", "", *_runs_text(dict(meta)),
              f"- Sum of task run times: {sum(float(r.get('runtime_s') or 0) for r in records):.1f} s."]
    errors = [r for r in records if r.get("error")]
    if errors:
        lines += ["", "## Errors", ""] + [f"- {_label(r, suite)} seed {r['seed']}: {r['error']}" for r in errors]
    return "\n".join(lines) + "\n"


_MIN_GRID = 5  # greedy α values needed before a suite's report names a smallest loop-free α

_READING_STYLE = {"free": "-", "extra-passes": "--", "every-pass": ":"}


def _sweep_plot(df: pd.DataFrame, workload: str, path: Path, by: str) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fixed_vals = (0.1, 0.2)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    drawn = loop_labelled = False
    values: list[float] = []
    other = "β" if by == "alpha" else "α"
    for j, fixed in enumerate(fixed_vals):
        for reading, style in _READING_STYLE.items():
            pts = []
            for _, row in df[df["workload"] == workload].iterrows():
                a, b, cost = _alpha_beta(row["policy"])
                if a is None or b is None or b == 1.0 or cost != reading:
                    continue
                x, f = (a, b) if by == "alpha" else (b, a)
                if abs(f - fixed) < 1e-12:
                    pts.append((x, row["latency_mean"], row["latency_min"], row["latency_max"], row["loops"]))
            pts.sort(key=lambda q: q[0])
            if len(pts) < 3:  # two configurations (J Table 1's) are not a sweep
                continue
            ok = [q for q in pts if q[1] is not None]
            xs = [q[0] for q in ok]
            label = f"{other} = {fixed:g}" + ("" if reading == "free" else f", {reading}")
            ax.plot(xs, [q[1] for q in ok], marker="o", ms=3, ls=style, color=f"C{j}", label=label)
            if len(ok) > 1 and any(q[2] != q[3] for q in ok):
                ax.fill_between(xs, [q[2] for q in ok], [q[3] for q in ok], color=f"C{j}", alpha=0.1)
            looped = [q[0] for q in pts if q[4]]
            if looped:
                top = max([q[3] for q in ok if q[3] is not None] or [0])
                ax.scatter(looped, [top] * len(looped), marker="x", color="red",
                           label=None if loop_labelled else "eviction loop in some seed")
                loop_labelled = True
            values += [float(q[v]) for q in ok for v in (2, 3) if q[v] is not None]
            drawn = True
    if not drawn:
        plt.close(fig)
        return False
    if values and min(values) > 0 and max(values) > 20 * min(values):  # a near-livelock run dwarfs the rest
        ax.set_yscale("log")
    ax.set_xlabel("α (protection)" if by == "alpha" else "β (clearing probability)")
    ax.set_ylabel("average end-to-end latency (s)")
    ax.set_title(f"{workload}: latency vs {'α' if by == 'alpha' else 'β'} (band: min–max over seeds)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def _memory_plot(suite: Suite, spec: Any, path: Path, policies: list[str]) -> bool:
    """Re-simulate seed ``spec.seeds[0]`` and plot memory after every batch vs time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.engine.discrete import EvictionLoopError
    from llmopt.policies import make_policy_spec

    seed = spec.seeds[0]
    inst = resolve_workload(spec.workload)(seed, **dict(spec.params))
    cost = make_cost_model(suite.cost_model)
    fig, axes = plt.subplots(len(policies), 1, figsize=(8, 2.6 * len(policies)), squeeze=False)
    for ax, p in zip(axes[:, 0], policies):
        looped = False
        try:
            sched = simulate_continuous(inst, make_policy_spec(p, seed=seed), cost, loop_limit=suite.loop_limit)
        except EvictionLoopError as exc:
            sched, looped = exc.partial, True
        ends = sched.batch_start + sched.batch_duration
        ax.plot(ends, sched.memory_after_batches(), lw=0.6)
        ax.axhline(inst.M, color="red", lw=0.8, ls="--", label=f"M = {inst.M:,}")
        ax.set_title(f"{p}" + (" — eviction loop (stopped by the loop guard)" if looped else
                               f" — mean latency {sched.mean_latency:.1f} s"), fontsize=9)
        ax.set_ylabel("KV tokens")
        ax.legend(loc="lower right", fontsize=8)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(f"{spec.label}, seed {seed}: memory after every batch", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_trace_report(out_dir: str | Path, suite: Suite, meta: Mapping[str, Any],
                       records: list[dict[str, Any]], problems: list[str] | None = None, *,
                       figures: bool = True) -> pd.DataFrame:
    """Write ``summary.csv``, ``summary.md`` and the figures of a trace suite into ``out_dir``."""
    out = Path(out_dir)
    df = trace_summary(records, suite)
    df.to_csv(out / "summary.csv", index=False)
    made: list[str] = []
    if figures:
        for i, spec in enumerate(suite.workloads):
            tag = f"w{i}"
            for by in ("alpha", "beta"):
                name = f"latency_vs_{by}_{tag}.png"
                if _sweep_plot(df, spec.label, out / name, by):
                    made.append(f"{name}: {spec.label}")
            sub = df[df["workload"] == spec.label]
            loop_rows = [r["policy"] for _, r in sub.iterrows()
                         if r["loops"] and _greedy_alpha(r["policy"]) is not None]
            chosen = [suite.reference] + ([max(loop_rows, key=lambda s: _greedy_alpha(s) or 0)] if loop_rows else [])
            name = f"memory_{tag}.png"
            if _memory_plot(suite, spec, out / name, chosen):
                made.append(f"{name}: {spec.label}, memory over time of {', '.join(chosen)}")
    (out / "summary.md").write_text(_markdown(df, suite, meta, _latest(records), made), encoding="utf-8")
    return df
