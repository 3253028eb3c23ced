"""*Stored values*: a memory's row exactly as stored (every column, its SQLite storage class),
with the editable columns editable, as DB Browser for SQLite shows a row.

Typed text becomes a value as the command line reads it: empty is NULL, ``related_to`` is a JSON
list, a count a whole number; core's validation then checks each (``validation.clean_fields``),
and a valid change is saved through the window's undoable edit (the detail pane's Save path).
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core import InvalidValue, Memory
from ...core.operations.stored import StoredValue
from ...core.validation import clean_fields
from ..a11y import describe
from ..theme import styled


def shown(value: Any) -> str:
    """How a stored value is written in the table (NULL as empty, bytes as hex)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return "x'" + value.hex() + "'"
    return str(value)


def typed(column: str, text: str) -> Any:
    """The value a person means by ``text`` in ``column`` (validated afterwards by core)."""
    text = text.strip()
    if text == "":
        return [] if column == "related_to" else None
    if column == "related_to":
        try:
            return json.loads(text)
        except ValueError:
            raise InvalidValue("related_to", f"{text!r} is not a JSON list of memory ids") from None
    if column == "access_count":
        try:
            return int(text)
        except ValueError:
            raise InvalidValue("access_count", f"{text!r} is not a whole number of 0 or more") from None
    return text


class StoredValuesDialog(QDialog):
    """The row of ``memory``; ``save_requested(memory, changes)`` with validated changes."""

    save_requested = Signal(object, object)

    def __init__(self, memory: Memory, values: list[StoredValue], read_only: bool, parent: QWidget | None = None):
        super().__init__(parent)
        self.memory, self.values = memory, values
        self.setWindowTitle(f"Stored values of {memory.id}")
        self.resize(720, 540)
        self.table = QTableWidget(len(values), 3)
        describe(self.table, "Stored values", "Every column of the memory as stored; editable columns can be changed")
        self.table.setHorizontalHeaderLabels(["Column", "Stored as", "Value"])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        for row, value in enumerate(values):
            for column, text in enumerate((value.column, value.storage, shown(value.value))):
                item = QTableWidgetItem(text[:2000] if column == 2 else text)
                if column != 2 or not value.editable or read_only or (isinstance(value.value, str)
                                                                       and len(value.value) > 2000):
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(row, column, item)
        self.message = QLabel()
        styled(self.message, "ValidationMessage")
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Close)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setEnabled(False)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Empty is NULL; related_to is a JSON list. Updated time and sync status follow "
                                "the sync rule; Ctrl+Z in the window undoes a save."))
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.table.itemChanged.connect(lambda _item: self._check())

    def changes(self) -> dict[str, Any]:
        """The edited columns as the values a person means (``InvalidValue`` names the first bad
        one); core validates them again as it writes."""
        raw = {}
        for row, value in enumerate(self.values):
            item = self.table.item(row, 2)
            if item is not None and item.flags() & Qt.ItemFlag.ItemIsEditable and item.text() != shown(value.value):
                raw[value.column] = typed(value.column, item.text())
        clean_fields(raw)
        return raw

    def _check(self) -> bool:
        try:
            ready = bool(self.changes())
            self.message.setText("")
        except InvalidValue as exc:
            self.message.setText(str(exc))
            ready = False
        self.save_button.setEnabled(ready)
        return ready

    def save(self) -> None:
        if self._check():
            self.save_requested.emit(self.memory, self.changes())
            self.accept()
