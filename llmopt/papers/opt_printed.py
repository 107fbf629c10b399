"""The hindsight-OPT studies' numbers printed in README.md and ``results/*/*/README.md`` (which rows are proven and
by what; the K-worker ratios; the bound stages' table and the trace-scale bracket), computed from the committed
results (the blocks of :data:`BLOCKS`; ``llmopt.papers.printed`` writes and checks them). A few blocks here print
results no paper module reads: the time limit of the production suite's hindsight IPs, the J §5.1 run's error
count and the continuous engine's speed. The trace-scale bracket's blocks are in
:mod:`llmopt.papers.trace_bracket_printed`."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from llmopt.papers.printing import Block, csv_rows, jsonl, md_table_rows, num, results_text
from llmopt.papers.verdicts import ip_limit


def opt_proofs_table(folder: str) -> Callable[[], str]:
    """The render of suite ``folder``'s proven rows with their "proof" column, from
    ``results/opt/opt-proofs/proofs.jsonl`` (:func:`llmopt.opt.studies.opt_proofs.proof_table`)."""

    def render() -> str:
        from llmopt.opt.studies.opt_proofs import proof_table

        return proof_table(folder)

    return render


def opt_proofs_counts() -> str:
    """How many proven-OPT rows rest on which proof (``results/opt/opt-proofs/proofs.jsonl``)."""
    from llmopt.opt.studies.opt_proofs import proof_counts

    return proof_counts()


def cluster_ratios_summary() -> str:
    """The README's K-worker router × policy ranges: mean ratio per (K, router) cell, min–max over the cells."""
    cells: dict[tuple[str, str, str, str], list[float]] = {}
    for r in csv_rows("opt/cluster-ratios/rows.csv"):
        if r["ratio"]:
            cells.setdefault((r["model"], r["K"], r["policy"], r["router"]), []).append(num(r["ratio"]))

    def span(model: str, policy: str) -> str:
        means = [math.fsum(v) / len(v) for k, v in cells.items() if (k[0], k[2]) == (model, policy)]
        return f"{min(means):.2f}–{max(means):.2f}"

    return (f"MC-SF {span('AM1', 'mc-sf')} on AM1 and {span('AM2', 'mc-sf')} on AM2, FCFS "
            f"{span('AM1', 'fcfs')} and {span('AM2', 'fcfs')} (mean per K × router cell, K = 1, 2, 4)")


def _ip_s(trial: dict[str, Any]) -> float:
    """Seconds the trial's IP stage took (``hindsight_stage_s["IP"]``)."""
    return float(trial["hindsight_stage_s"]["IP"])


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def ip_scaling_reach() -> str:
    """README, "How far exact OPT reaches": which ``ip-scaling`` points the IP proved within its time limit, the
    slowest proof at the largest fully proven n, and the gaps where it stopped (``results/jaillet/ip-scaling``).

    Returns
    -------
    str
        ``every instance up to n = 16 (M = 30, 40, 50) was proven optimal (n = 16, M = 50 in 164 s); at n = 20,
        M = 40 the IP stopped at 600 s with a 2.3 % gap, and n = 24 with 8.3 %``.
    """
    rows = jsonl("jaillet/ip-scaling/trials.jsonl")
    open_ = sorted((r for r in rows if r["status"] != "optimal"), key=lambda r: (r["n"], r["M"]))
    reach = max(r["n"] for r in rows if all(q["status"] == "optimal" for q in rows if q["n"] <= r["n"]))
    ms = ", ".join(str(m) for m in sorted({r["M"] for r in rows if r["n"] <= reach}))
    slowest = max((r for r in rows if r["n"] == reach), key=lambda r: r["runtime_s"])
    text = (f"every instance up to n = {reach} (M = {ms}) was proven optimal (n = {reach}, M = {slowest['M']} in "
            f"{slowest['runtime_s']:.0f} s)")
    if open_:
        first, *rest = open_
        text += (f"; at n = {first['n']}, M = {first['M']} the IP stopped at {first['ip_time_limit']:g} s with a "
                 f"{_pct(first['gap'])} gap" + "".join(f", and n = {r['n']} with {_pct(r['gap'])}" for r in rest))
    return text


def ip_scaling_not_optimal() -> str:
    """README, "How far exact OPT reaches": on how many proven ``ip-scaling`` instances MC-SF's TEL is above OPT.

    Returns
    -------
    str
        ``4 of the 12 proven instances``.
    """
    proven = [r for r in jsonl("jaillet/ip-scaling/trials.jsonl") if r["status"] == "optimal"]
    return f"{sum(r['tel_mc-sf'] > r['opt'] for r in proven)} of the {len(proven)} proven instances"


def opt_frontier_reach() -> str:
    """README, "How far exact OPT reaches": the largest ``opt-frontier`` instances proven (with their IP seconds),
    the plain IP's frontier at M = 40 in ``ip-scaling`` beside the same instance's IP time now, and the certified
    gaps of the instances not proven (``results/jaillet/opt-frontier``, ``results/jaillet/ip-scaling``).

    Returns
    -------
    str
        ``**the largest instances proven are AM1 n = 20 (167 s of IP) and AM2 n = 13 (65 s)**; with the plain IP
        the frontier was AM1 n = 16 (82 s; 4.5 s now). AM1 n = 22 / 24 end with 2.3 % / 7.3 % certified gaps, AM2
        n = 18 / 26 / 35 with 10.6 % / 14.2 % / 17.2 %``.
    """
    rows = jsonl("jaillet/opt-frontier/trials.jsonl")
    model = {"jaillet-am1": "AM1", "jaillet-am2": "AM2"}
    largest: list[str] = []
    for w, name in model.items():
        proven = [r for r in rows if r["workload"] == w and r["status"] == "optimal"]
        top = max(proven, key=lambda r: r["n"])
        largest.append(f"{name} n = {top['n']} ({_ip_s(top):.0f} s" + (" of IP)" if not largest else ")"))
    plain = [r for r in jsonl("jaillet/ip-scaling/trials.jsonl") if r["M"] == 40 and r["status"] == "optimal"]
    frontier = max(plain, key=lambda r: r["n"])
    now = next(r for r in rows if r["workload"] == "jaillet-am1" and r["n"] == frontier["n"])
    gaps: list[str] = []
    for w, name in model.items():
        open_ = sorted((r for r in rows if r["workload"] == w and r["status"] != "optimal"), key=lambda r: r["n"])
        if open_:
            gaps.append(f"{name} n = {' / '.join(str(r['n']) for r in open_)} "
                        f"{'end with ' if not gaps else 'with '}"
                        f"{' / '.join(_pct(r['gap']) for r in open_)}{' certified gaps' if not gaps else ''}")
    return (f"**the largest instances proven are {' and '.join(largest)}**; with the plain IP the frontier was AM1 "
            f"n = {frontier['n']} ({_ip_s(frontier):.0f} s; {_ip_s(now):.1f} s now). {', '.join(gaps)}")


def energy_bound_bullet() -> str:
    """README, C's section, the energy-bound bullet: the stage's time on the λ = 50 trace instance and how far the
    bound lies below the LP on J §5.1 (``results/opt/energy-bound/README.md``, the study's tables (a) and (b)).

    Returns
    -------
    str
        ``0.05 s on 10,000 LMSYS requests and is 3–10 % below the LP on J §5.1 (means over 20 seeds: AM1 2.9 %,
        AM2 10.2 %)``.
    """
    path = "opt/energy-bound/README.md"
    header = next(r for r in md_table_rows(path, "instance"))
    trace = md_table_rows(path, "λ = 50 /s")[0]
    stage, n = float(trace[header.index("stage (s)")]), trace[header.index("n")]
    head_a = md_table_rows(path, "workload")[0]
    below = {}
    for w in ("jaillet-am1", "jaillet-am2"):
        row = next(r for r in md_table_rows(path, w) if len(r) == len(head_a))
        below[w] = (1 - float(row[head_a.index("energy/lp")]), row[head_a.index("seeds")])
    lo, hi = min(v for v, _ in below.values()), max(v for v, _ in below.values())
    seeds = "/".join(sorted({s for _, s in below.values()}))
    return (f"{stage:.2f} s on {n} LMSYS requests and is {100 * lo:.0f}–{100 * hi:.0f} % below the LP on J §5.1 "
            f"(means over {seeds} seeds: " + ", ".join(f"AM{w[-1]} {100 * v:.1f} %" for w, (v, _) in below.items())
            + ")")


def ip_scaling_earlier() -> str:
    """README, "How far exact OPT reaches": what an earlier session's ``ip-scaling`` run proved at the largest n, and
    the committed run's wall-clock times against that session's on the points both proved
    (``results/jaillet/ip-scaling/earlier_session.jsonl``, the records of commit fea82a8, against its
    ``trials.jsonl``).

    Returns
    -------
    str
        ``n = 20 in 572 s; on the 12 points both proved, the committed run took 1.25–1.65× that session's time``.
    """
    before = {(r["n"], r["M"]): r for r in jsonl("jaillet/ip-scaling/earlier_session.jsonl")}
    proven = [r for r in before.values() if r["status"] == "optimal"]
    top = max(proven, key=lambda r: (r["n"], r["total_s"]))
    both = [(r["runtime_s"], before[r["n"], r["M"]]["total_s"]) for r in jsonl("jaillet/ip-scaling/trials.jsonl")
            if r["status"] == "optimal" and before.get((r["n"], r["M"]), {}).get("status") == "optimal"]
    ratios = [now / then for now, then in both]
    return (f"n = {top['n']} in {top['total_s']:.0f} s; on the {len(ratios)} points both proved, the committed run "
            f"took {min(ratios):.2f}–{max(ratios):.2f}× that session's time")


def zone_lp_reach() -> str:
    """README, "How far exact OPT reaches": up to which n the ``zone-lp`` bound alone proves every AM1 instance of
    the ``ip-scaling`` and ``opt-frontier`` suites, and its slowest stage time there
    (``results/jaillet/zone-bound/trials.jsonl``).

    Returns
    -------
    str
        ``up to n = 14 in 0.1 s``.
    """
    rows = [r for r in jsonl("jaillet/zone-bound/trials.jsonl")
            if r["workload"] == "jaillet-am1" and r["suite"] in ("ip-scaling", "opt-frontier")]
    reach = max((r["n"] for r in rows if all(q["zone_proves"] for q in rows if q["n"] <= r["n"])), default=0)
    if not reach:
        raise LookupError("results/jaillet/zone-bound/trials.jsonl: zone-lp alone proves no AM1 instance")
    slowest = max(r["zone_s"] for r in rows if r["n"] <= reach)
    return f"up to n = {reach} in {slowest:.1f} s"


def synthetic_errors() -> str:
    """README, J §5.1: how many trials of the committed ``jaillet-synthetic`` run ended in an error
    (``results/jaillet/synthetic/summary.csv``, column ``errors``).

    Returns
    -------
    str
        ``0 errors``.
    """
    errors = sum(int(r["errors"]) for r in csv_rows("jaillet/synthetic/summary.csv"))
    return f"{errors} error{'s' if errors != 1 else ''}"


def continuous_speed_cpu() -> str:
    """README: the CPU seconds of one 10,000-request continuous-engine run, fastest to slowest policy and rate
    (``results/perf/continuous-speed/results.json``, ``cpu_s``, best of the repeats).

    Returns
    -------
    str
        ``0.05–0.43 s CPU``.
    """
    rows = json.loads(results_text("perf/continuous-speed/results.json"))["rows"]
    cpu = [float(r["cpu_s"]) for r in rows]
    return f"{min(cpu):.2f}–{max(cpu):.2f} s CPU"


def _slope(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of log(y) on log(x) (how the bound-scaling study fits its exponents)."""
    xs, ys = [math.log(x) for x, _ in points], [math.log(y) for _, y in points]
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.fsum((x - mx) ** 2 for x in xs)


def _scaling(stage: str) -> dict[int, dict[str, Any]]:
    """Part (a) of ``results/opt/bound-scaling/rows.jsonl``: one stage's rows by n."""
    return {r["n"]: r for r in jsonl("opt/bound-scaling/rows.jsonl")
            if r["part"] == "scaling" and r["stage"] == stage}


def zone_colgen_measured() -> str:
    """README, the bracket table's ``zone-colgen`` row: where it reaches ``zone-lp``'s value, its speed-up at the
    two largest n both ran, its growth (the study's least-squares exponent over n ≥ 40, rounded) and its time at
    the first of those n (``results/opt/bound-scaling/rows.jsonl``, part (a)).

    Returns
    -------
    str
        ``same value as `zone-lp` at n = 10–140; 2.4–2.5× faster at n = 100–140, but still about n^4 (35 s at
        n = 100``.
    """
    zone, colgen = _scaling("zone-lp"), _scaling("zone-colgen")
    both = sorted(set(zone) & set(colgen))
    same = [n for n in both if math.isclose(zone[n]["value"], colgen[n]["value"], rel_tol=1e-6)]
    fast = [zone[n]["seconds"] / colgen[n]["seconds"] for n in both[-2:]]
    grow = _slope([(n, colgen[n]["seconds"]) for n in colgen if n >= 40])
    return (f"same value as `zone-lp` at n = {min(same)}–{max(same)}"
            + ("" if len(same) == len(both) else f" (of {len(both)} sizes, {len(same)})")
            + f"; {min(fast):.1f}–{max(fast):.1f}× faster at n = {both[-2]}–{both[-1]}, but still about "
            f"n^{round(grow)} ({colgen[both[-2]]['seconds']:.0f} s at n = {both[-2]}")


def lag_lp_measured() -> str:
    """README, the bracket table's ``lag-lp`` row: its gain over the zone rows on the sampled J §5.1 trials and at
    AM1 n = 20, and the sizes it proves alone (its bound rounded up meets MC-SF's TEL; part (a) and part (b) of
    ``results/opt/bound-scaling/rows.jsonl``).

    Returns
    -------
    str
        ``+0.06–0.1 % over the zone rows on J §5.1 trials, +0.47 % at AM1 n = 20; proves AM1 n = 10 alone``.
    """
    trials = [r for r in jsonl("opt/bound-scaling/rows.jsonl") if r["part"] == "trials"]
    gains = [100 * (r["lag-lp"] / r["zone-colgen"] - 1) for r in trials]
    lag, zone = _scaling("lag-lp"), _scaling("zone-lp")
    proves = [n for n, r in sorted(lag.items()) if math.ceil(r["value"] - 1e-6) >= r["mcsf"]]
    return (f"+{min(gains):.2f}–{max(gains):.2f} % over the zone rows on {len(trials)} J §5.1 trials, "
            f"+{100 * (lag[20]['value'] / zone[20]['value'] - 1):.2f} % at AM1 n = 20; proves AM1 "
            + (f"n = {', '.join(str(n) for n in proves)} alone" if proves else "no size alone"))


def lag_lp_gap_narrowing() -> str:
    """README, the bracket table's mean-gap row: how much ``lag-lp`` narrows the certified gap of the sampled J §5.1
    trials against ``zone-colgen`` (mean gap per model, (best found − bound) / best found) and at what multiple of
    its time (mean seconds per model; ``results/opt/bound-scaling/rows.jsonl``, part (b)).

    Returns
    -------
    str
        ``narrows it by 0.06–0.07 points on the 8 sampled trials (14.25 → 14.19 %, 15.76 → 15.69 %) at 40–61× the
        time``.
    """
    trials = [r for r in jsonl("opt/bound-scaling/rows.jsonl") if r["part"] == "trials"]
    gaps, times = [], []
    for model in sorted({r["workload"] for r in trials}):
        rows = [r for r in trials if r["workload"] == model]

        def mean(values: list[float]) -> float:
            return math.fsum(values) / len(values)

        zone = mean([100 * (r["best_found"] - r["zone-colgen"]) / r["best_found"] for r in rows])
        lag = mean([100 * (r["best_found"] - r["lag-lp"]) / r["best_found"] for r in rows])
        gaps.append((zone, lag))
        times.append(mean([r["lag-lp_s"] for r in rows]) / mean([r["zone-colgen_s"] for r in rows]))
    points = [round(z, 2) - round(g, 2) for z, g in gaps]  # between the gaps as printed, so the sentence adds up
    return (f"narrows it by {min(points):.2f}–{max(points):.2f} points on the {len(trials)} sampled trials ("
            + ", ".join(f"{z:.2f} → {g:.2f} %" for z, g in gaps)
            + f") at {min(times):.0f}–{max(times):.0f}× the time")


def zone_tree_measured() -> str:
    """README, the bracket table's ``zone-tree`` row: its bound against HiGHS's B&C bound on the frontier
    instances, what it proves (``results/opt/zone-tree/trials.jsonl``), and its cost per node at the largest n
    with the growth exponent over n ≥ 20 (``results/opt/bound-scaling/rows.jsonl``, part (c), probes restarted).

    Returns
    -------
    str
        ``at 120 s on the 8 frontier instances its bound is above HiGHS's (uncertified) B&C bound on 6, by at most
        0.7 %, and below on 2 (2.4 % below at AM2 n = 13, which B&C proves); proves AM1 n = 16 only …``.
    """
    rows = jsonl("opt/zone-tree/trials.jsonl")
    name = {"jaillet-am1": "AM1", "jaillet-am2": "AM2"}
    above = [r for r in rows if r["bc_bound"] is not None and r["tree_bound"] > r["bc_bound"]]
    below = [r for r in rows if r["bc_bound"] is not None and r["tree_bound"] < r["bc_bound"]]
    worst = min(below, key=lambda r: r["tree_bound"] / r["bc_bound"]) if below else None
    seconds = "/".join(sorted({f"{r['seconds']:g}" for r in rows}))
    text = (f"at {seconds} s on the {len(rows)} frontier instances its bound is above HiGHS's (uncertified) B&C "
            f"bound on {len(above)}, by at most "
            f"{100 * max((r['tree_bound'] / r['bc_bound'] - 1 for r in above), default=0):.1f} %, and below on "
            f"{len(below)}")
    if worst is not None:
        text += (f" ({100 * (1 - worst['tree_bound'] / worst['bc_bound']):.1f} % below at {name[worst['workload']]} "
                 f"n = {worst['n']}" + (", which B&C proves)" if worst["bc_proves"] else ")"))
    proved = [f"{name[r['workload']]} n = {r['n']}" for r in rows if r["tree_proves"]]
    tree = {r["n"]: r["seconds"] / r["explored"] for r in jsonl("opt/bound-scaling/rows.jsonl")
            if r["part"] == "tree" and r.get("probe_restart")}
    top = max(tree)
    return (text + f"; proves {', '.join(proved) or 'none'}{' only' if len(proved) == 1 else ''} "
            f"(`results/opt/zone-tree`); at J §5.1 size a node costs seconds ({tree[top]:.2f} s at n = {top}, "
            f"growing as n^{_slope([(n, v) for n, v in tree.items() if n >= 20]):.1f}")

def zone_alone_gap() -> str:
    """README's bracket table: the J §5.1 mean certified gap with the zone bound alone (before the schedules were
    polished), AM1 / AM2, from ``results/jaillet/zone-bound/README.md``'s table (row "certified gap, mean: before
    → after", its "after" side), e.g. ``14.8 / 15.5 %``."""
    rows = md_table_rows("jaillet/zone-bound/README.md", "certified gap, mean")
    if len(rows) != 1:
        raise LookupError("results/jaillet/zone-bound/README.md: no single 'certified gap, mean' row")
    after = [float(cell.split("→")[1].strip().rstrip("%")) for cell in rows[0][1:3]]
    return f"{after[0]:.1f} / {after[1]:.1f} %"


def proven_frontier() -> str:
    """README's bracket table: the largest instance of each arrival model that ``opt-frontier`` proved optimal, from
    ``results/jaillet/opt-frontier/trials.jsonl``, e.g. ``AM1 n = 20, AM2 n = 13``."""
    best: dict[str, int] = {}
    for r in jsonl("jaillet/opt-frontier/trials.jsonl"):
        if r["status"] == "optimal":
            best[r["workload"]] = max(best.get(r["workload"], 0), int(r["n"]))
    return ", ".join(f"AM{w[-1]} n = {best[w]}" for w in sorted(best))


#: the blocks this module prints, by name
BLOCKS: dict[str, Block] = {
    "opt-zone-alone-gap": Block(zone_alone_gap, ("README.md",), "results/jaillet/zone-bound/README.md"),
    "opt-proven-frontier": Block(proven_frontier, ("README.md",), "results/jaillet/opt-frontier/trials.jsonl"),
    "opt-ip-scaling-reach": Block(ip_scaling_reach, ("README.md",), "results/jaillet/ip-scaling/trials.jsonl"),
    "opt-ip-scaling-not-optimal": Block(ip_scaling_not_optimal, ("README.md",),
                                        "results/jaillet/ip-scaling/trials.jsonl"),
    "opt-ip-scaling-limit": Block(lambda: ip_limit("jaillet/ip-scaling"), ("README.md",),
                                  "results/jaillet/ip-scaling/trials.jsonl, manifest.json"),
    "opt-frontier-limit": Block(lambda: ip_limit("jaillet/opt-frontier"), ("README.md",),
                                "results/jaillet/opt-frontier/trials.jsonl, manifest.json"),
    # the production suite's brackets rest on the same kind of time-limited hindsight IP
    "production-discrete-limit": Block(lambda: ip_limit("production/vs-papers-discrete"),
                                       ("results/production/vs-papers-discrete/README.md",),
                                       "results/production/vs-papers-discrete/trials.jsonl, manifest.json"),
    "opt-energy-bound": Block(energy_bound_bullet, ("README.md",), "results/opt/energy-bound/README.md"),
    "opt-ip-scaling-earlier": Block(ip_scaling_earlier, ("README.md",),
                                    "results/jaillet/ip-scaling/earlier_session.jsonl, trials.jsonl"),
    "opt-zone-lp-reach": Block(zone_lp_reach, ("README.md",), "results/jaillet/zone-bound/trials.jsonl"),
    "opt-zone-colgen-measured": Block(zone_colgen_measured, ("README.md",), "results/opt/bound-scaling/rows.jsonl"),
    "opt-lag-lp-measured": Block(lag_lp_measured, ("README.md",), "results/opt/bound-scaling/rows.jsonl"),
    "opt-lag-lp-gap-narrowing": Block(lag_lp_gap_narrowing, ("README.md",), "results/opt/bound-scaling/rows.jsonl"),
    "opt-zone-tree-measured": Block(zone_tree_measured, ("README.md",),
                                    "results/opt/zone-tree/trials.jsonl, results/opt/bound-scaling/rows.jsonl"),
    # printed in J's §5.1 and cost-model paragraphs, from results no paper module reads
    "j-synthetic-errors": Block(synthetic_errors, ("README.md",), "results/jaillet/synthetic/summary.csv"),
    "perf-continuous-cpu": Block(continuous_speed_cpu, ("README.md",), "results/perf/continuous-speed/results.json"),
    "opt-frontier-reach": Block(opt_frontier_reach, ("README.md",),
                                "results/jaillet/opt-frontier/trials.jsonl, results/jaillet/ip-scaling/trials.jsonl"),
    "cluster-ratios-summary": Block(cluster_ratios_summary, ("README.md",), "results/opt/cluster-ratios/rows.csv"),
    "opt-proofs-frontier": Block(opt_proofs_table("jaillet/opt-frontier"), ("results/jaillet/opt-frontier/README.md",),
                                 "results/opt/opt-proofs/proofs.jsonl"),
    "opt-proofs-ip-scaling": Block(opt_proofs_table("jaillet/ip-scaling"), ("results/jaillet/ip-scaling/README.md",),
                                   "results/opt/opt-proofs/proofs.jsonl"),
    "opt-proofs-counts": Block(opt_proofs_counts, ("README.md",), "results/opt/opt-proofs/proofs.jsonl"),
}
