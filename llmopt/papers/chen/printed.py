"""C's (Chen et al.) numbers printed in README.md and ``results/chen/*/README.md``, computed from the committed
results (the blocks of :data:`BLOCKS`; ``llmopt.papers.printed`` writes and checks them)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from llmopt.papers.chen import verdicts as chen_verdicts
from llmopt.papers.printing import Block, csv_rows, num, results_text, row
from llmopt.papers.verdicts import render as render_verdicts


def _chen_section6(setting: str, algorithm: str) -> float:
    """Mean latency over seeds at n = 2,000 of one C §6 setting (``results/chen/lmsys/figures_5_7.csv``)."""
    return num(row("chen/lmsys/figures_5_7.csv", setting=setting, n="2000", algorithm=algorithm)["latency_mean"])


def chen_section6_amin() -> str:
    """README, C §6: A_min ÷ H-SF at n = 2,000 in Exp. 1, Exp. 2 and Exp. 3 (x = 0.1 / 0.95 / 0.99).

    Returns
    -------
    str
        The phrase, from ``results/chen/lmsys/figures_5_7.csv``.
    """
    def r(setting: str) -> float:
        return _chen_section6(setting, "a-min") / _chen_section6(setting, "h-sf")

    xs = ("0.1", "0.95", "0.99")
    return (f"{r('exp1'):.2f}× H-SF's\n  in Exp. 1, {r('exp2'):.2f}× in Exp. 2, and "
            + " / ".join(f"{r(f'exp3 x={x}'):.2f}" for x in xs) + "× for x = " + " / ".join(xs))


def chen_section6_amax() -> str:
    """README, C §6: A_max ÷ H-SF with one shared interval, and A_max's change from x = 0.1 to x = 0.95 / 0.99.

    Returns
    -------
    str
        The phrase, from ``results/chen/lmsys/figures_5_7.csv``.
    """
    poor = _chen_section6("exp1", "a-max") / _chen_section6("exp1", "h-sf")
    worse = max(_chen_section6(f"exp3 x={x}", "a-max") for x in ("0.95", "0.99")) / _chen_section6("exp3 x=0.1",
                                                                                                    "a-max")
    return (f"A_max is poor with one shared interval ({poor:.1f}×), as C says, and it improves with bins. It does\n"
            f"  not deteriorate much at x = 0.95 / 0.99 (×{worse:.2f} vs x = 0.1)")


def chen_x01_amin() -> str:
    """``results/chen/lmsys/README.md``: A_min ÷ H-SF at n = 2,000, x = 0.1, to three decimals (the verdict's
    threshold is 1.10, and the ratio, 1.1049…, rounds onto it at two).

    Returns
    -------
    str
        The ratio of the mean latencies, from ``results/chen/lmsys/figures_5_7.csv``.
    """
    return f"{_chen_section6('exp3 x=0.1', 'a-min') / _chen_section6('exp3 x=0.1', 'h-sf'):.3f}"


def chen_m_sweep() -> str:
    """``results/chen/lmsys/README.md``: A_min ÷ H-SF in C Exp. 1 as M grows (C-like sample).

    Returns
    -------
    str
        The phrase with the continuous and the discrete engine's ratios, from ``c_like_m_sweep.csv``.
    """
    rows = [r for r in csv_rows("chen/lmsys/c_like_m_sweep.csv") if r["setting"] == "exp1"
            and float(r["factor"]).is_integer()]
    cont = [(int(float(r["factor"])), num(r["cont_a-min"]) / num(r["cont_h-sf"])) for r in rows]
    disc = {int(float(r["factor"])): num(r["disc_a-min"]) / num(r["disc_h-sf"]) for r in rows}
    return (" / ".join(f"{v:.3f}" for _, v in cont) + " at M = " + " / ".join(str(f) for f, _ in cont)
            + f" × 16,492 (continuous), {disc[1]:.3f} … {disc[5]:.3f} (5×), {disc[6]:.3f} (6×) in the discrete engine")


def _lemma2_values(which: str) -> list[str]:
    """Lemma 2's values in ``results/chen/lmsys/m_sensitivity.md``: on the staged sample (``which="sample"``) or on
    the C-like log-normal outputs (``which="c-like"``, the sentence "The same for …")."""
    text = results_text("chen/lmsys/m_sensitivity.md")
    head = "this sample's output distribution: E[TEL(A_min)] / TEL(H-SF) = "
    if head not in text:
        raise LookupError("results/chen/lmsys/m_sensitivity.md: no Lemma 2 values on the sample")
    sample, _, rest = text.split(head, 1)[1].partition("The same for")
    sentence = sample if which == "sample" else rest.split("\n", 1)[0]
    values = re.findall(r"(\d+\.\d+) \(s = ", sentence)
    if not values:
        raise LookupError(f"results/chen/lmsys/m_sensitivity.md: no Lemma 2 values on the {which} outputs")
    return values


def chen_lemma2_sample() -> str:
    """README, C: Lemma 2's fluid-limit A_min ÷ H-SF (ℓ = 1) on the staged sample's outputs, lowest–highest over
    the prompt sizes it is evaluated at, as the study behind ``results/chen/lmsys/m_sensitivity.md`` wrote it
    (:func:`llmopt.papers.chen.lmsys_study.lemma2_exp1`, which needs the staged trace; the file does not).

    Returns
    -------
    str
        ``1.464–1.605``, to the file's three decimals.

    Raises
    ------
    LookupError
        If ``m_sensitivity.md`` has no Lemma 2 sentence.
    """
    values = _lemma2_values("sample")
    return f"{min(values, key=float)}–{max(values, key=float)}"


def chen_lemma2_c_like() -> str:
    """``results/chen/lmsys/README.md``: the same Lemma 2 ratio for a log-normal output distribution with C's
    median, mean and range (``m_sensitivity.md``'s "The same for …" sentence), lowest–highest.

    Returns
    -------
    str
        ``1.894–2.073``.

    Raises
    ------
    LookupError
        If ``m_sensitivity.md`` has no such sentence.
    """
    values = _lemma2_values("c-like")
    return f"{min(values, key=float)}–{max(values, key=float)}"


def chen_figure1_lambda(us: Sequence[int] = (2, 10, 100, 1000)) -> str:
    """README, C: Figure 1's λ_max (Lemma 2's worst case, s = 0) by :func:`llmopt.papers.chen.theory.figure1_cr`.

    Returns
    -------
    str
        ``λ_max = 1.2500, 1.7249, 2.3333, 2.9239 at u = 2, 10, 100, 1000``.
    """
    from llmopt.papers.chen.theory import figure1_cr

    return (f"λ_max = {', '.join(f'{figure1_cr(u):.4f}' for u in us)} at u = "
            f"{', '.join(map(str, us))}")


def _minus(text: str) -> str:
    return text.replace("-", "−")


def _amin_section6() -> list[dict[str, str]]:
    """``readings.csv``'s C §6 rows (the staged and the C-like sample) of the ``amin-readings`` study."""
    return [r for r in csv_rows("chen/amin-readings/readings.csv") if r["group"] != "theory"]


def chen_readings_nearest(reading: str = "certified") -> str:
    """README, C: on how many C §6 rows ``reading`` is the A_min reading nearest C's target (ties to the first
    reading listed), from ``results/chen/amin-readings/readings.csv``.

    Returns
    -------
    str
        ``7 of 10 rows``.
    """
    rows = [r for r in _amin_section6() if r["ratio"]]
    entries = list(dict.fromkeys((r["group"], r["entry"]) for r in rows))
    nearest = [min((r for r in rows if (r["group"], r["entry"]) == e),
                   key=lambda r: abs(num(r["ratio"]) - num(r["target"])))["reading"] for e in entries]
    return f"{nearest.count(reading)} of {len(entries)} rows"


def chen_readings_floor() -> str:
    """README, C: the lowest A_min ÷ H-SF of any reading on any C §6 row (``readings.csv``).

    Returns
    -------
    str
        ``≥ 1.06× H-SF``.
    """
    return f"≥ {min(num(r['ratio']) for r in _amin_section6() if r['ratio']):.2f}× H-SF"


def chen_readings_guard() -> str:
    """README, C: how many small random runs that finish without A_min's cycle guard it changes, per reading and
    guard (``results/chen/amin-readings/variants.csv``).

    Returns
    -------
    str
        ``2 of 600 certified, 8 of 600 repaired small random instances; a guard on repeated states,
        `cycle_guard=repeat`: 2 and 13``.
    """
    guard = {(r["entry"], r["reading"]): r
             for r in csv_rows("chen/amin-readings/variants.csv") if r["kind"] == "guard"}
    stale = ", ".join(f"{guard['stale', k]['changed']} of {guard['stale', k]['finished']} {k}"
                      for k in ("certified", "repaired"))
    return (f"{stale} small random instances; a guard on repeated states, `cycle_guard=repeat`: "
            f"{guard['repeat', 'certified']['changed']} and {guard['repeat', 'repaired']['changed']}")


def chen_readings_ties(reading: str = "certified") -> str:
    """README, C: how far C's per-step random ties move A_min ÷ H-SF on the C §6 rows, lowest … highest
    (``results/chen/amin-readings/variants.csv``, per step ÷ per request − 1).

    Returns
    -------
    str
        ``−3.6 … +6.4 %``.
    """
    moves = [num(r["b"]) / num(r["a"]) - 1 for r in csv_rows("chen/amin-readings/variants.csv")
             if r["kind"] == "ties" and r["reading"] == reading]
    return _minus(f"{100 * min(moves):+.1f} … {100 * max(moves):+.1f} %")


#: the blocks this module prints, by name
BLOCKS: dict[str, Block] = {
    "c-verdicts": Block(lambda: render_verdicts(chen_verdicts.CLAIMS, "C"), ("README.md",),
                        "the evidence column of each row (llmopt/papers/chen/verdicts.py)"),
    "c-section6-amin": Block(chen_section6_amin, ("README.md",), "results/chen/lmsys/figures_5_7.csv"),
    "c-section6-amax": Block(chen_section6_amax, ("README.md",), "results/chen/lmsys/figures_5_7.csv"),
    "c-x01-amin": Block(chen_x01_amin, ("results/chen/lmsys/README.md",), "results/chen/lmsys/figures_5_7.csv"),
    "c-m-sweep": Block(chen_m_sweep, ("results/chen/lmsys/README.md",),
                       "results/chen/lmsys/c_like_m_sweep.csv"),
    "c-readings-nearest": Block(chen_readings_nearest, ("README.md",), "results/chen/amin-readings/readings.csv"),
    "c-readings-floor": Block(chen_readings_floor, ("README.md",), "results/chen/amin-readings/readings.csv"),
    "c-readings-guard": Block(chen_readings_guard, ("README.md",), "results/chen/amin-readings/variants.csv"),
    "c-readings-ties": Block(chen_readings_ties, ("README.md",), "results/chen/amin-readings/variants.csv"),
    "c-lemma2-sample": Block(chen_lemma2_sample, ("README.md", "results/chen/lmsys/README.md"),
                             "results/chen/lmsys/m_sensitivity.md"),
    "c-lemma2-c-like": Block(chen_lemma2_c_like, ("results/chen/lmsys/README.md",),
                             "results/chen/lmsys/m_sensitivity.md"),
    "c-figure1-lambda": Block(chen_figure1_lambda, ("README.md",), "llmopt.papers.chen.theory.figure1_cr"),
}
