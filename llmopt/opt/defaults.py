"""The hindsight pipeline's defaults, in a module with no imports so that the command line can show
them without loading the pipeline (``llmopt --help`` must start fast)."""

__all__ = ["DEFAULT_MAX_NNZ", "DEFAULT_BOUNDS", "DEFAULT_UPPER_BOUNDS", "DEFAULT_LNS_ITERATIONS",
           "DEFAULT_CP_SAT_SECONDS", "AUTO_BOUNDS", "AUTO_ZONE_LP_MAX_N", "AUTO_ZONE_COLGEN_MAX_N",
           "AUTO_LP_COLGEN_MAX_N", "AUTO_STAGE_COST", "AUTO_COST_MARGIN", "AUTO_BOUNDS_SHARE", "auto_bounds",
           "auto_bound_choice", "predicted_bound_seconds", "expand_bounds", "possible_bounds", "next_bound_hint"]

#: Largest model (nonzeros) the pipeline builds unless told otherwise: about 2–3 GB while
#: building and inside HiGHS, and far beyond what a MIP solver closes in minutes.
DEFAULT_MAX_NNZ = 10_000_000
#: The bound name that stands for "the strongest bounds that fit this instance" (:func:`auto_bounds`).
AUTO_BOUNDS = "auto"
#: Bound stages run when none are named.
DEFAULT_BOUNDS = (AUTO_BOUNDS,)
#: ``auto`` adds the zone LP up to this many requests. Measured (``llmopt solve --relax``, J AM1,
#: M = 40, seed 0): zone-lp 2.2 s at n = 30 (gap 12 % vs lp-colgen's 29 %), 40 s at n = 60, over
#: 72 s at n = 100; its cost grows about as n^4 (``results/jaillet/zone-bound``).
AUTO_ZONE_LP_MAX_N = 40
#: ``auto`` adds the same zone LP by column generation (``zone-colgen``) above :data:`AUTO_ZONE_LP_MAX_N` and up
#: to this many requests. Measured (``llmopt/opt/studies/bound_scaling.py``, J AM1, M = 40, seed 0): the same value as
#: ``zone-lp`` at n = 40 and 60 in about half its time; 25 s at n = 100 alone on the machine where ``zone-lp``
#: took over 300 s (``results/opt/bound-scaling``).
AUTO_ZONE_COLGEN_MAX_N = 120
#: ``auto`` adds the column-generation LP up to this many requests: 2.6 s at n = 200 (J AM1, gap
#: 35.6 % with energy), while at 10,000 requests it overran a 200 s limit and certified only Σo.
AUTO_LP_COLGEN_MAX_N = 2000
#: Seconds of each stage ``auto`` may choose, predicted as ``a · (n / 40) ** e`` with ``(a, e)`` fitted to
#: ``results/opt/bound-scaling`` (J AM1, M = 40, seed 0, n = 40 … 200: the time at n = 40 and the least-squares
#: exponent over n >= 40). ``energy`` costs under a second up to 10,000 requests and is not listed.
AUTO_STAGE_COST = {"zone-lp": (2.16, 4.30), "zone-colgen": (1.00, 4.14), "lp-colgen": (0.29, 1.42)}
#: ``auto`` runs a stage only when this many times its predicted seconds fit its share of the time limit:
#: on the 8 tasks of the ``quick`` suite (J AM1/AM2, n = 27–68, M = 36–50, 2 tasks at once on 2 cores)
#: ``zone-colgen`` took 0.9–2.4× the prediction on six and 7.3× on one (AM2, n = 42, M = 47).
AUTO_COST_MARGIN = 3.0
#: Share of a whole-pipeline time limit that ``auto`` sizes the bound stages to: the stages run after the
#: search (which stops at 25 % of the limit at the latest) and end by 60 % of it
#: (:data:`llmopt.opt.hindsight.BOUNDS_END`), so 35 % is theirs whatever the search takes.
AUTO_BOUNDS_SHARE = 0.35
#: The upper-bound stages the pipeline runs when none are named.
DEFAULT_UPPER_BOUNDS = ("mc-sf", "fcfs", "local-search")
#: Sub-IPs of the ``lns`` stage unless told otherwise.
DEFAULT_LNS_ITERATIONS = 30
#: Deterministic seconds of the ``cp-sat`` stage unless told otherwise.
DEFAULT_CP_SAT_SECONDS = 10.0


def predicted_bound_seconds(name: str, n: int) -> float | None:
    """Predicted seconds of the bound stage ``name`` on ``n`` requests (:data:`AUTO_STAGE_COST`, before the
    margin); ``None`` for a stage without a cost model."""
    if name not in AUTO_STAGE_COST:
        return None
    a, e = AUTO_STAGE_COST[name]
    return a * (max(n, 1) / 40) ** e


def auto_bound_choice(n: int, budget_s: float | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The bound stages ``auto`` runs on ``n`` requests within ``budget_s`` seconds, and a note for each
    stronger stage it leaves out because it would not finish in that time.

    By size: ``energy`` always (0.1–1 s up to 10,000 requests), with the strongest of ``zone-lp``
    (n <= :data:`AUTO_ZONE_LP_MAX_N`), ``zone-colgen`` (n <= :data:`AUTO_ZONE_COLGEN_MAX_N`) and ``lp-colgen``
    (n <= :data:`AUTO_LP_COLGEN_MAX_N`). By time, when ``budget_s`` is given: a stage runs only if
    :data:`AUTO_COST_MARGIN` times :func:`predicted_bound_seconds` fits ``budget_s``; otherwise the next
    weaker one is tried. The choice depends on ``n`` and ``budget_s`` only, never on a clock, so a
    suite's records stay deterministic for a seed.

    Returns
    -------
    (stages, notes) : tuple of str, tuple of str
    """
    ladder = [name for name, limit in (("zone-lp", AUTO_ZONE_LP_MAX_N), ("zone-colgen", AUTO_ZONE_COLGEN_MAX_N),
                                       ("lp-colgen", AUTO_LP_COLGEN_MAX_N)) if n <= limit]
    notes: list[str] = []
    for name in ladder:
        predicted = predicted_bound_seconds(name, n)
        if budget_s is None or predicted is None or AUTO_COST_MARGIN * predicted <= budget_s:
            return ("energy", name), tuple(notes)
        notes.append(f"bound {name!r} left out: predicted {AUTO_COST_MARGIN * predicted:.1f} s at n = {n} "
                     f"({AUTO_COST_MARGIN:g} x its fitted {predicted:.1f} s), more than the bound stages' "
                     f"{budget_s:.1f} s")
    return ("energy",), tuple(notes)


def auto_bounds(n: int, budget_s: float | None = None) -> tuple[str, ...]:
    """The bound stages ``auto`` runs on an instance of ``n`` requests within ``budget_s`` seconds
    (``None``: by size alone); see :func:`auto_bound_choice`."""
    return auto_bound_choice(n, budget_s)[0]


def expand_bounds(names: tuple[str, ...], n: int, budget_s: float | None = None) -> tuple[str, ...]:
    """``names`` with :data:`AUTO_BOUNDS` replaced by :func:`auto_bounds` (``n``, ``budget_s``), without repeats."""
    out: list[str] = []
    for name in names:
        for b in auto_bounds(n, budget_s) if name == AUTO_BOUNDS else (name,):
            if b not in out:
                out.append(b)
    return tuple(out)


def possible_bounds(names: tuple[str, ...]) -> tuple[str, ...]:
    """Every bound stage ``names`` may run on some instance (:data:`AUTO_BOUNDS` stands for all of
    :func:`auto_bounds`' choices): the bound columns of a results table."""
    out: list[str] = []
    for name in names:
        for b in ("energy", "zone-lp", "zone-colgen", "lp-colgen") if name == AUTO_BOUNDS else (name,):
            if b not in out:
                out.append(b)
    return tuple(out)


def next_bound_hint(ran: tuple[str, ...], n: int) -> str:
    """One sentence on what would most likely tighten the bracket next, given the bound stages that ran."""
    zone = {"zone-lp", "zone-colgen", "lag-lp"} & set(ran)
    if not zone and n <= 100:
        return ("--bound zone-lp: it usually halves the gap of the LP bounds on J-style instances (seconds to a "
                "minute at this size)")
    if not {"zone-lp", "zone-colgen", "lag-lp", "lp", "lp-colgen"} & set(ran):
        return ("--bound lp-colgen: the LP value by column generation (seconds at a few hundred requests; at "
                "several thousand it may not finish a pricing round in its time)")
    if not zone:
        return (f"--bound zone-colgen with a long --time-limit: stronger than the LP; its master re-solves grow "
                f"quickly with n (n = {n:,})")
    return "the schedule side: a longer --time-limit for the IP, or --upper-bound lns / cp-sat"
