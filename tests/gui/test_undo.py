"""Undo and redo as a person uses them: several edits then several undos, the keys, failures."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction

from .conftest import db_rows
from .test_curate import select_id


def fields(path, memory_id):
    return db_rows(path, "SELECT importance, content FROM memories WHERE id = ?", (memory_id,))[0]


def idle(qtbot, window):
    qtbot.waitUntil(lambda: not window.curator._serial().locked(), timeout=10000)


def save(qtbot, window, path, memory_id, expected):
    detail = window.browser.detail
    qtbot.mouseClick(detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: fields(path, memory_id) == expected, timeout=10000)
    qtbot.waitUntil(lambda: not detail.editor.is_modified(), timeout=10000)
    idle(qtbot, window)


def two_edits(qtbot, window, path):
    """Importance 5 -> 9 and Save, then the content and Save: two steps on one memory."""
    select_id(qtbot, window, "m004")
    original = fields(path, "m004")
    assert original[0] == 5
    editor = window.browser.detail.editor
    editor.importance.setText("9")
    save(qtbot, window, path, "m004", (9, original[1]))
    editor.content.setPlainText("Deploys go out from the release branch")
    save(qtbot, window, path, "m004", (9, "Deploys go out from the release branch"))
    assert window.ctx.undo_stack.count() == 2
    return original


def test_two_edits_of_one_memory_undo_and_redo_in_full(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    original = two_edits(qtbot, window, path)
    undo = window.curator.undo_action
    undo.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004") == (9, original[1]), timeout=10000)
    idle(qtbot, window)
    undo.trigger()  # the second undo used to fail: our own first undo looked like "another program"
    qtbot.waitUntil(lambda: fields(path, "m004") == original, timeout=10000)
    idle(qtbot, window)
    assert window.ctx.undo_stack.index() == 0 and window.ctx.undo_stack.count() == 2
    redo = window.curator.redo_action
    redo.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004") == (9, original[1]), timeout=10000)
    idle(qtbot, window)
    redo.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004") == (9, "Deploys go out from the release branch"), timeout=10000)
    idle(qtbot, window)
    assert window.ctx.undo_stack.index() == 2


def test_undo_over_another_programs_write_keeps_the_step(make_window, filled_db, qtbot, monkeypatch):
    path = filled_db(12)
    window = make_window()
    two_edits(qtbot, window, path)
    errors = []
    monkeypatch.setattr(window.ctx, "show_error", lambda exc, title="": errors.append(str(exc)))
    with sqlite3.connect(path) as conn:  # an agent edits the memory underneath
        conn.execute("UPDATE memories SET content = 'agent text', updated_at = '2030-01-01 00:00:00' "
                     "WHERE id = 'm004'")
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: bool(errors), timeout=10000)
    idle(qtbot, window)
    assert "changed by another program" in errors[0] and "still on the undo stack" in errors[0]
    assert fields(path, "m004") == (9, "agent text")  # nothing overwritten
    stack = window.ctx.undo_stack
    assert stack.count() == 2 and stack.index() == 2  # the step was not dropped, the index put back
    assert window.curator.undo_action.isEnabled()


def test_redo_keys_work_and_no_two_actions_share_a_key(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    select_id(qtbot, window, "m004")
    editor = window.browser.detail.editor
    editor.importance.setText("9")
    save(qtbot, window, path, "m004", (9, fields(path, "m004")[1]))
    window.browser.table.setFocus()
    for key in ("Ctrl+Shift+Z", "Ctrl+Y"):
        window.curator.undo_action.trigger()
        qtbot.waitUntil(lambda: fields(path, "m004")[0] == 5, timeout=10000)
        idle(qtbot, window)
        modifiers = Qt.KeyboardModifier.ControlModifier
        if "Shift" in key:
            modifiers |= Qt.KeyboardModifier.ShiftModifier
        qtbot.keyClick(window.browser.table, Qt.Key.Key_Z if key.endswith("Z") else Qt.Key.Key_Y, modifiers)
        qtbot.waitUntil(lambda: fields(path, "m004")[0] == 9, timeout=10000)
        idle(qtbot, window)
    # A key bound twice (two actions, or twice on one action) is "ambiguous" to Qt and does nothing.
    seen: dict[str, str] = {}
    for action in window.findChildren(QAction):
        for key in action.shortcuts():
            name = key.toString()
            assert name not in seen, f"{name} is bound to {seen[name]!r} and to {action.text()!r}"
            seen[name] = action.text()
    assert {"Ctrl+Shift+Z", "Ctrl+Y"} <= {k.toString() for k in window.curator.redo_action.shortcuts()}


def test_undo_and_redo_labels_stay_put(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    two_edits(qtbot, window, path)
    assert window.curator.undo_action.text() == "&Undo"
    assert window.curator.redo_action.text() == "&Redo"
    assert "edit content" in window.curator.undo_action.toolTip()


def test_change_history_lists_the_journal_shared_with_the_command_line(make_window, filled_db, qtbot):
    """A step made in a terminal and one made in the window, newest first, in one table."""
    import subprocess
    import sys

    from .conftest import wait_idle

    path = filled_db(6)
    window = make_window()
    wait_idle(qtbot, window)
    done = subprocess.run([sys.executable, "-m", "ora_desktop", "edit", "--db", str(path), "m001",
                           "--importance", "9"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    window.browser.table.select_row(0)
    window.curator.delete_action.trigger()
    qtbot.waitUntil(lambda: window.ctx.undo_stack.canUndo(), timeout=10000)
    qtbot.waitUntil(lambda: not window.curator._serial().locked(), timeout=10000)
    window.curator.history_action.trigger()
    dialog = window.curator.dialog
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 2, timeout=10000)
    labels = [dialog.table.item(r, 4).text() for r in range(2)]
    assert labels[0] == "delete 1 memory"  # newest first
    assert labels[1] == "edit importance of m001"
    dialog.close()
