"""The memory table: a model of row ids that fetches rows lazily, sorting, columns, refresh."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from PySide6.QtCore import QSettings, Qt

from ora_desktop.core import ListQuery
from ora_desktop.gui.memories.columns import COLUMNS, column_index
from ora_desktop.gui.memories.model import MEMORY_ROLE, MemoryTableModel
from ora_desktop.gui.memories.view import MemoryTable


def loaded_model(ctx, qtbot, path, **kw):
    model = MemoryTableModel(ctx, **kw)
    model.set_store(ctx.store_for(path))
    qtbot.waitUntil(lambda: not model.is_loading(), timeout=5000)
    return model


def fetch_all_visible(model, qtbot, rows):
    for row in rows:
        model.data(model.index(row, 0))
    qtbot.waitUntil(lambda: all(model.memory_at(r) is not None for r in rows), timeout=5000)
    pages_settled(model, qtbot)


def pages_settled(model, qtbot):
    """Until no page read is asked for or under way (one in flight reads the file after a write
    the test makes next, and would repaint its rows once more)."""
    qtbot.waitUntil(lambda: not model._wanted and not model._fetching, timeout=5000)


def test_model_passes_qtmodeltester(ctx, qtbot, qtmodeltester, filled_db):
    model = loaded_model(ctx, qtbot, filled_db(250), page_size=50)
    assert model.rowCount() == 250
    qtmodeltester.check(model, force_py=True)
    fetch_all_visible(model, qtbot, range(0, 250, 7))
    qtmodeltester.check(model, force_py=True)


def test_rows_arrive_lazily_page_by_page(ctx, qtbot, filled_db):
    model = loaded_model(ctx, qtbot, filled_db(300), page_size=50, cache_pages=2)
    assert model.memory_at(0) is None  # nothing fetched until asked
    assert model.data(model.index(120, 0)) == "…"  # a placeholder while fetching
    qtbot.waitUntil(lambda: model.memory_at(120) is not None, timeout=5000)
    assert model.memory_at(0) is None and model.memory_at(100) is not None  # only that page
    fetch_all_visible(model, qtbot, [0])
    fetch_all_visible(model, qtbot, [299])
    assert len(model._pages) <= 2  # the cache is bounded: the oldest page went


def test_display_values(ctx, qtbot, filled_db):
    path = filled_db(5)
    model = loaded_model(ctx, qtbot, path)
    fetch_all_visible(model, qtbot, range(5))
    memory = model.data(model.index(0, 0), MEMORY_ROLE)
    row = {c.key: model.data(model.index(0, i)) for i, c in enumerate(COLUMNS)}
    assert row["content"] == memory.title and "\n" not in row["content"]
    assert row["type"] == memory.type and row["importance"] == str(memory.importance)
    assert row["sync"] == "Pending" and row["dirty"] == "●"
    assert row["last_accessed"] == "never"
    assert row["created"].endswith("ago")
    assert "UTC" in model.data(model.index(0, column_index("created")), Qt.ItemDataRole.ToolTipRole)
    assert not model.data(model.index(0, column_index("sync")), Qt.ItemDataRole.DecorationRole).isNull()


def _none_first(value):
    return (value is not None, value)


#: What each column sorts by, read from the memory itself (NULLs first, as SQLite sorts them).
SORT_VALUE = {
    "content": lambda m: m.content.lower(), "type": lambda m: m.type, "importance": lambda m: m.importance,
    "health": lambda m: m.health_score, "access_count": lambda m: m.access_count,
    "last_accessed": lambda m: m.last_accessed_at, "created": lambda m: m.created_at,
    "expires": lambda m: m.expires_at, "sync": lambda m: m.sync_status, "dirty": lambda m: m.is_dirty,
    "updated": lambda m: m.updated_at_text,
    "snippet": lambda m: m.content.lower(),  # sorts as Content (a snippet differs per search)
    "id": lambda m: m.id,
}


def test_sort_by_any_column_requeries_the_keys(ctx, qtbot, filled_db):
    path = filled_db(60)
    with sqlite3.connect(path) as conn:  # some rows expire, some were accessed, some are synced
        conn.execute("UPDATE memories SET expires_at = '2030-01-' || printf('%02d', 1 + rowid % 27) || ' 00:00:00', "
                     "last_accessed_at = '2026-02-' || printf('%02d', 1 + rowid % 13) || ' 08:00:00', "
                     "access_count = rowid % 4 WHERE rowid % 3 = 0")
        conn.execute("UPDATE memories SET synced_at = updated_at, sync_status = 'synced' WHERE rowid % 4 = 0")
    model = loaded_model(ctx, qtbot, path)
    assert {c.key for c in COLUMNS} == set(SORT_VALUE), "every column of the table is checked"
    for key, value in SORT_VALUE.items():
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            model.sort(column_index(key), order)
            qtbot.waitUntil(lambda: not model.is_loading(), timeout=5000)
            assert model.rowCount() == 60
            fetch_all_visible(model, qtbot, range(60))
            rows = [model.memory_at(r) for r in range(60)]
            descending = order == Qt.SortOrder.DescendingOrder
            if key == "dirty":  # dirty ones together (first when descending), each group newest update first
                flags = [m.is_dirty for m in rows]
                assert flags == sorted(flags, reverse=descending) and len(set(flags)) == 2
                for flag in (True, False):
                    group = [(m.updated_at_text, m.rowid) for m in rows if m.is_dirty is flag]
                    assert group == sorted(group, reverse=True), f"sorted by dirty, {order.name}"
                continue
            shown = [(_none_first(value(m)), m.rowid) for m in rows]
            assert shown == sorted(shown, reverse=descending), f"sorted by {key}, {order.name}"
    expected = [r[0] for r in sqlite3.connect(path).execute(
        "SELECT rowid FROM memories ORDER BY id DESC, rowid DESC")]
    assert list(model.keys) == expected


def test_columns_can_be_hidden_moved_and_are_remembered(ctx, qtbot, filled_db, settings):
    model = loaded_model(ctx, qtbot, filled_db(10))
    table = MemoryTable(model, settings)
    qtbot.addWidget(table)
    menu = table.column_menu(table)
    titles = [a.text() for a in menu.actions() if a.text()]
    assert "Accesses" in titles and "Id" in titles
    assert table.isColumnHidden(column_index("access_count"))  # hidden by default, offered in the menu
    assert not table.isColumnHidden(column_index("type"))
    kind = next(a for a in menu.actions() if a.text() == "Type")
    kind.setChecked(False)
    assert table.isColumnHidden(column_index("type"))
    header = table.horizontalHeader()
    header.moveSection(header.visualIndex(column_index("type")), 0)
    settings.sync()
    table2 = MemoryTable(MemoryTableModel(ctx), QSettings(settings.fileName(), QSettings.Format.IniFormat))
    qtbot.addWidget(table2)
    assert table2.isColumnHidden(column_index("type"))
    assert table2.horizontalHeader().logicalIndex(0) == column_index("type")


def test_multi_select_and_current_memory(ctx, qtbot, filled_db):
    model = loaded_model(ctx, qtbot, filled_db(20))
    table = MemoryTable(model)
    qtbot.addWidget(table)
    table.resize(900, 600)
    table.show()
    qtbot.waitUntil(lambda: model.memory_at(0) is not None, timeout=5000)
    with qtbot.waitSignal(table.current_memory, timeout=3000) as blocker:
        table.selectRow(2)
    assert blocker.args[0].id == model.memory_at(2).id
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                     table.visualRect(model.index(4, 0)).center())
    assert table.selected_rows() == [2, 4]


def test_filter_query(ctx, qtbot, filled_db):
    model = loaded_model(ctx, qtbot, filled_db(50))
    model.set_query(ListQuery(types=("fact",)))
    qtbot.waitUntil(lambda: not model.is_loading() and model.rowCount() == 10, timeout=5000)


def test_refreshes_when_another_process_inserts(ctx, qtbot, filled_db):
    path = filled_db(10)
    model = loaded_model(ctx, qtbot, path)
    ctx.start_watching(50)
    qtbot.wait(100)
    code = ("import ora_desktop, sys; s = ora_desktop.open_store(sys.argv[1]); "
            "s.add('written by the agent meanwhile', type='fact', importance=3)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    qtbot.waitUntil(lambda: model.rowCount() == 11, timeout=5000)
    fetch_all_visible(model, qtbot, range(11))
    assert any(model.memory_at(r).content == "written by the agent meanwhile" for r in range(11))


def test_own_edit_updates_the_row(ctx, qtbot, filled_db):
    path = filled_db(10)
    model = loaded_model(ctx, qtbot, path)
    fetch_all_visible(model, qtbot, range(10))
    target = model.memory_at(3)
    ctx.loop.create_task(ctx.run(ctx.store_for(path).update, target.id, content="Edited here"))
    qtbot.waitUntil(lambda: any((m := model.memory_at(r)) is not None and m.content == "Edited here"
                                for r in range(10)), timeout=5000)


def test_every_cell_is_painted_with_its_own_values(ctx, qtbot, filled_db):
    """A delegate asks for all of a cell's roles at once and reuses that request from cell to cell:
    each cell shows its own text, alignment, icon and colour, never the previous cell's."""
    from PySide6.QtWidgets import QStyleOptionViewItem

    path = filled_db(6)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE memories SET expires_at = '2020-01-01 00:00:00' WHERE id = 'm001'")  # shown grey
    conn.execute("UPDATE memories SET sync_status = 'local_only' WHERE id = 'm002'")
    conn.commit()
    conn.close()
    model = loaded_model(ctx, qtbot, path)
    table = MemoryTable(model)
    qtbot.addWidget(table)
    fetch_all_visible(model, qtbot, range(6))
    delegate = table.itemDelegate()
    for row in range(6):
        for column in range(len(COLUMNS)):
            index = model.index(row, column)
            option = QStyleOptionViewItem()
            delegate.initStyleOption(option, index)
            assert option.text == (model.data(index) or "")
            assert option.icon.isNull() == (model.data(index, Qt.ItemDataRole.DecorationRole) is None)
            aligned_right = bool(option.displayAlignment & Qt.AlignmentFlag.AlignRight)
            assert aligned_right == COLUMNS[column].numeric
            foreground = model.data(index, Qt.ItemDataRole.ForegroundRole)
            if foreground is not None:
                assert option.palette.color(option.palette.ColorRole.Text) == foreground
            else:
                assert option.palette.color(option.palette.ColorRole.Text) == table.palette().color(
                    table.palette().ColorRole.Text)
    expired = next(r for r in range(6) if model.memory_at(r).id == "m001")
    assert model.data(model.index(expired, 0), Qt.ItemDataRole.ForegroundRole) is not None


def test_a_page_read_while_a_reload_lists_other_keys_is_read_again_for_them(ctx, qtbot, filled_db, monkeypatch):
    """A reload lists new keys while the view's read of a page of the old ones is under way (the
    view painted the old rows meanwhile): that page must not be taken as read for the new keys,
    or a row it lacks shows '…' for good."""
    import threading
    from array import array

    model = loaded_model(ctx, qtbot, filled_db(6))
    rowids = list(model.keys)
    model.set_query(model.query, lambda _store, _query: array("q", rowids[4:]))  # two rows listed
    qtbot.waitUntil(lambda: not model.is_loading() and model.rowCount() == 2, timeout=5000)
    fetch_all_visible(model, qtbot, range(2))
    keys_asked, keys_go, page_asked, page_go = (threading.Event() for _ in range(4))

    def held_keys(_store, _query):  # noqa: ANN001, ANN202
        keys_asked.set()
        keys_go.wait(10)
        return array("q", [rowids[0], *rowids[4:]])  # a row more, ahead of the two

    store = model.store
    read = store.by_rowids

    def held_page(wanted):  # noqa: ANN001, ANN202
        page_asked.set()
        page_go.wait(10)
        return read(wanted)

    model.set_query(model.query, held_keys)  # the reload waits for its keys
    qtbot.waitUntil(keys_asked.is_set, timeout=5000)
    monkeypatch.setattr(store, "by_rowids", held_page)
    model.state.pages.clear()
    model.data(model.index(0, 0))  # the view paints the old rows: a read of their page begins
    qtbot.waitUntil(page_asked.is_set, timeout=5000)
    keys_go.set()  # the new keys are listed while that read is under way
    qtbot.waitUntil(lambda: not model.is_loading() and model.rowCount() == 3, timeout=5000)
    page_go.set()
    monkeypatch.undo()
    qtbot.waitUntil(lambda: not model._fetching, timeout=5000)  # that read is stored, before the view asks again
    fetch_all_visible(model, qtbot, range(3))
    assert [model.memory_at(r).rowid for r in range(3)] == [rowids[0], *rowids[4:]]
