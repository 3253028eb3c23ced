"""After a write the table repaints only the rows it changed; it reads every row key again only
when rows can have come, gone or moved. Scrolling fetches rows off the GUI thread."""

from __future__ import annotations

import subprocess
import sys
import threading

from PySide6.QtCore import Qt

from ora_desktop.core import ListQuery
from ora_desktop.gui.memories.model import MemoryTableModel
from ora_desktop.gui.memories.view import MemoryTable

from .conftest import db_rows, wait_idle
from .test_curate import select_id
from .test_memories import fetch_all_visible, loaded_model, pages_settled


class Spy:
    """Counts model resets and collects the rows of every ``dataChanged``."""

    def __init__(self, model: MemoryTableModel) -> None:
        self.resets = 0
        self.rows: list[tuple[int, int]] = []
        model.modelReset.connect(self._reset)
        model.dataChanged.connect(lambda top, bottom, *_: self.rows.append((top.row(), bottom.row())))

    def _reset(self) -> None:
        self.resets += 1


def write(ctx, qtbot, fn, *args, **kw):
    task = ctx.loop.create_task(ctx.run(fn, *args, **kw))
    qtbot.waitUntil(task.done, timeout=5000)
    return task.result()


def test_an_importance_edit_repaints_that_row_without_reading_the_keys(ctx, qtbot, filled_db):
    path = filled_db(40)
    model = loaded_model(ctx, qtbot, path, page_size=10)
    fetch_all_visible(model, qtbot, range(40))
    reads, spy = model.key_reads, Spy(model)
    target = model.memory_at(7)
    new = 2 if target.importance != 2 else 3
    write(ctx, qtbot, ctx.store_for(path).update, target.id, importance=new)
    qtbot.waitUntil(lambda: model.memory_at(7).importance == new, timeout=5000)
    assert model.memory_at(7).id == target.id
    assert model.data(model.index(7, 2)) == str(new)  # the Imp. cell shows it
    qtbot.wait(100)  # nothing else follows
    assert model.key_reads == reads and spy.resets == 0
    assert spy.rows and set(spy.rows) == {(7, 7)}  # that row alone was repainted
    assert model.rows_repainted == 1


def test_an_edit_in_the_window_repaints_without_reading_the_keys(make_window, filled_db, qtbot):
    path = filled_db(30)
    window = make_window()
    # The watcher polls PRAGMA data_version on its own connection, which also moves for the
    # window's own writes from worker threads (ARCHITECTURE.md): keep its poll out of this test.
    window.ctx.start_watching(3_600_000)
    wait_idle(qtbot, window)
    model = window.browser.model
    select_id(qtbot, window, "m004")
    pages_settled(model, qtbot)
    reads, spy = model.key_reads, Spy(model)
    row = window.browser.table.currentIndex().row()
    window.browser.detail.editor.importance.setText("9")
    qtbot.mouseClick(window.browser.detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: model.memory_at(row) is not None and model.memory_at(row).importance == 9, timeout=10000)
    qtbot.wait(100)
    assert db_rows(path, "SELECT importance FROM memories WHERE id = 'm004'") == [(9,)]
    assert model.key_reads == reads and spy.resets == 0
    assert {r for pair in spy.rows for r in pair} == {row}
    assert window.browser.table.currentIndex().row() == row  # still selected


def test_a_delete_and_an_add_move_rows_without_reading_the_keys(ctx, qtbot, filled_db):
    path = filled_db(20)
    model = loaded_model(ctx, qtbot, path)
    fetch_all_visible(model, qtbot, range(20))
    store = ctx.store_for(path)
    reads = model.key_reads
    gone, after = model.memory_at(4), model.memory_at(5)
    write(ctx, qtbot, store.delete, gone.id)
    qtbot.waitUntil(lambda: model.rowCount() == 19, timeout=5000)
    assert model.key_reads == reads  # the rowid it had is known: that row alone goes
    fetch_all_visible(model, qtbot, range(19))
    assert gone.id not in {model.memory_at(r).id for r in range(19)}
    assert model.memory_at(4).id == after.id
    write(ctx, qtbot, store.add, "A new memory", type="fact", importance=4)
    qtbot.waitUntil(lambda: model.rowCount() == 20, timeout=5000)
    assert model.key_reads == reads  # placed where it sorts
    fetch_all_visible(model, qtbot, range(20))
    assert model.memory_at(0).content == "A new memory"  # newest first
    assert model.memory_at(5).id == after.id


def test_an_edit_of_the_sort_column_keeps_the_order_correct(ctx, qtbot, filled_db):
    path = filled_db(30)
    model = loaded_model(ctx, qtbot, path)
    model.set_query(ListQuery(order_by="importance", descending=True))
    qtbot.waitUntil(lambda: not model.is_loading(), timeout=5000)
    fetch_all_visible(model, qtbot, range(30))
    store = ctx.store_for(path)

    def importances() -> list[int]:
        return [model.memory_at(r).importance for r in range(model.rowCount())]

    top = model.memory_at(0)
    reads = model.key_reads
    write(ctx, qtbot, store.update, top.id, importance=1)  # the most important becomes the least
    qtbot.waitUntil(lambda: model.key_reads == reads + 1 and not model.is_loading(), timeout=5000)
    fetch_all_visible(model, qtbot, range(30))  # rows shown before keep their old values until fetched again
    qtbot.waitUntil(lambda: importances() == sorted(importances(), reverse=True), timeout=5000)
    assert model.memory_at(0).id != top.id and top.id in {model.memory_at(r).id for r in range(25, 30)}
    # An edit that leaves the row where it is (same importance, other content) reads nothing.
    middle = model.memory_at(12)
    write(ctx, qtbot, store.update, middle.id, content="Same importance, new words")
    qtbot.waitUntil(lambda: model.memory_at(12).content == "Same importance, new words", timeout=5000)
    assert model.key_reads == reads + 1
    assert importances() == sorted(importances(), reverse=True)


def test_an_edit_that_leaves_the_filter_removes_the_row(ctx, qtbot, filled_db):
    path = filled_db(30)
    model = loaded_model(ctx, qtbot, path)
    model.set_query(ListQuery(importance_min=8))
    qtbot.waitUntil(lambda: not model.is_loading(), timeout=5000)
    count = model.rowCount()
    fetch_all_visible(model, qtbot, range(count))
    leaving = model.memory_at(1)
    write(ctx, qtbot, ctx.store_for(path).update, leaving.id, importance=2)
    qtbot.waitUntil(lambda: model.rowCount() == count - 1, timeout=5000)
    fetch_all_visible(model, qtbot, range(count - 1))
    assert all(model.memory_at(r).importance >= 8 for r in range(count - 1))


def test_another_programs_edit_repaints_that_row_and_shows_the_new_value(ctx, qtbot, filled_db):
    """The change feed names the row another program changed: only it repaints, no key read."""
    path = filled_db(10)
    model = loaded_model(ctx, qtbot, path)
    fetch_all_visible(model, qtbot, range(10))
    target = model.memory_at(2)
    reads, spy = model.key_reads, Spy(model)
    ctx.start_watching(50)
    qtbot.wait(100)
    code = ("import ora_desktop, sys; s = ora_desktop.open_store(sys.argv[1]); "
            "s.update(sys.argv[2], importance=10)")
    subprocess.run([sys.executable, "-c", code, str(path), target.id], check=True)
    qtbot.waitUntil(lambda: model.memory_at(2) is not None and model.memory_at(2).importance == 10, timeout=5000)
    qtbot.wait(150)
    assert model.key_reads == reads and spy.resets == 0
    assert set(spy.rows) == {(2, 2)}


def test_scrolling_fetches_rows_on_a_worker_thread_never_in_data(ctx, qtbot, filled_db):
    path = filled_db(600)
    store = ctx.store_for(path)
    threads: list[int] = []
    real = store.by_rowids

    def by_rowids(rowids):  # noqa: ANN001, ANN202
        threads.append(threading.get_ident())
        return real(rowids)

    store.by_rowids = by_rowids
    model = loaded_model(ctx, qtbot, path, page_size=50, cache_pages=3)
    table = MemoryTable(model)
    qtbot.addWidget(table)
    table.resize(600, 300)
    table.show()
    qtbot.waitUntil(lambda: model.memory_at(0) is not None, timeout=5000)
    bar = table.verticalScrollBar()
    for step in (1, 2, 3, 4):
        bar.setValue(bar.maximum() * step // 4)
        first = table.rowAt(0)
        # Straight after scrolling, before the loop ran: an uncached row is a placeholder, not a fetch.
        assert model.memory_at(first) is None
        assert model.data(model.index(first, 0)) == "…"
        qtbot.waitUntil(lambda first=first: model.memory_at(first) is not None, timeout=5000)
    assert threads and threading.main_thread().ident not in threads
