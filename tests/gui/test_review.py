"""The Review tab, driven in the real window: the desk lists what is new or needs attention; R marks,
F flags, E edits, Del deletes — undoable through the window's curator — without leaving the tab."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QInputDialog

from ora_desktop.core import open_store
from ora_desktop.core.operations import review as rv
from ora_desktop.gui.curate.dialogs import MemoryFieldsDialog

from .conftest import db_rows


def agent_writes(path: Path, sql: str) -> None:
    """Another program (the agent) writes to the file."""
    code = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit(); c.close()"
    subprocess.run([sys.executable, "-c", code, str(path), sql], check=True)


def review_tab(qtbot, window):
    qtbot.waitUntil(lambda: "Review" in window.panels, timeout=10000)
    view = window.panels["Review"]
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.result is not None and view.table.rowCount() > 0, timeout=10000)
    return view


def listed(view) -> list[str]:
    return [item.memory.id for item in view.table.items]


def visible_dialog(kind):
    return next((w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()), None)


def test_the_desk_lists_everything_new_at_first_and_opening_it_writes_nothing(qtbot, make_window, filled_db) -> None:
    path = filled_db(30)
    agent_writes(path, "UPDATE memories SET importance = 9, health_score = 0.1 WHERE id = 'm005'")
    before = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    window = make_window()
    view = review_tab(qtbot, window)
    assert view.table.rowCount() == 30
    assert "never reviewed" in view.heading.text()
    fading = [i for i in view.table.items if "important_low_health" in i.reasons]
    assert [i.memory.id for i in fading] == ["m005"]
    assert "fading" in view.table.item(view.table.items.index(fading[0]), 0).text()
    assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == before
    assert db_rows(path, "SELECT name FROM sqlite_master WHERE name = 'ora_desktop_review'") == []


def test_r_marks_the_selected_memory_reviewed_and_moves_on(qtbot, make_window, filled_db) -> None:
    path = filled_db(12)
    window = make_window()
    view = review_tab(qtbot, window)
    view.table.setFocus()
    view.table.selectRow(0)
    first = view.table.current_item().memory.id
    qtbot.keyClick(view.table, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: first not in listed(view), timeout=10000)
    assert view.table.rowCount() == 11 and view.table.current_item() is not None
    assert db_rows(path, "SELECT memory_id FROM ora_desktop_review WHERE reviewer = ?", (view.reviewer,)) == [(first,)]
    qtbot.waitUntil(lambda: window.curator.undo_action.text() == f"&Undo mark {first} reviewed", timeout=10000)
    window.curator.undo_action.trigger()  # Ctrl+Z takes the mark back
    qtbot.waitUntil(lambda: first in listed(view), timeout=10000)
    assert db_rows(path, "SELECT count(*) FROM ora_desktop_review")[0][0] == 0


def test_mark_all_then_an_agent_writes_and_only_that_is_new(qtbot, make_window, filled_db) -> None:
    path = filled_db(12)
    window = make_window()
    view = review_tab(qtbot, window)
    qtbot.mouseClick(view.mark_all_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not any("new" in i.reasons for i in view.table.items), timeout=10000)
    # The window's file watcher takes its baseline at its first poll (1 s after opening), so a write
    # before then goes unnoticed everywhere (the main table too) — reported, not this view's to fix.
    qtbot.wait(1500)
    agent_writes(path, "INSERT INTO memories (id, content, created_at, updated_at) VALUES "
                       "('agent-wrote', 'Written by the agent just now', datetime('now', '+2 seconds'), "
                       "datetime('now', '+2 seconds'))")
    qtbot.waitUntil(lambda: "agent-wrote" in listed(view), timeout=15000)  # noticed through the file watcher
    fresh = [i.memory.id for i in view.table.items if "new" in i.reasons]
    assert fresh == ["agent-wrote"]


def test_f_flags_with_a_note_and_the_flag_comes_first(qtbot, make_window, filled_db) -> None:
    path = filled_db(12)
    window = make_window()
    view = review_tab(qtbot, window)
    view.table.setFocus()
    view.table.selectRow(5)
    chosen = view.table.current_item().memory.id
    qtbot.keyClick(view.table, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: visible_dialog(QInputDialog) is not None, timeout=5000)
    dialog = visible_dialog(QInputDialog)
    dialog.setTextValue("contradicts the deploy policy")
    dialog.accept()
    qtbot.waitUntil(lambda: listed(view) and listed(view)[0] == chosen, timeout=10000)
    assert view.table.items[0].note == "contradicts the deploy policy"
    assert "flagged" in view.table.item(0, 0).text()
    view.filter.setCurrentIndex(3)  # Flagged
    assert listed(view) == [chosen]
    assert db_rows(path, "SELECT note FROM ora_desktop_review WHERE memory_id = ?", (chosen,)) == \
        [("contradicts the deploy policy",)]


def test_edit_from_the_desk_is_undoable_and_not_listed_again_as_changed(qtbot, make_window, filled_db) -> None:
    path = filled_db(12)
    window = make_window()
    view = review_tab(qtbot, window)
    view.table.setFocus()
    view.table.selectRow(0)
    memory = view.table.current_item().memory
    qtbot.keyClick(view.table, Qt.Key.Key_E)
    qtbot.waitUntil(lambda: visible_dialog(MemoryFieldsDialog) is not None, timeout=5000)
    dialog = visible_dialog(MemoryFieldsDialog)
    dialog.importance.setText("3" if memory.importance != 3 else "4")
    dialog.accept()
    qtbot.waitUntil(lambda: memory.id not in listed(view), timeout=10000)
    with open_store(path, readonly=True) as store:
        assert store.get(memory.id).importance != memory.importance
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: db_rows(path, "SELECT importance FROM memories WHERE id = ?", (memory.id,))
                    == [(memory.importance,)], timeout=10000)


def test_delete_key_deletes_the_review_selection_only_and_undo_brings_it_back(qtbot, make_window, filled_db) -> None:
    path = filled_db(12)
    window = make_window()
    window.browser.table.select_row(3)  # something else is selected in the Memories tab
    view = review_tab(qtbot, window)
    view.table.setFocus()
    view.table.selectRow(1)
    target = view.table.current_item().memory.id
    qtbot.keyClick(view.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories")[0][0] == 11, timeout=10000)
    assert db_rows(path, "SELECT count(*) FROM memories WHERE id = ?", (target,))[0][0] == 0
    qtbot.waitUntil(lambda: target not in listed(view), timeout=10000)
    qtbot.waitUntil(window.curator.undo_action.isEnabled, timeout=10000)
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM memories WHERE id = ?", (target,))[0][0] == 1,
                    timeout=10000)


def test_read_only_window_reviews_but_cannot_mark(qtbot, ctx, make_window, filled_db) -> None:
    path = filled_db(5)
    ctx.read_only = True
    window = make_window()
    view = review_tab(qtbot, window)
    assert "read-only" in view.heading.text()
    assert not view.mark_button.isEnabled() and not view.mark_all_button.isEnabled()
    view.table.setFocus()
    view.table.selectRow(0)
    qtbot.keyClick(view.table, Qt.Key.Key_R)
    assert db_rows(path, "SELECT name FROM sqlite_master WHERE name = ?", (rv.TABLE,)) == []


def test_consolidation_desk_applies_an_edited_summary_rejects_another_and_ctrl_z_undoes(
        qtbot, make_window, seed_db) -> None:
    from ora_desktop.gui.review.consolidation import ConsolidationDialog
    from tests.unit.test_consolidate_review import ROWS

    path = seed_db()
    with open_store(path) as store:
        store.add_many(ROWS)
    window = make_window()
    view = review_tab(qtbot, window)
    view.consolidate_button.click()
    qtbot.waitUntil(lambda: visible_dialog(ConsolidationDialog) is not None, timeout=5000)
    dialog = view.dialog
    qtbot.waitUntil(lambda: dialog.clusters.count() == 2, timeout=60000)
    dialog.clusters.setCurrentRow(0)
    first = dialog.clusters.currentItem().data(Qt.ItemDataRole.UserRole)
    dialog.reject_button.click()  # rejected: nothing written
    assert dialog.clusters.count() == 1
    second = dialog.clusters.currentItem().data(Qt.ItemDataRole.UserRole)
    dialog.summary.setPlainText("Tax lives in src/tax/compute.ts (reviewed by a person).")
    dialog.apply_button.click()

    def summary_rows():
        return db_rows(path, "SELECT id FROM memories WHERE content = 'Tax lives in src/tax/compute.ts "
                             "(reviewed by a person).'")

    qtbot.waitUntil(lambda: len(summary_rows()) == 1, timeout=10000)
    summary_id = summary_rows()[0][0]
    assert {r[0] for r in db_rows(path, "SELECT id FROM memories WHERE superseded_by = ?", (summary_id,))} == \
        set(second.ids)
    assert db_rows(path, "SELECT count(*) FROM memories WHERE superseded_by IS NOT NULL AND id IN (?, ?, ?)",
                   first.ids) == [(0,)]
    qtbot.waitUntil(window.curator.undo_action.isEnabled, timeout=5000)
    qtbot.waitUntil(lambda: not window.curator._serial().locked(), timeout=5000)
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: summary_rows() == [], timeout=10000)
    assert db_rows(path, "SELECT count(*) FROM memories WHERE superseded_by IS NOT NULL") == [(0,)]
