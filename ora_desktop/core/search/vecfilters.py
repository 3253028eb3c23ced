"""The columns field filters test, kept beside the vectors: filters applied inside the scan.

A semantic search with a filter (``type:preference``, ``importance:>=7``, ``is:expired``, the
default hiding of superseded memories) used to check the best cosines against SQL, and when a
filter was rare among them, list every memory passing it (a fifth of a million ids at a million
memories). :class:`FilterColumns` holds, per vector row, the memory's type, importance, health,
expiry (as a Julian day) and whether it is superseded, read in one statement, and turns those
filters into a boolean mask over the rows, so the scan picks the best passing rows at once.

The columns are read again whenever the agent's file changed at all (its and its write-ahead
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

from .index import get_index
from .sidecar import file_stats, settled

if TYPE_CHECKING:
    from pathlib import Path

    from .query import ParsedQuery
    from .vectors import VectorIndex

CHUNK = 65536
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
        key = (repr(stats), generation, len(mids))
        if key == self._key:
            return
        self._read(path, mids, row_of)
        # Only a settled file's stats may vouch (a commit can reach -wal before -shm publishes it).
        self._key = key if settled(stats) else None

    def _read(self, path: Path, mids: list[str | None], row_of: dict[str, int]) -> None:
        index = get_index(path)
        have = set(index.columns)

        def col(name: str) -> str:
            return name if name in have else "NULL"

        expires, superseded = col("expires_at"), col("superseded_by")
        sql = (f"SELECT id, {col('type')}, {col('importance')}, {col('health_score')}, julianday({expires}), "
               f"{expires} IS NULL, coalesce({superseded}, '') != '' FROM src.memories")
        numbers = ("integer", "real", "null")
        odd = (f"SELECT 1 FROM src.memories WHERE typeof({col('importance')}) NOT IN {numbers} "
               f"OR typeof({col('health_score')}) NOT IN {numbers} LIMIT 1")
        size = len(mids)
        code = np.full(size, -1, dtype=np.int32)
        importance, health, expires = np.full(size, math.nan), np.full(size, math.nan), np.full(size, math.nan)
        superseded, no_expiry = np.zeros(size, dtype=bool), np.ones(size, dtype=bool)
        types: dict[str, int] = {}
        with index.lock:
            conn = index.connection()
            self.numeric = conn.execute(odd).fetchone() is None
            cursor = conn.execute(sql)
            while batch := cursor.fetchmany(CHUNK):  # in chunks: a million rows at once held ~400 MB
                found = [(row, r) for r in batch if (row := row_of.get(r[0])) is not None and row < size]
                if not found:
                    continue
                at = np.fromiter((i for i, _ in found), dtype=np.int64, count=len(found))
                code[at] = [-1 if r[1] is None else types.setdefault(str(r[1]), len(types)) for _, r in found]
                if self.numeric:
                    importance[at] = [_number(r[2]) for _, r in found]
                    health[at] = [_number(r[3]) for _, r in found]
                expires[at] = [_number(r[4]) for _, r in found]
                no_expiry[at] = [bool(r[5]) for _, r in found]
                superseded[at] = [bool(r[6]) for _, r in found]
        self.types, self.type_code = types, code
        self.importance, self.health, self.expires = importance, health, expires
        self.superseded, self.no_expiry = superseded, no_expiry


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
