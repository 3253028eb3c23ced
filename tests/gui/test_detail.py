"""The detail pane's links, supersession, promotion, health explanation and dark mode."""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from ora_desktop.core import Memory, timestamps
from ora_desktop.gui.detail.health import explain, falls_below_at

from .conftest import db_rows
from .test_curate import select_id, undo


def related(path, memory_id):
    return db_rows(path, "SELECT related_to FROM memories WHERE id = ?", (memory_id,))[0][0]


def test_link_follow_and_unlink(make_window, filled_db, qtbot):
    path = filled_db(6)
    window = make_window()
    select_id(qtbot, window, "m001")
    detail = window.browser.detail
    detail.link_id.setText("m005")
    qtbot.mouseClick(detail.link_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: related(path, "m001") == '["m005"]' and related(path, "m005") == '["m001"]',
                    timeout=10000)
    qtbot.waitUntil(lambda: detail.related.count() == 1, timeout=10000)
    assert "number 5" in detail.related.item(0).text()
    detail.related.itemActivated.emit(detail.related.item(0))  # follow the link
    qtbot.waitUntil(lambda: detail.memory.id == "m005", timeout=10000)
    qtbot.waitUntil(lambda: detail.related.count() == 1 and "number 1" in detail.related.item(0).text(),
                    timeout=10000)
    detail.related.setCurrentRow(0)
    qtbot.mouseClick(detail.unlink_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: related(path, "m005") is None and related(path, "m001") is None, timeout=10000)
    detail.link_id.setText("no-such-memory")  # a readable error, nothing changed
    qtbot.mouseClick(detail.link_button, Qt.MouseButton.LeftButton)
    qtbot.wait(300)
    assert related(path, "m005") is None


def test_supersede_one_with_another(make_window, filled_db, qtbot):
    path = filled_db(4)
    window = make_window()
    model = window.browser.model
    qtbot.waitUntil(lambda: model.memory_at(0) is not None and model.memory_at(1) is not None, timeout=10000)
    table = window.browser.table
    table.selectRow(0)
    table.selectionModel().select(model.index(1, 0), table.selectionModel().SelectionFlag.Select
                                  | table.selectionModel().SelectionFlag.Rows)
    first, second = model.memory_at(0), model.memory_at(1)
    qtbot.waitUntil(window.curator.supersede_action.isEnabled, timeout=5000)
    window.curator.supersede_action.trigger()
    qtbot.waitUntil(lambda: window.curator.dialog is not None and window.curator.dialog.isVisible(), timeout=5000)
    dialog = window.curator.dialog
    old, new = dialog.old_and_new()
    dialog.accept()
    qtbot.waitUntil(lambda: db_rows(path, "SELECT superseded_by FROM memories WHERE id = ?", (old.id,))
                    == [(new.id,)], timeout=10000)
    assert {old.id, new.id} == {first.id, second.id}
    qtbot.waitUntil(lambda: model.rowCount() == 3, timeout=10000)  # the superseded one is hidden
    undo(qtbot, window)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT superseded_by FROM memories WHERE id = ?", (old.id,))
                    == [(None,)], timeout=10000)


def test_promote_a_finished_task_agent(make_window, ora_home, qtbot):
    from ora_desktop.core.demo import write_demo_home

    write_demo_home(ora_home, memories=300)
    window = make_window()
    task = next(i for i in window.sidebar.file_items() if "(task)" in i.text(0))
    window.sidebar.setCurrentItem(task)
    qtbot.waitUntil(window.curator.promote_action.isEnabled, timeout=10000)
    parent = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    before = db_rows(parent, "SELECT count(*) FROM memories WHERE id LIKE 'extracted-%'")[0][0]
    window.curator.promote_action.trigger()
    qtbot.waitUntil(lambda: window.curator.dialog is not None and window.curator.dialog.isVisible()
                    and hasattr(window.curator.dialog, "confirm"), timeout=20000)
    dialog = window.curator.dialog
    listed = dialog.items.count()
    assert listed > 0 and dialog.items.item(0).text().startswith("extracted-")
    dialog.confirm.click()
    qtbot.waitUntil(lambda: db_rows(parent, "SELECT count(*) FROM memories WHERE id LIKE 'extracted-%'")[0][0]
                    == before + listed, timeout=20000)


def test_health_explanation_names_the_day_it_falls_below_recall():
    now = timestamps.now()
    memory = Memory(id="a", content="x", health_score=0.5, access_count=2,
                    created_at=now - timedelta(days=40), last_accessed_at=now - timedelta(days=10))
    assert falls_below_at(memory, now) == now + timedelta(days=20)
    text = explain(memory, now)
    assert "Decaying since" in text and "in 20 days" in text and "0.3" in text
    low = Memory(id="b", content="y", health_score=0.25, created_at=now - timedelta(days=2))
    text = explain(low, now)
    assert "recall no longer returns it" in text and "1 access would bring it back" in text
    assert "Decay starts" in text


def test_dark_mode_follows_the_system(aloop):
    # The offscreen platform cannot switch the system scheme, so drive the handler that
    # styleHints().colorSchemeChanged is connected to (the connection is made by make_application).
    from ora_desktop.gui import theme

    app = QApplication.instance()
    assert app.property("oraThemeHooked"), "the window follows the system scheme"
    try:
        theme.apply_scheme(app, Qt.ColorScheme.Dark)
        assert app.palette().color(QPalette.ColorRole.Window).lightness() < 100
        assert app.palette().color(QPalette.ColorRole.Text).lightness() > 180
        theme.apply_scheme(app, Qt.ColorScheme.Light)
        assert app.palette().color(QPalette.ColorRole.Window).lightness() > 150
    finally:
        theme.apply_scheme(app, QGuiApplication.styleHints().colorScheme())


def test_an_edit_of_other_fields_keeps_the_links_and_chain_without_reading_them_again(
        make_window, filled_db, qtbot, monkeypatch):
    from ora_desktop.core import Store

    path = filled_db(8)
    window = make_window()
    window.ctx.start_watching(3_600_000)  # only the window's own writes in this test
    store = window.ctx.store_for(path)
    store.link("m001", "m005")
    store.supersede("m002", "m001")
    select_id(qtbot, window, "m001")
    detail = window.browser.detail
    qtbot.waitUntil(lambda: detail.related.count() == 1 and detail.chain_list.count() == 2, timeout=10000)
    chains = []
    real = Store.chain
    monkeypatch.setattr(Store, "chain", lambda self, memory_id: chains.append(memory_id) or real(self, memory_id))
    detail.editor.importance.setText("9")
    qtbot.mouseClick(detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT importance FROM memories WHERE id = 'm001'") == [(9,)], timeout=10000)
    qtbot.waitUntil(lambda: detail.memory.importance == 9, timeout=10000)
    qtbot.wait(200)
    assert chains == []  # a scan of the whole file on a large one: not read again for an importance edit
    assert detail.related.count() == 1 and "number 5" in detail.related.item(0).text()
    assert detail.chain_list.count() == 2
    # A write to a chained memory elsewhere (another view, a job) reads them again.
    task = window.ctx.loop.create_task(window.ctx.run(store.supersede, "m003", "m002"))
    qtbot.waitUntil(task.done, timeout=5000)
    qtbot.waitUntil(lambda: detail.chain_list.count() == 3, timeout=10000)
    assert chains == ["m001"]


def test_moving_through_rows_reads_the_chain_only_where_the_selection_rests(make_window, filled_db, qtbot,
                                                                            monkeypatch):
    from ora_desktop.core import Store

    filled_db(12)
    window = make_window()
    model, table, detail = window.browser.model, window.browser.table, window.browser.detail
    qtbot.waitUntil(lambda: all(model.memory_at(r) is not None for r in range(6)), timeout=10000)
    qtbot.wait(300)
    chains = []
    real = Store.chain
    monkeypatch.setattr(Store, "chain", lambda self, memory_id: chains.append(memory_id) or real(self, memory_id))
    for row in range(1, 6):  # Down, Down, ... as fast as a held key
        table.select_row(row)
        qtbot.wait(30)
    last = model.memory_at(5).id
    qtbot.waitUntil(lambda: detail.memory.id == last and detail.chain_list.count() == 1, timeout=10000)
    qtbot.wait(300)
    assert chains == [last]  # one scan of the file, for the memory that stays shown


def test_saving_keeps_the_pane_and_the_cursor_where_the_person_was(make_window, filled_db, qtbot):
    path = filled_db(8)
    window = make_window()
    window.resize(1024, 600)
    select_id(qtbot, window, "m004")
    detail = window.browser.detail
    bar = detail.verticalScrollBar()
    qtbot.waitUntil(lambda: detail.chain_list.count() == 1 and bar.maximum() > 0, timeout=5000)
    bar.setValue(bar.maximum())  # down at the fields, below the text
    down = bar.value()
    detail.editor.importance.setFocus()
    detail.editor.importance.setText("9")
    qtbot.keyClick(detail.editor.importance, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: detail.memory.importance == 9 and not detail.editor.is_modified(), timeout=10000)
    qtbot.wait(100)
    assert db_rows(path, "SELECT importance FROM memories WHERE id = 'm004'") == [(9,)]
    assert bar.value() == down > 0  # not thrown back to the top of the pane

    content = detail.editor.content
    cursor = content.textCursor()
    cursor.setPosition(len("Memory number 4"))
    content.setTextCursor(cursor)
    content.setFocus()
    content.insertPlainText(" (checked)")
    at = content.textCursor().position()
    qtbot.keyClick(content, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: detail.memory.content.startswith("Memory number 4 (checked)")
                    and not detail.editor.is_modified(), timeout=10000)
    assert content.textCursor().position() == at  # typing goes on where it was
    assert not detail.save_button.isEnabled() and detail.editor.base == detail.memory
    undo(qtbot, window)
    qtbot.waitUntil(lambda: detail.memory.content.startswith("Memory number 4 about"), timeout=10000)
    assert content.toPlainText() == detail.memory.content  # an undo shows the stored text again


def test_sync_state_is_shown_once_beside_the_sync_field(make_window, filled_db, qtbot):
    """A row marked synced but edited after its last sync: one phrase, beside the field that says
    'Synced' — not a second, contradicting 'dirty (not synced)' in the header."""
    import sqlite3

    from .test_curate import select_id

    path = filled_db(6)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET sync_status = 'synced', synced_at = '2026-01-01 00:00:00', "
                     "updated_at = '2026-02-01 00:00:00' WHERE id = 'm002'")
        conn.execute("UPDATE memories SET sync_status = 'synced', synced_at = '2026-03-01 00:00:00', "
                     "updated_at = '2026-02-01 00:00:00' WHERE id = 'm003'")
    window = make_window()
    detail = window.browser.detail
    select_id(qtbot, window, "m002")
    assert detail.editor.sync.currentData() == "synced"
    assert detail.editor.sync_state.text() == "— changed since its last sync"
    assert "dirty" not in detail.meta.text() and "sync" not in detail.meta.text()
    select_id(qtbot, window, "m003")
    assert detail.editor.sync_state.text() == "— in sync"


def test_repair_links_of_a_malformed_related_to_and_undo(make_window, filled_db, qtbot):
    """A related_to of prose offers Repair links: the ids it names become the links, Ctrl+Z restores it."""
    import sqlite3

    path = filled_db(6)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET related_to = 'see m001 and m004 (old notes)' WHERE id = 'm002'")
    window = make_window()
    select_id(qtbot, window, "m002")
    detail = window.browser.detail
    qtbot.waitUntil(detail.repair_button.isVisible, timeout=10000)
    assert "not a list of ids" in detail.related_note.text()
    qtbot.mouseClick(detail.repair_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: related(path, "m002") == '["m001", "m004"]', timeout=10000)
    qtbot.waitUntil(lambda: detail.related.count() == 2 and not detail.repair_button.isVisible(), timeout=10000)
    qtbot.waitUntil(window.curator.undo_action.isEnabled, timeout=5000)
    qtbot.waitUntil(lambda: not window.curator._serial().locked(), timeout=5000)
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: related(path, "m002") == "see m001 and m004 (old notes)", timeout=10000)


def test_the_link_field_picks_a_memory_by_its_words(make_window, filled_db, qtbot):
    """Type words, the matching memories pop up as their first line and id; choose one, Link."""
    path = filled_db(12)
    window = make_window()
    select_id(qtbot, window, "m001")
    detail = window.browser.detail
    detail.link_id.setFocus()
    qtbot.keyClicks(detail.link_id, "number 7")
    picker = detail.link_picker
    qtbot.waitUntil(lambda: bool(picker.choices), timeout=10000)
    assert picker.choices[0][0] == "m007" and "Memory number 7" in picker.choices[0][1]
    assert all(memory_id != "m001" for memory_id, _title in picker.choices)  # never itself
    offered = picker.model.stringList()
    assert offered[0].endswith("  —  m007")
    picker.completer.activated.emit(offered[0])
    qtbot.waitUntil(lambda: detail.link_id.text() == "m007", timeout=5000)
    qtbot.mouseClick(detail.link_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: related(path, "m001") == '["m007"]', timeout=10000)
    # words and Link at once: the best match is linked
    detail.link_id.setFocus()
    qtbot.keyClicks(detail.link_id, "number 3")
    qtbot.waitUntil(lambda: picker.choices and picker.choices[0][0] == "m003", timeout=10000)
    qtbot.mouseClick(detail.link_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: related(path, "m001") == '["m007", "m003"]', timeout=10000)


def test_stored_values_shows_the_row_as_stored_and_saves_a_validated_edit(make_window, filled_db, qtbot):
    """Every column with its storage class; a bad value is named and not saved; a good one is
    saved as an undoable edit."""
    import sqlite3

    path = filled_db(6)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET synced_at = '2026-01-14T10:30:00.000Z' WHERE id = 'm002'")
    window = make_window()
    select_id(qtbot, window, "m002")
    detail = window.browser.detail
    detail.stored_button.click()
    qtbot.waitUntil(lambda: detail.stored_dialog is not None and detail.stored_dialog.isVisible(), timeout=10000)
    dialog = detail.stored_dialog
    rows = {dialog.table.item(r, 0).text(): r for r in range(dialog.table.rowCount())}
    assert dialog.table.item(rows["synced_at"], 2).text() == "2026-01-14T10:30:00.000Z"
    assert dialog.table.item(rows["synced_at"], 1).text() == "text"
    assert not dialog.table.item(rows["id"], 2).flags() & Qt.ItemFlag.ItemIsEditable
    dialog.table.item(rows["importance"], 2).setText("11")
    assert not dialog.save_button.isEnabled() and "importance" in dialog.message.text().lower()
    dialog.table.item(rows["importance"], 2).setText("9")
    dialog.table.item(rows["related_to"], 2).setText('["m001"]')
    assert dialog.save_button.isEnabled() and dialog.message.text() == ""
    dialog.save_button.click()
    qtbot.waitUntil(lambda: db_rows(path, "SELECT importance, related_to FROM memories WHERE id = 'm002'")
                    == [(9, '["m001"]')], timeout=10000)
    qtbot.waitUntil(window.curator.undo_action.isEnabled, timeout=5000)
    qtbot.waitUntil(lambda: not window.curator._serial().locked(), timeout=5000)
    window.curator.undo_action.trigger()
    qtbot.waitUntil(lambda: db_rows(path, "SELECT importance FROM memories WHERE id = 'm002'") == [(3,)],
                    timeout=10000)


def test_expiry_in_the_detail_editor_refuses_a_bare_number_and_takes_a_span_from_now(make_window, filled_db, qtbot):
    path = filled_db(4)
    window = make_window()
    select_id(qtbot, window, "m002")
    detail = window.browser.detail
    before = db_rows(path, "SELECT * FROM memories ORDER BY id")
    for text, words in (("7", "'7' is a bare number"), ("1e10", "'1e10' is a bare number"),
                        ("2300-01-01", "out of range")):
        detail.editor.expires.setText(text)
        assert detail.editor.message.text().startswith("Expires: ") and words in detail.editor.message.text()
        assert not detail.save_button.isEnabled()
        detail.request_save()  # Ctrl+S on an invalid edit does nothing
    qtbot.wait(200)
    assert db_rows(path, "SELECT * FROM memories ORDER BY id") == before
    detail.editor.expires.setText("7d")
    assert not detail.editor.message.isVisible() and detail.save_button.isEnabled()
    detail.save_button.click()
    week = timestamps.now() + timedelta(days=7)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT expires_at FROM memories WHERE id = 'm002'")[0][0] is not None,
                    timeout=10000)
    stored = timestamps.parse(db_rows(path, "SELECT expires_at FROM memories WHERE id = 'm002'")[0][0])
    assert abs(stored - week) < timedelta(minutes=5)


def test_pin_toggle_pins_and_unpins_the_memory_shown(make_window, filled_db, qtbot):
    """The detail pane's Pin button writes the file's pins (core's operation) and shows the state."""
    path = filled_db(4)
    window = make_window()
    select_id(qtbot, window, "m002")
    detail = window.browser.detail
    qtbot.waitUntil(detail.pin_button.isEnabled, timeout=5000)
    assert not detail.pin_button.isChecked()
    qtbot.mouseClick(detail.pin_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(db_rows(path, "SELECT name FROM sqlite_master WHERE name = 'ora_desktop_pins'"))
                    and db_rows(path, "SELECT memory_id FROM ora_desktop_pins") == [("m002",)], timeout=10000)
    qtbot.waitUntil(lambda: detail.pin_button.text() == "Pinned", timeout=5000)
    select_id(qtbot, window, "m001")
    qtbot.waitUntil(lambda: not detail.pin_button.isChecked(), timeout=5000)
    select_id(qtbot, window, "m002")
    qtbot.waitUntil(detail.pin_button.isChecked, timeout=5000)  # read back from the file
    qtbot.mouseClick(detail.pin_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT memory_id FROM ora_desktop_pins") == [], timeout=10000)
    assert not detail.pin_button.isChecked()


def test_pinned_quick_filter_lists_only_pinned_memories(make_window, filled_db, qtbot):
    from ora_desktop.core import open_store
    from ora_desktop.core.operations.pins import pin

    path = filled_db(6)
    with open_store(path) as store:
        pin(store, ["m003", "m005"])
    window = make_window()
    model = window.browser.model
    qtbot.waitUntil(lambda: model.rowCount() == 6, timeout=10000)
    window.browser.search.quick["pinned"].click()
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=10000)
    qtbot.waitUntil(lambda: all(model.memory_at(r) is not None for r in range(2)), timeout=10000)
    assert sorted(model.memory_at(r).id for r in range(2)) == ["m003", "m005"]


def test_history_section_lists_the_memorys_journalled_changes(make_window, filled_db, qtbot):
    from ora_desktop.core import open_store
    from ora_desktop.core.operations import edits

    path = filled_db(4)
    with open_store(path) as store:
        edits.edit(store, "m002", {"importance": 9})
    window = make_window()
    select_id(qtbot, window, "m002")
    detail = window.browser.detail
    qtbot.waitUntil(lambda: "edit importance of m002" in detail.history.text(), timeout=10000)
    assert "importance: 3 → 9" in detail.history.text()
    select_id(qtbot, window, "m001")
    qtbot.waitUntil(lambda: "No journalled change" in detail.history.text(), timeout=10000)
