"""Every term of the fitted batch-time model, checked by hand around each knot (llmopt.engine.cost_model).

The module docstring fixes the form, with ``N = prefill_tokens + decode_requests``, ``P`` prompts
starting, ``D`` requests decoding, ``Q = Σ s²`` and ``C`` the decode context::

    t = base + per_token·N + slope_1·(N − knot_1)⁺ + slope_2·(N − knot_2)⁺
        + per_prefill_sq·Q + per_context_token·C + per_request·(P + D)

Here the coefficients are read from the committed JSON itself (not through the package) and the
formula is evaluated in the test, on hand-built :class:`BatchShape` s whose ``N`` lies just below, at
and just above each knot, with prompts only, decodes only, and both. The JSON's ``model`` numbers
are also re-derived from its per-layer ``components`` (80 layers, 2 all-reduces per layer, ms → s),
so a knot or slope that does not belong to its component fails by name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmopt.engine.cost_model import COST_MODELS, DEFAULT_COST_MODEL, load_cost_model, make_cost_model
from llmopt.model.batch import BatchShape

DATA = Path(__file__).resolve().parents[2] / "llmopt" / "engine" / "data" / "llama2_70b_a100_tp2.json"
DOC = json.loads(DATA.read_text(encoding="utf-8"))
C = DOC["model"]
LAYERS = 80


def by_hand(shape: BatchShape) -> float:
    """The documented formula, term by term, from the committed coefficients."""
    P, D = shape.prefill_requests, shape.decode_requests
    N = shape.prefill_tokens + D
    if P == 0 and D == 0:
        return 0.0
    return (C["base"] + C["per_token"] * N
            + C["slope_1"] * max(0.0, N - C["knot_1"]) + C["slope_2"] * max(0.0, N - C["knot_2"])
            + C["per_prefill_sq"] * shape.prefill_tokens_sq + C["per_context_token"] * shape.decode_context
            + C["per_request"] * (P + D))


def _shapes_with_tokens(n: int) -> list[BatchShape]:
    """Batches of ``N = n`` tokens: one prompt; three prompts; decodes only; prompts and decodes."""
    out = [BatchShape.of(prompts=[n]), BatchShape.of(prompts=[n - 2 * (n // 3), n // 3, n // 3]),
           BatchShape.of(contexts=[200 + j for j in range(n)])]
    d = n // 4
    rest = n - d
    out.append(BatchShape.of(prompts=[rest - rest // 2, rest // 2], contexts=[50 * (j + 1) for j in range(d)]))
    for s in out:
        assert s.num_tokens == n
    return out


def test_the_knots_are_where_the_docstring_says_and_apart():
    """The test below straddles both knots only if they are distinct integers (112 and 148 tokens)."""
    assert (C["knot_1"], C["knot_2"]) == (112.0, 148.0)
    assert C["knot_1"] < C["knot_2"]


@pytest.mark.parametrize("n", [1, 2, 111, 112, 113, 130, 147, 148, 149, 150, 400, 4096])
def test_batch_time_equals_the_formula_by_hand_around_each_knot(n):
    """For every shape of ``N = n`` tokens, the committed model's time equals the hand computation
    (relative 1e-12). ``N = 149, 150, 400, 4096`` lie past ``knot_2 = 148``, where the all-reduce hinge
    adds ``slope_2·(N − 148)``; a hinge measured from ``knot_1 = 112`` instead adds ``slope_2 · 36``
    ≈ 0.48 ms more. Every shape with prompts charges ``per_request`` (0.32 ms) for each prompt too.

    Breakage caught: mutant cost-knot-swapped (``slope_2 * (n - self.knot_2)`` → ``slope_2 * (n - self.knot_1)``);
    mutant cost-per-request-decode-only (``per_request * (prefill_requests + decode_requests)`` →
    ``per_request * decode_requests``).
    """
    model = load_cost_model()
    for shape in _shapes_with_tokens(n):
        assert model.batch_time(shape) == pytest.approx(by_hand(shape), rel=1e-12, abs=0.0), shape
        assert model.time(shape.prefill_requests, shape.prefill_tokens, shape.prefill_tokens_sq,
                          shape.decode_requests, shape.decode_context) == model.batch_time(shape)


def test_the_all_reduce_hinge_starts_at_its_own_knot():
    """Increments of the time in ``N`` for decode-only batches with no context (``C = 0``): each added
    request costs ``per_token + per_request``, plus ``slope_1`` once ``N > 112`` and ``slope_2`` once
    ``N > 148`` — exactly at each knot, not before.

    Breakage caught: mutant cost-knot-swapped (``slope_2 * (n - self.knot_2)`` → ``slope_2 * (n - self.knot_1)``).
    """
    model = load_cost_model()

    def t(n: int) -> float:
        return model.batch_time(BatchShape(0, 0, 0, n, 0))

    step = C["per_token"] + C["per_request"]
    for n in (112, 148):
        below = t(n) - t(n - 1)
        above = t(n + 1) - t(n)
        extra = C["slope_1"] + (C["slope_2"] if n == 148 else 0.0)
        assert below == pytest.approx(step + (C["slope_1"] if n == 148 else 0.0), rel=1e-9), n
        assert above == pytest.approx(step + extra, rel=1e-9), n
    # at N = 149 the two hinges together add slope_1·37 + slope_2·1
    assert t(149) == pytest.approx(C["base"] + 149 * step + C["slope_1"] * 37 + C["slope_2"] * 1, rel=1e-12)


def test_a_prompt_pays_the_per_request_constant():
    """The same ``N = 10`` tokens as one, two and five prompts (no decodes): the time is the base, the
    token and prefill-attention terms, and one ``per_request`` per prompt — a prompt is a sequence of
    the batch like a decode (``P + D``), not free.

    Breakage caught: mutant cost-per-request-decode-only (``per_request * (prefill_requests + decode_requests)``
    → ``per_request * decode_requests``).
    """
    model = load_cost_model()
    one = model.batch_time(BatchShape.of(prompts=[10]))
    assert one == pytest.approx(C["base"] + 10 * C["per_token"] + 100 * C["per_prefill_sq"] + C["per_request"],
                                rel=1e-12)
    # the same 10 tokens as 1, 2 and 5 prompts: Q differs, and one per_request per prompt
    for prompts in ([10], [5, 5], [2, 2, 2, 2, 2]):
        shape = BatchShape.of(prompts=prompts)
        expect = (C["base"] + 10 * C["per_token"] + C["per_prefill_sq"] * sum(s * s for s in prompts)
                  + C["per_request"] * len(prompts))
        assert model.batch_time(shape) == pytest.approx(expect, rel=1e-12), prompts


def test_the_committed_model_matches_its_components():
    """The ``model`` block of the JSON is its ``components`` put together: knots of the linear operators
    and of the all-reduce, per-layer slopes × 80 layers (× 2 all-reduces) in seconds, and the
    calibrated per-request constant; the registered default is exactly this model.

    Breakage caught: a knot or slope of ``llmopt/engine/data/llama2_70b_a100_tp2.json`` moved to the
    other component (e.g. ``"knot_2": 148.0`` → ``112.0``).
    """
    comp = DOC["components"]
    lin, ar = comp["linear_ops_per_layer_ms"], comp["all_reduce_ms"]
    assert C["knot_1"] == lin["knot"] and C["knot_2"] == ar["knot"]
    assert C["per_token"] == pytest.approx(LAYERS * lin["b"] / 1000, rel=1e-12)
    assert C["slope_1"] == pytest.approx(LAYERS * lin["c"] / 1000, rel=1e-12)
    assert C["slope_2"] == pytest.approx(LAYERS * ar["per_layer"] * ar["c"] / 1000, rel=1e-12)
    assert C["per_request"] == comp["calibration"]["per_request_s"]
    assert DEFAULT_COST_MODEL == "llama2-70b-a100-tp2" and "llama2-70b-a100-tp2" in COST_MODELS
    default = make_cost_model()
    shape = BatchShape.of(prompts=[100, 60], contexts=[300] * 12)
    assert default.batch_time(shape) == pytest.approx(by_hand(shape), rel=1e-12)
