"""Suite ``jaillet-capacity``: J0 §8.2's GPU-count claim checked with the multi-worker engine (issue 26).

J0 §8.2 (DIGEST §4.3): "if the latency cap is set at 200 seconds, then with Algorithm 2 [MC-SF],
two linked A100 GPUs could handle up to 10,000 arrivals while remaining below this latency cap …
we need more than 8 A100 GPUs to reach the 200 seconds cap" with the benchmark algorithms; the
introduction says it of "high demand" (λ = 50). A worker here is Llama-2-70B on 2×A100 (the cost
model, M = 16,492), so the claim reads: MC-SF needs K = 1 worker, the best benchmark K > 4.

The suite samples 10,000 LMSYS arrivals at λ = 50 and 10 /s (seeds 0–2) and, for each of J's eight
Table 1 algorithms under each router, tries K = 1, 2, … workers until the mean latency is at most
200 s (:mod:`llmopt.bench.capacity_task`). :func:`capacity_claim` is its ``extra_report``:
``claim.md`` puts the measured K beside the paper's statement per demand level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from llmopt.bench.suites import Suite, WorkloadSpec
from llmopt.papers.jaillet.fig3 import CAP_S, RATES, display_name
from llmopt.papers.jaillet.suites import J52_POLICIES, LMSYS_TRACE

__all__ = ["JAILLET_CAPACITY", "CAPACITY_ROUTERS", "capacity_claim", "claim_rows"]

#: Routers compared: J0's single worker generalised by the plainest router, by queue length, and by
#: MC-SF's own look-ahead check.
CAPACITY_ROUTERS = ("round-robin", "jsq", "lookahead")
#: J0 §8.2 in workers of 2 GPUs: MC-SF 1 worker; the best benchmark more than 4 ("more than 8 A100s").
PAPER_WORKERS = {"mc-sf": 1, "best benchmark": 5}

JAILLET_CAPACITY = Suite(
    name="jaillet-capacity",
    bounds=("lp",),  # unused by a capacity suite; pinned so the stored settings do not follow a default
    description="J0 §8.2: the smallest number of Llama2-70B 2×A100 workers (M = 16,492 each) each of J's eight "
                "Table 1 algorithms needs to keep the mean latency of 10,000 LMSYS arrivals at or under 200 s, "
                "λ = 50 and 10 /s, routers round-robin / join-shortest-queue / look-ahead; seeds 0–2",
    workloads=tuple(
        WorkloadSpec("trace", (0, 1, 2), {"trace": LMSYS_TRACE, "format": "lmsys", "n": 10_000, "rate": rate,
                                          "on_bad_row": "drop"}, f"lmsys n=10000 λ={rate}")
        for rate in RATES),
    policies=J52_POLICIES,
    kind="capacity",
    routers=CAPACITY_ROUTERS,
    latency_target=f"mean:{CAP_S:g}",
    k_max=16,
    extra_report="llmopt.papers.jaillet.capacity:capacity_claim",
)


def claim_rows(df: Any) -> list[dict[str, Any]]:
    """Per (workload, router): MC-SF's smallest K and the best benchmark's (smallest K over the six α / β
    configurations and MC-Benchmark), as min–max over seeds, beside J0's 1 and > 4."""
    rows = []
    for (label, router), g in df.groupby(["workload", "router"], sort=False):
        mcsf = g[g["policy"] == "mc-sf"].iloc[0]
        bench = g[g["policy"] != "mc-sf"]
        per_seed = [[int(k) if k != "—" else None for k in str(s).split()] for s in bench["workers_by_seed"]]
        best = [min((v for v in col if v is not None), default=None) for col in zip(*per_seed)] if per_seed else []
        which = sorted({str(p) for p, s in zip(bench["policy"], per_seed) for i, v in enumerate(s)
                        if v is not None and v == best[i]})
        rows.append({"workload": label, "router": router, "mc_sf": str(mcsf["workers_by_seed"]),
                     "best_benchmark": " ".join("—" if b is None else str(b) for b in best),
                     "best_by": ", ".join(display_name(p) for p in which)})
    return rows


def latency_by_k_lines(records: Sequence[Mapping[str, Any]], suite: Suite, router: str) -> list[str]:
    """Per workload, a table of the mean latency (mean over seeds, seconds) at every K tried with ``router``;
    ``loop (s/n)`` where ``s`` of ``n`` seeds hit the loop guard at that K."""
    from llmopt.bench.capacity_task import pair_field
    from llmopt.bench.store import latest_records

    recs = [r for r in latest_records([dict(r) for r in records]) if not r.get("error")]
    lines = []
    for spec in suite.workloads:
        mine = [r for r in recs if suite.label_for(r["workload"], r.get("params") or {}) == spec.label]
        ks = sorted({int(k) for r in mine for p in suite.policies
                     for k in (r.get(pair_field("curve", p, router)) or {})})
        if not ks:
            continue
        lines += ["", f"## {spec.label}: mean latency (s) by K, router {router}, mean over seeds", "",
                  "| algorithm | " + " | ".join(f"K = {k}" for k in ks) + " |", "|---|" + "---|" * len(ks)]
        for p in suite.policies:
            cells = []
            for k in ks:
                runs: list[dict[str, Any]] = [x for r in mine
                                              if (x := (r.get(pair_field("curve", p, router)) or {}).get(str(k)))]
                vals = [x["mean"] for x in runs if x.get("mean") is not None]
                loops = sum(1 for x in runs if x["status"] == "eviction-loop")
                cell = "—" if not runs else (f"{sum(vals) / len(vals):,.1f}" if vals else "")
                if loops:
                    cell = (cell + " " if vals else "") + f"loop ({loops}/{len(runs)})"
                cells.append(cell)
            lines.append(f"| {display_name(p)} | " + " | ".join(cells) + " |")
    return lines


def capacity_claim(out_dir: str | Path, suite: Suite, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ``extra_report`` of ``jaillet-capacity``: ``claim.md`` (see the module docstring)."""
    from llmopt.report.capacity import capacity_summary

    out = Path(out_dir)
    df = capacity_summary(records, suite)
    lines = ["# J0 §8.2: workers needed for a 200 s mean latency at 10,000 arrivals", "",
             "Smallest number of workers K (each Llama-2-70B on 2×A100, so 2K GPUs) per seed. J0: MC-SF needs "
             f"{PAPER_WORKERS['mc-sf']} worker (2 GPUs) at high demand; the best benchmark more than 8 GPUs, i.e. "
             f"K ≥ {PAPER_WORKERS['best benchmark']}. *Best benchmark*: the smallest K over MC-Benchmark and the six "
             "α / β configurations, per seed.", "",
             "| workload | router | MC-SF K by seed | best benchmark K by seed | attained by |",
             "|---|---|---|---|---|"]
    for row in claim_rows(df):
        lines.append(f"| {row['workload']} | {row['router']} | {row['mc_sf']} | {row['best_benchmark']} | "
                     f"{row['best_by']} |")
    lines += latency_by_k_lines(records, suite, CAPACITY_ROUTERS[0])
    (out / "claim.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["claim.md: J0 §8.2's GPU-count claim beside the measured smallest K"]
