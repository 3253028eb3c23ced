"""Saved searches: a named query (with its facet ticks and quick filters written as query words),
its mode and scope, listed under the sidebar and kept in the window's settings.

Activating one puts its query in the search field with its mode and scope; Del (or the context
menu) forgets it. The list hides itself while empty.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from PySide6.QtCore import QEvent, QObject, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QGroupBox, QInputDialog, QListWidget, QListWidgetItem, QMenu, QVBoxLayout, QWidget

from ..a11y import describe

SETTINGS_KEY = "search/saved"


@dataclass(frozen=True, slots=True)
class SavedSearch:
    """What a saved search brings back."""

    name: str
    query: str  # the query language, ticks and quick filters included
    mode: str = "lexical"
    scope: str = "file"


def load(settings: QSettings) -> list[SavedSearch]:
    """The saved searches in ``settings`` (unreadable entries are left out)."""
    try:
        rows = json.loads(str(settings.value(SETTINGS_KEY, "[]")))
    except ValueError:
        return []
    out = []
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and isinstance(row.get("name"), str) and isinstance(row.get("query"), str):
            out.append(SavedSearch(row["name"], row["query"], str(row.get("mode", "lexical")),
                                   str(row.get("scope", "file"))))
    return out


class SavedSearchList(QListWidget):
    """The list under the sidebar; ``chosen(SavedSearch)`` when one is activated."""

    chosen = Signal(object)
    #: How many searches are saved (after each change): the box around the list hides at 0.
    counted = Signal(int)

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        describe(self, "Saved searches", "Activate one to search again; Del forgets it")
        self.settings = settings
        self.searches = load(settings)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.itemActivated.connect(lambda item: self.chosen.emit(self.searches[self.row(item)]))
        self._fill()

    def save(self, search: SavedSearch) -> None:
        """Keep ``search`` (replacing one of the same name)."""
        self.searches = [s for s in self.searches if s.name != search.name] + [search]
        self._store()

    def forget(self, row: int) -> None:
        if 0 <= row < len(self.searches):
            del self.searches[row]
            self._store()

    def _store(self) -> None:
        self.settings.setValue(SETTINGS_KEY, json.dumps([asdict(s) for s in self.searches]))
        self._fill()

    def _fill(self) -> None:
        self.clear()
        for search in self.searches:
            item = QListWidgetItem(search.name)
            item.setToolTip(f"{search.query}  ({search.mode}{', all sites' if search.scope == 'all' else ''})")
            self.addItem(item)
        self.setVisible(bool(self.searches))
        self.setMaximumHeight(8 + self.sizeHintForRow(0) * min(6, max(1, len(self.searches))) if self.count() else 30)
        self.counted.emit(len(self.searches))

    def event(self, event: QEvent) -> bool:
        """Del here forgets a saved search: the window's Delete (memories) must not take the key."""
        if (event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_Delete and self.currentRow() >= 0):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        if event.key() == Qt.Key.Key_Delete and self.currentRow() >= 0:
            self.forget(self.currentRow())
            return
        super().keyPressEvent(event)

    def _menu(self, pos) -> None:  # noqa: ANN001
        item = self.itemAt(pos)
        if item is None:
            return
        menu = QMenu(self)
        row = self.row(item)
        menu.addAction("Search again", lambda: self.chosen.emit(self.searches[row]))
        menu.addAction("Forget this saved search", lambda: self.forget(row))
        menu.popup(self.viewport().mapToGlobal(pos))


class SavedSearches(QObject):
    """The list, the *Save this search…* action and what they do to the window's search bar."""

    def __init__(self, browser, settings: QSettings, window: QWidget) -> None:  # noqa: ANN001 (a MemoryBrowser)
        super().__init__(window)
        self.browser, self.window = browser, window
        self.box = QGroupBox("Saved searches", window)
        self.list = SavedSearchList(settings, self.box)
        self.list.chosen.connect(self.apply)
        QVBoxLayout(self.box).addWidget(self.list)
        self.list.counted.connect(lambda n: self.box.setVisible(n > 0))
        self.box.setVisible(bool(self.list.searches))
        self.action = QAction("&Save this search…", window)
        self.action.setToolTip("Keep the search, its filters, mode and scope under a name in the sidebar")
        self.action.setShortcut(QKeySequence("Ctrl+Shift+S"))
        self.action.triggered.connect(lambda _checked=False: self.ask_name())
        self.dialog: QInputDialog | None = None

    def current(self, name: str) -> SavedSearch:
        controller = self.browser.controller
        return SavedSearch(name, controller.full_text, controller.mode, controller.scope)

    def ask_name(self) -> QInputDialog | None:
        """Ask for a name (opened, not exec'd), then save the search as it stands."""
        query = self.browser.controller.full_text.strip()
        if not query:
            self.browser.ctx.status.emit("Type a search or tick a filter first: an empty search is not saved")
            return None
        dialog = QInputDialog(self.window)
        dialog.setWindowTitle("Save this search")
        dialog.setLabelText("Name:")
        dialog.setTextValue(query[:60])
        dialog.textValueSelected.connect(lambda name: self.save(name))
        self.dialog = dialog
        dialog.open()
        return dialog

    def save(self, name: str) -> None:
        name = name.strip()
        if name:
            self.list.save(self.current(name))
            self.browser.ctx.status.emit(f"Saved the search “{name}” (under the sidebar)")

    def apply(self, search: SavedSearch) -> None:
        """Search again as saved: its words and filters in the field, its mode and scope."""
        bar = self.browser.search
        for button in bar.quick.values():
            button.setChecked(False)
        self.browser.controller.filters.clear()
        for combo, value in ((bar.mode, search.mode), (bar.scope, search.scope)):
            index = combo.findData(value)
            if index >= 0:
                combo.setCurrentIndex(index)
        bar.field.setText(search.query)
        self.browser.controller.set_text(search.query, immediate=True)
