"""Suite ``chen-cor2``: C's Corollary 2 (multi-interval A_min, C §4.2, App. Algorithm 5) by simulation.

C claims that with disjoint buckets ``[ℓ_1, u_1], …, [ℓ_m, u_m]`` the revised A_min (``õ``
starts at the bucket's ``ℓ_j``) is ``O(log α⁻¹)``-competitive, "at least equal to the basic
setting". The suite runs A_min's worst distribution on ``[1, 50]`` (the ``chen-theory`` entry
F1 u = 50: n = 20,000, s = 1, M for 50 waves of work) with the shared interval ``[1, 50]`` and
with buckets of width 25, 10, 5 and 1 (a perfect classifier, ``bins`` predictions), seeds 0–2,
and both A_min readings that matter (certified, the default, and repaired; see
``results/chen/amin-readings/README.md``). :func:`cor2_report` writes ``cor2.md``: per layout the
ratio to H-SF of ``a-min-multi`` beside the closed form of
:func:`llmopt.papers.chen.claims.multi_interval_cr` on the seed's empirical distribution, and
the claim check: every bucketed ratio at most the single interval's, per seed and reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from llmopt.bench.suites import Suite, WorkloadSpec
from llmopt.papers.chen.theory_report import MAIN_N, MAIN_WAVES, _mean_worst, waves_M

__all__ = ["CHEN_COR2", "COR2_U", "COR2_WIDTHS", "COR2_POLICIES", "cor2_frame", "cor2_report"]

#: Upper end of the shared interval (the ``chen-theory`` entry F1 u = 50).
COR2_U = 50
#: Bucket widths; ``COR2_U`` itself is the basic setting (one interval ``[1, u]``).
COR2_WIDTHS = (50, 25, 10, 5, 1)
#: H-SF (C's reference), then multi-interval A_min in the two readings. On the single interval
#: ``a-min-multi`` is A_min itself (one bucket).
COR2_POLICIES = ("h-sf", "a-min-multi", "a-min-multi:running_estimate=repaired")
_READINGS = {"a-min-multi": "certified", "a-min-multi:running_estimate=repaired": "repaired"}


def _predictions(width: int) -> str | None:
    return None if width == COR2_U else f"bins:width={width},count={-(-COR2_U // width)}"


def _workloads() -> tuple[WorkloadSpec, ...]:
    M = waves_M(MAIN_N, _mean_worst(COR2_U), COR2_U, MAIN_WAVES)
    specs = []
    for w in COR2_WIDTHS:
        params: dict[str, Any] = {"u": COR2_U, "n": MAIN_N, "M": M}
        if _predictions(w) is not None:
            params["predictions"] = _predictions(w)
        specs.append(WorkloadSpec("chen-worst-case", (0, 1, 2), params, f"width {w}"))
    return tuple(specs)


CHEN_COR2 = Suite(
    name="chen-cor2",
    description="Chen–Ye–Zhou Corollary 2: multi-interval A_min (certified and repaired readings) with buckets of "
                "width 50 (the basic interval [1, 50]), 25, 10, 5, 1 on A_min's worst distribution on [1, 50] "
                "(n = 20,000, s = 1, 50 waves), ratios to H-SF beside the closed form; claim: every bucketed ratio "
                "<= the single interval's",
    workloads=_workloads(),
    policies=COR2_POLICIES,
    reference="h-sf",
    search_evals=0,
    bounds=("energy",),
    max_nnz=1,
    kind="hindsight",
    extra_report="llmopt.papers.chen.cor2:cor2_report",
)


def cor2_frame(records: Sequence[Mapping[str, Any]], suite: Suite = CHEN_COR2) -> pd.DataFrame:
    """One row per (width, seed, reading): ``ratio`` = TEL(a-min-multi) / TEL(H-SF) and ``closed`` =
    the closed form at the instance's ``s`` on its empirical output distribution (the instance is
    regenerated). Records with an error or an unverified schedule are left out."""
    from llmopt.papers.chen.claims import multi_interval_cr
    from llmopt.papers.chen.theory import empirical_distribution
    from llmopt.workloads import WORKLOADS

    rows = []
    for rec in records:
        params = dict(rec.get("params") or {})
        if rec.get("error") or not rec.get("verified_h-sf"):
            continue
        width = next(w for w in COR2_WIDTHS if _predictions(w) == params.get("predictions"))
        inst = WORKLOADS.get(str(rec["workload"]))(int(rec["seed"]), **params)
        x = empirical_distribution([r.output for r in inst.requests], 1, COR2_U)
        closed = multi_interval_cr(x, list(range(1, COR2_U + 1, width)), inst.requests[0].prompt)
        for p, reading in _READINGS.items():
            if rec.get(f"verified_{p}"):
                rows.append({"width": width, "seed": int(rec["seed"]), "reading": reading, "closed": closed,
                             "ratio": rec[f"tel_{p}"] / rec["tel_h-sf"]})
    return pd.DataFrame(rows, columns=["width", "seed", "reading", "closed", "ratio"])


def cor2_claim(df: pd.DataFrame) -> dict[tuple[int, str], bool]:
    """Per (seed, reading): every bucketed ratio at most the basic setting's (width ``COR2_U``)."""
    out = {}
    for (seed, reading), g in df.groupby(["seed", "reading"]):
        base = g.loc[g["width"] == COR2_U, "ratio"]
        if len(base):
            out[(int(seed), str(reading))] = bool((g["ratio"] <= float(base.iloc[0]) + 1e-12).all())
    return out


def cor2_report(out_dir: str | Path, suite: Suite, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ``extra_report`` of ``chen-cor2``: ``cor2.md`` and ``cor2.csv`` (see the module docstring)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    df = cor2_frame(records, suite)
    df.to_csv(out / "cor2.csv", index=False)
    claim = cor2_claim(df)
    lines = ["# C Corollary 2 — multi-interval A_min against the basic setting (suite `chen-cor2`)", "",
             "Ratio TEL(a-min-multi) / TEL(H-SF), mean over seeds [min–max], beside the closed form "
             "(`multi_interval_cr`, Lemma 2 per bucket, at s = 1 on each seed's empirical distribution). "
             "Width 50 is the basic setting (one interval [1, 50], i.e. A_min); width 1 is an exact prediction.",
             "", "| width | closed form | certified | repaired |", "|---|---|---|---|"]
    for w in COR2_WIDTHS:
        g = df[df["width"] == w]
        if g.empty:
            continue
        cells = []
        for reading in _READINGS.values():
            r = g.loc[g["reading"] == reading, "ratio"]
            cells.append(f"{r.mean():.3f} [{r.min():.3f}–{r.max():.3f}]" if len(r) else "—")
        lines.append(f"| {w} | {g['closed'].mean():.3f} | {cells[0]} | {cells[1]} |")
    held = sum(claim.values())
    lines += ["", f"Claim \"at least equal to the basic setting\" (every bucketed ratio <= width 50's, per seed and "
              f"reading): **holds in {held} of {len(claim)}** (seed, reading) pairs"
              + ("." if held == len(claim) else f"; fails for {sorted(k for k, v in claim.items() if not v)}."), ""]
    (out / "cor2.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["cor2.md, cor2.csv: Corollary 2 — multi-interval A_min per bucket width, closed form, claim check"]
