"""``llmopt trace``: sample an instance from a real request trace — a thin parse → API call
(:func:`llmopt.api.sample_trace`, see :mod:`llmopt.workloads.traces`) → write.

::

    llmopt trace FILE [--format lmsys|arxiv|azure|vidur|mooncake] --n N (--rate λ | --timestamps) --seed S
                      [--M 16492] [--on-bad-row error|clamp|drop] [--step-seconds DT] -o instance.json

Writes a continuous-time instance (arrivals in seconds, ``"clock": "seconds"``), or with
``--step-seconds DT`` a discrete instance whose arrival steps are ``floor(seconds / DT)``.
Prints one summary line. Every option is checked before the trace is read; bad input is a
one-line error naming the file, row and column, exit 2. Like the other commands, an
existing output file is overwritten.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from llmopt.cli.common import ForceFlag, check_output_file, die, die_bad, echo_warnings

__all__ = ["trace_cmd"]

_WORDS_NOTE = "LMSYS lengths are word counts, used as tokens (as the papers do)"


def _touched_text(touched: dict[str, int], policy: str) -> str:
    reasons = ", ".join(f"{key} {count:,}" for key, count in touched.items() if key not in ("clamped", "dropped"))
    clamped, dropped = touched.get("clamped", 0), touched.get("dropped", 0)
    if not reasons and not clamped and not dropped:
        return f"no bad rows (--on-bad-row {policy})"
    done = [f"{clamped:,} clamped"] if clamped or policy == "clamp" else []
    done += [f"{dropped:,} dropped"] if dropped or policy != "clamp" else []
    return f"rows touched: {', '.join(done)} ({reasons}; --on-bad-row {policy})"


def trace_cmd(
    file: Annotated[Path, typer.Argument(help="Trace file: CSV, or JSON lines for mooncake.", show_default=False)],
    n: Annotated[int, typer.Option("--n", "-n", help="Number of requests to draw.", show_default=False)],
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw (rows, offset, arrival gaps).",
                                      show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="Instance JSON file to write.",
                                         show_default=False)],
    format: Annotated[str | None, typer.Option(
        "--format", help="lmsys, arxiv, azure, vidur or mooncake (default: detected from the header).",
        show_default=False)] = None,
    rate: Annotated[float | None, typer.Option(
        "--rate", help="Poisson arrivals at this many requests per second (rows drawn without replacement).",
        show_default=False)] = None,
    timestamps: Annotated[bool, typer.Option(
        "--timestamps", help="Use the trace's own arrival times: N consecutive rows from a seeded offset, "
                             "shifted to start at 0.")] = False,
    M: Annotated[int, typer.Option("--M", help="KV-cache capacity in tokens; rows with prompt + output > M are "
                                               "bad rows.")] = 16_492,
    on_bad_row: Annotated[str, typer.Option(
        "--on-bad-row", help="error: stop at the first bad row; drop: remove bad rows; clamp: lengths < 1 become 1 "
                             "and lengths are capped to fit M, unreadable rows are dropped.")] = "error",
    step_seconds: Annotated[float | None, typer.Option(
        "--step-seconds", help="Write a discrete instance: arrival step = floor(seconds / DT).",
        show_default=False)] = None,
    time_unit: Annotated[str | None, typer.Option(
        "--time-unit", help="Unit of the trace's numeric timestamps: s, ms or us (default: the format's own, "
                            "seconds; milliseconds for mooncake).", show_default=False)] = None,
    force: ForceFlag = False,
) -> None:
    """Sample an instance from a real trace (LMSYS, arXiv, Azure, vidur, Mooncake) and write it as JSON."""
    from llmopt.api import BadInput, sample_trace
    from llmopt.api.instances import check_trace_arguments
    from llmopt.model.instance import InstanceError, save_instance
    from llmopt.model.timed_instance import save_timed_instance
    from llmopt.workloads.traces import TraceError

    try:
        check_trace_arguments(n=n, seed=seed, M=M, rate=rate, step_seconds=step_seconds, use_timestamps=timestamps,
                              on_bad_row=on_bad_row, format=format, time_unit=time_unit)
        check_output_file("-o", output, inputs=[file], force=force)
        with echo_warnings():
            drawn = sample_trace(file, n, seed, rate=rate, use_timestamps=timestamps, format=format, M=M,
                                 on_bad_row=on_bad_row, time_unit=time_unit, step_seconds=step_seconds)
        timed, trace = drawn.instance, drawn.trace
        kind = "continuous-time instance"
        if drawn.discrete is not None:
            save_instance(drawn.discrete, output)
            last_step = max(r.arrival for r in drawn.discrete.requests)
            kind = f"discrete instance, DT = {step_seconds:g} s, arrival steps 0–{last_step:,}"
        else:
            save_timed_instance(timed, output)
    except BadInput as exc:
        die_bad(exc)
    except (TraceError, InstanceError, ValueError) as exc:
        die(str(exc))
    except OSError as exc:
        die(f"{output}: cannot write: {exc.strerror}")
    arrivals = [r.arrival for r in timed.requests]
    mean_prompt = sum(r.prompt for r in timed.requests) / n
    mean_output = sum(r.output for r in timed.requests) / n
    unit = trace.unit + (f" — {_WORDS_NOTE}" if trace.unit == "words" else "")
    mode = f"Poisson rate {rate:g}/s" if rate is not None else "trace timestamps"
    typer.echo(
        f"{file.name} [{trace.format}]: {trace.rows_read:,} rows read, "
        f"{_touched_text(trace.touched, on_bad_row)}; wrote {output} ({kind}): n={n:,} seed={seed} M={M:,}, "
        f"{mode}, arrivals span {max(arrivals) - min(arrivals):.3f} s, mean prompt {mean_prompt:.2f} / "
        f"output {mean_output:.2f}, unit {unit}"
    )
