"""Keyboard paths through the window (F6 zones, Down from search, Enter/F2 to edit, Escape back).

The window's four zones are the sidebar, the search field, the memory table and the detail pane.
F6 and Shift+F6 move between them; Down in the search field goes to the first hit; Enter or F2 on
a row edits that memory in the detail pane (F2 on an importance, type or expiry cell edits that
cell in place: :mod:`.memories.cell_edit`); Escape there cancels the edit (its unsaved changes
are dropped) and returns to the table. Tab in the table
leaves the table instead of walking its cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QApplication, QWidget


class KeyboardPaths(QObject):
    """Installs the event filters and answers ``next_zone`` for the F6 actions."""

    def __init__(self, zones: Sequence[tuple[QWidget, Callable[[], QWidget]]], search: QWidget,
                 table: QAbstractItemView, detail: QWidget, editor: QWidget, parent: QObject | None = None) -> None:
        """``zones``: (area, the widget to focus in it), in F6 order."""
        super().__init__(parent)
        self.zones = list(zones)
        self.search, self.table, self.detail, self.editor = search, table, detail, editor
        table.setTabKeyNavigation(False)
        search.installEventFilter(self)
        table.installEventFilter(self)
        # Escape in the detail pane is a shortcut, not an event filter on each of its widgets: a
        # filter calls into Python for every paint and layout event of the pane (hundreds when a
        # memory is shown), each waiting for the GIL while a worker runs Python.
        back = QShortcut(QKeySequence(Qt.Key.Key_Escape), detail, context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        back.activated.connect(self._back_to_table)
        self._back = back

    def next_zone(self, step: int = 1) -> None:
        """Focus the next (``step`` 1) or previous (-1) visible zone after the one holding focus."""
        focus = QApplication.focusWidget()
        current = next((i for i, (area, _target) in enumerate(self.zones)
                        if focus is not None and (area is focus or area.isAncestorOf(focus))), -1)
        for offset in range(1, len(self.zones) + 1):
            area, target = self.zones[(current + step * offset) % len(self.zones)]
            widget = target()
            if area.isVisible() and widget.isVisible() and widget.isEnabled():
                widget.setFocus(Qt.FocusReason.TabFocusReason if step > 0 else Qt.FocusReason.BacktabFocusReason)
                return

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        key, mods = event.key(), event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        plain = mods == Qt.KeyboardModifier.NoModifier
        if watched is self.search and key == Qt.Key.Key_Down and plain:
            return self._to_table()
        if watched is self.table and plain and key == Qt.Key.Key_F2:
            cells = getattr(self.table, "cells", None)  # importance, type, expiry: edited in the cell
            if cells is not None and cells.start(self.table.currentIndex()):
                return True
        if watched is self.table and plain and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_F2):
            return self._edit_current()
        return False

    def _back_to_table(self) -> None:
        """Escape in the detail pane: a list popped up from the pane closes first; else the edit is
        cancelled (unsaved changes dropped, as in a spreadsheet's cell) and the table takes focus."""
        popup = QApplication.activePopupWidget()
        if popup is not None:
            popup.close()
            return
        revert = getattr(self.detail, "revert", None)
        if revert is not None:
            revert()
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def _to_table(self) -> bool:
        model = self.table.model()
        if model is None or model.rowCount() == 0 or not self.table.isVisible():
            return False
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)
        if not self.table.currentIndex().isValid():
            self.table.selectRow(0)
        return True

    def _edit_current(self) -> bool:
        if not self.table.currentIndex().isValid() or not self.editor.isEnabled():
            return False
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)
        return True


def keys(standard: QKeySequence.StandardKey, *extra: str) -> list[QKeySequence]:
    """The platform's keys for ``standard`` plus ``extra``, each once (a key listed twice on one
    action makes Qt report an ambiguous shortcut and ignore it)."""
    found: list[QKeySequence] = []
    for key in [*QKeySequence.keyBindings(standard), *(QKeySequence(k) for k in extra)]:
        if not key.isEmpty() and all(key != k for k in found):
            found.append(key)
    return found
