"""The hindsight pipeline's defaults, in a module with no imports so that the command line can show
them without loading the pipeline (``llmopt --help`` must start fast)."""

__all__ = ["DEFAULT_MAX_NNZ", "DEFAULT_BOUNDS", "DEFAULT_UPPER_BOUNDS", "DEFAULT_LNS_ITERATIONS",
           "DEFAULT_CP_SAT_SECONDS", "AUTO_BOUNDS", "AUTO_ZONE_LP_MAX_N", "AUTO_ZONE_COLGEN_MAX_N",
           "AUTO_LP_COLGEN_MAX_N", "auto_bounds",
           "expand_bounds", "possible_bounds", "next_bound_hint"]

#: Largest model (nonzeros) the pipeline builds unless told otherwise: about 2–3 GB while
#: building and inside HiGHS, and far beyond what a MIP solver closes in minutes.
DEFAULT_MAX_NNZ = 10_000_000
#: The bound name that stands for "the strongest bounds that fit this instance" (:func:`auto_bounds`).
AUTO_BOUNDS = "auto"
#: Bound stages run when none are named.
DEFAULT_BOUNDS = (AUTO_BOUNDS,)
#: ``auto`` adds the zone LP up to this many requests. Measured (``llmopt solve --relax``, J AM1,
#: M = 40, seed 0): zone-lp 2.2 s at n = 30 (gap 12 % vs lp-colgen's 29 %), 40 s at n = 60, over
#: 72 s at n = 100; its cost grows about as n^4 (``results/zone_bound``).
AUTO_ZONE_LP_MAX_N = 40
#: ``auto`` adds the same zone LP by column generation (``zone-colgen``) above :data:`AUTO_ZONE_LP_MAX_N` and up
#: to this many requests. Measured (``benchmarks/bound_scaling.py``, J AM1, M = 40, seed 0): the same value as
#: ``zone-lp`` at n = 40 and 60 in about half its time; 25 s at n = 100 alone on the machine where ``zone-lp``
#: took over 300 s (``results/bound_scaling``).
AUTO_ZONE_COLGEN_MAX_N = 120
#: ``auto`` adds the column-generation LP up to this many requests: 2.6 s at n = 200 (J AM1, gap
#: 35.6 % with energy), while at 10,000 requests it overran a 200 s limit and certified only Σo.
AUTO_LP_COLGEN_MAX_N = 2000
#: The upper-bound stages the pipeline runs when none are named.
DEFAULT_UPPER_BOUNDS = ("mc-sf", "fcfs", "local-search")
#: Sub-IPs of the ``lns`` stage unless told otherwise.
DEFAULT_LNS_ITERATIONS = 30
#: Deterministic seconds of the ``cp-sat`` stage unless told otherwise.
DEFAULT_CP_SAT_SECONDS = 10.0


def auto_bounds(n: int) -> tuple[str, ...]:
    """The bound stages ``auto`` runs on an instance of ``n`` requests: ``energy`` always (0.1–1 s up
    to 10,000 requests), with ``zone-lp`` (n <= :data:`AUTO_ZONE_LP_MAX_N`), ``zone-colgen``
    (n <= :data:`AUTO_ZONE_COLGEN_MAX_N`) or ``lp-colgen`` (n <= :data:`AUTO_LP_COLGEN_MAX_N`)."""
    if n <= AUTO_ZONE_LP_MAX_N:
        return ("energy", "zone-lp")
    if n <= AUTO_ZONE_COLGEN_MAX_N:
        return ("energy", "zone-colgen")
    if n <= AUTO_LP_COLGEN_MAX_N:
        return ("energy", "lp-colgen")
    return ("energy",)


def expand_bounds(names: tuple[str, ...], n: int) -> tuple[str, ...]:
    """``names`` with :data:`AUTO_BOUNDS` replaced by :func:`auto_bounds` (``n``), without repeats."""
    out: list[str] = []
    for name in names:
        for b in auto_bounds(n) if name == AUTO_BOUNDS else (name,):
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
