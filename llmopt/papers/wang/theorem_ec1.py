"""W Theorem EC.1 (App. EC.1): MC-SF₂ — MC-SF ordered by ``s_i + o_i`` — has an unbounded ratio.

W (L678–694) states that "process the smallest ``s_i + o_i`` first" (MC-SF₂) is no cure for
MC-SF's weakness with heterogeneous prompts, on a two-type instance (all requests at 0,
``r = √M``):

* type 1: ``X = M`` requests with ``s = 1``, ``o = r − 1`` (``s + o = r``);
* type 2: ``Y`` requests with ``s = r``, ``o = 1`` (``s + o = r + 1``).

MC-SF₂ runs every type-1 request first (smaller ``s + o``): ``r`` at a time (they start
together and peak at ``r·r = M`` together), ``r`` batches of ``r − 1`` steps, so each type-2
request waits ``r(r − 1) = M − r`` steps; type 2 then runs ``⌊M/(r+1)⌋ = r − 1`` per step.
The schedule 𝒜 of the proof runs type 2 first (:class:`EC1Type2First`). The proof's
leading terms (each schedule's phases taken as disjoint)::

    TEL(MC-SF₂) ≈ r(r−1)·r(r+1)/2 + Y(M − r) + Y²/(2(r−1))
    TEL(𝒜)      ≈ Y²/(2(r−1)) + X·Y/(r−1) + r(r−1)·r(r+1)/2

The simulated schedules overlap the phases a little (a few type-2 requests slip in while the
last type-1 batch runs); their TELs are within 3 % of these terms for M = 16 … 256. The ratios
of ``llmopt/papers/wang/studies/claims_measured.py`` (``results/wang/synthetic/claims.md``) are the simulated ones,
verified by the checker.

**The printed arithmetic is wrong** (DIGEST §3.4, I-38). W takes ``Y = M^1.5`` and writes the
type-2 self term ``√M·Σ_{j=1}^{Y/√M} j`` as ``½M^1.75``; it is ``≈ Y²/(2√M) = ½M^2.5``. The
ratio is then ``(½M² + M^2.5 + ½M^2.5)/(½M² + M² + ½M^2.5) → 3``: bounded, not the claimed
``≥ (2/3)M^0.5``.

**Corrected reading (DIGEST I-38's recommendation, used as the default here):** ``Y = M^1.25``
(X = M unchanged). Then the waiting term ``Y·M = M^2.25`` dominates MC-SF₂ while 𝒜 pays
``M² + M^1.75``, and ``TEL(MC-SF₂)/TEL(𝒜) ≈ (1 + M^{1/4})/(1 + M^{−1/4}) = Θ(M^{1/4})`` grows
without bound: the theorem holds, with a smaller exponent than claimed. 𝒜 is feasible, so
``OPT <= TEL(𝒜)`` and the competitive ratio of MC-SF₂ is at least this ratio.
"""

from __future__ import annotations

import math

import numpy as np

from llmopt.engine.discrete import RequestView
from llmopt.model.instance import Instance, Request
from llmopt.policies import LookaheadPrefixPolicy

__all__ = ["EC1Type2First", "theorem_ec1_instance"]


class EC1Type2First(LookaheadPrefixPolicy):
    """The schedule 𝒜 of W Thm EC.1: largest ``s + o`` first (on the EC.1 family: type 2 first).

    Same check and prefix rule as MC-SF; key ``(−(s_i + o_i), a_i)``. On
    :func:`theorem_ec1_instance` it starts type-2 requests whenever they fit and type-1
    requests only once no type-2 request waits. Its TEL is an upper bound on OPT.
    """

    name = "wang-ec1-type2-first"

    def key(self, request: RequestView) -> tuple[int, int]:
        return (-(request.prompt + self.output_estimate(request)), request.arrival)


def _root(M: int) -> int:
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)) or M < 4 or math.isqrt(int(M)) ** 2 != M:
        raise ValueError(f"M must be a perfect square >= 4 (type-1 outputs are √M − 1 >= 1), got {M!r}")
    return math.isqrt(int(M))


def theorem_ec1_instance(M: int, Y: int | None = None, *, exponent: float = 1.25) -> Instance:
    """The two-type instance of W Thm EC.1 (module docstring), all requests at 0.

    Parameters
    ----------
    M : int
        KV capacity, a perfect square ``>= 4``.
    Y : int, optional
        Number of type-2 requests; default ``round(M ** exponent)``.
    exponent : float
        ``1.25`` (default): the corrected instance whose ratio grows (DIGEST I-38). ``1.5``:
        W's printed instance, whose ratio tends to 3.

    Returns
    -------
    Instance
        ``X = M`` type-1 requests ``t1-0 …`` (``s = 1, o = √M − 1``), then ``Y`` type-2
        requests ``t2-0 …`` (``s = √M, o = 1``); named ``wang-ec1/M=… Y=…``.

    Raises
    ------
    ValueError
        ``M`` not a perfect square ``>= 4``, or ``Y < 0``.
    """
    r = _root(M)
    M = int(M)
    y = round(M ** exponent) if Y is None else Y
    if isinstance(y, bool) or not isinstance(y, (int, np.integer)) or y < 0:
        raise ValueError(f"Y must be an integer >= 0, got {Y!r}")
    reqs = [Request(f"t1-{i}", 0, 1, r - 1) for i in range(M)]
    reqs += [Request(f"t2-{j}", 0, r, 1) for j in range(int(y))]
    return Instance(M, tuple(reqs), name=f"wang-ec1/M={M} Y={int(y)}")
