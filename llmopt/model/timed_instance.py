"""Continuous-time instances: arrivals in seconds (DESIGN §2, real traces).

A :class:`TimedInstance` is the continuous-time sibling of
:class:`llmopt.model.instance.Instance`: the same validated, immutable requests (prompt
``s >= 1``, output ``o >= 1``, ``s + o <= M``), but arrivals are real numbers of seconds
(``>= 0`` and finite). It is what the trace loaders produce and what the continuous
engine (:mod:`llmopt.engine.continuous`) runs. The discrete commands (``solve``, the IP and its
bounds) need integer steps; they reject a timed instance with a message that says so
instead of rounding its clock silently.

The JSON form is the discrete one plus ``"clock": "seconds"``::

    {"clock": "seconds", "M": 16492, "name": "lmsys n=1000 rate=50 seed=0",
     "requests": [{"id": "r0", "arrival": 0.0213, "prompt": 42, "output": 117}, ...]}

Errors name the file, the request index and the field (DESIGN §4 inv. 4).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmopt.model.instance import (
    MAX_VALUE,
    Instance,
    InstanceError,
    RequestIndex,
    _unknown_fields,
    check_interval,
    instance_dict,
    instance_from_dict,
    parse_instance_dict,
    read_json_file,
    validate_requests,
)

__all__ = [
    "CLOCK_SECONDS",
    "TimedRequest",
    "TimedInstance",
    "timed_instance_from_dict",
    "timed_instance_to_dict",
    "load_timed_instance",
    "save_timed_instance",
    "load_any_instance",
    "is_timed_file_dict",
]

CLOCK_SECONDS = "seconds"
_REQUEST_FIELDS = ("id", "arrival", "prompt", "output", "lower", "upper")
_TOP_FIELDS = ("clock", "M", "name", "predictions_may_miss", "requests")


@dataclass(frozen=True, slots=True)
class TimedRequest:
    """One request of a continuous-time instance.

    Attributes
    ----------
    id : str
    arrival : float
        Arrival time in seconds (``>= 0``, finite).
    prompt : int
        Prompt size ``s_i`` in tokens.
    output : int
        Output length ``o_i`` in tokens (iterations once started).
    lower, upper : int or None
        Prediction interval of the output length, as in :class:`llmopt.model.instance.Request`.
    """

    id: str
    arrival: float
    prompt: int
    output: int
    lower: int | None = None
    upper: int | None = None

    def __post_init__(self) -> None:
        where = f"request {self.id!r}"
        if not isinstance(self.id, str) or not self.id:
            raise InstanceError(f"request {self.id!r}: field 'id' must be a non-empty string")
        a = self.arrival
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a) or a < 0:
            raise InstanceError(f"{where}: field 'arrival' must be a finite number of seconds >= 0, got {a!r}")
        object.__setattr__(self, "arrival", float(a))
        for name in ("prompt", "output"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InstanceError(f"{where}: field '{name}' must be an integer, got {value!r}")
            if value < 1:
                raise InstanceError(f"{where}: field '{name}' must be >= 1, got {value}")
            if value > MAX_VALUE:
                raise InstanceError(f"{where}: field '{name}' is {value}, above 2^53 - 1")
        check_interval(self.lower, self.upper, where)

    @property
    def peak(self) -> int:
        """KV-cache usage at completion, ``s_i + o_i``."""
        return self.prompt + self.output


@dataclass(frozen=True, slots=True)
class TimedInstance(RequestIndex[TimedRequest]):
    """A validated, immutable continuous-time instance (arrivals in seconds).

    Parameters
    ----------
    M : int
        KV-cache capacity in tokens.
    requests : tuple of TimedRequest
        In file order; ids unique.
    name : str, optional
    predictions_may_miss : bool, optional
        As in :class:`llmopt.model.instance.Instance`.

    Raises
    ------
    InstanceError
        On duplicate ids, invalid values, a request with ``s + o > M``, or an interval
        that misses ``o_i`` while ``predictions_may_miss`` is false.
    """

    M: int
    requests: tuple[TimedRequest, ...]
    name: str = ""
    predictions_may_miss: bool = False
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        validate_requests(self, TimedRequest)


def is_timed_file_dict(data: Any) -> bool:
    """Whether a parsed instance file declares ``"clock": "seconds"``."""
    return isinstance(data, dict) and data.get("clock") == CLOCK_SECONDS


def timed_instance_from_dict(data: Any, source: str = "<dict>") -> TimedInstance:
    """Parse the JSON object form (``"clock": "seconds"`` required); the parser is
    :func:`llmopt.model.instance.parse_instance_dict`, shared with discrete instances."""
    if isinstance(data, dict) and data.get("clock") != CLOCK_SECONDS:
        _unknown_fields(data, _TOP_FIELDS, source)
        raise InstanceError(f"{source}: field 'clock' must be {CLOCK_SECONDS!r} for a continuous-time instance, "
                            f"got {data.get('clock')!r}")
    return parse_instance_dict(data, source, instance_type=TimedInstance,  # type: ignore[no-any-return]
                               request_type=TimedRequest, top_fields=_TOP_FIELDS, int_fields=("prompt", "output"))


def timed_instance_to_dict(instance: TimedInstance) -> dict[str, Any]:
    """The JSON object form of ``instance`` (inverse of :func:`timed_instance_from_dict`)."""
    return instance_dict(instance, {"clock": CLOCK_SECONDS})


def load_timed_instance(path: str | Path) -> TimedInstance:
    """Read a continuous-time instance file (errors name file, request and field)."""
    p, data = read_json_file(path)
    return timed_instance_from_dict(data, source=str(p))


def load_any_instance(path: str | Path) -> Instance | TimedInstance:
    """Read a discrete or a continuous-time instance file, whichever it declares."""
    p, data = read_json_file(path)
    if is_timed_file_dict(data):
        return timed_instance_from_dict(data, source=str(p))
    return instance_from_dict(data, source=str(p))


def save_timed_instance(instance: TimedInstance, path: str | Path) -> None:
    """Write ``instance`` as JSON (arrivals with full float precision)."""
    Path(path).write_text(json.dumps(timed_instance_to_dict(instance), indent=1) + "\n")
