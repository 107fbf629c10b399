"""C §6 study beside the ``chen-lmsys`` suite: the samples against C's statistics, the memory
(``M``) sensitivity, where A_min's cancellations fall, and the whole suite in the discrete engine.

Run ``python -m llmopt.papers.chen.lmsys_study --out results/chen/lmsys`` (about 2 minutes, one core);
it writes ``sample.md``, ``m_sensitivity.md`` / ``.csv``, ``evictions.md`` and ``discrete.md`` /
``.csv`` next to the suite's report (:mod:`llmopt.papers.chen.lmsys_report`), whose claim criteria it
reuses at every memory and in the discrete engine.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from llmopt.bench.suites import WorkloadSpec
from llmopt.papers.chen.lmsys_report import (
    _BY_KEY,
    CHEN_LMSYS,
    CLAIMS,
    HOLDS,
    POLICIES,
    SEEDS,
    SETTINGS,
    SIZES,
    Setting,
    _fmt,
    _table,
    evaluate_claims,
    figures_frame,
    figures_lines,
)

# --- sample statistics and the memory study -------------------------------------------------------------

#: C's reported sample (§6): prompts and outputs, min, max, mean, median, variance.
C_SAMPLE = {"prompt": (1, 468, 41, 11, 4961), "output": (1, 883, 85, 43, 9702)}


def sample_statistics(seeds: Sequence[int] = SEEDS, n: int = 2000) -> pd.DataFrame:
    """Prompt and output statistics of the ``chen-lmsys`` samples (needs the trace data).

    One row per (seed, field): min, max, mean, median, variance (population), and the
    totals ``Σ(s+1)`` and ``Σ(s+o)`` (the memory every request needs at its first token /
    at its last one, if all ran at once).
    """
    from llmopt.workloads.chen import chen_lmsys

    rows = []
    for seed in seeds:
        inst = chen_lmsys(seed, n=n)
        s = np.array([r.prompt for r in inst.requests], dtype=float)
        o = np.array([r.output for r in inst.requests], dtype=float)
        for name, v in (("prompt", s), ("output", o)):
            rows.append({"seed": seed, "field": name, "n": inst.n, "min": int(v.min()), "max": int(v.max()),
                         "mean": float(v.mean()), "median": float(np.median(v)), "variance": float(v.var()),
                         "sum_s_plus_1": int((s + 1).sum()), "sum_s_plus_o": int((s + o).sum())})
    return pd.DataFrame(rows)


def lemma2_exp1(seed: int = 0, n: int = 2000) -> dict[str, float]:
    """C Lemma 2's fluid-limit ``E[TEL(A_min)] / TEL(H-SF)`` for Exp. 1 (``ℓ = 1``) on the sample's outputs.

    Lemma 2 assumes one prompt size ``s``; the sample's prompts differ, so it is evaluated
    at ``s = 1``, the median and the mean prompt. Returns ``{"s=...": ratio}``.
    """
    from llmopt.papers.chen.theory import lemma2_cr
    from llmopt.workloads.chen import chen_lmsys

    inst = chen_lmsys(seed, n=n)
    o = np.array([r.output for r in inst.requests])
    s = np.array([r.prompt for r in inst.requests], dtype=float)
    x = np.bincount(o, minlength=int(o.max()) + 1)[1:].astype(float)
    out = {}
    for label, sv in (("s = 1", 1.0), (f"s = median {np.median(s):g}", float(np.median(s))),
                      (f"s = mean {s.mean():.1f}", float(s.mean()))):
        out[label] = float(lemma2_cr(x, 1, sv))
    return out


def c_like_outputs(median: float = 43.0, mean: float = 85.0, top: int = 883) -> np.ndarray:
    """An output-length distribution shaped like C's sample: a log-normal with C's median and mean,
    discretised to the integers ``1..top`` (C's range) and renormalised.

    ``ln o ~ N(ln median, σ²)`` with ``σ² = 2 ln(mean / median)``; ``P(o = k)`` is the mass of
    ``(k − ½, k + ½]`` (``(0, 1.5]`` for ``k = 1``). With the defaults: median 43, mean 78.8,
    variance 10,824 (C: 43, 85, 9,702; truncation at 883 lowers the mean). Illustrative only:
    C publishes its sample's statistics, not the sample.
    """
    mu, sig = math.log(median), math.sqrt(2.0 * math.log(mean / median))

    def cdf(v: float) -> float:
        return 0.5 * (1.0 + math.erf((math.log(v) - mu) / (sig * math.sqrt(2.0))))

    x = np.array([cdf(k + 0.5) - (cdf(k - 0.5) if k > 1 else 0.0) for k in range(1, top + 1)])
    return x / x.sum()


def lemma2_c_like() -> dict[str, float]:
    """C Lemma 2's ratio (``ℓ = 1``) for :func:`c_like_outputs` at ``s = 1``, C's median 11 and mean 41 prompt."""
    from llmopt.papers.chen.theory import lemma2_cr

    x = c_like_outputs()
    return {f"s = {s}": float(lemma2_cr(x, 1, float(s))) for s in (1, 11, 41)}


#: Memory factors of the study (× 16,492); the sample's Σ(s+o) is added as a last row.
M_FACTORS: tuple[float, ...] = (1, 1.5, 2, 3, 4, 5, 6, 7, 8)
_STUDY_POLICIES = ("h-sf", "a-max", "a-min", "a-random")


def m_sensitivity_frame(seed: int = 0, n: int = 2000, factors: Sequence[float] = M_FACTORS,
                        settings: Sequence[Setting] = SETTINGS, policies: Sequence[str] = _STUDY_POLICIES,
                        base_M: int = 16492, holds_all: bool = True, discrete: bool = True,
                        cost_model: str = "llama2-70b-a100-tp2",
                        instance: Callable[..., Any] | None = None) -> pd.DataFrame:
    """Latency of ``policies`` on one ``chen-lmsys`` sample at several memories ``M`` (needs the data).

    For every ``M = round(factor · base_M)`` (and, with ``holds_all``, ``M = Σ(s_i + o_i)``,
    a memory that holds the whole sample at its peak) and every setting, each policy runs in
    the continuous engine (cost model) and, with ``discrete``, in the discrete engine (one
    step per iteration, no cost model); every schedule is re-verified by the matching
    checker and an unverified one gives ``None``. The sample is the same for every ``M``
    (no row of the trace has ``s + o`` above 16,492). ``instance`` builds the sample as
    ``instance(seed, n=…, predictions=…, M=…)``; default
    :func:`llmopt.workloads.chen.chen_lmsys` (the C-like sweep passes
    :func:`llmopt.papers.chen.c_like.c_like_instance`).

    Returns
    -------
    pandas.DataFrame
        One row per (M, setting): ``factor``, ``M``, ``setting``, and per policy ``p``:
        ``cont_<p>`` (mean latency, s), ``disc_<p>`` (TEL / n, iterations), and of the
        continuous run ``makespan_<p>`` (s), ``evictions_<p>``, ``recomputed_<p>``.
    """
    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.engine.discrete import simulate
    from llmopt.policies import make_policy_spec
    from llmopt.verify.checker import check_schedule
    from llmopt.verify.timed import check_timed_schedule
    from llmopt.workloads.chen import chen_lmsys
    from llmopt.workloads.traces import to_discrete_instance

    build = chen_lmsys if instance is None else instance
    cost = make_cost_model(cost_model)
    peak = sum(r.prompt + r.output for r in build(seed, n=n).requests)
    memories = [(float(f), int(round(f * base_M))) for f in factors]
    if holds_all:
        memories.append((peak / base_M, peak))
    rows = []
    for factor, M in memories:
        for s in settings:
            inst = build(seed, n=n, predictions=s.spec, M=M)
            row: dict[str, Any] = {"factor": factor, "M": M, "setting": s.key}
            dinst = to_discrete_instance(inst, 1.0) if discrete else None
            for p in policies:
                sched = simulate_continuous(inst, make_policy_spec(p, seed=seed), cost)
                chk = check_timed_schedule(inst, sched.starts, sched.batch_start, sched.batch_duration, cost,
                                           evictions=sched.evictions)
                ok = chk.ok and chk.mean_latency is not None and sched.mean_latency is not None and \
                    abs(chk.mean_latency - sched.mean_latency) <= 1e-9 * max(1.0, sched.mean_latency)
                row[f"cont_{p}"] = chk.mean_latency if ok else None
                row[f"makespan_{p}"] = sched.makespan if ok else None
                row[f"evictions_{p}"] = len(sched.evictions)
                row[f"recomputed_{p}"] = sched.recomputed_tokens
                if dinst is not None:
                    d = simulate(dinst, make_policy_spec(p, seed=seed))
                    dchk = check_schedule(dinst, d.starts, evictions=d.evictions)
                    row[f"disc_{p}"] = dchk.tel / dinst.n if dchk.ok and dchk.tel == d.tel else None
            rows.append(row)
    return pd.DataFrame(rows)


def _study_records(df: pd.DataFrame, engine: str, seed: int, n: int) -> list[dict[str, Any]]:
    """Rows of :func:`m_sensitivity_frame` for one ``M`` as harness-like records (``engine``: cont or disc)."""
    recs = []
    for _, row in df.iterrows():
        setting = _BY_KEY.get(str(row["setting"]))
        if setting is None:
            continue
        rec: dict[str, Any] = {"workload": "chen-lmsys", "params": {"n": n, "predictions": setting.spec},
                               "seed": seed, "error": None}
        for p in POLICIES:
            v = row.get(f"{engine}_{p}")
            ok = v is not None and not pd.isna(v)
            rec[f"verified_{p}"] = ok
            rec[f"latency_{p}"] = float(v) if ok else None
        recs.append(rec)
    return recs


def claims_by_m(df: pd.DataFrame, engine: str = "cont", seed: int = 0, n: int = 2000) -> pd.DataFrame:
    """Every claim of :data:`CLAIMS` evaluated on one sample (``seed``, ``n``) at every ``M`` of the study.

    Returns one row per claim: ``claim``, ``criterion`` and, per ``M``, the claim's ratio
    and whether its criterion is met (columns ``"<M>"`` holding e.g. ``"0.54 ✓"``).
    """
    import dataclasses

    one = dataclasses.replace(CHEN_LMSYS, workloads=tuple(
        WorkloadSpec("chen-lmsys", (seed,), {"n": n, "predictions": s.spec}, f"{s.key} n={n}") for s in SETTINGS))
    table: dict[str, dict[str, Any]] = {c.key: {"claim": c.key, "criterion": c.criterion} for c in CLAIMS}
    for M in sorted(df["M"].unique()):
        for res in evaluate_claims(_study_records(df[df["M"] == M], engine, seed, n), one):
            v = res.values.get(n)
            table[res.spec.key][f"{int(M):,}"] = "—" if v is None else \
                f"{v:.2f} {'✓' if res.verdict == HOLDS else '✗'}"
    return pd.DataFrame(list(table.values()))


def discrete_records(seeds: Sequence[int] = SEEDS, sizes: Sequence[int] = SIZES,
                     settings: Sequence[Setting] = SETTINGS, policies: Sequence[str] = POLICIES,
                     M: int = 16492) -> list[dict[str, Any]]:
    """The ``chen-lmsys`` tasks in the *discrete* engine (DESIGN §1: one step per iteration, no cost model).

    Same samples, predictions and seeds as the suite; every schedule is re-verified by the
    discrete checker. Returns harness-like records whose ``latency_<p>`` is ``TEL / n`` in
    iterations (``None`` unless verified), so :func:`figures_frame` and
    :func:`evaluate_claims` read them as they read the suite's.
    """
    import time

    from llmopt.engine.discrete import simulate
    from llmopt.policies import make_policy_spec
    from llmopt.verify.checker import check_schedule
    from llmopt.workloads.chen import chen_lmsys
    from llmopt.workloads.traces import to_discrete_instance

    recs = []
    for s in settings:
        for n in sizes:
            for seed in seeds:
                inst = to_discrete_instance(chen_lmsys(seed, n=n, predictions=s.spec, M=M), 1.0)
                rec: dict[str, Any] = {"workload": "chen-lmsys", "params": {"n": n, "predictions": s.spec},
                                       "seed": seed, "error": None, "n": inst.n, "M": inst.M}
                for p in policies:
                    t0 = time.perf_counter()
                    sched = simulate(inst, make_policy_spec(p, seed=seed))
                    chk = check_schedule(inst, sched.starts, evictions=sched.evictions)
                    ok = bool(chk.ok) and chk.tel == sched.tel
                    rec[f"verified_{p}"] = ok
                    rec[f"latency_{p}"] = sched.tel / inst.n if ok else None
                    rec[f"evictions_{p}"] = len(sched.evictions)
                    rec[f"recomputed_{p}"] = sched.recomputed_tokens
                    rec[f"sim_s_{p}"] = round(time.perf_counter() - t0, 3)
                recs.append(rec)
    return recs


def eviction_profile(seed: int = 0, n: int = 2000, M: int = 16492,
                     cost_model: str = "llama2-70b-a100-tp2") -> pd.DataFrame:
    """Where A_min's cancellations fall, per setting (continuous engine, one sample).

    Columns: ``setting``, ``evictions``, ``requests_evicted`` (distinct), ``recomputed``
    (decode tokens thrown away), ``reprefill`` (prompt tokens prefilled again: ``Σ s_i``
    over evictions), ``work_extra`` (``(recomputed + reprefill) / Σ(s_i + o_i)``),
    ``o_evicted_mean`` (mean true output of the evicted request, per eviction) beside
    ``o_mean`` (the sample's), ``short_share`` (share of evictions hitting a request with
    ``o_i`` at most the sample's median), ``makespan_hsf`` / ``makespan_amin`` (s) and the
    mean latencies ``hsf`` / ``amin`` (s).
    """
    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.policies import make_policy_spec
    from llmopt.workloads.chen import chen_lmsys

    cost = make_cost_model(cost_model)
    rows = []
    for s in SETTINGS:
        inst = chen_lmsys(seed, n=n, predictions=s.spec, M=M)
        by_id = {r.id: r for r in inst.requests}
        outs = np.array([r.output for r in inst.requests], dtype=float)
        med = float(np.median(outs))
        hsf = simulate_continuous(inst, make_policy_spec("h-sf", seed=seed), cost)
        amin = simulate_continuous(inst, make_policy_spec("a-min", seed=seed), cost)
        ev = amin.evictions
        o_ev = [by_id[e.id].output for e in ev]
        rows.append({
            "setting": s.key, "evictions": len(ev), "requests_evicted": len({e.id for e in ev}),
            "recomputed": amin.recomputed_tokens, "reprefill": sum(by_id[e.id].prompt for e in ev),
            "work_extra": (amin.recomputed_tokens + sum(by_id[e.id].prompt for e in ev))
            / sum(r.prompt + r.output for r in inst.requests),
            "o_evicted_mean": float(np.mean(o_ev)) if o_ev else None, "o_mean": float(outs.mean()),
            "short_share": float(np.mean([o <= med for o in o_ev])) if o_ev else None,
            "makespan_hsf": hsf.makespan, "makespan_amin": amin.makespan,
            "hsf": hsf.mean_latency, "amin": amin.mean_latency,
        })
    return pd.DataFrame(rows)


def _r(a: Any, b: Any) -> float | None:
    return None if a is None or b is None or pd.isna(a) or pd.isna(b) or not b else float(a) / float(b)


def write_m_sensitivity(out_dir: str | Path, seed: int = 0, n: int = 2000) -> list[str]:
    """Write ``sample.md``, ``m_sensitivity.md`` and ``m_sensitivity.csv`` into ``out_dir`` (needs the data)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    st = sample_statistics(SEEDS, 2000)
    lines = ["# chen-lmsys: the samples beside C's", "",
             "`python -m llmopt.papers.chen.lmsys_study --out results/chen/lmsys`. Word counts of "
             "`lmsys_chat_1m_words_in256_out256.csv` (zero lengths dropped), 2,000 rows drawn per seed; C reports "
             "tokens (its Figure 4 caption says words; DIGEST I-16). Variance is the population variance. "
             "Σ(s+1): memory if every request held its prompt and first token at once; Σ(s+o): at their last tokens.",
             ""]
    rows: list[list[Any]] = []
    for _, r in st.iterrows():
        rows.append([f"seed {r['seed']}", r["field"], int(r["min"]), int(r["max"]), float(r["mean"]),
                     float(r["median"]), float(r["variance"]), int(r["sum_s_plus_1"]), int(r["sum_s_plus_o"])])
    for field_, (lo, hi, mean, med, var) in C_SAMPLE.items():
        rows.append(["C §6", field_, lo, hi, float(mean), float(med), float(var), None, None])
    lines += _table(["sample", "field", "min", "max", "mean", "median", "variance", "Σ(s+1)", "Σ(s+o)"], rows,
                    [0, 0, 0, 0, 2, 1, 0, 0, 0])
    (out / "sample.md").write_text("\n".join(lines) + "\n", encoding="utf-8")

    df = m_sensitivity_frame(seed=seed, n=n)
    df.to_csv(out / "m_sensitivity.csv", index=False)
    lem = lemma2_exp1(seed, n)
    lines = [f"# chen-lmsys: how the C §6 picture depends on the memory M (seed {seed}, n = {n:,})", "",
             f"`python -m llmopt.papers.chen.lmsys_study --out results/chen/lmsys --seed {seed} --n {n}`. One sample, "
             "every setting, M = factor × 16,492 and M = Σ(s+o) of the sample (everything fits at its peak). "
             "*cont*: continuous engine, Llama2-70B 2×A100 cost model, mean latency in seconds; *disc*: discrete "
             "engine (DESIGN §1, one step per iteration, no cost model), TEL / n in iterations. Every schedule "
             "re-verified by its checker. A_random (full information, random order, no cancellation) is the "
             "'no information about o' yardstick. Ratios are to H-SF in the same engine.", "",
             "## Exp. 1 ([1, 1000] for everyone)", ""]
    head = ["M", "× 16,492", "H-SF (s)", "A_max (s)", "A_min (s)", "A_random (s)", "A_min / H-SF cont",
            "A_min / H-SF disc", "A_max / H-SF cont", "A_max / H-SF disc", "A_random / H-SF cont",
            "A_random / H-SF disc", "A_min evictions", "A_min recomputed tokens"]
    rows = []
    for _, r in df[df["setting"] == "exp1"].iterrows():
        rows.append([int(r["M"]), float(r["factor"]), r["cont_h-sf"], r["cont_a-max"], r["cont_a-min"],
                     r["cont_a-random"], _r(r["cont_a-min"], r["cont_h-sf"]),
                     _r(r.get("disc_a-min"), r.get("disc_h-sf")),
                     _r(r["cont_a-max"], r["cont_h-sf"]), _r(r.get("disc_a-max"), r.get("disc_h-sf")),
                     _r(r["cont_a-random"], r["cont_h-sf"]), _r(r.get("disc_a-random"), r.get("disc_h-sf")),
                     int(r["evictions_a-min"]), int(r["recomputed_a-min"])])
    lines += _table(head, rows, [0, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 0, 0])
    lines += ["", "C Lemma 2 (fluid limit M → ∞ with n ∝ M, one prompt size s, ℓ = 1) evaluated on this sample's "
              "output distribution: E[TEL(A_min)] / TEL(H-SF) = "
              + ", ".join(f"{v:.3f} ({k})" for k, v in lem.items()) + ". The same for a log-normal output "
              "distribution with C's median 43 and mean 85, cut to C's range 1–883 (`c_like_outputs`: mean 78.8, "
              "variance 10,824): " + ", ".join(f"{v:.3f} ({k})" for k, v in lemma2_c_like().items()) + ".", "",
              "## Every setting: A_min / H-SF and A_max / H-SF (continuous engine; discrete in brackets)", ""]
    head = ["M", "× 16,492"] + [f"{s.key} A_min/H-SF" for s in SETTINGS] + [f"{s.key} A_max/H-SF" for s in SETTINGS]
    rows = []
    for M in sorted(df["M"].unique()):
        sub = df[df["M"] == M].set_index("setting")
        cells: list[Any] = [int(M), float(sub["factor"].iloc[0])]
        for p in ("a-min", "a-max"):
            for s in SETTINGS:
                if s.key not in sub.index:
                    cells.append(None)
                    continue
                r = sub.loc[s.key]
                c, d = _r(r[f"cont_{p}"], r["cont_h-sf"]), _r(r.get(f"disc_{p}"), r.get("disc_h-sf"))
                cells.append("—" if c is None else f"{c:.2f}" + ("" if d is None else f" ({d:.2f})"))
        rows.append(cells)
    lines += _table(head, rows, [0, 2] + [2] * (2 * len(SETTINGS)))
    lines += ["", "## Every setting: mean latency (s, continuous engine), H-SF / A_max / A_min", ""]
    head = ["M", "× 16,492"] + [s.key for s in SETTINGS]
    rows = []
    for M in sorted(df["M"].unique()):
        sub = df[df["M"] == M].set_index("setting")
        cells = [int(M), float(sub["factor"].iloc[0])]
        for s in SETTINGS:
            r = sub.loc[s.key]
            cells.append(" / ".join(_fmt(r[f"cont_{p}"], 1) for p in ("h-sf", "a-max", "a-min")))
        rows.append(cells)
    lines += _table(head, rows, [0, 2] + [0] * len(SETTINGS))
    for engine, what in (("cont", "continuous engine, cost model"), ("disc", "discrete engine, no cost model")):
        cm = claims_by_m(df, engine, seed, n)
        lines += ["", f"## C's claims at every M ({what}; seed {seed}, n = {n:,})", "",
                  "The claim's ratio (see `figures_5_7.md` for the criteria) and ✓ where the criterion is met.", ""]
        cols = list(cm.columns)
        lines += _table(cols, cm.values.tolist(), [0] * len(cols))
    (out / "m_sensitivity.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["sample.md: the samples' statistics beside C's",
            "m_sensitivity.md / m_sensitivity.csv: every setting at several M, continuous and discrete engines, "
            "C's claims at every M"]


def write_discrete(out_dir: str | Path, seeds: Sequence[int] = SEEDS, sizes: Sequence[int] = SIZES) -> list[str]:
    """Write ``discrete.md`` / ``discrete.csv``: the suite's tasks in the discrete engine, claims checked."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    recs = discrete_records(seeds, sizes)
    df = figures_frame(recs, CHEN_LMSYS)
    df.to_csv(out / "discrete.csv", index=False)
    intro = ("`python -m llmopt.papers.chen.lmsys_study --out results/chen/lmsys`. The `chen-lmsys` tasks "
             "(same samples, "
             "predictions and seeds, M = 16,492) in the **discrete** engine of DESIGN §1: every batch takes one "
             "step whatever its size, so there is no cost model; *latency* is TEL / n in iterations. Every "
             "schedule re-verified by the discrete checker. This is the time model of C's theory.")
    lines = figures_lines(CHEN_LMSYS, recs, df, "# chen-lmsys in the discrete engine (TEL / n, iterations)", intro,
                           "TEL / n, iterations")
    (out / "discrete.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["discrete.md / discrete.csv: the suite's tasks in the discrete engine (no cost model), claims checked"]


def write_evictions(out_dir: str | Path, seed: int = 0, n: int = 2000) -> list[str]:
    """Write ``evictions.md``: :func:`eviction_profile` as a table."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ep = eviction_profile(seed, n)
    lines = [f"# chen-lmsys: where A_min's cancellations fall (seed {seed}, n = {n:,}, M = 16,492, continuous)", "",
             "`python -m llmopt.papers.chen.lmsys_study --out results/chen/lmsys`. *re-prefilled*: prompt tokens "
             "processed again when a cancelled request restarts; *extra work*: (recomputed + re-prefilled) / Σ(s+o); "
             "*o of evicted*: mean true output length of the cancelled request, per cancellation, beside the "
             "sample mean; *short share*: share of cancellations that hit a request with o at most the sample "
             "median.", ""]
    head = ["setting", "evictions", "requests evicted", "recomputed tokens", "re-prefilled tokens", "extra work",
            "o of evicted", "sample mean o", "short share", "makespan H-SF (s)", "makespan A_min (s)",
            "latency H-SF (s)", "latency A_min (s)"]
    rows = [[r["setting"], int(r["evictions"]), int(r["requests_evicted"]), int(r["recomputed"]),
             int(r["reprefill"]), r["work_extra"], r["o_evicted_mean"], r["o_mean"], r["short_share"],
             r["makespan_hsf"], r["makespan_amin"], r["hsf"], r["amin"]] for _, r in ep.iterrows()]
    lines += _table(head, rows, [0, 0, 0, 0, 0, 3, 1, 1, 3, 1, 1, 2, 2])
    (out / "evictions.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["evictions.md: where A_min's cancellations fall, per setting"]


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m llmopt.papers.chen.lmsys_study --out DIR``: sample statistics, the memory study, where A_min's
    cancellations fall, and the suite's tasks in the discrete engine (about 3 minutes on one core)."""
    ap = argparse.ArgumentParser(description="chen-lmsys: sample statistics, M-sensitivity, evictions, discrete "
                                 "engine")
    ap.add_argument("--out", type=Path, default=Path("results/chen/lmsys"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=2000)
    args = ap.parse_args(argv)
    made = write_m_sensitivity(args.out, args.seed, args.n)
    made += write_evictions(args.out, args.seed, args.n)
    made += write_discrete(args.out)
    for line in made:
        print(f"{args.out}/{line}")


if __name__ == "__main__":
    main()
