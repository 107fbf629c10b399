"""W (Wang–Ye–Zhou) workloads: the EC.4.2 synthetic distributions and the §7 mixed LMSYS + arXiv dataset.

The synthetic laws are checked against their *analytic* distributions after rounding half
to even and clipping (DIGEST §5.2, I-27), computed here from scipy's CDFs: the mean and the
variance within five standard errors, and a chi-square goodness-of-fit test of the whole
probability mass function. The mixed-dataset tests need the staged trace files
(shared/data, not in the repository) and are skipped with a reason when they are absent.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import have_trace_data
from scipy import stats

from llmopt.model.instance import Instance
from llmopt.model.timed_instance import TimedInstance
from llmopt.workloads import WORKLOADS, make_instance
from llmopt.workloads.wang import (
    WANG_DISTRIBUTIONS,
    wang_binomial,
    wang_exponential,
    wang_mixed,
    wang_mixed_synthetic,
    wang_normal,
    wang_synthetic,
    wang_uniform,
)

HI = 50  # s_max = o_max = 50
# W App. EC.4.2's parameters, restated here (not imported) so that a changed constant in the module fails the tests
NORMAL_MEAN, NORMAL_STD = 25.0, 8.33
EXP_SCALE = 5.0  # λ = 0.2
MIXED_EXP_SHARE, MIXED_EXP_SCALE = 0.8, 10.0  # λ = 0.1
MIXED_LOGNORMAL_MU, MIXED_LOGNORMAL_SIGMA = math.log(40.0), 0.25
N_BIG = 40_000  # requests per distribution for the moment and goodness-of-fit tests
N_MIXED = 200_000  # Mixed: enough for the chi-square test to see the lognormal's σ (0.25 vs 0.3)

REGISTERED = {
    "wang-uniform": ("uniform", wang_uniform),
    "wang-normal": ("normal", wang_normal),
    "wang-binomial": ("binomial", wang_binomial),
    "wang-exponential": ("exponential", wang_exponential),
    "wang-mixed-synthetic": ("mixed", wang_mixed_synthetic),
}


# --- analytic laws of the rounded, clipped lengths -----------------------------------------------------


def _rounded_clipped_pmf(cdf, hi: int = HI) -> np.ndarray:
    """pmf on 1..hi of ``clip(rint(X), 1, hi)`` for a continuous ``X`` with this CDF (ties have measure 0)."""
    edges = np.arange(1, hi) + 0.5  # 1.5, 2.5, ..., hi - 0.5
    c = np.concatenate(([0.0], cdf(edges), [1.0]))
    return np.diff(c)


def _mixed_prompt_pmf(hi: int = HI) -> np.ndarray:
    """pmf of the Mixed prompt law: X = 80 % Exp(10) / 20 % LN(ln 40, 0.25); X > 50 → U{40..49}; rint; clip."""
    lognorm = stats.lognorm(s=MIXED_LOGNORMAL_SIGMA, scale=math.exp(MIXED_LOGNORMAL_MU))

    def cdf(x):
        return MIXED_EXP_SHARE * stats.expon(scale=MIXED_EXP_SCALE).cdf(x) + (1 - MIXED_EXP_SHARE) * lognorm.cdf(x)

    edges = np.concatenate(([-np.inf], np.arange(1, hi) + 0.5, [hi]))  # the last bin is [hi - 0.5, hi]
    pmf = np.diff(cdf(edges))
    pmf[hi - 10 - 1:hi - 1] += (1 - cdf(hi)) / 10  # remapped values are uniform on 40..49
    return pmf


def _pmf(dist: str, prompt: bool) -> np.ndarray:
    if dist == "uniform":
        return np.full(HI, 1 / HI)
    if dist == "binomial":
        return stats.binom(HI - 1, 0.5).pmf(np.arange(HI))
    if dist == "normal":
        return _rounded_clipped_pmf(stats.norm(NORMAL_MEAN, NORMAL_STD).cdf)
    if dist == "mixed" and prompt:
        return _mixed_prompt_pmf()
    return _rounded_clipped_pmf(stats.expon(scale=EXP_SCALE).cdf)  # exponential, and Mixed outputs


def _lengths(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    return np.array([r.prompt for r in inst.requests]), np.array([r.output for r in inst.requests])


@pytest.fixture(scope="module")
def big() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {d: _lengths(wang_synthetic(0, d, n=N_MIXED if d == "mixed" else N_BIG)) for d in WANG_DISTRIBUTIONS}


CASES = [(d, p) for d in WANG_DISTRIBUTIONS for p in (True, False)]
CASE_IDS = [f"{d}-{'prompt' if p else 'output'}" for d, p in CASES]


# --- synthetic distributions ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_registered_defaults(name):
    dist, fn = REGISTERED[name]
    inst = make_instance(name, 3)
    assert WORKLOADS.get(name) is fn
    assert inst == fn(3) == wang_synthetic(3, dist)
    assert inst.name == f"{name}/seed=3"
    assert inst.M == 100
    assert inst.n == (200 if dist == "mixed" else 100)
    assert all(r.arrival == 0 for r in inst.requests)
    assert all(1 <= r.prompt <= HI and 1 <= r.output <= HI and r.prompt + r.output <= inst.M for r in inst.requests)
    assert inst.ids == tuple(f"r{i}" for i in range(inst.n))


@pytest.mark.parametrize("dist", WANG_DISTRIBUTIONS)
def test_deterministic_per_seed(dist):
    a, b, c = wang_synthetic(5, dist), wang_synthetic(5, dist), wang_synthetic(6, dist)
    assert a == b
    assert a.requests != c.requests
    others = [wang_synthetic(5, d, n=a.n) for d in WANG_DISTRIBUTIONS if d != dist]
    assert all(o.requests != a.requests for o in others)


@pytest.mark.parametrize(("dist", "prompt"), CASES, ids=CASE_IDS)
def test_support(big, dist, prompt):
    x = big[dist][0 if prompt else 1]
    assert x.dtype.kind == "i" and x.min() >= 1 and x.max() <= HI
    expected = np.flatnonzero(_pmf(dist, prompt) * len(x) >= 20) + 1  # values expected at least 20 times
    assert set(expected.tolist()) <= set(np.unique(x).tolist())
    if dist == "uniform":
        assert set(np.unique(x).tolist()) == set(range(1, HI + 1))


@pytest.mark.parametrize(("dist", "prompt"), CASES, ids=CASE_IDS)
def test_mean_and_variance_match_the_rounded_clipped_law(big, dist, prompt):
    x = big[dist][0 if prompt else 1]
    pmf = _pmf(dist, prompt)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    k = np.arange(1, HI + 1)
    mean = float(pmf @ k)
    var = float(pmf @ (k - mean) ** 2)
    m4 = float(pmf @ (k - mean) ** 4)
    if dist in ("uniform", "binomial"):
        assert mean == pytest.approx(25.5)
        assert var == pytest.approx(208.25 if dist == "uniform" else 12.25)
    assert abs(x.mean() - mean) <= 5 * math.sqrt(var / len(x))
    assert abs(x.var() - var) <= 5 * math.sqrt((m4 - var**2) / len(x))


@pytest.mark.parametrize(("dist", "prompt"), CASES, ids=CASE_IDS)
def test_goodness_of_fit(big, dist, prompt):
    """Chi-square test of the whole pmf (bins with fewer than 5 expected counts pooled)."""
    x = big[dist][0 if prompt else 1]
    expected = _pmf(dist, prompt) * len(x)
    observed = np.bincount(x, minlength=HI + 1)[1:].astype(float)
    keep = expected >= 5
    exp_b = np.append(expected[keep], expected[~keep].sum())
    obs_b = np.append(observed[keep], observed[~keep].sum())
    if exp_b[-1] < 5:  # pool the tail into the last kept bin
        exp_b, obs_b = exp_b[:-1], obs_b[:-1]
        exp_b[-1] += expected[~keep].sum()
        obs_b[-1] += observed[~keep].sum()
    chi2 = float(((obs_b - exp_b) ** 2 / exp_b).sum())
    pvalue = stats.chi2(len(exp_b) - 1).sf(chi2)
    assert pvalue > 1e-4, f"chi2 = {chi2:.1f} on {len(exp_b) - 1} df"


def test_exponential_analytic_values():
    """Spot values of the rounded/clipped Exp(scale 5): P(1) = 1 − e^{−1.5/5}; the mean is below 5 + 1/2."""
    pmf = _pmf("exponential", True)
    assert pmf[0] == pytest.approx(1 - math.exp(-1.5 / 5))
    mean = float(pmf @ np.arange(1, HI + 1))
    assert 5.0 < mean < 5.5


def test_mixed_prompts_are_bimodal(big):
    p = big["mixed"][0]
    frac_above_30 = float((p > 30).mean())
    expected = float(_mixed_prompt_pmf()[30:].sum())  # P(X >= 30.5) ≈ 0.8·e^{−3.05} + 0.2·P(LN >= 30.5)
    assert 0.19 < expected < 0.23
    assert abs(frac_above_30 - expected) <= 5 * math.sqrt(expected * (1 - expected) / len(p))
    # the law has a valley near 26 and a second mode in the 30s/40s (the lognormal and the remap to 40..49)
    pmf = _mixed_prompt_pmf()
    valley = int(np.argmin(pmf[:35])) + 1
    assert 20 <= valley <= 30 and pmf[valley - 1] < 0.8 * pmf[39:45].mean() < pmf[0]
    counts = np.bincount(p, minlength=HI + 1)
    low_mode, dip, high_mode = counts[1:8].mean(), counts[24:29].mean(), counts[40:45].mean()
    assert high_mode > 1.25 * dip and low_mode > 3 * high_mode
    outputs = big["mixed"][1]
    assert (outputs > 30).mean() < 0.01  # outputs are the unimodal Exp(5)


def test_parameters_and_errors():
    inst = wang_synthetic(1, "uniform", n=7, M=60, s_max=20, o_max=40)
    assert inst.n == 7 and inst.M == 60 and inst.name == "wang-uniform/seed=1 n=7 M=60 s_max=20 o_max=40"
    assert all(r.prompt <= 20 and r.output <= 40 for r in inst.requests)
    assert wang_uniform(1, n=7).name == "wang-uniform/seed=1 n=7"
    with pytest.raises(ValueError, match="unknown distribution 'gamma'"):
        wang_synthetic(0, "gamma")
    with pytest.raises(ValueError, match="exceeds M = 90"):
        wang_synthetic(0, "uniform", M=90)
    with pytest.raises(ValueError, match="seed"):
        wang_synthetic(-1)
    with pytest.raises(ValueError, match="n must be"):
        wang_synthetic(0, n=0)


# --- W §7 mixed dataset ------------------------------------------------------------------------------------


needs_data = pytest.mark.skipif(not have_trace_data(), reason="staged trace data (shared/data/traces, not in the "
                                "repository) not found; set LLMOPT_DATA to the folder that holds traces/")


@pytest.fixture(scope="module")
def mixed0() -> TimedInstance:
    return wang_mixed(0)


@needs_data
def test_mixed_composition(mixed0):
    inst = mixed0
    assert isinstance(inst, TimedInstance)
    assert inst.n == 2000 and inst.M == 16492 and inst.name == "wang-mixed/seed=0 n=2000"
    sources = [r.id.split("-")[0] for r in inst.requests]
    assert sources.count("lmsys") == 1600 and sources.count("arxiv") == 400
    assert len(set(inst.ids)) == 2000
    assert all(r.arrival == 0.0 for r in inst.requests)
    assert all(r.prompt >= 1 and r.output >= 1 and r.peak <= 16492 for r in inst.requests)
    # merged by a permutation, not LMSYS block then arXiv block
    first = sources[:1000]
    assert 700 <= first.count("lmsys") <= 900
    assert "arxiv" in sources[:50] and "lmsys" in sources[-50:]


@needs_data
def test_mixed_ids_name_the_file_rows(mixed0):
    from llmopt.workloads.traces.data import cached_trace as _cached_trace
    from llmopt.workloads.traces.data import data_dir

    files = {"lmsys": ("lmsys_chat_1m_words_in256_out256.csv", "lmsys"),
             "arxiv": ("arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", "arxiv")}
    for source, (name, fmt) in files.items():
        tr = _cached_trace(str(data_dir() / "traces" / name), fmt, 16492, "drop")
        pos = {int(row): i for i, row in enumerate(tr.source_rows)}
        for r in mixed0.requests:
            if r.id.startswith(source + "-"):
                i = pos[int(r.id.split("-")[1])]
                assert (r.prompt, r.output) == (int(tr.prompt[i]), int(tr.output[i]))


@needs_data
def test_mixed_prefixes_are_nested(mixed0):
    for n in range(200, 2001, 200):
        inst = make_instance("wang-mixed", 0, n=n)
        assert inst.requests == mixed0.requests[:n]
        assert inst.name == f"wang-mixed/seed=0 n={n}"


@needs_data
def test_mixed_seeds(mixed0):
    assert wang_mixed(0, n=2000) == mixed0
    other = wang_mixed(1)
    assert other.ids != mixed0.ids
    assert len(set(other.ids) & set(mixed0.ids)) < 200


@needs_data
def test_mixed_means_documented(mixed0):
    """The seed-0 means quoted in wang_mixed's docstring (W Fig. 7: 542.75 and 127.50)."""
    p = np.array([r.prompt for r in mixed0.requests])
    o = np.array([r.output for r in mixed0.requests])
    assert p.mean() == pytest.approx(551.384) and np.median(p) == 26
    assert o.mean() == pytest.approx(136.6625) and np.median(o) == 98
    assert f"{p.mean():.2f}" in wang_mixed.__doc__ and f"{o.mean():.2f}" in wang_mixed.__doc__
    assert abs(p.mean() - 542.75) / 542.75 < 0.05 and abs(o.mean() - 127.50) / 127.50 < 0.10


@needs_data
def test_mixed_errors():
    with pytest.raises(ValueError, match="exceeds"):
        wang_mixed(0, n=2001)
    with pytest.raises(ValueError, match="n must be"):
        wang_mixed(0, n=0)
    small = wang_mixed(2, n=30, n_lmsys=20, n_arxiv=10)
    assert small.n == 30 and sum(r.id.startswith("arxiv") for r in small.requests) == 10
