"""The Context tab: type a question and a token budget, see exactly what ``store.context()`` hands the agent.

Left: the sections (important, relevant, recent) with their tokens against their share of the
budget, each memory placed with its cost and why it was chosen, then what was left out for
budget. Right: the exact text the agent would receive. Nothing is touched (``touch=False``):
looking at the context does not change access counts or health. Double-click a memory to see
it in the Memories tab.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core import ContextBundle, OraError
from ..a11y import describe
from ..formatting import first_line
from ..jobs.background import Latest
from ..jobs.widgets import muted
from ..review.navigate import show_in_table

REASONS = {"important": "important", "keyword": "matches the question",
           "neighbor": "related to a match", "recent": "recently added"}
ID_ROLE = Qt.ItemDataRole.UserRole
LEFT_OUT_COLOUR = "#7f8c8d"


def assemble(ctx, path, question: str, budget: int, hops: int) -> ContextBundle:  # noqa: ANN001
    """``store.context(...)`` of the file at ``path`` (worker thread), touching nothing."""
    return ctx.store_for(path).context(question, budget, hops=hops, touch=False)


class ContextView(QWidget):
    """See the module docstring."""

    def __init__(self, ctx, parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.setObjectName("ContextView")
        self.ctx = ctx
        self.bundle: ContextBundle | None = None
        self._latest = Latest()

        self.question = QLineEdit()
        self.question.setPlaceholderText("The agent's next message, e.g. why did the checkout fail?")
        self.question.setClearButtonEnabled(True)
        self.budget = QSpinBox()
        self.budget.setRange(0, 1_000_000)
        self.budget.setSingleStep(250)
        self.budget.setValue(2000)
        self.budget.setSuffix(" tokens")
        self.budget.setToolTip("The token budget (4 characters per token)")
        self.hops = QSpinBox()
        self.hops.setRange(0, 3)
        self.hops.setValue(1)
        self.hops.setPrefix("hops ")
        self.hops.setToolTip("How far related_to links of keyword hits are followed")
        describe(self.budget, "Token budget", "How many tokens the context may use (4 characters per token)")
        describe(self.hops, "Link hops", "How far related_to links of keyword hits are followed")
        self.run_button = QPushButton("Show context")
        self.run_button.setDefault(True)
        describe(self.run_button, "Show context", "Assemble the context the agent would receive for the question")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("&Question:", buddy=self.question))
        bar.addWidget(self.question, 1)
        bar.addWidget(self.budget)
        bar.addWidget(self.hops)
        bar.addWidget(self.run_button)

        self.tree = QTreeWidget()
        self.tree.setObjectName("ContextSections")
        describe(self.tree, "Context sections", "Each section of the context and its memories, with tokens and why")
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Section / memory", "Tokens", "Why"])
        self.tree.headerItem().setToolTip(2, "important: the seed's extraction rule (importance ≥ 7, or healthy "
                                             "facts); matches the question: a keyword hit; related to a match: a "
                                             "related_to neighbour of one; recently added")
        self.tree.setColumnWidth(0, 380)
        self.tree.setColumnWidth(1, 90)
        self.tree.setUniformRowHeights(True)
        self.text = QPlainTextEdit()
        self.text.setObjectName("ContextText")
        describe(self.text, "Context text", "The exact text the agent would receive")
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlaceholderText("The exact text the agent would receive appears here.")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.tree)
        split.addWidget(self.text)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.notes = muted(QLabel())
        self.notes.setWordWrap(True)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(bar)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)
        layout.addWidget(self.notes)

        self.run_button.clicked.connect(lambda _c=False: self.refresh())
        self.question.returnPressed.connect(self.refresh)
        self.tree.itemDoubleClicked.connect(self._open)
        ctx.current_changed.connect(self._file_changed)
        self._file_changed(ctx.current)

    def _file_changed(self, _current: object) -> None:
        self.bundle = None
        self.tree.clear()
        self.text.clear()
        path = self.ctx.current_path()
        self.summary.setText("Type what the agent is asked and press Enter: the memories it would be handed, "
                             "and what the budget left out." if path else "Select an agent on the left first.")
        self.notes.setText("")
        if path is not None and self.question.text().strip():
            self.refresh()

    def refresh(self) -> asyncio.Task | None:
        """Assemble the context for the question and budget (off the GUI thread)."""
        return self._latest.start(self.reload())

    async def reload(self) -> ContextBundle | None:
        path = self.ctx.current_path()
        if path is None:
            self.summary.setText("Select an agent on the left first.")
            return None
        self.summary.setText("Assembling…")
        try:
            bundle = await self.ctx.run(assemble, self.ctx, path, self.question.text(), self.budget.value(),
                                        self.hops.value())
        except OraError as exc:
            self.summary.setText(f"The context could not be assembled: {exc}")
            return None
        self.show_bundle(bundle)
        return bundle

    def show_bundle(self, bundle: ContextBundle) -> None:
        self.bundle = bundle
        self.tree.clear()
        for section in bundle.sections:
            title = section.title.lstrip("# ")
            top = QTreeWidgetItem([f"{title} ({len(section.items)})", f"{section.tokens:,} / {section.budget:,}",
                                   "used / its share"])
            top.setToolTip(2, "Tokens used against the section's share of the budget; what a section "
                              "leaves unused passes on to the next")
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            self.tree.addTopLevelItem(top)
            for item in section.items:
                row = QTreeWidgetItem([first_line(item.memory.content, 160), f"{item.tokens:,}",
                                       REASONS.get(item.reason, item.reason) + (", cut to fit" if item.truncated
                                                                                else "")])
                row.setData(0, ID_ROLE, item.memory.id)
                row.setToolTip(0, item.text)
                top.addChild(row)
            top.setExpanded(True)
        left = bundle.left_out
        out = QTreeWidgetItem([f"Left out for budget ({len(left)})", f"{sum(i.tokens for i in left):,}",
                               "would not fit"])
        out.setToolTip(2, "Candidates that did not fit the budget, even cut short")
        self.tree.addTopLevelItem(out)
        for item in left:
            row = QTreeWidgetItem([first_line(item.memory.content, 160), f"{item.tokens:,}",
                                   REASONS.get(item.reason, item.reason)])
            row.setData(0, ID_ROLE, item.memory.id)
            row.setToolTip(0, item.text)
            for column in range(3):
                row.setForeground(column, QColor(LEFT_OUT_COLOUR))
            out.addChild(row)
        out.setExpanded(True)
        self.text.setPlainText(bundle.text)
        placed = len(bundle.memories)
        noun = "memory" if placed == 1 else "memories"
        self.summary.setText(
            f"<b>{bundle.tokens:,} of {bundle.token_budget:,} tokens</b> — {placed} {noun} "
            f"placed, {len(left)} left out for budget (4 characters per token; nothing was touched)")
        self.notes.setText(" · ".join(bundle.notes))

    def _open(self, item: QTreeWidgetItem, _column: int) -> None:
        memory_id = item.data(0, ID_ROLE)
        if memory_id:
            show_in_table(self.ctx, str(memory_id))
