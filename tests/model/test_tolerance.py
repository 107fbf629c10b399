"""The one tolerance policy (llmopt.model.tolerance): rounding float bounds into integer claims, agreement.

Each edge is tested from both sides: a float lower bound ``b`` on the integral TEL becomes
``ceil(b − max(1e-6, 1e-9·|b|))``, so solver round-off just above an integer keeps that integer,
and anything beyond the slack rounds up.
"""

from __future__ import annotations

import pytest

from llmopt.model.tolerance import AGREEMENT_RTOL, INTEGER_SLACK, INTEGER_SLACK_REL, agree, integer_lower_bound


@pytest.mark.parametrize(
    "value,expected",
    [
        (41.0, 41),
        (41.0000001, 41),  # 1e-7 of round-off: within the absolute slack
        (41.0000009, 41),
        (41.000002, 42),  # 2e-6 beyond: a real excess, rounds up
        (41.3, 42),
        (40.9999999, 41),
        (40.5, 41),
        (1169.0000004, 1169),  # the docstring's example
        (0.0, 0),
        (1e-7, 0),
        (1_000_000.0005, 1_000_000),  # relative slack 1e-3 at 1e6
        (1_000_000.002, 1_000_001),
    ],
)
def test_integer_lower_bound_edges(value, expected):
    """Breakage caught: ``llmopt/model/tolerance.py`` ``return int(math.ceil(value - max(INTEGER_SLACK,
    INTEGER_SLACK_REL * abs(value))))`` → ``return int(math.ceil(value))`` (41.0000001 → 42), or the slack
    added instead of subtracted (41.0 → 42)."""
    assert integer_lower_bound(value) == expected
    assert type(integer_lower_bound(value)) is int


def test_integer_lower_bound_slack_constants():
    assert (INTEGER_SLACK, INTEGER_SLACK_REL) == (1e-6, 1e-9)
    # just inside and just outside the absolute slack
    assert integer_lower_bound(7 + 0.9e-6) == 7
    assert integer_lower_bound(7 + 1.1e-6) == 8


@pytest.mark.parametrize(
    "a,b,expected",
    [
        (100.0, 100.00005, True),  # 5e-7 relative
        (100.0, 100.0002, False),  # 2e-6 relative
        (100.0, 100.5, False),
        (0.5, 0.5000009, True),  # absolute below magnitude 1
        (0.5, 0.500002, False),
        (0.0, 0.0, True),
    ],
)
def test_agree_is_relative_with_an_absolute_floor(a, b, expected):
    """Breakage caught: ``llmopt/model/tolerance.py`` ``agree`` allowing an extra absolute 1
    (``... <= rtol * max(1.0, abs(a), abs(b)) + 1.0``)."""
    assert AGREEMENT_RTOL == 1e-6
    assert agree(a, b) is expected and agree(b, a) is expected
