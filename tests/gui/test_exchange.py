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


def test_import_into_a_new_agent_named_in_the_dialog_warns_of_another_agents_export(
        make_window, filled_db, qtbot, tmp_path, ora_home):
    """The import dialog offers "A new agent…": a bad name is said and blocks Import, the preview
    creates nothing, the export of another agent is warned about, and Import creates the agent's
    file where ora-desktop creates agents, lists it and opens it."""
    from ora_desktop.core.operations.export import export_memories

    filled_db(4, site="acme-shop", agent="legacy")
    path = filled_db(7)
    export_memories([ora_home / "sites" / "acme-shop" / "legacy.site.db"], tmp_path / "legacy.jsonl")
    window = make_window()
    window.open_file(path)
    qtbot.waitUntil(lambda: window.browser.store is not None and window.browser.store.path == path, timeout=10000)
    dialog = window.exchanger.preview(tmp_path / "legacy.jsonl")
    qtbot.waitUntil(lambda: dialog.result is not None, timeout=15000)
    assert dialog.origin.isVisible()  # into anwe-sh/ora: another agent's memories
    assert "acme-shop/legacy" in dialog.origin.text() and "anwe-sh/ora" in dialog.origin.text()
    dialog.into.setCurrentIndex(dialog.into.findText("A new agent…"))
    assert dialog.new_row.isVisible() and dialog.new_site.currentText() == "anwe-sh"
    qtbot.keyClicks(dialog.new_name, "../helper")
    qtbot.waitUntil(lambda: "must not" in dialog.summary.text(), timeout=15000)
    assert not dialog.import_button.isEnabled()
    dialog.new_name.setText("legacy")
    dialog.new_site.setCurrentText("acme-shop")
    qtbot.waitUntil(lambda: "this agent exists" in dialog.summary.text(), timeout=15000)
    dialog.new_site.setCurrentText("anwe-sh")
    dialog.new_name.setText("helper")
    new = ora_home / "sites" / "anwe-sh" / "helper.site.db"
    qtbot.waitUntil(lambda: dialog.result is not None and dialog.import_button.isEnabled(), timeout=15000)
    assert dialog.summary.text().startswith("Detected format: jsonl. 4 new memories")
    assert "anwe-sh/helper" in dialog.origin.text()
    assert not new.exists()  # the preview created nothing
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.exchanger.summary is not None and window.exchanger.summary.isVisible(),
                    timeout=15000)
    assert "into the new agent anwe-sh/helper: 4 new" in window.exchanger.summary.text()
    assert count(new) == 4 and count(path) == 7
    qtbot.waitUntil(lambda: window.browser.store is not None and window.browser.store.path == new, timeout=10000)
    qtbot.waitUntil(lambda: window.sidebar.item_for(new) is not None, timeout=10000)  # listed by a rescan
    window.exchanger.summary.close()
    wait_idle(qtbot, window)


def test_an_import_stopped_part_way_before_is_taken_back_first_and_the_summary_says_so(make_window, filled_db,
                                                                                      qtbot, tmp_path):
    from ora_desktop.core import open_store
    from ora_desktop.core.exchange import pending

    path = filled_db(5)
    with open_store(path) as store, store.write():  # what an import killed after its first chunk leaves
        mark = pending.Mark()
        mark.begin(store, "/gone/big.jsonl")
        store.add("half imported", id="half-1")
        mark.chunk(store, ["half-1"], [], None)
    window = make_window()
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "new-1", "content": "fine", "created_at": "2025-01-01 00:00:00",
                                  "updated_at": "2025-01-01 00:00:00"}) + "\n", encoding="utf-8")
    dialog = window.exchanger.preview(source)
    qtbot.waitUntil(lambda: dialog.result is not None and dialog.import_button.isEnabled(), timeout=15000)
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.exchanger.summary is not None and window.exchanger.summary.isVisible(),
                    timeout=15000)
    text = window.exchanger.summary.text()
    assert text.startswith("Imported 1 memory from in.jsonl (jsonl): 1 new")
    assert ("First, an import of /gone/big.jsonl stopped part-way was taken back: 1 memory it had written went "
            "to the trash ('interrupted import taken back').") in text
    assert sorted(r[0] for r in db_rows(path, "SELECT id FROM memories WHERE id IN ('half-1', 'new-1')")) == ["new-1"]
    window.exchanger.summary.close()
    wait_idle(qtbot, window)
