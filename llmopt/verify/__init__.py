"""The independent checker: every schedule and every certificate re-verified from the instance alone.

It imports only :mod:`llmopt.model` (``tests/test_layers.py`` enforces it): it shares no code
with the engines, the policies, the formulations or the bound providers whose output it
verifies.

* :mod:`~llmopt.verify.checker` — discrete-time schedules (no NumPy: the command line's hot path);
* :mod:`~llmopt.verify.certificates` — start windows and the memory-row dual bound ``λ``;
* :mod:`~llmopt.verify.zone_certificate` — ``λ`` with peak-zone multipliers ``μ``;
* :mod:`~llmopt.verify.energy_certificate` — the energy bound's priority order;
* :mod:`~llmopt.verify.timed` — continuous-time schedules (batch clock, cost model).
"""
