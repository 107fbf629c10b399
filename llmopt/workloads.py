"""Workload generators and their registry.

A workload is a callable ``(seed: int, **params) -> Instance``; the same seed always
gives the same instance (DESIGN §4 invariant 3).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from llmopt.instance import Instance, Request
from llmopt.registry import Registry

__all__ = ["WORKLOADS", "jaillet_am1", "jaillet_am2", "make_instance"]


def _jaillet_requests(rng: np.random.Generator, M: int, arrivals: list[int]) -> tuple[Request, ...]:
    """J §5.1: ``s_i ~ U{1..5}``, ``o_i ~ U{1..M − s_i}`` (so ``s_i + o_i <= M``)."""
    out = []
    for i, a in enumerate(arrivals):
        s = int(rng.integers(1, 6))
        o = int(rng.integers(1, M - s + 1))
        out.append(Request(f"r{i}", int(a), s, o))
    return tuple(out)


def jaillet_am1(seed: int, n_range: tuple[int, int] = (40, 60), M_range: tuple[int, int] = (30, 50)) -> Instance:
    """J §5.1 Arrival Model 1: ``n ~ U{40..60}`` requests, all at ``t = 0``; ``M ~ U{30..50}``."""
    rng = np.random.default_rng([seed, 1])
    M = int(rng.integers(M_range[0], M_range[1] + 1))
    n = int(rng.integers(n_range[0], n_range[1] + 1))
    return Instance(M, _jaillet_requests(rng, M, [0] * n), name=f"jaillet-am1/seed={seed}")


def jaillet_am2(
    seed: int,
    T_range: tuple[int, int] = (40, 60),
    rate_range: tuple[float, float] = (0.5, 1.5),
    M_range: tuple[int, int] = (30, 50),
) -> Instance:
    """J §5.1 Arrival Model 2: Poisson arrivals on ``[1, T]``.

    ``T ~ U{40..60}``, ``λ ~ U[0.5, 1.5]`` (continuous) and ``N_t ~ Poisson(λ)``
    independent arrivals at each ``t = 1..T`` (DIGEST I-9: the paper's wording allows
    other readings; this is the discrete-time one). A draw with no arrival at all is
    redrawn. ``M ~ U{30..50}``.
    """
    rng = np.random.default_rng([seed, 2])
    M = int(rng.integers(M_range[0], M_range[1] + 1))
    T = int(rng.integers(T_range[0], T_range[1] + 1))
    lam = float(rng.uniform(*rate_range))
    while True:
        counts = rng.poisson(lam, size=T)
        if counts.sum() > 0:
            break
    arrivals = [t for t, c in zip(range(1, T + 1), counts) for _ in range(int(c))]
    return Instance(M, _jaillet_requests(rng, M, arrivals), name=f"jaillet-am2/seed={seed}")


WORKLOADS: Registry[Callable[..., Instance]] = Registry("workload", "llmopt.workloads")
WORKLOADS.register("jaillet-am1", "llmopt.workloads:jaillet_am1", "J §5.1 Arrival Model 1 (all at t=0)")
WORKLOADS.register("jaillet-am2", "llmopt.workloads:jaillet_am2", "J §5.1 Arrival Model 2 (Poisson arrivals)")
WORKLOADS.register("trace", "llmopt.trace_experiment:trace_workload",
                   "n requests sampled from a real trace file; Poisson arrivals or its timestamps (continuous time)")
WORKLOADS.register("wang-uniform", "llmopt.wang_workloads:wang_uniform",
                   "W App. EC.4.2 Uniform: s, o integers 1..50, n=100, M=100, all at t=0")
WORKLOADS.register("wang-normal", "llmopt.wang_workloads:wang_normal",
                   "W App. EC.4.2 Normal(25, 8.33^2) rounded, clipped to [1, 50], n=100, M=100")
WORKLOADS.register("wang-binomial", "llmopt.wang_workloads:wang_binomial",
                   "W App. EC.4.2 Binomial(49, 0.5)+1, n=100, M=100")
WORKLOADS.register("wang-exponential", "llmopt.wang_workloads:wang_exponential",
                   "W App. EC.4.2 Exp(scale 5) rounded, clipped to [1, 50], n=100, M=100")
WORKLOADS.register("wang-mixed-synthetic", "llmopt.wang_workloads:wang_mixed_synthetic",
                   "W App. EC.4.2 Mixed: bimodal prompts, Exp(5) outputs, n=200, M=100")
WORKLOADS.register("wang-mixed", "llmopt.wang_workloads:wang_mixed",
                   "W §7 mixed dataset: 1600 LMSYS + 400 arXiv, shuffled, first n, all at 0 s, M=16492")
WORKLOADS.register("chen-two-point", "llmopt.chen_workloads:chen_two_point",
                   "C §5.1 two-point family: o in {ell, u}, x_ell/x_u = t (default u/ell), interval [ell, u]")
WORKLOADS.register("chen-geometric", "llmopt.chen_workloads:chen_geometric",
                   "C §5.2 geometric G(p), P(o=k) = p q^(k-1) on 1..u_max (q=0.9, u_max=1000), interval [1, u_max]")
WORKLOADS.register("chen-lg", "llmopt.chen_workloads:chen_lg",
                   "C §5.3 linearly weighted geometric LG(p), P(o=k) = k p^2 q^(k-1) on 1..u_max, interval [1, u_max]")
WORKLOADS.register("chen-worst-case", "llmopt.chen_workloads:chen_worst_case",
                   "C Figure 1: A_min's worst output distribution on 1..u (default u=100), interval [1, u]")
WORKLOADS.register("chen-lmsys", "llmopt.chen_workloads:chen_lmsys",
                   "C §6: 2000 LMSYS conversations, first n, all at 0 s, M=16492; predictions=<spec>")


def make_instance(workload: str, seed: int, **params) -> Instance:
    """Generate the instance of ``workload`` for ``seed``."""
    return WORKLOADS.get(workload)(seed, **params)
