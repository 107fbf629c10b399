"""``--config FILE.toml``: a command's options from a file (``simulate``, ``solve``, ``capacity``).

The file holds top-level keys named as the command's long options without the dashes
(``cost-model = "constant"``; ``cost_model`` is read the same), and the positional argument by its
name (``file`` / ``trace``)::

    # simulate.toml
    policy = "alpha-protection:alpha=0.2"
    workers = 2
    router = "jsq"
    json = true

A repeatable option takes a list (``policy = ["mc-sf", "fcfs"]``); a relative path is read from the
config file's folder, so a config and its inputs can move together. Options given on the command
line override the file: the file's values become the command's defaults (Click's ``default_map``),
set by an eager option processed before every other. An unknown key, a value of the wrong type
or an unreadable file is one line naming the file and the key, exit 2, before any work.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import click
import typer

from llmopt.cli.common import die

__all__ = ["ConfigOption", "load_config", "read_config"]


def read_config(path: Path) -> dict[str, Any]:
    """The top-level table of the TOML file ``path``; exit 2 with one line if it cannot be read."""
    import tomllib

    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        die(f"--config {path}: no such file")
    except IsADirectoryError:
        die(f"--config {path}: is a folder; give a .toml file")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        die(f"--config {path}: not valid TOML: {exc}")
    except OSError as exc:
        die(f"--config {path}: {exc.strerror or exc}")
    return data


def _beside(config: Path, value: Any) -> Any:
    if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
        return str(config.parent / value)
    return value


def _settable(ctx: click.Context) -> dict[str, click.Parameter]:
    """Key → parameter: each option by its long name without dashes and by its Python name, each
    argument by its name; ``--config`` itself and ``--help`` are not settable."""
    keys: dict[str, click.Parameter] = {}
    for p in ctx.command.params:
        if p.name in (None, "config", "help"):
            continue
        assert p.name is not None
        keys[p.name] = p
        for opt in p.opts:
            if opt.startswith("--"):
                keys[opt[2:]] = p
    return keys


def load_config(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """Eager callback of ``--config``: check every key and value of the file, then make them the
    command's defaults (explicit flags still win)."""
    if value is None or ctx.resilient_parsing:
        return value
    data = read_config(value)
    keys = _settable(ctx)
    defaults: dict[str, Any] = {}
    for key, raw in data.items():
        p = keys.get(key) or keys.get(key.replace("-", "_"))
        if p is None:
            known = sorted(k for k in keys if "_" not in k)  # Python names repeat the dashed long names
            die(f"--config {value}: unknown key {key!r}; settable: {', '.join(known)}")
        assert p.name is not None
        if p.name in defaults:
            die(f"--config {value}: key {key!r} sets {p.name!r} a second time")
        if isinstance(raw, dict):
            die(f"--config {value}: key {key!r}: a table is not an option value")
        if p.multiple and not isinstance(raw, list):
            raw = [raw]
        if isinstance(p.type, click.Path):  # a relative path in the file is read from the file's folder
            raw = [_beside(value, v) for v in raw] if isinstance(raw, list) else _beside(value, raw)
        if not p.multiple and isinstance(raw, list):
            die(f"--config {value}: key {key!r} takes one value, not a list")
        try:
            p.type_cast_value(ctx, raw)
        except click.BadParameter as exc:
            die(f"--config {value}: key {key!r}: {exc.message}")
        defaults[p.name] = raw
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    return value


ConfigOption = Annotated[Path | None, typer.Option(
    "--config", callback=load_config, is_eager=True, show_default=False,
    help="TOML file of this command's options (keys as the long options without dashes); flags given "
         "on the command line override it.")]
