"""Formulations: declarative builders of solver-neutral canonical models.

A formulation is a function ``(instance, windows=None, **options) -> CanonicalModel``.
Registered here lazily; third-party formulations join through the entry-point group
``llmopt.formulations`` (loaded by :func:`llmopt.plugins.load_plugins`).
"""

from __future__ import annotations

from typing import Any

from llmopt.registry import Registry

__all__ = ["FORMULATIONS"]

FORMULATIONS: Registry[Any] = Registry("formulation", "llmopt.formulations")
FORMULATIONS.register(
    "hindsight-ip", "llmopt.formulations.hindsight_ip:formulate", "J §3 hindsight IP (1)-(4); .relax() for the LP"
)
FORMULATIONS.register(
    "hindsight-dual", "llmopt.formulations.dual:formulate_dual", "dual (22)-(24) of the hindsight LP relaxation"
)
