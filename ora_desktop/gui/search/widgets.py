"""The search bar (field, scope, quick filters), the facet panel and the all-sites results."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...views.filters import QUICK_FILTERS
from ...views.search import FacetCounts
from ..a11y import describe
from ..elided import ElidedLabel
from ..formatting import first_line, health_text
from ..memories.delegates import HighlightDelegate
from ..memories.health_bar import health_bar
from ..memories.model import HEALTH_ROLE
from ..theme import styled
from .backend import EverywhereHit
from .controller import SearchController
from .vectors_progress import VectorsProgress

PLACEHOLDER = "Search memories  (Ctrl+F)   e.g.  deploy  type:fact  importance:>=7  -draft  \"exact phrase\""
GROUP_TITLES = {"type": "Type", "sync": "Sync status", "importance": "Importance", "health": "Health",
                "created": "Created", "tag:session": "Session", "tag:project": "Project", "tag:model": "Model"}
OPEN_TAG_GROUPS = ("tag:session",)  # a tag group shown open (the others start folded)
VALUE_ROLE = Qt.ItemDataRole.UserRole + 20
MODES = (("Words", "lexical"), ("Meaning", "semantic"), ("Words + meaning", "hybrid"))


class SearchBar(QWidget):
    """Search field, scope (this file / all sites), quick-filter toggles and a note line."""

    def __init__(self, controller: SearchController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.field = QLineEdit()
        self.field.setObjectName("SearchField")
        describe(self.field, "Search", "Search as you type; the query language of ora-desktop search")
        self.field.setPlaceholderText(PLACEHOLDER)
        self.field.setClearButtonEnabled(True)
        self.field.textChanged.connect(controller.set_text)
        self.field.returnPressed.connect(lambda: controller.set_text(self.field.text(), immediate=True))
        row.addWidget(self.field, 1)
        self.scope = QComboBox()
        self.scope.addItem("This file", "file")
        self.scope.addItem("All sites", "all")
        self.scope.setToolTip("Search the selected agent's file, or every agent of every site")
        self.scope.currentIndexChanged.connect(lambda _i: controller.set_scope(self.scope.currentData()))
        row.addWidget(self.scope)
        self.mode = QComboBox()
        self.mode.setObjectName("SearchMode")
        for label, mode in MODES:
            self.mode.addItem(label, mode)
        self.mode.setToolTip("Match the words (full-text), the meaning (embeddings, built on first use), "
                             "or both fused (hybrid)")
        self.mode.currentIndexChanged.connect(lambda _i: controller.set_mode(self.mode.currentData()))
        row.addWidget(self.mode)
        layout.addLayout(row)
        chips = QHBoxLayout()
        chips.setSpacing(4)
        self.quick: dict[str, QToolButton] = {}
        for name, (label, tip, _changes) in QUICK_FILTERS.items():
            button = QToolButton()
            styled(button, "QuickFilter")
            button.setText(label)
            button.setToolTip(tip)
            button.setCheckable(True)
            button.toggled.connect(lambda on, name=name: controller.toggle_quick(name, on))
            chips.addWidget(button)
            self.quick[name] = button
        self.note = ElidedLabel()  # a long note is cut with "…" rather than widening the window
        self.note.setObjectName("SearchNote")
        self.note.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        chips.addWidget(self.note, 1)
        layout.addLayout(chips)
        controller.note.connect(self.note.setText)
        self.vectors = VectorsProgress(controller.ctx)  # the first search by meaning of a big file
        layout.addWidget(self.vectors)
        controller.vectors_needed.connect(self.vectors.build)
        controller.vectors_declined.connect(self.vectors.show_declined)
        self.vectors.finished.connect(self._vectors_built)
        self.vectors.cancelled.connect(controller.vectors_cancelled)
        self.vectors.build_asked.connect(controller.build_vectors)

    def _vectors_built(self, ok: bool) -> None:
        if ok:
            self.controller.vectors_built()

    def focus_search(self) -> None:
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()


class FacetPanel(QTreeWidget):
    """Facet groups with counts; checking values narrows the table (OR within a group)."""

    def __init__(self, controller: SearchController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("FacetPanel")
        describe(self, "Filters", "Facets with counts: tick values to narrow the table")
        self.controller = controller
        self.setHeaderLabels(["Filter", "Count"])
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.itemChanged.connect(self._changed)
        self._filling = False
        self._expanded: dict[str, bool] = {}
        controller.facets_ready.connect(self.show_counts)

    def show_counts(self, counts: FacetCounts) -> None:
        if self.controller.scope == "all" and self.controller.text.strip():
            return  # the list shows hits of every file: one file's counts would mislead
        chosen = self.controller.filters.facets
        groups: list[tuple[str, dict[str, int]]] = []
        for group, values in counts.groups.items():
            if not values and group not in chosen:
                continue
            shown = dict(values)
            for value in chosen.get(group, ()):
                shown.setdefault(value, 0)
            groups.append((group, shown))
        if self._same_values(groups):
            self._update_counts(groups, chosen)  # e.g. an edit moved some counts: no rebuild
            return
        self._filling = True
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            self._expanded[top.data(0, VALUE_ROLE)] = top.isExpanded()
        self.clear()
        for group, shown in groups:
            title = GROUP_TITLES.get(group, group.replace("tag:", "Tags: ").capitalize()
                                     if not group.startswith("tag:") else f"Tags · {group[4:]}")
            top = QTreeWidgetItem([title, ""])
            top.setData(0, VALUE_ROLE, group)
            top.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.addTopLevelItem(top)
            for value, count in shown.items():
                label = value if group != "sync" else value.replace("_", " ")
                item = QTreeWidgetItem([label, ""])
                item.setData(0, VALUE_ROLE, value)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
                on = value in chosen.get(group, ())
                item.setCheckState(0, Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
                item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self._show_count(item, count, on)
                top.addChild(item)
            top.setExpanded(self._expanded.get(group, not group.startswith("tag:") or group in OPEN_TAG_GROUPS))
        self._filling = False

    def _same_values(self, groups: list[tuple[str, dict[str, int]]]) -> bool:
        """Whether the panel lists exactly these groups and values, in this order."""
        if self.topLevelItemCount() != len(groups):
            return False
        for i, (group, shown) in enumerate(groups):
            top = self.topLevelItem(i)
            if top.data(0, VALUE_ROLE) != group or top.childCount() != len(shown):
                return False
            if any(top.child(j).data(0, VALUE_ROLE) != value for j, value in enumerate(shown)):
                return False
        return True

    def _update_counts(self, groups: list[tuple[str, dict[str, int]]], chosen: dict[str, set[str]]) -> None:
        self._filling = True
        try:
            for i, (group, shown) in enumerate(groups):
                top = self.topLevelItem(i)
                for j, (value, count) in enumerate(shown.items()):
                    item = top.child(j)
                    on = value in chosen.get(group, ())
                    state = Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
                    if item.checkState(0) != state:
                        item.setCheckState(0, state)
                    self._show_count(item, count, on)
        finally:
            self._filling = False

    def _show_count(self, item: QTreeWidgetItem, count: int, on: bool) -> None:
        text = f"{count:,}"
        if item.text(1) != text:
            item.setText(1, text)
        faded = count == 0 and not on
        if faded:
            item.setForeground(0, self.palette().placeholderText())
        elif item.data(0, Qt.ItemDataRole.ForegroundRole) is not None:
            item.setData(0, Qt.ItemDataRole.ForegroundRole, None)

    def show_unavailable(self, text: str) -> None:
        """No counts, and why (e.g. across all sites: facets describe one file)."""
        self._filling = True
        self.clear()
        item = QTreeWidgetItem([text, ""])
        item.setFlags(Qt.ItemFlag.NoItemFlags)
        item.setToolTip(0, text)
        self.addTopLevelItem(item)
        self._filling = False

    def _changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._filling or column != 0 or item.parent() is None:
            return
        group = item.parent().data(0, VALUE_ROLE)
        self.controller.toggle_facet(group, item.data(0, VALUE_ROLE), item.checkState(0) == Qt.CheckState.Checked)

    def item_for(self, group: str, value: str) -> QTreeWidgetItem | None:
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            if top.data(0, VALUE_ROLE) == group:
                for j in range(top.childCount()):
                    if top.child(j).data(0, VALUE_ROLE) == value:
                        return top.child(j)
        return None


class EverywhereView(QTreeWidget):
    """Hits from every site; each row says where it lives. Activate a row to open it there."""

    open_hit = Signal(object, str)  # path, memory id
    hit_selected = Signal(object)  # the EverywhereHit now current (None: none)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("EverywhereView")
        describe(self, "Hits across all sites", "Search hits from every agent; each row says where it lives")
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setHeaderLabels(["Content", "Where", "Type", "Importance", "Health"])
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.header().setStretchLastSection(False)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.highlight = HighlightDelegate(self)  # the searched words, as in the table
        self.setItemDelegateForColumn(0, self.highlight)
        self.itemActivated.connect(self._activated)
        self.currentItemChanged.connect(self._current)
        self.hits: list[EverywhereHit] = []

    def show_hits(self, hits: list[EverywhereHit], note: str = "") -> None:
        self.clear()
        self.hits = hits
        for hit in hits:
            m = hit.memory
            item = QTreeWidgetItem([first_line(m.content), hit.where, m.type or "", str(m.importance or ""),
                                    health_text(m.health_score)])
            item.setToolTip(0, m.content[:600])
            item.setToolTip(1, str(hit.path))
            item.setData(0, VALUE_ROLE, (str(hit.path), m.id))
            item.setData(4, HEALTH_ROLE, m.health_score)
            item.setData(4, Qt.ItemDataRole.DecorationRole, health_bar(m.health_score))
            self.addTopLevelItem(item)
        self.setToolTip(note)

    def _current(self, item: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        row = self.indexOfTopLevelItem(item) if item is not None else -1
        self.hit_selected.emit(self.hits[row] if 0 <= row < len(self.hits) else None)

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        path, memory_id = item.data(0, VALUE_ROLE)
        self.open_hit.emit(Path(path), memory_id)
