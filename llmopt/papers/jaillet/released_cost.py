"""The batch-time formula of Jaillet et al.'s released simulator, as a cost model (issue 24).

The authors' code (public repository ``anonymouspeople111/neurips2025-code``, files ``MC-SF.py`` /
``alpha-greedy.py``; read, not copied) times a batch as

    44.6 ms + 0.52 ms per job + 0.0027 ms per generated context token + 0.378 ms per new prompt token.

Its context counts *generated* tokens only; the engines pass the decode context with the prompts
included, so :class:`ReleasedCodeCostModel` subtracts ``prompt_in_context`` per decode request (the
staged LMSYS file's mean prompt, 42.84 words, by default; floored at one token per decode request).
``prompt_in_context = 0`` keeps the context whole; the two bracket the exact value. Used by the
studies :mod:`llmopt.papers.jaillet.studies.table1_cost_sensitivity` and
:mod:`llmopt.papers.jaillet.studies.low_demand_threshold`.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmopt.model.batch import BatchShape

__all__ = ["ReleasedCodeCostModel", "STAGED_PROMPT_MEAN"]

#: Mean prompt (words) of ``lmsys_chat_1m_words_in256_out256.csv`` with zero-length rows dropped (SOURCES.md).
STAGED_PROMPT_MEAN = 42.84


@dataclass(frozen=True)
class ReleasedCodeCostModel:
    """The released simulator's batch time in seconds (see the module docstring)."""

    name: str = "released-code"
    base_ms: float = 44.6
    per_job_ms: float = 0.52
    per_context_ms: float = 0.0027
    per_prompt_token_ms: float = 0.378
    prompt_in_context: float = STAGED_PROMPT_MEAN

    def time(self, prefill_requests: int, prefill_tokens: int, prefill_tokens_sq: int, decode_requests: int,
             decode_context: int) -> float:
        """Seconds for one batch (0 for an empty batch)."""
        if prefill_requests == 0 and decode_requests == 0:
            return 0.0
        generated = max(float(decode_requests), decode_context - self.prompt_in_context * decode_requests)
        return (self.base_ms + self.per_job_ms * (prefill_requests + decode_requests)
                + self.per_context_ms * generated + self.per_prompt_token_ms * prefill_tokens) / 1000.0

    def batch_time(self, shape: BatchShape) -> float:
        return self.time(shape.prefill_requests, shape.prefill_tokens, shape.prefill_tokens_sq,
                         shape.decode_requests, shape.decode_context)
