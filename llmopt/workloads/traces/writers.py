"""Write a continuous-time instance as a request file another simulator reads.

Only Vidur's request layout for now (``arrived_at, num_prefill_tokens, num_decode_tokens``; the
``vidur`` format of :mod:`llmopt.workloads.traces.formats`), so that Vidur and llmopt can be run on
the very same requests (``benchmarks/vidur_side_by_side.py``). The file reads back through
:func:`~llmopt.workloads.traces.formats.load_vidur` to the same arrivals and lengths.
"""

from __future__ import annotations

import csv
from pathlib import Path

from llmopt.model.timed_instance import TimedInstance

__all__ = ["VIDUR_COLUMNS", "write_vidur_trace"]

#: The header of a Vidur request file, in the order written.
VIDUR_COLUMNS = ("arrived_at", "num_prefill_tokens", "num_decode_tokens")


def write_vidur_trace(instance: TimedInstance, path: str | Path) -> Path:
    """Write ``instance`` as a Vidur request file, one row per request in arrival order.

    Arrivals are shifted so that the first request arrives at 0 s (the trace readers of both
    simulators measure time from the first row) and written with ``repr`` of the float, which
    reads back to the same number; prompts and outputs are written as they are.

    Parameters
    ----------
    instance : TimedInstance
        The requests (at least one).
    path : str or Path
        The CSV file to write (its folder must exist).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ValueError
        If the instance has no request.
    """
    reqs = sorted(instance.requests, key=lambda r: r.arrival)  # stable: ties keep instance order
    if not reqs:
        raise ValueError(f"{instance.name or 'instance'}: no request to write")
    origin = reqs[0].arrival
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(VIDUR_COLUMNS)
        for r in reqs:
            out.writerow((repr(r.arrival - origin), r.prompt, r.output))
    return path
