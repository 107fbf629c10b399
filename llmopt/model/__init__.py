"""The model wing: what every other wing speaks.

* :mod:`~llmopt.model.instance` / :mod:`~llmopt.model.timed_instance` — discrete- and
  continuous-time instances (validated, immutable) and their JSON form;
* :mod:`~llmopt.model.schedule` / :mod:`~llmopt.model.timed_schedule` — schedules (events,
  memory trace, TEL);
* :mod:`~llmopt.model.windows` — horizons and start windows;
* :mod:`~llmopt.model.canonical` — the solver-neutral canonical model (sparse ``c, A``, bounds,
  integrality, names) and the formulation protocol;
* :mod:`~llmopt.model.batch` — the shape of one batch (what a cost model is given);
* :mod:`~llmopt.model.result` — ``SolveStatus`` and ``SolveResult``; :mod:`~llmopt.model.tolerance`;
* :mod:`~llmopt.model.registry` — named, lazily imported registries.

The canonical model's names are also importable from here (``from llmopt.model import
CanonicalModel``, the path plug-ins used before the wings); they load on first use, so
importing an instance does not import SciPy.
"""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    module = importlib.import_module("llmopt.model.canonical")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module 'llmopt.model' has no attribute {name!r}") from None
