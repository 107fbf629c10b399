"""W's IP (4)–(7) and its Relax-LP (8)–(11) (Wang–Ye–Zhou §6, DIGEST §1.6).

W writes, for requests that all arrive at ``t = 0``::

    (4) min Σ_i ( Σ_{t=0..T̄} t·x_{i,t} + o_i )
    (5) Σ_{t=0..T̄} x_{i,t} = 1                                          ∀ i
    (6) Σ_i Σ_{k=max{0, t−o_i}}^{t−1} (s_i + t − k)·x_{i,k} <= M          ∀ t ∈ [T̄]
    (7) x_{i,t} ∈ {0, 1}            (Relax-LP (8)–(11): the same with x >= 0)

**How it relates to the Jaillet IP (1)–(4)** (:mod:`llmopt.formulations.hindsight_ip`).
It is J's IP with every ``a_i = 0``, term for term: (4) = (1) (``−a_i = 0``), (5) = (2),
(6) = (3) (``max{a_i, t−o_i} = max{0, t−o_i}``), (7) = (4). Heterogeneous prompts ``s_i``
are W's point and J's IP already carries them. So on an instance with all arrivals at 0
both formulations have the same optimum, OPT of DESIGN §1 (a request starting at ``k``
holds ``s_i + t − k`` tokens at ``t = k+1 … k+o_i`` and peaks at ``s_i + o_i`` when it
completes), and the same LP value over the same windows: ``tests/formulations/test_wang_ip.py`` checks
both against exhaustive search.

It is **not** J0's App. B.1 IP (DIGEST §1.5): that one indexes memory by the *batch* in
which a request runs (``t ∈ [k, k+o_i−1]``), so its peak is ``s + o_i − 1``, one token less
than here, and its optimum can be lower than OPT.

Two readings are fixed here, as for J (DIGEST I-8): W leaves ``T̄`` unspecified and its
start variables run to ``T̄`` while the memory rows stop at ``T̄``; the model is built over
start windows that end at ``T_c − o_i`` with ``T_c = a + Σ_i o_i`` for the common arrival
``a`` (``Σ_i o_i`` in W, where ``a = 0``; a proven completion horizon,
:func:`llmopt.model.windows.completion_horizon`), with a memory row at every time a start can
reach. And one binary per request and start, as W writes it (J's formulation here merges
identical requests; this one does not).

Instances whose requests all arrive at one common time ``a`` are accepted: that is W's
model shifted by ``a`` (both objectives count latency from ``a``). Any other instance is
refused with an error naming the first request that arrives later.
"""

from __future__ import annotations

from dataclasses import replace

from llmopt.formulations.hindsight_ip import HindsightIPBinary
from llmopt.model.canonical import CanonicalModel, ModelSize
from llmopt.model.instance import Instance, InstanceError
from llmopt.model.windows import StartWindows

__all__ = ["WangIP", "require_common_arrival", "common_arrival_problem"]


def common_arrival_problem(instance: Instance, what: str = "W's IP (4)-(7)") -> str | None:
    """Why ``instance`` is outside W's model (requests arriving at different times), or ``None``."""
    if instance.n == 0:
        return None
    a0 = instance.requests[0].arrival
    for r in instance.requests:
        if r.arrival != a0:
            return (f"{what} needs every request to arrive at the same time (W: t = 0), but request "
                    f"{r.id!r} arrives at {r.arrival} and {instance.requests[0].id!r} at {a0}; "
                    "use the formulation 'hindsight-ip' (J (1)-(4)) for arrivals over time")
    return None


def require_common_arrival(instance: Instance, what: str = "W's IP (4)-(7)") -> None:
    """Raise :class:`~llmopt.model.instance.InstanceError` unless every request arrives at the same time."""
    why = common_arrival_problem(instance, what)
    if why is not None:
        raise InstanceError(why)


class WangIP(HindsightIPBinary):
    """W (4)–(7) as a pipeline stage: one binary per request and start; LP relaxation = Relax-LP (8)–(11).

    ``llmopt solve --formulation wang-ip`` solves the IP; ``--relax`` adds its LP value
    beside the certified ``lp`` bound, and the bound stage ``wang-relax-lp`` solves
    Relax-LP and certifies it through the checker.
    """

    name = "wang-ip"

    def accepts(self, instance: Instance) -> str | None:
        """Why W's model cannot describe ``instance`` (arrivals at different times), or ``None``."""
        return common_arrival_problem(instance)

    def estimate(self, instance: Instance, windows: StartWindows) -> ModelSize:
        require_common_arrival(instance)
        return super().estimate(instance, windows)

    def build(self, instance: Instance, windows: StartWindows) -> CanonicalModel:
        require_common_arrival(instance)
        model = super().build(instance, windows)
        return replace(model, name=f"wang_ip[{instance.name or 'instance'}]")
