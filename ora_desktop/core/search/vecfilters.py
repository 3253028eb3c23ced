"""The columns field filters test, kept beside the vectors: filters applied inside the scan.

A semantic search with a filter (``type:preference``, ``importance:>=7``, ``is:expired``, the
default hiding of superseded memories) used to check the best cosines against SQL, and when a
filter was rare among them, list every memory passing it (a fifth of a million ids at a million
memories). :class:`FilterColumns` holds, per vector row, the memory's type, importance, health,
expiry (as a Julian day) and whether it is superseded, read in one statement, and turns those
filters into a boolean mask over the rows, so the scan picks the best passing rows at once.

While a store of this process holds the file open, the columns follow its change feed
(:mod:`..feedreaders`, a reader of its own that hears our commits and other programs'): only the
rows of the memories a commit named, and the vector rows that now hold another memory, are read
again; a reload, a new store or more than :data:`MAX_UPDATE` rows read them all. Without an open
store they are read again whenever the agent's file changed at all (its and its write-ahead
log's stats: a raw write that changes a type without touching ``updated_at`` is seen) or the
vectors changed. Queries with any other filter (tags, sync, times, dirty, either-or, excluded
words) and files whose numbers are not stored as numbers keep the SQL path (:mod:`.semantic`).
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import feedreaders
from ..records import Change
from .index import get_index
from .sidecar import file_stats, settled

if TYPE_CHECKING:
    from pathlib import Path

    from .query import ParsedQuery
    from .vectors import VectorIndex

CHUNK = 65536
#: Past this many rows to read again, one statement over every row is as quick.
MAX_UPDATE = 20000
_OPS = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal, "=": np.equal}


def supported(parsed: ParsedQuery) -> bool:
    """True when every filter of ``parsed`` is one the kept columns can test."""
    return not (parsed.sync or parsed.not_sync or parsed.tags or parsed.not_tags or parsed.dirty is not None
                or parsed.times or parsed.any_of or parsed.excluded)


class FilterColumns:
    """The filter columns of one file, aligned with its vector rows (see the module doc)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._key: tuple | None = None
        #: The file's change feed as of the last read, the vectors' generation and their rows then.
        self._reader: feedreaders.FeedReader | None = None
        self._generation: int | None = None
        self._mids: list[str | None] = []
        self.types: dict[str, int] = {}
        self.type_code = np.zeros(0, dtype=np.int32)
        self.importance = np.zeros(0)
        self.health = np.zeros(0)
        self.expires = np.zeros(0)
        self.superseded = np.zeros(0, dtype=bool)
        self.no_expiry = np.zeros(0, dtype=bool)
        #: False when some row stores importance or health as text or bytes (SQL compares those
        #: otherwise than numbers: such a file keeps the SQL path).
        self.numeric = True

    def mask(self, path: Path, vectors: VectorIndex, parsed: ParsedQuery) -> np.ndarray | None:
        """Which vector rows pass ``parsed``'s filters (None: use SQL; see :func:`supported`)."""
        if not supported(parsed):
            return None
        with self.lock:
            self._fresh(path, vectors)
            if not self.numeric and (parsed.importance or parsed.health):
                return None
            keep = np.ones(len(self.type_code), dtype=bool)
            if parsed.types:
                keep &= np.isin(self.type_code, [self.types[t] for t in parsed.types if t in self.types])
            if parsed.not_types:
                keep &= ~np.isin(self.type_code, [self.types[t] for t in parsed.not_types if t in self.types])
            for values, bounds in ((self.importance, parsed.importance), (self.health, parsed.health)):
                for op, value in bounds:  # NaN (NULL) compares false, as in SQL
                    keep &= _OPS[op](values, float(value))
            if parsed.expired is not None:
                now = time.time() / 86400.0 + 2440587.5
                # As SQL: NULL never expired; a value julianday() cannot read is neither.
                keep &= (self.expires < now) if parsed.expired else (self.no_expiry | (self.expires >= now))
            if parsed.superseded == "hide":
                keep &= ~self.superseded
            elif parsed.superseded == "only":
                keep &= self.superseded
            return keep

    def _fresh(self, path: Path, vectors: VectorIndex) -> None:
        stats = file_stats(path)
        with vectors.lock:
            mids, row_of = vectors.mids, vectors.row_of  # (a change bumps the generation: read again)
            generation = vectors.generation
        log = feedreaders.log_for(path)
        if log is not None and self._reader is not None and self._reader.log is log:
            if self._follow(path, mids, row_of, generation):
                return
        elif log is None and (repr(stats), generation, len(mids)) == self._key:
            return
        # The reader first: a commit landing while the rows are read is heard at the next look.
        self._reader = log.reader(own=True) if log is not None else None
        self._read(path, mids, row_of)
        self._generation, self._mids = generation, list(mids)
        # Only a settled file's stats may vouch (a commit can reach -wal before -shm publishes it).
        self._key = (repr(stats), generation, len(mids)) if settled(stats) else None

    def _follow(self, path: Path, mids: list[str | None], row_of: dict[str, int], generation: int | None) -> bool:
        """Bring the columns up to date from the feed's ids; False when they must be read whole."""
        change = self._reader.poll() if self._reader is not None else Change.reload()
        if change is not None and not change:
            return False  # a reload: which memories changed is not known
        rows = {row_of[key] for key in (change.ids if change else ()) if key in row_of}
        if generation != self._generation:  # vector rows that hold another memory now (or none)
            old = self._mids
            rows.update(i for i, mid in enumerate(mids) if i >= len(old) or old[i] != mid)
        if len(rows) > MAX_UPDATE:
            return False
        if rows:
            self._update(path, mids, sorted(rows))
        self._generation, self._mids = generation, list(mids)
        return True

    def _select(self, path: Path) -> tuple[Any, str, str]:
        """(the index, the statement reading every memory's columns, the check for numbers
        stored as text), over the columns the file has."""
        index = get_index(path)
        have = set(index.columns)

        def col(name: str) -> str:
            return name if name in have else "NULL"

        expires, superseded = col("expires_at"), col("superseded_by")
        sql = (f"SELECT id, {col('type')}, {col('importance')}, {col('health_score')}, julianday({expires}), "
               f"{expires} IS NULL, coalesce({superseded}, '') != '' FROM src.memories")
        numbers = ("integer", "real", "null")
        odd = (f"(typeof({col('importance')}) NOT IN {numbers} OR typeof({col('health_score')}) NOT IN {numbers})")
        return index, sql, odd

    def _read(self, path: Path, mids: list[str | None], row_of: dict[str, int]) -> None:
        index, sql, odd = self._select(path)
        size = len(mids)
        self.types, self.type_code = {}, np.full(size, -1, dtype=np.int32)
        self.importance, self.health, self.expires = (np.full(size, math.nan) for _ in range(3))
        self.superseded, self.no_expiry = np.zeros(size, dtype=bool), np.ones(size, dtype=bool)
        with index.lock:
            conn = index.connection()
            self.numeric = conn.execute(f"SELECT 1 FROM src.memories WHERE {odd} LIMIT 1").fetchone() is None
            cursor = conn.execute(sql)
            while batch := cursor.fetchmany(CHUNK):  # in chunks: a million rows at once held ~400 MB
                self._fill(batch, row_of, size)

    def _update(self, path: Path, mids: list[str | None], rows: list[int]) -> None:
        """Read the columns of the memories at vector ``rows`` again (the rest are as they were)."""
        index, sql, odd = self._select(path)
        size = len(mids)
        if size > len(self.type_code):  # new vector rows: room for them, empty until read
            extra = size - len(self.type_code)
            self.type_code = np.concatenate([self.type_code, np.full(extra, -1, dtype=np.int32)])
            self.importance, self.health, self.expires = (
                np.concatenate([values, np.full(extra, math.nan)])
                for values in (self.importance, self.health, self.expires))
            self.superseded = np.concatenate([self.superseded, np.zeros(extra, dtype=bool)])
            self.no_expiry = np.concatenate([self.no_expiry, np.ones(extra, dtype=bool)])
        at = np.asarray(rows, dtype=np.int64)
        self.type_code[at], self.superseded[at], self.no_expiry[at] = -1, False, True
        self.importance[at] = self.health[at] = self.expires[at] = math.nan  # (a memory gone since)
        row_of = {mids[row]: row for row in rows if mids[row] is not None}
        keys = list(row_of)
        with index.lock:
            conn = index.connection()
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                where = f" WHERE id IN ({','.join('?' * len(chunk))})"
                if conn.execute(f"SELECT 1 FROM src.memories{where} AND {odd} LIMIT 1", chunk).fetchone():
                    self.numeric = False
                self._fill(conn.execute(sql + where, chunk).fetchall(), row_of, size)

    def _fill(self, batch: list[tuple], row_of: dict[str, int], size: int) -> None:
        """Set the columns of the vector rows of the memories in ``batch`` (rows of the statement)."""
        found = [(row, r) for r in batch if (row := row_of.get(r[0])) is not None and row < size]
        if not found:
            return
        at = np.fromiter((i for i, _ in found), dtype=np.int64, count=len(found))
        types = self.types
        self.type_code[at] = [-1 if r[1] is None else types.setdefault(str(r[1]), len(types)) for _, r in found]
        if self.numeric:
            self.importance[at] = [_number(r[2]) for _, r in found]
            self.health[at] = [_number(r[3]) for _, r in found]
        self.expires[at] = [_number(r[4]) for _, r in found]
        self.no_expiry[at] = [bool(r[5]) for _, r in found]
        self.superseded[at] = [bool(r[6]) for _, r in found]


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


_columns: dict[tuple[str, str], FilterColumns] = {}
_columns_lock = threading.Lock()


def filter_columns(vectors: VectorIndex) -> FilterColumns:
    """The one :class:`FilterColumns` of these vectors' file and model in this process."""
    key = (str(vectors.sidecar), f"{vectors.provider.name}/{vectors.provider.model}")
    with _columns_lock:
        found = _columns.get(key)
        if found is None:
            found = _columns[key] = FilterColumns()
        return found
