"""Which valid inequalities strengthen the hindsight LP? A measurement.

The time-indexed LP of the hindsight IP (J (1)–(4), relaxed) lies 18–31 % below OPT on the
``ip-scaling`` instances whose OPT is proven (``results/jaillet/ip-scaling``) and about 30 % below the
best schedule found on the J §5.1 trials. This study adds three families of valid
inequalities to that LP and reports how far each moves it, on instances with a proven OPT
(AM1, M = 40, n = 6 … 20, OPT from ``results/jaillet/ip-scaling/trials.jsonl``) and on two J §5.1 trials
(against the best schedule in ``results/jaillet/synthetic/trials.jsonl``):

``cg-rows``
    Chvátal–Gomory rounding of each memory row (3) with multiplier ``m/(M+1)``, ``m = 2 … 5``:
    ``Σ ⌊m·w/(M+1)⌋·x <= m − 1`` — "fewer than ``m`` requests above ``M/m`` at any time", the
    simplest lifted covers of the GUB-knapsack rows. Valid: ``m`` items of weight ``> M/m`` exceed ``M``.
``pair``
    Pairwise overlap limits: if request ``i`` starts at ``k``, request ``j`` cannot start at any
    ``k + d`` with ``d ∈ D_ij`` (the offsets at which their joint memory exceeds ``M`` at the end of
    their overlap, computed here for every pair), so ``x_{i,k} + Σ_{d ∈ D_ij} x_{j,k+d} <= 1``.
    Separated from the LP optimum, at most 2,000 per round, until none is violated.
``biclique``
    The same, lifted to intervals of ``i``'s starts: ``Σ_{k ∈ [k0, k0+e]} x_{i,k} + Σ_{k' ∈ J} x_{j,k'} <= 1``
    where every pair in the two sets conflicts (``J`` = the common conflict interval); ``e ≤ 14``
    is chosen greedily for the most violated cut.

Every family is a valid inequality for the integer schedules (so each LP value is a valid bound),
but this study only *measures*: the numbers are not passed through the checker, and no bound
stage is registered for them — the gains were too small to be worth a certificate type (see the
table in ``results/opt/bound-directions/README.md``).

    llmopt study run bound-directions --out results/opt/bound-directions   # the README's table (about 3 minutes)
    llmopt study run bound-directions --quick                         # the n <= 8 instances only

``README.md``'s table is written below a ``<!-- table -->`` line; the text above it is kept.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.formulations.hindsight_ip import formulate
from llmopt.model.instance import Instance
from llmopt.model.windows import start_windows
from llmopt.opt.studies import RESULTS, StudyError, run_main, study_command
from llmopt.workloads import make_instance

FAMILIES = ("lp", "cg-rows", "pair", "biclique")
MAX_ROUNDS = 30
CUTS_PER_ROUND = 2000


def conflict_offsets(si: int, oi: int, sj: int, oj: int, M: int) -> tuple[int, int] | None:
    """``[d_lo, d_hi]``: the offsets ``d = k_j − k_i`` at which ``i`` and ``j`` overlap with joint memory ``> M``.

    Both run on ``(k, k+o]``; their joint memory grows while both run, so it peaks at the end of
    the overlap, ``min(k_i + o_i, k_j + o_j)``, where it is ``s_i + s_j + 2·min(o_i, d + o_j) − d``
    (for ``k_i = 0``): a concave function of ``d``, so the conflicting offsets form an interval."""
    d = np.arange(-oj + 1, oi)
    c = d[si + sj + 2 * np.minimum(oi, d + oj) - d > M]
    return (int(c.min()), int(c.max())) if c.size else None


class CutLP:
    """The LP relaxation of the hindsight IP (binary form) in a live HiGHS object, with rows to add."""

    def __init__(self, instance: Instance, upper_bound_tel: int) -> None:
        import highspy

        from llmopt.solvers.highs import highs_lp, new_highs

        self.instance = instance
        model = formulate(instance, start_windows(instance, upper_bound_tel), aggregate=False)
        x = model.cols("x")
        self.req = np.asarray(x.labels["class"])  # aggregate=False: class = request position
        self.k = np.asarray(x.labels["k"])
        self.memory = model.A[model.rows("eq3_memory").slice].tocsr()
        self.h = new_highs(highspy)
        self.h.setOptionValue("output_flag", False)
        self.h.setOptionValue("threads", 1)
        self.h.passModel(highs_lp(highspy, model.relax()))  # carries the objective's offset
        n = instance.n
        self.first = np.searchsorted(self.req, np.arange(n))
        self.width = np.bincount(self.req, minlength=n)
        self.lo = self.k[self.first]

    def add_rows(self, rows: list[np.ndarray], vals: list[np.ndarray], upper: list[float]) -> None:
        for idx, v, u in zip(rows, vals, upper, strict=True):
            self.h.addRow(-np.inf, float(u), len(idx), idx.astype(np.int32), v.astype(float))

    def solve(self) -> tuple[float, np.ndarray]:
        self.h.run()
        return self.h.getInfo().objective_function_value, np.asarray(self.h.getSolution().col_value)


def add_cg_rows(lp: CutLP, ms: tuple[int, ...] = (2, 3, 4, 5)) -> None:
    M = lp.instance.M
    mem = lp.memory
    for m in ms:
        for t in range(mem.shape[0]):
            cols = mem.indices[mem.indptr[t]:mem.indptr[t + 1]]
            w = np.floor(m * mem.data[mem.indptr[t]:mem.indptr[t + 1]] / (M + 1))
            keep = w > 0
            if keep.any():
                lp.add_rows([cols[keep]], [w[keep]], [m - 1])


def separate_overlap(lp: CutLP, x: np.ndarray, offsets: dict, lift: bool) -> list[tuple[float, np.ndarray]]:
    """Violated pair (``lift=False``) or biclique (``lift=True``) cuts at the LP point ``x``."""
    n = lp.instance.n
    cuts = []
    pref = [np.concatenate([[0.0], np.cumsum(x[lp.first[j]:lp.first[j] + lp.width[j]])]) for j in range(n)]
    for i in range(n):
        xi = x[lp.first[i]:lp.first[i] + lp.width[i]]
        for ki in np.flatnonzero(xi > 1e-6):
            k = lp.lo[i] + ki
            for j in range(n):
                if j == i or offsets[i, j] is None:
                    continue
                d_lo, d_hi = offsets[i, j]
                b = min(k + d_hi - lp.lo[j], lp.width[j] - 1)
                best = None
                for e in range(15 if lift else 1):  # i's starts k … k+e; j's common conflict starts a … b
                    if ki + e >= lp.width[i]:
                        break
                    a = max(k + e + d_lo - lp.lo[j], 0)
                    if a > b:
                        break
                    val = xi[ki:ki + e + 1].sum() + pref[j][b + 1] - pref[j][a]
                    if best is None or val > best[0]:
                        best = (val, e, a)
                if best is not None and best[0] > 1 + 1e-4:
                    val, e, a = best
                    idx = np.concatenate([lp.first[i] + np.arange(ki, ki + e + 1), lp.first[j] + np.arange(a, b + 1)])
                    cuts.append((val, idx))
    cuts.sort(key=lambda c: -c[0])
    return cuts[:CUTS_PER_ROUND]


def bound(instance: Instance, upper_bound_tel: int, family: str) -> tuple[float, int, float]:
    """``(LP value, rounds, seconds)`` of the LP with the cuts of ``family``."""
    t0 = time.perf_counter()
    lp = CutLP(instance, upper_bound_tel)
    if family == "cg-rows":
        add_cg_rows(lp)
    value, x = lp.solve()
    rounds = 0
    if family in ("pair", "biclique"):
        reqs = instance.requests
        offsets = {(i, j): conflict_offsets(reqs[i].prompt, reqs[i].output, reqs[j].prompt, reqs[j].output,
                                            instance.M)
                   for i in range(instance.n) for j in range(instance.n) if i != j}
        while rounds < MAX_ROUNDS:
            cuts = separate_overlap(lp, x, offsets, lift=family == "biclique")
            if not cuts:
                break
            lp.add_rows([c[1] for c in cuts], [np.ones(len(c[1])) for c in cuts], [1.0] * len(cuts))
            value, x = lp.solve()
            rounds += 1
    return value, rounds, time.perf_counter() - t0


def cases(max_n: int = 20) -> list[tuple[str, Instance, int, str]]:
    """``(label, instance, reference TEL, "OPT" or "best found")``; ``max_n`` < 20 leaves out the larger
    ``ip-scaling`` points and the two J §5.1 trials (the quick form)."""
    out = []
    for line in (RESULTS / "jaillet" / "ip-scaling" / "trials.jsonl").read_text().splitlines():
        r = json.loads(line)
        p = r["params"]
        if r["M"] == 40 and r["n"] <= max_n:
            inst = make_instance(r["workload"], seed=r["seed"], n_range=tuple(p["n_range"]),
                                 M_range=tuple(p["M_range"]))
            kind = "OPT" if r["status"] == "optimal" else "best found"
            out.append((f"AM1 M=40 n={r['n']}", inst, r["incumbent"], kind))
    trials = {(r["workload"], r["seed"]): r for r in map(json.loads, (RESULTS / "jaillet" / "synthetic" /
                                                                         "trials.jsonl").read_text().splitlines())}
    for wl, seed in (("jaillet-am2", 0), ("jaillet-am1", 1)) if max_n >= 20 else ():
        r = trials[wl, seed]
        inst = make_instance(wl, seed=seed)
        out.append((f"{wl} seed {seed} (n={inst.n}, M={inst.M})", inst, r["incumbent"], "best found"))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: ``--out DIR`` (the README's table), ``--max-n N``."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="write README.md's table here")
    ap.add_argument("--max-n", type=int, default=20, help="largest ip-scaling n (below 20: no J §5.1 trials)")
    ap.add_argument("--command", default="", help="the command line to quote in the README")
    args = ap.parse_args(argv)
    lines = ["| instance | reference | " + " | ".join(FAMILIES) + " | biclique rounds | biclique s |",
             "|---|---:|" + "---:|" * len(FAMILIES) + "---:|---:|"]
    for label, inst, ref, kind in cases(args.max_n):
        cells = []
        rounds = secs = 0.0
        for fam in FAMILIES:
            value, r, s = bound(inst, ref, fam)
            cells.append(f"{value:.0f} ({(ref - value) / ref:.1%})")
            if fam == "biclique":
                rounds, secs = r, s
        row = f"| {label} | {ref} ({kind}) | " + " | ".join(cells) + f" | {rounds:.0f} | {secs:.1f} |"
        print(row, flush=True)
        lines.append(row)
    if args.out is not None:
        out = args.out
        out.mkdir(parents=True, exist_ok=True)
        text = (out / "README.md").read_text() if (out / "README.md").exists() else ""
        # keep the hand-written head of the README, replace the table
        head = text.split("<!-- table -->")[0] if "<!-- table -->" in text else "# Valid inequalities\n\n"
        (out / "README.md").write_text(
            head + "<!-- table -->\n" + "\n".join(lines)
            + f"\n\nMeasured with `{args.command or 'llmopt study run bound-directions'}` on {platform.machine()} "
            f"(Python {platform.python_version()}). Each cell: the LP value and its gap "
            "(reference − value) / reference.\n")


OPTIONS: dict[str, str] = {}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``README.md``'s table into ``out`` (``quick``: the ``ip-scaling`` points with n <= 8); returns it."""
    if seeds is not None:
        raise StudyError("bound-directions takes no --seeds (its instances are fixed)")
    argv = ["--out", str(out), "--max-n", "8" if quick else "20",
            "--command", study_command("bound-directions", out, quick=quick)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s ``README.md`` (written by :func:`run`: it needs the LPs)."""
    path = Path(out) / "README.md"
    return [str(path)] if path.exists() else []
