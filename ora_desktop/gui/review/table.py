"""The review list: one row per memory on the desk, keys for the decisions.

Single keys act on the selected rows while the list has focus: **R** (or Space) marks reviewed,
**F** flags with a note, **E** / **F2** / **Enter** edits, **S** supersedes, **Del** deletes
(recoverably). The list claims these keys from the window's shortcuts only while it has focus
(``ShortcutOverride``), so the window's own Delete and the rest stay unambiguous elsewhere.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from ...core.operations.review import ReviewItem
from ..formatting import exact, first_line, health_text, relative

KEYS = {
    Qt.Key.Key_R: "mark", Qt.Key.Key_Space: "mark", Qt.Key.Key_F: "flag", Qt.Key.Key_E: "edit",
    Qt.Key.Key_F2: "edit", Qt.Key.Key_Return: "edit", Qt.Key.Key_Enter: "edit", Qt.Key.Key_S: "supersede",
    Qt.Key.Key_Delete: "delete",
}
HEADERS = ["Why", "Content", "Type", "Imp.", "Health", "Changed"]
ATTENTION_COLOUR = "#c0392b"
FLAG_COLOUR = "#b9770e"


def short_reasons(item: ReviewItem) -> str:
    """``flagged · new · expiring`` — the reasons in a few words for the list."""
    words = {"flagged": "⚑ flagged", "new": "new", "changed": "changed", "important_low_health": "fading",
             "expiring": "expiring", "dangling_related_to": "dangling link", "malformed_related_to": "bad links",
             "dangling_superseded_by": "dangling chain", "supersession_cycle": "cycle"}
    return " · ".join(words.get(r, r.replace("_", " ")) for r in item.reasons)


class ReviewTable(QTableWidget):
    """See the module docstring; ``key_action(name)`` says which decision a key asked for."""

    key_action = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(HEADERS), parent)
        self.setObjectName("ReviewTable")
        self.setHorizontalHeaderLabels(HEADERS)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        for column, width in ((0, 170), (2, 90), (3, 44), (4, 56), (5, 100)):
            self.setColumnWidth(column, width)
        self.items: list[ReviewItem] = []

    def show_items(self, items: list[ReviewItem]) -> None:
        """Fill the list, keeping the current memory selected when it is still listed."""
        current = self.current_item()
        self.items = list(items)
        self.setRowCount(len(items))
        for row, item in enumerate(items):
            memory = item.memory
            why = QTableWidgetItem(short_reasons(item))
            why.setToolTip(item.describe())
            if "flagged" in item.reasons:
                why.setForeground(QColor(FLAG_COLOUR))
            elif item.needs_attention:
                why.setForeground(QColor(ATTENTION_COLOUR))
            content = QTableWidgetItem(first_line(memory.content, 200))
            content.setToolTip(first_line(memory.content, 600))
            changed_at = memory.updated_at or memory.created_at
            changed = QTableWidgetItem(relative(changed_at))
            changed.setToolTip(exact(changed_at))
            cells = [why, content, QTableWidgetItem(memory.type or ""), QTableWidgetItem(str(memory.importance or "")),
                     QTableWidgetItem(health_text(memory.health_score)), changed]
            for column, cell in enumerate(cells):
                self.setItem(row, column, cell)
        if current is not None:
            self.select_id(current.memory.id)

    def current_item(self) -> ReviewItem | None:
        row = self.currentRow()
        return self.items[row] if 0 <= row < len(self.items) and self.currentIndex().isValid() else None

    def selected_items(self) -> list[ReviewItem]:
        rows = sorted({i.row() for i in self.selectionModel().selectedRows()})
        chosen = [self.items[r] for r in rows if r < len(self.items)]
        if not chosen and self.current_item() is not None:
            chosen = [self.current_item()]
        return chosen

    def select_id(self, memory_id: str) -> bool:
        for row, item in enumerate(self.items):
            if item.memory.id == memory_id:
                self.selectRow(row)
                return True
        return False

    def event(self, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent)
                and self._action_for(event)):
            event.accept()  # the key comes to keyPressEvent instead of a window shortcut
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        action = self._action_for(event)
        if action:
            self.key_action.emit(action)
            event.accept()
            return
        super().keyPressEvent(event)

    @staticmethod
    def _action_for(event: QKeyEvent) -> str | None:
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if modifiers != Qt.KeyboardModifier.NoModifier:
            return None
        return KEYS.get(Qt.Key(event.key()))
