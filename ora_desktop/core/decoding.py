"""Reading text an agent wrote with bytes that are not UTF-8, without failing.

SQLite stores whatever bytes a writer hands it; Python's ``sqlite3`` refuses to build a ``str``
from invalid UTF-8 ("Could not decode to UTF-8") and the whole read fails. Reads run with the
fast default first; only a read that met such a value runs again with :func:`tolerant`, which
shows the bad bytes as U+FFFD and marks the value as :class:`Replaced` so the record can say
which columns were affected (``Memory.undecodable``). ``check`` finds them exactly and
``check --repair`` fixes them, keeping the original bytes (:mod:`.maintenance.values`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

UNDECODABLE = "Could not decode to UTF-8"


class Replaced(str):
    """Text whose stored bytes were not valid UTF-8 (the bad bytes shown as U+FFFD)."""

    __slots__ = ()


class RawText(bytes):
    """Bytes to store as TEXT exactly as they are (an import of a row whose text was not UTF-8)."""

    __slots__ = ()


def tolerant(data: bytes) -> str:
    """A ``text_factory`` that never fails: strict UTF-8, else :class:`Replaced` text."""
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError:
        return Replaced(data.decode("utf-8", "replace"))


def is_valid_utf8(data: bytes) -> bool:
    """Whether ``data`` decodes as UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def is_undecodable_error(exc: BaseException) -> bool:
    """Whether a read failed only because a text value is not valid UTF-8."""
    return UNDECODABLE in str(exc)


@contextlib.contextmanager
def tolerant_text(conn: sqlite3.Connection) -> Iterator[None]:
    """Read with :func:`tolerant` decoding on ``conn`` for the ``with`` body."""
    previous = conn.text_factory
    conn.text_factory = tolerant
    try:
        yield
    finally:
        conn.text_factory = previous
