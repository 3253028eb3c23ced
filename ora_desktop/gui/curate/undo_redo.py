"""The window's Undo and Redo: the core journal of the file on screen, one history per file.

A thin Qt face over :mod:`ora_desktop.core.operations.undo`: the actions are named from the
file's journal (``next_steps``: "Undo edit importance of m004", "Redo import of 576 memories")
and run ``undo``/``redo`` on that file on a worker thread, after any step of the window still
running. The names are read again when the person switches files and whenever the file changes
(our writes, and another program's — ``ora-desktop undo`` in a terminal — heard through the
change feed as ``ctx.store_changed``), so the window and the command line walk one history.
The toolbar shows "Undo"/"Redo" only (``iconText``), so it does not move as step names change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from ...core import Change, OraError, Store
from ...core.operations.undo import NextSteps, Undone, next_steps, redo, undo
from ..context import AppContext, resolved
from ..detail.view import DetailPane

NOTHING = NextSteps(None, None)


def keys(standard: QKeySequence.StandardKey, *extra: str) -> list[QKeySequence]:
    """The platform's keys for ``standard`` plus ``extra``, each once (a key listed twice on one
    action makes Qt report an ambiguous shortcut and ignore it)."""
    found: list[QKeySequence] = []
    for key in [*QKeySequence.keyBindings(standard), *(QKeySequence(k) for k in extra)]:
        if not key.isEmpty() and all(key != k for k in found):
            found.append(key)
    return found


class UndoRedo(QObject):
    """See the module docstring. ``shown`` is emitted each time the actions were named anew."""

    shown = Signal(object)  # the NextSteps now on the actions

    def __init__(self, ctx: AppContext, serial: Callable[[], asyncio.Lock], detail: DetailPane,
                 window: QWidget) -> None:
        super().__init__(window)
        self.ctx, self.serial, self.detail = ctx, serial, detail
        self.steps = NOTHING
        self._path: Path | None = None  # the file the names were read from
        self._reading = False
        self._again = False
        self.undo_action = QAction("&Undo", window)
        self.undo_action.setIconText("Undo")
        self.undo_action.setShortcuts(keys(QKeySequence.StandardKey.Undo, "Ctrl+Z"))
        self.undo_action.triggered.connect(lambda _checked=False: self.undo())
        self.redo_action = QAction("&Redo", window)
        self.redo_action.setIconText("Redo")
        self.redo_action.setShortcuts(keys(QKeySequence.StandardKey.Redo, "Ctrl+Shift+Z", "Ctrl+Y"))
        self.redo_action.triggered.connect(lambda _checked=False: self.redo())
        self._show(NOTHING)
        ctx.current_changed.connect(self._current_changed)
        ctx.store_changed.connect(self._store_changed)

    # ----------------------------------------------------------------- naming the actions
    def _current_changed(self, *_args: object) -> None:
        self._show(NOTHING)  # the other file's steps are never offered for this one
        self.refresh()

    def _store_changed(self, path: object, _change: Change) -> None:
        current = self.ctx.current_path()
        if current is not None and path == resolved(current):
            self.refresh()

    def refresh(self) -> asyncio.Task | None:
        """Read the file on screen's next undo and redo steps (on a worker) and name the actions."""
        if self._reading:  # one read at a time; a change meanwhile reads once more after it
            self._again = True
            return None
        self._reading = True
        return asyncio.ensure_future(self._read(), loop=self.ctx.loop)

    async def _read(self) -> None:
        try:
            while True:
                self._again = False
                path = self.ctx.current_path()
                steps = NOTHING
                if path is not None:
                    try:
                        store = await self.ctx.run(self.ctx.store_for, path)
                        if not store.readonly:
                            steps = await self.ctx.run(next_steps, store)
                    except OraError:
                        steps = NOTHING  # the pane says what is wrong with the file
                if not self._again and path == self.ctx.current_path():
                    self._path = path
                    self._show(steps)
                    return
        finally:
            self._reading = False

    def _show(self, steps: NextSteps) -> None:
        self.steps = steps
        for action, text, word, key in ((self.undo_action, steps.undo_text, "Undo", "Ctrl+Z"),
                                         (self.redo_action, steps.redo_text, "Redo", "Ctrl+Shift+Z")):
            action.setEnabled(bool(text))
            action.setText(f"&{text}" if text else f"&{word}")
            action.setToolTip(f"{text} ({key})" if text else f"Nothing to {word.lower()} in this file")
            action.setStatusTip(action.toolTip())
        self.shown.emit(steps)

    # ----------------------------------------------------------------- undo and redo
    def undo(self) -> asyncio.Task | None:
        """Undo the latest step of the file on screen (whoever made it: window, terminal, agent)."""
        return self._step(undo, "Undo", "undid")

    def redo(self) -> asyncio.Task | None:
        """Redo the step of the file on screen undone last."""
        return self._step(redo, "Redo", "redid")

    def _step(self, work: Callable[[Store], Undone], verb: str, did: str) -> asyncio.Task | None:
        path = self.ctx.current_path()
        if path is None or path != self._path:
            return None  # the names are not yet read for this file: nothing is done blind
        return asyncio.ensure_future(self._run(path, work, verb, did), loop=self.ctx.loop)

    async def _run(self, path: Path, work: Callable[[Store], Undone], verb: str, did: str) -> None:
        async with self.serial():  # after the window's own steps still running
            try:
                store = await self.ctx.run(self.ctx.store_for, path)
                done = await self.ctx.run(work, store)
            except OraError as exc:
                self.ctx.show_error(f"{verb} failed: {exc}\n\nThe step stays in this file's history (Edit > "
                                    "Change history), so you can try again.", verb)
                self.refresh()
                return
            shown = self.detail.memory
            if shown is not None and self.detail.store is store and shown.id in done.change.changed:
                memory = await self.ctx.run(store.find, shown.id)
                if memory is not None and self.detail.memory is not None and self.detail.memory.id == memory.id:
                    self.detail.saved(memory)
        self.ctx.status.emit(f"{did.capitalize()} “{done.entry.label}” in {path.name}")
        self.refresh()
