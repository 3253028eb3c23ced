"""The filter panel counts what the table lists: after a supersede hides a hit, and in Meaning mode."""

from __future__ import annotations

from ora_desktop.core import open_store
from ora_desktop.gui.curate.commands import SupersedeCommand

from .conftest import wait_idle
from .test_facets_follow_edits import shown_counts


def _counted(window, group):
    return sum(int(v.replace(",", "")) for v in shown_counts(window, group).values())


def test_a_supersede_that_hides_a_hit_is_counted_out_of_the_facets(make_window, seed_db, qtbot):
    seed_db([("a1", "deploy notes, the old version", "fact", 5), ("a2", "deploy notes, the new version", "fact", 5),
             ("b1", "coffee on the third floor", "task", 3)])
    window = make_window()
    browser = window.browser
    wait_idle(qtbot, window)
    browser.controller.set_text("deploy", immediate=True)
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2 and shown_counts(window, "type") == {"fact": "2"},
                    timeout=10000)
    wait_idle(qtbot, window)
    shown = {m.id: m for m in (browser.model.memory_at(r) for r in range(2))}
    window.curator.execute(SupersedeCommand(window.curator, browser.model.store.path, shown["a1"], shown["a2"]))
    qtbot.waitUntil(lambda: browser.model.rowCount() == 1, timeout=10000)  # superseded memories are hidden
    qtbot.waitUntil(lambda: shown_counts(window, "type") == {"fact": "1"}, timeout=10000)
    assert _counted(window, "importance") == 1


def test_meaning_mode_counts_the_memories_it_lists(make_window, seed_db, qtbot, monkeypatch):
    from ora_desktop.views.filters import FilterState

    # The nearest two of three, as the nearest 1,000 of 80,000: more memories than the list holds.
    real = FilterState.request
    monkeypatch.setattr(FilterState, "request", lambda self, *a, **k: real(self, *a, **k).with_(limit=2))
    path = seed_db()
    with open_store(path) as store:
        store.add_many([
            {"id": "jwt", "content": "User prefers JWT auth stored in httpOnly cookies", "type": "preference"},
            {"id": "deploy", "content": "Deploys run through git push production main", "type": "fact"},
            {"id": "coffee", "content": "The office coffee machine is on the third floor", "type": "context"},
        ])
    window = make_window()
    browser, search = window.browser, window.browser.search
    search.mode.setCurrentIndex(1)  # by meaning
    search.field.setText("espresso appliance location")  # not one of these words is in any memory
    qtbot.waitUntil(lambda: not browser.model.is_loading() and browser.model.rowCount() > 0
                    and browser.controller.answer is not None, timeout=30000)
    wait_idle(qtbot, window)
    listed = browser.model.rowCount()
    assert listed == 2
    qtbot.waitUntil(lambda: _counted(window, "type") == listed, timeout=10000)
    assert _counted(window, "sync") == listed
