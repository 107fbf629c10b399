"""``zone-tree`` (branch-and-bound on the zone-LP over start windows) against HiGHS's branch-and-cut,
on the OPT-frontier instances, at the same time budget.

For each point of ``results/jaillet/opt-frontier`` (J AM1 at M = 40 with n = 16–24, J AM2 at M = 40 with
T = 20–44), from one incumbent — the pipeline's upper-bound stages MC-SF, ``local-search`` and
``lns`` (30 sub-IPs, seed 0), verified by the checker — this runs, each on one thread for
``--seconds``:

* ``highs-bc``: HiGHS's branch-and-cut on ``hindsight-ip-zones`` (the IP with the peak-zone rows)
  over the incumbent's windows, warm-started with it. Its bound is the solver's own (not re-checked).
* ``zone-tree``: :func:`llmopt.opt.zone_tree.zone_tree` from the same incumbent. Its bound is the
  checker's re-walk of the tree (:func:`llmopt.verify.tree_certificate.check_tree_certificate`).

Beside them: the root ``zone-lp`` bound and the frontier run's 600-s bracket. "Proven" = the
rounded-up bound reaches the best schedule either method found.

    llmopt study run zone-tree --out results/opt/zone-tree     # 8 instances × 2 methods × 120 s (~20 min, 2 cores)
    llmopt study run zone-tree --out D --seconds 600      # the frontier's 10-minute budget
    llmopt study run zone-tree --quick                    # 2 points, 20 s each

Rows are written to ``trials.jsonl`` in the output folder (replaced per run) and the table to ``README.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from llmopt.opt.studies import RESULTS, StudyError, options_argv, run_main

FRONTIER = RESULTS / "jaillet" / "opt-frontier" / "trials.jsonl"


def frontier_points() -> list[dict[str, Any]]:
    """The stored frontier runs, AM1 by n then AM2 by n."""
    rows = [json.loads(line) for line in FRONTIER.read_text().splitlines() if line.strip()]
    return sorted(rows, key=lambda r: (r["workload"], r["n"]))


def evaluate(rec: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Both methods on one frontier point (module docstring)."""
    from llmopt.engine.discrete import simulate
    from llmopt.formulations.hindsight_ip import decode_starts, encode_starts, formulate
    from llmopt.formulations.zones import default_split, with_zone_rows
    from llmopt.model.windows import start_windows
    from llmopt.opt.bounds import BoundContext, run_bound
    from llmopt.opt.lns import lns_stage
    from llmopt.opt.upper_bounds import SearchContext, best_verified, local_search_stage
    from llmopt.opt.zone_tree import zone_tree
    from llmopt.policies import make_policy
    from llmopt.solvers import DEFAULT_SOLVER, get_solver
    from llmopt.verify.checker import check_schedule
    from llmopt.verify.tree_certificate import check_tree_certificate
    from llmopt.workloads import make_instance

    params = {k: tuple(v) if isinstance(v, list) else v for k, v in (rec.get("params") or {}).items()}
    inst = make_instance(rec["workload"], seed=rec["seed"], **params)
    known = {"mc-sf": simulate(inst, make_policy("mc-sf"))}
    ctx = SearchContext(seed=0, search_evals=200, lns_iterations=30, known=known)
    known["local-search"] = local_search_stage(inst, ctx)
    known["lns"] = lns_stage(inst, ctx)
    start = best_verified(inst, ctx)
    rep = check_schedule(inst, start.starts)
    assert rep.ok and rep.tel == start.tel
    windows = start_windows(inst, start.tel)
    split = default_split(inst.M)
    root = run_bound("zone-lp", inst, BoundContext(upper_bound_starts=start.starts, windows=windows))

    model = with_zone_rows(formulate(inst, windows), inst, split)
    t0 = time.perf_counter()
    bc = get_solver(DEFAULT_SOLVER).solve(model, time_limit=seconds, threads=1,
                                           warm_start=encode_starts(inst, model, start.starts))
    bc_s = time.perf_counter() - t0
    bc_best = start.tel
    if bc.x is not None:
        found = check_schedule(inst, decode_starts(inst, model, bc.x))
        if found.ok and found.tel is not None:
            bc_best = min(bc_best, found.tel)

    t0 = time.perf_counter()
    tree = zone_tree(inst, upper_bound_starts=start.starts, windows=windows, split=split, time_limit=seconds,
                     node_limit=10**9)
    tree_s = time.perf_counter() - t0
    check = check_tree_certificate(inst, tree.nodes, split, start.starts)
    best = min(bc_best, tree.incumbent if tree.incumbent is not None else start.tel)

    def proven(bound: float | None) -> bool:
        return bound is not None and math.ceil(bound - 1e-6) >= best

    return {
        "workload": rec["workload"], "params": rec.get("params"), "seed": rec["seed"], "n": inst.n, "M": inst.M,
        "seconds": seconds, "start_tel": start.tel, "start_source": start.policy, "best": best,
        "frontier_status": rec["status"], "frontier_best": rec["incumbent"], "frontier_bound": rec["bound"],
        "zone_lp": root.value,
        "bc_status": str(bc.status), "bc_bound": bc.bound, "bc_best": bc_best, "bc_s": round(bc_s, 1),
        "tree_status": str(tree.status), "tree_bound": check.bound, "tree_claimed": tree.bound,
        "tree_best": tree.incumbent, "tree_nodes": tree.explored, "tree_leaves": check.leaves,
        "tree_depth": check.depth, "tree_s": round(tree_s, 1), "tree_message": tree.message,
        "bc_proves": proven(bc.bound), "tree_proves": proven(check.bound),
    }


def _run(args: tuple[dict[str, Any], float]) -> dict[str, Any]:
    return evaluate(*args)


def _label(r: dict[str, Any]) -> str:
    return f"{'AM1' if r['workload'] == 'jaillet-am1' else 'AM2'} n = {r['n']}"


def _num(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def render(rows: list[dict[str, Any]], seconds: float, wall: float, workers: int) -> str:
    """The README's Markdown from the rows."""
    lines = ["| instance | start (source) | best found | zone-lp | HiGHS B&C bound | zone-tree bound | "
             "tree nodes / depth | gap B&C → tree | proven by | frontier 600 s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    wins = 0
    for r in rows:
        gap_bc = None if r["bc_bound"] is None else (r["best"] - r["bc_bound"]) / r["best"]
        gap_tree = (r["best"] - r["tree_bound"]) / r["best"]
        wins += r["bc_bound"] is not None and r["tree_bound"] > r["bc_bound"]
        by = [name for name, flag in (("B&C", r["bc_proves"]), ("tree", r["tree_proves"])) if flag]
        lines.append(
            f"| {_label(r)} | {r['start_tel']:,} ({r['start_source']}) | {r['best']:,} | {_num(r['zone_lp'])} | "
            f"{_num(r['bc_bound'])} ({r['bc_status']}) | {_num(r['tree_bound'])} ({r['tree_status']}) | "
            f"{r['tree_nodes']:,} / {r['tree_depth']} | "
            f"{'—' if gap_bc is None else f'{100 * gap_bc:.2f}%'} → {100 * gap_tree:.2f}% | "
            f"{', '.join(by) or 'neither'} | [{r['frontier_bound']:,}, {r['frontier_best']:,}] "
            f"({r['frontier_status']}) |")
    table = "\n".join(lines)
    return f"""# Zone-LP branch-and-bound (`zone-tree`) against HiGHS branch-and-cut on the OPT-frontier instances

`llmopt/opt/studies/zone_tree_vs_bc.py`: on each point of `results/jaillet/opt-frontier`, from one verified incumbent
(MC-SF, `local-search` with 200 evaluations, `lns` with 30 sub-IPs), **{seconds:g} s on one thread** for each method:

* **HiGHS B&C** — branch-and-cut on `hindsight-ip-zones` over the incumbent's windows, warm-started; its
  bound is the solver's own (not re-checked).
* **zone-tree** — `llmopt/opt/zone_tree.py`: best-first branch-and-bound on the zone-LP, splitting one
  request's start window per branching (strong branching over 4 candidates), reduced-cost cuts, node
  LPs re-solved warm in HiGHS. Its bound is the checker's re-walk of the whole tree
  (`llmopt/verify/tree_certificate.py`).

Gap = (best found by either − bound) / best found. "frontier 600 s" is the stored frontier run's
bracket (HiGHS, 10 minutes, `results/jaillet/opt-frontier`).

{table}

The tree's bound is above B&C's on **{wins} of {len(rows)}** instances.

Measured with `llmopt study run zone-tree --seconds {seconds:g} --workers {workers}` on {platform.machine()}
(Python {platform.python_version()}; the last invocation took {wall / 60:.0f} min wall). The two methods of an
instance run one after the other in one worker process, so they share the machine alike (with
`--workers 2` on this 2-core machine each worker had about one core).

Every strong-branching probe now restarts from its node's optimal basis (`WarmLP.solve(basis=…)`;
`results/opt/bound-scaling` part (c): 35–46 % less time per node at n = 20–60, in unpaired runs). The run
before that change (120 s, `--workers 1`, the other core busy with another benchmark) had the tree above
B&C on 4 of 8, at 1,135.42 (AM1 n = 20), 1,350.65 (n = 22), 1,408.36 (n = 24), 285.03 (AM2 n = 13, 5,105
nodes), 732.47 (n = 18), 1,677.27 (n = 26) and 1,672.40 (n = 35).
"""


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: the options of :data:`OPTIONS` and ``--out DIR``."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=120.0, help="budget per method and instance (default 120)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="only the first N frontier points")
    ap.add_argument("--only", action="append", default=None, metavar="AM2:13",
                    help="only this point (model:n; repeatable); its row replaces the stored one")
    ap.add_argument("--out", type=Path, required=True, help="folder of trials.jsonl and README.md")
    args = ap.parse_args(argv)
    out = args.out
    points = frontier_points()[:args.limit]
    if args.only:
        points = [p for p in points if f"{_label(p).split()[0]}:{p['n']}" in args.only]
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        rows = []
        for row in pool.map(_run, [(p, args.seconds) for p in points]):
            rows.append(row)
            print(f"{_label(row)}: best {row['best']}, B&C {_num(row['bc_bound'])} ({row['bc_status']}), "
                  f"tree {_num(row['tree_bound'])} ({row['tree_status']}, {row['tree_nodes']} nodes)", flush=True)
    if args.only and (out / "trials.jsonl").exists():  # keep the other points' rows, in frontier order
        new = {(r["workload"], r["n"]): r for r in rows}
        old = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines() if line.strip()]
        rows = [new.pop((r["workload"], r["n"]), r) for r in old] + list(new.values())
    (out / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "README.md").write_text(render(rows, args.seconds, time.perf_counter() - t0, args.workers))
    print(f"wrote {out / 'README.md'}")


OPTIONS = {
    "seconds": "budget per method and instance (default 120; quick 20)",
    "workers": "worker processes (default 2)",
    "limit": "only the first N frontier points (quick: 2)",
    "only": "only these points (model:n, e.g. AM2:13); their rows replace the stored ones",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``trials.jsonl`` and ``README.md`` into ``out``; returns the files written."""
    if seeds is not None:
        raise StudyError("zone-tree takes no --seeds (it runs the stored frontier points)")
    opts = ({"seconds": 20, "limit": 2} if quick else {}) | dict(options)
    only = opts.pop("only", None)
    argv = ["--out", str(out), *options_argv(opts)]
    for point in [only] if isinstance(only, str) else (only or []):
        argv += ["--only", str(point)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s ``README.md`` and ``trials.jsonl`` (written by :func:`run`: the solves are timed)."""
    return [str(p) for p in (Path(out) / "README.md", Path(out) / "trials.jsonl") if p.exists()]
