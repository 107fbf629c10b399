"""Capacity planning: the smallest number of workers K at which a (policy, router) pair meets a
latency, TTFT or TBT target on a workload (:mod:`llmopt.capacity.planning`).

It stands on the engine (the cluster engine), the policies (policies and routers) and the independent
cluster checker, and on nothing of the harness: ``llmopt capacity``, the ``capacity`` task kind of
:mod:`llmopt.bench` and J0 §8.2's study use it.
"""
