"""The shape of one batch: what a cost model is given, and what the timed checker recomputes.

It lives in the model wing so that the independent checker (:mod:`llmopt.verify.timed`) can
build a batch's shape without importing the engines' cost models (it is handed the cost model
object to check against).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BatchShape"]


@dataclass(frozen=True, slots=True)
class BatchShape:
    """What a cost model needs to know about one batch (one iteration of the worker).

    Attributes
    ----------
    prefill_requests : int
        Requests whose prompt is in this batch (they start now; each also produces its first
        output token in this batch).
    prefill_tokens : int
        ``Σ s_i`` over those requests.
    prefill_tokens_sq : int
        ``Σ s_i²`` over those requests (prefill attention is quadratic per request).
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
