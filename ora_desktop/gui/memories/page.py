"""``MemoryBrowser``: the Memories tab — search bar, facets, the table, the detail pane.

It follows ``ctx.current``: opening the selected file on a worker thread and showing its
memories; the search controller decides what the table lists.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from ...core import CorruptFile, Memory, OraError, Store
from ..context import AppContext
from ..detail.view import DetailPane
from ..search.controller import SearchController
from ..search.widgets import EverywhereView, FacetPanel, SearchBar
from ..theme import styled
from .model import MemoryTableModel
from .view import MemoryTable

log = logging.getLogger("ora_desktop.gui")


class MemoryBrowser(QWidget):
    """See the module docstring."""

    store_shown = Signal(object)  # Store | None
    counts_changed = Signal(int, int)  # rows listed, rows selected
    #: The all-sites list is shown with this many hits (-1: the table is shown again).
    hits_shown = Signal(int)
    recover_asked = Signal(object)  # the damaged file's Path: the person pressed Recover

    def __init__(self, ctx: AppContext, parent: QWidget | None = None, detail: DetailPane | None = None) -> None:
        """``detail``: the detail pane, if built already (the launch builds it in a turn of its own)."""
        super().__init__(parent)
        self.setObjectName("MemoryBrowser")
        self.ctx = ctx
        self.store: Store | None = None
        self._hit_task: asyncio.Task | None = None
        self._open_task: asyncio.Task | None = None
        self._select_after_load: str | None = None
        self.model = MemoryTableModel(ctx, self)
        self.table = MemoryTable(self.model, ctx.settings)
        self.controller = SearchController(ctx, self.model, self)
        self.search = SearchBar(self.controller)
        self.facets = FacetPanel(self.controller)
        self.everywhere = EverywhereView()
        self.detail = detail if detail is not None else DetailPane(ctx)
        self.message = QLabel()
        styled(self.message, "EmptyState")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        # A damaged file offers Recover here, in the pane, rather than a dialog on a click.
        self.recover_button = QPushButton("&Recover what can be read…")
        self.recover_button.setAccessibleDescription("Salvage the readable memories into a new file")
        self.recover_button.hide()
        self.recover_button.clicked.connect(lambda: self.recover_asked.emit(self._damaged))
        self._damaged: Path | None = None
        self.message_page = QWidget()
        message_column = QVBoxLayout(self.message_page)
        message_column.addStretch(1)
        message_column.addWidget(self.message)
        message_column.addWidget(self.recover_button, 0, Qt.AlignmentFlag.AlignHCenter)
        message_column.addStretch(1)
        self.center = QStackedWidget()
        self.center.addWidget(self.table)
        self.center.addWidget(self.everywhere)
        self.center.addWidget(self.message_page)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("BrowserSplitter")
        self.splitter.addWidget(self.facets)
        self.splitter.addWidget(self.center)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setStretchFactor(2, 2)
        self.splitter.setSizes([200, 680, 390])
        self.splitter.setCollapsible(1, False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.search)
        layout.addWidget(self.splitter, 1)

        ctx.current_changed.connect(self.show_item)
        ctx.store_forgotten.connect(self._store_forgotten)
        self.table.current_memory.connect(self._current_memory)
        self.table.selection_size.connect(lambda n: self.counts_changed.emit(self.model.rowCount(), n))
        self.model.loaded.connect(self._loaded)
        self.model.failed.connect(lambda exc: ctx.show_error(exc))
        self.controller.query_changed.connect(self._highlight)
        self.controller.everywhere_ready.connect(self._everywhere)
        self.controller.note.connect(lambda text: ctx.status.emit(text) if text else None)
        self.search.scope.currentIndexChanged.connect(lambda _i: self._update_center())
        self.search.field.textChanged.connect(lambda _t: self._update_center())
        self.detail.follow.connect(self.follow)
        self.detail.leave_refused.connect(lambda memory_id, _problem: self.follow(memory_id))
        self.everywhere.open_hit.connect(self.open_hit)
        self.everywhere.hit_selected.connect(self._hit_selected)
        self.show_message("Select an agent on the left, or open a .site.db file (Ctrl+O).")

    # ----------------------------------------------------------------- the file
    def show_item(self, item: object) -> None:
        path = self.ctx.current_path()
        if self._open_task is not None and not self._open_task.done():
            self._open_task.cancel()
        if path is None:
            self._set_store(None)
            self.show_message("Select an agent on the left, or open a .site.db file (Ctrl+O).")
            return
        self._open_task = asyncio.ensure_future(self._open(path), loop=self.ctx.loop)

    def _store_forgotten(self, path: object) -> None:
        """The shown file was replaced (a restore): open it again, so actions and views follow."""
        if self.store is not None and self.store.path.resolve() == path:
            self.show_item(self.ctx.current)

    async def _open(self, path: Path) -> None:
        try:
            store = await self.ctx.run(self.ctx.store_for, path)
        except OraError as exc:
            self._set_store(None)
            self.show_message(f"This file cannot be opened.\n\n{exc}")
            if isinstance(exc, CorruptFile):  # damaged: say what can be done, in the pane (no dialog)
                self._damaged = Path(path)
                self.recover_button.show()
            self.ctx.status.emit(str(exc))
            return
        self._set_store(store)
        for warning in store.warnings:
            self.ctx.status.emit(f"{store.path.name}: {warning}")

    def _set_store(self, store: Store | None) -> None:
        self.store = store
        if store is None:
            self.facets.clear()  # no file listed: no counts (not the previous file's)
        self.detail.show_memory(None, store)
        self.model.set_store(store, reload=False)
        self.controller.apply()  # reloads the model with the current search and filters
        self._update_center()
        self.store_shown.emit(store)

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.recover_button.hide()
        self.center.setCurrentWidget(self.message_page)



    def _update_center(self) -> None:
        if self.controller.scope == "all" and self.search.field.text().strip():
            if self.center.currentWidget() is not self.everywhere:
                self.center.setCurrentWidget(self.everywhere)
                self.detail.show_memory(None, None)  # nothing of the file listed before stays editable
                self.facets.show_unavailable("Facets count one file; pick a hit to open its file")
                self.hits_shown.emit(len(self.everywhere.hits))
        elif self.store is not None:
            if self.center.currentWidget() is self.everywhere:  # back from all sites: the table's row again
                self.center.setCurrentWidget(self.table)
                self._current_memory(self.table.current_memory_now())
                self.hits_shown.emit(-1)
                self.counts_changed.emit(self.model.rowCount(), self.table.selected_count())
            self.center.setCurrentWidget(self.table)
        elif self.center.currentWidget() is not self.message_page:
            self.center.setCurrentWidget(self.message_page)

    # ----------------------------------------------------------------- rows
    def _current_memory(self, memory: Memory | None) -> None:
        if self.center.currentWidget() is self.everywhere:
            return  # the all-sites list is shown: the detail pane follows its hits, not the hidden table
        self.detail.show_memory(memory, self.store)

    def _loaded(self, count: int) -> None:
        self.counts_changed.emit(count, self.table.selected_count())
        if self.store is not None and self.center.currentWidget() is self.message_page:
            self._update_center()
        if self._select_after_load:
            memory_id, self._select_after_load = self._select_after_load, None
            self.follow(memory_id)
        elif (self.table.currentIndex().isValid() is False and count and self.detail.memory is None
              and self.center.currentWidget() is self.table):
            self.table.select_row(0)

    def _highlight(self, query: object) -> None:
        """Mark what the search matches, stem-aware (core's spans), in the table, the all-sites
        list and the detail pane. The table is not repainted here: the request that changed the
        query replaces its rows next (a model reset paints them with these marks), and a repaint
        now would draw the previous rows once more, a second full table paint per keystroke."""
        self.table.set_query(query)  # type: ignore[arg-type]
        self.everywhere.highlight.set_query(query)
        self.detail.set_query(query)
        self.everywhere.viewport().update()

    def _everywhere(self, hits: list, note: str) -> None:
        self.everywhere.show_hits(hits, note)
        if self.center.currentWidget() is self.everywhere:
            self.hits_shown.emit(len(hits))
        self.ctx.status.emit(f"{len(hits):,} hits across all sites" + (f" — {note}" if note else ""))

    def follow(self, memory_id: str) -> asyncio.Task | None:
        """Show a memory by id: select its row when listed, else show it in the detail pane."""
        store = self.store
        if store is None:
            return None

        async def run() -> None:
            memory = await self.ctx.run(store.find, memory_id)
            if memory is None:
                self.ctx.status.emit(f"No memory with id {memory_id} in {store.path.name}")
                return
            row = self.model.row_of_key(memory.rowid)
            if row is None:
                self.table.clearSelection()
                self.table.setCurrentIndex(QModelIndex())  # reloads must not bring a listed row back
                self.detail.show_memory(memory, store)
                self.ctx.status.emit("That memory is not in the current list (filtered out or superseded)")
                return
            self.table.select_row(row)
            self.detail.show_memory(memory, store)
        return asyncio.ensure_future(run(), loop=self.ctx.loop)

    def _hit_selected(self, hit: object) -> None:
        """A hit of the all-sites list is current: show that memory, from its own file."""
        if self._hit_task is not None and not self._hit_task.done():
            self._hit_task.cancel()
        if hit is None:
            self.detail.show_memory(None, None)
            return

        async def show() -> None:
            try:
                store = await self.ctx.run(self.ctx.store_for, hit.path)
                memory = await self.ctx.run(store.find, hit.memory.id)
            except OraError as exc:
                self.ctx.status.emit(str(exc))
                return
            self.detail.show_memory(memory, store)

        self._hit_task = asyncio.ensure_future(show(), loop=self.ctx.loop)

    def open_hit(self, path: Path, memory_id: str) -> None:
        """Open a hit from the all-sites results in its own file."""
        self.search.scope.setCurrentIndex(0)
        self._select_after_load = memory_id
        if self.ctx.current_path() is not None and self.ctx.current_path().resolve() == Path(path).resolve():
            self.follow(memory_id)
            self._select_after_load = None
        else:
            target = Path(path).resolve()
            agent = self.ctx.home.agent_for(target)
            self.ctx.set_current(agent or target)

    async def selected_memories(self) -> list[Memory]:
        return await self.model.memories_for_rows(self.table.selected_rows())
