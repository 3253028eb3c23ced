"""The window's Undo and Redo: the core journal of the file on screen, one history per file.

A thin Qt face over :mod:`ora_desktop.core.operations.undo`: the actions are named from the
file's journal (``journal.next_steps``: "Undo edit importance of m004", "Redo import of 576 memories")
and run ``undo``/``redo`` on that file on a worker thread. Each runs the very step it names (by
journal entry): a step taken back meanwhile by another program is refused, never swapped for the
one before. A press while a step runs, or while the names are being read, waits for the names
that follow it, so Ctrl+Z pressed three times takes back three steps, newest first. The names
are read again when the person switches files and whenever the file changes (our writes, and
another program's — ``ora-desktop undo`` in a terminal — heard through the change feed as
``ctx.store_changed``), so the window and the command line walk one history.
The toolbar shows "Undo"/"Redo" only (``iconText``), so it does not move as step names change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from ...core import Change, OraError, Store
from ..context import AppContext, resolved
from ..detail.view import DetailPane
from ..keyboard import keys

if TYPE_CHECKING:
    from ...core.operations.journal import NextSteps
    from ...core.operations.undo import Undone

# The journal and undo operations are imported on a worker thread when first needed (the window
# starts without them, as ``gui/panels.import_later`` does for the other operations).
PAST = {"undo": "undid", "redo": "redid"}


def _next_steps(store: Store) -> NextSteps:
    from ...core.operations.journal import next_steps

    return next_steps(store)


def _take(which: str, entry_id: int) -> Callable[[Store], Undone]:
    """The core undo or redo of journal entry ``entry_id`` (run on a worker)."""
    def work(store: Store) -> Undone:
        from ...core.operations import undo

        return (undo.undo if which == "undo" else undo.redo)(store, entry_id)
    return work


class UndoRedo(QObject):
    """See the module docstring. ``shown`` is emitted each time the actions were named anew."""

    shown = Signal(object)  # the NextSteps now on the actions

    def __init__(self, ctx: AppContext, serial: Callable[[], asyncio.Lock], detail: DetailPane,
                 window: QWidget) -> None:
        super().__init__(window)
        self.ctx, self.serial, self.detail = ctx, serial, detail
        self.steps: NextSteps | None = None  # None: nothing to undo or redo (or not read yet)
        self._path: Path | None = None  # the file the names were read from
        self._reading = False
        self._again = False
        self._running = False  # an undo or redo of ours is under way
        self._pending: list[str] = []  # presses waiting for the names that follow the step before
        self.undo_action = QAction("&Undo", window)
        self.undo_action.setIconText("Undo")
        self.undo_action.setShortcuts(keys(QKeySequence.StandardKey.Undo, "Ctrl+Z"))
        self.undo_action.triggered.connect(lambda _checked=False: self.undo())
        self.redo_action = QAction("&Redo", window)
        self.redo_action.setIconText("Redo")
        self.redo_action.setShortcuts(keys(QKeySequence.StandardKey.Redo, "Ctrl+Shift+Z", "Ctrl+Y"))
        self.redo_action.triggered.connect(lambda _checked=False: self.redo())
        self._show(None)
        ctx.current_changed.connect(self._current_changed)
        ctx.store_changed.connect(self._store_changed)

    # ----------------------------------------------------------------- naming the actions
    def _current_changed(self, *_args: object) -> None:
        self._pending.clear()  # presses meant for the other file
        self._show(None)  # the other file's steps are never offered for this one
        self.refresh()

    def _store_changed(self, path: object, _change: Change) -> None:
        current = self.ctx.current_path()
        if current is not None and path == resolved(current):
            self.refresh(written=True)

    def refresh(self, written: bool = False) -> asyncio.Task | None:
        """Read the file on screen's next undo and redo steps (on a worker) and name the actions.
        ``written``: after a write to it, whose step may be the newest: Undo stays pressable
        meanwhile, and a press waits for the names (Ctrl+Z right after an edit is never lost)."""
        if written and self._path is not None and self._path == self.ctx.current_path():
            self.undo_action.setEnabled(True)
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
                steps = None
                if path is not None:
                    try:
                        store = await self.ctx.run(self.ctx.store_for, path)
                        if not store.readonly:
                            steps = await self.ctx.run(_next_steps, store)
                    except OraError:
                        steps = None  # the pane says what is wrong with the file
                if not self._again and path == self.ctx.current_path():
                    self._path = path
                    break
        finally:
            self._reading = False
        self._show(steps)
        if self._pending:
            self._press(self._pending.pop(0))

    def _show(self, steps: NextSteps | None) -> None:
        self.steps = steps
        texts = (steps.undo_text, steps.redo_text) if steps is not None else ("", "")
        for action, text, word, key in ((self.undo_action, texts[0], "Undo", "Ctrl+Z"),
                                         (self.redo_action, texts[1], "Redo", "Ctrl+Shift+Z")):
            action.setEnabled(bool(text))
            action.setText(f"&{text}" if text else f"&{word}")
            action.setToolTip(f"{text} ({key})" if text else f"Nothing to {word.lower()} in this file")
            action.setStatusTip(action.toolTip())
        self.shown.emit(steps)

    # ----------------------------------------------------------------- undo and redo
    def undo(self) -> asyncio.Task | None:
        """Undo the step Undo names: the latest of the file on screen (whoever made it)."""
        return self._press("undo")

    def redo(self) -> asyncio.Task | None:
        """Redo the step Redo names: the one of the file on screen undone last."""
        return self._press("redo")

    def _press(self, which: str) -> asyncio.Task | None:
        path = self.ctx.current_path()
        if path is None:
            return None
        if self._running or self._reading or self.serial().locked() or path != self._path:
            self._pending.append(which)  # names are about to change: act on the ones that follow
            if self.serial().locked():
                asyncio.ensure_future(self._after_steps(), loop=self.ctx.loop)
            return None
        step = None if self.steps is None else self.steps.undo if which == "undo" else self.steps.redo
        if step is None:
            return None
        self._running = True
        return asyncio.ensure_future(self._run(path, _take(which, step.id), which.capitalize(), PAST[which]),
                                     loop=self.ctx.loop)

    async def _after_steps(self) -> None:
        """Read the names once the window's steps under way are done (a press waits for them)."""
        async with self.serial():
            pass
        self.refresh()

    async def _run(self, path: Path, work: Callable[[Store], Undone], verb: str, did: str) -> None:
        try:
            done = await self._apply(path, work, verb)
        finally:
            self._running = False
            self.refresh(written=True)
            if verb == "Undo" and path == self._path:
                self.redo_action.setEnabled(True)  # a Redo pressed at once waits for its name too
        if done is not None:
            said = f"{did.capitalize()} “{done.entry.label}” in {path.name}"
            self.ctx.status.emit(f"{done.note}. {said}" if done.note else said)

    async def _apply(self, path: Path, work: Callable[[Store], Undone], verb: str) -> Undone | None:
        async with self.serial():  # after the window's own steps still running
            try:
                store = await self.ctx.run(self.ctx.store_for, path)
                done = await self.ctx.run(work, store)
            except OraError as exc:
                self._pending.clear()  # the presses after a refused one are not carried on
                self.ctx.show_error(f"{verb} failed: {exc}\n\nNothing was changed; the step is still offered, "
                                    "so you can try again.", verb)
                return None
            shown = self.detail.memory
            if shown is not None and self.detail.store is store and shown.id in done.change.changed:
                memory = await self.ctx.run(store.find, shown.id)
                if memory is not None and self.detail.memory is not None and self.detail.memory.id == memory.id:
                    self.detail.saved(memory)
        return done
