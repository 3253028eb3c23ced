"""The status bar's messages, kept: the whole of a long one on hover, the last ones in a list.

A status-bar message is cut to the bar's width and vanishes after a few seconds. ``MessageLog``
remembers the last :data:`KEEP` with their local time; the bar's tooltip shows the current one
whole, and View > Recent messages lists them all (selectable, to copy).
"""

from __future__ import annotations

from collections import deque
from datetime import datetime

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QListWidget,
    QStatusBar,
    QVBoxLayout,
    QWidget,
)

KEEP = 100


class MessageLog:
    """Shows ``text`` on ``bar`` and keeps it."""

    def __init__(self, bar: QStatusBar) -> None:
        self.bar = bar
        self.messages: deque[tuple[str, str]] = deque(maxlen=KEEP)
        self.dialog: QDialog | None = None
        bar.messageChanged.connect(lambda text: bar.setToolTip(text))

    def show(self, text: str, timeout_ms: int = 8000) -> None:
        self.messages.append((datetime.now().strftime("%H:%M:%S"), text))
        self.bar.showMessage(text, timeout_ms)
        if self.dialog is not None and self.dialog.isVisible():
            self._fill(self.dialog.findChild(QListWidget))

    def open_list(self, parent: QWidget) -> QDialog:
        """The recent messages, newest first, in a window of their own (opened, not exec'd)."""
        if self.dialog is None:
            dialog = QDialog(parent)
            dialog.setWindowTitle("Recent messages")
            dialog.resize(640, 360)
            layout = QVBoxLayout(dialog)
            listing = QListWidget(dialog)
            listing.setAccessibleName("Recent status messages")
            listing.setWordWrap(True)
            listing.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
            layout.addWidget(listing)
            buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
            buttons.rejected.connect(dialog.reject)
            layout.addWidget(buttons)
            self.dialog = dialog
        self._fill(self.dialog.findChild(QListWidget))
        self.dialog.open()
        return self.dialog

    def _fill(self, listing: QListWidget | None) -> None:
        if listing is None:
            return
        listing.clear()
        listing.addItems([f"{when}  {text}" for when, text in reversed(self.messages)])
