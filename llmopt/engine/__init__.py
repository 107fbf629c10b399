"""The engines: event-driven simulation of one worker, or of K workers, in discrete or continuous time.

* :mod:`~llmopt.engine.core` — one worker's running set, evictions and loop guard, shared by both clocks;
  request views, decisions, the errors;
* :mod:`~llmopt.engine.discrete` — the discrete-time event loop (re-exports the core's types);
* :mod:`~llmopt.engine.continuous` — the continuous-time loop (batches timed by a cost model);
* :mod:`~llmopt.engine.cluster` — K workers and a router (:func:`~llmopt.engine.cluster.simulate_cluster`),
  over the pausable per-worker clocks of :mod:`~llmopt.engine.cluster_clocks`;
* :mod:`~llmopt.policies.routers` — the router protocol and registry (``ROUTERS``: round-robin, jsq,
  least-kv, p2c, lookahead);
* :mod:`~llmopt.engine.lookahead` — the look-ahead profile behind MC-SF's check (5);
* :mod:`~llmopt.engine.cost_model` — batch-time models (fitted Llama2-70B on 2×A100, roofline).
* :mod:`~llmopt.engine.hardware` — Llama-2-70B and A100 constants, the KV capacity ``M``, GPU cost of a run.
"""
