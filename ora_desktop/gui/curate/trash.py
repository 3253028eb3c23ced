"""``DeletedView``: the memories deleted from a file (the recoverable trash), to restore."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)

from ...core import DeletedMemory, OraError, Store
from ..context import AppContext
from ..formatting import exact, first_line, relative
from ..sortable import SORT_ROLE, KeyedTreeItem, filling, moment, sortable

TRASH_ROLE = Qt.ItemDataRole.UserRole + 40


class DeletedView(QDialog):
    """Lists the trash of the current file; "Restore" brings the selected memories back (undoable)."""

    restore_requested = Signal(object, object)  # path, list of trash ids
    purge_requested = Signal(object, object)  # path, list of memory ids (Delete permanently…)
    empty_requested = Signal(object)  # path (Empty trash…)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DeletedView")
        self.setWindowTitle("Deleted memories")
        self.resize(760, 440)
        self.ctx = ctx
        self.store: Store | None = None
        self.entries: list[DeletedMemory] = []
        layout = QVBoxLayout(self)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        self.list = QTreeWidget()
        self.list.setRootIsDecorated(False)
        self.list.setHeaderLabels(["Content", "Deleted", "Why", "Type", "Id"])
        self.list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.list.header().setStretchLastSection(False)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.itemSelectionChanged.connect(self._selection)
        sortable(self.list, 1)  # newest deletion first; a click on a header sorts by that column
        layout.addWidget(self.list, 1)
        #: What the last restore from this view did (and what it took back first, if anything).
        self.said = QLabel()
        self.said.setObjectName("TrashStatus")
        self.said.setWordWrap(True)
        layout.addWidget(self.said)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.restore_button = QPushButton("&Restore selected")
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(self._restore)
        buttons.addButton(self.restore_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.purge_button = QPushButton("Delete &permanently…")
        self.purge_button.setEnabled(False)
        self.purge_button.clicked.connect(self._purge)
        buttons.addButton(self.purge_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.empty_button = QPushButton("&Empty trash…")
        self.empty_button.clicked.connect(self._empty)
        buttons.addButton(self.empty_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        ctx.store_changed.connect(self._store_changed)

    def _store_changed(self, path: object, _change: object) -> None:
        if self.store is not None and path == self.store.path.resolve() and self.isVisible():
            self.reload()

    def show_for(self, store: Store | None) -> None:
        self.store = store
        self.said.clear()
        self.reload()
        self.open()

    def reload(self) -> asyncio.Task:
        return asyncio.ensure_future(self._reload(), loop=self.ctx.loop)

    async def _reload(self) -> None:
        store = self.store
        if store is None:
            self.heading.setText("Select a file first.")
            self.list.clear()
            return
        try:
            entries = await self.ctx.run(store.trash, 5000)
        except OraError as exc:
            self.heading.setText(str(exc))
            return
        if store is not self.store:
            return
        self.entries = entries
        self.list.clear()
        with filling(self.list):
            for entry in entries:
                m = entry.memory
                item = KeyedTreeItem([first_line(m.content, 200), relative(entry.deleted_at), entry.reason,
                                      m.type or "", m.id])
                item.setToolTip(0, m.content[:600])
                item.setToolTip(1, exact(entry.deleted_at))
                item.setToolTip(2, entry.reason)  # the column is narrow: the whole reason on hover
                item.setData(1, SORT_ROLE, moment(entry.deleted_at))  # by the moment, not by "3 h ago"
                item.setData(0, TRASH_ROLE, entry.trash_id)
                self.list.addTopLevelItem(item)
        name = store.path.name
        self.heading.setText(
            f"{len(entries):,} deleted memor{'y' if len(entries) == 1 else 'ies'} kept in {name}. "
            "Select some and press Restore." if entries else f"Nothing has been deleted from {name}.")
        self._selection()

    def _selection(self) -> None:
        writable = self.store is not None and not self.store.readonly
        self.restore_button.setEnabled(writable and bool(self.list.selectedItems()))
        self.purge_button.setEnabled(writable and bool(self.list.selectedItems()))
        self.empty_button.setEnabled(writable and bool(self.entries))

    def _purge(self) -> None:
        chosen = {item.data(0, TRASH_ROLE) for item in self.list.selectedItems()}
        ids = list(dict.fromkeys(e.memory.id for e in self.entries if e.trash_id in chosen))
        if ids and self.store is not None:
            self.purge_requested.emit(self.store.path, ids)

    def _empty(self) -> None:
        if self.store is not None:
            self.empty_requested.emit(self.store.path)

    def _restore(self) -> None:
        ids = [item.data(0, TRASH_ROLE) for item in self.list.selectedItems()]
        if ids and self.store is not None:
            self.restore_requested.emit(self.store.path, ids)
