"""Real traces: file formats and their checks, sampling into instances, and the data folder.

* :mod:`~llmopt.workloads.traces.formats` — the readers (LMSYS, arXiv, Azure, vidur, Mooncake),
  the format registry and the row/field errors;
* :mod:`~llmopt.workloads.traces.sampling` — continuous-time instances drawn from a trace;
* :mod:`~llmopt.workloads.traces.data` — the data folder and the ``trace`` workload.
"""

from llmopt.workloads.traces.data import data_dir, trace_workload
from llmopt.workloads.traces.formats import (
    BAD_ROW_POLICIES,
    DEFAULT_M,
    LAYOUTS,
    TRACE_FORMATS,
    Trace,
    TraceError,
    TraceLayout,
    detect_format,
    load_arxiv,
    load_azure,
    load_lmsys,
    load_mooncake,
    load_trace,
    load_vidur,
)
from llmopt.workloads.traces.sampling import (
    TIME_UNITS,
    apply_time_unit,
    sample_instance,
    time_unit_warning,
    to_discrete_instance,
    with_time_unit,
)

__all__ = [
    "BAD_ROW_POLICIES", "DEFAULT_M", "LAYOUTS", "TRACE_FORMATS", "Trace", "TraceError", "TraceLayout",
    "detect_format", "load_trace", "load_lmsys", "load_arxiv", "load_azure", "load_vidur", "load_mooncake",
    "sample_instance", "to_discrete_instance", "data_dir", "trace_workload", "TIME_UNITS", "with_time_unit",
    "time_unit_warning", "apply_time_unit",
]
