"""Schedule files: what ``llmopt check`` reads and :func:`llmopt.check` accepts as a mapping.

A discrete schedule is ``{"starts": {request id: start step}, "evictions": [...]}`` (``evictions``
optional: ``[{"t": step, "id": ..., "tokens_lost": k}, ...]``, as ``llmopt simulate --json`` writes
it; other fields such as ``tel`` are ignored). A continuous-time one is what ``llmopt simulate
--json`` writes for a continuous-time instance: ``starts`` (request id → iteration),
``batch_start`` and ``batch_duration`` (seconds per batch), and optionally ``stalls``,
``evictions`` and ``cost_model``. The command line and the Python API read both through the
functions here, so they accept and refuse the same mappings with the same one-line messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["ScheduleFileError", "read_schedule_json", "discrete_schedule", "timed_schedule"]


class ScheduleFileError(ValueError):
    """Invalid schedule file or mapping; the message names the file (or ``schedule``) and the field."""


def is_cluster_mapping(data: Any) -> bool:
    """Whether a schedule file's JSON is a multi-worker run (``llmopt simulate --workers K --json``):
    a mapping with ``K``, ``assignment`` and ``workers``."""
    return isinstance(data, dict) and all(k in data for k in ("K", "assignment", "workers"))


def read_schedule_json(path: Path, *, timed: bool = False) -> Any:
    """The JSON value of schedule file ``path``.

    Raises
    ------
    ScheduleFileError
        If the file is unreadable, not UTF-8 or not JSON; the message names the file (and the line
        and column of a JSON error).
    """
    from llmopt.model.textfile import read_text

    try:
        text = read_text(path)
    except OSError as exc:
        raise ScheduleFileError(f"{path}: cannot read file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        if timed:
            raise ScheduleFileError(f"{path}: not a JSON file ({exc})") from None
        raise ScheduleFileError(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if timed:
            raise ScheduleFileError(f"{path}: not a JSON file ({exc})") from None
        where = f"line {exc.lineno} column {exc.colno}"
        raise ScheduleFileError(f"{path}: invalid JSON at {where}: {exc.msg}") from None


def discrete_schedule(data: Any, where: str = "schedule") -> tuple[dict[str, int], list[Any]]:
    """``(starts, evictions)`` of a discrete schedule mapping (see the module docstring).

    Parameters
    ----------
    data : object
        The parsed JSON value.
    where : str
        Names the source in messages (the file's path).

    Raises
    ------
    ScheduleFileError
        If ``data`` is a continuous-time schedule, lacks ``starts``, or a start is not an integer.
    """
    if isinstance(data, dict) and "clock" in data and data["clock"] != "seconds":
        raise ScheduleFileError(f"{where}: field 'clock' is {data['clock']!r}: the only accepted value is \"seconds\" "
                                "(a continuous-time schedule); a discrete schedule has no 'clock' field")
    if isinstance(data, dict) and data.get("clock") == "seconds":
        raise ScheduleFileError(f"{where}: a continuous-time schedule (\"clock\": \"seconds\"), but the instance is "
                                "discrete; check it against the continuous-time instance it was made for")
    if not isinstance(data, dict) or "starts" not in data:
        raise ScheduleFileError(f"{where}: missing field 'starts' (expected {{\"starts\": {{id: step}}}})")
    raw = data["starts"]
    if not isinstance(raw, dict):
        raise ScheduleFileError(f"{where}: field 'starts' must be an object mapping request id to start step")
    starts: dict[str, int] = {}
    for rid, k in raw.items():
        integral = isinstance(k, int) or (isinstance(k, float) and k.is_integer() and abs(k) <= 2.0**53)
        if isinstance(k, bool) or not integral:
            raise ScheduleFileError(f"{where}: field 'starts' entry {rid!r} must be an integer, got {k!r}")
        starts[str(rid)] = int(k)
    evictions = data.get("evictions") or []
    if not isinstance(evictions, list) or not all(isinstance(e, dict) for e in evictions):
        raise ScheduleFileError(f"{where}: field 'evictions' must be a list of objects with t, id, tokens_lost")
    return starts, evictions


def timed_schedule(data: Any, where: str = "schedule") -> dict[str, Any]:
    """The fields of a continuous-time schedule mapping: ``starts``, ``batch_start``,
    ``batch_duration``, ``stalls``, ``evictions``, ``chunks`` (partial prefill chunks, ``[]`` when absent),
    ``paused`` and ``eviction_starts`` (paused iterations and the evicted runs' starts, ``[]`` when absent)
    and ``cost_model`` (``None`` when absent).

    Raises
    ------
    ScheduleFileError
        If a required field is missing or a field has the wrong type; the message names it.
    """
    if not isinstance(data, dict):
        raise ScheduleFileError(f"{where}: top level must be an object")
    if "clock" in data and data["clock"] != "seconds":
        raise ScheduleFileError(f"{where}: field 'clock' is {data['clock']!r}: the only accepted value is "
                                "\"seconds\"")
    for key in ("starts", "batch_start", "batch_duration"):
        if key not in data:
            raise ScheduleFileError(f"{where}: missing field {key!r}; a continuous-time schedule is what "
                                    "`llmopt simulate INSTANCE --json` writes for a continuous-time instance")
    if not isinstance(data["starts"], dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                                       for v in data["starts"].values()):
        raise ScheduleFileError(f"{where}: field 'starts' must map request ids to integer iterations")
    for key in ("batch_start", "batch_duration"):
        if not isinstance(data[key], list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                      for v in data[key]):
            raise ScheduleFileError(f"{where}: field {key!r} must be a list of numbers (seconds)")
    stalls = data.get("stalls", {})
    if not isinstance(stalls, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in stalls.values()):
        raise ScheduleFileError(f"{where}: field 'stalls' must map iterations to integer counts of lost iterations")
    chunks = data.get("chunks", [])
    if not isinstance(chunks, list) or not all(
            isinstance(c, list) and len(c) == 3 and isinstance(c[1], str)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in (c[0], c[2])) for c in chunks):
        raise ScheduleFileError(f"{where}: field 'chunks' must be a list of [iteration, request id, tokens] "
                                "(partial prefill chunks)")
    ints = {}
    for key, what in (("paused", "paused (prefill-only) iterations"), ("eviction_starts", "evicted runs' starts")):
        v = data.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise ScheduleFileError(f"{where}: field {key!r} must be a list of integer iterations ({what})")
        ints[key] = v
    name = data.get("cost_model")
    return {"paused": ints["paused"], "eviction_starts": ints["eviction_starts"],
            "starts": data["starts"], "batch_start": data["batch_start"], "batch_duration": data["batch_duration"],
            "stalls": stalls, "evictions": data.get("evictions") or [], "chunks": chunks,
            "cost_model": name if isinstance(name, str) else None}
