"""What the speed benchmarks time, and the counts beside their times.

The scripts under ``benchmarks/`` measure speed (CPU and wall-clock seconds, which depend on the
machine). What they time — their instances, the policies' decision counts, the Phase-1 rounds of
Sorted-F, the model sizes of the presolve study, the modules a command loads — does not, and the golden
tests recompute it against the committed ``results/`` folders. It lives here, in the package, so that
the scripts and the tests share one definition and no test loads a file from ``benchmarks/``.

* :func:`make_workload`, :func:`run_policy` — ``benchmarks/simulator_speed.py`` (also the instances of
  ``engine_core_speed.py`` and ``cli_startup.py``);
* :func:`make_mix`, :func:`phase1_rounds`, :func:`sorted_f_ael` — ``benchmarks/sorted_f_speed.py``;
* :func:`count_decisions` — ``benchmarks/chen_policy_speed.py``;
* :class:`InstrumentedAMin`, :func:`amin_step_run` — ``benchmarks/amin_step_cost.py``;
* :func:`presolve_instances`, :func:`presolve_models` — ``benchmarks/highs_presolve.py``;
* :func:`heavy_modules_of`, :func:`modules_loaded_by_simulate` — ``benchmarks/cli_startup.py``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from llmopt.engine.core import Decision
from llmopt.engine.discrete import simulate
from llmopt.model.canonical import CanonicalModel
from llmopt.model.instance import Instance, Request
from llmopt.model.schedule import Schedule
from llmopt.policies.a_min import AMin

__all__ = [
    "SPEED_WORKLOADS",
    "SPEED_PATTERNS",
    "SPEED_POLICIES",
    "make_workload",
    "run_policy",
    "SORTED_F_M",
    "SORTED_F_SIZES",
    "SORTED_F_SELECTORS",
    "make_mix",
    "phase1_rounds",
    "sorted_f_ael",
    "CHEN_SPEED_POLICIES",
    "count_decisions",
    "AMIN_U",
    "AMIN_WAVES",
    "AMIN_READINGS",
    "InstrumentedAMin",
    "amin_step_run",
    "presolve_instances",
    "presolve_models",
    "HEAVY",
    "heavy_modules_of",
    "modules_loaded_by_simulate",
]

# --- the simulator's workloads ---------------------------------------------------------------------

#: workload name -> (M, largest prompt, largest output or None for M − s)
SPEED_WORKLOADS: dict[str, tuple[int, int, int | None]] = {
    "J5.1-M40": (40, 5, None),
    "M16492": (16_492, 500, 1000),
}
#: arrival pattern -> offered memory load ρ (``None``: every request at 0)
SPEED_PATTERNS: dict[str, float | None] = {"t=0": None, "poisson ρ=0.8": 0.8, "poisson ρ=1.2": 1.2}
SPEED_POLICIES = ("mc-sf", "fcfs")


def make_workload(name: str, n: int, load: float | None, seed: int = 0) -> Instance:
    """``n`` requests of workload ``name`` (:data:`SPEED_WORKLOADS`), all at 0 or Poisson at load ``load``.

    The Poisson rate is ``λ = ρ·M / mean_i(s_i o_i + o_i(o_i + 1)/2)``: the token-steps a request holds.
    """
    M, s_max, o_max = SPEED_WORKLOADS[name]
    rng = np.random.default_rng([seed, n, M])
    s = rng.integers(1, s_max + 1, size=n)
    o_cap = M - s if o_max is None else np.minimum(o_max, M - s)
    o = rng.integers(1, o_cap + 1)
    if load is None:
        a = np.zeros(n, dtype=np.int64)
    else:
        cost = float(np.mean(o * s + o * (o + 1) / 2))  # token-steps held by one request
        rate = load * M / cost
        a = np.floor(np.cumsum(rng.exponential(1.0 / rate, size=n))).astype(np.int64)
    return Instance.from_tuples(M, zip(a.tolist(), s.tolist(), o.tolist()), name=f"{name}/n={n}")


def run_policy(inst: Instance, policy: str) -> Schedule:
    """``policy``'s schedule of ``inst`` in the discrete engine."""
    from llmopt.policies import make_policy

    return simulate(inst, make_policy(policy))


# --- Sorted-F's Phase 1 ----------------------------------------------------------------------------

SORTED_F_M = 16_492
SORTED_F_SIZES = (100, 200, 500, 1000, 2000)
SORTED_F_SELECTORS = ("swap", "quantile", "scaled-dp", "dp")


def make_mix(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Prompts and outputs of ``n`` W-§7-like requests: 20 % long (arXiv-like) prompts, the rest LMSYS-like."""
    rng = np.random.default_rng([seed, n])
    long = rng.random(n) < 0.2
    s = np.where(long, np.clip(np.rint(rng.normal(2600, 500, n)), 1000, 3800),
                 np.clip(np.rint(rng.lognormal(math.log(12), 1.58, n)), 1, 200)).astype(np.int64)
    o = np.where(long, np.clip(np.rint(rng.lognormal(math.log(161), 1.1, n)), 1, 1000),
                 np.clip(np.rint(rng.lognormal(math.log(43), 1.17, n)), 1, 250)).astype(np.int64)
    return s, o


def phase1_rounds(s: np.ndarray, o: np.ndarray, phase1: str) -> int:
    """How many Phase-1 selections (batches) Sorted-F's plan of ``(s, o)`` makes with selector ``phase1``."""
    from llmopt.policies import sorted_f

    calls = 0
    inner = sorted_f.PHASE1[phase1]

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return inner(*args, **kwargs)

    sorted_f.PHASE1[phase1] = counting
    try:
        sorted_f.plan_sorted_f(s, o, SORTED_F_M, phase1)
    finally:
        sorted_f.PHASE1[phase1] = inner
    return calls


def sorted_f_ael(s: np.ndarray, o: np.ndarray, phase1: str) -> float:
    """Sorted-F's average latency (iterations) on ``(s, o)``, all at 0, ``M =`` :data:`SORTED_F_M`."""
    from llmopt.policies.sorted_f import SortedF

    inst = Instance.from_tuples(SORTED_F_M, [(0, int(a), int(b)) for a, b in zip(s, o)])
    return simulate(inst, SortedF(phase1=phase1)).tel / len(s)


# --- policy decisions ------------------------------------------------------------------------------


#: The policies ``benchmarks/chen_policy_speed.py`` times on C §6 (H-SF and C's online policies).
CHEN_SPEED_POLICIES = ("h-sf", "a-max", "a-min", "a-min-multi", "a-ell", "a-random")


def count_decisions(policy: Any) -> list[int]:
    """Wrap ``policy.decide`` to count its calls; returns the one-element counter it increments."""
    counter = [0]
    decide = policy.decide

    def counted(t: Any) -> Any:
        counter[0] += 1
        return decide(t)

    policy.decide = counted
    return counter


# --- A_min's work per step (C Theorem 3) ------------------------------------------------------------

AMIN_U = 50
AMIN_WAVES = 10
#: reading -> A_min's keyword arguments
AMIN_READINGS: dict[str, dict[str, Any]] = {"certified": {}, "repaired": {"running_estimate": "repaired"}}


class InstrumentedAMin(AMin):
    """A_min that records, per run, ``times`` and ``cancelling`` (seconds of every ``decide`` call, and of
    those that cancelled), ``max_running`` (the running set's peak size) and ``admissions`` (requests put
    into the running set, those the repaired reading takes back included)."""

    def reset(self, M: int) -> None:
        super().reset(M)
        self.times: list[float] = []
        self.cancelling: list[float] = []
        self.max_running = 0
        self.admissions = 0
        add = self.running.add

        def counted(request: Any, start: int, estimate: int) -> None:
            self.admissions += 1
            add(request, start, estimate)

        self.running.add = counted  # type: ignore[method-assign]

    def decide(self, t: int) -> Decision:
        before = self.cancellations
        self.max_running = max(self.max_running, len(self.running))
        t0 = time.perf_counter()
        d = super().decide(t)
        dt = time.perf_counter() - t0
        self.times.append(dt)
        if self.cancellations > before:
            self.cancelling.append(dt)
        return d


def amin_step_run(M: int, reading: str, seed: int = 0) -> tuple[InstrumentedAMin, int]:
    """One discrete run of A_min (``reading`` of :data:`AMIN_READINGS`) on ``chen-worst-case`` u = 50 with
    ``n`` = :data:`AMIN_WAVES` memory-fulls of work at memory ``M``; returns ``(the instrumented policy, n)``.

    Raises
    ------
    AssertionError
        If the checker rejects the schedule.
    """
    from llmopt.verify.checker import check_schedule
    from llmopt.workloads.chen import chen_worst_case

    probe = chen_worst_case(seed, u=AMIN_U, n=1000, M=M)
    mean_work = sum(r.prompt + r.output for r in probe.requests) / probe.n
    n = max(1000, math.ceil(AMIN_WAVES * M / mean_work))
    inst = chen_worst_case(seed, u=AMIN_U, n=n, M=M)
    policy = InstrumentedAMin(seed=seed, **AMIN_READINGS[reading])
    sched = simulate(inst, policy)
    rep = check_schedule(inst, sched.starts, evictions=sched.evictions)
    if not (rep.ok and rep.tel == sched.tel):
        raise AssertionError(f"M={M} {reading}: schedule rejected by the checker")
    return policy, n


# --- HiGHS presolve --------------------------------------------------------------------------------


def presolve_instances() -> dict[str, Instance]:
    """The presolve study's instances: J AM1 seeds 0 and 1, AM2 seed 0, and a 2M-token output."""
    from llmopt.workloads.jaillet import jaillet_am1, jaillet_am2

    long = Instance(M=2_000_002, requests=(Request("a", 0, 1, 2_000_000), Request("b", 0, 1, 1)))
    return {"am1 seed 0": jaillet_am1(0), "am1 seed 1": jaillet_am1(1), "am2 seed 0": jaillet_am2(0),
            "2M-token output": long}


def presolve_models(inst: Instance) -> dict[str, CanonicalModel]:
    """``{"lp": the hindsight LP (no column upper bounds), "dual-lp": its dual}`` over the windows of the best
    policy schedule."""
    from dataclasses import replace

    from llmopt.formulations.dual import formulate_dual
    from llmopt.formulations.hindsight_ip import formulate
    from llmopt.model.windows import start_windows
    from llmopt.opt.hindsight import upper_bound_schedules

    best = min(s.tel for s in upper_bound_schedules(inst, search_evals=0).values())
    win = start_windows(inst, best)
    lp = formulate(inst, win).relax()
    return {"lp": replace(lp, col_upper=np.full(lp.n_cols, np.inf)), "dual-lp": formulate_dual(inst, win)}


# --- what a command loads --------------------------------------------------------------------------

HEAVY = ("scipy", "pandas", "matplotlib", "highspy", "ortools", "pulp")


def heavy_modules_of(module: str) -> list[str]:
    """The :data:`HEAVY` top-level packages that importing ``module`` loads, in a fresh interpreter."""
    code = f"import sys, {module}; print(sorted({{m.split('.')[0] for m in sys.modules}}))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return [m for m in json.loads(out.replace("'", '"')) if m in HEAVY]


def modules_loaded_by_simulate(path: Path, policy: str) -> list[str]:
    """Which of NumPy, pydantic and the :data:`HEAVY` packages one ``llmopt simulate`` run loads."""
    code = ("import sys; from llmopt.cli.main import app\n"
            f"try: app(['simulate', {str(path)!r}, '--policy', {policy!r}, '--json'])\n"
            "except SystemExit: pass\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)")
    err = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stderr
    return [m for m in err.split() if m in ("numpy", "pydantic", *HEAVY)]
