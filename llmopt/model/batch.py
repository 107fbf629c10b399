"""The shape of one batch: what a cost model is given, and what the timed checker recomputes.

It lives in the model wing so that the independent checker (:mod:`llmopt.verify.timed`) can
build a batch's shape without importing the engines' cost models (it is handed the cost model
object to check against).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BatchShape", "chunk_attention_term"]


def chunk_attention_term(tokens: int, cached: int = 0) -> int:
    """The ``prefill_tokens_sq`` term of a prefill chunk of ``tokens`` prompt tokens after ``cached``
    already in the KV cache: ``(cached + tokens)² − cached²`` (``tokens²`` for a whole prompt)."""
    return tokens * tokens + 2 * tokens * cached


@dataclass(frozen=True, slots=True)
class BatchShape:
    """What a cost model needs to know about one batch (one iteration of the worker).

    Attributes
    ----------
    prefill_requests : int
        Requests whose prompt is in this batch (they start now; each also produces its first
        output token in this batch), or a chunk of it (chunked prefill).
    prefill_tokens : int
        ``Σ s_i`` over those requests; with chunked prefill, ``Σ c_i``, the prompt tokens of the
        chunks in this batch.
    prefill_tokens_sq : int
        ``Σ s_i²`` over those requests (prefill attention is quadratic per request). With chunked
        prefill, ``Σ ((p_i + c_i)² − p_i²) = Σ (c_i² + 2·c_i·p_i)`` for a chunk of ``c_i`` tokens
        after ``p_i`` already in the KV cache: the chunk's queries attend to the ``p_i`` cached
        tokens and, causally, to each other (:func:`chunk_attention_term`). Without chunks this
        is ``Σ s_i²``, and the terms of a prompt's chunks add up to ``s_i²``, so chunking moves
        attention work between batches without adding any.
    decode_requests : int
        Running requests that started in an earlier batch, each producing one token.
    decode_context : int
        ``Σ`` over decode requests of their current KV length (``s_j`` + tokens generated so far).
    """

    prefill_requests: int
    prefill_tokens: int
    prefill_tokens_sq: int
    decode_requests: int
    decode_context: int

    @classmethod
    def of(cls, prompts: tuple[int, ...] | list[int] = (), contexts: tuple[int, ...] | list[int] = ()) -> BatchShape:
        """The shape of a batch starting prompts of lengths ``prompts`` and decoding requests whose
        current KV lengths are ``contexts``."""
        return cls(len(prompts), sum(prompts), sum(s * s for s in prompts), len(contexts), sum(contexts))

    @property
    def num_tokens(self) -> int:
        """Tokens the batch runs through the model: ``prefill_tokens + decode_requests``."""
        return self.prefill_tokens + self.decode_requests

    @property
    def is_empty(self) -> bool:
        return self.prefill_requests == 0 and self.decode_requests == 0
