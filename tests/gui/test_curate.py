"""Editing with validation, undo/redo, delete and restore, bulk edit, conflicts, new memory, merge."""

from __future__ import annotations

import subprocess
import sys

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from tests.unit.test_versions import another_program

from .conftest import db_rows, wait_idle


def undo(qtbot, window):
    """Ctrl+Z once the last command is on the undo stack."""
    qtbot.waitUntil(window.curator.undo_action.isEnabled, timeout=5000)
    qtbot.waitUntil(lambda: not window.curator._serial().locked(), timeout=5000)
    window.curator.undo_action.trigger()


def select_id(qtbot, window, memory_id):
    window.browser.follow(memory_id)
    qtbot.waitUntil(lambda: window.browser.detail.memory is not None
                    and window.browser.detail.memory.id == memory_id, timeout=10000)


def content_of(path, memory_id):
    rows = db_rows(path, "SELECT content FROM memories WHERE id = ?", (memory_id,))
    return rows[0][0] if rows else None


def test_edit_validation_save_undo_redo(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    select_id(qtbot, window, "m004")
    detail = window.browser.detail
    editor = detail.editor
    editor.importance.setText("11")
    assert editor.message.isVisible()
    assert editor.message.text() == "Importance: 11 is outside the allowed range 1 to 10"
    assert not detail.save_button.isEnabled()
    editor.health.setText("lots")
    assert "Importance" in editor.message.text()  # the first problem is named
    editor.importance.setText("9")
    assert editor.message.text().startswith("Health: 'lots' is not a number")
    editor.health.setText("0.75")
    assert not editor.message.isVisible()
    editor.content.setPlainText("Deploys now go out from the release branch")
    assert detail.save_button.isEnabled()
    qtbot.mouseClick(detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: content_of(path, "m004") == "Deploys now go out from the release branch", timeout=10000)
    assert db_rows(path, "SELECT importance, health_score FROM memories WHERE id='m004'") == [(9, 0.75)]
    qtbot.waitUntil(lambda: window.curator.undo_action.isEnabled() and not detail.editor.is_modified(), timeout=5000)
    # undo (Ctrl+Z) puts the old values back, redo applies them again
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: content_of(path, "m004").startswith("Memory number 4"), timeout=10000)
    assert db_rows(path, "SELECT importance, health_score FROM memories WHERE id='m004'") == [(5, 0.4)]
    qtbot.waitUntil(lambda: detail.memory.content.startswith("Memory number 4"), timeout=10000)
    qtbot.waitUntil(window.curator.redo_action.isEnabled, timeout=10000)
    window.curator.redo_action.trigger()
    qtbot.waitUntil(lambda: content_of(path, "m004") == "Deploys now go out from the release branch", timeout=10000)
    assert window.curator.undo_action.shortcut().toString() == "Ctrl+Z"
    assert "Ctrl+Shift+Z" in [s.toString() for s in window.curator.redo_action.shortcuts()]


def test_delete_with_del_then_restore_from_deleted_view(make_window, filled_db, qtbot):
    path = filled_db(10)
    window = make_window()
    wait_idle(qtbot, window)
    table = window.browser.table
    table.setFocus()
    table.selectRow(0)
    table.selectionModel().select(window.browser.model.index(1, 0),
                                  table.selectionModel().SelectionFlag.Select
                                  | table.selectionModel().SelectionFlag.Rows)
    doomed = {window.browser.model.memory_at(r).id for r in (0, 1)}
    qtbot.keyClick(table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories") == [(8,)], timeout=10000)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 8, timeout=10000)
    assert {r[0] for r in db_rows(path, "SELECT memory_id FROM ora_desktop_trash")} == doomed
    window.curator.deleted_action.trigger()
    view = window.curator.deleted_view
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 2, timeout=10000)
    assert view.isVisible()
    view.list.topLevelItem(0).setSelected(True)
    restored = view.list.topLevelItem(0).text(4)
    qtbot.mouseClick(view.restore_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories") == [(9,)], timeout=10000)
    assert content_of(path, restored) is not None
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 1, timeout=10000)
    # undoing the restore deletes it again; undoing the delete brings both back
    undo(qtbot, window)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories") == [(8,)], timeout=10000)
    undo(qtbot, window)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories") == [(10,)], timeout=10000)
    view.close()


def test_bulk_edit_and_undo(make_window, filled_db, qtbot):
    path = filled_db(10)
    window = make_window()
    wait_idle(qtbot, window)
    window.browser.table.selectAll()
    qtbot.waitUntil(lambda: window.curator.bulk_actions["type"].isEnabled(), timeout=5000)
    before = dict(db_rows(path, "SELECT id, type FROM memories"))
    window.curator.bulk_actions["type"].trigger()
    dialog = window.curator.dialog
    assert dialog.isVisible()
    dialog.value.setCurrentIndex(dialog.value.findData("task"))
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: {t for _, t in db_rows(path, "SELECT id, type FROM memories")} == {"task"}, timeout=10000)
    undo(qtbot, window)
    qtbot.waitUntil(lambda: dict(db_rows(path, "SELECT id, type FROM memories")) == before, timeout=10000)
    # expiry with a bad value names the problem and cannot be applied
    window.curator.bulk_actions["expires_at"].trigger()
    dialog = window.curator.dialog
    dialog.expires.setText("next tuesday")
    assert dialog.message.text().startswith("Expires: 'next tuesday' is not a timestamp")
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
    dialog.reject()
    window.curator.mark_local_only()
    qtbot.waitUntil(lambda: {s for (s,) in db_rows(path, "SELECT sync_status FROM memories")} == {"local_only"},
                    timeout=10000)


def test_conflicting_write_from_a_second_process(make_window, filled_db, qtbot):
    path = filled_db(6)
    window = make_window()
    select_id(qtbot, window, "m002")
    detail = window.browser.detail
    detail.editor.content.setPlainText("My careful rewrite")
    code = ("import ora_desktop, sys, time; time.sleep(1.1); s = ora_desktop.open_store(sys.argv[1]); "
            "s.update('m002', content='The agent rewrote this meanwhile')")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    shown = []
    window.curator.conflict_shown.connect(shown.append)
    qtbot.mouseClick(detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(shown), timeout=10000)
    dialog = shown[0]
    assert dialog.isVisible() and "changed by another program" in dialog.findChildren(type(detail.title))[0].text()
    assert content_of(path, "m002") == "The agent rewrote this meanwhile"  # nothing overwritten yet
    qtbot.mouseClick(dialog.keep_theirs, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: detail.editor.content.toPlainText() == "The agent rewrote this meanwhile", timeout=5000)
    assert content_of(path, "m002") == "The agent rewrote this meanwhile"
    # again, this time keeping mine
    detail.editor.content.setPlainText("Mine after all")
    code = ("import ora_desktop, sys, time; time.sleep(1.1); s = ora_desktop.open_store(sys.argv[1]); "
            "s.update('m002', importance=2)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    qtbot.mouseClick(detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=10000)
    qtbot.mouseClick(shown[1].use_mine, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: content_of(path, "m002") == "Mine after all", timeout=10000)
    assert db_rows(path, "SELECT importance FROM memories WHERE id='m002'") == [(2,)]  # their other field kept


def test_save_meets_a_change_that_left_updated_at_alone(make_window, filled_db, qtbot):
    """An agent's raw SQL in the same second, not touching updated_at: Save asks, theirs is kept."""
    path = filled_db(6)
    window = make_window()
    select_id(qtbot, window, "m003")
    detail = window.browser.detail
    detail.editor.content.setPlainText("My careful rewrite")
    stamp = db_rows(path, "SELECT updated_at FROM memories WHERE id='m003'")
    another_program(path, "UPDATE memories SET content = 'The agent corrected this', importance = 2 WHERE id = 'm003'")
    assert db_rows(path, "SELECT updated_at FROM memories WHERE id='m003'") == stamp
    shown = []
    window.curator.conflict_shown.connect(shown.append)
    qtbot.mouseClick(detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(shown), timeout=10000)
    dialog = shown[0]
    assert dialog.isVisible() and "changed by another program" in dialog.findChildren(type(detail.title))[0].text()
    assert db_rows(path, "SELECT content, importance FROM memories WHERE id='m003'") == [
        ("The agent corrected this", 2)]  # nothing overwritten
    qtbot.mouseClick(dialog.keep_theirs, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: detail.editor.content.toPlainText() == "The agent corrected this", timeout=5000)
    assert db_rows(path, "SELECT content, importance FROM memories WHERE id='m003'") == [
        ("The agent corrected this", 2)]
    assert not window.curator.undo_action.isEnabled()  # no step of ours was written


def test_bulk_edit_refuses_when_a_chosen_memory_changed_underneath(make_window, filled_db, qtbot, monkeypatch):
    path = filled_db(4)
    window = make_window()
    wait_idle(qtbot, window)
    model = window.browser.model
    shown = [model.memory_at(r) for r in range(model.rowCount())]
    assert len(shown) == 4 and None not in shown

    async def chosen():  # the rows the person selected, as the table showed them
        return shown
    monkeypatch.setattr(window.curator, "selection", chosen)
    errors = []
    monkeypatch.setattr(window.ctx, "show_error", lambda exc, title="": errors.append(str(exc)))
    another_program(path, "UPDATE memories SET access_count = 41 WHERE id = 'm002'")
    before = db_rows(path, "SELECT * FROM memories ORDER BY id")
    window.curator.apply_bulk({"type": "task"}, "set type")
    qtbot.waitUntil(lambda: bool(errors), timeout=10000)
    assert "'m002' was changed by another program" in errors[0]
    assert db_rows(path, "SELECT * FROM memories ORDER BY id") == before
    assert not window.curator.undo_action.isEnabled()


def test_new_memory_with_ctrl_n(make_window, filled_db, qtbot):
    path = filled_db(3)
    window = make_window()
    qtbot.waitUntil(window.curator.new_action.isEnabled, timeout=5000)
    assert window.curator.new_action.shortcut().toString() == "Ctrl+N"
    window.curator.new_action.trigger()
    dialog = window.curator.dialog
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled()  # empty content
    dialog.content.setPlainText("Use UTC everywhere")
    dialog.importance.setText("0")
    assert dialog.message.text() == "Importance: 0 is outside the allowed range 1 to 10"
    dialog.importance.setText("8")
    assert ok.isEnabled()
    ok.click()
    qtbot.waitUntil(lambda: db_rows(path, "SELECT importance FROM memories WHERE content='Use UTC everywhere'")
                    == [(8,)], timeout=10000)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 4, timeout=10000)
    undo(qtbot, window)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories") == [(3,)], timeout=10000)


def test_merge_two_into_a_new_memory_superseding_both(make_window, filled_db, qtbot):
    path = filled_db(5)
    window = make_window()
    wait_idle(qtbot, window)
    table = window.browser.table
    table.selectRow(0)
    table.selectionModel().select(window.browser.model.index(1, 0),
                                  table.selectionModel().SelectionFlag.Select
                                  | table.selectionModel().SelectionFlag.Rows)
    pair = {window.browser.model.memory_at(r).id for r in (0, 1)}
    qtbot.waitUntil(window.curator.merge_action.isEnabled, timeout=5000)
    window.curator.merge_action.trigger()
    qtbot.waitUntil(lambda: window.curator.dialog is not None and window.curator.dialog.isVisible(), timeout=5000)
    dialog = window.curator.dialog
    dialog.content.setPlainText("Merged knowledge")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: len(db_rows(path, "SELECT id FROM memories WHERE content='Merged knowledge'")) == 1,
                    timeout=10000)
    merged = db_rows(path, "SELECT id FROM memories WHERE content='Merged knowledge'")[0][0]
    sup = dict(db_rows(path, "SELECT id, superseded_by FROM memories WHERE id IN (?, ?)", tuple(pair)))
    assert set(sup.values()) == {merged}
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 4, timeout=10000)  # 5 - 2 superseded + 1
    undo(qtbot, window)
    qtbot.waitUntil(lambda: not db_rows(path, "SELECT id FROM memories WHERE content='Merged knowledge'"),
                    timeout=10000)
    assert db_rows(path, "SELECT count(*) FROM memories WHERE superseded_by IS NOT NULL") == [(0,)]


def test_moving_away_saves_valid_edits_and_keeps_invalid_ones(make_window, filled_db, qtbot):
    path = filled_db(6)
    window = make_window()
    select_id(qtbot, window, "m003")
    detail = window.browser.detail
    detail.editor.content.setPlainText("Changed, then moved on")
    select_id(qtbot, window, "m004")  # valid: saved on the way (undoable)
    qtbot.waitUntil(lambda: content_of(path, "m003") == "Changed, then moved on", timeout=10000)
    undo(qtbot, window)
    qtbot.waitUntil(lambda: content_of(path, "m003").startswith("Memory number 3"), timeout=10000)
    detail.editor.importance.setText("42")
    window.browser.follow("m005")  # invalid: the pane stays on m004 with the message
    qtbot.waitUntil(lambda: window.browser.table.current_memory_now() is not None
                    and window.browser.table.current_memory_now().id == "m004", timeout=10000)
    assert detail.memory.id == "m004" and detail.editor.importance.text() == "42"
    assert detail.editor.message.text().startswith("Importance: 42")
    # closing the window with the edit pending asks first; Cancel keeps the window
    window.close()
    box = window._unsaved_box
    assert box.isVisible() and window.isVisible()
    box.reject()
    assert window.isVisible()
    detail.revert_button.click()
    assert not detail.editor.is_modified()


def test_an_edit_leaves_the_hidden_jobs_tab_unread_until_it_is_shown(make_window, filled_db, qtbot, monkeypatch):
    from ora_desktop.gui.jobs.view import JobsView

    path = filled_db(6)
    window = make_window()
    qtbot.waitUntil(lambda: "Jobs" in window.panels, timeout=10000)
    jobs = window.panels["Jobs"]
    qtbot.waitUntil(lambda: jobs.snapshot is not None, timeout=10000)
    reads = []
    real = JobsView._gather
    monkeypatch.setattr(JobsView, "_gather", lambda self, *args: reads.append(args) or real(self, *args))
    select_id(qtbot, window, "m002")
    detail = window.browser.detail
    detail.editor.importance.setText("9")
    qtbot.mouseClick(detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT importance FROM memories WHERE id = 'm002'") == [(9,)],
                    timeout=10000)
    qtbot.wait(300)
    assert reads == []  # the schedule and history are not read for a tab nobody looks at
    window.tabs.setCurrentWidget(jobs)
    qtbot.waitUntil(lambda: len(reads) == 1, timeout=10000)  # shown: read once, current
    qtbot.wait(200)
    assert len(reads) == 1 and jobs.schedule.rowCount() > 0


def test_delete_moves_the_selection_to_the_next_row(make_window, filled_db, qtbot):
    """As in a mail client: after Del the row below the deleted one is selected, not the top."""
    path = filled_db(10)
    window = make_window()
    wait_idle(qtbot, window)
    table, model = window.browser.table, window.browser.model
    table.setFocus()
    table.select_row(5)
    doomed, following = model.memory_at(5).id, model.memory_at(6).id
    qtbot.keyClick(table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories") == [(9,)], timeout=10000)
    qtbot.waitUntil(lambda: model.rowCount() == 9 and not model.is_loading(), timeout=10000)
    wait_idle(qtbot, window)
    assert content_of(path, doomed) is None
    assert table.current_memory_now().id == following
    assert table.selected_rows() == [5]
    qtbot.waitUntil(lambda: window.browser.detail.memory is not None
                    and window.browser.detail.memory.id == following, timeout=5000)
    # the last row deleted: the one above it takes the selection
    table.select_row(8)
    above = model.memory_at(7).id
    qtbot.keyClick(table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: model.rowCount() == 8 and not model.is_loading(), timeout=10000)
    wait_idle(qtbot, window)
    assert table.current_memory_now().id == above


def test_find_and_replace_previews_replaces_the_selection_and_undoes_in_one_step(make_window, filled_db, qtbot):
    path = filled_db(9)
    window = make_window()
    wait_idle(qtbot, window)
    table, model = window.browser.table, window.browser.model
    table.setFocus()
    deploys = [r for r in range(model.rowCount()) if "deploys" in model.memory_at(r).content]
    table.select_row(deploys[0])
    table.selectionModel().select(model.index(deploys[1], 0), table.selectionModel().SelectionFlag.Select
                                  | table.selectionModel().SelectionFlag.Rows)
    chosen = {model.memory_at(r).id for r in deploys[:2]}
    before = {i: content_of(path, i) for i in chosen | {model.memory_at(deploys[2]).id}}
    assert "Ctrl+H" in [k.toString() for k in window.curator.replace_action.shortcuts()]  # on every desktop
    window.curator.replace_action.trigger()
    qtbot.waitUntil(lambda: window.curator.dialog is not None and window.curator.dialog.isVisible(), timeout=5000)
    dialog = window.curator.dialog
    assert dialog.scope.currentText() == "the 2 selected memories"
    qtbot.keyClicks(dialog.find, "deploys")
    qtbot.keyClicks(dialog.replacement, "releases")
    qtbot.waitUntil(lambda: dialog.replace_button.isEnabled(), timeout=10000)
    assert "2 times in 2 memories" in dialog.summary.text() and dialog.preview.count() == 2
    assert all(content_of(path, i) == text for i, text in before.items())  # the preview wrote nothing
    qtbot.mouseClick(dialog.replace_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: all("releases" in content_of(path, i) for i in chosen), timeout=10000)
    untouched = (set(before) - chosen).pop()
    assert content_of(path, untouched) == before[untouched]  # not selected: not changed
    undo(qtbot, window)
    qtbot.waitUntil(lambda: all(content_of(path, i) == text for i, text in before.items()), timeout=10000)


def test_a_restore_from_the_trash_view_says_when_a_stopped_undo_was_taken_back_first(make_window, filled_db, qtbot):
    """An undo of 300 memories whose process was killed part-way: the next restore from the Trash
    view takes it back first, and the view's status line (and the window's) says so."""
    from ora_desktop.core import open_store
    from ora_desktop.core.operations import chunked_undo, edits
    from tests.integration import stopped_step

    path = filled_db(310)
    with open_store(path) as store:
        edits.delete(store, ["m000"])
        edits.delete(store, [f"m{i:03d}" for i in range(10, 310)])
    stopped_step.leave_stopped_undo(path, 300)
    window = make_window()
    wait_idle(qtbot, window)
    said: list[str] = []
    window.ctx.status.connect(said.append)
    window.curator.deleted_action.trigger()
    view = window.curator.deleted_view
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 201, timeout=10000)  # (100 were back when it stopped)
    [item] = [view.list.topLevelItem(r) for r in range(view.list.topLevelItemCount())
              if view.list.topLevelItem(r).text(4) == "m000"]
    item.setSelected(True)
    qtbot.mouseClick(view.restore_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "done" in view.said.text(), timeout=20000)
    text = view.said.text()
    assert "“undo delete 300 memories” had stopped part-way (its process ended); what it had written was taken back" \
        in text and text.endswith("Restore 1 memory — done (Ctrl+Z undoes)")
    assert text in said  # the window's status line says the same
    assert db_rows(path, "SELECT count(*) FROM memories WHERE id >= 'm010'") == [(0,)]  # the 300 back in the trash
    assert db_rows(path, "SELECT count(*) FROM memories WHERE id = 'm000'") == [(1,)]
    with open_store(path) as store:
        assert chunked_undo.stopped(store) is None
    view.close()
