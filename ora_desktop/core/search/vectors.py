"""The vector sidecar of one memory file: an embedding per memory, kept beside the FTS index.

``<cache>/search/<file_key>.vec.db`` (ARCHITECTURE.md, contract 3: never in the agent's file; deleting
it loses nothing) holds:

* ``vecs(row, mid, ver, len, v)`` — one vector per memory, keyed by memory ``id``
  (``mid``); ``ver`` and ``len`` are the ``updated_at`` and text length it was embedded from,
  ``row`` its row in the in-memory matrix; ``v`` the vector quantized to int8 (:func:`quantize`);
* ``meta`` — the provider, model and dimensions (another model re-embeds everything), the
  FTS index state the vectors match, and a ``generation`` bumped by every write.

Change detection is the full-text index's (:mod:`.refresh`, :mod:`..wallog`): the FTS sidecar
is refreshed first, and when its recorded file stats differ from those these vectors were
made against, its ``docs`` are compared with ``vecs`` — new, edited (another ``updated_at``
or text length) and deleted memories are found in one pass and only those are embedded.
Embedding runs in batches, each committed on its own: a cancelled build keeps what it did and
the next refresh carries on from there.

In memory the vectors are one int8 matrix (256 bytes a memory with the bundled model: 256 MB
at a million, a quarter of float32) beside each row's inverse length (4 MB), searched exactly
by :func:`nearest`: NumKong's SIMD int8 dot product over every row, times that length — no
approximate graph, so recall is 1.0 and filters are
checked on the exact ranking; see :mod:`.semantic` and ``tests/benchmarks/bench_meaning.py``
for why (an HNSW graph took minutes to build per 100k vectors on this machine).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from .. import paths
from ..embeddings import Provider, configured_provider, default_provider
from ..extras import need
from ..private import private_lock
from .sidecar import _is_cancelled, _text, connect_sidecar, file_stats, settled

ProgressFn = Callable[[int, int], None]
VEC_VERSION = 3
#: On disk and in memory a vector is int8, scaled per vector so its largest component is 127
#: (cosine changes by 0.001 on average, 0.01 at most, measured on the bundled model).
DISK_DTYPE = np.int8
BATCH = 10000
NORM_BLOCK = 65536
#: Below twice this many rows a scan is not split over threads.
SPLIT_MIN = 65536
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS vecs (row INTEGER PRIMARY KEY, mid TEXT NOT NULL UNIQUE, ver TEXT, len INTEGER,
                                 v BLOB NOT NULL);
"""


def vector_path(db_path: str | Path) -> Path:
    """Where the vectors of ``db_path`` live: ``<cache>/search/<file_key>.vec.db``."""
    return paths.cache_dir() / "search" / f"{paths.file_key(db_path)}.vec.db"


class VectorIndex:
    """The vectors of one memory file, on disk and in memory. Thread-safe (one lock).

    Get instances with :func:`get_vectors` so a process holds one matrix per file and model.
    """

    def __init__(self, db_path: Path, provider: Provider) -> None:
        self.db_path = Path(db_path).expanduser().resolve()
        self.sidecar = vector_path(self.db_path)
        self.provider = provider
        self.lock = threading.RLock()
        self.file_lock = private_lock(str(self.sidecar) + ".lock")
        self.matrix = np.zeros((0, 0), dtype=DISK_DTYPE)
        #: 1 / the length of each row's int8 code (0 for a free row): a cosine is a dot times this.
        self.inv_norms = np.zeros(0, dtype=np.float32)
        self.mids: list[str | None] = []
        self.row_of: dict[str, int] = {}
        self._generation: int | None = None
        self._inode: int | None = None
        self._synced: tuple | None = None
        self._exists: tuple[tuple, bool] | None = None  # (the sidecar's stats, exists()) once settled

    # ------------------------------------------------------------------ the file
    def _connect(self) -> sqlite3.Connection:
        conn = connect_sidecar(self.sidecar)  # creates the file 0600 and its folders 0700
        conn.executescript(SCHEMA)
        return conn

    @staticmethod
    def _meta(conn: sqlite3.Connection) -> dict[str, Any]:
        return _decoded(conn.execute("SELECT key, value FROM meta").fetchall())

    @staticmethod
    def _set_meta(conn: sqlite3.Connection, **values: Any) -> None:
        conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                         [(k, json.dumps(v)) for k, v in values.items()])

    def _model_meta(self) -> dict[str, Any]:
        return {"version": VEC_VERSION, "provider": self.provider.name, "model": self.provider.model,
                "path": str(self.db_path)}

    def exists(self) -> bool:
        """True when a sidecar made with this provider and model holds vectors for this file.

        The answer is kept against the sidecar's stats (the window asks at every search), once
        they are older than the settle gap of :func:`.sidecar.settled`.
        """
        stats = file_stats(self.sidecar)
        if stats[0] is None:
            return False
        key = (stats, _inode(self.sidecar))
        cached = self._exists
        if cached is not None and cached[0] == key:
            return cached[1]
        found = self._read_exists()
        self._exists = (key, found) if settled(stats) else None
        return found

    def _read_exists(self) -> bool:
        try:
            conn = connect_sidecar(self.sidecar)
            try:
                meta = self._meta(conn)
            finally:
                conn.close()
        except (sqlite3.Error, ValueError):
            return False
        wanted = self._model_meta()
        return all(meta.get(k) == v for k, v in wanted.items()) and bool(meta.get("source"))

    # ------------------------------------------------------------------ bringing up to date
    def refresh(self, fts_sidecar: Path, progress: ProgressFn | None = None, cancel: object = None) -> bool:
        """Embed what the (already refreshed) FTS index holds that these vectors lack; forget
        what it no longer holds. Returns False when cancelled (what was done is kept)."""
        with self.lock:
            seen = (file_stats(self.db_path), _inode(fts_sidecar), _inode(self.sidecar))
            if seen == self._synced and self.mids:
                return True  # neither the agent's file nor either sidecar moved since the last look
            with self.file_lock:
                conn = self._connect()
                try:
                    done = self._refresh(conn, fts_sidecar, progress, cancel)
                finally:
                    conn.close()
            stats = file_stats(self.db_path)
            # Only a settled file's stats may vouch (a commit can reach -wal before -shm publishes it).
            self._synced = (stats, _inode(fts_sidecar), _inode(self.sidecar)) if done and settled(stats) else None
            return done

    def _refresh(self, conn: sqlite3.Connection, fts_sidecar: Path, progress: ProgressFn | None,
                 cancel: object) -> bool:
        meta = self._meta(conn)
        wanted = self._model_meta()
        if any(meta.get(k) != v for k, v in wanted.items()):  # another model (or none yet): start over
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM vecs")
            self._set_meta(conn, **wanted, source=None, generation=int(meta.get("generation") or 0) + 1)
            conn.execute("COMMIT")
            meta = self._meta(conn)
        conn.execute("ATTACH DATABASE ? AS fts", (f"file:{fts_sidecar}?mode=ro",))
        try:
            fts_meta = _decoded(conn.execute("SELECT key, value FROM fts.meta").fetchall())
            source = [fts_meta.get("stats"), fts_meta.get("identity"), os.stat(fts_sidecar).st_ino]
            if meta.get("source") == source:
                self._load(conn)
                return True
            gone = [r[0] for r in conn.execute(
                "SELECT mid FROM vecs WHERE mid NOT IN (SELECT mid FROM fts.docs)")]
            stale = conn.execute(
                "SELECT d.fid FROM fts.docs d JOIN fts.fts_content c ON c.id = d.fid "
                "LEFT JOIN vecs v ON v.mid = d.mid "
                "WHERE v.mid IS NULL OR v.ver IS NOT d.ver OR v.len IS NOT length(c.c0) ORDER BY d.fid").fetchall()
            self._load(conn)
            if gone:
                self._forget(conn, gone)
            total = len(stale)
            self._reserve(len(self.mids) + total)  # one allocation, not a copy per growth step
            # progress counts every memory the index holds, those embedded by an earlier
            # (cancelled) build included, so the total stays the same across a resumed build
            whole = conn.execute("SELECT count(*) FROM fts.docs").fetchone()[0]
            kept = max(whole - total, 0)
            if progress:
                progress(kept, kept + total)
            for start in range(0, total, BATCH):
                if _is_cancelled(cancel):
                    return False
                fids = [r[0] for r in stale[start:start + BATCH]]
                rows = conn.execute(
                    "SELECT d.mid, d.ver, c.c0 FROM fts.docs d JOIN fts.fts_content c ON c.id = d.fid "
                    "WHERE d.fid IN (SELECT value FROM json_each(?))", (json.dumps(fids),)).fetchall()
                texts = [_text(r[2]) for r in rows]
                vectors = self.provider.embed(texts)
                self._store(conn, [(r[0], r[1], len(t)) for r, t in zip(rows, texts, strict=True)], vectors)
                if progress:
                    progress(kept + min(start + BATCH, total), kept + total)
            if _is_cancelled(cancel):
                return False
            conn.execute("BEGIN IMMEDIATE")
            self._set_meta(conn, source=source)
            conn.execute("COMMIT")
            return True
        finally:
            conn.execute("DETACH DATABASE fts")

    def _store(self, conn: sqlite3.Connection, items: list[tuple[str, Any, int]], vectors: np.ndarray) -> None:
        """Write vectors of (mid, ver, len) items, in the file and in memory (one transaction)."""
        codes = quantize(vectors)  # what memory holds is what the file holds
        if self.matrix.shape[1] != codes.shape[1]:
            self.matrix = np.zeros((0, codes.shape[1]), dtype=DISK_DTYPE)
            self.inv_norms = np.zeros(0, dtype=np.float32)
            self.mids, self.row_of = [], {}
        free = [i for i, m in enumerate(self.mids) if m is None] if len(self.row_of) < len(self.mids) else []
        rows: list[int] = []
        next_row = len(self.mids)
        for mid, _, _ in items:
            row = self.row_of.get(mid)
            if row is None:
                if free:
                    row = free.pop()
                else:
                    row, next_row = next_row, next_row + 1
            rows.append(row)
        self._grow(max(rows, default=-1) + 1)
        blobs = codes.tobytes()
        width = codes.shape[1]
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO vecs(row, mid, ver, len, v) VALUES (?, ?, ?, ?, ?)",
                [(row, mid, None if ver is None else str(ver), length, blobs[i * width:(i + 1) * width])
                 for i, (row, (mid, ver, length)) in enumerate(zip(rows, items, strict=True))])
            generation = self._bump(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self.matrix[np.asarray(rows, dtype=np.int64)] = codes
        self.inv_norms[np.asarray(rows, dtype=np.int64)] = inverse_norms(codes)
        for row, (mid, _, _) in zip(rows, items, strict=True):
            self.mids[row] = mid
            self.row_of[mid] = row
        self._generation = generation

    def _reserve(self, rows: int) -> None:
        """Room for ``rows`` vectors in the matrix (when the dimensions are known)."""
        dims = self.matrix.shape[1] or self.provider.dimensions
        if dims and rows > self.matrix.shape[0]:
            grown = np.zeros((rows, dims), dtype=DISK_DTYPE)
            if self.matrix.shape[1] == dims:
                grown[:self.matrix.shape[0]] = self.matrix
            self.matrix = grown
            self._grow_norms(rows)

    def _grow(self, rows: int) -> None:
        if rows > len(self.mids):
            self.mids.extend([None] * (rows - len(self.mids)))
        if rows > self.matrix.shape[0]:
            capacity = max(rows, int(self.matrix.shape[0] * 1.25) + 1024)
            grown = np.zeros((capacity, self.matrix.shape[1]), dtype=DISK_DTYPE)
            grown[:self.matrix.shape[0]] = self.matrix
            self.matrix = grown
            self._grow_norms(capacity)

    def _grow_norms(self, capacity: int) -> None:
        held = min(len(self.inv_norms), capacity) if self.matrix.shape[1] else 0
        grown = np.zeros(capacity, dtype=np.float32)
        grown[:held] = self.inv_norms[:held]
        self.inv_norms = grown

    def _bump(self, conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        generation = (int(json.loads(row[0])) if row and row[0] is not None else 0) + 1
        self._set_meta(conn, generation=generation)
        return generation

    def _load(self, conn: sqlite3.Connection) -> None:
        """Read the matrix from the file unless memory already holds this generation of it."""
        generation = self._meta(conn).get("generation")
        inode = os.stat(self.sidecar).st_ino
        if generation == self._generation and inode == self._inode and self.mids:
            return
        dims = self.provider.dimensions
        count = conn.execute("SELECT coalesce(max(row) + 1, 0) FROM vecs").fetchone()[0]
        first = conn.execute("SELECT length(v) FROM vecs LIMIT 1").fetchone()
        if first:
            dims = first[0] // np.dtype(DISK_DTYPE).itemsize
        self.matrix = np.zeros((count, dims), dtype=DISK_DTYPE)
        self.inv_norms = np.zeros(count, dtype=np.float32)
        self.mids = [None] * count
        self.row_of = {}
        cursor = conn.execute("SELECT row, mid, v FROM vecs ORDER BY row")
        while batch := cursor.fetchmany(50000):
            rows = np.fromiter((r[0] for r in batch), dtype=np.int64, count=len(batch))
            codes = np.frombuffer(b"".join(r[2] for r in batch), dtype=DISK_DTYPE).reshape(-1, dims)
            self.matrix[rows] = codes
            self.inv_norms[rows] = inverse_norms(codes)
            for row, mid, _ in batch:
                self.mids[row] = mid
                self.row_of[mid] = row
        self._generation, self._inode = generation, inode

    # ------------------------------------------------------------------ forgetting
    def forget(self, ids: Iterable[str]) -> int:
        """Remove these memories' vectors from the file (overwritten, not just unlinked) and
        from memory; returns how many were held."""
        if not self.sidecar.exists():
            return 0
        with self.lock, self.file_lock:
            conn = self._connect()
            try:
                return self._forget(conn, list(ids))
            finally:
                conn.close()

    def _forget(self, conn: sqlite3.Connection, ids: list[str]) -> int:
        held = [mid for mid in ids if mid in self.row_of] if self.mids else ids
        conn.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left readable
        conn.execute("BEGIN IMMEDIATE")
        try:
            removed = 0
            for start in range(0, len(ids), 900):
                chunk = ids[start:start + 900]
                removed += conn.execute(f"DELETE FROM vecs WHERE mid IN ({','.join('?' * len(chunk))})",
                                        chunk).rowcount
            generation = self._bump(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        for mid in held:
            row = self.row_of.pop(mid, None)
            if row is not None:
                self.mids[row] = None
                self.matrix[row] = 0
                self.inv_norms[row] = 0
        self._generation = generation
        return removed

    # ------------------------------------------------------------------ reading
    @property
    def generation(self) -> int | None:
        """The vectors' generation as held in memory (bumped by every write of them)."""
        return self._generation

    def snapshot(self) -> tuple[np.ndarray, list[str | None]]:
        """(int8 codes, mids) as loaded: row ``i`` holds the vector of ``mids[i]`` (see :func:`unit`)."""
        with self.lock:
            return self.matrix[:len(self.mids)], self.mids

    def vector_of(self, mid: str) -> np.ndarray | None:
        """The unit float32 vector of memory ``mid`` as held (None when it has none)."""
        with self.lock:
            row = self.row_of.get(mid)
            return None if row is None else unit(self.matrix[row:row + 1])[0]

    def vectors_of(self, mids: Iterable[str]) -> tuple[list[str], np.ndarray]:
        """(those of ``mids`` that have a vector, their unit float32 vectors in that order)."""
        with self.lock:
            held = [(m, self.row_of[m]) for m in mids if m in self.row_of]
            rows = np.asarray([r for _, r in held], dtype=np.int64)
            return [m for m, _ in held], unit(self.matrix[rows]) if len(rows) else np.zeros((0, 1), np.float32)

    def cosines(self, query: np.ndarray, threads: int = 0) -> np.ndarray:
        """Every row's cosine with unit vector ``query`` (row ``i`` is ``mids[i]``; free rows 0),
        for :func:`best` to pick from as often as needed (one scan, see :func:`scores`)."""
        with self.lock:
            held = len(self.mids)
            return scores(self.matrix[:held], query, self.inv_norms[:held], threads)

    def rows_of(self, mids: Iterable[str]) -> np.ndarray:
        """The rows of those of ``mids`` that have a vector, in row order."""
        with self.lock:
            rows = np.fromiter((r for r in map(self.row_of.get, mids) if r is not None), dtype=np.int64)
        rows.sort()
        return rows

    def nearest(self, query: np.ndarray, k: int, among: Iterable[str] | None = None,
                threads: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cosines) of the ``k`` rows most like unit vector ``query``, best first: an exact
        scan of every row (see :func:`nearest`; ``threads`` 0: one per core), or only of the
        vectors of the memory ids ``among``. Free rows score 0."""
        with self.lock:
            if among is None:
                held = len(self.mids)
                return nearest(self.matrix[:held], query, k, self.inv_norms[:held], threads)
            rows = np.fromiter((r for r in map(self.row_of.get, among) if r is not None), dtype=np.int64)
            rows.sort()
            codes, inv = self.matrix[rows], self.inv_norms[rows]
        found, cosines = nearest(codes, query, k, inv, threads)
        return rows[found], cosines


def quantize(vectors: np.ndarray) -> np.ndarray:
    """int8 codes of float vectors: each row scaled so its largest component is +-127 (the
    direction is what a cosine reads; a zero row stays zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(vectors).max(axis=1, keepdims=True) if vectors.size else np.ones((len(vectors), 1), np.float32)
    scale = np.where(peak > 0, 127.0 / np.maximum(peak, 1e-30), 0.0).astype(np.float32)
    return np.clip(np.rint(vectors * scale), -127, 127).astype(DISK_DTYPE)


def unit(codes: np.ndarray) -> np.ndarray:
    """Unit float32 vectors of int8 codes (rows of zeros stay zero)."""
    from ..embeddings import normalize

    return normalize(np.asarray(codes, dtype=np.float32))


def inverse_norms(codes: np.ndarray) -> np.ndarray:
    """1 / the Euclidean length of each int8 code (0 for a zero row), float32."""
    out = np.zeros(len(codes), dtype=np.float32)
    for start in range(0, len(codes), NORM_BLOCK):  # int32 squares of a block, not of the whole matrix
        block = codes[start:start + NORM_BLOCK].astype(np.int32)
        squares = np.einsum("ij,ij->i", block, block).astype(np.float64)
        out[start:start + NORM_BLOCK] = np.divide(1.0, np.sqrt(squares), out=np.zeros_like(squares),
                                                  where=squares > 0)
    return out


def nearest(codes: np.ndarray, query: np.ndarray, k: int, inv_norms: np.ndarray | None = None,
            threads: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cosines) of the ``k`` rows of int8 ``codes`` nearest ``query``, best first (exact).

    Every row's integer dot product with the quantized query (NumKong's int8 kernel, which
    usearch ships with: 3x faster here than usearch's own cosine scan, which recomputes both
    lengths per row) times its inverse length (``inv_norms``, computed when not given), then
    the best ``k`` by partition. ``threads``: rows split over this many threads (0: one per
    core); the kernel releases the GIL.
    """
    if min(int(k), len(codes)) <= 0 or not codes.shape[1]:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    return best(scores(codes, query, inv_norms, threads), k)


def scores(codes: np.ndarray, query: np.ndarray, inv_norms: np.ndarray | None = None,
           threads: int = 0) -> np.ndarray:
    """float64 cosine of every row of int8 ``codes`` with ``query`` (see :func:`nearest`)."""
    if not len(codes) or not codes.shape[1]:
        return np.zeros(len(codes))
    q = quantize(query.reshape(1, -1))
    q_norm = float(np.sqrt(np.dot(q[0].astype(np.int64), q[0].astype(np.int64))))
    out = _dots(codes, q, threads)
    out *= inverse_norms(codes) if inv_norms is None else inv_norms
    if q_norm:
        out /= q_norm
    else:
        out[:] = 0.0
    return out


def best(cosines: np.ndarray, k: int, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cosines) of the ``k`` highest of ``cosines`` (only of ``rows`` when given), best first."""
    if rows is not None:
        rows = rows[rows < len(cosines)]
    pick = cosines if rows is None else cosines[rows]
    k = min(int(k), len(pick))
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    cut = len(pick) - k
    top = np.argpartition(pick, cut)[cut:] if cut > 0 else np.arange(len(pick))
    order = top[np.argsort(-pick[top], kind="stable")]
    found = order if rows is None else rows[order]
    return found.astype(np.int64), pick[order].astype(np.float32)


def _dots(codes: np.ndarray, q: np.ndarray, threads: int) -> np.ndarray:
    """float64 integer dot products of every row of ``codes`` with the one row of ``q``."""
    numkong = need("numkong", "meaning")
    threads = threads or os.cpu_count() or 1
    if threads == 1 or len(codes) < 2 * SPLIT_MIN:
        return np.asarray(numkong.cdist(q, codes, metric="dot")).reshape(-1)
    step = -(-len(codes) // threads)
    parts = [codes[i:i + step] for i in range(0, len(codes), step)]
    found = list(_pool().map(lambda part: np.asarray(numkong.cdist(q, part, metric="dot")).reshape(-1), parts))
    return np.concatenate(found)


_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _executor
    with _registry_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="ora-vectors")
        return _executor


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _decoded(rows: list[tuple[str, Any]]) -> dict[str, Any]:
    """Meta rows with their JSON values decoded (plain values, e.g. counters, as they are)."""
    out: dict[str, Any] = {}
    for key, value in rows:
        try:
            out[key] = json.loads(value)
        except (TypeError, ValueError):
            out[key] = value
    return out


_registry: dict[tuple[str, str, str, str], VectorIndex] = {}
_registry_lock = threading.Lock()


def get_vectors(db_path: str | Path, provider: Provider | None = None) -> VectorIndex:
    """The process-wide :class:`VectorIndex` of a file for a provider (default: the bundled model)."""
    provider = provider or configured_provider()
    resolved = str(Path(db_path).expanduser().resolve())
    key = (resolved, str(paths.cache_dir()), provider.name, provider.model)
    with _registry_lock:
        index = _registry.get(key)
        if index is None:
            index = _registry[key] = VectorIndex(Path(resolved), provider)
        return index


def forget(db_path: str | Path, ids: Iterable[str]) -> int:
    """Securely remove the vectors of memory ``ids`` of ``db_path`` from every vector sidecar
    this process knows, and from the file on disk (``secure_delete``); returns rows removed.

    For purge: call it after the memories are gone from the agent's file. Vectors of other
    models in other sidecars do not exist (one sidecar per file, re-made on a model change).
    """
    ids = [str(i) for i in ids]
    path = vector_path(db_path)
    if not path.exists():
        return 0
    resolved = str(Path(db_path).expanduser().resolve())
    with _registry_lock:
        held = [v for k, v in _registry.items() if k[0] == resolved and v.sidecar == path]
    if held:
        return held[0].forget(ids)
    index = VectorIndex(Path(resolved), default_provider())
    return index.forget(ids)


def drop_vectors(db_path: str | Path) -> bool:
    """Delete the vector sidecar of ``db_path`` (rebuilt on the next search by meaning)."""
    path = vector_path(db_path)
    existed = path.exists()
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    resolved = str(Path(db_path).expanduser().resolve())
    with _registry_lock:
        for key in [k for k in _registry if k[0] == resolved]:
            del _registry[key]
    return existed

