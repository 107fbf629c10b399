"""Registries of named, lazily imported components (Gymnasium style).

Entries are ``"module:attr"`` strings resolved on first use, so registering a solver
never imports its backend. Third-party packages add entries through an entry-point
group, loaded only when :meth:`Registry.load_entry_points` is called explicitly —
never as an import side effect.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

__all__ = ["Registry", "RegistryError", "parse_spec"]

T = TypeVar("T")


class RegistryError(KeyError):
    """Unknown or duplicate registry name."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else ""


@dataclass
class Registry(Generic[T]):
    """Name → lazily resolved object.

    Parameters
    ----------
    kind : str
        What is registered ("policy", "solver", ...), used in messages.
    group : str
        Entry-point group for third-party plug-ins, e.g. ``"llmopt.policies"``.
    """

    kind: str
    group: str
    _entries: dict[str, str | T] = field(default_factory=dict)
    _docs: dict[str, str] = field(default_factory=dict)

    def register(self, name: str, target: str | T, doc: str = "") -> None:
        """Register ``target`` (an object or ``"module:attr"``) under ``name``.

        Raises
        ------
        RegistryError
            If ``name`` is already registered.
        """
        if name in self._entries:
            raise RegistryError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = target
        self._docs[name] = doc

    def unregister(self, name: str) -> None:
        """Remove ``name`` (for tests and interactive sessions)."""
        if name not in self._entries:
            raise RegistryError(f"{self.kind} {name!r} is not registered")
        del self._entries[name]
        self._docs.pop(name, None)

    def get(self, name: str) -> T:
        """Resolve ``name``; raises :class:`RegistryError` listing the known names."""
        try:
            target = self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise RegistryError(f"unknown {self.kind} {name!r}; known: {known}") from None
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            obj = importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
            self._entries[name] = obj  # type: ignore[assignment]
            return obj  # type: ignore[return-value]
        return target

    def names(self) -> list[str]:
        return sorted(self._entries)

    def doc(self, name: str) -> str:
        return self._docs.get(name, "")

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def load_entry_points(self) -> list[str]:
        """Register the third-party entries of :attr:`group`; returns the names added."""
        added, clashes = [], []
        for ep in entry_points(group=self.group):
            if ep.name in self._entries:
                clashes.append(f"{ep.name!r} (from {ep.value})")
                continue
            self.register(ep.name, ep.value, doc=f"plug-in from {ep.value}")
            added.append(ep.name)
        if clashes:
            raise RegistryError(f"{self.kind} plug-ins clash with registered names: {', '.join(clashes)}")
        return added

    def describe(self) -> dict[str, Any]:
        return {n: self._docs.get(n, "") for n in self.names()}


def parse_spec(spec: str, what: str = "spec") -> tuple[str, dict[str, Any]]:
    """Split a spec ``"name"`` or ``"name:key=value,key=value"`` into name and parameters.

    Values are read as JSON scalars (``0.2`` → float, ``3`` → int, ``true``), else kept as
    strings. Example: ``"alpha-protection:alpha=0.2,beta=0.1"``.

    Raises
    ------
    ValueError
        If a parameter is not ``key=value`` or a key repeats.
    """
    import json

    name, _, rest = spec.partition(":")
    params: dict[str, Any] = {}
    if rest:
        for item in rest.split(","):
            key, eq, raw = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise ValueError(f"{what} {spec!r}: parameter {item!r} is not key=value")
            if key in params:
                raise ValueError(f"{what} {spec!r}: parameter {key!r} appears twice")
            try:
                params[key] = json.loads(raw)
            except ValueError:
                params[key] = raw.strip()
    return name.strip(), params


def make_from_spec(registry: Registry[Any], spec: str, what: str = "spec", **extra: Any) -> Any:
    """Instantiate ``registry``'s entry named by ``spec`` (:func:`parse_spec`) with its parameters;
    ``extra`` parameters (e.g. a per-trial ``seed``) are added when the entry accepts them and the
    spec does not fix them."""
    name, params = parse_spec(spec, what)
    factory = registry.get(name)
    if extra:
        import inspect

        try:
            accepted: Any = inspect.signature(factory).parameters
        except (TypeError, ValueError):
            accepted = {}
        for key, value in extra.items():
            if key in accepted and key not in params:
                params[key] = value
    return factory(**params)

