"""One tolerance policy for every numeric comparison in llmopt.

Solvers work in floating point; TEL, start times and memory are integers. Every place
that turns a float into a claim about integers uses the constants and functions here,
so that a change of policy is one edit and the tests can pin it.

This module is a leaf (it imports nothing from llmopt), so the independent checker may
use it without sharing any modelling code.
"""

from __future__ import annotations

import math

__all__ = [
    "INTEGER_SLACK",
    "INTEGER_SLACK_REL",
    "AGREEMENT_RTOL",
    "LAMBDA_CHECK_TOL",
    "LAMBDA_DUAL_TOL",
    "INTEGRALITY_TOL",
    "FEASIBILITY_TOL",
    "VALUE_TOL",
    "integer_lower_bound",
    "agree",
]

#: A float lower bound ``b`` on an integer quantity (TEL) is rounded up to
#: ``ceil(b − max(INTEGER_SLACK, INTEGER_SLACK_REL·|b|))``: ``b`` carries solver round-off (feasibility
#: and optimality tolerances of about 1e-9 relative), so a bound printed as ``1169.0000004`` must not
#: become 1170, and at ``b ≈ 1e6`` the round-off can reach 1e-3 absolute.
INTEGER_SLACK = 1e-6
INTEGER_SLACK_REL = 1e-9

#: Relative tolerance for "the bound the checker recomputed from a certificate equals the value the
#: solver claimed" (strong duality re-derived independently). A corrupted multiplier moves the
#: checker's value by far more than this, so it comes out *not verified*.
AGREEMENT_RTOL = 1e-6

#: The checker clamps multipliers ``λ_t`` in ``[−LAMBDA_CHECK_TOL, 0)`` to 0 and rejects anything
#: more negative. Any ``λ >= 0`` certifies a valid bound, so clamping never makes a bound invalid.
LAMBDA_CHECK_TOL = 1e-9

#: Row duals of ``<=`` memory rows with the wrong sign down to this size are solver round-off (HiGHS's
#: dual feasibility tolerance is 1e-7 on the *scaled* model) and become ``λ_t = 0``.
LAMBDA_DUAL_TOL = 1e-4

#: A primal value within this distance of an integer counts as that integer when a solution is decoded
#: into start times (Gurobi's default integrality tolerance is 1e-5; the checker verifies the rounded
#: schedule, so a generous tolerance here can never certify anything false).
INTEGRALITY_TOL = 1e-3

#: Absolute tolerance when a solver's objective or bound is compared with a value known exactly (the
#: conformance checks' reference optima, "a bound must not exceed OPT").
VALUE_TOL = 1e-6

#: Row/column violations up to ``FEASIBILITY_TOL · (1 + max|x|)`` count as feasible when a solver's
#: interrupted point is screened before it is reported as a solution.
FEASIBILITY_TOL = 1e-6


def integer_lower_bound(value: float) -> int:
    """The integer lower bound implied by a float lower bound ``value`` on an integer quantity."""
    return int(math.ceil(value - max(INTEGER_SLACK, INTEGER_SLACK_REL * abs(value))))


def agree(a: float, b: float, rtol: float = AGREEMENT_RTOL) -> bool:
    """Whether ``a`` and ``b`` agree within ``rtol`` relative (absolute below magnitude 1)."""
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))
