"""Search by meaning in the window: the search bar's mode switch, and the Duplicates panel
(find, compare side by side, merge as one undo step)."""

from __future__ import annotations

from ora_desktop.core import open_store

from .conftest import wait_idle

ROWS = [
    {"id": "jwt", "content": "User prefers JWT auth stored in httpOnly cookies", "type": "preference", "importance": 8},
    {"id": "jwt2", "content": "User prefers JWT authentication kept in httpOnly cookies", "importance": 5},
    {"id": "deploy", "content": "Deploys run through git push production main", "importance": 6},
    {"id": "coffee", "content": "The office coffee machine is on the third floor", "importance": 2},
]


def _file(seed_db):
    path = seed_db()
    with open_store(path) as store:
        store.add_many(ROWS)
    return path


def _shown_ids(window):
    """Ids of the rows shown (None for a row whose record is still being fetched)."""
    model = window.browser.model
    return [getattr(model.memory_at(r), "id", None) for r in range(model.rowCount())]


def test_mode_switch_finds_paraphrases(make_window, seed_db, qtbot):
    _file(seed_db)
    window = make_window()
    search = window.browser.search
    assert [search.mode.itemData(i) for i in range(search.mode.count())] == ["lexical", "semantic", "hybrid"]
    search.field.setText("where do deploys go?")
    # by words no memory holds every word: only partial (any-word) matches, and the note says so
    qtbot.waitUntil(lambda: not window.browser.model.is_loading() and "partial" in search.note.text(),
                    timeout=10000)
    search.mode.setCurrentIndex(2)  # words + meaning
    qtbot.waitUntil(lambda: not window.browser.model.is_loading() and _shown_ids(window)[:1] == ["deploy"],
                    timeout=30000)
    search.mode.setCurrentIndex(1)  # meaning, with a filter
    search.field.setText("auth token type:fact")
    qtbot.waitUntil(lambda: not window.browser.model.is_loading() and _shown_ids(window) == ["jwt2"], timeout=30000)
    wait_idle(qtbot, window)


def test_duplicates_view_merges_in_one_undo_step(make_window, seed_db, qtbot):
    path = _file(seed_db)
    with open_store(path) as store:
        store.add("the office COFFEE machine is on the third  floor", importance=1, id="coffee2")
    window = make_window()
    qtbot.waitUntil(lambda: "Duplicates" in window.panels, timeout=15000)
    view = window.panels["Duplicates"]
    window.tabs.setCurrentWidget(view)
    view.find_button.click()
    qtbot.waitUntil(lambda: view.group_list.count() == 2, timeout=30000)
    labels = [view.group_list.item(i).text() for i in range(2)]
    assert labels[0].startswith("near") and labels[1].startswith("exact")  # most important group first
    assert [c.memory.id for c in view.cards] == ["jwt", "jwt2"]  # side by side, the keeper first
    assert view.cards[0].keep.isChecked() and view.merged.toPlainText() == ROWS[0]["content"]
    view.cards[1].keep.setChecked(True)
    assert view.merged.toPlainText() == ROWS[1]["content"]
    view.merged.setPlainText("User prefers JWT auth in httpOnly cookies")
    assert view.merge_button.text() == "Merge 2 memories…"
    view.merge_button.click()  # asks first, naming every memory it changes
    qtbot.waitUntil(lambda: view.confirm is not None and view.confirm.isVisible(), timeout=5000)
    listed = [view.confirm.items.item(i).text() for i in range(view.confirm.items.count())]
    assert listed[0].startswith("keep   jwt2") and listed[1].startswith("supersede   jwt") and len(listed) == 2
    with open_store(path, readonly=True) as store:
        assert store.get("jwt").superseded_by is None  # nothing merged before the confirmation
    view.confirm.confirm.click()
    qtbot.waitUntil(lambda: view.group_list.count() == 1, timeout=15000)
    with open_store(path, readonly=True) as store:
        kept, other = store.get("jwt2"), store.get("jwt")
        assert kept.content == "User prefers JWT auth in httpOnly cookies" and kept.importance == 8
        assert other.superseded_by == "jwt2"
    undo = window.curator.undo_action
    qtbot.waitUntil(lambda: undo.text() == "&Undo merge 2 memories into jwt2", timeout=10000)
    undo.trigger()  # one Ctrl+Z restores both

    def restored() -> bool:
        with open_store(path, readonly=True) as store:
            return store.get("jwt").superseded_by is None and store.get("jwt2").content == ROWS[1]["content"]
    qtbot.waitUntil(restored, timeout=15000)
    with open_store(path, readonly=True) as store:
        assert store.get("jwt2").importance == 5
    qtbot.waitUntil(lambda: view.group_list.count() == 2, timeout=30000)  # the group is back in the panel
