"""The Context tab shows exactly what ``store.context()`` hands the agent, section by section with token
counts, what the budget left out, and touches nothing."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ora_desktop.core import open_store
from ora_desktop.gui.context_view.view import ID_ROLE, ContextView

from .conftest import db_rows


def ask(qtbot, view: ContextView, question: str, budget: int) -> None:
    view.bundle = None
    view.question.setText(question)
    view.budget.setValue(budget)
    qtbot.keyClick(view.question, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: view.bundle is not None, timeout=10000)


def test_sections_tokens_and_left_out_match_the_library(qtbot, ctx, filled_db) -> None:
    path = filled_db(40)
    view = ContextView(ctx)
    qtbot.addWidget(view)
    view.show()
    ctx.set_current(path)
    ask(qtbot, view, "what about deploys?", 150)
    with open_store(path, readonly=True) as store:
        expected = store.context("what about deploys?", 150)
    assert view.text.toPlainText() == expected.text
    tree = view.tree
    assert tree.topLevelItemCount() == 4
    for i, section in enumerate(expected.sections):
        top = tree.topLevelItem(i)
        assert top.text(1) == f"{section.tokens:,} / {section.budget:,}"
        assert [top.child(j).data(0, ID_ROLE) for j in range(top.childCount())] == [m.id for m in section.memories]
    left = tree.topLevelItem(3)
    assert expected.left_out and left.text(0) == f"Left out for budget ({len(expected.left_out)})"
    left_ids = [left.child(j).data(0, ID_ROLE) for j in range(left.childCount())]
    assert left_ids == [i.memory.id for i in expected.left_out]
    assert f"{expected.tokens:,} of 150 tokens" in view.summary.text()
    assert db_rows(path, "SELECT sum(access_count) FROM memories")[0][0] == 0, "looking touches nothing"

    ask(qtbot, view, "what about deploys?", 100_000)
    assert view.tree.topLevelItem(3).childCount() == 0
    assert view.tree.topLevelItem(1).childCount() > 0, "keyword hits for 'deploys' are placed"


def test_no_file_and_a_broken_file_say_so(qtbot, ctx, ora_home) -> None:
    view = ContextView(ctx)
    qtbot.addWidget(view)
    assert "Select an agent" in view.summary.text()
    broken = ora_home / "broken.site.db"
    broken.write_bytes(b"this is not sqlite" * 50)
    ctx.set_current(broken)
    view.question.setText("anything")
    ask_task = view.refresh()
    qtbot.waitUntil(ask_task.done, timeout=10000)
    assert "could not be assembled" in view.summary.text() and "broken.site.db" in view.summary.text()


def test_double_click_shows_the_memory_in_the_table(qtbot, make_window, filled_db) -> None:
    filled_db(30)
    window = make_window()
    qtbot.waitUntil(lambda: "Context" in window.panels, timeout=10000)
    view = window.panels["Context"]
    window.tabs.setCurrentWidget(view)
    ask(qtbot, view, "coffee", 400)
    item = view.tree.topLevelItem(1).child(0)
    target = item.data(0, ID_ROLE)
    view.tree.itemDoubleClicked.emit(item, 0)
    assert window.tabs.currentIndex() == 0
    qtbot.waitUntil(lambda: window.browser.detail.memory is not None and window.browser.detail.memory.id == target,
                    timeout=10000)
