"""The continuous-time piece of ``llmopt simulate``: its ``--cost-model``, checked before the run.

A continuous-time instance file (``"clock": "seconds"``, e.g. written by ``llmopt trace``) is run
by the continuous engine with a cost model; ``llmopt check`` verifies what ``llmopt simulate --json``
writes for it through :func:`llmopt.api.check` (the checker's continuous-time mode).
"""

from __future__ import annotations

from typing import Any

from llmopt.cli.common import die_bad

__all__ = ["cost_model_or_die"]


def cost_model_or_die(name: str) -> Any:
    """The registered cost model ``name`` (:func:`llmopt.api.runs.resolve_cost_model`), or exit 2 naming
    ``--cost-model`` and the known ones."""
    from llmopt.api.errors import BadInput
    from llmopt.api.runs import resolve_cost_model

    try:
        return resolve_cost_model(name)
    except BadInput as exc:
        die_bad(exc)
