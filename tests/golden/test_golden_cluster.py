"""Golden numbers of the K-worker results: ``results/opt/cluster-bounds`` (bounds and the K-worker IP) and
``results/opt/cluster-ratios`` (router × policy against OPT_K).

Recomputes AM1 n = 8, K = 2 (every bound stage and OPT_K) and AM1 seed 0, K = 4 (MC-SF under two routers,
with OPT_K) and compares with the committed CSVs. A failure means a change moved a published number: if
intended, rerun ``llmopt study run cluster-bounds --out results/opt/cluster-bounds`` /
``llmopt study run cluster-ratios --out results/opt/cluster-ratios``.

Breakages caught (by hand): the pooled instance of the certificate checker built with capacity M
instead of K·M (the bounds are rejected); round-robin wrapping to worker 1 instead of 0 (MC-SF's
round-robin ratio moves).

No verdict here depends on the machine's speed: the K-worker IPs run with no time limit under a
HiGHS node limit (``golden_support.NODE_LIMIT``; both close at the root), so they prove OPT_K or fail
the same way on any machine.
"""

from __future__ import annotations

import csv
import functools

import pytest
from cluster_helpers import simulate_cluster
from golden_support import RESULTS, highs_by_nodes

from llmopt.policies import make_policy_spec


def _rows(path: str) -> list[dict[str, str]]:
    with (RESULTS / path).open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_cluster_bounds_am1_n8_k2_recomputed() -> None:
    from llmopt.opt.cluster_bounds import cluster_bound
    from llmopt.opt.cluster_ip import cluster_upper_bound, solve_cluster_ip
    from llmopt.opt.studies import cluster_bounds as bm
    inst = bm.make("AM1", 8)
    saved = {r["stage"]: r for r in _rows("opt/cluster-bounds/summary.csv")
             if (r["model"], r["K"], r["n_param"]) == ("AM1", "2", "8")}
    ub = cluster_upper_bound(inst, 2)
    assert ub.tel == int(saved["lp"]["ub"]) == 230
    for stage in ("sum-of-outputs", "energy", "lp", "lp-colgen", "zone-lp", "cluster-zone-lp"):
        b = cluster_bound(inst, 2, stage, upper_bound=ub)
        assert b.verified and b.value == pytest.approx(float(saved[stage]["value"]), abs=1e-6), stage
    with highs_by_nodes() as solver:
        ip = solve_cluster_ip(inst, 2, time_limit=None, upper_bound=ub, solver=solver)
    assert ip.status.value == "optimal" and ip.objective == int(saved["ip"]["value"]) == 230


def test_cluster_ratios_am1_seed0_k4_recomputed() -> None:
    from llmopt.opt.cluster_ip import cluster_upper_bound, solve_cluster_ip
    from llmopt.opt.studies import cluster_ratios as bm
    from llmopt.verify.cluster import check_cluster_schedule
    inst = bm.make("AM1", 16, 0)
    saved = {(r["policy"], r["router"]): r for r in _rows("opt/cluster-ratios/rows.csv")
             if (r["model"], r["seed"], r["K"]) == ("AM1", "0", "4")}
    with highs_by_nodes() as solver:
        ip = solve_cluster_ip(inst, 4, time_limit=None, upper_bound=cluster_upper_bound(inst, 4), solver=solver)
    assert ip.status.value == "optimal" and saved[("mc-sf", "jsq")]["kind"] == "OPT"
    assert ip.message.startswith(f"{solver}:")  # the node-limited solver ran, with no time limit
    assert ip.objective == pytest.approx(float(saved[("mc-sf", "jsq")]["denominator"]))
    for router in ("round-robin", "p2c"):
        run = simulate_cluster(inst, functools.partial(make_policy_spec, "mc-sf", seed=0), router, 4)
        assert check_cluster_schedule(inst, run).ok
        assert run.tel / ip.objective == pytest.approx(float(saved[("mc-sf", router)]["ratio"]), rel=1e-12)
