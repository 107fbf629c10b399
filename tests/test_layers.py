"""The house has wings, and imports run one way (DESIGN §3).

Each wing is a subpackage of ``llmopt`` (``formulations/`` and ``solvers/`` are mapped into it as
``llmopt.formulations`` and ``llmopt.solvers``). :data:`WINGS` lists, for each wing, the wings it
may import, *including imports inside functions*: a lazy import that runs up the house is still
an import up. The order, bottom to top::

    model → verify, formulations → solvers → engine → policies, workloads → opt, capacity → bench → report
    → papers → cli

Also: the checker imports only the model; no two modules import each other, even through a chain
(no circle); formulations build models only; no solver is named outside ``solvers/``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: wing -> the wings it may import (itself always)
WINGS: dict[str, set[str]] = {
    "model": set(),
    "verify": {"model"},
    "formulations": {"model"},
    "solvers": {"model", "formulations"},
    "engine": {"model"},
    "policies": {"model", "engine", "formulations", "solvers"},
    "workloads": {"model"},
    "opt": {"model", "verify", "formulations", "solvers", "engine", "policies", "workloads"},
    "capacity": {"model", "verify", "engine", "policies", "workloads"},
    "bench": {"model", "verify", "formulations", "solvers", "engine", "policies", "workloads", "opt", "capacity"},
    "report": {"model", "verify", "formulations", "solvers", "engine", "policies", "workloads", "opt", "capacity",
               "bench"},
    "papers": {"model", "verify", "formulations", "solvers", "engine", "policies", "workloads", "opt", "capacity",
               "bench", "report"},
    "cli": {"model", "verify", "formulations", "solvers", "engine", "policies", "workloads", "opt", "capacity",
            "bench", "report", "papers"},
}

#: modules of the package root, which belong to no wing (``_version`` is read by every wing: it imports nothing)
ROOT_MODULES = {"llmopt", "llmopt._version", "llmopt.api"}


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for base, prefix in ((ROOT / "llmopt", "llmopt"), (ROOT / "formulations", "llmopt.formulations"),
                         (ROOT / "solvers", "llmopt.solvers")):
        for path in base.rglob("*.py"):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join([prefix, *parts])] = path
    return mods


MODULES = _modules()
#: the API package's modules sit at the root with it (they may import every wing; the command line calls them)
ROOT_MODULES |= {m for m in MODULES if m.startswith("llmopt.api.")}


def _imports(path: Path) -> set[str]:
    """Every ``llmopt`` module ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in found if m in MODULES}


def wing(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and module not in ROOT_MODULES else None


def test_every_module_is_in_a_wing():
    homeless = sorted(m for m in MODULES if m not in ROOT_MODULES and wing(m) not in WINGS)
    assert homeless == [], f"modules outside the wings (add them to a wing): {homeless}"


def test_imports_run_down_the_wings():
    offenders = []
    for module, path in sorted(MODULES.items()):
        own = wing(module)
        if own is None:
            continue
        for target in sorted(_imports(path)):
            to = wing(target)
            if to is not None and to != own and to not in WINGS[own]:
                offenders.append(f"{module} ({own}) imports {target} ({to})")
    assert offenders == []


def _imports_the_root(path: Path) -> list[str]:
    """The statements of ``path`` that import the package root ``llmopt`` itself (``import llmopt``,
    ``from llmopt import name`` where ``name`` is not a submodule)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name == "llmopt"]
        elif isinstance(node, ast.ImportFrom) and node.module == "llmopt" and node.level == 0:
            found += [f"from llmopt import {a.name}" for a in node.names if f"llmopt.{a.name}" not in MODULES]
    return found


def test_no_module_imports_the_package_root():
    """No arrow runs back up into ``llmopt/__init__.py``: the version and the public names live at the
    bottom (:mod:`llmopt._version`), so every module below the root reads them from there."""
    offenders = [f"{module}: {stmt}" for module, path in sorted(MODULES.items()) if module != "llmopt"
                 for stmt in _imports_the_root(path)]
    assert offenders == []


def test_the_wing_order_has_no_circle():
    seen: dict[str, int] = {}

    def visit(w: str, path: tuple[str, ...]) -> None:
        assert w not in path, f"wings import each other: {' -> '.join((*path, w))}"
        for below in WINGS[w]:
            visit(below, (*path, w))

    for w in WINGS:
        visit(w, ())
        seen[w] = 1


def test_no_module_circles():
    """No chain of imports (top-level or lazy) leads from a module back to itself."""
    graph = {m: {t for t in _imports(p) if t != m and not m.startswith(t + ".")} for m, p in MODULES.items()}
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                cycles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t, stack)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    # a package's __init__ re-exporting its own submodules is not a circle
    real = [c for c in cycles if not _package_reexport(c)]
    assert real == []


def _package_reexport(cycle: str) -> bool:
    mods = cycle.split(" -> ")
    return any(b.startswith(a + ".") for a, b in zip(mods, mods[1:])) and len(set(mods)) <= 2


def test_the_checker_imports_only_the_model():
    for module, path in MODULES.items():
        if wing(module) == "verify":
            bad = {t for t in _imports(path) if wing(t) not in ("model", "verify")}
            assert not bad, f"{module} imports {sorted(bad)}"


def test_formulations_import_neither_the_checker_nor_solver_results():
    forbidden = ("llmopt.verify", "llmopt.model.result", "llmopt.solvers", "llmopt.opt", "llmopt.engine",
                 "llmopt.policies")
    for path in (ROOT / "formulations").glob("*.py"):
        bad = {m for m in _imports(path) if m.startswith(forbidden)}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_no_solver_is_named_outside_solvers():
    """Solver names appear only in solvers/ (the registry, DEFAULT_SOLVER, PREFERENCE); everything else
    asks for the default or picks by capability."""
    pattern = re.compile(r"""["'](highs|cbc|gurobi|scip)["']""")
    offenders = []
    for path in (ROOT / "llmopt").rglob("*.py"):
        for lineno, line in enumerate(path.read_text().splitlines(), start=1):
            if pattern.search(line) and "import" not in line:
                offenders.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert offenders == []


#: calls that load code from a file path (a test loading ``benchmarks/<name>.py`` this way imports a script)
_LOADERS = {"spec_from_file_location", "run_path", "SourceFileLoader", "exec_module", "import_module", "insert",
            "append"}
#: calls that run a file in a new process (they load it when given a ``.py`` path)
_RUNNERS = {"run", "Popen", "check_output", "check_call", "call"}


def _benchmark_loads(path: Path) -> list[str]:
    """The statements of test module ``path`` that load code from ``benchmarks/``: a path built from a
    ``"benchmarks"`` part (directly, or through a name bound to one) in a statement that calls a loader
    (``spec_from_file_location``, ``run_path``, ``sys.path.insert`` ...) or runs a ``.py`` file in a process.
    Docstrings, data files (``benchmarks/mutants.toml``) and existence checks do not count."""
    tree = ast.parse(path.read_text())

    def mentions_benchmarks(node: ast.AST, names: set[str]) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and (
                    sub.value.strip("/") == "benchmarks" or sub.value.startswith("benchmarks/")):
                return True
            if isinstance(sub, ast.Name) and sub.id in names:
                return True
        return False

    def loads_code(node: ast.AST) -> bool:
        calls = set()
        py = False
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value.endswith(".py"):
                py = True
            if isinstance(sub, ast.Call):
                func = sub.func
                calls.add(func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name)
                          else "")
        return bool(calls & _LOADERS) or (py and bool(calls & _RUNNERS))

    paths: set[str] = set()  # names bound to a path into benchmarks/
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            continue  # their statements are visited one by one
        if isinstance(node, ast.Assign) and mentions_benchmarks(node.value, paths):
            paths.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if mentions_benchmarks(node, paths) and loads_code(node):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:100]}")
    return found


def test_no_test_loads_a_file_from_benchmarks():
    """``benchmarks/`` holds speed measurements only; what a test checks lives in the package (the studies
    in ``llmopt.{opt,papers.*}.studies``, the speed benchmarks' instances in ``llmopt.bench.speed_cases``)."""
    offenders = [hit for path in sorted((ROOT / "tests").rglob("*.py")) for hit in _benchmark_loads(path)]
    assert offenders == []
