"""Wang, Ye and Zhou's suites: Table EC.1 (synthetic, M = 100) and Figure 8 (LMSYS + arXiv mix),
registered by name in :data:`llmopt.bench.suites.SUITES`."""

from __future__ import annotations

from llmopt.bench.suites import Suite, WorkloadSpec

# --- Wang–Ye–Zhou: Table EC.1 (synthetic, M = 100) and Figure 8 (LMSYS + arXiv mix) ----------------

#: W Table EC.1 (L1060–1075): average TEL of Sorted-LP / Sorted-F (Swap) / LP-Swap (trials not stated).
_W_TABLE_EC1 = {
    "uniform n=100": (9763.0, 9748.3, 9771.4),
    "normal n=100": (9397.3, 9416.9, 9385.3),
    "binomial n=100": (10943.0, 10696.7, 10665.7),
    "exponential n=100": (6015.7, 6016.9, 6016.0),
    "mixed n=200": (22133.2, 22100.1, 22128.2),
}
#: The three algorithms of Table EC.1, as run here: the LP exactly (Δ = 1), as W solves it.
W_EC1_POLICIES = ("sorted-lp:bucket=1", "sorted-f-swap", "lp-swap:bucket=1")
#: Figure 8's legend (W §7).
W_FIG8_POLICIES = ("fcfs", "mc-sf", "sorted-lp", "lp-swap", "sorted-f-swap", "sorted-f-quantile")

WANG_SYNTHETIC = Suite(
    name="wang-synthetic",
    description="Wang–Ye–Zhou Table EC.1 reproduction (App. EC.4.2): M = 100, s, o <= 50, all requests at 0; "
                "Sorted-LP, Sorted-F (Swap), LP-Swap (plus MC-SF, FCFS, Sorted-F (quantile)) against the "
                "best schedule found and the certified column-generation LP bound; the IP is attempted where "
                "it has at most 2M nonzeros (Exponential, Mixed)",
    workloads=tuple(
        WorkloadSpec(w, tuple(range(10)), {}, label)
        for w, label in (("wang-uniform", "uniform n=100"), ("wang-normal", "normal n=100"),
                         ("wang-binomial", "binomial n=100"), ("wang-exponential", "exponential n=100"),
                         ("wang-mixed-synthetic", "mixed n=200"))
    ),
    policies=W_EC1_POLICIES + ("mc-sf", "fcfs", "sorted-f-quantile"),
    reference="sorted-f-swap",
    ip_time_limit=60.0,
    search_evals=200,
    bounds=("lp-colgen",),
    max_nnz=2_000_000,
    paper={label: dict(zip(W_EC1_POLICIES, v)) for label, v in _W_TABLE_EC1.items()},
    extra_report="llmopt.papers.wang.report:table_ec1",
)
WANG_MIXED = Suite(
    name="wang-mixed",
    bounds=("lp",),  # its committed results were made before the "auto" default
    description="Wang–Ye–Zhou §7 Figure 8 reproduction: 1,600 LMSYS + 400 arXiv requests in a seeded random "
                "order, all at t = 0, subsampled to n = 200, 400, …, 2,000 (nested prefixes); Llama2-70B on "
                "2×A100 cost model, M = 16,492; average end-to-end latency per algorithm",
    workloads=tuple(WorkloadSpec("wang-mixed", (0, 1, 2), {"n": n}, f"n={n}") for n in range(200, 2001, 200)),
    policies=W_FIG8_POLICIES,
    reference="sorted-f-swap",
    kind="trace",
    extra_report="llmopt.papers.wang.report:figure8",
)
