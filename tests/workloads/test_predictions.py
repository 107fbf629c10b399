"""Prediction intervals (``llmopt.workloads.predictions``): C §6's three settings, a noisy predictor, specs, JSON.

Expected values are written out by hand from C §6 (DIGEST §5.3, I-36), not computed with
the module's helpers.

Breakages tried by hand, each caught by the test named (then reverted):

* ``bin_intervals``: bin index ``o // w`` instead of ``(o − 1) // w`` (o = 100 lands in
  [101, 200], which misses it) → ``test_bins_are_c_ten_bins``, ``test_bin_edges``,
  ``test_c_generators_contain_the_output``; the last bin's top ``count·w − 1`` →
  ``test_bins_are_c_ten_bins``.
* ``relative_bounds``: ``ceil`` ↔ ``floor`` swapped in the inward rule →
  ``test_relative_rounding_at_the_edges`` (o = 15, x = 0.1 gave [13, 17]); ``max(1, …)``
  dropped → ``test_relative_rounding_at_the_edges`` (x = 0.99, o = 1 gave ℓ = 0, an
  ``InstanceError``) and the property test; float arithmetic instead of exact fractions
  (``math.ceil((1 − x)·o)``) → ``test_relative_is_exact`` (x = 0.7, o = 10 gave ℓ = 4).
* ``noisy_intervals``: the seed dropped (``default_rng()``) →
  ``test_noisy_is_seeded``; ``predictions_may_miss`` not set → ``test_noisy_may_miss``.
* ``shared_interval``: the containment pre-check removed → ``test_shared_names_request_and_field``
  (the instance's own, less specific, error came instead); ``may_miss`` not passed on →
  ``test_shared_may_miss``.
* ``apply_prediction_spec``: the ``seed`` not forwarded → ``test_spec_forwards_seed``.
* ``_with_intervals``: the old name suffix kept → ``test_name_suffix_is_replaced``.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmopt.model.instance import Instance, InstanceError, Request, load_instance, save_instance
from llmopt.model.registry import RegistryError
from llmopt.model.timed_instance import (
    TimedInstance,
    TimedRequest,
    load_any_instance,
    load_timed_instance,
    save_timed_instance,
)
from llmopt.workloads.predictions import (
    PREDICTIONS,
    PredictionError,
    apply_prediction_spec,
    bin_intervals,
    clear_intervals,
    noisy_intervals,
    prediction_summary,
    relative_intervals,
    shared_interval,
)

C_BINS = [(1, 100), (101, 200), (201, 300), (301, 400), (401, 500), (501, 600), (601, 700), (701, 800),
          (801, 900), (901, 1000)]


def _discrete(outputs, M: int = 5000, name: str = "toy") -> Instance:
    return Instance.from_tuples(M, [(i % 3, 1 + i % 4, o) for i, o in enumerate(outputs)], name=name)


def _timed(outputs, M: int = 5000) -> TimedInstance:
    return TimedInstance(M, tuple(TimedRequest(f"t{i}", 0.5 * i, 2, o) for i, o in enumerate(outputs)), name="timed")


def _bounds(instance):
    return [(r.lower, r.upper) for r in instance.requests]


# --- validation ---------------------------------------------------------------------------------------


def test_instance_rejects_an_interval_that_misses():
    reqs = (Request("a", 0, 1, 5, 1, 10), Request("b", 0, 1, 50, 1, 10))
    with pytest.raises(InstanceError, match=r"request #1 'b': field 'upper'"):
        Instance(100, reqs)
    reqs = (Request("a", 0, 1, 5, 6, 10),)
    with pytest.raises(InstanceError, match=r"request #0 'a': field 'lower'"):
        Instance(100, reqs)
    assert Instance(100, reqs, predictions_may_miss=True).requests[0].lower == 6
    with pytest.raises(InstanceError, match=r"request 'c': field 'upper' is missing"):
        Request("c", 0, 1, 5, lower=1)
    with pytest.raises(InstanceError, match=r"request 't': field 'lower' must be >= 1"):
        TimedRequest("t", 0.0, 1, 5, lower=0, upper=3)
    with pytest.raises(InstanceError, match=r"request #0 't': field 'upper'"):
        TimedInstance(100, (TimedRequest("t", 0.0, 1, 5, 1, 4),))


def test_shared_names_request_and_field():
    inst = _discrete([5, 1200, 7, 1500])
    with pytest.raises(PredictionError, match=r"request #1 'r1': field 'upper': output 1200 .*\[1, 1000\].*2 of 4"):
        shared_interval(inst, 1, 1000)
    with pytest.raises(PredictionError, match=r"request #0 'r0': field 'lower': output 5 lies below"):
        shared_interval(inst, 6, 2000)
    with pytest.raises(InstanceError):  # PredictionError is an InstanceError (the CLI reports those)
        shared_interval(_timed([2000]), 1, 1000)
    with pytest.raises(ValueError, match="upper = 3 is below lower = 4"):
        shared_interval(inst, 4, 3)
    with pytest.raises(ValueError, match="lower must be an integer >= 1"):
        shared_interval(inst, 0, 3)


def test_shared_may_miss():
    inst = shared_interval(_discrete([5, 1200]), 1, 1000, may_miss=True)
    assert inst.predictions_may_miss
    assert _bounds(inst) == [(1, 1000), (1, 1000)]
    assert inst.name == "toy predictions=shared:lower=1,upper=1000,may_miss=true"
    exp1 = shared_interval(_discrete([5, 999]))  # defaults: C Experiment 1
    assert _bounds(exp1) == [(1, 1000)] * 2 and not exp1.predictions_may_miss


# --- C Experiment 2 -----------------------------------------------------------------------------------


def test_bins_are_c_ten_bins():
    inst = bin_intervals(_discrete(range(1, 1001)), width=100, count=10)
    got = _bounds(inst)
    assert sorted(set(got)) == C_BINS
    for o, (lo, up) in zip(range(1, 1001), got):
        assert lo <= o <= up and up - lo == 99
        assert (lo, up) == C_BINS[(o - 1) // 100]
    assert inst.name == "toy predictions=bins:width=100,count=10"
    assert _bounds(bin_intervals(_discrete([1000]))) == [(901, 1000)]  # defaults are C's bins


def test_bin_edges():
    got = _bounds(bin_intervals(_discrete([1, 100, 101, 200, 201, 900, 901, 1000])))
    assert got == [(1, 100), (1, 100), (101, 200), (101, 200), (201, 300), (801, 900), (901, 1000), (901, 1000)]
    assert _bounds(bin_intervals(_discrete([1, 3, 4, 9]), width=3, count=3)) == [(1, 3), (1, 3), (4, 6), (7, 9)]


def test_bin_overflow():
    inst = _discrete([50, 1001, 1500])
    with pytest.raises(PredictionError, match=r"request #1 'r1': field 'upper': output 1001 .*\[901, 1000\].*"
                                              r"2 of 3.*max_output.*overflow='extend'"):
        bin_intervals(inst)
    ext = bin_intervals(inst, overflow="extend")
    assert _bounds(ext) == [(1, 100), (901, 1500), (901, 1500)]
    assert ext.name.endswith("bins:width=100,count=10,overflow=extend")
    # nothing overflows: extend changes nothing
    assert _bounds(bin_intervals(_discrete([1000]), overflow="extend")) == [(901, 1000)]
    with pytest.raises(ValueError, match="overflow"):
        bin_intervals(inst, overflow="clip")


# --- C Experiment 3 -----------------------------------------------------------------------------------


def test_relative_rounding_at_the_edges():
    one = _discrete([1])
    assert _bounds(relative_intervals(one, 0.99)) == [(1, 1)]  # C: [0.01, 1.99]
    assert _bounds(relative_intervals(one, 0.99, rounding="outward")) == [(1, 2)]
    assert _bounds(relative_intervals(one, 0.1)) == [(1, 1)]
    inst = _discrete([15, 10, 1000, 883])
    assert _bounds(relative_intervals(inst, 0.1)) == [(14, 16), (9, 11), (900, 1100), (795, 971)]
    assert _bounds(relative_intervals(inst, 0.1, rounding="outward")) == [(13, 17), (9, 11), (900, 1100), (794, 972)]
    assert _bounds(relative_intervals(inst, 0.95)) == [(1, 29), (1, 19), (50, 1950), (45, 1721)]
    assert _bounds(relative_intervals(inst, 0)) == [(15, 15), (10, 10), (1000, 1000), (883, 883)]
    assert _bounds(relative_intervals(inst, 2)) == [(1, 45), (1, 30), (1, 3000), (1, 2649)]
    with pytest.raises(ValueError, match="x must be a finite number >= 0"):
        relative_intervals(inst, -0.1)
    with pytest.raises(ValueError, match="rounding"):
        relative_intervals(inst, 0.1, rounding="up")


def test_relative_is_exact():
    # in floats (1 - 0.7) * 10 = 3.0000000000000004, whose ceiling is 4
    assert _bounds(relative_intervals(_discrete([10]), 0.7)) == [(3, 17)]
    assert _bounds(relative_intervals(_discrete([10]), 0.7, rounding="outward")) == [(3, 17)]
    assert relative_intervals(_discrete([10]), 0.7).name == "toy predictions=relative:x=0.7"


@st.composite
def _instances(draw):
    outputs = draw(st.lists(st.integers(1, 1000), min_size=1, max_size=25))
    if draw(st.booleans()):
        return _discrete(outputs, M=1100)
    return _timed(outputs, M=1100)


@settings(max_examples=150, deadline=None)
@given(inst=_instances(), x=st.floats(0, 3, allow_nan=False), width=st.integers(1, 200),
       rounding=st.sampled_from(["inward", "outward"]))
def test_c_generators_contain_the_output(inst, x, width, rounding):
    count = -(-1000 // width)
    for out in (shared_interval(inst, 1, 1000), bin_intervals(inst, width, count),
                relative_intervals(inst, x, rounding=rounding)):
        assert type(out) is type(inst) and out.M == inst.M and not out.predictions_may_miss
        assert out.ids == inst.ids
        for r, q in zip(inst.requests, out.requests):
            assert (q.arrival, q.prompt, q.output) == (r.arrival, r.prompt, r.output)
            assert 1 <= q.lower <= q.output <= q.upper
        assert prediction_summary(out)["covered"] == inst.n
    rel = relative_intervals(inst, x, rounding=rounding)
    eps = 1e-9
    for r in rel.requests:  # the real interval [(1-x)o, (1+x)o], rounded as documented (within one)
        lo, hi = (1 - x) * r.output, (1 + x) * r.output
        if rounding == "inward":  # ℓ = max(1, ⌈lo⌉), u = ⌊hi⌋
            assert (r.lower == 1 or r.lower >= lo - eps) and r.lower < max(lo, 0) + 1 + eps
            assert hi - 1 - eps < r.upper <= hi + eps
        else:  # ℓ = max(1, ⌊lo⌋), u = ⌈hi⌉
            assert r.lower <= max(lo, 1) + eps and (r.lower == 1 or r.lower > lo - 1 - eps)
            assert hi - eps <= r.upper < hi + 1 + eps


# --- noisy predictor ----------------------------------------------------------------------------------


def test_noisy_is_seeded():
    inst = _discrete(range(1, 301))
    a, b = noisy_intervals(inst, 0.5, 0.3, seed=4), noisy_intervals(inst, 0.5, 0.3, seed=4)
    assert _bounds(a) == _bounds(b) and a.name == b.name == "toy predictions=noisy:sigma=0.5,width=0.3,seed=4"
    assert _bounds(noisy_intervals(inst, 0.5, 0.3, seed=5)) != _bounds(a)
    assert _bounds(noisy_intervals(_timed(range(1, 301)), 0.5, 0.3, seed=4)) == _bounds(a)


def test_noisy_may_miss():
    inst = _discrete(range(1, 301))
    out = noisy_intervals(inst, sigma=1.0, width=0.1, seed=0)
    summary = prediction_summary(out)
    assert out.predictions_may_miss and summary["may_miss"]
    assert 0 < summary["covered"] < inst.n  # a wide noise misses often, but not always
    assert all(1 <= r.lower <= r.upper for r in out.requests)
    # no noise: exactly the relative intervals
    assert _bounds(noisy_intervals(inst, sigma=0, width=0.1)) == _bounds(relative_intervals(inst, 0.1))


# --- specs, registry, names ---------------------------------------------------------------------------


def test_registry_names():
    assert {"none", "shared", "bins", "relative", "noisy"} <= set(PREDICTIONS.names())
    assert PREDICTIONS.group == "llmopt.predictions"


def test_specs():
    inst = _discrete([5, 150, 999])
    assert _bounds(apply_prediction_spec(inst, "shared:lower=1,upper=1000", 0)) == [(1, 1000)] * 3
    assert _bounds(apply_prediction_spec(inst, "bins:width=100,count=10", 0)) == [(1, 100), (101, 200), (901, 1000)]
    assert _bounds(apply_prediction_spec(inst, "relative:x=0.1", 0)) == [(5, 5), (135, 165), (900, 1098)]
    assert _bounds(apply_prediction_spec(inst, "relative:x=0.1,rounding=outward", 0))[0] == (4, 6)
    assert apply_prediction_spec(inst, "none", 0) is inst
    with_iv = apply_prediction_spec(inst, "bins", 0)
    cleared = apply_prediction_spec(with_iv, "none", 0)
    assert _bounds(cleared) == [(None, None)] * 3 and cleared.name == "toy predictions=none"
    assert clear_intervals(cleared) is cleared
    with pytest.raises(RegistryError, match="unknown prediction 'binz'; known: bins"):
        apply_prediction_spec(inst, "binz", 0)
    with pytest.raises(ValueError, match=r"'bins' takes the parameters width, count, overflow, got wdth"):
        apply_prediction_spec(inst, "bins:wdth=3", 0)
    with pytest.raises(ValueError, match="prediction spec 'relative:x': parameter 'x' is not key=value"):
        apply_prediction_spec(inst, "relative:x", 0)


def test_spec_forwards_seed():
    inst = _discrete(range(1, 101))
    assert _bounds(apply_prediction_spec(inst, "noisy", 7)) == _bounds(noisy_intervals(inst, seed=7))
    assert _bounds(apply_prediction_spec(inst, "noisy:seed=2", 7)) == _bounds(noisy_intervals(inst, seed=2))
    assert _bounds(apply_prediction_spec(inst, "noisy", 7)) != _bounds(apply_prediction_spec(inst, "noisy", 8))


def test_name_suffix_is_replaced():
    inst = bin_intervals(_discrete([5]))
    assert relative_intervals(inst, 0.5).name == "toy predictions=relative:x=0.5"
    unnamed = _discrete([5], name="")
    assert shared_interval(unnamed).name == "predictions=shared:lower=1,upper=1000"
    assert relative_intervals(shared_interval(unnamed), 0.5).name == "predictions=relative:x=0.5"


# --- JSON ---------------------------------------------------------------------------------------------


def test_json_round_trip(tmp_path):
    inst = relative_intervals(_discrete([1, 15, 883]), 0.95)
    path = tmp_path / "i.json"
    save_instance(inst, path)
    data = json.loads(path.read_text())
    assert data["requests"][1]["lower"] == 1 and data["requests"][1]["upper"] == 29
    assert "predictions_may_miss" not in data
    assert load_instance(path) == inst
    noisy = noisy_intervals(inst, 1.0, 0.1, seed=1)
    save_instance(noisy, path)
    assert json.loads(path.read_text())["predictions_may_miss"] is True
    back = load_instance(path)
    assert back == noisy and back.predictions_may_miss and _bounds(back) == _bounds(noisy)

    timed = bin_intervals(_timed([7, 250, 1000]))
    tpath = tmp_path / "t.json"
    save_timed_instance(timed, tpath)
    assert load_timed_instance(tpath) == timed
    assert load_any_instance(tpath) == timed
    tnoisy = noisy_intervals(timed, 1.0, 0.1, seed=3)
    save_timed_instance(tnoisy, tpath)
    assert load_timed_instance(tpath) == tnoisy and load_timed_instance(tpath).predictions_may_miss


def test_noisy_point_guesses_are_capped_at_m():
    """A huge sigma once gave bounds above 2^53 (an InstanceError); the point guess is capped at M."""
    inst = Instance(2000, tuple(Request(f"r{i}", 0, 1, 1000) for i in range(40)))
    out = noisy_intervals(inst, sigma=100, width=0.5, seed=0)
    assert out.predictions_may_miss
    assert max(r.upper for r in out.requests) <= 1.5 * inst.M
