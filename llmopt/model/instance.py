"""Problem instances: one worker, a KV cache of ``M`` tokens, and a set of requests.

An :class:`Instance` is immutable and validated on construction (DESIGN §1): every
request has an integer arrival ``a >= 0``, prompt ``s >= 1`` and output ``o >= 1``,
and ``s + o <= M`` (a request that can never fit is an error, never dropped).

The JSON file format, read by :func:`load_instance` and written by
:func:`save_instance`, is::

    {"M": 40, "name": "optional label",
     "requests": [{"id": "r0", "arrival": 0, "prompt": 3, "output": 7}, ...]}

A request may carry a **prediction interval** for its output length, ``"lower": ℓ_i`` and
``"upper": u_i`` (both or neither; C §2): ``1 <= ℓ_i <= u_i``, and the interval must contain
the true output, ``ℓ_i <= o_i <= u_i``, unless the instance declares
``"predictions_may_miss": true`` (predictions from a real predictor, which can be wrong).
Prediction-based policies see the interval, never ``o_i`` (DESIGN §1, "Information").

Rules (each violation is an :class:`InstanceError` naming the file, the request index
and the field):

* ``id`` is optional and defaults to ``r<index>`` (``r0``, ``r1``, … in file order); an
  integer id is read as its decimal string.
* Numbers must be integers. A JSON float is accepted only when it is integral and at
  most ``2^53`` in size (``3.0`` is 3; ``2.5`` and ``1e18`` are errors), because larger
  floats are not exact integers. Every value must be at most :data:`MAX_VALUE`
  (``2^53 − 1``): solvers compute in double precision, which represents larger times
  inexactly. Arrivals may be large (Unix timestamps in milliseconds are fine): time
  origins cost nothing anywhere in llmopt.
* Fields other than the documented ones are errors (a misspelt ``"ouput"`` would
  otherwise be silently ignored).
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from llmopt.model.textfile import read_text

__all__ = [
    "MAX_VALUE",
    "InstanceError",
    "Request",
    "Instance",
    "load_instance",
    "save_instance",
    "instance_from_dict",
    "instance_to_dict",
    "check_interval",
]


R = TypeVar("R")

#: Largest value of any field: every integer up to it is exact in double precision.
MAX_VALUE = 2**53 - 1

_REQUEST_FIELDS = ("id", "arrival", "prompt", "output", "lower", "upper")
_TOP_FIELDS = ("M", "name", "predictions_may_miss", "requests")


class InstanceError(ValueError):
    """Invalid instance data; the message names the file, request and field."""


def _as_int(value: Any, where: str, field_name: str) -> int:
    # bool is an int subclass; a JSON `true` is never a valid length.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InstanceError(f"{where}: field '{field_name}' must be an integer, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise InstanceError(f"{where}: field '{field_name}' must be an integer, got {value!r}")
        if abs(value) > 2.0**53:
            raise InstanceError(f"{where}: field '{field_name}' is the float {value!r}, which is not an exact "
                                "integer above 2^53; write it as an integer")
        value = int(value)
    return int(value)


def _check_range(value: int, where: str, field_name: str) -> None:
    if value > MAX_VALUE:
        raise InstanceError(f"{where}: field '{field_name}' is {value}, above the largest supported value "
                            f"2^53 - 1 = {MAX_VALUE}")


def _unknown_fields(data: dict, known: tuple[str, ...], where: str) -> None:
    extra = [k for k in data if k not in known]
    if extra:
        raise InstanceError(f"{where}: unknown field {extra[0]!r}; the fields are {', '.join(known)}")


def check_interval(lower: Any, upper: Any, where: str) -> None:
    """Validate a prediction interval ``[lower, upper]`` (both ``None``, or integers ``1 <= lower <= upper``)."""
    if lower is None and upper is None:
        return
    for name, value in (("lower", lower), ("upper", upper)):
        if value is None:
            other = "upper" if name == "lower" else "lower"
            raise InstanceError(f"{where}: field '{name}' is missing while '{other}' is given; "
                                "a prediction interval needs both")
        if isinstance(value, bool) or not isinstance(value, int):
            raise InstanceError(f"{where}: field '{name}' must be an integer, got {value!r}")
        _check_range(value, where, name)
    if lower < 1:
        raise InstanceError(f"{where}: field 'lower' must be >= 1, got {lower}")
    if upper < lower:
        raise InstanceError(f"{where}: field 'upper' = {upper} is below 'lower' = {lower}")


def interval_from_item(item: Mapping[str, Any], where: str) -> dict[str, int]:
    """The ``lower`` / ``upper`` fields of a JSON request object, as integers (empty if absent)."""
    return {k: _as_int(item[k], where, k) for k in ("lower", "upper") if k in item}


def interval_to_item(request: Any) -> dict[str, int]:
    """The ``lower`` / ``upper`` fields of a request for its JSON object (empty if it has none)."""
    return {} if request.lower is None else {"lower": request.lower, "upper": request.upper}


@dataclass(frozen=True, slots=True)
class Request:
    """One inference request.

    Attributes
    ----------
    id : str
        Unique name of the request within its instance.
    arrival : int
        Arrival step ``a_i``; the request may start at any step ``k >= a_i``.
    prompt : int
        Prompt size ``s_i`` in tokens (KV-cache entries held from the start).
    output : int
        Output length ``o_i``: the request runs ``o_i`` steps once started.
    lower, upper : int or None
        Prediction interval ``[ℓ_i, u_i]`` of the output length (C §2), or ``None`` (no
        prediction). Whether it must contain ``o_i`` is the instance's business
        (:attr:`Instance.predictions_may_miss`).
    """

    id: str
    arrival: int
    prompt: int
    output: int
    lower: int | None = None
    upper: int | None = None

    @property
    def token_steps(self) -> int:
        """KV-cache token-steps the request holds over its run, ``s·o + o(o+1)/2`` (its memory
        usage ``s + 1, …, s + o`` summed; the work of the energy bound)."""
        return self.prompt * self.output + self.output * (self.output + 1) // 2

    def __post_init__(self) -> None:
        where = f"request {self.id!r}"
        if not isinstance(self.id, str) or not self.id:
            raise InstanceError(f"request {self.id!r}: field 'id' must be a non-empty string")
        for name in ("arrival", "prompt", "output"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InstanceError(f"{where}: field '{name}' must be an integer, got {value!r}")
        if self.arrival < 0:
            raise InstanceError(f"{where}: field 'arrival' must be >= 0, got {self.arrival}")
        if self.prompt < 1:
            raise InstanceError(f"{where}: field 'prompt' must be >= 1, got {self.prompt}")
        if self.output < 1:
            raise InstanceError(f"{where}: field 'output' must be >= 1, got {self.output}")
        for name in ("arrival", "prompt", "output"):
            _check_range(getattr(self, name), where, name)
        check_interval(self.lower, self.upper, where)

    @property
    def peak(self) -> int:
        """KV-cache usage at completion, ``s_i + o_i``."""
        return self.prompt + self.output


class RequestIndex(Generic[R]):
    """Lookups shared by :class:`Instance` and :class:`~llmopt.model.timed_instance.TimedInstance`
    (both hold ``requests`` and the id index ``_index`` that :func:`validate_requests` sets)."""

    __slots__ = ()
    requests: tuple[R, ...]
    _index: Mapping[str, int]

    @property
    def n(self) -> int:
        """Number of requests."""
        return len(self.requests)

    def __len__(self) -> int:
        return len(self.requests)

    def position(self, request_id: str) -> int:
        """Index of ``request_id`` in :attr:`requests`."""
        try:
            return self._index[request_id]
        except KeyError:
            raise KeyError(f"no request with id {request_id!r}") from None

    def by_id(self, request_id: str) -> R:
        """The request named ``request_id``."""
        return self.requests[self.position(request_id)]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.requests)  # type: ignore[attr-defined]

    @property
    def total_output(self) -> int:
        """``Σ o_i``: the TEL of a schedule with no waiting at all."""
        return sum(r.output for r in self.requests)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Instance(RequestIndex[Request]):
    """A validated, immutable scheduling instance.

    Parameters
    ----------
    M : int
        KV-cache capacity in tokens.
    requests : tuple of Request
        The requests, in file order. Ids must be unique.
    name : str, optional
        Free-form label (e.g. the workload and seed that produced it).
    predictions_may_miss : bool, optional
        If true, a request's prediction interval need not contain its output length
        (default false: ``ℓ_i <= o_i <= u_i`` is checked).

    Raises
    ------
    InstanceError
        On duplicate ids, non-integer values, a request with ``s + o > M``, or an
        interval that misses ``o_i`` while ``predictions_may_miss`` is false.
    """

    M: int
    requests: tuple[Request, ...]
    name: str = ""
    predictions_may_miss: bool = False
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        validate_requests(self, Request)

    @classmethod
    def from_tuples(
        cls, M: int, rows: Iterable[Sequence[int]], name: str = "", prefix: str = "r"
    ) -> Instance:
        """Build from ``(arrival, prompt, output)`` rows; ids are ``r0, r1, ...``."""
        reqs = tuple(
            Request(f"{prefix}{i}", _int_like(a), _int_like(s), _int_like(o)) for i, (a, s, o) in enumerate(rows)
        )
        return cls(M=_int_like(M), requests=reqs, name=name)


def validate_requests(instance: Any, request_type: type) -> None:
    """Validate ``M`` and the requests of a frozen instance (discrete or timed) and set its id index.

    Raises :class:`InstanceError` on a bad ``M``, a request of the wrong type, a duplicate id,
    a request with ``s + o > M``, or a prediction interval that does not contain ``o_i``
    while ``predictions_may_miss`` is false.
    """
    M, name = instance.M, instance.name
    if not isinstance(instance.predictions_may_miss, bool):
        raise InstanceError(f"instance {name!r}: field 'predictions_may_miss' must be true or false, "
                            f"got {instance.predictions_may_miss!r}")
    strict = not instance.predictions_may_miss
    if isinstance(M, bool) or not isinstance(M, int) or M < 2:
        raise InstanceError(f"instance {name!r}: field 'M' must be an integer >= 2, got {M!r}")
    _check_range(M, f"instance {name!r}", "M")
    reqs = tuple(instance.requests)
    object.__setattr__(instance, "requests", reqs)
    index: dict[str, int] = {}
    for pos, item in enumerate(reqs):
        if not isinstance(item, request_type):
            raise InstanceError(f"request #{pos}: expected a {request_type.__name__}, got {type(item).__name__}")
        r: Any = item
        if r.id in index:
            raise InstanceError(f"request #{pos} {r.id!r}: field 'id' duplicates request #{index[r.id]}")
        if r.peak > M:
            raise InstanceError(
                f"request #{pos} {r.id!r}: prompt + output = {r.prompt} + {r.output} = {r.peak} "
                f"exceeds M = {M}; it can never run"
            )
        if strict and r.lower is not None and not r.lower <= r.output <= r.upper:
            bad = "lower" if r.output < r.lower else "upper"
            raise InstanceError(
                f"request #{pos} {r.id!r}: field '{bad}': the interval [{r.lower}, {r.upper}] does not contain "
                f"the output length {r.output}; set \"predictions_may_miss\": true if predictions may be wrong"
            )
        index[r.id] = pos
    object.__setattr__(instance, "_index", index)


def read_json_file(path: str | Path) -> tuple[Path, Any]:
    """Read and parse a JSON file; errors (unreadable, not UTF-8, invalid JSON) name the file."""
    p = Path(path)
    try:
        text = read_text(p)
    except OSError as exc:
        raise InstanceError(f"{p}: cannot read file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InstanceError(f"{p}: not UTF-8 text (byte offset {exc.start})") from None
    try:
        return p, json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{p}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def _int_like(value: Any) -> Any:
    """numpy integers become ``int``; anything else is passed on for validation to reject."""
    if isinstance(value, bool):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


def parse_instance_dict(data: Any, source: str, *, instance_type: type, request_type: type,
                        top_fields: tuple[str, ...], int_fields: tuple[str, ...]) -> Any:
    """The one parser behind :func:`instance_from_dict` and
    :func:`llmopt.model.timed_instance.timed_instance_from_dict` (the ``clock`` field is the caller's).

    Errors name ``source`` (usually the file), the request index and the field. Request fields in
    ``int_fields`` must be integers; the others are handed to ``request_type`` to validate (a timed
    arrival is a float).
    """
    if not isinstance(data, dict):
        raise InstanceError(f"{source}: top level must be an object with "
                            + ("'clock', " if "clock" in top_fields else "") + "'M' and 'requests'")
    _unknown_fields(data, top_fields, source)
    if "M" not in data:
        raise InstanceError(f"{source}: missing field 'M'")
    M = _as_int(data["M"], source, "M")
    raw = data.get("requests")
    if not isinstance(raw, list):
        raise InstanceError(f"{source}: field 'requests' must be a list")
    reqs = []
    for pos, item in enumerate(raw):
        where = f"{source}: request #{pos}"
        if not isinstance(item, dict):
            raise InstanceError(f"{where}: must be an object")
        _unknown_fields(item, _REQUEST_FIELDS, where)
        for key in ("arrival", "prompt", "output"):
            if key not in item:
                raise InstanceError(f"{where}: missing field '{key}'")
        rid = item.get("id", f"r{pos}")
        if not isinstance(rid, (str, int)) or isinstance(rid, bool):
            raise InstanceError(f"{where}: field 'id' must be a string, got {rid!r}")
        values = {k: _as_int(item[k], where, k) if k in int_fields else item[k]
                  for k in ("arrival", "prompt", "output")}
        values.update(interval_from_item(item, where))
        try:
            reqs.append(request_type(str(rid), **values))
        except InstanceError as exc:
            raise InstanceError(f"{where}: {exc}") from None
    try:
        return instance_type(M=M, requests=tuple(reqs), name=str(data.get("name", "")),
                             predictions_may_miss=data.get("predictions_may_miss", False))
    except InstanceError as exc:
        raise InstanceError(f"{source}: {exc}") from None


def instance_dict(instance: Any, head: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON object form of a discrete or timed instance (``head``: fields written first, e.g. the clock)."""
    out: dict[str, Any] = {**(head or {}), "M": instance.M}
    if instance.name:
        out["name"] = instance.name
    if instance.predictions_may_miss:
        out["predictions_may_miss"] = True
    out["requests"] = [
        {"id": r.id, "arrival": r.arrival, "prompt": r.prompt, "output": r.output, **interval_to_item(r)}
        for r in instance.requests
    ]
    return out


def instance_from_dict(data: Any, source: str = "<dict>") -> Instance:
    """Parse the JSON object form of an instance.

    Errors name ``source`` (usually the file), the request index and the field.
    """
    if isinstance(data, dict) and "clock" in data and data["clock"] != "seconds":
        raise InstanceError(
            f"{source}: field 'clock' is {data['clock']!r}: the only accepted value is \"seconds\" (a continuous-time "
            "instance, arrivals in seconds); leave the field out for a discrete instance (arrivals in integer steps)"
        )
    if isinstance(data, dict) and "clock" in data:
        raise InstanceError(
            f"{source}: field 'clock' is {data['clock']!r}: this is a continuous-time instance (arrivals in "
            "seconds), and this command needs integer steps (the discrete model of DESIGN §1). "
            "Run it with `llmopt simulate` / `llmopt check`, which use the continuous engine and checker, "
            "or write a discrete instance from the trace with `llmopt trace ... --step-seconds DT`"
        )
    return parse_instance_dict(data, source, instance_type=Instance, request_type=Request, top_fields=_TOP_FIELDS,
                               int_fields=("arrival", "prompt", "output"))  # type: ignore[no-any-return]


def instance_to_dict(instance: Instance) -> dict[str, Any]:
    """The JSON object form of ``instance`` (inverse of :func:`instance_from_dict`)."""
    return instance_dict(instance)


def load_instance(path: str | Path) -> Instance:
    """Read an instance from a JSON file.

    Raises
    ------
    InstanceError
        If the file is not valid JSON or any field is invalid; the message names the
        file, the request index and the field.
    """
    p, data = read_json_file(path)
    return instance_from_dict(data, source=str(p))


def save_instance(instance: Instance, path: str | Path) -> None:
    """Write ``instance`` as JSON."""
    Path(path).write_text(json.dumps(instance_to_dict(instance), indent=1) + "\n")
