"""The joint fit of the batch-time model (``llmopt.papers.jaillet.studies.cost_model_joint_fit``): the model family
and the residuals it is scored by."""

from __future__ import annotations

import math

import pytest

from llmopt.engine.cost_model import load_cost_model
from llmopt.model.batch import BatchShape
from llmopt.papers.jaillet.studies.cost_model_joint_fit import TARGETS, residuals, scaled_model

SHAPES = [BatchShape(prefill_requests=1, prefill_tokens=300, prefill_tokens_sq=90_000, decode_requests=0,
                     decode_context=0),
          BatchShape(prefill_requests=0, prefill_tokens=0, prefill_tokens_sq=0, decode_requests=150,
                     decode_context=60_000),
          BatchShape(prefill_requests=2, prefill_tokens=500, prefill_tokens_sq=130_000, decode_requests=40,
                     decode_context=9_000)]


@pytest.mark.parametrize("shape", SHAPES)
def test_the_family_is_base_plus_scaled_load(shape: BatchShape) -> None:
    fitted = load_cost_model()
    assert scaled_model(fitted.base, 1.0).batch_time(shape) == pytest.approx(fitted.batch_time(shape))
    load = fitted.batch_time(shape) - fitted.base
    for base, k in ((0.03, 0.0), (0.12, 0.5), (0.09, 2.0)):
        assert scaled_model(base, k).batch_time(shape) == pytest.approx(base + k * load)


def test_residuals_are_relative_and_the_cap_only_counts_an_excess() -> None:
    paper = {k: v for k, (v, _) in TARGETS.items()}
    assert residuals(paper) == {**{f"r_{k}": 0.0 for k in TARGETS}, "objective": 0.0}
    r = residuals({**paper, "t1_mcsf": paper["t1_mcsf"] * 1.5, "fig3_10": 2.0, "cap": 150.0})
    assert r["r_t1_mcsf"] == pytest.approx(0.5)
    assert r["r_fig3_10"] == pytest.approx(-0.75)
    assert r["r_cap"] == 0.0  # under J0's 200 s: no residual
    assert r["objective"] == pytest.approx(0.25 + 0.5625)
    assert residuals({**paper, "cap": 250.0})["r_cap"] == pytest.approx(0.25)
    assert math.isnan(residuals({**paper, "fig3_50": math.nan})["objective"])
