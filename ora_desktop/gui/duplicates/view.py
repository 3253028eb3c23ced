"""The Duplicates panel: find groups (exact and near), compare members side by side, merge.

Finding runs ``core.operations.duplicates.find_duplicates`` on a worker thread (vectors are
built or refreshed first, with progress). "Merge" keeps the chosen member — or the text typed in
"Merged text" — supersedes the others and carries their links, as one step on the window's undo
stack (Ctrl+Z restores every member).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QDoubleSpinBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ...core import Change, ChangeKind, Memory, OraError
from ...core.operations.duplicates import DEFAULT_THRESHOLD, DuplicateGroup, find_duplicates
from ..a11y import describe
from ..curate.dialogs import PreviewDialog
from ..formatting import first_line, health_text
from ..jobs.background import Latest
from .commands import MergeGroupCommand


def find_groups(ctx, path: Path, threshold: float, progress=None) -> tuple[list[DuplicateGroup], dict[str, Memory]]:  # noqa: ANN001
    """Groups of the file at ``path`` and their members' records (worker thread)."""
    store = ctx.store_for(path)
    result = find_duplicates(store, threshold, progress=progress)
    members = store.get_many([i for g in result.groups for i in g.ids])
    return list(result.groups), members


class MemberCard(QGroupBox):
    """One member of a group: its text, importance, health, and a "keep" choice."""

    def __init__(self, memory: Memory, parent: QWidget | None = None) -> None:
        super().__init__(memory.id, parent)
        self.memory = memory
        self.keep = QRadioButton("Keep this one")
        self.text = QPlainTextEdit(memory.content)
        self.text.setReadOnly(True)
        info = QLabel(f"{memory.type or 'memory'} · importance {memory.importance} · "
                      f"health {health_text(memory.health_score)}")
        layout = QVBoxLayout(self)
        layout.addWidget(self.keep)
        layout.addWidget(self.text, 1)
        layout.addWidget(info)


class DuplicatesView(QWidget):
    """See the module docstring."""

    def __init__(self, ctx, parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.ctx = ctx
        self.groups: list[DuplicateGroup] = []
        self.members: dict[str, Memory] = {}
        self.cards: list[MemberCard] = []
        self._latest = Latest()
        self._path: Path | None = None

        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(0.50, 1.00)
        self.threshold.setSingleStep(0.01)
        self.threshold.setDecimals(2)
        self.threshold.setValue(DEFAULT_THRESHOLD)
        self.threshold.setToolTip("Cosine similarity at or above which two memories are near duplicates")
        describe(self.threshold, "Similarity threshold", "Cosine similarity from which memories are near duplicates")
        self.find_button = QPushButton("Find duplicates")
        self.find_button.clicked.connect(self.refresh)
        describe(self.find_button, "Find duplicates", "Look for exact and near duplicate groups in the selected file")
        self.status = QLabel("Choose a file, then Find duplicates.")
        top = QHBoxLayout()
        top.addWidget(QLabel("Similarity ≥"))
        top.addWidget(self.threshold)
        top.addWidget(self.find_button)
        top.addWidget(self.status, 1)

        self.group_list = QListWidget()
        self.group_list.setObjectName("DuplicateGroups")
        describe(self.group_list, "Duplicate groups", "Groups of memories that say the same thing; pick one to compare")
        self.group_list.currentRowChanged.connect(self._show_group)
        self.side = QHBoxLayout()
        side_widget = QWidget()
        side_widget.setLayout(self.side)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(side_widget)
        self.keep_group = QButtonGroup(self)
        self.keep_group.buttonToggled.connect(self._keeper_changed)
        self.merged = QPlainTextEdit()
        self.merged.setPlaceholderText("The text the kept memory will have (edit to combine them)")
        self.merged.setMaximumHeight(110)
        describe(self.merged, "Merged text", "The text the kept memory will have after the merge")
        self.merge_button = QPushButton("Merge")
        self.merge_button.setToolTip("Keep the chosen memory with this text and supersede the others (Ctrl+Z undoes)")
        self.merge_button.clicked.connect(self.merge)
        self.merge_button.setEnabled(False)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(scroll, 1)
        right_layout.addWidget(QLabel("Merged text:"))
        right_layout.addWidget(self.merged)
        right_layout.addWidget(self.merge_button, 0, Qt.AlignmentFlag.AlignRight)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.group_list)
        split.addWidget(right)
        split.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        ctx.current_changed.connect(self._file_changed)
        ctx.data_changed.connect(self._data_changed)
        self.confirm: PreviewDialog | None = None
        self._merges: list[MergeGroupCommand] = []  # merges made here: an undo brings the group back

    # ----------------------------------------------------------------- finding
    def _data_changed(self, change: Change) -> None:
        """A merge made here was undone (Ctrl+Z): find the groups again, so it comes back."""
        if change.kind is not ChangeKind.UNDONE or change.source != "undo":
            return
        undone = [c for c in self._merges if set(c.ids) & change.ids]
        if undone:
            self._merges = [c for c in self._merges if c not in undone]
            self.refresh()
            self.status.setText(f"The merge into {undone[-1].keep} was undone; looking for duplicates again…")
    def _file_changed(self, _current: object) -> None:
        if self.ctx.current_path() != self._path:
            self.groups = []
            self.group_list.clear()
            self._clear_cards()
            self.status.setText("Find duplicates in this file.")

    def refresh(self) -> asyncio.Task:
        """Find the groups of the selected file in the background."""
        return self._latest.start(self.reload())

    async def reload(self) -> list[DuplicateGroup]:
        path = self.ctx.current_path()
        if path is None:
            self.status.setText("Select an agent's file in the sidebar first.")
            return []
        self._path = path
        self.find_button.setEnabled(False)
        self.status.setText("Looking for duplicates…")
        try:
            groups, members = await self.ctx.run(find_groups, self.ctx, path, self.threshold.value(),
                                                 lambda done, total: self.ctx.from_thread(self._progress, done, total))
        except OraError as exc:
            self.status.setText(f"Could not look for duplicates: {exc}")
            return []
        finally:
            self.find_button.setEnabled(True)
        self.groups, self.members = groups, members
        self.group_list.clear()
        for group in groups:
            first = members.get(group.ids[0])
            title = first_line(first.content) if first else ""
            label = f"{group.kind} · {group.similarity:.2f} · {len(group.ids)} — {title}"
            self.group_list.addItem(QListWidgetItem(label))
        self.status.setText(f"{len(groups):,} group{'s' if len(groups) != 1 else ''} of duplicates"
                            if groups else "No duplicates found.")
        if groups:
            self.group_list.setCurrentRow(0)
        else:
            self._clear_cards()
        return groups

    def _progress(self, done: int, total: int) -> None:
        if total:
            self.status.setText(f"Embedding memories… {done:,}/{total:,}")

    # ----------------------------------------------------------------- comparing
    def _clear_cards(self) -> None:
        for card in self.cards:
            self.keep_group.removeButton(card.keep)
            card.setParent(None)
            card.deleteLater()
        self.cards = []
        self.merged.clear()
        self.merge_button.setEnabled(False)

    def _show_group(self, row: int) -> None:
        self._clear_cards()
        if not 0 <= row < len(self.groups):
            return
        for memory_id in self.groups[row].ids:
            memory = self.members.get(memory_id)
            if memory is None:
                continue
            card = MemberCard(memory)
            self.keep_group.addButton(card.keep)
            self.side.addWidget(card, 1)
            self.cards.append(card)
        if self.cards:
            self.cards[0].keep.setChecked(True)  # the group lists its most important member first
        self.merge_button.setEnabled(len(self.cards) > 1)
        self.merge_button.setText(f"Merge {len(self.cards)} memories…" if len(self.cards) > 1 else "Merge")

    def _keeper_changed(self, button: QRadioButton, on: bool) -> None:
        if on:
            card = next(c for c in self.cards if c.keep is button)
            self.merged.setPlainText(card.memory.content)

    def keeper(self) -> Memory | None:
        return next((c.memory for c in self.cards if c.keep.isChecked()), None)

    # ----------------------------------------------------------------- merging
    def merge(self) -> None:
        """Ask first, naming every memory the merge changes (a group may hold more than fit on
        screen); then merge as one undoable step (:meth:`merge_confirmed`)."""
        keeper = self.keeper()
        if keeper is None or self._path is None or len(self.cards) < 2:
            return
        others = [c.memory for c in self.cards if c.memory.id != keeper.id]
        items = [f"keep   {keeper.id}  —  {first_line(keeper.content, 90)}"]
        items += [f"supersede   {m.id}  —  {first_line(m.content, 90)}" for m in others]
        changed = "its text replaced, " if self.merged.toPlainText() != keeper.content else ""
        dialog = PreviewDialog(
            "Merge duplicates", f"Merge {len(self.cards)} memories: keep {keeper.id} ({changed}links carried over) "
            f"and mark the other {len(others)} as superseded by it. Ctrl+Z undoes the whole merge.",
            items, f"&Merge {len(self.cards)} memories", self)
        dialog.accepted.connect(self.merge_confirmed)
        self.confirm = dialog
        dialog.open()

    def merge_confirmed(self) -> asyncio.Task | None:
        """Merge the shown group as one undoable step (through the window's curator)."""
        keeper = self.keeper()
        window = self.ctx.window
        if keeper is None or self._path is None or window is None:
            return None
        text = self.merged.toPlainText()
        command = MergeGroupCommand(window.curator, self._path, [c.memory for c in self.cards], keeper.id,
                                    text if text != keeper.content else None)
        row = self.group_list.currentRow()

        async def run() -> None:
            result = await window.curator.execute(command)
            if result is not None:
                self._merges.append(command)
            if result is not None and 0 <= row < len(self.groups):
                del self.groups[row]
                self.group_list.takeItem(row)
                self.status.setText(f"Merged {len(command.ids)} memories into {keeper.id} (Ctrl+Z undoes).")
        return asyncio.ensure_future(run(), loop=self.ctx.loop)
