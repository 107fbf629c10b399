"""The hardware a worker runs on: Llama-2-70B's geometry, A100-80GB figures, the KV capacity ``M`` and
the GPU cost of a run (DESIGN §2).

The batch-time models (:mod:`llmopt.engine.cost_model`) read the geometry and the device figures from
here; the KV capacity and the GPU-cost helpers are separate concerns that use the same constants.

KV capacity ``M``
-----------------
See :func:`kv_capacity_tokens`. The toolkit uses the papers' ``M = 16,492`` tokens
(:data:`PAPER_M`); the derivation shows where that number can and cannot come from.
:func:`kv_capacity_from_hardware` computes ``M`` for any GPU, tensor parallelism, model size,
memory margin and block size (vLLM's rule), and :func:`vidur_kv_capacity_tokens` is Vidur's rule,
which gives **53,248** tokens (3,328 blocks of 16) for the same Llama-2-70B on 2×A100-80GB: see
there for why the two numbers differ. :func:`parse_kv_capacity_spec` reads the command line's
``--kv-capacity-from``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = [
    "PAPER_M",
    "N_LAYERS",
    "HIDDEN",
    "N_Q_HEADS",
    "N_KV_HEADS",
    "HEAD_DIM",
    "MLP_HIDDEN",
    "VOCAB",
    "LLAMA2_70B_PARAMS",
    "LLAMA2_70B_EMBEDDING_PARAMS",
    "KV_BYTES_PER_TOKEN_GQA",
    "KV_BYTES_PER_TOKEN_MHA",
    "A100_80GB_BYTES",
    "A100_HBM_BYTES_PER_S",
    "A100_BF16_FLOPS",
    "A100_NVLINK_BYTES_PER_S",
    "A100_BOARD_POWER_W",
    "GPUS_PER_WORKER",
    "kv_capacity_tokens",
    "memory_utilization_for",
    "kv_capacity_from_hardware",
    "vidur_kv_capacity_tokens",
    "vidur_parameters_per_device",
    "parse_kv_capacity_spec",
    "GIB",
    "VIDUR_M",
    "gpu_cost_per_request",
]

#: The KV capacity (tokens) the papers use for Llama-2-70B on 2×A100 (J §5.2, W §7, DIGEST I-15).
PAPER_M = 16_492

# Llama-2-70B geometry (HF config): 80 layers, hidden 8192, 64 query heads and 8 KV heads of 128
# dims (GQA), gated MLP of 28,672, vocabulary 32,000.
N_LAYERS = 80
HIDDEN = 8192
N_Q_HEADS = 64
N_KV_HEADS = 8
HEAD_DIM = 128
MLP_HIDDEN = 28_672
VOCAB = 32_000
#: Exact parameter count: 80 × 855,654,400 per layer + 2 × 262,144,000 (embedding, LM head) + 8,192.
LLAMA2_70B_PARAMS = 68_976_648_192
#: One vocabulary × hidden table (the input embedding, gathered rather than streamed; the LM head has the same size).
LLAMA2_70B_EMBEDDING_PARAMS = VOCAB * HIDDEN
#: KV bytes per token with GQA: 2 (K and V) · 80 layers · 8 KV heads · 128 dims · 2 bytes (fp16).
KV_BYTES_PER_TOKEN_GQA = 2 * N_LAYERS * N_KV_HEADS * HEAD_DIM * 2
#: KV bytes per token as J0 computes it (2 · L · H · D, i.e. as if all 64 heads had their own K and V).
KV_BYTES_PER_TOKEN_MHA = 2 * N_LAYERS * HIDDEN * 2

#: A100-80GB SXM: 80 GB of HBM2e (decimal, as J0 counts; the device has 80 GiB nominal), 2.039 TB/s,
#: 312 TFLOP/s dense fp16/bf16 tensor-core peak, NVLink 3: 12 links × 25 GB/s = 300 GB/s per direction.
A100_80GB_BYTES = 80e9
A100_HBM_BYTES_PER_S = 2.039e12
A100_BF16_FLOPS = 312e12
A100_NVLINK_BYTES_PER_S = 300e9
#: One GiB (the A100-80GB's nominal 80 GiB; Vidur counts device memory in GiB).
GIB = 1024**3
#: Vidur's KV capacity for Llama-2-70B on 2×A100-80GB, 10 % margin, 4,096-token requests, blocks of 16
#: (:func:`vidur_kv_capacity_tokens`): 13 request slots × 256 blocks × 16 tokens.
VIDUR_M = 53_248

#: A100-80GB SXM maximum board power (TDP), W (NVIDIA A100 data sheet). Energy figures multiply
#: GPU-busy seconds by it: an upper estimate (a GPU draws less than TDP in memory-bound decode).
A100_BOARD_POWER_W = 400.0
#: GPUs of one worker of the default cost models (Llama-2-70B, tensor parallel over 2×A100).
GPUS_PER_WORKER = 2


def kv_capacity_tokens(
    total_memory_bytes: float = 2 * A100_80GB_BYTES,
    weight_bytes: float = 2 * LLAMA2_70B_PARAMS,
    kv_bytes_per_token: float = KV_BYTES_PER_TOKEN_GQA,
    gpu_memory_utilization: float = 1.0,
    reserve_bytes: float = 0.0,
) -> int:
    """KV-cache capacity in tokens: ``⌊(u · total − weights − reserve) / KV bytes per token⌋``.

    ``u`` is the fraction of device memory the server may use (vLLM's ``gpu_memory_utilization``,
    default 0.9) and ``reserve`` the activations and workspace. Defaults: 2 × 80 GB, fp16 weights of
    Llama-2-70B's 68,976,648,192 parameters (137.95 GB), GQA KV of 327,680 B per token, ``u = 1``.

    Reconciling with the papers' ``M = 16,492`` (DIGEST §4.3, I-15):

    * J0's formula, ``(160 − 140) GB / (2 · 80 · 8192 · 2 B = 2,621,440 B)``, gives **7,629** tokens
      with decimal GB and **8,192** with GiB; it ignores GQA.
    * With GQA's 327,680 B per token the same 20 GB gives **61,035** tokens (65,536 for 20 GiB); with
      the true weights (137.95 GB) and all 160 GB, **67,281**.
    * ``16,492 × 327,680 B = 5.40 GB`` and ``16,492 × 2,621,440 B = 43.2 GB``. No GQA-free reading
      fits (43 GB cannot be free next to 138 GB of weights in 160 GB). With GQA, 16,492 tokens is
      what is left when the server may use **89.6 %** of 2 × 80 GB (``memory_utilization_for``), i.e.
      vLLM's default ``gpu_memory_utilization = 0.9`` less about 0.64 GB of activations and workspace
      (``kv_capacity_tokens(gpu_memory_utilization=0.9)`` = 18,453 tokens). That is consistent with
      J's statement that 16,492 was "observed in real experiments"; the toolkit uses :data:`PAPER_M`.

    Returns
    -------
    int
        The capacity, at least 0.
    """
    free = gpu_memory_utilization * total_memory_bytes - weight_bytes - reserve_bytes
    return max(0, math.floor(free / kv_bytes_per_token))


def memory_utilization_for(
    tokens: int = PAPER_M,
    total_memory_bytes: float = 2 * A100_80GB_BYTES,
    weight_bytes: float = 2 * LLAMA2_70B_PARAMS,
    kv_bytes_per_token: float = KV_BYTES_PER_TOKEN_GQA,
) -> float:
    """The memory fraction ``u`` at which :func:`kv_capacity_tokens` (no reserve) holds exactly ``tokens``."""
    return (weight_bytes + tokens * kv_bytes_per_token) / total_memory_bytes


def gpu_cost_per_request(busy_seconds: float, n: int, gpus: int = GPUS_PER_WORKER,
                         board_power_w: float = A100_BOARD_POWER_W) -> tuple[float | None, float | None]:
    """GPU-seconds and energy (joules) per request of a run whose workers computed ``busy_seconds``
    in total (:attr:`llmopt.model.timed_schedule.TimedSchedule.busy_seconds`, summed over workers).

    ``gpus`` per worker and ``board_power_w`` per GPU (default: 2 A100-80GB SXM at their 400 W
    TDP, an upper estimate). ``(None, None)`` when ``n`` is 0.
    """
    if n <= 0:
        return None, None
    gpu_s = busy_seconds * gpus / n
    return gpu_s, gpu_s * board_power_w


def kv_capacity_from_hardware(
    gpu_memory_bytes: float = A100_80GB_BYTES,
    tensor_parallel: int = GPUS_PER_WORKER,
    parameters: float = LLAMA2_70B_PARAMS,
    bytes_per_parameter: float = 2.0,
    kv_bytes_per_token: float = KV_BYTES_PER_TOKEN_GQA,
    memory_utilization: float = 0.9,
    block_size: int = 1,
    reserve_bytes: float = 0.0,
) -> int:
    """KV capacity ``M`` (tokens) of one worker from its hardware, vLLM's way.

    ``M = B · ⌊(u · G · T − P · b − R) / (K · B)⌋``: the worker's ``T`` GPUs of ``G`` bytes each, of
    which the server may use the fraction ``u`` (vLLM's ``gpu_memory_utilization``, default 0.9),
    less the weights (``P`` parameters of ``b`` bytes, sharded over the ``T`` GPUs) and a reserve
    ``R`` for activations and workspace, hold KV blocks of ``B`` tokens at ``K`` bytes per token
    (summed over the GPUs: each holds ``K / T`` bytes of a token under tensor parallelism). With
    ``B = 1`` and ``R = 0`` this is :func:`kv_capacity_tokens`.

    Parameters
    ----------
    gpu_memory_bytes : float
        Memory per GPU (default 80 GB, decimal, as J0 counts; an A100-80GB has 80 GiB =
        85.9 GB, :data:`GIB`).
    tensor_parallel : int
        GPUs of the worker (tensor parallelism), default 2.
    parameters, bytes_per_parameter : float
        Model size (default Llama-2-70B's 68,976,648,192 parameters, fp16).
    kv_bytes_per_token : float
        KV-cache bytes per token over all layers and GPUs (default GQA, 327,680 B).
    memory_utilization : float
        The fraction ``u`` in ``(0, 1]``.
    block_size : int
        Tokens per KV block; ``M`` is a whole number of blocks.
    reserve_bytes : float
        Activations and workspace, over the worker.

    Returns
    -------
    int
        ``M`` in tokens, at least 0. The papers' ``M = 16,492`` is ``u =``
        :func:`memory_utilization_for` ``(16_492)`` ≈ 0.896 with the defaults; ``u = 0.9`` gives 18,453.

    Raises
    ------
    ValueError
        For a non-positive memory, GPU count, KV size or block size, or ``u`` outside ``(0, 1]``.
    """
    if not gpu_memory_bytes > 0 or not kv_bytes_per_token > 0:
        raise ValueError("gpu memory and KV bytes per token must be positive")
    if tensor_parallel < 1 or block_size < 1:
        raise ValueError(f"tensor parallelism and block size must be at least 1, got {tensor_parallel}, {block_size}")
    if not 0 < memory_utilization <= 1:
        raise ValueError(f"memory utilization must be in (0, 1], got {memory_utilization}")
    free = memory_utilization * gpu_memory_bytes * tensor_parallel - parameters * bytes_per_parameter - reserve_bytes
    # a relative 1e-12 absorbs the rounding of u·G·T (u = memory_utilization_for(M) gives M exactly)
    blocks = math.floor(free / (kv_bytes_per_token * block_size) * (1 + 1e-12))
    return max(0, blocks) * block_size


def vidur_parameters_per_device(tensor_parallel: int = GPUS_PER_WORKER, n_layers: int = N_LAYERS,
                                hidden: int = HIDDEN, n_q_heads: int = N_Q_HEADS, n_kv_heads: int = N_KV_HEADS,
                                mlp_hidden: int = MLP_HIDDEN, pipeline_stages: int = 1) -> int:
    """Parameters per GPU as Vidur's ``ParamCounter`` counts them: per layer ``Wq, Wk, Wv`` and ``Wo``
    for the GPU's heads and the gated MLP's ``3 · hidden · mlp / T``, times the layers of a pipeline
    stage; embeddings, LM head and norms are not counted. Llama-2-70B, ``T = 2``: 427,819,008 per
    layer, **34,225,520,640** per GPU (the model has 34,488,324,096 per GPU: 0.8 % more)."""
    head_dim = hidden // n_q_heads
    q_heads = n_q_heads // tensor_parallel
    kv_heads = -(-n_kv_heads // tensor_parallel)
    per_layer = hidden * head_dim * (q_heads + 2 * kv_heads) + hidden * head_dim * q_heads
    per_layer += 3 * hidden * mlp_hidden // tensor_parallel
    return per_layer * (n_layers // pipeline_stages)


def vidur_kv_capacity_tokens(gpu_memory_bytes: float = 80 * GIB, tensor_parallel: int = GPUS_PER_WORKER,
                             memory_margin_fraction: float = 0.1, max_request_tokens: int = 4096,
                             block_size: int = 16, parameters_per_device: int | None = None,
                             n_layers: int = N_LAYERS, n_kv_heads: int = N_KV_HEADS, head_dim: int = HEAD_DIM,
                             bytes_per_element: int = 2) -> int:
    """The KV capacity (tokens) Vidur's vLLM replica scheduler gets: **53,248** for Llama-2-70B on 2×A100-80GB.

    Vidur (``vidur/scheduler/utils/memory_planner.py``, ``MemoryPlanner.get_max_request_slots``, and
    ``BaseReplicaScheduler``) sizes the cache in whole *request slots* of the longest request:

    1. available memory per GPU: ``80 GiB × (1 − 0.1)`` = 77,309,411,328 B;
    2. minus fp16 weights per GPU (:func:`vidur_parameters_per_device`: 2 × 34,225,520,640 B) =
       8,858,370,048 B for the KV cache;
    3. one request slot of ``max_request_tokens = 4,096`` tokens holds, per GPU,
       ``2 (K, V) × 2 B × 128 dims × 4 KV heads × 4,096 × 80 layers`` = 671,088,640 B, so
       ``⌊8,858,370,048 / 671,088,640⌋ = 13`` slots (13.2);
    4. blocks: ``13 × (4,096 // 16) = 3,328`` blocks of 16 = **53,248 tokens**.

    Beside the papers' ``M = 16,492`` (:data:`PAPER_M`): both count fp16 weights and GQA's 327,680 B
    per token, but Vidur uses 80 **GiB** per GPU (the papers' derivation, decimal 80 GB, has 6.9 %
    less), keeps a 10 % margin instead of the 10.4 % left free under 16,492
    (:func:`memory_utilization_for`), and leaves out the embeddings and LM head (1.05 GB over the two GPUs): its KV
    memory is 2 × 8.86 GB = 17.7 GB against the papers' 5.4 GB. Vidur then rounds *down* to whole
    4,096-token slots (13.2 → 13: 1.5 % lost). :func:`kv_capacity_from_hardware` with Vidur's inputs
    (``gpu_memory_bytes = 80 GiB``, ``memory_utilization = 0.9``, ``parameters = 2 × 34,225,520,640``,
    ``block_size = 16``) gives 54,064 tokens, the same rule without the slot rounding.

    Returns
    -------
    int
        Tokens: ``slots × (max_request_tokens // block_size) × block_size``.
    """
    params = vidur_parameters_per_device(tensor_parallel) if parameters_per_device is None else parameters_per_device
    available = gpu_memory_bytes * (1 - memory_margin_fraction)
    per_request = bytes_per_element * 2 * head_dim * -(-n_kv_heads // tensor_parallel) * max_request_tokens * n_layers
    slots = int((available - 2 * params) // per_request)
    return max(0, slots) * (max_request_tokens // block_size) * block_size


_SIZE_UNITS = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 1024, "mib": 1024**2,
               "gib": GIB, "tib": 1024**4}


def _size(text: str) -> float:
    import re

    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise ValueError(f"{text!r} is not a size (e.g. 80GiB, 80GB, 85899345920)")
    return float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]


def parse_kv_capacity_spec(spec: str) -> tuple[int, str]:
    """``M`` (tokens) and a description from a ``--kv-capacity-from`` spec.

    ``paper``: the papers' :data:`PAPER_M`; ``vidur``: :func:`vidur_kv_capacity_tokens` (53,248);
    otherwise ``key=value`` pairs for :func:`kv_capacity_from_hardware`: ``gpu_mem`` (a size: ``80GiB``,
    ``80GB``), ``tp``, ``params``, ``bytes_per_param``, ``kv_bytes`` (per token), ``util``, ``block``,
    ``reserve`` (a size), e.g. ``gpu_mem=80GiB,tp=2,util=0.9,block=16``.

    Raises
    ------
    ValueError
        Naming the key or value that is wrong.
    """
    text = spec.strip()
    if text == "paper":
        return PAPER_M, "the papers' M for Llama-2-70B on 2×A100 (J §5.2)"
    if text == "vidur":
        return vidur_kv_capacity_tokens(), (
            "Vidur's rule: 80 GiB × 2 GPUs, 10 % margin, 13 slots of 4,096 tokens, blocks of 16")
    keys: dict[str, tuple[str, Callable[[str], float]]] = {
        "gpu_mem": ("gpu_memory_bytes", _size), "tp": ("tensor_parallel", int), "params": ("parameters", float),
        "bytes_per_param": ("bytes_per_parameter", float), "kv_bytes": ("kv_bytes_per_token", float),
        "util": ("memory_utilization", float), "block": ("block_size", int), "reserve": ("reserve_bytes", _size)}
    kwargs: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in keys:
            raise ValueError(f"{part!r}: expected paper, vidur, or key=value with key one of {', '.join(keys)}")
        name, conv = keys[key]
        try:
            kwargs[name] = conv(value.strip())
        except ValueError:
            raise ValueError(f"{key}={value!r}: not a valid {'size' if conv is _size else 'number'}") from None
    if not kwargs:
        raise ValueError("empty spec: give paper, vidur, or key=value pairs such as gpu_mem=80GiB,tp=2,util=0.9")
    M = kv_capacity_from_hardware(**kwargs)  # type: ignore[arg-type]
    return M, "kv_capacity_from_hardware(" + ", ".join(f"{k}={v:g}" for k, v in kwargs.items()) + ")"
