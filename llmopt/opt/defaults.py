"""The hindsight pipeline's defaults, in a module with no imports so that the command line can show
them without loading the pipeline (``llmopt --help`` must start fast)."""

__all__ = ["DEFAULT_MAX_NNZ", "DEFAULT_BOUNDS", "DEFAULT_UPPER_BOUNDS", "DEFAULT_LNS_ITERATIONS",
           "DEFAULT_CP_SAT_SECONDS"]

#: Largest model (nonzeros) the pipeline builds unless told otherwise: about 2–3 GB while
#: building and inside HiGHS, and far beyond what a MIP solver closes in minutes.
DEFAULT_MAX_NNZ = 10_000_000
#: Bound stages run when none are named.
DEFAULT_BOUNDS = ("lp",)
#: The upper-bound stages the pipeline runs when none are named.
DEFAULT_UPPER_BOUNDS = ("mc-sf", "fcfs", "local-search")
#: Sub-IPs of the ``lns`` stage unless told otherwise.
DEFAULT_LNS_ITERATIONS = 30
#: Deterministic seconds of the ``cp-sat`` stage unless told otherwise.
DEFAULT_CP_SAT_SECONDS = 10.0
