"""An edit repainted in place moves the facet counts by the edited row, without counting the file
again (on a million memories a recount takes seconds of a core after every edit)."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt

from ora_desktop.gui.search import controller as controller_module
from ora_desktop.gui.search.widgets import VALUE_ROLE

from .conftest import wait_idle
from .test_curate import select_id


def shown_counts(window, group: str) -> dict[str, str]:
    facets = window.browser.facets
    for i in range(facets.topLevelItemCount()):
        top = facets.topLevelItem(i)
        if top.data(0, VALUE_ROLE) == group:
            return {top.child(j).text(0): top.child(j).text(1) for j in range(top.childCount())}
    return {}


def test_an_importance_edit_moves_the_facet_counts_without_counting_again(make_window, filled_db, qtbot,
                                                                           monkeypatch):
    filled_db(30)  # importance 1 + i % 10: three memories at each level
    window = make_window()
    window.ctx.start_watching(3_600_000)  # only the window's own write in this test
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "3", timeout=10000)
    counted = []
    real = controller_module.count_answer_facets
    monkeypatch.setattr(controller_module, "count_answer_facets",
                        lambda *args: counted.append(1) or real(*args))
    select_id(qtbot, window, "m004")  # importance 5
    window.browser.detail.editor.importance.setText("9")
    qtbot.mouseClick(window.browser.detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "4", timeout=10000)
    assert shown_counts(window, "importance")["5"] == "2"
    assert list(shown_counts(window, "importance"))[:2] == ["10", "9"]  # still most important first
    assert shown_counts(window, "type")["fact"] == "6"  # the other groups are untouched
    qtbot.wait(200)
    assert counted == []  # moved by the edited row: the file was not counted again
    # and the moved counts are what counting again gives
    window.browser.controller.apply()
    qtbot.waitUntil(lambda: bool(counted), timeout=10000)
    wait_idle(qtbot, window)
    qtbot.wait(200)
    assert shown_counts(window, "importance")["9"] == "4" and shown_counts(window, "importance")["5"] == "2"


def test_an_edit_during_a_count_counts_once_more_after_it_never_twice_at_once(make_window, filled_db, qtbot,
                                                                             monkeypatch):
    filled_db(30)
    window = make_window()
    window.ctx.start_watching(3_600_000)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "3", timeout=10000)
    select_id(qtbot, window, "m004")  # importance 5
    release, running, calls = threading.Event(), [], []
    real = controller_module.count_answer_facets

    def slow_count(*args):  # the first count takes long (a million rows)
        running.append(1)
        calls.append(len(running))  # how many counts run at once
        try:
            if len(calls) == 1:
                release.wait(10)
            return real(*args)
        finally:
            running.pop()

    monkeypatch.setattr(controller_module, "count_answer_facets", slow_count)
    window.browser.controller.apply()  # a count starts (and waits)
    qtbot.waitUntil(lambda: len(calls) == 1, timeout=10000)
    window.browser.detail.editor.importance.setText("9")
    qtbot.mouseClick(window.browser.detail.save_button, Qt.MouseButton.LeftButton)
    model = window.browser.model
    qtbot.waitUntil(lambda: any(model.memory_at(r) is not None and model.memory_at(r).id == "m004"
                                and model.memory_at(r).importance == 9 for r in range(30)), timeout=10000)
    qtbot.wait(200)
    assert calls == [1]  # no second count while the first runs
    release.set()
    qtbot.waitUntil(lambda: len(calls) == 2 and not running, timeout=10000)
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "4", timeout=10000)
    assert calls == [1, 1] and shown_counts(window, "importance")["5"] == "2"


def test_sorting_keeps_the_facet_counts_without_counting_again(make_window, filled_db, qtbot, monkeypatch):
    from ora_desktop.gui.memories.columns import column_index

    filled_db(30)
    window = make_window()
    window.ctx.start_watching(3_600_000)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "3", timeout=10000)
    counted = []
    real = controller_module.count_answer_facets
    monkeypatch.setattr(controller_module, "count_answer_facets", lambda *args: counted.append(1) or real(*args))
    model, table = window.browser.model, window.browser.table
    table.sortByColumn(column_index("health"), Qt.SortOrder.DescendingOrder)
    qtbot.waitUntil(lambda: model.query.order_by == "health_score" and not model.is_loading(), timeout=10000)
    wait_idle(qtbot, window)
    assert model.memory_at(0).health_score == 1.0  # sorted
    qtbot.wait(200)
    assert counted == []  # the same memories in another order: the same counts
    assert shown_counts(window, "importance")["9"] == "3" and shown_counts(window, "type")["fact"] == "6"
    # Narrowing the list does count again.
    window.browser.controller.toggle_quick("low_health", True)
    qtbot.waitUntil(lambda: bool(counted), timeout=10000)


def test_the_facet_panel_updates_its_counts_in_place_and_its_ticks_follow_the_filters(make_window, filled_db,
                                                                                     qtbot):
    filled_db(30)
    window = make_window()
    window.ctx.start_watching(3_600_000)
    wait_idle(qtbot, window)
    facets = window.browser.facets
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "3", timeout=10000)
    nine = facets.item_for("importance", "9")
    select_id(qtbot, window, "m004")
    window.browser.detail.editor.importance.setText("9")
    qtbot.mouseClick(window.browser.detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: nine.text(1) == "4", timeout=10000)
    assert facets.item_for("importance", "9") is nine  # moved in place: no rebuild, nothing jumps
    # A tick, then Clear search: the box is unticked with the filter gone, counts unchanged.
    facets.item_for("type", "fact").setCheckState(0, Qt.CheckState.Checked)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 6 and not window.browser.model.is_loading(),
                    timeout=10000)
    window.clear_search()
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 30, timeout=10000)
    qtbot.waitUntil(lambda: facets.item_for("type", "fact").checkState(0) == Qt.CheckState.Unchecked,
                    timeout=10000)
    assert shown_counts(window, "type")["fact"] == "6"


def test_typing_counts_the_facets_of_the_words_it_rests_on_only(make_window, filled_db, qtbot, monkeypatch):
    filled_db(30)
    window = make_window()
    wait_idle(qtbot, window)
    controller = window.browser.controller
    counted, answers = [], []
    real = controller_module.count_answer_facets
    monkeypatch.setattr(controller_module, "count_answer_facets",
                        lambda store, answer, *rest: counted.append(answer.request.text) or real(store, answer, *rest))
    controller.answered.connect(answers.append)
    for text in ("cof", "coffe", "coffee"):  # each keystroke's hits are shown before the next one
        controller.set_text(text, immediate=True)
        qtbot.waitUntil(lambda text=text: bool(answers) and answers[-1].request.text == text, timeout=10000)
    # the counts of "coffee" (20 of the 30 memories) are shown...
    qtbot.waitUntil(lambda: sum(int(n) for n in shown_counts(window, "type").values()) == 20, timeout=10000)
    qtbot.wait(300)
    assert counted == ["coffee"]  # ...from one count of every match, for the words typed last


def test_clearing_a_search_shows_the_listings_counts_again_without_counting_every_row(
        make_window, filled_db, qtbot, monkeypatch):
    """On a million memories a listing's count takes seconds of a core: clearing a search brings
    back the counts from before it at once (the scroll that usually follows is not slowed)."""
    filled_db(30)
    window = make_window()
    window.ctx.start_watching(3_600_000)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "3", timeout=10000)
    before = {group: shown_counts(window, group) for group in ("type", "importance", "health")}
    counted: list = []
    real = controller_module.count_answer_facets
    monkeypatch.setattr(controller_module, "count_answer_facets",
                        lambda store, answer, *rest: counted.append(answer.ranked) or real(store, answer, *rest))
    controller = window.browser.controller
    controller.set_text("deploys", immediate=True)
    qtbot.waitUntil(lambda: counted == [True] and shown_counts(window, "type") != before["type"], timeout=10000)
    controller.set_text("", immediate=True)
    qtbot.waitUntil(lambda: shown_counts(window, "type") == before["type"], timeout=10000)
    wait_idle(qtbot, window)
    qtbot.wait(300)
    assert counted == [True]  # the search's count only: the listing's came back as they were
    assert {group: shown_counts(window, group) for group in before} == before
    assert window.browser.model.rowCount() == 30


def test_after_a_write_clearing_a_search_counts_the_listing_again(make_window, filled_db, qtbot, monkeypatch):
    filled_db(30)
    window = make_window()
    window.ctx.start_watching(3_600_000)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "3", timeout=10000)
    controller = window.browser.controller
    controller.set_text("deploys", immediate=True)  # m000, m003, ... m027 match
    wait_idle(qtbot, window)
    select_id(qtbot, window, "m003")  # importance 4
    window.browser.detail.editor.importance.setText("9")
    qtbot.mouseClick(window.browser.detail.save_button, Qt.MouseButton.LeftButton)
    model = window.browser.model
    qtbot.waitUntil(lambda: any(model.memory_at(r) is not None and model.memory_at(r).id == "m003"
                                and model.memory_at(r).importance == 9 for r in range(model.rowCount())),
                    timeout=10000)
    controller.set_text("", immediate=True)
    qtbot.waitUntil(lambda: shown_counts(window, "importance").get("9") == "4", timeout=10000)
    assert shown_counts(window, "importance")["4"] == "2"
