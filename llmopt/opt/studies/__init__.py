"""The bound studies (registered in :data:`llmopt.bench.studies.STUDIES`), and what every study module shares.

Each module here measures a lower bound or the hindsight pipeline beyond what a suite expresses
(``llmopt study list`` names them). The helpers below are shared by these modules and by the papers'
study modules (``llmopt.papers.<paper>.studies``): they sit in the lowest wing that holds studies.
Every study module keeps the command-line ``main(argv)`` of the script it came from, and its
``run(out, *, seeds=None, quick=False, **options)`` calls that ``main`` through :func:`run_main`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["REPO", "RESULTS", "StudyError", "run_main", "options_argv", "study_command"]

#: the checkout holding the committed ``results/`` the studies read and rebuild
REPO = Path(__file__).resolve().parents[3]
RESULTS = REPO / "results"


class StudyError(ValueError):
    """A study cannot run as asked (an option it does not take, a missing input, clashing stored rows).

    ``llmopt study run`` prints it as one line and exits 2; nothing the study wrote before is removed.
    """


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    if not folder.is_dir():
        return {}
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.rglob("*") if p.is_file()}


def run_main(main: Callable[[list[str]], Any], out: Path, argv: Sequence[str]) -> list[str]:
    """Call a study's ``main(argv)`` and return the files under ``out`` it created or changed.

    Parameters
    ----------
    main : callable
        The study's command-line entry, taking its argument list.
    out : Path
        The folder the study writes into.
    argv : sequence of str
        The arguments for ``main``.

    Returns
    -------
    list of str
        The paths under ``out`` that ``main`` created or changed (``manifest.json`` left out), sorted.
    """
    out = Path(out)
    before = _snapshot(out)
    main(list(argv))
    after = _snapshot(out)
    return sorted(p for p, sig in after.items() if before.get(p) != sig and Path(p).name != "manifest.json")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def options_argv(options: Mapping[str, Any]) -> list[str]:
    """A study's options as an argument list.

    ``{"opt_seconds": 5, "write": True, "sizes": [10, 20]}`` gives ``["--opt-seconds", "5", "--write",
    "--sizes", "10", "20"]``; ``False`` and ``None`` are left out.
    """
    argv: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, list | tuple):
            argv += [flag, *(_text(v) for v in value)]
        else:
            argv += [flag, _text(value)]
    return argv


def _seeds_text(seeds: Sequence[int]) -> str:
    s = list(seeds)
    if len(s) > 2 and s == list(range(s[0], s[0] + len(s))):
        return f"{s[0]}-{s[-1]}"
    return ",".join(str(x) for x in s)


def study_command(name: str, out: Path | str, *, quick: bool = False, seeds: Sequence[int] | None = None,
                  options: Mapping[str, Any] | None = None) -> str:
    """The ``llmopt study run`` command line that runs ``name`` with these arguments (shell-quoted);
    :func:`parse_options` and :func:`parse_seeds` read its parts back to the same values."""
    argv = ["llmopt", "study", "run", name, "--out", str(out)]
    if quick:
        argv.append("--quick")
    if seeds is not None:
        argv += ["--seeds", _seeds_text(seeds)]
    argv += options_argv(options or {})
    return shlex.join(argv)
