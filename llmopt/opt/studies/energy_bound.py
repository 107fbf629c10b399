"""The energy bound (bound stage ``energy``) against the LP bound and the best schedules found.

(a) J §5.1 instances (workloads ``jaillet-am1``, ``jaillet-am2``, seeds ``0 … --seeds − 1``): the
energy bound, the LP bound (``--lp-bound``, default ``lp``: the LP relaxation of the hindsight IP
over the windows of the best schedule found, certified by the checker from its duals), and the
best schedule found — MC-SF and the ``local-search`` upper-bound stage (``--search-evals``
evaluations, seed = the trial's seed), both re-verified by the checker. Reported per workload as
mean ratios (energy/LP, energy/best, LP/best, Σo/best), how often the energy bound beats the LP,
and the times.

(b) Trace scale: ``n = 10,000`` LMSYS requests (``lmsys_chat_1m_words_in256_out256.csv``,
``on_bad_row='drop'``, ``M = 16,492``), ``sample_instance(..., n, seed=0, rate=λ)`` for
λ = 50 /s (high demand) and 10 /s (low demand). The discrete model needs a step length: one
step is one batch iteration (DESIGN §1), so ``DT`` = the mean iteration length of MC-SF's
continuous-time run on the same timed instance (Llama2-70B on 2×A100 cost model), and the
discrete instance is ``to_discrete_instance(timed, DT)``. Both the bound and MC-SF's TEL are
for that discrete instance, so their ratio is a certified bracket on MC-SF's discrete
competitive ratio there. The same requests with every arrival at 0 (the W §7 / C §6 setting)
are reported too. Times are wall clock (``time.perf_counter``), best of ``--repeat``.

    llmopt study run energy-bound --out results/opt/energy-bound    # the committed README.md
    llmopt study run energy-bound --quick                       # seeds 0-1, 40 evaluations, no trace part

Needs the staged trace data for (b) (``../shared/data``, or ``LLMOPT_DATA``); skipped with a
note when it is missing. The whole run takes about a minute or two.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.engine.discrete import simulate
from llmopt.model.instance import Instance
from llmopt.opt.bounds import BoundContext, compute_bound, energy_certificate
from llmopt.opt.studies import StudyError, options_argv, run_main, study_command
from llmopt.opt.upper_bounds import SearchContext, find_schedule
from llmopt.policies import make_policy
from llmopt.verify.checker import check_schedule
from llmopt.verify.energy_certificate import check_energy_certificate
from llmopt.workloads import make_instance

TRACE = "lmsys_chat_1m_words_in256_out256.csv"
M_TRACE = 16_492


def _verified_tel(inst: Instance, starts: Any) -> int:
    rep = check_schedule(inst, starts)
    if not rep.ok or rep.tel is None:
        raise RuntimeError(f"{inst.name}: schedule rejected by the checker: {rep.violations[:1]}")
    return rep.tel


def jaillet_rows(seeds: int, search_evals: int, lp_bound: str) -> list[dict[str, Any]]:
    rows = []
    for wl in ("jaillet-am1", "jaillet-am2"):
        for seed in range(seeds):
            inst = make_instance(wl, seed)
            t0 = time.perf_counter()
            en = compute_bound("energy", inst)
            en_s = time.perf_counter() - t0
            mcsf = simulate(inst, make_policy("mc-sf"))
            ls = find_schedule("local-search", inst, SearchContext(seed=seed, search_evals=search_evals,
                                                                   known={"mc-sf": mcsf}))
            tel_mcsf = _verified_tel(inst, mcsf.starts)
            tel_ls = _verified_tel(inst, ls.starts)
            best_starts = ls.starts if tel_ls < tel_mcsf else mcsf.starts
            t0 = time.perf_counter()
            lp = compute_bound(lp_bound, inst, BoundContext(upper_bound_starts=best_starts))
            lp_s = time.perf_counter() - t0
            assert en.value is not None and en.verified, en.detail
            rows.append(dict(workload=wl, seed=seed, n=inst.n, M=inst.M, energy=en.value, energy_s=en_s,
                             lp=lp.value, lp_verified=lp.verified, lp_s=lp_s, mcsf=tel_mcsf, ls=tel_ls,
                             best=min(tel_mcsf, tel_ls), sum_o=inst.total_output))
            print(f"  {wl} seed {seed}: energy {en.value:.0f}, {lp_bound} {lp.value}, best {min(tel_mcsf, tel_ls)}",
                  file=sys.stderr)
    return rows


def _best_time(fn: Any, repeat: int) -> tuple[Any, float]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best


def trace_instances(n: int, rates: tuple[float, ...]) -> tuple[list[tuple[str, Instance, Any]], str | None]:
    """``(label, discrete instance, MC-SF's continuous run)`` for ``n`` LMSYS requests (seed 0) at each
    Poisson rate, and the same requests all at 0 once; or ``([], why)`` without the trace data.

    One discrete step = one batch iteration: ``DT`` is the mean iteration length of MC-SF's
    continuous-time run on the same timed instance (Llama2-70B on 2×A100 cost model)."""
    from llmopt.engine.continuous import simulate_continuous
    from llmopt.engine.cost_model import make_cost_model
    from llmopt.workloads.traces import load_lmsys, sample_instance, to_discrete_instance
    from llmopt.workloads.traces.data import data_dir

    try:
        path = data_dir() / "traces" / TRACE
    except FileNotFoundError as exc:
        return [], f"trace data not found: {exc}"
    if not path.is_file():
        return [], f"trace file {path} not found"
    trace = load_lmsys(path, M=M_TRACE, on_bad_row="drop")
    cost = make_cost_model("llama2-70b-a100-tp2")
    out: list[tuple[str, Instance, Any]] = []
    seen: set[tuple[tuple[int, int], ...]] = set()
    for rate in rates:
        timed = sample_instance(trace, n=n, seed=0, rate=rate, M=M_TRACE)
        cont = simulate_continuous(timed, make_policy("mc-sf"), cost)
        dt = float(np.mean(cont.batch_duration))
        disc = to_discrete_instance(timed, dt)
        out.append((f"λ = {rate:g} /s, DT = {dt:.4f} s", disc, cont))
        key = tuple((r.prompt, r.output) for r in disc.requests)
        if key not in seen:  # every rate draws the same rows for seed 0: one all-at-0 row suffices
            seen.add(key)
            at0 = replace(disc, requests=tuple(replace(r, arrival=0) for r in disc.requests),
                          name=f"{disc.name} all at 0")
            out.append(("same requests, all at 0", at0, cont))
    return out, None


def trace_rows(n: int, rates: tuple[float, ...], repeat: int) -> tuple[list[dict[str, Any]], str | None]:
    cases, why = trace_instances(n, rates)
    if why is not None:
        return [], why
    rows = []
    for label, inst, cont in cases:
        res, stage_s = _best_time(lambda inst=inst: compute_bound("energy", inst), repeat)
        cert, cert_s = _best_time(lambda inst=inst: energy_certificate(inst), repeat)
        _, check_s = _best_time(lambda inst=inst, cert=cert: check_energy_certificate(inst, cert.order,
                                                                                     cert.value), repeat)
        sch, mcsf_s = _best_time(lambda inst=inst: simulate(inst, make_policy("mc-sf")), 1)
        tel = _verified_tel(inst, sch.starts)
        assert res.value is not None and res.verified, res.detail
        span = max(r.arrival for r in inst.requests) - min(r.arrival for r in inst.requests)
        energy_total = sum(r.prompt * r.output + r.output * (r.output + 1) // 2 for r in inst.requests)
        rows.append(dict(label=label, n=inst.n, steps=max(r.arrival for r in inst.requests),
                         load=energy_total / (inst.M * span) if span else None,
                         energy=res.value, stage_s=stage_s, cert_s=cert_s, check_s=check_s, mcsf=tel,
                         mcsf_s=mcsf_s, sum_o=inst.total_output, cont_iters=cont.iterations,
                         cont_mean_latency=cont.mean_latency))
        print(f"  {label}: energy {res.value:.0f} in {stage_s:.3f} s, MC-SF {tel}", file=sys.stderr)
    return rows, None


def _mean(xs: list[float]) -> float:
    return float(np.mean(xs)) if xs else float("nan")


def render(jrows: list[dict[str, Any]], trows: list[dict[str, Any]], trace_note: str | None,
           args: argparse.Namespace, wall_s: float) -> str:
    lpn = args.lp_bound
    command = getattr(args, "command", "") or "llmopt study run energy-bound"
    out = ["# The energy bound vs the LP bound and the best schedules found", "",
           f"Command: `{command}` (seeds 0…{args.seeds - 1}, local search "
           f"{args.search_evals} evaluations, LP bound `{lpn}`, trace n = {args.n:,}); {wall_s:.0f} s wall on "
           f"{platform.platform()}, Python {platform.python_version()}.", "",
           "The bound (stage `energy`, proof in `llmopt.opt.bounds.energy_bound`): with "
           "`E_i = s_i·o_i + o_i(o_i+1)/2`, "
           "`e_(k)` the k-th completion time of the shortest-remaining-energy-first fluid schedule (capacity M per "
           "step, request i usable from step a_i + 1) and `q_(k)` the k-th smallest `a_i + o_i`, "
           "`OPT >= Σ_k max(e_(k), q_(k)) − Σ_i a_i`; for all arrivals at 0 it is `Σ_k max(o_(k), ⌈P_k/M⌉)`. "
           "Its certificate (the fluid schedule's completion order) is re-verified by "
           "`llmopt.verify.checker.check_energy_certificate`; every value below is the checker's, and every schedule's "
           "TEL is the checker's.", "",
           "## (a) J §5.1 instances", "",
           f"Best = the better of MC-SF and `local-search` ({args.search_evals} evaluations). Ratios are means over "
           f"the {args.seeds} seeds; *energy > LP* counts seeds where the energy bound is the higher one.", "",
           f"| workload | seeds | energy/{lpn} | min | max | energy/best | {lpn}/best | Σo/best | energy > {lpn} "
           f"| energy time (ms) | {lpn} time (s) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for wl in ("jaillet-am1", "jaillet-am2"):
        rs = [r for r in jrows if r["workload"] == wl]
        if not rs:
            continue
        el = [r["energy"] / r["lp"] for r in rs if r["lp"]]
        out.append(f"| {wl} | {len(rs)} | {_mean(el):.3f} | {min(el):.3f} | {max(el):.3f} | "
                   f"{_mean([r['energy'] / r['best'] for r in rs]):.3f} | "
                   f"{_mean([r['lp'] / r['best'] for r in rs if r['lp']]):.3f} | "
                   f"{_mean([r['sum_o'] / r['best'] for r in rs]):.3f} | "
                   f"{sum(r['lp'] is not None and r['energy'] > r['lp'] for r in rs)} | "
                   f"{1e3 * _mean([r['energy_s'] for r in rs]):.2f} | {_mean([r['lp_s'] for r in rs]):.2f} |")
    unverified = sum(not r["lp_verified"] for r in jrows)
    out += ["", f"LP certificates not verified: {unverified}. Per seed:", "",
            f"| workload | seed | n | M | Σo | energy | {lpn} | MC-SF | local search | energy/{lpn} | energy/best |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in jrows:
        lp = f"{r['lp']:.1f}" if r["lp"] is not None else "–"
        ratio = f"{r['energy'] / r['lp']:.3f}" if r["lp"] else "–"
        out.append(f"| {r['workload']} | {r['seed']} | {r['n']} | {r['M']} | {r['sum_o']} | {r['energy']:.0f} | {lp} | "
                   f"{r['mcsf']} | {r['ls']} | {ratio} | {r['energy'] / r['best']:.3f} |")
    out += ["", "## (b) Trace scale: 10,000 LMSYS requests", ""]
    if trace_note:
        out += [f"Skipped: {trace_note}.", ""]
    else:
        out += ["One discrete step = one batch iteration: `DT` is the mean iteration length of MC-SF's continuous-time "
                "run on the same timed instance (Llama2-70B on 2×A100 cost model), so the discrete instance's load "
                "matches the real one's. Flooring arrivals to steps only makes requests available earlier. The bound "
                "and MC-SF's TEL are for the same discrete instance (TEL in steps); *bound/MC-SF* is a certified lower "
                "end of OPT/TEL(MC-SF), so MC-SF is within *MC-SF/bound* of the discrete optimum. Times: the whole "
                "stage (SRPT + checker), and each half; best of "
                f"{args.repeat}. *Fluid load* = `Σ E_i / (M · arrival span)`: the memory-time the requests need per "
                "unit of memory-time offered while they arrive.", "",
                "| instance | n | last arrival step | fluid load | Σo | energy bound | stage (s) | SRPT (s) | "
                "checker (s) | MC-SF TEL | MC-SF sim (s) | bound/MC-SF | MC-SF/bound | Σo/MC-SF |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in trows:
            load = f"{r['load']:.2f}" if r["load"] is not None else "–"
            out.append(f"| {r['label']} | {r['n']:,} | {r['steps']:,} | {load} | {r['sum_o']:,} | {r['energy']:,.0f} | "
                       f"{r['stage_s']:.3f} | {r['cert_s']:.3f} | {r['check_s']:.3f} | {r['mcsf']:,} | "
                       f"{r['mcsf_s']:.2f} | {r['energy'] / r['mcsf']:.3f} | {r['mcsf'] / r['energy']:.3f} | "
                       f"{r['sum_o'] / r['mcsf']:.3f} |")
        out.append("")
    out += ["## Notes", "",
            "- The energy bound relaxes each request's staircase usage (s+1, …, s+o on o consecutive steps) to any "
            "amount at any step between its arrival and completion; SRPT is optimal for that fluid relaxation at "
            "every completion count, so the remaining gap to OPT is the relaxation's, not the algorithm's.",
            "- Where the fluid load is near or below 1 (λ = 10 /s: 0.99) the fluid SRPT keeps up with the arrivals, "
            "finishes every request's energy before `a_i + o_i`, and the bound collapses to Σo: the waiting MC-SF "
            "shows there (and that OPT may need) comes from the staircase peaks, which the relaxation does not "
            "see. The bound is informative when memory is overloaded on average (λ = 50 /s: load 4.0; all at 0; "
            "J §5.1). A bound for the low-load regime needs the usage's shape (the LP, or valid inequalities at "
            "completion times).",
            "- A variant that counts, for each horizon T, only the energy of requests with `a_i + o_i <= T` (SRPT "
            "rerun per T, valid on a grid of T) was measured before shipping: +0.0 % on AM1, +1.1 % on AM2 "
            "(20 seeds, every T) and +0.6 % / +1.6 % on the λ = 50 trace instance with 50 / 200 grid points at "
            "0.4 / 1.3 s. Not worth its cost; not shipped.",
            "- The LP bound's values here are over the windows of this script's best schedule; the "
            "`jaillet-synthetic` suite (results/jaillet/synthetic) reports the same LP within its own pipeline.",
            ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20, help="seeds 0 … N−1 per J §5.1 workload (default 20)")
    ap.add_argument("--search-evals", type=int, default=200, help="local-search evaluations (default 200)")
    ap.add_argument("--lp-bound", default="lp", help="bound stage to compare with (default lp; lp-colgen is cheaper)")
    ap.add_argument("--n", type=int, default=10_000, help="trace instance size (default 10,000)")
    ap.add_argument("--rates", type=float, nargs="+", default=[50.0, 10.0], help="Poisson rates /s (default 50 10)")
    ap.add_argument("--repeat", type=int, default=3, help="timing repetitions at trace scale (default 3)")
    ap.add_argument("--skip-trace", action="store_true", help="skip (b)")
    ap.add_argument("--out", type=Path, default=None, help="write README.md here")
    ap.add_argument("--command", default="", help="the command line to quote in the report")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    jrows = jaillet_rows(args.seeds, args.search_evals, args.lp_bound)
    trows, note = ([], "skipped with --skip-trace") if args.skip_trace else trace_rows(args.n, tuple(args.rates),
                                                                                      args.repeat)
    text = render(jrows, trows, note, args, time.perf_counter() - t0)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "README.md").write_text(text)
        print(f"wrote {args.out / 'README.md'}", file=sys.stderr)
    return 0


OPTIONS = {
    "search_evals": "local-search evaluations (default 200; quick 40)",
    "lp_bound": "bound stage to compare with (default lp; lp-colgen is cheaper)",
    "n": "trace instance size (default 10,000)",
    "rates": "Poisson rates /s (default 50 10)",
    "repeat": "timing repetitions at trace scale (default 3)",
    "skip_trace": "skip part (b), the trace instances (quick skips it)",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``README.md`` into ``out``; ``seeds`` must be ``0 … N−1`` (default 20; quick: 2, with 40
    local-search evaluations and no trace part); returns the files written."""
    n = len(seeds) if seeds is not None else (2 if quick else 20)
    if seeds is not None and list(seeds) != list(range(n)):
        raise StudyError("energy-bound runs seeds 0 … N−1: give --seeds 0-N")
    opts = ({"search_evals": 40, "skip_trace": True} if quick else {}) | dict(options)
    argv = ["--out", str(out), "--seeds", str(n), *options_argv(opts),
            "--command", study_command("energy-bound", out, quick=quick, seeds=seeds, options=options)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s ``README.md`` (written by :func:`run`: it needs the bounds)."""
    path = Path(out) / "README.md"
    return [str(path)] if path.exists() else []
