"""Keep the sidebar's width: readable when the window shrinks, back when it grows again.

A dock keeps its width while the window shrinks until the central widget can give no more; then
it is squeezed, and Qt never widens it again. This remembers the width a person chose (by
dragging the dock's edge) and restores it, within a third of the window, whenever the window
grows and the dock is narrower than that.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow


class DockWidthKeeper(QObject):
    """Watches ``window`` and its ``dock``; ``wanted`` is the width to come back to."""

    def __init__(self, window: QMainWindow, dock: QDockWidget, wanted: int) -> None:
        super().__init__(window)
        self.window, self.dock, self.wanted = window, dock, wanted
        self._window_width = window.width()
        window.installEventFilter(self)
        dock.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() != QEvent.Type.Resize:
            return False
        if watched is self.window:
            grew = self.window.width() > self._window_width
            self._window_width = self.window.width()
            if grew and self._docked() and self.dock.width() < self.wanted:
                QTimer.singleShot(0, self.restore)
        elif watched is self.dock and self._docked() and self.window.width() == self._window_width \
                and self.window.isVisible():
            self.wanted = max(self.dock.width(), self.dock.minimumSizeHint().width())  # dragged by a person
        return False

    def _docked(self) -> bool:
        return self.dock.isVisible() and not self.dock.isFloating()

    def restore(self) -> None:
        """Widen the dock back to ``wanted`` (at most a third of the window)."""
        target = min(self.wanted, self.window.width() // 3)
        if self._docked() and self.dock.width() < target:
            self.window.resizeDocks([self.dock], [target], Qt.Orientation.Horizontal)
