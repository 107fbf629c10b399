"""The configuration master's two engines (HiGHS loop, SCIP pricer plug-in), Wentges smoothing, the clique rows
and the combined ``config-lag-lp`` stage, checked against exhaustive OPT on seeded tiny instances.

What is checked:

1. **Clique rows hold on schedules**: every row :func:`llmopt.formulations.clique_rows.clique_rows` writes for the
   ``pair`` / ``threshold`` cliques is ``<= 1`` at the start vector of the exhaustive optimum and of random
   feasible schedules.
2. **Engines agree**: with and without smoothing, both engines converge on tiny instances to the same LP
   optimum, certified by the checker (the number reported) and never above exhaustive OPT.
3. **Smoothing certifies along the way**: stopped after a few rounds, the smoothed loop still certifies a value
   the checker re-derives within the agreement tolerance of what it claimed.
4. **``config-lag-lp``** is never above exhaustive OPT, verified, never below ``config-sawtooth-lp`` beyond the
   tolerance, and strictly above it on some instances.
5. **A tampered clique multiplier** of the combined certificate is caught (not verified, or rejected);
   ``tests/opt/test_all_bounds.py`` tampers the stage's certificate on its way to the checker as well.

6. **An interrupt inside the pricer plug-in** reaches the caller at once.

Breakages tried by hand (each applied, the tests run, the edit reverted); each made the listed tests fail:

* SCIP's LP objective without the model's offset (``solvers/scip_pricer.py``) — both ``engines_agree`` cases and
  ``scip_engine_reports_its_account``;
* the smoothed claim without its pricing shortfall — both ``engines_agree`` cases and
  ``smoothed_rounds_certify_what_they_claim``;
* clique zones one step wider in ``formulations/clique_rows.py`` — ``clique_rows_hold_on_schedules`` and
  ``config_lag_lp_never_above_opt_and_dominates_its_parts``;
* the cut loop's rows left out of the master's starting LP (``_Master.start_model``) — ``config_lag_lp_...`` and
  ``tampered_clique_multiplier_is_caught``;
* the pricer module's re-raise of a callback's exception dropped — ``an_interrupt_in_the_pricer_reaches_the_caller``.
* the lag cliques' multipliers dropped from the combined certificate (``_Master.certificate``) —
  ``config_lag_lp_...``, ``tampered_clique_multiplier_is_caught`` and ``test_all_bounds``'s ``never_above_opt`` and
  ``tampered_certificate_is_rejected`` cases of ``config-lag-lp``.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from helpers import exhaustive_opt, random_schedule, random_tiny_instance

from llmopt.engine.discrete import simulate
from llmopt.formulations.clique_rows import clique_rows
from llmopt.formulations.hindsight_ip import formulate
from llmopt.formulations.lag_cliques import class_cliques, positions_of
from llmopt.model.instance import Instance
from llmopt.model.tolerance import AGREEMENT_RTOL
from llmopt.model.windows import StartWindows, start_windows
from llmopt.opt.bounds import BoundContext, compute_bound
from llmopt.opt.cut_bounds import cut_and_price
from llmopt.policies import make_policy
from llmopt.verify.cut_certificate import check_cut_certificate

pytest.importorskip("pyscipopt")


def _instances(count: int, base: int) -> list[Instance]:
    return [random_tiny_instance(random.Random(base + i), n_range=(3, 6), M_range=(6, 12), max_arrival=3,
                                 max_prompt=4) for i in range(count)]


@pytest.fixture(scope="module")
def cases() -> list[tuple[Instance, int, dict[str, int]]]:
    out = []
    for inst in _instances(20, 2100):
        fcfs = simulate(inst, make_policy("fcfs"))
        opt, _ = exhaustive_opt(inst, fcfs.tel)
        out.append((inst, opt, dict(fcfs.starts)))
    return out


def _windows(inst: Instance, starts: dict[str, int]):
    return start_windows(inst, sum(starts[r.id] + r.output - r.arrival for r in inst.requests))


def _certified(inst: Instance, cert, starts: dict[str, int]) -> float:
    return check_cut_certificate(inst, cert.lam, cert.rows, split=cert.split, zone_mu=cert.zone_mu,
                                 cliques=cert.cliques, knapsack=cert.knapsack, upper_bound_starts=starts)


# --- 1. clique rows on schedules ---------------------------------------------------------------------


def test_clique_rows_hold_on_schedules(cases):
    rng = np.random.default_rng(4)
    rows_checked = tight = 0
    for inst, _, starts in cases:
        cliques = [positions_of(inst, q) for q in class_cliques(inst, ("pair", "threshold"))]
        if not cliques:
            continue
        _, opt_starts = exhaustive_opt(inst, simulate(inst, make_policy("fcfs")).tel)
        schedules = [opt_starts, starts] + [random_schedule(inst, rng) for _ in range(5)]
        hi = max(s[r.id] for s in schedules for r in inst.requests)
        windows = StartWindows(tuple(r.arrival for r in inst.requests),
                               tuple(max(hi, r.arrival) for r in inst.requests),
                               hi + max(r.output for r in inst.requests), "every schedule's starts")
        model = formulate(inst, windows)
        x = model.cols("x")
        first = model.rows("eq2_assignment").labels["first"]
        cls_of = {}
        for c, f in enumerate(first.tolist()):
            r = inst.requests[f]
            for i, q in enumerate(inst.requests):
                if (q.arrival, q.prompt, q.output) == (r.arrival, r.prompt, r.output):
                    cls_of[i] = c
        col = {(int(c), int(k)): j for j, (c, k) in enumerate(zip(x.labels["class"], x.labels["k"], strict=True))}
        tables = [clique_rows(model, inst, q) for q in cliques]
        for s in schedules:
            vec = np.zeros(model.n_cols)
            for i, r in enumerate(inst.requests):
                vec[x.start + col[(cls_of[i], s[r.id])]] += 1
            for _, A in tables:
                act = A @ vec
                assert act.max(initial=0) <= 1 + 1e-9, (inst, s)
                rows_checked += act.size
                tight += int((act == 1).sum())
    assert rows_checked > 100 and tight > 0


# --- 2. the engines agree ---------------------------------------------------------------------------


@pytest.mark.parametrize("sawtooth", [False, True])
def test_engines_agree_with_and_without_smoothing(cases, sawtooth):
    for inst, opt, starts in cases[:10]:
        windows = _windows(inst, starts)
        values = {}
        for engine in ("loop", "pricer"):
            for smoothing in (0.0, 0.5):
                cert = cut_and_price(inst, windows, sawtooth=sawtooth, configurations=True, seed=starts,
                                     engine=engine, smoothing=smoothing)
                assert not isinstance(cert, str), cert
                assert cert.status.startswith("converged"), (engine, smoothing, cert.status)
                value = _certified(inst, cert, starts)
                assert value <= opt + 1e-9, (inst, engine, smoothing, value, opt)
                assert value >= cert.claimed - AGREEMENT_RTOL * max(1.0, abs(cert.claimed)), (engine, smoothing)
                values[engine, smoothing] = value
        lo, hi = min(values.values()), max(values.values())
        assert hi - lo <= 1e-6 * max(1.0, hi), (inst, values)


def test_scip_engine_reports_its_account():
    from llmopt.solvers.scip_pricer import Column, scip_price_and_cut

    inst = Instance.from_tuples(10, [(0, 3, 1)] * 6)  # OPT 12: two requests of size 4 per step
    cert = cut_and_price(inst, _windows(inst, {r.id: i // 2 for i, r in enumerate(inst.requests)}),
                         sawtooth=False, configurations=True, seed={r.id: i // 2 for i, r in enumerate(inst.requests)},
                         engine="pricer")
    assert not isinstance(cert, str) and cert.claimed == pytest.approx(12.0)
    assert Column(0.0, np.array([0]), np.array([1.0])).cost == 0.0
    assert callable(scip_price_and_cut)


# --- 3. smoothing stopped early ----------------------------------------------------------------------


def test_smoothed_rounds_certify_what_they_claim(cases):
    for inst, opt, starts in cases[:8]:
        windows = _windows(inst, starts)
        for engine in ("loop", "pricer"):
            for rounds in (2, 4):
                cert = cut_and_price(inst, windows, sawtooth=False, configurations=True, seed=starts, engine=engine,
                                     smoothing=0.7, max_rounds=rounds)
                assert not isinstance(cert, str), cert
                value = _certified(inst, cert, starts)
                assert value <= opt + 1e-9
                assert abs(value - cert.claimed) <= AGREEMENT_RTOL * max(1.0, abs(cert.claimed)) + 1e-7, \
                    (inst, engine, rounds, value, cert.claimed)


# --- 4. the combined stage ---------------------------------------------------------------------------


def test_config_lag_lp_never_above_opt_and_dominates_its_parts(cases):
    above = 0
    for inst, opt, starts in cases:
        ctx = BoundContext(upper_bound_starts=starts)
        res = compute_bound("config-lag-lp", inst, ctx)
        where = f"M={inst.M} {[(r.arrival, r.prompt, r.output) for r in inst.requests]}: {res.detail}"
        assert res.value is not None and res.verified, where
        assert res.value <= opt + 1e-6, f"{res.value} > OPT {opt}: {where}"
        parts = compute_bound("config-sawtooth-lp", inst, ctx).value
        assert parts is not None and res.value >= parts - AGREEMENT_RTOL * max(1.0, parts), (parts, where)
        above += res.value > parts + 1e-6
    assert above >= 2, f"config-lag-lp above config-sawtooth-lp on only {above} of {len(cases)} instances"


# --- 5. tampering ------------------------------------------------------------------------------------


def test_tampered_clique_multiplier_is_caught(cases):
    tampered = 0
    for inst, _, starts in cases:
        cert = cut_and_price(inst, _windows(inst, starts), sawtooth=True, configurations=True, cliques=True,
                             seed=starts)
        assert not isinstance(cert, str)
        if not cert.cliques:
            continue
        honest = _certified(inst, cert, starts)
        members, (times, mu) = cert.cliques[0]
        bigger = [(members, (times, mu * 1.01)), *cert.cliques[1:]]
        value = _certified(inst, replace(cert, cliques=bigger), starts)
        # the duals maximise the Lagrangian at convergence: a nudged μ certifies less than claimed
        assert value < cert.claimed - AGREEMENT_RTOL * max(1.0, abs(cert.claimed)), (inst, value, honest)
        assert value <= honest + 1e-9
        tampered += 1
    assert tampered >= 2


# --- 6. an interrupt inside the pricer plug-in -------------------------------------------------------


def test_an_interrupt_in_the_pricer_reaches_the_caller(monkeypatch):
    """PySCIPOpt alone prints an exception raised in a plug-in and lets SCIP go on (found when a SIGTERM reached a
    study inside ``pricerredcost``); the engine must stop SCIP and raise it."""
    import llmopt.opt.cut_bounds as cut_mod

    real = cut_mod._Master.price
    calls = []

    def price(self, duals, objective):
        calls.append(objective)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, duals, objective)

    monkeypatch.setattr(cut_mod._Master, "price", price)
    inst = Instance.from_tuples(10, [(0, 3, 1)] * 6)
    seed = {r.id: i // 2 for i, r in enumerate(inst.requests)}
    with pytest.raises(KeyboardInterrupt):
        cut_and_price(inst, _windows(inst, seed), sawtooth=False, configurations=True, seed=seed, engine="pricer")
    assert len(calls) == 2  # SCIP stopped at once: no pricing call after the interrupt
