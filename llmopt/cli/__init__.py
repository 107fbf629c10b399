"""The ``llmopt`` command line (Typer). Each command imports only what it uses.

``llmopt.cli.entry:run`` is the console script (it imports ``llmopt.cli.main:app`` under a Ctrl-C
handler); the sub-apps are :mod:`~llmopt.cli.bench`
(``llmopt bench``), :mod:`~llmopt.cli.trace` and :mod:`~llmopt.cli.timed`.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "app":  # ``llmopt.cli:app`` (the entry point before the wings)
        from llmopt.cli.main import app

        return app
    raise AttributeError(f"module 'llmopt.cli' has no attribute {name!r}")
