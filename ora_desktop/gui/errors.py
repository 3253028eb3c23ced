"""Errors reach people as words: readable messages, and a details dialog for the unexpected.

``describe(exc)`` turns an exception into a sentence (an ``OraError`` already is one);
``ErrorDialog`` shows a message with copyable details and is opened with ``open()``, never
``exec()``, so it is safe from coroutines. ``install_excepthook`` routes uncaught exceptions
(Qt slots, asyncio tasks) to that dialog and to the log, and the app keeps running.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import sys
import traceback
from types import TracebackType
from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..core import OraError

log = logging.getLogger("ora_desktop.gui")


def describe(exc: BaseException) -> str:
    """A sentence for a person: the error's own message, or what kind of thing went wrong."""
    if isinstance(exc, OraError):
        return str(exc)
    if isinstance(exc, PermissionError):
        return f"Permission denied: {exc.filename or exc}"
    if isinstance(exc, FileNotFoundError):
        return f"File not found: {exc.filename or exc}"
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}"
    if isinstance(exc, sqlite3.Error):
        return f"The database reported a problem: {exc}"
    text = str(exc).strip()
    return f"Something went wrong ({type(exc).__name__}){f': {text}' if text else ''}."


class ErrorDialog(QDialog):
    """A message with the full details below it (selectable) and a "Copy details" button."""

    def __init__(self, title: str, message: str, details: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("ErrorDialog")
        layout = QVBoxLayout(self)
        self.message = QLabel(message)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(self.message.textInteractionFlags() | _selectable())
        layout.addWidget(self.message)
        self.details = QPlainTextEdit(details)
        self.details.setReadOnly(True)
        self.details.setVisible(bool(details))
        self.details.setMinimumSize(560, 220)
        layout.addWidget(self.details)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        if details:
            copy = QPushButton("Copy details")
            copy.clicked.connect(self.copy_details)
            buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout.addWidget(buttons)

    def copy_details(self) -> None:
        QGuiApplication.clipboard().setText(f"{self.message.text()}\n\n{self.details.toPlainText()}")


def _selectable() -> Any:
    from PySide6.QtCore import Qt

    return Qt.TextInteractionFlag.TextSelectableByMouse


#: Dialogs currently shown, kept referenced so Python does not collect them while open.
_OPEN: list[QDialog] = []


def show_error(parent: QWidget | None, exc: BaseException | str, title: str = "Ora Desktop") -> ErrorDialog:
    """Show an expected error (bad input, locked file …) as a plain message, non-blocking."""
    message = exc if isinstance(exc, str) else describe(exc)
    if not isinstance(exc, str):
        log.warning("%s: %s", title, message)
    return _open(ErrorDialog(title, message, "", parent))


def show_unexpected(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None,
                    parent: QWidget | None = None) -> ErrorDialog | None:
    """Log an unexpected exception and show it with copyable details; the app keeps running."""
    details = "".join(traceback.format_exception(exc_type, exc, tb))
    log.error("Unexpected error:\n%s", details)
    if QApplication.instance() is None:
        return None
    message = (
        f"{describe(exc)}\n\nOra Desktop keeps running. If this keeps happening, copy the "
        "details below into a bug report."
    )
    return _open(ErrorDialog("Unexpected error", message, details, parent or _active_window()))


def _active_window() -> QWidget | None:
    app = QApplication.instance()
    return app.activeWindow() if isinstance(app, QApplication) else None


def _open(dialog: ErrorDialog) -> ErrorDialog:
    _OPEN.append(dialog)
    dialog.finished.connect(lambda _result: _OPEN.remove(dialog) if dialog in _OPEN else None)
    dialog.open()
    return dialog


def install_excepthook(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Route uncaught exceptions (slots, tasks) to :func:`show_unexpected` instead of dying."""

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        if isinstance(exc, OraError):  # an expected error that escaped a slot: words, no traceback
            log.warning("%s", exc)
            show_error(_active_window(), exc)
            return
        show_unexpected(exc_type, exc, tb)

    sys.excepthook = hook
    if loop is not None:
        loop.set_exception_handler(_loop_handler)


def _loop_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    exc = context.get("exception")
    if exc is None:
        log.warning("asyncio: %s", context.get("message"))
        return
    if isinstance(exc, asyncio.CancelledError):
        return
    sys.excepthook(type(exc), exc, exc.__traceback__)
