"""Edit > Find and Replace…: replace text in the selected memories or the whole file, previewed
as you type (core ``operations.replace``), applied as one undoable step."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QVBoxLayout,
    QWidget,
)

from ...core import OraError, Store
from ...core.operations.replace import ReplacePlan, plan_replace, replace_text
from ..a11y import describe
from .commands import JournalledCommand

if TYPE_CHECKING:
    from .actions import Curator

SELECTED, FILE = "selected", "file"


class ReplaceCommand(JournalledCommand):
    """One find-and-replace; undo puts every text back."""

    def __init__(self, curator: Curator, path: Path, ids: list[str] | None, find: str, replacement: str) -> None:
        super().__init__(curator, path, f"replace {find[:20]!r} with {replacement[:20]!r}")
        self.ids, self.find, self.replacement = ids, find, replacement

    def run(self, store: Store) -> Any:
        done = replace_text(store, self.ids, self.find, self.replacement)
        self.entry = done.entry
        return done.change


class ReplaceDialog(QDialog):
    """Find, replacement, where; a live preview; ``replace_asked(ids or None, find, replacement)``."""

    replace_asked = Signal(object, str, str)

    def __init__(self, ctx, store: Store, selected: list[str], parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.ctx, self.store, self.selected = ctx, store, selected
        self.plan: ReplacePlan | None = None
        self.setWindowTitle("Find and Replace")
        self.resize(620, 420)
        self.find = describe(QLineEdit(), "Find", "The text to find, as written (case-sensitive)")
        self.replacement = describe(QLineEdit(), "Replace with", "The text that replaces it (may be empty)")
        self.scope = describe(QComboBox(), "Where", "Replace in the selected memories or in every memory of the file")
        if selected:
            self.scope.addItem(f"the {len(selected):,} selected memor{'y' if len(selected) == 1 else 'ies'}", SELECTED)
        self.scope.addItem(f"every memory of {store.path.name}", FILE)
        form = QFormLayout()
        form.addRow("&Find:", self.find)
        form.addRow("&Replace with:", self.replacement)
        form.addRow("&In:", self.scope)
        self.summary = QLabel("Type the text to find.")
        self.summary.setWordWrap(True)
        self.preview = describe(QListWidget(), "Preview", "Each memory that would change, before and after")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.replace_button = buttons.addButton("Replace", QDialogButtonBox.ButtonRole.AcceptRole)
        self.replace_button.setEnabled(False)
        buttons.accepted.connect(self._replace)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.summary)
        layout.addWidget(self.preview, 1)
        layout.addWidget(buttons)
        self._pause = QTimer(self)
        self._pause.setSingleShot(True)
        self._pause.setInterval(150)
        self._pause.timeout.connect(self.refresh)
        for field in (self.find, self.replacement):
            field.textChanged.connect(lambda _t: self._pause.start())
        self.scope.currentIndexChanged.connect(lambda _i: self._pause.start())
        self._task: asyncio.Task | None = None

    def ids(self) -> list[str] | None:
        return list(self.selected) if self.scope.currentData() == SELECTED else None

    def refresh(self) -> asyncio.Task | None:
        """Preview the replace as the fields read now (on a worker)."""
        find, replacement = self.find.text(), self.replacement.text()
        self.replace_button.setEnabled(False)
        if not find:
            self.summary.setText("Type the text to find.")
            self.preview.clear()
            return None
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = asyncio.ensure_future(self._plan(find, replacement, self.ids()), loop=self.ctx.loop)
        return self._task

    async def _plan(self, find: str, replacement: str, ids: list[str] | None) -> None:
        try:
            plan = await self.ctx.run(plan_replace, self.store, ids, find, replacement)
        except OraError as exc:
            self.summary.setText(str(exc))
            return
        if (find, replacement, ids) != (self.find.text(), self.replacement.text(), self.ids()):
            return  # typed on meanwhile
        self.plan = plan
        self.preview.clear()
        self.preview.addItems([f"{p.id}:  …{p.before}…  →  …{p.after}…" for p in plan.preview])
        if plan.memories:
            more = f" (the first {len(plan.preview):,} shown)" if len(plan.preview) < plan.memories else ""
            self.summary.setText(f"Replaces {plan.matches:,} time{'s' if plan.matches != 1 else ''} in "
                                 f"{plan.memories:,} memor{'y' if plan.memories == 1 else 'ies'}{more}. "
                                 "One Ctrl+Z puts every text back.")
        else:
            self.summary.setText("No memory holds this text (as written: case counts).")
        self.replace_button.setEnabled(plan.memories > 0)
        self.replace_button.setText(f"Replace in {plan.memories:,}" if plan.memories else "Replace")

    def _replace(self) -> None:
        if self.plan is not None and self.plan.memories and self.plan.find == self.find.text():
            self.replace_asked.emit(self.ids(), self.find.text(), self.replacement.text())
            self.accept()
