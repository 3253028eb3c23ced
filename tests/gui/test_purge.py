"""Delete permanently…, Empty trash…, damaged files marked in the sidebar, and Recover…."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from ora_desktop.core.backup import create_backup
from ora_desktop.core.maintenance import run_job
from ora_desktop.gui.sidebar.view import DAMAGED_COLOUR

from .conftest import db_rows, wait_idle


def _confirm(qtbot, window, *words):
    """Wait for the confirmation, check it names ``words``, press its confirm button."""
    forgetter = window.forgetter
    qtbot.waitUntil(lambda: forgetter.dialog is not None and forgetter.dialog.isVisible(), timeout=10000)
    dialog = forgetter.dialog
    shown = " ".join(label.text() for label in dialog.findChildren(QLabel))
    for word in words:
        assert word in shown, shown
    qtbot.mouseClick(dialog.confirm, Qt.MouseButton.LeftButton)


def test_delete_permanently_from_the_table_names_count_and_backups(make_window, filled_db, qtbot):
    path = filled_db(10)
    backup = create_backup(path)
    window = make_window()
    wait_idle(qtbot, window)
    table = window.browser.table
    table.setFocus()

    def two_selected() -> bool:
        """Select the first two rows (again, if a late reload of the file reset the selection)."""
        if len(table.selected_rows()) != 2:
            table.selectRow(0)
            table.selectionModel().select(window.browser.model.index(1, 0),
                                          table.selectionModel().SelectionFlag.Select
                                          | table.selectionModel().SelectionFlag.Rows)
        return len(table.selected_rows()) == 2 and window.forgetter.purge_action.isEnabled()

    qtbot.waitUntil(two_selected, timeout=10000)
    doomed = {window.browser.model.memory_at(r).id for r in (0, 1)}
    window.forgetter.purge_action.trigger()
    _confirm(qtbot, window, "2 memories", "cannot be undone", backup.path.name)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories") == [(8,)], timeout=10000)
    assert db_rows(path, "SELECT count(*) FROM sqlite_master WHERE name = 'ora_desktop_trash'") == [(1,)]
    assert db_rows(path, "SELECT count(*) FROM ora_desktop_trash") == [(0,)]
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 8, timeout=10000)
    # (right after any write Undo stays pressable while the journal's names are read; once they
    # are, a purge offers nothing to undo)
    qtbot.waitUntil(lambda: not window.curator.undo_action.isEnabled(), timeout=10000)
    assert not {r[0] for r in db_rows(path, "SELECT id FROM memories")} & doomed


def test_deleted_view_purges_selected_and_empties_the_trash(make_window, filled_db, qtbot):
    path = filled_db(10)
    window = make_window()
    wait_idle(qtbot, window)
    window.ctx.store_for(path).delete(["m001", "m002", "m003"])
    window.curator.deleted_action.trigger()
    view = window.curator.deleted_view
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 3, timeout=10000)
    view.list.topLevelItem(0).setSelected(True)
    first = view.list.topLevelItem(0).text(4)
    assert view.purge_button.isEnabled()
    qtbot.mouseClick(view.purge_button, Qt.MouseButton.LeftButton)
    _confirm(qtbot, window, "1 memory", "in the trash")
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 2, timeout=10000)
    assert first not in {r[0] for r in db_rows(path, "SELECT memory_id FROM ora_desktop_trash")}
    qtbot.mouseClick(view.empty_button, Qt.MouseButton.LeftButton)
    _confirm(qtbot, window, "2 memories", "cannot be undone")
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM ora_desktop_trash") == [(0,)], timeout=10000)
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 0, timeout=10000)
    view.close()


def _damage(path):
    """Scribble over a page of the memories table (the file still opens)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    with path.open("r+b") as handle:
        handle.seek(4096 * 5)
        handle.write(b"\xff" * 64)


def test_a_file_the_check_found_damaged_is_marked_and_offers_recover(make_window, filled_db, qtbot, ora_home):
    good = filled_db(40)
    hurt = filled_db(300, agent="hurt")
    _damage(hurt)
    assert run_job("check", hurt, now=datetime(2026, 2, 1, tzinfo=UTC)).outcome == "problems"
    window = make_window()
    sidebar = window.sidebar
    qtbot.waitUntil(lambda: sidebar.item_for(hurt) is not None, timeout=10000)
    item = sidebar.item_for(hurt)
    assert "(damaged)" in item.text(0) and item.foreground(0).color().name() == DAMAGED_COLOUR
    assert "Damaged" in item.toolTip(0) and "Recover" in item.toolTip(0)
    assert "(damaged)" not in sidebar.item_for(good).text(0)
    sidebar.recover_requested.emit(hurt)
    _confirm(qtbot, window, "hurt.site.db", "hurt-recovered.site.db", "not changed")
    out = hurt.with_name("hurt-recovered.site.db")
    qtbot.waitUntil(out.exists, timeout=20000)
    qtbot.waitUntil(lambda: window.ctx.current_path() is not None
                    and window.ctx.current_path().resolve() == out.resolve(), timeout=20000)
    assert 0 < db_rows(out, "SELECT count(*) FROM memories")[0][0] <= 300


def test_a_file_that_fails_to_open_as_damaged_offers_recover_in_the_pane(make_window, filled_db, qtbot):
    """Selecting a damaged file shows why and a Recover button in the pane; no dialog opens until
    the person asks."""
    filled_db(20)
    cut = filled_db(400, agent="cut")
    conn = sqlite3.connect(cut)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = cut.read_bytes()
    cut.write_bytes(data[: len(data) // 3])
    window = make_window()
    sidebar = window.sidebar
    qtbot.waitUntil(lambda: sidebar.item_for(cut) is not None, timeout=10000)
    item = sidebar.item_for(cut)
    assert "(damaged)" in item.text(0) and item.foreground(0).color().name() == DAMAGED_COLOUR
    sidebar.setCurrentItem(item)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.recover_button.isVisible(), timeout=10000)
    assert "cannot be opened" in browser.message.text()
    qtbot.wait(200)
    assert window.forgetter.dialog is None  # nothing pops up by itself
    qtbot.mouseClick(browser.recover_button, Qt.MouseButton.LeftButton)
    _confirm(qtbot, window, "cut.site.db", "cut-recovered.site.db")
    qtbot.waitUntil(lambda: browser.store is not None and browser.store.path.name == "cut-recovered.site.db",
                    timeout=20000)  # the salvaged file opens
    # another, healthy file: no Recover button there
    sidebar.setCurrentItem(sidebar.item_for(cut.with_name("ora.site.db")))
    qtbot.waitUntil(lambda: browser.store is not None and browser.store.path.name == "ora.site.db", timeout=10000)
    assert not browser.recover_button.isVisible()


def test_recovering_nothing_lists_and_opens_no_new_agent(make_window, filled_db, qtbot):
    filled_db(5)
    hopeless = filled_db(1, agent="hopeless")
    hopeless.write_bytes(b"SQLite format 3\x00" + b"\xa5" * (4096 * 8 - 16))
    for suffix in ("-wal", "-shm"):
        Path(f"{hopeless}{suffix}").unlink(missing_ok=True)
    window = make_window()
    window.forgetter.recover(hopeless)
    _confirm(qtbot, window, "hopeless.site.db")
    qtbot.waitUntil(lambda: "Nothing could be recovered" in window.statusBar().currentMessage(), timeout=20000)
    out = hopeless.with_name("hopeless-recovered.site.db")
    assert not out.exists()
    assert window.sidebar.item_for(out) is None and str(out) not in window.recent_files()


def test_confirmations_name_each_memory_and_never_confirm_on_enter(make_window, filled_db, qtbot):
    """One memory reads "the deleted memory", each line shows the memory's text, and Enter (the
    default button) cancels: nothing is forgotten by a stray keypress."""
    path = filled_db(5)
    window = make_window()
    wait_idle(qtbot, window)
    store = window.ctx.store_for(path)
    store.delete(["m003"])
    window.forgetter.empty_trash(path)
    forgetter = window.forgetter
    qtbot.waitUntil(lambda: forgetter.dialog is not None and forgetter.dialog.isVisible(), timeout=10000)
    dialog = forgetter.dialog
    shown = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "the deleted memory in the trash" in shown and "1 memories" not in shown
    assert dialog.items.item(0).text().startswith("m003  —  Memory number 3 about deploys")
    assert not dialog.confirm.isDefault()
    qtbot.keyClick(dialog, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    assert db_rows(path, "SELECT count(*) FROM ora_desktop_trash") == [(1,)]  # Enter cancelled
    # Delete permanently names the live memory's text too
    window.browser.table.select_row(0)
    first = window.browser.model.memory_at(0)
    window.forgetter.purge_action.trigger()
    qtbot.waitUntil(lambda: forgetter.dialog is not dialog and forgetter.dialog.isVisible(), timeout=10000)
    assert forgetter.dialog.items.item(0).text() == f"{first.id}  —  {first.title}  (live)"
    forgetter.dialog.reject()
