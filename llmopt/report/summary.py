"""Summaries of a suite's results: a table per workload, Markdown, CSV and a histogram.

Suites with ``task_table`` (e.g. ``ip-scaling``) also get one row per task: instance
and model size, status, OPT or incumbent, bound, gap, reference TEL, time.

Three ratios of the reference policy's TEL are reported, each with what certifies it
(DESIGN §3 "Checker"):

* ``ratio_vs_opt`` — against a *proven* optimum; summarised only over proven trials;
* ``ratio_vs_incumbent`` — against the best verified schedule found; the best found
  TEL is ``>= OPT``, so this is a *lower* bound on the true ratio;
* ``ratio_vs_bound`` — against a certified lower bound on OPT; an *upper*
  bound on the true ratio.

Records written before the reference policy was configurable call
``reference_is_opt`` ``mcsf_is_opt``; both are read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from llmopt.bench.kinds import TASK_KINDS
from llmopt.bench.store import SUITE_FILE, TRIALS_FILE, check_folder_suite, latest_records, read_meta, read_trials
from llmopt.bench.suites import Suite

__all__ = [
    "summarize",
    "task_frame",
    "markdown_task_table",
    "largest_proven",
    "task_cells",
    "task_headers",
    "TASK_COLUMNS",
    "write_report",
    "plot_ratio_hist",
    "markdown_table",
    "format_value",
    "SUMMARY_COLUMNS",
    "PAPER_KEYS",
]

PAPER_KEYS = ("mean", "max", "min", "exact", "trials")

SUMMARY_COLUMNS = (
    "workload",
    "trials",
    "errors",
    "proven_optimal",
    "ratio_vs_opt_mean",
    "ratio_vs_opt_max",
    "ratio_vs_opt_min",
    "ratio_vs_incumbent_mean",
    "ratio_vs_incumbent_max",
    "ratio_vs_bound_mean",
    "ratio_vs_bound_max",
    "gap_mean",
    "reference_exact",
    "reference_worse_than_found",
) + tuple(f"paper_{k}" for k in PAPER_KEYS)


def format_cell(v: Any, digits: int = 1) -> str:
    """A table cell: ``—`` for a missing value (``None``, NaN), ``yes``/``no`` for booleans,
    integers with thousands separators, floats with ``digits`` decimals."""
    if v is None or (isinstance(v, (float, np.floating)) and np.isnan(v)):
        return "—"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):,.{digits}f}"
    return str(v)


def _stat(values: Sequence[float], how: str) -> float | None:
    if not values:
        return None
    reducers: dict[str, Any] = {"mean": np.mean, "max": np.max, "min": np.min}
    return float(reducers[how](values))


def _vals(records: Iterable[dict[str, Any]], key: str) -> list[float]:
    return [float(r[key]) for r in records if r.get(key) is not None]


def _is_opt(record: dict[str, Any]) -> bool | None:
    value = record.get("reference_is_opt", record.get("mcsf_is_opt"))
    return None if value is None else bool(value)


def _labelled(records: Iterable[dict[str, Any]], suite: Suite) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """Entry labels in suite order (then unknown ones, sorted) and ``(label, record)`` pairs."""
    pairs = [(suite.label_for(r["workload"], r.get("params") or {}), r) for r in latest_records(records)]
    order = [s.label for s in suite.workloads]
    order += sorted({lbl for lbl, _ in pairs} - set(order))
    return order, pairs


def summarize(records: Iterable[dict[str, Any]], suite: Suite) -> pd.DataFrame:
    """One row per workload summarising the reference policy's ratios.

    Parameters
    ----------
    records : iterable of dict
        Trial records (as in ``trials.jsonl``); when a task appears more than once the
        last record counts.
    suite : Suite
        Gives the workload entries (one row each, named by their label), their order
        and the paper's numbers.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS`: ``workload`` (the entry's label), ``trials``
        (records), ``errors``, ``proven_optimal``; mean/max/min of ``ratio_vs_opt``
        over proven trials; mean/max of ``ratio_vs_incumbent`` and ``ratio_vs_bound``
        over all trials without error; ``gap_mean``; ``reference_exact`` (proven OPT
        equals the reference TEL); ``reference_worse_than_found`` (reference TEL above
        the best found); and the paper's numbers as ``paper_*``. Missing values are
        ``None``.
    """
    order, pairs = _labelled(records, suite)
    rows = []
    for w in order:
        mine = [r for lbl, r in pairs if lbl == w]
        ok = [r for r in mine if not r.get("error")]
        proven = [r for r in ok if r.get("opt") is not None and r.get("ratio_vs_opt") is not None]
        opt_ratios = _vals(proven, "ratio_vs_opt")
        inc = _vals(ok, "ratio_vs_incumbent")
        bnd = _vals(ok, "ratio_vs_bound")
        paper = suite.paper.get(w, {})
        row: dict[str, Any] = {
            "workload": w,
            "trials": len(mine),
            "errors": len(mine) - len(ok),
            "proven_optimal": len(proven),
            "ratio_vs_opt_mean": _stat(opt_ratios, "mean"),
            "ratio_vs_opt_max": _stat(opt_ratios, "max"),
            "ratio_vs_opt_min": _stat(opt_ratios, "min"),
            "ratio_vs_incumbent_mean": _stat(inc, "mean"),
            "ratio_vs_incumbent_max": _stat(inc, "max"),
            "ratio_vs_bound_mean": _stat(bnd, "mean"),
            "ratio_vs_bound_max": _stat(bnd, "max"),
            "gap_mean": _stat(_vals(ok, "gap"), "mean"),
            "reference_exact": sum(1 for r in proven if _is_opt(r) is True),
            "reference_worse_than_found": sum(
                1 for r in ok
                if r.get("tel") is not None and r.get("incumbent") is not None and r["tel"] > r["incumbent"]
            ),
        }
        for k in PAPER_KEYS:
            row[f"paper_{k}"] = paper.get(k)
        rows.append(row)
    # object dtype keeps ints as ints and missing values as None (not NaN)
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS), dtype=object)


# --- Markdown ------------------------------------------------------------------------------

_MD_COLUMNS = (
    ("workload", "workload"),
    ("trials", "trials"),
    ("errors", "errors"),
    ("proven_optimal", "OPT proven"),
    ("ratio_vs_opt_mean", "TEL/OPT mean"),
    ("paper_mean", "paper mean"),
    ("ratio_vs_opt_max", "TEL/OPT max"),
    ("paper_max", "paper max"),
    ("ratio_vs_opt_min", "TEL/OPT min"),
    ("paper_min", "paper min"),
    ("reference_exact", "= OPT (proven)"),
    ("paper_exact", "paper = OPT"),
    ("ratio_vs_incumbent_mean", "TEL/best found mean"),
    ("ratio_vs_incumbent_max", "TEL/best found max"),
    ("ratio_vs_bound_mean", "TEL/bound mean"),
    ("ratio_vs_bound_max", "TEL/bound max"),
    ("gap_mean", "mean gap"),
    ("reference_worse_than_found", "> best found"),
)


def format_value(value: Any, column: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "—"
    if column == "gap_mean":
        return f"{100 * float(value):.2f} %"
    if column.startswith(("ratio", "paper_mean", "paper_max", "paper_min")):
        return f"{float(value):.3f}"
    if isinstance(value, (int, np.integer)) or (isinstance(value, float) and value.is_integer()):
        return str(int(value))
    return str(value)


def markdown_table(df: pd.DataFrame) -> str:
    """The summary as a Markdown table (friendly headers, ``—`` for missing values)."""
    head = "| " + " | ".join(h for _, h in _MD_COLUMNS) + " |"
    sep = "|" + "|".join("---" if c == "workload" else "---:" for c, _ in _MD_COLUMNS) + "|"
    lines = [head, sep]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(format_value(row[c], c) for c, _ in _MD_COLUMNS) + " |")
    return "\n".join(lines)


# --- one row per task ------------------------------------------------------------------------

TASK_COLUMNS = (
    "workload", "seed", "n", "M", "cols", "nnz", "status", "opt_or_incumbent", "bound", "gap", "tel",
    "ratio", "ratio_is_lower_bound", "runtime_s", "error",
)


def task_frame(records: Iterable[dict[str, Any]], suite: Suite) -> pd.DataFrame:
    """One row per task (its last record), in suite order.

    Columns :data:`TASK_COLUMNS`: the entry's label, seed, ``n``, ``M``, the model's
    columns and nonzeros, status, OPT when proven else the best found TEL, the certified
    bound, gap, the reference policy's TEL, ``ratio`` (TEL/OPT, or TEL/best found with
    ``ratio_is_lower_bound`` true), the task's total run time and its error.
    """
    order, pairs = _labelled(records, suite)
    rank = {lbl: i for i, lbl in enumerate(order)}
    rows = []
    for lbl, r in sorted(pairs, key=lambda p: (rank[p[0]], int(p[1]["seed"]))):
        proven = r.get("ratio_vs_opt") is not None
        rows.append({
            "workload": lbl,
            "seed": r.get("seed"),
            "n": r.get("n"),
            "M": r.get("M"),
            "cols": r.get("model_cols"),
            "nnz": r.get("model_nnz"),
            "status": r.get("status"),
            "opt_or_incumbent": r.get("opt") if r.get("opt") is not None else r.get("incumbent"),
            "bound": r.get("bound"),
            "gap": r.get("gap"),
            "tel": r.get("tel"),
            "ratio": r.get("ratio_vs_opt") if proven else r.get("ratio_vs_incumbent"),
            "ratio_is_lower_bound": None if r.get("tel") is None else not proven,
            "runtime_s": r.get("runtime_s"),
            "error": r.get("error"),
        })
    return pd.DataFrame(rows, columns=list(TASK_COLUMNS), dtype=object)


def _cell(value: Any, kind: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "—"
    if kind == "gap":
        return f"{100 * float(value):.2f} %"
    if kind == "time":
        return f"{float(value):.1f}"
    if kind == "int":
        return f"{float(value):,.0f}"
    return str(value)


def task_cells(row: Any) -> list[str]:
    """The Markdown/terminal cells of one :func:`task_frame` row (headers: :func:`task_headers`)."""
    ratio = "—"
    if row["ratio"] is not None:
        ratio = ("≥ " if row["ratio_is_lower_bound"] else "") + f"{float(row['ratio']):.3f}"
    return [
        str(row["workload"]), _cell(row["seed"], "str"), _cell(row["n"], "str"), _cell(row["M"], "str"),
        _cell(row["cols"], "int"), _cell(row["nnz"], "int"),
        "error" if row["error"] else _cell(row["status"], "str"),
        _cell(row["opt_or_incumbent"], "int"), _cell(row["bound"], "int"), _cell(row["gap"], "gap"),
        _cell(row["tel"], "int"), ratio, _cell(row["runtime_s"], "time"),
    ]


def task_headers(reference: str) -> list[str]:
    return ["workload", "seed", "n", "M", "cols", "nnz", "status", "OPT / incumbent", "bound", "gap",
            f"{reference} TEL", f"{reference} / OPT", "total s"]


def markdown_task_table(df: pd.DataFrame, reference: str) -> str:
    """The per-task table in Markdown (``≥`` marks a ratio against the best found, not OPT)."""
    heads = task_headers(reference)
    lines = ["| " + " | ".join(heads) + " |",
             "|" + "|".join("---" if h in ("workload", "status") else "---:" for h in heads) + "|"]
    lines += ["| " + " | ".join(task_cells(row)) + " |" for _, row in df.iterrows()]
    return "\n".join(lines)


def largest_proven(df: pd.DataFrame) -> str | None:
    """``"n = 20 (M = 40, 571.7 s)"`` for the largest instance proven optimal, or ``None``."""
    proven = [row for _, row in df.iterrows()
              if row["status"] == "optimal" and not row["error"] and row["n"] is not None]
    if not proven:
        return None
    best = max(proven, key=lambda r: (int(r["n"]), float(r["runtime_s"] or 0.0)))
    return f"n = {best['n']} (M = {best['M']}, {_cell(best['runtime_s'], 'time')} s)"


def _runs_text(meta: dict[str, Any]) -> list[str]:
    runs = [r for r in meta.get("runs") or [] if isinstance(r, dict)]
    if not runs:
        return ["- Runs: none recorded (no suite.json)."]
    wall = sum(float(r.get("wall_s") or 0.0) for r in runs)
    out = [f"- Wall time: {wall:.1f} s over {len(runs)} run(s) "
           f"(first started {runs[0].get('started')}, "
           f"last finished {runs[-1].get('finished') or 'not finished'})."]
    for r in runs:
        versions = r.get("versions") or {"llmopt": r.get("llmopt_version")}
        soft = ", ".join(f"{k} {v}" for k, v in versions.items() if v is not None)
        outcome = r.get("outcome") or ("completed" if r.get("finished") else "not finished")
        out.append(
            f"- Command: `{r.get('command')}` — started {r.get('started')}, {outcome}, "
            f"{r.get('tasks_run', 0)} task(s) run, {r.get('tasks_skipped', 0)} already done, "
            f"{r.get('workers') or 'all free CPUs as'} worker(s)"
            + (f" ({r['executor']}{' at ' + str(r['address']) if r.get('address') else ''})"
               if r.get("executor") else "")
            + f"; {soft}"
        )
    return out


def _markdown(df: pd.DataFrame, suite: Suite, meta: dict[str, Any], records: list[dict[str, Any]],
              problems: list[str]) -> str:
    ref = suite.reference
    cpu = sum(float(r.get("runtime_s") or 0.0) for r in records)
    lines = [
        f"# Suite `{suite.name}`",
        "",
        *([suite.description, ""] if suite.description else []),
        f"Competitive ratio of **{ref}** (reference policy) against the hindsight optimum. "
        f"Hindsight pipeline: formulation `{suite.formulation}`, solver `{suite.solver}`, "
        f"{'no time limit' if suite.ip_time_limit is None else f'{suite.ip_time_limit:g} s'} per IP solve, "
        f"lower bounds {_bounds_text(suite.bounds)}, upper bounds {', '.join(suite.upper_bounds) or 'none'} "
        f"(local search {suite.search_evals} evaluations"
        f"{f'; lns {suite.lns_iterations} sub-IPs' if 'lns' in suite.upper_bounds else ''}"
        f"{f'; cp-sat {suite.cp_sat_seconds:g} deterministic s' if 'cp-sat' in suite.upper_bounds else ''}) "
        "for the warm start and the start windows.",
        "",
        "Which ratio is which (TEL = the reference policy's TEL, re-verified by the checker):",
        "",
        "- **TEL/OPT**: against a *proven* optimum; mean, max and min are over the trials where the solver "
        "proved optimality (column *OPT proven*). They compare with the paper's all-trial numbers only "
        "when every trial is proven; otherwise they lean toward the easier instances.",
        "- **TEL/best found**: against the best verified schedule found (heuristics or IP). The best found "
        "TEL is ≥ OPT, so this is a **lower bound on the true ratio**.",
        "- **TEL/bound**: against a certified lower bound on OPT — the largest of the solver's MIP bound, "
        "the suite's bound stages (each re-derived by the independent checker from its certificate), and Σ o_i "
        "(field `bound_certificate` of each trial says which). This is an "
        "**upper bound on the true ratio**.",
        "- *= OPT (proven)*: trials where the reference TEL equals the proven OPT; *> best found*: trials "
        "where a better schedule than the reference policy's was found (so it is provably not optimal).",
        "- *paper* columns: the numbers reported in the paper for the same workload.",
        "",
        markdown_table(df),
        *_task_section(suite, records),
        "",
        "## Runs",
        "",
        *_runs_text(meta),
        f"- Sum of task run times: {cpu:.1f} s.",
    ]
    errors = [r for r in records if r.get("error")]
    if errors:
        lines += ["", "## Errors", ""]
        lines += [f"- {_name(r, suite)} seed {r['seed']}: {r['error']}" for r in errors[:50]]
        if len(errors) > 50:
            lines.append(f"- … and {len(errors) - 50} more")
    contradicted = [r for r in records if r.get("hindsight_errors")]
    if contradicted:
        lines += ["", "## Contradictions found by the pipeline (a bug or a wrong certificate)", ""]
        lines += [f"- {_name(r, suite)} seed {r['seed']}: {e}" for r in contradicted for e in r["hindsight_errors"]]
    skipped = [r for r in records if r.get("bounds_skipped")]
    if skipped:
        lines += ["", "## Bound stages left out for time", ""]
        lines += [f"- {_name(r, suite)} seed {r['seed']}: {s}" for r in skipped for s in r["bounds_skipped"]]
    warned = [r for r in records if r.get("warnings")]
    if warned:
        lines += ["", "## Warnings", ""]
        lines += [f"- {_name(r, suite)} seed {r['seed']}: {w}" for r in warned for w in r["warnings"]]
    if problems:
        lines += ["", "## Skipped lines of trials.jsonl", ""] + [f"- {p}" for p in problems]
    return "\n".join(lines) + "\n"


def _name(record: dict[str, Any], suite: Suite) -> str:
    return suite.label_for(record["workload"], record.get("params") or {})


def _task_section(suite: Suite, records: list[dict[str, Any]]) -> list[str]:
    if not suite.task_table:
        return []
    df = task_frame(records, suite)
    lines = ["", "## Tasks", "",
             f"One row per task. *OPT / incumbent*: the proven optimum when status is `optimal`, else the best "
             f"verified TEL found; *{suite.reference} / OPT* with ≥ is against the best found (a lower bound on "
             "the ratio). *total s*: the whole task (policies, heuristics, model build, solve, certificate).",
             "", markdown_task_table(df, suite.reference)]
    best = largest_proven(df)
    lines += ["", f"Largest instance proven optimal: {best}." if best else "No instance was proven optimal."]
    return lines


# --- histogram --------------------------------------------------------------------------------


def plot_ratio_hist(records: Iterable[dict[str, Any]], suite: Suite, path: str | Path) -> Path:
    """One histogram panel per workload, like Figure 2 of Jaillet et al.

    Each trial contributes TEL/OPT where OPT is proven, else TEL/best found (a lower
    bound on its ratio); the two are stacked in different colours. The paper's mean is
    a vertical line. Uses the Agg canvas directly (no pyplot, no global backend change).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    workloads, pairs = _labelled(records, suite)
    ncols = max(1, min(3, len(workloads)))
    nrows = max(1, -(-len(workloads) // ncols))
    fig = Figure(figsize=(5.2 * ncols, 3.8 * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax in axes[len(workloads):]:
        ax.set_visible(False)
    for ax, w in zip(axes[: len(workloads)], workloads, strict=True):
        mine = [r for lbl, r in pairs if lbl == w and not r.get("error")]
        proven = [float(r["ratio_vs_opt"]) for r in mine if r.get("ratio_vs_opt") is not None]
        found = [float(r["ratio_vs_incumbent"]) for r in mine
                 if r.get("ratio_vs_opt") is None and r.get("ratio_vs_incumbent") is not None]
        values = proven + found
        ax.set_title(f"{w}: {len(mine)} trials, {len(proven)} with proven OPT")
        ax.set_xlabel(f"{suite.reference} TEL / OPT (TEL / best found where OPT is not proven)")
        ax.set_ylabel("trials")
        paper_mean = suite.paper.get(w, {}).get("mean")
        if not values:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        else:
            hi = max([*values, 1.0 if paper_mean is None else float(paper_mean)])
            hi = max(hi * 1.002, 1.01)
            bins = np.linspace(1.0, hi, 31)
            ax.hist([proven, found], bins=bins, stacked=True, color=["tab:blue", "tab:orange"],
                    label=["TEL/OPT (proven)", "TEL/best found (lower bound on ratio)"])
            ax.set_ylim(0, ax.get_ylim()[1] * 1.45)  # headroom for the legend
            if proven:
                ax.axvline(float(np.mean(proven)), color="tab:blue", linestyle=":",
                           label=f"our mean over proven: {np.mean(proven):.3f}")
        if paper_mean is not None:
            ax.axvline(float(paper_mean), color="tab:red", linestyle="--",
                       label=f"paper mean: {paper_mean:.3f}")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if values or paper_mean is not None:
            ax.legend(fontsize="small", loc="best")
    fig.suptitle(f"Suite {suite.name}: latency ratio, {suite.reference} vs hindsight optimum")
    out = Path(path)
    fig.savefig(out, dpi=120)
    return out


# --- all outputs ------------------------------------------------------------------------------


def _bounds_text(bounds: tuple[str, ...]) -> str:
    auto = "auto (energy, with zone-lp or lp-colgen by size)"
    return ", ".join(auto if b == "auto" else b for b in bounds) or "none"


def write_report(out_dir: str | Path, suite: Suite | None = None) -> pd.DataFrame:
    """Write ``summary.csv``, ``summary.md`` and ``ratio_hist.png`` from ``trials.jsonl``.

    Parameters
    ----------
    out_dir : path
        A results folder written by :func:`llmopt.bench.harness.run_suite`.
    suite : Suite, optional
        Default: the suite stored in ``out_dir/suite.json``.

    Returns
    -------
    pandas.DataFrame
        The summary (see :func:`summarize`).

    Raises
    ------
    FileNotFoundError
        If ``out_dir`` has no ``trials.jsonl``.
    llmopt.bench.store.HarnessError
        If ``out_dir`` holds results of another suite, or its ``suite.json`` is unreadable.
    """
    out = Path(out_dir)
    trials = out / TRIALS_FILE
    if not trials.exists():
        raise FileNotFoundError(f"{trials}: no results yet (run `llmopt bench run` first)")
    meta = read_meta(out)
    if suite is None:
        if "suite" not in meta:
            raise FileNotFoundError(f"{out / SUITE_FILE}: missing; pass the suite explicitly")
        suite = Suite.from_dict(meta["suite"])
    check_folder_suite(meta, suite, out, settings=False)
    records, problems = read_trials(trials)
    df = TASK_KINDS.get(suite.kind).report_writer()(out, suite, meta, records, problems)
    _extra_report(out, suite, records)
    return df


def write_hindsight_report(out: Path, suite: Suite, meta: dict[str, Any], records: list[dict[str, Any]],
                           problems: list[str]) -> pd.DataFrame:
    """The ``hindsight`` kind's report: ``summary.csv``, ``summary.md`` and ``ratio_hist.png``."""
    df = summarize(records, suite)
    df.to_csv(out / "summary.csv", index=False)
    md = _markdown(df, suite, meta, latest_records(records), problems)
    (out / "summary.md").write_text(md, encoding="utf-8")
    plot_ratio_hist(records, suite, out / "ratio_hist.png")
    return df


def _extra_report(out: Path, suite: Suite, records: list[dict[str, Any]]) -> None:
    """Run the suite's own report (``Suite.extra_report``) and list what it wrote in ``summary.md``."""
    if not suite.extra_report:
        return
    import importlib

    module, _, attr = suite.extra_report.partition(":")
    made = getattr(importlib.import_module(module), attr)(out, suite, latest_records(records))
    if made:
        with open(out / "summary.md", "a", encoding="utf-8") as fh:
            fh.write("\n## Suite tables and figures\n\n" + "".join(f"- {line}\n" for line in made))
