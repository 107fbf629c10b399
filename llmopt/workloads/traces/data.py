"""Where the real traces live, and the ``trace`` workload that samples them.

Trace files are named relative to the data folder (:func:`data_dir`): the environment
variable ``LLMOPT_DATA`` (that folder only: an error if it lacks ``traces/``), else
``../shared/data`` beside the working directory or beside the repository (the layout of a
clone with the staged data next to it). The data are
described in ``shared/data/SOURCES.md``; they are never copied into the repository.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

__all__ = ["data_dir", "trace_workload", "cached_trace"]


def data_dir() -> Path:
    """The folder holding ``traces/`` and ``profiles/`` (see the module docstring).

    Raises
    ------
    FileNotFoundError
        Naming every place looked at.
    """
    env = os.environ.get("LLMOPT_DATA")
    if env:  # a folder named on purpose is the only one looked at: never fall back to another silently
        if not (Path(env) / "traces").is_dir():
            what = "does not exist" if not Path(env).exists() else "has no traces/ folder"
            raise FileNotFoundError(f"LLMOPT_DATA={env}: {what}; point it at the folder that holds traces/ "
                                    "(see README, 'Data'), or unset it to use ../shared/data")
        return Path(env)
    candidates = [Path.cwd().parent / "shared" / "data", Path(__file__).resolve().parents[4] / "shared" / "data"]
    for c in candidates:
        if (c / "traces").is_dir():
            return c
    raise FileNotFoundError("no trace data folder: looked for traces/ in " + ", ".join(str(c) for c in candidates)
                            + "; set LLMOPT_DATA to the folder that holds traces/ (see README, 'Data')")


@functools.lru_cache(maxsize=4)
def cached_trace(path: str, format: str | None, M: int | None, on_bad_row: str) -> Any:
    from llmopt.workloads.traces.formats import load_trace

    return load_trace(path, format, M=M, on_bad_row=on_bad_row)


def trace_workload(seed: int, trace: str = "lmsys_chat_1m_words_in256_out256.csv", n: int = 1000,
                   rate: float | None = 50.0, timestamps: bool = False, format: str | None = "lmsys",
                   M: int = 16492, on_bad_row: str = "drop", request_seed: int | None = None,
                   stream: int | None = None) -> Any:
    """Sample a continuous-time instance from a trace file.

    The defaults are J Table 1's setting (1,000 LMSYS requests at λ = 50 /s, M = 16,492,
    zero-length rows dropped); with ``timestamps=True`` pass ``rate=None``.

    Parameters
    ----------
    seed : int
    trace : str
        File name under ``data_dir()/traces`` (or an absolute path).
    n : int
        Requests to sample (without replacement).
    rate : float, optional
        Poisson arrivals at ``rate`` per second; or ``timestamps=True`` for the trace's own.
    format : str, optional
        Trace format (detected from the columns when omitted).
    M : int
        KV capacity (default the papers' 16,492).
    on_bad_row : {"error", "clamp", "drop"}
    request_seed : int, optional
        Fix the request sample to the one ``seed = request_seed`` draws; ``seed`` then redraws
        only the arrivals (J Table 1 "one request sample, arrivals redrawn", DIGEST I-44).
    stream : int, optional
        Draw the rows and arrivals of ``stream`` requests and keep the first ``n``: the volumes of
        one seed are prefixes of one stream (J Figure 3 as the authors' released code runs it).

    Returns
    -------
    TimedInstance
    """
    from llmopt.workloads.traces.sampling import sample_instance

    path = Path(trace)
    if not path.is_absolute():
        path = data_dir() / "traces" / trace
    tr = cached_trace(str(path), format, M, on_bad_row)
    return sample_instance(tr, n, seed, rate=rate, use_timestamps=timestamps, M=M, request_seed=request_seed,
                           stream=stream)
