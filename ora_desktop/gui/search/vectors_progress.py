"""``VectorsProgress``: the first search by meaning of a file shows its vectors being built.

A file with no vectors yet is embedded before it can be searched by meaning (about a minute
and a half per million memories). Instead of a table that seems frozen, the search bar shows
this strip: a progress bar counting memories embedded, and Cancel. The build runs on a worker
thread (``ctx.run``); progress hops to the GUI thread through ``ctx.from_thread``. When it
ends the search runs. A cancelled build keeps what it embedded, and Cancel sticks: searches
match words (the controller says so in its note) and the strip offers Build, which carries on
where the build stopped. Both count every memory of the file (a resumed build starts at what
was kept, of the same total), and a Cancel says how many were done. The strip's last message
goes when it no longer applies (words mode, another file).
"""

from __future__ import annotations

import asyncio
import logging
import threading

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from ...core import OraError, Store
from ..context import AppContext

log = logging.getLogger("ora_desktop.gui")


def needs_vectors(store: Store) -> bool:
    """True when a search by meaning of ``store`` would first have to embed the whole file."""
    # Imported here (it brings the search engine and the index builder): the window starts
    # without it and preloads it once its first rows are painted (gui/panels.import_later).
    from ...core.search.semantic import has_vectors

    try:
        return not has_vectors(store.path)
    except OraError:
        return False  # the search itself will say what is wrong


class VectorsProgress(QWidget):
    """Progress bar and Cancel for building one file's vectors (hidden when idle)."""

    #: True when the vectors were built, False when cancelled or failed.
    finished = Signal(bool)
    #: The Store whose build the person cancelled.
    cancelled = Signal(object)
    #: The person pressed Build (after a Cancel or a failure).
    build_asked = Signal()

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("VectorsProgress")
        self.ctx = ctx
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        layout.addWidget(self.label)
        self.bar = QProgressBar()
        self.bar.setTextVisible(True)
        layout.addWidget(self.bar, 1)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop embedding (what is done is kept; Build carries on)")
        self.cancel_button.clicked.connect(self.cancel)
        layout.addWidget(self.cancel_button)
        self.build_button = QPushButton("Build")
        self.build_button.setToolTip("Build the meaning index of this file (carries on from what was embedded)")
        self.build_button.clicked.connect(self.build_asked)
        layout.addWidget(self.build_button)
        self._stop: threading.Event | None = None
        self._task: asyncio.Future | None = None
        self.building: Store | None = None
        #: (file, done, total) of the last build's progress: what a Cancel says was done.
        self.counts: tuple[object, int, int] | None = None
        self.hide()

    def build(self, store: Store) -> None:
        """Embed ``store``'s memories in the background (ignored while a build runs)."""
        if self.building is not None:
            return
        self.building = store
        self._stop = threading.Event()
        self.label.setText(f"Preparing search by meaning for {store.path.name}:")
        self.bar.setRange(0, 0)  # busy until the total is known
        self.cancel_button.setEnabled(True)
        self.bar.show()
        self.cancel_button.show()
        self.build_button.hide()
        self.show()
        self._task = asyncio.ensure_future(self._run(store, self._stop), loop=self.ctx.loop)

    def cancel(self) -> None:
        if self._stop is not None:
            self._stop.set()
            self.cancel_button.setEnabled(False)
            self.label.setText("Cancelling…")

    def show_declined(self, store: Store | None) -> None:
        """Say that ``store``'s build was cancelled, with Build; None: the last message goes
        (nothing changes while a build runs)."""
        if self.building is not None:
            return
        if store is None:
            self.hide()
            return
        self._stopped(self._cancelled_text(store))

    def _cancelled_text(self, store: Store) -> str:
        done = ""
        if self.counts is not None and self.counts[0] == store.path:
            done = f"{self.counts[1]:,} of {self.counts[2]:,} memories embedded; "
        return f"{done}cancelled: searches match words until you press Build (what was embedded is kept)"

    def _stopped(self, why: str) -> None:
        self.bar.hide()
        self.cancel_button.hide()
        self.build_button.show()
        self.label.setText(f"Search by meaning stopped: {why}")
        self.show()

    def _report(self, done: int, total: int) -> None:  # worker thread
        self.ctx.from_thread(self._on_progress, done, total)

    def _on_progress(self, done: int, total: int) -> None:
        if self.building is None:
            return
        self.counts = (self.building.path, done, total)
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(min(done, total))
        self.bar.setFormat(f"{done:,} of {total:,} memories embedded")

    async def _run(self, store: Store, stop: threading.Event) -> None:
        from ...core.search.semantic import ensure_vectors

        ok = False
        message = ""
        try:
            await self.ctx.run(ensure_vectors, store.path, self._report, stop)
            ok = True
        except OraError as exc:
            message = str(exc)
        except Exception as exc:  # the window must not crash on a worker's error
            log.exception("building vectors")
            message = f"building the vectors failed: {exc}"
        self.building = None
        self._stop = None
        if ok:
            self.hide()
        else:  # the strip stays, saying why, until it no longer applies or Build is pressed
            self._stopped(self._cancelled_text(store) if stop.is_set() else message)
        self.finished.emit(ok)
        if not ok and stop.is_set():
            self.cancelled.emit(store)
