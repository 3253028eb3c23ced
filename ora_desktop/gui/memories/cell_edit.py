"""Editing importance, type and expiry in their table cells (F2 or a double-click on the cell).

An editor lies over the cell: a spin box for importance, the seed's types for type, a line for
the expiry (what ``ora-desktop edit --expires`` accepts: ``30m``, ``3h``, ``7d``, ``2w``, a date,
a time; empty clears). Enter saves, Escape cancels, leaving the cell saves. Core's validation
checks the value first: a bad one gives one line and changes nothing. The save is the window's
edit step (core ``edits.edit`` with the version the cell showed, so a write by another program
since then refuses it; one undo step), run by whoever connects :attr:`CellEditing.edited`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QAbstractItemView, QApplication, QComboBox, QLineEdit, QSpinBox, QWidget

from ...core import InvalidValue, Memory
from ...core.schema import IMPORTANCE_RANGE, MEMORY_TYPES
from ...core.validation import clean_fields
from .columns import COLUMNS
from .model import MemoryTableModel

#: The columns edited in place, and the memory field each one edits.
EDITABLE = {"importance": "importance", "type": "type", "expires": "expires_at"}
_LABELS = {"importance": "Importance", "type": "Type", "expires_at": "Expiry"}
_ENTER = (Qt.Key.Key_Return, Qt.Key.Key_Enter)


def shown_value(memory: Memory, field: str) -> Any:
    """``memory``'s ``field`` as an edit gives it (an expiry as SQL's text)."""
    from ...core.operations.edits import field_values  # not at start-up: see gui/panels.py

    return field_values(memory, [field])[field]


def make_editor(field: str, memory: Memory, parent: QWidget) -> QWidget:
    """The editor for ``field``, holding ``memory``'s value."""
    if field == "importance":
        spin = QSpinBox(parent)
        spin.setRange(*IMPORTANCE_RANGE)
        spin.setValue(memory.importance or IMPORTANCE_RANGE[0])
        spin.setButtonSymbols(QSpinBox.ButtonSymbols.NoButtons)  # a narrow column: Up and Down step it
        spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        spin.selectAll()
        editor: QWidget = spin
    elif field == "type":
        combo = QComboBox(parent)
        combo.addItems(list(MEMORY_TYPES))
        if memory.type not in MEMORY_TYPES and memory.type:
            combo.addItem(memory.type)  # a value the seed does not allow: shown, refused if kept
        combo.setCurrentText(memory.type or "")
        editor = combo
    else:
        line = QLineEdit(shown_value(memory, field) or "", parent)
        line.setPlaceholderText("30m, 3h, 7d, 2w, 2026-12-31; empty: never")
        line.selectAll()
        editor = line
    editor.setObjectName(f"CellEditor-{field}")
    editor.setAccessibleName(_LABELS[field])
    editor.setAccessibleDescription("Enter saves, Escape cancels")
    return editor


def set_editor_value(editor: QWidget, value: Any) -> None:
    """Put back a value :func:`editor_value` read (an edit carried over a re-read of the list)."""
    if isinstance(editor, QSpinBox):
        editor.setValue(int(value))
    elif isinstance(editor, QComboBox):
        editor.setCurrentText(str(value))
    elif isinstance(editor, QLineEdit):
        editor.setText(str(value))
        editor.deselect()


def editor_value(editor: QWidget) -> Any:
    """What the person chose in ``editor``, as given (checked by core before it is saved)."""
    if isinstance(editor, QSpinBox):
        editor.interpretText()
        return editor.value()
    if isinstance(editor, QComboBox):
        return editor.currentText()
    assert isinstance(editor, QLineEdit)
    return editor.text().strip()


class CellEditing(QObject):
    """One cell editor at a time over a :class:`~.view.MemoryTable`."""

    #: (the file, the memory as the cell showed it, {field: checked value}): save it.
    edited = Signal(object, object, dict)
    note = Signal(str)  # a line for the status bar (a refused value, a cancel)

    def __init__(self, table: QAbstractItemView, model: MemoryTableModel) -> None:
        super().__init__(table)
        self.table, self.model = table, model
        self.editor: QWidget | None = None
        self._index = QPersistentModelIndex()
        self._memory: Memory | None = None
        self._field = ""
        self._path: Path | None = None
        #: An edit carried over a re-read of the list: (memory, field, path, value, column).
        self._carried: tuple[Memory, str, Path, Any, int] | None = None
        # Qt deletes a cell's editor with its row: close it first. A re-read of the list (a search
        # read again after another program's write) reopens it on the memory's new row, with what
        # was typed; only a memory that left the list ends the edit, saying nothing was saved.
        model.modelAboutToBeReset.connect(self._carry)
        model.modelReset.connect(self._reopen)
        model.rowsAboutToBeRemoved.connect(self._rows_removing)

    def editable(self, index: QModelIndex | QPersistentModelIndex) -> bool:
        """Whether ``index``'s cell is edited in place."""
        return index.isValid() and COLUMNS[index.column()].key in EDITABLE

    def start(self, index: QModelIndex | QPersistentModelIndex) -> bool:
        """Open the editor on ``index``'s cell; False when that cell is not edited in place."""
        if not self.editable(index):
            return False
        memory, store = self.model.memory_at(index.row()), self.model.store
        if memory is None or store is None:
            return True  # its row is still being read: nothing to edit yet
        if store.readonly:
            self.note.emit(f"{store.path.name} is open read-only; nothing can be changed")
            return True
        self.cancel(quietly=True)
        self.table.scrollTo(index)
        self._open(QModelIndex(index), EDITABLE[COLUMNS[index.column()].key], memory, store.path)
        return True

    def _open(self, index: QModelIndex, field: str, memory: Memory, path: Path, value: Any = None) -> None:
        """Lay the editor of ``field`` over ``index``'s cell, holding ``value`` (``None``: the
        memory's); ``memory`` is the version a save must find unchanged."""
        self._field, self._memory, self._path = field, memory, path
        self._index = QPersistentModelIndex(index)
        editor = make_editor(field, memory, self.table.viewport())
        if value is not None:
            set_editor_value(editor, value)
        self.editor = editor
        for widget in (editor, *editor.findChildren(QWidget)):
            widget.installEventFilter(self)
        self.table.setIndexWidget(index, editor)
        editor.setFocus(Qt.FocusReason.OtherFocusReason)

    def commit(self) -> None:
        """Check the editor's value and hand it on to be saved (a bad value: one line, nothing saved)."""
        editor, memory, field, path = self.editor, self._memory, self._field, self._path
        if editor is None or memory is None or path is None:
            return
        value = editor_value(editor)
        self._close()
        try:
            checked = clean_fields({field: value})[field]
        except InvalidValue as exc:
            self.note.emit(f"Not saved — {_LABELS[field].lower()} {exc}".replace(f" {field}: ", ": "))
            return
        if checked == shown_value(memory, field):
            return  # unchanged: nothing to save, nothing to undo
        self.edited.emit(path, memory, {field: checked})

    def cancel(self, quietly: bool = False) -> None:
        """Close the editor without saving."""
        if self.editor is None:
            return
        self._close()
        if not quietly:
            self.note.emit("Edit cancelled; nothing changed")

    def _carry(self) -> None:
        editor, memory, path = self.editor, self._memory, self._path
        if editor is None or memory is None or path is None:
            return
        self._carried = (memory, self._field, path, editor_value(editor), self._index.column())
        self._close()

    def _reopen(self) -> None:
        carried, self._carried = self._carried, None
        if carried is None:
            return
        memory, field, path, value, column = carried
        store = self.model.store
        row = self.model.row_of_key(memory.rowid) if store is not None and store.path == path else None
        if row is None:
            self.note.emit("Edit closed unsaved: the memory left the list")
            return
        self._open(self.model.index(row, column), field, memory, path, value)

    def _rows_removing(self, _parent: QModelIndex, first: int, last: int) -> None:
        if self.editor is not None and first <= self._index.row() <= last:
            self._dropped("the memory left the list")

    def _dropped(self, why: str) -> None:
        if self.editor is not None:
            self._close()
            self.note.emit(f"Edit closed unsaved: {why}")

    def _close(self) -> None:
        editor, index = self.editor, self._index
        self.editor, self._memory = None, None
        if editor is None:
            return
        for widget in (editor, *editor.findChildren(QWidget)):
            widget.removeEventFilter(self)
        had_focus = editor.isAncestorOf(self.table.focusWidget() or editor) or editor.hasFocus()
        if index.isValid():
            self.table.setIndexWidget(QModelIndex(index), None)  # type: ignore[arg-type]
        editor.hide()
        editor.deleteLater()
        if had_focus:
            self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if self.editor is None:
            return False
        kind = event.type()
        if kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            popup = isinstance(self.editor, QComboBox) and self.editor.view().isVisible()
            if event.key() in _ENTER and not popup:
                self.commit()
                return True
            if event.key() == Qt.Key.Key_Escape and not popup:
                self.cancel()
                return True
        elif (kind == QEvent.Type.FocusOut and isinstance(event, QFocusEvent)
              and event.reason() != Qt.FocusReason.PopupFocusReason):
            QTimer.singleShot(0, self, self._left)  # once focus has landed where it went
        return False

    def _left(self) -> None:
        """Focus left the editor: leaving the cell saves, as in a spreadsheet."""
        editor = self.editor
        if editor is None:
            return
        focus = QApplication.focusWidget()
        if focus is not None and (focus is editor or editor.isAncestorOf(focus)):
            return
        if isinstance(editor, QComboBox) and editor.view().isVisible():
            return
        self.commit()
