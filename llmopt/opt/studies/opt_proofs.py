"""Proofs of OPT a reader can re-check: every proven-OPT row of ``results/jaillet/opt-frontier`` and
``results/jaillet/ip-scaling``, its optimal schedule stored, and its proof re-derived beside HiGHS's word.

Each such row was proven by HiGHS alone (its MIP bound met its incumbent; neither the schedule nor a
certificate was kept). For each one this study rebuilds the instance from the row's workload, parameters
and seed and, from one verified incumbent (MC-SF, then ``local-search`` with 200 evaluations, seed 0):

* solves ``hindsight-ip-zones`` (the hindsight IP plus the peak-zone rows) over that incumbent's start
  windows with **SCIP**, warm-started, limited by ``--seconds`` per row (a wall-clock limit; ``--nodes``
  adds SCIP's own node limit); its status, objective, bound and time are recorded;
* runs ``zone-tree`` (:func:`llmopt.opt.zone_tree.zone_tree`) from the best verified schedule for at most
  ``--tree-nodes`` nodes (a node limit, no clock) and has the checker re-walk its tree
  (:func:`llmopt.verify.tree_certificate.check_tree_certificate`);
* keeps the best schedule either stage found, verified by the checker (:func:`llmopt.verify.checker.check_schedule`).

:func:`classify` then names the row's proof, from the stored data alone:

* ``certificate`` — the re-walked tree's bound, rounded up, meets the stored schedule's TEL;
* ``two solvers`` — SCIP proves optimality at HiGHS's OPT, each with its own bound;
* ``one solver's word (HiGHS)`` — neither (SCIP stopped at its limit without contradicting HiGHS);
* ``contradiction`` — something disagrees: a stored schedule whose TEL is not HiGHS's OPT, a schedule
  below HiGHS's OPT, a SCIP bound or a certificate above a verified schedule's TEL, SCIP "optimal" at
  another value. Never counted as a proof.

Files written into the output folder: ``opt_schedules.jsonl`` (one optimal schedule per instance: key,
workload, parameters, seed, OPT, starts), ``proofs.jsonl`` (one row per proven suite row, every stage's
status, bound and seconds) and ``README.md`` (the proof table). :func:`recheck_schedules` re-derives every
stored schedule's TEL with the checker (``tests/golden/test_golden_opt_proofs.py`` runs it on the committed
folder, and rebuilds the small rows' node-limited trees for the checker to re-walk; the trees themselves are not
stored); :func:`proof_table` prints a suite's table with its "proof" column (``llmopt.papers.printed``).

    llmopt study run opt-proofs --out results/opt/opt-proofs          # rows with n <= 16, 300 s of SCIP each
    llmopt study run opt-proofs --out results/opt/opt-proofs --big    # also AM1 n = 20 (opt-frontier)
    llmopt study run opt-proofs --out results/opt/opt-proofs --only 'AM1 M=40 n=20 seed=0' --seconds 900
                                                                      # one row again; the other rows are kept
    llmopt study run opt-proofs --quick                               # 3 smallest rows, 60 s each
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from llmopt.opt.studies import RESULTS, StudyError, options_argv, run_main
from llmopt.solvers import DEFAULT_SOLVER

#: the suites whose "optimal" rows this study re-proves (folders under ``results/``)
SUITES = ("jaillet/opt-frontier", "jaillet/ip-scaling")
#: rows with more requests than this run only with ``--big``
BIG_N = 16
SCHEDULES_FILE = "opt_schedules.jsonl"
PROOFS_FILE = "proofs.jsonl"
ONE_WORD = "one solver's word (HiGHS)"
#: slack for reading a float bound as a bound on the integer TEL
EPS = 1e-6


def _params(rec: Mapping[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in (rec.get("params") or {}).items()}


def instance_key(workload: str, params: Mapping[str, Any], seed: int) -> str:
    """A readable key of one instance: ``"AM1 M=40 n=16 seed=0"``, ``"AM2 M=40 T=20 rate=1.0 seed=0"``."""
    short = {"jaillet-am1": "AM1", "jaillet-am2": "AM2"}.get(workload, workload)
    parts = []
    for k, v in sorted(params.items()):
        lo, hi = (v[0], v[1]) if isinstance(v, list | tuple) else (v, v)
        name = k.removesuffix("_range")
        parts.append(f"{name}={lo}" if lo == hi else f"{name}={lo}..{hi}")
    order = {"M": 0, "n": 1, "T": 2, "rate": 3}
    parts.sort(key=lambda p: order.get(p.split("=")[0], 9))
    return " ".join([short, *parts, f"seed={seed}"])


def proven_rows(suites: Sequence[str] = SUITES, results: Path = RESULTS) -> list[dict[str, Any]]:
    """The stored rows with status ``optimal`` of ``suites``, each with ``folder`` and ``key`` added.

    Raises
    ------
    StudyError
        If a suite's ``trials.jsonl`` is missing or a line is not JSON (naming the file and line).
    """
    rows = []
    for folder in suites:
        path = results / folder / "trials.jsonl"
        if not path.is_file():
            raise StudyError(f"{path}: missing (the proven rows are read from it)")
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise StudyError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
            if rec.get("status") == "optimal":
                rows.append(rec | {"folder": folder,
                                   "key": instance_key(rec["workload"], _params(rec), rec["seed"])})
    return rows


def second_solver(first: str) -> str | None:
    """The first available open-source MIP solver other than ``first``, in :data:`llmopt.solvers.PREFERENCE`
    order, that takes a warm start, a time limit and an interruption (the re-proving solver)."""
    from llmopt.solvers import PREFERENCE, SOLVERS
    from llmopt.solvers.capability import Capability

    for name in [*PREFERENCE, *SOLVERS.names()]:
        if name == first or name not in SOLVERS:
            continue
        cls = SOLVERS.get(name)
        if cls.info.open_source and cls.info.has(Capability.MIP, Capability.WARM_START, Capability.TIME_LIMIT,
                                                 Capability.INTERRUPT) and cls.available()[0]:
            return name
    return None


def solver_claim(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The suite's stored proof of one row (HiGHS's, in the committed suites): OPT, status, bound, IP seconds and
    formulation."""
    return {"solver": rec.get("solver", DEFAULT_SOLVER), "status": rec["status"], "opt": rec["opt"],
            "bound": rec["bound"],
            "bound_certificate": rec.get("bound_certificate"), "formulation": rec.get("formulation"),
            "ip_s": (rec.get("hindsight_stage_s") or {}).get("IP")}


def prove(instance: Any, claim: Mapping[str, Any], *, seconds: float | None, nodes: int | None,
          tree_nodes: int, solver: str | None = None) -> dict[str, Any]:
    """Re-prove one claimed OPT with a second solver and a zone-tree certificate (module docstring).

    Parameters
    ----------
    instance : Instance
    claim : mapping
        The first solver's proof (:func:`solver_claim`): at least ``opt``.
    seconds : float, optional
        Wall-clock limit of the second solver (``None``: none).
    nodes : int, optional
        Node limit of the second solver (``None``: none).
    tree_nodes : int
        Node limit of ``zone-tree`` (0: no certificate attempted).
    solver : str, optional
        The second solver's registered name (default: :func:`second_solver` of the claim's solver).

    Returns
    -------
    dict
        ``second`` (status, objective, bound, seconds), ``certificate`` (re-walked bound, nodes, leaves) or
        ``None``, ``tel`` and ``starts`` of the best verified schedule, and ``proof`` / ``proof_note``
        from :func:`classify`.
    """
    from llmopt.engine.discrete import simulate
    from llmopt.formulations.hindsight_ip import decode_starts, encode_starts, formulate
    from llmopt.formulations.zones import default_split, with_zone_rows
    from llmopt.model.windows import start_windows
    from llmopt.opt.upper_bounds import SearchContext, best_verified, local_search_stage
    from llmopt.opt.zone_tree import zone_tree
    from llmopt.policies import make_policy
    from llmopt.solvers import get_solver
    from llmopt.verify.checker import check_schedule
    from llmopt.verify.tree_certificate import check_tree_certificate

    solver = solver or second_solver(claim.get("solver", DEFAULT_SOLVER))
    if solver is None:
        raise StudyError("no second MIP solver with warm start, time limit and interruption is available")
    known = {"mc-sf": simulate(instance, make_policy("mc-sf"))}
    ctx = SearchContext(seed=0, search_evals=200, known=known)
    known["local-search"] = local_search_stage(instance, ctx)
    start = best_verified(instance, ctx)
    best_starts, best_tel = dict(start.starts), int(start.tel)
    windows = start_windows(instance, best_tel)
    split = default_split(instance.M)
    model = with_zone_rows(formulate(instance, windows), instance, split)
    options: dict[str, Any] = {} if nodes is None else {"limits/nodes": int(nodes)}
    t0 = time.perf_counter()
    res = get_solver(solver, **options).solve(model, time_limit=seconds, threads=1,
                                              warm_start=encode_starts(instance, model, best_starts))
    second_s = time.perf_counter() - t0
    second_tel = None
    if res.x is not None:
        found = check_schedule(instance, decode_starts(instance, model, res.x))
        if found.ok and found.tel is not None:
            second_tel = int(found.tel)
            if second_tel < best_tel:
                best_starts, best_tel = dict(decode_starts(instance, model, res.x)), second_tel
    second = {"solver": solver, "formulation": "hindsight-ip-zones", "status": str(res.status.value),
              "objective": res.objective, "verified_tel": second_tel, "bound": res.bound, "s": round(second_s, 1),
              "time_limit": seconds, "node_limit": nodes, "message": res.message}
    certificate = None
    if tree_nodes > 0:
        t0 = time.perf_counter()
        tree = zone_tree(instance, upper_bound_starts=best_starts, windows=start_windows(instance, best_tel),
                         split=split, node_limit=tree_nodes)
        tree_s = time.perf_counter() - t0
        check = check_tree_certificate(instance, tree.nodes, split, best_starts)
        if tree.incumbent is not None and tree.incumbent < best_tel and tree.starts:
            found = check_schedule(instance, tree.starts)
            if found.ok and found.tel is not None and found.tel < best_tel:
                best_starts, best_tel = dict(tree.starts), int(found.tel)
        certificate = {"kind": "zone-tree", "bound": check.bound, "claimed": tree.bound, "nodes": tree.explored,
                       "node_limit": tree_nodes, "leaves": check.leaves, "depth": check.depth, "s": round(tree_s, 1)}
    row = {"n": instance.n, "M": instance.M, "first": dict(claim), "second": second, "certificate": certificate,
           "tel": best_tel, "starts": best_starts}
    row["proof"], row["proof_note"] = classify(row)
    return row


def _ceil(bound: float | None) -> int | None:
    return None if bound is None or not math.isfinite(bound) else math.ceil(bound - EPS)


def classify(row: Mapping[str, Any]) -> tuple[str, str]:
    """The proof of one row: ``certificate``, ``two solvers``, ``certificate + two solvers``,
    :data:`ONE_WORD` or ``contradiction``, with a one-line note.

    Parameters
    ----------
    row : mapping
        ``first`` (the first solver's claim, at least ``opt``), ``second`` (``status``, ``bound``, ``objective``,
        ``verified_tel``), ``certificate`` (``bound``) or ``None``, and ``tel``: the stored schedule's TEL (checker).
    """
    opt = int(row["first"]["opt"])
    tel = row.get("tel")
    second = row.get("second") or {}
    cert = row.get("certificate") or {}
    problems = []
    if tel is None:
        problems.append("no verified schedule stored")
    elif tel != opt:
        problems.append(f"stored schedule TEL {tel} ≠ HiGHS OPT {opt}")
    if second.get("verified_tel") is not None and second["verified_tel"] < opt:
        problems.append(f"{second.get('solver')} schedule TEL {second['verified_tel']} below HiGHS OPT {opt}")
    second_bound = _ceil(second.get("bound"))
    if second_bound is not None and second_bound > opt:
        problems.append(f"{second.get('solver')} bound {second['bound']:.6g} above OPT {opt}")
    if second.get("status") == "optimal" and second.get("objective") is not None \
            and round(second["objective"]) != opt:
        problems.append(f"{second.get('solver')} optimal at {second['objective']:.6g}, HiGHS at {opt}")
    cert_bound = _ceil(cert.get("bound"))
    if cert_bound is not None and cert_bound > opt:
        problems.append(f"certificate bound {cert['bound']:.6g} above OPT {opt}")
    if problems:
        return "contradiction", "; ".join(problems)
    kinds, notes = [], []
    if cert_bound is not None and cert_bound >= opt:
        kinds.append("certificate")
        notes.append(f"zone-tree {cert['bound']:.2f} re-walked ({cert.get('nodes')} nodes)")
    if second.get("status") == "optimal" and second_bound == opt:
        kinds.append("two solvers")
        notes.append(f"HiGHS and {second.get('solver', '?').upper()} both optimal at {opt}")
    if kinds:
        return " + ".join(kinds), "; ".join(notes)
    sb = "—" if second.get("bound") is None else f"{second['bound']:.2f}"
    limit = "" if second.get("time_limit") is None else f" ({second['time_limit']:g} s limit)"
    return ONE_WORD, f"{second.get('solver', 'second solver')} {second.get('status')}{limit} at bound {sb}"


def recheck_schedules(path: Path) -> list[str]:
    """Re-derive the TEL of every schedule stored in ``path`` (``opt_schedules.jsonl``) with the checker.

    Returns
    -------
    list of str
        One line per problem (``file:line: key: ...``): an infeasible schedule, a TEL other than the stored
        OPT, a schedule that does not start every request; empty when every schedule re-checks.
    """
    from llmopt.verify.checker import check_schedule
    from llmopt.workloads import make_instance

    problems = []
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        rec = json.loads(line)
        where = f"{path}:{lineno}: {rec.get('key')}"
        inst = make_instance(rec["workload"], seed=rec["seed"], **_params(rec))
        starts = rec["starts"]
        if sorted(starts) != sorted(inst.ids):
            problems.append(f"{where}: the starts do not name every request")
            continue
        rep = check_schedule(inst, starts)
        if not rep.ok:
            problems.append(f"{where}: infeasible ({'; '.join(str(e) for e in rep.violations)[:200]})")
        elif rep.tel != rec["opt"]:
            problems.append(f"{where}: TEL {rep.tel} ≠ stored OPT {rec['opt']}")
    return problems


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def proof_table(folder: str, out: Path | None = None) -> str:
    """The proven rows of suite ``folder`` (e.g. ``"jaillet/opt-frontier"``) with their "proof" column,
    from ``proofs.jsonl`` in ``out`` (default: the committed ``results/opt/opt-proofs``)."""
    rows = [r for r in _read_jsonl((out or RESULTS / "opt" / "opt-proofs") / PROOFS_FILE) if r["folder"] == folder]
    lines = ["| instance | OPT | HiGHS (s) | SCIP | SCIP bound (s) | zone-tree certificate | proof |",
             "|---|---:|---:|---|---:|---:|---|"]
    for r in rows:
        h, s, c = r["first"], r["second"], r["certificate"]
        hs = "—" if h.get("ip_s") is None else f"{h['ip_s']:.1f}"
        sb = "—" if s.get("bound") is None else f"{s['bound']:,.2f} ({s['s']:.1f})"
        cb = "—" if c is None else f"{c['bound']:,.2f} ({c['nodes']} nodes)"
        lines.append(f"| {r['key']} | {h['opt']:,} | {hs} | {s['status']} | {sb} | {cb} | {r['proof']} |")
    return "\n".join(lines)


def proof_counts(out: Path | None = None) -> str:
    """One phrase: how many proven rows rest on which proof (for README prose)."""
    rows = _read_jsonl((out or RESULTS / "opt" / "opt-proofs") / PROOFS_FILE)
    kinds: dict[str, int] = {}
    for r in rows:
        kinds[r["proof"]] = kinds.get(r["proof"], 0) + 1
    return "; ".join(f"{k}: {v}" for k, v in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))


def render(rows: list[dict[str, Any]], args: argparse.Namespace, wall: float) -> str:
    """The README of the output folder."""
    limits = sorted({(r["second"].get("time_limit"), r["second"].get("node_limit")) for r in rows},
                    key=lambda tn: (tn[0] or math.inf, tn[1] or math.inf))
    limit = " or ".join((f"{t:g} s wall clock" if t else "no time limit") + (f", {nn} nodes" if nn else "")
                        for t, nn in limits)
    parts = [
        "# Proofs of OPT a reader can re-check (`opt-proofs`)",
        "",
        (__doc__ or "").split("\n\n")[0].replace("\n", " ").replace("``", "`"),
        "",
        "Every row below was proven optimal by HiGHS alone in its suite (`HiGHS (s)`: the stored run's IP "
        "seconds). This study rebuilds the instance and re-proves it (`llmopt/opt/studies/opt_proofs.py`): "
        f"SCIP on `hindsight-ip-zones`, warm-started from MC-SF / local search ({limit} per row), and "
        f"`zone-tree` for at most {args.tree_nodes} nodes, its tree re-walked by the checker. "
        "`proof`: **certificate** = the re-walked bound rounds up to OPT; **two solvers** = SCIP also proves "
        f"optimality at OPT with its own bound; **{ONE_WORD}** = neither; **contradiction** = something "
        "disagrees (never counted as a proof). Every row's optimal schedule is in "
        f"`{SCHEDULES_FILE}` (one per instance), re-checked by the checker in "
        "`tests/golden/test_golden_opt_proofs.py`.",
        "",
    ]
    for folder in SUITES:
        sub = [r for r in rows if r["folder"] == folder]
        if not sub:
            continue
        parts += [f"## `results/{folder}`", ""]
        lines = ["| instance | OPT | HiGHS (s) | SCIP | SCIP bound (s) | zone-tree certificate | proof | note |",
                 "|---|---:|---:|---|---:|---:|---|---|"]
        for r in sub:
            h, s, c = r["first"], r["second"], r["certificate"]
            hs = "—" if h.get("ip_s") is None else f"{h['ip_s']:.1f}"
            sb = "—" if s.get("bound") is None else f"{s['bound']:,.2f} ({s['s']:.1f})"
            cb = "—" if c is None else f"{c['bound']:,.2f} ({c['nodes']} nodes)"
            lines.append(f"| {r['key']} | {h['opt']:,} | {hs} | {s['status']} | {sb} | {cb} | {r['proof']} | "
                         f"{r['proof_note']} |")
        parts += [*lines, ""]
    cmd = "llmopt study run opt-proofs --out results/opt/opt-proofs" + (" --big" if args.big else "") + (
        " --only " + " ".join(f"'{k}'" for k in args.only) if args.only else "")
    cmd += "".join(f" --{flag} {value:g}" for flag, value, default in (
        ("seconds", args.seconds, 300.0), ("nodes", args.nodes, None), ("tree-nodes", args.tree_nodes, 60))
        if value is not None and value != default)
    parts += [
        f"Proofs: {', '.join(sorted({r['proof'] for r in rows}))} — counts: "
        + ", ".join(f"{sum(r['proof'] == k for r in rows)} {k}" for k in sorted({r['proof'] for r in rows})) + ".",
        "",
        f"Measured with `nice -n 10 {cmd}` on {platform.machine()} (Python {platform.python_version()}), "
        f"{wall / 60:.1f} min wall for the last invocation, on a 2-core machine shared with other jobs "
        "(seconds are wall clock under that load). Rows with n > "
        f"{BIG_N} run only with `--big`.",
        "",
    ]
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: the options of :data:`OPTIONS` and ``--out DIR``."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=300.0, help="SCIP's wall-clock limit per row (default 300)")
    ap.add_argument("--nodes", type=int, default=None, help="SCIP's node limit per row (default none)")
    ap.add_argument("--tree-nodes", type=int, default=60, help="zone-tree's node limit per row (default 60)")
    ap.add_argument("--big", action="store_true", help=f"also the rows with n > {BIG_N}")
    ap.add_argument("--limit", type=int, default=None, help="only the first N rows (smallest first)")
    ap.add_argument("--only", action="append", default=None, metavar="KEY",
                    help="only the rows of this instance key, e.g. 'AM1 M=40 n=20 seed=0' (repeatable; "
                         "``llmopt study run``: --only KEY1 KEY2); they replace the stored rows, the others are kept")
    ap.add_argument("--out", type=Path, required=True, help="folder of the files written")
    args = ap.parse_args(argv)
    from llmopt.workloads import make_instance

    rows_in = sorted(proven_rows(), key=lambda r: (r["n"], r["folder"], r["key"]))
    if args.only:
        unknown = sorted(set(args.only) - {r["key"] for r in rows_in})
        if unknown:
            raise StudyError(f"--only {unknown[0]!r}: no proven row has this key")
        rows_in = [r for r in rows_in if r["key"] in args.only]
    elif not args.big:
        rows_in = [r for r in rows_in if r["n"] <= BIG_N]
    rows_in = rows_in[:args.limit]
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rows = []
    for rec in rows_in:
        inst = make_instance(rec["workload"], seed=rec["seed"], **_params(rec))
        row = prove(inst, solver_claim(rec), seconds=args.seconds, nodes=args.nodes, tree_nodes=args.tree_nodes)
        row = {"folder": rec["folder"], "key": rec["key"], "workload": rec["workload"], "params": rec.get("params"),
               "seed": rec["seed"]} | row
        rows.append(row)
        print(f"{rec['folder']} {rec['key']}: {row['proof']} ({row['proof_note']})", flush=True)
    old_schedules: dict[str, dict[str, Any]] = {}
    if args.only and (out / PROOFS_FILE).exists():  # keep the other rows and their schedules
        new = {(r["folder"], r["key"]) for r in rows}
        old_schedules = {s["key"]: s for s in _read_jsonl(out / SCHEDULES_FILE)}
        rows += [r for r in _read_jsonl(out / PROOFS_FILE) if (r["folder"], r["key"]) not in new]
    order = {f: i for i, f in enumerate(SUITES)}
    rows.sort(key=lambda r: (order[r["folder"]], r["workload"], r["n"], r["M"]))
    schedules: dict[str, dict[str, Any]] = {}
    for r in rows:
        if "starts" not in r:
            if r["key"] in old_schedules and r["key"] not in schedules:
                schedules[r["key"]] = old_schedules[r["key"]]
        elif r["proof"] != "contradiction" and r["key"] not in schedules:
            schedules[r["key"]] = {"key": r["key"], "workload": r["workload"], "params": r["params"],
                                   "seed": r["seed"], "n": r["n"], "M": r["M"], "opt": r["tel"],
                                   "starts": r["starts"]}
    (out / SCHEDULES_FILE).write_text("".join(json.dumps(s) + "\n" for s in schedules.values()))
    (out / PROOFS_FILE).write_text("".join(json.dumps({k: v for k, v in r.items() if k != "starts"}) + "\n"
                                           for r in rows))
    (out / "README.md").write_text(render(rows, args, time.perf_counter() - t0))
    print(f"wrote {out / 'README.md'}")


OPTIONS = {
    "seconds": "SCIP's wall-clock limit per row (default 300; quick 60)",
    "nodes": "SCIP's node limit per row (default none)",
    "tree_nodes": "zone-tree's node limit per row (default 60)",
    "big": f"also the rows with n > {BIG_N} (AM1 n = 20 of opt-frontier)",
    "limit": "only the first N rows, smallest first (quick: 3)",
    "only": "only these instance keys; their rows replace the stored ones",
}


def run(out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False, **options: Any) -> list[str]:
    """Write ``opt_schedules.jsonl``, ``proofs.jsonl`` and ``README.md`` into ``out``; returns the files written."""
    if seeds is not None:
        raise StudyError("opt-proofs takes no --seeds (it re-proves the stored proven rows)")
    opts = ({"seconds": 60, "limit": 3} if quick else {}) | dict(options)
    only = opts.pop("only", None)
    argv = ["--out", str(out), *options_argv(opts)]
    for key in [only] if isinstance(only, str) else (only or []):
        argv += ["--only", str(key)]
    return run_main(main, out, argv)


def report(out: Path) -> list[str]:
    """``out``'s files (written by :func:`run`: the solves are timed, so there is nothing to re-render)."""
    return [str(Path(out) / f) for f in ("README.md", PROOFS_FILE, SCHEDULES_FILE) if (Path(out) / f).exists()]
