"""Reading the text files llmopt takes as input: one rule for every reader.

Instance, schedule and suite JSON, CSV and JSON-lines traces are all read through here, so they
accept the same things: a UTF-8 byte-order mark is skipped (spreadsheet exports write one), and a
gzip-compressed file is decompressed, whatever its name (detected from its first two bytes).
Errors are ``OSError`` and ``UnicodeDecodeError``, for each reader to word with its file, row and
field: a corrupt or truncated gzip file, which the standard library reports as ``EOFError`` or
``zlib.error`` (neither an ``OSError``; Click turns an ``EOFError`` into a bare "Aborted."), is
raised here as :class:`CorruptGzipError`, an ``OSError``, so every reader words it as it words an
unreadable file.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import gzip

__all__ = ["CorruptGzipError", "is_gzip", "open_text", "read_bytes", "read_text"]

_GZIP_MAGIC = b"\x1f\x8b"


class CorruptGzipError(OSError):
    """A gzip file that cannot be decompressed (truncated, or its data corrupt)."""


def _corrupt(exc: BaseException) -> CorruptGzipError:
    detail = str(exc).strip() or type(exc).__name__
    return CorruptGzipError(f"corrupt or truncated gzip file ({detail})")


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
    import zlib

    try:
        return gzip.decompress(data)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise _corrupt(exc) from None


def read_text(path: str | Path) -> str:
    """The file as text: UTF-8, a leading byte-order mark skipped, gzip decompressed."""
    return read_bytes(path).decode("utf-8-sig")


def open_text(path: str | Path) -> TextIO:
    """A text stream over the file (as :func:`read_text` reads it), for reading a header or a first line."""
    if is_gzip(path):
        return io.TextIOWrapper(_checked_gzip(path), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _checked_gzip(path: str | Path) -> gzip.GzipFile:
    """``gzip.open(path, "rb")`` whose reads raise :class:`CorruptGzipError` for a corrupt or truncated file."""
    import gzip
    import zlib

    bad = (EOFError, zlib.error, gzip.BadGzipFile)

    class _Checked(gzip.GzipFile):
        def read(self, size: int | None = -1) -> bytes:
            try:
                return super().read(size)
            except bad as exc:
                raise _corrupt(exc) from None

        def read1(self, size: int = -1) -> bytes:
            try:
                return super().read1(size)
            except bad as exc:
                raise _corrupt(exc) from None

        def peek(self, n: int) -> bytes:
            try:
                return super().peek(n)
            except bad as exc:
                raise _corrupt(exc) from None

    return _Checked(path, "rb")
