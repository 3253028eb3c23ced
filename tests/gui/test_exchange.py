"""File > Import… (preview, progress, summary, one undo step) and File > Export…, driven on the
real window."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from tests.unit.exchange_support import context_memory_db

from .conftest import db_rows, wait_idle


def count(path) -> int:
    return db_rows(path, "SELECT count(*) FROM memories")[0][0]


def test_import_preview_then_import_and_one_undo_takes_it_back(make_window, filled_db, qtbot, tmp_path):
    path = filled_db(12)
    window = make_window()
    source = context_memory_db(tmp_path / "context.db")
    dialog = window.exchanger.preview(source)
    qtbot.waitUntil(lambda: dialog.result is not None, timeout=15000)
    assert dialog.summary.text().startswith("Detected format: context-memory. 3 new memories, 0 already in the file")
    assert "By type: context 1, conversation 2." in dialog.summary.text()
    assert dialog.rows.rowCount() == 3
    cells = {dialog.rows.item(r, 4).text() for r in range(3)}
    assert any(c.startswith("Added JWT authentication to the shop API ⏎") for c in cells)
    assert {dialog.rows.item(r, 3).text() for r in range(3)} == {"pending"}
    assert count(path) == 12  # the preview wrote nothing
    # The "local_only" option re-runs the preview, and the rows show it.
    dialog.local_only.setChecked(True)
    qtbot.waitUntil(lambda: dialog.import_button.isEnabled()
                    and {dialog.rows.item(r, 3).text() for r in range(3)} == {"local_only"}, timeout=15000)
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.exchanger.summary is not None and window.exchanger.summary.isVisible(),
                    timeout=15000)
    assert window.exchanger.summary.text().startswith("Imported 3 memories from context.db (context-memory): 3 new")
    assert count(path) == 15
    assert db_rows(path, "SELECT DISTINCT sync_status FROM memories WHERE id LIKE 'imp-%'") == [("local_only",)]
    window.exchanger.summary.close()
    # One Ctrl+Z removes the whole import; redo brings the same memories back.
    undo, redo = window.curator.undo_action, window.curator.redo_action
    qtbot.waitUntil(lambda: undo.text() == "&Undo import of 3 memories from context.db", timeout=5000)
    undo.trigger()
    qtbot.waitUntil(lambda: count(path) == 12, timeout=15000)
    qtbot.waitUntil(lambda: redo.text() == "&Redo import of 3 memories from context.db", timeout=5000)
    redo.trigger()
    qtbot.waitUntil(lambda: count(path) == 15, timeout=15000)
    wait_idle(qtbot, window)


def test_invalid_rows_block_the_import_until_skipped(make_window, filled_db, qtbot, tmp_path):
    path = filled_db(5)
    window = make_window()
    good = {"id": "new-1", "content": "fine", "created_at": "2025-01-01 00:00:00", "updated_at": "2025-01-01 00:00:00"}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "new-2", "importance": 12}) + "\n",
                      encoding="utf-8")
    dialog = window.exchanger.preview(source)
    qtbot.waitUntil(lambda: dialog.result is not None, timeout=15000)
    assert dialog.problems.isVisible() and "line 2, field importance" in dialog.problems.text()
    assert not dialog.import_button.isEnabled()
    dialog.skip_bad.setChecked(True)
    qtbot.waitUntil(dialog.import_button.isEnabled, timeout=15000)
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: count(path) == 6, timeout=15000)
    assert db_rows(path, "SELECT content FROM memories WHERE id = 'new-1'") == [("fine",)]


def test_a_source_of_no_format_is_explained_in_the_preview(make_window, filled_db, qtbot, tmp_path):
    filled_db(3)
    window = make_window()
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    dialog = window.exchanger.preview(tmp_path / "notes.txt")
    qtbot.waitUntil(lambda: "none of the import formats" in dialog.summary.text(), timeout=15000)
    assert not dialog.import_button.isEnabled()


def test_export_the_file_the_selection_and_the_view(make_window, filled_db, qtbot, tmp_path):
    filled_db(12)
    window = make_window()
    wait_idle(qtbot, window)
    out = tmp_path / "all.csv"
    window.exchanger.export("file", "csv", out)
    qtbot.waitUntil(lambda: out.exists(), timeout=15000)
    assert out.read_bytes().count(b"\r\n") == 13  # the header and 12 records (CRLF; inner newlines kept)
    window.browser.table.selectRow(0)
    qtbot.waitUntil(lambda: len(window.browser.table.selected_rows()) == 1, timeout=5000)
    chosen = tmp_path / "one.jsonl"
    window.exchanger.export("selection", "jsonl", chosen)
    qtbot.waitUntil(lambda: chosen.exists(), timeout=15000)
    assert len(chosen.read_text(encoding="utf-8").splitlines()) == 2  # the header line and one memory
    window.browser.search.field.setText("deploys")
    qtbot.waitUntil(lambda: not window.browser.model.is_loading() and window.browser.model.rowCount() == 4,
                    timeout=15000)
    shown = tmp_path / "view.md"
    window.exchanger.export("view", "md", shown)
    qtbot.waitUntil(lambda: shown.exists(), timeout=15000)
    assert shown.read_text(encoding="utf-8").startswith("# Memories (4)")
    assert window.exchanger.export_action.isEnabled() and window.exchanger.import_action.isEnabled()
