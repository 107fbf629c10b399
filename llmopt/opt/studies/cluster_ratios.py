"""Router × policy on K workers against K-worker OPT or a certified bound (discrete time).

Instances: J §5.1's synthetic generators at ``M = 40`` per worker (as the ``cluster-bounds`` study):
Arrival Model 1 (``n`` requests at 0) and Arrival Model 2 (``T = n``, ``λ = 1``), seeds 0 … ``--seeds``−1,
``n`` requests. For ``K ∈ {1, 2, 4}`` each router (round-robin, jsq, least-kv, p2c, lookahead) × policy (MC-SF,
FCFS, α-protection α = 0.2) runs in the multi-worker engine (K = 1: one worker, every router the
same) and is re-verified by the cluster checker.
The denominator is ``OPT_K`` where the K-worker IP (HiGHS, ``--ip-time-limit`` s) proves it, else the best
certified K-worker lower bound (``lp``, ``energy``, ``cluster-zone-lp``; each re-checked by the independent
certificate checker), so a ratio against a bound is an **upper bound on the competitive ratio**, and says so.

    llmopt study run cluster-ratios --out results/opt/cluster-ratios   # n = 16, 3 seeds (2–3 minutes, 2 shared cores)
    llmopt study run cluster-ratios --quick                         # n = 8, seed 0

writes ``README.md`` and ``rows.csv`` into the output folder.
"""

from __future__ import annotations

import argparse
import csv
import functools
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.engine.cluster import simulate_cluster
from llmopt.engine.core import EvictionLoopError
from llmopt.model.instance import Instance
from llmopt.model.tolerance import integer_lower_bound
from llmopt.opt.cluster_bounds import cluster_bound
from llmopt.opt.cluster_ip import cluster_upper_bound, solve_cluster_ip
from llmopt.opt.studies import StudyError, options_argv, run_main, study_command
from llmopt.policies import make_policy_spec
from llmopt.policies.routers import make_router_spec
from llmopt.solvers.highs import node_limited_highs
from llmopt.verify.cluster import check_cluster_schedule
from llmopt.workloads.jaillet import jaillet_am1, jaillet_am2

M = 40
WORKERS = (1, 2, 4)
ROUTERS = ("round-robin", "jsq", "least-kv", "p2c", "lookahead")
POLICIES = ("mc-sf", "fcfs", "alpha-protection:alpha=0.2")
STAGES = ("lp", "energy", "cluster-zone-lp")
IP_NODES = 2000  # per K-worker IP: a node limit, not a clock, so every rerun gives the same rows


def make(model: str, n: int, seed: int) -> Instance:
    """Arrival model ``model`` with ``n`` requests (AM2: the first draw from ``seed`` on with exactly ``n``)."""
    if model == "AM1":
        return jaillet_am1(seed, n_range=(n, n), M_range=(M, M))
    for s in range(1000 * seed, 1000 * seed + 10_000):
        inst = jaillet_am2(s, T_range=(n, n), rate_range=(1.0, 1.0), M_range=(M, M))
        if inst.n == n:
            return inst
    raise RuntimeError(f"no AM2 draw with exactly {n} arrivals")


def denominator(inst: Instance, K: int, ip_time_limit: float | None, ip_nodes: int | None = None) -> tuple[float, str]:
    """``(OPT_K, "OPT")`` when the IP proves it, else ``(best certified bound, "bound")``.

    ``ip_nodes``: the IP stops after that many branch-and-bound nodes (:func:`node_limited_highs`), so the
    row is the same on any machine; ``ip_time_limit`` (seconds) instead makes it depend on speed and load."""
    ub = cluster_upper_bound(inst, K)
    solver = node_limited_highs(ip_nodes) if ip_nodes is not None else None
    ip = solve_cluster_ip(inst, K, time_limit=ip_time_limit, upper_bound=ub, solver=solver)
    if ip.status.value == "optimal":
        return float(ip.objective), "OPT"
    best = float(integer_lower_bound(ip.bound)) if ip.bound is not None else 0.0
    for stage in STAGES:
        b = cluster_bound(inst, K, stage, upper_bound=ub)
        if b.verified and b.value is not None:
            best = max(best, float(integer_lower_bound(b.value)))
    return best, "bound"


def compute(models: list[str], n: int, seeds: int, ip_time_limit: float | None,
            ip_nodes: int | None = None) -> list[dict[str, Any]]:
    """One row per (model, seed, K, policy, router): the verified TEL, the denominator and the ratio."""
    rows = []
    for model in models:
        for seed in range(seeds):
            inst = make(model, n, seed)
            for K in WORKERS:
                t0 = time.perf_counter()
                den, kind = denominator(inst, K, ip_time_limit, ip_nodes)
                den_s = time.perf_counter() - t0
                for policy in POLICIES:
                    for router in ROUTERS:
                        try:
                            sched = simulate_cluster(inst, functools.partial(make_policy_spec, policy, seed=seed),
                                                     make_router_spec(router), K)
                        except EvictionLoopError:
                            tel, status = None, "eviction-loop"
                        else:
                            rep = check_cluster_schedule(inst, sched)
                            ok = bool(rep.ok) and rep.tel == sched.tel
                            tel, status = (sched.tel, "ok") if ok else (None, "rejected")
                        rows.append({"model": model, "seed": seed, "n": inst.n, "K": K, "policy": policy,
                                     "router": router, "status": status, "tel": tel, "denominator": den,
                                     "kind": kind, "ratio": tel / den if tel is not None and den else None,
                                     "denominator_s": round(den_s, 2)})
                print(f"{model} seed {seed} K={K}: {kind} {den:.0f} ({den_s:.1f} s)", file=sys.stderr, flush=True)
    return rows


def render(rows: list[dict[str, Any]], command: str, elapsed: float) -> str:
    """The README's Markdown from the rows."""
    lines = ["# Router × policy on K workers against K-worker OPT or a certified bound", "",
             f"`{command}`"
             + f" ({elapsed:.0f} s on {platform.machine()}, shared 2-core machine). Discrete time, J §5.1 synthetic "
             f"instances at M = {M} per worker; every schedule re-verified by the cluster checker. *÷ OPT*: the "
             "IP proved OPT_K on every seed of the row; *÷ bound*: on some seed the denominator is the best "
             "certified lower bound, so the ratio is an **upper bound** on the competitive ratio. Mean [max] over "
             "the seeds that completed; *loop*: runs stopped by the engine's eviction-loop guard.", ""]
    for model in sorted({r["model"] for r in rows}):
        for K in WORKERS:
            sub = [r for r in rows if r["model"] == model and r["K"] == K]
            if not sub:
                continue
            kinds = {r["kind"] for r in sub}
            label = "÷ OPT" if kinds == {"OPT"} else "÷ bound"
            proven = len({r["seed"] for r in sub if r["kind"] == "OPT"})
            lines += [f"## {model}, K = {K} ({label}; OPT proven on {proven} of {len({r['seed'] for r in sub})} "
                      "seeds)", "", "| policy | " + " | ".join(ROUTERS) + " |", "|---|" + "---|" * len(ROUTERS)]
            for policy in POLICIES:
                cells = []
                for router in ROUTERS:
                    mine = [r for r in sub if r["policy"] == policy and r["router"] == router]
                    vals = [r["ratio"] for r in mine if r["ratio"] is not None]
                    loops = sum(1 for r in mine if r["status"] == "eviction-loop")
                    cell = f"{np.mean(vals):.3f} [{max(vals):.3f}]" if vals else "—"
                    cells.append(cell + (f", loop on {loops} of {len(mine)}" if loops else ""))
                lines.append(f"| {policy} | " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: the options of :data:`OPTIONS`, ``--seeds N`` and ``--out DIR``."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--models", nargs="+", default=["AM1", "AM2"])
    ap.add_argument("--ip-nodes", type=int, default=IP_NODES,
                    help=f"branch-and-bound nodes of each K-worker IP (default {IP_NODES}; 0: no node limit)")
    ap.add_argument("--ip-time-limit", type=float, default=None,
                    help="seconds of each K-worker IP (default none: the node limit decides, the same on any machine)")
    ap.add_argument("--out", type=Path, default=None, help="write README.md and rows.csv here")
    ap.add_argument("--command", default="", help="the command line to quote in the report")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = compute(args.models, args.n, args.seeds, args.ip_time_limit, args.ip_nodes or None)
    text = render(rows, args.command or "llmopt study run cluster-ratios", time.perf_counter() - t0)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "README.md").write_text(text, encoding="utf-8")
        with (args.out / "rows.csv").open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


OPTIONS = {
    "n": "requests per instance (default 16; quick 8)",
    "models": "arrival models, AM1 and/or AM2 (default both)",
    "ip_nodes": f"branch-and-bound nodes of each K-worker IP (default {IP_NODES}; deterministic)",
    "ip_time_limit": "seconds of each K-worker IP (default none; a clock makes rows depend on machine load)",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``README.md`` and ``rows.csv`` into ``out``; ``seeds`` must be ``0 … N−1`` (default 0-2;
    ``quick``: seed 0, n = 8); returns the files written."""
    count = len(seeds) if seeds is not None else (1 if quick else 3)
    if seeds is not None and list(seeds) != list(range(count)):
        raise StudyError("cluster-ratios runs seeds 0 … N−1: give --seeds 0-N")
    opts = ({"n": 8} if quick else {}) | dict(options)
    argv = ["--out", str(out), "--seeds", str(count), *options_argv(opts),
            "--command", study_command("cluster-ratios", out, quick=quick, seeds=seeds, options=options)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s ``README.md`` and ``rows.csv`` (written by :func:`run`)."""
    return [str(p) for p in (Path(out) / "README.md", Path(out) / "rows.csv") if p.exists()]
