"""The independent checker: every schedule and every certificate re-verified from the instance alone.

It imports only :mod:`llmopt.model` (``tests/test_layers.py`` enforces it): it shares no code
with the engines, the policies, the formulations or the bound providers whose output it
verifies.

* :mod:`~llmopt.verify.checker` — discrete-time schedules and the lower-bound certificates;
* :mod:`~llmopt.verify.timed` — continuous-time schedules (batch clock, cost model).
"""
