"""A memory of megabytes opens at once as an excerpt around the search match, and edits stay safe."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import Qt

from ora_desktop.gui.detail.editor import EXCERPT_CHARS, LARGE_CHARS

from .conftest import db_rows
from .python_calls import calls_of
from .test_curate import select_id

LINE = "2026-01-01 10:00:00 INFO worker processed job in 37 ms\n"


def big_file(filled_db):
    path = filled_db(12)
    text = LINE * 30_000 + "the needle-word sits deep inside\n" + LINE * 20_000  # ~2.8 MB
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET content = ? WHERE id = 'm004'", (text,))
    return path, text


def test_a_large_memory_opens_as_an_excerpt_at_the_first_match(make_window, filled_db, qtbot):
    path, text = big_file(filled_db)
    window = make_window()
    window.browser.detail.set_terms(("needle",))
    select_id(qtbot, window, "m004")
    editor = window.browser.detail.editor
    shown = editor.content.toPlainText()
    assert len(text) > LARGE_CHARS and len(shown) <= EXCERPT_CHARS
    assert editor.excerpt is not None and editor.excerpt_bar.isVisible()
    assert "2.8 MB" in editor.excerpt_note.text() and "around the first match" in editor.excerpt_note.text()
    cursor = editor.content.textCursor()
    assert shown[cursor.position():].lower().startswith("needle")  # scrolled to the match, not the top
    assert editor.content.isReadOnly()


def test_editing_fields_of_an_excerpt_keeps_the_whole_text(make_window, filled_db, qtbot):
    path, text = big_file(filled_db)
    window = make_window()
    select_id(qtbot, window, "m004")
    detail = window.browser.detail
    detail.editor.importance.setText("9")
    assert detail.editor.raw_changes() == {"importance": "9"}  # the excerpt is not "a change of content"
    qtbot.mouseClick(detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT importance FROM memories WHERE id='m004'") == [(9,)],
                    timeout=10000)
    assert db_rows(path, "SELECT content FROM memories WHERE id='m004'") == [(text,)]


def test_load_all_makes_the_whole_text_editable(make_window, filled_db, qtbot):
    path, text = big_file(filled_db)
    window = make_window()
    select_id(qtbot, window, "m004")
    editor = window.browser.detail.editor
    qtbot.mouseClick(editor.load_all_button, Qt.MouseButton.LeftButton)
    assert editor.excerpt is None and not editor.excerpt_bar.isVisible()
    assert editor.content.toPlainText() == text.rstrip("\n") or editor.content.toPlainText() == text
    assert not editor.content.isReadOnly()
    assert editor.raw_changes() == {}


def test_the_detail_pane_starts_at_the_top_for_each_memory(make_window, filled_db, qtbot):
    filled_db(12)
    window = make_window()
    window.resize(1024, 600)
    select_id(qtbot, window, "m004")
    detail = window.browser.detail
    bar = detail.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5000)
    bar.setValue(bar.maximum())
    select_id(qtbot, window, "m005")
    assert bar.value() == 0


def test_with_no_search_the_text_is_shown_without_the_highlighter_and_marked_once_searched(
        make_window, filled_db, qtbot):
    from ora_desktop.gui.detail.editor import TermHighlighter

    path, text = big_file(filled_db)
    window = make_window()
    editor = window.browser.detail.editor
    with calls_of(TermHighlighter.highlightBlock, "text") as lines:
        select_id(qtbot, window, "m004")
        qtbot.wait(100)
    assert editor.excerpt is not None and lines == []  # no line of the text went through Python to be marked
    window.browser.detail.set_terms(("needle",))
    select_id(qtbot, window, "m003")
    select_id(qtbot, window, "m004")
    block = editor.content.document().findBlock(editor.content.textCursor().position())
    assert any(f.start == 4 and f.length == len("needle") for f in block.layout().formats())  # "the needle-word"
    window.browser.detail.set_terms(())
    assert not block.layout().formats()  # no search: no marks


def test_an_excerpt_shows_a_match_far_from_any_line_break(make_window, filled_db, qtbot):
    """A 2.4 MB memory with no line breaks near its match: the excerpt holds the match, and its
    note says the characters it really shows."""
    path = filled_db(12)
    text = "x" * 10 + "\n" + "word " * 480_000 + "the needle-word sits deep inside " + "word " * 2_000
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET content = ? WHERE id = 'm004'", (text,))
    window = make_window()
    window.browser.detail.set_terms(("needle",))
    select_id(qtbot, window, "m004")
    editor = window.browser.detail.editor
    start, end = editor.excerpt
    at = text.index("needle")
    assert start <= at < end
    assert "needle" in editor.content.toPlainText()
    assert f"characters {start:,}–{end:,}" in editor.excerpt_note.text()
    assert start > 2_000_000
