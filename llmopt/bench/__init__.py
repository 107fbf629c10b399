"""The benchmark harness: declarative suites, task kinds, parallel resumable runs (reports: :mod:`llmopt.report`).

* :mod:`~llmopt.bench.suites` — ``Suite`` and the suite registry (the papers' suites live in
  :mod:`llmopt.papers` and are registered here by name);
* :mod:`~llmopt.bench.kinds` — task kinds as a registry; :mod:`~llmopt.bench.tasks` runs one task of
  any kind; :mod:`~llmopt.bench.hindsight_task` (discrete time, hindsight OPT and bounds) and
  :mod:`~llmopt.bench.trace_task` (continuous time on a trace) are the two kinds;
* :mod:`~llmopt.bench.harness`, :mod:`~llmopt.bench.executors`, :mod:`~llmopt.bench.store` — running,
  distributing and storing tasks;
* :mod:`~llmopt.bench.plugins` — plug-ins in one home: third-party entry points
  (:mod:`~llmopt.bench.plugins.loading`; each registry also reads its group on first use) and the
  conformance checks run over every registered component (:mod:`~llmopt.bench.plugins.conformance`);
* :mod:`~llmopt.bench.studies` — the registry of studies (``llmopt study``).
"""
