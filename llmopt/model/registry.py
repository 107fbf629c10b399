"""Registries of named, lazily imported components (Gymnasium style).

Entries are ``"module:attr"`` strings resolved on first use, so registering a solver
never imports its backend. Third-party packages add entries through an entry-point
group, read once, on the first lookup or listing of the registry (never as an import side
effect, and never when :func:`set_plugin_loading` turned plug-ins off, as the CLI's
``--no-plugins`` does). Reading a group only registers ``"module:attr"`` strings: a plug-in's
module is imported when its name is first resolved, and one that cannot be imported raises
:class:`PluginError` naming the entry point, its group and the module.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

__all__ = ["Registry", "RegistryError", "PluginError", "parse_spec", "set_plugin_loading", "plugin_loading"]

T = TypeVar("T")


class RegistryError(KeyError):
    """Unknown or duplicate registry name."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else ""


class PluginError(RegistryError, ImportError):
    """A plug-in's entry point names a module or attribute that cannot be imported; the message names
    the entry point, its group and the module (also an :class:`ImportError`)."""


_plugin_loading = True


def set_plugin_loading(enabled: bool) -> None:
    """Turn the reading of entry-point groups on or off for this process (the CLI's ``--no-plugins``
    turns it off). Registries that already read their group keep what they registered."""
    global _plugin_loading
    _plugin_loading = bool(enabled)


def plugin_loading() -> bool:
    """Whether registries read their entry-point group on first use (:func:`set_plugin_loading`)."""
    return _plugin_loading


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
    #: name → the entry point's ``"module:attr"``, for the names a plug-in registered
    _plugins: dict[str, str] = field(default_factory=dict, repr=False)
    _plugins_read: bool = field(default=False, repr=False)

    def _read_plugins(self) -> None:
        """Read :attr:`group` once, on the first lookup or listing (not at import). A name that
        clashes is reported as a warning here: it must not break the lookup of a built-in name."""
        if self._plugins_read or not _plugin_loading:
            return
        try:
            self.load_entry_points()
        except RegistryError as exc:
            warnings.warn(f"plug-ins: {exc}", RuntimeWarning, stacklevel=3)

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
        self._plugins.pop(name, None)

    def get(self, name: str) -> T:
        """Resolve ``name`` (reading the entry-point group first, once).

        Raises
        ------
        RegistryError
            For an unknown name, listing the known names.
        PluginError
            When a plug-in's module or attribute cannot be imported.
        """
        self._read_plugins()
        try:
            target = self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise RegistryError(f"unknown {self.kind} {name!r}; known: {known}") from None
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            try:
                obj = importlib.import_module(module)
                for part in attr.split("."):
                    obj = getattr(obj, part)
            except (ImportError, AttributeError) as exc:
                if name not in self._plugins:
                    raise
                what = f"module {module!r}" if isinstance(exc, ImportError) else f"attribute {attr!r} of {module!r}"
                raise PluginError(f"{self.kind} plug-in {name!r} (entry point '{name} = {target}' in group "
                                  f"{self.group!r}): cannot import {what}: {exc}") from None
            self._entries[name] = obj  # type: ignore[assignment]
            return obj  # type: ignore[return-value]
        return target

    def names(self) -> list[str]:
        """Every registered name, sorted (plug-ins included)."""
        self._read_plugins()
        return sorted(self._entries)

    def doc(self, name: str) -> str:
        """The one-line description ``name`` was registered with."""
        self._read_plugins()
        return self._docs.get(name, "")

    def __contains__(self, name: object) -> bool:
        self._read_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def load_entry_points(self) -> list[str]:
        """Register the third-party entries of :attr:`group` (once; a second call adds nothing);
        returns the names added.

        Raises
        ------
        RegistryError
            If a plug-in reuses a registered name (the other plug-ins are still registered).
        """
        if self._plugins_read:
            return []
        self._plugins_read = True  # once only, even if a plug-in clashes: a retry would only clash again
        added, clashes = [], []
        for ep in entry_points(group=self.group):
            if ep.name in self._entries:
                clashes.append(f"{ep.name!r} (from {ep.value})")
                continue
            self.register(ep.name, ep.value, doc=f"plug-in from {ep.value}")
            self._plugins[ep.name] = ep.value
            added.append(ep.name)
        if clashes:
            raise RegistryError(f"{self.kind} plug-ins clash with registered names: {', '.join(clashes)}")
        return added

    def describe(self) -> dict[str, Any]:
        """Name → description of every entry (plug-ins included)."""
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

