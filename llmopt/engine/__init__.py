"""The engines: event-driven simulation of one worker in discrete or continuous time.

* :mod:`~llmopt.engine.core` — one worker's running set, evictions and loop guard, shared by both clocks;
  request views, decisions, the errors;
* :mod:`~llmopt.engine.discrete` — the discrete-time event loop (re-exports the core's types);
* :mod:`~llmopt.engine.continuous` — the continuous-time loop (batches timed by a cost model);
* :mod:`~llmopt.engine.lookahead` — the look-ahead profile behind MC-SF's check (5);
* :mod:`~llmopt.engine.cost_model` — batch-time models (fitted Llama2-70B on 2×A100, roofline).
"""
