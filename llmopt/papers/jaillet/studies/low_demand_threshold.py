"""Why α-protection greedy's smallest loop-free α at λ = 10 is 0.09–0.12 here and 0.24 in the paper.

J §5.2 (L382): a grid search with step 0.01 gives the smallest α without infinite processing loops as **0.21 at
λ = 50** and **0.24 at λ = 10** (10,000 LMSYS requests, M = 16,492). The committed reproduction
(``results/jaillet/lmsys``) gets 0.21–0.27 at λ = 50 but 0.09–0.12 at λ = 10 on every seed, with the order of the two
reversed. This study computes the smallest loop-free α per (variant, λ, seed) for candidate causes:

* **M**: 8,192 and 7,629 tokens (J0's own formula, DIGEST §4.3 / I-15);
* **the output distribution**: the long outputs thinned (output median 75 → 36 words, as
  the ``alpha-loop-sensitivity`` study) and the two other staged LMSYS files (``shared/data/SOURCES.md``);
* **how α enters admission**: against the current usage instead of the next iteration's projection; with the
  prompt's tokens not counted at admission (prefill handling); reserving the running and new requests' expected
  growth to the trace's mean output; and the rule of the paper's **released simulator** (public repository
  ``anonymouspeople111/neurips2025-code``, ``alpha-greedy.py``): *if the running requests' current usage is at most
  (1 − α)M, every waiting prompt joins the batch, in arrival order, until the batch holds B jobs* — no per-prompt
  check — and *a clearing happens after a batch that overflowed M* (one batch of overflow is allowed). B is set in a
  notebook that is not released, so it is varied here;
* **batch times and token accounting of the released code**: its batch-time formula (``44.6 ms + 0.52 ms · jobs +
  0.0027 ms · Σ generated context + 0.378 ms · Σ new prompt tokens``) and its extra prompt iteration (``o + 1``).

Every variant is a subclass of :class:`~llmopt.policies.protection.AlphaProtection` defined here (the library's
policy is unchanged). Variants that let a batch overflow run on an instance whose capacity is raised to 10⁹ tokens,
with the policy enforcing M = 16,492 itself. A run is a *loop* when the engine's loop guard stops it (10,000
evictions with no completion in between) or when it has not finished after 10 iterations per request (a thrash
with rare completions). The smallest loop-free α is one grid step above the largest α that loops (α = 0.01 … 0.50),
so an isolated loop above a loop-free α counts.

    llmopt study run low-demand-threshold --out results/jaillet/lmsys --grid full --jobs 2
    llmopt study run low-demand-threshold --quick      # two variants, seed 0, λ = 10, n = 2,000, coarse grid

writes ``low_demand_threshold.md`` into the output folder.
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import math
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.core import Decision, SimulationError
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import EvictionLoopError
from llmopt.model.timed_instance import TimedInstance
from llmopt.opt.studies import StudyError, options_argv, run_main, study_command
from llmopt.papers.jaillet.released_cost import ReleasedCodeCostModel
from llmopt.papers.jaillet.suites import LMSYS_TRACE
from llmopt.policies import make_policy_spec
from llmopt.policies.protection import AlphaProtection
from llmopt.workloads.traces import Trace, load_trace, sample_instance
from llmopt.workloads.traces.data import data_dir, trace_workload
from llmopt.workloads.traces.sampling import thin_long_outputs

PAPER_M = 16_492
PAPER_THRESHOLD = {10.0: 0.24, 50.0: 0.21}
RELAXED_M = 10**9
ALPHAS = tuple(round(0.01 * i, 2) for i in range(1, 51))
COARSE = tuple(a for a in ALPHAS if round(a * 100) % 5 == 0)
#: Mean output of the staged file with zero-length rows dropped (SOURCES.md: 94.10).
STAGED_OUTPUT_MEAN = 94.10


# --- policies ----------------------------------------------------------------------------------------------------

class CurrentUsageAdmission(AlphaProtection):
    """Admission against the current usage ``Σ_running (s_j + a_j)`` (not the next iteration's ``+1`` each) plus
    ``s_i + 1`` per new prompt; a prompt whose own batch would overflow M is not admitted."""

    def decide(self, t: int) -> Decision:
        evicted: list[str] = []
        if self.base + (t + 1) * len(self.running) > self.M:
            evicted = self._clear(t)
        return self._admit(t, evicted, lambda proj, need, n: proj - n + need, lambda proj, need: proj + need)

    def _admit(self, t: int, evicted: list[str], check: Callable[[int, int, int], float],
               real: Callable[[int, int], int]) -> Decision:
        proj = self.base + (t + 1) * len(self.running)
        queue, started = self.queue, []
        while queue:
            request = queue[0][2]
            need = request.prompt + 1
            n_after = len(self.running)
            if check(proj, need, n_after) > self.threshold or real(proj, need) > self.M:
                break
            heapq.heappop(queue)
            self.running[request.id] = (request, t)
            self.base += request.prompt - t
            proj += need
            started.append(request.id)
        count = len(self.running)
        wake = (self.M - self.base) // count if count else None
        return Decision(start=tuple(started), evict=tuple(evicted),
                        wake_at=wake if wake is not None and wake > t else None)


class PromptLaterAdmission(CurrentUsageAdmission):
    """The prompt's ``s_i`` tokens are not counted at admission (only its first token): the check is
    ``proj + 1 <= (1 − α)M`` per new prompt, as if prefill memory appeared one iteration later."""

    def decide(self, t: int) -> Decision:
        evicted: list[str] = []
        if self.base + (t + 1) * len(self.running) > self.M:
            evicted = self._clear(t)
        counted = [self.base + (t + 1) * len(self.running)]

        def check(proj: int, need: int, n: int) -> float:
            counted[0] += 1
            return counted[0]

        return self._admit(t, evicted, check, lambda proj, need: proj + need)


class ExpectedGrowthAdmission(AlphaProtection):
    """Admission reserving each request's growth to the trace's mean output ``ō``: a new prompt is admitted while
    ``Σ_running (s_j + max(a_j + 1, ō)) + Σ_new (s_i + ō) <= (1 − α)M`` (a look-ahead with one output estimate)."""

    def __init__(self, alpha: float, o_bar: float = STAGED_OUTPUT_MEAN) -> None:
        super().__init__(alpha)
        self.o_bar = o_bar

    def decide(self, t: int) -> Decision:
        evicted: list[str] = []
        if self.base + (t + 1) * len(self.running) > self.M:
            evicted = self._clear(t)
        reserved = sum(r.prompt + max(t - p + 1, self.o_bar) for r, p in self.running.values())
        proj = self.base + (t + 1) * len(self.running)
        queue, started = self.queue, []
        while queue:
            request = queue[0][2]
            if reserved + request.prompt + self.o_bar > self.threshold or proj + request.prompt + 1 > self.M:
                break
            heapq.heappop(queue)
            self.running[request.id] = (request, t)
            self.base += request.prompt - t
            proj += request.prompt + 1
            reserved += request.prompt + self.o_bar
            started.append(request.id)
        count = len(self.running)
        wake = (self.M - self.base) // count if count else None
        return Decision(start=tuple(started), evict=tuple(evicted),
                        wake_at=wake if wake is not None and wake > t else None)


class ReleasedCodeAlphaGreedy(AlphaProtection):
    """α-greedy as the paper's released simulator runs it, on an instance with a raised capacity.

    * Clearing: after a batch, when the running requests' usage exceeds ``policy_M`` (the batch has overflowed),
      every running request is cleared and returns to its FCFS position.
    * Admission ``"gate"``: if the running requests' current usage is at most ``(1 − α)·policy_M``, waiting prompts
      join in arrival order while the batch holds fewer than ``B`` jobs (running requests + new prompts); no
      per-prompt memory check. ``"per-prompt"``: our reading's check (``proj + s_i + 1 <= (1 − α)M``).
    """

    def __init__(self, alpha: float, admission: str = "gate", B: int | None = None, policy_M: int = PAPER_M) -> None:
        self.B, self.policy_M = B, policy_M
        super().__init__(alpha)
        # after the base class, whose own ``admission`` option (the library's reading) would overwrite it
        self.gate = admission

    def reset(self, M: int) -> None:
        super().reset(self.policy_M)

    def decide(self, t: int) -> Decision:
        evicted: list[str] = []
        if self.running and self.base + t * len(self.running) > self.M:
            self.clearings += 1
            self.clearing_passes += 1
            for rid, (request, p) in list(self.running.items()):
                del self.running[rid]
                self.base -= request.prompt - p
                heapq.heappush(self.queue, (request.arrival, request.position, request))
                evicted.append(rid)
        queue, started = self.queue, []
        if self.gate == "gate":
            if self.base + t * len(self.running) <= self.threshold:
                while queue and (self.B is None or len(self.running) < self.B):
                    request = heapq.heappop(queue)[2]
                    self.running[request.id] = (request, t)
                    self.base += request.prompt - t
                    started.append(request.id)
        else:
            proj = self.base + (t + 1) * len(self.running)
            while queue and (self.B is None or len(self.running) < self.B):
                request = queue[0][2]
                if proj + request.prompt + 1 > self.threshold:
                    break
                heapq.heappop(queue)
                self.running[request.id] = (request, t)
                self.base += request.prompt - t
                proj += request.prompt + 1
                started.append(request.id)
        count = len(self.running)
        wake = (self.M - self.base) // count + 1 if count else None  # first t' with base + t'·count > M
        return Decision(start=tuple(started), evict=tuple(evicted),
                        wake_at=wake if wake is not None and wake > t else None)


# --- variants ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Variant:
    key: str
    group: str
    what: str
    policy: Callable[[float], Any]
    trace: str = "staged"  # "staged", "thinned", or a file under traces/
    M: int = PAPER_M
    relaxed: bool = False  # instance capacity raised (the policy enforces M itself)
    cost: str = "fitted"  # or "released"
    plus_one: bool = False
    coarse_only: bool = False  # a slow policy run on the coarse grid whatever --grid says


def _released(B: int | None, admission: str = "gate") -> Callable[[float], Any]:
    return lambda a: ReleasedCodeAlphaGreedy(a, admission=admission, B=B)


VARIANTS: tuple[Variant, ...] = (
    Variant("ours", "baseline", "committed reading: per-prompt check of the next iteration's usage, clear before "
            "overflow", AlphaProtection),
    Variant("M = 8,192", "M", "capacity 8,192 (J0's formula with GiB)", AlphaProtection, M=8192),
    Variant("M = 7,629", "M", "capacity 7,629 (J0's formula with GB)", AlphaProtection, M=7629),
    Variant("thinned outputs", "outputs", "long outputs thinned: median 75 → 36 words", AlphaProtection,
            trace="thinned"),
    Variant("file sample20k", "outputs", "lmsys_chat_1m_words_sample20k_in199_out499.csv (output median 116)",
            AlphaProtection, trace="lmsys_chat_1m_words_sample20k_in199_out499.csv"),
    Variant("file sample100k", "outputs", "lmsys_chat_1m_words_sample100k_in499_out599.csv (output median 124)",
            AlphaProtection, trace="lmsys_chat_1m_words_sample100k_in499_out599.csv"),
    Variant("current usage", "admission", "admission against the current usage (no +1 of the running)",
            CurrentUsageAdmission),
    Variant("prompt not counted", "admission / prefill", "a new prompt's s_i not counted at admission (prefill "
            "memory appears an iteration later)", PromptLaterAdmission),
    Variant("expected growth", "admission", "admission reserves growth to the mean output 94.1 (look-ahead; coarse "
            "grid only: its O(running) check per decision is slow)", ExpectedGrowthAdmission, coarse_only=True),
    Variant("clear after overflow", "overflow", "per-prompt admission, clearing after the batch that overflowed "
            "(released code's detection)", _released(None, "per-prompt"), relaxed=True),
    Variant("released batch times, o+1", "batch times", "ours with the released code's batch-time formula and its "
            "prompt iteration (o + 1 iterations)", AlphaProtection, cost="released", plus_one=True),
    *(Variant(f"released admission, B = {B}", "released code", f"gate on current usage ≤ (1 − α)M, then every "
              f"waiting prompt up to {B} jobs; clear after overflow", _released(B), relaxed=True)
      for B in (128, 136, 144, 160, 256)),
    Variant("released code, B = 136", "released code", "released admission (B = 136) + released batch times + o + 1",
            _released(136), relaxed=True, cost="released", plus_one=True),
)
BY_KEY = {v.key: v for v in VARIANTS}
ALL_VARIANTS = VARIANTS


# --- running -----------------------------------------------------------------------------------------------------

_THINNED: list[Trace] = []


def instance_for(v: Variant, rate: float, seed: int, n: int) -> TimedInstance:
    if v.trace == "thinned":
        if not _THINNED:
            _THINNED.append(thin_long_outputs(load_trace(data_dir() / "traces" / LMSYS_TRACE, "lmsys", M=PAPER_M,
                                               on_bad_row="drop")))
        inst = sample_instance(_THINNED[0], n, seed, rate=rate, M=v.M)
    else:
        trace = LMSYS_TRACE if v.trace == "staged" else v.trace
        inst = trace_workload(seed, trace=trace, n=n, rate=rate, M=v.M, on_bad_row="drop")
    if v.plus_one:
        inst = dataclasses.replace(inst, requests=tuple(dataclasses.replace(r, output=r.output + 1)
                                                        for r in inst.requests))
    if v.relaxed:
        inst = dataclasses.replace(inst, M=RELAXED_M)
    return inst


def cost_model(key: str) -> Any:
    return ReleasedCodeCostModel() if key == "released" else make_cost_model()


def outcome(instance: TimedInstance, policy: Any, cost: Any) -> tuple[str, Any]:
    """``"."`` (no clearing), ``"c"`` (cleared, finished), ``"L"`` (loop guard) or ``"T"`` (iteration cap), and the
    schedule of a finished run."""
    try:
        sched = simulate_continuous(instance, policy, cost, max_iterations=10 * instance.n)
    except EvictionLoopError:
        return "L", None
    except SimulationError as exc:
        if "made no progress by iteration" in str(exc):
            return "T", None
        raise
    return ("c" if policy.clearings else "."), sched


def pattern(v: Variant, rate: float, seed: int, n: int, grid: str) -> str:
    """One character per α of :data:`ALPHAS` (``"?"``: not run in the coarse grid)."""
    inst = instance_for(v, rate, seed, n)
    cost = cost_model(v.cost)
    done: dict[float, str] = {}

    def at(a: float) -> str:
        if a not in done:
            done[a] = outcome(inst, v.policy(a), cost)[0]
        return done[a]

    if grid == "full" and not v.coarse_only:
        for a in ALPHAS:
            at(a)
    else:  # coarse step 0.05, then the fine points just above the largest coarse loop
        looping = [a for a in COARSE if at(a) in "LT"]
        if looping:
            c = max(looping)
            for a in ALPHAS:
                if c < a < c + 0.05 - 1e-9:
                    at(a)
        else:
            for a in ALPHAS:
                if a < COARSE[0]:
                    at(a)
    return "".join(done.get(a, "?") for a in ALPHAS)


def threshold(pat: str, bad: str = "LT") -> float:
    """One grid step above the largest α whose character is in ``bad`` (0.01 if none)."""
    worst = [a for a, ch in zip(ALPHAS, pat) if ch in bad]
    return round(max(worst) + 0.01, 2) if worst else ALPHAS[0]


def fmt_threshold(x: float) -> str:
    """``"0.24"``, or ``"> 0.50"`` when every α of the grid loops."""
    return f"> {ALPHAS[-1]:.2f}" if x > ALPHAS[-1] else f"{x:.2f}"


def _task(args: tuple[str, float, int, int, str]) -> tuple[str, float, int, str, float]:
    key, rate, seed, n, grid = args
    t0 = time.perf_counter()
    pat = pattern(BY_KEY[key], rate, seed, n, grid)
    return key, rate, seed, pat, time.perf_counter() - t0


def table1_check(B: int, seeds: Sequence[int]) -> list[tuple[str, int, float | None]]:
    """J Table 1's setting (n = 1,000, λ = 50): α-greedy at 0.3 and 0.25, ours and with the released admission
    (B), loops and mean latency ÷ MC-SF's (fitted batch times)."""
    cost = make_cost_model()
    rows = []
    sf: list[float] = []
    lat: dict[str, list[float]] = {}
    loops: dict[str, int] = {}
    for seed in seeds:
        inst = trace_workload(seed, n=1000, rate=50, on_bad_row="drop")
        sf.append(float(simulate_continuous(inst, make_policy_spec("mc-sf"), cost).mean_latency or 0.0))
        for a in (0.3, 0.25):
            for label, make, relaxed in ((f"ours α = {a:g}", lambda a: AlphaProtection(a), False),
                                         (f"released admission B = {B}, α = {a:g}",
                                          lambda a: ReleasedCodeAlphaGreedy(a, B=B), True)):
                run_inst = dataclasses.replace(inst, M=RELAXED_M) if relaxed else inst
                ch, sched = outcome(run_inst, make(a), cost)
                loops[label] = loops.get(label, 0) + (ch in "LT")
                if sched is not None:
                    lat.setdefault(label, []).append(float(sched.mean_latency))
    for label in loops:
        ratio = statistics.fmean(lat[label]) / statistics.fmean(sf) if label in lat else None
        rows.append((label, loops[label], ratio))
    return rows


# --- report ------------------------------------------------------------------------------------------------------

def report_text(results: dict[tuple[str, float, int], str], seeds: Sequence[int], rates: Sequence[float],
           t1: list[tuple[str, int, float | None]], t1_seeds: int, B_t1: int, command: str,
           loads: tuple[tuple[float, float, float], tuple[float, float, float]], wall_s: float, grid: str) -> str:
    la0, la1 = loads
    out = [
        "# The low-demand α threshold (issue 24, item 4)", "",
        f"Command: `{command}` — {wall_s:.0f} s wall on this shared 2-core machine (load average "
        f"{la0[0]:.2f} / {la0[1]:.2f} / {la0[2]:.2f} at the start, {la1[0]:.2f} / {la1[1]:.2f} / {la1[2]:.2f} at the "
        f"end). 10,000 requests per run, Poisson λ ∈ {{{', '.join(f'{r:g}' for r in rates)}}} /s, seeds "
        f"{', '.join(map(str, seeds))} (the `jaillet-lmsys` sampling: `trace_workload(seed, n=10000, rate=λ)`), "
        f"fitted Llama2-70B batch times unless a variant says otherwise, M = 16,492 unless it says otherwise. "
        f"α grid 0.01…0.50, step 0.01 ({'every point run' if grid == 'full' else 'coarse step 0.05, then the fine points above the largest coarse loop'}). "  # noqa: E501
        "Paper: **0.24 at λ = 10, 0.21 at λ = 50** (J L382).", "",
        "Pattern: one character per α = 0.01 … 0.50 — `.` no clearing, `c` cleared but finished, `L` stopped by the "
        "loop guard, `T` not finished after 10 iterations per request, `?` not run. *loop-free α*: one step above "
        "the largest looping α; *clear-free α*: one step above the largest α with any clearing (the paper's code "
        "prints every \"memory reset\", so this is the other criterion a reader of its output could have used).", "",
        "## Summary: smallest loop-free α per seed", "",
        "| variant | what changes | " + " | ".join(f"λ = {r:g} (paper {PAPER_THRESHOLD.get(r, math.nan):.2f})"
                                              for r in rates) + " | λ = 10 above λ = 50 on every seed |",
        "|---|---|" + "---|" * len(rates) + "---|",
    ]
    for v in VARIANTS:
        cells = []
        th = {r: [threshold(results[(v.key, r, s)]) for s in seeds] for r in rates}
        for r in rates:
            cells.append(" / ".join(fmt_threshold(x) for x in th[r]))
        order = "–"
        if 10.0 in th and 50.0 in th:
            order = "yes" if all(a > b for a, b in zip(th[10.0], th[50.0])) else "no"
        out.append(f"| {v.key} | {v.what} | " + " | ".join(cells) + f" | {order} |")
    out += ["", "## Every run", "",
            "| variant | λ | seed | loop-free α | clear-free α | pattern (α = 0.01 … 0.50) |",
            "|---|---|---|---|---|---|"]
    for v in VARIANTS:
        for r in rates:
            for s in seeds:
                pat = results[(v.key, r, s)]
                out.append(f"| {v.key} | {r:g} | {s} | {fmt_threshold(threshold(pat))} | "
                           f"{fmt_threshold(threshold(pat, 'cLT'))} | "
                           f"`{pat}` |")
    if t1:
        out += ["", f"## Table 1's setting under the released admission (B = {B_t1})", "",
                f"J Table 1 (n = 1,000, λ = 50, fitted batch times), seeds 0…{t1_seeds - 1}: runs that loop, and the "
                "mean latency of the others ÷ MC-SF's (paper: no loops; α = 0.3 1.617, α = 0.25 1.590).", "",
                "| α-greedy | loops | ÷ MC-SF |", "|---|---|---|"]
        out += [f"| {label} | {lp}/{t1_seeds} | {'–' if r is None else f'{r:.3f}'} |" for label, lp, r in t1]
    out += ["", "## Conclusion", ""] + conclusions(results, seeds, rates, t1)
    return "\n".join(out) + "\n"


def conclusions(results: dict[tuple[str, float, int], str], seeds: Sequence[int], rates: Sequence[float],
                t1: Sequence[tuple[str, int, float | None]] = ()) -> list[str]:
    """The findings, with this run's numbers filled in (written for the full variant list at λ = 10 and 50)."""
    if set(rates) != {10.0, 50.0} or any((v.key, r, s) not in results for v in ALL_VARIANTS for r in rates
                                          for s in seeds):
        return ["(The conclusion is written for every variant at λ = 10 and λ = 50: run without --variants.)"]

    def th(key: str, r: float) -> list[float]:
        return [threshold(results[(key, r, s)]) for s in seeds]

    def span(key: str, r: float) -> str:
        lo, hi = fmt_threshold(min(th(key, r))), fmt_threshold(max(th(key, r)))
        return lo if lo == hi else f"{lo}–{hi}"

    def both(key: str) -> str:
        return f"{span(key, 10.0)} / {span(key, 50.0)}"

    def near(key: str) -> bool:
        return all(abs(statistics.fmean(th(key, r)) - PAPER_THRESHOLD[r]) <= 0.03 for r in rates)

    close = [v.key for v in ALL_VARIANTS if near(v.key)]
    low_ok = [v.key for v in ALL_VARIANTS if abs(statistics.fmean(th(v.key, 10.0)) - 0.24) <= 0.03]
    ordered = [v.key for v in ALL_VARIANTS if all(a > b for a, b in zip(th(v.key, 10.0), th(v.key, 50.0)))]
    gate = [f"released admission, B = {B}" for B in (128, 136, 144, 160, 256)]
    mean_b = {k: statistics.fmean(th(k, 10.0) + th(k, 50.0)) for k in gate[:4]}
    slope = (mean_b[gate[3]] - mean_b[gate[0]]) / (160 - 128) * 16
    differ = sum(1 for key in results if threshold(results[key]) != threshold(results[key], "cLT"))
    rel_t1 = [(label, lp) for label, lp, _ in t1 if label.startswith("released")]
    ours_t1 = [(label, lp) for label, lp, _ in t1 if label.startswith("ours")]
    t1_note = ""
    if rel_t1:
        t1_note = (" In J Table 1's setting (table above) the released rule loops in "
                   + ", ".join(f"{lp}" for _, lp in rel_t1) + " runs at α = 0.3 / 0.25, ours in "
                   + ", ".join(f"{lp}" for _, lp in ours_t1) + " (the paper reports no loops there).")
    def names(keys: Sequence[str]) -> str:
        return ", ".join(f"`{k}`" for k in keys) if keys else "none"

    ruled = ("current usage", "prompt not counted", "expected growth", "clear after overflow",
             "released batch times, o+1", "thinned outputs")
    return [
        f"1. **Our reading ties the threshold to demand; the paper's two numbers are nearly equal.** `ours`: "
        f"{both('ours')} (λ = 10 / λ = 50, seeds {', '.join(map(str, seeds))}). With a per-prompt check against "
        "(1 − α)M, the set that α-greedy admits together — and clears together — is the queue, long under high demand "
        "and short under low demand, so at λ = 10 only a small α loops.",
        "2. **Ruled out** (λ = 10 stays far from 0.24, or λ = 50 leaves 0.21): " + "; ".join(
            f"`{k}` {both(k)}" for k in ruled)
        + f". A smaller M raises the low-demand threshold to the paper's level or above, but the high-demand one "
        f"above 0.21 too (M = 8,192: "
        f"{both('M = 8,192')}; M = 7,629: {both('M = 7,629')}), and so do the other staged LMSYS files, whose outputs "
        f"are longer (sample20k: {both('file sample20k')}; sample100k: {both('file sample100k')}); the paper states "
        f"M = 16,492 and an output median of 45 words. Variants within 0.03 of 0.24 at λ = 10 (mean over seeds): "
        f"{names(low_ok)}.",
        "3. **The released simulator's admission rule reproduces both levels.** Admitting every waiting prompt (up "
        "to B jobs in the batch) whenever the running requests' current usage is within (1 − α)M makes the set "
        "admitted — and cleared — together about B requests whatever the demand, so the threshold follows B, not λ: "
        + "; ".join(f"B = {k.split('= ')[1]} {both(k)}" for k in gate)
        + f" (B = 256 is vLLM's default `max_num_seqs`; \"> 0.50\": every α of the grid loops). With the released "
        f"batch times and prompt iteration as well (B = 136): {both('released code, B = 136')}. Variants within 0.03 "
        f"of the paper at both demands (mean over seeds): **{names(close)}**."
        + t1_note,
        f"4. **What stays open.** B is not in the released files (it is set in an unreleased notebook), so B ≈ 136 is "
        f"fitted to the paper's numbers, not reproduced, and the threshold is steep in it (about +{slope:.2f} in α "
        f"per 16 jobs between B = 128 and 160). No variant puts λ = 10 above λ = 50 on every seed (variants that do: "
        f"{names(ordered)}); under the released rule the two levels differ by less than the "
        f"seed-to-seed spread, so the paper's order (0.24 above 0.21) reads as sampling, not as a demand effect. How "
        f"the paper decided that a run loops is not released either (its runs stop at a time limit and print every "
        f"reset); here the loop-free and clear-free thresholds differ in {differ} of {len(results)} runs, so that "
        "choice matters little.",
    ]


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="seeds 0…N−1 per (variant, λ) (default 3)")
    ap.add_argument("--rates", type=float, nargs="+", default=[10.0, 50.0], help="λ values (default 10 50)")
    ap.add_argument("--n", type=int, default=10_000, help="requests per run (default 10,000)")
    ap.add_argument("--grid", choices=("coarse", "full"), default="coarse",
                    help="coarse: step 0.05 then fine above the largest coarse loop (default); full: every 0.01")
    ap.add_argument("--variants", nargs="+", default=None, help="variant keys (default: all)")
    ap.add_argument("--table1-seeds", type=int, default=10, help="seeds of the Table 1 check (0 to skip)")
    ap.add_argument("--table1-B", type=int, default=136, help="B of the Table 1 check (default 136)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--out", type=Path, required=True, help=f"folder of {REPORT_NAME}")
    ap.add_argument("--command", default="", help="the command line to quote in the report")
    args = ap.parse_args(argv)
    global VARIANTS
    if args.variants:
        unknown = [k for k in args.variants if k not in BY_KEY]
        if unknown:
            ap.error(f"unknown variants {unknown}; known: {list(BY_KEY)}")
        VARIANTS = tuple(BY_KEY[k] for k in args.variants)
    command = args.command or "llmopt study run low-demand-threshold " + " ".join(
        f"'{a}'" if " " in a else a for a in (sys.argv[1:] if argv is None else argv))
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    seeds = list(range(args.seeds))
    tasks = [(v.key, float(r), s, args.n, args.grid) for v in VARIANTS for r in args.rates for s in seeds]
    results: dict[tuple[str, float, int], str] = {}

    def note(res: tuple[str, float, int, str, float]) -> None:
        key, rate, seed, pat, secs = res
        results[(key, rate, seed)] = pat
        print(f"[{time.perf_counter() - t0:6.1f} s] {len(results)}/{len(tasks)} {key} λ={rate:g} seed={seed}: "
              f"loop-free α {fmt_threshold(threshold(pat))}  {pat}  ({secs:.1f} s)", file=sys.stderr, flush=True)

    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            for res in pool.imap_unordered(_task, tasks):
                note(res)
    else:
        for task in tasks:
            note(_task(task))
    t1 = table1_check(args.table1_B, range(args.table1_seeds)) if args.table1_seeds else []
    wall = time.perf_counter() - t0
    text = report_text(results, seeds, [float(r) for r in args.rates], t1, args.table1_seeds, args.table1_B,
                  command.strip(), (load0, os.getloadavg()), wall, args.grid)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / REPORT_NAME).write_text(text, encoding="utf-8")
    print(f"[{time.perf_counter() - t0:6.1f} s] wrote {args.out / REPORT_NAME}", file=sys.stderr, flush=True)


REPORT_NAME = "low_demand_threshold.md"
OPTIONS = {
    "rates": "λ values (default 10 50; quick 10)",
    "n": "requests per run (default 10,000; quick 2,000)",
    "grid": "coarse (step 0.05, then fine above the largest coarse loop) or full (every 0.01; the committed run)",
    "variants": "variant keys (default: all)",
    "table1_seeds": "seeds of the Table 1 check, 0 to skip (default 10; quick 0)",
    "table1_B": "B of the Table 1 check (default 136)",
    "jobs": "worker processes (default 1)",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``low_demand_threshold.md`` into ``out``; ``seeds`` must be ``0 … N−1`` (default 0-2; ``quick``:
    seed 0, two variants, λ = 10, n = 2,000, no Table 1 check); returns the files written."""
    n = len(seeds) if seeds is not None else (1 if quick else 3)
    if seeds is not None and list(seeds) != list(range(n)):
        raise StudyError("low-demand-threshold runs seeds 0 … N−1: give --seeds 0-N")
    quick_opts = {"rates": [10.0], "n": 2000, "table1_seeds": 0, "variants": [v.key for v in ALL_VARIANTS[:2]]}
    opts = (quick_opts if quick else {}) | dict(options)
    argv = ["--out", str(out), "--seeds", str(n), *options_argv(opts),
            "--command", study_command("low-demand-threshold", out, quick=quick, seeds=seeds, options=options)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s report (written by :func:`run`: it needs the grid searches)."""
    path = Path(out) / REPORT_NAME
    return [str(path)] if path.exists() else []
