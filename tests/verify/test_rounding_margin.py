"""The Lagrangian checkers' arithmetic: exact, on any platform.

History. The checkers once evaluated in ``long double`` and subtracted a bound on their rounding
error (``rounding_margin``, after absurd multipliers near 1e18 certified 11 where OPT is 10 — issue
23). That margin was sized by ``long double``'s epsilon but ``Σλ`` was rounded to float64 before the
product ``M·Σλ``: the margin covered that rounding only where ``long double`` is x86's 80-bit type.
With a quad-wide ``long double`` (aarch64 Linux) ``{6: 2^60, 8: 100}`` below certified 510 where
OPT = 10. The checkers now compute in integers counting units of ``2^E`` (every float64 multiplier is
a binary fraction) and round only the returned value, down.

What is checked:

* huge multipliers never certify above OPT (every Lagrangian checker: λ, zone, tree, clique);
* the value is *exactly* the formula, rounded down: equal to an independent evaluation in
  :class:`fractions.Fraction` of the formula at every start of every window, on hand-made and
  random certificates with multipliers from 1e-300 to 1e19 (hypothesis);
* the value does not depend on ``long double``: with the checker modules' ``numpy`` replaced by one
  whose ``longdouble`` is float64 (the width on MSVC and macOS arm64), or whose ``finfo`` reports a
  quad epsilon (the margin a quad-wide ``long double`` would get), the crafted certificate gives the
  same exact value, below OPT.

Breakages tried by hand (each made the listed tests fail; the code was restored):

1. The old evaluation restored (``git show HEAD:llmopt/verify/certificates.py`` and the old
   ``clique_certificate.py``): ``crafted_certificate_is_exact`` (−2,690 natively, −6,553,600 with a
   float64 ``long double``, where the exact value is −490), ``value_is_independent_of_long_double``
   (the quad emulation certifies 510 > OPT = 10), and ``matches_exact_reference``.
2. ``round_down`` returning the nearest float (no ``nextafter`` step): ``rounds_down_never_up``.
3. ``− M·Σλ`` with ``M − 1`` (the mutant ``cert-lambda-capacity``): the two huge-multiplier tests, the
   crafted, ordinary-dual and emulation tests and ``matches_exact_reference``.
4. The zone term ``− K·Σμ`` dropped in ``lagrangian_with_cliques``: ``zone_matches_exact_reference``.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from helpers import exhaustive_opt
from hypothesis import given, settings
from hypothesis import strategies as st

import llmopt.verify.certificates as certificates
import llmopt.verify.clique_certificate as clique_certificate
from llmopt.engine.discrete import simulate
from llmopt.formulations.zones import default_split
from llmopt.model.instance import Instance
from llmopt.policies import make_policy
from llmopt.verify.certificates import check_lower_bound_certificate, round_down
from llmopt.verify.clique_certificate import check_clique_certificate
from llmopt.verify.tree_certificate import TreeLeaf, check_tree_certificate
from llmopt.verify.zone_certificate import certified_zones, check_zone_certificate

# OPT = Σo = 10: the two requests fit together (memory at t = 6 is exactly M)
INST = Instance.from_tuples(10, [(4, 1, 5), (1, 2, 5)])
STARTS = {"r0": 4, "r1": 1}
HUGE = {6: 8.648316414167937e18}
#: λ_6 = 2^60 at a time where memory is exactly M (its terms cancel), λ_8 = 100 where memory is 5:
#: the exact bound is 10 + 100·(5 − 10) = −490. Rounding Σλ = 2^60 + 100 to float64 drops the 100.
CRAFTED = {6: 2.0 ** 60, 8: 100.0}


def _exact_bound(inst: Instance, lam: dict[int, float], starts: dict[str, int], mu: dict[int, float] | None = None,
                 split: int | None = None) -> Fraction:
    """The (zone) Lagrangian in Fractions at every start of every window, the windows derived here from
    the schedule ``starts`` (``a_i … min(a_i + U − Σo, max a + Σo − o_i)``)."""
    total_o = sum(r.output for r in inst.requests)
    U = sum(starts[r.id] + r.output - r.arrival for r in inst.requests)
    T_c = max(r.arrival for r in inst.requests) + total_o
    lam_f = {t: Fraction(v) for t, v in lam.items()}
    mu_f = {t: Fraction(v) for t, v in (mu or {}).items()}
    zones = certified_zones(inst, split) if split is not None else {}
    value = Fraction(sum(r.output - r.arrival for r in inst.requests))
    for i, r in enumerate(inst.requests):
        costs = []
        for k in range(r.arrival, min(r.arrival + U - total_o, T_c - r.output) + 1):
            c = k + sum((r.prompt + tau - k) * lam_f.get(tau, 0) for tau in range(k + 1, k + r.output + 1))
            if i in zones and sum(zones[i]) > 0:
                a, b = zones[i]
                c += sum(mu_f.get(tau, 0) for tau in range(k + r.output - a + 1, k + r.output + b + 1))
            costs.append(c)
        value += min(costs)
    return value - inst.M * sum(lam_f.values(), Fraction(0)) - sum(mu_f.values(), Fraction(0))


def _as_float_down(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) <= x else float(np.nextafter(f, -np.inf))


def test_huge_multipliers_do_not_certify_above_opt():
    for lam in (HUGE, CRAFTED):
        assert check_lower_bound_certificate(INST, lam, STARTS) <= 10
        assert check_zone_certificate(INST, lam, {}, default_split(10), STARTS) <= 10
        assert check_tree_certificate(INST, [TreeLeaf(lam, {})], default_split(10), STARTS).bound <= 10
        assert check_clique_certificate(INST, lam, [], STARTS) <= 10


def test_random_huge_multipliers_stay_below_opt():
    rng = random.Random(1)
    for _ in range(500):
        lam = {t: 10 ** rng.uniform(10, 25) for t in rng.sample(range(0, 15), rng.randint(1, 4))}
        assert check_lower_bound_certificate(INST, lam, STARTS) <= 10
        assert check_zone_certificate(INST, lam, {}, default_split(10), STARTS) <= 10


def test_crafted_certificate_is_exact():
    assert _exact_bound(INST, CRAFTED, STARTS) == -490
    assert check_lower_bound_certificate(INST, CRAFTED, STARTS) == -490.0
    assert check_zone_certificate(INST, CRAFTED, {}, default_split(10), STARTS) == -490.0
    assert check_tree_certificate(INST, [TreeLeaf(CRAFTED, {})], default_split(10), STARTS).bound == -490.0


def test_ordinary_duals_are_exact():
    # λ = 0 certifies Σo exactly (no margin is subtracted any more)
    assert check_lower_bound_certificate(INST, {}, STARTS) == 10.0
    lam = {t: 0.1 * t for t in range(1, 11)}
    assert check_lower_bound_certificate(INST, lam, STARTS) == _as_float_down(_exact_bound(INST, lam, STARTS))


class _NumpyWith:
    """``numpy`` as a checker module sees it, with ``longdouble`` (and its ``finfo``) replaced."""

    def __init__(self, longdouble: type, eps: float | None = None) -> None:
        self.longdouble, self._eps = longdouble, eps

    def __getattr__(self, name: str) -> object:
        return getattr(np, name)

    def finfo(self, dtype: Any) -> object:
        info = np.finfo(dtype)
        if self._eps is None:
            return info

        class _Info:
            eps = self._eps

            def __getattr__(self, name: str) -> object:
                return getattr(info, name)

        return _Info()


@pytest.mark.parametrize("emulated", ["float64", "quad-eps"])
def test_value_is_independent_of_long_double(monkeypatch, emulated: str):
    """Emulate a ``long double`` as wide as float64, or the margin of an IEEE-quad one (eps 2^-112)."""
    fake = _NumpyWith(np.float64) if emulated == "float64" else _NumpyWith(np.longdouble, eps=2.0 ** -112)
    for module in (certificates, clique_certificate):
        monkeypatch.setattr(module, "np", fake)
    value = check_lower_bound_certificate(INST, CRAFTED, STARTS)
    zone = check_zone_certificate(INST, CRAFTED, {}, default_split(10), STARTS)
    assert value == zone == -490.0 <= 10


def test_rounds_down_never_up():
    assert round_down(1, -2) == 0.25  # exact values stay exact
    # 2^80 − 1 is not a float and its nearest float, 2^80, lies above it: the float just below is returned
    assert round_down(2 ** 80 - 1, 0) == 2.0 ** 80 - 2.0 ** 27
    assert round_down(-(2 ** 80) - 1, 0) == -(2.0 ** 80) - 2.0 ** 28
    for num in (1, 3, 10 ** 30 + 1, -(10 ** 30) - 1, 2 ** 70 + 1):
        for E in (0, -1, -60, -200):
            assert Fraction(round_down(num, E)) <= Fraction(num, 2 ** -E)


_VALUES = st.one_of(st.just(0.0), st.floats(1e-300, 1e19, allow_nan=False, allow_infinity=False),
                    st.sampled_from([2.0 ** 60, 1e18, 8.648316414167937e18, 0.1, 1e-12]))


@st.composite
def _certificate(draw):
    M = draw(st.integers(4, 12))
    rows = []
    for _ in range(draw(st.integers(1, 4))):
        s = draw(st.integers(1, 3))
        rows.append((draw(st.integers(0, 3)), s, draw(st.integers(1, min(4, M - s)))))
    inst = Instance.from_tuples(M, rows)
    times = draw(st.lists(st.integers(0, 14), max_size=5, unique=True))
    lam = {t: draw(_VALUES) for t in times}
    mu_times = draw(st.lists(st.integers(0, 14), max_size=3, unique=True))
    mu = {t: draw(_VALUES) for t in mu_times}
    return inst, lam, mu


@settings(max_examples=150, deadline=None)
@given(_certificate(), st.sampled_from(["mc-sf", "fcfs"]))
def test_matches_exact_reference(data, policy: str):
    inst, lam, _ = data
    starts = dict(simulate(inst, make_policy(policy)).starts)
    exact = _exact_bound(inst, lam, starts)
    value = check_lower_bound_certificate(inst, lam, starts)
    assert value == _as_float_down(exact)
    assert value <= exhaustive_opt(inst, sum(starts[r.id] + r.output - r.arrival for r in inst.requests))[0]


@settings(max_examples=100, deadline=None)
@given(_certificate())
def test_zone_matches_exact_reference(data):
    inst, lam, mu = data
    starts = dict(simulate(inst, make_policy("mc-sf")).starts)
    split = default_split(inst.M)
    value = check_zone_certificate(inst, lam, mu, split, starts)
    assert value == _as_float_down(_exact_bound(inst, lam, starts, mu, split))
    assert value <= exhaustive_opt(inst, sum(starts[r.id] + r.output - r.arrival for r in inst.requests))[0]
