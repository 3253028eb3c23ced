"""The supersession edges of one version of a file, held in memory so chains are walked without a scan.

``superseded_by`` has no index, and a file we did not create is never given one (DESIGN.md,
contract 2): finding what supersedes into a memory means reading every row. :class:`EdgeIndex`
is built by one such scan and answers "which rows supersede into these ids?" by lookups. Each
edge is three integers (24 bytes), not two Python strings: the hash of the newer id's bytes
(sorted), the rowid of the older memory and the hash of the older memory's own id. Hashes can
collide, so a walk only proposes rowids: the caller checks them against the rows themselves.

:func:`file_version` says when the index is out of date: SQLite's own record of commits (the
wal-index header in ``-shm``, or the file header's change counter), which every commit moves,
this store's on any thread and another program's alike, and the identity of the files, which a
restore that replaces the file changes. It is read before the scan, so the scan sees that
version or a newer one, never an older one.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .fileheader import read_header

if TYPE_CHECKING:
    import numpy as np

#: One scan of the file: every edge's older rowid (16 hex digits each), the newer id's bytes and
#: the older id's bytes (hex, comma-separated). SQLite joins them in C, without the GIL; blobs
#: and text are kept apart by the check the caller runs on the rows.
EDGES_SQL = (
    "SELECT count(*), group_concat(printf('%016x', rowid), ''), group_concat(hex(superseded_by), ','), "
    "group_concat(hex(id), ',') FROM memories WHERE superseded_by IS NOT NULL AND superseded_by != ''"
)

#: Values hashed (or rowids decoded) between two yields of the GIL, about a millisecond of work.
SLICE = 65536


def id_key(hex_bytes: str) -> int:
    """The key of an id in the index, from SQLite's ``hex(id)`` (its stored bytes)."""
    return hash(hex_bytes)


class EdgeIndex:
    """Supersession edges by newer id (see the module docstring)."""

    def __init__(self, newer: np.ndarray, older_rowid: np.ndarray, older: np.ndarray) -> None:
        self.newer, self.older_rowid, self.older = newer, older_rowid, older

    def __len__(self) -> int:
        return len(self.newer)

    @classmethod
    def from_scan(cls, row: tuple[Any, ...]) -> EdgeIndex | None:
        """The index from the row of :data:`EDGES_SQL`; ``None`` if its parts do not line up."""
        import numpy as np

        count, rowids, newer, older = row
        if not count:
            empty = np.empty(0, dtype=np.int64)
            return cls(empty, empty, empty)
        newer_keys, older_keys = _keys(newer, count), _keys(older, count)
        if newer_keys is None or older_keys is None or len(rowids or "") != 16 * count:
            return None
        older_rowid = np.empty(count, dtype=np.int64)
        for start in range(0, count, SLICE):
            stop = min(count, start + SLICE)
            older_rowid[start:stop] = np.frombuffer(bytes.fromhex(rowids[16 * start:16 * stop]), dtype=">i8")
            time.sleep(0)
        order = np.argsort(newer_keys, kind="stable")
        return cls(newer_keys[order], older_rowid[order], older_keys[order])

    def walk_back(self, head_key: int, head_rowid: int, limit: int) -> list[int] | None:
        """Rowids of the rows that may lead to the head, level by level as :meth:`Store.chain`
        walks them: a level is read while fewer than ``limit`` memories (the head included) were
        found. Every proposed edge is returned, also one into a row already found (a cycle).
        ``None`` when two rows found have ids of the same hash: the walk cannot be trusted."""
        import numpy as np

        proposed: dict[int, None] = {}
        seen, keys = {head_rowid}, {head_key}
        frontier = [head_key]
        while frontier and len(seen) < limit:
            wanted = np.array(frontier, dtype=np.int64)
            lows = np.searchsorted(self.newer, wanted, side="left").tolist()
            highs = np.searchsorted(self.newer, wanted, side="right").tolist()
            level: list[int] = []
            for low, high in zip(lows, highs, strict=True):
                for rowid, key in zip(self.older_rowid[low:high].tolist(), self.older[low:high].tolist(), strict=True):
                    proposed[rowid] = None
                    if rowid in seen:
                        continue
                    if key in keys:
                        return None
                    seen.add(rowid)
                    keys.add(key)
                    level.append(key)
            frontier = level
        return list(proposed)


def _keys(joined: str | None, count: int) -> np.ndarray | None:
    """Hashes of ``count`` comma-separated hex values, a slice at a time (``None``: not ``count``)."""
    import numpy as np

    parts = (joined or "").split(",")
    if len(parts) != count:
        return None
    keys = np.empty(count, dtype=np.int64)
    for start in range(0, count, SLICE):
        stop = min(count, start + SLICE)
        keys[start:stop] = np.fromiter(map(id_key, parts[start:stop]), dtype=np.int64, count=stop - start)
        time.sleep(0)
    return keys


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

    def get(self, version: tuple, scan: Callable[[], tuple[Any, ...]]) -> EdgeIndex | None:
        """The index for ``version``, scanning the file (once, whichever threads ask) when the
        one held is for another version. ``None`` when the scan's parts did not line up."""
        with self._lock:
            if self._version != version or self._index is None:
                self._version, self._index = None, None
                index = EdgeIndex.from_scan(scan())
                if index is not None:
                    self._version, self._index = version, index
                return index
            return self._index
