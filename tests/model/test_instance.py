"""Instance validation and the JSON file format (DESIGN §1, §4 invariant 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from llmopt.model.instance import (
    Instance,
    InstanceError,
    Request,
    instance_from_dict,
    instance_to_dict,
    load_instance,
    save_instance,
)

# --- Request / Instance validation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [("prompt", 0), ("prompt", -3), ("output", 0), ("output", -1), ("arrival", -1)],
)
def test_request_rejects_out_of_range_value_naming_request_and_field(field, value):
    kwargs = {"arrival": 0, "prompt": 2, "output": 3, field: value}
    with pytest.raises(InstanceError) as exc:
        Request("req-7", **kwargs)
    msg = str(exc.value)
    assert "req-7" in msg
    assert field in msg
    assert str(value) in msg


@pytest.mark.parametrize("field", ["arrival", "prompt", "output"])
@pytest.mark.parametrize("value", [2.5, True, False, "3", None])
def test_request_rejects_non_integer_and_bool(field, value):
    kwargs = {"arrival": 0, "prompt": 2, "output": 3, field: value}
    with pytest.raises(InstanceError) as exc:
        Request("req-x", **kwargs)
    msg = str(exc.value)
    assert "req-x" in msg and field in msg
    assert "integer" in msg


@pytest.mark.parametrize("bad_id", ["", 7, None])
def test_request_rejects_bad_id(bad_id):
    with pytest.raises(InstanceError, match="id"):
        Request(bad_id, 0, 1, 1)


def test_instance_rejects_request_that_can_never_fit():
    ok = Request("fits", 0, 4, 6)  # s + o = 10 = M: allowed
    big = Request("too-big", 0, 4, 7)  # 11 > 10
    Instance(10, (ok,))
    with pytest.raises(InstanceError) as exc:
        Instance(10, (ok, big))
    msg = str(exc.value)
    assert "too-big" in msg and "#1" in msg
    assert "prompt" in msg and "output" in msg
    assert "11" in msg and "10" in msg


def test_instance_rejects_duplicate_ids_naming_both_positions():
    with pytest.raises(InstanceError) as exc:
        Instance(10, (Request("a", 0, 1, 1), Request("b", 0, 1, 1), Request("a", 1, 1, 2)))
    msg = str(exc.value)
    assert "'a'" in msg and "id" in msg
    assert "#2" in msg and "#0" in msg


@pytest.mark.parametrize("M", [0, 1, -5, 2.5, True, "10", None])
def test_instance_rejects_bad_memory_limit(M):
    with pytest.raises(InstanceError, match="'M'"):
        Instance(M, ())


def test_instance_rejects_non_request_items():
    with pytest.raises(InstanceError, match="#1"):
        Instance(10, (Request("a", 0, 1, 1), (0, 1, 1)))


def test_instance_is_immutable_and_indexed():
    inst = Instance.from_tuples(10, [(0, 2, 3), (4, 1, 1)], name="x")
    assert inst.ids == ("r0", "r1")
    assert inst.by_id("r1") == Request("r1", 4, 1, 1)
    assert inst.position("r1") == 1 and inst.n == 2 and len(inst) == 2
    assert inst.total_output == 4
    assert isinstance(inst.requests, tuple)
    with pytest.raises(AttributeError):
        inst.M = 11  # type: ignore[misc]
    with pytest.raises(AttributeError):
        inst.requests[0].prompt = 5  # type: ignore[misc]
    with pytest.raises(KeyError, match="nope"):
        inst.by_id("nope")


def test_instance_copies_a_list_of_requests():
    reqs = [Request("a", 0, 1, 1)]
    inst = Instance(10, reqs)  # type: ignore[arg-type]
    reqs.append(Request("b", 0, 1, 1))
    assert inst.n == 1


@pytest.mark.parametrize("row", [(0, 2.5, 3), (0, 2, True), (1.5, 2, 3)])
def test_from_tuples_rejects_non_integers(row):
    with pytest.raises(InstanceError):
        Instance.from_tuples(10, [row])


# --- JSON round trip ------------------------------------------------------------------------------


def test_json_round_trip(tmp_path):
    inst = Instance(
        40,
        (Request("q1", 0, 3, 7), Request("z", 5, 1, 39), Request("a", 2, 5, 1), Request("m", 2, 5, 1)),
        name="round/trip",
    )
    path = tmp_path / "inst.json"
    save_instance(inst, path)
    back = load_instance(path)
    assert back == inst
    assert back.name == "round/trip"
    assert back.ids == ("q1", "z", "a", "m")  # file order kept
    assert [(r.arrival, r.prompt, r.output) for r in back.requests] == [(0, 3, 7), (5, 1, 39), (2, 5, 1), (2, 5, 1)]
    # the file is plain JSON of the documented form
    data = json.loads(path.read_text())
    assert data["M"] == 40
    assert data["requests"][1] == {"id": "z", "arrival": 5, "prompt": 1, "output": 39}
    assert instance_from_dict(instance_to_dict(inst)) == inst


def test_json_defaults_missing_ids_and_accepts_integral_floats(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"M": 10.0, "requests": [{"arrival": 0, "prompt": 2.0, "output": 3}, {
        "id": 5, "arrival": 1, "prompt": 1, "output": 1}]}))
    inst = load_instance(path)
    assert inst.M == 10 and isinstance(inst.M, int)
    assert inst.ids == ("r0", "5")
    assert inst.requests[0].prompt == 2 and isinstance(inst.requests[0].prompt, int)


# --- malformed files: errors name file, request index and field ------------------------------------


def _write(tmp_path: Path, requests, M=10, name="bad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"M": M, "requests": requests}, indent=1))
    return path


GOOD = [{"id": "a", "arrival": 0, "prompt": 1, "output": 2}, {"id": "b", "arrival": 1, "prompt": 2, "output": 2}]


@pytest.mark.parametrize(
    ("third", "field"),
    [
        ({"id": "c", "arrival": 0, "prompt": 0, "output": 2}, "prompt"),
        ({"id": "c", "arrival": 0, "prompt": -2, "output": 2}, "prompt"),
        ({"id": "c", "arrival": 0, "prompt": 1, "output": 0}, "output"),
        ({"id": "c", "arrival": -1, "prompt": 1, "output": 2}, "arrival"),
        ({"id": "c", "arrival": 0, "prompt": 2.5, "output": 2}, "prompt"),
        ({"id": "c", "arrival": 0, "prompt": 1, "output": True}, "output"),
        ({"id": "c", "arrival": "0", "prompt": 1, "output": 2}, "arrival"),
        ({"id": "c", "arrival": 0, "prompt": 1}, "output"),
        ({"id": "c", "arrival": 0, "prompt": 1, "output": None}, "output"),
        ({"id": "c", "arrival": 0, "prompt": 4, "output": 7}, "output"),  # s + o = 11 > M = 10
        ({"id": "a", "arrival": 0, "prompt": 1, "output": 2}, "id"),  # duplicate of request #0
        ({"id": True, "arrival": 0, "prompt": 1, "output": 2}, "id"),
    ],
)
def test_malformed_file_error_names_file_request_index_and_field(tmp_path, third, field):
    path = _write(tmp_path, GOOD + [third])
    with pytest.raises(InstanceError) as exc:
        load_instance(path)
    msg = str(exc.value)
    assert str(path) in msg
    assert "request #2" in msg
    assert re.search(rf"\b{field}\b", msg), msg


def test_malformed_entry_that_is_not_an_object(tmp_path):
    path = _write(tmp_path, GOOD + [[0, 1, 2]])
    with pytest.raises(InstanceError) as exc:
        load_instance(path)
    assert str(path) in str(exc.value) and "request #2" in str(exc.value)


@pytest.mark.parametrize(
    ("data", "field"),
    [({"requests": []}, "M"), ({"M": 1.5, "requests": []}, "M"), ({"M": 1, "requests": []}, "M"),
     ({"M": 10, "requests": {}}, "requests"), ({"M": 10}, "requests")],
)
def test_malformed_top_level_names_file_and_field(tmp_path, data, field):
    path = tmp_path / "top.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InstanceError) as exc:
        load_instance(path)
    assert str(path) in str(exc.value)
    assert field in str(exc.value)


def test_top_level_not_an_object(tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(InstanceError, match=re.escape(str(path))):
        load_instance(path)


def test_invalid_json_names_file_and_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n "M": 10,\n "requests": [\n  {"arrival": 0, "prompt": 1, "output": 2,}\n ]\n}\n')
    with pytest.raises(InstanceError) as exc:
        load_instance(path)
    msg = str(exc.value)
    assert str(path) in msg
    assert re.search(r"line 4\b", msg), msg


def test_non_utf8_file_names_file(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"M": 10, "requests": [{"id": "caf\xe9", "arrival": 0, "prompt": 1, "output": 1}]}')
    with pytest.raises(InstanceError, match=re.escape(str(path))):
        load_instance(path)


def test_missing_file_names_file(tmp_path):
    path = tmp_path / "does-not-exist.json"
    with pytest.raises(InstanceError, match=re.escape(str(path))):
        load_instance(path)


# --- prediction intervals (C §2) --------------------------------------------------------------------

def _with_interval(lower, upper, output=5, **top):
    return {"M": 20, **top, "requests": [{"arrival": 0, "prompt": 1, "output": 2},
                                         {"id": "q", "arrival": 0, "prompt": 1, "output": output,
                                          "lower": lower, "upper": upper}]}


@pytest.mark.parametrize("lower,upper,field", [(6, 9, "lower"), (1, 4, "upper"), (0, 5, "lower"),
                                               (5, 3, "upper"), (2.5, 6, "lower"), (None, 6, "lower")])
def test_interval_errors_name_file_request_and_field(lower, upper, field):
    data = _with_interval(lower, upper)
    if lower is None:
        del data["requests"][1]["lower"]
    with pytest.raises(InstanceError, match=rf"f\.json.*request #1.*'{field}'"):
        instance_from_dict(data, "f.json")


def test_interval_that_misses_is_allowed_only_with_the_flag():
    inst = instance_from_dict(_with_interval(6, 9, predictions_may_miss=True), "f.json")
    assert inst.predictions_may_miss and inst.requests[1].lower == 6
    assert instance_from_dict(instance_to_dict(inst)) == inst
    with pytest.raises(InstanceError, match="predictions_may_miss"):
        instance_from_dict(_with_interval(1, 9, predictions_may_miss="yes"), "f.json")


def test_interval_round_trips_and_is_absent_when_not_given():
    inst = instance_from_dict(_with_interval(3, 7), "f.json")
    d = instance_to_dict(inst)
    assert "lower" not in d["requests"][0] and d["requests"][1]["lower"] == 3 and d["requests"][1]["upper"] == 7
    assert "predictions_may_miss" not in d
    assert instance_from_dict(d) == inst
