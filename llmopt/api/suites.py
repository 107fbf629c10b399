"""Suites, studies and registries through the API (``llmopt bench run``, ``llmopt study run``, ``llmopt stages``)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llmopt.model.registry import Registry

__all__ = ["run_suite", "run_study", "registries"]


def run_suite(suite: str | Any, out_dir: str | Path | None = None, *, workers: int | None = None,
              progress: bool = True, allow_results: bool = False, **options: Any) -> Any:
    """Run a registered benchmark suite (resumable) and write its report; returns the summary table.

    Like ``llmopt bench run``: the run goes to ``runs/<suite>`` (in the working directory) unless
    ``out_dir`` says otherwise, and a task that failed is counted, not hidden.

    Parameters
    ----------
    suite : str or Suite
        A registered name (``llmopt.registries()["suite"]``) or a :class:`~llmopt.bench.suites.Suite`.
    out_dir : path, optional
        The results folder (default ``runs/<suite>``).
    workers : int, optional
        Tasks at once (default: every CPU).
    progress : bool
        A progress bar on a terminal, else one line per finished task.
    allow_results : bool
        Allow ``out_dir`` inside the checkout's committed ``results/`` folder (rebuilding the reference
        output on purpose, as the CLI's explicit ``--out results/...`` does); refused otherwise.
    **options
        Passed to :func:`llmopt.bench.harness.run_suite` (``executor``, ``time_limit``, ``retry_errors``, ...).

    Returns
    -------
    pandas.DataFrame
        The summary (as in ``summary.csv``). ``df.attrs`` holds ``out`` (the folder), ``errors`` (tasks
        whose latest record has an error, as ``llmopt bench run`` counts them for its exit status 1),
        ``missing`` (tasks with no record), ``failed`` (one ``(instance, seed, error)`` per failed task)
        and ``message`` (the CLI's one-line account of them, ``""`` when every task succeeded).

    Raises
    ------
    llmopt.bench.store.HarnessError
        If ``out_dir`` is a committed results folder and ``allow_results`` is false (nothing is written),
        or the folder holds another suite's results.
    """
    from llmopt.bench.harness import default_out_dir, refuse_committed_results, task_failures
    from llmopt.bench.harness import run_suite as _run
    from llmopt.bench.studies import write_suite_manifest
    from llmopt.bench.suites import SUITES, Suite, get_suite
    from llmopt.report.summary import write_report

    s = suite if isinstance(suite, Suite) else get_suite(suite)
    out = Path(out_dir) if out_dir is not None else default_out_dir(s.name)
    refuse_committed_results(out, allow=allow_results)
    registered = s.name in SUITES
    if registered:  # the CLI line that does the same, for suite.json and the manifest
        options.setdefault("command", " ".join(shlex.quote(a) for a in [
            "llmopt", "bench", "run", s.name, "--out", str(out), *(["--workers", str(workers)] if workers else []),
            *([] if progress else ["--no-progress"])]))
    _run(s, out, workers=workers, progress=progress, **options)
    df = write_report(out, s)
    if registered:  # its folder says how to regenerate it
        write_suite_manifest(out, s.name)
    failures = task_failures(out, s)
    df.attrs.update(out=out, errors=len(failures.failed), missing=failures.missing, message=failures.message(),
                    failed=[(r.get("instance"), r.get("seed"), r["error"]) for r in failures.failed])
    return df


def registries() -> dict[str, Registry[Any]]:
    """Every registry by kind (policy, workload, solver, bound, suite, formulation, ...)."""
    from llmopt.bench.plugins.loading import registries as _registries

    return _registries()


def run_study(name: str, out: str | Path | None = None, *, quick: bool = False,
              seeds: Sequence[int] | None = None, **options: Any) -> list[str]:
    """Run a registered study (``llmopt study list``) and write its files and ``manifest.json``.

    Parameters
    ----------
    name : str
        The study's name in :data:`llmopt.bench.studies.STUDIES`.
    out : str or Path, optional
        Output folder; default ``runs/<name>``, as ``llmopt study run`` (``results/`` only when named).
    quick : bool
        The study's short form.
    seeds : sequence of int, optional
        Seeds, where the study has them (default: the study's own).
    **options
        The study's own options (its module's ``OPTIONS``).

    Returns
    -------
    list of str
        The files written, ``manifest.json`` last.
    """
    from llmopt.bench.studies import run_study as _run

    return _run(name, out, quick=quick, seeds=seeds, **options)
