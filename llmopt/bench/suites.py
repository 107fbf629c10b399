"""Declarative benchmark suites and their registry (DESIGN §3 "Harness").

A :class:`Suite` says *what* to run — which workloads with which parameters and
seeds, which policies, which hindsight pipeline (formulation, bounds, upper bounds,
solver, limits), and the paper's reported numbers to compare with. What one task
computes is :mod:`llmopt.bench.tasks`; how tasks are executed is
:mod:`llmopt.bench.executors`; where results live is :mod:`llmopt.bench.store`; :mod:`llmopt.bench.harness`
ties them together and :mod:`llmopt.report.summary` summarises the results.

A task is one ``(workload, parameters, seed)``: a suite may hold the same workload
several times with different parameters (e.g. the ``ip-scaling`` suite, one entry per
``(M, n)`` point).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from llmopt.bench.grid import expand_suite_policies
from llmopt.bench.kinds import TASK_KINDS
from llmopt.model.registry import Registry
from llmopt.opt.defaults import (
    DEFAULT_BOUNDS,
    DEFAULT_CP_SAT_SECONDS,
    DEFAULT_LNS_ITERATIONS,
    DEFAULT_MAX_NNZ,
    DEFAULT_UPPER_BOUNDS,
)
from llmopt.solvers import DEFAULT_SOLVER

__all__ = ["WorkloadSpec", "Task", "TaskKey", "Suite", "SUITES", "get_suite", "canonical_params"]

TaskKey = tuple[str, str, int]
"""``(workload, canonical parameters JSON, seed)``: what identifies a task and its record."""


def canonical_params(params: Mapping[str, Any]) -> str:
    """The canonical JSON text of a parameter mapping (sorted keys, no spaces).

    Tuples and lists give the same text, so a suite defined in Python and the same
    suite read back from JSON key their tasks identically.

    Raises
    ------
    ValueError
        If ``params`` is not JSON-serialisable (or holds NaN or infinity).
    """
    try:
        return json.dumps(dict(params), sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"parameters {params!r} are not plain JSON values ({exc})") from None


def _params_label(params: Mapping[str, Any]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, list) and len(v) == 2 and v[0] == v[1]:
            return json.dumps(v[0])  # a fixed range (n, n) reads as n
        return json.dumps(v, separators=(",", ":"))

    return " ".join(f"{k}={fmt(v)}" for k, v in sorted(params.items()))


class WorkloadSpec(NamedTuple):
    """One workload entry of a suite: a workload, its parameters and seeds.

    ``workload`` is a name in :data:`llmopt.workloads.WORKLOADS` or a ``"module:attr"``
    path to a ``(seed, **params) -> Instance`` callable (use the latter for a custom
    workload that must also resolve in worker processes). ``params`` must be plain JSON
    values; tuples are stored as lists. ``label`` names the entry in reports (default:
    the workload name, or the workload and its parameters when the workload appears
    more than once in the suite).
    """

    workload: str
    seeds: tuple[int, ...]
    params: Mapping[str, Any]
    label: str = ""


class Task(NamedTuple):
    """One unit of work: ``seed`` of workload entry ``spec``."""

    spec: WorkloadSpec
    seed: int

    @property
    def key(self) -> TaskKey:
        return (self.spec.workload, canonical_params(self.spec.params), self.seed)

    @property
    def label(self) -> str:
        """``LABEL seed S`` for messages."""
        return f"{self.spec.label or self.spec.workload} seed {self.seed}"


def _as_spec(entry: WorkloadSpec | Sequence[Any]) -> WorkloadSpec:
    if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 3, 4):
        raise ValueError(f"suite workload entry must be (workload, seeds[, params[, label]]), got {entry!r}")
    workload, seeds = entry[0], entry[1]
    params = entry[2] if len(entry) >= 3 else {}
    label = entry[3] if len(entry) == 4 else ""
    if not isinstance(workload, str) or not workload:
        raise ValueError(f"suite workload entry {entry!r}: workload must be a non-empty string")
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
        raise ValueError(f"suite workload {workload!r}: seeds must be a list of integers, got {seeds!r}")
    seeds_t = tuple(seeds)
    if not seeds_t:
        raise ValueError(f"suite workload {workload!r}: seeds is empty; list at least one integer seed, e.g. [0]")
    for s in seeds_t:
        if isinstance(s, bool) or not isinstance(s, int):
            raise ValueError(f"suite workload {workload!r}: seed {s!r} is not an integer")
        if s < 0:
            raise ValueError(f"suite workload {workload!r}: seed {s} is negative; seeds are integers >= 0")
    if len(set(seeds_t)) != len(seeds_t):
        raise ValueError(f"suite workload {workload!r}: duplicate seeds")
    if not isinstance(params, Mapping):
        raise ValueError(f"suite workload {workload!r}: params must be a mapping, got {params!r}")
    try:
        params = json.loads(canonical_params(params))
    except ValueError as exc:
        raise ValueError(f"suite workload {workload!r}: {exc}") from None
    if not isinstance(label, str):
        raise ValueError(f"suite workload {workload!r}: label must be a string, got {label!r}")
    return WorkloadSpec(workload, seeds_t, params, label)


def _names(value: Any, what: str, suite: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(f"suite {suite!r}: {what} must be a list of names, got {value!r}")
    names = tuple(value)
    for n in names:
        if not isinstance(n, str) or not n:
            raise ValueError(f"suite {suite!r}: {what} must be non-empty strings, got {n!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"suite {suite!r}: duplicate name in {what} {list(names)}")
    return names


@dataclass(frozen=True)
class Suite:
    """A benchmark suite: one task per ``(workload, parameters, seed)``.

    Component names (workloads, policies, solver, formulation, windows, bounds, upper bounds)
    are only checked for form here and resolved when a task runs, so a suite may name
    plug-ins that are registered later (see :func:`llmopt.bench.plugins.conformance.check_suite`).

    Parameters
    ----------
    name : str
    description : str
    workloads : tuple of WorkloadSpec
        ``(workload, seeds[, params[, label]])`` entries. A workload may appear several
        times with different parameters; the same ``(workload, params)`` twice is an
        error (merge the seeds), as are two entries with the same label.
    policies : tuple of str
        Registered policies to simulate on every instance.
    reference : str
        The policy whose TEL enters the competitive ratio (one of ``policies``).
    solver : str
        Solver for the hindsight IP.
    ip_time_limit : float or None
        Seconds per hindsight IP solve (``None``: no limit). With ``ip_node_limit`` set it is only a
        safety cap: a trial it stopped records ``ip_time_capped`` true and a warning, since its row then
        depends on the machine's speed and load.
    ip_node_limit : int or None
        Branch-and-bound nodes per hindsight IP solve (``None``: none). A node limit stops the solve
        where the model alone says, so a rerun on any machine, idle or loaded, records the same rows;
        the solver must have the ``node_limit`` capability.
    search_evals : int
        Local-search evaluations used for the IP's upper bound and warm start.
    lns_iterations : int
        Sub-IPs of the ``lns`` upper-bound stage (when it is one of ``upper_bounds``).
    cp_sat_seconds : float
        Deterministic seconds of the ``cp-sat`` upper-bound stage (when it is one of ``upper_bounds``).
    formulation : str
        Registered formulation of the hindsight IP.
    windows : str
        Registered start-windows stage of the hindsight pipeline.
    bounds : tuple of str
        Lower-bound providers of the hindsight pipeline.
    upper_bounds : tuple of str
        Upper-bound stages (policies, ``local-search``, ``lns``, ``cp-sat``) of the hindsight pipeline.
    paper : mapping
        Workload label → the paper's reported numbers (``mean``, ``max``, ``min``,
        ``exact``, ``trials``), shown beside ours in reports.
    task_table : bool
        Reports list every task (instance and model size, status, OPT or incumbent,
        bound, gap, reference TEL, time) besides the per-workload summary; for suites of
        a few large instances such as ``ip-scaling``.
    kind : {"hindsight", "trace", "capacity"}
        ``"hindsight"`` (default): discrete instances, policies against the hindsight
        pipeline (:mod:`llmopt.bench.tasks`). ``"trace"``: continuous-time instances from
        real traces, policies (spec strings such as ``"alpha-protection:alpha=0.2"``) run
        by the continuous engine with ``cost_model`` and compared by mean latency
        (:mod:`llmopt.bench.trace_task`); the hindsight fields are ignored.
    cost_model : str
        Registered cost model of a trace suite (:data:`llmopt.engine.cost_model.COST_MODELS`).
    loop_limit : int
        Loop guard of the simulations (both kinds of suite): evictions with no completion in
        between before a run is stopped as an eviction loop.
    max_nnz : int
        Largest hindsight IP (nonzeros) the pipeline builds; a larger one is skipped up
        front (the bounds and the best schedule found are still reported).
    routers, latency_target, k_max
        ``"capacity"`` suites only (:mod:`llmopt.bench.capacity_task`): router specs, the target
        (``"mean:200"``, ``"p99:60"``, …) and the largest number of workers tried; every policy ×
        router gets the smallest K that meets the target, K = 1, 2, … tried in turn.
    extra_report : str
        ``"module:function"`` called as ``function(out_dir, suite, records) -> list[str]``
        after the standard report, for a suite's own tables and figures (e.g. the W
        reproductions); returns the lines to list under "Suite tables and figures" in ``summary.md``.
    """

    name: str
    description: str
    workloads: tuple[WorkloadSpec, ...]
    policies: tuple[str, ...] = ("mc-sf", "fcfs")
    reference: str = "mc-sf"
    solver: str = DEFAULT_SOLVER
    ip_time_limit: float | None = 10.0
    ip_node_limit: int | None = None
    search_evals: int = 200
    lns_iterations: int = DEFAULT_LNS_ITERATIONS
    cp_sat_seconds: float = DEFAULT_CP_SAT_SECONDS
    formulation: str = "hindsight-ip"
    windows: str = "upper-bound"
    bounds: tuple[str, ...] = DEFAULT_BOUNDS
    upper_bounds: tuple[str, ...] = DEFAULT_UPPER_BOUNDS
    paper: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    task_table: bool = False
    kind: str = "hindsight"
    cost_model: str = "llama2-70b-a100-tp2"
    loop_limit: int = 10_000
    max_nnz: int = DEFAULT_MAX_NNZ
    extra_report: str = ""
    routers: tuple[str, ...] = ("round-robin",)
    latency_target: str = "mean:200"
    k_max: int = 16

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"suite name must be a non-empty string, got {self.name!r}")
        parts = self.name.replace("\\", "/").split("/")
        if self.name.startswith(("/", "\\")) or ".." in parts or self.name == ".":
            # the name is the default results folder, runs/NAME: it must stay inside runs/
            raise ValueError(f"suite name {self.name!r} must not start with / nor have a .. part "
                             "(it names the results folder, runs/NAME)")
        if isinstance(self.workloads, (str, bytes)) or not isinstance(self.workloads, Sequence):
            raise ValueError(f"suite {self.name!r}: workloads must be a list of entries")
        specs = [_as_spec(e) for e in self.workloads]
        if not specs:
            raise ValueError(f"suite {self.name!r}: no workloads")
        keys = [(s.workload, canonical_params(s.params)) for s in specs]
        for i, k in enumerate(keys):
            if k in keys[:i]:
                raise ValueError(f"suite {self.name!r}: workload {k[0]!r} with parameters {k[1]} appears twice; "
                                 "merge its seeds into one entry")
        counts = {w: sum(1 for s in specs if s.workload == w) for w in {s.workload for s in specs}}
        specs = [s if s.label else s._replace(
            label=s.workload if counts[s.workload] == 1 or not s.params else f"{s.workload} {_params_label(s.params)}")
            for s in specs]
        labels = [s.label for s in specs]
        if len(set(labels)) != len(labels):
            raise ValueError(f"suite {self.name!r}: two workload entries have the same label")
        object.__setattr__(self, "workloads", tuple(specs))
        object.__setattr__(self, "policies", expand_suite_policies(self.policies, self.name))  # "p:a={1,2}" grids
        for attr in ("policies", "bounds", "upper_bounds"):
            object.__setattr__(self, attr, _names(getattr(self, attr), attr, self.name))
        object.__setattr__(self, "paper", {k: dict(v) for k, v in dict(self.paper).items()})
        if not self.policies:
            raise ValueError(f"suite {self.name!r}: no policies")
        if self.reference not in self.policies:
            raise ValueError(f"suite {self.name!r}: reference policy {self.reference!r} "
                             f"is not in {list(self.policies)}")
        for attr in ("solver", "formulation", "windows"):
            if not isinstance(getattr(self, attr), str) or not getattr(self, attr):
                raise ValueError(f"suite {self.name!r}: {attr} must be a non-empty string")
        if self.ip_time_limit is not None:
            if (isinstance(self.ip_time_limit, bool) or not isinstance(self.ip_time_limit, (int, float))
                    or not math.isfinite(self.ip_time_limit) or self.ip_time_limit <= 0):
                raise ValueError(f"suite {self.name!r}: ip_time_limit must be a positive number of seconds, "
                                 f"got {self.ip_time_limit!r}")
            object.__setattr__(self, "ip_time_limit", float(self.ip_time_limit))
        if self.ip_node_limit is not None and (isinstance(self.ip_node_limit, bool)
                                               or not isinstance(self.ip_node_limit, int) or self.ip_node_limit < 1):
            raise ValueError(f"suite {self.name!r}: ip_node_limit must be an integer >= 1 (branch-and-bound nodes) "
                             f"or null, got {self.ip_node_limit!r}")
        if isinstance(self.search_evals, bool) or not isinstance(self.search_evals, int) or self.search_evals < 0:
            raise ValueError(f"suite {self.name!r}: search_evals must be an integer >= 0")
        if (isinstance(self.lns_iterations, bool) or not isinstance(self.lns_iterations, int)
                or self.lns_iterations < 0):
            raise ValueError(f"suite {self.name!r}: lns_iterations must be an integer >= 0")
        if (isinstance(self.cp_sat_seconds, bool) or not isinstance(self.cp_sat_seconds, (int, float))
                or not math.isfinite(self.cp_sat_seconds) or self.cp_sat_seconds <= 0):
            raise ValueError(f"suite {self.name!r}: cp_sat_seconds must be a positive number")
        object.__setattr__(self, "cp_sat_seconds", float(self.cp_sat_seconds))
        if not isinstance(self.task_table, bool):
            raise ValueError(f"suite {self.name!r}: task_table must be true or false")
        if self.kind not in TASK_KINDS:
            raise ValueError(f"suite {self.name!r}: kind must be one of {', '.join(TASK_KINDS.names())} "
                             f"(llmopt.bench.kinds), got {self.kind!r}")
        if not isinstance(self.cost_model, str) or not self.cost_model:
            raise ValueError(f"suite {self.name!r}: cost_model must be a non-empty string")
        if isinstance(self.loop_limit, bool) or not isinstance(self.loop_limit, int) or self.loop_limit < 1:
            raise ValueError(f"suite {self.name!r}: loop_limit must be an integer >= 1")
        if isinstance(self.max_nnz, bool) or not isinstance(self.max_nnz, int) or self.max_nnz < 1:
            raise ValueError(f"suite {self.name!r}: max_nnz must be an integer >= 1")
        if not isinstance(self.extra_report, str) or (self.extra_report and ":" not in self.extra_report):
            raise ValueError(f"suite {self.name!r}: extra_report must be 'module:function' or empty")
        object.__setattr__(self, "routers", _names(self.routers, "routers", self.name))
        if not self.routers:
            raise ValueError(f"suite {self.name!r}: no routers")
        from llmopt.capacity.planning import LatencyTarget

        try:
            LatencyTarget.parse(self.latency_target)
        except ValueError as exc:
            raise ValueError(f"suite {self.name!r}: {exc}") from None
        if isinstance(self.k_max, bool) or not isinstance(self.k_max, int) or self.k_max < 1:
            raise ValueError(f"suite {self.name!r}: k_max must be an integer >= 1")

    def tasks(self) -> Iterator[Task]:
        """Every task, in suite order (entries in order, seeds in order)."""
        for spec in self.workloads:
            for seed in spec.seeds:
                yield Task(spec, seed)

    @property
    def n_tasks(self) -> int:
        return sum(len(s.seeds) for s in self.workloads)

    def spec_for(self, workload: str, params: Mapping[str, Any]) -> WorkloadSpec | None:
        """The entry with this workload and parameters, if any."""
        key = canonical_params(params)
        for s in self.workloads:
            if s.workload == workload and canonical_params(s.params) == key:
                return s
        return None

    def label_for(self, workload: str, params: Mapping[str, Any]) -> str:
        """The report label of a record's workload entry (also for entries no longer in the suite)."""
        spec = self.spec_for(workload, params)
        if spec is not None:
            return spec.label
        return f"{workload} {_params_label(params)}" if params else workload

    def with_time_limit(self, seconds: float | None) -> Suite:
        """A copy with ``ip_time_limit`` replaced (``None`` keeps it)."""
        if seconds is None:
            return self
        return dataclasses.replace(self, ip_time_limit=float(seconds))

    def with_seeds(self, count: int | None) -> Suite:
        """A copy whose every workload entry runs seeds ``0 … count − 1`` (``None`` keeps them).

        Tasks are keyed by seed, so a folder run with more seeds resumes the earlier ones.
        """
        if count is None:
            return self
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"suite {self.name!r}: the seed count must be an integer >= 1, got {count!r}")
        return dataclasses.replace(self, workloads=tuple(s._replace(seeds=tuple(range(count)))
                                                         for s in self.workloads))

    def settings(self) -> dict[str, Any]:
        """What determines a task's record apart from its key (for resume checks)."""
        return {
            "policies": list(self.policies),
            "reference": self.reference,
            "solver": self.solver,
            "ip_time_limit": self.ip_time_limit,
            "ip_node_limit": self.ip_node_limit,
            "search_evals": self.search_evals,
            "lns_iterations": self.lns_iterations,
            "cp_sat_seconds": self.cp_sat_seconds,
            "formulation": self.formulation,
            "windows": self.windows,
            "bounds": list(self.bounds),
            "upper_bounds": list(self.upper_bounds),
            "kind": self.kind,
            "cost_model": self.cost_model,
            "loop_limit": self.loop_limit,
            "max_nnz": self.max_nnz,
        } | ({"routers": list(self.routers), "latency_target": self.latency_target, "k_max": self.k_max}
             if self.kind == "capacity" else {})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Suite:
        """Inverse of :meth:`to_dict` (e.g. a ``--suite-file``, or the ``suite`` entry of ``suite.json``).

        Raises
        ------
        ValueError
            If a field is missing, unknown or invalid; the message names it.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"a suite must be a JSON object, got {type(data).__name__}")
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - fields)
        if unknown:
            raise ValueError(f"unknown suite field(s) {', '.join(map(repr, unknown))}; "
                             f"known: {', '.join(sorted(fields))}")
        for required in ("name", "workloads"):
            if required not in data:
                raise ValueError(f"suite field {required!r} is missing")
        kwargs = dict(data)
        kwargs.setdefault("description", "")
        if data["workloads"] is not None and (isinstance(data["workloads"], (str, bytes, Mapping))
                                              or not isinstance(data["workloads"], Sequence)):
            raise ValueError(f"suite field 'workloads' must be a list of objects with 'workload' and 'seeds', "
                             f"got {data['workloads']!r}")
        entries = []
        for i, w in enumerate(data["workloads"] or ()):
            if not isinstance(w, Mapping) or "workload" not in w or "seeds" not in w:
                raise ValueError(f"suite workloads[{i}]: must be an object with 'workload' and 'seeds'")
            extra = sorted(set(w) - {"workload", "seeds", "params", "label"})
            if extra:
                raise ValueError(f"suite workloads[{i}]: unknown field(s) {', '.join(map(repr, extra))}")
            if not isinstance(w["seeds"], Sequence) or isinstance(w["seeds"], str):
                raise ValueError(f"suite workloads[{i}]: 'seeds' must be a list of integers")
            entries.append((w["workload"], tuple(w["seeds"]), w.get("params") or {}, w.get("label") or ""))
        kwargs["workloads"] = tuple(entries)
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise ValueError(str(exc)) from None

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the suite."""
        return {
            "name": self.name,
            "description": self.description,
            "workloads": [
                {"workload": s.workload, "seeds": list(s.seeds), "params": dict(s.params), "label": s.label}
                for s in self.workloads
            ],
            "policies": list(self.policies),
            "reference": self.reference,
            "solver": self.solver,
            "ip_time_limit": self.ip_time_limit,
            "ip_node_limit": self.ip_node_limit,
            "search_evals": self.search_evals,
            "lns_iterations": self.lns_iterations,
            "cp_sat_seconds": self.cp_sat_seconds,
            "formulation": self.formulation,
            "windows": self.windows,
            "bounds": list(self.bounds),
            "upper_bounds": list(self.upper_bounds),
            "paper": {k: dict(v) for k, v in self.paper.items()},
            "task_table": self.task_table,
            "kind": self.kind,
            "cost_model": self.cost_model,
            "loop_limit": self.loop_limit,
            "max_nnz": self.max_nnz,
            "extra_report": self.extra_report,
        } | ({"routers": list(self.routers), "latency_target": self.latency_target, "k_max": self.k_max}
             if self.kind == "capacity" else {})


SUITES: Registry[Suite] = Registry("suite", "llmopt.suites")
# The papers' suites live beside their reports (llmopt.papers); they are built on first use.
SUITES.register("quick", "llmopt.papers.jaillet.suites:QUICK",
                "J §5.1 AM1 + AM2, seeds 0..3 (36 s, 37 s of CPU, on 2 cores at load 1.4–2.2)")
SUITES.register("jaillet-synthetic", "llmopt.papers.jaillet.suites:JAILLET_SYNTHETIC",
                "J §5.1 AM1 + AM2, seeds 0..199 each (Figure 2)")
SUITES.register("ip-scaling", "llmopt.papers.jaillet.suites:IP_SCALING",
                "AM1 at fixed (M, n), 14 points up to n = 24, 600 s per IP (results/jaillet/ip-scaling)")
SUITES.register("jaillet-certified", "llmopt.papers.jaillet.suites:JAILLET_CERTIFIED",
                "the 400 jaillet-synthetic trials with the lns stage and the energy bound (results/jaillet/certified)")
SUITES.register("opt-frontier", "llmopt.papers.jaillet.suites:OPT_FRONTIER",
                "AM1 (n = 16, 20, 22, 24) and AM2 (T = 20…44, n = 13…35) at M = 40: proven OPT or certified gap, "
                "600 s per IP")
SUITES.register("jaillet-table1", "llmopt.papers.jaillet.suites:JAILLET_TABLE1",
                "J Table 1: 1,000 LMSYS requests at λ = 50, 8 algorithms, 50 runs (about 1 min on 2 cores)")
SUITES.register("jaillet-lmsys", "llmopt.papers.jaillet.suites:JAILLET_LMSYS",
                "J §5.2: 10,000 LMSYS requests at λ = 50 and 10, α grid and α/β sweeps (a few minutes)")
SUITES.register("jaillet-fig3", "llmopt.papers.jaillet.fig3:JAILLET_FIG3",
                "J Figure 3: 1,000…10,000 LMSYS requests at λ = 50 and 10, 8 algorithms, 3 seeds: slopes, 200 s cap "
                "(volumes: prefixes of one stream per seed, as the authors' released code)")
SUITES.register("jaillet-fig3-separate", "llmopt.papers.jaillet.fig3:JAILLET_FIG3_SEPARATE",
                "J Figure 3 with every volume a separate sample (the other reading of how the volumes are drawn)")
SUITES.register("jaillet-capacity", "llmopt.papers.jaillet.capacity:JAILLET_CAPACITY",
                "J0 §8.2: smallest number of 2×A100 workers per Table 1 algorithm and router for a 200 s mean "
                "latency at 10,000 LMSYS arrivals, λ = 50 and 10 (multi-worker engine)")
SUITES.register("wang-synthetic", "llmopt.papers.wang.suites:WANG_SYNTHETIC",
                "W Table EC.1: five distributions x 10 trials, n = 100/200, M = 100 (about 25 min on 2 cores)")
SUITES.register("wang-mixed", "llmopt.papers.wang.suites:WANG_MIXED",
                "W Figure 8: n = 200..2,000 LMSYS + arXiv mix, 6 algorithms, 3 seeds (about 15 min on 2 cores)")
SUITES.register("chen-theory", "llmopt.papers.chen.theory_report:CHEN_THEORY",
                "C Figures 1-3: A_min / A_ℓ / A_max / A_random vs H-SF and a certified bound, beside the "
                "closed forms (s = 1 simulations; the closed forms at s = 0)")
SUITES.register("chen-cor2", "llmopt.papers.chen.cor2:CHEN_COR2",
                "C Corollary 2: multi-interval A_min per bucket width vs the basic interval, beside the closed form "
                "(about 2 min on 2 cores)")
SUITES.register("chen-lmsys", "llmopt.papers.chen.lmsys_report:CHEN_LMSYS",
                "C §6 Figures 5-7: 2,000 LMSYS requests, H-SF / A_max / A_min under the three prediction "
                "settings, Llama2-70B on 2×A100, M = 16,492")

SUITES.register("production-vs-papers", "llmopt.papers.production.vs_papers:PRODUCTION_VS_PAPERS",
                "paper policies (MC-SF, FCFS, Sorted-F, A_min, α-protection) vs vllm / sarathi / orca on LMSYS, "
                "arXiv, Azure conv, n = 1,000, 3 rates each, max_num_seqs 128, blocks of 16, M = 16,492")
SUITES.register("production-vs-papers-vidur-m", "llmopt.papers.production.vs_papers:PRODUCTION_VS_PAPERS_VIDUR_M",
                "production-vs-papers at Vidur's M = 53,248")
SUITES.register("production-vs-papers-10k", "llmopt.papers.production.vs_papers:PRODUCTION_VS_PAPERS_10K",
                "production-vs-papers with n = 10,000 per instance")
SUITES.register("production-vs-papers-discrete",
                "llmopt.papers.production.vs_papers:PRODUCTION_VS_PAPERS_DISCRETE",
                "paper policies and vllm / orca on AM1 + intervals, TEL beside the certified bound on OPT")


def get_suite(name: str) -> Suite:
    """The registered suite ``name`` (raises :class:`~llmopt.model.registry.RegistryError`)."""
    return SUITES.get(name)
