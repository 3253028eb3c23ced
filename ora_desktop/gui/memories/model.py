"""``MemoryTableModel``: a million memories as an array of rowids, rows fetched lazily.

Like Anki's browser table, the model holds only ``store.row_keys()`` (8 bytes a row) and
fetches the rows it is asked to show, a page at a time, with ``store.by_rowids()`` on a worker
thread (``ctx.run``). Pages arrive asynchronously; until then a row shows a placeholder.
The cache is bounded (least recently used pages go) and stale-aware: after a write, changed rows
keep showing their old values until the fresh ones arrive, and answers to outdated requests are
dropped (a generation number). Sorting re-queries the row keys in the new order.
The keys, the cached pages and how a write moves them are Qt-free state
(:class:`~ora_desktop.views.table.TableState`); this model reads keys and pages on the worker and
forwards the state's row movements to Qt. After a write (a ``Change``, ours or another program's
read by the change feed), ``views.refresh`` decides: the changed rows are repainted in place
(``dataChanged`` on those rows only, their cached values replaced), new rows are inserted where
they sort and gone rows removed (``rowsInserted``/``rowsRemoved``: selection and scroll stay), or,
when that cannot be told, the keys are read again (``key_reads`` counts those reads).
A loader with a ``first(store, query)`` attribute (search) has its first screenful shown at once,
then the rest appended below the rows already shown (selection and scroll position stay).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QModelRoleDataSpan, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

from ...core import Change, ListQuery, Memory, OraError, Store, timestamps
from ...views.first_rows import FIRST_ROWS
from ...views.refresh import merge_changes, plan_refresh
from ...views.table import Edited, KeyLoader, TableEvents, TableState, default_loader
from ..context import AppContext
from ..resources import icon
from .columns import COLUMNS, Column
from .health_bar import health_bar

log = logging.getLogger("ora_desktop.gui")

MEMORY_ROLE = Qt.ItemDataRole.UserRole + 1
HEALTH_ROLE = Qt.ItemDataRole.UserRole + 2
ID_ROLE = Qt.ItemDataRole.UserRole + 3
Index = QModelIndex | QPersistentModelIndex
DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
DECORATION = int(Qt.ItemDataRole.DecorationRole.value)
ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole.value)
FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
FONT = int(Qt.ItemDataRole.FontRole.value)
RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)
DIRTY_COLOR = QColor("#d98a1c")
#: The roles :meth:`MemoryTableModel.data` can answer (a delegate also asks for check state,
#: background and more, for every cell).
#: The columns with a decoration: the sync state's icon, the health bar.
_DECORATED = frozenset({"sync", "health"})
_ANSWERED = frozenset({DISPLAY, TOOLTIP, DECORATION, ALIGNMENT, FOREGROUND, FONT,
                       int(MEMORY_ROLE), int(HEALTH_ROLE), int(ID_ROLE)})


@functools.cache
def _italic() -> QFont:
    font = QFont()
    font.setItalic(True)
    return font


def _now(_cache: list = [0.0, None]) -> datetime:  # noqa: B006 (a deliberate one-second cache)
    """The current time, recomputed at most once a second (painting asks for it per cell)."""
    tick = time.monotonic()
    if _cache[1] is None or tick - _cache[0] > 1.0:
        _cache[0], _cache[1] = tick, timestamps.now()
    return _cache[1]


class MemoryTableModel(QAbstractTableModel):
    """Table model over one store's memories (see the module docstring)."""

    loading = Signal(bool)
    loaded = Signal(int)  # the row count after a (re)load, or after rows were repainted in place
    failed = Signal(object)

    def __init__(self, ctx: AppContext, parent: Any = None, page_size: int = 100, cache_pages: int = 60) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.store: Store | None = None
        #: The store the current ``keys`` were read from (``store`` may already be the next file's).
        self.keys_store: Store | None = None
        self._loading_store: Store | None = None
        self.loader: KeyLoader = default_loader
        root = QModelIndex()
        self.state = TableState(page_size, cache_pages, TableEvents(
            removing=lambda row: self.beginRemoveRows(root, row, row),
            removed=lambda _row: self.endRemoveRows(),
            inserting=lambda row: self.beginInsertRows(root, row, row),
            inserted=lambda _row: self.endInsertRows(),
            changed=self._emit_rows,
        ))
        self.page_size = page_size
        self.highlight_terms: tuple[str, ...] = ()
        self.columns: tuple[Column, ...] = COLUMNS
        self._wanted: OrderedDict[int, None] = OrderedDict()
        self._fetching = False
        self._generation = 0
        self._reload_task: asyncio.Task | None = None
        self._changes: list[Change] = []  # writes not handled yet
        self._refresh_task: asyncio.Task | None = None
        #: How many times every row key was read (the loader run over the whole list).
        self.key_reads = 0
        #: While ``loaded`` is emitted after an in-place repaint: ``(before, after)``, the memories
        #: as cached before the write and as they are now, when every changed memory is one of them
        #: (derived views such as the facets can then follow the edit without counting again);
        #: a row inserted has ``None`` before, a row removed ``None`` after; ``None`` otherwise.
        self.edited: Edited | None = None
        #: While ``loaded`` is emitted: True when that load only put the same rows in another
        #: order (a sort), so what is counted over them (the facets) still holds.
        self.reordered = False
        self._reordering = False  # the running reload is a sort's
        ctx.store_changed.connect(self._on_store_changed)

    # The state's fields, as the views and tests read them.
    @property
    def keys(self) -> array:
        return self.state.keys

    @property
    def query(self) -> ListQuery:
        """What is listed: filters (parsed), sort order."""
        return self.state.query

    @query.setter
    def query(self, query: ListQuery) -> None:
        self.state.query = query

    @property
    def _pages(self) -> OrderedDict[int, dict[int, Memory]]:
        return self.state.pages

    @property
    def rows_repainted(self) -> int:
        """How many rows were repainted in place after writes (no key read)."""
        return self.state.rows_repainted

    @property
    def select_top(self) -> bool:
        """The next load selects the top row (a new question was asked)."""
        return self.state.select_top

    @select_top.setter
    def select_top(self, value: bool) -> None:
        self.state.select_top = value

    # ----------------------------------------------------------------- source
    def set_store(self, store: Store | None, query: ListQuery | None = None, loader: KeyLoader | None = None,
                  reload: bool = True) -> None:
        """Show ``store`` (or nothing) filtered by ``query``; reloads in the background unless the
        caller reloads itself (one query instead of two racing for the same file)."""
        self.store = store
        if query is not None:
            self.query = query
        if loader is not None:
            self.loader = loader
        if reload:
            self.reload()

    def set_query(self, query: ListQuery, loader: KeyLoader | None = None) -> None:
        self.query = query
        self.loader = loader or default_loader
        self.reload()

    def show_keys(self, keys: array, query: ListQuery, loader: KeyLoader) -> None:
        """Show row keys computed elsewhere (a search answer) for ``query``, with no query of its
        own; ``loader`` computes them again after a write or a sort."""
        if self._reload_task is not None and not self._reload_task.done():
            self._reload_task.cancel()
        self._generation += 1
        self._reordering = False
        self.query, self.loader = query, loader
        self._loading_store = self.store
        self._replace_keys(keys, keep_rows=False)
        self._finish(self._generation)

    def reload(self, keep_rows: bool = False, reorder: bool = False) -> asyncio.Task:
        """Re-query the row keys (cancelling a reload in progress); returns the task.
        ``reorder``: only the order changed (a sort), not which rows are listed."""
        if self._reload_task is not None and not self._reload_task.done():
            self._reload_task.cancel()
        self._reload_task = asyncio.ensure_future(self._reload(keep_rows, reorder), loop=self.ctx.loop)
        return self._reload_task

    async def _reload(self, keep_rows: bool, reorder: bool = False) -> None:
        self._generation += 1
        generation = self._generation
        self._reordering = reorder
        store, loader = self.store, self.loader
        self._loading_store = store
        query = self.query.with_(limit=None, after=None)
        self.loading.emit(True)
        try:
            if store is not None and not keep_rows and loader is default_loader and query.order_by != "dirty":
                # A first screenful at once (LIMIT: a top-N sort), then every key (appended below).
                first_query = query.with_(limit=FIRST_ROWS)
                first = await self.ctx.first_rows(store, first_query)  # read while the window started
                ahead = None if first is None else await self.ctx.first_memories()  # and its rows
                if first is None:
                    first = await self.ctx.run(loader, store, first_query)
                if generation != self._generation:
                    return
                self._replace_keys(first, keep_rows=False, rows=ahead)
                if len(first) < FIRST_ROWS:
                    self._finish(generation)
                    return
                await self._first_rows_shown()
                if generation != self._generation:
                    return
            if store is None:
                keys = array("q")
            else:
                self.key_reads += 1
                keys = await self.ctx.run(loader, store, query)
        except OraError as exc:
            if generation == self._generation:
                self.loading.emit(False)
                self.failed.emit(exc)
            return
        if generation != self._generation:
            return
        if keep_rows and keys == self.keys:
            self._mark_all_stale()
        elif not keep_rows and len(self.keys) and keys[:len(self.keys)] == self.keys:
            if len(keys) > len(self.keys):  # the rest after the first screenful: rows are appended
                self.beginInsertRows(QModelIndex(), len(self.keys), len(keys) - 1)
                self.state.extend(keys)
                self.endInsertRows()
        else:
            self._replace_keys(keys, keep_rows)
        self._finish(generation)

    async def _first_rows_shown(self, limit: float = 0.25) -> None:
        """Until the rows on screen are fetched (a view asks for them as it paints), at most
        ``limit`` seconds: reading every key next runs Python on a worker for seconds at 1M,
        and the GUI thread paints those first rows slower while it competes for the GIL."""
        started = time.monotonic()
        await asyncio.sleep(0.02)  # the view paints the placeholders and asks for its rows
        while (self._wanted or self._fetching) and time.monotonic() - started < limit:
            await asyncio.sleep(0.005)
        await asyncio.sleep(0)  # and repaints them

    def _replace_keys(self, keys: array, keep_rows: bool, rows: Sequence[Memory] | None = None) -> None:
        """``rows``: memories already read for the first keys (a search answer's first page, the
        launch's read-ahead): their whole pages are cached before the view sees the keys, so its
        first paint shows them."""
        self.beginResetModel()
        self.state.replace_keys(keys, keep_rows, rows)
        self.keys_store = self._loading_store
        self._wanted.clear()
        self.endResetModel()

    def _finish(self, generation: int) -> None:
        if generation == self._generation:
            self.loading.emit(False)
            self.reordered = self._reordering
            try:
                self.loaded.emit(len(self.keys))
            finally:
                self.reordered = False

    # ----------------------------------------------------------------- Qt model API
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.state.keys)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.columns)

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        """As Qt's own, in one call into Python (Qt's asks :meth:`rowCount` and :meth:`columnCount`:
        two calls per cell painted)."""
        if parent.isValid() or not (0 <= row < len(self.state.keys) and 0 <= column < len(self.columns)):
            return QModelIndex()
        return self.createIndex(row, column)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        column = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.title
        if role == Qt.ItemDataRole.ToolTipRole:
            return column.help or None
        if role == Qt.ItemDataRole.TextAlignmentRole and column.numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    # flags(): QAbstractTableModel's own (enabled, selectable, no children), answered in C++: a
    # Python override is one more call into Python per cell painted.

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        # Called for every cell and role on each paint (seven roles a cell, unless through
        # multiData): the roles no cell answers, or that the column alone answers, before the row.
        if role not in _ANSWERED:
            return None
        row = index.row()
        if row < 0 or row >= len(self.state.keys):
            return None
        return self._value(row, self.columns[index.column()], role)

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan) -> None:  # noqa: N802, N803
        """Every role a delegate asks for, in one call (Qt's default calls :meth:`data` once per
        role: each call into Python from the painting thread may wait for the GIL a worker holds).
        Every item is set or cleared: a delegate reuses its span from cell to cell."""
        row = index.row()
        if not 0 <= row < len(self.state.keys):
            for item in roleDataSpan:
                item.clearData()
            return
        column = self.columns[index.column()]
        memory = self._memory(row)  # once per cell, not once per role
        for item in roleDataSpan:
            role = item.role()
            value = self._answer(memory, column, role) if role in _ANSWERED else None
            if value is None:
                item.clearData()
            else:
                item.setData(value)

    def _value(self, row: int, column: Column, role: int) -> Any:
        """The value of one answered role at ``row`` (a valid row) and ``column``."""
        if role == ALIGNMENT or (role == DECORATION and column.key not in _DECORATED):
            return self._answer(None, column, role)  # the column alone answers: no fetch
        return self._answer(self._memory(row), column, role)

    def _answer(self, memory: Memory | None, column: Column, role: int) -> Any:
        """The value of one answered role of ``memory`` (None: not fetched yet) in ``column``."""
        if role == ALIGNMENT:
            return RIGHT if column.numeric else None
        if role == DECORATION and column.key not in _DECORATED:
            return None
        if memory is None:
            return "…" if role == DISPLAY and column.key == "content" else None
        if role == DISPLAY:
            return column.display(memory)
        if role == FOREGROUND:
            if memory.superseded_by or (memory.expires_at is not None and memory.expires_at < _now()):
                return QApplication.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
            return DIRTY_COLOR if column.key == "dirty" else None
        if role == DECORATION:
            if column.key == "health":
                return health_bar(memory.health_score)
            return icon(f"sync-{memory.sync_status}" if memory.sync_status else "sync-unknown")
        if role == TOOLTIP:
            return column.tooltip(memory) if column.tooltip else None
        if role == MEMORY_ROLE:
            return memory
        if role == ID_ROLE:
            return memory.id
        if role == HEALTH_ROLE:
            return memory.health_score
        if role == FONT and memory.superseded_by:
            return _italic()
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Re-query the keys ordered by ``column`` (off the GUI thread)."""
        if not 0 <= column < len(self.columns):
            return
        descending = order == Qt.SortOrder.DescendingOrder
        if not self.state.sort(self.columns[column].sort, descending) and self.keys:
            return
        self.reload(reorder=self.keys_store is self.store)  # the same rows in another order

    # ----------------------------------------------------------------- rows
    def _memory(self, row: int) -> Memory | None:
        memory, wanted = self.state.cached(row)  # once per cell painted
        if wanted:
            self._want(row // self.page_size)
        return memory

    def memory_at(self, row: int) -> Memory | None:
        """The memory shown at ``row`` if it is loaded (``None`` while it is being fetched)."""
        return self.state.memory_at(row)

    def row_of_key(self, rowid: int) -> int | None:
        """The row listing ``rowid``, or ``None``."""
        return self.state.row_of_key(rowid)

    async def memories_for_rows(self, rows: Sequence[int]) -> list[Memory]:
        """The memories at ``rows``, in row order, as fresh as every write already reported makes
        them: a refresh under way (e.g. after the window's own edit or undo) is awaited first, since
        a bulk edit passes their versions back; rows not loaded are fetched now."""
        rows = sorted(set(r for r in rows if 0 <= r < len(self.keys)))
        rowids = [self.keys[r] for r in rows]  # the keys may be read again while the refresh runs
        refresh = self._refresh_task
        if refresh is not None and not refresh.done():
            await asyncio.wait([refresh])
        cached = self.state.fresh_rows()
        missing = [rid for rid in rowids if rid not in cached]
        fetched: dict[int, Memory] = {}
        if missing and self.store is not None:
            fetched = {m.rowid: m for m in await self.ctx.run(self.store.by_rowids, missing)}
        out = []
        for rowid in rowids:
            memory = cached.get(rowid) or fetched.get(rowid)
            if memory is not None:
                out.append(memory)
        return out

    def is_loading(self) -> bool:
        return self._reload_task is not None and not self._reload_task.done()

    # ----------------------------------------------------------------- page fetching
    def _want(self, page_no: int) -> None:
        if page_no in self._wanted:
            self._wanted.move_to_end(page_no)
            return
        self._wanted[page_no] = None
        if not self._fetching:
            self._fetching = True
            self.ctx.loop.call_soon(self._start_fetch)

    def _start_fetch(self) -> None:
        task = asyncio.ensure_future(self._fetch_wanted(), loop=self.ctx.loop)
        task.add_done_callback(self._fetch_done)

    def _fetch_done(self, task: asyncio.Task) -> None:
        self._fetching = False
        if task.cancelled():
            return
        if task.exception() is not None:
            try:
                self.failed.emit(task.exception())
            except RuntimeError:  # the model was deleted with its window
                return
        elif self._wanted:
            self._fetching = True
            self.ctx.loop.call_soon(self._start_fetch)

    async def _fetch_wanted(self) -> None:
        """Fetch the most recently wanted pages (older wishes are dropped: the view scrolled on)."""
        store, generation, writes = self.store, self._generation, self.rows_repainted
        if store is None or not self._wanted:
            self._wanted.clear()
            return
        recent = list(self._wanted)[-4:]
        dropped = list(self._wanted)[:-4]
        self._wanted.clear()
        asked = {page_no: self.state.page_keys(page_no) for page_no in recent}
        rowids = [rowid for keys in asked.values() for rowid in keys]
        memories = await self.ctx.run(store.by_rowids, rowids)
        if generation != self._generation or store is not self.store:
            return
        by_rowid = {m.rowid: m for m in memories}
        for page_no in recent:
            # Rows repainted meanwhile: this page may have been read before that write. Keys
            # listed anew meanwhile (a reload's, in the same generation: the view painted the old
            # ones while the new were read): this page may lack rows it lists now. Either way it
            # is kept, to be read again.
            fresh = writes == self.rows_repainted and self.state.page_keys(page_no) == asked[page_no]
            self.state.store_page(page_no, by_rowid, fresh=fresh)
            start = page_no * self.page_size
            self._emit_rows(start, start + len(self.state.page_keys(page_no)) - 1)
        self.state.trim()
        for page_no in dropped:  # repaint them: if still visible the view asks again
            start = page_no * self.page_size
            self._emit_rows(start, min(start + self.page_size, len(self.keys)) - 1)

    def _emit_rows(self, first: int, last: int) -> None:
        if last >= first and last < len(self.keys):
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self.columns) - 1))

    def _mark_all_stale(self) -> None:
        self.state.stale.update(self._pages)
        self._refresh_stale()

    def _refresh_stale(self) -> None:
        """Re-fetch the most recently used stale pages now (the rest when they are shown)."""
        recent = [p for p in self._pages if p in self.state.stale][-4:]
        for page_no in recent:
            self._want(page_no)

    # ----------------------------------------------------------------- refresh after writes
    def _on_store_changed(self, path: object, change: Change) -> None:
        """A write to the shown file: repaint the rows it changed, or read the keys again when
        rows can have come, gone or moved (``views.refresh`` decides). Changes that
        arrive while one is being handled are handled together afterwards."""
        if self.store is None or path != self.store.path.resolve():
            return
        self._changes.append(change)
        if self._refresh_task is None or self._refresh_task.done():
            self._refresh_task = asyncio.ensure_future(self._follow_changes(), loop=self.ctx.loop)

    async def _follow_changes(self) -> None:
        while self._changes:
            change, self._changes = merge_changes(self._changes), []
            try:
                await self._follow(change)
            except OraError as exc:
                self.failed.emit(exc)
            except asyncio.CancelledError:
                # This task is ``self._refresh_task``; asking asyncio for the current task would
                # raise once the loop has stopped (a window closed at the end of a session).
                task = self._refresh_task
                if task is not None and task.cancelling():
                    raise  # this task itself was cancelled (the window is closing)
                # The reload awaited was replaced by one the person started (another search,
                # sort or file): that one reads the keys after this write, so it is covered.

    async def _follow(self, change: Change) -> None:
        """Follow one (merged) change. A reload already under way is waited for, not restarted
        (at 1M a key read takes a second or more: restarting it at every write would never let
        it finish); the plan then runs on the keys it read, which may or may not hold the write
        (a row listed already is not inserted again)."""
        for _attempt in range(3):
            store = self.store
            if store is None:
                return
            await self._loaded()
            if store is not self.store:
                return  # another file is shown: its load read it after the write
            if self.keys_store is not store:
                log.debug("reloading the row keys: the keys listed were another file's")
                await self.reload(keep_rows=True)
                return
            keys, generation = self.keys, self._generation
            plan = await self.ctx.run(plan_refresh, store, self.query.with_(limit=None, after=None), keys, change,
                                      self.loader is not default_loader)
            if store is not self.store:
                return
            if generation == self._generation and keys is self.keys and not self.is_loading():
                break
        else:
            log.debug("reloading the row keys: the keys kept changing while the write was planned")
            await self.reload(keep_rows=True)
            return
        if plan.reload:
            log.debug("reloading the row keys: %s", plan.reason)
            await self.reload(keep_rows=True)
            return
        moving = bool(plan.inserts or plan.removes)
        if moving:
            self._generation += 1  # page reads in flight were cut by the old rows: drop their answers
        self.edited = self.state.apply(plan, every_change_listed=len(plan.rows) == len(change.changed))
        try:
            self.loaded.emit(len(self.keys))  # derived views (facets, counts) follow the new values
        finally:
            self.edited = None

    async def _loaded(self) -> None:
        """Until no reload of the keys is under way (one replaced by another is waited for too)."""
        while self.is_loading():
            task = self._reload_task
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                refresh = self._refresh_task
                if refresh is not None and refresh.cancelling():
                    raise  # this follow itself was cancelled (the window is closing)
            except OraError:
                return  # reported by the reload; the keys are as they were
