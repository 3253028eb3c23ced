"""Dialogs of the curating actions. All are opened with ``open()`` (never ``exec()``) and report
through ``accepted``/``finished`` and their own signals, so they are safe next to qasync."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from ...core import InvalidValue, Memory
from ...core.schema import MEMORY_TYPES, SYNC_STATUSES
from ...core.validation import clean_fields
from ..detail.editor import FIELD_NAMES
from ..formatting import first_line, sync_label
from ..theme import styled


def _message_label() -> QLabel:
    label = QLabel()
    styled(label, "ValidationMessage")
    label.setWordWrap(True)
    label.hide()
    return label


def _explain(exc: InvalidValue) -> str:
    text = str(exc)
    prefix = f"{exc.field}: "
    return f"{FIELD_NAMES.get(exc.field, exc.field)}: {text[len(prefix):] if text.startswith(prefix) else text}"


class CheckedDialog(QDialog):
    """A dialog whose OK stays disabled while ``values()`` raises ``InvalidValue``; the
    problem is named under the fields."""

    def add_message_and_buttons(self, layout: QVBoxLayout) -> None:
        self.message = _message_label()
        layout.addWidget(self.message)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def values(self) -> dict:
        raise NotImplementedError

    def problem_shown(self, text: str) -> str:
        """The message to show for ``text`` (a subclass may stay quiet about an empty form)."""
        return text

    def _validate(self) -> bool:
        try:
            self.values()
        except InvalidValue as exc:
            text, ok = _explain(exc), False
        else:
            text, ok = "", True
        shown = self.problem_shown(text)
        self.message.setText(shown)
        self.message.setVisible(bool(shown))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ok)
        return ok

    def _accept(self) -> None:
        if self._validate():
            self.accept()


class MemoryFieldsDialog(CheckedDialog):
    """Content, type, importance and expiry, validated as you type (new memory, merge)."""

    def __init__(self, title: str, parent: QWidget | None = None, content: str = "", type_: str = "fact",
                 importance: int = 5, intro: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(560, 420)
        layout = QVBoxLayout(self)
        if intro:
            note = QLabel(intro)
            note.setWordWrap(True)
            layout.addWidget(note)
        self.content = QPlainTextEdit(content)
        self.content.setPlaceholderText("What should the agent remember?")
        layout.addWidget(self.content, 1)
        form = QFormLayout()
        self.type = QComboBox()
        self.type.addItems(list(MEMORY_TYPES))
        self.type.setCurrentText(type_)
        self.importance = QLineEdit(str(importance))
        self.expires = QLineEdit()
        self.expires.setPlaceholderText("never — or 7d, 2w, YYYY-MM-DD, YYYY-MM-DD HH:MM:SS (UTC)")
        form.addRow("&Type", self.type)
        form.addRow("&Importance (1-10)", self.importance)
        form.addRow("&Expires", self.expires)
        layout.addLayout(form)
        self.add_message_and_buttons(layout)
        for signal in (self.content.textChanged, self.importance.textChanged, self.expires.textChanged):
            signal.connect(self._validate)
        self._validate()

    def values(self) -> dict:
        """The validated fields (raises ``InvalidValue`` naming the first bad one)."""
        raw = {"content": self.content.toPlainText(), "type": self.type.currentText(),
               "importance": self.importance.text().strip()}
        if self.expires.text().strip():
            raw["expires_at"] = self.expires.text().strip()
        if raw["importance"] == "":
            raise InvalidValue("importance", "must not be empty")
        return clean_fields(raw)

    fields = values

    def problem_shown(self, text: str) -> str:
        # An empty content is not worth a red line before anything was typed.
        return text if self.content.toPlainText().strip() or "Content" not in text else ""


BULK_FIELDS = {
    "type": ("Type", list(MEMORY_TYPES)),
    "importance": ("Importance", [str(i) for i in range(1, 11)]),
    "sync_status": ("Sync status", list(SYNC_STATUSES)),
    "expires_at": ("Expiry", None),
}


class BulkEditDialog(CheckedDialog):
    """Set one field to the same value on every selected memory."""

    def __init__(self, count: int, parent: QWidget | None = None, field: str = "type") -> None:
        super().__init__(parent)
        self.setWindowTitle("Bulk edit")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Set a field on {count:,} selected memor{'y' if count == 1 else 'ies'} "
                                "(one undoable step):"))
        form = QFormLayout()
        self.field = QComboBox()
        for key, (label, _choices) in BULK_FIELDS.items():
            self.field.addItem(label, key)
        self.value = QComboBox()
        self.value.setEditable(False)
        self.expires = QLineEdit()
        self.expires.setPlaceholderText("empty: never expires — or 7d, 2w, YYYY-MM-DD, YYYY-MM-DD HH:MM:SS (UTC)")
        form.addRow("&Field", self.field)
        form.addRow("&Value", self.value)
        form.addRow("", self.expires)
        layout.addLayout(form)
        self.add_message_and_buttons(layout)
        self.field.currentIndexChanged.connect(self._field_changed)
        self.expires.textChanged.connect(self._validate)
        self.field.setCurrentIndex(max(0, self.field.findData(field)))
        self._field_changed()

    def _field_changed(self) -> None:
        key = self.field.currentData()
        choices = BULK_FIELDS[key][1]
        self.value.clear()
        if choices is not None:
            for choice in choices:
                self.value.addItem(sync_label(choice) if key == "sync_status" else choice, choice)
        self.value.setVisible(choices is not None)
        self.expires.setVisible(choices is None)
        self._validate()

    def values(self) -> dict:
        key = self.field.currentData()
        value = self.value.currentData() if BULK_FIELDS[key][1] is not None else (self.expires.text().strip() or None)
        return clean_fields({key: value})

    def label(self) -> str:
        key = self.field.currentData()
        shown = self.value.currentText() if BULK_FIELDS[key][1] is not None else (self.expires.text() or "never")
        return f"set {BULK_FIELDS[key][0].lower()} to {shown}"


class SupersedeDialog(QDialog):
    """Which of two memories replaces the other."""

    def __init__(self, first: Memory, second: Memory, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Supersede")
        self.pair = (first, second)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Which memory is the current one? The other is marked as superseded by it "
                                "(recall and the table hide superseded memories)."))
        newer_first = (first.created_at or 0) and (second.created_at or 0) and first.created_at > second.created_at
        self.group = QButtonGroup(self)
        for i, (live, old) in enumerate(((second, first), (first, second))):
            button = QRadioButton(f"Keep “{first_line(live.content, 60)}”, supersede “{first_line(old.content, 60)}”")
            self.group.addButton(button, i)
            layout.addWidget(button)
        self.group.button(1 if newer_first else 0).setChecked(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def old_and_new(self) -> tuple[Memory, Memory]:
        first, second = self.pair
        return (first, second) if self.group.checkedId() == 0 else (second, first)


class ConflictDialog(QDialog):
    """The memory changed underneath an edit: keep theirs, use mine, or go back to editing."""

    theirs = Signal()
    mine = Signal()

    def __init__(self, current: Memory | None, wanted: dict, message: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Changed by another program")
        self.resize(640, 420)
        layout = QVBoxLayout(self)
        text = QLabel(f"{message}\n\nNothing has been saved yet. Choose which version to keep.")
        text.setWordWrap(True)
        layout.addWidget(text)
        columns = QHBoxLayout()
        for title, body in (
            ("Theirs (now in the file)", current.content if current else "(the memory was deleted)"),
            ("Yours (not saved)", _describe_changes(wanted)),
        ):
            box = QVBoxLayout()
            box.addWidget(QLabel(f"<b>{title}</b>"))
            view = QPlainTextEdit(body)
            view.setReadOnly(True)
            box.addWidget(view)
            columns.addLayout(box)
        layout.addLayout(columns)
        buttons = QDialogButtonBox()
        self.keep_theirs = QPushButton("Keep &theirs")
        self.keep_theirs.setToolTip("Discard your changes and show the memory as it is now")
        self.use_mine = QPushButton("Use &mine")
        self.use_mine.setToolTip("Save your changes over theirs (undo brings theirs back)")
        self.use_mine.setEnabled(current is not None)
        buttons.addButton(self.keep_theirs, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.use_mine, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.keep_theirs.clicked.connect(lambda: (self.theirs.emit(), self.accept()))
        self.use_mine.clicked.connect(lambda: (self.mine.emit(), self.accept()))
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


def _describe_changes(changes: dict) -> str:
    lines = []
    for name, value in changes.items():
        if name == "content":
            lines.insert(0, str(value))
        else:
            lines.append(f"{FIELD_NAMES.get(name, name)}: {value if value is not None else '(none)'}")
    return "\n\n".join(lines) if lines and "content" in changes else "\n".join(lines)


class PreviewDialog(QDialog):
    """A list of what an action would change, and a confirm button."""

    def __init__(self, title: str, headline: str, items: list[str], confirm: str, parent: QWidget | None = None,
                 note: str = "", destructive: bool = False) -> None:
        """``destructive``: Cancel is the default button, so Enter never confirms by accident."""
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(560, 400)
        layout = QVBoxLayout(self)
        label = QLabel(headline)
        label.setWordWrap(True)
        layout.addWidget(label)
        self.items = QListWidget()
        self.items.addItems(items)
        layout.addWidget(self.items, 1)
        if note:
            extra = QLabel(note)
            extra.setWordWrap(True)
            layout.addWidget(extra)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.confirm = QPushButton(confirm)
        self.confirm.setEnabled(bool(items))
        buttons.addButton(self.confirm, QDialogButtonBox.ButtonRole.AcceptRole)
        if destructive:
            self.confirm.setAutoDefault(False)
            cancel = buttons.button(QDialogButtonBox.StandardButton.Cancel)
            cancel.setDefault(True)
            cancel.setFocus()
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


