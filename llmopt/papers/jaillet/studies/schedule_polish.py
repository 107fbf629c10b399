"""CP-SAT with a real budget, then ``lns`` from CP-SAT's schedule, on the J §5.1 trials.

For each of the 400 trials of ``results/jaillet/certified`` (``jaillet-am1`` / ``jaillet-am2``, seeds
0–199, M = 40; instances rebuilt as the ``zone-bound`` study does), this replays the stored
pipeline's upper-bound stages and then adds the stage ``cp-sat-lns`` (:mod:`llmopt.opt.cp_sat`):

1. MC-SF and FCFS simulated (the stored pipeline's known schedules);
2. ``local-search``, 200 evaluations, seed = trial seed (as the stored run);
3. ``lns``, 30 sub-IPs, seed = trial seed, from the best verified schedule (as the stored run);
4. CP-SAT for ``--cp-sat-seconds`` deterministic seconds, one worker, hinted with that best;
5. ``lns`` for ``--lns-iterations`` sub-IPs started from CP-SAT's schedule;
6. a control: ``lns`` for the same sub-IPs and seed started from step 3's schedule, no CP-SAT — where
   CP-SAT returns its hint unchanged, steps 5 and 6 are the same computation, so any difference
   between them is CP-SAT's doing, and the control separates it from "30 more sub-IPs".

Steps 4–5 are exactly :func:`llmopt.opt.cp_sat.cp_sat_lns` (the stage ``cp-sat-lns``), called step by
step here so that each is timed. Every schedule is verified by the checker. A row records the TEL and
the CPU seconds (``time.process_time``) of each step, the stored run's best-found TEL (its
checker-verified incumbent), and the starts (id → start) of the stage's final schedule and of the best
schedule of all steps (control included), for a lower-bound study.

    llmopt study run schedule-polish --out results/jaillet/schedule-polish  # all 400 trials (5 s + 30 sub-IPs)
    llmopt study run schedule-polish --quick                                # the first 8 trials
    llmopt study run schedule-polish --out results/jaillet/schedule-polish --resume  # skip trials already stored
    llmopt study run schedule-polish --out D --resume --shard 0/2 & \
    llmopt study run schedule-polish --out D --resume --shard 1/2                 # the rest on two cores

``report(out)`` only rewrites ``README.md`` from ``trials.jsonl``.

Trials run in a coarse-to-fine seed order (every 8th seed of both models first, then every 4th, 2nd,
the rest), so an interrupted run holds an evenly spread subset. Rows are appended as they come. It
reads the stored trials through the harness's store (:mod:`llmopt.bench.store`), so it sits with J's
studies, above the ``bench`` wing.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import platform
import statistics as st
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llmopt.opt.studies import RESULTS, StudyError, options_argv, run_main

CERTIFIED = RESULTS / "jaillet" / "certified" / "trials.jsonl"
#: Per-trial certified bounds with the zone rows (the ``zone-bound`` study), for the gap column.
ZONE = RESULTS / "jaillet" / "zone-bound" / "trials.jsonl"
MODELS = (("jaillet-am1", "AM1"), ("jaillet-am2", "AM2"))
STEPS = ("mc-sf", "local-search", "lns", "cp-sat", "cp-sat-lns")
#: The control step (not part of the stage; its CPU time is not in the per-trial total of STEPS).
CONTROL = "lns-more"
#: The stored pipeline's budgets (``results/jaillet/certified/suite.json``).
STORED_SEARCH_EVALS = 200
STORED_LNS_ITERATIONS = 30


def _key(r: dict[str, Any]) -> tuple[str, int]:
    return (r["workload"], int(r["seed"]))


def _level(seed: int) -> int:
    """Coarse-to-fine order: seeds divisible by 8 first, then by 4, by 2, the rest."""
    return next(i for i, step in enumerate((8, 4, 2, 1)) if seed % step == 0)


def stored_trials() -> list[dict[str, Any]]:
    """The latest stored record of each J §5.1 trial, in coarse-to-fine seed order, models interleaved."""
    from llmopt.bench.store import latest_records, read_trials

    recs = [r for r in latest_records(read_trials(CERTIFIED)[0]) if r["workload"] in dict(MODELS)]
    order = {wl: i for i, (wl, _) in enumerate(MODELS)}
    return sorted(recs, key=lambda r: (_level(r["seed"]), r["seed"], order[r["workload"]]))


def evaluate(rec: dict[str, Any], cp_sat_seconds: float, lns_iterations: int) -> dict[str, Any]:
    """Replay one stored trial's upper-bound stages, then CP-SAT and ``lns`` from CP-SAT (module docstring)."""
    from llmopt.engine.discrete import simulate
    from llmopt.model.schedule import Schedule
    from llmopt.opt.cp_sat import cp_sat_schedule
    from llmopt.opt.lns import lns, lns_stage
    from llmopt.opt.upper_bounds import SearchContext, best_verified, local_search_stage
    from llmopt.policies import make_policy
    from llmopt.verify.checker import check_schedule
    from llmopt.workloads import make_instance

    params = {k: tuple(v) if isinstance(v, list) else v for k, v in (rec.get("params") or {}).items()}
    inst = make_instance(rec["workload"], seed=rec["seed"], **params)
    seed = int(rec["seed"])
    cpu: dict[str, float] = {}
    tel: dict[str, int] = {}
    verified: dict[str, bool] = {}
    known: dict[str, Schedule] = {}

    def step(name: str, fn: Any) -> Schedule:
        t0 = time.process_time()
        sch: Schedule = fn()
        cpu[name] = round(time.process_time() - t0, 3)
        rep = check_schedule(inst, sch.starts, evictions=sch.evictions)
        tel[name] = sch.tel
        verified[name] = bool(rep.ok) and rep.tel == sch.tel
        return sch

    known["mc-sf"] = step("mc-sf", lambda: simulate(inst, make_policy("mc-sf")))
    known["fcfs"] = simulate(inst, make_policy("fcfs"))  # in the stored pipeline's known schedules; never the best
    ctx = SearchContext(seed=seed, search_evals=STORED_SEARCH_EVALS, lns_iterations=STORED_LNS_ITERATIONS,
                        known=known)
    known["local-search"] = step("local-search", lambda: local_search_stage(inst, ctx))
    known["lns"] = step("lns", lambda: lns_stage(inst, ctx))
    hint = best_verified(inst, ctx)
    cp = step("cp-sat", lambda: cp_sat_schedule(inst, hint, seconds=cp_sat_seconds, seed=seed))
    final = step("cp-sat-lns", lambda: lns(inst, cp, iterations=lns_iterations, seed=seed))
    control = step(CONTROL, lambda: lns(inst, known["lns"], iterations=lns_iterations, seed=seed))
    best = min((final, control, cp, known["lns"]), key=lambda sch: sch.tel)
    stored_best = int(rec["incumbent"])
    return {
        "workload": rec["workload"], "seed": seed, "n": inst.n, "M": inst.M,
        "cp_sat_seconds": cp_sat_seconds, "lns_iterations": lns_iterations,
        **{f"tel_{k}": v for k, v in tel.items()},
        **{f"cpu_s_{k}": v for k, v in cpu.items()},
        "verified": all(verified.values()),
        "cp_sat_status": cp.policy,
        "stored_best": stored_best, "stored_best_source": rec.get("incumbent_source"),
        "stored_local_search": rec.get("heuristic_local-search"), "stored_lns": rec.get("heuristic_lns"),
        "replay_matches_stored": (tel["local-search"], tel["lns"]) == (rec.get("heuristic_local-search"),
                                                                        rec.get("heuristic_lns")),
        "final_tel": final.tel,
        "improvement": (stored_best - final.tel) / stored_best,
        "final_starts": {str(k): int(v) for k, v in final.starts.items()},
        "best_tel": best.tel,
        "best_starts": {str(k): int(v) for k, v in best.starts.items()},
    }


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _out(args: argparse.Namespace) -> Path:
    return Path(args.out)


def compute(args: argparse.Namespace) -> None:
    """Evaluate the trials ``args`` selects into ``OUT/trials.jsonl`` (appending with ``--resume``), then
    rewrite ``OUT/README.md``.

    Raises
    ------
    StudyError
        If the stored rows have another budget, or ``--shard`` is given without ``--resume``.
    """
    out = _out(args)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "trials.jsonl"
    done = {_key(r): r for r in _read(path)} if args.resume else {}
    other = {(r["cp_sat_seconds"], r["lns_iterations"]) for r in done.values()} - {
        (args.cp_sat_seconds, args.lns_iterations)}
    if other:
        raise StudyError(f"{path} holds rows with other budgets {sorted(other)}; resume with the same budget or "
                         "start afresh")
    todo = stored_trials()
    if args.trials is not None:
        todo = todo[:args.trials]
    todo = [r for r in todo if _key(r) not in done]
    if args.shard is not None:
        k, n_shards = _shard(args.shard)
        if not args.resume:
            raise StudyError("--shard appends to OUT/trials.jsonl beside other shards: use it with --resume")
        todo = todo[k::n_shards]
    print(f"{len(todo)} trials to run ({len(done)} already in {path}); CP-SAT {args.cp_sat_seconds:g} det. s, "
          f"lns {args.lns_iterations} sub-IPs", flush=True)
    t0 = time.time()
    cpu0 = time.process_time()
    with path.open("a" if args.resume else "w") as fh:
        for i, rec in enumerate(todo, 1):
            row = evaluate(rec, args.cp_sat_seconds, args.lns_iterations)
            fcntl.flock(fh, fcntl.LOCK_EX)  # shards append to the same file
            try:
                fh.write(json.dumps(row) + "\n")
                fh.flush()
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
            cpu = sum(row[f"cpu_s_{s}"] for s in STEPS)
            print(f"[{i}/{len(todo)} {time.time() - t0:.0f}s wall, {time.process_time() - cpu0:.0f}s cpu] "
                  f"{row['workload']} seed {row['seed']} n={row['n']}: stored best {row['stored_best']}, "
                  f"lns {row['tel_lns']} -> cp-sat {row['tel_cp-sat']} -> +lns {row['final_tel']} "
                  f"({row['improvement']:+.2%}; control {row[f'tel_{CONTROL}']}), {cpu:.1f} cpu s, "
                  f"replay ok {row['replay_matches_stored']}",
                  flush=True)
    (out / "README.md").write_text(render(path, args))


def _shard(text: str) -> tuple[int, int]:
    """``"K/N"`` → ``(K, N)`` with ``0 <= K < N``."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise StudyError(f"--shard must be K/N (e.g. 0/2), got {text!r}") from None
    if not 0 <= k < n:
        raise StudyError(f"--shard K/N needs 0 <= K < N, got {text!r}")
    return k, n


def _fmt_seeds(seeds: list[int]) -> str:
    return "all 200" if len(seeds) == 200 else f"{len(seeds)} ({', '.join(map(str, sorted(seeds)))})"


def table(rows: list[dict[str, Any]]) -> str:
    """Per arrival model: trials, improvement of the final TEL over the stored best found, CPU s per step."""
    lines = ["| | " + " | ".join(label for _, label in MODELS) + " |", "|---|" + "---:|" * len(MODELS)]
    zone = {(r["workload"], int(r["seed"])): r["bound_after"] for r in _read(ZONE) if r["suite"] == "jaillet-certified"}
    per_model: list[dict[str, str]] = []
    for wl, _ in MODELS:
        rs = [r for r in rows if r["workload"] == wl]
        add: dict[str, str] = {}
        per_model.append(add)
        if not rs:
            continue
        imp = [r["improvement"] for r in rs]
        over_lns = [(r["tel_lns"] - r["final_tel"]) / r["tel_lns"] for r in rs]
        ctl = [(r["tel_lns"] - r[f"tel_{CONTROL}"]) / r["tel_lns"] for r in rs]
        best = [(r["stored_best"] - r["best_tel"]) / r["stored_best"] for r in rs]
        add |= {
            "trials": f"{len(rs)}",
            "n, mean (max)": f"{st.mean(r['n'] for r in rs):.1f} ({max(r['n'] for r in rs)})",
            "final TEL below stored best found, mean (max)": f"{st.mean(imp):.2%} ({max(imp):.2%})",
            "trials improved / equal / worse than stored best": f"{sum(x > 0 for x in imp)} / "
                                                                 f"{sum(x == 0 for x in imp)} / "
                                                                 f"{sum(x < 0 for x in imp)}",
            "CP-SAT improved its hint (lns's schedule)": f"{sum(r['tel_cp-sat'] < r['tel_lns'] for r in rs)}",
            "CP-SAT proved optimal": f"{sum(r['cp_sat_status'] == 'cp-sat(optimal)' for r in rs)}",
            "final TEL below the replayed lns, mean (max)": f"{st.mean(over_lns):.2%} ({max(over_lns):.2%})",
            "control (lns from lns, no CP-SAT) below the replayed lns, mean (max)":
                f"{st.mean(ctl):.2%} ({max(ctl):.2%})",
            "final vs control: better / equal / worse":
                f"{sum(r['final_tel'] < r[f'tel_{CONTROL}'] for r in rs)} / "
                f"{sum(r['final_tel'] == r[f'tel_{CONTROL}'] for r in rs)} / "
                f"{sum(r['final_tel'] > r[f'tel_{CONTROL}'] for r in rs)}",
            "best of all steps below stored best found, mean (max)": f"{st.mean(best):.2%} ({max(best):.2%})",
            "replay of local-search + lns equals stored TELs": f"{sum(r['replay_matches_stored'] for r in rs)}",
            **_gap_rows(rs, zone),
            "all schedules verified by the checker": f"{sum(r['verified'] for r in rs)}",
        }
        for s in (*STEPS, CONTROL):
            add[f"CPU s, {s}: mean (max)"] = (f"{st.mean(r[f'cpu_s_{s}'] for r in rs):.2f} "
                                             f"({max(r[f'cpu_s_{s}'] for r in rs):.2f})")
        tot = [sum(r[f"cpu_s_{s}"] for s in STEPS) for r in rs]
        add["CPU s per trial, all steps but the control: mean (max)"] = f"{st.mean(tot):.1f} ({max(tot):.1f})"
    keys = max(per_model, key=len)
    lines += [f"| {k} | " + " | ".join(d.get(k, "–") for d in per_model) + " |" for k in keys]
    return "\n".join(lines)


def _gap_rows(rs: list[dict[str, Any]], zone: dict[tuple[str, int], int]) -> dict[str, str]:
    """Certified gap ``(TEL − bound) / TEL`` against ``results/jaillet/zone-bound``'s bound (best of ``lp``,
    ``energy``, the MIP bound and ``zone-lp``), with the stored best and with the best of all steps."""
    with_bound = [(r, zone[(r["workload"], int(r["seed"]))]) for r in rs if (r["workload"], int(r["seed"])) in zone]
    if not with_bound:
        return {}
    before = [(r["stored_best"] - b) / r["stored_best"] for r, b in with_bound]
    after = [(r["best_tel"] - b) / r["best_tel"] for r, b in with_bound]
    return {
        "certified gap against results/jaillet/zone-bound's bound, mean: stored best → best of all steps":
            f"{st.mean(before):.2%} → {st.mean(after):.2%}",
        "proven optimal by that bound: stored best → best of all steps":
            f"{sum(r['stored_best'] <= b for r, b in with_bound)} → {sum(r['best_tel'] <= b for r, b in with_bound)}",
    }


NOTES_BEGIN, NOTES_END = "<!-- notes -->", "<!-- /notes -->"


def _notes(readme: Path) -> str:
    """The hand-written block between :data:`NOTES_BEGIN` and :data:`NOTES_END` of an existing README (kept)."""
    text = readme.read_text() if readme.exists() else ""
    if NOTES_BEGIN in text and NOTES_END in text:
        return text[text.index(NOTES_BEGIN):text.index(NOTES_END) + len(NOTES_END)]
    return f"{NOTES_BEGIN}\n{NOTES_END}"


def render(path: Path, args: argparse.Namespace) -> str:
    """README.md: what was run, the budget, the table, the hand-written notes (kept from the old README), how."""
    rows = _read(path)
    notes = _notes(path.parent / "README.md")
    budgets = sorted({(r["cp_sat_seconds"], r["lns_iterations"]) for r in rows})
    seeds = {wl: [r["seed"] for r in rows if r["workload"] == wl] for wl, _ in MODELS}
    budget = ", ".join(f"CP-SAT {c:g} deterministic s (one worker) + lns {k} sub-IPs" for c, k in budgets)
    cmd = (f"nohup nice -n 15 .venv/bin/llmopt study run schedule-polish --out {args.out} --cp-sat-seconds "
           f"{args.cp_sat_seconds:g} --lns-iterations {args.lns_iterations} --resume"
           + (f" --trials {args.trials}" if args.trials is not None else "")
           + (f" --shard {args.shard}" if args.shard is not None else "") + " > /tmp/polish.log 2>&1 &")
    return f"""# CP-SAT then `lns`, on the J §5.1 trials (issue 23, "Schedules")

`llmopt/papers/jaillet/studies/schedule_polish.py` replays, per trial of `results/jaillet/certified` (J §5.1,
M = 40), the stored pipeline's upper-bound stages (MC-SF; `local-search`, 200 evaluations; `lns`, 30 sub-IPs; seed =
trial seed), then runs the stage `cp-sat-lns` (`llmopt/opt/cp_sat.py`): CP-SAT hinted with that best
schedule, then `lns` started from CP-SAT's schedule. "Stored best found" is the stored run's
checker-verified incumbent (`incumbent` in `results/jaillet/certified/trials.jsonl`; `lns` in 394 of
400 trials, the 5-s IP in 2). Improvement = (stored best − final TEL) / stored best; it is negative
only where the stored best came from the IP or the replay differs (the final schedule is never worse
than the replayed `lns`). CPU seconds are `time.process_time()` of this process (CP-SAT with one
worker, HiGHS with one thread), taken at `nice -n 15` while another developer shared the 2 cores.

**Budget per trial:** {budget}, on top of the replayed stored stages.
**Trials evaluated:** AM1 {_fmt_seeds(seeds['jaillet-am1'])}; AM2 {_fmt_seeds(seeds['jaillet-am2'])}.

<!-- table -->
{table(rows)}

{notes}

`trials.jsonl` has one row per trial: TEL (`tel_<step>`) and CPU s (`cpu_s_<step>`) of each step, the
stored best found, CP-SAT's status, `final_starts` (request id → start) of the stage's final schedule
and `best_starts` / `best_tel` of the best schedule of all steps (the control included); every
schedule checker-verified (`verified`).

Command (trials run in coarse-to-fine seed order — every 8th seed of both models first — so a partial
run is an evenly spread subset; `--resume` skips the trials already in `trials.jsonl`):

```bash
{cmd}
```

Measured on {platform.machine()} (Python {platform.python_version()}).
"""


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: the options of :data:`OPTIONS`, ``--out DIR`` and ``--report``."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--trials", type=int, default=None,
                    help="only the first N trials of the coarse-to-fine order (an evenly spread subset)")
    ap.add_argument("--cp-sat-seconds", type=float, default=5.0, help="CP-SAT deterministic seconds (one worker)")
    ap.add_argument("--lns-iterations", type=int, default=30, help="sub-IPs of lns after CP-SAT")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--resume", action="store_true", help="skip trials already in OUT/trials.jsonl and append")
    ap.add_argument("--report", action="store_true", help="only rewrite OUT/README.md from OUT/trials.jsonl")
    ap.add_argument("--shard", default=None,
                    help="K/N: only every N-th trial left, from the K-th (0-based); N processes with --resume "
                         "and the same budget use N cores")
    args = ap.parse_args(argv)
    if args.report:
        (_out(args) / "README.md").write_text(render(_out(args) / "trials.jsonl", args))
        return
    compute(args)


OPTIONS = {
    "trials": "only the first N trials of the coarse-to-fine order (quick: 8)",
    "cp_sat_seconds": "CP-SAT deterministic seconds, one worker (default 5)",
    "lns_iterations": "sub-IPs of lns after CP-SAT (default 30)",
    "resume": "skip trials already in trials.jsonl and append",
    "shard": "K/N: only every N-th trial left, from the K-th (0-based); with --resume",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Evaluate into ``out`` and rewrite its ``README.md``; returns the files written."""
    if seeds is not None:
        raise StudyError("schedule-polish takes no --seeds (it replays the stored trials; --trials N)")
    opts = ({"trials": 8} if quick else {}) | dict(options)
    return run_main(main, out, ["--out", str(out), *options_argv(opts)])


def report(out: Path) -> list[str]:
    """Rewrite ``out/README.md`` from ``out/trials.jsonl`` (the budget read from the rows); returns it."""
    return run_main(main, out, ["--out", str(out), "--report"])
