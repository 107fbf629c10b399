"""Orca's scheduler as a policy: iteration-level batching with a fixed reservation of the maximum length.

Orca (Yu et al., "Orca: A Distributed Serving System for Transformer-Based Generative Models",
OSDI 2022, §4.2, Algorithm 1) schedules at the granularity of iterations — a request joins or
leaves the batch at any iteration — but, without paged memory, it reserves KV slots for a request's
*maximum* number of tokens when it admits it, and admits (FCFS) only while the reservations fit:
``n_rsrv + max_tokens <= n_slots``. The public re-implementation of the Orca baseline in
Sarathi-Serve (``sarathi/core/block_space_manager/orca_block_space_manager.py``) makes that
concrete: every request gets ``ceil(max_model_len / block_size)`` blocks up front, and no watermark.

Here:

* **maximum length** ``max_len`` (default 4,096, Llama-2's ``max_model_len``) is the tokens
  reserved per request, prompt and output together; a request reserves
  ``max(ceil(max_len / B), ceil((s + 1) / B))`` blocks of the engine's ``block_size`` ``B``,
  capped at the worker's ``M // B`` (a larger reservation could never be granted);
* the policy is **blind to output lengths** (``Visibility.HIDDEN``), as Orca is;
* admission is FCFS with head-of-line blocking while the reservations fit and the engine's batch
  limits ``max_num_seqs`` / ``max_num_batched_tokens`` hold (running requests count first; Orca's
  ``max_bs`` is ``max_num_seqs``);
* a reservation is never shrunk; in the model a request runs to its true ``o_i``, so if
  ``s_i + o_i`` exceeds the reservation (``max_len`` smaller than the instance's requests, which a
  real server would truncate) its reservation grows with it, and if the total then exceeds the
  memory the most recently arrived running request is preempted by recompute, as in
  :mod:`llmopt.policies.vllm`. With ``max_len`` at least every ``s_i + o_i`` this never happens.

The policy is event-driven: it is asked at arrivals and completions (which free reservations), at
the next iteration when the batch budget held a request back, and at the first iteration a running
request would outgrow its reservation.
"""

from __future__ import annotations

from typing import Any

from llmopt.engine.core import RequestView
from llmopt.policies.vllm import IterationScheduler

__all__ = ["OrcaScheduler"]


class OrcaScheduler(IterationScheduler):
    """Orca: FCFS iteration-level scheduling, a fixed per-request reservation (see the module docstring).

    Parameters
    ----------
    max_len : int
        Tokens reserved per request (prompt plus output), default 4,096.
    """

    name = "orca"

    def __init__(self, max_len: int = 4096) -> None:
        if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1:
            raise ValueError(f"max_len must be a positive integer, got {max_len!r}")
        self.max_len = max_len
        super().__init__()

    def admit_blocks(self, request: RequestView) -> int:
        b = self.block_size
        return min(self.capacity, max(-(-self.max_len // b), -(-(request.prompt + 1) // b)))

    def blocks_after(self, entry: list[Any], t: int) -> int:
        return max(entry[3], -(-(entry[1].prompt + t - entry[2] + 1) // self.block_size))

    def wake(self, t: int, budget_blocked: bool) -> int | None:
        # the first step whose batch takes a running request past its reservation: s + τ − p + 1 > r·B
        b = self.block_size
        outgrow = [e[3] * b - e[1].prompt + e[2] for e in self.running]
        times = [x for x in outgrow if x > t] + ([t + 1] if budget_blocked else [])
        return min(times) if times else None
