"""Golden check of ``results/tests/mutation/`` (the mutation score of ``tests/mutation/mutation.py``).

Re-running the mutants takes minutes, so this test does not recompute the score; it pins what can be
checked in a second and would catch a stale report: the committed report covers exactly the mutants
that ``tests/mutation/mutants.toml`` lists now, in that order; every one of them still applies (its
snippet occurs exactly once in its file); and the published score is the count of the recorded
outcomes. A change to the list (or to a mutated snippet) therefore fails here until
``python tests/mutation/mutation.py --jobs 2 --out results/tests/mutation`` is run again (or, for the mutants that
changed, ``--only ID... --out results/tests/mutation --merge``).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results" / "tests" / "mutation" / "results.json"
MUTANTS = ROOT / "tests" / "mutation" / "mutants.toml"


def test_the_committed_report_covers_the_current_list_and_its_score_adds_up() -> None:
    doc = json.loads(RESULTS.read_text(encoding="utf-8"))
    listed = tomllib.loads(MUTANTS.read_text(encoding="utf-8"))["mutant"]
    assert [m["id"] for m in doc["mutants"]] == [m["id"] for m in listed]
    for m in listed:
        text = (ROOT / m["file"]).read_text(encoding="utf-8")
        assert text.count(m["original"]) == 1, f"mutant {m['id']!r} no longer applies to {m['file']}"
    statuses = [m["status"] for m in doc["mutants"]]
    score = doc["score"]
    assert score["caught"] == statuses.count("caught") and score["survived"] == statuses.count("survived")
    assert score["scored"] == len(statuses) - statuses.count("error")
    # the published figure (README "Tests" and results/tests/mutation/README.md)
    assert (score["killed"], score["scored"]) == (115, 115)
    # every row names the run it comes from (rows merged with --merge keep theirs), and that run is listed
    runs = {(r["commit"], r["date"]) for r in doc["runs"]}
    assert all((m["run"]["commit"], m["run"]["date"]) in runs for m in doc["mutants"])
    assert sum(r["mutants"] for r in doc["runs"]) == len(doc["mutants"])
