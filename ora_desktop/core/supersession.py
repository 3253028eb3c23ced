"""The supersession edges of one version of a file, held in memory so chains are walked without a scan.

``superseded_by`` has no index, and a file we did not create is never given one (DESIGN.md,
contract 2): finding what supersedes into a memory means reading every row. :class:`EdgeIndex`
is built by one such scan and answers "which rows supersede into this row?" by a binary search.
Each edge is two integers (16 bytes, in two ``array('q')``), not two Python strings: the rowids
of the newer and the older memory, the newer one found by SQLite through the primary key (the
same comparison of ids as a scan's), sorted by SQLite; Python only decodes them.

:func:`file_version` says when the index is out of date: SQLite's own record of commits (the
wal-index header in ``-shm``, or the file header's change counter), which every commit moves,
this store's on any thread and another program's alike, and the identity of the files, which a
restore that replaces the file changes. It is read before the scan, so the scan sees that
version or a newer one, never an older one. A new version keeps the index when the store's change
feed says no edge can have moved (:func:`edges_kept`: a commit to other tables, or an edit of
other columns in place — ours, or another program's in a file with a write-ahead log, whose
earlier row the feed compares).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from .fileheader import read_header
from .records import Change

#: One scan of the file: every edge as the rowids of its newer and older memories (16 hex digits
#: each), ordered by them and joined into one string by SQLite in C, without the GIL.
EDGES_SQL = """
SELECT count(*), group_concat(printf('%016x%016x', newer, older), '') FROM (
    SELECT n.rowid AS newer, o.rowid AS older FROM memories AS o CROSS JOIN memories AS n ON n.id = o.superseded_by
    WHERE o.superseded_by IS NOT NULL AND o.superseded_by != '' ORDER BY 1, 2
)
"""

#: Edges decoded between two yields of the GIL (about a millisecond of work).
SLICE = 32768


class EdgeIndex:
    """Supersession edges by newer rowid (see the module docstring)."""

    def __init__(self, newer: array, older: array) -> None:
        self.newer, self.older = newer, older  # array('q') each, sorted by (newer, older)

    def __len__(self) -> int:
        return len(self.newer)

    @classmethod
    def from_scan(cls, row: tuple[Any, ...] | None) -> EdgeIndex:
        """The index from the row of :data:`EDGES_SQL`."""
        count, joined = row or (0, None)
        pairs = array("q")
        for start in range(0, count, SLICE):
            pairs.frombytes(bytes.fromhex(joined[32 * start:32 * min(count, start + SLICE)]))
            time.sleep(0)
        if sys.byteorder == "little":  # printf wrote them big-endian (two's complement)
            pairs.byteswap()
        newer, older = pairs[0::2], pairs[1::2]
        if any(a > b for a, b in pairwise(newer)):  # SQLite keeps the subquery's order; never assume it
            ordered = sorted(zip(newer, older, strict=True))
            newer, older = array("q", (n for n, _ in ordered)), array("q", (o for _, o in ordered))
        return cls(newer, older)

    def walk_back(self, head: int, limit: int) -> dict[int, int]:
        """The edges (older rowid -> newer rowid) that lead to the row ``head``, found level by
        level as :meth:`Store.chain` walks them: a level is read while fewer than ``limit``
        memories (the head included) were found. An edge into a row already found (a cycle)
        is returned too; it is not followed."""
        edges: dict[int, int] = {}
        seen = {head}
        frontier = [head]
        while frontier and len(seen) < limit:
            level: list[int] = []
            for newer in frontier:
                for older in self.older[bisect_left(self.newer, newer):bisect_right(self.newer, newer)]:
                    edges[older] = newer
                    if older not in seen:
                        seen.add(older)
                        level.append(older)
            frontier = level
        return edges


def file_version(path: Path) -> tuple | None:
    """What changes with every commit to ``path`` by anyone, and when the file is replaced;
    ``None`` when it cannot be read (no ``-shm`` yet, a file mid-replacement)."""
    try:
        header = read_header(path, 100)
        if len(header) < 100:
            return None
        identity = _identity(path)
        if header[18] != 2:  # rollback journal: the change counter, page count and version-valid-for
            return ("journal", identity, header[24:32], header[92:96])
        shm = f"{path}-shm"
        for _attempt in range(3):
            # The wal-index header (two copies that agree when no writer is mid-update): its commit
            # counter, frame count, page count, checksums and WAL salts.
            index = read_header(shm, 96)
            if len(index) == 96 and index[:48] == index[48:] and index[12] == 1:
                return ("wal", identity, _identity(shm), index[:48])
    except OSError:
        return None
    return None


def _identity(path: str | Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


class EdgeCache:
    """The :class:`EdgeIndex` of one store for the file version it was built at."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: tuple | None = None
        self._index: EdgeIndex | None = None

    def get(self, version: tuple, scan: Callable[[], tuple[Any, ...] | None],
            kept: Callable[[], bool] | None = None) -> EdgeIndex:
        """The index for ``version``, scanning the file (once, whichever threads ask) when the
        one held is for another version, unless ``kept()`` says no edge changed since it was
        held (the file's change feed: see :func:`edges_kept`)."""
        with self._lock:
            if self._version != version or self._index is None:
                if self._index is not None and kept is not None and kept():
                    self._version = version
                    return self._index
                self._version, self._index = None, None
                self._index = EdgeIndex.from_scan(scan())
                self._version = version
            return self._index


def edges_kept(looked: bool, change: Change | None) -> bool:
    """Whether the commits the change feed reported as ``change`` (None: no memory changed; not
    a word unless it ``looked`` at the file now) leave every supersession edge as it was: only
    rows edited in place (no row added, removed or moved) in columns other than ``id`` and
    ``superseded_by``. A change whose columns are not known (a file with a rollback journal,
    whose feed names no rows; an overflow page the feed could not read) cannot say so."""
    if not looked:
        return False
    if change is None:
        return True
    if not change or change.added or change.removed or change.columns is None:
        return False
    return not change.columns & {"id", "superseded_by"}
