"""The link field's picker: type words, choose a memory (ids are never typed by hand).

While the person types in the detail pane's link field, the file is searched (on a worker, a
short pause after the last key) and the best few memories pop up under the field, each as its
first line and id; choosing one puts its id in the field. Pressing Link with words that name no
id links the best match the picker shows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import QObject, QStringListModel, Qt, QTimer
from PySide6.QtWidgets import QCompleter, QLineEdit

from ...core import Store
from ..formatting import first_line

#: How many memories the picker offers.
CHOICES = 8
SEP = "  —  "


def candidates(store: Store, words: str, exclude: str | None, limit: int = CHOICES) -> list[tuple[str, str]]:
    """(id, first line) of the memories best matching ``words`` (worker thread)."""
    found = store.search(words, limit + 1).hits
    return [(h.memory.id, first_line(h.memory.content, 80)) for h in found if h.memory.id != exclude][:limit]


class LinkPicker(QObject):
    """Attach to ``field``; ``context()`` gives (ctx, store, the memory being linked from)."""

    def __init__(self, field: QLineEdit, context: Callable[[], tuple[object, Store | None, str | None]]) -> None:
        super().__init__(field)
        self.field, self.context = field, context
        self.choices: list[tuple[str, str]] = []
        self.model = QStringListModel(self)
        self.completer = QCompleter(self.model, self)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer.activated.connect(self._chosen)
        field.setCompleter(self.completer)
        self._pause = QTimer(self)
        self._pause.setSingleShot(True)
        self._pause.setInterval(200)
        self._pause.timeout.connect(self._search)
        field.textEdited.connect(lambda _text: self._pause.start())
        self._task: asyncio.Task | None = None

    def _search(self) -> None:
        ctx, store, memory_id = self.context()
        words = self.field.text().strip()
        if store is None or len(words) < 2 or SEP in words:
            return
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = asyncio.ensure_future(self._fill(ctx, store, words, memory_id), loop=ctx.loop)

    async def _fill(self, ctx, store: Store, words: str, memory_id: str | None) -> None:  # noqa: ANN001
        try:
            found = await ctx.run(candidates, store, words, memory_id)
        except Exception:  # a query the engine refuses: no suggestions, the field still takes an id
            found = []
        if self.field.text().strip() != words:
            return  # typed on meanwhile: a newer search follows
        self.choices = found
        self.model.setStringList([f"{title}{SEP}{memory_id}" for memory_id, title in found])
        self.completer.setCompletionPrefix("")
        if found and self.field.hasFocus():
            self.completer.complete()

    def _chosen(self, text: str) -> None:
        # After the completer has put the whole line in the field: the id alone stays.
        QTimer.singleShot(0, lambda: self.field.setText(text.rsplit(SEP, 1)[-1]))

    def chosen_id(self) -> str:
        """The id the field names: a chosen or typed id, else the best match of the words typed."""
        text = self.field.text().strip()
        if SEP in text:
            return text.rsplit(SEP, 1)[-1]
        if self.choices and " " in text:  # words, not an id
            return self.choices[0][0]
        return text
