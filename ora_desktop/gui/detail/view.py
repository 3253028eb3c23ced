"""``DetailPane``: the selected memory in full — editor, links, chain, access, health.

Related memories and the supersession chain are read on a worker thread whenever the shown
memory, its links or its place in a chain change (not when the same memory is shown again after
an edit of its other fields: the first chain after any write to a large file costs a scan). Saving is not done here:
``save_requested(base, changes)`` goes to the curate actions, which push an undoable command and
handle a conflicting write.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from ...core import Chain, Change, InvalidValue, Memory, OraError, Store
from ..a11y import describe
from ..context import AppContext
from ..fonts import relative_font
from ..formatting import exact, first_line, relative
from ..theme import styled
from .editor import MemoryEditor
from .health import explain
from .link_picker import LinkPicker
from .stored import StoredValuesDialog

if TYPE_CHECKING:
    from ...core.operations.memory_history import MemoryHistory

log = logging.getLogger("ora_desktop.gui")
ID_ROLE = Qt.ItemDataRole.UserRole + 30


#: The related list and the chain are read this long after a memory is shown (if still shown):
#: the first chain after a write to the file scans it (~0.2 s of a core at 1M memories; later
#: chains are lookups in the store's index of the edges, core/supersession.py).
LINKS_AFTER_S = 0.15

#: The bold title is the content's first line, cut to this many characters (at most ~2 lines).
TITLE_CHARS = 90


class DetailPane(QScrollArea):
    """See the module docstring."""

    save_requested = Signal(object, object)  # base Memory, dict of validated changes
    follow = Signal(str)  # memory id to show
    link_requested = Signal(str, str, bool)  # memory id, other id, add (False: remove)
    repair_requested = Signal(str)  # memory id whose related_to is not a list of ids
    leave_refused = Signal(str, str)  # memory id kept (its edit is invalid), the problem

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """As wide as the pane's contents need (nothing cut on the right: it never scrolls
        sideways), so the splitter gives it that much when the font grows."""
        hint = super().minimumSizeHint()
        body = self.widget()
        if body is not None:
            need = body.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth()
            hint.setWidth(max(hint.width(), need))
        return hint

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            QTimer.singleShot(0, self, self._make_room)  # laid out in the new font; dropped with the pane

    def _make_room(self) -> None:
        """Widen the pane to its contents' minimum, taken from the widest of the splitter's other
        panes (a splitter applies a grown minimum only at its next resize)."""
        splitter = self.parentWidget()
        need = self.minimumSizeHint().width() - self.width()
        if not isinstance(splitter, QSplitter) or need <= 0:
            return
        sizes = splitter.sizes()
        mine = splitter.indexOf(self)
        widest = max((i for i in range(len(sizes)) if i != mine), key=lambda i: sizes[i], default=None)
        if widest is None:
            return
        sizes[mine] += need
        sizes[widest] -= need
        splitter.setSizes(sizes)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DetailPane")
        self.ctx = ctx
        self.store: Store | None = None
        self.memory: Memory | None = None
        self.chain: Chain | None = None
        self._task: asyncio.Task | None = None
        #: What the related list and the chain were read for (None: read them at the next show).
        self._links_for: tuple | None = None
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # everything wraps instead
        body = QWidget()
        layout = QVBoxLayout(body)
        self.title = QLabel("No memory selected")
        self.title.setObjectName("DetailTitle")
        self.title.setWordWrap(True)
        relative_font(self.title, 1.15, QFont.Weight.DemiBold)
        layout.addWidget(self.title)
        self.pin_button = QPushButton("&Pin")
        self.pin_button.setCheckable(True)
        describe(self.pin_button, "Pin", "Pinned memories always come first in an agent's context")
        self.pin_button.clicked.connect(self._toggle_pin)
        self._pin_task: asyncio.Task | None = None
        layout.addWidget(self.pin_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.meta = QLabel()
        self.meta.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.meta.setWordWrap(True)
        layout.addWidget(self.meta)
        self.changed_underneath = QLabel()
        styled(self.changed_underneath, "ValidationMessage")
        self.changed_underneath.setWordWrap(True)
        self.changed_underneath.hide()
        layout.addWidget(self.changed_underneath)
        self.editor = MemoryEditor()
        layout.addWidget(self.editor, 1)
        buttons = QHBoxLayout()
        self.save_button = QPushButton("&Save")
        self.save_button.setShortcut(QKeySequence.StandardKey.Save)
        self.save_button.setToolTip("Save the changes (Ctrl+S); Ctrl+Z undoes")
        self.revert_button = QPushButton("&Revert")
        describe(self.save_button, "Save", "Save the changes; Ctrl+Z undoes")
        describe(self.revert_button, "Revert", "Drop the unsaved changes")
        self.save_button.clicked.connect(self.request_save)
        self.revert_button.clicked.connect(self.revert)
        self.stored_button = QPushButton("Stored &values…")
        describe(self.stored_button, "Stored values", "Every column of this memory exactly as stored, editable")
        self.stored_button.clicked.connect(self.show_stored)
        self.stored_dialog: StoredValuesDialog | None = None
        buttons.addWidget(self.stored_button)
        buttons.addStretch(1)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.save_button)
        layout.addLayout(buttons)
        self.editor.edited.connect(self._update_buttons)
        self.editor.validity.connect(lambda _m: self._update_buttons())

        related_box = QGroupBox("Related memories")
        related = QVBoxLayout(related_box)
        self.related = self._memory_list("RelatedList", 130)
        related.addWidget(self.related)
        row = QHBoxLayout()
        self.link_id = QLineEdit()
        self.link_id.setPlaceholderText("words or an id of a memory to link")
        self.link_picker = LinkPicker(self.link_id, lambda: (self.ctx, self.store,
                                                            self.memory.id if self.memory else None))
        self.link_button = QPushButton("Link")
        self.unlink_button = QPushButton("Remove link")
        describe(self.link_id, "Memory to link", "Type words to choose a memory, or its id, to relate to this one")
        describe(self.link_button, "Link", "Relate the memory named by the id to this one")
        describe(self.unlink_button, "Remove link", "Remove the selected related memory's link")
        self.link_button.clicked.connect(self._add_link)
        self.unlink_button.clicked.connect(self._remove_link)
        self.link_id.returnPressed.connect(self._add_link)
        row.addWidget(self.link_id, 1)
        row.addWidget(self.link_button)
        row.addWidget(self.unlink_button)
        related.addLayout(row)
        self.related_note = QLabel()
        self.related_note.setWordWrap(True)
        related.addWidget(self.related_note)
        self.repair_button = QPushButton("Repair links")
        self.repair_button.setToolTip("Keep the ids of this file that the text names, as a proper list "
                                      "(Ctrl+Z puts the text back)")
        self.repair_button.clicked.connect(lambda: self.memory and self.repair_requested.emit(self.memory.id))
        self.repair_button.hide()
        related.addWidget(self.repair_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(related_box)

        chain_box = QGroupBox("Supersession chain")
        chain = QVBoxLayout(chain_box)
        self.chain_list = self._memory_list("ChainList", 110)
        chain.addWidget(self.chain_list)
        self.chain_note = QLabel()
        self.chain_note.setWordWrap(True)
        chain.addWidget(self.chain_note)
        layout.addWidget(chain_box)

        access_box = QGroupBox("Access")
        self.access = QLabel()
        self.access.setWordWrap(True)
        self.access.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        QVBoxLayout(access_box).addWidget(self.access)
        layout.addWidget(access_box)
        health_box = QGroupBox("Health")
        self.health = QLabel()
        self.health.setObjectName("HealthExplanation")
        self.health.setWordWrap(True)
        QVBoxLayout(health_box).addWidget(self.health)
        layout.addWidget(health_box)
        self._history_of: tuple | None = None  # (memory id, store) the history shown is of
        history_box = QGroupBox("History")
        self.history = QLabel()
        self.history.setObjectName("MemoryHistory")
        self.history.setWordWrap(True)
        self.history.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        describe(self.history, "History", "Every journalled change of this memory, newest first")
        QVBoxLayout(history_box).addWidget(self.history)
        layout.addWidget(history_box)
        layout.addStretch(0)
        self.setWidget(body)
        # Never narrower than what its form needs: the splitter gives the table less instead of
        # clipping the Save button, the type box and "Remove link" on a small screen.
        self.setMinimumWidth(body.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width())
        self.show_memory(None, None)
        ctx.store_changed.connect(self._store_changed)

    def _memory_list(self, name: str, height: int) -> QListWidget:
        """A short list of memories (related, chain); activating an item follows it."""
        widget = QListWidget()
        widget.setObjectName(name)
        describe(widget, {"RelatedList": "Related memories", "ChainList": "Supersession chain"}.get(name, name),
                 "Activate a memory to show it")
        widget.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        widget.setTextElideMode(Qt.TextElideMode.ElideRight)
        widget.setMaximumHeight(height)
        widget.itemActivated.connect(self._follow_item)
        return widget

    # ----------------------------------------------------------------- showing
    def show_memory(self, memory: Memory | None, store: Store | None) -> None:
        """Show ``memory``. The same memory, refreshed, keeps unsaved edits (and says it changed)."""
        if memory is not None and memory == self.memory and store is self.store and not self.editor.is_modified():
            return  # shown as it is already (its row repainted after our own save): no re-layout
        same = memory is not None and self.memory is not None and memory.id == self.memory.id
        if not same and self.memory is not None and self.editor.is_modified() and not self._leave_edit(memory, store):
            return
        if same and self.editor.is_modified():
            if memory.version != self.editor.base.version:
                self.changed_underneath.setText(
                    "This memory was changed in the file since you started editing. Saving will ask "
                    "whether to keep your version or theirs.")
                self.changed_underneath.show()
            self.memory = memory
            self._show_facts(memory)
            return
        links_for = _links_key(memory, store)
        if not same:
            if links_for != self._links_for:  # no stale links or chain of the previous memory
                self._clear_links()
            self.verticalScrollBar().setValue(0)  # another memory starts at its top
        self.memory, self.store = memory, store
        self.changed_underneath.hide()
        self.editor.load(memory)
        self.editor.set_read_only(store is None or store.readonly)
        self._show_facts(memory)
        self._update_buttons()
        self._read_pin(memory, store)
        if memory is None:
            self.title.setText("No memory selected")
            self.meta.setText("Select a memory in the table, or press Ctrl+N to write a new one.")
            if self._task is not None and not self._task.done():
                self._task.cancel()  # the links of the memory shown before are not wanted now
            self._clear_links()
            self._links_for = None
            return
        if links_for == self._links_for:
            return  # its links and chain are shown (or being read) already
        self._read_links(memory, store)

    def _clear_links(self) -> None:
        self.related.clear()
        self.chain_list.clear()
        self.related_note.clear()
        self.repair_button.hide()
        self.chain_note.clear()

    def _read_links(self, memory: Memory, store: Store | None) -> None:
        self._links_for = _links_key(memory, store)
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = asyncio.ensure_future(self._load_links(memory, store), loop=self.ctx.loop)

    def _store_changed(self, path: object, change: Change) -> None:
        """A write to the shown file: read the links and chain again when which rows changed is
        not known, a linked or chained memory changed or went, or a changed or new memory now
        points into the chain or links here. The shown memory's own row is read again (a memory
        the table does not list gets no fresh row from it; a deleted one must go)."""
        memory, store = self.memory, self.store
        if memory is None or store is None or path != store.path.resolve():
            return
        if not change or memory.id in change.ids:  # its own row: shown as it is now, or gone
            asyncio.ensure_future(self._read_again(memory, store), loop=self.ctx.loop)
        if self._links_for is None:
            return  # its links are read at the next show
        chained = {m.id for m in self.chain.members} if self.chain else set()
        others = change.ids - {memory.id}
        if not change or others & (chained | set(memory.related_to)):  # rows unknown, or links among them
            self._read_links(memory, store)
        elif others:
            asyncio.ensure_future(self._joins_chain(memory, store, others, chained | {memory.id}), loop=self.ctx.loop)

    async def _read_again(self, memory: Memory, store: Store) -> None:
        """Read the shown memory's row after a write to it: a memory the table does not list (one
        followed from a link) is shown fresh too, and one deleted is no longer shown as if there."""
        try:
            fresh = await self.ctx.run(store.find, memory.id)
        except OraError:
            return
        if not (isValid(self) and isValid(self.save_button)):
            return  # the window closed meanwhile
        if self.memory is None or self.memory.id != memory.id or self.store is not store:
            return  # another memory is shown meanwhile
        if fresh is not None:
            self.show_memory(fresh, store)
        elif self.editor.is_modified():
            self.changed_underneath.setText("This memory was deleted in the file since you started editing; "
                                            "Edit > Deleted memories brings it back.")
            self.changed_underneath.show()
        else:
            self.show_memory(None, None)
            self.meta.setText(f"“{memory.title[:60]}” was deleted; Edit > Deleted memories brings it back.")

    async def _joins_chain(self, memory: Memory, store: Store, ids: set[str], chained: set[str]) -> None:
        """Read the links and chain again if one of the changed (or new) memories ``ids`` now
        points into the chain or links to the shown memory."""
        try:
            changed = await self.ctx.run(store.get_many, sorted(ids))
        except OraError:
            changed = {}
        if any(m.superseded_by in chained or memory.id in m.related_to for m in changed.values()) \
                and self.memory is memory:
            self._read_links(memory, store)

    def show_stored(self) -> asyncio.Task | None:
        """Open *Stored values* for the memory shown (read on a worker)."""
        memory, store = self.memory, self.store
        if memory is None or store is None:
            return None

        async def run() -> None:
            from ...core.operations.stored import stored_values

            try:
                values = await self.ctx.run(stored_values, store, memory.id)
            except OraError as exc:
                self.ctx.show_error(exc, "Stored values")
                return
            dialog = StoredValuesDialog(memory, values, store.readonly, self)
            dialog.save_requested.connect(self.save_requested.emit)
            self.stored_dialog = dialog
            dialog.open()
        return asyncio.ensure_future(run(), loop=self.ctx.loop)

    def revert(self) -> bool:
        """Drop unsaved edits: the memory as stored is shown again. Returns whether there were any."""
        if not self.editor.is_modified():
            return False
        self.editor.load(self.memory)
        self.changed_underneath.hide()
        self._update_buttons()
        self.ctx.status.emit("Edit cancelled: the memory is shown as it is stored")
        return True

    def _leave_edit(self, memory: Memory | None, store: Store | None) -> bool:
        """Moving away from unsaved edits: save them when valid (undoable); when not, stay on
        them in the same file (``leave_refused``) or say they were not saved. Never silent."""
        base = self.editor.base
        message = self.editor.validation_message()
        writable = self.store is not None and not self.store.readonly
        if writable and not message and base is not None:
            self.save_requested.emit(base, self.editor.changes())
            self.ctx.status.emit(f"Saved your changes to “{base.title[:40]}” (Ctrl+Z undoes)")
            return True
        if store is self.store and memory is not None and base is not None:
            self.leave_refused.emit(base.id, message)
            self.ctx.status.emit(f"Fix or revert the edit first — {message}")
            return False
        self.ctx.show_error(f"Your changes to “{base.title[:40] if base else ''}” were not saved: {message}",
                            "Unsaved changes")
        return True

    def set_terms(self, terms: tuple[str, ...]) -> None:
        self.editor.highlighter.set_terms(tuple(terms))

    def set_query(self, query: object) -> None:
        """Highlight what a search (a core ``ParsedQuery``) matches, stem-aware."""
        self.editor.highlighter.set_query(query)  # type: ignore[arg-type]

    def _show_facts(self, m: Memory | None) -> None:
        if m is None:
            self.access.setText("")
            self.health.setText("")
            return
        self.title.setText(first_line(m.content, TITLE_CHARS) or "(empty)")
        where = self.store.path.name if self.store else ""
        # Sync is shown once, beside the Sync status field (Memory.sync_state), not here as well.
        flags = [x for x in ("superseded" if m.is_superseded else "", "expired" if m.is_expired() else "") if x]
        if m.undecodable:  # the agent wrote bytes that are not UTF-8: shown as U+FFFD
            flags.append(f"{' and '.join(m.undecodable)} not valid UTF-8 (shown as \ufffd; "
                         "Maintenance > check --repair fixes it, keeping the bytes)")
        self.meta.setText(f"{m.id} · {where}" + (f" · {', '.join(flags)}" if flags else ""))
        rows = [
            ("Accessed", f"{m.access_count} time{'s' if m.access_count != 1 else ''}"),
            ("Last accessed", _when(m.last_accessed_at) or "never (the file keeps only the latest access)"),
            ("Created", _when(m.created_at)),
            ("Updated", _when(m.updated_at)),
            ("Last synced", _when(m.synced_at) or "never"),
        ]
        for name, raw in m.unparsed:
            rows.append((name, f"unreadable timestamp {raw!r}"))
        self.access.setText("\n".join(f"{k}: {v}" for k, v in rows))
        self.health.setText(explain(m))

    async def _load_links(self, memory: Memory, store: Store | None) -> None:
        if store is None:
            return
        try:
            # Once the selection rests: moving through rows with the keyboard, or typing a search
            # that selects its first hit, starts no scans for the memories passed over.
            await asyncio.sleep(LINKS_AFTER_S)
            related = await self.ctx.run(store.get_many, list(memory.related_to))
            chain = await self.ctx.run(store.chain, memory.id)
        except OraError as exc:
            if self._links_for == _links_key(memory, store):  # still shown (a deleted one is not)
                self.related_note.setText(str(exc))
                self._links_for = None  # try again at the next show
            return
        except asyncio.CancelledError:
            if self._links_for == _links_key(memory, store):
                self._links_for = None  # cancelled for its own memory (e.g. the window closing)
            raise
        if self.memory is None or self.memory.id != memory.id:
            return
        self.related.clear()
        missing = []
        for other_id in memory.related_to:
            other = related.get(other_id)
            if other is None:
                missing.append(other_id)
                item = QListWidgetItem(f"{other_id}  (not in this file)")
                item.setForeground(self.palette().placeholderText())
            else:
                item = QListWidgetItem(first_line(other.content, 120))
                item.setToolTip(f"{other.id}\n{other.content[:400]}")
            item.setData(ID_ROLE, other_id)
            self.related.addItem(item)
        notes = []
        self.repair_button.setVisible(memory.related_malformed)
        if memory.related_malformed:
            notes.append("related_to holds text that is not a list of ids: Repair links keeps the ids it names.")
        if missing:
            notes.append(f"{len(missing)} linked id{'s are' if len(missing) > 1 else ' is'} not in this file.")
        if not memory.related_to and not notes:
            notes.append("No related memories. Type an id and press Link.")
        self.related_note.setText(" ".join(notes))
        self._show_chain(chain, memory)

    def _show_chain(self, chain: Chain, memory: Memory) -> None:
        self.chain = chain
        self.chain_list.clear()
        for member in chain.members:
            live = chain.live is not None and member.id == chain.live.id
            label = f"{'● live  ' if live else '○ '}{first_line(member.content, 100)}"
            item = QListWidgetItem(label)
            item.setData(ID_ROLE, member.id)
            item.setToolTip(f"{member.id}\ncreated {exact(member.created_at)}")
            if member.id == memory.id:
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            self.chain_list.addItem(item)
        notes = []
        if len(chain.members) <= 1:
            notes.append("Not part of a chain: nothing supersedes it and it supersedes nothing.")
        if chain.cycle:
            notes.append("The chain loops back on itself (a cycle); no member is live.")
        if chain.dangling:
            notes.append(f"The chain points to {', '.join(chain.dangling)}, which is not in this file.")
        self.chain_note.setText(" ".join(notes))

    # ----------------------------------------------------------------- pin
    def _show_pin(self, pinned: bool) -> None:
        self.pin_button.setChecked(pinned)
        self.pin_button.setText("Pinned" if pinned else "&Pin")

    def _read_pin(self, memory: Memory | None, store: Store | None) -> None:
        """Show whether ``memory`` is pinned, and, once the selection rests, its history (read on a worker)."""
        same = memory is not None and self._history_of == (memory.id, store)
        if not same:  # the same memory again (after a save): its history stays until read anew,
            self._show_pin(False)  # so the pane does not shrink and jump under the person
            self.history.setText("")
        self._history_of = (memory.id, store) if memory is not None else None
        if memory is None or store is None:
            return

        from ...core.operations.memory_history import memory_history
        from ...core.operations.pins import is_pinned

        def current() -> bool:
            return self.memory is not None and self.memory.id == memory.id and self.store is store

        async def read() -> None:
            try:
                pinned = await self.ctx.run(is_pinned, store, memory.id)
                if current():
                    self._show_pin(pinned)
                await asyncio.sleep(LINKS_AFTER_S)
                if not current():
                    return
                history = await self.ctx.run(memory_history, store, memory.id)
            except OraError as exc:
                self.history.setText(str(exc))
                return  # the pin state stays unknown (shown unpinned); the file's error shows elsewhere
            if current():
                self.history.setText(history_text(history))

        self._pin_task = asyncio.ensure_future(read(), loop=self.ctx.loop)

    def _toggle_pin(self, on: bool) -> asyncio.Task | None:
        """Pin or unpin the memory shown (core's :mod:`pins` operation, on a worker)."""
        memory, store = self.memory, self.store
        if memory is None or store is None:
            return None

        from ...core.operations.pins import pin, unpin

        async def run() -> None:
            try:
                await self.ctx.run(pin if on else unpin, store, [memory.id])
            except OraError as exc:
                self._show_pin(not on)
                self.ctx.show_error(exc, "Pin")
                return
            if self.memory is not None and self.memory.id == memory.id:
                self._show_pin(on)
            self.ctx.status.emit(f"{'Pinned' if on else 'Unpinned'} “{memory.title[:40]}”"
                                 + (": it comes first in every context" if on else ""))

        self._pin_task = asyncio.ensure_future(run(), loop=self.ctx.loop)
        return self._pin_task

    # ----------------------------------------------------------------- actions
    def _update_buttons(self) -> None:
        writable = self.store is not None and not self.store.readonly and self.memory is not None
        modified = self.editor.is_modified()
        valid = not self.editor.validation_message()
        self.save_button.setEnabled(writable and modified and valid)
        self.stored_button.setEnabled(self.memory is not None and self.store is not None)
        self.pin_button.setEnabled(writable)
        self.revert_button.setEnabled(modified)
        for widget in (self.link_button, self.unlink_button, self.link_id):
            widget.setEnabled(writable)

    def request_save(self) -> None:
        if self.memory is None or self.editor.base is None:
            return
        try:
            changes = self.editor.changes()
        except InvalidValue:
            return  # the message is already shown under the fields
        if changes:
            self.save_requested.emit(self.editor.base, changes)

    def saved(self, memory: Memory) -> None:
        """Called after a successful save (or undo, redo) of the shown memory: show the stored
        version, edits cleared. The pane stays where the person was, and only what changed is
        set again (a save re-lays out no more than its own fields)."""
        if self.memory is None or memory.id != self.memory.id:
            self.memory = None
            self.show_memory(memory, self.store)
            return
        self.memory = memory
        self.changed_underneath.hide()
        self.editor.rebase(memory)
        self._show_facts(memory)
        self._update_buttons()
        self._read_pin(memory, self.store)  # a save is a new step of its history
        if _links_key(memory, self.store) != self._links_for:
            self._clear_links()
            self._read_links(memory, self.store)

    def _follow_item(self, item: QListWidgetItem) -> None:
        memory_id = item.data(ID_ROLE)
        if memory_id:
            self.follow.emit(memory_id)

    def _add_link(self) -> None:
        other = self.link_picker.chosen_id()
        if self.memory is not None and other:
            self.link_requested.emit(self.memory.id, other, True)
            self.link_id.clear()

    def _remove_link(self) -> None:
        item = self.related.currentItem()
        if self.memory is not None and item is not None:
            self.link_requested.emit(self.memory.id, item.data(ID_ROLE), False)


def history_text(history: MemoryHistory) -> str:
    """A memory's journalled history as the pane's lines."""
    steps = history.steps
    if not steps:
        return ("No journalled change of this memory yet (the file's journal holds its last 50 steps; "
                "agents writing raw SQL do not journal).")
    lines = ["Changed since by a program that does not journal its writes."] if history.unexplained else []
    for step in steps:
        when = exact(step.at).splitlines()[0] if step.at else "?"
        lines.append(f"{when} · {step.initiator} · {step.label}")
        for column, (before, after) in step.changes.items():
            if column in ("updated_at", "sync_status"):
                continue  # every edit moves them (the sync rule): not news
            lines.append(f"    {column}: {_value(before)} → {_value(after)}")
    return "\n".join(lines)


def _value(value: object, limit: int = 60) -> str:
    text = " ".join(str(value).split()) if value is not None else "(none)"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _links_key(memory: Memory | None, store: Store | None) -> tuple | None:
    """What the related list and the chain of ``memory`` depend on in its own row."""
    if memory is None:
        return None
    return (store, memory.id, memory.related_to, memory.related_malformed, memory.superseded_by)


def _when(value) -> str:  # noqa: ANN001
    return f"{relative(value)} ({exact(value).splitlines()[0]})" if value is not None else ""
