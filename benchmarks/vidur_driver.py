"""Run Vidur (``vidur==0.0.26``) on one request file and write per-request results as JSON.

This script is **not** part of llmopt: ``benchmarks/vidur_side_by_side.py`` runs it with the
Python of Vidur's own virtual environment (it imports ``vidur``, never ``llmopt``). It drives
Vidur's ``Simulator`` in process (as ``python -m vidur.main`` does) with these changes, each
applied by monkeypatching, none editing Vidur's files:

* **Requests** come from ``--trace`` (columns ``arrived_at, num_prefill_tokens,
  num_decode_tokens``: llmopt's ``vidur`` trace format), one Vidur ``Request`` per row, as written.
  Vidur 0.0.26's own ``trace_replay`` generator reads a different layout (``Date, Time,
  PromptTokenCount, CompletionTokenCount``) and rescales prompts (×0.3) and times (×0.04) by
  default; bypassing it keeps the arrivals and lengths byte for byte those llmopt simulates.
* **Batch times** (``--batch-time llmopt``): every batch lasts what llmopt's fitted linear model
  (the coefficients JSON of ``--coefficients``) gives for the batch's shape. A chunk of ``q`` prompt
  tokens after ``p`` already processed counts ``(p + q)² − p²`` in the squared-prompt term (a whole
  prompt of ``s`` tokens: ``s²``, as in llmopt), ``q`` prompt tokens and one request; a decode counts
  one token, one request and its current context (``num_processed_tokens``).
* **Batch times** (``--batch-time vidur``): Vidur's own ``LinearRegressionExecutionTimePredictor``
  (polynomial regressions chosen by grid search, Vidur's rounding of batch shapes, its 10 % decode
  batching overhead for GQA, NCCL launch overhead) trained on its public Llama-2-70B TP2 A100
  profiles (``--profiles``: ``mlp.csv``, ``all_reduce.csv``, ``send_recv.csv`` of microsoft/vidur)
  instead of downloading them from the Hugging Face hub. Vidur's attention profile for this model is
  absent from every public copy (``shared/data/SOURCES.md``), so Vidur trains its attention
  regressions on a synthetic ``attention.csv`` whose times are llmopt's first-principles attention
  terms (``per_prefill_sq``, ``per_context_token``; no per-request constant, KV-cache save 0).
* **Run-time fixes** that the published 0.0.26 package needs, each recorded in the output's
  ``fixes`` when it ran:

  1. ``LinearRegressionExecutionTimePredictor`` cannot be built: ``TypeError: Can't instantiate
     abstract class LinearRegressionExecutionTimePredictor with abstract method
     _get_kv_parallel_communication_time`` (declared ``@abstractmethod`` with a body in
     ``SklearnExecutionTimePredictor``, never overridden). The base's body is bound to the class.
  2. ``Request.restart()`` (preemption by recompute) resets ``num_processed_tokens`` but not the
     per-stage counter ``_num_stage_processed_tokens`` nor ``_is_prefill_stage_complete``: the run
     stops at the first preemption with ``AssertionError`` (``assert
     self._num_stage_processed_tokens <= self.total_tokens`` in ``Request.on_batch_stage_end``).
     Both are reset after each ``restart()``.
* **Diagnostic** (``--mixed-batches``, vLLM only): Vidur's vLLM forms llmopt's batches (new prompts
  added to the decode batch instead of a prefill-only batch); see :func:`_install_mixed_vllm`.
* **Diagnostic** (``--restart-from-prompt``): a preempted request starts again from its prompt and
  regenerates every token, as llmopt's engine evicts (DESIGN §1), instead of Vidur's (vLLM's)
  recompute of prompt + generated tokens in one prefill.
* **Measurement hooks**: the number of batches, the sum of their times, prefill-only batches and the
  decode request-seconds they pause, each restart (preemption by recompute), and the time each
  request's *final* run produced its first token (Vidur keeps only the first run's
  ``prefill_completed_at``; llmopt measures TTFT to the final run's first token).

Output (``--out``): JSON with ``requests`` (per request, in file order: arrival, completion, first
token of the final run, restarts), ``batches``, ``busy_s``, ``preemptions``, ``num_blocks`` and
``cpu_s`` (``time.process_time`` of building and running the simulator; imports and configuration
are ``startup_cpu_s``, training or loading the predictor ``predictor_cpu_s``, both excluded).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from typing import Any

#: The run-time fixes applied in this run (name → symptom and fix); written into the output.
FIXES: dict[str, str] = {}


def _parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", required=True, help="CSV: arrived_at, num_prefill_tokens, num_decode_tokens")
    p.add_argument("--out", required=True, help="JSON file to write")
    p.add_argument("--scheduler", choices=("vllm", "sarathi"), default="vllm")
    p.add_argument("--chunk-size", type=int, default=512, help="Sarathi's token budget per batch")
    p.add_argument("--batch-cap", type=int, default=128, help="batch_size_cap (vLLM's max_num_seqs)")
    p.add_argument("--max-tokens-in-batch", type=int, default=4096, help="Vidur vLLM's max_tokens_in_batch")
    p.add_argument("--block-size", type=int, default=16)
    p.add_argument("--num-blocks", type=int, default=0, help="KV blocks (0: Vidur's memory planner)")
    p.add_argument("--batch-time", choices=("llmopt", "vidur"), default="llmopt")
    p.add_argument("--mixed-batches", action="store_true",
                   help="diagnostic: Vidur's vLLM puts new prompts into the decode batch (as llmopt's vllm) "
                        "instead of running prefill-only batches")
    p.add_argument("--restart-from-prompt", action="store_true",
                   help="diagnostic: a preempted request starts again from its prompt and regenerates every "
                        "token (llmopt's eviction, DESIGN §1) instead of recomputing prompt + generated tokens")
    p.add_argument("--coefficients", required=True, help="llmopt's linear cost-model coefficients (JSON)")
    p.add_argument("--profiles", help="folder holding vidur/compute/... and vidur/network/... (--batch-time vidur)")
    p.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/llmopt/vidur-predictor"))
    return p.parse_args()


def _load_coefficients(path: str) -> dict[str, float]:
    with open(path) as f:
        data = json.load(f)
    coef = data.get("model", data)  # llmopt's committed file nests them under "model"
    return {k: float(v) for k, v in coef.items() if isinstance(v, (int, float))}


def _shape(batch: Any) -> tuple[int, int, int, int, int]:
    """(prefill requests, prefill tokens, Σ((p+q)² − p²), decode requests, decode context) of a Vidur batch."""
    pr = pt = psq = dr = dc = 0
    for request, q in zip(batch.requests, batch.num_q_tokens):
        p = request.num_processed_tokens
        if request.is_prefill_complete:
            dr += 1
            dc += p
        else:
            pr += 1
            pt += q
            psq += (p + q) * (p + q) - p * p
    return pr, pt, psq, dr, dc


def _llmopt_time(c: dict[str, float], pr: int, pt: int, psq: int, dr: int, dc: int) -> float:
    """llmopt's ``LinearCostModel.time`` (llmopt/engine/cost_model.py), copied: this venv has no llmopt."""
    n = pt + dr
    if pr == 0 and dr == 0:
        return 0.0
    t = (c["base"] + c["per_token"] * n + c["per_prefill_sq"] * psq + c["per_context_token"] * dc
         + c["per_request"] * (pr + dr))
    if n > c["knot_1"]:
        t += c["slope_1"] * (n - c["knot_1"])
    if n > c["knot_2"]:
        t += c["slope_2"] * (n - c["knot_2"])
    return t


def main() -> int:
    args = _parse()
    args.trace, args.out, args.coefficients = (os.path.abspath(x) for x in (args.trace, args.out, args.coefficients))
    if args.profiles:
        args.profiles = os.path.abspath(args.profiles)
    t_start = time.process_time()
    coef = _load_coefficients(args.coefficients)
    # Vidur keys its trained-model cache on its configuration, not on the profile files: one cache
    # folder per set of llmopt coefficients (they define the synthetic attention profile)
    digest = hashlib.sha256(json.dumps(coef, sort_keys=True).encode()).hexdigest()[:10]
    args.cache_dir = os.path.join(args.cache_dir, f"{digest}-b{args.block_size}")

    # Vidur writes plots, traces and a time-stamped output folder under the working directory
    work = tempfile.mkdtemp(prefix="vidur-run-")
    os.chdir(work)

    from vidur._native.entities import ExecutionTime as ExecutionTimeC
    from vidur.config import SimulationConfig
    from vidur.entities import Request
    from vidur.scheduler.global_scheduler import base_global_scheduler
    from vidur.simulator import Simulator
    from vidur.utils.random import set_seeds

    # --- requests: straight from the trace file -------------------------------------------------
    rows = []
    with open(args.trace, newline="") as f:
        for row in csv.DictReader(f):
            rows.append((float(row["arrived_at"]), int(row["num_prefill_tokens"]), int(row["num_decode_tokens"])))
    max_tokens = max(s + o for _, s, o in rows)
    requests: list[Any] = []

    class _FileRequests:
        def __init__(self, *a: Any, **k: Any) -> None:
            pass

        def generate(self) -> list[Any]:
            requests.extend(Request(arrived_at=a, num_prefill_tokens=s, num_decode_tokens=o) for a, s, o in rows)
            sizes.update((r.id, (r.num_prefill_tokens, r.num_decode_tokens)) for r in requests)
            return requests

    import vidur.simulator as vsim

    class _Registry:
        @staticmethod
        def get(*a: Any, **k: Any) -> _FileRequests:
            return _FileRequests()

    vsim.RequestGeneratorRegistry = _Registry  # type: ignore[assignment]

    # --- measurement hooks ----------------------------------------------------------------------
    stats: dict[str, Any] = {"batches": 0, "busy_s": 0.0, "preemptions": 0, "prefill_only_batches": 0,
                             "prefill_only_s": 0.0, "paused_request_s": 0.0, "mixed_batches": 0,
                             "predictor_cpu_s": 0.0}
    held: list[Any] = []  # the replica scheduler, once built: how many requests hold KV blocks
    first_token: dict[int, float] = {}
    restart = Request.restart

    sizes: dict[int, tuple[int, int]] = {}  # request id → (prompt, output) as read, for --restart-from-prompt

    def _restart(self: Any) -> None:
        stats["preemptions"] += 1
        restart(self)
        if args.restart_from_prompt:
            self._num_prefill_tokens, self._num_decode_tokens = sizes[self.id]
        # Fix 2: Request.restart() resets num_processed_tokens but not the per-stage counter
        # (_num_stage_processed_tokens) nor _is_prefill_stage_complete, so the recomputed prompt of a
        # preempted request overshoots on its next batch: "assert self._num_stage_processed_tokens <=
        # self.total_tokens" in Request.on_batch_stage_end stops the run at the first preemption.
        self._num_stage_processed_tokens = 0
        self._is_prefill_stage_complete = False
        FIXES.setdefault("restart_resets_stage_counter", (
            "Request.restart() leaves _num_stage_processed_tokens and _is_prefill_stage_complete as they were: "
            "AssertionError in Request.on_batch_stage_end at the first preemption; both are reset after restart()"))

    Request.restart = _restart  # type: ignore[method-assign]
    on_batch_end = Request.on_batch_end

    def _on_batch_end(self: Any, time: float, num_tokens_processed: int) -> None:
        was = self._is_prefill_complete
        on_batch_end(self, time, num_tokens_processed)
        if not was and self._is_prefill_complete:
            first_token[self.id] = time  # the last write is the final run's first token

    Request.on_batch_end = _on_batch_end  # type: ignore[method-assign]

    # --- the batch-time model -------------------------------------------------------------------
    def _timed(seconds: float, shape: tuple[int, int, int, int, int], size: int) -> Any:
        stats["batches"] += 1
        stats["busy_s"] += seconds
        if shape[0] and not shape[3]:
            # a prefill-only batch: every other request holding blocks (running, in decode) waits for it
            stats["prefill_only_batches"] += 1
            stats["prefill_only_s"] += seconds
            if held:
                stats["paused_request_s"] += seconds * max(0, len(held[0]._allocation_map) - size)
        elif shape[0]:
            stats["mixed_batches"] += 1
        # ExecutionTime(num_layers, 12 per-layer op times in ms, tp comm, pp comm): total = layers · Σ / 1000
        return ExecutionTimeC(1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, seconds * 1e3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    class _LlmoptPredictor:
        def __init__(self, *a: Any, **k: Any) -> None:
            pass

        def get_execution_time(self, batch: Any, pipeline_stage: int) -> Any:
            shape = _shape(batch)
            return _timed(_llmopt_time(coef, *shape), shape, len(batch.requests))

    if args.batch_time == "llmopt":
        class _Reg:
            @staticmethod
            def get(*a: Any, **k: Any) -> Any:
                return _LlmoptPredictor()

        base_global_scheduler.ExecutionTimePredictorRegistry = _Reg  # type: ignore[assignment]
    else:
        _install_vidur_predictor(args, coef, stats, _timed)

    if args.mixed_batches:
        if args.scheduler != "vllm":
            raise SystemExit("--mixed-batches applies to --scheduler vllm")
        _install_mixed_vllm()

    # --- configuration: Llama-2-70B, TP 2, one replica of two A100s, pairwise NVLink --------------
    scheduler_flags = {
        "vllm": ["--replica_scheduler_config_type", "vllm", "--vllm_scheduler_config_batch_size_cap",
                 str(args.batch_cap), "--vllm_scheduler_config_max_tokens_in_batch", str(args.max_tokens_in_batch)],
        "sarathi": ["--replica_scheduler_config_type", "sarathi", "--sarathi_scheduler_config_batch_size_cap",
                    str(args.batch_cap), "--sarathi_scheduler_config_chunk_size", str(args.chunk_size)],
    }[args.scheduler]
    argv = [
        "vidur", "--seed", "0",
        "--cluster_config_num_replicas", "1",
        "--replica_config_model_name", "meta-llama/Llama-2-70b-hf",
        "--replica_config_device", "a100", "--replica_config_network_device", "a100_pairwise_nvlink",
        "--replica_config_tensor_parallel_size", "2", "--replica_config_num_pipeline_stages", "1",
        "--cache_config_block_size", str(args.block_size),
        *(["--cache_config_num_blocks", str(args.num_blocks)] if args.num_blocks else []),
        "--request_generator_config_type", "trace_replay",
        "--trace_request_generator_config_max_tokens", str(max(4096, max_tokens)),
        *scheduler_flags,
        "--execution_time_predictor_config_type", "linear_regression",
        "--linear_regression_execution_time_predictor_config_cache_dir", args.cache_dir,
        "--linear_regression_execution_time_predictor_config_prediction_max_tokens_per_request", "8192",
        "--linear_regression_execution_time_predictor_config_num_training_job_threads", "1",
        "--no-metrics_config_store_plots", "--no-metrics_config_enable_chrome_trace",
        "--no-metrics_config_write_metrics", "--no-metrics_config_store_request_metrics",
        "--no-metrics_config_store_batch_metrics", "--no-metrics_config_store_utilization_metrics",
    ]
    sys.argv = argv
    config = SimulationConfig.create_from_cli_args()
    set_seeds(config.seed)
    startup = time.process_time() - t_start

    t0 = time.process_time()
    simulator = Simulator(config)
    scheduler = next(iter(simulator.scheduler._replica_schedulers.values()))  # one replica
    held.append(scheduler)
    simulator.run()
    cpu = time.process_time() - t0 - stats["predictor_cpu_s"]

    out = {
        "scheduler": args.scheduler, "batch_time": args.batch_time, "mixed_mode": args.mixed_batches,
        "restart_from_prompt": args.restart_from_prompt,
        "batch_cap": args.batch_cap,
        "chunk_size": args.chunk_size if args.scheduler == "sarathi" else None,
        "block_size": args.block_size, "num_blocks": scheduler._cache_config.num_blocks,
        **stats,
        "cpu_s": cpu, "startup_cpu_s": startup, "fixes": FIXES,
        "requests": [
            {"arrival": r.arrived_at, "completion": r.completed_at, "first_token": first_token.get(r.id),
             "restarts": r.num_restarts, "completed": r.completed}
            for r in requests
        ],
    }
    with open(args.out, "w") as f:
        json.dump(out, f)
    os.chdir(os.path.dirname(args.out))
    shutil.rmtree(work, ignore_errors=True)  # Vidur's (empty, metrics off) output folder
    return 0


def _install_mixed_vllm() -> None:
    """Diagnostic: Vidur's vLLM replica scheduler with llmopt's ``vllm`` batch shape.

    Vidur (as vLLM v0) runs a prefill-only batch whenever it admits a request, pausing every running
    decode for that iteration; llmopt's ``vllm`` policy decodes every running request in every batch
    and adds the new prompts to it. This replaces ``VLLMReplicaScheduler._get_next_batch`` by: the
    running requests first (oldest arrival first, each getting the block its next token needs; when
    one is missing the most recently arrived running request is preempted by recompute, as Vidur
    does), then — if nothing was preempted — new requests FCFS under the same watermark,
    ``batch_size_cap`` and ``max_tokens_in_batch`` (decodes count one token each). Everything else
    (allocation, block accounting, restarts) is Vidur's own code.
    """
    from vidur.entities import Batch
    from vidur.scheduler.replica_scheduler.vllm_replica_scheduler import VLLMReplicaScheduler

    def _next(self: Any, time: float) -> Any:
        requests: list[Any] = []
        num_q: list[int] = []
        num_kv: list[int] = []
        preempted = False
        self._preempted_requests.sort(key=lambda r: r.arrived_at)
        while self._preempted_requests:
            if len(requests) == self._max_micro_batch_size:
                break
            request = self._preempted_requests.pop(0)
            while not self._can_allocate_request(request):
                preempted = True
                victim = self._preempted_requests.pop(-1) if self._preempted_requests else request
                victim.restart()
                self.free(victim.id)
                self._request_queue = [victim] + self._request_queue
                if victim is request:
                    break
            else:
                self._allocate_request(request)
                q = self._get_request_next_num_q_tokens(request)
                requests.append(request)
                num_q.append(q)
                num_kv.append(request.num_processed_tokens + q)
        total = sum(num_q)
        while self._request_queue and not preempted:
            request = self._request_queue[0]
            q = self._get_request_next_num_q_tokens(request)
            if not self._can_allocate_request(request):
                break
            if total + q > self._config.max_tokens_in_batch and requests:
                break
            if len(self._allocation_map) == self._config.batch_size_cap or len(requests) == self._max_micro_batch_size:
                break
            self._request_queue.pop(0)
            self._allocate_request(request)
            requests.append(request)
            num_q.append(q)
            num_kv.append(request.num_processed_tokens + q)
            total += q
        if not requests:
            return None
        return Batch(self._replica_id, requests, num_q, num_kv)

    VLLMReplicaScheduler._get_next_batch = _next  # type: ignore[method-assign]


def _synthetic_attention_csv(path: str, coef: dict[str, float], n_layers: int, block_size: int,
                             max_kv: int, max_chunk: int, max_batch: int) -> None:
    """Write an ``attention.csv`` in Vidur's profile layout whose times are llmopt's attention terms.

    Vidur's predictor queries prefill attention at ``(kv_cache_size, prefill_chunk_size)`` with
    ``kv_cache_size`` the context *after* the chunk (rounded up to 256) and decode attention at
    ``(batch_size, average context)``; per layer, in ms, llmopt's terms are
    ``per_prefill_sq · (kv² − (kv − chunk)²) / layers`` and ``per_context_token · batch · kv / layers``
    (both exact polynomials of degree 2, which Vidur's polynomial regression represents exactly).
    The KV-cache write (``attn_kv_cache_save``) is left out by llmopt and set to 0.
    """
    ms = 1e3 / n_layers
    head = ["n_embd", "n_q_head", "n_kv_head", "block_size", "num_tensor_parallel_workers", "batch_size",
            "kv_cache_size", "prefill_chunk_size", "time_stats.attn_prefill.median",
            "time_stats.attn_decode.median", "time_stats.attn_kv_cache_save.median"]
    model = [8192, 64, 8, block_size, 2]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        for kv in range(0, max_kv + 1, 256):
            for chunk in range(32, max_chunk + 1, 32):
                before = max(kv - chunk, 0)
                w.writerow([*model, 1, kv, chunk, coef["per_prefill_sq"] * (kv * kv - before * before) * ms, 0.0, 0.0])
            for b in range(1, max_batch + 1):
                w.writerow([*model, b, kv, 0, 0.0, coef["per_context_token"] * b * kv * ms, 0.0])


def _install_vidur_predictor(args: argparse.Namespace, coef: dict[str, float], stats: dict[str, Any],
                             time_batch: Any) -> None:
    """Let Vidur build its own linear-regression predictor from local profiles (no hub download)."""
    from vidur.execution_time_predictor import linear_regression_execution_time_predictor as lr
    from vidur.execution_time_predictor import sklearn_execution_time_predictor as sk

    if not args.profiles:
        raise SystemExit("--batch-time vidur needs --profiles")
    compute = os.path.join(args.profiles, "vidur", "compute", "a100", "meta-llama", "Llama-2-70b-hf")
    network = os.path.join(args.profiles, "vidur", "network", "a100_pairwise_nvlink")
    os.makedirs(args.cache_dir, exist_ok=True)
    attention = os.path.join(args.cache_dir, f"attention-llmopt-b{args.block_size}.csv")
    if not os.path.exists(attention):
        _synthetic_attention_csv(attention, coef, 80, args.block_size, 8192, 4096, 128)

    def _no_hub(self: Any) -> Any:
        raise RuntimeError("offline: predictions are trained from local profiles")

    def _local_files(self: Any) -> tuple[str, str, str, str]:
        return (os.path.join(compute, "mlp.csv"), attention, os.path.join(network, "all_reduce.csv"),
                os.path.join(network, "send_recv.csv"))

    sk.SklearnExecutionTimePredictor._load_predictions_from_hf = _no_hub  # type: ignore[method-assign]
    sk.SklearnExecutionTimePredictor._get_input_files = _local_files  # type: ignore[method-assign]

    # Fix 1: LinearRegressionExecutionTimePredictor does not implement the abstract
    # _get_kv_parallel_communication_time (SklearnExecutionTimePredictor declares it @abstractmethod
    # with a body), so building it fails: "TypeError: Can't instantiate abstract class
    # LinearRegressionExecutionTimePredictor with abstract method _get_kv_parallel_communication_time".
    # Bind the declared body (0 while KV parallelism is off, as here).
    cls = lr.LinearRegressionExecutionTimePredictor
    if "_get_kv_parallel_communication_time" in getattr(cls, "__abstractmethods__", ()):
        cls._get_kv_parallel_communication_time = (  # type: ignore[method-assign]
            sk.SklearnExecutionTimePredictor._get_kv_parallel_communication_time)
        cls.__abstractmethods__ = frozenset(cls.__abstractmethods__ - {"_get_kv_parallel_communication_time"})
        FIXES["linear_regression_kv_parallel_method"] = (
            "TypeError: Can't instantiate abstract class LinearRegressionExecutionTimePredictor with abstract method "
            "_get_kv_parallel_communication_time (abstract in SklearnExecutionTimePredictor, never overridden); "
            "the base's body is bound to the class")

    init = cls.__init__

    def _init(self: Any, *a: Any, **k: Any) -> None:
        c0 = time.process_time()
        init(self, *a, **k)
        stats["predictor_cpu_s"] += time.process_time() - c0  # training or loading its cache: not simulation

    cls.__init__ = _init  # type: ignore[method-assign]
    get = cls.get_execution_time

    def _get(self: Any, batch: Any, pipeline_stage: int) -> Any:
        et = get(self, batch, pipeline_stage)
        shape = _shape(batch)
        return time_batch(et.total_time, shape, len(batch.requests))

    cls.get_execution_time = _get  # type: ignore[method-assign]


if __name__ == "__main__":
    sys.exit(main())
