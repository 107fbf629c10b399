"""``auto`` sizes the bound stages to the time they have, not only to n: a stage whose predicted time
(with its margin) does not fit is left out with a note, and a weaker one runs instead. The choice is a
function of n and the limit only — never of a clock — so these verdicts hold on any machine."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from llmopt.bench.suites import Suite, WorkloadSpec
from llmopt.bench.tasks import run_task
from llmopt.cli.main import app
from llmopt.model.instance import save_instance
from llmopt.opt.defaults import (
    AUTO_BOUNDS_SHARE,
    AUTO_COST_MARGIN,
    auto_bound_choice,
    auto_bounds,
    expand_bounds,
    predicted_bound_seconds,
)
from llmopt.opt.hindsight import solve_hindsight
from llmopt.report.summary import write_hindsight_report
from llmopt.workloads.jaillet import jaillet_am1

runner = CliRunner()


def test_without_a_limit_the_choice_is_by_size_alone():
    assert auto_bound_choice(58) == (("energy", "zone-colgen"), ())
    assert auto_bound_choice(58, None) == auto_bound_choice(58)


def test_a_stage_that_does_not_fit_is_left_out_for_the_next_weaker_one():
    stages, notes = auto_bound_choice(58, 5.0)
    assert stages == ("energy", "lp-colgen")
    assert len(notes) == 1 and "'zone-colgen' left out" in notes[0] and "n = 58" in notes[0]
    # nothing fits: energy alone, a note for each stronger stage
    stages, notes = auto_bound_choice(58, 0.01)
    assert stages == ("energy",) and [n.split("'")[1] for n in notes] == ["zone-colgen", "lp-colgen"]
    assert expand_bounds(("lp", "auto"), 58, 5.0) == ("lp", "energy", "lp-colgen")


def test_the_margin_is_applied_at_the_boundary():
    need = AUTO_COST_MARGIN * (predicted_bound_seconds("zone-colgen", 58) or 0.0)
    assert auto_bounds(58, need) == ("energy", "zone-colgen")
    assert auto_bounds(58, need * 0.99) == ("energy", "lp-colgen")
    assert predicted_bound_seconds("zone-colgen", 40) == pytest.approx(1.0)
    assert predicted_bound_seconds("zone-colgen", 80) > predicted_bound_seconds("zone-colgen", 40) * 16
    assert predicted_bound_seconds("energy", 58) is None


def test_the_pipeline_sizes_auto_to_its_time_limit_and_says_what_it_left_out():
    inst = jaillet_am1(0, n_range=(58, 58))
    # A whole-pipeline limit: the bound stages' share is AUTO_BOUNDS_SHARE of it (30 s -> 10.5 s).
    h = solve_hindsight(inst, solve_ip=False, search_evals=0, upper_bounds=("mc-sf",), time_limit=30.0,
                        bounds=("auto",), threads=1)
    assert AUTO_BOUNDS_SHARE * 30.0 < AUTO_COST_MARGIN * (predicted_bound_seconds("zone-colgen", 58) or 0.0)
    assert len(h.bounds_skipped) == 1 and "zone-colgen" in h.bounds_skipped[0]
    assert h.bounds_skipped[0] in h.message
    assert "zone-colgen" not in [b.name for b in h.bounds]


def test_a_suite_task_records_the_left_out_stage(tmp_path):
    """The harness limits the IP alone; the bound stages get as long (quick: 5 s). At a 1 s limit on
    n = 58 neither zone-colgen nor lp-colgen fits: energy alone, both named in the record and the summary."""
    suite = Suite(name="auto-time", description="auto bounds at a 1 s limit",
                  workloads=(WorkloadSpec("jaillet-am1", (0,), {"n_range": (58, 58)}),),
                  policies=("mc-sf",), ip_time_limit=1.0, search_evals=0)
    rec = run_task(suite, next(iter(suite.tasks())))
    assert rec["error"] is None
    assert rec["bounds_run"] == ["energy"]
    assert [s.split("'")[1] for s in rec["bounds_skipped"]] == ["zone-colgen", "lp-colgen"]
    write_hindsight_report(tmp_path, suite, {}, [rec], [])
    md = (tmp_path / "summary.md").read_text(encoding="utf-8")
    section = md.split("## Bound stages left out for time", 1)[1]
    assert "jaillet-am1 seed 0: bound 'zone-colgen' left out" in section
    assert "jaillet-am1 seed 0: bound 'lp-colgen' left out" in section


def test_solve_json_names_the_left_out_stage(tmp_path):
    path = tmp_path / "am1_n58.json"
    save_instance(jaillet_am1(0, n_range=(58, 58)), path)
    res = runner.invoke(app, ["solve", str(path), "--relax", "--json", "--search-evals", "0", "--time-limit", "30",
                              "-q"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [s.split("'")[1] for s in out["bounds_skipped"]] == ["zone-colgen"]
    assert "zone-colgen" not in [b["name"] for b in out["bounds"]]
