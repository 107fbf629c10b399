"""Layers point one way (DESIGN §3): formulations build models only; the checker depends on nothing that
produces what it verifies; no solver is named outside solvers/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imports(path: Path) -> set[str]:
    mods: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            mods.add(node.module)
    return mods


def test_formulations_import_neither_the_checker_nor_solver_results():
    forbidden = ("llmopt.checker", "llmopt.result", "llmopt.solvers", "llmopt.bounds", "llmopt.hindsight",
                 "llmopt.simulator", "llmopt.policies")
    for path in (ROOT / "formulations").glob("*.py"):
        bad = {m for m in _imports(path) if m.startswith(forbidden)}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_no_solver_is_named_outside_solvers():
    """Solver names appear only in solvers/ (the registry, DEFAULT_SOLVER, PREFERENCE); everything else
    asks for the default or picks by capability."""
    pattern = re.compile(r"""["'](highs|cbc|gurobi)["']""")
    offenders = []
    for path in (ROOT / "llmopt").rglob("*.py"):
        for lineno, line in enumerate(path.read_text().splitlines(), start=1):
            if pattern.search(line) and "import" not in line:
                offenders.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert offenders == []
