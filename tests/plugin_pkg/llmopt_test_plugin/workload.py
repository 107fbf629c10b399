"""A seeded workload: a handful of requests with arrivals, prompts 1..3, small M."""

from __future__ import annotations

import numpy as np

from llmopt.model.instance import Instance


def tiny(seed: int, n: int = 5, M: int = 9) -> Instance:
    rng = np.random.default_rng([seed, 77])
    rows = []
    for _ in range(n):
        s = int(rng.integers(1, 4))
        rows.append((int(rng.integers(0, 3)), s, int(rng.integers(1, M - s + 1))))
    return Instance.from_tuples(M, rows, name=f"plugin-tiny/seed={seed}")
