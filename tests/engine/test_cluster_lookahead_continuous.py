"""The look-ahead router in continuous time, where the workers' iteration clocks differ.

In discrete time every worker's clock at the routing instant is the instant itself, so "the first step
at which check (5) admits the request" and "how many steps from now" order the workers alike. In
continuous time each worker counts its own iterations (a worker that went idle jumps to the next
arrival without counting the time in between), so at one routing instant worker clocks differ, and
only the delay from each worker's own clock is comparable. The instance below is traced by hand so
that comparing absolute first-fit iterations sends the request to the wrong worker.

Breakage tried by hand (applied, the test run, reverted; it fails): the router's key
``first_fit(...) - t0`` written ``first_fit(...)`` (absolute clocks) — ``r2`` goes to worker 1 and waits
3 iterations there (latency 6 s instead of 3 s).
"""

from __future__ import annotations

import pytest
from cluster_helpers import simulate_cluster

from llmopt.engine.cost_model import ConstantCostModel
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.policies import MCSF
from llmopt.policies.routers import LookaheadRouter, first_fit
from llmopt.verify.cluster import check_cluster_schedule

ONE_SECOND = ConstantCostModel(1.0)  # one iteration per second: iterations and seconds read alike per worker


class Recording(LookaheadRouter):
    """The look-ahead router, recording each worker's clock and first-fit iteration at every routing."""

    def reset(self, K: int, M: int) -> None:
        super().reset(K, M)
        self.seen: dict[str, list[tuple[int, int]]] = {}

    def route(self, request, cluster):  # type: ignore[no-untyped-def]
        s, o = request.prompt, self.estimate(request)
        seen = []
        for w in range(self.K):
            t0 = cluster.clock(w)
            seen.append((t0, first_fit(self.profiles[w], t0, s, o)))
        self.seen[request.id] = seen
        return super().route(request, cluster)


def test_lookahead_compares_delays_from_each_workers_own_clock() -> None:
    # M = 30, K = 2, 1 s batches, MC-SF on each worker. Usage of a request started at iteration p:
    # s + τ − p for p < τ <= p + o.
    # r0 (0 s, s=1, o=20) -> w0 (both empty: tie, lowest index); runs iterations 0-19, done at 20 s.
    # r1 (10 s, s=15, o=5): w0 is at iteration 10 and r0 holds 1 + τ, so r1 started at t' peaks at
    #   τ = t' + 5 with 1 + τ + 20 > 30 while r0 runs -> w0 admits it at iteration 20 (delay 10); w1 is
    #   idle (clock 0) -> delay 0 -> w1, which jumps to 10 s and runs r1 in iterations 0-4 (10-15 s).
    # r2 (11 s, s=9, o=3): w0 is at iteration 11 (batches at 0, 1, …, 10 s) and r0 holds 1 + τ:
    #   at τ = 14, 15 + 9 + 3 = 27 <= 30 -> admitted at once (first fit 11, delay 0). w1 is at
    #   iteration 1 (one batch, at 10 s) and r1 holds 15 + τ on τ <= 5. r2 started at t' = 1 holds 12
    #   at τ = 4: 19 + 12 = 31 > 30; t' = 2: 20 + 12 = 32 at τ = 5; t' = 3: 20 + 11 = 31 at τ = 5;
    #   t' = 4: 20 + 10 = 30 at τ = 5, fits -> first fit 4, delay 3. From now: w0 (0 < 3). In absolute
    #   iterations w1 looks sooner (4 < 11) — wrong: w1's iteration 4 is at 14 s, w0's 11 is now.
    inst = TimedInstance(30, (TimedRequest("r0", 0.0, 1, 20), TimedRequest("r1", 10.0, 15, 5),
                              TimedRequest("r2", 11.0, 9, 3)))
    router = Recording()
    run = simulate_cluster(inst, MCSF, router, 2, cost_model=ONE_SECOND)
    # the premise: at r2's routing instant the workers' clocks differ, and the two orders disagree
    assert router.seen["r2"] == [(11, 11), (1, 4)]
    assert router.seen["r1"] == [(10, 20), (0, 0)]
    assert run.assignment == {"r0": 0, "r1": 1, "r2": 0}
    # end to end: r2 starts at w0's iteration 11 (11 s) and completes with the batch at 13 s
    assert run.workers[0].starts == {"r0": 0, "r2": 11} and run.workers[1].starts == {"r1": 0}
    assert run.workers[0].completions == {"r0": 20.0, "r2": 14.0}
    assert run.latencies == pytest.approx({"r0": 20.0, "r1": 5.0, "r2": 3.0})
    report = check_cluster_schedule(inst, run, ONE_SECOND)
    assert report.ok, report.violations
    assert report.mean_latency == pytest.approx(28.0 / 3)
    # the registered router decides the same
    assert simulate_cluster(inst, MCSF, "lookahead", 2, cost_model=ONE_SECOND).assignment == run.assignment
