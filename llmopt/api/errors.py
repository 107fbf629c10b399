"""Bad input to the API, in one message that each caller spells its own way.

Every API function checks its arguments before any work and raises :class:`BadInput`, a
``ValueError`` whose message names the parameter (``time_limit must be > 0, got 0``). The command
line shows the same message with each parameter spelled as its option (``--time-limit must be > 0,
got 0``) through :meth:`BadInput.text`, so a bad input reads alike in Python and in a terminal and is
checked in one place.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["BadInput", "SolverUnavailable", "check_number", "check_known"]


class BadInput(ValueError):
    """A bad argument, found before any work.

    Parameters
    ----------
    template : str
        The message, with each parameter it names written ``{name}`` (``"{seed} must be >= 0, got -1"``).
    *params : str
        The parameters named in ``template``.

    Attributes
    ----------
    code : int
        The command line's exit status for it (2: bad input).
    """

    code = 2

    def __init__(self, template: str, *params: str) -> None:
        self.template = template
        self.params = params
        super().__init__(self.text())

    def text(self, names: Mapping[str, str] | None = None) -> str:
        """The message with each parameter spelled by ``names`` (default: its API name)."""
        out = self.template
        for p in self.params:
            out = out.replace("{" + p + "}", (names or {}).get(p, p))
        return out


class SolverUnavailable(BadInput):
    """A registered solver that cannot run here (its package or licence is missing); exit status 3."""

    code = 3


def check_number(param: str, value: float | int | None, *, minimum: float, strict: bool = False) -> None:
    """Raise :class:`BadInput` unless ``value`` is ``None`` or a finite number ``>= minimum`` (``>`` if ``strict``).

    Raises
    ------
    BadInput
        ``PARAM must be a finite number, got V`` or ``PARAM must be >= MIN, got V``.
    """
    if value is None:
        return
    if not math.isfinite(value):
        raise BadInput(f"{{{param}}} must be a finite number, got {value}", param)
    if value <= minimum if strict else value < minimum:
        raise BadInput(f"{{{param}}} must be {'>' if strict else '>='} {minimum:g}, got {value}", param)


def check_known(registry: Any, param: str, name: str) -> None:
    """Raise :class:`BadInput` naming ``param`` and the known names unless ``name`` is in ``registry``."""
    if name not in registry:
        raise BadInput(f"{{{param}}}: unknown {registry.kind} {name!r}; known: {', '.join(registry.names()) or 'none'}",
                       param)
