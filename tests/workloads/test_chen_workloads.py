"""C (Chen–Ye–Zhou) workloads: the §5 synthetic families and the §6 LMSYS sample.

The LMSYS tests need the staged trace files (shared/data, not in the repository) and are
skipped with a reason when they are absent; the worst-case test needs
``llmopt.papers.chen.theory.figure1_worst_distribution``.

Breakages tried by hand, each caught by the test named (then reverted):

* ``_counts`` (largest remainder): remainder order reversed (``argsort(+…)``) →
  ``test_two_point_fractions``, ``test_exact_proportions`` (the extra requests went to
  lengths of probability 0, outside ``[ℓ, u]``); the ``+ 1`` for the largest remainders
  dropped → ``test_two_point_fractions``, ``test_exact_proportions`` (counts sum below n).
* default ``t`` ``ℓ/u`` instead of ``u/ℓ`` → ``test_two_point_fractions``, ``test_default_memory``.
* ``geometric_pmf`` with ``q^k`` instead of ``q^(k−1)``: no test fails, rightly — after
  normalisation it is the same law. So the breakage tried was ``lg_pmf`` without the
  factor ``k`` → ``test_geometric_and_lg_laws``, ``test_geometric_matches_theory_module``.
* a workload's seed dropped (``default_rng([0, tag])``) → ``test_seeded`` (two-point, G, LG)
  and ``test_lmsys_nested_prefixes`` (LMSYS: seeds 0 and 1 gave the same sample).
* ``chen_lmsys``: a fresh draw of ``n`` rows per ``n`` (``rng.choice(keep.size, size=n)``)
  → ``test_lmsys_nested_prefixes``; the ``max_output`` filter removed →
  ``test_lmsys_max_output``; the prediction spec ignored → ``test_lmsys_predictions``.
* ``_default_M`` without the ``s + u`` floor → ``test_default_memory`` (G(1/2) with n = 100
  gave M = 30 < s + u_max = 1001) and ``test_two_point_fractions``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import have_trace_data

from llmopt.model.instance import Instance
from llmopt.model.timed_instance import TimedInstance
from llmopt.workloads import WORKLOADS, make_instance
from llmopt.workloads.chen import (
    CHEN_LMSYS_TRACE,
    chen_geometric,
    chen_lg,
    chen_lmsys,
    chen_two_point,
    chen_worst_case,
    geometric_pmf,
    lg_pmf,
)
from llmopt.workloads.predictions import apply_prediction_spec

SYNTHETIC = {"chen-two-point": chen_two_point, "chen-geometric": chen_geometric, "chen-lg": chen_lg,
             "chen-worst-case": chen_worst_case}


def _have_worst_distribution() -> bool:
    try:
        from llmopt.papers.chen.theory import figure1_worst_distribution  # noqa: F401
    except ImportError:
        return False
    return True


needs_data = pytest.mark.skipif(not have_trace_data(), reason="staged trace data (shared/data/traces, not in the "
                                "repository) not found; set LLMOPT_DATA to the folder that holds traces/")
needs_theory = pytest.mark.skipif(not _have_worst_distribution(),
                                  reason="llmopt.papers.chen.theory.figure1_worst_distribution not available")


def _outputs(inst) -> np.ndarray:
    return np.array([r.output for r in inst.requests])


def test_registered():
    for name in (*SYNTHETIC, "chen-lmsys"):
        assert name in WORKLOADS
    inst = make_instance("chen-two-point", 3, n=50)
    assert inst == chen_two_point(3, n=50)


# --- C §5.1 two-point ---------------------------------------------------------------------------------


def test_two_point_fractions():
    inst = chen_two_point(0)  # n = 2000, ℓ = 10, u = 100, t = u/ℓ = 10: 2000·10/11 = 1818.18
    out = _outputs(inst)
    assert (out == 10).sum() == 1818 and (out == 100).sum() == 182
    assert all((r.lower, r.upper, r.prompt, r.arrival) == (10, 100, 1, 0) for r in inst.requests)
    assert isinstance(inst, Instance) and inst.name == "chen-two-point/seed=0"
    half = _outputs(chen_two_point(0, n=7, t=1))  # 3.5 short: the half goes to the short length
    assert (half == 10).sum() == 4 and (half == 100).sum() == 3
    assert set(_outputs(chen_two_point(0, n=9, ell=2, u=5, t=2))) == {2, 5}
    assert (_outputs(chen_two_point(0, n=9, ell=2, u=5, t=2)) == 2).sum() == 6
    assert (_outputs(chen_two_point(0, n=10, t=0)) == 100).all()
    iid = _outputs(chen_two_point(1, exact=False))
    assert set(iid) == {10, 100} and abs((iid == 10).mean() - 10 / 11) < 0.03
    # shuffled: the long requests are not all at the end
    assert 0 < (out[:1000] == 100).sum() < 182
    with pytest.raises(ValueError, match="ell < u"):
        chen_two_point(0, ell=5, u=5)
    with pytest.raises(ValueError, match="t = x_ell/x_u"):
        chen_two_point(0, t=-1)


def test_default_memory():
    assert chen_two_point(0).M == math.ceil(2000 * (1 + (10 * 10 + 100) / 11) / 10)  # 3837
    assert chen_two_point(0, M=500).M == 500 and chen_two_point(0, M=500).name == "chen-two-point/seed=0 M=500"
    with pytest.raises(ValueError, match=r"M = 100 is below s \+ u = 1 \+ 100"):
        chen_two_point(0, M=100)
    g = chen_geometric(0, q=0.5, n=100)  # n·(s + E[o])/10 = 30 < s + u_max
    assert g.M == 1001


# --- C §5.2–5.3 geometric families --------------------------------------------------------------------


def test_geometric_and_lg_laws():
    q, p = 0.8, 0.2
    k = np.arange(1, 61)
    assert np.allclose(geometric_pmf(q, 60), p * q ** (k - 1) / (1 - q ** 60))
    lg = k * p**2 * q ** (k - 1)
    assert np.allclose(lg_pmf(q, 60), lg / lg.sum())
    n = 20_000
    g = _outputs(chen_geometric(0, n=n, q=0.5, M=40_000))
    assert abs(g.mean() - 2.0) < 5 * math.sqrt(2.0 / n)  # G(1/2): mean 1/p = 2, variance q/p² = 2
    l2 = _outputs(chen_lg(0, n=n, p=0.5, M=40_000))
    assert abs(l2.mean() - 3.0) < 5 * math.sqrt(2.0 / n)  # LG(1/2) = 1 + NegBin(2, 1/2): mean 3, variance 2
    inst = chen_lg(0)
    assert all((r.lower, r.upper) == (1, 1000) for r in inst.requests) and inst.name == "chen-lg/seed=0"
    assert chen_lg(0, q=0.8).name == "chen-lg/seed=0 q=0.8" and chen_lg(0, p=0.5).name == "chen-lg/seed=0 p=0.5"
    with pytest.raises(ValueError, match="not both"):
        chen_geometric(0, q=0.5, p=0.5)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        chen_geometric(0, q=1.0)


def test_geometric_matches_theory_module():
    theory = pytest.importorskip("llmopt.papers.chen.theory")
    for ours, name in ((geometric_pmf, "geometric_distribution"), (lg_pmf, "lg_distribution")):
        theirs = getattr(theory, name, None)
        if theirs is None:
            pytest.skip(f"chen_theory has no {name}")
        x = np.asarray(theirs(0.7, 200))
        assert np.allclose(ours(0.7, 200), x / x.sum())


def test_exact_proportions():
    inst = chen_geometric(0, n=1000, q=0.5, exact=True)
    counts = np.bincount(_outputs(inst), minlength=1001)[1:]
    assert counts.sum() == 1000 and np.all(np.abs(counts - 1000 * geometric_pmf(0.5, 1000)) < 1)


@needs_theory
def test_worst_case():
    from llmopt.papers.chen.theory import figure1_worst_distribution

    inst = chen_worst_case(0, u=50, n=3000, exact=True)
    pmf = np.asarray(figure1_worst_distribution(50))
    counts = np.bincount(_outputs(inst), minlength=51)[1:]
    assert np.all(np.abs(counts - 3000 * pmf) < 1) and counts[-1] > 0  # the atom on u is there
    assert all((r.lower, r.upper, r.prompt) == (1, 50, 1) for r in inst.requests)
    small_n = chen_worst_case(0, u=200, n=200)  # n·(s + E[o])/10 ≈ 90: the floor s + u applies
    assert small_n.M == 201 and _outputs(small_n).max() <= 200


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_seeded(name):
    params = {"u": 30} if name == "chen-worst-case" else {}
    if name == "chen-worst-case" and not _have_worst_distribution():
        pytest.skip("no chen_theory.figure1_worst_distribution")
    a, b, c = (make_instance(name, s, n=300, **params) for s in (5, 5, 6))
    assert a == b and a.name == b.name
    assert not np.array_equal(_outputs(a), _outputs(c))
    assert a.name.startswith(f"{name}/seed=5") and c.name.startswith(f"{name}/seed=6")
    assert [r.id for r in a.requests] == [f"r{i}" for i in range(300)]


# --- C §6 LMSYS ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lmsys0() -> TimedInstance:
    return chen_lmsys(0)


@needs_data
def test_lmsys_sample(lmsys0):
    inst = lmsys0
    assert isinstance(inst, TimedInstance) and inst.n == 2000 and inst.M == 16492
    assert inst.name == "chen-lmsys/seed=0 n=2000"
    assert all(r.arrival == 0.0 and r.lower is None for r in inst.requests)
    assert len(set(inst.ids)) == 2000 and all(i.startswith("lmsys-") for i in inst.ids)
    out = _outputs(inst)
    assert 1 <= out.min() and out.max() <= 1000
    assert 80 < out.mean() < 110  # the staged file's output mean is 94.3 (C: 85)
    from llmopt.workloads.traces.data import cached_trace as _cached_trace
    from llmopt.workloads.traces.data import data_dir

    tr = _cached_trace(str(data_dir() / "traces" / CHEN_LMSYS_TRACE), "lmsys", 16492, "drop")
    pos = {int(row): i for i, row in enumerate(tr.source_rows)}
    for r in inst.requests[:50]:
        i = pos[int(r.id.split("-")[1])]
        assert (r.prompt, r.output) == (int(tr.prompt[i]), int(tr.output[i]))


@needs_data
def test_lmsys_nested_prefixes(lmsys0):
    for n in (200, 1000):
        assert chen_lmsys(0, n=n).requests == lmsys0.requests[:n]
    other = chen_lmsys(1, n=200)
    assert other.requests != lmsys0.requests[:200] and chen_lmsys(1, n=200) == other


@needs_data
def test_lmsys_predictions(lmsys0):
    exp1 = chen_lmsys(0, n=400, predictions="shared:lower=1,upper=1000")
    assert all((r.lower, r.upper) == (1, 1000) for r in exp1.requests)
    assert exp1.name == "chen-lmsys/seed=0 n=400 predictions=shared:lower=1,upper=1000"
    exp2 = chen_lmsys(0, n=400, predictions="bins:width=100,count=10")
    assert all(r.lower == 100 * ((r.output - 1) // 100) + 1 and r.upper == r.lower + 99 for r in exp2.requests)
    for x in (0.1, 0.95, 0.99):
        exp3 = chen_lmsys(0, n=400, predictions=f"relative:x={x}")
        assert exp3 == apply_prediction_spec(chen_lmsys(0, n=400), f"relative:x={x}", 0)
        assert all(r.lower <= r.output <= r.upper for r in exp3.requests)
    noisy = chen_lmsys(0, n=400, predictions="noisy")
    assert noisy.predictions_may_miss and noisy.name.endswith("noisy:sigma=0.5,width=0.5,seed=0")


@needs_data
def test_lmsys_max_output():
    inst = chen_lmsys(2, n=300, sample=300, max_output=50)
    assert _outputs(inst).max() <= 50 and inst.name == "chen-lmsys/seed=2 n=300 sample=300 max_output=50"
    from llmopt.workloads.traces import TraceError

    with pytest.raises(TraceError, match="only .* usable rows with output <= max_output = 1"):
        chen_lmsys(0, n=10, max_output=1, sample=100_000)
    with pytest.raises(ValueError, match="exceeds the sample"):
        chen_lmsys(0, n=3000)
