"""Undo and redo as a person uses them: several edits then several undos, the keys, failures, and
one history per file shared with the command line (``ora-desktop undo``/``redo`` in a real
second process)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolBar

from .conftest import db_rows, wait_idle
from .test_curate import select_id
from .test_purge import _confirm


def fields(path, memory_id):
    return db_rows(path, "SELECT importance, content FROM memories WHERE id = ?", (memory_id,))[0]


def idle(qtbot, window):
    qtbot.waitUntil(lambda: not window.curator._serial().locked(), timeout=10000)


def cli(path, *args):
    """``ora-desktop ARGS --db PATH`` in a second process; its stdout."""
    done = subprocess.run([sys.executable, "-m", "ora_desktop", *args, "--db", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def named(qtbot, window, undo, redo=None):
    """Until Undo (and Redo, when given) name these steps ("" : nothing to do, the action disabled)."""
    actions = window.curator.undo_action, window.curator.redo_action

    def shown(action, text):
        return action.text() == f"&{text or action.iconText()}" and action.isEnabled() == bool(text)
    qtbot.waitUntil(lambda: shown(actions[0], undo) and (redo is None or shown(actions[1], redo)), timeout=10000)


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
    named(qtbot, window, "Undo edit content of m004", "")
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
    named(qtbot, window, "", "Redo edit importance of m004")
    redo = window.curator.redo_action
    redo.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004") == (9, original[1]), timeout=10000)
    idle(qtbot, window)
    redo.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004") == (9, "Deploys go out from the release branch"), timeout=10000)
    idle(qtbot, window)
    named(qtbot, window, "Undo edit content of m004", "")


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
    assert "changed by another program" in errors[0] and "still offered" in errors[0]
    assert fields(path, "m004") == (9, "agent text")  # nothing overwritten
    named(qtbot, window, "Undo edit content of m004", "")  # the step was not dropped


def test_redo_keys_work_and_no_two_actions_share_a_key(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    select_id(qtbot, window, "m004")
    editor = window.browser.detail.editor
    editor.importance.setText("9")
    save(qtbot, window, path, "m004", (9, fields(path, "m004")[1]))
    window.browser.table.setFocus()
    for key in ("Ctrl+Shift+Z", "Ctrl+Y"):
        named(qtbot, window, "Undo edit importance of m004")
        window.curator.undo_action.trigger()
        qtbot.waitUntil(lambda: fields(path, "m004")[0] == 5, timeout=10000)
        idle(qtbot, window)
        named(qtbot, window, "", "Redo edit importance of m004")
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


def test_the_menu_names_each_step_and_the_toolbar_stays_put(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    two_edits(qtbot, window, path)
    undo, redo = window.curator.undo_action, window.curator.redo_action
    assert "Undo edit content of m004" in undo.toolTip()
    toolbar = next(t for t in window.findChildren(QToolBar) if t.widgetForAction(undo) is not None)
    assert toolbar.widgetForAction(undo).text() == "Undo" and toolbar.widgetForAction(redo).text() == "Redo"


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
    qtbot.waitUntil(lambda: window.curator.undo_action.isEnabled(), timeout=10000)
    qtbot.waitUntil(lambda: not window.curator._serial().locked(), timeout=10000)
    window.curator.history_action.trigger()
    dialog = window.curator.dialog
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 2, timeout=10000)
    labels = [dialog.table.item(r, 4).text() for r in range(2)]
    assert labels[0] == "delete 1 memory"  # newest first
    assert labels[1] == "edit importance of m001"
    cli(path, "undo")  # a step undone in a terminal leaves the open list
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=10000)
    assert dialog.table.item(0, 4).text() == "edit importance of m001"
    dialog.close()


def test_a_step_undone_in_a_terminal_leaves_the_window_s_list(make_window, filled_db, qtbot):
    """(a) Two edits in the window, ``ora-desktop undo`` in a terminal: the window's Undo now names
    the step before, Redo the one the terminal undid; the window's Undo takes that step back."""
    path = filled_db(12)
    window = make_window()
    original = two_edits(qtbot, window, path)
    assert "edit content of m004" in cli(path, "undo")
    named(qtbot, window, "Undo edit importance of m004", "Redo edit content of m004")
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004") == original, timeout=10000)
    named(qtbot, window, "", "Redo edit importance of m004")
    assert "nothing to undo" in cli(path, "undo", "--list")


def test_undo_while_viewing_another_agent_never_touches_the_first(make_window, filled_db, qtbot):
    """(b) One history per file: agent B on screen offers B's steps only, and its undo leaves A as it is."""
    first = filled_db(12, agent="ora")
    second = filled_db(12, agent="scout")
    window = make_window()
    qtbot.waitUntil(lambda: window.sidebar.item_for(second) is not None, timeout=10000)
    window.sidebar.setCurrentItem(window.sidebar.item_for(first))
    qtbot.waitUntil(lambda: window.browser.store is not None and window.browser.store.path == first, timeout=10000)
    two_edits(qtbot, window, first)
    edited = fields(first, "m004")
    window.sidebar.setCurrentItem(window.sidebar.item_for(second))
    qtbot.waitUntil(lambda: window.browser.store is not None and window.browser.store.path == second,
                    timeout=10000)
    named(qtbot, window, "", "")  # nothing of ora's file is offered for scout's
    window.curator.undo_action.trigger()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    select_id(qtbot, window, "m002")
    window.browser.detail.editor.importance.setText("1")
    save(qtbot, window, second, "m002", (1, fields(second, "m002")[1]))
    named(qtbot, window, "Undo edit importance of m002", "")
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: fields(second, "m002")[0] == 3, timeout=10000)
    idle(qtbot, window)
    assert fields(first, "m004") == edited
    window.sidebar.setCurrentItem(window.sidebar.item_for(first))
    named(qtbot, window, "Undo edit content of m004", "")


def test_an_edit_made_in_a_terminal_is_undone_from_the_window_by_its_name(make_window, filled_db, qtbot):
    """(c) The journal is shared: a command-line edit is the window's next Undo, named."""
    path = filled_db(6)
    window = make_window()
    wait_idle(qtbot, window)
    cli(path, "edit", "m001", "--importance", "9")
    named(qtbot, window, "Undo edit importance of m001", "")
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: fields(path, "m001")[0] == 2, timeout=10000)
    named(qtbot, window, "", "Redo edit importance of m001")


def test_redo_after_undo_in_both_faces_and_a_new_step_ends_it(make_window, filled_db, qtbot):
    """(d) Undone in the window, redone in a terminal; undone there, redone in the window; a new
    edit then leaves nothing to redo, in both."""
    path = filled_db(12)
    window = make_window()
    select_id(qtbot, window, "m004")
    window.browser.detail.editor.importance.setText("9")
    save(qtbot, window, path, "m004", (9, fields(path, "m004")[1]))
    named(qtbot, window, "Undo edit importance of m004")
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004")[0] == 5, timeout=10000)
    assert [e["label"] for e in json.loads(cli(path, "redo", "--list", "--json"))] == ["edit importance of m004"]
    assert "redid “edit importance of m004”" in cli(path, "redo")
    assert fields(path, "m004")[0] == 9
    named(qtbot, window, "Undo edit importance of m004", "")
    cli(path, "undo")
    named(qtbot, window, "", "Redo edit importance of m004")
    window.curator.redo_action.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004")[0] == 9, timeout=10000)
    named(qtbot, window, "Undo edit importance of m004", "")
    window.curator.undo_action.trigger()
    named(qtbot, window, "", "Redo edit importance of m004")
    select_id(qtbot, window, "m003")
    window.browser.detail.editor.importance.setText("1")
    save(qtbot, window, path, "m003", (1, fields(path, "m003")[1]))
    named(qtbot, window, "Undo edit importance of m003", "")
    assert "nothing to redo" in cli(path, "redo", "--list")


def test_delete_permanently_says_it_cannot_be_undone_and_keeps_the_other_steps(make_window, filled_db, qtbot):
    """(e) A purge is not a step, and the steps before it stay in Undo."""
    path = filled_db(12)
    window = make_window()
    two_edits(qtbot, window, path)
    window.forgetter.purge_ids(path, ["m001"])
    _confirm(qtbot, window, "cannot be undone", "Undo keeps this file's other steps")
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories WHERE id = 'm001'") == [(0,)],
                    timeout=10000)
    idle(qtbot, window)
    named(qtbot, window, "Undo edit content of m004", "")
    assert "edit importance of m004" in cli(path, "undo", "--list")


def test_undo_pressed_three_times_at_once_takes_back_the_steps_newest_first(make_window, filled_db, qtbot):
    """Presses made while a step runs act on the names that follow it: no press is lost or doubled."""
    path = filled_db(12)
    window = make_window()
    original = two_edits(qtbot, window, path)
    for _ in range(3):  # one more than there are steps: the last finds nothing to undo
        window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004") == original, timeout=10000)
    named(qtbot, window, "", "Redo edit importance of m004")
    window.curator.redo_action.trigger()
    window.curator.redo_action.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004") == (9, "Deploys go out from the release branch"), timeout=10000)
    named(qtbot, window, "Undo edit content of m004", "")


def test_undo_and_redo_pressed_the_moment_a_step_is_done_are_never_lost(make_window, filled_db, qtbot):
    """A step leaves Undo (after an edit) or Redo (after an undo) disabled until its name is read
    from the journal; a Ctrl+Z or Ctrl+Shift+Z pressed in that moment was dropped (a disabled
    action ignores it). It now waits for the name and acts on it."""
    path = filled_db(12)
    window = make_window()
    named(qtbot, window, "", "")  # nothing to undo yet in this file
    select_id(qtbot, window, "m004")
    original = fields(path, "m004")
    window.curator.done.connect(lambda *_: window.curator.undo_action.trigger())  # at once, as a fast hand
    window.browser.detail.editor.importance.setText("9")
    qtbot.mouseClick(window.browser.detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.curator.undo_redo.steps is not None
                    and window.curator.undo_redo.steps.redo is not None, timeout=10000)
    assert fields(path, "m004") == original
    named(qtbot, window, "", "Redo edit importance of m004")
    window.curator.done.disconnect()
    window.curator.redo_action.trigger()
    qtbot.waitUntil(lambda: fields(path, "m004")[0] == 9, timeout=10000)
    named(qtbot, window, "Undo edit importance of m004", "")
    said: list[str] = []
    window.ctx.status.connect(said.append)
    window.ctx.status.connect(lambda text: text.startswith("Undid") and window.curator.redo_action.trigger())
    window.curator.undo_action.trigger()  # and Redo pressed the moment this undo is done
    qtbot.waitUntil(lambda: any(text.startswith("Redid") for text in said), timeout=10000)
    assert fields(path, "m004")[0] == 9
    named(qtbot, window, "Undo edit importance of m004", "")


def test_the_window_undoes_a_delete_of_hundreds_in_chunks_as_one_step(make_window, filled_db, qtbot):
    """Undo of a 300-memory delete goes in short transactions (an agent beside it keeps writing),
    is still one step (Redo names it) and the table shows every memory back."""
    from ora_desktop.core import chunks, open_store
    from ora_desktop.core.operations import edits

    path = filled_db(400)
    window = make_window()
    with open_store(path) as store:
        doomed = [m.id for m in store.list(limit=300)]
        edits.delete(store, doomed)
    named(qtbot, window, "Undo delete 300 memories")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 100, timeout=10000)
    chunks.new_sizer()
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories") == [(400,)], timeout=20000)
    idle(qtbot, window)
    named(qtbot, window, "", "Redo delete 300 memories")
    assert chunks.last_sizer.chunks > 1  # (in chunks)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 400, timeout=10000)
