"""Golden numbers of suite ``jaillet-capacity`` (``results/jaillet/capacity``: J0 §8.2's GPU-count claim).

Recomputes seed 0 at λ = 50 for MC-SF and MC-Benchmark with the round-robin router (K = 1 and 2,
10,000 LMSYS arrivals, about a second each) and compares the mean latencies with the committed
records, and the claim table's row with the records. A failure means a change moved a published number:
if intended, rerun ``llmopt bench run jaillet-capacity --out results/jaillet/capacity``.

Breakages caught (by hand): the round-robin router sending the j-th arrival to worker (j + 1) mod K
(K = 2 means move); the capacity task stopping at the first K tried (the curve loses K = 2).
K = 3 (one past the answer, for the figure) is in the record but not recomputed here.

The same seed's K = 2 rows of MC-SF with the look-ahead and the join-shortest-queue routers are
recomputed too (every field of the row but its wall time): in continuous time the workers' iteration
clocks differ, which the discrete router tests cannot show. Breakage caught (by hand): the look-ahead
router comparing absolute first-fit iterations instead of delays from each worker's clock (the
MC-SF@lookahead mean at K = 2 goes from 94.4 s to 249.5 s, and "2 workers" would become "more than 3").
"""

from __future__ import annotations

import json

import pytest
from golden_support import RESULTS, assert_fields
from helpers import needs_trace_data

OUT = RESULTS / "jaillet" / "capacity"


def _record(rate: int, seed: int) -> dict:
    for line in (OUT / "trials.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["params"]["rate"] == rate and rec["seed"] == seed:
            return rec
    raise AssertionError(f"no record for rate {rate}, seed {seed}")


@needs_trace_data
def test_seed0_high_demand_curves_recomputed(monkeypatch) -> None:
    from llmopt.capacity.planning import run_cluster
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.papers.jaillet.capacity import JAILLET_CAPACITY
    from llmopt.workloads import WORKLOADS

    spec = next(w for w in JAILLET_CAPACITY.workloads if w.params["rate"] == 50)
    inst = WORKLOADS.get(spec.workload)(0, **dict(spec.params))
    rec = _record(50, 0)
    cost = make_cost_model(JAILLET_CAPACITY.cost_model)
    for policy in ("mc-sf", "mc-benchmark"):
        curve = rec[f"curve_{policy}@round-robin"]
        assert sorted(curve) == ["1", "2", "3"] and rec[f"workers_{policy}@round-robin"] == 2
        for k in (1, 2):
            run = run_cluster(inst, policy, "round-robin", k, cost, seed=0)
            assert run.mean == pytest.approx(curve[str(k)]["mean"], rel=1e-9), (policy, k)
    assert curve["1"]["mean"] > 200 >= curve["2"]["mean"]


@needs_trace_data
def test_seed0_high_demand_k2_lookahead_and_jsq_rows_recomputed() -> None:
    import dataclasses

    from llmopt.capacity.planning import run_cluster
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.papers.jaillet.capacity import JAILLET_CAPACITY
    from llmopt.workloads import WORKLOADS

    spec = next(w for w in JAILLET_CAPACITY.workloads if w.params["rate"] == 50)
    inst = WORKLOADS.get(spec.workload)(0, **dict(spec.params))
    rec = _record(50, 0)
    cost = make_cost_model(JAILLET_CAPACITY.cost_model)
    means = {}
    for router in ("lookahead", "jsq"):
        row = rec[f"curve_mc-sf@{router}"]["2"]
        run = dataclasses.asdict(run_cluster(inst, "mc-sf", router, 2, cost, seed=0))
        assert run["verified"], router
        assert_fields(f"results/jaillet/capacity λ = 50 seed 0 mc-sf@{router} K = 2", row, run,
                      [k for k in row if k != "sim_s"])
        means[router] = run["mean"]
    # the published numbers (NOTES.md: every router needs 2 workers at λ = 50)
    assert {r: round(m, 1) for r, m in means.items()} == {"lookahead": 94.4, "jsq": 94.3}
    assert rec["workers_mc-sf@lookahead"] == rec["workers_mc-sf@jsq"] == 2


def test_claim_rows_match_the_records() -> None:
    text = (OUT / "claim.md").read_text(encoding="utf-8")
    for rate, want in ((50, "2 2 2"), (10, "1 1 1")):
        ks = " ".join(str(_record(rate, s)["workers_mc-sf@round-robin"]) for s in (0, 1, 2))
        assert ks == want
        assert f"| lmsys n=10000 λ={rate} | round-robin | {want} | {want} |" in text
