"""Batch-time cost models: how long one iteration of the worker takes (DESIGN §2).

The continuous engine forms a batch at each decision epoch and the batch lasts
``cost_model.batch_time(shape)`` seconds. A batch is summarised by a :class:`BatchShape`:
the prompts that start in it (each also produces its first output token) and the running
requests that produce one token each. The default model is Llama-2-70B on two A100-80GB
SXM GPUs with tensor parallelism 2 (J §5.2, W §7; DIGEST §4.2).

Fitted model (:class:`LinearCostModel`, Vidur style)
----------------------------------------------------
Vidur (Agrawal et al. 2024) predicts one iteration as ``80 ×`` the time of one transformer
block plus nothing for the embedding and LM head; a block is the sum of per-operation times,
each a regression on the number of tokens ``N`` in the batch, plus attention, plus two
tensor-parallel all-reduces (after ``attn_post_proj`` and after ``mlp_down_proj``), each
``all_reduce(N · 8192 · 2 bytes) + 0.02 ms`` NCCL launch overhead. Here, with
``N = prefill_tokens + decode_requests``, ``P = prefill_requests``, ``D = decode_requests``,
``Q = Σ s_i²`` and ``C = decode_context``::

    t = base + per_token·N + slope_1·(N − knot_1)⁺ + slope_2·(N − knot_2)⁺
        + per_prefill_sq·Q + per_context_token·C + per_request·(P + D)

* **Linear operators** (``base``, ``per_token``, ``knot_1``, ``slope_1``): the per-layer sum of
  Vidur's nine per-operation medians (input/post-attention layernorm, attn pre-proj, RoPE,
  attn post-proj, MLP up-proj, act, down-proj, add; TP 2), fitted as ``a + b·N + c·(N − k)⁺``.
  The profile is flat for small ``N`` (the GEMMs are bound by reading the weights: 0.56 ms per
  layer at ``N = 1`` against 0.42 ms for its 856 MB of weights per GPU at 2.039 TB/s) and linear once compute-bound; a
  convex hinge captures both with one more parameter than a line. Least squares on the
  *relative* error (weights ``1/y``), the knot by exhaustive search over the profiled ``N``.
  The profile also shows tile-quantisation steps of ±10 % that no smooth model follows.
* **All-reduce** (``knot_2``, ``slope_2``, part of ``base``): ``a + c·(N − k)⁺`` (flat latency,
  then bandwidth) fitted by ordinary least squares to the pairwise-NVLink profile
  (``num_workers = 2``, sizes of at least one token). Absolute, not relative, weights: a few
  small-size medians are 0.010 ms among 0.06 ms neighbours (below NVLink latency, so glitches)
  and a relative fit would chase them.
* **Attention** — Vidur's attention profile for this model is missing from every public copy
  (shared/data/SOURCES.md, "Not found"), so attention is derived from first principles:

  - *decode* is bound by reading the KV cache: each token of context holds
    ``2 (K,V) · 80 layers · 8 KV heads · 128 dims · 2 bytes = 327,680 B``, split over the two
    GPUs, so ``per_context_token = 163,840 B / (2.039e12 B/s · η_kv)`` with ``η_kv = 0.7``
    (assumed, not calibrated: the Vidur weight GEMMs at ``N = 1`` stream at 75 % of peak, and the
    splitwise grid cannot identify it because the KV term is under 5 % of every measured
    decode iteration);
  - *prefill* is compute-bound: ``4 · 80 layers · (64 q heads / 2) · 128 · Σ s_i² / 2`` FLOPs per
    GPU (QKᵀ and PV, causal half) at ``η_attn = 0.5`` of 312 TFLOP/s (assumed: a round figure in
    the range FlashAttention-class kernels reach for causal head-dim-128 forward passes on A100;
    not calibrated);
  - *per request*: one constant per sequence in the batch (prefill or decode) covers the
    per-sequence attention-kernel work, sampling and bookkeeping. This is the **only calibrated
    constant**: least squares on the relative error of the splitwise decode rows (batch 1–32,
    the batch-64 row excluded). It comes out at 0.32 ms per request (4 µs per request per
    layer); Vidur models such costs as "CPU overhead" linear in the batch size, skipped by default.

  Vidur's 10 % "batching overhead" on GQA attention, the KV-cache write and the embedding
  (≤ 0.4 ms at 4k tokens) are left out.

* **Chunked prefill** (``sarathi``): a chunk of ``c`` prompt tokens after ``p`` already in the
  cache counts ``c`` tokens in ``N``, one request in ``P``, and ``(p + c)² − p² = c² + 2cp`` in
  ``Q`` (:func:`llmopt.model.batch.chunk_attention_term`): its ``c`` queries attend to the ``p``
  cached keys and causally to each other, at the compute-bound prefill rate above. Assumed, not
  calibrated: reading the ``p`` cached tokens' KV (``p · 327,680 B``, memory-bound like a decode)
  is not charged — at the ``η`` above it is at most ``13.7 / c`` of the chunk's attention time
  (``per_context_token · p`` against ``per_prefill_sq · 2cp``: 2.7 % for ``c = 512``; a 512-token
  chunk after 1,000 cached tokens would gain 0.11 ms on 206 ms) — and the terms of a prompt's
  chunks add up to its ``s²``, so chunking a prompt changes its linear-operator time (more,
  smaller batches) but not its attention time.

The coefficients are committed in ``llmopt/engine/data/llama2_70b_a100_tp2.json`` with their
provenance, fit errors and the splitwise cross-check; the command that refits them is::

    llmopt study run fit-cost-model --out results/jaillet/cost-model --data ../shared/data/profiles \\
        --coefficients llmopt/engine/data/llama2_70b_a100_tp2.json

Cross-check against measurements (splitwise-sim ``perf_model.csv``, Llama-2-70B, A100-80GB,
TP 2; ``results/jaillet/cost-model/README.md``): decode iterations within ±6 % (batch 1–32, median
4 %); single prompts (128–8192 tokens) within ±6 % (median 4 %); batched prompts (2–32 × 512)
12–19 % *below* the measurement, which costs batched prompts about ``b ×`` one prompt's time
(that engine gains nothing from batching prefills, unlike Vidur's profile). The batch-64 row is
a documented outlier (prompt time 0.8 s, a tenth of the trend) and is excluded. Typical
batches: a decode of 100 requests at 150 tokens of context takes 105 ms, one 40-token prompt
63 ms, one decode step of a single request 57 ms.

Roofline (:class:`RooflineCostModel`)
-------------------------------------
A first-principles lower bound: per iteration, with every byte and FLOP split evenly over the
two GPUs, the weight GEMMs take ``max(weight bytes / HBM bandwidth, 2·params·N FLOPs / peak)``,
decode attention ``max(C · 327,680 B / bandwidth, 4·80·64·128·C FLOPs / peak)``, prefill
attention ``4·80·64·128·Σs²/2`` FLOPs over peak, plus ``2 · 80`` all-reduces of ``N · 16,384 B``
at the NVLink bandwidth (300 GB/s per direction), not overlapped (Megatron tensor parallelism).
With efficiencies 1 (the registered default) it is a lower bound: the fitted model is 1.4–2.2 ×
the roofline on the splitwise rows (1.7 × for small decode batches, where reading 68.7 GB of
weights per iteration dominates) and 1.4–3.8 × over a grid of batches; the largest ratios are
decode batches of 150–300 requests, where the roofline sits at its ridge point (one read of the
weights serves ~150 tokens) while the profiled GEMMs are not at peak yet and the per-request
constant adds up.

Hardware and KV capacity
------------------------
The model and GPU constants the roofline uses, the KV capacity ``M`` and the GPU cost of a run live in
:mod:`llmopt.engine.hardware`; this module keeps the batch-time models only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from llmopt.engine.hardware import (
    A100_BF16_FLOPS,
    A100_HBM_BYTES_PER_S,
    A100_NVLINK_BYTES_PER_S,
    HEAD_DIM,
    HIDDEN,
    KV_BYTES_PER_TOKEN_GQA,
    LLAMA2_70B_EMBEDDING_PARAMS,
    LLAMA2_70B_PARAMS,
    N_LAYERS,
    N_Q_HEADS,
)
from llmopt.model.batch import BatchShape
from llmopt.model.registry import Registry

__all__ = [
    "BatchShape",
    "CostModel",
    "LinearCostModel",
    "RooflineCostModel",
    "ConstantCostModel",
    "COST_MODELS",
    "DEFAULT_COST_MODEL",
    "make_cost_model",
    "load_cost_model",
]

@runtime_checkable
class CostModel(Protocol):
    """Seconds one batch takes on the worker (``> 0`` for a non-empty batch)."""

    name: str

    def batch_time(self, shape: BatchShape) -> float: ...


def _check_finite(name: str, values: Mapping[str, float], nonnegative: bool = True) -> None:
    for key, value in values.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"{name}: {key} must be a finite number, got {value!r}")
        if nonnegative and value < 0:
            raise ValueError(f"{name}: {key} must be >= 0, got {value!r}")


@dataclass(frozen=True)
class LinearCostModel:
    """The fitted Vidur-style batch-time model (see the module docstring for its form).

    All coefficients are in seconds (per token, per ``s²``, per token of context, per request);
    knots are in tokens. Every coefficient is non-negative, so the time is nondecreasing in every
    argument.
    """

    name: str
    base: float
    per_token: float
    knot_1: float
    slope_1: float
    knot_2: float
    slope_2: float
    per_prefill_sq: float
    per_context_token: float
    per_request: float

    def __post_init__(self) -> None:
        _check_finite(f"cost model {self.name!r}", {f.name: getattr(self, f.name) for f in fields(self)[1:]})

    def time(
        self,
        prefill_requests: int,
        prefill_tokens: int,
        prefill_tokens_sq: int,
        decode_requests: int,
        decode_context: int,
    ) -> float:
        """Seconds for one batch, from plain ints (the engine's hot path: no validation, no numpy).

        An empty batch (no prefill and no decode request) takes 0 s.
        """
        n = prefill_tokens + decode_requests
        if prefill_requests == 0 and decode_requests == 0:
            return 0.0
        t = (
            self.base
            + self.per_token * n
            + self.per_prefill_sq * prefill_tokens_sq
            + self.per_context_token * decode_context
            + self.per_request * (prefill_requests + decode_requests)
        )
        if n > self.knot_1:
            t += self.slope_1 * (n - self.knot_1)
        if n > self.knot_2:
            t += self.slope_2 * (n - self.knot_2)
        return t

    def batch_time(self, shape: BatchShape) -> float:
        return self.time(
            shape.prefill_requests,
            shape.prefill_tokens,
            shape.prefill_tokens_sq,
            shape.decode_requests,
            shape.decode_context,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LinearCostModel:
        """Build from :meth:`to_dict`'s output; unknown or missing keys are errors."""
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(names))
        missing = [n for n in names if n not in data]
        if unknown or missing:
            raise ValueError(f"linear cost model: unknown keys {unknown}, missing keys {missing}")
        return cls(**{n: data[n] for n in names})


@dataclass(frozen=True)
class RooflineCostModel:
    """First-principles batch time for Llama-2-70B with tensor parallelism (a lower bound at efficiency 1).

    Per iteration and per GPU: the weight GEMMs take ``max(weight bytes / (bw · mem_eff),
    GEMM FLOPs / (peak · compute_eff))``; decode attention ``max(KV bytes / (bw · mem_eff), FLOPs /
    (peak · compute_eff))``; prefill attention its FLOPs over ``peak · compute_eff``; plus
    ``2 · n_layers`` all-reduces of ``N · hidden · 2`` bytes at ``link_bw`` (ring with 2 GPUs: each
    sends and receives the full message once), not overlapped with compute.

    The weights read per iteration are all parameters except the input embedding table (a gather,
    not a stream): ``(68.98e9 − 0.26e9) · 2 B / 2 GPUs = 68.7 GB`` per GPU. GEMM FLOPs are
    ``2 · params`` per token for the transformer blocks and ``2 · vocab · hidden`` per *sequence*
    for the LM head (logits only at each sequence's last position).
    """

    name: str = "llama2-70b-a100-tp2-roofline"
    params: int = LLAMA2_70B_PARAMS
    embedding_params: int = LLAMA2_70B_EMBEDDING_PARAMS
    n_layers: int = N_LAYERS
    hidden: int = HIDDEN
    n_q_heads: int = N_Q_HEADS
    head_dim: int = HEAD_DIM
    kv_bytes_per_token: int = KV_BYTES_PER_TOKEN_GQA
    bytes_per_param: int = 2
    tp: int = 2
    hbm_bytes_per_s: float = A100_HBM_BYTES_PER_S
    peak_flops: float = A100_BF16_FLOPS
    link_bytes_per_s: float = A100_NVLINK_BYTES_PER_S
    mem_efficiency: float = 1.0
    compute_efficiency: float = 1.0

    def time(
        self,
        prefill_requests: int,
        prefill_tokens: int,
        prefill_tokens_sq: int,
        decode_requests: int,
        decode_context: int,
    ) -> float:
        """Seconds for one batch (0 for an empty batch)."""
        if prefill_requests == 0 and decode_requests == 0:
            return 0.0
        n = prefill_tokens + decode_requests
        sequences = prefill_requests + decode_requests
        bw = self.hbm_bytes_per_s * self.mem_efficiency * self.tp
        flops = self.peak_flops * self.compute_efficiency * self.tp
        head = self.embedding_params  # the LM head has one vocabulary × hidden table too
        block_params = self.params - 2 * self.embedding_params
        weights = (self.params - self.embedding_params) * self.bytes_per_param / bw
        gemm = (2 * block_params * n + 2 * head * sequences) / flops
        attn_width = 4 * self.n_layers * self.n_q_heads * self.head_dim  # FLOPs per (query, key) pair
        decode_attn = max(self.kv_bytes_per_token * decode_context / bw, attn_width * decode_context / flops)
        prefill_attn = attn_width * prefill_tokens_sq / 2 / flops
        all_reduce = 2 * self.n_layers * n * self.hidden * 2 / self.link_bytes_per_s
        return max(weights, gemm) + decode_attn + prefill_attn + all_reduce

    def batch_time(self, shape: BatchShape) -> float:
        return self.time(
            shape.prefill_requests,
            shape.prefill_tokens,
            shape.prefill_tokens_sq,
            shape.decode_requests,
            shape.decode_context,
        )


@dataclass(frozen=True)
class ConstantCostModel:
    """Every non-empty batch takes ``seconds_per_iteration`` (empty batches take 0 s).

    With the default of 1 s the continuous clock counts iterations, as the discrete model does.
    """

    seconds_per_iteration: float = 1.0
    name: str = "constant"

    def __post_init__(self) -> None:
        s = self.seconds_per_iteration
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or s <= 0:
            raise ValueError(f"constant cost model: seconds_per_iteration must be finite and > 0, got {s!r}")

    def time(
        self,
        prefill_requests: int,
        prefill_tokens: int,
        prefill_tokens_sq: int,
        decode_requests: int,
        decode_context: int,
    ) -> float:
        return 0.0 if prefill_requests == 0 and decode_requests == 0 else self.seconds_per_iteration

    def batch_time(self, shape: BatchShape) -> float:
        return 0.0 if shape.is_empty else self.seconds_per_iteration


COST_DATA_FILE = "llama2_70b_a100_tp2.json"


def load_cost_model(path: str | Path | None = None) -> LinearCostModel:
    """The fitted model from a coefficients file (default: the committed
    ``llmopt/engine/data/llama2_70b_a100_tp2.json``)."""
    if path is None:
        text = resources.files("llmopt.engine").joinpath("data", COST_DATA_FILE).read_text(encoding="utf-8")
        where = f"llmopt/engine/data/{COST_DATA_FILE}"
    else:
        text = Path(path).read_text(encoding="utf-8")
        where = str(path)
    doc = json.loads(text)
    try:
        return LinearCostModel.from_dict(doc["model"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where}: not a cost-model file ({exc})") from exc


COST_MODELS: Registry[Any] = Registry("cost model", "llmopt.cost_models")
COST_MODELS.register(
    "llama2-70b-a100-tp2",
    "llmopt.engine.cost_model:load_cost_model",
    "Llama-2-70B, 2×A100-80GB, TP 2: Vidur-style fit to operator profiles (the default)",
)
COST_MODELS.register(
    "llama2-70b-a100-tp2-roofline",
    "llmopt.engine.cost_model:RooflineCostModel",
    "Llama-2-70B, 2×A100-80GB, TP 2: first-principles roofline (a lower bound)",
)
COST_MODELS.register("constant", "llmopt.engine.cost_model:ConstantCostModel",
                     "every batch takes seconds_per_iteration (1 s)")

DEFAULT_COST_MODEL = "llama2-70b-a100-tp2"


def make_cost_model(name: str = DEFAULT_COST_MODEL, **params: Any) -> CostModel:
    """Build the registered cost model ``name``; ``params`` go to its factory
    (e.g. ``make_cost_model("constant", seconds_per_iteration=0.05)``)."""
    model = COST_MODELS.get(name)(**params)
    if not isinstance(model, CostModel):
        raise TypeError(f"cost model {name!r} built a {type(model).__name__}, which has no name/batch_time")
    return model
