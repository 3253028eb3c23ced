"""The Review tab: the curator's desk for the selected agent file.

Lists what ``core.operations.review.review`` finds — memories new or changed since this person
last marked the file reviewed, what needs attention, and their flags — and lets them decide
without leaving the tab: mark reviewed (R), flag with a note (F), edit (E), supersede (S) or
delete (Del). Edits, supersessions and deletes go through the window's curator, so they are on
the undo stack (Ctrl+Z) like any other; the memory acted on is then marked reviewed at its new
version, so a person's own decision does not come back as "changed".
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ...core import Memory, OraError, Store
from ...core.operations import review as rv
from ...core.operations.edits import field_values
from ..a11y import describe
from ..curate.commands import DeleteCommand, EditCommand, SupersedeCommand
from ..curate.dialogs import MemoryFieldsDialog
from ..jobs.background import Latest
from ..jobs.widgets import LazyRefresh, muted
from .commands import ReviewCommand
from .navigate import curator_of, show_in_table
from .table import ReviewTable

FILTERS = (("Everything on the desk", None), ("New and changed", "fresh"), ("Needs attention", "attention"),
           ("Flagged", "flagged"))


def load_review(ctx, path: Path, reviewer: str) -> tuple[Store, rv.ReviewResult]:  # noqa: ANN001
    """The desk of ``path`` (worker thread)."""
    store = ctx.store_for(path)
    return store, rv.review(store, reviewer)


def keep(item: rv.ReviewItem, which: str | None) -> bool:
    """Whether the filter ``which`` shows ``item``."""
    if which == "fresh":
        return "new" in item.reasons or "changed" in item.reasons
    if which == "attention":
        return item.needs_attention and item.reasons != ("flagged",)
    if which == "flagged":
        return "flagged" in item.reasons
    return True


class ReviewView(LazyRefresh, QWidget):
    """See the module docstring."""

    def __init__(self, ctx, parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.setObjectName("ReviewView")
        self.ctx = ctx
        self.reviewer = rv.default_reviewer()
        self.store: Store | None = None
        self.result: rv.ReviewResult | None = None
        self._latest = Latest()
        self.dialog: QWidget | None = None  # the dialog open now (kept referenced)

        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.filter = QComboBox()
        for label, _key in FILTERS:
            self.filter.addItem(label)
        self.filter.setToolTip("Show everything, only what is new or changed, only what needs a decision, "
                               "or only your flags")
        self.filter.currentIndexChanged.connect(lambda _i: self._show())
        self.mark_button = QPushButton("Mark reviewed (R)")
        self.mark_all_button = QPushButton("Mark all reviewed")
        self.mark_all_button.setToolTip("Everything new or changed up to now counts as reviewed; what needs "
                                        "attention and your flags stay")
        self.flag_button = QPushButton("Flag… (F)")
        self.edit_button = QPushButton("Edit… (E)")
        self.supersede_button = QPushButton("Supersede… (S)")
        self.delete_button = QPushButton("Delete (Del)")
        self.open_button = QPushButton("Show in table")
        for button, what in ((self.mark_button, "Mark the selected memories reviewed"),
                             (self.mark_all_button, "Count everything new or changed up to now as reviewed"),
                             (self.flag_button, "Flag the selected memories with a note"),
                             (self.edit_button, "Edit the selected memory"),
                             (self.supersede_button, "Mark the selected memory as replaced by another"),
                             (self.delete_button, "Delete the selected memories (kept in the trash)"),
                             (self.open_button, "Show the selected memory in the Memories table")):
            describe(button, button.text().split(" (")[0].rstrip("…"), what)
        bar = QHBoxLayout()
        bar.addWidget(self.filter)
        bar.addStretch(1)
        for button in (self.mark_button, self.mark_all_button, self.flag_button, self.edit_button,
                       self.supersede_button, self.delete_button, self.open_button):
            bar.addWidget(button)

        self.table = ReviewTable()
        describe(self.table, "Memories to review", "New, changed and flagged memories, and those that need attention")
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        describe(self.preview, "Memory text", "The selected memory in full")
        self.preview.setPlaceholderText("Select a memory to read it in full")
        self.why = QLabel()
        self.why.setWordWrap(True)
        self.why.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.why)
        lower_layout.addWidget(self.preview, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(lower)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        split.setSizes([520, 140])
        self.counts = muted(QLabel())
        self.counts.setWordWrap(True)

        desk = QWidget()
        desk_layout = QVBoxLayout(desk)
        desk_layout.setContentsMargins(0, 0, 0, 0)
        desk_layout.addLayout(bar)
        desk_layout.addWidget(split, 1)
        desk_layout.addWidget(self.counts)
        self.message = QLabel()
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(desk)
        self.consolidate_button = QPushButton("Consolidate…")
        describe(self.consolidate_button, "Consolidate",
                 "Review proposed summaries of old, fading memories on one topic: apply, edit or reject each")
        self.consolidate_button.clicked.connect(lambda _c=False: self.consolidate())
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.consolidate_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)

        self.table.key_action.connect(self.act)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.doubleClicked.connect(lambda _i: self.act("open"))
        for button, name in ((self.mark_button, "mark"), (self.flag_button, "flag"), (self.edit_button, "edit"),
                             (self.supersede_button, "supersede"), (self.delete_button, "delete"),
                             (self.open_button, "open")):
            button.clicked.connect(lambda _c=False, name=name: self.act(name))
        self.mark_all_button.clicked.connect(lambda _c=False: self.mark_all())
        ctx.current_changed.connect(self.request_refresh)
        ctx.data_changed.connect(self.request_refresh)
        self._update_buttons()
        self.init_lazy()

    def consolidate(self) -> QWidget | None:
        """Open the consolidation desk for the selected file (proposals read on a worker)."""
        from .consolidation import ConsolidationDialog

        path = self.ctx.current_path()
        if path is None:
            return None
        self.dialog = ConsolidationDialog(self.ctx, path, self)
        self.dialog.open()
        self.dialog.refresh()
        return self.dialog

    # ----------------------------------------------------------------- loading
    def refresh(self) -> asyncio.Task:
        """Reload the desk of the selected file in the background."""
        return self._latest.start(self.reload())

    async def reload(self) -> rv.ReviewResult | None:
        path = self.ctx.current_path()
        if path is None:
            self._message("Select an agent on the left to review what its agents wrote.")
            return None
        if self.result is None or self.result.path != str(path):
            self.heading.setText(f"Reading the desk of {path.name}… (a million memories take a few seconds)")
        try:
            store, result = await self.ctx.run(load_review, self.ctx, path, self.reviewer)
        except OraError as exc:
            self._message(f"This file cannot be reviewed.\n\n{exc}")
            return None
        self.store, self.result = store, result
        since = (f"since your last review ({result.since.astimezone():%Y-%m-%d %H:%M})" if result.since
                 else "never reviewed by you: everything is new")
        self.heading.setText(f"<b>{Path(result.path).name}</b> — review for {self.reviewer}, {since}"
                             + (" · <i>read-only: nothing can be marked</i>" if store.readonly else ""))
        self._show()
        self.stack.setCurrentIndex(1)
        return result

    def _show(self) -> None:
        result = self.result
        if result is None:
            return
        which = FILTERS[self.filter.currentIndex()][1]
        items = [item for item in result.items if keep(item, which)]
        self.table.show_items(items)
        if self.table.currentRow() < 0 and items:
            self.table.selectRow(0)
        counts = ", ".join(f"{n:,} {rv.REASONS.get(r, r)}" for r, n in result.counts.items())
        cut = f" — at most {result.limit} of each listed" if result.truncated else ""
        self.counts.setText((counts or "Nothing to review: no new or changed memories, nothing needs attention.")
                            + cut)
        self._selection_changed()

    def _message(self, text: str) -> None:
        self.result = None
        self.table.show_items([])
        self.heading.setText("")
        self.message.setText(text)
        self.stack.setCurrentIndex(0)
        self._update_buttons()

    def _selection_changed(self) -> None:
        item = self.table.current_item()
        self.preview.setPlainText(item.memory.content if item else "")
        self.why.setText(f"<b>{item.memory.id}</b> — {item.describe()}" if item else "")
        self._update_buttons()

    def _update_buttons(self) -> None:
        writable = self.store is not None and not self.store.readonly and self.result is not None
        chosen = bool(self.table.selected_items())
        acting = writable and curator_of(self.ctx) is not None
        self.mark_button.setEnabled(writable and chosen)
        self.mark_all_button.setEnabled(writable)
        self.flag_button.setEnabled(writable and chosen)
        for button in (self.edit_button, self.supersede_button, self.delete_button):
            button.setEnabled(acting and chosen)
        self.open_button.setEnabled(chosen)

    # ----------------------------------------------------------------- decisions
    def act(self, name: str) -> asyncio.Task | None:
        """Run a decision on the selected memories: mark, flag, edit, supersede, delete, open."""
        chosen = self.table.selected_items()
        if not chosen:
            return None
        if name == "open":
            show_in_table(self.ctx, chosen[0].memory.id)
            return None
        if self.store is None or self.store.readonly:
            self.ctx.status.emit("This file is open read-only: nothing can be marked or changed")
            return None
        if name == "mark":
            ids = [i.memory.id for i in chosen]
            return self._write(f"mark {ids[0] if len(ids) == 1 else f'{len(ids)} memories'} reviewed",
                               lambda store: rv.mark_reviewed(store, ids, self.reviewer), next_row=True)
        if name == "flag":
            self._ask_note(chosen[0])
            return None
        curator = curator_of(self.ctx)
        if curator is None:
            self.ctx.status.emit("Editing needs the main window")
            return None
        if name == "edit":
            self._edit(curator, chosen[0].memory)
        elif name == "supersede":
            self._ask_replacement(curator, chosen[0].memory)
        elif name == "delete":
            command = DeleteCommand(curator, self.store.path, [i.memory.id for i in chosen], "deleted in review")
            return asyncio.ensure_future(self._run_command(curator, command, None), loop=self.ctx.loop)
        return None

    def mark_all(self) -> asyncio.Task | None:
        if self.store is None or self.store.readonly:
            return None
        return self._write("mark everything up to now reviewed",
                           lambda store: rv.mark_all_reviewed(store, self.reviewer))

    def _write(self, label: str, work, next_row: bool = False) -> asyncio.Task:  # noqa: ANN001
        """Run a mark or flag: on the window's undo stack when there is one, else directly."""
        store = self.store
        row = self.table.currentRow()
        curator = curator_of(self.ctx)

        async def run() -> None:
            if curator is not None:
                if await curator.execute(ReviewCommand(curator, store.path, self.reviewer, label, work)) is None:
                    return  # refused: the curator said why
            else:
                try:
                    await self.ctx.run(work, store)
                except OraError as exc:
                    self.ctx.show_error(exc, "Review")
                    return
                self.ctx.status.emit(label[:1].upper() + label[1:] + " — done")
            await self.refresh()
            if next_row and self.table.rowCount():
                self.table.selectRow(min(max(row, 0), self.table.rowCount() - 1))
        return asyncio.ensure_future(run(), loop=self.ctx.loop)

    def _ask_note(self, item: rv.ReviewItem) -> None:
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Flag for a decision")
        dialog.setLabelText(f"Why does “{item.memory.title[:60]}” need a decision? (up to {rv.MAX_NOTE} characters)")
        dialog.setTextValue(item.note or "")
        dialog.setTextEchoMode(QLineEdit.EchoMode.Normal)
        dialog.textValueSelected.connect(lambda text: self._write(
            f"flag “{item.memory.title[:40]}”", lambda store: rv.flag(store, item.memory.id, text, self.reviewer)))
        self.dialog = dialog
        dialog.open()

    def _edit(self, curator, memory: Memory) -> None:  # noqa: ANN001
        dialog = MemoryFieldsDialog("Edit memory", self, content=memory.content, type_=memory.type or "fact",
                                    importance=memory.importance or 5,
                                    intro=f"Edit {memory.id} (Ctrl+Z undoes; it is then marked reviewed).")
        if memory.expires_at is not None:
            dialog.expires.setText(field_values(memory, ["expires_at"])["expires_at"] or "")

        def accepted() -> None:
            wanted = dialog.fields()
            before = field_values(memory, list(wanted))
            changes = {k: v for k, v in wanted.items() if before.get(k) != v}
            if not changes:
                self.ctx.status.emit("Nothing changed")
                return
            command = EditCommand(curator, self.store.path, memory, changes)
            asyncio.ensure_future(self._run_command(curator, command, memory.id), loop=self.ctx.loop)
        dialog.accepted.connect(accepted)
        self.dialog = dialog
        dialog.open()

    def _ask_replacement(self, curator, memory: Memory) -> None:  # noqa: ANN001
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Supersede")
        dialog.setLabelText(f"Id of the memory that replaces “{memory.title[:60]}”:")
        dialog.setTextEchoMode(QLineEdit.EchoMode.Normal)
        dialog.textValueSelected.connect(lambda text: asyncio.ensure_future(
            self._supersede(curator, memory, text.strip()), loop=self.ctx.loop))
        self.dialog = dialog
        dialog.open()

    async def _supersede(self, curator, memory: Memory, new_id: str) -> None:  # noqa: ANN001
        store = self.store
        newer = await self.ctx.run(store.find, new_id) if new_id else None
        if newer is None:
            self.ctx.show_error(f"{store.path.name}: no memory with id {new_id!r}; nothing changed", "Supersede")
            return
        await self._run_command(curator, SupersedeCommand(curator, store.path, memory, newer), memory.id)

    async def _run_command(self, curator, command, mark_id: str | None) -> None:  # noqa: ANN001
        """Run a curating command (undoable); then mark what it changed reviewed at its new version."""
        result = await curator.execute(command)
        if result is None:  # refused or failed: the curator said why
            return
        if mark_id is not None:
            try:
                await self.ctx.run(rv.mark_reviewed, self.store, [mark_id], self.reviewer)
            except OraError as exc:
                self.ctx.show_error(exc, "Review")
        await self.refresh()
