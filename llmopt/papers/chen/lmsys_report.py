"""C §6 (Chen–Ye–Zhou): the ``chen-lmsys`` suite, its Figures 5–7 report, and the memory study.

C runs A_max, A_min and H-SF on 2,000 sampled LMSYS-Chat-1M conversations (all at time 0,
Llama2-70B on 2×A100, subsets of n = 200, 400, …, 2,000) under three settings of interval
predictions (DIGEST §5.3):

* Exp. 1 (Figure 5): one shared interval ``[1, 1000]`` for every request;
* Exp. 2 (Figure 6): the bin of width 100 that holds ``o_i`` (``[1,100], …, [901,1000]``);
* Exp. 3 (Figure 7): ``[(1−x)o_i, (1+x)o_i]`` for ``x ∈ {0.1, 0.95, 0.99}``.

:data:`CHEN_LMSYS` is that suite (registered in :data:`llmopt.bench.suites.SUITES`): workload
``chen-lmsys`` (:func:`llmopt.workloads.chen.chen_lmsys`; for one seed the ten sizes are
nested prefixes of one sample), seeds 0–2 (three samples; the tie-breaking randomness of
A_max and A_min is the task seed), the continuous engine with the default cost model and
``M = 16,492``; H-SF is the reference. Multi-interval A_min (``a-min-multi``) is left out: on
C's bins it *is* A_min (``õ_i`` starts at the bin's lower end in both, and it draws the same
random numbers, so the schedules are identical — see ``results/perf/chen-policy-speed``), and it
rejects the overlapping intervals of Exp. 3 by design.

:func:`figures_5_7` is the suite's ``extra_report``: the Figure 5–7 tables and plots (mean
latency vs n per algorithm, A_min/H-SF and A_max/H-SF per row, A_min's evictions and
recomputed tokens) and C's qualitative claims (:data:`CLAIMS`), each turned into an
explicit numerical criterion and evaluated at every n as *holds* / *does not hold*. Only
schedules the checker verified enter a number (the harness records ``latency_*`` only
for verified schedules and ``verified_*`` says so).

Run ``python -m llmopt.papers.chen.lmsys_study --out results/chen/lmsys`` (about 2 minutes) for
the statistics of the samples (:func:`sample_statistics`, ``sample.md``); the memory study
(:func:`m_sensitivity_frame`, ``m_sensitivity.md``): Exp. 1–3 at several memories ``M``, in
the continuous engine (cost model) and the discrete engine (TEL in iterations, no cost
model), C Lemma 2's fluid-limit ratio beside them (:func:`lemma2_exp1`,
:func:`lemma2_c_like`) and the claims at every ``M`` (:func:`claims_by_m`); where A_min's
cancellations fall (:func:`eviction_profile`, ``evictions.md``); and the whole suite in the
discrete engine with the claims checked (:func:`discrete_records`, ``discrete.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from llmopt.bench.suites import Suite, WorkloadSpec
from llmopt.report.summary import format_cell

__all__ = [
    "CHEN_LMSYS",
    "CLAIMS",
    "CLOSE",
    "HALVED",
    "POLICIES",
    "SEEDS",
    "SETTINGS",
    "SIGNIFICANT",
    "SIZES",
    "SUBSTANTIAL",
    "WELL",
    "ClaimResult",
    "ClaimSpec",
    "Setting",
    "evaluate_claims",
    "figures_5_7",
    "figures_frame",
    "figures_lines",
]


class Setting(NamedTuple):
    """One of C's prediction settings: report key, prediction spec, C figure, title."""

    key: str
    spec: str
    figure: int
    title: str


#: C §6's five prediction settings, in the paper's order.
SETTINGS: tuple[Setting, ...] = (
    Setting("exp1", "shared:lower=1,upper=1000", 5, "Exp. 1: one shared interval [1, 1000]"),
    Setting("exp2", "bins:width=100,count=10", 6, "Exp. 2: ten bins [1,100], …, [901,1000]"),
    Setting("exp3 x=0.1", "relative:x=0.1", 7, "Exp. 3: [(1−x)o, (1+x)o], x = 0.1"),
    Setting("exp3 x=0.95", "relative:x=0.95", 7, "Exp. 3: [(1−x)o, (1+x)o], x = 0.95"),
    Setting("exp3 x=0.99", "relative:x=0.99", 7, "Exp. 3: [(1−x)o, (1+x)o], x = 0.99"),
)
_BY_SPEC = {s.spec: s for s in SETTINGS}
_BY_KEY = {s.key: s for s in SETTINGS}

#: C's request counts ("random subsets of size 200, 400, ..., up to 2,000").
SIZES: tuple[int, ...] = tuple(range(200, 2001, 200))
#: Three samples (C states no repetitions; DIGEST I-44).
SEEDS: tuple[int, ...] = (0, 1, 2)
#: C §6's algorithms; H-SF (full information) is the reference.
POLICIES: tuple[str, ...] = ("h-sf", "a-max", "a-min")
_NAMES = {"h-sf": "H-SF", "a-max": "A_max", "a-min": "A_min", "a-min-multi": "A_min (multi)",
          "a-random": "A_random", "a-ell": "A_ℓ"}

#: "A few percent" / "nearly identical" / "closely approaches" / "remains close": at most 5 % above H-SF.
CLOSE = 0.05
#: "Perform well, achieving low average latency" (Exp. 3, x = 0.1): at most 10 % above H-SF.
WELL = 0.10
#: "Deteriorates significantly" / "poor … high latency": at least 25 % worse.
SIGNIFICANT = 1.25
#: "A substantial improvement": at least 20 % lower (ratio <= 0.8).
SUBSTANTIAL = 0.80
#: "Nearly halved": a ratio between 0.4 and 0.6.
HALVED = (0.40, 0.60)

CHEN_LMSYS = Suite(
    name="chen-lmsys",
    bounds=("lp",),  # its committed results were made before the "auto" default
    description="Chen–Ye–Zhou §6 Figures 5–7 reproduction: 2,000 LMSYS-Chat-1M requests sampled per seed "
                "(word counts, lmsys_chat_1m_words_in256_out256.csv), all at t = 0, subsets n = 200, 400, …, "
                "2,000 (nested prefixes); predictions: Exp. 1 one interval [1, 1000], Exp. 2 ten bins of width "
                "100, Exp. 3 [(1−x)o, (1+x)o] for x = 0.1, 0.95, 0.99; H-SF (full information), A_max, A_min; "
                "Llama2-70B on 2×A100 cost model, M = 16,492",
    workloads=tuple(
        WorkloadSpec("chen-lmsys", SEEDS, {"n": n, "predictions": s.spec}, f"{s.key} n={n}")
        for s in SETTINGS for n in SIZES
    ),
    policies=POLICIES,
    reference="h-sf",
    kind="trace",
    extra_report="llmopt.papers.chen.lmsys_report:figures_5_7",
)


# --- reading the records ------------------------------------------------------------------------------

_Key = tuple[str, int, int]  # (setting key, n, seed)


def _index(records: Sequence[Mapping[str, Any]]) -> dict[_Key, Mapping[str, Any]]:
    """Records of C's settings by ``(setting, n, seed)``; records with a task error are left out."""
    out: dict[_Key, Mapping[str, Any]] = {}
    for r in records:
        params = r.get("params") or {}
        setting = _BY_SPEC.get(str(params.get("predictions")))
        if setting is None or r.get("error") or params.get("n") is None:
            continue
        out[(setting.key, int(params["n"]), int(r["seed"]))] = r
    return out


def _latency(rec: Mapping[str, Any] | None, policy: str) -> float | None:
    """The verified mean latency of ``policy`` in ``rec`` (``None`` unless the checker accepted it)."""
    if rec is None or rec.get(f"verified_{policy}") is not True:
        return None
    v = rec.get(f"latency_{policy}")
    return None if v is None else float(v)


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _settings_in(suite: Suite) -> list[Setting]:
    """C's settings that the suite runs, in the paper's order."""
    specs = {str(w.params.get("predictions")) for w in suite.workloads}
    return [s for s in SETTINGS if s.spec in specs]


def _sizes_in(suite: Suite) -> list[int]:
    return sorted({int(w.params["n"]) for w in suite.workloads if w.params.get("n") is not None})


def _seeds_in(suite: Suite) -> list[int]:
    return sorted({s for w in suite.workloads for s in w.seeds})


def figures_frame(records: Sequence[Mapping[str, Any]], suite: Suite) -> pd.DataFrame:
    """Long frame: one row per (setting, n, algorithm).

    Columns: ``setting``, ``figure``, ``n``, ``algorithm``, ``tasks`` (records without a task
    error), ``trials`` (verified schedules), ``latency_mean`` / ``latency_min`` /
    ``latency_max`` (s, over verified schedules), ``evictions_mean``, ``recomputed_mean``
    (tokens thrown away by evictions, over verified schedules) and ``sim_s_mean``.
    """
    idx = _index(records)
    rows = []
    for s in _settings_in(suite):
        for n in _sizes_in(suite):
            recs = [r for (k, nn, _), r in idx.items() if k == s.key and nn == n]
            for p in suite.policies:
                ok = [r for r in recs if _latency(r, p) is not None]
                lat = [float(r[f"latency_{p}"]) for r in ok]
                rows.append({
                    "setting": s.key, "figure": s.figure, "n": n, "algorithm": p, "tasks": len(recs),
                    "trials": len(ok), "latency_mean": _mean(lat),
                    "latency_min": min(lat) if lat else None, "latency_max": max(lat) if lat else None,
                    "evictions_mean": _mean([float(r[f"evictions_{p}"]) for r in ok
                                             if r.get(f"evictions_{p}") is not None]),
                    "recomputed_mean": _mean([float(r[f"recomputed_{p}"]) for r in ok
                                              if r.get(f"recomputed_{p}") is not None]),
                    "sim_s_mean": _mean([float(r[f"sim_s_{p}"]) for r in ok if r.get(f"sim_s_{p}") is not None]),
                })
    return pd.DataFrame(rows)


class _Ratio(NamedTuple):
    value: float | None  # ratio of the means over the seeds where both are verified
    worst_high: float | None  # largest per-seed ratio
    worst_low: float | None  # smallest per-seed ratio
    pairs: int


def _ratio(idx: Mapping[_Key, Mapping[str, Any]], num: tuple[str, str], den: tuple[str, str], n: int,
           seeds: Sequence[int]) -> _Ratio:
    """``mean(num) / mean(den)`` over the seeds where both schedules are verified (same sample per seed)."""
    a, b = [], []
    for seed in seeds:
        x = _latency(idx.get((num[0], n, seed)), num[1])
        y = _latency(idx.get((den[0], n, seed)), den[1])
        if x is not None and y is not None and y > 0:
            a.append(x)
            b.append(y)
    if not a:
        return _Ratio(None, None, None, 0)
    per_seed = [x / y for x, y in zip(a, b)]
    return _Ratio(float(np.mean(a)) / float(np.mean(b)), max(per_seed), min(per_seed), len(a))


# --- claims -------------------------------------------------------------------------------------------


class ClaimSpec(NamedTuple):
    """One of C's qualitative claims as a criterion on a latency ratio, checked at every n.

    The quantity is ``mean latency of num / mean latency of den`` (over the seeds where both
    are verified); ``op`` is ``"<="``, ``"<"``, ``">="`` or ``"in"`` (``bound = (lo, hi)``).
    """

    key: str
    figure: str
    paper: str
    criterion: str
    num: tuple[str, str]
    den: tuple[str, str]
    op: str
    bound: tuple[float, ...]


def _close(setting: str, fig: str, key: str, paper: str) -> ClaimSpec:
    return ClaimSpec(key, fig, paper, f"A_min / H-SF ≤ {1 + CLOSE:.2f} ({setting}; 'a few percent' = {CLOSE:.0%})",
                     (setting, "a-min"), (setting, "h-sf"), "<=", (1 + CLOSE,))


#: C §6's claims (DIGEST §5.3) and the issue's summary of them, with the thresholds above.
CLAIMS: tuple[ClaimSpec, ...] = (
    _close("exp1", "Fig. 5", "fig5-amin-close",
           "A_min achieves average latency nearly identical to the benchmark H-SF"),
    ClaimSpec("fig5-amax-poor", "Fig. 5",
              "A_max: poor memory utilization — each batch includes very few requests, resulting in high latency",
              f"A_max / H-SF ≥ {SIGNIFICANT:.2f} (exp1)", ("exp1", "a-max"), ("exp1", "h-sf"), ">=",
              (SIGNIFICANT,)),
    ClaimSpec("fig5-amin-beats-amax", "Fig. 5", "(implied) A_min well below A_max under [1, 1000]",
              "A_min / A_max < 1 (exp1)", ("exp1", "a-min"), ("exp1", "a-max"), "<", (1.0,)),
    ClaimSpec("fig6-amax-improves", "Fig. 6",
              "A_max achieves a substantial improvement over its performance in Experiment 1",
              f"A_max(exp2) / A_max(exp1) ≤ {SUBSTANTIAL:.2f}", ("exp2", "a-max"), ("exp1", "a-max"), "<=",
              (SUBSTANTIAL,)),
    ClaimSpec("fig6-amax-halved", "Fig. 6", "the average latency [of A_max] is nearly halved",
              f"A_max(exp2) / A_max(exp1) in [{HALVED[0]:.2f}, {HALVED[1]:.2f}]", ("exp2", "a-max"),
              ("exp1", "a-max"), "in", HALVED),
    _close("exp2", "Fig. 6", "fig6-amin-close", "the performance of A_min closely approaches that of H-SF"),
    ClaimSpec("fig7-x0.1-amax-well", "Fig. 7", "x = 0.1: both A_max and A_min perform well (A_max)",
              f"A_max / H-SF ≤ {1 + WELL:.2f} (x = 0.1)", ("exp3 x=0.1", "a-max"), ("exp3 x=0.1", "h-sf"),
              "<=", (1 + WELL,)),
    ClaimSpec("fig7-x0.1-amin-well", "Fig. 7", "x = 0.1: both A_max and A_min perform well (A_min)",
              f"A_min / H-SF ≤ {1 + WELL:.2f} (x = 0.1)", ("exp3 x=0.1", "a-min"), ("exp3 x=0.1", "h-sf"),
              "<=", (1 + WELL,)),
    ClaimSpec("fig7-amax-worse-0.95", "Fig. 7", "x = 0.95: the performance of A_max deteriorates significantly",
              f"A_max(x = 0.95) / A_max(x = 0.1) ≥ {SIGNIFICANT:.2f}", ("exp3 x=0.95", "a-max"),
              ("exp3 x=0.1", "a-max"), ">=", (SIGNIFICANT,)),
    ClaimSpec("fig7-amax-worse-0.99", "Fig. 7", "x = 0.99: the performance of A_max deteriorates significantly",
              f"A_max(x = 0.99) / A_max(x = 0.1) ≥ {SIGNIFICANT:.2f}", ("exp3 x=0.99", "a-max"),
              ("exp3 x=0.1", "a-max"), ">=", (SIGNIFICANT,)),
    _close("exp3 x=0.1", "Fig. 7", "fig7-amin-close-0.1",
           "(issue 10) A_min within a few percent of H-SF in all three experiments (x = 0.1)"),
    _close("exp3 x=0.95", "Fig. 7", "fig7-amin-close-0.95",
           "x = 0.95: A_min remains close to the hindsight benchmark H-SF"),
    _close("exp3 x=0.99", "Fig. 7", "fig7-amin-close-0.99",
           "x = 0.99: A_min remains close to the hindsight benchmark H-SF"),
    ClaimSpec("fig7-amin-beats-amax-0.95", "Fig. 7",
              "(implied) x = 0.95: in contrast to A_max, A_min keeps latency low",
              "A_min / A_max < 1 (x = 0.95)", ("exp3 x=0.95", "a-min"), ("exp3 x=0.95", "a-max"), "<", (1.0,)),
    ClaimSpec("fig7-amin-beats-amax-0.99", "Fig. 7",
              "(implied) x = 0.99: in contrast to A_max, A_min keeps latency low",
              "A_min / A_max < 1 (x = 0.99)", ("exp3 x=0.99", "a-min"), ("exp3 x=0.99", "a-max"), "<", (1.0,)),
)

HOLDS = "holds"
FAILS = "does not hold"
NO_DATA = "not evaluated"


class ClaimResult(NamedTuple):
    """A claim evaluated at every n: the verdict, the ratio per n and its worst case."""

    spec: ClaimSpec
    verdict: str
    values: dict[int, float]
    worst_n: int | None
    worst: float | None
    worst_seed: float | None
    held_at: tuple[int, ...]
    failed_at: tuple[int, ...]


def _passes(op: str, bound: tuple[float, ...], v: float) -> bool:
    if op == "<=":
        return v <= bound[0]
    if op == "<":
        return v < bound[0]
    if op == ">=":
        return v >= bound[0]
    if op == "in":
        return bound[0] <= v <= bound[1]
    raise ValueError(f"unknown claim operator {op!r}")


def _badness(op: str, bound: tuple[float, ...], v: float) -> float:
    """How far ``v`` is on the failing side (larger = worse), to pick the worst n."""
    if op in ("<=", "<"):
        return v - bound[0]
    if op == ">=":
        return bound[0] - v
    return max(bound[0] - v, v - bound[1])


def evaluate_claims(records: Sequence[Mapping[str, Any]], suite: Suite,
                    claims: Sequence[ClaimSpec] = CLAIMS) -> list[ClaimResult]:
    """Evaluate every claim at every n of ``suite`` (see :class:`ClaimSpec`).

    A claim *holds* when its criterion is met at every size with data, *does not hold*
    otherwise, and is *not evaluated* when no size has both numbers (e.g. the suite does not
    run the setting). ``worst`` is the value at the worst size; ``worst_seed`` the worst
    single-seed ratio over all sizes.
    """
    idx = _index(records)
    sizes, seeds = _sizes_in(suite), _seeds_in(suite)
    out = []
    for c in claims:
        values: dict[int, float] = {}
        seed_worst: list[float] = []
        for n in sizes:
            r = _ratio(idx, c.num, c.den, n, seeds)
            if r.value is None:
                continue
            values[n] = r.value
            assert r.worst_high is not None and r.worst_low is not None
            seed_worst.append(r.worst_low if c.op == ">=" else r.worst_high)
        if not values:
            out.append(ClaimResult(c, NO_DATA, {}, None, None, None, (), ()))
            continue
        held = tuple(n for n, v in values.items() if _passes(c.op, c.bound, v))
        failed = tuple(n for n in values if n not in held)
        worst_n = max(values, key=lambda n: _badness(c.op, c.bound, values[n]))
        ws = (min(seed_worst) if c.op == ">=" else
              max(seed_worst, key=lambda v: _badness(c.op, c.bound, v)))
        out.append(ClaimResult(c, HOLDS if not failed else FAILS, values, worst_n, values[worst_n], ws, held,
                               failed))
    return out


def _claim_measured(res: ClaimResult) -> str:
    if not res.values:
        return "—"
    ns = sorted(res.values)
    lo, hi = min(res.values.values()), max(res.values.values())
    text = (f"{lo:.3f}–{hi:.3f} over n = {ns[0]}…{ns[-1]}; worst {res.worst:.3f} at n = {res.worst_n} "
            f"(worst single seed {res.worst_seed:.3f}); n = {ns[-1]}: {res.values[ns[-1]]:.3f}")
    if res.failed_at and res.held_at:
        text += f"; met at n = {', '.join(map(str, res.held_at))} only"
    return text


# --- the extra report -----------------------------------------------------------------------------------


def _fmt(v: Any, digits: int = 2) -> str:
    return format_cell(v, digits)


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]], digits: Sequence[int] | None = None) -> list[str]:
    digits = list(digits) if digits is not None else [2] * len(head)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        lines.append("| " + " | ".join(_fmt(v, d) for v, d in zip(row, digits)) + " |")
    return lines


def _cell(df: pd.DataFrame, setting: str, n: int, p: str, col: str) -> Any:
    sub = df[(df["setting"] == setting) & (df["n"] == n) & (df["algorithm"] == p)]
    if sub.empty:
        return None
    v = sub.iloc[0][col]
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def figures_lines(suite: Suite, records: Sequence[Mapping[str, Any]], df: pd.DataFrame, title: str,
                  intro: str, unit: str) -> list[str]:
    """Markdown of the Figure 5–7 tables and C's claims checked on them.

    Shared by the continuous and the discrete reports and the C-like study.

    Parameters
    ----------
    suite : Suite
        The suite the records come from (its settings, sizes, seeds, policies and reference).
    records : sequence of mapping
        The suite's task records.
    df : pandas.DataFrame
        :func:`figures_frame` of the records.
    title, intro : str
        The section's heading line and its first paragraph.
    unit : str
        What the latency columns measure (e.g. ``"latency, seconds"``).

    Returns
    -------
    list of str
        The section's Markdown lines.
    """
    idx = _index(records)
    settings, sizes, seeds = _settings_in(suite), _sizes_in(suite), _seeds_in(suite)
    pols = list(suite.policies)
    ref = suite.reference
    lines = [title, "", intro, ""]
    big = sizes[-1] if sizes else None
    if big is not None and settings:
        lines += [f"## At n = {big:,} (mean {unit})", ""]
        head = ["setting", *(_NAMES.get(p, p) for p in pols)]
        head += [f"{_NAMES.get(p, p)} / {_NAMES.get(ref, ref)}" for p in pols if p != ref]
        rows = []
        for s in settings:
            lat = [_cell(df, s.key, big, p, "latency_mean") for p in pols]
            ratios = [_ratio(idx, (s.key, p), (s.key, ref), big, seeds).value for p in pols if p != ref]
            rows.append([s.key, *lat, *ratios])
        lines += _table(head, rows, [0] + [2] * len(pols) + [3] * (len(pols) - 1)) + [""]
    for fig in sorted({s.figure for s in settings}):
        for s in [s for s in settings if s.figure == fig]:
            lines += [f"## Figure {fig} — {s.title} (`{s.spec}`; mean {unit})", ""]
            head = ["n", "trials", *(_NAMES.get(p, p) for p in pols)]
            extra = [p for p in pols if p != ref]
            head += [f"{_NAMES.get(p, p)} / {_NAMES.get(ref, ref)}" for p in extra]
            head += [f"{_NAMES.get(p, p)} / {_NAMES.get(ref, ref)} worst seed" for p in extra if p == "a-min"]
            has_amin = "a-min" in pols
            if has_amin:
                head += ["A_min evictions", "A_min recomputed tokens"]
            rows = []
            for n in sizes:
                trials = min((int(_cell(df, s.key, n, p, "trials") or 0) for p in pols), default=0)
                row: list[Any] = [n, trials, *(_cell(df, s.key, n, p, "latency_mean") for p in pols)]
                rs = {p: _ratio(idx, (s.key, p), (s.key, ref), n, seeds) for p in extra}
                row += [rs[p].value for p in extra]
                row += [rs[p].worst_high for p in extra if p == "a-min"]
                if has_amin:
                    row += [_cell(df, s.key, n, "a-min", "evictions_mean"),
                            _cell(df, s.key, n, "a-min", "recomputed_mean")]
                rows.append(row)
            digits = [0, 0] + [2] * len(pols) + [3] * (len(extra) + (1 if "a-min" in extra else 0))
            digits += [0, 0] if has_amin else []
            lines += _table(head, rows, digits) + [""]
    results = evaluate_claims(records, suite)
    lines += ["## C's claims, checked at every n", "",
              f"Thresholds (ours; C gives none): 'a few percent' / 'nearly identical' / 'closely approaches' / "
              f"'remains close' = at most {CLOSE:.0%} above H-SF; 'perform well' = at most {WELL:.0%} above H-SF; "
              f"'significantly' worse / 'poor' = at least ×{SIGNIFICANT:.2f}; 'substantial improvement' = ratio ≤ "
              f"{SUBSTANTIAL:.2f}; 'nearly halved' = ratio in [{HALVED[0]:.2f}, {HALVED[1]:.2f}]. A claim holds when "
              "its criterion is met at every n (ratios of means over seeds).", ""]
    head = ["claim", "figure", "C says", "criterion", "measured", "verdict"]
    lines += _table(head, [[r.spec.key, r.spec.figure, r.spec.paper, r.spec.criterion, _claim_measured(r),
                            f"**{r.verdict}**" + (f" ({len(r.held_at)} of {len(r.values)} sizes)"
                                                   if r.verdict == FAILS else "")]
                           for r in results])
    return lines


def figures_5_7(out_dir: str | Path, suite: Suite, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Write ``figures_5_7.md`` / ``.csv`` and ``figure5.png``, ``figure6.png``, ``figure7.png``.

    The suite's ``extra_report``: per setting, mean latency (s) vs n per algorithm with the
    ratios A_min/H-SF and A_max/H-SF per row and A_min's evictions and recomputed tokens;
    the table at the largest n; and every claim of :data:`CLAIMS` with its verdict and
    numbers. Returns one line per file written (for ``summary.md``).
    """
    out = Path(out_dir)
    df = figures_frame(records, suite)
    df.to_csv(out / "figures_5_7.csv", index=False)
    seeds = _seeds_in(suite)
    intro = (f"Mean over seeds ({', '.join(map(str, seeds))}) of the mean end-to-end latency of the schedules the "
             f"checker verified (continuous-time engine, cost model `{suite.cost_model}`). Ratios are ratios of "
             "means over the seeds where both schedules are verified; *worst seed* is the largest single-seed "
             "ratio. *Evictions* and *recomputed* (tokens generated and thrown away) are A_min's, mean per run.")
    lines = figures_lines(suite, records, df, f"# {suite.name}: C Figures 5–7 (average end-to-end latency, seconds)",
                           intro, "latency, s")
    (out / "figures_5_7.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    made = ["figures_5_7.md / figures_5_7.csv: latency per setting, n and algorithm, ratios to H-SF, A_min's "
            "evictions, C's claims checked"]
    idx = _index(records)
    settings, sizes, pols = _settings_in(suite), _sizes_in(suite), list(suite.policies)
    for fig in sorted({s.figure for s in settings}):
        mine = [s for s in settings if s.figure == fig]
        if _plot(df, idx, mine, pols, suite.reference, sizes, seeds, out / f"figure{fig}.png", f"C Figure {fig}"):
            made.append(f"figure{fig}.png: {'; '.join(s.title for s in mine)} — latency vs n (band: min–max over "
                        "seeds) and the ratio to H-SF")
    return made


def _plot(df: pd.DataFrame, idx: Mapping[_Key, Mapping[str, Any]], settings: Sequence[Setting], pols: Sequence[str],
          ref: str, sizes: Sequence[int], seeds: Sequence[int], path: Path, title: str) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if df.empty or not sizes:
        return False
    fig, axes = plt.subplots(2, len(settings), figsize=(5.2 * len(settings), 6.6), squeeze=False,
                             gridspec_kw={"height_ratios": [2, 1]})
    for j, s in enumerate(settings):
        ax, rax = axes[0, j], axes[1, j]
        for p in pols:
            sub = df[(df["setting"] == s.key) & (df["algorithm"] == p) & df["latency_mean"].notna()].sort_values("n")
            if sub.empty:
                continue
            color = f"C{list(pols).index(p) % 10}"
            ax.plot(sub["n"], sub["latency_mean"].astype(float), marker="o", ms=3, color=color, label=_NAMES.get(p, p))
            ax.fill_between(sub["n"], sub["latency_min"].astype(float), sub["latency_max"].astype(float), color=color,
                            alpha=0.15)
            if p != ref:
                pts = [(n, _ratio(idx, (s.key, p), (s.key, ref), n, seeds).value) for n in sizes]
                xs = [n for n, v in pts if v is not None]
                rax.plot(xs, [v for _, v in pts if v is not None], marker="o", ms=3, color=color,
                         label=f"{_NAMES.get(p, p)} / {_NAMES.get(ref, ref)}")
        rax.axhline(1 + CLOSE, color="grey", ls="--", lw=0.8, label=f"+{CLOSE:.0%}")
        rax.axhline(1.0, color="k", lw=0.6)
        ax.set_title(s.title, fontsize=9)
        ax.set_ylabel("average latency (s)")
        rax.set_xlabel("number of requests n")
        rax.set_ylabel("ratio to H-SF")
        ax.grid(alpha=0.3)
        rax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        rax.legend(fontsize=7)
    fig.suptitle(title + "\n(ours: LMSYS words, Llama2-70B 2×A100 cost model, M = 16,492)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
