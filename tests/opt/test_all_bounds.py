"""Every registered bound stage, against exhaustive OPT and against a tampered certificate.

The stages are taken from :data:`llmopt.opt.bounds.BOUNDS` (``BOUNDS.names()``), so a newly registered
bound is covered automatically — and the corruption test fails for it until a recipe is added.

What is checked, per bound stage:

1. **Never above OPT.** On 24 tiny instances — 8 random with arrivals, 8 random all at 0, and 8
   hand-made ones of the shapes some stages need (identical requests at 0 for ``closed-form-dual``,
   a common non-zero arrival for ``wang-relax-lp``, instances where several bounds are tight) —
   the stage's value, run through :func:`llmopt.opt.bounds.run_bound` with FCFS's schedule as the
   upper-bound schedule, is at most the optimum of the exhaustive search of
   ``helpers.exhaustive_opt`` (which shares no code with the bounds), and is
   ``verified`` with a certificate. A stage may decline an instance of the wrong shape (``value``
   ``None``), but must not fail on one (``run_bound``'s ``failed: ...``, e.g. a certificate its own
   checker rejects). Each stage must give a value on at least one instance (a stage that silently
   always returns ``None`` fails), and on at least one where ``Σo`` is *not* already OPT.
2. **A tampered certificate is rejected.** For each stage, the point where its certificate is
   produced is monkeypatched so that the certificate is slightly wrong, and the stage must then
   report ``verified=False`` with the checker's value below the claim (λ certificates: the
   largest ``λ_t`` scaled by ``1 + 1e-4``, a relative error between ``AGREEMENT_RTOL`` and 1e-3,
   so a loosened agreement tolerance would let it through) or fail with
   :class:`~llmopt.verify.checker.CertificateError` (energy). Patch points: ``lp`` and
   ``wang-relax-lp`` — :func:`llmopt.opt.bounds.lambda_from_lp_duals`; ``dual-lp`` — the solver's
   primal ``λ`` columns (via ``llmopt.solvers.get_solver``); ``lp-colgen`` — the multipliers of
   :func:`llmopt.solvers.colgen.solve_lp_auto`; ``closed-form-dual`` — the ``λ`` of
   :func:`llmopt.formulations.closed_form_dual.closed_form_dual`; ``sum-of-outputs`` (certificate
   ``λ = 0``) — a small ``λ`` slipped into the empty certificate on its way to the checker;
   ``energy`` — the claimed value + 1, and a non-SRPT order; ``zone-lp`` — the largest zone
   multiplier ``μ``, and separately the largest ``λ``, of :func:`llmopt.opt.bounds.zone_multipliers`;
   ``zone-tree`` — the claimed bound of :func:`llmopt.opt.zone_tree.zone_tree` nudged up, and a
   tree whose root's two children are one node (rejected as not a tree); ``sawtooth-lp``, ``config-lp``,
   ``config-sawtooth-lp`` — the certificate of :func:`llmopt.opt.cut_bounds.cut_and_price` (its largest
   ``λ``, sawtooth multiplier ``ν`` or configuration-table entry ``η`` nudged; a sawtooth row's ``ρ``
   raised by one and a table cut short, both rejected as invalid; ``tests/opt/test_cut_bounds.py``
   tests that certificate in depth)
   (``tests/formulations/test_zones.py`` tests the zone certificate in depth). The checker itself must reject a
   negative and a non-finite ``λ``, and the energy checker a claim above its value
   (cross-reference to ``tests/opt/test_energy_bound.py``, which tests the energy certificate in depth).

Breakages tried by hand (each applied by a throw-away pytest plugin that re-compiled one function
of the package from its source with the edit, in memory, at start-up; no file of the package was
edited). Each made exactly the listed tests fail; with none applied, all pass:

* ``lp``: the checker's value + 1 in ``_certify``, for ``lp`` only —
  ``test_never_above_opt[lp]`` (10.14 > OPT 10 on ``M=6 [(3,2,2), (1,1,5)]``) and
  ``test_tampered_certificate_is_rejected[lp]`` (the tampered λ then reads "checker higher").
* ``lp``: the sign of ``λ = −dual`` flipped in ``lambda_from_lp_duals`` — ``never_above_opt`` and
  ``tampered_certificate`` of ``lp`` and ``wang-relax-lp`` (the stage raises "wrong sign", which
  ``run_bound`` turns into ``failed: ...``).
* ``_certify`` accepting every value (``ok = True``) — ``tampered_certificate`` of ``lp``,
  ``dual-lp``, ``wang-relax-lp``, ``lp-colgen``.
* ``closed-form-dual``: the reported value + 1 — ``never_above_opt[closed-form-dual]`` (6.25 >
  OPT 6 on ``M=12``, three ``(0,2,2)``: all fit at once, so ``D = OPT``) and its
  ``tampered_certificate`` case; its verdict ``ok = True`` always — ``tampered_certificate``.
* ``wang-relax-lp``: its common-arrival test inverted — both of its tests (no value anywhere).
* ``sum-of-outputs``: value ``Σo + 1`` — both of its tests (not ``verified``); value *and* verdict
  forced (``Σo + 1``, ``ok = True``) — both (8 > OPT 7 on ``M=8 [(2,1,6), (2,1,1)]``).
* ``energy``: the stage's ceiling overshooting (``p // M + 1``), stage only —
  ``never_above_opt[energy]`` (the checker rejects the claim: ``failed: CertificateError``); in the
  stage and the checker — ``never_above_opt[energy]`` (11 > OPT 7).
* Checker: the negativity check of ``_multipliers`` removed — ``checker_rejects_negative_lambda``;
  the finiteness check removed — the three ``checker_rejects_non_finite_lambda``; the energy
  checker's claim test removed — ``tampered_certificate[energy]`` and
  ``energy_checker_rejects_a_claim_above_its_value``; the windows from the upper-bound schedule one
  step too narrow — ``never_above_opt`` of ``lp``, ``dual-lp``, ``wang-relax-lp``, ``lp-colgen``.
* ``agree`` in :mod:`llmopt.opt.bounds` loosened to ``rtol = 1e-3`` — every λ case of
  ``tampered_certificate`` (all but ``energy``).

Not caught here: the checker's horizon ``T_c`` one step short (the windows of these instances are
already narrowed by FCFS's schedule or the LP's λ vanishes there); this module does not test the
checker's window derivation.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pytest
from helpers import exhaustive_opt, random_tiny_instance

import llmopt.opt.bounds as bounds_mod
from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance
from llmopt.model.tolerance import AGREEMENT_RTOL
from llmopt.opt.bounds import BOUNDS, BoundContext, compute_bound, run_bound
from llmopt.policies import make_policy
from llmopt.verify.certificates import CertificateError, check_lower_bound_certificate
from llmopt.verify.energy_certificate import check_energy_certificate

# --- 1. never above OPT on tiny instances ----------------------------------------------------------


def _tiny_instances() -> list[Instance]:
    insts = [random_tiny_instance(random.Random(7000 + seed), n_range=(2, 5), M_range=(4, 10), max_arrival=3)
             for seed in range(8)]
    insts += [random_tiny_instance(random.Random(8000 + seed), n_range=(2, 5), M_range=(4, 10), max_arrival=0)
              for seed in range(8)]
    hand = [
        (8, [(0, 1, 7)] * 4),  # identical at 0, one at a time
        (6, [(0, 1, 2)] * 4),
        (5, [(0, 1, 3)] * 3),
        (10, [(0, 1, 3)] * 6),
        (8, [(0, 1, 3)] * 2),  # identical at 0, n(s+o) = M: all run at once, D = Σo = OPT
        (12, [(0, 2, 2)] * 3),  # the same with room to spare
        (7, [(2, 1, 3)] * 3),  # identical at a common arrival 2 (wang-relax-lp yes, closed form no)
        (5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)]),  # T-5: OPT 12
    ]
    insts += [Instance.from_tuples(M, rows, name=f"hand/M={M}") for M, rows in hand]
    return insts


@functools.cache
def _cases() -> list[tuple[Instance, int, dict[str, int]]]:
    """``(instance, exhaustive OPT, FCFS's starts)``, computed once for all bound stages."""
    cases = []
    for inst in _tiny_instances():
        fcfs = simulate(inst, make_policy("fcfs"))
        opt, _ = exhaustive_opt(inst, fcfs.tel)
        cases.append((inst, opt, dict(fcfs.starts)))
    return cases


def _rows(inst: Instance) -> list[tuple[int, int, int]]:
    return [(r.arrival, r.prompt, r.output) for r in inst.requests]


@pytest.mark.parametrize("name", BOUNDS.names())
def test_never_above_opt(name):
    produced, informative = 0, 0
    for inst, opt, starts in _cases():
        res = run_bound(name, inst, BoundContext(upper_bound_starts=starts))
        where = f"{name} on M={inst.M} {_rows(inst)}: {res.detail}"
        # a stage may decline an instance of the wrong shape, but must not fail on one
        # (run_bound turns an exception, e.g. a rejected certificate, into "failed: ...")
        assert not res.detail.startswith("failed:"), where
        if res.value is None:
            continue
        assert res.value <= opt + 1e-6, f"bound {res.value} above OPT {opt}: {where}"
        assert res.verified and res.certificate != "none", where
        produced += 1
        informative += opt > inst.total_output
    assert produced >= 1, f"bound {name!r} gave no value on any of the {len(_cases())} tiny instances"
    assert informative >= 1, f"bound {name!r} only ran on instances where Σo = OPT"


# --- 2. a tampered certificate is rejected ---------------------------------------------------------

SCALE = 1 + 1e-4  # the largest λ_t is multiplied by this


def _nudge(values) -> np.ndarray:
    lam = np.array(values, dtype=float, copy=True)
    assert lam.size and lam.max() > 0, "nothing to tamper with: all λ are 0"
    lam[int(np.argmax(lam))] *= SCALE
    return lam


def _tamper_lambda_from_duals(mp: pytest.MonkeyPatch) -> None:
    real = bounds_mod.lambda_from_lp_duals

    def tampered(model, duals, *args, **kwargs):
        times, lam = real(model, duals, *args, **kwargs)
        return times, _nudge(lam)

    mp.setattr(bounds_mod, "lambda_from_lp_duals", tampered)


def _tamper_dual_lp_solution(mp: pytest.MonkeyPatch) -> None:
    import llmopt.solvers as solvers_mod

    real_get = solvers_mod.get_solver

    class Tampering:
        def __init__(self, inner):
            self.inner = inner

        def solve(self, model, **kwargs):
            res = self.inner.solve(model, **kwargs)
            x = np.array(res.x, dtype=float, copy=True)
            cols = np.arange(model.n_cols)[model.cols("lambda").slice]
            x[cols] = _nudge(x[cols])
            return replace(res, x=x)

    mp.setattr(solvers_mod, "get_solver", lambda name, **options: Tampering(real_get(name, **options)))


def _tamper_colgen(mp: pytest.MonkeyPatch) -> None:
    import llmopt.solvers.colgen as colgen_mod

    real = colgen_mod.solve_lp_auto

    def tampered(*args, **kwargs):
        res, delta = real(*args, **kwargs)
        return replace(res, lam_values=_nudge(res.lam_values)), delta

    mp.setattr(colgen_mod, "solve_lp_auto", tampered)


def _tamper_closed_form(mp: pytest.MonkeyPatch) -> None:
    import llmopt.formulations.closed_form_dual as cf_mod

    real = cf_mod.closed_form_dual

    def tampered(*args, **kwargs):
        cf = real(*args, **kwargs)
        return replace(cf, lam=_nudge(cf.lam))

    mp.setattr(cf_mod, "closed_form_dual", tampered)


def _tamper_sum_of_outputs(mp: pytest.MonkeyPatch) -> None:
    """The certificate is ``λ = 0`` (``{}``); slip in a small ``λ`` at a time no request can use,
    which lowers the checker's value by ``M·λ`` (relative change 1e-5)."""
    real = bounds_mod.check_lower_bound_certificate

    def tampered(instance, lam, *args, **kwargs):
        assert not lam, "sum-of-outputs no longer hands the checker λ = 0: update this recipe"
        far = max(r.arrival for r in instance.requests) + instance.total_output + 10
        return real(instance, {far: 1e-5 * instance.total_output / instance.M}, *args, **kwargs)

    mp.setattr(bounds_mod, "check_lower_bound_certificate", tampered)


def _tamper_energy_value(mp: pytest.MonkeyPatch) -> None:
    real = bounds_mod.energy_certificate

    def tampered(instance):
        cert = real(instance)
        return replace(cert, value=cert.value + 1)

    mp.setattr(bounds_mod, "energy_certificate", tampered)


def _tamper_energy_order(mp: pytest.MonkeyPatch) -> None:
    real = bounds_mod.energy_certificate

    def tampered(instance):
        cert = real(instance)
        return replace(cert, order=tuple(reversed(cert.order)))

    mp.setattr(bounds_mod, "energy_certificate", tampered)


def _tamper_zone_mu(mp: pytest.MonkeyPatch) -> None:
    real = bounds_mod.zone_multipliers

    def tampered(model, duals):
        lam, (times, mu) = real(model, duals)
        return lam, (times, _nudge(mu))

    mp.setattr(bounds_mod, "zone_multipliers", tampered)


def _tamper_zone_lambda(mp: pytest.MonkeyPatch) -> None:
    real = bounds_mod.zone_multipliers

    def tampered(model, duals):
        (times, lam), mu = real(model, duals)
        return (times, _nudge(lam)), mu

    mp.setattr(bounds_mod, "zone_multipliers", tampered)


def _tamper_clique_colgen(which: str) -> Callable[[pytest.MonkeyPatch], None]:
    """Nudge the clique multipliers (``"mu"``) or the memory multipliers (``"lambda"``) that column
    generation hands the ``zone-colgen`` / ``lag-lp`` stages."""

    def patch(mp: pytest.MonkeyPatch) -> None:
        import llmopt.solvers.colgen as colgen_mod

        real = colgen_mod.solve_lp_colgen

        def tampered(*args, **kwargs):
            res = real(*args, **kwargs)
            if which == "lambda":
                return replace(res, lam_values=_nudge(res.lam_values))
            return replace(res, clique_mu=tuple((t, _nudge(v) if v.size else v) for t, v in res.clique_mu))

        mp.setattr(colgen_mod, "solve_lp_colgen", tampered)

    return patch


def _tamper_subgradient(mp: pytest.MonkeyPatch) -> None:
    import llmopt.solvers.lagrangian as lagr_mod

    real = lagr_mod.subgradient_bound

    def tampered(*args, **kwargs):
        res = real(*args, **kwargs)
        return replace(res, lam_values=_nudge(res.lam_values))

    mp.setattr(lagr_mod, "subgradient_bound", tampered)


def _tamper_clique_members(mp: pytest.MonkeyPatch) -> None:
    """Every member's zone made one step longer than its lag allows: the checker's clique proof fails."""
    import llmopt.formulations.lag_cliques as lc_mod

    real = lc_mod.positions_of

    def tampered(instance, clique):
        return {i: (a + instance.requests[i].output, b) for i, (a, b) in real(instance, clique).items()}

    mp.setattr(lc_mod, "positions_of", tampered)


def _tamper_tree(which: str) -> Callable[[pytest.MonkeyPatch], None]:
    """Corrupt the ``zone-tree`` result: its claimed bound nudged up (``"claim"``), or the root's
    two children made one node (``"shape"``)."""

    def patch(mp: pytest.MonkeyPatch) -> None:
        import llmopt.opt.zone_tree as tree_mod
        from llmopt.verify.tree_certificate import TreeSplit

        real = tree_mod.zone_tree

        def tampered(*args, **kwargs):
            res = real(*args, **kwargs)
            if which == "claim":
                return replace(res, bound=res.bound * SCALE)
            root = res.nodes[0]
            assert isinstance(root, TreeSplit), "the tampering needs a tree that branched"
            return replace(res, nodes=(replace(root, high=root.low), *res.nodes[1:]))

        mp.setattr(tree_mod, "zone_tree", tampered)

    return patch


def _tamper_cut(which: str) -> Callable[[pytest.MonkeyPatch], None]:
    """Corrupt the certificate :func:`llmopt.opt.cut_bounds.cut_and_price` hands the checker: the largest memory
    multiplier (``"lambda"``), sawtooth-row multiplier (``"nu"``), configuration-table entry (``"eta"``) or lag-clique
    multiplier (``"clique-mu"``) nudged, a sawtooth row's ``ρ`` raised by one (``"rho"``: no longer valid), a
    clique member's zone widened (``"clique-zone"``: no longer a clique), or a table cut short (``"table"``)."""

    def patch(mp: pytest.MonkeyPatch) -> None:
        import llmopt.opt.cut_bounds as cut_mod

        real = cut_mod.cut_and_price

        def tampered(*args, **kwargs):
            c = real(*args, **kwargs)
            if which == "lambda":
                return replace(c, lam=(c.lam[0], _nudge(c.lam[1])))
            if which in ("clique-mu", "clique-zone"):
                assert c.cliques, "the tampering needs a lag clique in the certificate"
                q = max(range(len(c.cliques)), key=lambda j: float(np.max(c.cliques[j][1][1])))
                members, (times, mu) = c.cliques[q]
                if which == "clique-zone":  # a member's zone widened far past any lag: no longer a clique
                    i = min(members)
                    members = {**members, i: (members[i][0] + 100, members[i][1])}
                else:
                    mu = _nudge(mu)
                return replace(c, cliques=[*c.cliques[:q], (members, (times, mu)), *c.cliques[q + 1:]])
            if which in ("nu", "rho"):
                assert c.rows, "the tampering needs a sawtooth row in the certificate"
                if which == "rho":
                    (t0, L, d, rho), v = c.rows[0]
                    return replace(c, rows=[((t0, L, d, rho + 1), v), *c.rows[1:]])
                nu = _nudge([v for _, v in c.rows])
                return replace(c, rows=[(r, float(v)) for (r, _), v in zip(c.rows, nu, strict=True)])
            assert c.knapsack, "the tampering needs a configuration table in the certificate"
            t = max(c.knapsack, key=lambda u: float(c.knapsack[u].max()))
            tables = dict(c.knapsack)
            tables[t] = _nudge(tables[t]) if which == "eta" else tables[t][:-1]
            return replace(c, knapsack=tables)

        mp.setattr(cut_mod, "cut_and_price", tampered)

    return patch


@dataclass(frozen=True)
class Tampering:
    """How to corrupt one stage's certificate, on which instance, and what must catch it."""

    patch: Callable[[pytest.MonkeyPatch], None]
    rows: tuple[tuple[int, int, int], ...]
    M: int
    raises: str | None = None  # a CertificateError matching this (else: verified False)


IDENTICAL = ((0, 1, 3),) * 10  # DIGEST §1.4 row 1: LP 61.8065, closed-form D 50.1111
ENERGY = ((0, 1, 1), (0, 1, 2), (0, 1, 3), (1, 1, 4))  # distinct energies 2, 5, 9, 14
PEAKS = ((0, 1, 9), (0, 2, 7), (1, 1, 8), (0, 3, 3), (2, 1, 5))  # M = 10: zone rows and memory rows both bind

TAMPERINGS: dict[str, list[Tampering]] = {
    "lp": [Tampering(_tamper_lambda_from_duals, IDENTICAL, 12)],
    "wang-relax-lp": [Tampering(_tamper_lambda_from_duals, IDENTICAL, 12)],
    "dual-lp": [Tampering(_tamper_dual_lp_solution, IDENTICAL, 12)],
    "lp-colgen": [Tampering(_tamper_colgen, IDENTICAL, 12)],
    "closed-form-dual": [Tampering(_tamper_closed_form, IDENTICAL, 12)],
    "sum-of-outputs": [Tampering(_tamper_sum_of_outputs, ((0, 1, 2), (3, 2, 4)), 10)],
    "zone-lp": [Tampering(_tamper_zone_mu, PEAKS, 10), Tampering(_tamper_zone_lambda, PEAKS, 10)],
    "zone-colgen": [Tampering(_tamper_clique_colgen("mu"), PEAKS, 10),
                    Tampering(_tamper_clique_colgen("lambda"), PEAKS, 10),
                    Tampering(_tamper_clique_members, PEAKS, 10, raises="clique")],
    "lagrangian": [Tampering(_tamper_subgradient, IDENTICAL, 12)],
    "zone-tree": [Tampering(_tamper_tree("claim"), PEAKS, 10),
                  Tampering(_tamper_tree("shape"), PEAKS, 10, raises="reached twice")],
    "lag-lp": [Tampering(_tamper_clique_colgen("mu"), PEAKS, 10),
               Tampering(_tamper_clique_colgen("lambda"), IDENTICAL, 12),  # on PEAKS its cliques carry it all
               Tampering(_tamper_clique_members, PEAKS, 10, raises="clique")],
    "sawtooth-lp": [Tampering(_tamper_cut("lambda"), PEAKS, 10), Tampering(_tamper_cut("nu"), PEAKS, 10),
                    Tampering(_tamper_cut("rho"), PEAKS, 10, raises="exceeds min_q")],
    "config-lp": [Tampering(_tamper_cut("eta"), PEAKS, 10), Tampering(_tamper_cut("lambda"), IDENTICAL, 12),
                  Tampering(_tamper_cut("table"), PEAKS, 10, raises="entries, not M")],
    "config-sawtooth-lp": [Tampering(_tamper_cut("nu"), PEAKS, 10), Tampering(_tamper_cut("eta"), PEAKS, 10),
                           Tampering(_tamper_cut("lambda"), IDENTICAL, 12),
                           Tampering(_tamper_cut("rho"), PEAKS, 10, raises="exceeds min_q")],
    "config-lag-lp": [Tampering(_tamper_cut("clique-mu"), PEAKS, 10), Tampering(_tamper_cut("eta"), PEAKS, 10),
                      Tampering(_tamper_cut("lambda"), IDENTICAL, 12),
                      Tampering(_tamper_cut("clique-zone"), PEAKS, 10, raises="clique")],
    "energy": [Tampering(_tamper_energy_value, ENERGY, 10, raises="certifies only"),
               Tampering(_tamper_energy_order, ENERGY, 10, raises="not shortest-remaining-energy-first")],
}


@pytest.mark.parametrize("name", BOUNDS.names())
def test_tampered_certificate_is_rejected(name):
    if name not in TAMPERINGS:
        pytest.fail(f"bound {name!r} is registered but has no tampering recipe: add one to TAMPERINGS")
    for t in TAMPERINGS[name]:
        inst = Instance.from_tuples(t.M, list(t.rows))
        honest = compute_bound(name, inst)
        assert honest.value is not None and honest.verified, honest.detail
        with pytest.MonkeyPatch.context() as mp:
            t.patch(mp)
            if t.raises is not None:
                with pytest.raises(CertificateError, match=t.raises):
                    compute_bound(name, inst)
                res = run_bound(name, inst)
                assert res.value is None and not res.verified and "CertificateError" in res.detail, res.detail
                continue
            res = compute_bound(name, inst)
        assert res.value is not None and res.claimed is not None, res.detail
        assert res.verified is False, f"tampered {name} certificate passed: {res.detail}"
        rel = (res.claimed - res.value) / max(1.0, abs(res.claimed))
        assert AGREEMENT_RTOL < rel < 1e-3, (rel, res.detail)  # below the claim, by a small margin
        assert res.value <= honest.value + 1e-9  # still a valid, weaker bound (weak duality)


def test_tampering_recipes_name_registered_bounds():
    assert set(TAMPERINGS) <= set(BOUNDS.names())


# --- the checkers themselves -----------------------------------------------------------------------


def test_checker_rejects_negative_lambda():
    inst = Instance.from_tuples(12, list(IDENTICAL))
    assert check_lower_bound_certificate(inst, {1: 0.5, 2: 0.25}) > 0  # the honest form passes
    with pytest.raises(CertificateError, match="< 0"):
        check_lower_bound_certificate(inst, {1: 0.5, 2: -0.25})
    with pytest.raises(CertificateError, match="< 0"):
        check_lower_bound_certificate(inst, (np.array([1, 2]), np.array([0.5, -1e-3])))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_checker_rejects_non_finite_lambda(bad):
    inst = Instance.from_tuples(12, list(IDENTICAL))
    with pytest.raises(CertificateError, match="not a finite number"):
        check_lower_bound_certificate(inst, {1: 0.5, 2: bad})
    with pytest.raises(CertificateError, match="not a finite number"):
        check_lower_bound_certificate(inst, np.array([0.0, 0.5, bad]))


def test_energy_checker_rejects_a_claim_above_its_value():
    """Cross-reference: ``tests/opt/test_energy_bound.py`` tests corrupted energy certificates in depth."""
    inst = Instance.from_tuples(10, list(ENERGY))
    cert = bounds_mod.energy_certificate(inst)
    assert check_energy_certificate(inst, cert.order, cert.value) == cert.value
    with pytest.raises(CertificateError, match="certifies only"):
        check_energy_certificate(inst, cert.order, cert.value + 1)
