"""``llmopt generate``: write the instance a registered workload makes for a seed — a thin parse → API
call (:func:`llmopt.api.make_instance`, which checks the workload, the seed and the parameters) → write.

The same instances the suites run (``llmopt.workloads.WORKLOADS``), as files for ``solve``,
``simulate`` and ``check``: ``llmopt generate jaillet-am1 --seed 3 -o am1_s3.json``, with the
workload's parameters as ``--param key=value`` (values read as JSON: ``--param n_range=[20,20]``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from llmopt.cli.common import ForceFlag, check_output_file, die, die_bad

__all__ = ["generate_cmd"]


def _params(items: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or not key:
            die(f"--param {item!r}: expected key=value (the value as JSON, e.g. n_range=[20,20])")
        if key in params:
            die(f"--param {key!r} is given twice")
        try:
            params[key] = json.loads(raw)
        except ValueError as exc:
            if raw.strip()[:1] in _JSON_STARTS:  # meant as JSON (a list, an object, a string): say why it is not
                die(f"--param {item!r}: the value {raw!r} is not valid JSON ({str(exc).split(':')[0]}); "
                    "give e.g. n_range=[20,20]")
            params[key] = raw  # a bare word is a string: --param trace=file.csv
    return params


#: First characters of a value meant as JSON rather than as a bare string (a file name such as 2023.csv
#: stays a string; a workload's parameter types catch a bare word where a number belongs).
_JSON_STARTS = tuple('[{"')


def generate_cmd(
    workload: Annotated[str, typer.Argument(help="Registered workload (`llmopt stages` lists them).",
                                            show_default=False)],
    seed: Annotated[int, typer.Option("--seed", help="Seed of the instance.", show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="Instance JSON file to write.",
                                         show_default=False)],
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="A workload parameter as key=value (JSON value); repeat for several.",
        show_default=False)] = None,
    force: ForceFlag = False,
) -> None:
    """Write the instance a registered workload makes for a seed (the instances the suites run)."""
    from llmopt.api import BadInput, make_instance
    from llmopt.api.instances import check_workload_arguments
    from llmopt.model.instance import Instance, save_instance
    from llmopt.model.timed_instance import save_timed_instance

    try:
        check_workload_arguments(workload, seed)
        params = _params(param or [])
        check_workload_arguments(workload, seed, params)
        check_output_file("-o", output, force=force)
        inst = make_instance(workload, seed, **params)
    except BadInput as exc:
        die_bad(exc)
    try:
        if isinstance(inst, Instance):
            save_instance(inst, output)
            clock = "discrete"
        else:
            save_timed_instance(inst, output)
            clock = "continuous-time (arrivals in seconds)"
    except OSError as exc:
        die(f"{output}: cannot write: {exc.strerror or exc}")
    arrivals = [r.arrival for r in inst.requests]
    span = f", arrivals {min(arrivals):g} … {max(arrivals):g}" if arrivals else ""
    typer.echo(f"wrote {output}: {workload} seed {seed}{f' {params}' if params else ''}: {clock} instance, "
               f"n = {inst.n:,}, M = {inst.M:,}{span}")
