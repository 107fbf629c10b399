"""The committed ``results/`` tree has one layout, and its Markdown links resolve.

Every folder is ``results/<group>/<name>/`` with ``group`` one of :data:`GROUPS` (a paper, ``opt`` for
the bound studies, ``perf`` for speed benchmarks, ``tests`` for the test suite's own measurements,
``production`` for the papers' policies against production schedulers),
holds exactly one ``README.md`` and a ``manifest.json`` whose every entry names the command that
regenerates it, and every relative link in ``README.md`` and ``results/**/*.md`` points at a file that
exists (a link that is not rewritten when a folder moves fails here).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
GROUPS = {"jaillet", "wang", "chen", "opt", "perf", "tests", "production"}
#: ``[text](target)`` and ``![alt](target)``; a target is cut at the first blank (an optional title follows)
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def result_folders() -> list[Path]:
    """The ``results/<group>/<name>/`` folders."""
    return sorted(p for g in RESULTS.iterdir() if g.is_dir() for p in g.iterdir() if p.is_dir())


def relative_links(md: Path) -> list[str]:
    """The relative link targets of ``md`` (no URL, no in-page anchor), outside fenced code blocks."""
    text = FENCE.sub("", md.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", t)]


def broken_links(md: Path) -> list[str]:
    """The relative links of ``md`` whose file (or folder) does not exist."""
    return [t for t in relative_links(md) if not (md.parent / t.partition("#")[0]).exists()]


def test_every_folder_is_group_slash_name_with_hyphenated_names():
    stray = [p.name for p in RESULTS.iterdir() if p.is_file() and p.name != "README.md"]
    assert stray == [], f"files directly under results/: {stray}"
    groups = {p.name for p in RESULTS.iterdir() if p.is_dir()}
    assert groups <= GROUPS, f"unknown groups under results/: {sorted(groups - GROUPS)}"
    for group in groups:
        files = [p.name for p in (RESULTS / group).iterdir() if p.is_file()]
        assert files == [], f"results/{group}/ holds files outside a suite or study folder: {files}"
    folders = result_folders()
    assert len(folders) >= 30
    for folder in folders:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", folder.name), f"{folder}: use lower case and hyphens"


@pytest.mark.parametrize("folder", result_folders(), ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_each_folder_has_one_readme_and_a_manifest_with_commands(folder: Path):
    names = {p.name for p in folder.iterdir()}
    assert "README.md" in names, f"{folder}: no README.md"
    assert "NOTES.md" not in names, f"{folder}: NOTES.md beside README.md (one entry point)"
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest, f"{folder}/manifest.json is empty"
    rel = folder.relative_to(ROOT).as_posix()
    for name, entry in manifest.items():
        assert isinstance(entry.get("command"), str) and entry["command"].strip(), f"{rel}: {name} has no command"
        out = entry.get("arguments", {}).get("out")
        assert out is None or out == rel, f"{rel}/manifest.json: {name} writes to {out}"
        missing = [f for f in entry.get("files", []) if not (folder / f).exists()]
        assert missing == [], f"{rel}/manifest.json: {name} lists missing files {missing}"


@pytest.mark.parametrize("folder", result_folders(), ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_each_manifest_entry_was_regenerated_or_says_why_not(folder: Path):
    """``regenerated`` is the stamp of ``llmopt study check`` (its files matched a rerun), ``true`` for files
    written by the command itself (with a ``note`` on how), or ``false`` beside a ``not_regenerated`` reason."""
    rel = folder.relative_to(ROOT).as_posix()
    for name, entry in json.loads((folder / "manifest.json").read_text(encoding="utf-8")).items():
        stamp = entry.get("regenerated")
        if isinstance(stamp, dict):
            assert stamp.get("date") and stamp.get("matched_files", 0) >= 1, f"{rel}: {name}: incomplete stamp {stamp}"
            assert isinstance(stamp.get("seconds"), int | float), f"{rel}: {name}: the stamp has no seconds"
        elif stamp is True:
            assert entry.get("note") or entry.get("date"), f"{rel}: {name}: regenerated without a date or note"
        else:
            reason = entry.get("not_regenerated")
            assert stamp is False and isinstance(reason, str) and reason.strip(), (
                f"{rel}/manifest.json: {name} is neither regenerated nor says why not (\"not_regenerated\")")


def test_the_index_names_every_folder():
    index = (RESULTS / "README.md").read_text(encoding="utf-8")
    for folder in result_folders():
        rel = folder.relative_to(RESULTS).as_posix()
        assert f"]({rel}/README.md)" in index, f"results/README.md does not list {rel}"


@pytest.mark.parametrize("md", [ROOT / "README.md", *sorted(RESULTS.rglob("*.md"))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_markdown_links_resolve(md: Path):
    assert broken_links(md) == [], f"{md.relative_to(ROOT)}: broken relative links"


def test_a_broken_link_is_found(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.md").write_text("x", encoding="utf-8")
    md = tmp_path / "a" / "README.md"
    md.write_text("[ok](x.md) [up](../a/x.md#s) [web](https://example.org/y) [anchor](#z)\n"
                  "[gone](../b/x.md) ![img](fig.png)\n```\n[code](nowhere.md)\n```\n", encoding="utf-8")
    assert broken_links(md) == ["../b/x.md", "fig.png"]
