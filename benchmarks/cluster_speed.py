"""Multi-worker engine speed: CPU vs n and K, fitted exponents (issue 26).

One :func:`llmopt.engine.cluster.simulate_cluster` run per case — MC-SF on every worker, round-robin
routing — on seeded instances in the style of ``benchmarks/simulator_speed.py``: ``M = 16,492``,
``s ~ U{1..500}``, ``o ~ U{1..1000}``, Poisson arrivals at offered load ρ = 0.8 *per worker* (the
arrival rate grows with ``K``, so every worker is equally busy whatever ``K``). Discrete time (steps)
and continuous time (the same requests, step ``a`` at ``a · 0.08`` s, the ``llama2-70b-a100-tp2`` cost
model). CPU = ``time.process_time``, best of ``--repeat``. For each clock and ``K`` the exponent ``b``
of ``CPU ∝ n^b`` is fitted (least squares on logs); for each clock and ``n``, the exponent of
``CPU ∝ K^c``. Also: the ``K = 1`` cluster against the single-worker engine on the same instance (the
price of the pausable clocks), every router at the largest ``n`` and ``K``, and the checker
(:func:`llmopt.verify.cluster.check_cluster_schedule`) on the largest runs.

    python benchmarks/cluster_speed.py --out results/perf/cluster-speed            # n <= 100,000, K <= 16
    python benchmarks/cluster_speed.py --large --out results/perf/cluster-speed    # adds n = 300,000 and K = 64

The default run takes about two and a half minutes of CPU on one core.
"""

from __future__ import annotations

import argparse
import csv
import functools
import gc
import math
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.engine.cluster import simulate_cluster
from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import MCSF
from llmopt.verify.cluster import check_cluster_schedule

M = 16_492
LOAD = 0.8
SECONDS_PER_STEP = 0.08
COST_MODEL = "llama2-70b-a100-tp2"
ROUTERS = ("round-robin", "jsq", "least-kv", "p2c", "lookahead")


def make_instance(n: int, K: int, seed: int = 0) -> Instance:
    """``n`` requests at offered load :data:`LOAD` on each of ``K`` workers (seeded by ``seed, n, K``)."""
    rng = np.random.default_rng([seed, n, K])
    s = rng.integers(1, 501, size=n)
    o = rng.integers(1, np.minimum(1000, M - s) + 1)
    work = float(np.mean(o * s + o * (o + 1) / 2))  # token-steps one request holds
    rate = LOAD * K * M / work
    a = np.floor(np.cumsum(rng.exponential(1.0 / rate, size=n))).astype(np.int64)
    return Instance.from_tuples(M, zip(a.tolist(), s.tolist(), o.tolist()), name=f"cluster-speed/n={n}/K={K}")


def as_timed(inst: Instance) -> TimedInstance:
    return TimedInstance(inst.M, tuple(TimedRequest(r.id, r.arrival * SECONDS_PER_STEP, r.prompt, r.output)
                                       for r in inst.requests), name=inst.name)


def cpu(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best CPU seconds of ``fn()`` over ``repeat`` runs, and its result."""
    best, out = math.inf, None
    for _ in range(repeat):
        out = None
        gc.collect()  # no run pays for another's garbage
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def slope(xs: list[float], ys: list[float]) -> float:
    if len(xs) < 2:
        return float("nan")
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def measure(ns: list[int], Ks: list[int], repeat: int) -> dict[str, Any]:
    cost = make_cost_model(COST_MODEL)
    rows: list[dict[str, Any]] = []
    for clock in ("discrete", "continuous"):
        for K in Ks:
            for n in ns:
                inst: Any = make_instance(n, K)
                cm = None
                if clock == "continuous":
                    inst, cm = as_timed(inst), cost
                reps = repeat if n <= 30_000 else 1
                sec, run = cpu(functools.partial(simulate_cluster, inst, MCSF, "round-robin", K, cost_model=cm), reps)
                row = {"kind": "scaling", "clock": clock, "router": "round-robin", "K": K, "n": n, "cpu_s": sec,
                       "requests_per_cpu_s": n / sec, "mean_latency": run.mean_latency, "single_cpu_s": None}
                if K == 1:  # the same instance through the single-worker engine
                    single = (functools.partial(simulate, inst, MCSF()) if cm is None else
                              functools.partial(simulate_continuous, inst, MCSF(), cm))
                    row["single_cpu_s"], sched = cpu(single, reps)
                    assert dict(sched.starts) == dict(run.workers[0].starts), "K = 1 differs from one worker"
                rows.append(row)
                print(f"{clock:10s} K={K:3d} n={n:7,d}  {sec:7.3f} s CPU  {n / sec:9,.0f} req/s"
                      + (f"  single worker {row['single_cpu_s']:.3f} s" if K == 1 else ""), flush=True)
    n, K = max(ns), max(Ks)
    for clock in ("discrete", "continuous"):
        inst = make_instance(n, K)
        cm = None
        if clock == "continuous":
            inst, cm = as_timed(inst), cost
        for router in ROUTERS:
            sec, run = cpu(functools.partial(simulate_cluster, inst, MCSF, router, K, cost_model=cm), 1)
            t0 = time.process_time()
            report = check_cluster_schedule(inst, run, cm)
            chk = time.process_time() - t0
            assert report.ok, report.violations[:3]
            s = run.summary()
            rows.append({"kind": "routers", "clock": clock, "router": router, "K": K, "n": n, "cpu_s": sec,
                         "requests_per_cpu_s": n / sec, "mean_latency": s["mean_latency"], "single_cpu_s": None,
                         "p99_latency": s["p99_latency"], "check_cpu_s": chk})
            print(f"{clock:10s} K={K} n={n:,} {router:12s} {sec:7.3f} s CPU, mean latency {s['mean_latency']:.2f}, "
                  f"p99 {s['p99_latency']:.2f}; checker {chk:.2f} s", flush=True)
    return {"rows": rows, "ns": ns, "Ks": Ks, "repeat": repeat}


def report(result: dict[str, Any], out: Path, argv: str) -> None:
    rows, ns, Ks = result["rows"], result["ns"], result["Ks"]
    out.mkdir(parents=True, exist_ok=True)
    fields = ["kind", "clock", "router", "K", "n", "cpu_s", "requests_per_cpu_s", "mean_latency", "p99_latency",
              "single_cpu_s", "check_cpu_s"]
    with (out / "cluster_speed.csv").open("w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        wr.writeheader()
        for r in rows:
            wr.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    scaling = [r for r in rows if r["kind"] == "scaling"]

    def cell(clock: str, K: int, n: int) -> dict[str, Any]:
        return next(r for r in scaling if (r["clock"], r["K"], r["n"]) == (clock, K, n))

    lines = ["# Multi-worker engine speed (issue 26)", "",
             f"Command: `python {argv}`. MC-SF on every worker, round-robin routing; `M = 16,492`, "
             "`s ~ U{1..500}`, `o ~ U{1..1000}`, Poisson arrivals at offered load 0.8 per worker (the rate grows "
             "with K). Continuous time: the same requests with step `a` at `a · 0.08` s and the "
             f"`{COST_MODEL}` cost model. CPU = `time.process_time` of one `simulate_cluster` call, best of "
             f"{result['repeat']} (one run for n > 30,000); machine: {platform.platform()}, Python "
             f"{platform.python_version()}, shared with other work (timings taken an hour apart differ by up to "
             "20 %).", "",
             "## CPU seconds vs n and K", ""]
    for clock in ("discrete", "continuous"):
        lines += [f"### {clock.capitalize()} time", "",
                  "| n | " + " | ".join(f"K = {K}" for K in Ks) + " | one worker (single-worker engine) | "
                  "K = 1 / single |",
                  "|---|" + "---|" * len(Ks) + "---|---|"]
        for n in ns:
            one = cell(clock, 1, n) if 1 in Ks else None
            single = f"{one['single_cpu_s']:.3f}" if one else "–"
            ratio = f"{one['cpu_s'] / one['single_cpu_s']:.2f}" if one else "–"
            lines.append(f"| {n:,} | " + " | ".join(f"{cell(clock, K, n)['cpu_s']:.3f}" for K in Ks)
                         + f" | {single} | {ratio} |")
        lines.append("| exponent b in CPU ∝ n^b | " + " | ".join(
            f"{slope([float(n) for n in ns], [cell(clock, K, n)['cpu_s'] for n in ns]):.2f}" for K in Ks)
            + " | | |")
        lines += ["", "Exponent c in CPU ∝ K^c at fixed n: " + ", ".join(
            f"n = {n:,}: {slope([float(K) for K in Ks], [cell(clock, K, n)['cpu_s'] for K in Ks]):.2f}"
            for n in ns) + ".", ""]
    rt = [r for r in rows if r["kind"] == "routers"]
    if rt:
        lines += [f"## Routers at n = {rt[0]['n']:,}, K = {rt[0]['K']}", "",
                  "Each router on the same instance (one run); the checker re-verifies every run "
                  "(`check_cluster_schedule`: each worker through the single-worker checker).", "",
                  "| clock | router | CPU (s) | requests / CPU s | mean latency | p99 latency | checker CPU (s) |",
                  "|---|---|---|---|---|---|---|"]
        for r in rt:
            unit = "s" if r["clock"] == "continuous" else "steps"
            lines.append(f"| {r['clock']} | `{r['router']}` | {r['cpu_s']:.3f} | {r['requests_per_cpu_s']:,.0f} | "
                         f"{r['mean_latency']:.2f} {unit} | {r['p99_latency']:.2f} {unit} | {r['check_cpu_s']:.2f} |")
        lines.append("")
    lines += ["Reading: with the load per worker fixed, the work is proportional to n whatever K (b ≈ 1) — the "
              "engine advances a worker only when a router reads it or a request reaches it, so nothing per step "
              "grows with K (round-robin reads no worker; `jsq` and `least-kv` read all K per request, "
              "`lookahead` runs K look-ahead searches). The small c (CPU up 5–15 % from K = 1 to 16) is "
              "not profiled further; likely causes are per-run setup (each worker keeps arrays over all n "
              "positions) and K workers' state competing for the cache. The K = 1 column against the "
              "single-worker engine is the price of the pausable clocks (state on an object, one call per "
              "instant asked).", ""]
    (out / "README.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1_000, 3_000, 10_000, 30_000, 100_000])
    ap.add_argument("--K", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--large", action="store_true", help="add n = 300,000 and K = 64 (several more minutes)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    ns, Ks = sorted(set(args.n)), sorted(set(args.K))
    if args.large:
        ns, Ks = sorted({*ns, 300_000}), sorted({*Ks, 64})
    result = measure(ns, Ks, args.repeat)
    if args.out is not None:
        cmd = " ".join(["benchmarks/cluster_speed.py", *(sys.argv[1:] if argv is None else argv)])
        report(result, args.out, cmd)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
