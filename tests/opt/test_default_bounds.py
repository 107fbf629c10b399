"""The default bound set (``auto``): energy always, with the zone LP or the column-generation LP by size."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from llmopt.cli.main import app
from llmopt.model.instance import save_instance
from llmopt.opt.defaults import (
    AUTO_LP_COLGEN_MAX_N,
    AUTO_ZONE_COLGEN_MAX_N,
    AUTO_ZONE_LP_MAX_N,
    DEFAULT_BOUNDS,
    auto_bounds,
    expand_bounds,
    next_bound_hint,
    possible_bounds,
)
from llmopt.opt.hindsight import solve_hindsight
from llmopt.workloads.jaillet import jaillet_am1

runner = CliRunner()


def test_auto_by_size_at_the_thresholds():
    assert DEFAULT_BOUNDS == ("auto",)
    assert auto_bounds(1) == auto_bounds(AUTO_ZONE_LP_MAX_N) == ("energy", "zone-lp")
    assert auto_bounds(AUTO_ZONE_LP_MAX_N + 1) == auto_bounds(AUTO_ZONE_COLGEN_MAX_N) == ("energy", "zone-colgen")
    assert auto_bounds(AUTO_ZONE_COLGEN_MAX_N + 1) == auto_bounds(AUTO_LP_COLGEN_MAX_N) == ("energy", "lp-colgen")
    assert auto_bounds(AUTO_LP_COLGEN_MAX_N + 1) == ("energy",)
    assert expand_bounds(("lp", "auto", "energy"), 10) == ("lp", "energy", "zone-lp")
    assert set(possible_bounds(("auto", "lp"))) == {"energy", "zone-lp", "zone-colgen", "lp-colgen", "lp"}


def test_the_pipeline_runs_auto_by_default_and_certifies_more_than_the_lp():
    inst = jaillet_am1(0, n_range=(30, 30))
    auto = solve_hindsight(inst, solve_ip=False, search_evals=50)
    assert [b.name for b in auto.bounds] == ["energy", "zone-lp"] and all(b.verified for b in auto.bounds)
    lp = solve_hindsight(inst, bounds=("lp",), solve_ip=False, search_evals=50)
    assert auto.incumbent == lp.incumbent
    # J AM1, n = 30, seed 0: the zone LP closes more than half of the LP's gap
    assert auto.gap < lp.gap / 2


def test_solve_says_what_would_narrow_the_gap(tmp_path):
    path = tmp_path / "am1_n50.json"
    save_instance(jaillet_am1(0, n_range=(50, 50)), path)
    out = json.loads(runner.invoke(app, ["solve", str(path), "--relax", "--json", "--search-evals", "20"]).stdout)
    assert [b["name"] for b in out["bounds"]] == ["energy", "zone-colgen"]
    assert out["status"] == "bounded" and out["next"].startswith("the schedule side")
    assert next_bound_hint(("energy", "lp-colgen"), 50).startswith("--bound zone-lp")
    assert next_bound_hint(("energy", "lp-colgen"), 500).startswith("--bound zone-colgen")
    assert next_bound_hint(("energy", "zone-lp"), 50).startswith("the schedule side")
    assert next_bound_hint(("energy",), 5000).startswith("--bound lp-colgen")
