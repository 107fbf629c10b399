"""The J §5.1 certified bracket before and after the ``lns`` stage and the ``energy`` bound, trial by trial.

Reads two committed runs of the same 400 trials (J §5.1 AM1 + AM2, seeds 0–199):

* ``results/jaillet/synthetic/trials.jsonl`` — MC-SF, FCFS, 200-evaluation local search, 5 s IP, ``lp`` bound;
* ``results/jaillet/certified/trials.jsonl`` — the same plus the ``lns`` stage (30 sub-IPs) and the
  ``energy`` bound (suite ``jaillet-certified``).

and reports per arrival model: trials proven optimal, the certified gap (best found − bound) / best
found (mean, median, max, min), MC-SF / best found (a lower bound on MC-SF's ratio), MC-SF / bound
(an upper bound), how much the best schedule improved, which stage found it, which certificate
gave the bound, and the time per trial. Also writes ``gap_hist.png``: the per-trial gaps of both runs.

It solves nothing: it reloads the two runs (and says so in its first line, with the commands that
recompute them).

    llmopt study run certified-gap --out results/jaillet/certified   # writes gap.md and gap_hist.png
"""

from __future__ import annotations

import argparse
import json
import statistics as st
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llmopt.opt.studies import RESULTS, StudyError, run_main

BEFORE = RESULTS / "jaillet" / "synthetic" / "trials.jsonl"
AFTER = RESULTS / "jaillet" / "certified" / "trials.jsonl"
MODELS = (("jaillet-am1", "AM1"), ("jaillet-am2", "AM2"))


def load(path: Path) -> dict[tuple[str, int], dict]:
    return {(r["workload"], r["seed"]): r for r in map(json.loads, path.read_text().splitlines()) if not r["error"]}


def reload_note() -> str:
    """One line: this script reloads the committed runs (it solves nothing), and how to recompute them."""
    parts = []
    for path in (BEFORE, AFTER):
        meta = json.loads((path.parent / "suite.json").read_text())
        run = meta["runs"][-1] if meta.get("runs") else {}
        took = f", {run['wall_s'] / 3600:.1f} h on {run.get('workers')} workers" if run.get("wall_s") else ""
        parts.append(f"llmopt bench run {meta['suite']['name']} --out DIR{took}")
    return ("reloads the committed runs " + " and ".join(str(p.relative_to(RESULTS.parent)) for p in (BEFORE, AFTER))
            + " (nothing is solved here); to recompute them: " + "; ".join(parts))


def summary(before: dict, after: dict) -> list[str]:
    models = [(wl, label) for wl, label in MODELS if any(k[0] == wl and k in before for k in after)]
    lines = ["| | " + " | ".join(f"{label} before | {label} after" for _, label in models) + " |",
             "|---|" + "---:|" * (2 * len(models))]
    rows: dict[str, list[str]] = {}

    def add(name: str, *cells: str) -> None:
        rows.setdefault(name, []).extend(cells)

    for wl, _ in models:
        keys = sorted(k for k in after if k[0] == wl and k in before)
        for run in (before, after):
            rs = [run[k] for k in keys]
            gaps = [r["gap"] for r in rs]
            add("trials", f"{len(rs)}")
            add("OPT proven", f"{sum(r['status'] == 'optimal' for r in rs)}")
            add("certified gap, mean", f"{st.mean(gaps):.2%}")
            add("certified gap, median (min – max)", f"{st.median(gaps):.2%} ({min(gaps):.2%} – {max(gaps):.2%})")
            add("MC-SF / best found, mean (max)", f"{st.mean(r['ratio_vs_incumbent'] for r in rs):.4f} "
                                                  f"({max(r['ratio_vs_incumbent'] for r in rs):.3f})")
            add("MC-SF / bound, mean", f"{st.mean(r['ratio_vs_bound'] for r in rs):.3f}")
            add("time per trial, mean (max) s", f"{st.mean(r['runtime_s'] for r in rs):.1f} "
                                                f"({max(r['runtime_s'] for r in rs):.1f})")
            src = Counter(r["incumbent_source"].split("/")[0] for r in rs)
            add("best schedule found by", ", ".join(f"{k} {v}" for k, v in src.most_common()))
            cert = Counter(r["bound_certificate"] for r in rs)
            add("bound certified by", ", ".join(f"{k} {v}" for k, v in cert.most_common()))
        improved = [after[k]["incumbent"] / before[k]["incumbent"] for k in keys]
        energy_vs_lp = [after[k]["bound_energy"] / after[k]["bound_lp"] for k in keys
                        if after[k].get("bound_energy") and after[k].get("bound_lp")]
        add("best found after / before, mean (min)", "", f"{st.mean(improved):.4f} ({min(improved):.4f})")
        add("energy bound / LP bound, mean (max)", "", f"{st.mean(energy_vs_lp):.3f} ({max(energy_vs_lp):.3f})"
            if energy_vs_lp else "—")
    for name, cells in rows.items():
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def histogram(before: dict, after: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5), sharey=True)
    for ax, (wl, label) in zip(axes, MODELS, strict=True):
        keys = sorted(k for k in after if k[0] == wl and k in before)
        ax.hist([100 * before[k]["gap"] for k in keys], bins=30, alpha=0.6, label="before (jaillet-synthetic)")
        ax.hist([100 * after[k]["gap"] for k in keys], bins=30, alpha=0.6, label="after (jaillet-certified)")
        ax.set_title(f"{label}: certified gap per trial")
        ax.set_xlabel("(best found − certified bound) / best found, %")
    axes[0].set_ylabel("trials")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: ``--out DIR`` writes ``gap.md`` and ``gap_hist.png`` there."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="write gap.md and gap_hist.png here")
    args = ap.parse_args(argv)
    print(reload_note())
    before, after = load(BEFORE), load(AFTER)
    lines = summary(before, after)
    print("\n".join(lines))
    if args.out is not None:
        out = args.out
        out.mkdir(parents=True, exist_ok=True)
        (out / "gap.md").write_text(
            "# Certified gap per trial, before and after issue 9's stages\n\n"
            f"Generated by `llmopt study run certified-gap --out {out}` from the two committed `trials.jsonl`.\n\n"
            + "\n".join(lines) + "\n\n![gaps](gap_hist.png)\n")
        histogram(before, after, out / "gap_hist.png")


OPTIONS: dict[str, str] = {}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``gap.md`` and ``gap_hist.png`` into ``out`` from the two committed runs (it solves nothing, so
    ``quick`` is the same); returns the files written."""
    if seeds is not None:
        raise StudyError("certified-gap takes no --seeds (it reloads the committed runs)")
    return run_main(main, out, ["--out", str(out)])


def report(out: Path) -> list[str]:
    """The same as :func:`run` (the report is all this study computes)."""
    return run(out)
