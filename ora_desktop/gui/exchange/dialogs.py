"""The export options dialog and the import preview dialog (opened with ``open()``, never
``exec()``: a qasync pitfall, ARCHITECTURE.md)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core import OraError
from ...core.exchange import FORMATS
from ...core.home import OraHome
from ...core.operations.export import EXPORT_FORMATS
from ...core.operations.importing import CONFLICT_POLICIES, ImportResult
from ..theme import styled

NEW_AGENT = "A new agent…"
SCOPES = {"file": "Every memory of the file", "selection": "The selected memories", "view": "What the list shows now"
          " (the current search results and filters)"}
_CONFLICTS = {"skip": "Keep the memory already in the file", "replace": "Replace it",
              "newer": "Replace it only when the imported one is newer",
              "changed": "Replace it only when its text changed"}


class ExportDialog(QDialog):
    """What to export and in which format; ``chosen(scope, format)`` when accepted."""

    chosen = Signal(str, str)

    def __init__(self, selected: int, shown: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export memories")
        self.scope = QComboBox()
        counts = {"selection": selected, "view": shown}
        for key, text in SCOPES.items():
            label = f"{text} ({counts[key]:,})" if key in counts else text
            self.scope.addItem(label, key)
            if key == "selection" and not selected:
                self.scope.model().item(self.scope.count() - 1).setEnabled(False)
        self.format = QComboBox()
        for key, text in zip(EXPORT_FORMATS, ("JSONL — every column, one memory a line",
                                              "CSV — every column, for spreadsheets",
                                              "Markdown — a review document grouped by type"), strict=True):
            self.format.addItem(text, key)
        form = QFormLayout()
        form.addRow("Export", self.scope)
        form.addRow("Format", self.format)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Choose file…")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.accepted.connect(lambda: self.chosen.emit(self.scope.currentData(), self.format.currentData()))


class ImportPreviewDialog(QDialog):
    """The import preview: into which agent (one of the home's, or a new one named here), the
    detected format, counts per type, conflicts, invalid rows, a warning when the source is
    another agent's export, and the first rows as they will look. Options re-run the preview
    (``options_changed``); ``confirmed`` when the user imports."""

    options_changed = Signal()
    confirmed = Signal()

    def __init__(self, source: Path, target: Path, parent: QWidget | None = None, home: OraHome | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Import {source.name}")
        self.resize(820, 560)
        self.source, self.home = source, home
        self.into = QComboBox()
        self.into.setAccessibleName("Import into")
        self.into.setAccessibleDescription("The agent whose file receives the memories, or a new agent")
        agents = home.agents() if home is not None else []
        if not any(a.path == target for a in agents):
            self.into.addItem(str(target), str(target))
        for agent in agents:  # paths as text: a QVariant holding a Path compares by identity
            self.into.addItem(f"{agent.site} / {agent.agent}", str(agent.path))
        self.into.setCurrentIndex(max(self.into.findData(str(target)), 0))
        self.new_site = QComboBox()
        self.new_site.setEditable(True)
        self.new_site.addItems(sorted({a.site for a in agents}))
        current = home.agent_for(target) if home is not None else None
        if current is not None:
            self.new_site.setCurrentText(current.site)
        self.new_site.setAccessibleName("New agent's site")
        self.new_site.setAccessibleDescription("The site folder of the new agent (a new site is created)")
        self.new_name = QLineEdit()
        self.new_name.setPlaceholderText("new agent name")
        self.new_name.setAccessibleName("New agent's name")
        self.new_name.setAccessibleDescription("The name of the agent created by this import")
        self.new_row = QWidget()
        row = QHBoxLayout(self.new_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Site"))
        row.addWidget(self.new_site, 1)
        row.addWidget(QLabel("Agent"))
        row.addWidget(self.new_name, 1)
        if home is not None:
            self.into.addItem(NEW_AGENT, None)
        self.new_row.setVisible(False)
        self.into.currentIndexChanged.connect(self._into_changed)
        self.new_site.currentTextChanged.connect(lambda _t: self.options_changed.emit())
        self.new_name.textChanged.connect(lambda _t: self.options_changed.emit())
        self.format = QComboBox()
        for key in FORMATS:
            self.format.addItem("Detect from the content" if key == "auto" else key, key)
        self.conflict = QComboBox()
        for key in CONFLICT_POLICIES:
            self.conflict.addItem(_CONFLICTS[key], key)
        self.local_only = QCheckBox("Never sync the imported memories (local_only)")
        self.messages = QCheckBox("context-memory: also import key messages")
        self.skip_bad = QCheckBox("Skip invalid rows (otherwise one invalid row stops the import)")
        for box in (self.format, self.conflict):
            box.currentIndexChanged.connect(lambda _i: self.options_changed.emit())
        for check in (self.local_only, self.messages, self.skip_bad):
            check.toggled.connect(lambda _c: self.options_changed.emit())
        self.summary = QLabel("Reading the source…")
        self.summary.setWordWrap(True)
        self.problems = QLabel()
        self.problems.setWordWrap(True)
        styled(self.problems, "ValidationMessage")
        self.problems.hide()
        self.origin = styled(QLabel(), "WarningMessage")
        self.origin.setWordWrap(True)
        self.origin.hide()
        self.rows = QTableWidget(0, 5)
        self.rows.setHorizontalHeaderLabels(["type", "importance", "created", "sync", "content"])
        self.rows.horizontalHeader().setStretchLastSection(True)
        self.rows.verticalHeader().hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.import_button.setText("Import")
        self.import_button.setEnabled(False)
        self.buttons.accepted.connect(self._confirm)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("From", QLabel(str(source)))
        form.addRow("Into", self.into)
        form.addRow("", self.new_row)
        form.addRow("Format", self.format)
        form.addRow("Same id already there", self.conflict)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        for widget in (self.local_only, self.messages, self.skip_bad, self.summary, self.origin, self.problems,
                       self.rows, self.buttons):
            layout.addWidget(widget)
        self.result: ImportResult | None = None

    def _into_changed(self, _index: int) -> None:
        self.new_row.setVisible(self.into.currentData() is None)
        if self.new_row.isVisible():
            self.new_name.setFocus()
        self.options_changed.emit()

    @property
    def creating(self) -> bool:
        """Whether the import goes into a new agent."""
        return self.into.currentIndex() >= 0 and self.into.currentData() is None

    @property
    def target(self) -> Path:
        """The file the import goes into; for a new agent, its path once the names are valid
        (raises the ``OraError`` naming what is wrong, or that the agent exists)."""
        if not self.creating:
            return Path(self.into.currentData())
        assert self.home is not None
        site, name = self.new_site.currentText().strip(), self.new_name.text().strip()
        path = self.home.path_for(site, name)
        if path.exists():
            raise OraError(f"{site}/{name}: this agent exists; choose it in the list above")
        return path

    def options(self) -> dict:
        """The chosen options as keyword arguments of ``import_memories`` (``format`` included)."""
        return {"format": self.format.currentData(), "on_conflict": self.conflict.currentData(),
                "skip_bad": self.skip_bad.isChecked(), "local_only": self.local_only.isChecked(),
                "messages": self.messages.isChecked()}

    def reading(self) -> None:
        self.summary.setText("Reading the source…")
        self.import_button.setEnabled(False)
        self.origin.hide()

    def show_preview(self, result: ImportResult) -> None:
        """Fill the preview from a dry run (which ran with ``skip_bad`` to list every bad row)."""
        self.result = result
        types = ", ".join(f"{t} {n:,}" for t, n in result.by_type.items()) or "none"
        self.summary.setText(
            f"Detected format: {result.format}. {result.added:,} new memories, {result.conflicts:,} already in the "
            f"file ({'replaced' if result.replaced else 'kept'}), {result.collapsed:,} duplicates collapsed. "
            f"By type: {types}.")
        bad = result.skipped
        if bad:
            lines = "\n".join(str(s) for s in bad[:8]) + (f"\n… and {len(bad) - 8} more" if len(bad) > 8 else "")
            verdict = "they will be skipped" if self.skip_bad.isChecked() else "nothing will be imported unless " \
                "you skip them"
            self.problems.setText(f"{len(bad):,} invalid rows ({verdict}):\n{lines}")
        self.problems.setVisible(bool(bad))
        warning = result.origin_warning
        self.origin.setText(f"⚠ {warning}." if warning else "")
        self.origin.setVisible(bool(warning))
        self.rows.setRowCount(len(result.sample))
        for row, memory in enumerate(result.sample):
            created = memory.created_at.strftime("%Y-%m-%d %H:%M:%S") if memory.created_at else ""
            cells = (memory.type, memory.importance, created, memory.sync_status, memory.content.replace("\n", " ⏎ "))
            for column, value in enumerate(cells):
                self.rows.setItem(row, column, QTableWidgetItem("" if value is None else str(value)))
        can_import = (result.added + result.replaced) > 0 and (not bad or self.skip_bad.isChecked())
        self.import_button.setEnabled(can_import)

    def show_problem(self, message: str) -> None:
        """The source cannot be imported at all (no format, unreadable): say so."""
        self.result = None
        self.summary.setText(message)
        self.problems.hide()
        self.origin.hide()
        self.rows.setRowCount(0)
        self.import_button.setEnabled(False)

    def _confirm(self) -> None:
        self.confirmed.emit()
        self.accept()
