"""Run time of every W policy on the §7 mixed dataset (LMSYS + arXiv, M = 16,492), n up to 2,000.

Each policy runs on the continuous-time engine with the Llama2-70B cost model, exactly as in
the ``wang-mixed`` suite; its time includes planning (Phase 1, the LP for Sorted-LP and
LP-Swap — the LP cache is cleared before every run, so each LP policy pays for its own
solve) and the simulation. Policies whose planner refuses the size (exact DP beyond its
table-size cap) are reported as refused, with the reason.

    python benchmarks/wang_policy_speed.py            # n = 500, 1000, 2000, seed 0 (about 10 min)
    python benchmarks/wang_policy_speed.py --write    # also writes results/perf/wang-policy-speed/README.md
"""

from __future__ import annotations

import argparse
import math
import platform
import time
from pathlib import Path

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.policies import make_policy_spec
from llmopt.policies.lp_order import solve_cached
from llmopt.verify.timed import check_timed_schedule
from llmopt.workloads.wang import wang_mixed

POLICIES = ("fcfs", "mc-sf", "sorted-f-swap", "sorted-f-quantile", "sorted-f-scaled-dp", "sorted-f-dp",
            "sorted-lp", "lp-swap")


def measure(n: int, seed: int) -> dict[str, tuple[float | None, float | None, str]]:
    """``policy -> (seconds, mean latency, note)`` on the seed's n-request prefix."""
    inst = wang_mixed(seed, n=n)
    cost = make_cost_model("llama2-70b-a100-tp2")
    out: dict[str, tuple[float | None, float | None, str]] = {}
    for p in POLICIES:
        solve_cached.cache_clear()
        policy = make_policy_spec(p, seed=seed)
        t0 = time.perf_counter()
        try:
            sched = simulate_continuous(inst, policy, cost)
        except Exception as exc:  # a planner that refuses the size says why
            out[p] = (None, None, f"refused: {str(exc).splitlines()[0][:90]}")
            continue
        dt = time.perf_counter() - t0
        check = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost)
        note = "" if check.ok else "CHECKER REJECTED"
        lp = getattr(policy, "last_lp", None)
        if lp is not None:
            delta = getattr(policy, "last_bucket", None)
            note = f"LP Δ={delta}: {lp.rounds} rounds, {lp.columns:,} columns, {lp.runtime_s:.1f} s"
        out[p] = (dt, sched.mean_latency, note)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="500,1000,2000")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    results = {n: measure(n, args.seed) for n in sizes}
    lines = ["# Run time of the W policies on the §7 mixed dataset",
             "",
             f"`python benchmarks/wang_policy_speed.py --sizes {args.sizes} --seed {args.seed}` on "
             f"{platform.processor() or platform.machine()}, {platform.python_version()}; one run per cell "
             "(wall clock, planning + continuous-time simulation; LP policies solve their own LP).",
             "",
             "| policy | " + " | ".join(f"n = {n} (s)" for n in sizes) + " | exponent | mean latency at n = "
             f"{sizes[-1]} (s) | note at n = {sizes[-1]} |",
             "|---|" + "---|" * len(sizes) + "---|---|---|"]
    for p in POLICIES:
        ts = [results[n][p][0] for n in sizes]
        pts = [(n, t) for n, t in zip(sizes, ts, strict=True) if t]
        exp = (math.log(pts[-1][1] / pts[0][1]) / math.log(pts[-1][0] / pts[0][0])) if len(pts) >= 2 else None
        last = results[sizes[-1]][p]
        cells = ["—" if t is None else f"{t:.3f}" for t in ts]
        lines.append(f"| {p} | " + " | ".join(cells) + f" | {'—' if exp is None else f'{exp:.2f}'} | "
                     f"{'—' if last[1] is None else f'{last[1]:.2f}'} | {last[2]} |")
    lines += ["", "The exponent is the log-log slope between the smallest and the largest size measured."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        out = Path(__file__).resolve().parents[1] / "results" / "perf" / "wang-policy-speed"
        out.mkdir(parents=True, exist_ok=True)
        (out / "README.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
