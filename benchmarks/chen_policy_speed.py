"""Run time of every C policy on the 2,000-request ``chen-lmsys`` instance under each prediction setting.

Each policy runs on the continuous-time engine with the Llama2-70B cost model (M = 16,492),
exactly as in the ``chen-lmsys`` suite; the time is the wall clock of ``simulate_continuous``
(policy decisions and engine together), the median of ``--repeats`` runs. A separate run
with a counting wrapper around ``decide`` gives the number of policy decisions (calls of
``decide``: the engine asks only when something can change); the evictions, the engine's
iterations and the mean latency come from the schedule, which the continuous-time checker
re-verifies. Multi-interval A_min runs only where its premise (disjoint buckets) holds: C's
Exp. 1 (one interval) and Exp. 2 (bins); it rejects the overlapping intervals of Exp. 3.

    python benchmarks/chen_policy_speed.py            # seed 0, 5 repeats (about 30 s)
    python benchmarks/chen_policy_speed.py --write    # also writes results/perf/chen-policy-speed/README.md
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path
from typing import NamedTuple

from llmopt.bench.speed_cases import CHEN_SPEED_POLICIES, count_decisions
from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.papers.chen.lmsys_report import SETTINGS
from llmopt.policies import make_policy_spec
from llmopt.verify.timed import check_timed_schedule
from llmopt.workloads.chen import chen_lmsys

POLICIES = CHEN_SPEED_POLICIES
#: Settings whose intervals are disjoint buckets (Algorithm 5's premise).
_BUCKETED = ("exp1", "exp2")


class Cell(NamedTuple):
    """One (setting, policy) measurement."""

    seconds: float | None
    decisions: int | None
    evictions: int | None
    iterations: int | None
    latency: float | None
    note: str


def measure(seed: int = 0, n: int = 2000, repeats: int = 3) -> dict[tuple[str, str], Cell]:
    """``(setting key, policy) -> Cell`` on the seed's ``n``-request ``chen-lmsys`` instance."""
    cost = make_cost_model("llama2-70b-a100-tp2")
    out: dict[tuple[str, str], Cell] = {}
    for s in SETTINGS:
        inst = chen_lmsys(seed, n=n, predictions=s.spec)
        for p in POLICIES:
            if p == "a-min-multi" and s.key not in _BUCKETED:
                out[(s.key, p)] = Cell(None, None, None, None, None, "not run: overlapping intervals")
                continue
            times = []
            for _ in range(repeats):
                policy = make_policy_spec(p, seed=seed)
                t0 = time.perf_counter()
                simulate_continuous(inst, policy, cost)
                times.append(time.perf_counter() - t0)
            policy = make_policy_spec(p, seed=seed)
            counter = count_decisions(policy)
            sched = simulate_continuous(inst, policy, cost)
            check = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                                         evictions=sched.evictions)
            ok = check.ok and check.mean_latency is not None
            out[(s.key, p)] = Cell(statistics.median(times), counter[0], len(sched.evictions), sched.iterations,
                                   check.mean_latency if ok else None, "" if ok else "CHECKER REJECTED")
    return out


def _fmt_int(v: int | None) -> str:
    return "—" if v is None else f"{v:,}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    res = measure(args.seed, args.n, args.repeats)
    total = time.perf_counter() - t0
    cmd = f"python benchmarks/chen_policy_speed.py --seed {args.seed} --n {args.n} --repeats {args.repeats}"
    lines = ["# Run time of the C policies on the 2,000-request chen-lmsys instance",
             "",
             f"`{cmd}` on {platform.machine()} ({os.cpu_count()} CPUs; {platform.processor() or 'processor unknown'}), "
             f"Python {platform.python_version()}; one process, one core. Instance: `chen-lmsys` seed {args.seed}, "
             f"n = {args.n:,}, all requests at 0 s, M = 16,492; continuous-time engine with the Llama2-70B 2×A100 "
             "cost model, as in the `chen-lmsys` suite. *time*: wall clock of `simulate_continuous` (policy and "
             f"engine), median of {args.repeats} runs. *decisions*: calls of the policy's `decide` (the engine asks "
             "only when something can change). *iterations*: batches. *latency*: mean end-to-end latency (s) of "
             "the schedule, re-verified by the continuous-time checker. a-min-multi runs only where the intervals "
             "are disjoint buckets (Exp. 1 and 2). A_ℓ is C's policy for two-point distributions; it is run here "
             "on every setting only for its run time.",
             ""]
    for s in SETTINGS:
        lines += [f"## {s.key} — {s.title} (`{s.spec}`)", "",
                  "| policy | time (s) | decisions | evictions | iterations | mean latency (s) | note |",
                  "|---|---|---|---|---|---|---|"]
        for p in POLICIES:
            c = res[(s.key, p)]
            lines.append(f"| {p} | {'—' if c.seconds is None else f'{c.seconds:.3f}'} | {_fmt_int(c.decisions)} | "
                         f"{_fmt_int(c.evictions)} | {_fmt_int(c.iterations)} | "
                         f"{'—' if c.latency is None else f'{c.latency:.2f}'} | {c.note} |")
        lines.append("")
    lines += ["## Summary: time (s) per policy and setting", "",
              "| policy | " + " | ".join(s.key for s in SETTINGS) + " |",
              "|---|" + "---|" * len(SETTINGS)]
    for p in POLICIES:
        cells = [res[(s.key, p)].seconds for s in SETTINGS]
        lines.append(f"| {p} | " + " | ".join("—" if c is None else f"{c:.3f}" for c in cells) + " |")
    lines += ["", f"Whole benchmark (all repeats, counting runs and checks): {total:.0f} s."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        out = Path(__file__).resolve().parents[1] / "results" / "perf" / "chen-policy-speed"
        out.mkdir(parents=True, exist_ok=True)
        (out / "README.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
