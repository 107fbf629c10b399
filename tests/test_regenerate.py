"""A committed results folder is rerun from its manifest's command and compared field by field.

``llmopt.bench.regenerate`` reruns a manifest entry into a temporary folder and reports each committed
file as identical, differing (file, row, field, old and new value), not produced or not compared. Here:
a small study (``certified-gap``: it reads the committed J §5.1 trials and solves nothing) regenerates
identically from a copy of its folder, a tampered committed number is named by file, row and field, the
fields a study declares as run measurements are the only ones left out, suite records are matched by task
key whatever order the workers wrote them in, and a stamp is written only after a match.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from llmopt.bench.regenerate import (
    SUITE_VOLATILE,
    VOLATILE,
    CheckReport,
    FileVerdict,
    RegenerateError,
    check_entry,
    compare_files,
    compare_folders,
    declared,
    rerun_argv,
    stamp_manifest,
)
from llmopt.bench.store import task_key
from llmopt.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
CERTIFIED = ROOT / "results" / "jaillet" / "certified"
runner = CliRunner()


@pytest.fixture(scope="module")
def certified_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the certified-gap study's committed files and its manifest entry alone."""
    folder = tmp_path_factory.mktemp("certified")
    entry = json.loads((CERTIFIED / "manifest.json").read_text(encoding="utf-8"))["certified-gap"]
    for f in entry["files"]:
        shutil.copy(CERTIFIED / f, folder / f)
    (folder / "manifest.json").write_text(json.dumps({"certified-gap": entry}, indent=1) + "\n", encoding="utf-8")
    return folder


def test_a_small_study_regenerates_identically_and_is_stamped(certified_copy: Path, tmp_path: Path):
    folder = tmp_path / "certified"
    shutil.copytree(certified_copy, folder)
    report = check_entry(folder, cwd=ROOT)
    assert report.returncode == 0, report.output_tail
    verdicts = {v.file: v.verdict for v in report.verdicts}
    assert verdicts == {"gap.md": "identical", "gap_hist.png": "not compared"}
    assert report.ok and report.matched == 1
    before = (folder / "gap.md").read_bytes()
    stamp_manifest(report)
    stamp = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["certified-gap"]["regenerated"]
    assert stamp["matched_files"] == 1 and stamp["seconds"] >= 0 and stamp["date"]
    assert (folder / "gap.md").read_bytes() == before  # the committed files are never rewritten


def test_a_tampered_committed_number_is_named_by_file_row_and_field(certified_copy: Path, tmp_path: Path):
    folder = tmp_path / "certified"
    shutil.copytree(certified_copy, folder)
    gap = folder / "gap.md"
    gap.write_text(gap.read_text(encoding="utf-8").replace("| 1.529 |", "| 1.528 |", 1), encoding="utf-8")
    manifest = (folder / "manifest.json").read_text(encoding="utf-8")
    result = runner.invoke(app, ["study", "check", str(folder)])
    assert result.exit_code == 1, result.output
    assert "gap.md: differs at row 6, field 'AM1 before': committed '1.528', rerun '1.529'" in result.output
    report = check_entry(folder, cwd=ROOT)
    assert not report.ok
    with pytest.raises(RegenerateError, match="did not regenerate"):
        stamp_manifest(report)
    assert (folder / "manifest.json").read_text(encoding="utf-8") == manifest


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_only_declared_run_measurements_are_left_out(tmp_path: Path):
    old = _jsonl(tmp_path / "old.jsonl", [{"n": 3, "tel": 10, "seconds": 1.5, "latency_s": 2.0}])
    new_time = _jsonl(tmp_path / "a.jsonl", [{"n": 3, "tel": 10, "seconds": 9.0, "latency_s": 2.0}])
    new_data = _jsonl(tmp_path / "b.jsonl", [{"n": 3, "tel": 10, "seconds": 1.5, "latency_s": 2.5}])
    assert compare_files(old, new_time, volatile=("seconds",)).verdict == "identical"
    v = compare_files(old, new_data, volatile=("seconds",))
    assert (v.verdict, v.row, v.field, v.old, v.new) == ("differs", 1, "latency_s", 2.0, 2.5)
    assert compare_files(old, new_time).field == "seconds"  # nothing declared: the time is compared too
    # a simulated time is data: J Table 1's cost study declares nothing, its latency_s is compared
    assert declared("table1-cost-sensitivity", "study").volatile == ()
    assert "seconds" in VOLATILE["amin-readings"].volatile


def test_a_field_only_the_rerun_writes_is_a_difference_and_every_differing_field_is_named(tmp_path: Path):
    old = _jsonl(tmp_path / "old.jsonl", [{"tel": 10, "gap": 0.5}, {"tel": 11, "gap": 0.5}])
    new = _jsonl(tmp_path / "new.jsonl", [{"tel": 10, "gap": 0.5, "gpu_s": 1.0}, {"tel": 11, "gap": 0.5}])
    v = compare_files(old, new)
    assert (v.verdict, v.field, v.added) == ("differs", None, ("gpu_s",))
    assert "every committed field equal; the rerun adds 1 fields the committed file lacks: gpu_s" in v.line()
    new = _jsonl(tmp_path / "new2.jsonl", [{"tel": 12, "gap": 0.5}, {"tel": 11, "gap": 0.7}])
    v = compare_files(old, new)
    assert (v.row, v.field, v.old, v.new, v.fields) == (1, "tel", 10, 12, ("tel", "gap"))
    assert "2 of 2 rows differ, in 2 fields: tel, gap" in v.detail


def test_nested_fields_csv_rows_and_tolerance(tmp_path: Path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"bounds": {"lp": {"value": 10.0, "seconds": 1}}, "rows": [{"x": 1}, {"x": 2}]}))
    new = tmp_path / "new.json"
    new.write_text(json.dumps({"bounds": {"lp": {"value": 10.0, "seconds": 7}}, "rows": [{"x": 1}, {"x": 3}]}))
    v = compare_files(old, new, volatile=("bounds.*.seconds",))
    assert (v.field, v.old, v.new) == ("rows.1.x", 2, 3)
    part = tmp_path / "part.json"  # a subset rerun of one JSON object: the parts it wrote are compared
    part.write_text(json.dumps({"bounds": {"lp": {"value": 10.0, "seconds": 7}}}))
    assert compare_files(old, part, volatile=("bounds.*.seconds",), subset=True).verdict == "identical"
    part.write_text(json.dumps({"bounds": {"lp": {"value": 11.0}}}))
    assert compare_files(old, part, volatile=("bounds.*.seconds",), subset=True).field == "bounds.lp.value"
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("k,v\nx,1.0000\ny,2\n")
    b.write_text("k,v\nx,1.0001\ny,2\nz,3\n")
    v = compare_files(a, b)
    assert (v.row, v.field, v.old, v.new) == (1, "v", "1.0000", "1.0001")
    v = compare_files(a, b, tolerance=1e-3)
    assert (v.verdict, v.row, v.field) == ("differs", 3, "<rows>")
    assert compare_files(a, tmp_path / "missing.csv").verdict == "not produced"


def test_suite_records_match_by_task_key_in_any_order_and_subsets(tmp_path: Path):
    rows = [{"workload": "w", "params": {"n": 5}, "seed": s, "tel": 100 + s, "runtime_s": 0.1 * s}
            for s in range(3)]
    old = _jsonl(tmp_path / "old.jsonl", rows)
    shuffled = [dict(r, runtime_s=9.0) for r in reversed(rows)]
    decl = declared("some-suite", "suite")
    assert decl.volatile == SUITE_VOLATILE
    assert compare_files(old, _jsonl(tmp_path / "n.jsonl", shuffled), volatile=decl.volatile,
                         key=task_key).verdict == "identical"
    assert compare_files(old, _jsonl(tmp_path / "p.jsonl", shuffled), key=None).field == "seed"
    one = _jsonl(tmp_path / "one.jsonl", [dict(rows[1], tel=999)])
    v = compare_files(old, one, volatile=decl.volatile, key=task_key, subset=True)
    assert (v.verdict, v.row, v.field, v.old, v.new) == ("differs", 2, "tel", 101, 999)
    same = _jsonl(tmp_path / "same.jsonl", [rows[1]])
    assert compare_files(old, same, key=task_key, subset=True, volatile=decl.volatile).verdict == "identical"
    v = compare_files(old, same, key=task_key, volatile=decl.volatile)
    assert v.verdict == "differs" and "2 committed rows not rewritten" in v.detail
    assert compare_files(old, same, key=None, subset=True).verdict == "not compared"
    # a seed subset writes its own seeds into suite.json: compared after a full rerun only
    (tmp_path / "c").mkdir()
    (tmp_path / "r").mkdir()
    (tmp_path / "c" / "suite.json").write_text(json.dumps({"suite": {"seeds": [0, 1, 2]}}))
    (tmp_path / "r" / "suite.json").write_text(json.dumps({"suite": {"seeds": [0]}}))
    sub, = compare_folders(tmp_path / "c", tmp_path / "r", ["suite.json"], decl, subset=True)
    full, = compare_folders(tmp_path / "c", tmp_path / "r", ["suite.json"], decl)
    assert (sub.verdict, full.verdict, full.field) == ("not compared", "differs", "suite.seeds")


def test_rerun_argv_replaces_out_and_refuses_other_commands(tmp_path: Path):
    argv = rerun_argv("llmopt bench run chen-cor2 --out results/chen/cor2 --workers 2 --no-progress", tmp_path)
    assert argv[3:] == ["bench", "run", "chen-cor2", "--out", str(tmp_path), "--workers", "2", "--no-progress"]
    argv = rerun_argv("llmopt study run table1-cost-sensitivity --out r --seeds 0-49", tmp_path, quick=True, seeds="0")
    assert argv[3:] == ["study", "run", "table1-cost-sensitivity", "--out", str(tmp_path), "--quick", "--seeds", "0"]
    # a file the command writes outside its folder (the package's coefficients) is written beside the rerun
    argv = rerun_argv("llmopt study run fit-cost-model --out r --coefficients llmopt/engine/data/c.json", tmp_path,
                      outputs={"--coefficients": tmp_path / "c.json"})
    assert argv[3:] == ["study", "run", "fit-cost-model", "--out", str(tmp_path), "--coefficients",
                        str(tmp_path / "c.json")]
    with pytest.raises(RegenerateError, match="not an `llmopt study run`"):
        rerun_argv("python benchmarks/cli_startup.py --out x", tmp_path)
    with pytest.raises(RegenerateError, match="no --out"):
        rerun_argv("llmopt study run zone-bound", tmp_path)


def test_bad_targets_are_one_line_and_exit_2(tmp_path: Path):
    result = runner.invoke(app, ["study", "check", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "neither a results folder nor a study" in result.output
    result = runner.invoke(app, ["study", "check", str(tmp_path)])
    assert result.exit_code == 2 and "no manifest.json" in result.output
    (tmp_path / "manifest.json").write_text(json.dumps({"a": {"command": "x"}, "b": {"command": "y"}}))
    result = runner.invoke(app, ["study", "check", str(tmp_path)])
    assert result.exit_code == 2 and "name one with --entry" in result.output
    assert "Traceback" not in result.output


def test_a_file_with_nothing_to_compare_is_no_evidence(tmp_path: Path):
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text("# Notes\n\nprose only, 1.5 s\n")
    b.write_text("# Notes\n\nprose only, 9.9 s\n")
    assert compare_files(a, b).verdict == "not compared"
    a.write_text("| k | v |\n|---|---:|\n| x | 1 |\n\ntext\n\n| k | w |\n|---|---|\n| y | 2 |\n")
    b.write_text(a.read_text().replace("| y | 2 |", "| y | 3 |"))
    v = compare_files(a, b)
    assert (v.row, v.field, v.old, v.new) == (2, "w", "2", "3")  # the second table's header names its field


def test_a_failed_report_is_not_ok():
    ok = FileVerdict("a.csv", "identical", rows=3)
    assert CheckReport("f", "e", [], 1.0, 0, [ok]).ok
    assert not CheckReport("f", "e", [], 1.0, 1, [ok]).ok  # the rerun failed
    assert not CheckReport("f", "e", [], 1.0, 0, [FileVerdict("x.png", "not compared")]).ok  # nothing compared
    assert not CheckReport("f", "e", [], 1.0, 0, [ok, FileVerdict("b.csv", "not produced")]).ok


def test_a_trace_suite_summary_is_the_same_whatever_order_the_workers_finished():
    """Means are summed in task order: ``(0.1 + 0.2) + 0.3`` and ``(0.3 + 0.2) + 0.1`` differ in the last
    digit, which made a rerun's ``summary.csv`` differ from the committed one at tolerance 0."""
    from llmopt.bench.suites import Suite, WorkloadSpec
    from llmopt.report.trace import trace_summary

    suite = Suite(name="s", description="", workloads=(WorkloadSpec("trace", (0, 1, 2), {"n": 1}, "w"),),
                  policies=("mc-sf",), reference="mc-sf", kind="trace")
    recs = [{"workload": "trace", "params": {"n": 1}, "seed": s, "suite": "s", "error": None,
             "status_mc-sf": "ok", "latency_mc-sf": lat} for s, lat in enumerate((0.1, 0.2, 0.3))]
    forward, backward = trace_summary(recs, suite), trace_summary(recs[::-1], suite)
    assert forward.to_dict("records") == backward.to_dict("records")
    assert forward["latency_mean"].iloc[0] == sum((0.1, 0.2, 0.3)) / 3


def test_a_suite_entry_lists_the_files_the_suite_writes_not_the_folder_s_readme_or_other_entries(tmp_path: Path):
    """A rerun never writes the folder's README.md or another study's tables: listed in the suite's entry,
    a check of the suite would report them "not produced" and never match."""
    from llmopt.bench.studies import read_manifest, write_suite_manifest

    run = {"command": "llmopt bench run s --out x", "outcome": "completed", "tasks_skipped": 0}
    (tmp_path / "suite.json").write_text(json.dumps({"runs": [run]}))
    for f in ("trials.jsonl", "summary.csv", "README.md", "sensitivity.csv"):
        (tmp_path / f).write_text("x\n")
    (tmp_path / "manifest.json").write_text(json.dumps({"a-study": {"command": "llmopt study run a-study",
                                                                    "files": ["sensitivity.csv"]}}))
    write_suite_manifest(tmp_path, "s")
    manifest = read_manifest(tmp_path)
    assert manifest["s"]["files"] == ["suite.json", "summary.csv", "trials.jsonl"]
    assert manifest["s"]["regenerated"] is True and manifest["a-study"]["files"] == ["sensitivity.csv"]


def test_j0_theory_leaves_out_thm62_s_solve_seconds_but_compares_thm53_s_prompt_size(tmp_path: Path):
    """In j0-theory, thm62.md's column ``s`` is the pipeline solve's wall seconds; thm53.md's ``s`` is a
    prompt size (data)."""
    decl = declared("j0-theory", "study")
    (tmp_path / "c").mkdir()
    (tmp_path / "r").mkdir()
    for name in ("thm62.md", "thm53.md"):
        (tmp_path / "c" / name).write_text("| M | OPT | s |\n|---|---|---|\n| 25 | 55 | 0.200 |\n")
        (tmp_path / "r" / name).write_text("| M | OPT | s |\n|---|---|---|\n| 25 | 55 | 0.500 |\n")
    v53, v62 = compare_folders(tmp_path / "c", tmp_path / "r", ["thm62.md", "thm53.md"], decl)
    assert (v62.file, v62.verdict) == ("thm62.md", "identical")
    assert (v53.file, v53.verdict, v53.field, v53.old, v53.new) == ("thm53.md", "differs", "s", "0.200", "0.500")


def test_lp_bucket_sensitivity_leaves_out_its_lp_seconds_and_compares_its_lp_values(tmp_path: Path):
    """lp_bucket.md's "LP time (s)" is wall time (a rerun at another load differed there only)."""
    decl = declared("lp-bucket-sensitivity", "study")
    head = "| seed | Δ | LP value | LP time (s) |\n|---|---|---|---|\n"
    (tmp_path / "c").mkdir()
    (tmp_path / "t").mkdir()
    (tmp_path / "v").mkdir()
    (tmp_path / "c" / "lp_bucket.md").write_text(head + "| 0 | 1 | 43,297.0 | 102.3 |\n")
    (tmp_path / "t" / "lp_bucket.md").write_text(head + "| 0 | 1 | 43,297.0 | 149.6 |\n")
    (tmp_path / "v" / "lp_bucket.md").write_text(head + "| 0 | 1 | 43,298.0 | 102.3 |\n")
    timed, = compare_folders(tmp_path / "c", tmp_path / "t", ["lp_bucket.md"], decl)
    valued, = compare_folders(tmp_path / "c", tmp_path / "v", ["lp_bucket.md"], decl)
    assert timed.verdict == "identical"
    assert (valued.verdict, valued.field) == ("differs", "LP value")
