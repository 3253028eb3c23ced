"""Forgetting in derived data: every sidecar that copies memory text plugs in here.

A purge removes memories from the agent's file, then calls :func:`forget` with the file, the
purged ids and byte needles of their texts. ``forget`` runs each *scrubber* — a
``Scrubber(db_path, ids, needles) -> Path | None`` that removes those ids from one sidecar so that
none of their text is left in any byte of its files (rows, free pages, ``-wal``; ``needles``, from
:func:`needles`, let it check with :func:`find_residue`), and returns the sidecar file it scrubbed
(``None`` when the file has none). The full-text index and the vector index are built in;
another sidecar adds its own with :func:`register`. :func:`find_residue` is the byte scan purges
use to check the result.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable, Iterable
from pathlib import Path

Scrubber = Callable[[Path, frozenset[str], list[bytes]], "Path | None"]
_registered: list[Scrubber] = []
NEEDLE_MAX = 64  # bytes of a text to look for
NEEDLE_MIN = 8  # shorter texts are too common to prove anything by a byte scan
SCAN_LIMIT = 16  # texts a purge checks byte by byte (each costs one pass over each file)


def register(scrubber: Scrubber) -> Scrubber:
    """Add a sidecar's scrubber (idempotent); usable as a decorator."""
    if scrubber not in _registered:
        _registered.append(scrubber)
    return scrubber


def scrubbers() -> list[Scrubber]:
    """The built-in scrubbers (full-text index, vectors), then every registered one."""
    from .search.forget import scrub_fts, scrub_vectors

    return [scrub_fts, scrub_vectors, *_registered]


def forget(db_path: str | Path, ids: Iterable[str], wanted: list[bytes] | None = None) -> list[Path]:
    """Remove ``ids`` from every sidecar of ``db_path`` (``wanted``: needles of their texts to
    check for afterwards); returns the sidecar files scrubbed."""
    ids = frozenset(ids)
    if not ids:
        return []
    done = []
    for scrubber in scrubbers():
        path = scrubber(Path(db_path), ids, list(wanted or []))
        if path is not None:
            done.append(path)
    return done


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
    """Whether any of ``wanted`` occurs anywhere in the file's bytes (a missing file holds none)."""
    if not wanted:
        return False
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                return False
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return any(data.find(w) != -1 for w in wanted)
    except FileNotFoundError:
        return False


def family(path: Path) -> list[Path]:
    """A database file and the ``-wal``/``-journal`` beside it that exist."""
    return [p for p in (path, Path(f"{path}-wal"), Path(f"{path}-journal")) if p.exists()]


def find_residue(paths: Iterable[Path], wanted: list[bytes]) -> list[Path]:
    """The files (each with its ``-wal``/``-journal``) in which any of ``wanted`` occurs."""
    return [p for path in paths for p in family(Path(path)) if file_holds(p, wanted)]
