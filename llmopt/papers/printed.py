"""The papers' tables and prose figures printed in README.md and ``results/*/*/README.md``, computed from the
committed results files.

Every printed number guarded here sits between two markers in its Markdown file::

    <!-- generated: NAME -->
    ...the text computed by BLOCKS[NAME].render()...
    <!-- end generated -->

A marker pair on one line (inline: the text is a phrase inside a sentence or a table cell) holds the text
exactly; a marker pair on lines of their own holds the text on the lines between them. Each block is one
function of the committed results folder (``summary.csv``, ``trials.jsonl``, a study's CSV) returning the text
exactly as printed, so regenerating a results folder and then running::

    python -m llmopt.papers.printed --write

rewrites every marked block, and ``python -m llmopt.papers.printed`` (``--check``) lists each block whose
printed text disagrees with its results file (exit status 1). ``tests/papers/test_printed_numbers.py`` runs the
check. Only the marked text is generated; the prose around it (verdicts, causes) is written by hand.

The blocks live beside their paper — :mod:`llmopt.papers.jaillet.printed` (J),
:mod:`llmopt.papers.jaillet.printed_j0` (J0), :mod:`llmopt.papers.wang.printed` (W),
:mod:`llmopt.papers.chen.printed` (C), :mod:`llmopt.papers.production.printed` (production schedulers, Vidur),
:mod:`llmopt.papers.opt_printed` (hindsight OPT) and :mod:`llmopt.papers.trace_bracket_printed` (the trace-scale
bracket) — each with its own ``BLOCKS``; :data:`BLOCKS` here is their union, listed explicitly (importing a
module registers nothing), and this module keeps the markers and the command line.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from llmopt.papers import opt_printed, trace_bracket_printed
from llmopt.papers.chen import printed as chen_printed
from llmopt.papers.jaillet import printed as jaillet_printed
from llmopt.papers.jaillet import printed_j0, printed_vs_opt
from llmopt.papers.printing import ROOT, Block
from llmopt.papers.production import printed as production_printed
from llmopt.papers.production.printed import production_gain_text
from llmopt.papers.wang import printed as wang_printed

__all__ = ["BLOCKS", "ROOT", "Block", "Mismatch", "check", "main", "production_gain_text", "update"]

_MARK = re.compile(r"<!-- generated: (?P<name>[a-z0-9][a-z0-9-]*) -->(?P<body>.*?)<!-- end generated -->", re.DOTALL)


def _union(*registries: Mapping[str, Block]) -> dict[str, Block]:
    """The blocks of every module in one registry; a name defined twice is an error, not a silent override."""
    out: dict[str, Block] = {}
    for registry in registries:
        twice = sorted(set(out) & set(registry))
        if twice:
            raise ValueError(f"printed blocks defined twice: {', '.join(twice)}")
        out.update(registry)
    return out


#: every generated block, by name: the per-paper modules' registries
BLOCKS: dict[str, Block] = _union(jaillet_printed.BLOCKS, printed_vs_opt.BLOCKS, printed_j0.BLOCKS,
                                  wang_printed.BLOCKS, chen_printed.BLOCKS, opt_printed.BLOCKS,
                                  trace_bracket_printed.BLOCKS,
                                  production_printed.BLOCKS)


@dataclass(frozen=True)
class Mismatch:
    """A marked block whose printed text is not what its results give (or a block missing from its file)."""

    file: str
    line: int
    name: str
    printed: str | None
    expected: str

    def __str__(self) -> str:
        if self.printed is None:
            return f"{self.file}: block {self.name!r} not found (expected markers around it)"
        return (f"{self.file}:{self.line}: block {self.name!r} disagrees with {BLOCKS[self.name].source}:\n"
                f"  printed:  {self.printed!r}\n  expected: {self.expected!r}")


def _wrapped(body: str, text: str) -> str:
    """``text`` in the form of ``body``: on lines of its own if the markers are on lines of their own."""
    return f"\n{text}\n" if body.startswith("\n") else text


def update(path: str, text: str) -> tuple[str, list[Mismatch]]:
    """Regenerate every marked block of one file's ``text``.

    Parameters
    ----------
    path
        The file's path relative to the checkout (for messages).
    text
        Its contents.

    Returns
    -------
    tuple
        The text with every marked block regenerated, and the blocks whose printed text differed.

    Raises
    ------
    KeyError
        If a marker names a block that :data:`BLOCKS` does not define.
    """
    mismatches: list[Mismatch] = []

    def replace(m: re.Match[str]) -> str:
        name, body = m.group("name"), m.group("body")
        if name not in BLOCKS:
            line = text.count("\n", 0, m.start()) + 1
            raise KeyError(f"{path}:{line}: unknown generated block {name!r} (known: {', '.join(sorted(BLOCKS))})")
        expected = _wrapped(body, BLOCKS[name].render())
        if body != expected:
            mismatches.append(Mismatch(path, text.count("\n", 0, m.start()) + 1, name, body.strip("\n"),
                                       expected.strip("\n")))
        return f"<!-- generated: {name} -->{expected}<!-- end generated -->"

    return _MARK.sub(replace, text), mismatches


def check(root: Path = ROOT, write: bool = False) -> list[Mismatch]:
    """Compare (or rewrite) every block of :data:`BLOCKS` in every file that prints it.

    Parameters
    ----------
    root
        The checkout.
    write
        Rewrite the files whose blocks differ.

    Returns
    -------
    list of Mismatch
        The blocks that differed (before rewriting), and blocks missing from a file that should print them.
    """
    files = sorted({f for b in BLOCKS.values() for f in b.files})
    out: list[Mismatch] = []
    for rel in files:
        path = root / rel
        text = path.read_text(encoding="utf-8")
        new, mismatches = update(rel, text)
        found = {m.group("name") for m in _MARK.finditer(text)}
        out += mismatches
        out += [Mismatch(rel, 0, name, None, "") for name, b in BLOCKS.items() if rel in b.files and name not in found]
        if write and new != text:
            path.write_text(new, encoding="utf-8")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m llmopt.papers.printed [--write]``: check (or rewrite) the generated blocks; 1 if any differs."""
    ap = argparse.ArgumentParser(prog="python -m llmopt.papers.printed", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the marked blocks from the committed results")
    ap.add_argument("--check", action="store_true", help="only report the blocks that differ (the default)")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = ap.parse_args(argv)
    try:
        mismatches = check(args.root, write=args.write)
    except OSError as exc:  # its args[0] is the errno: name the file instead
        print(f"error: {exc.filename or exc}: {exc.strerror or exc} (a results file a block reads)", file=sys.stderr)
        return 2
    except (KeyError, LookupError, ValueError) as exc:
        print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    for m in mismatches:
        print(("rewrote " if args.write and m.printed is not None else "") + str(m), file=sys.stderr)
    missing = [m for m in mismatches if m.printed is None]
    if args.write:
        return 1 if missing else 0
    print(f"{len(BLOCKS)} blocks, {len(mismatches)} differ from their results", file=sys.stderr)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
