"""The change feed of one file: which memories another program added, changed or removed.

SQLite's commit counter (:class:`~.connection.ChangeWatch`) says *that* someone else committed;
this module says *what*: it reads the frames the write-ahead log gained since the last look
(through :mod:`.wallog`, the one reader of the log), and compares each changed table-leaf page
with the version it had before (an earlier frame of the log, or the database file while no
checkpoint has copied later frames into it). Rows whose stored bytes differ are changed, rows
that appear are added, rows that left every page and whose id is gone from ``memories`` are
removed; every answer is checked against the database by rowid and id. A person's edit, an
agent's raw SQL (with or without a new ``updated_at``), a job or a sync in another process all
read the same way. An edited row's two records, compared value by value (through its overflow
pages when it is too long for its page), name the columns it wrote.

When the log cannot vouch for the whole interval — no log (a rollback-journal file), a log
restarted more than once or over frames not read yet, a checkpoint that copied unread frames,
a page whose earlier version is unknown, a changed page that belongs to no row it can name
(an overflow page rewritten in place of a row no changed index entry names), a leaf freed
without being rewritten, more than :data:`MAX_IDS` rows — :meth:`ChangeFeed.poll` answers
``Change.reload()``: views read everything again. Correct first; the ids are the fast path.

The store's own commits are not the feed's to report (the operation that made them emits its
own ``Change``). Inside its write the store holds the write lock, so the log's published end then
(:meth:`ChangeFeed.log_end`) is where other programs' commits end and ours begins:
:meth:`ChangeFeed.own_commit` reads the log up to there as theirs, then steps past our commit's
frames, whoever commits right before or after us.
"""

from __future__ import annotations

import os
import struct
import sys
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import btree
from .errors import OraError
from .fileheader import read_at, read_header
from .records import Change, Initiator
from .schema import MEMORY_COLUMNS
from .wallog import FRAME_HEADER, HEADER, Log, LogUnknown, database_header, published_place, read_since
from .wallog import header as wallog_header

#: Past this many changed memories a reload is as cheap as naming them.
MAX_IDS = 5000
#: Table pages kept as of the last look (4 MB of 4 KB pages): the earlier version of a page an
#: agent writes again and again (the newest leaf, its parents), whatever a checkpoint did.
KEPT_PAGES = 1024
#: Rows too long for their page whose overflow pages one look reads, to name the columns an edit
#: wrote (:meth:`ChangeFeed._overflow_edits`); also how many rows an index's changed entries name
#: are looked up in the table's b-tree to find which row an overflow page rewritten in place is.
MAX_OWNERS = 64
#: Long rows per look whose overflow pages are added to the list of their leaves.
MAX_LISTED = 256
Query = Callable[[str, Sequence[object]], list[tuple]]


_Unknown = LogUnknown  # the log cannot say which rows changed: reload


@dataclass(frozen=True, slots=True)
class LogEnd:
    """The log's published end (``-shm``): its salts, page size and committed frame count."""

    salts: tuple[int, int]
    page_size: int
    frames: int

    @property
    def offset(self) -> int:
        return HEADER + self.frames * (FRAME_HEADER + self.page_size)


class ChangeFeed:
    """Detector of other programs' changes to one WAL file's memories (see the module docstring).

    ``query(sql, params)`` runs a read on the store's connection (this module holds no SQL
    connection of its own).
    """

    def __init__(self, path: Path, query: Query) -> None:
        self.path = Path(path)
        self._query = query
        self._lock = threading.Lock()
        self._log: Log | None = None
        self._started = False
        self._db_stat: tuple | None = None
        self._usable: int | None = None
        self._memory_columns: int | None = None
        self._column_names: tuple[str, ...] = ()
        #: Table pages as of the last look (most recently written last), see :meth:`_remember`.
        self._seen: OrderedDict[int, bytes] = OrderedDict()
        self._last_written: dict[int, int] = {}
        #: overflow page -> the table leaf whose cell's chain held it (SQLite's dbstat, listed
        #: when a look first needs it: see :meth:`_owner_leaves`)
        self._owners: dict[int, int] | None = None
        #: Why the last :meth:`poll` answered ``Change.reload()`` (for logs and benchmarks).
        self.last_reason = ""

    @property
    def started(self) -> bool:
        return self._started

    # ----------------------------------------------------------------- positions
    def start(self) -> None:
        """Take the file as it is now as seen (the log read to its last commit)."""
        with self._lock:
            self._start()

    def _start(self) -> None:
        self._started = True
        self._db_stat = self._stat()
        self._seen.clear()
        try:
            self._log = self._read_log(None, whole=True)[0]
        except (_Unknown, OSError):
            self._log = None

    def mark(self) -> bool:
        """Take the file as seen as of its wal-index header (``-shm``: the last commit's frame and
        the log's salts), reading no frame of the log — cheap enough for every open. False when
        the header cannot tell (no ``-shm`` or log yet, a rollback-journal file): the first
        :meth:`poll` then starts the feed."""
        with self._lock:
            try:
                log = published_place(self.path)
            except (_Unknown, OSError):
                return False  # the first poll starts
            # (None: an empty log; the first writer starts one, read whole while the file is as now)
            self._started, self._db_stat, self._log = True, self._stat(), log
            self._seen.clear()
            return True

    def log_end(self) -> LogEnd | None:
        """Where the log's published commits end now (the wal-index header in ``-shm``), None
        when it cannot tell. Read inside our write (we hold the write lock): every commit before
        it is another program's, ours begins there."""
        try:
            index = read_header(f"{self.path}-shm", 96)
        except OSError:
            return None
        if len(index) < 96 or index[:48] != index[48:] or index[12] != 1:
            return None
        page_size = int.from_bytes(index[14:16], sys.byteorder)
        return LogEnd(struct.unpack(">II", index[32:40]), 65536 if page_size == 1 else page_size,
                      int.from_bytes(index[16:20], sys.byteorder))

    def own_commit(self, end: LogEnd | None, ours: bool) -> tuple[bool, Change | None]:
        """The store committed right after the log's ``end`` (:meth:`log_end`; ``ours``: a
        commit that wrote frames, not an empty one): read up to ``end`` as other programs'
        commits, then step past ours. Returns (whether the feed followed — False: it is no longer
        started, and takes the file as seen again at the next look —, what others changed before
        ours, as :meth:`poll` says it)."""
        with self._lock:
            if not self._started or end is None:
                self._started = False
                return False, None
            try:
                change = self._read_before(end)
                if ours:
                    log, _ = self._read_log(self._log, commits=1)
                    wal = f"{self.path}-wal"
                    for pgno, at in self._last_written.items():  # keep the pages we hold current
                        if pgno in self._seen:
                            self._seen[pgno] = read_at(wal, log.page_size, at + FRAME_HEADER)
                    self._log = log
                return True, change
            except (_Unknown, OSError, OraError) as exc:  # (our commit stands: never fail the write)
                self.last_reason = str(exc) or type(exc).__name__
                self._started = False
                return False, None

    def _read_before(self, end: LogEnd) -> Change | None:
        """Others' commits from the position up to ``end`` (see :meth:`own_commit`)."""
        head = wallog_header(read_at(f"{self.path}-wal", HEADER, 0))
        if head is None or head[1:3] != end.salts:  # our commit restarted the log
            at = HEADER if self._log is None else self._log.offset if self._log.salts == end.salts else None
            if at != end.offset:
                raise _Unknown("our commit restarted the log over others' frames not read yet")
            return None
        log, pages = self._read_log(self._log, upto=end.offset)
        change = self._diff(log, pages)
        self._log = log
        self._remember(pages)
        return change

    def poll(self) -> Change | None:
        """What others committed since the last look: a ``Change`` with ids (initiator external),
        ``Change.reload()`` when the log cannot tell, or ``None`` when no memory changed."""
        with self._lock:
            if not self._started:
                self._start()
                return Change.reload()
            try:
                log, pages = self._read_log(self._log)
                change = self._diff(log, pages)
            except (_Unknown, OSError) as exc:
                self.last_reason = str(exc) or type(exc).__name__
                self._start()
                return Change.reload()
            self._log = log
            self._remember(pages)
            return change

    def _remember(self, pages: dict[int, tuple[bytes | None, bytes]]) -> None:
        """Keep the pages just read as they are now (index pages aside): the next look compares
        with these, whatever a checkpoint or a restart of the log did meanwhile."""
        for pgno, (_old, new) in pages.items():
            if btree.page_type(new, pgno) in btree.INDEX_PAGES:
                self._seen.pop(pgno, None)
                continue
            self._seen[pgno] = new
            self._seen.move_to_end(pgno)
        while len(self._seen) > KEPT_PAGES:
            self._seen.popitem(last=False)

    def _stat(self) -> tuple | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    # ----------------------------------------------------------------- the log
    def _read_log(self, log: Log | None, commits: int | None = None, whole: bool = False, upto: int | None = None
                  ) -> tuple[Log, dict[int, tuple[bytes | None, bytes]]]:
        """The log after the frames of the next ``commits`` commits (all: None; up to offset
        ``upto`` at most) past ``log``,
        and ``{page: (version before, version after)}`` of the pages they wrote (before: None
        when unknown; none with ``commits`` or ``whole``). ``log`` None: from the log's first
        frame (a log new since the last look, the database file untouched; ``whole``: any log,
        read to take the file as seen).

        A log restarted once since ``log`` (a checkpoint copied every frame into the file, then a
        writer began again at the log's start) is read too: the old generation's frames past
        ``log`` that the new one has not overwritten, then the new generation's."""
        if log is None and not whole and self._db_stat != self._stat():
            if not os.path.exists(f"{self.path}-wal"):
                raise _Unknown("no log: a rollback-journal file (or not one yet)")
            raise _Unknown("a log that appeared after the file itself changed")
        read = read_since(self.path, log, commits, upto)
        self._last_written = read.written
        pages = {} if whole or commits is not None else self._versions(
            read.old, read.new, read.written, read.tail, read.extent, read.first)
        return read.new, pages

    def _versions(self, old: Log, new: Log, written: dict[int, int], tail: dict[int, int], extent: int,
                  first: dict[int, int]) -> dict[int, tuple[bytes | None, bytes]]:
        """Each page's version at ``old`` (an earlier frame still in the log, or the database file
        while it holds nothing newer: no checkpoint copied a frame of that page written since)
        and now (``written`` in ``new``'s generation, else the old generation's ``tail``)."""
        wal = f"{self.path}-wal"
        size = old.page_size
        restarted = old.salts != new.salts
        before = _backfilled(self.path)
        # The file holds each page as of ``old`` while no checkpoint copied a later frame; after a
        # restart it holds the whole old generation: right for pages its tail did not write.
        safe = before is not None and (before == 0 if restarted else before <= old.frame_count)
        marker = struct.pack(">II", *old.salts)
        out: dict[int, tuple[bytes | None, bytes]] = {}
        for pgno in {*written, *tail}:
            at = written[pgno] if pgno in written else tail[pgno]
            current = read_at(wal, size, at + FRAME_HEADER)
            earlier = (old.frames or {}).get(pgno)
            previous: bytes | None = self._seen.get(pgno)
            if previous is not None:
                pass  # as the last look left it
            elif earlier is not None and (not restarted or earlier >= extent):
                frame = read_at(wal, FRAME_HEADER + size, earlier)
                if frame[8:16] == marker and int.from_bytes(frame[:4], "big") == pgno:
                    previous = frame[FRAME_HEADER:]
            elif pgno not in tail and (safe or _untouched(first.get(pgno), before, new.page_size)):
                previous = read_at(self.path, size, (pgno - 1) * size)
            out[pgno] = (previous, current)
        if _backfilled(self.path) != before:
            raise _Unknown("a checkpoint ran while the file's pages were read")
        unknown = [pgno for pgno, (previous, _) in out.items() if previous is None]
        if unknown:
            held = self._free_then(out)
            for pgno in unknown:
                if pgno in held:
                    out[pgno] = (b"", out[pgno][1])  # no rows were on it: new, or free
        return out

    def _free_then(self, out: dict[int, tuple[bytes | None, bytes]]) -> set[int]:
        """Pages that held no rows at the last look, as far as the earlier versions read tell:
        past the end of the database then (its page count in page 1), or on the freelist."""
        first = out.get(1, (self._seen.get(1), b""))[0]
        if not first or len(first) < 100:
            return set()
        # (the page count is valid while the version it was written for is the change counter's)
        count = int.from_bytes(first[28:32], "big") if first[24:28] == first[92:96] else 0
        free: set[int] = set()
        trunk = btree.freelist_trunk(first)
        while trunk and trunk not in free:
            page = out.get(trunk, (self._seen.get(trunk), b""))[0]
            if page is None:
                break  # the rest of the list is not known: those pages stay unknown
            free.add(trunk)
            trunk, leaves = btree.trunk_pages(page)
            free.update(leaves)
        return _Beyond(count, free)

    # ----------------------------------------------------------------- the rows
    def _diff(self, log: Log, pages: dict[int, tuple[bytes | None, bytes]]) -> Change | None:
        if not pages:
            return None
        usable = self._usable_size(log.page_size)
        width = self._columns()
        narrowest = min(width, len(MEMORY_COLUMNS))

        def memory_row(cell: btree.Cell) -> bool:
            return narrowest <= cell.columns <= width and cell.key is not None
        old_cells: dict[int, btree.Cell] = {}
        new_cells: dict[int, btree.Cell] = {}
        others: set[int] = set()
        dropped: set[int] = set()  # children some table-interior page no longer names
        adopted: set[int] = set()  # children the changed interior pages name now
        leaf_touched = False
        long_cells: list[tuple[int, btree.Cell]] = []  # (leaf, cell) of rows too long for their page
        for pgno, (old, new) in pages.items():
            if pgno == 1:
                continue
            if old is None:
                if btree.page_type(new) in btree.INDEX_PAGES:
                    continue  # an index's page: no row of its own
                raise _Unknown("a page's earlier version is not known (a checkpoint copied frames not read)")
            old_leaf = btree.leaf_cells(old, usable) if old else {}
            new_leaf = btree.leaf_cells(new, usable)
            kind = btree.page_type(new)
            if new_leaf is not None:
                leaf_touched = True
                new_cells.update({r: c for r, c in new_leaf.items() if memory_row(c)})
                if self._owners is not None:
                    long_cells += [(pgno, c) for c in new_leaf.values() if c.overflow and memory_row(c)]
            if old_leaf:
                old_cells.update({r: c for r, c in old_leaf.items() if memory_row(c)})
            now_named = btree.children(new) or set()
            dropped |= ((btree.children(old) if old else None) or set()) - now_named
            adopted |= now_named
            if new_leaf is None and kind != btree.TABLE_INTERIOR and kind not in btree.INDEX_PAGES:
                others.add(pgno)
        if dropped - adopted - set(pages):  # (a child moved to another interior page is no loss)
            raise _Unknown("a leaf freed without being rewritten: its rows went unseen")
        accounted, rewritten = self._accounted(pages, old_cells, new_cells, log)
        explained, payloads = self._overflow_edits(log, pages, usable, others - accounted, rewritten,
                                                   old_cells, new_cells)
        self._list_owners(log, pages, long_cells)
        if others - accounted - explained:
            raise _Unknown("a page no row names (an overflow rewritten in place)")
        added: set[str] = set()
        changed: set[str] = set()
        left: dict[str, int] = {}
        columns: set[str] | None = set()  # what the in-place edits wrote (None: not known)
        present = self._present(new_cells)
        for rowid, cell in new_cells.items():
            if present.get(rowid) != cell.key:
                continue  # another table's row (or one gone again)
            old = old_cells.get(rowid)
            if old is None or old.key != cell.key:
                added.add(cell.key)
                if old is not None:
                    left[old.key] = rowid
            elif old.data != cell.data or rowid in rewritten:
                changed.add(cell.key)
                wrote = btree.changed_columns(old, cell, self._column_names, payloads.get(rowid))
                columns = None if wrote is None or columns is None else columns | wrote
        for rowid, cell in old_cells.items():
            if rowid not in new_cells:
                left[cell.key] = rowid
        if len(added) + len(changed) + len(left) > MAX_IDS:
            raise _Unknown("more rows changed than are worth naming")
        still = self._ids_present(sorted(set(left) - added))
        removed = {key for key in left if key not in added and key not in still}
        moved = (added & set(left)) | (set(left) & still)  # a new rowid for the same id (REPLACE)
        changed |= moved
        added -= moved
        if not (added or changed or removed):
            return Change.reload() if leaf_touched and self._other_tables_changed(pages, usable, memory_row) else None
        # A rowid another memory holds now is no place to remove a row from (a view would drop
        # the wrong one): left out, the view reads its keys again instead.
        gone_rowids = {left[key] for key in removed}
        gone_rowids -= set(self._present_rowids(sorted(gone_rowids)))
        known = None if columns is None or moved or not changed else frozenset(columns)
        return Change(added=frozenset(added), changed=frozenset(changed), removed=frozenset(removed),
                      initiator=Initiator.EXTERNAL, removed_rowids=frozenset(gone_rowids), columns=known)

    def _present_rowids(self, rowids: list[int]) -> set[int]:
        found: set[int] = set()
        for start in range(0, len(rowids), 500):
            chunk = rowids[start:start + 500]
            found.update(r[0] for r in self._query(
                f"SELECT rowid FROM memories WHERE rowid IN ({','.join('?' * len(chunk))})", chunk))
        return found

    @staticmethod
    def _other_tables_changed(pages: dict[int, tuple[bytes | None, bytes]], usable: int,
                              memory_row: Callable[[btree.Cell], bool]) -> bool:
        """Whether a leaf of another table (task context, the engine's tables) changed: views of
        those read again."""
        for pgno, (old, new) in pages.items():
            if pgno == 1 or old is None:
                continue
            a, b = btree.leaf_cells(old, usable) or {}, btree.leaf_cells(new, usable) or {}
            if a != b and not all(memory_row(c) for c in (*a.values(), *b.values())):
                return True
        return False

    def _accounted(self, pages: dict[int, tuple[bytes | None, bytes]], old_cells: dict[int, btree.Cell],
                   new_cells: dict[int, btree.Cell], log: Log) -> tuple[set[int], set[int]]:
        """Non-b-tree pages the changed rows explain (their overflow chains, the freelist, the
        pointer map), and the rows whose overflow pages were written (an edit past the page)."""
        def version(side: int) -> Callable[[int], bytes | None]:
            return lambda pgno: pages[pgno][side] if pgno in pages else None
        return btree.accounted(pages, ((version(1), new_cells), (version(0), old_cells)),
                               database_header(self.path, log), log.page_size)

    def _overflow_edits(self, log: Log, pages: dict[int, tuple[bytes | None, bytes]], usable: int,
                        unexplained: set[int], rewritten: set[int], old_cells: dict[int, btree.Cell],
                        new_cells: dict[int, btree.Cell]) -> tuple[set[int], dict[int, tuple[bytes, bytes]]]:
        """Rows too long for their page, edited: (the overflow pages they explain, each row's two
        whole records, read through its overflow pages, so the columns it wrote are named).

        An edit that keeps a row's length rewrites only the overflow pages whose bytes changed,
        not its leaf. The rows an index's changed entries name (an indexed column was written)
        are found by rowid in the table's b-tree; for the pages still unexplained (a touch
        writes no indexed column), the leaves SQLite's ``dbstat`` lists as holding their chains.
        A row owns those pages when its chain, as the table's b-tree has it now, holds them
        (added to ``rewritten``, ``old_cells`` and ``new_cells``)."""
        now = self._pages_now(log, pages)
        if now is None or not (unexplained or rewritten):
            return set(), {}
        backfilled = _backfilled(self.path)
        explained: set[int] = set()
        root = self._query("SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = 'memories'",
                           ()) if unexplained else None

        def owns(rowid: int, cell: btree.Cell | None) -> bool:
            """``cell`` is memory ``rowid``'s as the table's b-tree has it now, and its overflow
            chain holds an unexplained page: the row was edited (its leaf was not written)."""
            if cell is None or rowid in new_cells or cell.columns > self._columns():
                return False
            chain = set(btree.overflow_pages(cell, now) or ())
            if not chain & (unexplained - explained):
                return False
            found = btree.find_row(int(root[0][0]), rowid, now, usable)
            if found is None or found.overflow != cell.overflow:
                return False
            explained.update(chain)
            old_cells[rowid] = new_cells[rowid] = found
            rewritten.add(rowid)
            return True
        if root:
            # An indexed column written: the index's changed entries name the rows.
            for rowid in [r for r in self._index_rowids(pages, usable) if r not in new_cells][:MAX_OWNERS]:
                owns(rowid, btree.find_row(int(root[0][0]), rowid, now, usable))
            # Otherwise (a touch: access_count, last_accessed_at), the leaf whose cell's chain
            # holds the page, as SQLite's dbstat last listed it (listed again when it is not).
            listed = False
            for fresh in (False, True):
                leftover = unexplained - explained
                if not leftover or len(rewritten) >= MAX_OWNERS or listed:
                    break
                leaves, listed = self._owner_leaves(leftover, fresh)
                if leaves is None:
                    break
                for leaf in sorted(leaves):
                    content = now(leaf) if len(rewritten) < MAX_OWNERS else None
                    for rowid, cell in ((btree.leaf_cells(content, usable, leaf) or {}) if content else {}).items():
                        if cell.overflow:
                            owns(rowid, cell)

        def then(pgno: int) -> bytes | None:
            pair = pages.get(pgno)
            return pair[0] if pair is not None else now(pgno)
        payloads: dict[int, tuple[bytes, bytes]] = {}
        edited = [r for r in sorted(rewritten) if r in old_cells and r in new_cells]
        for rowid in edited[:MAX_OWNERS]:  # (past that, the rows' pages alone are compared)
            before = btree.payload(old_cells[rowid], then, usable)
            after = btree.payload(new_cells[rowid], now, usable) if before is not None else None
            if before is not None and after is not None:
                payloads[rowid] = (before, after)
        if _backfilled(self.path) != backfilled:
            return set(), {}  # a checkpoint ran meanwhile: pages read from the file may be newer
        return explained, payloads

    def _owner_leaves(self, overflow: set[int], fresh: bool) -> tuple[set[int] | None, bool]:
        """(the table-leaf pages whose cells' chains held these overflow pages when SQLite's
        ``dbstat`` last listed the memories table — None when this SQLite has no ``dbstat`` —,
        whether it was listed now). It is listed the first time, and again when ``fresh``. What
        it names is checked against the pages as they are now by the caller."""
        listed = fresh or self._owners is None
        if listed:
            try:
                rows = self._query("SELECT path, pageno, pagetype FROM dbstat WHERE name = 'memories'", ())
            except Exception:  # (sqlite3's or an OraError: no dbstat compiled in)
                return None, False
            leaf_at: dict[str, int] = {}
            self._owners = {}
            for path, pgno, kind in rows:  # (a leaf is listed before its cells' overflow pages)
                if kind == "leaf":
                    leaf_at[path] = pgno
                elif kind == "overflow" and (leaf := leaf_at.get(path[:path.rfind("/") + 1])) is not None:
                    self._owners[pgno] = leaf
        owners = self._owners or {}
        return {owners[p] for p in overflow if p in owners}, listed

    def _list_owners(self, log: Log, pages: dict[int, tuple[bytes | None, bytes]],
                     cells: list[tuple[int, btree.Cell]]) -> None:
        """Keep the list of overflow pages' leaves (:meth:`_owner_leaves`) up to date with the
        long rows on the leaves this look read (a row added, or moved by a split), so a touch of
        them later needs no listing again."""
        now = self._pages_now(log, pages) if cells and self._owners is not None else None
        for leaf, cell in cells[:MAX_LISTED] if now is not None else ():
            for pgno in btree.overflow_pages(cell, now) or ():
                self._owners[pgno] = leaf

    def _pages_now(self, log: Log, pages: dict[int, tuple[bytes | None, bytes]]
                   ) -> Callable[[int], bytes | None] | None:
        """A reader of each page as of ``log``'s position (its newest frame there, else the
        database file); None when a checkpoint may have copied newer frames into the file."""
        backfilled = _backfilled(self.path)
        if log.frames is None or backfilled is None or backfilled > log.frame_count:
            return None
        wal, size, frames = f"{self.path}-wal", log.page_size, log.frames

        def read(pgno: int) -> bytes | None:
            if pgno in pages:
                return pages[pgno][1]
            at = frames.get(pgno)
            if at is None:
                return read_at(self.path, size, (pgno - 1) * size)
            return read_at(wal, size, at + FRAME_HEADER)
        return read

    @staticmethod
    def _index_rowids(pages: dict[int, tuple[bytes | None, bytes]], usable: int) -> list[int]:
        """The rowids of the index entries the commits added or removed (their rows' indexed
        columns were written), in order."""
        before: Counter[bytes] = Counter()
        after: Counter[bytes] = Counter()
        for old, new in pages.values():
            if old and btree.page_type(new) == btree.INDEX_PAGES[1]:  # (entries that moved between pages cancel)
                before.update(btree.index_entries(old, usable))
                after.update(btree.index_entries(new, usable))
        rowids = {btree.index_rowid(entry) for entry in (before - after) + (after - before)}
        return sorted(r for r in rowids if r is not None)

    def _present(self, cells: dict[int, btree.Cell]) -> dict[int, str]:
        if not cells:
            return {}
        rows: dict[int, str] = {}
        keys = sorted(cells)
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            for rowid, key in self._query(
                    f"SELECT rowid, id FROM memories WHERE rowid IN ({','.join('?' * len(chunk))})", chunk):
                rows[rowid] = str(key)
        return rows

    def _ids_present(self, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            found.update(str(r[0]) for r in self._query(
                f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk))
        return found

    def _usable_size(self, page_size: int) -> int:
        if self._usable is None:
            header = read_header(self.path, 100)
            self._usable = page_size - (header[20] if len(header) > 20 else 0)
        return self._usable

    def _columns(self) -> int:
        """How many columns a memories record has at most; the feed needs ``id`` first."""
        if self._memory_columns is None:
            info = self._query("PRAGMA table_info(memories)", ())
            if not info or info[0][1] != "id":
                raise _Unknown("the memories table does not start with its id column")
            self._memory_columns = len(info)
            self._column_names = tuple(row[1] for row in info)
        return self._memory_columns


class _Beyond(set):
    """A set of page numbers that also holds every page past ``count``."""

    def __init__(self, count: int, pages: set[int]) -> None:
        super().__init__(pages)
        self.count = count

    def __contains__(self, pgno: object) -> bool:
        return (isinstance(pgno, int) and self.count > 0 and pgno > self.count) or super().__contains__(pgno)


def _untouched(first: int | None, backfilled: int | None, page_size: int) -> bool:
    """Whether a checkpoint that copied ``backfilled`` frames left a page's copy in the database
    file as it was at the last look: the page's first frame since then (at offset ``first``) is
    past what it copied."""
    if first is None or backfilled is None:
        return False
    return (first - HEADER) // (FRAME_HEADER + page_size) + 1 > backfilled


def _backfilled(path: Path) -> int | None:
    """How many frames of the log a checkpoint has copied into the database file (``nBackfill``
    in ``-shm``), or None when it cannot be read."""
    try:
        data = read_header(f"{path}-shm", 100)
    except OSError:
        return None
    if len(data) < 100:
        return None
    return int.from_bytes(data[96:100], sys.byteorder)


__all__ = ["KEPT_PAGES", "MAX_IDS", "ChangeFeed", "LogEnd"]
