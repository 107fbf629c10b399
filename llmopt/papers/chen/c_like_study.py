"""C §6 (Figures 5–7) on the C-like sample (:mod:`llmopt.papers.chen.c_like`): records for the
``chen-lmsys`` claim machinery, and the memory (``M``) sweep (issue 25, item 4).

The records have the shape of the ``chen-lmsys`` harness records (``params`` with ``n`` and
``predictions``, ``latency_<p>`` verified by the continuous-time checker, ``evictions_<p>``,
``recomputed_<p>``), so :func:`llmopt.papers.chen.lmsys_report.figures_frame`,
:func:`~llmopt.papers.chen.lmsys_report.evaluate_claims` and the report's tables read them as
they read the suite's; the ``M`` sweep has the columns of
:func:`llmopt.papers.chen.lmsys_study.m_sensitivity_frame`, so
:func:`~llmopt.papers.chen.lmsys_study.claims_by_m` checks C's claims at every ``M``. Needs the
trace data (the pairing comes from the ``chen-lmsys`` samples).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import pandas as pd

from llmopt.bench.suites import Suite, WorkloadSpec
from llmopt.papers.chen.c_like import c_like_instance
from llmopt.papers.chen.lmsys_report import CHEN_LMSYS, POLICIES, SETTINGS, Setting

__all__ = ["C_LIKE_FACTORS", "c_like_records", "c_like_suite", "m_sweep", "run_policies"]

#: Memory factors of the sweep (× 16,492); the sample's Σ(s + o) is added as the last row.
C_LIKE_FACTORS: tuple[float, ...] = (1, 2, 3, 4, 5, 6, 8)
COST_MODEL = "llama2-70b-a100-tp2"


def c_like_suite(seeds: Sequence[int], sizes: Sequence[int], settings: Sequence[Setting] = SETTINGS,
                 policies: Sequence[str] = POLICIES) -> Suite:
    """A ``chen-lmsys``-shaped :class:`Suite` describing the C-like runs (for the report functions only)."""
    return dataclasses.replace(
        CHEN_LMSYS, name="chen-c-like", policies=tuple(policies),
        description="C §6 on the C-like sample (C's token statistics, real LMSYS pairing)",
        workloads=tuple(WorkloadSpec("chen-c-like", tuple(seeds), {"n": n, "predictions": s.spec}, f"{s.key} n={n}")
                        for s in settings for n in sizes))


def run_policies(inst: Any, policies: Sequence[str], seed: int, cost: Any, discrete: bool = False) -> dict[str, Any]:
    """Run each policy on ``inst`` and verify it; ``latency_<p>`` is ``None`` unless the checker agrees.

    Continuous engine (``cost``): mean latency in seconds. With ``discrete``: the instance's
    discrete version (one step per iteration, no cost model), ``TEL / n`` in iterations.
    """
    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.discrete import simulate
    from llmopt.policies import make_policy_spec
    from llmopt.verify.checker import check_schedule
    from llmopt.verify.timed import check_timed_schedule
    from llmopt.workloads.traces import to_discrete_instance

    out: dict[str, Any] = {}
    dinst = to_discrete_instance(inst, 1.0) if discrete else None
    for p in policies:
        t0 = time.perf_counter()
        if dinst is not None:
            d = simulate(dinst, make_policy_spec(p, seed=seed))
            chk = check_schedule(dinst, d.starts, evictions=d.evictions)
            ok = bool(chk.ok) and chk.tel == d.tel
            out[f"latency_{p}"] = d.tel / dinst.n if ok else None
            out[f"evictions_{p}"], out[f"recomputed_{p}"] = len(d.evictions), d.recomputed_tokens
        else:
            sched = simulate_continuous(inst, make_policy_spec(p, seed=seed), cost)
            rep = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                                       evictions=sched.evictions)
            ok = bool(rep.ok) and rep.mean_latency is not None and sched.mean_latency is not None and \
                abs(rep.mean_latency - sched.mean_latency) <= 1e-9 * max(1.0, sched.mean_latency)
            out[f"latency_{p}"] = sched.mean_latency if ok else None
            out[f"evictions_{p}"], out[f"recomputed_{p}"] = len(sched.evictions), sched.recomputed_tokens
            out[f"makespan_{p}"] = sched.makespan if ok else None
        out[f"verified_{p}"] = ok
        out[f"sim_s_{p}"] = round(time.perf_counter() - t0, 3)
    return out


def c_like_records(seeds: Sequence[int], sizes: Sequence[int], settings: Sequence[Setting] = SETTINGS,
                   policies: Sequence[str] = POLICIES, M: int = 16492,
                   discrete: bool = False) -> list[dict[str, Any]]:
    """C's Figures 5–7 grid on the C-like sample: one record per (setting, n, seed)."""
    from llmopt.engine.cost_model import make_cost_model

    cost = make_cost_model(COST_MODEL)
    recs = []
    for s in settings:
        for n in sizes:
            for seed in seeds:
                inst = c_like_instance(seed, n=n, predictions=s.spec, M=M)
                rec: dict[str, Any] = {"workload": "chen-c-like", "params": {"n": n, "predictions": s.spec},
                                       "seed": seed, "error": None, "n": inst.n, "M": inst.M,
                                       "engine": "discrete" if discrete else "continuous"}
                rec.update(run_policies(inst, policies, seed, cost, discrete))
                recs.append(rec)
    return recs


def m_sweep(seed: int = 0, n: int = 2000, factors: Sequence[float] = C_LIKE_FACTORS,
            settings: Sequence[Setting] = SETTINGS, policies: Sequence[str] = ("h-sf", "a-max", "a-min", "a-random"),
            base_M: int = 16492, holds_all: bool = True, discrete: bool = True) -> pd.DataFrame:
    """The C-like sample at several memories: one row per (M, setting).

    Columns as :func:`llmopt.papers.chen.lmsys_study.m_sensitivity_frame`: ``factor``, ``M``,
    ``setting``, ``cont_<p>`` (mean latency, s), ``disc_<p>`` (TEL / n, iterations; with
    ``discrete``), ``makespan_<p>``, ``evictions_<p>``, ``recomputed_<p>`` (continuous run).
    ``holds_all`` adds ``M = Σ(s_i + o_i)``, which holds every request at its peak.
    """
    from llmopt.papers.chen.lmsys_study import m_sensitivity_frame

    return m_sensitivity_frame(seed, n, factors, settings, policies, base_M, holds_all, discrete, COST_MODEL,
                               instance=c_like_instance)
