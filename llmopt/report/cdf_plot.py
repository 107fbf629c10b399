"""Empirical CDFs of a run's per-request latency, time to first token and time between tokens
(``llmopt simulate --plot-cdf``). Matplotlib is imported only when a figure is drawn."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["cdf_points", "plot_cdfs"]


def cdf_points(values: Sequence[float | None]) -> tuple[list[float], list[float]]:
    """``(x, F(x))`` of the empirical CDF of ``values`` (``None`` skipped): the sorted values and
    ``i / n`` for the ``i``-th smallest, so the last point is at 1."""
    xs = sorted(v for v in values if v is not None)
    n = len(xs)
    return xs, [(i + 1) / n for i in range(n)]


def plot_cdfs(panels: Mapping[str, Sequence[float | None]], path: str | Path, *, title: str = "") -> Path:
    """One step-CDF panel per entry of ``panels`` (label → values; e.g. ``"latency (s)"``), side by
    side, written to ``path`` (PNG, PDF or SVG by its suffix).

    Parameters
    ----------
    panels : mapping of str to sequence of float
        Axis label → the per-request values (``None`` entries, such as the time between tokens of a
        one-token output, are left out; an empty panel says so).
    path : path
    title : str

    Returns
    -------
    Path
        The file written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (label, values) in zip(axes[0], panels.items()):
        xs, fs = cdf_points(values)
        if xs:
            ax.step(xs, fs, where="post")
        else:
            ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel(label)
        ax.set_ylabel("fraction of requests")
        ax.set_ylim(0, 1.02)
        ax.grid(True, alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
