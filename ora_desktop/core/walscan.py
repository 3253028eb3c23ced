"""Which rows another process changed, read from the database's write-ahead log.

A WAL-mode database appends every changed page to ``<file>-wal`` as a frame (a 24-byte
header holding the page number, then the page). Between two refreshes of the index, the
frames appended since the last one name the pages that changed; the table-leaf pages among
them hold the rowids of every inserted or updated row, and bound where deleted rows were.
Reading a few hundred kilobytes of log beats scanning a million-row table.

This is only a hint, and every answer is checked against the database: garbage rowids cost a
lookup, never a wrong index. A writer's checkpoint restarts the log from its start (new salts,
sequence number + 1, salt-1 + 1); after one restart the frames of the old generation that we had not read
are still in the file past the new ones, and are read too. When the log cannot vouch for
"everything since last time" — no log, several restarts, a new generation that overwrote what
we had not read — :func:`read_changes` returns ``None`` and the caller scans the table.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from .btree import TABLE_LEAF, varint
from .fileheader import read_at

WAL_MAGIC = (0x377F0682, 0x377F0683)
HEADER = 32
FRAME_HEADER = 24
MAX_LOG = 64 * 1024 * 1024  # past this much new log, scanning the table is as cheap


@dataclass(frozen=True, slots=True)
class WalPosition:
    """Where we stopped reading a log: its salts, the byte after the last commit frame we
    read, and the log's checkpoint sequence number (one more each time the log restarts)."""

    salt1: int
    salt2: int
    offset: int
    seq: int = -1

    def as_list(self) -> list[int]:
        return [self.salt1, self.salt2, self.offset, self.seq]

    @classmethod
    def from_list(cls, value: object) -> WalPosition | None:
        if isinstance(value, list) and len(value) in (3, 4) and all(isinstance(v, int) for v in value):
            return cls(*value)
        return None


@dataclass(frozen=True, slots=True)
class WalChanges:
    """Rowids found on changed table-leaf pages, grouped per page, and the new position."""

    pages: tuple[tuple[int, ...], ...]
    position: WalPosition

    @property
    def rowids(self) -> set[int]:
        return {r for page in self.pages for r in page}


def _header(data: bytes) -> tuple[int, int, int, int] | None:
    """(page size, salt-1, salt-2, checkpoint sequence) of a log header, or None."""
    if len(data) < HEADER:
        return None
    magic, _version, page_size, seq, salt1, salt2 = struct.unpack(">IIIIII", data[:24])
    if magic not in WAL_MAGIC or page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        return None
    return page_size, salt1, salt2, seq


def current_position(db_path: str) -> WalPosition | None:
    """The log's salts and the end of its last complete commit, or None without a usable log."""
    try:
        with _open_log(db_path) as (handle, page_size, salt1, salt2, seq, size):
            if handle is None:
                return None
            end = _last_commit(handle, HEADER, size, page_size, salt1, salt2)[0]
    except OSError:
        return None
    return WalPosition(salt1, salt2, end, seq)


@contextlib.contextmanager
def _open_log(db_path: str) -> Iterator[tuple]:
    """(log path, page size, salt-1, salt-2, sequence, file size) of the log; path None when
    the log's header is not usable. The log is read through this process's kept-open
    descriptor (:mod:`..fileheader`): closing one of a database's files drops SQLite's locks."""
    wal = db_path + "-wal"
    size = os.stat(wal).st_size
    head = _header(read_at(wal, HEADER, 0))
    if head is None:
        yield None, 0, 0, 0, 0, 0
    else:
        yield (wal, *head, size)


def _last_commit(wal: str, start: int, size: int, page_size: int, salt1: int, salt2: int
                 ) -> tuple[int, list[tuple[int, bytes]], int]:
    """From ``start``: (offset after the last commit frame, [(page number, page)] up to it,
    offset after the last frame of these salts, committed or not)."""
    frame = FRAME_HEADER + page_size
    data = read_at(wal, max(0, size - start), start)
    pending: list[tuple[int, bytes]] = []
    committed: list[tuple[int, bytes]] = []
    end = extent = start
    for at in range(0, len(data) - frame + 1, frame):
        pgno, commit, s1, s2 = struct.unpack(">IIII", data[at:at + 16])
        if (s1, s2) != (salt1, salt2):
            break
        extent = start + at + frame
        pending.append((pgno, data[at + FRAME_HEADER:at + frame]))
        if commit:
            committed.extend(pending)
            pending = []
            end = extent
    return end, committed, extent


def read_changes(db_path: str, since: WalPosition | None, whole: bool = False) -> WalChanges | None:
    """Rowids on table-leaf pages written to the log after ``since``; None when the log
    cannot tell (no log, restarted, shorter, or too much of it).

    ``whole`` (with ``since`` None): read the whole log — right when there was no log at the
    last look and the database file has not changed since (no checkpoint took anything away).
    """
    if since is None and not whole:
        return None
    try:
        with _open_log(db_path) as (handle, page_size, salt1, salt2, seq, size):
            if handle is None:
                return None
            if since is None:
                since = WalPosition(salt1, salt2, HEADER, seq)
            if size > MAX_LOG or since.offset < HEADER:
                return None
            if (salt1, salt2) == (since.salt1, since.salt2):
                if size < since.offset:
                    return None
                end, frames, _ = _last_commit(handle, since.offset, size, page_size, salt1, salt2)
            elif since.seq >= 0 and salt1 == (since.salt1 + 1) & 0xFFFFFFFF:
                # (Each restart adds one to salt-1; the header's checkpoint sequence is each
                # writer connection's own count, which can skip or repeat.)
                # Restarted once: the new generation writes from the start of the file. If it has
                # not reached where we stopped, the rest of the old generation is still there.
                end, frames, extent = _last_commit(handle, HEADER, size, page_size, salt1, salt2)
                # Overwritten, or truncated (then the file ends where the new frames end).
                if extent > since.offset or size < since.offset or (size == extent == since.offset):
                    return None
                _, old_frames, _ = _last_commit(handle, since.offset, size, page_size, since.salt1, since.salt2)
                frames = old_frames + frames
            else:
                return None
    except OSError:
        return None
    latest: dict[int, bytes] = {}
    for pgno, page in frames:
        latest[pgno] = page  # the newest version of each page
    pages = []
    for pgno, page in latest.items():
        if pgno == 1:
            continue  # the schema page
        rowids = leaf_rowids(page)
        if rowids:
            pages.append(tuple(rowids))
    return WalChanges(tuple(pages), WalPosition(salt1, salt2, end, seq))


def leaf_rowids(page: bytes) -> list[int]:
    """Rowids of the cells of a table-leaf page (empty for any other page or garbage)."""
    if not page or page[0] != TABLE_LEAF or len(page) < 8:
        return []
    cells = int.from_bytes(page[3:5], "big")
    if cells * 2 + 8 > len(page):
        return []
    out = []
    try:
        for i in range(cells):
            pointer = int.from_bytes(page[8 + 2 * i:10 + 2 * i], "big")
            if pointer < 8 or pointer >= len(page):
                return []
            _, at = varint(page, pointer)
            rowid, _ = varint(page, at)
            if rowid >= 1 << 63:
                rowid -= 1 << 64
            out.append(rowid)
    except IndexError:
        return []
    return out
