"""The reporting wing: tables and figures made from a results folder's records.

It stands on :mod:`llmopt.bench` (suites, task kinds, the record store) and nothing above it; the papers'
own reports and the CLI use it. A report reads what the harness wrote and never runs a task.

* :mod:`~llmopt.report.summary` — ``summary.md`` / ``summary.csv`` of a hindsight suite, the ratio
  histogram, the suite's own ``extra_report``, and the formatting helpers the papers share;
* :mod:`~llmopt.report.trace` — the trace (continuous-time) suites' tables;
* :mod:`~llmopt.report.capacity` — capacity suites and ``llmopt capacity``'s tables and figures;
* :mod:`~llmopt.report.schedule_plot`, :mod:`~llmopt.report.cdf_plot` — one run's schedule, and CDFs of
  latency, TTFT and TBT (matplotlib, imported only when a figure is asked for).
"""
