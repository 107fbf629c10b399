"""A suite that names only plug-in stages: workload, a policy, a formulation and a bound."""

from __future__ import annotations

from llmopt.bench.suites import Suite

SUITE = Suite(
    name="plugin-suite",
    description="plug-in workload, policy, formulation (J0 B.1 style) and bound, end to end",
    workloads=(("plugin-tiny", (0, 1, 2), {}),),
    policies=("mc-sf", "longest-first"),
    reference="longest-first",
    formulation="j0-running-status",
    bounds=("uniform-lambda", "lp"),
    ip_time_limit=60.0,
    search_evals=10,
)
