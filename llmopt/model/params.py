"""Checking the keyword parameters a user gives a registered component against its signature.

A policy spec ``alpha-protection:alpha=abc`` or ``llmopt generate jaillet-am1 --param n_range=abc``
hands a string to code that expects a number; without a check the user meets a Python type error
from deep inside (``'<=' not supported between 'int' and 'str'``). :func:`check_params` refuses it
first, naming the component, the parameter and the type its annotation asks for.
"""

from __future__ import annotations

import inspect
import numbers
import types
import typing
from collections.abc import Callable
from typing import Any

__all__ = ["check_params"]

_NONE = type(None)
_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string", _NONE: "null"}
_PLURALS = {int: "integers", float: "numbers", str: "strings"}


def _judge(hint: Any) -> Callable[[Any], bool] | None:
    """A test of a JSON value against annotation ``hint``, or ``None`` for an annotation this module
    does not judge (a callable, a class of the package): such a parameter is left to the component."""
    if hint is bool:
        return lambda v: isinstance(v, bool)
    if hint is int:  # numbers.Integral: numpy integers from a notebook are integers too
        return lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool)
    if hint is float:  # an integer is a valid number
        return lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool)
    if hint is str:
        return lambda v: isinstance(v, str)
    if hint is _NONE:
        return lambda v: v is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        tests = [_judge(a) for a in args]
        if any(t is None for t in tests):
            return None
        return lambda v: any(t(v) for t in tests if t is not None)
    if origin is tuple and args and args[-1] is not Ellipsis:  # tuple[int, int]: a JSON list of that length
        items = [_judge(a) for a in args]
        if any(t is None for t in items):
            return None
        return lambda v: (isinstance(v, (list, tuple)) and len(v) == len(items)
                          and all(t(x) for t, x in zip(items, v) if t is not None))
    return None


def _describe(hint: Any) -> str:
    if hint in _WORDS:
        return _WORDS[hint]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys(_describe(a) for a in args))
    if origin is tuple:
        if len(set(args)) == 1 and args[0] in _PLURALS:
            return f"a list of {len(args)} {_PLURALS[args[0]]}"
        return f"a list of {len(args)} ({', '.join(_describe(a) for a in args)})"
    return str(hint)


def check_params(kind: str, name: str, factory: Callable[..., Any], params: dict[str, Any],
                 skip: tuple[str, ...] = ()) -> None:
    """Refuse parameters ``factory`` does not take, or whose value does not fit its annotation.

    Plain annotations are judged: ``int``, ``float`` (an integer fits), ``str``, ``bool``, ``None``,
    unions of them and fixed-length tuples of them (a JSON list of that length). Other annotations
    are left to ``factory``.

    Parameters
    ----------
    kind : str
        What the component is, for the message (``policy``, ``workload``).
    name : str
        Its registered name, for the message.
    factory : callable
        The registered class or function.
    params : dict
        Keyword arguments about to be passed to ``factory``.
    skip : tuple of str
        Parameters of the signature that are not the user's to give (e.g. a workload's ``seed``).

    Raises
    ------
    ValueError
        ``policy 'alpha-protection': parameter 'alpha' must be a number, got 'abc'``, or
        ``policy 'mc-sf' has no parameter 'x'; its parameters: none``.
    """
    if not params:
        return
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or a C callable: nothing to check against
        return
    names = [p for p in sig.parameters if p not in skip]
    if not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        for key in params:
            if key not in sig.parameters or key in skip:
                raise ValueError(f"{kind} {name!r} has no parameter {key!r}; its parameters: "
                                 f"{', '.join(names) or 'none'}")
    try:
        target = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]
        hints = typing.get_type_hints(target)
    except Exception:  # an annotation that does not resolve here: nothing to check against
        return
    for key, value in params.items():
        test = _judge(hints[key]) if key in hints else None
        if test is not None and not test(value):
            raise ValueError(f"{kind} {name!r}: parameter {key!r} must be {_describe(hints[key])}, got {value!r}")
