"""The ``zone-lp`` bound on the J §5.1 trials and on instances with a proven OPT.

For each of the 400 trials of ``results/jaillet/certified`` (J §5.1 AM1 + AM2, seeds 0–199), this
computes the ``zone-lp`` bound stage (the hindsight LP with the peak-zone rows of
:mod:`llmopt.formulations.zones`, certified by :func:`llmopt.verify.checker.check_zone_certificate`) and sets it beside
what that run certified (``lp``, ``energy``, the 5-s MIP bound) and the best schedule it found:

* certified gap = (best found − best certified bound) / best found, per trial;
* proven = the rounded-up bound reaches the best found TEL.

The stored runs keep TELs, not start times, so the windows here come from MC-SF's schedule (simulated
again, verified by the checker): wider than the run's own, which can only lower the LP. The best-found
TELs are the run's checker-verified incumbents. A second table does the same on the AM1 M = 40
instances of ``results/jaillet/ip-scaling`` and the points of ``results/jaillet/opt-frontier`` (proven OPT where the
IP proved it).

    llmopt study run zone-bound --out results/jaillet/zone-bound  # J §5.1 trials + small instances (about 40 min)
    llmopt study run zone-bound --quick                           # the first 20 J §5.1 trials, one worker

Results are appended to ``trials.jsonl`` in the output folder as they come; ``README.md``'s table (below a
``<!-- table -->`` line, the text above it kept) and ``gap_hist.png`` are written at the end. A rerun reuses
a stored row only while its source run still holds the same bracket (best found, status, bound): a row whose
source was rerun since (a newer proof, a better schedule) is evaluated again, and rows of trials no longer
stored are dropped. ``--fresh`` evaluates every row again.

A bound study, but it reads the J §5.1 suites' records through the harness's store
(:func:`llmopt.bench.store.latest_records`: a retried task counts once, its last record), so it sits with J's
studies, above the ``bench`` wing, not in ``llmopt.opt.studies``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics as st
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from llmopt.opt.studies import RESULTS, StudyError, options_argv, run_main, study_command

#: The folder of the rows, the README and the histogram (``main``'s ``--out``, set by :func:`_use`).
OUT = RESULTS / "jaillet" / "zone-bound"
TRIALS = OUT / "trials.jsonl"
CERTIFIED = RESULTS / "jaillet" / "certified" / "trials.jsonl"
SMALL = ((RESULTS / "jaillet" / "ip-scaling" / "trials.jsonl", "ip-scaling"),
         (RESULTS / "jaillet" / "opt-frontier" / "trials.jsonl", "opt-frontier"))
MODELS = (("jaillet-am1", "AM1"), ("jaillet-am2", "AM2"))


def _use(out: Path) -> None:
    """Write to and read from ``out`` (the rows are kept across runs there)."""
    global OUT, TRIALS
    OUT, TRIALS = Path(out), Path(out) / "trials.jsonl"


def _instance(rec: dict):
    from llmopt.workloads import make_instance

    params = {k: tuple(v) if isinstance(v, list) else v for k, v in (rec.get("params") or {}).items()}
    return make_instance(rec["workload"], seed=rec["seed"], **params)


def evaluate(rec: dict) -> dict:
    """The ``zone-lp`` bound of one stored trial, beside its stored bracket."""
    from llmopt.engine.discrete import simulate
    from llmopt.opt.bounds import BoundContext, run_bound
    from llmopt.policies import make_policy
    from llmopt.verify.checker import check_schedule

    inst = _instance(rec)
    mcsf = simulate(inst, make_policy("mc-sf"))
    assert check_schedule(inst, mcsf.starts).ok
    t0 = time.perf_counter()
    res = run_bound("zone-lp", inst, BoundContext(upper_bound_starts=mcsf.starts, threads=1))
    secs = time.perf_counter() - t0
    zone = None if res.value is None or not res.verified else res.value
    best = rec["incumbent"]
    before = rec["bound"]
    after = max(before, math.ceil(zone - 1e-6)) if zone is not None else before
    return {"suite": rec["suite"], "workload": rec["workload"], "params": rec.get("params"), "seed": rec["seed"],
            "n": inst.n, "M": inst.M, "best": best, "status": rec["status"], "tel_mc-sf": mcsf.tel,
            "bound_before": before, "certificate_before": rec["bound_certificate"], "bound_lp": rec.get("bound_lp"),
            "bound_energy": rec.get("bound_energy"), "bound_zone": zone, "zone_detail": res.detail,
            "bound_after": after, "gap_before": (best - before) / best, "gap_after": (best - after) / best,
            "proven_after": after >= best,
            "zone_proves": zone is not None and math.ceil(zone - 1e-6) >= best, "zone_s": round(secs, 3)}


def _key(r: dict) -> tuple:
    return (r["suite"], r["workload"], json.dumps(r.get("params"), sort_keys=True), r["seed"])


def _latest(path: Path) -> list[dict]:
    """The latest record per task of a committed ``trials.jsonl`` (a rerun appends; the last one counts)."""
    from llmopt.bench.store import latest_records, read_trials

    return latest_records(read_trials(path)[0])


def sources(limit: int | None) -> list[dict]:
    """The stored runs evaluated here: the AM1 / AM2 M = 40 points of the small suites, then the J §5.1 trials."""
    todo = []
    for path, _ in SMALL:
        todo += [r for r in _latest(path) if r["M"] == 40]
    return todo + _latest(CERTIFIED)[:limit]


def _same_inputs(row: dict, src: dict) -> bool:
    """Whether a stored evaluation was made from this very bracket of its source run: a source rerun since
    (a newer proof, a better schedule) makes the row stale, and it is evaluated again."""
    return (row["best"], row["status"], row["bound_before"]) == (src["incumbent"], src["status"], src["bound"])


def compute(workers: int, limit: int | None, fresh: bool = False) -> None:
    """Evaluate what ``trials.jsonl`` lacks (or holds stale), ``workers`` processes; keep one row per source."""
    OUT.mkdir(parents=True, exist_ok=True)
    stored = {}
    if TRIALS.exists() and not fresh:
        stored = {_key(r): r for r in map(json.loads, TRIALS.read_text().splitlines())}
    src = sources(limit)
    todo = [r for r in src if _key(r) not in stored or not _same_inputs(stored[_key(r)], r)]
    stale = sum(_key(r) in stored for r in todo)
    print(f"{len(src)} stored trials: {len(src) - len(todo)} rows reused from {TRIALS} (their source "
          f"bracket is unchanged), {len(todo)} to evaluate ({stale} stale: their source run changed); "
          "--fresh recomputes every row", flush=True)
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=workers) as pool, TRIALS.open("w" if fresh else "a") as fh:
        for i, out in enumerate(pool.map(evaluate, todo), 1):
            fh.write(json.dumps(out) + "\n")
            fh.flush()
            stored[_key(out)] = out
            print(f"[{i}/{len(todo)} {time.time() - t0:.0f}s] {out['workload']} seed {out['seed']} n={out['n']}: "
                  f"best {out['best']}, bound {out['bound_before']} -> {out['bound_after']} "
                  f"(gap {out['gap_before']:.1%} -> {out['gap_after']:.1%}), zone {out['zone_s']:.1f}s", flush=True)
    # one row per stored trial, in source order: rows of trials no longer stored, or superseded, are dropped
    keep = [stored[_key(r)] for r in src if _key(r) in stored]
    TRIALS.write_text("".join(json.dumps(r) + "\n" for r in keep))


def _mean(xs: list[float]) -> str:
    return f"{st.mean(xs):.2%}" if xs else "–"


def table() -> str:
    """The README's Markdown table, from ``trials.jsonl``."""
    rows = [json.loads(line) for line in TRIALS.read_text().splitlines()]
    lines = ["| | " + " | ".join(label for _, label in MODELS) + " |", "|---|" + "---:|" * len(MODELS)]
    cells: dict[str, list[str]] = {}
    for wl, _ in MODELS:
        rs = [r for r in rows if r["suite"] == "jaillet-certified" and r["workload"] == wl]
        if not rs:
            continue
        z = [r for r in rs if r["bound_zone"] is not None]
        secs = [r["zone_s"] for r in rs]
        add = {
            "trials": f"{len(rs)}",
            "proven optimal, before → after": f"{sum(r['status'] == 'optimal' for r in rs)} → "
                                              f"{sum(r['proven_after'] for r in rs)}",
            "proven by zone-lp alone (no IP)": f"{sum(r['zone_proves'] for r in rs)}",
            "certified gap, mean: before → after": f"{_mean([r['gap_before'] for r in rs])} → "
                                                   f"{_mean([r['gap_after'] for r in rs])}",
            "certified gap, median / max after": f"{st.median(r['gap_after'] for r in rs):.2%} / "
                                                 f"{max(r['gap_after'] for r in rs):.2%}",
            "zone-lp / lp, mean": f"{st.mean(r['bound_zone'] / r['bound_lp'] for r in z if r['bound_lp']):.3f}",
            "zone-lp / best found, mean (min)": f"{st.mean(r['bound_zone'] / r['best'] for r in z):.3f} "
                                                f"({min(r['bound_zone'] / r['best'] for r in z):.3f})",
            "MC-SF / certified bound, mean: before → after":
                f"{st.mean(r['tel_mc-sf'] / r['bound_before'] for r in rs):.3f} → "
                f"{st.mean(r['tel_mc-sf'] / r['bound_after'] for r in rs):.3f}",
            "zone-lp stage time, mean (max)": f"{st.mean(secs):.1f} s ({max(secs):.1f} s)",
            "zone-lp not verified / missing": f"{len(rs) - len(z)}",
        }
        for k, v in add.items():
            cells.setdefault(k, []).append(v)
    lines += [f"| {k} | " + " | ".join(v) + " |" for k, v in cells.items()]
    small = [r for r in rows if r["suite"] != "jaillet-certified"]
    lines += ["", "| suite | instance | n | reference | lp | zone-lp | gap before → after "
                  "| zone-lp alone proves | zone-lp s |",
              "|---|---|---:|---|---:|---:|---:|---|---:|"]
    for r in sorted(small, key=lambda r: (r["suite"], r["workload"], r["n"])):
        ref = f"{r['best']} ({'OPT' if r['status'] == 'optimal' else 'best found'})"
        zone = "–" if r["bound_zone"] is None else f"{r['bound_zone']:.1f}"
        lines.append(f"| {r['suite']} | {r['workload']} | {r['n']} | {ref} | {r['bound_lp']:.1f} | {zone} | "
                     f"{r['gap_before']:.2%} → {r['gap_after']:.2%} | {'yes' if r['zone_proves'] else 'no'} | "
                     f"{r['zone_s']:.1f} |")
    return "\n".join(lines)


def histogram() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(line) for line in TRIALS.read_text().splitlines()]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, (wl, label) in zip(axes, MODELS, strict=True):
        rs = [r for r in rows if r["suite"] == "jaillet-certified" and r["workload"] == wl]
        ax.hist([100 * r["gap_before"] for r in rs], bins=30, alpha=0.6, label="before (lp, energy, 5-s MIP)")
        ax.hist([100 * r["gap_after"] for r in rs], bins=30, alpha=0.6, label="after (+ zone-lp)")
        ax.set_title(f"J §5.1 {label}: certified gap per trial")
        ax.set_xlabel("(best found − certified bound) / best found, %")
    axes[0].set_ylabel("trials")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(OUT / "gap_hist.png", dpi=120)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: the options of :data:`OPTIONS` and ``--out DIR``."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="only the first N J §5.1 trials")
    ap.add_argument("--out", type=Path, required=True, help="folder of trials.jsonl, README.md and gap_hist.png")
    ap.add_argument("--fresh", action="store_true", help="evaluate every trial again (default: reuse rows whose "
                                                          "source bracket is unchanged)")
    ap.add_argument("--command", default="", help="the command line to quote in the README")
    args = ap.parse_args(argv)
    _use(args.out)
    compute(args.workers, args.limit, args.fresh)
    print(table())
    _write_readme(args.command or "llmopt study run zone-bound", args.workers)


def _write_readme(command: str, workers: int) -> None:
    readme = OUT / "README.md"
    head = readme.read_text().split("<!-- table -->")[0] if readme.exists() else "# zone-lp\n\n"
    stamp = (f"\n\nMeasured with `{command}` on {platform.machine()} "
             f"(Python {platform.python_version()}), {workers} worker processes.\n")
    readme.write_text(head + "<!-- table -->\n" + table() + stamp)
    histogram()


OPTIONS = {
    "workers": "worker processes (default 2; quick 1)",
    "limit": "only the first N J §5.1 trials (quick: 20)",
    "fresh": "evaluate every trial again (default: reuse rows whose source bracket is unchanged)",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Evaluate into ``out`` and write its README table and histogram; returns the files written."""
    if seeds is not None:
        raise StudyError("zone-bound takes no --seeds (it evaluates the stored trials)")
    opts = ({"workers": 1, "limit": 20} if quick else {}) | dict(options)
    argv = ["--out", str(out), *options_argv(opts),
            "--command", study_command("zone-bound", out, quick=quick, options=options)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """Re-render ``README.md``'s table and ``gap_hist.png`` from ``out/trials.jsonl``; returns them."""
    _use(out)
    _write_readme(f"llmopt study run zone-bound --out {out}", 2)
    return [str(OUT / "README.md"), str(OUT / "gap_hist.png")]
