"""The main window (skeleton; the features are added in their folders)."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QLabel, QMainWindow, QTabWidget

from .context import AppContext
from .panels import load_panels

log = logging.getLogger("ora_desktop.gui")


class MainWindow(QMainWindow):
    closed = Signal()

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.ctx = ctx
        ctx.window = self
        self.setWindowTitle("Ora Desktop")
        self.tabs = QTabWidget()
        self.tabs.addTab(QLabel("Memories"), "Memories")
        self.panels = dict(load_panels(ctx, self))
        for title, widget in self.panels.items():
            self.tabs.addTab(widget, title)
        self.setCentralWidget(self.tabs)
        ctx.status.connect(lambda text: self.statusBar().showMessage(text, 5000))

    def open_file(self, path: Path) -> None:
        self.ctx.set_current(Path(path))

    def start(self) -> None:
        self.ctx.start_watching()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        super().closeEvent(event)
        self.closed.emit()
