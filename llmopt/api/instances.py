"""Instances for the API: trace files, samples of them, registered workloads (``llmopt trace``,
``llmopt generate`` and the trace input of ``llmopt capacity`` call these)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmopt.api.errors import BadInput, check_known, check_number
from llmopt.model.instance import Instance
from llmopt.model.timed_instance import TimedInstance

if TYPE_CHECKING:
    from llmopt.workloads.traces.formats import Trace

__all__ = ["load_trace", "sample", "discretize", "make_instance", "check_workload_arguments", "sample_trace",
           "check_trace_arguments", "TraceSample"]


def _check_time_unit(time_unit: str | None) -> None:
    from llmopt.workloads.traces.sampling import TIME_UNITS

    if time_unit is not None and time_unit not in TIME_UNITS:
        raise BadInput(f"{{time_unit}} must be one of {', '.join(TIME_UNITS)}, got {time_unit!r}", "time_unit")


def _time_unit_applied(trace: Trace, time_unit: str | None) -> Trace:
    """``trace`` with its timestamps read in ``time_unit``; without one, timestamps that look like a
    smaller unit give the command line's warning as a :class:`UserWarning`."""
    import warnings

    from llmopt.workloads.traces.sampling import apply_time_unit

    trace, warning = apply_time_unit(trace, time_unit)
    if warning is not None:
        warnings.warn(warning, UserWarning, stacklevel=3)
    return trace


def load_trace(path: str | Path, format: str | None = None, *, M: int | None = None,
               on_bad_row: str = "error", time_unit: str | None = None) -> Trace:
    """Read a request trace (LMSYS-Chat-1M, arXiv summarization, Azure, vidur, Mooncake).

    Parameters
    ----------
    path : path
        A CSV or JSON-lines file (gzip allowed); see ``shared/data/SOURCES.md`` for the staged traces.
    format : str, optional
        A registered format (detected from the columns when omitted).
    M : int, optional
        KV capacity: rows with ``prompt + output > M`` are handled by ``on_bad_row``.
    on_bad_row : {"error", "clamp", "drop"}
    time_unit : {"s", "ms", "us"}, optional
        Unit of the trace's numeric timestamps, as ``llmopt trace --time-unit`` (default: the format's
        own, seconds; milliseconds for Mooncake). Without it, timestamps that look like a smaller unit
        (e.g. Unix milliseconds read as seconds) give the CLI's warning as a :class:`UserWarning`.

    Raises
    ------
    llmopt.workloads.traces.TraceError
        Naming the file, the row and the field of the first bad row; or a ``time_unit`` for a trace
        with no numeric timestamps.
    BadInput
        For an unknown ``time_unit`` (a ``ValueError``).
    """
    from llmopt.workloads.traces.formats import load_trace as _load

    _check_time_unit(time_unit)  # before the file is read, like the CLI
    return _time_unit_applied(_load(path, format, M=M, on_bad_row=on_bad_row), time_unit)


def sample(trace: Trace, n: int, seed: int, *, rate: float | None = 50.0, use_timestamps: bool = False,
           M: int | None = None) -> TimedInstance:
    """``n`` requests drawn from ``trace`` as a continuous-time instance (seeded, reproducible).

    ``rate`` gives Poisson arrivals per second; ``use_timestamps=True`` (with ``rate=None``) keeps the
    trace's own. ``M`` defaults to the papers' 16,492 tokens (Llama2-70B on 2×A100).
    """
    from llmopt.workloads.traces.formats import DEFAULT_M
    from llmopt.workloads.traces.sampling import sample_instance

    return sample_instance(trace, n, seed, rate=None if use_timestamps else rate, use_timestamps=use_timestamps,
                           M=DEFAULT_M if M is None else M)


def discretize(instance: TimedInstance, step_seconds: float) -> Instance:
    """The discrete instance (DESIGN §1) with arrival step ``floor(arrival / step_seconds)``, for the
    hindsight IP and its bounds (:func:`llmopt.workloads.traces.to_discrete_instance`)."""
    from llmopt.workloads.traces.sampling import to_discrete_instance

    return to_discrete_instance(instance, step_seconds)


def make_instance(workload: str, seed: int, **params: Any) -> Instance | TimedInstance:
    """The instance of a registered workload (``llmopt.registries()["workload"]``) for ``seed``, as
    ``llmopt generate`` writes it.

    Raises
    ------
    BadInput
        For an unknown workload, a negative seed, a parameter the workload does not take or one of the
        wrong type (named as ``llmopt generate --param`` names it), or a workload that refuses its
        parameters or cannot find its data.
    """
    from llmopt.model.instance import InstanceError
    from llmopt.workloads import WORKLOADS

    check_workload_arguments(workload, seed, params)
    try:
        return WORKLOADS.get(workload)(seed, **params)  # type: ignore[no-any-return]
    except (InstanceError, FileNotFoundError) as exc:
        raise BadInput(f"workload {workload!r}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise BadInput(f"workload {workload!r} with {params or 'its defaults'}: {type(exc).__name__}: {exc}") from None


def check_workload_arguments(workload: str, seed: int, params: dict[str, Any] | None = None) -> None:
    """Check :func:`make_instance`'s arguments before any work (``llmopt generate`` checks the workload and the
    seed before it parses ``--param``, then the parameters).

    Raises
    ------
    BadInput
        For an unknown workload, a negative seed, or a parameter the workload does not take or of the wrong type.
    """
    from llmopt.model.params import check_params
    from llmopt.workloads import WORKLOADS

    check_known(WORKLOADS, "workload", workload)
    check_number("seed", seed, minimum=0)
    if params is not None:
        try:
            check_params("workload", workload, WORKLOADS.get(workload), params, skip=("seed",))
        except ValueError as exc:
            raise BadInput(f"{{params}}: {exc}", "params") from None


@dataclass(frozen=True)
class TraceSample:
    """What :func:`sample_trace` read and drew.

    Attributes
    ----------
    instance : TimedInstance
        The sample, arrivals in seconds.
    trace : Trace
        The trace it was drawn from (``format``, ``rows_read``, ``touched``: the bad rows, ``unit``).
    discrete : Instance or None
        With ``step_seconds``, the discrete instance of :func:`discretize`.
    """

    instance: TimedInstance
    trace: Trace
    discrete: Instance | None = None


def check_trace_arguments(*, n: int, seed: int, M: int, rate: float | None, step_seconds: float | None,
                          use_timestamps: bool, on_bad_row: str, format: str | None, time_unit: str | None) -> None:
    """Check :func:`sample_trace`'s arguments (``llmopt trace`` checks them before the output file).

    Raises
    ------
    BadInput
        Naming the first bad argument.
    """
    from llmopt.workloads.traces import BAD_ROW_POLICIES, TRACE_FORMATS

    check_number("n", n, minimum=1)
    check_number("seed", seed, minimum=0)
    check_number("M", M, minimum=2)
    check_number("rate", rate, minimum=0, strict=True)
    check_number("step_seconds", step_seconds, minimum=0, strict=True)
    if (rate is None) == (not use_timestamps):
        raise BadInput("give exactly one of {rate} λ (Poisson arrivals) and {use_timestamps} (the trace's own "
                       "arrival times)", "rate", "use_timestamps")
    if on_bad_row not in BAD_ROW_POLICIES:
        raise BadInput(f"{{on_bad_row}} must be one of {', '.join(BAD_ROW_POLICIES)}, got {on_bad_row!r}",
                       "on_bad_row")
    if format is not None:
        check_known(TRACE_FORMATS, "format", format)
    _check_time_unit(time_unit)
    if time_unit is not None and not use_timestamps:
        raise BadInput("{time_unit} applies to the trace's own timestamps ({use_timestamps}), not to {rate}",
                       "time_unit", "use_timestamps", "rate")


def sample_trace(path: str | Path, n: int, seed: int, *, rate: float | None = None, use_timestamps: bool = False,
                 format: str | None = None, M: int = 16_492, on_bad_row: str = "error",
                 time_unit: str | None = None, step_seconds: float | None = None) -> TraceSample:
    """Read a trace file and draw ``n`` requests from it: what ``llmopt trace`` writes.

    Every argument is checked before the file is read.

    Parameters
    ----------
    path : path
        The trace file (CSV, or JSON lines for Mooncake; gzip allowed).
    n, seed : int
        How many requests, and the seed of the draw (rows, offset, arrival gaps).
    rate : float, optional
        Poisson arrivals per second (rows drawn without replacement); exactly one of ``rate`` and
        ``use_timestamps``.
    use_timestamps : bool
        The trace's own arrival times: ``n`` consecutive rows from a seeded offset, shifted to start at 0.
    format : str, optional
        A registered trace format (default: detected from the header).
    M : int
        KV capacity in tokens; rows with ``prompt + output > M`` are bad rows.
    on_bad_row : {"error", "drop", "clamp"}
    time_unit : {"s", "ms", "us"}, optional
        Unit of the timestamps (with ``use_timestamps``); see :func:`load_trace` for the warning without it.
    step_seconds : float, optional
        Also give the discrete instance with arrival step ``floor(seconds / step_seconds)``.

    Raises
    ------
    BadInput
        For a bad argument, a format without timestamps under ``use_timestamps``, or ``n`` above the
        trace's rows.
    llmopt.workloads.traces.TraceError
        For a bad row (naming the file, row and field) under ``on_bad_row="error"``.
    """
    from llmopt.workloads.traces import LAYOUTS, detect_format, sample_instance, to_discrete_instance
    from llmopt.workloads.traces import load_trace as _load

    check_trace_arguments(n=n, seed=seed, M=M, rate=rate, step_seconds=step_seconds, use_timestamps=use_timestamps,
                          on_bad_row=on_bad_row, format=format, time_unit=time_unit)
    fmt = format if format is not None else detect_format(path)
    layout = LAYOUTS.get(fmt)
    no_times = BadInput(f"{path}: format {fmt!r} has no timestamps; use {{rate}} λ for Poisson arrivals", "rate")
    if use_timestamps and layout is not None and layout.time_column is None:
        raise no_times
    trace = _load(path, fmt, M=M, on_bad_row=on_bad_row)
    if use_timestamps and trace.timestamps is None:
        raise no_times
    if use_timestamps:
        trace = _time_unit_applied(trace, time_unit)
    if n > trace.n:
        dropped = trace.touched.get("dropped", 0)
        raise BadInput(f"{path}: {{n}} {n:,} is more than the {trace.n:,} rows of the trace"
                       + (f" ({dropped:,} of {trace.rows_read:,} rows were dropped)" if dropped else ""), "n")
    timed = sample_instance(trace, n, seed, rate=rate, use_timestamps=use_timestamps, M=M)
    return TraceSample(timed, trace, to_discrete_instance(timed, step_seconds) if step_seconds is not None else None)
