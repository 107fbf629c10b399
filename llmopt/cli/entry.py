"""The ``llmopt`` console script: the command line's imports under a Ctrl-C handler.

A Ctrl-C while :mod:`llmopt.cli.main` and its dependencies are still importing (the first
fraction of a second) used to end in a ``KeyboardInterrupt`` traceback; here it is one line and
exit status 130, like a Ctrl-C during any command.
"""

from __future__ import annotations

import sys

__all__ = ["run"]


def run() -> None:
    """Import the command line and run it; a Ctrl-C before a command has its own handler exits 130."""
    try:
        from llmopt.cli.main import app

        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
