"""Edit > Change history: the file's undo journal as a table — every journalled step, from the
window, the command line or an agent, newest first (what ``ora-desktop undo --list`` prints).
It is read again whenever the file changes, so a step undone in a terminal leaves it at once."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from ...core import Change, OraError, Store
from ...core.operations import journal
from ..a11y import describe
from ..context import resolved
from ..jobs.widgets import cell, local_time, readonly_table
from ..sortable import filling, keyed, moment, sortable


class HistoryDialog(QDialog):
    """The journal of ``store``; read on a worker when opened."""

    def __init__(self, ctx, store: Store, parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.ctx, self.store = ctx, store
        self.setWindowTitle(f"Change history of {store.path.name}")
        self.resize(760, 420)
        self.note = QLabel("Reading…")
        self.note.setWordWrap(True)
        self.table = describe(sortable(readonly_table(["Step", "When", "Kind", "By", "What"]), 0),
                              "Change history", "Every journalled change of this file, newest first (a click "
                              "on a column header sorts by it); Ctrl+Z undoes the newest")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.task: asyncio.Task | None = None
        ctx.store_changed.connect(self._store_changed)

    def _store_changed(self, path: object, _change: Change) -> None:
        if self.isVisible() and path == resolved(self.store.path):
            self.refresh()

    def refresh(self) -> asyncio.Task:
        self.task = asyncio.ensure_future(self._fill(), loop=self.ctx.loop)
        return self.task

    async def _fill(self) -> None:
        try:
            entries = await self.ctx.run(journal.entries, self.store)
        except OraError as exc:
            self.note.setText(str(exc))
            return
        with filling(self.table):
            self.table.setRowCount(len(entries))
            for row, entry in enumerate(entries):
                by = getattr(entry, "actor", None) or entry.initiator.value
                cells = (keyed(str(entry.id), entry.id), keyed(local_time(entry.at), moment(entry.at)),
                         cell(entry.kind.value), cell(by), cell(entry.label, entry.label))
                for column, item in enumerate(cells):
                    self.table.setItem(row, column, item)
        self.note.setText(f"The last {len(entries)} journalled steps of {self.store.path}, from every window, "
                          "command line and agent; 'ora-desktop undo' and Ctrl+Z take back the newest first, "
                          "'ora-desktop redo' and Ctrl+Shift+Z do it again."
                          if entries else "Nothing journalled yet in this file.")
