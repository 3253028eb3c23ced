"""``MemoryTable``: the table view (fixed-height rows, column chooser, remembered layout)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QItemSelectionModel, QPoint, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QMouseEvent, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QStyle, QStyleOptionViewItem, QTableView, QWidget

from ...core import Memory
from ...core.search.query import ParsedQuery
from ..a11y import describe
from .cell_edit import CellEditing
from .columns import COLUMNS, column_index
from .delegates import CELL_PADDING, HighlightDelegate, SnippetDelegate
from .model import MemoryTableModel

SETTINGS_KEY = "memories/header-v2"  # v2: compact default columns
COLUMNS_KEY = "memories/header-columns"  # how many columns the saved layout knew
SAVED_BEFORE_COUNTED = 12  # the columns there were before that count was saved
#: The content column's narrowest width: more columns than fit scroll sideways instead.
CONTENT_MIN = 220


#: The line height (px) the columns' widths were chosen for (9 pt Sans).
DESIGN_LINE = 14

class MemoryTable(QTableView):
    """Shows a :class:`MemoryTableModel`; emits the current memory and the selection size."""

    current_memory = Signal(object)  # Memory | None
    selection_size = Signal(int)

    def __init__(self, model: MemoryTableModel, settings: QSettings | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MemoryTable")  # no style sheet: the delegates draw the cells' padding
        describe(self, "Memories", "The memories of the selected file; Enter edits, Del deletes")
        self.settings = settings
        # Before setModel: the selection model it makes moves the current row up when that row is
        # removed, and this must see the row first (Qt calls slots in the order they connected).
        self._takes_place: int | None = None  # the current row is being removed: its place, to select after
        model.rowsAboutToBeRemoved.connect(self._removing)
        # Rows inserted above the current row while it is on screen (an agent writing) scroll
        # the list by as many rows, so the row being read or edited stays where it was.
        self._anchor: int | None = None
        model.rowsAboutToBeInserted.connect(self._inserting)
        model.rowsInserted.connect(self._inserted)
        self.setModel(model)
        self.memory_model = model
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setShowGrid(False)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        rows = self.verticalHeader()
        rows.setVisible(False)
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.fontMetrics().height() + 10)  # again when the font changes
        header = self.horizontalHeader()
        header.setSectionsMovable(True)
        header.setHighlightSections(False)
        header.setStretchLastSection(False)
        # Content takes the width the other (narrow) columns leave, so they all show at once.
        header.setSectionResizeMode(column_index("content"), QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(36)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._header_menu)
        # The narrow columns are drawn by Qt's own delegate, with the style's margin: a Python
        # delegate costs a call into Python and a copy of the cell's options per cell painted. The
        # health bar is a cell decoration (a cached pixmap). Content, first and widest, keeps a
        # padding, and its delegate marks what a search matched.
        self.highlight = HighlightDelegate(self, CELL_PADDING)
        self.setItemDelegateForColumn(column_index("content"), self.highlight)
        self.snippets = SnippetDelegate(self, CELL_PADDING)
        self.setItemDelegateForColumn(column_index("snippet"), self.snippets)
        self._line = self.fontMetrics().height()  # the widths follow the font's size (changeEvent)
        self._default_columns()
        header.setSortIndicator(column_index("created"), Qt.SortOrder.DescendingOrder)
        self.restore_layout()
        self.setSortingEnabled(True)
        # Connected only now, so setting the defaults above does not overwrite the saved layout.
        header.sectionMoved.connect(lambda *_: self.save_layout())
        header.sectionResized.connect(lambda *_: self.save_layout())
        header.sortIndicatorChanged.connect(lambda *_: self.save_layout())
        self.fit_content()
        self.cells = CellEditing(self, model)  # importance, type and expiry edited in place
        self._restoring: tuple[str | None, int | None] = (None, None)
        self._restoring_in: object = None  # the store the remembered row belongs to
        self._restoring_row = -1  # the first selected row then (its place, if it goes away)
        self._restoring_column = -1
        self.selectionModel().currentRowChanged.connect(self._current_row_changed)
        self.selectionModel().selectionChanged.connect(lambda *_: self.selection_size.emit(self.selected_count()))
        model.modelAboutToBeReset.connect(self._remember_current)
        model.modelReset.connect(self._restore_current)
        model.rowsRemoved.connect(self._removed)
        model.dataChanged.connect(self._data_changed)

    def initViewItemOption(self, option: QStyleOptionViewItem) -> None:  # noqa: N802
        """Once per paint: the current cell's focus frame shows whenever the table has focus (the
        Fusion style draws it only after a key moved the focus, not after a click)."""
        super().initViewItemOption(option)
        if self.hasFocus():
            option.state |= QStyle.StateFlag.State_KeyboardFocusChange

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt's name)
        """A double-click on an importance, type or expiry cell edits it there."""
        index = self.indexAt(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and self.cells.editable(index):
            self.setCurrentIndex(index)
            self.cells.start(index)
            return
        super().mouseDoubleClickEvent(event)

    # ----------------------------------------------------------------- selection
    def _selected_spans(self) -> list[tuple[int, int]]:
        """The selected rows as merged (first, last) spans. Read from the selection's ranges:
        ``selectedRows()`` asks the model for its column count, in Python, once per row."""
        spans: list[tuple[int, int]] = []
        for top, bottom in sorted((r.top(), r.bottom()) for r in self.selectionModel().selection()):
            if spans and top <= spans[-1][1] + 1:
                spans[-1] = (spans[-1][0], max(spans[-1][1], bottom))
            else:
                spans.append((top, bottom))
        return spans

    def selected_rows(self) -> list[int]:
        """The selected rows, in order."""
        return [row for top, bottom in self._selected_spans() for row in range(top, bottom + 1)]

    def selected_count(self) -> int:
        """How many rows are selected (without listing them)."""
        return sum(bottom - top + 1 for top, bottom in self._selected_spans())

    def current_memory_now(self) -> Memory | None:
        index = self.currentIndex()
        return self.memory_model.memory_at(index.row()) if index.isValid() else None

    def _current_row_changed(self, current, _previous) -> None:  # noqa: ANN001
        if not current.isValid():
            self.current_memory.emit(None)
            return
        memory = self.memory_model.memory_at(current.row())
        if memory is not None:  # else it is announced when its page arrives (_data_changed)
            self.current_memory.emit(memory)

    def _data_changed(self, top, bottom, _roles=()) -> None:  # noqa: ANN001
        """A page arrived: when it holds the current row, announce the (fresh) memory."""
        current = self.currentIndex()
        if current.isValid() and top.row() <= current.row() <= bottom.row():
            memory = self.memory_model.memory_at(current.row())
            if memory is not None:
                self.current_memory.emit(memory)

    def _remember_current(self) -> None:
        memory = self.current_memory_now()
        self._restoring = (memory.id, memory.rowid) if memory else (None, None)
        self._restoring_in = self.memory_model.keys_store
        rows = self.selected_rows()
        self._restoring_row = rows[0] if rows else self.currentIndex().row()
        self._restoring_column = self.currentIndex().column()  # a keyboard user's cell, kept too

    def _restore_current(self) -> None:
        if self.memory_model.select_top:  # a new search or filter: its best row, selected, in view
            self.memory_model.select_top = False
            if self.memory_model.rowCount():
                self.select_row(0)
            else:
                self.setCurrentIndex(self.memory_model.index(-1, -1))
                self.current_memory.emit(None)
            return
        memory_id, rowid = self._restoring
        if rowid is None:  # nothing was selected (the detail pane may show a followed memory)
            return
        if self._restoring_in is not self.memory_model.keys_store:
            return  # another file: the same rowid there is another memory (the page selects the top row)
        row = self.memory_model.row_of_key(rowid)
        if row is None:  # deleted (here or elsewhere): the row that took its place, as a mail client does
            place = self.memory_model.state.row_to_select(None, self._restoring_row)
            if place is None:
                self.current_memory.emit(None)
            else:
                self.select_row(place)
            return
        # Keep the view where it was sideways: sorting a column scrolled into view must not jump left.
        across = self.horizontalScrollBar().value()
        self.selectRow(row)
        if self._restoring_column > 0:  # the same cell: F2 after a re-read edits the column it did
            self.selectionModel().setCurrentIndex(self.memory_model.index(row, self._restoring_column),
                                                  QItemSelectionModel.SelectionFlag.NoUpdate)
        self.scrollTo(self.memory_model.index(row, 0))
        self.horizontalScrollBar().setValue(across)

    def _removing(self, _parent, first: int, last: int) -> None:  # noqa: ANN001
        current = self.currentIndex().row()
        self._takes_place = first if first <= current <= last else None

    def _inserting(self, _parent, first: int, _last: int) -> None:  # noqa: ANN001
        current = self.currentIndex()
        shown = current.isValid() and self.viewport().rect().intersects(self.visualRect(current))
        self._anchor = self.verticalScrollBar().value() if shown and first <= current.row() else None

    def _inserted(self, _parent, first: int, last: int) -> None:  # noqa: ANN001
        anchor, self._anchor = self._anchor, None
        if anchor is not None:
            self.updateGeometries()  # the scroll range grows with the rows
            self.verticalScrollBar().setValue(anchor + last - first + 1)

    def _removed(self, *_args: object) -> None:
        """The current row was removed in place (a delete, here or by another program): the row
        that took its place is selected, the one above at the end, as a mail client does."""
        place, self._takes_place = self._takes_place, None
        row = None if place is None else self.memory_model.state.row_to_select(None, place)
        if row is not None:
            self.select_row(row)

    def select_row(self, row: int) -> None:
        if 0 <= row < self.memory_model.rowCount():
            self.selectRow(row)
            self.scrollTo(self.memory_model.index(row, 0))

    # ----------------------------------------------------------------- columns
    def _header_menu(self, pos: QPoint) -> None:
        menu = self.column_menu(self)
        menu.popup(self.horizontalHeader().mapToGlobal(pos))

    def column_menu(self, parent: QWidget) -> QMenu:
        """Checkable actions to show or hide each column (also in View > Columns)."""
        menu = QMenu("Columns", parent)
        for i, column in enumerate(COLUMNS):
            action = QAction(column.title, menu, checkable=True)
            action.setChecked(not self.isColumnHidden(i))
            action.setEnabled(column.key != "content")
            action.toggled.connect(lambda on, i=i: self.set_column_visible(i, on))
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction("Reset columns", self.reset_columns)
        return menu

    def set_column_visible(self, section: int, visible: bool) -> None:
        self.setColumnHidden(section, not visible)
        if visible and self.columnWidth(section) < 20:
            self.setColumnWidth(section, self.default_width(section))
        self.fit_content()
        self.save_layout()

    def fit_content(self) -> None:
        """Content takes the width the narrow columns leave, but never less than CONTENT_MIN:
        with more columns than fit, the table scrolls sideways instead of squeezing the text."""
        header = self.horizontalHeader()
        content = column_index("content")
        others = sum(self.columnWidth(i) for i in range(len(COLUMNS)) if i != content and not self.isColumnHidden(i))
        squeezed = self.viewport().width() - others < CONTENT_MIN
        mode = QHeaderView.ResizeMode.Interactive if squeezed else QHeaderView.ResizeMode.Stretch
        if header.sectionResizeMode(content) != mode:
            header.setSectionResizeMode(content, mode)
        if squeezed and self.columnWidth(content) < CONTENT_MIN:
            self.setColumnWidth(content, CONTENT_MIN)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self.fit_content()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the system's font size changed: rows and columns follow
            line = self.fontMetrics().height()
            self.verticalHeader().setDefaultSectionSize(line + 10)
            old, self._line = getattr(self, "_line", line), line
            if old != line:
                content = column_index("content")
                for i in range(len(COLUMNS)):
                    if i != content:
                        self.setColumnWidth(i, round(self.columnWidth(i) * line / old))
                self.fit_content()

    def default_width(self, section: int) -> int:
        """A column's first width: its design width (for a 14 px line) grown with a larger font."""
        return round(COLUMNS[section].width * max(1.0, self.fontMetrics().height() / DESIGN_LINE))

    def _default_columns(self) -> None:
        header = self.horizontalHeader()
        for i, column in enumerate(COLUMNS):
            header.moveSection(header.visualIndex(i), i)
            self.setColumnWidth(i, self.default_width(i))
            self.setColumnHidden(i, not column.default)
        header.moveSection(header.visualIndex(column_index("snippet")), header.visualIndex(column_index("content")) + 1)

    def reset_columns(self) -> None:
        self._default_columns()
        self.save_layout()

    def set_query(self, query: ParsedQuery) -> None:
        """Mark what ``query`` matches in the Content and Matched cells (no repaint: see the caller)."""
        self.highlight.set_query(query)
        self.snippets.set_query(query)

    def save_layout(self) -> None:
        if self.settings is not None:
            self.settings.setValue(SETTINGS_KEY, self.horizontalHeader().saveState())
            self.settings.setValue(COLUMNS_KEY, len(COLUMNS))

    def restore_layout(self) -> bool:
        if self.settings is None:
            return False
        state = self.settings.value(SETTINGS_KEY)
        if not state or not self.horizontalHeader().restoreState(state):
            return False
        header = self.horizontalHeader()
        for i in range(int(self.settings.value(COLUMNS_KEY, SAVED_BEFORE_COUNTED)), len(COLUMNS)):
            # Added since the layout was saved: hidden or shown by default, beside Content if it goes there.
            self.setColumnHidden(i, not COLUMNS[i].default)
            self.setColumnWidth(i, self.default_width(i))
            if COLUMNS[i].key == "snippet":
                header.moveSection(header.visualIndex(i), header.visualIndex(column_index("content")) + 1)
        return True
