"""Everything that makes an :class:`~llmopt.model.instance.Instance`, and the workload registry.

A workload is a callable ``(seed: int, **params) -> Instance`` (or ``TimedInstance``); the
same seed always gives the same instance (DESIGN §4 invariant 3).

* :mod:`~llmopt.workloads.jaillet` — J §5.1 Arrival Models 1 and 2;
* :mod:`~llmopt.workloads.wang` — W's synthetic distributions and the LMSYS + arXiv mix;
* :mod:`~llmopt.workloads.chen` — C's output distributions with interval predictions;
* :mod:`~llmopt.workloads.predictions` — prediction generators (intervals, point estimates);
* :mod:`~llmopt.workloads.traces` — real trace formats, sampling and the data folder.
"""

from __future__ import annotations

from collections.abc import Callable

from llmopt.model.instance import Instance
from llmopt.model.registry import Registry

__all__ = ["WORKLOADS", "make_instance"]

WORKLOADS: Registry[Callable[..., Instance]] = Registry("workload", "llmopt.workloads")
WORKLOADS.register("jaillet-am1", "llmopt.workloads.jaillet:jaillet_am1", "J §5.1 Arrival Model 1 (all at t=0)")
WORKLOADS.register("jaillet-am2", "llmopt.workloads.jaillet:jaillet_am2", "J §5.1 Arrival Model 2 (Poisson arrivals)")
WORKLOADS.register("trace", "llmopt.workloads.traces.data:trace_workload",
                   "n requests sampled from a real trace file; Poisson arrivals or its timestamps (continuous time)")
WORKLOADS.register("wang-uniform", "llmopt.workloads.wang:wang_uniform",
                   "W App. EC.4.2 Uniform: s, o integers 1..50, n=100, M=100, all at t=0")
WORKLOADS.register("wang-normal", "llmopt.workloads.wang:wang_normal",
                   "W App. EC.4.2 Normal(25, 8.33^2) rounded, clipped to [1, 50], n=100, M=100")
WORKLOADS.register("wang-binomial", "llmopt.workloads.wang:wang_binomial",
                   "W App. EC.4.2 Binomial(49, 0.5)+1, n=100, M=100")
WORKLOADS.register("wang-exponential", "llmopt.workloads.wang:wang_exponential",
                   "W App. EC.4.2 Exp(scale 5) rounded, clipped to [1, 50], n=100, M=100")
WORKLOADS.register("wang-mixed-synthetic", "llmopt.workloads.wang:wang_mixed_synthetic",
                   "W App. EC.4.2 Mixed: bimodal prompts, Exp(5) outputs, n=200, M=100")
WORKLOADS.register("wang-mixed", "llmopt.workloads.wang:wang_mixed",
                   "W §7 mixed dataset: 1600 LMSYS + 400 arXiv, shuffled, first n, all at 0 s, M=16492")
WORKLOADS.register("chen-two-point", "llmopt.workloads.chen:chen_two_point",
                   "C §5.1 two-point family: o in {ell, u}, x_ell/x_u = t (default u/ell), interval [ell, u]")
WORKLOADS.register("chen-geometric", "llmopt.workloads.chen:chen_geometric",
                   "C §5.2 geometric G(p), P(o=k) = p q^(k-1) on 1..u_max (q=0.9, u_max=1000), interval [1, u_max]")
WORKLOADS.register("chen-lg", "llmopt.workloads.chen:chen_lg",
                   "C §5.3 linearly weighted geometric LG(p), P(o=k) = k p^2 q^(k-1) on 1..u_max, interval [1, u_max]")
WORKLOADS.register("chen-worst-case", "llmopt.workloads.chen:chen_worst_case",
                   "C Figure 1: A_min's worst output distribution on 1..u (default u=100), interval [1, u]")
WORKLOADS.register("chen-lmsys", "llmopt.workloads.chen:chen_lmsys",
                   "C §6: 2000 LMSYS conversations, first n, all at 0 s, M=16492; predictions=<spec>")


def make_instance(workload: str, seed: int, **params) -> Instance:
    """Generate the instance of ``workload`` for ``seed``.

    Raises
    ------
    ValueError
        For a parameter the workload does not take or one of the wrong type, named as
        ``llmopt generate --param`` names it (:func:`llmopt.model.params.check_params`).
    """
    from llmopt.model.params import check_params

    make = WORKLOADS.get(workload)
    check_params("workload", workload, make, params, skip=("seed",))
    return make(seed, **params)
