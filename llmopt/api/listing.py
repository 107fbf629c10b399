"""What is registered: policies and solvers (``llmopt policies``, ``llmopt solvers``).

Both read only the registries and the installed packages' metadata: no solver backend, NumPy or SciPy
is imported, so the two commands start as fast as ``llmopt --help``. Third-party plug-ins are listed
when plug-in loading is on (the command line's default, ``--no-plugins`` turns it off).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PolicyListing", "SolverListing", "list_policies", "list_solvers"]


@dataclass(frozen=True)
class PolicyListing:
    """One registered policy: its ``name`` and the one-line ``description`` it was registered with."""

    name: str
    description: str


@dataclass(frozen=True)
class SolverListing:
    """One registered solver and whether it is usable here.

    ``available`` is false with the reason in ``note`` when the backend package or its licence is
    missing, or when the plug-in itself is broken (then ``note`` is ``"ErrorType: message"``);
    ``version`` is the installed backend's version (``None`` when not installed); ``capabilities``
    are sorted; otherwise ``note`` holds the licence note of a solver that has one.
    """

    name: str
    available: bool
    version: str | None
    capabilities: tuple[str, ...]
    note: str


def list_policies() -> list[PolicyListing]:
    """Every registered policy, sorted by name (``llmopt policies``).

    Returns
    -------
    list of PolicyListing
        Name and one-line description of each policy, plug-ins included.

    Examples
    --------
    >>> import llmopt.api
    >>> "mc-sf" in [p.name for p in llmopt.api.list_policies()]
    True
    """
    from llmopt.policies import POLICIES

    return [PolicyListing(name, POLICIES.doc(name)) for name in POLICIES.names()]


def list_solvers() -> list[SolverListing]:
    """Every registered solver, sorted by name, and whether it is usable here (``llmopt solvers``).

    No backend is imported: availability and versions come from the installed packages' metadata.
    A plug-in whose class raises while it is asked is listed as unavailable with the error as its
    note rather than ending the listing.

    Returns
    -------
    list of SolverListing

    Examples
    --------
    >>> import llmopt.api
    >>> all(isinstance(s.available, bool) for s in llmopt.api.list_solvers())
    True
    """
    from llmopt.solvers import SOLVERS, solver_status

    out = []
    for name in SOLVERS.names():
        try:
            cls = SOLVERS.get(name)
            ok, why = solver_status(name)
            version = cls.version()
            caps = tuple(sorted(str(c) for c in cls.info.capabilities))
            note = why or (cls.licence_note() if hasattr(cls, "licence_note") else "")
        except Exception as exc:  # one broken plug-in must not hide the others
            ok, version, caps, note = False, None, (), f"{type(exc).__name__}: {exc}"
        out.append(SolverListing(name, bool(ok), version, caps, note))
    return out
