"""The per-paper verdict tables (``llmopt.papers.verdicts`` and ``llmopt.papers.{jaillet,wang,chen}.verdicts``):
every row names evidence that exists and a command that is registered, its number is read from that evidence (or
computed by the package's closed forms), and a number typed into README.md that disagrees is caught."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmopt.papers import printed, printing
from llmopt.papers import verdicts as common
from llmopt.papers.chen import verdicts as chen
from llmopt.papers.jaillet import verdicts as jaillet
from llmopt.papers.verdicts import Claim, Evidence, evidence_problems, render
from llmopt.papers.wang import verdicts as wang

PAPERS = {"J": jaillet.J_CLAIMS, "J0": jaillet.J0_CLAIMS, "W": wang.CLAIMS, "C": chen.CLAIMS}
BLOCK = {"J": "j-verdicts", "J0": "j0-verdicts", "W": "w-verdicts", "C": "c-verdicts"}


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_every_row_names_evidence_that_exists(paper: str) -> None:
    assert evidence_problems(PAPERS[paper]) == []


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_every_paper_table_is_a_printed_block(paper: str) -> None:
    block = printed.BLOCKS[BLOCK[paper]]
    assert block.files == ("README.md",)
    text = (printed.ROOT / "README.md").read_text(encoding="utf-8")
    assert f"<!-- generated: {BLOCK[paper]} -->\n{block.render()}\n<!-- end generated -->" in text


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_a_row_that_names_a_cause_prints_its_measured_number(paper: str) -> None:
    for c in PAPERS[paper]:
        if c.kind in ("not reproduced — measured cause", "contradicted"):
            assert c.number() != "—", c.claim


def _claim(path: str, command: str, kind: str = "reproduced") -> Claim:
    return Claim("a claim", kind, "", lambda: "1.0", (Evidence(path, command),))


def test_missing_evidence_and_unregistered_commands_are_reported() -> None:
    good = "results/wang/synthetic/claims.md"
    assert evidence_problems([_claim(good, "llmopt study run wang-claims --out x")]) == []
    assert evidence_problems([_claim("results/wang/synthetic/nope.csv", "llmopt study run wang-claims")]) == [
        "a claim: evidence file results/wang/synthetic/nope.csv does not exist"]
    assert evidence_problems([_claim(good, "llmopt study run wang-claimz")]) == [
        "a claim: study 'wang-claimz' is not registered"]
    assert evidence_problems([_claim(good, "llmopt bench run jaillet-tabel1")]) == [
        "a claim: suite 'jaillet-tabel1' is not registered"]
    assert evidence_problems([_claim(good, "python -m llmopt.papers.no_such_module")]) == [
        "a claim: module 'llmopt.papers.no_such_module' not found"]
    assert evidence_problems([_claim(good, "python benchmarks/no_such_script.py")]) == [
        "a claim: script 'benchmarks/no_such_script.py' not found"]
    assert evidence_problems([_claim(good, "make results")]) == [
        "a claim: not a command this check knows: 'make results'"]


def test_a_verdict_outside_the_kinds_is_refused() -> None:
    with pytest.raises(ValueError, match="is not one of"):
        render([_claim("README.md", "llmopt bench run quick", kind="partly reproduced")], "X")
    with pytest.raises(ValueError, match="no evidence"):
        render([Claim("a claim", "reproduced", "", lambda: "1", ())], "X")


def test_a_typed_number_in_a_verdict_table_is_caught() -> None:
    text = (printed.ROOT / "README.md").read_text(encoding="utf-8")
    for typed_from, typed_to, block in (("287 of 4,144 Phase-1", "278 of 4,144 Phase-1", "w-verdicts"),
                                        ("1.75× (C-like) / 1.82× (staged)", "1.75× (C-like) / 1.80× (staged)",
                                         "c-verdicts"),
                                        ("MC-SF under 200 s up to 7,000", "MC-SF under 200 s up to 10,000",
                                         "j-verdicts")):
        assert text.count(typed_from) == 1, typed_from
        start = text.index(f"<!-- generated: {block} -->")
        snippet = text[start:text.index("<!-- end generated -->", start) + len("<!-- end generated -->")]
        assert printed.update("README.md", snippet) == (snippet, [])
        typed = snippet.replace(typed_from, typed_to)
        new, mismatches = printed.update("README.md", typed)
        assert [m.name for m in mismatches] == [block]
        assert new == snippet


@pytest.fixture
def results_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A scratch ``results/`` the verdict readers read instead of the committed one."""
    root = tmp_path / "results"
    for rel in ("wang/synthetic/table_ec1.csv", "jaillet/fig3/figure3_cap.csv", "jaillet/fig3/figure3_slopes.csv",
                "jaillet/fig3/cost_sensitivity.md", "jaillet/cost-model/joint_fit.csv"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(printing.RESULTS / rel, root / rel)
    monkeypatch.setattr(printing, "RESULTS", root)
    monkeypatch.setattr(jaillet, "RESULTS", root)
    printing.csv_rows.cache_clear()
    yield root
    printing.csv_rows.cache_clear()


def test_a_number_follows_its_results_file(results_copy: Path) -> None:
    assert wang.thm3_bound_ratio().startswith("TEL ÷ certified bound ≤ 1.51 ")
    path = results_copy / "wang/synthetic/table_ec1.csv"
    path.write_text(path.read_text(encoding="utf-8").replace("1.5138547087814795", "1.9138547087814795"),
                    encoding="utf-8")
    printing.csv_rows.cache_clear()
    assert wang.thm3_bound_ratio().startswith("TEL ÷ certified bound ≤ 1.91 ")

    assert jaillet.fig3_cap() == "MC-SF under 200 s up to 7,000 requests (J0: 10,000)"
    cap = results_copy / "jaillet/fig3/figure3_cap.csv"
    lines = cap.read_text(encoding="utf-8").splitlines()
    lines = [line.replace("50,mc-sf,7000,", "50,mc-sf,9000,") for line in lines]
    cap.write_text("\n".join(lines) + "\n", encoding="utf-8")
    printing.csv_rows.cache_clear()
    assert jaillet.fig3_cap() == "MC-SF under 200 s up to 9,000 requests (J0: 10,000)"

    md = results_copy / "jaillet/fig3/cost_sensitivity.md"
    md.write_text(md.read_text(encoding="utf-8").replace("| 0.00627 | 2.89 |", "| 0.00627 | 2.79 |"),
                  encoding="utf-8")
    assert "thinned outputs: 2.79 at λ = 50 but 1.00 at λ = 10" in jaillet.fig3_ratio_50()


def test_closed_form_rows_are_computed_by_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    # C's Figure 1 prints λ_max = 1.25, 1.7249, 2.3333 at u = 2, 10, 100 and Thm 6's (3 − α)/2 = 1.45 at α = 0.1
    assert chen.closed_forms() == "λ_max = 1.2500, 1.7249, 2.3333 at u = 2, 10, 100; Thm 6 at α = 0.1: 1.45"
    assert "1.7249 (33 % of the mass inside) vs 1.45 over {1, 10}" in chen.ec1_vs_lemma2()
    assert chen.thm2_instance() == "its instance reaches 11.7 vs the claimed 20.8 at α = 0.1"
    # the numbers come from the functions, not from typed constants
    monkeypatch.setattr(chen.theory, "figure1_cr", lambda u: 9.0)
    monkeypatch.setattr(chen.theory, "two_point_cr_amin", lambda a: 7.0)
    assert chen.closed_forms.__wrapped__() == "λ_max = 9.0000, 9.0000, 9.0000 at u = 2, 10, 100; Thm 6 at α = 0.1: 7.00"


def _write_trials(folder: Path, trials: list[dict[str, object]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trials.jsonl").write_text("".join(json.dumps(t) + "\n" for t in trials), encoding="utf-8")


def test_rows_resting_on_time_limited_ips_say_the_limit_and_the_load() -> None:
    table = printed.BLOCKS["j-verdicts"].render()
    am1 = next(line for line in table.splitlines() if line.startswith("| §5.1 AM1"))
    assert ("IPs: `highs`, 5-s wall-clock limit each (400 attempted, 0 proven optimal, 400 stopped at the limit); "
            "machine load not recorded") in am1
    for name in ("j-synthetic-limit", "j-certified-limit"):  # the J §5.1 prose says it too
        assert printed.BLOCKS[name].render() == am1.split(" | ")[2].split("; ", 2)[2]
    # every row whose number rests on a suite with hindsight IPs names that suite's limit
    for claims, folder, label, load in ((wang.CLAIMS, "wang/synthetic", "60-s wall-clock limit", "machine load not "
                                         "recorded"),
                                        (chen.CLAIMS, "chen/theory", "12,000-node limit", "the same on any machine")):
        limited = [c for c in claims if folder in c.limits]
        assert limited, folder
        for line in render(limited, "X").splitlines()[2:]:
            assert label in line and load in line


def test_the_limit_label_is_read_from_the_trials(results_copy: Path) -> None:
    base = {"solver": "highs", "ip_time_limit": 5.0, "ip_node_limit": None}
    _write_trials(results_copy / "x/timed", [
        {**base, "status": "optimal", "ip_message": "Optimal"},
        {**base, "status": "time_limit", "ip_message": "Time limit reached"},
        {**base, "status": "not_solved", "ip_message": "IP skipped: the hindsight-ip model would have ..."}])
    assert common.ip_limit("x/timed") == ("IPs: `highs`, 5-s wall-clock limit each (2 of 3 trials attempted, 1 proven "
                                          "optimal, 1 stopped at the limit); machine load not recorded")
    (results_copy / "x/timed/manifest.json").write_text(json.dumps({"s": {"load": "1.9 → 2.3 (1-min mean)"}}),
                                                        encoding="utf-8")
    assert common.ip_limit("x/timed").endswith("; machine load 1.9 → 2.3 (1-min mean)")
    nodes = {**base, "ip_time_limit": 600.0, "ip_node_limit": 2000, "ip_time_capped": False}
    _write_trials(results_copy / "x/nodes", [{**nodes, "status": "optimal", "ip_message": "Optimal"},
                                             {**nodes, "status": "not_solved", "ip_message": "Node limit reached"}])
    assert common.ip_limit("x/nodes") == ("IPs: `highs`, 2,000-node limit each (2 attempted, 1 proven optimal, 1 "
                                          "stopped at the limit), the same on any machine")
    _write_trials(results_copy / "x/nodes", [{**nodes, "status": "time_limit", "ip_message": "Time limit reached",
                                              "ip_time_capped": True}])
    assert common.ip_limit("x/nodes").endswith("except 1 that stopped at the 600-s wall-clock cap first; machine load "
                                               "not recorded")
    _write_trials(results_copy / "x/none", [{**base, "status": "not_solved", "ip_message": None}])
    with pytest.raises(LookupError, match="results/x/none/trials.jsonl: no trial attempted"):
        common.ip_limit("x/none")
