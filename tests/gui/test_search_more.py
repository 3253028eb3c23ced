"""The window's time facet, partial matches for questions, and all-sites search past a broken file."""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtCore import Qt

from ora_desktop.core import open_store, timestamps

from .conftest import wait_idle


def shown_ids(window) -> set[str]:
    model = window.browser.model
    return {model.memory_at(r).id for r in range(model.rowCount())}


def test_created_facet_counts_ages_and_narrows_the_table(make_window, seed_db, qtbot):
    now = timestamps.now()
    ages = {"hours": timedelta(hours=2), "days": timedelta(days=3), "weeks": timedelta(days=12),
            "months": timedelta(days=90), "years": timedelta(days=500), "years2": timedelta(days=800)}
    path = seed_db()
    with open_store(path) as store:  # created relative to now: the same buckets on any day
        store.add_many({"id": key, "content": f"note {key}", "created_at": timestamps.to_sql(now - age)}
                       for key, age in ages.items())
    window = make_window()
    facets = window.browser.facets
    qtbot.waitUntil(lambda: facets.item_for("created", "over a year ago") is not None, timeout=10000)
    counts = {label: facets.item_for("created", label).text(1) for label in (
        "last 24 hours", "1-7 days ago", "1-4 weeks ago", "1-12 months ago", "over a year ago")}
    assert counts == {"last 24 hours": "1", "1-7 days ago": "1", "1-4 weeks ago": "1", "1-12 months ago": "1",
                      "over a year ago": "2"}
    facets.item_for("created", "over a year ago").setCheckState(0, Qt.CheckState.Checked)
    qtbot.waitUntil(lambda: not window.browser.model.is_loading() and window.browser.model.rowCount() == 2,
                    timeout=10000)
    wait_idle(qtbot, window)
    assert shown_ids(window) == {"years", "years2"}
    qtbot.waitUntil(lambda: facets.item_for("created", "last 24 hours") is not None, timeout=10000)
    # values of one group combine with OR
    facets.item_for("created", "last 24 hours").setCheckState(0, Qt.CheckState.Checked)
    qtbot.waitUntil(lambda: not window.browser.model.is_loading() and window.browser.model.rowCount() == 3,
                    timeout=10000)
    wait_idle(qtbot, window)
    assert shown_ids(window) == {"years", "years2", "hours"}


def test_a_question_shows_partial_matches_with_a_visible_note(make_window, filled_db, qtbot):
    filled_db(30)
    window = make_window()
    browser = window.browser
    browser.search.field.setText("how are the deploys stored?")
    qtbot.waitUntil(lambda: not browser.model.is_loading() and browser.model.rowCount() == 10, timeout=10000)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: "partial matches" in browser.search.note.text(), timeout=10000)
    assert "no memory holds every word" in browser.search.note.text()
    assert browser.search.note.isVisible()


def test_search_across_sites_skips_a_broken_file_and_names_it(make_window, filled_db, ora_home, qtbot):
    filled_db(10)
    broken = ora_home / "sites" / "broken-site" / "empty.site.db"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"")
    window = make_window()
    browser = window.browser
    browser.search.scope.setCurrentIndex(1)
    browser.search.field.setText("deploys")
    qtbot.waitUntil(lambda: browser.everywhere.topLevelItemCount() == 4, timeout=10000)
    assert {browser.everywhere.topLevelItem(i).text(1) for i in range(4)} == {"anwe-sh/ora"}
    qtbot.waitUntil(lambda: "empty.site.db" in browser.search.note.text(), timeout=10000)
    assert "not searched" in browser.search.note.text() and broken.read_bytes() == b""


def test_a_reload_started_after_the_event_loop_is_gone_is_dropped_quietly():
    """A panel's debounce timer can fire while the window closes (no event loop any more): the
    reload is dropped, not raised into the Qt event loop as an error. (Checked in a thread that
    has no event loop, so no global state changes.)"""
    import threading

    from ora_desktop.gui.jobs.background import Latest

    async def reload() -> int:
        return 1

    outcome: list[object] = []

    def start() -> None:
        coro = reload()
        try:
            outcome.append(Latest().start(coro))
        except RuntimeError as exc:
            coro.close()
            outcome.append(exc)
        outcome.append(coro.cr_frame is None)  # closed: no "never awaited" warning either

    worker = threading.Thread(target=start)
    worker.start()
    worker.join(10)
    assert outcome == [None, True]
