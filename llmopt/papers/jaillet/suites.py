"""Jaillet et al.'s suites: §5.1 synthetic (Figure 2, certified, IP scaling, OPT frontier) and §5.2 LMSYS
(Table 1, the α/β sweeps), registered by name in :data:`llmopt.bench.suites.SUITES`."""

from __future__ import annotations

from llmopt.bench.suites import Suite, WorkloadSpec

# Jaillet et al. §5.1 (200 trials per arrival model; ratio = MC-SF TEL / hindsight OPT).
_J_PAPER = {
    "jaillet-am1": {"mean": 1.005, "max": 1.074, "min": 1.000, "exact": 114, "trials": 200},
    "jaillet-am2": {"mean": 1.047, "max": 1.227, "min": 1.000, "trials": 200},
}

# The (M, n) points of results/jaillet/ip-scaling/README.md.
_IP_SCALING_POINTS = (
    [(40, n) for n in (6, 8, 10, 12, 14, 16, 20, 24)]
    + [(30, n) for n in (8, 12, 16)]
    + [(50, n) for n in (8, 12, 16)]
)

#: Sizes of the opt-frontier suite: n for AM1; the horizon T for AM2 (λ = 1, seed 0: n = 13, 18, 26, 35).
OPT_FRONTIER_AM1_N = (16, 20, 22, 24)
OPT_FRONTIER_AM2_T = (20, 28, 36, 44)

QUICK = Suite(
    name="quick",
    description="Smoke test: J §5.1 arrival models 1 and 2, 4 seeds each",
    workloads=(
        WorkloadSpec("jaillet-am1", tuple(range(4)), {}),
        WorkloadSpec("jaillet-am2", tuple(range(4)), {}),
    ),
    ip_time_limit=5.0,
    search_evals=100,
    paper=_J_PAPER,
)
JAILLET_SYNTHETIC = Suite(
    name="jaillet-synthetic",
    bounds=("lp",),  # its committed results were made before the "auto" default
    description="Jaillet et al. §5.1 reproduction: MC-SF vs hindsight OPT, 200 trials per arrival model",
    workloads=(
        WorkloadSpec("jaillet-am1", tuple(range(200)), {}),
        WorkloadSpec("jaillet-am2", tuple(range(200)), {}),
    ),
    ip_time_limit=5.0,
    search_evals=200,
    paper=_J_PAPER,
)
IP_SCALING = Suite(
    name="ip-scaling",
    bounds=("lp",),  # its committed results were made before the "auto" default
    description="How large an Arrival-Model-1 instance the hindsight IP proves optimal within 10 minutes: "
                "fixed M and n, seed 0, one solver thread per task",
    workloads=tuple(
        WorkloadSpec("jaillet-am1", (0,), {"n_range": (n, n), "M_range": (M, M)}, f"M={M} n={n}")
        for M, n in _IP_SCALING_POINTS
    ),
    ip_time_limit=600.0,
    search_evals=200,
    task_table=True,
)
JAILLET_CERTIFIED = Suite(
    name="jaillet-certified",
    description="J §5.1 trials with the certified bracket of issue 9: lns schedules, lp + energy bounds",
    workloads=(
        WorkloadSpec("jaillet-am1", tuple(range(200)), {}),
        WorkloadSpec("jaillet-am2", tuple(range(200)), {}),
    ),
    ip_time_limit=5.0,
    search_evals=200,
    lns_iterations=30,
    upper_bounds=("mc-sf", "fcfs", "local-search", "lns"),
    bounds=("lp", "energy"),
    paper=_J_PAPER,
)
OPT_FRONTIER = Suite(
    name="opt-frontier",
    description="Proven-OPT frontier: AM1 (M = 40) and AM2 (M = 40, λ = 1) of growing size, 600 s per IP "
                "with the peak-zone rows, lns and cp-sat schedules, lp + energy + zone-lp bounds",
    workloads=tuple(
        WorkloadSpec("jaillet-am1", (0,), {"n_range": (n, n), "M_range": (40, 40)}, f"AM1 n={n}")
        for n in OPT_FRONTIER_AM1_N
    ) + tuple(
        WorkloadSpec("jaillet-am2", (0,), {"T_range": (T, T), "rate_range": (1.0, 1.0), "M_range": (40, 40)},
                     f"AM2 T={T}")
        for T in OPT_FRONTIER_AM2_T
    ),
    ip_time_limit=600.0,
    search_evals=200,
    lns_iterations=60,
    upper_bounds=("mc-sf", "fcfs", "local-search", "lns", "cp-sat"),
    formulation="hindsight-ip-zones",
    bounds=("lp", "energy", "zone-lp"),
    task_table=True,
)


# --- trace suites: J §5.2 (LMSYS, Llama2-70B on 2×A100, continuous time) ----------------------

#: The LMSYS file of the J §5.2 reproductions (word counts, as in the papers): the 662k-row
#: "input<257 & output<257" filter, whose prompt mean (42.8 words) is closest to the paper's
#: (40.6); zero-length rows (63 prompts, 1,136 outputs) are dropped. See results/jaillet/lmsys/README.md.
LMSYS_TRACE = "lmsys_chat_1m_words_in256_out256.csv"


def _alpha_spec(alpha: float, beta: float = 1.0, pass_cost: str = "free") -> str:
    return f"alpha-protection:alpha={alpha:g}" + ("" if beta == 1.0 else f",beta={beta:g}") + \
        ("" if pass_cost == "free" else f",pass_cost={pass_cost}")


#: J §5.2's algorithms: MC-SF, MC-Benchmark and the six α / β benchmark configurations.
J52_POLICIES = ("mc-sf", "mc-benchmark", _alpha_spec(0.3), _alpha_spec(0.25), _alpha_spec(0.2, 0.2),
                _alpha_spec(0.2, 0.1), _alpha_spec(0.1, 0.2), _alpha_spec(0.1, 0.1))
_J_TABLE1 = {  # J Table 1 (L726–737): mean, std, max, min of the average latency (s) over 50 runs
    "mc-sf": (32.112, 0.354, 33.097, 31.505),
    "mc-benchmark": (46.472, 0.310, 47.135, 45.838),
    _alpha_spec(0.3): (51.933, 0.324, 52.532, 51.204),
    _alpha_spec(0.25): (51.046, 0.351, 51.757, 50.279),
    _alpha_spec(0.2, 0.2): (50.401, 0.343, 51.035, 49.700),
    _alpha_spec(0.2, 0.1): (50.395, 0.360, 51.083, 49.586),
    _alpha_spec(0.1, 0.2): (53.393, 1.457, 56.357, 49.488),
    _alpha_spec(0.1, 0.1): (50.862, 0.946, 53.978, 49.086),
}


#: Seeds of the §5.2 sweeps: ≥ 5 for the smallest loop-free α, ≥ 3 for the α / β curves (issue 24).
LMSYS_SEEDS = (0, 1, 2, 3, 4)


def _sweep_policies() -> tuple[str, ...]:
    """J52 policies, the α-greedy grid 0.01…0.40 (step 0.01) for the smallest loop-free α, α sweeps
    with β ∈ {0.1, 0.2} (Figures 7 / 10) and β sweeps with α ∈ {0.1, 0.2} (Figures 8 / 11) — the α / β
    sweeps under each reading of what clearing costs (``pass_cost``: free, extra passes, every pass)."""
    specs = list(J52_POLICIES)
    specs += [_alpha_spec(round(0.01 * i, 2)) for i in range(1, 41)]
    alphas = (0.02, 0.05, 0.08, 0.1, 0.12, 0.15, 0.18, 0.2, 0.22, 0.25, 0.3)
    betas = (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
    for cost in ("free", "extra-passes", "every-pass"):
        specs += [_alpha_spec(a, b, cost) for b in (0.1, 0.2) for a in alphas]
        specs += [_alpha_spec(a, b, cost) for a in (0.1, 0.2) for b in betas]
    return tuple(dict.fromkeys(specs))


JAILLET_TABLE1 = Suite(
    name="jaillet-table1",
    bounds=("lp",),  # its committed results were made before the "auto" default
    description="Jaillet et al. Table 1 reproduction: 1,000 LMSYS requests, Poisson λ = 50 /s, "
                "Llama2-70B on 2×A100 cost model, M = 16,492; 50 runs two ways: requests, arrivals and "
                "β randomness resampled per seed, and one request sample (seed 0's) with only the arrivals and "
                "β randomness redrawn",
    workloads=(WorkloadSpec("trace", tuple(range(50)),
                            {"trace": LMSYS_TRACE, "format": "lmsys", "n": 1000, "rate": 50,
                             "on_bad_row": "drop"}, "lmsys n=1000 λ=50"),
               WorkloadSpec("trace", tuple(range(50)),
                            {"trace": LMSYS_TRACE, "format": "lmsys", "n": 1000, "rate": 50,
                             "on_bad_row": "drop", "request_seed": 0}, "lmsys n=1000 λ=50, one request sample")),
    policies=J52_POLICIES,
    paper={label: {p: dict(zip(("mean", "std", "max", "min"), v)) for p, v in _J_TABLE1.items()}
           for label in ("lmsys n=1000 λ=50", "lmsys n=1000 λ=50, one request sample")},
    kind="trace",
)
JAILLET_LMSYS = Suite(
    name="jaillet-lmsys",
    bounds=("lp",),  # its committed results were made before the "auto" default
    description="Jaillet et al. §5.2 reproduction: 10,000 LMSYS requests, Poisson λ = 50 /s (high demand) "
                "and λ = 10 /s (low demand), Llama2-70B on 2×A100 cost model, M = 16,492: the 8 algorithms, "
                "the α-greedy grid for the smallest loop-free α, α and β sweeps (Figures 6–11) under three "
                "readings of what clearing costs; seeds 0–4",
    workloads=tuple(
        WorkloadSpec("trace", LMSYS_SEEDS, {"trace": LMSYS_TRACE, "format": "lmsys", "n": 10_000, "rate": rate,
                                            "on_bad_row": "drop"}, f"lmsys n=10000 λ={rate}")
        for rate in (50, 10)
    ),
    policies=_sweep_policies(),
    paper={"lmsys n=10000 λ=50": {"smallest_alpha": 0.21}, "lmsys n=10000 λ=10": {"smallest_alpha": 0.24}},
    kind="trace",
)
