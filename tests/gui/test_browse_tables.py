"""The trash and the undo journal (Change history) are tables a person can sort by
clicking a column header (task_context too: test_tasks.py), times sorted as times (not as "3 h ago" text)."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import QPoint, Qt

from ora_desktop.core import open_store
from ora_desktop.core.operations import edits

from .conftest import wait_idle


def click_header(qtbot, header, section: int) -> None:
    """A person's click on a column header."""
    x = header.sectionViewportPosition(section) + header.sectionSize(section) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))


def test_the_trash_sorts_by_deletion_time_when_its_header_is_clicked(make_window, filled_db, qtbot):
    path = filled_db(6)
    with open_store(path) as store:
        store.delete(["m000", "m001", "m002"])
    ages = {"m000": "-10 days", "m001": "-2 minutes", "m002": "-3 hours"}  # "10 days ago" < "2 min ago" as text
    conn = sqlite3.connect(path)
    for memory_id, age in ages.items():
        conn.execute("UPDATE ora_desktop_trash SET deleted_at = datetime('now', ?) WHERE memory_id = ?",
                     (age, memory_id))
    conn.commit()
    conn.close()
    window = make_window()
    wait_idle(qtbot, window)
    window.curator.deleted_action.trigger()
    view = window.curator.deleted_view
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 3, timeout=10000)

    def shown() -> list[str]:
        return [view.list.topLevelItem(r).text(4) for r in range(3)]
    assert shown() == ["m001", "m002", "m000"]  # newest deletion first
    click_header(qtbot, view.list.header(), 1)  # Deleted: oldest first, by the moment
    assert shown() == ["m000", "m002", "m001"]
    click_header(qtbot, view.list.header(), 4)  # Id
    assert shown() in (["m000", "m001", "m002"], ["m002", "m001", "m000"])
    view.list.topLevelItem(0).setSelected(True)  # Restore acts on the row chosen, whatever the order
    chosen = view.list.topLevelItem(0).text(4)
    qtbot.mouseClick(view.restore_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 2, timeout=10000)
    assert chosen not in [view.list.topLevelItem(r).text(4) for r in range(2)]
    view.close()
    wait_idle(qtbot, window)


def test_change_history_sorts_by_step_as_a_number(make_window, filled_db, qtbot):
    path = filled_db(12)
    with open_store(path) as store:
        for i in range(11):  # steps 1..11: "10" and "11" sort before "2" as text
            edits.edit(store, f"m{i:03d}", {"importance": 5})
    window = make_window()
    wait_idle(qtbot, window)
    window.curator.history_action.trigger()
    dialog = window.curator.dialog
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 11, timeout=10000)

    def steps() -> list[int]:
        return [int(dialog.table.item(r, 0).text()) for r in range(11)]
    first = steps()
    assert first == sorted(first, reverse=True)  # newest first
    click_header(qtbot, dialog.table.horizontalHeader(), 0)
    assert steps() == sorted(first)  # oldest first, 2 before 10
    dialog.close()
