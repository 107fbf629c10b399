"""Formulations: declarative builders of solver-neutral models of the hindsight problem.

A formulation is a pipeline stage (DESIGN §3): given an instance and start windows
(:mod:`llmopt.model.windows`) it builds a :class:`~llmopt.model.canonical.CanonicalModel`, and it maps a
solver's primal vector back to start times, which the independent checker then verifies.
Formulations build models only: they import neither the checker nor solver results.

The protocol (:class:`Formulation`) — a class whose instances have::

    name: str
    exact: bool                  # True if the model's optimum over valid windows is OPT
    build(instance, windows) -> CanonicalModel
    decode(instance, model, x) -> dict[str, int]       # start of every request
    encode(instance, model, starts) -> ndarray          # optional: a warm start
    estimate(instance, windows) -> ModelSize            # optional: size before building
    describe(instance, model) -> dict                   # optional: facts for reports
    accepts(instance) -> str | None                     # optional: why it cannot model an instance

Registered lazily in :data:`FORMULATIONS` (the registry holds classes, instantiated with
no arguments); third-party formulations join through the entry-point group
``llmopt.formulations`` (loaded by :func:`llmopt.bench.plugins.load_plugins`) and are then
usable by ``llmopt solve --formulation NAME`` and by suites.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from llmopt.model.canonical import CanonicalModel
from llmopt.model.instance import Instance
from llmopt.model.registry import Registry
from llmopt.model.windows import StartWindows

__all__ = ["FORMULATIONS", "Formulation", "make_formulation"]


@runtime_checkable
class Formulation(Protocol):
    """What the hindsight pipeline needs from a formulation (see the module docstring)."""

    name: str
    exact: bool

    def build(self, instance: Instance, windows: StartWindows) -> CanonicalModel: ...

    def decode(self, instance: Instance, model: CanonicalModel, x: np.ndarray) -> dict[str, int]: ...


FORMULATIONS: Registry[Any] = Registry("formulation", "llmopt.formulations")
FORMULATIONS.register(
    "hindsight-ip", "llmopt.formulations.hindsight_ip:HindsightIP",
    "J §3 hindsight IP (1)-(4), identical requests aggregated (exact)",
)
FORMULATIONS.register(
    "hindsight-ip-binary", "llmopt.formulations.hindsight_ip:HindsightIPBinary",
    "J §3 hindsight IP (1)-(4) verbatim, one binary per request and start",
)
FORMULATIONS.register(
    "hindsight-ip-zones", "llmopt.formulations.hindsight_ip:HindsightIPZones",
    "J §3 hindsight IP (1)-(4) plus the peak-zone rows of llmopt.formulations.zones (exact; a stronger LP relaxation)",
)
FORMULATIONS.register(
    "cluster-ip", "llmopt.formulations.cluster_ip:ClusterIP",
    "J (1)-(4) with a worker index: K identical workers, per-worker memory rows, symmetry broken "
    "(registered with K = 1; llmopt.opt.cluster_ip.solve_cluster_ip for K > 1)",
)
FORMULATIONS.register(
    "wang-ip", "llmopt.formulations.wang_ip:WangIP",
    "W §6 IP (4)-(7) (all arrivals at 0; its LP relaxation is Relax-LP (8)-(11))",
)


def make_formulation(name: str) -> Formulation:
    """An instance of the formulation registered as ``name``.

    Raises
    ------
    llmopt.model.registry.RegistryError
        If ``name`` is unknown; ``TypeError`` if the registered object does not follow
        the :class:`Formulation` protocol.
    """
    obj = FORMULATIONS.get(name)()
    if not isinstance(obj, Formulation):
        raise TypeError(f"formulation {name!r} does not implement build() and decode() (see llmopt.formulations)")
    return obj
