"""Declarative benchmark suites and their registry (DESIGN §3 "Harness").

A :class:`Suite` says *what* to run — which workloads with which seeds and
parameters, which policies, which solver and limits for the hindsight IP, and the
paper's reported numbers to compare with. :mod:`llmopt.harness` says *how* (parallel,
resumable); :mod:`llmopt.report` summarises the results.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from llmopt.registry import Registry

__all__ = ["WorkloadSpec", "Suite", "SUITES", "get_suite"]


class WorkloadSpec(NamedTuple):
    """One workload of a suite: a registered workload name, its seeds and parameters.

    ``workload`` is a name in :data:`llmopt.workloads.WORKLOADS` or a ``"module:attr"``
    path to a ``(seed, **params) -> Instance`` callable (use the latter for a custom
    workload that must also resolve in worker processes).
    """

    workload: str
    seeds: tuple[int, ...]
    params: Mapping[str, Any]


def _as_spec(entry: WorkloadSpec | Sequence[Any]) -> WorkloadSpec:
    if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 3):
        raise ValueError(f"suite workload entry must be (workload, seeds[, params]), got {entry!r}")
    workload, seeds = entry[0], entry[1]
    params = entry[2] if len(entry) == 3 else {}
    if not isinstance(workload, str) or not workload:
        raise ValueError(f"suite workload entry {entry!r}: workload must be a non-empty string")
    seeds_t = tuple(seeds)
    for s in seeds_t:
        if isinstance(s, bool) or not isinstance(s, int):
            raise ValueError(f"suite workload {workload!r}: seed {s!r} is not an integer")
    if len(set(seeds_t)) != len(seeds_t):
        raise ValueError(f"suite workload {workload!r}: duplicate seeds")
    if not isinstance(params, Mapping):
        raise ValueError(f"suite workload {workload!r}: params must be a mapping, got {params!r}")
    return WorkloadSpec(workload, seeds_t, dict(params))


@dataclass(frozen=True)
class Suite:
    """A benchmark suite: one task per (workload, seed).

    Parameters
    ----------
    name : str
    description : str
    workloads : tuple of WorkloadSpec
        ``(workload, seeds, params)`` entries; ``(workload, seeds)`` is accepted and
        gets empty params. Workload names must be unique within a suite (a task is
        identified by its workload and seed).
    policies : tuple of str
        Registered policies to simulate on every instance.
    reference : str
        The policy whose TEL enters the competitive ratio (one of ``policies``).
    solver : str
        Solver for the hindsight IP.
    ip_time_limit : float
        Seconds per hindsight IP solve.
    search_evals : int
        Local-search evaluations used for the IP's upper bound and warm start.
    paper : mapping
        Workload → the paper's reported numbers (``mean``, ``max``, ``min``, ``exact``,
        ``trials``), shown beside ours in reports.
    """

    name: str
    description: str
    workloads: tuple[WorkloadSpec, ...]
    policies: tuple[str, ...] = ("mc-sf", "fcfs")
    reference: str = "mc-sf"
    solver: str = "highs"
    ip_time_limit: float = 10.0
    search_evals: int = 200
    paper: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        specs = tuple(_as_spec(e) for e in self.workloads)
        object.__setattr__(self, "workloads", specs)
        object.__setattr__(self, "policies", tuple(self.policies))
        object.__setattr__(self, "paper", {k: dict(v) for k, v in dict(self.paper).items()})
        names = [s.workload for s in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"suite {self.name!r}: a workload appears twice; "
                             "tasks are keyed by (workload, seed)")
        if not self.policies:
            raise ValueError(f"suite {self.name!r}: no policies")
        if self.reference not in self.policies:
            raise ValueError(f"suite {self.name!r}: reference policy {self.reference!r} "
                             f"is not in {self.policies}")
        if self.ip_time_limit is not None and self.ip_time_limit <= 0:
            raise ValueError(f"suite {self.name!r}: ip_time_limit must be > 0")
        if self.search_evals < 0:
            raise ValueError(f"suite {self.name!r}: search_evals must be >= 0")

    def tasks(self) -> Iterator[tuple[WorkloadSpec, int]]:
        """Every ``(workload spec, seed)`` pair, in suite order."""
        for spec in self.workloads:
            for seed in spec.seeds:
                yield spec, seed

    @property
    def n_tasks(self) -> int:
        return sum(len(s.seeds) for s in self.workloads)

    def with_time_limit(self, seconds: float | None) -> Suite:
        """A copy with ``ip_time_limit`` replaced (``None`` keeps it)."""
        if seconds is None:
            return self
        return dataclasses.replace(self, ip_time_limit=float(seconds))

    def settings(self) -> dict[str, Any]:
        """What determines a task's record apart from its seed (for resume checks)."""
        return {
            "policies": list(self.policies),
            "reference": self.reference,
            "solver": self.solver,
            "ip_time_limit": self.ip_time_limit,
            "search_evals": self.search_evals,
            "params": {s.workload: dict(s.params) for s in self.workloads},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Suite:
        """Inverse of :meth:`to_dict` (e.g. the ``suite`` entry of a results folder's ``suite.json``)."""
        fields = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in fields}
        kwargs["workloads"] = tuple(
            (w["workload"], tuple(w["seeds"]), dict(w.get("params") or {})) for w in data.get("workloads", ())
        )
        if "policies" in kwargs:
            kwargs["policies"] = tuple(kwargs["policies"])
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the suite."""
        return {
            "name": self.name,
            "description": self.description,
            "workloads": [
                {"workload": s.workload, "seeds": list(s.seeds), "params": dict(s.params)}
                for s in self.workloads
            ],
            "policies": list(self.policies),
            "reference": self.reference,
            "solver": self.solver,
            "ip_time_limit": self.ip_time_limit,
            "search_evals": self.search_evals,
            "paper": {k: dict(v) for k, v in self.paper.items()},
        }


# Jaillet et al. §5.1 (200 trials per arrival model; ratio = MC-SF TEL / hindsight OPT).
_J_PAPER = {
    "jaillet-am1": {"mean": 1.005, "max": 1.074, "min": 1.000, "exact": 114, "trials": 200},
    "jaillet-am2": {"mean": 1.047, "max": 1.227, "min": 1.000, "trials": 200},
}

SUITES: Registry[Suite] = Registry("suite", "llmopt.suites")
SUITES.register(
    "quick",
    Suite(
        name="quick",
        description="Smoke test: J §5.1 arrival models 1 and 2, 4 seeds each",
        workloads=(
            WorkloadSpec("jaillet-am1", tuple(range(4)), {}),
            WorkloadSpec("jaillet-am2", tuple(range(4)), {}),
        ),
        ip_time_limit=5.0,
        search_evals=100,
        paper=_J_PAPER,
    ),
    "J §5.1 AM1 + AM2, seeds 0..3 (under 2 minutes on 2 cores)",
)
SUITES.register(
    "jaillet-synthetic",
    Suite(
        name="jaillet-synthetic",
        description="Jaillet et al. §5.1 reproduction: MC-SF vs hindsight OPT, 200 trials per arrival model",
        workloads=(
            WorkloadSpec("jaillet-am1", tuple(range(200)), {}),
            WorkloadSpec("jaillet-am2", tuple(range(200)), {}),
        ),
        ip_time_limit=5.0,
        search_evals=200,
        paper=_J_PAPER,
    ),
    "J §5.1 AM1 + AM2, seeds 0..199 each (Figure 2)",
)


def get_suite(name: str) -> Suite:
    """The registered suite ``name`` (raises :class:`~llmopt.registry.RegistryError`)."""
    return SUITES.get(name)
