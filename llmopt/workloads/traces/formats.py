"""Real request traces: loaders, validation, and workload sampling (DESIGN §2).

A trace file gives, per request, a prompt length, an output length and (for some
formats) an arrival time. :func:`load_trace` reads one into a :class:`Trace` (numpy
arrays, file order); :func:`sample_instance` draws a continuous-time
:class:`~llmopt.model.timed_instance.TimedInstance` from it, and :func:`to_discrete_instance`
turns that into a discrete :class:`~llmopt.model.instance.Instance` for the IP and its bounds.

Formats
-------
Each is a loader in the :data:`TRACE_FORMATS` registry (``"module:attr"``, resolved
lazily; third-party formats plug in through the entry-point group
``llmopt.trace_formats`` and are then named explicitly with ``format=``):

========  ======================================================  ======  ================================
format    columns (prompt, output[, arrival])                     unit    arrival times
========  ======================================================  ======  ================================
lmsys     question_length, answer_length — or                     words   none
          num_prefill_tokens, num_decode_tokens (the 20k sample)
arxiv     num_prefill_tokens, num_decode_tokens (other columns    tokens  none
          ignored: vidur's processed length files)
azure     ContextTokens, GeneratedTokens, TIMESTAMP               tokens  ``2023-11-16 18:17:03.9799600``
                                                                          (or numbers: see below)
vidur     num_prefill_tokens, num_decode_tokens, arrived_at       tokens  seconds
mooncake  input_length, output_length, timestamp (JSON lines;     tokens  milliseconds
          ``hash_ids`` ignored)
========  ======================================================  ======  ================================

LMSYS lengths are **word counts** (``Trace.unit == "words"``); they are used as token
counts, as the papers do. Timestamps become float seconds since the first kept row, in
file order. An Azure-layout file whose ``TIMESTAMP`` column holds only numbers (a Unix time,
say) is read in seconds, as vidur's, and :func:`~llmopt.workloads.traces.with_time_unit`
(``--time-unit ms``) rescales it like any numeric timestamp (``Trace.time_kind`` says which
kind was read).

Format detection (``format=None``): a ``.jsonl`` file with ``input_length`` and
``output_length`` keys is ``mooncake``; a CSV header with ``TIMESTAMP``, ``ContextTokens``,
``GeneratedTokens`` is ``azure``; ``question_length``, ``answer_length`` is ``lmsys``;
``arrived_at``, ``num_prefill_tokens``, ``num_decode_tokens`` is ``vidur``;
``num_prefill_tokens``, ``num_decode_tokens`` without ``arrived_at`` is ``lmsys`` when the
file name contains ``lmsys`` (the 20k LMSYS sample renamed its word columns) and
``arxiv`` otherwise. Anything else is a :class:`TraceError` listing the formats and
their columns.

Rows and lines
--------------
Rows are numbered 1, 2, … in file order over the data rows. In a CSV file row ``r`` is
line ``r + 1`` (line 1 is the header; a blank line inside the file is a row with missing
values, so the numbering never drifts; blank lines at the very end are ignored). In a
JSON-lines file blank lines are skipped and the message gives the real line number.
:attr:`Trace.source_rows` keeps the row number of every kept row, so later errors (e.g.
a sampled request too long for ``M``) still name the file row.

Bad rows
--------
A row is bad when a cell it needs is

* **missing** (empty cell, absent JSON key), **non-numeric** (also ``inf``/``nan``),
  **not an integer** (``12.5``; ``12.0`` is 12) or **too large** (above ``2^53 − 1``) — a
  length, or an arrival time that is missing or cannot be parsed;
* a length that is **zero** or **negative** (DESIGN §1 needs ``s, o >= 1``);
* **too long for M** (only when ``M`` is given): ``prompt + output > M``; such a request
  can never run;
* a **decreasing** timestamp: earlier than some row above it (arrival order is file
  order). The staged Azure, vidur and Mooncake files are all nondecreasing (Mooncake has
  many ties, which are fine).

``on_bad_row`` decides what happens:

* ``"error"`` (default): raise :class:`TraceError` for the first bad row in file order,
  naming the file, row, line, column and value, and how many rows share the problem.
* ``"drop"``: remove every bad row. A timestamp is judged decreasing against the rows
  kept above it, so one late row is dropped, not the rest of the file.
* ``"clamp"``: repair what has an obvious repair and drop the rest. Lengths ``< 1``
  become 1. Then, with ``M`` given and ``prompt + output > M``: if ``prompt >= M`` the
  prompt becomes ``M − 1`` and the output 1, otherwise the output becomes
  ``M − prompt`` (so ``prompt + output == M``). A decreasing timestamp is raised to the
  largest one above it (a tie). Missing, non-numeric, non-integer and too-large cells
  cannot be repaired: those rows are dropped (counted under ``"dropped"``).

:attr:`Trace.touched` always has ``"clamped"`` (rows kept with changed values) and
``"dropped"`` (rows removed), plus one count per problem found, keyed
``"<prompt|output|timestamp> <problem>"`` (e.g. ``"prompt zero"``, ``"output missing"``,
``"timestamp decreasing"``) or ``"too long for M"``. A row is counted under each of its
problems; under ``"clamp"`` "too long for M" is judged after raising lengths to 1, and a
"decreasing" timestamp is judged among the rows not dropped for another problem.

Bad rows in the staged files (SOURCES.md), with ``M = 16,492``: LMSYS in256/out256 has
63 zero prompts and 1,136 zero outputs (1,198 rows: row 79,386 has both; the first is
row 149), LMSYS 100k has 4 / 147 (151 rows), LMSYS 20k has 2 / 15 (17 rows); arXiv,
Azure and vidur have none and their timestamps are strictly increasing; Mooncake has no
zeros but 2,798 of its 12,031 rows have ``prompt + output > 16,492`` (so it needs
``on_bad_row="drop"`` or ``"clamp"`` at that ``M``). No file has missing or non-numeric
cells.

Speed
-----
Parsing is pandas' C readers and every check is a numpy mask; only the message for the
first bad row is built in Python. Measured on the development machine (2 cores, warm file
cache, pandas 3.1, with ``M`` and ``"clamp"``; the larger figure with the machine busy): the
662,534-row LMSYS file loads in 0.05–0.12 s, the 100,000-row one in 0.008–0.025 s, the
19,366-row Azure conv file (date-times parsed) in 0.013–0.02 s and the 12,031-row Mooncake
file in 0.055–0.08 s (its ``hash_ids`` lists are blanked before parsing).
:func:`sample_instance` builds a 10,000-request instance in about 0.025 s.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from llmopt.model.instance import MAX_VALUE
from llmopt.model.registry import Registry
from llmopt.model.textfile import open_text, read_bytes, read_text

__all__ = [
    "BAD_ROW_POLICIES",
    "DEFAULT_M",
    "LAYOUTS",
    "TRACE_FORMATS",
    "Trace",
    "TraceError",
    "TraceLayout",
    "detect_format",
    "load_trace",
    "load_lmsys",
    "load_arxiv",
    "load_azure",
    "load_vidur",
    "load_mooncake",
]

#: The papers' KV capacity for Llama2-70B on 2×A100 (DESIGN §2).
DEFAULT_M = 16_492

BAD_ROW_POLICIES = ("error", "clamp", "drop")

#: Second entry of the seed sequence of :func:`sample_instance` (the synthetic workloads use 1 and 2).
_SAMPLE_STREAM = 7

_HASH_IDS = re.compile(r'"hash_ids"[ \t]*:[ \t]*\[[0-9, ]*\]')

#: Relative tolerance of :func:`to_discrete_instance` for arrivals on a step boundary.
_STEP_TOL = 1e-9


class TraceError(ValueError):
    """Unreadable trace or bad row; the message names the file, row (and line) and column."""


@dataclass(frozen=True)
class TraceLayout:
    """Columns and units of a built-in trace format.

    Attributes
    ----------
    name : str
    lengths : tuple of (str, str)
        Accepted ``(prompt column, output column)`` pairs; the first one present is used.
    unit : str
        ``"words"`` or ``"tokens"``.
    time_column : str or None
        Arrival-time column, or ``None`` for a format without timestamps.
    time_kind : str or None
        ``"datetime"`` (a date-time string), ``"seconds"`` or ``"milliseconds"``.
    jsonl : bool
        JSON lines instead of CSV.
    """

    name: str
    lengths: tuple[tuple[str, str], ...]
    unit: str
    time_column: str | None = None
    time_kind: str | None = None
    jsonl: bool = False

    def columns_text(self) -> str:
        pairs = " or ".join(f"{p}, {o}" for p, o in self.lengths)
        return pairs + (f", {self.time_column}" if self.time_column else "")


LAYOUTS: dict[str, TraceLayout] = {
    "lmsys": TraceLayout("lmsys", (("question_length", "answer_length"),
                                   ("num_prefill_tokens", "num_decode_tokens")), "words"),
    "arxiv": TraceLayout("arxiv", (("num_prefill_tokens", "num_decode_tokens"),), "tokens"),
    "azure": TraceLayout("azure", (("ContextTokens", "GeneratedTokens"),), "tokens", "TIMESTAMP", "datetime"),
    "vidur": TraceLayout("vidur", (("num_prefill_tokens", "num_decode_tokens"),), "tokens", "arrived_at",
                         "seconds"),
    "mooncake": TraceLayout("mooncake", (("input_length", "output_length"),), "tokens", "timestamp",
                            "milliseconds", jsonl=True),
}


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Trace:
    """A loaded trace: one entry per kept row, in file order.

    Attributes
    ----------
    path : str
        The file read.
    format : str
        Its format (see :data:`TRACE_FORMATS`).
    unit : str
        ``"words"`` (LMSYS: word counts, used as tokens) or ``"tokens"``.
    prompt, output : numpy.ndarray
        int64 lengths, all ``>= 1`` (and ``prompt + output <= M`` when loaded with ``M``).
    timestamps : numpy.ndarray or None
        float64 seconds since the first kept row, nondecreasing; ``None`` when the format
        has no arrival times.
    rows_read : int
        Data rows in the file.
    touched : dict of str to int
        ``"clamped"`` and ``"dropped"`` row counts and one count per problem found
        (see the module docstring).
    source_rows : numpy.ndarray
        1-based file row number of each kept row.
    time_kind : str or None
        How the timestamps were read: ``"datetime"``, ``"seconds"`` or ``"milliseconds"`` (``None``:
        the format's own kind). An Azure file of numeric timestamps reads them as ``"seconds"``.
    """

    path: str
    format: str
    unit: str
    prompt: np.ndarray
    output: np.ndarray
    timestamps: np.ndarray | None
    rows_read: int
    touched: dict[str, int]
    source_rows: np.ndarray
    time_kind: str | None = None

    def __post_init__(self) -> None:
        for name in ("prompt", "output", "source_rows"):
            object.__setattr__(self, name, _readonly(np.array(getattr(self, name), dtype=np.int64)))
        n = len(self.prompt)
        if len(self.output) != n or len(self.source_rows) != n:
            raise ValueError("prompt, output and source_rows must have the same length")
        if self.timestamps is not None:
            ts = _readonly(np.array(self.timestamps, dtype=np.float64))
            if len(ts) != n:
                raise ValueError("timestamps must have one entry per row")
            object.__setattr__(self, "timestamps", ts)

    @property
    def n(self) -> int:
        """Number of kept rows."""
        return len(self.prompt)

    def __len__(self) -> int:
        return len(self.prompt)

    @property
    def name(self) -> str:
        """The file name without its suffix (used in instance names)."""
        return Path(self.path).stem


# --- reading ----------------------------------------------------------------------------------


def _csv_header(path: Path) -> list[str]:
    try:
        with open_text(path) as f:
            first = f.readline()
    except OSError as exc:
        raise TraceError(f"{path}: cannot read file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    return [c.strip().strip('"').strip() for c in first.rstrip("\r\n").split(",")] if first.strip() else []


def _jsonl_keys(path: Path) -> list[str]:
    try:
        with open_text(path) as f:
            for lineno, line in enumerate(f, start=1):  # stops at the first non-blank line
                if line.strip():
                    try:
                        obj = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise TraceError(f"{path}: row 1 (line {lineno}): invalid JSON: {exc.msg}") from None
                    return list(obj) if isinstance(obj, dict) else []
    except OSError as exc:
        raise TraceError(f"{path}: cannot read file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    return []


def _formats_text() -> str:
    return "; ".join(f"{name} ({lay.columns_text()})" for name, lay in LAYOUTS.items())


def detect_format(path: str | Path) -> str:
    """The built-in format of ``path``, from its header (CSV) or first record's keys (``.jsonl``).

    Raises
    ------
    TraceError
        If the file cannot be read or matches no built-in format; the message lists the
        formats and their columns.
    """
    p = Path(path)
    if not p.is_file():
        raise TraceError(f"{p}: {'is a folder, not a trace file' if p.is_dir() else 'no such file'}")
    jsonl = p.suffix.lower() in (".jsonl", ".ndjson")
    cols = set(_jsonl_keys(p) if jsonl else _csv_header(p))
    if jsonl and {"input_length", "output_length"} <= cols:
        return "mooncake"
    if not jsonl:
        if {"TIMESTAMP", "ContextTokens", "GeneratedTokens"} <= cols:
            return "azure"
        if {"question_length", "answer_length"} <= cols:
            return "lmsys"
        if {"num_prefill_tokens", "num_decode_tokens"} <= cols:
            if "arrived_at" in cols:
                return "vidur"
            return "lmsys" if "lmsys" in p.name.lower() else "arxiv"
    found = ", ".join(sorted(cols)) or "none"
    raise TraceError(f"{p}: unknown trace layout ({'keys' if jsonl else 'columns'}: {found}); the accepted formats "
                     f"are {_formats_text()} — mooncake is JSON lines (.jsonl), the others CSV")


def _jsonl_line_numbers(data: bytes) -> np.ndarray:
    """1-based line number of each non-blank line (vectorised over the bytes)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(buf == 10)
    starts = np.concatenate(([0], newlines + 1))
    ends = np.concatenate((newlines, [len(buf)]))
    ink = (buf != 10) & (buf != 13) & (buf != 32) & (buf != 9)
    cum = np.concatenate(([0], np.cumsum(ink, dtype=np.int64)))
    return np.flatnonzero(cum[ends] - cum[starts] > 0) + 1


def _first_bad_json_line(path: Path, text: str) -> str:
    """Message for the first line that is not a JSON object (error path only)."""
    row = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row += 1
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            return f"{path}: row {row} (line {lineno}): invalid JSON: {exc.msg} (column {exc.colno})"
        if not isinstance(obj, dict):
            return f"{path}: row {row} (line {lineno}): expected a JSON object, got {type(obj).__name__}"
    return f"{path}: cannot read the JSON lines"


def _read_frame(path: Path, layout: TraceLayout) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The file as a DataFrame plus, for JSON lines, the line number of each row."""
    if not path.is_file():
        raise TraceError(f"{path}: {'is a folder, not a trace file' if path.is_dir() else 'no such file'}")
    if layout.jsonl:
        try:
            data = read_bytes(path)
            text = data.decode("utf-8-sig")
        except OSError as exc:
            raise TraceError(f"{path}: cannot read file: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise TraceError(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
        if not text.strip():
            raise TraceError(f"{path}: empty file, no data rows")
        kwargs: dict[str, Any] = {"lines": True, "dtype": False}
        if int(pd.__version__.split(".")[0]) < 3:  # pragma: no cover - pandas 2 converts "timestamp" columns
            kwargs.update(convert_dates=False, keep_default_dates=False)
        # The per-request prefix-cache block lists are ignored; replacing flat integer lists by 0 halves the
        # parse time (anything else is left for the JSON reader).
        slim = _HASH_IDS.sub('"hash_ids":0', text) if '"hash_ids"' in text else text
        try:
            df = pd.read_json(io.StringIO(slim), **kwargs)
        except ValueError:
            raise TraceError(_first_bad_json_line(path, text)) from None
        lines = _jsonl_line_numbers(data)
        if len(lines) != len(df) or not all(isinstance(c, str) for c in df.columns):
            raise TraceError(_first_bad_json_line(path, text))
        return df, lines
    try:
        df = pd.read_csv(io.StringIO(read_text(path)), skip_blank_lines=False)
    except pd.errors.EmptyDataError:
        raise TraceError(f"{path}: empty file, no header and no data rows") from None
    except pd.errors.ParserError as exc:
        raise TraceError(f"{path}: not a valid CSV file: {str(exc).strip()}") from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read file: {exc.strerror or exc}") from None
    df.columns = [str(c).strip() for c in df.columns]
    # Blank lines at the very end of the file are not rows (skip_blank_lines=False keeps the
    # numbering of the lines above them exact).
    filled = np.flatnonzero(df.notna().to_numpy().any(axis=1))
    last = int(filled[-1]) + 1 if len(filled) else 0
    if last < len(df):
        df = df.iloc[:last]
    return df, None


# --- parsing and checks -------------------------------------------------------------------------


@dataclass
class _Problem:
    """One kind of bad row: its key in ``touched``, mask over rows, column and message."""

    key: str
    mask: np.ndarray
    column: str
    fixable: bool
    describe: Callable[[int], str]


def _cell(series: pd.Series, i: int) -> str:
    value = series.iloc[i]
    return repr(value.item() if isinstance(value, np.generic) else value)


def _length_column(series: pd.Series, role: str, column: str) -> tuple[np.ndarray, np.ndarray, list[_Problem]]:
    """int64 values (0 where unreadable), a "readable" mask, and the unfixable problems of one column."""
    n = len(series)
    none = np.zeros(n, dtype=bool)
    if pd.api.types.is_integer_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        values = series.to_numpy(dtype=np.int64, copy=True)
        too_large = np.abs(values) > MAX_VALUE
        missing = nonnumeric = nonint = none
        values[too_large] = 0
    else:
        missing = series.isna().to_numpy()
        if pd.api.types.is_float_dtype(series.dtype):
            f = series.to_numpy(dtype=np.float64)
        elif pd.api.types.is_bool_dtype(series.dtype):  # a true/false column is no length
            f = np.full(n, np.nan)
        else:
            f = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        finite = np.isfinite(f)
        nonnumeric = ~finite & ~missing
        with np.errstate(invalid="ignore"):
            nonint = finite & (f != np.floor(f))
            too_large = finite & ~nonint & (np.abs(f) > MAX_VALUE)
        good = finite & ~nonint & ~too_large
        values = np.where(good, f, 0).astype(np.int64)
    readable = ~(missing | nonnumeric | nonint | too_large)
    problems = [
        _Problem(f"{role} missing", missing, column, False, lambda i: "value is missing (empty cell or absent key)"),
        _Problem(f"{role} non-numeric", nonnumeric, column, False,
                 lambda i: f"value {_cell(series, i)} is not a number"),
        _Problem(f"{role} not an integer", nonint, column, False,
                 lambda i: f"value {_cell(series, i)} is not an integer"),
        _Problem(f"{role} too large", too_large, column, False,
                 lambda i: f"value {_cell(series, i)} is above 2^53 - 1"),
    ]
    return values, readable, problems


def _negative_message(series: pd.Series) -> Callable[[int], str]:
    return lambda i: f"value {_cell(series, i)} is negative: lengths must be >= 1"


def _numeric_dtype(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype)


def _time_column(series: pd.Series, kind: str, column: str) -> tuple[np.ndarray, list[_Problem], str]:
    """float64 seconds relative to the first readable row (NaN where unreadable), the problems, and the
    kind read: a date-time column whose cells are all numbers (pandas read it as numeric) is read as
    seconds, for ``with_time_unit`` to rescale, rather than refused row by row."""
    missing = series.isna().to_numpy()
    if kind == "datetime" and _numeric_dtype(series) and not missing.all():
        kind = "seconds"
    if kind == "datetime":
        parsed = pd.to_datetime(series, format="ISO8601", errors="coerce")
        if isinstance(parsed.dtype, pd.DatetimeTZDtype):
            parsed = parsed.dt.tz_convert("UTC").dt.tz_localize(None)
        bad = parsed.isna().to_numpy() & ~missing
        ns = parsed.dt.as_unit("ns").to_numpy().view(np.int64)
        ok = ~(missing | bad)
        ref = ns[np.argmax(ok)] if ok.any() else 0
        seconds = np.where(ok, (ns - ref).astype(np.float64) / 1e9, np.nan)
        what = "is not a date-time like 2023-11-16 18:17:03.9799600"
    else:
        if _numeric_dtype(series):
            f = series.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            f = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        ok = np.isfinite(f)
        bad = ~ok & ~missing
        ref = f[np.argmax(ok)] if ok.any() else 0.0
        scale = 1000.0 if kind == "milliseconds" else 1.0
        seconds = np.where(ok, (f - ref) / scale, np.nan)
        what = f"is not a number of {kind}"
    problems = [
        _Problem("timestamp missing", missing, column, False, lambda i: "value is missing (empty cell or absent key)"),
        _Problem("timestamp unparseable", bad, column, False, lambda i: f"value {_cell(series, i)} {what}"),
    ]
    return seconds, problems, kind


def _decreasing(seconds: np.ndarray) -> np.ndarray:
    """Rows whose time is below the largest time above them (NaN rows are ignored)."""
    out = np.zeros(len(seconds), dtype=bool)
    if len(seconds) > 1:
        prev_max = np.fmax.accumulate(seconds)[:-1]
        with np.errstate(invalid="ignore"):
            out[1:] = seconds[1:] < prev_max
    return out


def _check_args(M: int | None, on_bad_row: str) -> None:
    if on_bad_row not in BAD_ROW_POLICIES:
        raise ValueError(f"on_bad_row must be one of {', '.join(BAD_ROW_POLICIES)}, got {on_bad_row!r}")
    if M is not None and (isinstance(M, bool) or not isinstance(M, (int, np.integer)) or M < 2):
        raise ValueError(f"M must be an integer >= 2, got {M!r}")


def _load(path: str | Path, layout: TraceLayout, M: int | None, on_bad_row: str) -> Trace:
    _check_args(M, on_bad_row)
    p = Path(path)
    df, jsonl_lines = _read_frame(p, layout)
    cols = set(df.columns)
    pair = next((pc for pc in layout.lengths if set(pc) <= cols), None)
    if pair is None or (layout.time_column is not None and layout.time_column not in cols):
        found = ", ".join(map(str, df.columns)) or "none"
        raise TraceError(f"{p}: format {layout.name!r} needs the {'keys' if layout.jsonl else 'columns'} "
                         f"{layout.columns_text()}; the file has {found}. The accepted formats are {_formats_text()}")
    rows = len(df)
    if rows == 0:
        raise TraceError(f"{p}: no data rows")
    pcol, ocol = pair
    prompt, p_ok, problems = _length_column(df[pcol], "prompt", pcol)
    output, o_ok, o_problems = _length_column(df[ocol], "output", ocol)
    problems += o_problems
    seconds: np.ndarray | None = None
    time_kind: str | None = None
    if layout.time_column is not None:
        seconds, t_problems, time_kind = _time_column(df[layout.time_column], str(layout.time_kind),
                                                      layout.time_column)
        problems += t_problems
    unfixable = np.zeros(rows, dtype=bool)
    for prob in problems:
        unfixable |= prob.mask
    pser, oser = df[pcol], df[ocol]
    for role, vals, ok, col, ser in (("prompt", prompt, p_ok, pcol, pser), ("output", output, o_ok, ocol, oser)):
        problems.append(_Problem(f"{role} zero", ok & (vals == 0), col, True,
                                 lambda i: "value 0: lengths must be >= 1"))
        problems.append(_Problem(f"{role} negative", ok & (vals < 0), col, True, _negative_message(ser)))
    if on_bad_row == "clamp":
        np.maximum(prompt, 1, out=prompt)
        np.maximum(output, 1, out=output)
    both = f"{pcol!r} + {ocol!r}"
    if M is not None:
        too_long = p_ok & o_ok & (prompt + output > M)
        problems.append(_Problem(
            "too long for M", too_long, both, True,
            lambda i: f"prompt + output = {prompt[i]} + {output[i]} = {prompt[i] + output[i]} exceeds M = {M}; "
                      "it can never run"))
    drop = unfixable.copy()
    if on_bad_row == "drop":
        for prob in problems:
            drop |= prob.mask
    if seconds is not None:
        tcol = str(layout.time_column)
        judged = np.where(drop, np.nan, seconds) if on_bad_row != "error" else seconds
        dec = _decreasing(judged)
        ts_series = df[tcol]

        def _dec_msg(i: int, s: pd.Series = ts_series, t: np.ndarray = judged) -> str:
            above = int(np.nanargmax(t[:i]))
            return (f"value {_cell(s, i)} is earlier than row {above + 1}'s {_cell(s, above)}: timestamps must not "
                    "decrease (arrival order is file order)")

        problems.append(_Problem("timestamp decreasing", dec, tcol, True, _dec_msg))
        if on_bad_row == "drop":
            drop |= dec
    if on_bad_row == "error":
        _raise_first(p, problems, jsonl_lines, rows)
    elif drop.all():  # nothing left to sample from: say why, as "error" would
        _raise_first(p, problems, jsonl_lines, rows, all_dropped=on_bad_row)
    keep = ~drop
    touched: dict[str, int] = {"clamped": 0, "dropped": int(drop.sum())}
    changed = np.zeros(rows, dtype=bool)
    for prob in problems:
        count = int(prob.mask.sum())
        if count:
            touched[prob.key] = touched.get(prob.key, 0) + count
            if prob.fixable:
                changed |= prob.mask
    if on_bad_row == "clamp":
        touched["clamped"] = int((changed & keep).sum())
        if M is not None:
            capped_prompt = np.minimum(prompt, M - 1)
            output = np.where(prompt + output > M, M - capped_prompt, output)
            prompt = capped_prompt
    timestamps = None
    if seconds is not None:
        timestamps = seconds[keep]
        if on_bad_row == "clamp":
            timestamps = np.maximum.accumulate(timestamps) if len(timestamps) else timestamps
        if len(timestamps):
            timestamps = timestamps - timestamps[0]
    return Trace(path=str(p), format=layout.name, unit=layout.unit, prompt=prompt[keep], output=output[keep],
                 timestamps=timestamps, rows_read=rows, touched=touched,
                 source_rows=np.flatnonzero(keep) + 1, time_kind=time_kind)


def _raise_first(path: Path, problems: list[_Problem], jsonl_lines: np.ndarray | None, rows: int,
                 all_dropped: str = "") -> None:
    """Raise :class:`TraceError` for the first bad row in file order (if any).

    The message proposes ``on_bad_row`` only where it would leave rows to sample from: a problem every
    row has (a wrong format, a column of another kind) is named as such, and so is an
    ``on_bad_row`` (``all_dropped``) that dropped every row.
    """
    firsts = [int(np.argmax(prob.mask)) for prob in problems if prob.mask.any()]
    if not firsts:
        return
    i = min(firsts)
    prob = next(prob for prob in problems if prob.mask[i])
    line = int(jsonl_lines[i]) if jsonl_lines is not None else i + 2
    count = int(prob.mask.sum())
    label = "key" if jsonl_lines is not None else "column"
    where = f"{label}s {prob.column}" if "+" in prob.column else f"{label} {prob.column!r}"
    if all_dropped:
        hint = (f"on_bad_row / --on-bad-row {all_dropped!r} dropped all {rows:,} rows, so nothing is left; "
                f"{count:,} have this problem, {prob.key!r}: check the file and its format")
    elif count == rows and not prob.fixable:
        hint = (f"all {rows:,} rows have this problem, {prob.key!r}, so dropping them would leave nothing: "
                "check the file and its format")
    else:
        if count == rows:  # every row: 'drop' would leave nothing, 'clamp' repairs them
            policy = "'clamp' ('drop' would leave no rows)"
        else:
            policy = "'clamp' or 'drop'" if prob.fixable else "'drop' (or 'clamp', which drops such rows)"
        hint = (f"{count:,} row(s) of this file have this problem, {prob.key!r}; on_bad_row / --on-bad-row "
                f"{policy} handles them")
    raise TraceError(f"{path}: row {i + 1} (line {line}), {where}: {prob.describe(i)} ({hint})")


# --- the loaders and their registry ---------------------------------------------------------------


def load_lmsys(path: str | Path, *, M: int | None = None, on_bad_row: str = "error") -> Trace:
    """LMSYS-Chat-1M length file (word counts): ``question_length, answer_length`` or the 20k sample's
    ``num_prefill_tokens, num_decode_tokens``; no timestamps."""
    return _load(path, LAYOUTS["lmsys"], M, on_bad_row)


def load_arxiv(path: str | Path, *, M: int | None = None, on_bad_row: str = "error") -> Trace:
    """Vidur processed length file (e.g. arXiv summarization, Llama-2 tokens); no timestamps."""
    return _load(path, LAYOUTS["arxiv"], M, on_bad_row)


def load_azure(path: str | Path, *, M: int | None = None, on_bad_row: str = "error") -> Trace:
    """Azure LLM inference trace 2023: ``TIMESTAMP, ContextTokens, GeneratedTokens``."""
    return _load(path, LAYOUTS["azure"], M, on_bad_row)


def load_vidur(path: str | Path, *, M: int | None = None, on_bad_row: str = "error") -> Trace:
    """Vidur trace with arrivals: ``arrived_at`` (seconds), ``num_prefill_tokens``, ``num_decode_tokens``."""
    return _load(path, LAYOUTS["vidur"], M, on_bad_row)


def load_mooncake(path: str | Path, *, M: int | None = None, on_bad_row: str = "error") -> Trace:
    """Mooncake JSON lines: ``timestamp`` (ms), ``input_length``, ``output_length`` (``hash_ids`` ignored)."""
    return _load(path, LAYOUTS["mooncake"], M, on_bad_row)


TraceLoader = Callable[..., Trace]

#: Trace loaders by format name: ``loader(path, *, M=None, on_bad_row="error") -> Trace``.
TRACE_FORMATS: Registry[TraceLoader] = Registry("trace format", "llmopt.trace_formats")
TRACE_FORMATS.register("lmsys", "llmopt.workloads.traces.formats:load_lmsys",
                       "LMSYS-Chat-1M lengths (words, used as tokens)")
TRACE_FORMATS.register("arxiv", "llmopt.workloads.traces.formats:load_arxiv",
                       "vidur processed lengths, e.g. arXiv summarization")
TRACE_FORMATS.register("azure", "llmopt.workloads.traces.formats:load_azure",
                       "Azure LLM inference trace 2023 (with timestamps)")
TRACE_FORMATS.register("vidur", "llmopt.workloads.traces.formats:load_vidur",
                       "vidur trace with arrived_at seconds (e.g. splitwise)")
TRACE_FORMATS.register("mooncake", "llmopt.workloads.traces.formats:load_mooncake",
                       "Mooncake/Kimi JSON lines (timestamps in ms)")


def load_trace(path: str | Path, format: str | None = None, *, M: int | None = None,
               on_bad_row: str = "error") -> Trace:
    """Load a trace file (see the module docstring for formats and the bad-row rules).

    Parameters
    ----------
    path : str or Path
    format : str, optional
        A :data:`TRACE_FORMATS` name; detected from the header when ``None``.
    M : int, optional
        KV capacity: rows with ``prompt + output > M`` are bad rows (they can never run).
    on_bad_row : {"error", "clamp", "drop"}

    Returns
    -------
    Trace

    Raises
    ------
    TraceError
        Unreadable file, unknown layout, or (``"error"``) a bad row: names file, row, line and column.
    ValueError
        A bad ``M`` or ``on_bad_row``.
    """
    _check_args(M, on_bad_row)
    p = Path(path)
    fmt = format if format is not None else detect_format(p)
    if fmt not in TRACE_FORMATS:
        raise TraceError(f"{p}: unknown trace format {fmt!r}; known: {', '.join(TRACE_FORMATS.names())}")
    return TRACE_FORMATS.get(fmt)(p, M=M, on_bad_row=on_bad_row)
