"""Tables and the latency-vs-K figure of a capacity search (``llmopt capacity``, suite ``jaillet-capacity``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from llmopt.capacity.planning import TARGET_STATS, CapacityResult, ClusterRun, LatencyTarget

__all__ = ["capacity_rows", "capacity_summary", "plot_latency_vs_workers", "write_capacity_report", "queue_over_time",
           "plot_queue_over_time"]


def capacity_rows(results: Sequence[tuple[str, str, CapacityResult, Sequence[ClusterRun]]]) -> list[dict[str, Any]]:
    """One row per (policy, router, target): the smallest K, and at that K the latency statistics, the target's
    statistic (``target_value_s``), GPU-seconds and energy per request; ``evaluated`` lists ``K=value`` in the
    order simulated."""
    rows = []
    for policy, router, res, runs in results:
        at = next((r for r in runs if r.K == res.workers), None)
        rows.append({
            "policy": policy, "router": router, "target": str(res.target), "workers": res.workers,
            "k_max": res.k_max, "monotone": res.monotone,
            "mean_s": at.mean if at else None, "p99_s": at.p99 if at else None,
            "target_value_s": at.statistic(res.target.statistic) if at else None,
            "gpu_s_per_request": at.gpu_s if at else None, "energy_j_per_request": at.energy_j if at else None,
            "evaluated": " ".join(f"{k}={'—' if v is None else f'{v:.4g}'}" for k, v in res.evaluated.items()),
        })
    return rows


def _axis_label(statistic: str) -> str:
    metric, _, stat = statistic.rpartition("_")
    return f"{stat} {({'ttft': 'time to first token', 'tbt': 'time between tokens'}).get(metric, 'latency')} (s)"


def plot_latency_vs_workers(curves: Mapping[str, Sequence[ClusterRun]], path: str | Path, *,
                            statistic: str = "mean", limit_s: float | None = None, title: str = "") -> Path:
    """Latency statistic against K, one line per curve label (runs with no latency are left out),
    log-scaled y when the values span more than 20×, with the target as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.0, 4.5))
    spread: list[float] = []
    for label, runs in curves.items():
        pts = sorted((r.K, r.statistic(statistic)) for r in runs if r.statistic(statistic) is not None)
        if not pts:
            continue
        ks, vs = zip(*pts)
        spread += [float(v) for v in vs if v]
        ax.plot(ks, vs, marker="o", label=label)
    if limit_s is not None:
        ax.axhline(limit_s, color="k", linestyle="--", linewidth=1,
                   label=f"target {LatencyTarget(statistic, limit_s).description.replace('<=', '≤')}")
    if spread and max(spread) > 20 * min(spread):
        ax.set_yscale("log")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("workers K (each Llama-2-70B on 2×A100)")
    ax.set_ylabel(_axis_label(statistic))
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def capacity_summary(records: Sequence[Mapping[str, Any]], suite: Any) -> Any:
    """One row per (workload label, policy, router): the smallest K per seed, its min / mean / max over
    seeds, and at it the mean latency, GPU-seconds and energy per request (means over seeds)."""
    import numpy as np
    import pandas as pd

    from llmopt.bench.capacity_task import pair_field
    from llmopt.bench.store import latest_records

    recs = latest_records([dict(r) for r in records])
    rows = []
    for spec in suite.workloads:
        mine = sorted((r for r in recs if suite.label_for(r["workload"], r.get("params") or {}) == spec.label
                       and not r.get("error")), key=lambda r: r["seed"])
        for p in suite.policies:
            for r in suite.routers:
                ks = [rec.get(pair_field("workers", p, r)) for rec in mine]
                found = [k for k in ks if k is not None]

                rows.append({
                    "workload": spec.label, "policy": p, "router": r, "trials": len(mine),
                    "workers_by_seed": " ".join("—" if k is None else str(k) for k in ks),
                    "workers_min": min(found) if found else None, "workers_max": max(found) if found else None,
                    "workers_mean": float(np.mean(found)) if found and len(found) == len(ks) else None,
                    "not_met": len(ks) - len(found),
                    "mean_s": _mean_field(mine, pair_field("mean", p, r)),
                    "gpu_s_per_request": _mean_field(mine, pair_field("gpu_s", p, r)),
                    "energy_j_per_request": _mean_field(mine, pair_field("energy_j", p, r)),
                })
    return pd.DataFrame(rows, dtype=object)


def _mean_field(records: Sequence[Mapping[str, Any]], key: str) -> float | None:
    vals = [float(rec[key]) for rec in records if rec.get(key) is not None]
    return sum(vals) / len(vals) if vals else None


def _curves(records: Sequence[Mapping[str, Any]], suite: Any, label: str, seed: int, router: str
            ) -> dict[str, list[ClusterRun]]:
    """Each policy's runs with ``router`` on the workload ``label`` and ``seed`` (the figure's lines)."""
    from llmopt.bench.capacity_task import pair_field

    out: dict[str, list[ClusterRun]] = {}
    for rec in records:
        if suite.label_for(rec["workload"], rec.get("params") or {}) != label or rec["seed"] != seed:
            continue
        for p in suite.policies:
            curve = rec.get(pair_field("curve", p, router)) or {}
            out[p] = [ClusterRun(int(k), v["status"] == "ok", v["status"], v.get("mean"), v.get("p50"),
                                 v.get("p90"), v.get("p99"),
                                 **{s: v.get(s) for s in TARGET_STATS if "_" in s})  # type: ignore[arg-type]
                      for k, v in curve.items()]
    return out


def write_capacity_report(out_dir: str | Path, suite: Any, meta: Mapping[str, Any],
                          records: list[dict[str, Any]], problems: list[str] | None = None) -> Any:
    """Write ``summary.csv``, ``summary.md`` and one latency-vs-K figure per workload (first seed)."""
    from llmopt.bench.store import latest_records
    from llmopt.report.summary import _runs_text

    out = Path(out_dir)
    recs = latest_records(records)
    df = capacity_summary(recs, suite)
    df.to_csv(out / "summary.csv", index=False)
    target = LatencyTarget.parse(suite.latency_target)
    lines = [f"# Suite `{suite.name}`", "", suite.description, "",
             f"Smallest number of workers K (each its own KV cache and batch clock; cost model `{suite.cost_model}`) "
             f"whose verified run meets **{target}** s, K = 1, 2, … up to {suite.k_max} tried in turn; one GPU-seconds "
             "and energy figure per request at that K (2 GPUs per worker, 400 W each). *K by seed*: one value per "
             "seed, — where no K up to the maximum met the target.", ""]
    made = []
    for i, spec in enumerate(suite.workloads):
        sub = df[df["workload"] == spec.label]
        lines += [f"## {spec.label}", "", f"Parameters: `{dict(spec.params)}`, seeds {list(spec.seeds)}.", "",
                  "| policy | router | K by seed | K min–max | mean latency at K (s) | GPU-s / request | J / request |",
                  "|---|---|---|---|---|---|---|"]
        for _, row in sub.iterrows():
            rng = "—" if row["workers_min"] is None else (
                f"{row['workers_min']}" if row["workers_min"] == row["workers_max"]
                else f"{row['workers_min']}–{row['workers_max']}")
            lines.append(f"| {row['policy']} | {row['router']} | {row['workers_by_seed']} | {rng} | "
                         f"{_f(row['mean_s'])} | {_f(row['gpu_s_per_request'], 3)} | "
                         f"{_f(row['energy_j_per_request'], 0)} |")
        lines.append("")
        router = suite.routers[0]
        curves = _curves(recs, suite, spec.label, spec.seeds[0], router)
        if curves:
            name = f"latency_vs_k_w{i}.png"
            plot_latency_vs_workers(curves, out / name, statistic=target.statistic, limit_s=target.limit_s,
                                    title=f"{spec.label}, seed {spec.seeds[0]}, router {router}")
            made.append(f"{name}: {spec.label}, {_axis_label(target.statistic)[:-4]} against K (seed {spec.seeds[0]}, "
                        f"router {router})")
    if made:
        lines += ["## Figures", ""] + [f"- `{m}`" for m in made] + [""]
    lines += ["## Runs", "", *_runs_text(dict(meta)),
              f"- Sum of task run times: {sum(float(r.get('runtime_s') or 0) for r in recs):.1f} s."]
    if problems:
        lines += ["", "## Problems", ""] + [f"- {p}" for p in problems]
    (out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return df


def _f(v: Any, digits: int = 1) -> str:
    return "—" if v is None else f"{float(v):,.{digits}f}"


def queue_over_time(instance: Any, schedule: Any, times: Sequence[float]) -> tuple[list[int], list[int]]:
    """Requests waiting and running in a continuous-time cluster run at each of ``times`` (seconds).

    A request is *in the system* from its arrival until its completion; it is *running* from the start of
    the batch its run's prompt is in until that run ends — its completion, or for a run evicted at the
    decision of iteration ``t`` the end of batch ``t − 1`` (aborted runs count while they ran); it is
    *waiting* when in the system and not running (queued, or evicted and not yet restarted). Counts are
    summed over the workers.

    Parameters
    ----------
    instance : TimedInstance
    schedule : ClusterSchedule
        A continuous-time run (``schedule.timed``) of ``instance``, every request completed.
    times : sequence of float

    Returns
    -------
    waiting, running : list of int
        One count per entry of ``times``.
    """
    import numpy as np

    if not schedule.timed:
        raise ValueError("queue_over_time: needs a continuous-time cluster run (seconds)")
    by_id = {r.id: r for r in instance.requests}
    arrivals, completions, run_start, run_end = [], [], [], []
    for w in schedule.workers:
        ends = w.batch_start + w.batch_duration
        for rid, k in w.starts.items():
            arrivals.append(by_id[rid].arrival)
            completions.append(w.completions[rid])
            run_start.append(w.batch_start[k])
            run_end.append(w.completions[rid])
        for e in w.evictions:
            if e.tokens_lost < 1:
                continue
            run_start.append(w.batch_start[e.start])
            run_end.append(ends[e.t - 1])
    t = np.asarray(times, dtype=float)
    arrived = np.searchsorted(np.sort(arrivals), t, side="right")
    done = np.searchsorted(np.sort(completions), t, side="right")
    # a run is running at t when start <= t < end
    running = (np.searchsorted(np.sort(run_start), t, side="right")
               - np.searchsorted(np.sort(run_end), t, side="right"))
    waiting = arrived - done - running
    return [int(v) for v in waiting], [int(v) for v in running]


def plot_queue_over_time(rows: Sequence[Mapping[str, Any]], path: str | Path, *, window_s: float | None = None,
                         title: str = "") -> Path:
    """One panel per setting (``rows``' ``setting`` column, in order of appearance): waiting requests (solid)
    and running requests (dotted) against time, one colour per policy; ``window_s`` draws the last arrival."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = list(dict.fromkeys(str(r["setting"]) for r in rows))
    policies = list(dict.fromkeys(str(r["policy"]) for r in rows))
    cols = min(3, len(settings))
    nrows = -(-len(settings) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.6 * nrows), sharey=True, squeeze=False)
    for ax, setting in zip(axes.flat, settings):
        for i, p in enumerate(policies):
            pts = [(float(r["t_s"]), int(r["waiting"]), int(r["running"])) for r in rows
                   if r["setting"] == setting and r["policy"] == p]
            if not pts:
                continue
            ts, wait, run = zip(*pts)
            ax.plot(ts, wait, color=f"C{i}", lw=1.2, label=f"{p} waiting")
            ax.plot(ts, run, color=f"C{i}", lw=0.8, ls=":")
        if window_s is not None:
            ax.axvline(window_s, color="k", lw=0.8, ls="--")
        ax.set_title(setting, fontsize=9)
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("requests (solid: waiting, dotted: running)")
    for ax in list(axes.flat)[len(settings):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, [lab.removesuffix(" waiting") for lab in labels], fontsize=8, loc="lower center",
               ncol=min(4, len(labels)), bbox_to_anchor=(0.5, 0.0))
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.07 if nrows > 1 else 0.12, 1, 1))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
