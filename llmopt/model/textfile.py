"""Reading the text files llmopt takes as input: one rule for every reader.

Instance, schedule and suite JSON, CSV and JSON-lines traces are all read through here, so they
accept the same things: a UTF-8 byte-order mark is skipped (spreadsheet exports write one), and a
gzip-compressed file is decompressed, whatever its name (detected from its first two bytes).
Errors are the standard library's — ``OSError`` (``gzip.BadGzipFile`` included) and
``UnicodeDecodeError`` — for each reader to word with its file, row and field.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TextIO

__all__ = ["is_gzip", "open_text", "read_bytes", "read_text"]

_GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: str | Path) -> bool:
    """Whether ``path`` starts with the gzip magic bytes."""
    with open(path, "rb") as f:
        return f.read(2) == _GZIP_MAGIC


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes, decompressed if it is gzip."""
    data = Path(path).read_bytes()
    if data[:2] != _GZIP_MAGIC:
        return data
    import gzip  # only for a compressed file: every command reads its input through here

    return gzip.decompress(data)


def read_text(path: str | Path) -> str:
    """The file as text: UTF-8, a leading byte-order mark skipped, gzip decompressed."""
    return read_bytes(path).decode("utf-8-sig")


def open_text(path: str | Path) -> TextIO:
    """A text stream over the file (as :func:`read_text` reads it), for reading a header or a first line."""
    if is_gzip(path):
        import gzip

        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")
