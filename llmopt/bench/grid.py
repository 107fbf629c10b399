"""Grid syntax for sweeps: one spec string with ``{a,b,...}`` values stands for one spec per combination.

In a suite's ``policies`` list::

    "alpha-protection:alpha={0.1,0.2},beta={0,0.5}"

expands, in order (the last parameter varying fastest), into::

    "alpha-protection:alpha=0.1,beta=0", "alpha-protection:alpha=0.1,beta=0.5",
    "alpha-protection:alpha=0.2,beta=0", "alpha-protection:alpha=0.2,beta=0.5"

Parameters without braces are kept as written in every expanded spec. A suite expands its list once,
when it is built or loaded (:class:`llmopt.bench.suites.Suite`), so its records, reports and
``suite.json`` name the expanded specs. A malformed grid (unbalanced or nested braces, an empty
value, a value listed twice, braces outside a parameter's value) is a ``ValueError`` naming the spec.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

__all__ = ["expand_grid", "expand_grids", "expand_suite_policies"]


def _split_top(text: str, spec: str, what: str) -> list[str]:
    """``text`` split at the commas outside braces; checks that braces pair up and do not nest."""
    items: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "{":
            depth += 1
            if depth > 1:
                raise ValueError(f"{what} {spec!r}: nested braces")
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise ValueError(f"{what} {spec!r}: '}}' without '{{'")
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise ValueError(f"{what} {spec!r}: '{{' without '}}'")
    items.append("".join(cur))
    return items


def expand_grid(spec: str, what: str = "policy spec") -> list[str]:
    """The specs ``spec`` stands for: itself if it has no braces, else one per combination of its grid values.

    Parameters
    ----------
    spec : str
        ``"name"``, ``"name:key=value,..."`` or with grid values ``"name:key={v1,v2},..."``.
    what : str
        How the error messages name the spec.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        For a malformed grid; the message names the spec and what is wrong.
    """
    if "{" not in spec and "}" not in spec:
        return [spec]
    name, sep, rest = spec.partition(":")
    if "{" in name or "}" in name or not sep:
        raise ValueError(f"{what} {spec!r}: braces must hold a parameter's values, as name:key={{v1,v2}}")
    choices: list[list[str]] = []
    for item in _split_top(rest, spec, what):
        key, eq, value = item.partition("=")
        if "{" in key or "}" in key or not eq:
            raise ValueError(f"{what} {spec!r}: parameter {item!r} is not key=value or key={{v1,v2,...}}")
        value = value.strip()
        if "{" not in value and "}" not in value:
            choices.append([item])
            continue
        if not (value.startswith("{") and value.endswith("}")):
            raise ValueError(f"{what} {spec!r}: the value of {key.strip()!r} must be all of {{v1,v2,...}}")
        values = [v.strip() for v in value[1:-1].split(",")]
        if any(not v for v in values):
            raise ValueError(f"{what} {spec!r}: an empty value in the grid of {key.strip()!r}")
        if len(set(values)) != len(values):
            raise ValueError(f"{what} {spec!r}: a value listed twice in the grid of {key.strip()!r}")
        choices.append([f"{key.strip()}={v}" for v in values])
    return [f"{name}:{','.join(combo)}" for combo in itertools.product(*choices)]


def expand_grids(specs: Iterable[str], what: str = "policy spec") -> list[str]:
    """Every spec of ``specs`` expanded (:func:`expand_grid`), in order; anything that is not a string is
    passed through for the caller's own check."""
    out: list[str] = []
    for spec in specs:
        out += expand_grid(spec, what) if isinstance(spec, str) else [spec]
    return out


def expand_suite_policies(value: Any, suite: str) -> Any:
    """A suite's ``policies`` field with every grid expanded (a tuple); a value that is not a list is returned
    as it is, for the suite's own check to name."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        return value
    return tuple(expand_grids(value, f"suite {suite!r}: policy"))
