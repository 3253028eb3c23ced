"""Forgetting in derived data: every sidecar that copies memory text plugs in here.

A purge removes memories from the agent's file, then calls :func:`forget` with the file, the
purged ids and byte needles of their texts. ``forget`` runs each *scrubber* — a
``Scrubber(db_path, ids, needles) -> Path | None`` that removes those ids from one sidecar so that
none of their text is left in any byte of its files (rows, free pages, ``-wal``; ``needles``, from
:func:`.residue.needles`, let it check with :func:`.residue.find_residue`), and returns the sidecar file it scrubbed
(``None`` when the file has none). The full-text index and the vector index are built in;
another sidecar adds its own with :func:`register`. :func:`find_residue` is the byte scan purges
use to check the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from .residue import family, file_holds, find_residue, needle, needles

__all__ = ["Scrubber", "family", "file_holds", "find_residue", "forget", "needle", "needles", "register",
           "scrubbers"]  # the byte scan lives in .residue; purge and its tests reach it from here

Scrubber = Callable[[Path, frozenset[str], list[bytes]], "Path | None"]
_registered: list[Scrubber] = []
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
