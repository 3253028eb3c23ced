"""The one reader of a file's write-ahead log: the frames committed since a position.

A WAL-mode database appends every changed page to ``<file>-wal`` as a frame (a 24-byte header
holding the page number and the log's salts, then the page); the frame that ends a commit
carries the database's size. A writer appends a commit's frames first and publishes them in
the wal-index (``-shm``) after: until then SQL cannot see the commit, so it is read only once
published (:func:`_published`).

A checkpoint that copied every frame lets the next writer restart the log from its start (new
salts, salt-1 + 1). After one restart the old generation's frames not read yet are still in the
file past the new ones, and are read too. When the log cannot vouch for "everything since the
position" — no log, a restart more than once or over frames not read, a truncated log, more
log than is worth reading — :class:`LogUnknown` is raised and the caller reads the table.

Two readers use it: the change feed (:mod:`.feed`, which compares each changed page with its
earlier version) and the search index's persisted :class:`Cursor` (:func:`rows_since`: the
rowids on table-leaf pages written since a saved position, a hint every answer of which is
checked against the database). Both hold every other page written to account
(:func:`.btree.accounted`): an overflow page no written leaf's row leads to, rewritten in place
by a same-length edit, names no row, and the log cannot vouch.
"""

from __future__ import annotations

import os
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .btree import Cell, accounted, is_btree, leaf_cells, leaf_rowids
from .fileheader import read_at, read_header

WAL_MAGIC = (0x377F0682, 0x377F0683)
HEADER = 32
FRAME_HEADER = 24
MAX_LOG = 64 * 1024 * 1024  # past this much new log, reading the table is as cheap


class LogUnknown(Exception):
    """The log cannot say what changed over the interval asked about."""


@dataclass(slots=True)
class Log:
    """A place in the log: its salts and sequence, its page size, the byte after the last commit
    read, and the offset of the latest frame of each page up to there (None: not indexed yet)."""

    salts: tuple[int, int]
    seq: int
    page_size: int
    offset: int
    frames: dict[int, int] | None = field(default_factory=dict)

    @property
    def frame_count(self) -> int:
        return (self.offset - HEADER) // (FRAME_HEADER + self.page_size)


@dataclass(slots=True)
class Frames:
    """What :func:`read_since` read: the place it started from (``old``) and the place now
    (``new``); each page's newest frame in ``new``'s generation (``written``) and in the old
    generation past ``old`` after a restart (``tail``); the offset after the last frame of
    ``new``'s salts (``extent``) and each page's first frame read (``first``)."""

    old: Log
    new: Log
    written: dict[int, int]
    tail: dict[int, int]
    extent: int
    first: dict[int, int]


def header(data: bytes) -> tuple[int, int, int, int] | None:
    """(page size, salt-1, salt-2, checkpoint sequence) of a log header, or None."""
    if len(data) < HEADER:
        return None
    magic, _version, page_size, seq, salt1, salt2 = struct.unpack(">IIIIII", data[:24])
    if magic not in WAL_MAGIC or page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        return None
    return page_size, salt1, salt2, seq


def read_since(path: Path | str, log: Log | None, commits: int | None = None, upto: int | None = None) -> Frames:
    """The frames of the next ``commits`` published commits (all: None) past ``log`` (None: from
    the log's first frame), none past offset ``upto``. ``log`` itself is left as it was;
    ``log.frames`` None is indexed up to its offset first (the feed's mark at open reads no
    frame)."""
    wal = f"{path}-wal"
    try:
        size = os.stat(wal).st_size
    except FileNotFoundError:
        if log is None:
            raise LogUnknown("no log: a rollback-journal file (or not one yet)") from None
        raise
    head = header(read_at(wal, HEADER, 0))
    if head is None:
        raise LogUnknown("no usable log header")
    page_size, salt1, salt2, seq = head
    salts = (salt1, salt2)
    if log is None:
        old, new = Log(salts, seq, page_size, HEADER), Log(salts, seq, page_size, HEADER)
    elif salts != log.salts:
        # Each restart adds one to salt-1 (the checkpoint sequence in the header is each writer
        # connection's own count: it can skip or repeat).
        if salt1 != (log.salts[0] + 1) & 0xFFFFFFFF or page_size != log.page_size:
            raise LogUnknown("the log restarted more than once since the last look")
        old, new = log, Log(salts, seq, page_size, HEADER)
    else:
        old = log
        if log.frames is None:
            log.frames = _scan(wal, Log(log.salts, log.seq, log.page_size, HEADER), log.offset, None)[0]
        new = Log(log.salts, log.seq, log.page_size, log.offset, dict(log.frames))
    if size - new.offset > MAX_LOG or size < new.offset:
        raise LogUnknown("the log shrank, or grew past what is worth reading")
    published = min(size, _published(path, page_size, salts, size), size if upto is None else upto)
    written, end, extent, first = _scan(wal, new, published, commits)
    tail: dict[int, int] = {}
    if old.salts != salts:
        if published < size:  # frames written but not published may overwrite old ones too
            extent = max(extent, _scan(wal, new, size, None)[2])
        if extent > old.offset:
            raise LogUnknown("the restarted log overwrote frames not read yet")
        if size < old.offset or size == extent == old.offset:
            raise LogUnknown("the log was truncated with frames not read yet")
        if commits is None:
            tail = _scan(wal, old, size, None)[0]
        elif read_at(wal, FRAME_HEADER, old.offset)[8:16] == struct.pack(">II", *old.salts):
            raise LogUnknown("our commit is not where it should be")
    new.frames.update(written)
    new.offset = end
    return Frames(old, new, written, tail, extent, first)


def published_place(path: Path | str) -> Log | None:
    """The log's place at its last published commit, from the wal-index header alone (``-shm``:
    the last commit's frame and the log's salts), reading no frame — cheap enough for every
    open. Its ``frames`` are not indexed (None). None: an empty log, no frame written yet.
    :class:`LogUnknown` when the header cannot tell (no ``-shm`` or log yet, a writer updating
    it, a restart not published yet)."""
    try:
        index = read_header(f"{path}-shm", 96)
        log_head = read_at(f"{path}-wal", HEADER, 0)
    except OSError:
        raise LogUnknown("no wal-index or log yet") from None
    if len(index) < 96 or index[:48] != index[48:] or index[12] != 1:
        raise LogUnknown("no wal-index yet, or a writer is updating it")
    frames = int.from_bytes(index[16:20], sys.byteorder)
    head = header(log_head)
    if head is None:
        if frames or log_head:
            raise LogUnknown("no usable log header")
        return None
    page_size = int.from_bytes(index[14:16], sys.byteorder)
    page_size = 65536 if page_size == 1 else page_size
    salts = struct.unpack(">II", index[32:40])
    if page_size != head[0] or salts != head[1:3]:
        raise LogUnknown("the wal-index is of another log")
    return Log(salts, head[3], page_size, HEADER + frames * (FRAME_HEADER + page_size), None)


def database_header(path: Path | str, log: Log) -> bytes:
    """The database header (page 1's first 100 bytes) as of ``log``'s position: page 1's newest
    frame in the log up to there, else the database file's (which a checkpoint brought up to
    date when the log restarted)."""
    at = (log.frames or {}).get(1)
    return read_at(f"{path}-wal", 100, at + FRAME_HEADER) if at is not None else read_header(path, 100)


def _published(path: Path | str, page_size: int, salts: tuple[int, int], size: int) -> int:
    """Where the log's published commits end (the wal-index header's last frame). An index of
    the generation before is a restart not published yet: none of the log's frames are. ``size``
    when the index cannot tell (not built, being rewritten): those frames are read."""
    try:
        index = read_header(f"{path}-shm", 48 * 2)
    except OSError:
        return size
    if len(index) < 96 or index[:48] != index[48:] or index[12] != 1:
        return size
    if struct.unpack(">II", index[32:40]) != salts:
        return HEADER
    frames = int.from_bytes(index[16:20], sys.byteorder)
    return HEADER + frames * (FRAME_HEADER + page_size)


def _scan(wal: str, log: Log, size: int, commits: int | None) -> tuple[dict[int, int], int, int, dict[int, int]]:
    """From ``log``'s offset up to ``size``, frames of its salts: (page -> offset of its newest
    committed frame, the offset after the last commit read, after the last frame of these salts,
    page -> offset of its first frame)."""
    frame = FRAME_HEADER + log.page_size
    data = read_at(wal, max(0, size - log.offset), log.offset)
    written: dict[int, int] = {}
    pending: dict[int, int] = {}
    end = extent = log.offset
    done = 0
    first: dict[int, int] = {}
    for at in range(0, len(data) - frame + 1, frame):
        pgno, commit, s1, s2 = struct.unpack(">IIII", data[at:at + 16])
        if (s1, s2) != log.salts:
            break
        extent = log.offset + at + frame
        pending[pgno] = log.offset + at
        first.setdefault(pgno, log.offset + at)
        if commit:
            written.update(pending)
            pending = {}
            end = extent
            done += 1
            if commits is not None and done >= commits:
                break
    if commits is not None and done < commits:
        raise LogUnknown("our commit is not where it should be")
    return written, end, extent, first


# --------------------------------------------------------------------- a persisted cursor
@dataclass(frozen=True, slots=True)
class Cursor:
    """A place in the log that outlives the process (the search index keeps it in its sidecar):
    the log's salts, the byte after the last commit read, and its checkpoint sequence."""

    salt1: int
    salt2: int
    offset: int
    seq: int = -1

    def as_list(self) -> list[int]:
        return [self.salt1, self.salt2, self.offset, self.seq]

    @classmethod
    def from_list(cls, value: object) -> Cursor | None:
        if isinstance(value, list) and len(value) in (3, 4) and all(isinstance(v, int) for v in value):
            return cls(*value)
        return None


@dataclass(frozen=True, slots=True)
class LeafRows:
    """Rowids on the table-leaf pages written since a cursor, one tuple per page (each bounds
    where deleted rows were), and the cursor after them."""

    pages: tuple[tuple[int, ...], ...]
    cursor: Cursor

    @property
    def rowids(self) -> set[int]:
        return {r for page in self.pages for r in page}


def cursor_now(path: Path | str) -> Cursor | None:
    """The log's place at its last published commit, or None without a usable log. Taken before
    a read of the table, every commit past it is one that read may not have seen."""
    try:
        log = published_place(path)
        return None if log is None else _cursor(log)
    except (LogUnknown, OSError):
        pass
    try:
        return _cursor(read_since(path, None).new)
    except (LogUnknown, OSError):
        return None


def rows_since(path: Path | str, since: Cursor | None, whole: bool = False) -> LeafRows | None:
    """Rowids on table-leaf pages of the commits published after ``since``, and the cursor after
    them; None when the log cannot vouch for the interval, or wrote a page that neither a written
    leaf's row nor the freelist explains (an overflow page rewritten in place: its row is not
    known). ``whole`` (with ``since`` None): from the log's first frame — right when there was no
    log at the last look and the database file has not changed since. Only the pages' newest
    versions are read, so any gap the log still covers is read, however long."""
    if since is None and not whole:
        return None
    try:
        start = None
        if since is not None:
            head = header(read_at(f"{path}-wal", HEADER, 0))
            if head is None or since.offset < HEADER:
                return None
            if (since.salt1, since.salt2) != head[1:3] and since.seq < 0:
                return None  # (a cursor saved before sequences were kept cannot vouch for a restart)
            start = Log((since.salt1, since.salt2), since.seq, head[0], since.offset)
        frames = read_since(path, start)
        wal, size = f"{path}-wal", frames.new.page_size
        pages, leaves, others = [], [], set()
        kept: dict[int, bytes] = {}  # the newest versions of page 1, the table leaves and the other pages
        for pgno, at in {**frames.tail, **frames.written}.items():
            page = kept[pgno] = read_at(wal, size, at + FRAME_HEADER)
            if pgno == 1:
                continue  # the schema page (its header names the freelist)
            rowids = leaf_rowids(page, pgno)
            if rowids:
                pages.append(tuple(rowids))
                leaves.append(pgno)
            elif is_btree(page, pgno):
                del kept[pgno]  # an interior or index page: nothing to account for
            else:
                others.add(pgno)
        if others and not _explained(others, kept, leaves, database_header(path, frames.new), size):
            return None
    except (LogUnknown, OSError):
        return None
    return LeafRows(tuple(pages), _cursor(frames.new))


def _explained(others: set[int], newest: dict[int, bytes], leaves: list[int], head: bytes, page_size: int) -> bool:
    """Whether the written pages that are no b-tree page (``others``) are the overflow pages of
    rows on the written leaves, the freelist's or the pointer map's (``newest``: those pages',
    the leaves' and page 1's newest versions; ``head``: the database header now): else they
    belong to a row no leaf names (an agent's same-length edit past a long memory's leaf rewrites
    only its overflow page)."""
    usable = page_size - (head[20] if len(head) > 20 else 0)
    cells: dict[int, Cell] = {}
    for pgno in leaves:
        cells.update(leaf_cells(newest[pgno], usable, pgno, records=False) or {})
    return others <= accounted(newest, [(newest.get, cells)], head, page_size)[0]


def _cursor(log: Log) -> Cursor:
    return Cursor(log.salts[0], log.salts[1], log.offset, log.seq)


__all__ = ["FRAME_HEADER", "HEADER", "MAX_LOG", "Cursor", "LeafRows", "Log", "LogUnknown", "cursor_now",
           "database_header", "header", "published_place", "read_since", "rows_since"]
