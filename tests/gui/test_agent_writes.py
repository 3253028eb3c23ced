"""An agent writing the open file with plain sqlite3: the window hears each commit through the
change feed with its ids, and follows it without reading every row key or counting every row
again — the updated row alone repaints, a new memory appears on top, a deleted one goes, and the
facet counts move by the rows' old and new values."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from ora_desktop.core.operations import search as search_module
from ora_desktop.gui.search import controller as controller_module

from .conftest import wait_idle
from .test_facets_follow_edits import shown_counts
from .test_memories import fetch_all_visible, loaded_model
from .test_table_refresh import Spy


def agent(path: Path, sql: str, params: tuple = ()) -> None:
    """One committed statement from another process, as an agent writes."""
    code = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            "c.execute(sys.argv[2], tuple(sys.argv[3:])); c.commit()")
    subprocess.run([sys.executable, "-c", code, str(path), sql, *map(str, params)], check=True)


INSERT = ("INSERT INTO memories (id, content, created_at, updated_at) "
          "VALUES (?, 'noted', datetime('now'), datetime('now'))")


def _sidebar_counted(qtbot, window, path: Path) -> None:  # noqa: ANN001
    """Wait until the sidebar has read ``path``'s count and health."""
    qtbot.waitUntil(lambda: (item := window.sidebar.item_for(path)) is not None
                    and "Average health" in item.toolTip(0), timeout=10000)


def _one_row_added(make_window, filled_db, qtbot):  # noqa: ANN001, ANN202
    """A window on a 10-memory file, watching it; an agent has added one row and the sidebar says 11."""
    path = filled_db(10)
    window = make_window()
    wait_idle(qtbot, window)
    _sidebar_counted(qtbot, window, path)
    window.ctx.start_watching(50)
    agent(path, INSERT, ("agent-1",))
    qtbot.waitUntil(lambda: window.sidebar.item_for(path).text(1) == "11", timeout=10000)
    return path, window


def test_an_agents_update_repaints_that_row_alone_without_reading_the_keys(ctx, qtbot, filled_db):
    path = filled_db(40)
    model = loaded_model(ctx, qtbot, path, page_size=10)
    fetch_all_visible(model, qtbot, range(40))
    target = model.memory_at(13)
    new = 1 if target.importance != 1 else 2
    reads, spy = model.key_reads, Spy(model)
    ctx.start_watching(50)
    qtbot.wait(150)
    agent(path, "UPDATE memories SET importance = ? WHERE id = ?", (new, target.id))  # updated_at untouched
    qtbot.waitUntil(lambda: model.memory_at(13).importance == new, timeout=5000)
    assert model.data(model.index(13, 2)) == str(new)  # the Imp. cell shows it
    qtbot.wait(200)
    assert model.key_reads == reads and spy.resets == 0
    assert set(spy.rows) == {(13, 13)}


def test_an_agents_insert_appears_on_top_and_its_delete_goes_without_reading_the_keys(ctx, qtbot, filled_db):
    path = filled_db(30)
    model = loaded_model(ctx, qtbot, path, page_size=10)
    fetch_all_visible(model, qtbot, range(30))
    second = model.memory_at(0)
    reads, spy = model.key_reads, Spy(model)
    ctx.start_watching(50)
    qtbot.wait(150)
    agent(path, "INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                "VALUES ('agent-1', 'the agent noted this', 'fact', 5, datetime('now', '+1 day'), datetime('now'))")
    qtbot.waitUntil(lambda: model.rowCount() == 31, timeout=5000)
    qtbot.waitUntil(lambda: model.memory_at(0) is not None, timeout=5000)
    assert model.memory_at(0).id == "agent-1"  # newest first: on top
    assert model.memory_at(1).id == second.id
    gone = model.memory_at(7)
    agent(path, "DELETE FROM memories WHERE id = ?", (gone.id,))
    qtbot.waitUntil(lambda: model.rowCount() == 30, timeout=5000)
    fetch_all_visible(model, qtbot, range(30))
    assert gone.id not in {model.memory_at(r).id for r in range(30)}
    assert model.key_reads == reads and spy.resets == 0
    with sqlite3.connect(path) as conn:  # and the list is what reading it again gives
        expected = [r[0] for r in conn.execute(
            "SELECT id FROM memories ORDER BY julianday(created_at) DESC, rowid DESC")]
    assert [model.memory_at(r).id for r in range(30)] == expected


def test_an_agents_writes_move_the_facet_counts_without_counting_again(make_window, filled_db, qtbot,
                                                                       monkeypatch):
    path = filled_db(30)  # importance 1 + i % 10: three memories at each level
    # As on a large file: no tag counts (their top values are counted again, never shifted).
    monkeypatch.setattr(search_module, "TAG_FACETS_UP_TO", 0)
    window = make_window()
    window.ctx.start_watching(3_600_000)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "3", timeout=10000)
    model = window.browser.model
    fetch_all_visible(model, qtbot, range(model.rowCount()))
    counted = []
    real = controller_module.count_answer_facets
    monkeypatch.setattr(controller_module, "count_answer_facets", lambda *args: counted.append(1) or real(*args))
    reads = model.key_reads
    window.ctx.start_watching(50)
    agent(path, "UPDATE memories SET importance = 9 WHERE id = 'm004'")  # from 5
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "4", timeout=10000)
    assert shown_counts(window, "importance")["5"] == "2"
    agent(path, "INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                "VALUES ('agent-1', 'noted', 'preference', 9, datetime('now'), datetime('now'))")
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "5", timeout=10000)
    qtbot.wait(200)
    assert counted == [] and model.key_reads == reads  # moved by the rows: nothing read again


def test_an_agents_insert_moves_the_sidebar_count_without_counting_any_file(make_window, filled_db, qtbot,
                                                                            monkeypatch):
    from ora_desktop.gui.sidebar import view as sidebar_view

    path = filled_db(10)
    filled_db(5, agent="other")
    window = make_window()
    window.ctx.start_watching(3_600_000)
    wait_idle(qtbot, window)
    _sidebar_counted(qtbot, window, path)
    counted, scans = [], []
    real_info, real_scan = sidebar_view.file_info, sidebar_view.scan
    monkeypatch.setattr(sidebar_view, "file_info", lambda *args: counted.append(args[1]) or real_info(*args))
    monkeypatch.setattr(sidebar_view, "scan", lambda *args: scans.append(1) or real_scan(*args))
    window.ctx.start_watching(50)
    agent(path, "INSERT INTO memories (id, content, created_at, updated_at) "
                "VALUES ('agent-1', 'noted', datetime('now'), datetime('now'))")
    qtbot.waitUntil(lambda: window.sidebar.item_for(path).text(1) == "11", timeout=10000)
    qtbot.wait(500)
    assert counted == [] and scans == []  # shifted by the new row: no file counted again (yet)
    site = window.sidebar.item_for(path).parent()
    assert site.text(1) == "16"  # the site's total follows its file (11 + 5)


def test_rows_an_agent_inserts_above_the_row_being_read_leave_it_where_it_is(make_window, filled_db, qtbot):
    from PySide6.QtCore import QModelIndex

    path = filled_db(60)
    window = make_window()
    wait_idle(qtbot, window)
    table, model = window.browser.table, window.browser.model
    table.setFocus()
    table.select_row(5)
    chosen = model.memory_at(5).id
    on_screen = table.visualRect(model.index(5, 0)).top()
    window.ctx.start_watching(50)
    insert = ("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
              "VALUES (?, 'the agent noted this', 'fact', 5, datetime('now', '+1 day'), datetime('now'))")
    for n in range(3):
        agent(path, insert, (f"agent-{n}",))
    qtbot.waitUntil(lambda: model.rowCount() == 63, timeout=5000)
    wait_idle(qtbot, window)
    assert table.currentIndex().row() == 8 and model.memory_at(8).id == chosen
    assert table.visualRect(model.index(8, 0)).top() == on_screen  # the row read did not move on screen
    # With no current row on screen, the newest rows come into view on top as they arrive.
    table.selectionModel().clear()
    table.setCurrentIndex(QModelIndex())
    table.scrollToTop()
    agent(path, insert, ("agent-3",))
    qtbot.waitUntil(lambda: model.rowCount() == 64, timeout=5000)
    wait_idle(qtbot, window)
    assert table.verticalScrollBar().value() == 0 and model.memory_at(0).id == "agent-3"


def test_a_count_taken_while_an_agent_writes_is_not_moved_twice_by_the_same_rows(make_window, filled_db, qtbot,
                                                                                  monkeypatch):
    """A health edit has the file counted again while an agent is adding rows; a row committed
    just before that count is in it, and its change is heard after: the sidebar's count must
    still equal the file's."""
    from ora_desktop.gui.sidebar import view as sidebar_view

    path, window = _one_row_added(make_window, filled_db, qtbot)
    real, real_in = sidebar_view.file_info, sidebar_view.file_info_in
    committed: list[int] = []

    def commit_once() -> None:
        if not committed:
            committed.append(1)
            agent(path, INSERT, ("agent-2",))  # lands as the count is read; heard after it

    def after_a_commit(count):  # noqa: ANN001, ANN202 (the exact read commits inside its snapshot)
        return lambda *args, **kw: commit_once() or count(*args, **kw)

    monkeypatch.setattr(sidebar_view, "file_info", after_a_commit(real))
    monkeypatch.setattr(sidebar_view, "file_info_in", after_a_commit(real_in))
    window.ctx.store_for(path).update("m001", health_score=0.05)  # the file's health: counted again
    qtbot.waitUntil(lambda: window.sidebar.item_for(path).text(1) == "12", timeout=10000)
    qtbot.wait(1000)  # every change heard
    assert window.sidebar.item_for(path).text(1) == "12"


def test_rows_added_in_the_same_look_as_a_health_edit_are_counted(make_window, filled_db, qtbot):
    """An agent adds a row and edits a health in commits heard in one look (one change naming
    both): the sidebar's count moves by the row, while the file's health is read again."""
    path, window = _one_row_added(make_window, filled_db, qtbot)
    window.ctx.start_watching(3_600_000)  # the next two commits are heard in one look
    agent(path, INSERT, ("agent-2",))
    agent(path, "UPDATE memories SET health_score = 0.05 WHERE id = 'm001'")
    window.ctx.start_watching(50)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 12, timeout=10000)  # heard
    qtbot.wait(1000)  # the count the health edit asks for has run
    assert window.sidebar.item_for(path).text(1) == "12"


def test_the_status_line_counts_a_superseded_row_an_agent_adds(make_window, filled_db, qtbot):
    """The rows listed do not move (superseded ones are hidden), the file's count does: the
    status line's "superseded hidden" follows it."""
    path = filled_db(10)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET superseded_by = 'm001' WHERE id IN ('m002', 'm003')")
    window = make_window()
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.count_label.text().startswith("8 memories (2 superseded hidden)"), timeout=10000)
    window.ctx.start_watching(50)
    agent(path, "INSERT INTO memories (id, content, superseded_by, created_at, updated_at) "
                "VALUES ('old-version', 'replaced', 'm001', datetime('now'), datetime('now'))")
    qtbot.waitUntil(lambda: window.sidebar.item_for(path).text(1) == "11", timeout=10000)
    qtbot.waitUntil(lambda: window.count_label.text().startswith("8 memories (3 superseded hidden)"), timeout=5000)


def test_rows_an_agent_adds_while_every_file_is_counted_are_counted_once(make_window, filled_db, qtbot, monkeypatch):
    """The sidebar counts every file again (a file came, a change it could not follow) while an
    agent adds rows; their changes are heard before the scan's counts are shown. The file's count
    must come back to the file's, without waiting for the writes to rest."""
    import threading

    from ora_desktop.gui.sidebar import view as sidebar_view

    monkeypatch.setattr(sidebar_view, "SETTLE_MS", 3_600_000)  # the count after a rest is not what mends it
    path = filled_db(10)
    window = make_window()
    wait_idle(qtbot, window)
    _sidebar_counted(qtbot, window, path)
    window.ctx.start_watching(50)
    counted, shown = threading.Event(), threading.Event()
    real_scan = sidebar_view.scan

    def scan_then_wait(*args):  # noqa: ANN002, ANN202
        found = real_scan(*args)  # the counts are read: 10
        counted.set()
        shown.wait(20)
        return found

    monkeypatch.setattr(sidebar_view, "scan", scan_then_wait)
    task = window.sidebar.rescan()
    qtbot.waitUntil(counted.is_set, timeout=10000)
    for n in range(3):
        agent(path, INSERT, (f"agent-{n}",))
    qtbot.waitUntil(lambda: window.sidebar.item_for(path).text(1) == "13", timeout=10000)  # moved by the ids
    shown.set()
    qtbot.waitUntil(task.done, timeout=10000)  # the scan's 10 is shown, then read again exactly
    qtbot.waitUntil(lambda: window.sidebar.item_for(path).text(1) == "13", timeout=10000)
    agent(path, INSERT, ("agent-3",))
    qtbot.waitUntil(lambda: window.sidebar.item_for(path).text(1) == "14", timeout=10000)
    qtbot.wait(1500)  # every change heard, every count read
    assert window.sidebar.item_for(path).text(1) == "14"
    assert window.sidebar.item_for(path).parent().text(1) == "14"  # the site's total too


def test_rows_counted_by_a_scan_and_heard_after_it_are_not_counted_twice(make_window, filled_db, qtbot, monkeypatch):
    """An agent's rows land before the sidebar counts every file, and the watcher hears them
    only after the counts are shown: the file's count must not move by them a second time."""
    from ora_desktop.gui.sidebar import view as sidebar_view

    monkeypatch.setattr(sidebar_view, "SETTLE_MS", 3_600_000)  # the count after a rest is not what mends it
    path = filled_db(10)
    window = make_window()
    window.ctx.start_watching(3_600_000)  # nobody looks until the test says
    wait_idle(qtbot, window)
    _sidebar_counted(qtbot, window, path)
    for n in range(2):
        agent(path, INSERT, (f"agent-{n}",))
    task = window.sidebar.rescan()
    qtbot.waitUntil(task.done, timeout=10000)
    assert window.sidebar.item_for(path).text(1) == "12"  # counted by the scan
    heard: list[set[str]] = []
    window.ctx.store_changed.connect(lambda _path, change: heard.append(set(change.added)))
    window.ctx.start_watching(50)  # now the rows are heard
    qtbot.waitUntil(lambda: {"agent-0", "agent-1"} <= set().union(*heard), timeout=10000)
    qtbot.wait(3000)  # and the count read again
    assert window.sidebar.item_for(path).text(1) == "12"
