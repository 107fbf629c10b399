"""The checkers' rounding margin (:func:`llmopt.verify.certificates.rounding_margin`).

The Lagrangian checkers evaluate prefix sums in extended precision; with absurd multipliers (about
1e18) the rounding lost whole units and a certificate "proved" a bound above OPT (found in review,
issue 23). Every checker now subtracts a bound on its rounding error. Breakage tried by hand: the
margin returned as 0 — every test of the first group fails (11 or 12 certified where OPT is 10).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from llmopt.formulations.zones import default_split
from llmopt.model.instance import Instance
from llmopt.verify.certificates import check_lower_bound_certificate, rounding_margin
from llmopt.verify.tree_certificate import TreeLeaf, check_tree_certificate
from llmopt.verify.zone_certificate import check_zone_certificate

# OPT = Σo = 10: the two requests fit together (memory at t = 6 is exactly M)
INST = Instance.from_tuples(10, [(4, 1, 5), (1, 2, 5)])
STARTS = {"r0": 4, "r1": 1}
HUGE = {6: 8.648316414167937e18}


def test_huge_multipliers_do_not_certify_above_opt():
    assert check_lower_bound_certificate(INST, HUGE, STARTS) <= 10
    assert check_zone_certificate(INST, HUGE, {}, default_split(10), STARTS) <= 10
    assert check_tree_certificate(INST, [TreeLeaf(HUGE, {})], default_split(10), STARTS).bound <= 10


def test_random_huge_multipliers_stay_below_opt():
    rng = random.Random(1)
    for _ in range(500):
        lam = {t: 10 ** rng.uniform(10, 25) for t in rng.sample(range(0, 15), rng.randint(1, 4))}
        assert check_lower_bound_certificate(INST, lam, STARTS) <= 10
        assert check_zone_certificate(INST, lam, {}, default_split(10), STARTS) <= 10


def test_the_margin_is_negligible_for_ordinary_duals():
    lam = (np.arange(1, 11, dtype=np.int64), np.full(10, 0.5))
    margin = rounding_margin(INST, 1, 10, 10, lam)
    assert 0 < margin < 1e-9
    # λ = 0 certifies Σo exactly (up to the margin, which is then tiny)
    assert check_lower_bound_certificate(INST, {}, STARTS) == pytest.approx(10, abs=1e-9)
