"""Shared pieces of the golden-number tests of the J / bound results folders
(``test_golden_jaillet.py``, ``test_golden_bounds.py``, ``test_golden_amin.py``).

The expected values are read from the committed files under ``results/`` (so regenerating a
folder updates them), and every comparison is exact for integers, booleans and strings and to
``1e-9`` (relative or absolute) for floats. Timing fields are never compared.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
TOL = 1e-9

#: HiGHS branch-and-bound nodes for the golden IPs that must prove optimality. Measured with highspy 1.16
#: (one thread, seed 0): the K-worker IPs of ``test_golden_cluster.py`` and chen-theory's n = 500 IP close
#: at the root (1 node), Wang's EC.1 M = 16 IP needs 31–100. The limit, not a wall clock, turns a
#: regression into a failure instead of a hang, so the verdict is the same on a loaded or a fast machine.
NODE_LIMIT = 1000


@contextlib.contextmanager
def highs_by_nodes(nodes: int = NODE_LIMIT) -> Iterator[str]:
    """HiGHS limited by ``nodes`` branch-and-bound nodes (and no time) while the block runs
    (:func:`llmopt.solvers.highs.node_limited_highs`); yields its solver name, for ``solver=`` with
    ``time_limit=None``."""
    from llmopt.solvers.highs import node_limited_highs

    yield node_limited_highs(nodes)


@functools.cache
def suite_of(folder: str) -> Any:
    """The :class:`~llmopt.bench.suites.Suite` stored in ``results/<folder>/suite.json``."""
    from llmopt.bench.suites import Suite

    return Suite.from_dict(json.loads((RESULTS / folder / "suite.json").read_text())["suite"])


def records(folder: str, name: str = "trials.jsonl") -> list[dict[str, Any]]:
    """The committed records of ``results/<folder>/<name>``."""
    text = (RESULTS / folder / name).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def record(folder: str, workload: str, seed: int, params: Mapping[str, Any] | None = None, *,
           name: str = "trials.jsonl", **match: Any) -> dict[str, Any]:
    """The one committed record with this workload, seed (and params, and other fields in ``match``)."""
    found = [r for r in records(folder, name) if r["workload"] == workload and r["seed"] == seed
             and (params is None or r.get("params") == dict(params))
             and all(r.get(k) == v for k, v in match.items())]
    assert len(found) == 1, f"results/{folder}/{name}: {len(found)} records for {workload} seed {seed} {params}"
    return found[0]


def task_of(suite: Any, rec: Mapping[str, Any]) -> Any:
    """The task of ``suite`` that produced the committed record ``rec``."""
    found = [t for t in suite.tasks() if t.spec.workload == rec["workload"] and t.seed == rec["seed"]
             and json.dumps(dict(t.spec.params), sort_keys=True) == json.dumps(rec["params"], sort_keys=True)]
    assert len(found) == 1, f"suite {suite.name}: {len(found)} tasks for {rec['workload']} seed {rec['seed']}"
    return found[0]


def same(a: Any, b: Any) -> bool:
    """Exact for everything but floats (``1e-9`` relative or absolute); recursive for lists and dicts."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, int | float) or not isinstance(b, int | float):
            return False
        return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def assert_fields(where: str, committed: Mapping[str, Any], recomputed: Mapping[str, Any],
                  fields: Iterable[str]) -> None:
    """Every field in ``fields`` equal in both records (see :func:`same`); one message lists all that differ."""
    fields = list(fields)
    assert fields, "no field to compare"
    missing = [k for k in fields if k not in committed or k not in recomputed]
    assert not missing, f"{where}: fields missing from the committed or the recomputed record: {missing}"
    diffs = [f"  {k}: committed {committed[k]!r}, recomputed {recomputed[k]!r}"
             for k in fields if not same(committed[k], recomputed[k])]
    assert not diffs, (f"{where}: recomputed numbers differ from the committed ones — if the change is "
                       "intended, regenerate the results folder:\n" + "\n".join(diffs))


def deterministic_fields(rec: Mapping[str, Any]) -> list[str]:
    """The fields of a suite record that are not wall-clock times."""
    from llmopt.bench.tasks import is_timing_field

    return [k for k in rec if not is_timing_field(k)]


def markdown_row(path: Path, first_cells: tuple[str, ...]) -> list[str]:
    """The cells of the one Markdown table row of ``path`` whose leading cells are ``first_cells``."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if tuple(cells[:len(first_cells)]) == first_cells:
            rows.append(cells)
    assert len(rows) == 1, f"{path}: {len(rows)} table rows start with {first_cells}"
    return rows[0]


def hindsight_before_ip(suite: Any, task: Any, upper_bounds: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The deterministic, pre-IP part of a ``hindsight`` task's record: the policies' verified TELs,
    the upper-bound stages' TELs (``heuristic_*``), every bound stage's certified value (``bound_*``,
    LPs solved to optimality), the incumbent before the IP and the statistics of the IP model
    (``model_*``), exactly as :func:`llmopt.bench.hindsight_task.fill_record` computes them — but
    without the time-limited IP solve, so nothing here depends on the machine's load.

    ``upper_bounds`` replaces the suite's upper-bound stages (to leave out costly ones whose
    result cannot change the incumbent).
    """
    from llmopt.bench import hindsight_task
    from llmopt.bench.tasks import resolve_workload
    from llmopt.formulations import make_formulation
    from llmopt.model.windows import WINDOWS
    from llmopt.opt.hindsight import solve_hindsight

    instance = resolve_workload(task.spec.workload)(task.seed, **dict(task.spec.params))
    rec = hindsight_task.blank_record(suite, task)
    rec.update(instance=instance.name or f"{task.spec.workload}/seed={task.seed}", n=instance.n, M=instance.M)
    simulated = hindsight_task._simulate_policies(instance, suite, rec)
    h = solve_hindsight(
        instance, solver=suite.solver, formulation=suite.formulation, windows=suite.windows,
        bounds=tuple(suite.bounds), upper_bounds=tuple(upper_bounds or suite.upper_bounds), time_limit=None,
        ip_time_limit=suite.ip_time_limit, threads=1, seed=task.seed, search_evals=suite.search_evals,
        lns_iterations=suite.lns_iterations, cp_sat_seconds=suite.cp_sat_seconds, max_nnz=suite.max_nnz,
        schedules=simulated, solve_ip=False)
    for b in h.bounds:
        rec[f"bound_{b.name}"] = b.value
        rec[f"bound_{b.name}_verified"] = b.verified
    for name, tel in dict(h.heuristics or {}).items():
        rec[f"heuristic_{name}"] = tel
    rec["incumbent"], rec["incumbent_source"] = h.incumbent, h.incumbent_source
    # The model the IP stage would build (llmopt.opt.hindsight._Run._ip): windows from the incumbent.
    form = make_formulation(suite.formulation)
    win = WINDOWS.get(suite.windows)(instance, h.incumbent)
    model = form.build(instance, win)
    describe = getattr(form, "describe", None)
    stats = {**model.stats(), "horizon": win.horizon, "windows": win.reason, "formulation": form.name,
             **(describe(instance, model) if describe is not None else {})}
    for k, v in stats.items():
        rec[f"model_{k}"] = v
    return rec
