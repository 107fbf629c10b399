"""A picture of one schedule: who ran when (a Gantt chart) and the KV cache in use (``simulate --plot``).

Top: one line per request, in start order — waiting (arrival to final start) thin and light, the
final run thick, evicted runs grey. Bottom: KV-cache usage against the capacity ``M``, drawn exactly
(usage is linear between the schedule's breakpoints). Discrete schedules are drawn in steps,
continuous-time ones in seconds (a run of iterations ``k … k+o−1`` spans the batches' wall time).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["plot_schedule", "memory_polyline"]


def memory_polyline(trace: Any) -> tuple[list[float], list[float]]:
    """``(times, usage)`` through every breakpoint of a :class:`~llmopt.model.schedule.MemoryTrace`: the
    usage is ``C + S·t`` on ``b < t <= b'``, so the line from ``(b + 1, C + S(b + 1))`` to
    ``(b', C + S·b')`` on each segment (and 0 between runs) is the exact integer-time profile."""
    xs: list[float] = []
    ys: list[float] = []
    segs = trace.segments()
    for (b, c, s), (nxt, _, _) in zip(segs, segs[1:]):
        xs += [b + 1, nxt]
        ys += [c + s * (b + 1), c + s * nxt]
    return xs, ys


def _runs_discrete(instance: Any, schedule: Any) -> tuple[list[tuple[float, float, float]], list[tuple]]:
    final = [(r.arrival, schedule.starts[r.id], schedule.completions[r.id]) for r in instance.requests]
    evicted = [(e.id, e.t - e.tokens_lost, e.t) for e in schedule.evictions]
    return final, evicted


def _runs_timed(instance: Any, schedule: Any) -> tuple[list[tuple[float, float, float]], list[tuple]]:
    starts = schedule.batch_start.tolist()
    ends = (schedule.batch_start + schedule.batch_duration).tolist()
    final = [(r.arrival, starts[schedule.starts[r.id]], schedule.completions[r.id])
             for r in instance.requests if r.id in schedule.completions]
    evicted = [(e.id, starts[e.t - e.tokens_lost], ends[e.t - 1]) for e in schedule.evictions]
    return final, evicted


def plot_schedule(instance: Any, schedule: Any, path: str | Path, title: str = "") -> None:
    """Write the Gantt chart and memory profile of ``schedule`` (discrete or continuous time) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    timed = hasattr(schedule, "batch_start")
    final, evicted = (_runs_timed if timed else _runs_discrete)(instance, schedule)
    order = sorted(range(len(final)), key=lambda i: (final[i][1], i))
    rank = {i: y for y, i in enumerate(order)}
    fig, (gantt, mem) = plt.subplots(2, 1, sharex=True, figsize=(10, 6.5), gridspec_kw={"height_ratios": (2, 1)})
    n = len(final)
    width = max(0.3, min(3.0, 300 / max(n, 1)))
    gantt.add_collection(LineCollection([[(a, rank[i]), (k, rank[i])] for i, (a, k, _) in enumerate(final)],
                                        colors="#f2b880", linewidths=width / 2, label="waiting"))
    gantt.add_collection(LineCollection([[(k, rank[i]), (c, rank[i])] for i, (_, k, c) in enumerate(final)],
                                        colors="#1f77b4", linewidths=width, label="final run"))
    if evicted:
        pos = {r.id: i for i, r in enumerate(instance.requests)}
        gantt.add_collection(LineCollection(
            [[(lo, rank[pos[rid]]), (hi, rank[pos[rid]])] for rid, lo, hi in evicted if pos[rid] in rank],
            colors="0.6", linewidths=width, label=f"evicted runs ({len(evicted)})"))
    gantt.set_ylim(-1, max(n, 1))
    gantt.invert_yaxis()
    gantt.set_ylabel("request (in start order)")
    gantt.legend(loc="upper right", fontsize=8)
    gantt.autoscale(axis="x")
    if timed:
        ends = (schedule.batch_start + schedule.batch_duration).tolist()
        mem.step(ends, schedule.memory_after_batches().tolist(), where="pre", lw=0.8)
        mem.set_xlabel("time (s)")
    else:
        xs, ys = memory_polyline(schedule.memory)
        mem.plot(xs, ys, lw=0.8)
        mem.set_xlabel("time (steps)")
    mem.axhline(instance.M, color="red", lw=0.8, ls="--", label=f"M = {instance.M:,}")
    mem.set_ylabel("KV cache in use (tokens)")
    mem.legend(loc="upper right", fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
