"""The trace-scale bracket's numbers printed in README.md and ``results/opt/trace-bracket/README.md`` (the best
schedule against the best certified bound on 10,000 LMSYS requests, the LP ceiling, the bucket and ``lns``
steps), computed from ``results/opt/trace-bracket`` (the blocks of :data:`BLOCKS`; ``llmopt.papers.printed``
writes and checks them).

Where a sentence quotes a one-off measurement that no results file holds (a scratch run), the results README that
records it says so with its date, and the blocks derived from it read it from that sentence (:func:`_recorded`),
so the derived numbers cannot drift from the recorded ones."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from llmopt.papers.printing import Block, jsonl, results_text


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def _bracket_rows() -> dict[str, dict[str, Any]]:
    """``results/opt/trace-bracket/rows.jsonl`` by ``label (n)``, with each row's best schedule, best bound and
    bracket added (as the study's table computes them)."""
    out = {}
    for r in jsonl("opt/trace-bracket/rows.jsonl"):
        best = min(int(v["tel"]) for v in r["schedules"].values() if v.get("tel") is not None)
        bound = max(float(v["value"]) for v in r["bounds"].values() if v.get("verified"))
        out[f"{r['label']} ({r['n']})"] = {**r, "best": best, "bound": bound, "bracket": (best - bound) / best}
    return out


def trace_bracket_goal() -> str:
    """README, the trace-scale bracket table's last row: the certified bracket per 10,000-request instance beside
    the one before the serial scheme, its growth with the backlog at λ = 10, the serial scheme's gain over the
    ``lns``-polished Sorted-F schedule, the brackets at 1,000 requests and MC-SF's bracketed ratio to OPT
    (``results/opt/trace-bracket/rows.jsonl``; the earlier schedules' TELs from the sentence "Before the serial
    scheme" of its README, which records them).

    Returns
    -------
    str
        ``8.2 % at λ = 50 and 4.1 % all at 0 (was 20.4 / 16.6 %), 18.3 % at λ = 10 (was 29.3 %), …``.

    Raises
    ------
    LookupError
        If the README no longer records the earlier schedules' TELs.
    """
    rows = _bracket_rows()
    big = [rows["λ = 50 /s, DT = 0.1111 s (10000)"], rows["same requests, all at 0 (10000)"],
           rows["λ = 10 /s, DT = 0.1376 s (10000)"]]
    small = [r for k, r in rows.items() if k.endswith("(1000)") and "first" not in k]
    first = [rows[f"λ = 10 /s, DT = 0.1376 s, first {k} arrivals of 10,000 ({k.replace(',', '')})"]
             for k in ("1,000", "3,000")]
    found = re.search(r"and ([\d,]+) / ([\d,]+) / ([\d,]+) at 10,000", results_text("opt/trace-bracket/README.md"))
    if not found:
        raise LookupError("results/opt/trace-bracket/README.md: no TELs of the schedules before the serial scheme")
    before = [int(v.replace(",", "")) for v in found.groups()]
    was = [(b - r["bound"]) / b for b, r in zip(before, big)]
    gain = [1 - r["best"] / b for b, r in zip(before, big)]
    at_1000 = [r["bracket"] for r in small]

    def ratio(r: dict[str, Any]) -> str:
        tel = r["schedules"]["mc-sf"]["tel"]
        return f"[{tel / r['best']:.3f}, {tel / r['bound']:.3f}]"

    return (f"{_pct(big[0]['bracket'])} at λ = 50 and {_pct(big[1]['bracket'])} all at 0 (was "
            f"{100 * was[0]:.1f} / {_pct(was[1])}), {_pct(big[2]['bracket'])} at λ = 10 (was {_pct(was[2])}), a run "
            f"near saturation whose bracket grows with the backlog ({_pct(first[0]['bracket'])} over its first 1,000 "
            f"arrivals, {_pct(first[1]['bracket'])} over its first 3,000); the bounds did not move (`lagrangian`, "
            "600 s, and `lp-colgen`): the schedules did — the serial scheme (`sgs-lagrangian`, `sgs-energy`, then "
            f"`lns`) beat `lns`-polished Sorted-F by {_pct(gain[0])}, {_pct(gain[1])} and {_pct(gain[2])}; at 1,000: "
            f"{' / '.join(f'{100 * b:.1f}' for b in at_1000)} % (goal 2 % met there). MC-SF / OPT at "
            f"10,000 now lies in {ratio(big[0])} (λ = 50), {ratio(big[1])} (all at 0), {ratio(big[2])} (λ = 10)")


_TB50, _TB0, _TB10 = ("λ = 50 /s, DT = 0.1111 s (10000)", "same requests, all at 0 (10000)",
                      "λ = 10 /s, DT = 0.1376 s (10000)")


def trace_bracket_value(row: str, what: str) -> Callable[[], str]:
    """One number of a ``trace-bracket`` row as the README's prose quotes it.

    Parameters
    ----------
    row : str
        ``label (n)`` of the row in ``results/opt/trace-bracket/rows.jsonl``.
    what : str
        A schedule's name (its TEL), ``best`` (the least verified TEL) or ``bound`` (the best certified bound).

    Returns
    -------
    callable
        Returning the number with thousands separators, e.g. ``10,379,072``.
    """
    def render() -> str:
        r = _bracket_rows()[row]
        value = r[what] if what in ("best", "bound") else r["schedules"][what]["tel"]
        return f"{round(value):,}"

    return render


def trace_bracket_backlog() -> str:
    """README, trace scale: the λ = 10 bracket over the first 1,000 and 3,000 arrivals and over all 10,000
    (``results/opt/trace-bracket/rows.jsonl``).

    Returns
    -------
    str
        ``1.2 % over its first 1,000 arrivals, 5.7 % over its first 3,000, 18.3 % over all 10,000``.
    """
    rows = _bracket_rows()
    first = [rows[f"λ = 10 /s, DT = 0.1376 s, first {k} arrivals of 10,000 ({k.replace(',', '')})"]["bracket"]
             for k in ("1,000", "3,000")]
    return (f"{_pct(first[0])} over its first 1,000 arrivals, {_pct(first[1])} over its first 3,000, "
            f"{_pct(rows[_TB10]['bracket'])} over all 10,000")


def _recorded(pattern: str) -> tuple[int, ...]:
    """The integers the trace-bracket README records in the sentence matching ``pattern`` (one-off measurements
    that no results file holds: the README states each with its date)."""
    found = re.search(pattern, results_text("opt/trace-bracket/README.md"))
    if not found:
        raise LookupError(f"results/opt/trace-bracket/README.md: no sentence matches {pattern!r}")
    return tuple(int(v.replace(",", "")) for v in found.groups())


_TB3000 = "λ = 10 /s, DT = 0.1376 s, first 3,000 arrivals of 10,000 (3000)"
#: the sentences of ``results/opt/trace-bracket/README.md`` that record its one-off measurements
_MASTER_10K = r"restricted-master value of ([\d,]+) after"
_DELTA1_3000 = r"is ([\d,]+) against Δ = 5's"
_LNS_CHAIN = r"from a ([\d,]+) schedule \(an earlier 300-s `lns` run\) moved it to ([\d,]+), ([\d,]+) and ([\d,]+)"
_BEFORE_10K = r"and ([\d,]+) / ([\d,]+) / ([\d,]+) at 10,000"


def trace_lp_ceiling() -> str:
    """The trace-bracket README and README: the least bracket any LP-based stage can reach at λ = 10 (10,000
    requests), from the recorded restricted-master value at Δ = 1 against the best schedule of
    ``results/opt/trace-bracket/rows.jsonl``.

    Returns
    -------
    str
        ``13.5 %``.
    """
    (master,) = _recorded(_MASTER_10K)
    best = _bracket_rows()[_TB10]["best"]
    return _pct((best - master) / best)


def trace_bucket_points() -> str:
    """The trace-bracket README: how many points of the λ = 10 row's bracket finer buckets are worth at most (the
    recorded Δ = 1 restricted-master value minus the committed Δ = 16 bound, over the best schedule).

    Returns
    -------
    str
        ``4.8 points``.
    """
    (master,) = _recorded(_MASTER_10K)
    row = _bracket_rows()[_TB10]
    return f"{100 * (master - row['bound']) / row['best']:.1f} points"


def trace_bucket_gain() -> str:
    """The recorded Δ = 1 LP on the first 3,000 arrivals against the committed Δ = 5 bound of that row.

    Returns
    -------
    str
        ``+0.36 %``.
    """
    (delta1,) = _recorded(_DELTA1_3000)
    bound = _bracket_rows()[_TB3000]["bound"]
    return f"{100 * (delta1 - bound) / bound:+.2f} %"


def trace_lns_steps() -> str:
    """What each recorded 300-s ``lns`` run gained over the schedule it started from (first 3,000 arrivals).

    Returns
    -------
    str
        ``0.44 %, 0.29 % and 0.12 %``.
    """
    chain = _recorded(_LNS_CHAIN)
    steps = [f"{100 * (a - b) / a:.2f} %" for a, b in zip(chain, chain[1:])]
    return f"{', '.join(steps[:-1])} and {steps[-1]}"


def trace_lns_left() -> str:
    """How far the last recorded ``lns`` schedule stays above the recorded Δ = 1 LP (first 3,000 arrivals), as a
    bracket: (schedule − LP) / schedule.

    Returns
    -------
    str
        ``4.6 %``.
    """
    last = _recorded(_LNS_CHAIN)[-1]
    (delta1,) = _recorded(_DELTA1_3000)
    return _pct((last - delta1) / last)


def trace_sorted_f_lns() -> str:
    """README: how far 300 s of ``lns`` from Sorted-F moved Sorted-F's schedule at 10,000 requests (the recorded
    TELs before the serial scheme against Sorted-F's TELs in ``rows.jsonl``), least to most.

    Returns
    -------
    str
        ``0.03–0.24 %``.
    """
    before = _recorded(_BEFORE_10K)
    rows = _bracket_rows()
    moved = [1 - b / rows[k]["schedules"]["sorted-f"]["tel"] for b, k in zip(before, (_TB50, _TB0, _TB10))]
    return f"{100 * min(moved):.2f}–{100 * max(moved):.2f} %"


def trace_lns_before_50() -> str:
    """README: the recorded TEL at which ``lns`` from Sorted-F ended at λ = 50 (10,000 requests), as the
    trace-bracket README records it.

    Returns
    -------
    str
        ``11,970,427``.
    """
    return f"{_recorded(_BEFORE_10K)[0]:,}"


def trace_bracket_of(row: str) -> Callable[[], str]:
    """The bracket of one ``trace-bracket`` row, e.g. ``0.7 %``.

    Parameters
    ----------
    row : str
        ``label (n)`` of the row in ``results/opt/trace-bracket/rows.jsonl``.

    Returns
    -------
    callable
    """
    def render() -> str:
        return _pct(_bracket_rows()[row]["bracket"])

    return render


_TB_README = "results/opt/trace-bracket/README.md"

#: the blocks this module prints, by name
BLOCKS: dict[str, Block] = {
    "opt-trace-bracket-goal": Block(trace_bracket_goal, ("README.md",),
                                    "results/opt/trace-bracket/rows.jsonl, README.md"),
    "opt-trace-sgs-50": Block(trace_bracket_value(_TB50, "sgs-lagrangian"), ("README.md",),
                              "results/opt/trace-bracket/rows.jsonl"),
    "opt-trace-best-10": Block(trace_bracket_value(_TB10, "best"), ("README.md",),
                               "results/opt/trace-bracket/rows.jsonl"),
    "opt-trace-sgs-energy-0": Block(trace_bracket_value(_TB0, "sgs-energy"), ("README.md",),
                                    "results/opt/trace-bracket/rows.jsonl"),
    "opt-trace-bound-0": Block(trace_bracket_value(_TB0, "bound"), ("README.md",),
                               "results/opt/trace-bracket/rows.jsonl"),
    "opt-trace-backlog": Block(trace_bracket_backlog, ("README.md", _TB_README),
                               "results/opt/trace-bracket/rows.jsonl"),
    "opt-trace-bound-10": Block(trace_bracket_value(_TB10, "bound"), (_TB_README,),
                                "results/opt/trace-bracket/rows.jsonl"),
    "opt-trace-bound-3000": Block(trace_bracket_value(_TB3000, "bound"), (_TB_README,),
                                  "results/opt/trace-bracket/rows.jsonl"),
    "opt-trace-lp-ceiling": Block(trace_lp_ceiling, ("README.md", _TB_README),
                                  "results/opt/trace-bracket/rows.jsonl, README.md (the Δ = 1 master value)"),
    "opt-trace-bucket-points": Block(trace_bucket_points, (_TB_README,),
                                     "results/opt/trace-bracket/rows.jsonl, README.md (the Δ = 1 master value)"),
    "opt-trace-bucket-gain": Block(trace_bucket_gain, ("README.md", _TB_README),
                                   "results/opt/trace-bracket/rows.jsonl, README.md (the Δ = 1 LP on 3,000)"),
    "opt-trace-lns-steps": Block(trace_lns_steps, ("README.md", _TB_README),
                                 "results/opt/trace-bracket/README.md (the recorded lns runs)"),
    "opt-trace-lns-left": Block(trace_lns_left, ("README.md", _TB_README),
                                "results/opt/trace-bracket/README.md (the recorded lns runs and Δ = 1 LP)"),
    "opt-trace-sorted-f-lns": Block(trace_sorted_f_lns, ("README.md",),
                                    "results/opt/trace-bracket/rows.jsonl, README.md (the TELs before)"),
    "opt-trace-lns-before-50": Block(trace_lns_before_50, ("README.md",),
                                     "results/opt/trace-bracket/README.md (the TELs before)"),
    "opt-trace-bracket-1000-50": Block(trace_bracket_of("λ = 50 /s, DT = 0.1266 s (1000)"), ("README.md",),
                                       "results/opt/trace-bracket/rows.jsonl"),
}
