"""KV blocks of a growing running set in ``O(block_size)`` per query, not ``O(#running)``.

A request holding ``c + x`` tokens at a clock ``x`` (``c`` fixed for its run: prompt less its start,
in whatever unit the clock counts) occupies ``ceil((c + x) / B)`` blocks of ``B`` tokens. The total
over a running set is needed at every iteration (the engine's memory check, vLLM's and Sarathi's
block budget), and summing it request by request cost ``O(#running)`` per iteration. Writing
``c = B·f + r`` (``0 ≤ r < B``) and ``x + B − 1 = B·a + b`` (``0 ≤ b < B``)::

    ceil((c + x) / B) = floor((c + x + B − 1) / B) = f + a + [r ≥ B − b]

so the total is ``Σ f + n·a + #{r ≥ B − b}``: the sum of the ``f``, the count and a histogram of the
residues ``r`` answer it for any ``x``, and a request joining or leaving costs ``O(1)``.
"""

from __future__ import annotations

__all__ = ["BlockLedger"]


class BlockLedger:
    """``Σ_j ceil((c_j + x) / B)`` over a multiset of offsets ``c_j``, for any clock ``x``.

    Parameters
    ----------
    block_size : int
        ``B ≥ 1``.

    Attributes
    ----------
    n : int
        Offsets held.
    """

    __slots__ = ("B", "n", "_f", "_hist")

    def __init__(self, block_size: int) -> None:
        if block_size < 1:
            raise ValueError(f"block_size must be at least 1, got {block_size!r}")
        self.B = block_size
        self.n = 0
        self._f = 0
        self._hist = [0] * block_size

    def add(self, c: int) -> None:
        """Hold offset ``c`` (a request that starts running)."""
        f, r = divmod(c, self.B)
        self._f += f
        self._hist[r] += 1
        self.n += 1

    def remove(self, c: int) -> None:
        """Drop one offset ``c`` held before (a request that completes or is preempted)."""
        f, r = divmod(c, self.B)
        self._f -= f
        self._hist[r] -= 1
        self.n -= 1

    def total(self, x: int) -> int:
        """``Σ_j ceil((c_j + x) / B)``: the blocks the held requests occupy at clock ``x``."""
        B = self.B
        a, b = divmod(x + B - 1, B)
        return self._f + self.n * a + (sum(self._hist[B - b:]) if b else 0)

    def first_over(self, cap: int, x0: int) -> int | None:
        """The smallest clock ``x ≥ x0`` at which :meth:`total` exceeds ``cap``; ``None`` if it never does
        (nothing held). ``O(block_size)``: the total is non-decreasing in ``x``, and the closed form above
        is inverted directly (``n·a + #{r ≥ B − b} > cap − Σ f`` for the smallest ``B·a + b``)."""
        if not self.n:
            return None
        if self.total(x0) > cap:
            return x0
        B, n, hist = self.B, self.n, self._hist
        a, rem = divmod(cap - self._f, n)  # n·a ≤ cap − Σ f < n·(a + 1)
        y = B * (a + 1)  # b = 0 of the next a: n·(a + 1) > cap − Σ f
        over = 0
        for b in range(1, B):  # the smallest b whose residues push the total over
            over += hist[B - b]
            if over > rem:
                y = B * a + b
                break
        return y - B + 1

    @staticmethod
    def blocks(c: int, x: int, block_size: int) -> int:
        """``ceil((c + x) / B)`` for one offset (what :meth:`total` adds up)."""
        return -(-(c + x) // block_size)
