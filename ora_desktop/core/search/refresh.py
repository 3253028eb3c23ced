"""Bringing a built index up to date: the log or a scan finds candidates, ids decide (see
:mod:`.index` for the design). A mixin of :class:`~.index.SearchIndex`."""

from __future__ import annotations

import sqlite3
from typing import Any

from .. import wallog
from .sidecar import BUCKET_BITS, _chunks, _delete_fids, _insert_docs, _samples, _text, file_stats, identity


class RefreshMixin:
    """Candidate finding and re-indexing; the host provides ``db_path``, ``meta`` and ``set_meta``."""

    db_path: Any

    def _logged(self, meta: dict[str, Any]) -> wallog.LeafRows | None:
        """The rows the log says changed since the index's cursor, and the cursor after them;
        None when it cannot vouch. Read *before* the table is (a commit landing between the two
        is then read again next time, never stepped over)."""
        cursor = wallog.Cursor.from_list(meta.get("wal"))
        # No log at the last look, and the file itself untouched since: every change is in the log.
        untouched = bool(meta.get("stats")) and meta["stats"][0] == file_stats(self.db_path)[0]
        return wallog.rows_since(self.db_path, cursor, whole=cursor is None and untouched)

    def _refresh_locked(self, conn: sqlite3.Connection, meta: dict[str, Any], log: wallog.Cursor | None,
                        logged: wallog.LeafRows | None, named: frozenset[str] | None = None
                        ) -> tuple[bool, wallog.Cursor | None]:
        """Re-index what changed; returns (changed?, the log cursor now processed). ``log``: the
        cursor before this refresh read the table; ``logged``: :meth:`_logged`, read then too.
        ``named``: every memory changed since this process's last refresh, when a store's change
        feed says (used when the log cannot vouch)."""
        if meta.get("identity") != identity(self.db_path) or self._renumbered(conn, meta):
            return self._reconcile(conn), log
        max_row = int(meta.get("max_row") or 0)
        if logged is not None:
            # Rows on the pages the log says changed, and anything past the last rowid seen.
            rowids = sorted(logged.rowids)
            candidates = conn.execute("SELECT rowid, id, updated_at FROM src.memories WHERE rowid >= ?",
                                      (max_row,)).fetchall()
            for chunk in _chunks(rowids):
                candidates.extend(conn.execute(
                    f"SELECT rowid, id, updated_at FROM src.memories WHERE rowid IN ({','.join('?' * len(chunk))})",
                    chunk))
            # The log names pages, not which of their rows changed, and an agent may leave
            # updated_at alone (or stamp two edits within one second): every text is compared.
            changed = self._apply(conn, candidates, compare=True)
            if conn.execute("SELECT count(*) FROM src.memories").fetchone()[0] != self._rows(conn):
                changed = self._remove_deleted_near(conn, logged.pages) or changed
            log = logged.cursor
        else:
            # The log cannot vouch for the interval (a checkpoint truncated or restarted it twice,
            # a rollback-journal file): updated_at cannot either, so the rows past the last rowid
            # seen and every memory whose text or rowid differs from the index's are read (unless
            # the change feed of a store open here named the changed memories). A new
            # updated_at over the same text changes nothing searched: it is not looked for.
            candidates = conn.execute("SELECT rowid, id, updated_at FROM src.memories WHERE rowid >= ?",
                                      (max_row,)).fetchall()
            if named is None:
                candidates.extend(_text_differs(conn))
            else:  # the change feed of a store open here named them all
                for chunk in _chunks(sorted(named)):
                    candidates.extend(conn.execute(
                        f"SELECT rowid, id, updated_at FROM src.memories WHERE id IN ({','.join('?' * len(chunk))})",
                        chunk))
            changed = self._apply(conn, candidates, compare=True)
        src_count = conn.execute("SELECT count(*) FROM src.memories").fetchone()[0]
        if src_count != self._rows(conn):
            changed = self._remove_deleted(conn) or changed
            if src_count != self._rows(conn):
                return self._reconcile(conn) or changed, log
        return changed, log

    @staticmethod
    def _rows(conn: sqlite3.Connection) -> int:
        """Rows in docs (kept in meta by triggers; counted when missing)."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'rows'").fetchone()
        if row is None:
            return conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        return int(row[0])

    def _remove_deleted_near(self, conn: sqlite3.Connection, pages: tuple[tuple[int, ...], ...]) -> bool:
        """Deleted memories between the neighbours of changed pages (rowids the log bounds)."""
        gone: list[int] = []
        for rowids in pages:
            present = set(rowids)
            low, high = min(rowids), max(rowids)
            before = conn.execute("SELECT max(rowid) FROM src.memories WHERE rowid < ?", (low,)).fetchone()[0]
            after = conn.execute("SELECT min(rowid) FROM src.memories WHERE rowid > ?", (high,)).fetchone()[0]
            before = (low - 1) if before is None else before
            after = (1 << 62) if after is None else after
            for fid, mid, srow in conn.execute("SELECT fid, mid, srow FROM docs WHERE srow > ? AND srow < ?",
                                               (before, after)):
                if srow not in present and conn.execute(
                        "SELECT 1 FROM src.memories WHERE id = ?", (mid,)).fetchone() is None:
                    gone.append(fid)
        return _delete_fids(conn, gone) > 0

    def _renumbered(self, conn: sqlite3.Connection, meta: dict[str, Any]) -> bool:
        """True when a sampled memory now lives at another rowid (VACUUM, or a REPLACE)."""
        samples = meta.get("samples") or []
        if not samples:
            return False
        ids = [mid for _, mid in samples]
        marks = ",".join("?" * len(ids))
        now = dict(conn.execute(f"SELECT id, rowid FROM src.memories WHERE id IN ({marks})", ids).fetchall())
        if any(mid in now and now[mid] != srow for srow, mid in samples):
            return True
        max_row = conn.execute("SELECT max(rowid) FROM src.memories").fetchone()[0] or 0
        return max_row < int(meta.get("max_row") or 0) - (1 << BUCKET_BITS)

    def _apply(self, conn: sqlite3.Connection, candidates: list[tuple[int, Any, Any]],
               compare: bool = False) -> bool:
        """Re-index candidates that are new or whose text changed.

        A candidate whose ``updated_at`` changed has its text compared with the indexed text:
        only a different text is re-indexed (an importance or sync edit just records the new
        version). With ``compare`` every candidate's text is compared, so an edit that kept
        ``updated_at`` (an agent's raw SQL, two edits in one second) is not missed.
        """
        if not candidates:
            return False
        known: dict[str, tuple[int, Any, int]] = {}
        ids = [str(c[1]) for c in candidates]
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for fid, mid, ver, srow in conn.execute(
                    f"SELECT fid, mid, ver, srow FROM docs WHERE mid IN ({marks})", chunk):
                known[mid] = (fid, ver, srow)
        new_ids: list[str] = []
        check: list[tuple[int, int, str, str | None]] = []  # (rowid, fid, id, updated_at) to compare
        moved: list[tuple[str | None, int, int]] = []
        for srow, mid, ver in candidates:
            mid = str(mid)
            ver = None if ver is None else str(ver)
            old = known.get(mid)
            if old is None:
                new_ids.append(mid)
            elif old[1] != ver or compare:
                check.append((srow, old[0], mid, ver))
            elif old[2] != srow:
                moved.append((ver, srow, old[0]))
        changed_text = set(self._text_changed(conn, [(srow, fid) for srow, fid, _, _ in check]))
        # Same text under a new updated_at (an importance or sync edit): only the version moves.
        for srow, fid, mid, ver in check:
            if mid not in changed_text and (ver, srow) != known[mid][1:]:
                moved.append((ver, srow, fid))
        if moved:
            conn.executemany("UPDATE docs SET ver = ?, srow = ? WHERE fid = ?", moved)
        stale_ids = list(dict.fromkeys(new_ids + [mid for _, _, mid, _ in check if mid in changed_text]))
        if not stale_ids:
            return bool(moved)
        self._reindex_ids(conn, stale_ids, known)
        return True

    @staticmethod
    def _text_changed(conn: sqlite3.Connection, pairs: list[tuple[int, int]]) -> list[str]:
        """Ids whose current text differs from the indexed text; ``pairs`` are (rowid, fid)."""
        changed: list[str] = []
        for chunk in _chunks(pairs, 400):
            rowids = [p[0] for p in chunk]
            fids = [p[1] for p in chunk]
            current = {r: (str(i), _text(c)) for r, i, c in conn.execute(
                f"SELECT rowid, id, content FROM src.memories WHERE rowid IN ({','.join('?' * len(rowids))})",
                rowids)}
            indexed = dict(conn.execute(
                f"SELECT id, c0 FROM fts_content WHERE id IN ({','.join('?' * len(fids))})", fids))
            for rowid, fid in chunk:
                mid, text = current.get(rowid, (None, None))
                if mid is not None and indexed.get(fid) != text:
                    changed.append(mid)
        return changed

    def _reindex_ids(self, conn: sqlite3.Connection, ids: list[str], known: dict[str, tuple] | None = None) -> None:
        known = dict(known or {})
        missing = [i for i in ids if i not in known]
        for chunk in _chunks(missing):
            marks = ",".join("?" * len(chunk))
            for fid, mid, ver, srow in conn.execute(
                    f"SELECT fid, mid, ver, srow FROM docs WHERE mid IN ({marks})", chunk):
                known[mid] = (fid, ver, srow)
        next_fid = (conn.execute("SELECT max(fid) FROM docs").fetchone()[0] or 0) + 1
        _delete_fids(conn, [known[i][0] for i in ids if i in known])
        rows = []
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows.extend(conn.execute(
                f"SELECT rowid, id, content, updated_at FROM src.memories WHERE id IN ({marks})", chunk))
        batch = []
        srows = []
        for srow, mid, content, ver in rows:
            old = known.get(str(mid))
            fid = old[0] if old else next_fid
            if not old:
                next_fid += 1
            batch.append((fid, srow, str(mid), content, ver))
            srows.append((srow, str(mid)))
        # A rowid now held by another id: the memory that had it is gone.
        holder = dict(srows)
        gone = []
        for chunk in _chunks(list(holder)):
            for fid, mid, srow in conn.execute(
                    f"SELECT fid, mid, srow FROM docs WHERE srow IN ({','.join('?' * len(chunk))})", chunk):
                if mid != holder[srow] and conn.execute(
                        "SELECT 1 FROM src.memories WHERE id = ?", (mid,)).fetchone() is None:
                    gone.append(fid)
        _delete_fids(conn, gone)
        _insert_docs(conn, batch)
        if batch:
            top = max(srow for _, srow, *_ in batch)
            meta_max = self.meta(conn).get("max_row") or 0
            if top > meta_max:
                self.set_meta(conn, max_row=top)

    def _remove_deleted(self, conn: sqlite3.Connection) -> bool:
        """Find deleted memories in the rowid buckets whose counts differ; remove them."""
        bits = BUCKET_BITS
        src = dict(conn.execute(f"SELECT rowid >> {bits} AS b, count(*) FROM src.memories GROUP BY b"))
        ours = dict(conn.execute(f"SELECT srow >> {bits} AS b, count(*) FROM docs GROUP BY b"))
        buckets = [b for b in set(src) | set(ours) if src.get(b, 0) != ours.get(b, 0)]
        gone: list[int] = []
        for bucket in buckets:
            low, high = bucket << bits, ((bucket + 1) << bits) - 1
            present = {str(r[0]) for r in conn.execute(
                "SELECT id FROM src.memories WHERE rowid BETWEEN ? AND ?", (low, high))}
            for fid, mid in conn.execute("SELECT fid, mid FROM docs WHERE srow BETWEEN ? AND ?", (low, high)):
                if mid not in present and conn.execute(
                        "SELECT 1 FROM src.memories WHERE id = ?", (mid,)).fetchone() is None:
                    gone.append(fid)
        return _delete_fids(conn, gone) > 0

    def _reconcile(self, conn: sqlite3.Connection) -> bool:
        """Full comparison by id: re-index what changed, drop what is gone, refresh hints."""
        gone = [r[0] for r in conn.execute(
            "SELECT fid FROM docs d WHERE NOT EXISTS (SELECT 1 FROM src.memories m WHERE m.id = d.mid)")]
        _delete_fids(conn, gone)
        stale, moved = [], []
        differs = {str(row[1]) for row in _text_differs(conn, renumbered=True)}  # edits that kept updated_at
        for srow, mid, ver, fid, old_ver, old_srow in conn.execute(
                "SELECT m.rowid, m.id, m.updated_at, d.fid, d.ver, d.srow FROM src.memories m "
                "LEFT JOIN docs d ON d.mid = m.id"):
            ver = None if ver is None else str(ver)
            if fid is None or old_ver != ver or str(mid) in differs:
                stale.append(str(mid))
            elif old_srow != srow:
                moved.append((srow, fid))
        conn.executemany("UPDATE docs SET srow = ? WHERE fid = ?", moved)
        for chunk in _chunks(stale, 5000):
            self._reindex_ids(conn, chunk)
        max_row = conn.execute("SELECT max(rowid) FROM src.memories").fetchone()[0] or 0
        self.set_meta(conn, max_row=max_row, samples=_samples(conn))
        return bool(gone or stale or moved)


def _text_differs(conn: sqlite3.Connection, renumbered: bool = False) -> list[tuple[int, Any, Any]]:
    """(rowid, id, updated_at) of every memory whose text is not the text indexed for it: what
    a log that cannot vouch for an interval leaves to find, whatever ``updated_at`` says. Each
    indexed row is looked for at the rowid it had (``docs.srow``: a third quicker at a million);
    a rowid that holds another memory now names both (the one there, and the indexed one, found
    by id, wherever it went). With ``renumbered`` every row is found by id."""
    text = "(CASE WHEN m.content IS NULL THEN '' ELSE CAST(m.content AS TEXT) END)"
    if renumbered:
        return conn.execute(
            f"SELECT m.rowid, m.id, m.updated_at FROM docs d CROSS JOIN src.memories m ON m.id = d.mid "
            f"CROSS JOIN fts_content f ON f.id = d.fid WHERE f.c0 IS NOT {text}").fetchall()
    out: list[tuple[int, Any, Any]] = []
    elsewhere: list[str] = []
    for rowid, mid, ver, indexed in conn.execute(
            f"SELECT m.rowid, m.id, m.updated_at, d.mid FROM docs d LEFT JOIN src.memories m ON m.rowid = d.srow "
            f"CROSS JOIN fts_content f ON f.id = d.fid WHERE m.id IS NOT d.mid OR f.c0 IS NOT {text}"):
        if mid is not None:
            out.append((rowid, mid, ver))
        if mid is None or str(mid) != indexed:
            elsewhere.append(indexed)
    for chunk in _chunks(elsewhere):
        out.extend(conn.execute(
            f"SELECT rowid, id, updated_at FROM src.memories WHERE id IN ({','.join('?' * len(chunk))})", chunk))
    return out
