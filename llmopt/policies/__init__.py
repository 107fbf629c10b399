"""Online scheduling policies: one module per family, the registry here.

* :mod:`~llmopt.policies.base` — the policy protocol, the look-ahead prefix rule, MC-SF, FCFS /
  MC-Benchmark (J Algorithms 1–2), J0's algorithms;
* :mod:`~llmopt.policies.protection` — vLLM-like α-protection greedy and α-β clearing (J §5.2);
* :mod:`~llmopt.policies.sorted_f` — Sorted-F and its Phase-1 approximations (W Algorithms 1–5);
* :mod:`~llmopt.policies.lp_order` — Sorted-LP and LP-Swap (W Algorithms 6–7);
* :mod:`~llmopt.policies.intervals` — H-SF, A_max, A_ℓ under interval predictions (C), and
  :mod:`~llmopt.policies.a_min` — A_min and multi-interval A_min (C);
* production schedulers, blind to output lengths: :mod:`~llmopt.policies.vllm` (vLLM v0) and
  :mod:`~llmopt.policies.orca` (Orca).

Policies are looked up by name in :data:`POLICIES` (third parties add entries through the
``llmopt.policies`` entry-point group, see :mod:`llmopt.bench.plugins`). The protocol is
documented in :mod:`llmopt.policies.base`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llmopt.model.params import check_params
from llmopt.model.registry import Registry, make_from_spec, parse_spec
from llmopt.policies.base import (
    MCSF,
    FCFSLookahead,
    J0OnlineStochastic,
    J0SemiOnline,
    LookaheadPrefixPolicy,
    MCBenchmark,
    Policy,
    StepPolicy,
    greedy_prefix,
)

__all__ = [
    "Policy",
    "StepPolicy",
    "LookaheadPrefixPolicy",
    "MCSF",
    "FCFSLookahead",
    "MCBenchmark",
    "J0SemiOnline",
    "J0OnlineStochastic",
    "greedy_prefix",
    "POLICIES",
    "make_policy",
    "parse_policy_spec",
    "make_policy_spec",
    "check_policy_params",
]

POLICIES: Registry[Callable[..., Policy | StepPolicy]] = Registry("policy", "llmopt.policies")
POLICIES.register("mc-sf", "llmopt.policies.base:MCSF", "Memory-Constrained Shortest First (J Alg. 1)")
POLICIES.register("mc-sf2", "llmopt.policies.base:MCSF2",
                  "MC-SF2 (W Thm EC.1): MC-SF taking waiting requests by s + o instead of o")
POLICIES.register("fcfs", "llmopt.policies.base:FCFSLookahead", "FCFS with look-ahead check, MC-Benchmark (J Alg. 2)")
POLICIES.register("mc-benchmark", "llmopt.policies.base:MCBenchmark", "MC-Benchmark (J App. C Alg. 2) = fcfs")
POLICIES.register("j0-semi-online", "llmopt.policies.base:J0SemiOnline", "J0 semi-online Alg. 1, fixed (= mc-sf)")
POLICIES.register("j0-online-stochastic", "llmopt.policies.base:J0OnlineStochastic",
                  "J0 online stochastic Alg. 2, fixed (= mc-sf)")
POLICIES.register("alpha-protection", "llmopt.policies.protection:AlphaProtection",
                  "vLLM-like alpha-protection greedy / beta-clearing (J §5.2); params alpha, beta=1, seed=0, "
                  "requeue=front, pass_cost=free|extra-passes|every-pass")
POLICIES.register("sorted-f", "llmopt.policies.sorted_f:SortedF",
                  "Sorted-F (W Alg. 1); params phase1=swap|quantile|dp|scaled-dp|brute-force, seed=0, eps=0.1, B")
POLICIES.register("sorted-f-dp", "llmopt.policies.sorted_f:SortedFDP", "Sorted-F with exact-DP Phase 1 (W Alg. 1 + 2)")
POLICIES.register("sorted-f-scaled-dp", "llmopt.policies.sorted_f:SortedFScaledDP",
                  "Sorted-F with scaled-DP Phase 1 (W Alg. 1 + 3); params eps=0.1, B")
POLICIES.register("sorted-f-swap", "llmopt.policies.sorted_f:SortedFSwap",
                  "Sorted-F (Swap): local swap Phase 1 (W Alg. 1 + 4)")
POLICIES.register("sorted-f-quantile", "llmopt.policies.sorted_f:SortedFQuantile",
                  "Sorted-F (quantile): quantile greedy Phase 1 (W Alg. 1 + 5); param seed=0")
POLICIES.register("sorted-lp", "llmopt.policies.lp_order:SortedLP",
                  "Sorted-LP (W Alg. 6): order by Relax-LP expected start; params bucket=auto|Δ, time_limit")
POLICIES.register("lp-swap", "llmopt.policies.lp_order:LPSwap",
                  "LP-Swap (W Alg. 7): LP-ordered batches improved by local swaps; params bucket, time_limit")
POLICIES.register("h-sf", "llmopt.policies.intervals:HSF",
                  "H-SF (C Alg. 3): hindsight shortest-first with true o = MC-SF; C's ratio denominator")
POLICIES.register("a-random", "llmopt.policies.intervals:ARandom",
                  "A_random (C App. Alg. 4): seeded random order, true o, prefix rule; param seed=0")
POLICIES.register("a-max", "llmopt.policies.intervals:AMax",
                  "A_max (C Alg. 1): intervals, projects every request with its upper end u; param seed=0")
POLICIES.register("a-min", "llmopt.policies.a_min:AMin",
                  "A_min (C Alg. 2, fixed): intervals, admits on lower bounds, cancels smallest õ first; "
                  "params seed=0, readmit=same-step|next-step, running_estimate=certified|literal|repaired, "
                  "pseudo_update=max|assign")
POLICIES.register("a-min-multi", "llmopt.policies.a_min:AMinMulti",
                  "multi-interval A_min (C Alg. 5): A_min on disjoint bucket intervals (checked)")
POLICIES.register("vllm", "llmopt.policies.vllm:VLLMScheduler",
                  "vLLM v0 default scheduler: blind to o, FCFS, KV blocks (engine block_size), free-block "
                  "watermark, recompute preemption of the latest arrival, prefill-only batches; params "
                  "watermark=0.01, batching=prefill-first|mixed (default prefill-first on the single-worker "
                  "continuous clock, mixed = vLLM v1's prefill+decode budget and on clocks without paused iterations)")
POLICIES.register("orca", "llmopt.policies.orca:OrcaScheduler",
                  "Orca: blind to o, FCFS iteration-level batching, fixed reservation of max_len tokens per request "
                  "(no paging); param max_len=4096")
POLICIES.register("sarathi", "llmopt.policies.sarathi:SarathiScheduler",
                  "Sarathi-Serve: blind to o, chunked prefill under a token budget per batch, decodes first, FCFS, "
                  "KV blocks with a watermark, recompute preemption only when memory runs out; "
                  "params chunk_size=512, max_num_seqs, watermark=0.01")
POLICIES.register("a-ell", "llmopt.policies.intervals:AEll",
                  "A_ℓ promote-ℓ (C Alg. 6): intervals, FIFO, cancels at ℓ tokens and re-queues with u at the back")


def make_policy(name: str, **params: Any) -> Policy | StepPolicy:
    """Instantiate the registered policy ``name``.

    Raises
    ------
    ValueError
        If a parameter has the wrong type for the policy (see :func:`check_policy_params`), or
        the policy refuses its value.
    """
    factory = POLICIES.get(name)
    check_policy_params(name, factory, params)
    return factory(**params)


def check_policy_params(name: str, factory: Callable[..., Any], params: dict[str, Any]) -> None:
    """Refuse a parameter policy ``name`` does not take, or one of the wrong type (``alpha=abc``),
    by name, before the policy meets it (:func:`llmopt.model.params.check_params`).

    Raises
    ------
    ValueError
        ``policy 'alpha-protection': parameter 'alpha' must be a number, got 'abc'``.
    """
    check_params("policy", name, factory, params)


def parse_policy_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split a policy spec ``"name"`` or ``"name:key=value,key=value"`` (see
    :func:`llmopt.model.registry.parse_spec`), e.g. ``"alpha-protection:alpha=0.2,beta=0.1"``."""
    return parse_spec(spec, "policy spec")


def make_policy_spec(spec: str, **extra: Any) -> Policy | StepPolicy:
    """Instantiate a policy from a spec string (see :func:`parse_policy_spec`); ``extra``
    parameters (e.g. a per-trial ``seed``) are added when the policy does not fix them.

    Raises
    ------
    ValueError
        For a malformed spec, or a parameter of the wrong type (:func:`check_policy_params`) or value.
    """
    name, params = parse_policy_spec(spec)
    check_policy_params(name, POLICIES.get(name), params)
    policy: Policy | StepPolicy = make_from_spec(POLICIES, spec, "policy spec", **extra)
    return policy
