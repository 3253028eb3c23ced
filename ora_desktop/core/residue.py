"""Byte needles and the byte scan that proves a text is gone from a file.

A purge (:mod:`.scrub`, :mod:`.operations.purge`) and each sidecar's scrubber look for the
``needles`` of the purged texts in every byte of a file, ``-wal`` and ``-journal`` included.
This module holds only that scan, so the sidecars can use it without importing the purge.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .fileheader import chunks

NEEDLE_MAX = 64  # bytes of a text to look for
NEEDLE_MIN = 8  # shorter texts are too common to prove anything by a byte scan


def needle(text: str | None) -> bytes | None:
    """The bytes to look for to find ``text`` in a file: its longest run of characters that JSON
    and SQL store verbatim (no quote, backslash or control character), at most 64 bytes, or
    ``None`` when that is too short to be telling."""
    if not text:
        return None
    best, run = "", []
    for char in [*text, "\x00"]:
        if char in '"\\' or ord(char) < 0x20:
            if len(run) > len(best):
                best = "".join(run)
            run = []
        else:
            run.append(char)
    data = best.encode("utf-8", "replace")[:NEEDLE_MAX]
    while data:  # never end in the middle of a character
        try:
            data.decode("utf-8")
            break
        except UnicodeDecodeError:
            data = data[:-1]
    return data if len(data) >= NEEDLE_MIN else None


def needles(texts: Iterable[str | None], lower: bool = True) -> list[bytes]:
    """Distinct needles of ``texts`` (with their lower-case form, as a full-text index keeps
    words, unless ``lower`` is false)."""
    out: dict[bytes, None] = {}
    for text in texts:
        found = needle(text)
        if found is not None:
            out[found] = None
            if lower:
                out[found.lower()] = None
    return list(out)


def file_holds(path: Path, wanted: list[bytes]) -> bool:
    """Whether any of ``wanted`` occurs anywhere in the file's bytes (a missing file holds none).

    Read through this process's kept-open descriptor (:mod:`.fileheader`): the file may be a
    database this process has connections to, and closing a descriptor of it would drop their locks.
    """
    if not wanted:
        return False
    try:
        overlap = max(len(w) for w in wanted) - 1
        return any(data.find(w) != -1 for data in chunks(path, overlap=overlap) for w in wanted)
    except FileNotFoundError:
        return False


def family(path: Path) -> list[Path]:
    """A database file and the ``-wal``/``-journal`` beside it that exist."""
    return [p for p in (path, Path(f"{path}-wal"), Path(f"{path}-journal")) if p.exists()]


def find_residue(paths: Iterable[Path], wanted: list[bytes]) -> list[Path]:
    """The files (each with its ``-wal``/``-journal``) in which any of ``wanted`` occurs."""
    return [p for path in paths for p in family(Path(path)) if file_holds(p, wanted)]
