"""Suites ``production-vs-papers``: the papers' policies ranked against production schedulers (issue 40, item 5).

A paper reports its policy's gain against its own stylised baseline — in Jaillet et al. and Wang et al. a
*clairvoyant* FCFS that knows every output length and never evicts. A user asks for the gain against the
scheduler a server actually runs. This suite answers both on the same requests, under the same production
limits, with the same Llama2-70B-on-2×A100 batch times:

* **traces**: LMSYS-Chat-1M (word counts), arXiv summarization (Llama-2 tokens) and the Azure 2023
  conversation trace (production tokens), ``n = 1,000`` requests each, Poisson arrivals at three rates per
  trace — under capacity, at the knee, overloaded (:data:`TRACES`; the rates were picked with a pilot run of
  ``vllm`` and ``mc-sf``, see ``results/production/vs-papers/README.md``);
* **policies** (:data:`POLICY_INFO`), each labelled by what it knows of output lengths: the papers'
  clairvoyant MC-SF, FCFS (J's MC-Benchmark) and Sorted-F; A_min with prediction intervals
  (:data:`PREDICTIONS`, ``[0.5·o, 1.5·o]``); α-protection (vLLM-like in J §5.2: it never reads ``o``) and the
  blind production schedulers ``vllm``, ``sarathi`` (when registered) and ``orca``;
* **limits**: ``max_num_seqs = 128`` (Vidur's vLLM default for this model) and KV blocks of 16 tokens, in
  every run; no ``max_num_batched_tokens`` by default (Azure prompts reach 14,050 tokens, which a token
  budget without chunked prefill could never start), a workload parameter for who wants one;
* **KV capacity**: the papers' ``M = 16,492`` tokens by default (:data:`PAPER_M`); Vidur's ``53,248``
  (3,328 blocks of 16, :data:`VIDUR_M`) in the suite ``production-vs-papers-vidur-m``; ``n = 10,000`` in
  ``production-vs-papers-10k``.

**Token-exact policies under blocks.** The papers' policies check memory in tokens (J's check (5)); under
blocks of ``B`` tokens a request holding ``m`` tokens occupies ``ceil(m / B)`` blocks, up to ``B − 1`` tokens
more. Such a policy is run with a token budget (:func:`block_budget`) ``(M // B)·B − S·(B − 1)``, ``S`` =
``max_num_seqs``: at most ``S`` requests run, so whatever it admits within the budget fits in the
``M // B`` blocks (``Σ ceil(m_i / B) ≤ (Σ m_i + S(B − 1)) / B``). At ``M = 16,492`` that is 14,560 tokens
(12 % less than the blocks hold); at ``53,248``, 51,328 (3.6 % less). The production schedulers count blocks
themselves and get the full ``M``. Rows whose ``s + o`` exceeds the budget would be dropped from the trace
before sampling (``fit``), for every policy alike, so that every policy can run every request; no row of the
three traces exceeds 14,560 tokens. The budget is the price of a token-exact check under paging, charged to
the papers' policies; it is stated beside every table.

The discrete suite ``production-vs-papers-discrete`` runs the same policies (but ``sarathi``, whose chunked
prefill needs the continuous clock) on J §5.1 Arrival-Model-1 instances with intervals, through the hindsight
pipeline, so the certified lower bound on OPT sits beside each policy's TEL. It is token-exact and without
batch limits (DESIGN §1: the discrete model of the papers stays token-exact), and ``max_num_seqs`` could not
bind at ``M ≤ 50`` anyway. The bound holds for limited runs too: limits and blocks only remove schedules.

The task kind ``production`` (:data:`KIND`) records per policy: mean, p50 and p99 latency, mean and p99
time to first token, mean time between tokens, throughput (requests and output tokens per second of
makespan), preemptions (evictions: vLLM's recompute preemptions, α-protection's clearings, A_min's
cancellations) and recomputed tokens, every schedule re-verified with its limits by the checker.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from llmopt.bench.kinds import TaskKind
from llmopt.bench.suites import Suite, Task, WorkloadSpec, canonical_params
from llmopt.bench.tasks import resolve_workload

__all__ = [
    "PAPER_M",
    "VIDUR_M",
    "MAX_NUM_SEQS",
    "BLOCK_SIZE",
    "PREDICTIONS",
    "TRACES",
    "POLICY_INFO",
    "block_budget",
    "BlockBudget",
    "production_trace",
    "am1_with_intervals",
    "production_suite",
    "PRODUCTION_VS_PAPERS",
    "PRODUCTION_VS_PAPERS_VIDUR_M",
    "PRODUCTION_VS_PAPERS_10K",
    "PRODUCTION_VS_PAPERS_DISCRETE",
    "KIND",
    "ranking_rows",
    "write_report",
]

#: The papers' KV capacity for Llama2-70B on 2×A100 (tokens).
PAPER_M = 16_492
#: Vidur's: 3,328 blocks of 16 from 80 GiB, a 10 % margin and the weights (issue 40).
VIDUR_M = 53_248
#: Vidur's vLLM ``max_num_seqs`` for this model (vLLM's own default is 256).
MAX_NUM_SEQS = 128
#: vLLM's KV block size.
BLOCK_SIZE = 16
#: The prediction intervals A_min sees: ``[0.5·o, 1.5·o]`` (C §6 Exp. 3's form, a moderate width).
PREDICTIONS = "relative:x=0.5"
#: The cost model of every run.
COST_MODEL = "llama2-70b-a100-tp2"

_LIMIT_KEYS = ("max_num_seqs", "max_num_batched_tokens", "block_size")


class TraceSetting(NamedTuple):
    """A trace of the suite: its file under ``shared/data/traces``, its format and the Poisson rates (/s)."""

    file: str
    format: str
    rates: tuple[float, ...]


#: The traces and their rates: under capacity, at the knee, overloaded (pilot: results README).
TRACES: dict[str, TraceSetting] = {
    "lmsys": TraceSetting("lmsys_chat_1m_words_in256_out256.csv", "lmsys", (5.0, 10.0, 50.0)),
    "arxiv": TraceSetting("arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", "arxiv", (0.1, 0.2, 1.0)),
    "azure-conv": TraceSetting("AzureLLMInferenceTrace_conv.csv", "azure", (0.25, 0.5, 2.0)),
}

#: Policy spec → (label in tables, what it knows of output lengths).
POLICY_INFO: dict[str, tuple[str, str]] = {
    "mc-sf": ("MC-SF", "clairvoyant"),
    "fcfs": ("FCFS (MC-Benchmark)", "clairvoyant"),
    "sorted-f": ("Sorted-F", "clairvoyant"),
    "a-min": ("A_min", "intervals"),
    "alpha-protection": ("α-protection (α = 0.3)", "blind"),
    "vllm": ("vLLM v0", "blind"),
    "sarathi": ("Sarathi-Serve", "blind"),
    "orca": ("Orca", "blind"),
}


def block_budget(M: int, block_size: int, max_num_seqs: int | None) -> int:
    """Tokens a token-exact policy may plan with so that its admissions fit in ``M // block_size`` blocks.

    Parameters
    ----------
    M : int
        KV capacity in tokens.
    block_size : int
        Tokens per KV block.
    max_num_seqs : int or None
        The most requests that run at once (required when ``block_size > 1``).

    Returns
    -------
    int
        ``(M // B)·B − S·(B − 1)``; ``M`` itself when ``B = 1``. With at most ``S`` requests running,
        ``Σ ceil(m_i / B) ≤ (Σ m_i + S(B − 1)) / B ≤ M // B`` whenever ``Σ m_i`` is within the budget.

    Raises
    ------
    ValueError
        If ``block_size > 1`` and ``max_num_seqs`` is ``None``, or the budget is not positive.
    """
    if block_size == 1:
        return M
    if max_num_seqs is None:
        raise ValueError("a token-exact policy under KV blocks needs max_num_seqs (the budget leaves B − 1 "
                         "tokens of slack per running request)")
    budget = (M // block_size) * block_size - max_num_seqs * (block_size - 1)
    if budget <= 0:
        raise ValueError(f"M = {M} with max_num_seqs = {max_num_seqs} and block_size = {block_size} leaves no "
                         f"token budget for a token-exact policy ({budget})")
    return budget


class BlockBudget:
    """A token-exact policy run under KV blocks: it plans with :func:`block_budget` tokens instead of ``M``.

    Every hook but ``set_limits`` and ``reset`` is the wrapped policy's own (attribute look-ups fall
    through), so the engine sees the same policy with a smaller memory.

    Parameters
    ----------
    inner : Policy
        An event-driven policy without a ``set_limits`` hook (one that counts tokens, not blocks).
    """

    def __init__(self, inner: Any) -> None:
        self.__dict__["inner"] = inner
        self.__dict__["budget"] = None
        self.__dict__["limits"] = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["inner"], name)

    def set_limits(self, limits: Any) -> None:
        """Take the engine's limits (called before :meth:`reset`)."""
        self.__dict__["limits"] = limits

    def reset(self, M: int) -> None:
        """Reset the wrapped policy with the token budget of ``M`` under the limits."""
        limits = self.__dict__["limits"]
        budget = M if limits is None else block_budget(M, limits.block_size, limits.max_num_seqs)
        self.__dict__["budget"] = budget
        inner = self.__dict__["inner"]
        if hasattr(inner, "reset"):
            inner.reset(budget)


def production_trace(seed: int, trace: str = "lmsys", n: int = 1000, rate: float = 5.0, M: int = PAPER_M,
                     fit: int | None = None, predictions: str = PREDICTIONS, max_num_seqs: int | None = None,
                     block_size: int = 1, max_num_batched_tokens: int | None = None) -> Any:
    """A continuous-time instance of one of :data:`TRACES`, with prediction intervals.

    Parameters
    ----------
    seed : int
    trace : str
        A key of :data:`TRACES`.
    n : int
        Requests sampled (without replacement).
    rate : float
        Poisson arrivals per second.
    M : int
        KV capacity of the instance (tokens).
    fit : int, optional
        Drop the trace's rows with ``s + o > fit`` before sampling (default ``M``): the token budget of the
        paper policies under blocks, so that every policy can run every request.
    predictions : str
        Prediction spec (:func:`llmopt.workloads.predictions.apply_prediction_spec`).
    max_num_seqs, block_size, max_num_batched_tokens : int, optional
        The batch limits of the runs on this instance: they do not change the sample; they are workload
        parameters so that a suite entry states them (the ``production`` task kind reads them).

    Returns
    -------
    TimedInstance

    Raises
    ------
    ValueError
        For an unknown trace name.
    """
    from llmopt.model.timed_instance import TimedInstance
    from llmopt.workloads.predictions import apply_prediction_spec
    from llmopt.workloads.traces.data import trace_workload

    if trace not in TRACES:
        raise ValueError(f"unknown trace {trace!r}; known: {', '.join(TRACES)}")
    setting = TRACES[trace]
    inst = trace_workload(seed, trace=setting.file, n=n, rate=rate, format=setting.format,
                          M=M if fit is None else fit, on_bad_row="drop")
    if fit is not None and fit != M:
        inst = TimedInstance(M, inst.requests, f"{inst.name} M={M}")
    return apply_prediction_spec(inst, predictions, seed)


def am1_with_intervals(seed: int, n_range: tuple[int, int] = (40, 60), M_range: tuple[int, int] = (30, 50),
                       predictions: str = PREDICTIONS) -> Any:
    """J §5.1 Arrival Model 1 (:func:`llmopt.workloads.jaillet.jaillet_am1`) with prediction intervals for A_min.

    Parameters
    ----------
    seed : int
    n_range, M_range : tuple of int
        As in :func:`~llmopt.workloads.jaillet.jaillet_am1`.
    predictions : str
        Prediction spec (:func:`llmopt.workloads.predictions.apply_prediction_spec`).

    Returns
    -------
    Instance
    """
    from llmopt.workloads.jaillet import jaillet_am1
    from llmopt.workloads.predictions import apply_prediction_spec

    return apply_prediction_spec(jaillet_am1(seed, tuple(n_range), tuple(M_range)),  # type: ignore[arg-type]
                                 predictions, seed)


def _policies(discrete: bool = False) -> tuple[str, ...]:
    """The suite's policies: :data:`POLICY_INFO`'s, ``sarathi`` only once it is registered (and never in
    discrete time, where a prompt is prefilled in one step)."""
    from llmopt.policies import POLICIES

    return tuple(p for p in POLICY_INFO if p in POLICIES and not (discrete and p == "sarathi"))


_WORKLOAD = "llmopt.papers.production.vs_papers:production_trace"


def production_suite(name: str, *, n: int = 1000, M: int = PAPER_M, seeds: Sequence[int] = (0, 1, 2),
                     max_num_seqs: int = MAX_NUM_SEQS, block_size: int = BLOCK_SIZE,
                     max_num_batched_tokens: int | None = None, description: str = "") -> Suite:
    """A ``production`` suite over :data:`TRACES` (every rate of every trace) at one ``n`` and ``M``.

    Parameters
    ----------
    name : str
    n : int
        Requests per instance.
    M : int
        KV capacity (tokens): :data:`PAPER_M` or :data:`VIDUR_M`.
    seeds : sequence of int
    max_num_seqs, block_size, max_num_batched_tokens : int
        The production limits of every run.
    description : str

    Returns
    -------
    Suite
    """
    fit = block_budget(M, block_size, max_num_seqs)
    limits: dict[str, Any] = {"max_num_seqs": max_num_seqs, "block_size": block_size}
    if max_num_batched_tokens is not None:
        limits["max_num_batched_tokens"] = max_num_batched_tokens
    workloads = tuple(
        WorkloadSpec(_WORKLOAD, tuple(seeds), {"trace": key, "n": n, "rate": rate, "M": M, "fit": fit,
                                               "predictions": PREDICTIONS} | limits, f"{key} λ={rate:g}")
        for key, setting in TRACES.items() for rate in setting.rates)
    return Suite(name=name, description=description or f"paper policies vs production schedulers, n = {n:,}, "
                 f"M = {M:,}, max_num_seqs = {max_num_seqs}, block_size = {block_size}",
                 workloads=workloads, policies=_policies(), reference="vllm", kind="production",
                 cost_model=COST_MODEL)


PRODUCTION_VS_PAPERS = production_suite(
    "production-vs-papers",
    description="MC-SF, FCFS, Sorted-F, A_min, α-protection against vllm, sarathi, orca on LMSYS, arXiv and Azure "
                "conv (n = 1,000, three Poisson rates each), Llama2-70B on 2×A100, M = 16,492, max_num_seqs = 128, "
                "block_size = 16")
PRODUCTION_VS_PAPERS_VIDUR_M = production_suite(
    "production-vs-papers-vidur-m", M=VIDUR_M,
    description="production-vs-papers at Vidur's KV capacity M = 53,248 (3,328 blocks of 16)")
PRODUCTION_VS_PAPERS_10K = production_suite(
    "production-vs-papers-10k", n=10_000,
    description="production-vs-papers with n = 10,000 requests per instance")
PRODUCTION_VS_PAPERS_DISCRETE = Suite(
    name="production-vs-papers-discrete",
    description="the paper policies and vllm / orca on J §5.1 AM1 instances with intervals [0.5o, 1.5o]: "
                "TEL beside the certified lower bound on OPT (token-exact, no batch limits)",
    workloads=(WorkloadSpec("llmopt.papers.production.vs_papers:am1_with_intervals", tuple(range(10)),
                            {"predictions": PREDICTIONS}, "AM1 + intervals"),),
    policies=_policies(discrete=True),
    reference="mc-sf",
    ip_time_limit=5.0,
    search_evals=100,
    upper_bounds=("mc-sf", "fcfs", "local-search"),
)


# --- the task kind ---------------------------------------------------------------------------------------

_PER_POLICY = ("status", "verified", "latency", "latency_p50", "latency_p99", "ttft_mean", "ttft_p99", "tbt_mean",
               "throughput_rps", "tokens_per_s", "preemptions", "recomputed", "makespan", "iterations", "budget",
               "sim_s")


def _field(kind: str, spec: str) -> str:
    return f"{kind}_{spec}"


def blank_record(suite: Suite, task: Task) -> dict[str, Any]:
    """The record of a ``production`` task with every field ``None``."""
    rec: dict[str, Any] = {"suite": suite.name, "kind": "production", "workload": task.spec.workload,
                           "params": dict(task.spec.params), "seed": task.seed, "instance": None, "n": None,
                           "M": None, "cost_model": suite.cost_model, "reference": suite.reference, "status": None,
                           "tel": None}
    for p in suite.policies:
        for k in _PER_POLICY:
            rec[_field(k, p)] = None
    rec.update({"runtime_s": None, "warnings": [], "error": None})
    return rec


def fill_record(rec: dict[str, Any], suite: Suite, task: Task) -> None:
    """Run and verify every policy of ``suite`` on the task's instance under its limits (fills ``rec``)."""
    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.engine.discrete import EvictionLoopError
    from llmopt.model.metrics import percentiles, timed_request_rows
    from llmopt.policies import make_policy_spec
    from llmopt.verify.timed import check_timed_run

    params = dict(task.spec.params)
    limits = {k: params.pop(k) for k in _LIMIT_KEYS if k in params}
    instance = resolve_workload(task.spec.workload)(task.seed, **params)
    rec.update(instance=instance.name, n=instance.n, M=instance.M)
    cost = make_cost_model(suite.cost_model)
    tokens = sum(r.output for r in instance.requests)
    warnings: list[str] = rec["warnings"]
    for p in suite.policies:
        t0 = time.process_time()
        policy = make_policy_spec(p, seed=task.seed)
        if limits.get("block_size", 1) > 1 and not hasattr(policy, "set_limits"):
            policy = BlockBudget(policy)  # type: ignore[assignment]
        try:
            sched = simulate_continuous(instance, policy, cost, loop_limit=suite.loop_limit, **limits)
        except EvictionLoopError as exc:
            rec[_field("status", p)] = "eviction-loop"
            rec[_field("preemptions", p)] = exc.evictions
            rec[_field("recomputed", p)] = exc.recomputed_tokens
            warnings.append(f"policy {p}: {exc}")
            continue
        except Exception as exc:  # one failing policy must not cost the others, but the task is an error
            rec[_field("status", p)] = "error"
            rec[_field("verified", p)] = False
            warnings.append(f"policy {p}: {type(exc).__name__}: {exc}")
            rec["error"] = rec["error"] or f"policy {p} raised {type(exc).__name__}: {exc}"
            continue
        sim_s = time.process_time() - t0
        check = check_timed_run(instance, sched, cost)
        mean = sched.mean_latency
        verified = bool(check.ok) and check.mean_latency is not None and mean is not None and \
            abs(check.mean_latency - mean) <= 1e-9 * max(1.0, mean)
        rec[_field("status", p)] = "ok" if verified else "rejected"
        rec[_field("verified", p)] = verified
        rec[_field("preemptions", p)] = len(sched.evictions)
        rec[_field("recomputed", p)] = sched.recomputed_tokens
        rec[_field("makespan", p)] = sched.makespan
        rec[_field("iterations", p)] = sched.iterations
        rec[_field("budget", p)] = policy.__dict__["budget"] if isinstance(policy, BlockBudget) else instance.M
        rec[_field("sim_s", p)] = round(sim_s, 3)
        if not verified:
            why = check.violations[0] if check.violations else f"checker mean {check.mean_latency} != {mean}"
            warnings.append(f"policy {p}: schedule rejected by the checker: {why}")
            continue
        rows = timed_request_rows(instance, sched)
        lat, ttft = percentiles(r["latency_s"] for r in rows), percentiles(r["ttft_s"] for r in rows)
        rec[_field("latency", p)] = check.mean_latency
        rec[_field("latency_p50", p)], rec[_field("latency_p99", p)] = lat.p50, lat.p99
        rec[_field("ttft_mean", p)], rec[_field("ttft_p99", p)] = ttft.mean, ttft.p99
        rec[_field("tbt_mean", p)] = percentiles(r["mean_tbt_s"] for r in rows).mean
        span = sched.makespan - min(r.arrival for r in instance.requests)
        rec[_field("throughput_rps", p)] = instance.n / span if span > 0 else None
        rec[_field("tokens_per_s", p)] = tokens / span if span > 0 else None
    ref = rec.get(_field("latency", suite.reference))
    rec["tel"] = None if ref is None else ref * instance.n
    rec["status"] = rec.get(_field("status", suite.reference))


#: The ``production`` task kind (registered in :data:`llmopt.bench.kinds.TASK_KINDS`).
KIND = TaskKind("production", blank_record, fill_record, "llmopt.papers.production.vs_papers:write_report")


# --- the report --------------------------------------------------------------------------------------------

_COLUMNS = ("latency", "latency_p50", "latency_p99", "ttft_mean", "ttft_p99", "tbt_mean", "throughput_rps",
            "tokens_per_s", "preemptions", "recomputed", "budget", "sim_s")


def _latest(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The last record of every task key (a resumed folder may hold retried ones)."""
    out: dict[tuple[str, str, int], Mapping[str, Any]] = {}
    for r in records:
        out[(r["workload"], canonical_params(r["params"]), r["seed"])] = r
    return list(out.values())


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def ranking_rows(records: Sequence[Mapping[str, Any]], policies: Sequence[str]) -> list[dict[str, Any]]:
    """One row per (trace, rate, policy): every metric averaged over the seeds, ranked by mean latency.

    Parameters
    ----------
    records : sequence of mapping
        ``production`` task records (``trials.jsonl``).
    policies : sequence of str
        The suite's policy specs.

    Returns
    -------
    list of dict
        Keys ``workload, trace, rate, M, n, policy, label, info, rank, seeds, ok, vs_vllm, vs_fcfs`` and every name of
        ``_COLUMNS``; ``rank`` 1 is the lowest mean latency among the policies whose every seed verified
        (``None`` for the others; equal latencies, to a relative 1e-9, share a rank); ``vs_vllm`` /
        ``vs_fcfs`` are the mean latency over vLLM's / FCFS's.
    """
    groups: dict[tuple[str, float, int, int], list[Mapping[str, Any]]] = {}
    for r in _latest(records):
        p = r["params"]
        groups.setdefault((p["trace"], float(p["rate"]), int(p["M"]), int(p["n"])), []).append(r)
    order = {k: i for i, k in enumerate(TRACES)}
    rows: list[dict[str, Any]] = []
    for (trace, rate, M, n), recs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1:])):
        block = []
        for spec in policies:
            label, info = POLICY_INFO.get(spec.split(":")[0], (spec, "?"))
            row: dict[str, Any] = {"workload": f"{trace} λ={rate:g}", "trace": trace, "rate": rate, "M": M, "n": n,
                                   "policy": spec, "label": label,
                                   "info": info, "seeds": len(recs),
                                   "ok": sum(1 for r in recs if r.get(_field("status", spec)) == "ok")}
            for c in _COLUMNS:
                row[c] = _mean([r.get(_field(c, spec)) for r in recs])
            block.append(row)
        ranked = sorted((b for b in block if b["ok"] == b["seeds"] and b["latency"] is not None),
                        key=lambda b: b["latency"])
        for b in ranked:  # ties (identical schedules, as under capacity) share a rank
            b["rank"] = 1 + sum(1 for o in ranked if o["latency"] < b["latency"] * (1 - 1e-9))
        base = {b["policy"]: b["latency"] for b in block}
        for b in block:
            b.setdefault("rank", None)
            for ref, key in (("vllm", "vs_vllm"), ("fcfs", "vs_fcfs")):
                d = base.get(ref)
                b[key] = b["latency"] / d if b["latency"] is not None and d else None
        rows += sorted(block, key=lambda b: (b["rank"] is None, b["rank"] or 0))
    return rows


def _fmt(v: Any, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _ranking_figure(rows: Sequence[Mapping[str, Any]], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    traces = list(dict.fromkeys(r["trace"] for r in rows))
    if not traces:
        return False
    fig, axes = plt.subplots(1, len(traces), figsize=(5.2 * len(traces), 4.8), squeeze=False)
    styles = {"clairvoyant": "-", "intervals": "-.", "blind": "--"}
    specs = list(dict.fromkeys(r["policy"] for r in rows))
    colors = {spec: f"C{i}" for i, spec in enumerate(specs)}  # one colour per policy in every panel
    for ax, trace in zip(axes[0], traces):
        sub = [r for r in rows if r["trace"] == trace]
        for spec in specs:
            pts = sorted((r["rate"], r["latency"]) for r in sub if r["policy"] == spec and r["rank"] is not None)
            if not pts:
                continue
            first = next(r for r in sub if r["policy"] == spec)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], styles.get(first["info"], ":"), marker="o",
                    color=colors[spec], label=f"{first['label']} ({first['info']})")
        rates = sorted({r["rate"] for r in sub})
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(rates)
        ax.set_xticklabels([f"{x:g}" for x in rates])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("arrival rate λ (requests / s)")
        ax.set_ylabel("mean end-to-end latency (s)")
        ax.set_title(f"{trace}, n = {sub[0]['n']:,}, M = {sub[0]['M']:,}")
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.suptitle("Paper policies (solid: clairvoyant, dash-dot: intervals) vs blind schedulers (dashed); "
                 "max_num_seqs = 128, KV blocks of 16", fontsize=9)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(out_dir: str | Path, suite: Suite, meta: Mapping[str, Any], records: list[dict[str, Any]],
                 problems: list[str] | None = None) -> Any:
    """Write ``summary.csv``, ``summary.md`` and ``ranking.png`` of a ``production`` suite into ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
    suite : Suite
    meta : mapping
        The run's metadata (unused beyond the harness's contract).
    records : list of dict
        The task records.
    problems : list of str, optional
        Problems the harness found (listed at the end of ``summary.md``).

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`ranking_rows`.
    """
    import pandas as pd

    out = Path(out_dir)
    rows = ranking_rows(records, suite.policies)
    df = pd.DataFrame(rows)
    df.to_csv(out / "summary.csv", index=False)
    made = _ranking_figure(rows, out / "ranking.png")
    budgets = [r["budget"] for r in rows if r["budget"] is not None]
    budget = min(budgets) if budgets else None
    M = rows[0]["M"] if rows else None
    lines = [f"# {suite.name}", "", suite.description, "",
             f"Cost model `{suite.cost_model}`; limits of every run: "
             + ", ".join(f"{k} = {v}" for k, v in suite.workloads[0].params.items() if k in _LIMIT_KEYS)
             + f"; token-exact policies plan with a budget of {_fmt(budget, 0)} tokens of M = {_fmt(M, 0)} "
             "(see `llmopt.papers.production.vs_papers`).", ""]
    if made:
        lines += ["![mean latency vs λ](ranking.png)", ""]
    for (trace, rate) in dict.fromkeys((r["trace"], r["rate"]) for r in rows):
        sub = [r for r in rows if r["trace"] == trace and r["rate"] == rate]
        lines += [f"## {trace}, λ = {rate:g} /s (n = {sub[0]['n']:,}, M = {sub[0]['M']:,}, "
                  f"{sub[0]['seeds']} seed{'s' * (sub[0]['seeds'] != 1)})", "",
                  "| rank | policy | knows o | mean (s) | p50 (s) | p99 (s) | TTFT (s) | TBT (ms) | req/s | tok/s "
                  "| preemptions | × vLLM | × FCFS |",
                  "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in sub:
            tbt = None if r["tbt_mean"] is None else 1000 * r["tbt_mean"]
            lines.append(f"| {_fmt(r['rank'])} | {r['label']} | {r['info']} | {_fmt(r['latency'])} | "
                         f"{_fmt(r['latency_p50'])} | {_fmt(r['latency_p99'])} | {_fmt(r['ttft_mean'])} | "
                         f"{_fmt(tbt, 0)} | {_fmt(r['throughput_rps'])} | {_fmt(r['tokens_per_s'], 0)} | "
                         f"{_fmt(r['preemptions'], 0)} | {_fmt(r['vs_vllm'])} | {_fmt(r['vs_fcfs'])} |")
        lines.append("")
    if problems:
        lines += ["## Problems", ""] + [f"- {p}" for p in problems] + [""]
    (out / "summary.md").write_text("\n".join(lines), encoding="utf-8")
    return df
