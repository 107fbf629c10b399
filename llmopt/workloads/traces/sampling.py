"""Continuous-time instances sampled from a loaded :class:`~llmopt.workloads.traces.formats.Trace`."""

from __future__ import annotations

import math

import numpy as np

from llmopt.model.instance import MAX_VALUE, Instance, Request
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.workloads.traces.formats import _SAMPLE_STREAM, _STEP_TOL, DEFAULT_M, Trace, TraceError

_ARRIVAL_STREAM = 8  # the arrivals' own generator when the request sample is fixed (request_seed)

__all__ = ["sample_instance", "thin_long_outputs", "to_discrete_instance", "with_time_unit", "time_unit_warning",
           "apply_time_unit", "TIME_UNITS"]



def sample_instance(trace: Trace, n: int, seed: int, *, rate: float | None = None, use_timestamps: bool = False,
                    M: int = DEFAULT_M, name: str | None = None, request_seed: int | None = None,
                    stream: int | None = None) -> TimedInstance:
    """A continuous-time instance of ``n`` requests drawn from ``trace``.

    The generator is ``numpy.random.default_rng([seed, 7])``; the same trace, ``n``, seed and
    mode always give the same instance (DESIGN §4 inv. 3).

    * ``rate=λ``: ``n`` distinct rows drawn uniformly without replacement, in draw order;
      arrivals are a Poisson process of rate ``λ`` per second — the cumulative sums of
      ``n`` independent exponential gaps of mean ``1/λ`` (the first request arrives after
      the first gap, not at 0). With ``request_seed``, the rows are those ``seed =
      request_seed`` would draw and only the arrivals come from ``seed`` (their own
      generator, ``default_rng([seed, 8])``): one request sample, arrivals redrawn per seed.
      With ``stream=N >= n``, the rows and arrivals of ``n = N`` are drawn and the first ``n``
      kept: the instances of one seed at ``n <= N`` are prefixes of one stream (the J authors'
      released code takes ``head(n)`` of one data frame), and ``n = N`` is the instance drawn
      without ``stream``.
    * ``use_timestamps=True``: ``n`` *consecutive* rows starting at a uniformly drawn offset
      in ``0 … rows − n``, with the trace's own arrival times shifted so the first is at 0
      (real burstiness is kept).

    Ids are ``r0 … r{n-1}`` in arrival order.

    Parameters
    ----------
    trace : Trace
    n : int
        Number of requests, ``1 <= n <=`` rows of the trace.
    seed : int
    rate : float, optional
        Poisson arrival rate λ in requests per second.
    use_timestamps : bool
        Use the trace's timestamps instead (exactly one of ``rate`` and ``use_timestamps``).
    M : int
        KV capacity of the instance (default 16,492, the papers' Llama2-70B on 2×A100).
    name : str, optional
        Defaults to e.g. ``"lmsys_chat_1m_words_in256_out256 n=1000 rate=50 seed=0"``.
    request_seed : int, optional
        Fix the request sample (Poisson mode only; see above).
    stream : int, optional
        Length of the stream the instance is a prefix of (Poisson mode only; see above).

    Raises
    ------
    TraceError
        ``n`` above the trace's rows, timestamps asked of a trace without them, or a drawn
        request with ``prompt + output > M`` (naming its file row: load with ``M`` and
        ``on_bad_row`` to handle those).
    ValueError
        Bad ``n``, ``seed``, ``rate``, or not exactly one arrival mode.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if (rate is None) == (not use_timestamps):
        raise ValueError("give exactly one of rate (Poisson arrivals) and use_timestamps (the trace's own times)")
    rows = trace.n
    if n > rows:
        dropped = trace.touched.get("dropped", 0)
        raise TraceError(f"{trace.path}: {n:,} requests asked but the trace has only {rows:,} rows"
                         + (f" ({dropped:,} of {trace.rows_read:,} were dropped)" if dropped else ""))
    rng = np.random.default_rng([int(seed), _SAMPLE_STREAM])
    if rate is not None:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0:
            raise ValueError(f"rate must be a finite number > 0 (requests per second), got {rate!r}")
        draw = n
        if stream is not None:
            if isinstance(stream, bool) or not isinstance(stream, (int, np.integer)) or not n <= stream <= rows:
                raise ValueError(f"stream must be an integer with n = {n} <= stream <= {rows:,} (the trace's rows), "
                                 f"got {stream!r}")
            draw = int(stream)
        if request_seed is None:
            idx = rng.choice(rows, size=draw, replace=False)[:n]
        else:
            if isinstance(request_seed, bool) or not isinstance(request_seed, (int, np.integer)) or request_seed < 0:
                raise ValueError(f"request_seed must be an integer >= 0, got {request_seed!r}")
            idx = np.random.default_rng([int(request_seed), _SAMPLE_STREAM]).choice(rows, size=draw,
                                                                                     replace=False)[:n]
            rng = np.random.default_rng([int(seed), _ARRIVAL_STREAM])
        arrivals = np.cumsum(rng.exponential(1.0 / rate, size=draw))[:n]
        mode = f"rate={rate:g}" + ("" if request_seed is None else f" requests={request_seed}")
    else:
        if request_seed is not None:
            raise ValueError("request_seed fixes the rows of Poisson sampling; with timestamps the seed picks "
                             "a window of consecutive rows")
        if stream is not None:
            raise ValueError("stream makes Poisson samples prefixes of one stream; with timestamps the seed picks "
                             "a window of consecutive rows")
        if trace.timestamps is None:
            raise TraceError(f"{trace.path}: format {trace.format!r} has no timestamps; sample with a Poisson rate "
                             "instead")
        start = int(rng.integers(0, rows - n + 1))
        idx = np.arange(start, start + n)
        times = trace.timestamps[idx]
        order = np.argsort(times, kind="stable")  # a no-op for loaded traces (nondecreasing)
        idx = idx[order]
        arrivals = times[order] - times[order][0]
        mode = "timestamps"
    prompt, output = trace.prompt[idx], trace.output[idx]
    too_long = prompt + output > M
    if too_long.any():
        j = int(np.argmax(too_long))
        raise TraceError(
            f"{trace.path}: row {int(trace.source_rows[idx[j]])}: prompt + output = {prompt[j]} + {output[j]} = "
            f"{prompt[j] + output[j]} exceeds M = {M}; it can never run ({int(too_long.sum())} of the {n} drawn "
            "rows are too long). Load the trace with M and on_bad_row='drop' or 'clamp' (CLI --on-bad-row)")
    reqs = tuple(TimedRequest(f"r{i}", a, s, o)
                 for i, (a, s, o) in enumerate(zip(arrivals.tolist(), prompt.tolist(), output.tolist())))
    label = name if name is not None else f"{trace.name} n={n} {mode} seed={seed}"
    return TimedInstance(M=int(M), requests=reqs, name=label)


def thin_long_outputs(trace: Trace, keep_long: float = 0.45, cut: int = 45, seed: int = 0) -> Trace:
    """``trace`` with its rows of output above ``cut`` kept with probability ``keep_long`` (seeded).

    The J §5.2 sensitivity studies use it to bring the staged LMSYS file's output median from 75 to
    36 words (the paper's subset: 45), leaving the prompt distribution nearly unchanged.
    """
    import dataclasses

    rng = np.random.default_rng(seed)
    keep = (trace.output <= cut) | (rng.random(trace.output.size) < keep_long)
    return dataclasses.replace(trace, prompt=trace.prompt[keep], output=trace.output[keep],
                               source_rows=trace.source_rows[keep])


def to_discrete_instance(timed: TimedInstance, step_seconds: float) -> Instance:
    """The discrete instance with arrival step ``floor(arrival / step_seconds)``.

    For the discrete IP and its bounds at trace scale: one step of the discrete model
    (one batch iteration, DESIGN §1) stands for ``step_seconds`` of real time, and a
    request arriving in ``[k·DT, (k+1)·DT)`` may start at step ``k``. Flooring never delays
    a request, so the discrete instance is (by less than one step per request) easier than
    the timed one. An arrival within a relative ``1e-9`` of a step boundary counts as on
    it, so ``0.3 s`` at ``DT = 0.1 s`` is step 3 despite binary rounding (0.3 / 0.1 <
    3 in floating point). Ids, lengths, prediction intervals and ``M`` are kept.

    Raises
    ------
    ValueError
        If ``step_seconds`` is not a finite number > 0.
    """
    if isinstance(step_seconds, bool) or not isinstance(step_seconds, (int, float)) or \
            not math.isfinite(step_seconds) or step_seconds <= 0:
        raise ValueError(f"step_seconds must be a finite number > 0, got {step_seconds!r}")
    arrivals = np.fromiter((r.arrival for r in timed.requests), dtype=np.float64, count=timed.n)
    q = arrivals / step_seconds
    nearest = np.rint(q)
    steps = np.where(np.abs(q - nearest) <= _STEP_TOL * np.maximum(1.0, q), nearest, np.floor(q))
    if timed.n and steps.max() > MAX_VALUE:
        raise ValueError(f"step_seconds {step_seconds!r} makes arrival steps above 2^53 - 1")
    reqs = tuple(Request(r.id, k, r.prompt, r.output, r.lower, r.upper)
                 for r, k in zip(timed.requests, steps.astype(np.int64).tolist()))
    label = f"{timed.name} step={step_seconds:g}s" if timed.name else f"step={step_seconds:g}s"
    return Instance(M=timed.M, requests=reqs, name=label, predictions_may_miss=timed.predictions_may_miss)


#: Units a trace's numeric timestamps may be given in (``--time-unit``), in seconds.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
#: A median gap between consecutive arrivals above this many "seconds" suggests milliseconds.
SUSPICIOUS_MEDIAN_GAP_S = 10.0


def _layout_seconds(trace: Trace) -> float:
    from llmopt.workloads.traces.formats import LAYOUTS

    layout = LAYOUTS.get(trace.format)
    kind = trace.time_kind or (layout.time_kind if layout is not None else "seconds")
    if kind == "datetime":
        raise TraceError(f"{trace.path}: format {trace.format!r} has date-time timestamps; a time unit does not "
                         "apply to them")
    return 1e-3 if kind == "milliseconds" else 1.0


def with_time_unit(trace: Trace, unit: str) -> Trace:
    """``trace`` with its numeric timestamps read in ``unit`` (``s``, ``ms`` or ``us``) instead of its
    format's default (seconds; milliseconds for Mooncake; seconds for an Azure file of numbers).

    Raises
    ------
    ValueError
        For an unknown unit.
    TraceError
        When the trace has no timestamps or date-time ones.
    """
    import dataclasses

    if unit not in TIME_UNITS:
        raise ValueError(f"time unit must be one of {', '.join(TIME_UNITS)}, got {unit!r}")
    if trace.timestamps is None:
        raise TraceError(f"{trace.path}: format {trace.format!r} has no timestamps; a time unit does not apply")
    factor = TIME_UNITS[unit] / _layout_seconds(trace)
    return dataclasses.replace(trace, timestamps=np.asarray(trace.timestamps) * factor)


def time_unit_warning(trace: Trace) -> str | None:
    """A one-line warning when the trace's timestamps look like a smaller unit than they are read in:
    the median gap between consecutive distinct arrivals is above :data:`SUSPICIOUS_MEDIAN_GAP_S`
    seconds (Unix milliseconds read as seconds give gaps 1000× too long), or the format's timestamps are
    date-times but the file held numbers, read as seconds (an Azure layout with Unix times). ``None``
    otherwise."""
    ts = trace.timestamps
    if ts is None:
        return None
    from llmopt.workloads.traces.formats import LAYOUTS

    layout = LAYOUTS.get(trace.format)
    if trace.time_kind == "seconds" and layout is not None and layout.time_kind == "datetime":
        return (f"{trace.path}: column {layout.time_column!r} holds numbers, not date-times; they are read as "
                "seconds — say which unit they count with --time-unit s, ms or us")
    if len(ts) < 3:
        return None
    gaps = np.diff(np.asarray(ts, dtype=np.float64))
    gaps = gaps[gaps > 0]
    if not gaps.size:
        return None
    median = float(np.median(gaps))
    if median <= SUSPICIOUS_MEDIAN_GAP_S:
        return None
    return (f"{trace.path}: the median gap between arrivals is {median:,.3g} s — do the timestamps count "
            "milliseconds (--time-unit ms) or microseconds (--time-unit us)?")


def apply_time_unit(trace: Trace, unit: str | None) -> tuple[Trace, str | None]:
    """The one rule for a trace's time unit, shared by ``llmopt trace --time-unit`` and
    :func:`llmopt.load_trace`: with a ``unit``, the trace read in it (:func:`with_time_unit`);
    without, the trace as it is and :func:`time_unit_warning`'s warning (``None`` when none).

    Raises
    ------
    ValueError
        For an unknown unit.
    TraceError
        When a unit is given for a trace with no timestamps or date-time ones.
    """
    if unit is not None:
        return with_time_unit(trace, unit), None
    return trace, time_unit_warning(trace)
