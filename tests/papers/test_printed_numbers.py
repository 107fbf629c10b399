"""The paper tables and prose figures printed in README.md and ``results/*/*/README.md`` agree with the committed
results files (``llmopt.papers.printed``).

If ``test_every_printed_block_matches_its_results`` fails, a printed number and its results file disagree: after
regenerating a results folder, run ``python -m llmopt.papers.printed --write`` and review the diff.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from llmopt.papers import printed
from llmopt.papers.printed import BLOCKS, ROOT, check, main, update


def _files() -> list[str]:
    return sorted({f for b in BLOCKS.values() for f in b.files})


def test_every_printed_block_matches_its_results() -> None:
    mismatches = check(ROOT)
    assert not mismatches, "printed numbers disagree with their results files:\n" + "\n".join(map(str, mismatches))


def test_every_block_is_printed_where_it_says() -> None:
    for rel in _files():
        text = (ROOT / rel).read_text(encoding="utf-8")
        for name, block in BLOCKS.items():
            if rel in block.files:
                assert f"<!-- generated: {name} -->" in text, (rel, name)


def test_the_numbers_the_issue_names() -> None:
    # the typed values these blocks replaced, kept here so that a silent regeneration shows in review
    assert "287 of 4,144" in BLOCKS["w-scaled-dp-rounds"].render()
    assert "5.7–16.2 %" in BLOCKS["w-short-horizon-gain"].render()
    assert BLOCKS["polish-memory"].render() == "M = 30–50"
    assert "1.765 / 1.472" in BLOCKS["c-m-sweep"].render()
    sweeps = BLOCKS["j-lmsys-sweeps"].render()
    assert "α = 0.08 (β = 0.1: 425.5 s) / 0.12 (β = 0.2: 433.0 s)" in sweeps
    assert "(α = 0.1: 425.5–435.4 s)" in sweeps
    assert BLOCKS["c-section6-amin"].render().endswith("1.10 / 1.70 / 1.61× for x = 0.1 / 0.95 / 0.99")
    assert BLOCKS["c-x01-amin"].render() == "1.105"
    table1 = BLOCKS["j-table1"].render()
    assert "| MC-SF | 32.905 | 32.112 | 1.000 | 1.000 | 0/50 |" in table1
    assert "| α = 0.25 | 46.656 | 51.046 | 1.418 | 1.590 | 32/50 |" in table1


def test_a_typed_number_that_disagrees_is_caught_and_rewritten() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    good = "| MC-Benchmark | 44.479 | 46.472 | 1.352 | 1.447 | 0/50 |"
    assert good in text
    typed = text.replace(good, good.replace("44.479", "44.478"))
    new, mismatches = update("README.md", typed)
    assert [m.name for m in mismatches] == ["j-table1"]
    assert "44.478" in (mismatches[0].printed or "") and "44.479" in mismatches[0].expected
    assert mismatches[0].line == typed[:typed.index("<!-- generated: j-table1 -->")].count("\n") + 1
    assert new == text
    # inline blocks too
    inline = text.replace("287 of 4,144 Phase-1", "278 of 4,144 Phase-1")
    assert [m.name for m in update("README.md", inline)[1]] == ["w-scaled-dp-rounds"]


def test_a_changed_results_file_changes_the_printed_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "results"
    (results / "jaillet" / "table1").mkdir(parents=True)
    for folder in (ROOT / "results").glob("*/*"):  # every other results folder as committed
        if folder.is_dir() and folder.relative_to(ROOT / "results").as_posix() != "jaillet/table1":
            (results / folder.parent.name).mkdir(exist_ok=True)
            (results / folder.parent.name / folder.name).symlink_to(folder)
    src = ROOT / "results" / "jaillet" / "table1" / "summary.csv"
    with src.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["policy"] == "mc-sf"
    rows[0]["latency_mean"] = "33.0"
    with (results / "jaillet" / "table1" / "summary.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    monkeypatch.setattr(printed, "RESULTS", results)
    printed._csv_rows.cache_clear()
    try:
        assert "| MC-SF | 33.000 | 32.112 |" in BLOCKS["j-table1"].render()
        _, mismatches = update("README.md", (ROOT / "README.md").read_text(encoding="utf-8"))
        assert [m.name for m in mismatches] == ["j-table1"]
    finally:
        printed._csv_rows.cache_clear()


def test_write_regenerates_the_files_and_check_then_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for rel in _files():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    notes = tmp_path / "results" / "jaillet" / "lmsys" / "README.md"
    text = notes.read_text(encoding="utf-8")
    notes.write_text(text.replace("(β = 0.1: 425.5 s)", "(β = 0.1: 426.3 s)"), encoding="utf-8")
    assert main(["--root", str(tmp_path)]) == 1
    assert "j-lmsys-sweeps" in capsys.readouterr().err
    assert main(["--root", str(tmp_path), "--write"]) == 0
    assert notes.read_text(encoding="utf-8") == text
    assert main(["--root", str(tmp_path)]) == 0


def test_a_missing_or_unknown_block_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for rel in _files():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    polish = tmp_path / "results" / "jaillet" / "schedule-polish" / "README.md"
    text = polish.read_text(encoding="utf-8")
    polish.write_text(text.replace("<!-- generated: polish-memory -->M = 30–50<!-- end generated -->", "M = 40"),
                      encoding="utf-8")
    assert main(["--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "results/jaillet/schedule-polish/README.md: block 'polish-memory' not found" in err
    polish.write_text(text.replace("generated: polish-memory", "generated: polish-memry"), encoding="utf-8")
    assert main(["--root", str(tmp_path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: results/jaillet/schedule-polish/README.md:3: unknown generated block")
    assert "Traceback" not in lines[0]
