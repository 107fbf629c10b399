"""A bound stage: the best *uniform* multiplier ``λ_t = c`` over the memory horizon, certified by
llmopt's checker (any ``λ >= 0`` is a valid certificate; the value is the checker's)."""

from __future__ import annotations

import time

import numpy as np

from llmopt.model.instance import Instance
from llmopt.opt.bounds import BoundContext, BoundResult
from llmopt.verify.certificates import certificate_horizon, check_lower_bound_certificate


def uniform_lambda_bound(instance: Instance, ctx: BoundContext) -> BoundResult:
    t0 = time.perf_counter()
    if instance.n == 0:
        return BoundResult("uniform-lambda", 0.0, "uniform-lambda-checked", True, "empty", 0.0)
    start = min(r.arrival for r in instance.requests)
    times = np.arange(start + 1, certificate_horizon(instance) + 1)
    best, best_c = -np.inf, 0.0
    for c in np.linspace(0.0, 1.0, 41):
        value = check_lower_bound_certificate(instance, (times, np.full(times.size, c)), ctx.upper_bound_starts)
        if value > best:
            best, best_c = value, float(c)
    return BoundResult("uniform-lambda", float(best), "uniform-lambda-checked", True, f"λ_t = {best_c:g}",
                       float(best), time.perf_counter() - t0)
