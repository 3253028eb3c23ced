"""The Review tab's consolidation desk: proposed clusters of old, fading memories, each with the
summary that would supersede them; a person approves (Apply), edits the summary first, or rejects
each one. Apply runs core's ``apply_cluster`` through the window's curator, so Ctrl+Z takes it
back (one journal step, as ``ora-desktop undo`` does). The Summaries combo picks who writes them:
the extractive summarizer (the default) or the ``[summarizer]`` endpoint of ``config.toml``; each
cluster says which one wrote its summary, and why the extractive one stands in when the endpoint
failed."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...core import OraError
from ..a11y import describe
from ..curate.commands import ConsolidateCommand
from .navigate import curator_of


def propose(ctx: Any, path: Any, summarizer: str = "extractive") -> Any:
    """The dry run of consolidation for ``path`` (worker thread)."""
    from ...core.operations.consolidate import consolidate

    return consolidate(ctx.store_for(path), dry_run=True, summarizer=summarizer)


class ConsolidationDialog(QDialog):
    """See the module docstring. Opened with ``open()`` (never ``exec()``: qasync)."""

    def __init__(self, ctx: Any, path: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx, self.path = ctx, path
        self.setWindowTitle(f"Consolidate {path.name}")
        self.resize(820, 480)
        self.note = QLabel("Looking for clusters of old, fading memories…")
        self.note.setWordWrap(True)
        self.clusters = describe(QListWidget(), "Proposed clusters", "Clusters of memories on one topic")
        self.summary = describe(QPlainTextEdit(), "Summary", "The summary that would supersede the cluster; edit it "
                                                             "before applying")
        self.members = QLabel()
        self.members.setWordWrap(True)
        self.members.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.written_by = QLabel()
        self.written_by.setWordWrap(True)
        self.written_by.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summarizer = describe(QComboBox(), "Summaries by", "Who writes the summaries: the memories' own "
                                   "sentences, or the [summarizer] endpoint of config.toml")
        self.summarizer.addItem("Extractive (their own sentences)", "extractive")
        self.summarizer.addItem("Endpoint ([summarizer] in config.toml)", "endpoint")
        self.summarizer.currentIndexChanged.connect(lambda _i: self.refresh())
        self.apply_button = QPushButton("&Apply")
        self.reject_button = QPushButton("&Reject")
        describe(self.apply_button, "Apply", "Write this summary, superseding the cluster's memories (Ctrl+Z undoes)")
        describe(self.reject_button, "Reject", "Drop this proposal (nothing changes)")
        self.apply_button.clicked.connect(lambda _c=False: self.apply())
        self.reject_button.clicked.connect(lambda _c=False: self.reject_cluster())
        right = QVBoxLayout()
        right.addWidget(self.members)
        right.addWidget(self.written_by)
        right.addWidget(self.summary, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.reject_button)
        row.addWidget(self.apply_button)
        right.addLayout(row)
        body = QHBoxLayout()
        body.addWidget(self.clusters, 1)
        body.addLayout(right, 2)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        by = QLabel("&Summaries by:")
        by.setBuddy(self.summarizer)
        choice = QHBoxLayout()
        choice.addWidget(by)
        choice.addWidget(self.summarizer)
        choice.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addLayout(choice)
        layout.addLayout(body, 1)
        layout.addWidget(close)
        self.task: asyncio.Task | None = None
        self.clusters.currentRowChanged.connect(self._show)
        self._update()

    def refresh(self) -> asyncio.Task:
        if self.task is not None and not self.task.done():
            self.task.cancel()  # the answer for the summarizer no longer chosen is dropped
        self.task = asyncio.ensure_future(self._load(), loop=self.ctx.loop)
        return self.task

    async def _load(self) -> None:
        self.clusters.clear()
        self.note.setText("Looking for clusters of old, fading memories…")
        try:
            result = await self.ctx.run(propose, self.ctx, self.path, self.summarizer.currentData())
        except OraError as exc:
            self.note.setText(str(exc))
            return
        self.clusters.clear()
        for cluster in result.clusters:
            first = next((line for line in cluster.summary.split("\n") if line.strip() and not line.startswith("```")),
                         "")[:60]
            item = QListWidgetItem(f"{cluster.number}. {len(cluster.ids)} memories — {first}")
            item.setData(Qt.ItemDataRole.UserRole, cluster)
            self.clusters.addItem(item)
        self.note.setText(f"{len(result.clusters)} proposed cluster(s) among {result.candidates} old memories with "
                          "low health. Apply writes the summary (edited or as proposed) superseding its memories; "
                          "nothing is deleted, and Ctrl+Z takes it back." if result.clusters else
                          f"No cluster to consolidate among {result.candidates} old memories with low health.")
        if result.clusters:
            self.clusters.setCurrentRow(0)
        self._update()

    def _cluster(self) -> Any:
        item = self.clusters.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def _show(self, _row: int) -> None:
        cluster = self._cluster()
        self.summary.setPlainText(cluster.summary if cluster else "")
        self.members.setText(f"Supersedes {', '.join(cluster.ids)} ({cluster.type}, importance "
                             f"{cluster.importance})" if cluster else "")
        self.written_by.setText(f"Summary by {cluster.summarizer}" + (f" ({cluster.note})" if cluster.note else "")
                                if cluster else "")
        self._update()

    def _update(self) -> None:
        has = self._cluster() is not None
        self.apply_button.setEnabled(has)
        self.reject_button.setEnabled(has)
        self.summary.setReadOnly(not has)

    def reject_cluster(self) -> None:
        """Drop the selected proposal from the list (the file is not touched)."""
        self.clusters.takeItem(self.clusters.currentRow())
        self._show(self.clusters.currentRow())

    def apply(self) -> asyncio.Task | None:
        """Write the selected cluster's (edited) summary through the curator; drop it from the list."""
        cluster, curator = self._cluster(), curator_of(self.ctx)
        text = self.summary.toPlainText().strip()
        if cluster is None or curator is None or not text:
            return None
        self.reject_cluster()
        return curator.execute(ConsolidateCommand(curator, self.path, cluster, text))
