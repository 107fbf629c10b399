"""Stronger formulations side by side on instances whose OPT is proven: root bound ÷ OPT and seconds.

Instances:

* the proven points of ``results/jaillet/opt-frontier`` (J AM1 at M = 40 with n = 16 and 20, J AM2 with
  T = 20, n = 13; OPT proven there by HiGHS's MIP bound meeting the schedule, taken as stored);
* ``--tiny`` seeded random tiny instances (``n`` 3–6, ``M`` 6–14, arrivals 0–3) whose OPT this study
  finds by exhaustive search (a branch and bound over start times of its own, below).

Bound stages, each certified by the checker (the reported value is the checker's): ``lp``, ``energy``,
``zone-lp`` (the baseline: time-indexed LP + peak zones), ``lag-lp`` (+ completion-lag cliques),
``sawtooth-lp`` (+ idle-gap rows), ``config-lp`` (+ the Dantzig–Wolfe configuration master),
``config-sawtooth-lp`` (both), ``config-lag-lp`` (the three families together). Every stage gets the same
upper-bound schedule (MC-SF's) for its windows and ``--stage-seconds`` (a stage stopped by it reports its best
certified Lagrangian value and says so).

Engines: ``config-lp``'s master is also run by each ``(engine, Wentges α)`` of :data:`ENGINE_RUNS` (the home-made
HiGHS loop and SCIP's pricer plug-in, without and with smoothing; :func:`engines`), each with the stage budget:
LP rounds, columns, wall and CPU seconds, the checker's bound. :func:`engine_pick` names the best run, which
is what :data:`llmopt.opt.cut_bounds.DEFAULT_ENGINE` / ``DEFAULT_SMOOTHING`` should be.

    llmopt study run formulation-comparison --out results/opt/formulation-comparison   # ~35 min, loaded 2 cores
    llmopt study run formulation-comparison --out D --stage-seconds 3600               # config stages to convergence
    llmopt study run formulation-comparison --quick                                     # AM2 n = 13 and 10 tiny

Rows go to ``trials.jsonl`` in the output folder and the table to ``README.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llmopt.model.instance import Instance
from llmopt.opt.studies import RESULTS, StudyError, options_argv, run_main

FRONTIER = RESULTS / "jaillet" / "opt-frontier" / "trials.jsonl"
STAGES = ("lp", "energy", "zone-lp", "lag-lp", "sawtooth-lp", "config-lp", "config-sawtooth-lp", "config-lag-lp")
NEW = ("sawtooth-lp", "config-lp", "config-sawtooth-lp", "config-lag-lp")
#: ``(engine, Wentges α)`` runs of the configuration master (``config-lp``'s loop) compared side by side.
ENGINE_RUNS = (("loop", 0.0), ("pricer", 0.0), ("loop", 0.5), ("pricer", 0.5))


def proven_points() -> list[dict[str, Any]]:
    """The frontier rows whose status is ``optimal``, AM1 by n then AM2 by n."""
    rows = [json.loads(line) for line in FRONTIER.read_text().splitlines() if line.strip()]
    return sorted((r for r in rows if r["status"] == "optimal"), key=lambda r: (r["workload"], r["n"]))


def tiny_instance(seed: int) -> Instance:
    """The seeded tiny instance ``seed``: ``n`` 3–6, ``M`` 6–14, arrivals 0–3, prompts 1–4."""
    rng = random.Random(90_000 + seed)
    M = rng.randint(6, 14)
    rows = []
    for _ in range(rng.randint(3, 6)):
        s = rng.randint(1, min(4, M - 1))
        rows.append((rng.randint(0, 3), s, rng.randint(1, M - s)))
    return Instance.from_tuples(M, rows, name=f"tiny-{seed}/M={M}")


def exhaustive_opt(instance: Instance, upper: int) -> int:
    """OPT by branch and bound over each request's wait (``<= upper − Σo`` by the window argument of
    :func:`llmopt.verify.certificates.certified_windows`), largest peak first; ``upper`` is a feasible TEL."""
    reqs = sorted(instance.requests, key=lambda r: -(r.prompt + r.output))
    slack = upper - instance.total_output
    horizon = max(r.arrival for r in reqs) + slack + max(r.output for r in reqs) + 2
    use = [0] * (horizon + 1)
    best = [slack]

    def rec(d: int, waited: int) -> None:
        if d == len(reqs):
            best[0] = min(best[0], waited)
            return
        r = reqs[d]
        for w in range(best[0] - waited + 1):
            k = r.arrival + w
            if all(use[k + j] + r.prompt + j <= instance.M for j in range(1, r.output + 1)):
                for j in range(1, r.output + 1):
                    use[k + j] += r.prompt + j
                rec(d + 1, waited + w)
                for j in range(1, r.output + 1):
                    use[k + j] -= r.prompt + j

    rec(0, 0)
    return instance.total_output + best[0]


def evaluate(instance: Instance, opt: int, label: str, seconds: float, *, with_engines: bool = True
             ) -> dict[str, Any]:
    """Every stage of :data:`STAGES` on one instance, windows from MC-SF's schedule; with ``with_engines`` also
    :func:`engines` (under the key ``"engines"``)."""
    from llmopt.engine.discrete import simulate
    from llmopt.opt.bounds import BoundContext, run_bound
    from llmopt.policies import make_policy

    ub = simulate(instance, make_policy("mc-sf"))
    ctx = BoundContext(upper_bound_starts=ub.starts, time_limit=seconds)
    row: dict[str, Any] = {"instance": label, "n": instance.n, "M": instance.M, "opt": opt, "mcsf": ub.tel}
    for name in STAGES:
        res = run_bound(name, instance, ctx)
        row[name] = {"value": res.value, "verified": res.verified, "s": round(res.runtime_s, 2),
                     "detail": res.detail}
        if res.value is not None and res.value > opt + 1e-6:
            raise StudyError(f"{name} on {label}: certified {res.value} above OPT {opt} — a bug")
    if with_engines:
        row["engines"] = engines(instance, dict(ub.starts), seconds)
        for key, r in row["engines"].items():
            if r["value"] is not None and r["value"] > opt + 1e-6:
                raise StudyError(f"config master ({key}) on {label}: certified {r['value']} above OPT {opt} — a bug")
    return row


def engines(instance: Instance, starts: dict[str, int], seconds: float) -> dict[str, Any]:
    """``config-lp``'s master (no sawtooth rows) by each run of :data:`ENGINE_RUNS`: LP rounds, columns priced in,
    wall and CPU seconds, the checker's bound and why the loop stopped."""
    from llmopt.opt.bounds import BoundContext, _windows
    from llmopt.opt.cut_bounds import cut_and_price
    from llmopt.verify.cut_certificate import check_cut_certificate

    windows = _windows(instance, BoundContext(upper_bound_starts=starts))
    out: dict[str, Any] = {}
    for engine, alpha in ENGINE_RUNS:
        w0, c0 = time.perf_counter(), time.process_time()
        cert = cut_and_price(instance, windows, sawtooth=False, configurations=True, seed=starts, engine=engine,
                             smoothing=alpha, time_limit=seconds)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        key = f"{engine} α={alpha:g}"
        if isinstance(cert, str):
            out[key] = {"value": None, "status": cert, "s": round(wall, 2), "cpu_s": round(cpu, 2)}
            continue
        value = check_cut_certificate(instance, cert.lam, cert.rows, split=cert.split, zone_mu=cert.zone_mu,
                                      knapsack=cert.knapsack, upper_bound_starts=starts)
        out[key] = {"value": value, "status": cert.status, "rounds": cert.total_rounds, "columns": cert.columns,
                    "best_round": cert.rounds, "s": round(wall, 2), "cpu_s": round(cpu, 2)}
    return out


def _cell(row: dict[str, Any], name: str) -> str:
    r = row[name]
    if r["value"] is None:
        return "—"
    stopped = " ⏱" if "time limit" in r["detail"].lower() else ""
    return f"{r['value']:,.1f} ({r['value'] / row['opt']:.4f}) {r['s']:g} s{stopped}"


def pick(points: list[dict[str, Any]], tiny: list[dict[str, Any]]) -> str:
    """Which new family closes most of zone-lp's gap on the frontier points, and which does most per second."""
    lines = []
    stats = {}
    for s in NEW:
        closed, secs = [], []
        for r in points:
            z, v = r["zone-lp"]["value"], r[s]["value"]
            if z is not None and v is not None and r["opt"] > z:
                closed.append((v - z) / (r["opt"] - z))
                secs.append(max(r[s]["s"], 1e-3))
        tiny_ratio = [r[s]["value"] / r["opt"] for r in tiny if r[s]["value"] is not None]
        if closed:
            per_s = sum(c / e for c, e in zip(closed, secs, strict=True)) / len(closed)
            stats[s] = (sum(closed) / len(closed), per_s,
                        sum(tiny_ratio) / len(tiny_ratio) if tiny_ratio else float("nan"))
    if not stats:
        return "No frontier point was measured."
    z_tiny = [r["zone-lp"]["value"] / r["opt"] for r in tiny if r["zone-lp"]["value"] is not None]
    for s, (c, per_s, t) in stats.items():
        lines.append(f"- `{s}`: closes {100 * c:.1f} % of zone-lp's gap on average over the frontier points "
                     f"({100 * per_s:.3g} % of the gap per second of the stage); tiny mean bound ÷ OPT {t:.4f}"
                     + (f" (zone-lp {sum(z_tiny) / len(z_tiny):.4f})" if z_tiny else "") + ".")
    lag = [(r["lag-lp"]["value"] - r["zone-lp"]["value"]) / (r["opt"] - r["zone-lp"]["value"]) for r in points
           if "lag-lp" in r and r["lag-lp"]["value"] is not None and r["zone-lp"]["value"] is not None
           and r["opt"] > r["zone-lp"]["value"]]
    lag_tiny = [r["lag-lp"]["value"] / r["opt"] for r in tiny if r["lag-lp"]["value"] is not None]
    if lag:
        lines.append(f"- for comparison, the existing `lag-lp` (completion-lag cliques) closes "
                     f"{100 * sum(lag) / len(lag):.1f} %" + (f"; tiny mean {sum(lag_tiny) / len(lag_tiny):.4f}"
                                                               if lag_tiny else "") + ".")
    for r in points:
        z = r["zone-lp"]["value"]
        shares = {s: (r[s]["value"] - z) / (r["opt"] - z) for s in (*NEW, "lag-lp")
                  if s in r and z is not None and r[s]["value"] is not None and r["opt"] > z}
        if shares:
            top = max(shares, key=lambda s: shares[s])
            lines.append(f"- {r.get('instance', 'a point')}: the best relaxation, `{top}`, closes "
                         f"{100 * shares[top]:.1f} % of zone-lp's gap to OPT ({r[top]['value']:,.1f} against "
                         f"zone-lp {z:,.1f}, OPT {r['opt']:,}).")
    strongest = max(stats, key=lambda s: stats[s][0])
    per_second = max(stats, key=lambda s: stats[s][1])
    meaningful = stats[strongest][0] >= 0.25
    lines.append(f"\nStrongest new family on the frontier: **`{strongest}`**; most gap closed per second: "
                 f"**`{per_second}`**. "
                 + ("It closes a meaningful part (at least a quarter) of the gap."
                    if meaningful else "None closes a meaningful part (a quarter or more) of zone-lp's gap to OPT "
                    "on the frontier points."))
    return "\n".join(lines)


def _converged(r: dict[str, Any]) -> bool:
    return str(r.get("status", "")).startswith("converged")


def engine_table(points: list[dict[str, Any]], tiny: list[dict[str, Any]]) -> str:
    """The configuration master's runs side by side (:func:`engines`): one line per frontier point and run, and one
    per run over the tiny instances."""
    lines = ["| instance | engine, Wentges α | bound (÷ OPT) | LP rounds | columns | wall s | CPU s | stopped by |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in points:
        for key, e in (r.get("engines") or {}).items():
            v = "—" if e["value"] is None else f"{e['value']:,.1f} ({e['value'] / r['opt']:.4f})"
            lines.append(f"| {r['instance']} | {key} | {v} | {e.get('rounds', '—')} | {e.get('columns', '—')} | "
                         f"{e['s']:g} | {e['cpu_s']:g} | {e['status']} |")
    runs = [t["engines"] for t in tiny if t.get("engines")]
    for key in (runs[0] if runs else {}):
        cells = [t[key] for t in runs]
        vals = [c["value"] / t["opt"] for c, t in zip(cells, [t for t in tiny if t.get("engines")], strict=True)
                if c["value"] is not None]
        conv = sum(_converged(c) for c in cells)
        lines.append(f"| {len(cells)} tiny | {key} | mean {sum(vals) / max(len(vals), 1):.4f} | "
                     f"mean {sum(c.get('rounds', 0) for c in cells) / len(cells):.1f} | "
                     f"mean {sum(c.get('columns', 0) for c in cells) / len(cells):.1f} | "
                     f"{sum(c['s'] for c in cells):.2f} (all) | {sum(c['cpu_s'] for c in cells):.2f} (all) | "
                     f"converged on {conv} of {len(cells)} |")
    return "\n".join(lines)


def engine_pick(points: list[dict[str, Any]]) -> str:
    """Which run of :data:`ENGINE_RUNS` does best on the frontier points: most converged, then the highest mean
    bound ÷ OPT, then the fewest CPU seconds; and whether the stages' default is that run."""
    from llmopt.opt.cut_bounds import DEFAULT_ENGINE, DEFAULT_SMOOTHING

    score: dict[str, tuple[int, float, float]] = {}
    for r in points:
        for key, e in (r.get("engines") or {}).items():
            c, b, cpu = score.get(key, (0, 0.0, 0.0))
            ratio = 0.0 if e["value"] is None else e["value"] / r["opt"]
            score[key] = (c + _converged(e), b + ratio / len(points), cpu + e["cpu_s"])
    if not score:
        return "No engine run was measured."
    best = max(score, key=lambda k: (score[k][0], round(score[k][1], 6), -score[k][2]))
    lines = [f"- `{k}`: converged on {c} of {len(points)} frontier points, mean bound ÷ OPT {b:.4f}, "
             f"{cpu:.1f} CPU s in all" for k, (c, b, cpu) in score.items()]
    default = f"{DEFAULT_ENGINE} α={DEFAULT_SMOOTHING:g}"
    lines.append(f"\nBest run on the frontier: **`{best}`**; the stages' default (`llmopt/opt/cut_bounds.py` "
                 f"`DEFAULT_ENGINE`, `DEFAULT_SMOOTHING`) is `{default}`"
                 + (" — the same." if default == best else " — not the best run here: see the note below."))
    return "\n".join(lines)


def render(points: list[dict[str, Any]], tiny: list[dict[str, Any]], seconds: float, wall: float) -> str:
    """The README's Markdown from the rows."""
    head = "| instance | n | OPT | " + " | ".join(f"`{s}`" for s in STAGES) + " |"
    lines = [head, "|---|---:|---:|" + "---:|" * len(STAGES)]
    for r in points:
        lines.append(f"| {r['instance']} | {r['n']} | {r['opt']:,} | " + " | ".join(_cell(r, s) for s in STAGES) + " |")
    if tiny:
        cells = []
        for s in STAGES:
            vals = [r[s]["value"] / r["opt"] for r in tiny if r[s]["value"] is not None]
            secs = sum(r[s]["s"] for r in tiny) / len(tiny)
            cells.append(f"mean {sum(vals) / len(vals):.4f}, min {min(vals):.4f}, {secs:.2f} s" if vals else "—")
        lines.append(f"| {len(tiny)} tiny (exhaustive OPT) | 3–6 | — | " + " | ".join(cells) + " |")
    gaps = []
    for r in points:
        z = r["zone-lp"]["value"]
        parts = []
        for s in NEW:
            v = r[s]["value"]
            if z is not None and v is not None and r["opt"] > z:
                parts.append(f"`{s}` {100 * (v - z) / (r['opt'] - z):.1f} %")
        gaps.append(f"- {r['instance']}: " + ", ".join(parts))
    return f"""# Stronger formulations on the proven frontier (issue 43, item 1)

`llmopt/opt/studies/formulation_comparison.py`. Each cell: the checker's certified bound, bound ÷ OPT, and
the stage's seconds (⏱: stopped by the {seconds:g}-s budget per stage before converging; its best certified round is
shown).
OPT of the frontier points is the stored `results/jaillet/opt-frontier` value (HiGHS's MIP bound met the
schedule there); OPT of the tiny instances is this study's own exhaustive search. Windows for every
stage come from MC-SF's schedule. Families (proofs in the modules' docstrings, certificates re-derived by
`llmopt/verify/cut_certificate.py`):

* `zone-lp` — the baseline: time-indexed LP + peak-zone rows (`formulations/zones.py`).
* `lag-lp` — zone-lp's LP + completion-lag cliques, by column generation (existing).
* `sawtooth-lp` — zone-lp + **idle-gap ("sawtooth") rows** (`formulations/sawtooth.py`): over a window of
  `L <= M` times with `q` completions, `Σ U(t) <= L·M − φ_L(q)`, since memory grows every step until a
  completion; tangent rows of the convex `φ_L`, separated.
* `config-lp` — zone-lp + a **Dantzig–Wolfe configuration master** (`formulations/configurations.py`):
  each time's memory row replaced by the hull of its configurations (multisets of request sizes fitting
  in `M`), priced by an unbounded-knapsack DP.
* `config-sawtooth-lp` — both.
* `config-lag-lp` — all three families in one relaxation: the configuration master, sawtooth rows and the
  completion-lag cliques of `lag-lp` (pair and threshold families, separated; `formulations/clique_rows.py`),
  certified by the same checker (cliques re-proved there).

The configuration stages run the loop of `llmopt/opt/cut_bounds.py` on its default engine and smoothing
(below); each stage's detail in `trials.jsonl` says how its loop stopped.

{chr(10).join(lines)}

Share of zone-lp's gap to OPT closed (`(bound − zone-lp) / (OPT − zone-lp)`):

{chr(10).join(gaps)}

## Column generation: HiGHS loop or SCIP's pricer plug-in, with or without Wentges smoothing

`config-lp`'s master (zone-lp + configuration columns, no sawtooth rows) by each engine: `loop` is the
home-made loop (one live HiGHS LP, columns added between warm re-solves); `pricer` the master in SCIP with
the columns added by a `pyscipopt.Pricer` plug-in (`solvers/scip_pricer.py`) at the root node. `α > 0`
prices at the Wentges-smoothed duals `α·π_centre + (1 − α)·π` first. Every run is certified from its best
round's duals by the checker (a dual-feasible round certifies whatever the convergence); the budget per run
is the stage budget. LP rounds: pricing calls; columns: configurations priced in.

{engine_table(points, tiny)}

{engine_pick(points)}

## Pick

{pick(points, tiny)}

Measured with `llmopt study run formulation-comparison --stage-seconds {seconds:g}` on {platform.machine()}
(Python {platform.python_version()}, under `nice -n 10` on the shared 2-core machine; the last invocation
took {wall / 60:.1f} min wall). Times are wall-clock seconds on that loaded machine.
"""


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: the options of :data:`OPTIONS` and ``--out DIR``."""
    from llmopt.engine.discrete import simulate
    from llmopt.policies import make_policy
    from llmopt.workloads import make_instance

    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--stage-seconds", type=float, default=150.0, help="budget per stage and instance (default 150)")
    ap.add_argument("--tiny", type=int, default=40, help="tiny instances with exhaustive OPT (default 40)")
    ap.add_argument("--only", action="append", default=None, metavar="AM2:13", help="only this frontier point")
    ap.add_argument("--out", type=Path, required=True, help="folder of trials.jsonl and README.md")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    points = []
    for rec in proven_points():
        label = f"{'AM1' if rec['workload'] == 'jaillet-am1' else 'AM2'} n = {rec['n']}"
        if args.only and f"{label.split()[0]}:{rec['n']}" not in args.only:
            continue
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in (rec.get("params") or {}).items()}
        inst = make_instance(rec["workload"], seed=rec["seed"], **params)
        row = evaluate(inst, int(rec["opt"]), label, args.stage_seconds)
        print(f"{label}: " + ", ".join(f"{s} {row[s]['value']}" for s in STAGES), flush=True)
        points.append(row)
    tiny = []
    for seed in range(args.tiny):
        inst = tiny_instance(seed)
        opt = exhaustive_opt(inst, simulate(inst, make_policy("mc-sf")).tel)
        tiny.append(evaluate(inst, opt, inst.name, args.stage_seconds))
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in points + tiny))
    (out / "README.md").write_text(render(points, tiny, args.stage_seconds, time.perf_counter() - t0))
    print(f"wrote {out / 'README.md'}")


OPTIONS = {
    "stage_seconds": "budget per stage and instance (default 150; quick 30)",
    "tiny": "tiny instances with exhaustive OPT (default 40; quick 10)",
    "only": "only these frontier points (model:n, e.g. AM2:13)",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``trials.jsonl`` and ``README.md`` into ``out``; returns the files written."""
    if seeds is not None:
        raise StudyError("formulation-comparison takes no --seeds (frontier points and --tiny seeded instances)")
    opts: dict[str, Any] = ({"stage_seconds": 30, "tiny": 10, "only": ["AM2:13"]} if quick else {}) | dict(options)
    only: Any = opts.pop("only", None)
    argv = ["--out", str(out), *options_argv(opts)]
    for point in [only] if isinstance(only, str) else (only or []):
        argv += ["--only", str(point)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s ``README.md`` and ``trials.jsonl`` (written by :func:`run`: the bounds are timed)."""
    return [str(p) for p in (Path(out) / "README.md", Path(out) / "trials.jsonl") if p.exists()]
