"""Engine-core speed and sameness: both clocks before and after a change to the engine core.

Times (``time.process_time``, best of ``--repeat``) one :func:`llmopt.engine.discrete.simulate`
call with MC-SF and one :func:`llmopt.engine.continuous.simulate_continuous` call with
``make_policy_spec("mc-sf")`` and the ``llama2-70b-a100-tp2`` cost model, on the seeded
``M16492`` instances of ``benchmarks/simulator_speed.py`` (``M = 16,492``, ``s ~ U{1..500}``,
``o ~ U{1..1000}``; all arrivals at 0, or Poisson at offered load ρ = 0.8) with
``n = 2,000`` and ``10,000``. The continuous engine runs the same requests with arrival
step ``a`` at ``a · SECONDS_PER_STEP`` seconds (about one decode batch of a full cache, so
ρ means roughly the same load in both clocks).

Every run also yields a digest (SHA-256 of the whole schedule: starts, completions, TEL or
latencies, evictions, the memory trace as a function — its breakpoints, constants and slopes —, batch
times, paused iterations, chunks). Cases that evict —
``alpha-protection:alpha=0.1`` (β = 1 and β = 0.1) in both clocks, ``a-min`` on ``chen-lmsys``
with binned predictions in both clocks — are run once for their digest and CPU. With the
staged trace data, the speed table also has MC-SF on ``benchmarks/continuous_speed.py``'s
LMSYS instance at λ = 50 /s, and the production schedulers (``vllm:batching=prefill-first`` — paused
iterations, ``vllm``'s default on this clock —, ``vllm:batching=mixed``, ``sarathi``, ``orca``) on it
under the batch limits and KV blocks of ``benchmarks/vidur_side_by_side.py`` (trace cases are skipped
without the data).

``--save`` writes CPU and digests to JSON; ``--before`` compares with such a file: CPU
before / after / ratio, and any digest that moved (exit status 1 then). On a busy machine
two separate runs differ by 20 % with the same code; ``--reference DIR`` instead loads the
old ``discrete.py`` and ``continuous.py`` copied to ``DIR`` and runs old and new alternately
in one process (same comparison, much less noise); those copies run over the *current* engine core, so a
change to ``core.py`` itself is compared with ``--save`` under the old tree (``PYTHONPATH=OLD_TREE``) and
``--before``.

    python benchmarks/engine_core_speed.py --save /tmp/before.json        # before a change
    python benchmarks/engine_core_speed.py --before /tmp/before.json      # after it
    python benchmarks/engine_core_speed.py --reference /tmp/engine_before  # A/B against old copies
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib.util
import json
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmopt.bench.speed_cases import make_workload
from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import make_cost_model
from llmopt.engine.discrete import EvictionLoopError, simulate
from llmopt.model.instance import Instance, Request
from llmopt.model.schedule import Schedule
from llmopt.model.timed_instance import TimedInstance, TimedRequest
from llmopt.model.timed_schedule import TimedSchedule
from llmopt.policies import make_policy, make_policy_spec

#: Seconds per discrete step when an instance is run in continuous time (≈ one decode batch
#: of ~30 requests holding a full cache under the Llama2-70B / 2×A100 cost model).
SECONDS_PER_STEP = 0.08
COST_MODEL = "llama2-70b-a100-tp2"
PATTERNS = {"t=0": None, "poisson ρ=0.8": 0.8}
#: Policies that evict: deterministic clearing (stopped by the loop guard on these instances) and
#: randomised clearing (β = 0.1: completes, with evictions on the way).
EVICTING = ("alpha-protection:alpha=0.1", "alpha-protection:alpha=0.1,beta=0.1")
#: Production schedulers under the batch limits and KV blocks of ``benchmarks/vidur_side_by_side.py``.
PRODUCTION = ("vllm:batching=prefill-first", "vllm:batching=mixed", "sarathi", "orca")
VIDUR_CAPS = (("max_num_seqs", 128), ("max_num_batched_tokens", 4096), ("block_size", 16))


def timed(inst: Instance) -> TimedInstance:
    """``inst`` in continuous time: arrival step ``a`` becomes ``a · SECONDS_PER_STEP`` seconds."""
    return TimedInstance(inst.M, tuple(TimedRequest(r.id, r.arrival * SECONDS_PER_STEP, r.prompt, r.output,
                                                    r.lower, r.upper) for r in inst.requests), name=inst.name)


def untimed(inst: TimedInstance) -> Instance:
    """A timed instance whose arrivals are all 0 s as a discrete one (same ids and predictions)."""
    assert all(r.arrival == 0 for r in inst.requests)
    return Instance(inst.M, tuple(Request(r.id, 0, r.prompt, r.output, r.lower, r.upper) for r in inst.requests),
                    name=inst.name)


def digest(result: Any) -> str:
    """SHA-256 of everything a run produced: a Schedule or TimedSchedule, or for a run stopped
    by the loop guard, the error's message, numbers and partial schedule."""
    if is_loop_error(result):
        data: Any = {"error": str(result), "t": result.t, "evictions": result.evictions,
                     "partial": None if result.partial is None else _plain(result.partial)}
    else:
        data = _plain(result)
    return hashlib.sha256(json.dumps(data).encode()).hexdigest()


def _plain(s: Schedule | TimedSchedule) -> dict[str, Any]:
    # the memory trace as the function it is (breakpoints, constants, slopes, end), not the runs behind it:
    # a paused run is one run plus the paused iterations, or one run per stretch between pauses, same trace
    out = {"starts": list(s.starts.items()), "completions": list(s.completions.items()),
           "evictions": [(e.t, e.id, e.tokens_lost) for e in s.evictions], "recomputed": s.recomputed_tokens,
           "memory": [s.memory.origin, s.memory.end, [list(x) for x in s.memory.segments()]], "policy": s.policy}
    if isinstance(s, TimedSchedule):
        out |= {"latencies": list(s.latencies.items()), "batch_start": s.batch_start.tolist(),
                "batch_duration": s.batch_duration.tolist(), "complete": s.complete, "M": s.M,
                "cost_model": s.cost_model, "paused": list(s.paused), "eviction_starts": list(s.eviction_starts),
                "chunks": [list(c) for c in s.chunks]}
    else:
        out["tel"] = s.tel
    return out


Engines = tuple[Callable[..., Any], Callable[..., Any]]  # (simulate, simulate_continuous)


@dataclass(frozen=True)
class Case:
    """One run: ``label``, whether it is in the speed table, its clock, instance and policy factory."""

    label: str
    speed: bool
    clock: str  # "discrete" or "continuous"
    instance: Any
    policy: Callable[[], Any]
    limits: tuple[tuple[str, int], ...] = ()  # engine options (batch limits, block size)

    def runner(self, engines: Engines) -> Callable[[], Any]:
        """A call of the case on ``engines`` that returns the schedule, or the :class:`EvictionLoopError`."""
        sim, sim_c = engines
        cost = make_cost_model(COST_MODEL)

        def run() -> Any:
            try:
                if self.clock == "discrete":
                    return sim(self.instance, self.policy())
                return sim_c(self.instance, self.policy(), cost, **dict(self.limits))
            except Exception as exc:
                if is_loop_error(exc):
                    return exc
                raise

        return run


def cases(ns: list[int]) -> list[Case]:
    """Every case: the speed table's and the evicting ones."""
    out = []
    for pattern, load in PATTERNS.items():
        for n in ns:
            inst = make_workload("M16492", n, load)
            tinst = timed(inst)
            out.append(Case(f"discrete   mc-sf {pattern} n={n}", True, "discrete", inst, lambda: make_policy("mc-sf")))
            out.append(Case(f"continuous mc-sf {pattern} n={n}", True, "continuous", tinst,
                            lambda: make_policy_spec("mc-sf")))
            for spec in EVICTING:
                for clock, i in (("discrete", inst), ("continuous", tinst)):
                    out.append(Case(f"{clock:10} {spec} {pattern} n={n}", False, clock, i,
                                    lambda p=spec: make_policy_spec(p, seed=0)))  # type: ignore[misc]
    try:
        from llmopt.workloads.chen import chen_lmsys
        from llmopt.workloads.traces.data import trace_workload

        lm = chen_lmsys(0, 2000, predictions="bins:width=100,count=10")
        jl = trace_workload(0, n=max(ns), rate=50.0)  # benchmarks/continuous_speed.py's λ = 50 instance
    except (FileNotFoundError, OSError) as exc:
        print(f"trace cases skipped: {exc}", file=sys.stderr)
    else:
        out.append(Case(f"continuous mc-sf jaillet-lmsys λ=50 n={max(ns)}", True, "continuous", jl,
                        lambda: make_policy_spec("mc-sf")))
        out.append(Case("continuous a-min chen-lmsys n=2000", False, "continuous", lm,
                        lambda: make_policy_spec("a-min")))
        for spec in PRODUCTION:  # named in full: the same runs before and after vllm's default changed
            out.append(Case(f"continuous {spec} jaillet-lmsys λ=50 n={max(ns)} (Vidur's caps)", True, "continuous",
                            jl, lambda p=spec: make_policy_spec(p), VIDUR_CAPS))  # type: ignore[misc]
        out.append(Case("discrete   a-min chen-lmsys n=2000", False, "discrete", untimed(lm),
                        lambda: make_policy_spec("a-min")))
    return out


def load_reference(folder: Path) -> Engines:
    """``simulate`` and ``simulate_continuous`` of the ``discrete.py`` and ``continuous.py`` copies in ``folder``.

    They load as stand-alone modules; the old ``continuous.py`` imports its helpers from the
    current :mod:`llmopt.engine.discrete`, which re-exports them unchanged.
    """
    mods = []
    for stem in ("discrete", "continuous"):
        spec = importlib.util.spec_from_file_location(f"_reference_{stem}", folder / f"{stem}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        mods.append(mod)
    return mods[0].simulate, mods[1].simulate_continuous


def best_of(runs: list[Callable[[], Any]], repeat: int) -> list[tuple[float, Any]]:
    """Best ``time.process_time`` of each run over ``repeat`` rounds (interleaved) and its last result.

    Python 3.11 specialises a function's bytecode only once it has run a while, so the
    first call of a loop can be slower than the rest; the best of several hides that.
    """
    best = [float("inf")] * len(runs)
    out: list[Any] = [None] * len(runs)
    for r in range(repeat):
        for j in range(len(runs)) if r % 2 == 0 else reversed(range(len(runs))):  # ABBA: no order bias
            run = runs[j]
            gc.collect()  # no run pays for another's garbage
            t0 = time.process_time()
            out[j] = run()
            best[j] = min(best[j], time.process_time() - t0)
    return list(zip(best, out))


def is_loop_error(exc: Any) -> bool:
    """Whether ``exc`` is an :class:`EvictionLoopError`, the current class or a reference copy's."""
    return isinstance(exc, EvictionLoopError) or type(exc).__name__ == "EvictionLoopError"


def outcome(result: Any) -> str:
    return "loop guard" if is_loop_error(result) else "complete"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[2000, 10000])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--save", type=Path, default=None, help="write CPU and digests to this JSON file")
    ap.add_argument("--before", type=Path, default=None, help="compare with a JSON file written by --save")
    ap.add_argument("--reference", type=Path, default=None, metavar="DIR",
                    help="also run copies of the old discrete.py and continuous.py in DIR, interleaved with the "
                         "current ones (robust to a busy machine), and compare results")
    args = ap.parse_args(argv)

    current: Engines = (simulate, simulate_continuous)
    reference = load_reference(args.reference) if args.reference else None
    before = json.loads(args.before.read_text())["rows"] if args.before else {}
    rows: dict[str, dict[str, Any]] = {}
    moved = []
    head = "before" if before else "old" if reference else ""
    print(f"{'case':64} {'CPU s':>8} {head:>8} {'ratio':>6}  outcome")
    for case in cases(args.n):
        runs = [case.runner(current)] + ([case.runner(reference)] if reference else [])
        timed_runs = best_of(runs, args.repeat if case.speed else 1)
        cpu, result = timed_runs[0]
        rows[case.label] = row = {"cpu_s": cpu, "digest": digest(result), "speed": case.speed,
                                  "outcome": outcome(result)}
        old = before.get(case.label)
        if reference:
            old = {"cpu_s": timed_runs[1][0], "digest": digest(timed_runs[1][1])}
            row["old_cpu_s"] = old["cpu_s"]
        ref = f"{old['cpu_s']:8.3f} {cpu / old['cpu_s']:6.3f}" if old else f"{'':8} {'':6}"
        same = "" if old is None else ("  same" if old["digest"] == row["digest"] else "  MOVED")
        if old is not None and old["digest"] != row["digest"]:
            moved.append(case.label)
        note = "" if case.speed else ", 1 run"
        print(f"{case.label:64} {cpu:8.3f} {ref}  {row['outcome']}{note}{same}", flush=True)
    olds = {k: r["old_cpu_s"] for k, r in rows.items() if "old_cpu_s" in r} or {
        k: r["cpu_s"] for k, r in before.items()}
    sel = [k for k in rows if rows[k]["speed"] and k in olds]
    if sel:
        total_new, total_old = sum(rows[k]["cpu_s"] for k in sel), sum(olds[k] for k in sel)
        print(f"{'speed cases, total':64} {total_new:8.3f} {total_old:8.3f} {total_new / total_old:6.3f}")
    if before or reference:
        print("results identical" if not moved else f"results MOVED: {moved}")
    if args.save:
        meta = {"python": platform.python_version(), "machine": platform.machine(), "repeat": args.repeat}
        args.save.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    return 1 if moved else 0


if __name__ == "__main__":
    raise SystemExit(main())
