"""Every package directory is listed in pyproject.toml, so a non-editable install ships it."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_directory_is_listed_in_pyproject() -> None:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    dirs = {name: ROOT / path for name, path in conf["package-dir"].items()}
    found = set()
    for name, path in dirs.items():
        for init in path.rglob("__init__.py"):
            rel = init.parent.relative_to(path)
            parts = [] if rel == Path(".") else list(rel.parts)
            found.add(".".join([name, *parts]))
    missing = sorted(found - listed)
    assert not missing, f"package directories missing from pyproject.toml [tool.setuptools] packages: {missing}"
    stale = sorted(p for p in listed if p not in found)
    assert not stale, f"pyproject.toml lists packages with no directory: {stale}"
