"""Each lower-bound stage's time and value against n, with fitted exponents, and what the
completion-lag cliques add on J §5.1 trials.

Part (a): J Arrival Model 1 instances (all at 0) with ``M = 40`` and ``n`` fixed (seed 0), the
bound stages ``lp``, ``zone-lp``, ``zone-colgen``, ``lag-lp``, ``lp-colgen``, ``lagrangian`` (which
stops when its step factor falls below 1e-6, or at the time limit) and ``energy``, each
with MC-SF's verified schedule as its context (windows, column-generation seed). A stage is not
run at larger ``n`` once it took more than ``--cap`` seconds. The exponent is the least-squares
slope of ``log(time)`` on ``log(n)`` over the points at or above ``n = 40`` that ran.

Part (b): ``--trials K`` evenly spaced seeds of each J §5.1 arrival model (the instances of
``results/jaillet/certified``): ``zone-colgen`` (= the ``zone-lp`` relaxation) and ``lag-lp`` beside
the best schedule that run found (its checker-verified TEL), so the certified gap with and without
the lag cliques.

Part (c), ``--tree-nodes K`` (default 0: skipped): the branch-and-bound stage ``zone-tree`` runs until a
proof or the time limit, so its wall time against ``n`` says nothing; its cost is the node LP. On the
instances of part (a) with ``n <= 60`` (the stage's limit), :func:`llmopt.opt.zone_tree.zone_tree` with a
node limit of ``K`` node LPs from MC-SF's schedule: the seconds per node LP (fitted over ``n >= 20``),
and the bound the checker re-derives from that tree (``zone-lp``'s root value beside it).

    llmopt study run bound-scaling --out results/opt/bound-scaling     # (a) up to n = 200, (b) 10 + 10 trials
    llmopt study run bound-scaling --out results/opt/bound-scaling --skip-scaling --trials 0 --tree-nodes 25  # (c)
    llmopt study run bound-scaling --quick                         # (a) at n = 10 and 20, (b) 1 + 1 trials

Rows are appended to ``rows.jsonl`` in the output folder as they come; ``README.md`` is rendered from it.
Times are wall-clock seconds on whatever else the machine was running (stated in the README).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics as st
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.opt.studies import RESULTS, StudyError, options_argv, run_main

#: The folder of the rows and the README (``main``'s ``--out``, set by :func:`_use`).
OUT = RESULTS / "opt" / "bound-scaling"
ROWS = OUT / "rows.jsonl"
CERTIFIED = RESULTS / "jaillet" / "certified" / "trials.jsonl"
STAGES = ("lp", "zone-lp", "zone-colgen", "lag-lp", "lp-colgen", "lagrangian", "energy")
SIZES = (10, 20, 40, 60, 80, 100, 140, 200)
TREE_SIZES = (10, 20, 30, 40, 50, 60)


def _use(out: Path) -> None:
    """Write to and read from ``out`` (the rows are kept across runs there)."""
    global OUT, ROWS
    OUT, ROWS = Path(out), Path(out) / "rows.jsonl"


def _context(inst: Any) -> Any:
    from llmopt.engine.discrete import simulate
    from llmopt.opt.bounds import BoundContext
    from llmopt.policies import make_policy
    from llmopt.verify.checker import check_schedule

    sch = simulate(inst, make_policy("mc-sf"))
    assert check_schedule(inst, sch.starts).ok
    return sch, BoundContext(upper_bound_starts=dict(sch.starts), time_limit=1800.0, max_nnz=50_000_000)


def _append(row: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with ROWS.open("a") as fh:
        fh.write(json.dumps(row) + "\n")


def _done() -> list[dict[str, Any]]:
    return [json.loads(line) for line in ROWS.read_text().splitlines()] if ROWS.exists() else []


def scaling(sizes: tuple[int, ...], cap: float) -> None:
    from llmopt.opt.bounds import compute_bound
    from llmopt.workloads.jaillet import jaillet_am1

    have = {(r["n"], r["stage"]) for r in _done() if r["part"] == "scaling"}
    slow: set[str] = {r["stage"] for r in _done() if r["part"] == "scaling" and r["seconds"] > cap}
    for n in sizes:
        inst = jaillet_am1(0, n_range=(n, n), M_range=(40, 40))
        sch, ctx = _context(inst)
        for stage in STAGES:
            if (n, stage) in have or stage in slow:
                continue
            t = time.perf_counter()
            res = compute_bound(stage, inst, ctx)
            sec = time.perf_counter() - t
            _append(dict(part="scaling", n=n, stage=stage, value=res.value, verified=res.verified, seconds=sec,
                         mcsf=sch.tel, detail=res.detail[:300]))
            print(f"n={n} {stage}: {res.value} in {sec:.1f} s", file=sys.stderr, flush=True)
            if sec > cap:
                slow.add(stage)


def trials(k: int) -> None:
    from llmopt.opt.bounds import compute_bound
    from llmopt.workloads import make_instance

    stored = [json.loads(line) for line in CERTIFIED.read_text().splitlines()]
    best = {(r["workload"], r["seed"]): r for r in stored}
    have = {(r["workload"], r["seed"]) for r in _done() if r["part"] == "trials"}
    seeds = np.linspace(0, 199, k).round().astype(int).tolist()
    # interleaved, so a stopped run covers both arrival models
    for seed, workload in ((seed, wl) for seed in seeds for wl in ("jaillet-am1", "jaillet-am2")):
        if (workload, seed) in have:
            continue
        inst = make_instance(workload, seed=seed)
        sch, ctx = _context(inst)
        row: dict[str, Any] = dict(part="trials", workload=workload, seed=seed, n=inst.n,
                                   best_found=_best_found(best[(workload, seed)]), mcsf=sch.tel)
        for stage in ("zone-colgen", "lag-lp"):
            t = time.perf_counter()
            res = compute_bound(stage, inst, ctx)
            row[stage] = res.value
            row[f"{stage}_s"] = time.perf_counter() - t
            row[f"{stage}_verified"] = res.verified
        _append(row)
        print(f"{workload} seed {seed} n={inst.n}: zone {row['zone-colgen']:.1f}, lag {row['lag-lp']:.1f}, "
              f"best {row['best_found']}", file=sys.stderr, flush=True)


def tree_scaling(sizes: tuple[int, ...], nodes: int) -> None:
    """Part (c): ``zone-tree`` with ``nodes`` node LPs, per ``n`` (module docstring)."""
    from llmopt.formulations.zones import default_split
    from llmopt.model.windows import start_windows
    from llmopt.opt.zone_tree import MAX_REQUESTS, zone_tree
    from llmopt.verify.tree_certificate import check_tree_certificate
    from llmopt.workloads.jaillet import jaillet_am1

    have = {(r["n"], r["nodes"]) for r in _done() if r["part"] == "tree" and r.get("probe_restart")}
    for n in (n for n in sizes if n <= MAX_REQUESTS and (n, nodes) not in have):
        inst = jaillet_am1(0, n_range=(n, n), M_range=(40, 40))
        sch, _ = _context(inst)
        split = default_split(inst.M)
        t = time.perf_counter()
        res = zone_tree(inst, upper_bound_starts=sch.starts, windows=start_windows(inst, sch.tel), split=split,
                        node_limit=nodes, time_limit=3600.0)
        sec = time.perf_counter() - t
        check = check_tree_certificate(inst, res.nodes, split, sch.starts)
        _append(dict(part="tree", n=n, nodes=nodes, probe_restart=True, explored=res.explored, seconds=sec,
                     status=str(res.status),
                     bound=check.bound, claimed=res.bound, incumbent=res.incumbent, mcsf=sch.tel,
                     leaves=check.leaves))
        print(f"n={n} zone-tree: {res.explored} node LPs in {sec:.1f} s, bound {check.bound}", file=sys.stderr,
              flush=True)


def _best_found(rec: dict[str, Any]) -> int:
    """The stored run's checker-verified incumbent (its best schedule's TEL)."""
    return int(rec["incumbent"])


def _fit(points: list[tuple[int, float]], least: int = 40) -> float | None:
    pts = [(n, s) for n, s in points if n >= least and s > 0]
    if len(pts) < 2:
        return None
    x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def render(cap: float) -> str:
    rows = _done()
    sc = [r for r in rows if r["part"] == "scaling"]
    sizes = sorted({r["n"] for r in sc})
    by = {(r["n"], r["stage"]): r for r in sc}
    lines = ["# Lower-bound stages: time and value against n, and the completion-lag cliques on J §5.1", "",
             "Generated by `llmopt study run bound-scaling --out results/opt/bound-scaling` (part (c): "
             "`llmopt study run bound-scaling --out results/opt/bound-scaling --skip-scaling --trials 0 "
             "--tree-nodes 25`) "
             f"({platform.platform()}, Python {platform.python_version()}). Times are wall-clock seconds "
             "measured while other jobs (a CP-SAT/LNS benchmark, a trace-scale run) shared the 2 cores, so "
             "they are inflated and noisy; the exponents are least-squares slopes of log(time) on log(n) "
             f"over n >= 40. A stage is not run at larger n once it took more than {cap:g} s.", "",
             "## (a) J AM1, M = 40, seed 0, n fixed: seconds (value / MC-SF's TEL)", "",
             "| stage | " + " | ".join(f"n = {n}" for n in sizes) + " | exponent |",
             "|---|" + "---:|" * (len(sizes) + 1)]
    for stage in STAGES:
        cells = []
        for n in sizes:
            r = by.get((n, stage))
            if r is None:
                cells.append("–")
            elif r["value"] is None:
                cells.append("no bound")
            else:
                cells.append(f"{r['seconds']:.2f} ({r['value'] / r['mcsf']:.3f})" + ("" if r["verified"] else " ✗"))
        fit = _fit([(n, by[(n, stage)]["seconds"]) for n in sizes if (n, stage) in by and by[(n, stage)]["value"]])
        lines.append(f"| {stage} | " + " | ".join(cells) + f" | {'–' if fit is None else f'{fit:.2f}'} |")
    tr = [r for r in rows if r["part"] == "trials"]
    if tr:
        lines += ["", "## (b) J §5.1 trials: certified gap with the zone rows and with every lag clique", "",
                  "Best found = the checker-verified incumbent of `results/jaillet/certified` (its 2026-11-23 run). "
                  "Gap = (best found − bound) / best found. Windows: MC-SF's schedule.", "",
                  "| model | trials | n (min–max) | gap, zone-colgen | gap, lag-lp | lag-lp / zone-colgen, mean (max) "
                  "| zone-colgen s, mean | lag-lp s, mean |", "|---|---:|---|---:|---:|---:|---:|---:|"]
        for wl in ("jaillet-am1", "jaillet-am2"):
            rs = [r for r in tr if r["workload"] == wl]
            if not rs:
                continue
            gz = [(r["best_found"] - r["zone-colgen"]) / r["best_found"] for r in rs]
            gl = [(r["best_found"] - r["lag-lp"]) / r["best_found"] for r in rs]
            ratio = [r["lag-lp"] / r["zone-colgen"] for r in rs]
            ns = [r["n"] for r in rs]
            lines.append(f"| {wl} | {len(rs)} | {min(ns)}–{max(ns)} | {100 * st.mean(gz):.2f} % | "
                         f"{100 * st.mean(gl):.2f} % | {st.mean(ratio):.4f} ({max(ratio):.4f}) | "
                         f"{st.mean(r['zone-colgen_s'] for r in rs):.1f} | {st.mean(r['lag-lp_s'] for r in rs):.1f} |")
    tree = [r for r in rows if r["part"] == "tree" and r.get("probe_restart")]
    before = {(r["n"], r["nodes"]): r for r in rows if r["part"] == "tree" and not r.get("probe_restart")}
    if tree:
        zone = {r["n"]: r for r in sc if r["stage"] == "zone-lp" and r["value"] is not None}
        lines += ["", "## (c) `zone-tree`: seconds per node LP against n (J AM1, M = 40, seed 0)", "",
                  "A node limit instead of a time limit (module docstring, part (c)); the bound is the checker's "
                  "re-walk of the tree, the root `zone-lp` value from part (a) beside it, both over MC-SF's TEL. "
                  "A tree that closes (its incumbent proved optimal) stops before the limit (status `optimal`).", "",
                  "Each node is its LP plus up to 8 strong-branching probes (4 candidates × 2 children), each a warm "
                  "re-solve. Every probe now starts from the node's own optimal basis; \"before\" is the run made "
                  "before that restart existed (the rows without `probe_restart`), its bound in brackets where it "
                  "differs (a different but equally valid tree: strong branching meets other optimal vertices). "
                  "The two runs were not paired (the first shared the other core with a one-core search, the "
                  "second with short test runs); one paired run, both at once, ten nodes at n = 40: 25.8 s "
                  "before, 16.3 s after.", "",
                  "| n | node LPs | seconds | s per node LP | before: s per node LP | status | tree bound / MC-SF "
                  "| zone-lp / MC-SF |",
                  "|---:|---:|---:|---:|---:|---|---:|---:|"]
        for r in sorted(tree, key=lambda r: (r["nodes"], r["n"])):
            z = zone.get(r["n"])
            root = "–" if z is None else f"{z['value'] / z['mcsf']:.4f}"
            per = r["seconds"] / max(1, r["explored"])
            b = before.get((r["n"], r["nodes"]))
            was = "–" if b is None else f"{b['seconds'] / max(1, b['explored']):.2f}"
            bound = f"{r['bound'] / r['mcsf']:.4f}"
            if b is not None and f"{b['bound'] / b['mcsf']:.4f}" != bound:
                bound += f" ({b['bound'] / b['mcsf']:.4f})"
            lines.append(f"| {r['n']} | {r['explored']} | {r['seconds']:.1f} | {per:.2f} | {was} | {r['status']} | "
                         f"{bound} | {root} |")
        fits = [_fit([(r["n"], r["seconds"] / max(1, r["explored"])) for r in rs], least=20)
                for rs in (tree, list(before.values()))]
        now, was = ("–" if f is None else f"{f:.2f}" for f in fits)
        lines += ["", f"Exponent of the seconds per node LP over n >= 20: {now} (before: {was})."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: the options of :data:`OPTIONS` and ``--out DIR`` (rows and README.md)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="n of part (a)")
    ap.add_argument("--cap", type=float, default=150.0, help="seconds after which a stage stops growing n")
    ap.add_argument("--trials", type=int, default=10, help="seeds per arrival model in part (b) (0: skip)")
    ap.add_argument("--skip-scaling", action="store_true")
    ap.add_argument("--tree-nodes", type=int, default=0, help="part (c): node LPs of zone-tree per n (0: skip)")
    ap.add_argument("--out", type=Path, required=True, help="folder of rows.jsonl and README.md")
    args = ap.parse_args(argv)
    _use(args.out)
    if not args.skip_scaling:
        scaling(tuple(args.sizes), args.cap)
    if args.trials:
        trials(args.trials)
    if args.tree_nodes:
        tree_scaling(TREE_SIZES, args.tree_nodes)
    text = render(args.cap)
    print(text)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "README.md").write_text(text)
    return 0


OPTIONS = {
    "sizes": "n of part (a) (default 10 20 40 60 80 100 140 200; quick 10 20)",
    "cap": "seconds after which a stage stops growing n (default 150)",
    "trials": "seeds per arrival model in part (b), 0 to skip (default 10; quick 1)",
    "skip_scaling": "skip part (a)",
    "tree_nodes": "part (c): node LPs of zone-tree per n (default 0: skip)",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Add what ``out/rows.jsonl`` lacks and render ``README.md``; returns the files written."""
    if seeds is not None:
        raise StudyError("bound-scaling takes no --seeds (give --trials K)")
    opts = ({"sizes": [10, 20], "trials": 1} if quick else {}) | dict(options)
    return run_main(main, out, ["--out", str(out), *options_argv(opts)])


def report(out: Path, cap: float = 150.0) -> list[str]:
    """Re-render ``README.md`` from ``out/rows.jsonl`` (``cap`` as the run's); returns it."""
    _use(out)
    (OUT / "README.md").write_text(render(cap))
    return [str(OUT / "README.md")]
