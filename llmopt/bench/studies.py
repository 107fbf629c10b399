"""Studies: the one-off measurements behind the papers' claims and the bounds, as a registry.

A suite (:mod:`llmopt.bench.suites`) is declarative: workloads × policies × pipeline, run by the
harness. A :class:`Study` is a piece of code that measures something no suite can express (a
closed form beside a simulation, a bound's scaling, a sensitivity sweep) and writes its own files.
Each study lives in a module named by its content, in its paper's wing
(``llmopt.papers.<paper>.studies``) or, for bound studies, in ``llmopt.opt.studies``. The module
defines::

    run(out: Path, *, seeds=None, quick: bool = False, **options) -> list[str]   # files written
    report(out: Path) -> list[str]                                                  # re-render

:data:`STUDIES` names every study (third-party packages add theirs through the entry-point group
``llmopt.studies``, each entry a ``"module:attr"`` path to a :class:`Study`). :func:`run_study`
runs one and writes ``manifest.json`` into its output folder: the command line that regenerates the
files, the arguments, the llmopt version, the git commit and the date. Several studies may write
into one folder (a paper's suite folder holds its studies' tables too), so ``manifest.json`` maps
each study name to its own entry.

The CLI is ``llmopt study list``, ``llmopt study run NAME [--quick] [--out DIR] [--seeds ...] [--option
value ...]``, ``llmopt study report NAME [--out DIR]`` and ``llmopt study check NAME|FOLDER`` (rerun a
committed folder's manifest command and compare, :mod:`llmopt.bench.regenerate`) (:mod:`llmopt.cli.study`);
the Python API is :func:`run_study` (also ``llmopt.api.run_study``).
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from llmopt._version import __version__
from llmopt.model.registry import Registry, RegistryError
from llmopt.opt.studies import study_command

__all__ = [
    "Study",
    "STUDIES",
    "get_study",
    "run_study",
    "check_options",
    "study_command",
    "parse_seeds",
    "parse_options",
    "write_manifest",
    "read_manifest",
    "git_commit",
    "MANIFEST_FILE",
    "DEFAULT_STUDY_RUNS",
]

MANIFEST_FILE = "manifest.json"
#: where ``run_study`` writes when no folder is given (like ``llmopt bench run``: never into ``results/``)
DEFAULT_STUDY_RUNS = Path("runs")


@dataclass(frozen=True)
class Study:
    """One registered study.

    Parameters
    ----------
    name : str
        The registry name (``llmopt study run NAME``).
    paper : str
        Whose claim it measures: ``"jaillet"``, ``"wang"``, ``"chen"``, or ``"opt"`` for the bounds.
    description : str
        One line for ``llmopt study list``.
    module : str
        Import path of the module defining ``run`` and ``report``; imported only when the study runs.
    results : str
        The committed results folder under ``results/`` (``<paper or opt>/<name>``, e.g. ``"opt/zone-tree"``)
        that holds this study's reference output.
    """

    name: str
    paper: str
    description: str
    module: str
    results: str

    def load(self) -> ModuleType:
        """The study's module (imported on first use)."""
        return importlib.import_module(self.module)

    def options(self) -> dict[str, str]:
        """The study's own options (its module's ``OPTIONS``: keyword → one line of help)."""
        return dict(getattr(self.load(), "OPTIONS", {}))

    def run(self, out: Path, *, seeds: Sequence[int] | None = None, quick: bool = False,
            **options: Any) -> list[str]:
        """Run the study into ``out``; returns the files written (no manifest: see :func:`run_study`)."""
        files: list[str] = self.load().run(out, seeds=seeds, quick=quick, **options)
        return files

    def report(self, out: Path) -> list[str]:
        """Re-render the study's report from the files in ``out``; returns the files written."""
        files: list[str] = self.load().report(out)
        return files


STUDIES: Registry[Study] = Registry("study", "llmopt.studies")


def _register(name: str, paper: str, module: str, results: str, description: str) -> None:
    STUDIES.register(name, Study(name, paper, description, module, results), doc=description)


# --- the studies (each module's docstring says what it measures and how long it takes) -----------
_register("chen-c-like", "chen", "llmopt.papers.chen.studies.c_like", "chen/lmsys",
          "C §6 on a C-like sample (C's five statistics per field): Figures 5–7, Figure 4, an M sweep (c_like.md)")
_register("chen-theorem-claims", "chen", "llmopt.papers.chen.studies.theorem_claims", "chen/theory",
          "C Corollary 2, Theorem 2 and Lemma 2 vs Theorem EC.1, closed forms beside simulations (theorem_claims.md)")
_register("wang-claims", "wang", "llmopt.papers.wang.studies.claims_measured", "wang/synthetic",
          "W Thm EC.1 (MC-SF₂), the scaled DP's (1+ε) guarantee, local swap's rounds, measured (claims.md)")
_register("wang-lp-optima", "wang", "llmopt.papers.wang.studies.lp_optima", "wang/synthetic",
          "Sorted-LP and LP-Swap from different optima of W's Relax-LP over W's possible horizons (lp_optima.md)")
_register("lp-bucket-sensitivity", "wang", "llmopt.papers.wang.studies.lp_bucket_sensitivity", "wang/mixed",
          "the bucketed Relax-LP (Δ > 1) against the exact one: LP value, order, Sorted-LP / LP-Swap TEL")
_register("energy-bound", "opt", "llmopt.opt.studies.energy_bound", "opt/energy-bound",
          "the energy bound against the LP bound and the best schedules, J §5.1 and LMSYS trace scale (README.md)")
_register("zone-bound", "jaillet", "llmopt.papers.jaillet.studies.zone_bound", "jaillet/zone-bound",
          "the zone-lp bound on the 400 J §5.1 trials and the proven-OPT points: certified gap before → after")
_register("trace-bracket", "opt", "llmopt.opt.studies.trace_bracket", "opt/trace-bracket",
          "the certified bracket at trace scale: LMSYS n = 1,000 / 10,000, λ = 50 / 10, schedules vs bound stages")
_register("bound-directions", "opt", "llmopt.opt.studies.bound_directions", "opt/bound-directions",
          "valid inequalities (CG rows, pair and biclique cuts) added to the hindsight LP: how far each moves it")
_register("bound-scaling", "opt", "llmopt.opt.studies.bound_scaling", "opt/bound-scaling",
          "each lower-bound stage's time and value against n (fitted exponents), lag cliques on J §5.1, zone-tree")
_register("amin-readings", "chen", "llmopt.papers.chen.studies.amin_readings", "chen/amin-readings",
          "every reading of C's A_min (Algorithm 2) on C's theory instances and on C §6, and the best match")
_register("table1-cost-sensitivity", "jaillet", "llmopt.papers.jaillet.studies.table1_cost_sensitivity",
          "jaillet/table1", "J Table 1 under several batch-time models: how much of the MC-Benchmark / MC-SF gap "
          "the cost model explains (cost_sensitivity.md)")
_register("low-demand-threshold", "jaillet", "llmopt.papers.jaillet.studies.low_demand_threshold", "jaillet/lmsys",
          "why α-protection's smallest loop-free α at λ = 10 is 0.09–0.12 here and 0.24 in J: candidate causes "
          "(low_demand_threshold.md)")
_register("fig3-cost-sensitivity", "jaillet", "llmopt.papers.jaillet.studies.fig3_cost_sensitivity", "jaillet/fig3",
          "J Figure 3's slope ratios under other batch-time models and output distributions (cost_sensitivity.md)")
_register("cluster-bounds", "opt", "llmopt.opt.studies.cluster_bounds", "opt/cluster-bounds",
          "K-worker hindsight bounds and the K-worker IP against n: times, exponents, bounds / OPT_K")
_register("cluster-ratios", "opt", "llmopt.opt.studies.cluster_ratios", "opt/cluster-ratios",
          "router × policy on K workers against K-worker OPT or a certified bound (discrete time)")
_register("fit-cost-model", "jaillet", "llmopt.papers.jaillet.studies.fit_cost_model", "jaillet/cost-model",
          "refit the Llama-2-70B / 2×A100 batch-time model from the staged GPU profiles and cross-check it "
          "against splitwise and the roofline")
_register("cost-model-joint-fit", "jaillet", "llmopt.papers.jaillet.studies.cost_model_joint_fit",
          "jaillet/cost-model", "one batch-time setting against J Table 1, Figure 3 at λ = 50 and 10 and J0's 200 s "
          "cap together: a grid fit with residuals per paper number (joint_fit.md)")
_register("alpha-beta-readings", "jaillet", "llmopt.papers.jaillet.studies.alpha_beta_readings", "jaillet/lmsys",
          "α-protection β-clearing under the released code's admission rule and 1 s stall per extra pass, with the "
          "full and the censored (time-limit) mean latency (alpha_beta_readings.md)")
_register("alpha-loop-sensitivity", "jaillet", "llmopt.papers.jaillet.studies.alpha_loop_sensitivity",
          "jaillet/lmsys", "how often α-protection greedy falls into an eviction loop, staged vs thinned outputs "
          "(loop_sensitivity.md)")
_register("certified-gap", "jaillet", "llmopt.papers.jaillet.studies.certified_gap", "jaillet/certified",
          "the J §5.1 certified bracket per trial, jaillet-synthetic vs jaillet-certified (gap.md; solves nothing)")
_register("cancelled-solve-exit", "opt", "llmopt.opt.studies.cancelled_solve_exit", "opt/cancelled-solve-exit",
          "how often `llmopt solve` aborts at exit after cancelling a multi-threaded HiGHS solve")
_register("schedule-polish", "jaillet", "llmopt.papers.jaillet.studies.schedule_polish", "jaillet/schedule-polish",
          "CP-SAT with a real budget, then lns from its schedule, on the 400 J §5.1 trials (with a control)")
_register("zone-tree", "opt", "llmopt.opt.studies.zone_tree_vs_bc", "opt/zone-tree",
          "zone-tree (branch-and-bound on the zone LP) against HiGHS's branch-and-cut on the OPT-frontier points")
_register("opt-proofs", "opt", "llmopt.opt.studies.opt_proofs", "opt/opt-proofs",
          "every proven-OPT row re-proved by SCIP and a re-walked zone-tree certificate; optimal schedules stored")
_register("formulation-comparison", "opt", "llmopt.opt.studies.formulation_comparison", "opt/formulation-comparison",
          "sawtooth rows, a configuration master and lag cliques against zone-lp on proven-OPT instances")
_register("j0-theory", "jaillet", "llmopt.papers.jaillet.studies.j0_theory", "jaillet/j0-theory",
          "J0 Thm 6.2's adversarial family, J Thm 4.3's O(1) ratio and J0 Thm 5.3's constant regret, measured")


def get_study(name: str) -> Study:
    """The registered study ``name``.

    Raises
    ------
    RegistryError
        If no study has that name, or an entry-point entry is not a :class:`Study` of that name.
    """
    study = STUDIES.get(name)
    if not isinstance(study, Study):
        raise RegistryError(f"study {name!r} resolves to {type(study).__name__}, not a Study")
    if study.name != name:
        raise RegistryError(f"study registered as {name!r} calls itself {study.name!r}")
    return study


# --- arguments and the command line ---------------------------------------------------------------


def parse_seeds(text: str) -> tuple[int, ...]:
    """Seeds from ``"0,1,5"``, ``"0-9"`` (inclusive) or a mix ``"0-4,10"``.

    Raises
    ------
    ValueError
        If a part is not an integer or a range ``A-B`` with ``A <= B``, or a seed repeats.
    """
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        lo, dash, hi = part.partition("-")
        try:
            if dash and lo:
                a, b = int(lo), int(hi)
                if a > b:
                    raise ValueError
                seeds.extend(range(a, b + 1))
            else:
                seeds.append(int(part))
        except ValueError:
            raise ValueError(f"--seeds {text!r}: {part!r} is neither a seed nor a range A-B") from None
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds {text!r}: a seed repeats")
    return tuple(seeds)


def _option_value(raw: str) -> Any:
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, int | float | bool) or value is None else raw


def parse_options(args: Sequence[str]) -> dict[str, Any]:
    """A study's own options from ``--key value``, ``--key v1 v2``, ``--key=value`` and ``--flag``.

    Keys become identifiers (``--opt-seconds`` → ``opt_seconds``); numbers and ``true``/``false`` are
    read as JSON, anything else stays a string; several values make a list; a bare flag is ``True``.

    Raises
    ------
    ValueError
        If a value comes before any ``--key``, or a key repeats.
    """
    options: dict[str, Any] = {}
    key: str | None = None
    values: list[Any] = []

    def close() -> None:
        if key is not None:
            options[key] = True if not values else values[0] if len(values) == 1 else list(values)

    for arg in args:
        if arg.startswith("--") and len(arg) > 2 and not _is_number(arg):
            close()
            name, eq, raw = arg[2:].partition("=")
            key, values = name.replace("-", "_"), []
            if key in options:
                raise ValueError(f"option --{name} is given twice")
            if eq:
                values.append(_option_value(raw))
        elif key is None:
            raise ValueError(f"{arg!r}: a study option is --name [value ...]")
        else:
            values.append(_option_value(arg))
    close()
    return options


def _is_number(arg: str) -> bool:
    try:
        float(arg)
    except ValueError:
        return False
    return True


# --- the manifest --------------------------------------------------------------------------------


def git_commit(paths: Sequence[Path] = ()) -> str | None:
    """The commit of the checkout llmopt runs from, or with ``paths`` the last commit that changed one of
    them; ``None`` without git (an installed copy) or history."""
    here = Path(__file__).resolve().parent
    cmd = ["git", "-C", str(here), "rev-parse", "HEAD"]
    if paths:
        cmd = ["git", "-C", str(here), "log", "-1", "--format=%H", "--", *(str(Path(p).resolve()) for p in paths)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 else None


def read_manifest(out: Path) -> dict[str, Any]:
    """``out/manifest.json`` as ``{study name: entry}`` (empty when there is none).

    Raises
    ------
    ValueError
        If the file is not a JSON object; the message names the file.
    """
    path = Path(out) / MANIFEST_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the manifest ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a manifest is a JSON object of study entries")
    return data


def _within(out: Path, file: str) -> str:
    """``file`` relative to ``out`` when it lies inside it (the manifest moves with its folder)."""
    try:
        return str(Path(file).resolve().relative_to(out.resolve()))
    except ValueError:
        return str(file)


def write_manifest(out: Path, study: Study, *, quick: bool = False, seeds: Sequence[int] | None = None,
                   options: Mapping[str, Any] | None = None, files: Sequence[str] = (),
                   regenerated: bool = True, command_out: Path | str | None = None, note: str = "") -> Path:
    """Write (or update) ``study``'s entry of ``out/manifest.json``; returns its path.

    The entry holds ``command`` (the ``llmopt study run`` line that regenerates the files, with
    ``command_out`` as its ``--out``, default ``out``), ``arguments``, ``version``, ``commit`` (the
    checkout's; for files not re-run, the last commit that changed them; ``null`` without git), ``date``
    (UTC), ``files`` and ``regenerated`` (``false`` for a manifest written for committed files that were
    not re-run), and ``note`` when given (how the files were made, where that
    differs from the command). Entries of other studies in the same folder are kept.
    """
    out = Path(out)
    where = command_out if command_out is not None else out
    entry = {
        "command": study_command(study.name, where, quick=quick, seeds=seeds, options=options),
        "arguments": {"out": str(where), "quick": quick, "seeds": list(seeds) if seeds is not None else None,
                      "options": dict(options or {})},
        "version": __version__,
        "commit": git_commit() if regenerated else git_commit([Path(f) for f in files]),
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "regenerated": regenerated,
        "files": sorted(_within(out, f) for f in files),
    } | ({"note": note} if note else {})
    manifest = read_manifest(out)
    manifest[study.name] = entry
    out.mkdir(parents=True, exist_ok=True)
    path = out / MANIFEST_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_suite_manifest(out: Path, suite: str) -> Path:
    """Write (or update) suite ``suite``'s entry of ``out/manifest.json`` after ``llmopt bench run``.

    The entry holds ``kind: "suite"``, ``command`` (the last run's command line, from ``suite.json``),
    ``arguments``, ``version``, ``commit``, ``date``, ``files`` (the folder's files, less its ``README.md``
    and the files other entries of the manifest list: those the suite does not write) and ``regenerated``:
    ``true`` only when the last run of ``suite.json`` computed every task (none was taken over from
    earlier records, none failed or was lost); otherwise ``false`` with ``not_regenerated`` saying how
    many tasks were reused, failed or lost. Entries of other suites or studies in the folder are kept.
    """
    out = Path(out)
    try:
        runs = json.loads((out / "suite.json").read_text(encoding="utf-8")).get("runs") or [{}]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        runs = [{}]
    last = runs[-1] if isinstance(runs[-1], dict) else {}
    reused, failed, lost = (int(last.get(k) or 0) for k in ("tasks_skipped", "task_errors", "tasks_lost"))
    complete = last.get("outcome") == "completed" and not (reused or failed or lost)
    manifest = read_manifest(out)
    # a folder's README and another study's tables are not the suite's output: listed here, a check of
    # the suite would find them "not produced" by its rerun
    others = {f for name, e in manifest.items() if name != suite and isinstance(e, dict) for f in e.get("files") or ()}
    entry: dict[str, Any] = {
        "kind": "suite",
        "command": last.get("command"),
        "arguments": {"suite": suite, "out": str(out)},
        "version": __version__,
        "commit": git_commit(),
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "regenerated": complete,
        "files": sorted(p.name for p in out.iterdir() if p.is_file() and p.name not in (MANIFEST_FILE, "README.md")
                        and p.name not in others and not p.name.startswith(".") and not p.name.endswith(".tmp")),
    }
    if not complete:
        entry["not_regenerated"] = (f"the last run ({last.get('outcome', 'unknown')}) took {reused} task(s) from "
                                    f"earlier records and had {failed} failed and {lost} lost; the report was "
                                    "rebuilt from the recorded tasks")
    manifest[suite] = entry
    path = out / MANIFEST_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def check_options(study: Study, options: Mapping[str, Any]) -> None:
    """Refuse an option that is not one of ``study``'s ``OPTIONS``.

    Raises
    ------
    ValueError
        Naming the unknown options and the study's own.
    """
    known = study.options()
    unknown = [k for k in options if k not in known]
    if unknown:
        has = ", ".join("--" + k.replace("_", "-") for k in sorted(known)) or "none"
        raise ValueError(f"study {study.name!r} has no option {', '.join('--' + k.replace('_', '-') for k in unknown)} "
                         f"(its options: {has})")


def run_study(name: str, out: str | Path | None = None, *, quick: bool = False,
              seeds: Sequence[int] | None = None, **options: Any) -> list[str]:
    """Run the registered study ``name`` into ``out`` and write its manifest; returns the files written.

    Parameters
    ----------
    name : str
        A name in :data:`STUDIES`.
    out : str or Path, optional
        Output folder; default ``runs/<name>`` (the committed ``results/`` folders are rebuilt only
        when named explicitly).
    quick : bool
        The study's short form (minutes at most; smaller sizes or fewer seeds).
    seeds : sequence of int, optional
        Seeds to run, where the study has seeds (default: the study's own).
    **options
        The study's own options (its module's ``run`` keywords).

    Returns
    -------
    list of str
        Paths of the files written, the manifest last.

    Raises
    ------
    RegistryError
        If ``name`` is not a registered study.
    ValueError
        If an option is not one of the study's ``OPTIONS`` (checked before anything runs).
    """
    study = get_study(name)
    check_options(study, options)
    folder = Path(out) if out is not None else DEFAULT_STUDY_RUNS / name
    folder.mkdir(parents=True, exist_ok=True)
    files = study.run(folder, seeds=tuple(seeds) if seeds is not None else None, quick=quick, **options)
    manifest = write_manifest(folder, study, quick=quick, seeds=seeds, options=options, files=files)
    return [*files, str(manifest)]
