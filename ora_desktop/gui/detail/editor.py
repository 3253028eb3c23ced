"""``MemoryEditor``: every editable field of one memory, validated as you type (core's rules).

The editor keeps the record it started from (``base``) so a save can detect a change made
underneath (``expected_version``). ``changes()`` returns only the fields that differ.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QSyntaxHighlighter, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ...core import InvalidValue, Memory, timestamps
from ...core.schema import MEMORY_TYPES, SYNC_STATUSES
from ...core.search.query import ParsedQuery
from ...core.validation import clean_fields
from ..a11y import describe
from ..formatting import sync_label
from ..memories.delegates import SpanCache, query_of_terms
from ..theme import is_dark, styled

#: A memory longer than this opens as a read-only excerpt (laying out megabytes of text blocks the
#: window for seconds); "Load all to edit" loads the whole text when the person asks.
LARGE_CHARS = 200_000
#: How much of a large memory the excerpt shows, starting a little before the first search match.
EXCERPT_CHARS = 40_000
#: Above this many characters in the editor, search terms are not highlighted (too slow to mark).
HIGHLIGHT_LIMIT = LARGE_CHARS


def first_match(text: str, terms: tuple[str, ...]) -> int | None:
    """Offset of the first occurrence of any term (case-insensitive), or ``None``."""
    words = sorted({t.strip() for t in terms if t.strip()}, key=len, reverse=True)
    if not words:
        return None
    lowered = text.lower()
    if len(lowered) == len(text):  # the usual case: plain finds are far faster than a regex on megabytes
        found = [i for i in (lowered.find(w.lower()) for w in words) if i >= 0]
        return min(found) if found else None
    match = re.search("|".join(re.escape(w) for w in words), text, re.IGNORECASE)
    return match.start() if match else None


class TermHighlighter(QSyntaxHighlighter):
    """Marks what the current search matches in the content editor (core's stem-aware spans:
    a search for ``running`` marks ``runs``), one text block at a time, cached per block.

    It is attached to the editor's document only while a search marks something: with none,
    showing a memory does not call into Python once per line of its text."""

    def __init__(self, document: QTextDocument, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.target = document
        self.terms: tuple[str, ...] = ()
        self.cache = SpanCache(size=500)

    def set_terms(self, terms: tuple[str, ...]) -> None:
        if tuple(terms) != self.terms:
            self.set_query(query_of_terms(terms))

    def set_query(self, query: ParsedQuery) -> None:
        """Mark what ``query`` matches (prefixes and phrases as the index matched them)."""
        if query != self.cache.query:
            self.terms = query.terms
            self.cache.set_query(query)
            if not query.groups:
                self.setDocument(None)  # takes the marks off
            elif self.document() is None:
                self.setDocument(self.target)  # marks the text
            else:
                self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802
        if not self.cache.query.groups or self.document().characterCount() > HIGHLIGHT_LIMIT:
            return
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(150, 110, 0) if is_dark() else QColor(255, 214, 64))
        for start, end in self.cache.spans(text):
            self.setFormat(start, end - start, fmt)


def _size(chars: int) -> str:
    """``2.4 MB``, ``40 KB`` (of text, counted in characters)."""
    return f"{chars / 1_000_000:.1f} MB" if chars >= 1_000_000 else f"{max(1, round(chars / 1000))} KB"


def _expiry_text(memory: Memory) -> str:
    """The expiry as the file holds it when it could not be parsed, else in SQLite's format."""
    raw = dict(memory.unparsed).get("expires_at")
    if raw is not None:
        return raw
    return "" if memory.expires_at is None else timestamps.to_sql(memory.expires_at)


class MemoryEditor(QWidget):
    """The editable fields; emits ``edited`` on every change and ``validity(message)``."""

    edited = Signal()
    validity = Signal(str)  # "" when every field is valid

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.base: Memory | None = None
        self._loading = False
        self._read_only = False
        #: ``(start, end)`` of the excerpt shown when the memory is too large to lay out at once.
        self.excerpt: tuple[int, int] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.excerpt_note = QLabel()
        self.excerpt_note.setWordWrap(True)
        self.load_all_button = QPushButton("Load all to edit")
        self.load_all_button.setToolTip("Load the whole text into the editor (may take a moment for megabytes)")
        self.load_all_button.clicked.connect(self.load_all)
        excerpt_row = QHBoxLayout()
        excerpt_row.addWidget(self.excerpt_note, 1)
        excerpt_row.addWidget(self.load_all_button, 0, Qt.AlignmentFlag.AlignTop)
        self.excerpt_bar = QWidget()
        self.excerpt_bar.setLayout(excerpt_row)
        excerpt_row.setContentsMargins(0, 0, 0, 0)
        self.excerpt_bar.hide()
        layout.addWidget(self.excerpt_bar)
        self.content = QPlainTextEdit()
        self.content.setObjectName("ContentEditor")
        describe(self.content, "Content", "The memory's text, editable")
        self.content.setPlaceholderText("The memory's text (required)")
        self.content.setMinimumHeight(120)
        self.highlighter = TermHighlighter(self.content.document(), self.content)
        layout.addWidget(self.content, 3)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.type = QComboBox()
        describe(self.type, "Type", "The memory's type")
        self.type.addItems(list(MEMORY_TYPES))
        self.importance = QLineEdit()
        self.importance.setPlaceholderText("1 to 10")
        self.health = QLineEdit()
        self.health.setPlaceholderText("0.0 to 1.0")
        self.sync = QComboBox()
        describe(self.sync, "Sync status", "pending, synced or local only")
        for status in SYNC_STATUSES:
            self.sync.addItem(sync_label(status), status)
        self.expires = QLineEdit()
        self.expires.setPlaceholderText("never — or 7d, 2w, YYYY-MM-DD, YYYY-MM-DD HH:MM:SS (UTC)")
        form.addRow("&Type", self.type)
        form.addRow("&Importance", self.importance)
        form.addRow("&Health", self.health)
        self.sync_state = QLabel()
        self.sync_state.setAccessibleName("Where the memory stands with sync")
        self.sync_state.setWordWrap(True)  # never widens the pane (a 1024-wide window keeps it whole)
        self.sync_state.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        sync_row = QHBoxLayout()
        sync_row.setContentsMargins(0, 0, 0, 0)
        sync_row.addWidget(self.sync)
        sync_row.addWidget(self.sync_state, 1)
        form.addRow("&Sync status", sync_row)
        form.labelForField(sync_row).setBuddy(self.sync)
        form.addRow("&Expires", self.expires)
        layout.addLayout(form)
        self.message = QLabel()
        styled(self.message, "ValidationMessage")
        self.message.setWordWrap(True)
        self.message.hide()
        layout.addWidget(self.message)
        for widget in (self.importance, self.health, self.expires):
            widget.textChanged.connect(self._changed)
        self.content.textChanged.connect(self._changed)
        self.type.currentIndexChanged.connect(self._changed)
        self.sync.currentIndexChanged.connect(self._changed)

    # ----------------------------------------------------------------- loading
    def load(self, memory: Memory | None) -> None:
        """Show ``memory`` (discarding unsaved edits)."""
        self.base = memory
        self._loading = True
        try:
            enabled = memory is not None
            for widget in (self.content, self.type, self.importance, self.health, self.sync, self.expires):
                widget.setEnabled(enabled)
            if memory is None:
                self.excerpt = None
                self.excerpt_bar.hide()
                self.content.setPlainText("")
                for line in (self.importance, self.health, self.expires):
                    line.clear()
                return
            self._show_content(memory.content)
            self.type.setCurrentIndex(max(0, self.type.findText(memory.type or "fact")))
            self.importance.setText("" if memory.importance is None else str(memory.importance))
            self.health.setText("" if memory.health_score is None else f"{memory.health_score:g}")
            self.sync.setCurrentIndex(max(0, self.sync.findData(memory.sync_status or "pending")))
            self.expires.setText(_expiry_text(memory))
        finally:
            self.sync_state.setText(f"— {memory.sync_state}" if memory is not None else "")
            self._loading = False
        self._show_message("")

    def rebase(self, memory: Memory) -> None:
        """Make ``memory`` (this editor's memory as stored after a save, undo or redo) the base,
        setting only the fields that show something else. Text that did not change is not set
        again: laying it out again is what a save would cost, and the cursor and scroll stay."""
        base = self.base
        shown = base.content if base is not None and self.excerpt is not None else self.content.toPlainText()
        if base is None or memory.id != base.id or shown != memory.content:
            self.load(memory)
            return
        self.base = memory
        self._loading = True
        try:
            _set_text(self.importance, "" if memory.importance is None else str(memory.importance))
            _set_text(self.health, "" if memory.health_score is None else f"{memory.health_score:g}")
            _set_text(self.expires, _expiry_text(memory))
            self.type.setCurrentIndex(max(0, self.type.findText(memory.type or "fact")))
            self.sync.setCurrentIndex(max(0, self.sync.findData(memory.sync_status or "pending")))
            self.sync_state.setText(f"— {memory.sync_state}")
        finally:
            self._loading = False
        self._show_message("")

    def _show_content(self, text: str, whole: bool = False) -> None:
        """The text, or for a large memory an excerpt around the first search match; then scroll
        to that match."""
        match = first_match(text, self.highlighter.terms)
        if len(text) > LARGE_CHARS and not whole:
            start = 0 if match is None else _excerpt_start(text, match)
            end = min(len(text), start + EXCERPT_CHARS)
            self.excerpt = (start, end)
            self.content.setPlainText(text[start:end])
            where = "around the first match" if match is not None else "from the start"
            self.excerpt_note.setText(
                f"This memory is {_size(len(text))}; showing {_size(end - start)} {where} "
                f"(characters {start:,}–{end:,}), read-only.")
            self.excerpt_bar.show()
            match = None if match is None else match - start
        else:
            self.excerpt = None
            self.excerpt_bar.hide()
            self.content.setPlainText(text)
        self.content.setReadOnly(self._read_only or self.excerpt is not None)
        if match is not None:
            cursor = self.content.textCursor()
            cursor.setPosition(min(match, self.content.document().characterCount() - 1))
            self.content.setTextCursor(cursor)
            self.content.centerCursor()
        else:
            self.content.moveCursor(QTextCursor.MoveOperation.Start)

    def load_all(self) -> None:
        """Replace the excerpt with the whole text, editable (the person asked; it may take a moment)."""
        if self.base is None or self.excerpt is None:
            return
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        self._loading = True
        try:
            self._show_content(self.base.content, whole=True)
        finally:
            self._loading = False
            QGuiApplication.restoreOverrideCursor()

    def set_read_only(self, read_only: bool) -> None:
        self._read_only = read_only
        self.content.setReadOnly(read_only or self.excerpt is not None)
        self.load_all_button.setText("Load all" if read_only else "Load all to edit")
        for widget in (self.type, self.importance, self.health, self.sync, self.expires):
            widget.setEnabled(not read_only and self.base is not None)

    # ----------------------------------------------------------------- edits
    def raw_changes(self) -> dict[str, object]:
        """Fields whose shown text differs from ``base`` (not yet validated)."""
        m = self.base
        if m is None:
            return {}
        out: dict[str, object] = {}
        if self.excerpt is None and self.content.toPlainText() != m.content:
            out["content"] = self.content.toPlainText()
        if self.type.currentText() != (m.type or "fact"):
            out["type"] = self.type.currentText()
        if self.importance.text().strip() != ("" if m.importance is None else str(m.importance)):
            out["importance"] = self.importance.text().strip()
        shown_health = "" if m.health_score is None else f"{m.health_score:g}"
        if self.health.text().strip() != shown_health:
            out["health_score"] = self.health.text().strip()
        if self.sync.currentData() != (m.sync_status or "pending"):
            out["sync_status"] = self.sync.currentData()
        if self.expires.text().strip() != _expiry_text(m):
            out["expires_at"] = self.expires.text().strip() or None
        return out

    def changes(self) -> dict[str, object]:
        """The validated changes as column values; raises ``InvalidValue`` naming the bad field."""
        raw = self.raw_changes()
        for name in ("importance", "health_score"):
            if name in raw and raw[name] == "":
                raise InvalidValue(name, "must not be empty")
        return clean_fields(raw)

    def is_modified(self) -> bool:
        return bool(self.raw_changes())

    def validation_message(self) -> str:
        try:
            self.changes()
        except InvalidValue as exc:
            return _sentence(exc)
        return ""

    def _changed(self) -> None:
        if self._loading:
            return
        self._show_message(self.validation_message())
        self.edited.emit()

    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))
        self.validity.emit(text)


def _set_text(field: QLineEdit, text: str) -> None:
    """Set ``text`` unless shown already (setting it again would reset the field's cursor and undo)."""
    if field.text() != text:
        field.setText(text)


FIELD_NAMES = {"content": "Content", "type": "Type", "importance": "Importance", "health_score": "Health",
               "sync_status": "Sync status", "expires_at": "Expires"}


def _sentence(exc: InvalidValue) -> str:
    """``Importance: 11 is outside the allowed range 1 to 10`` (the field's label first)."""
    text = str(exc)
    prefix = f"{exc.field}: "
    detail = text[len(prefix):] if text.startswith(prefix) else text
    return f"{FIELD_NAMES.get(exc.field, exc.field)}: {detail}"


def _excerpt_start(text: str, match: int, before: int = 2_000) -> int:
    """Where an excerpt showing ``match`` begins: about ``before`` characters ahead of it, at the
    start of a line when one begins near there, else after a space (never mid-word when it can)."""
    start = max(0, match - before)
    if start == 0:
        return 0
    line = text.rfind("\n", max(0, start - before), start)
    if line >= 0:
        return line + 1
    space = text.find(" ", start, min(match, start + 200))
    return space + 1 if space >= 0 else start
