"""The filter panel's Session facet: an imported conversation's session, ticked, lists that
conversation only (the facet comes from core's tag counts, as every facet does)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ora_desktop.core import open_store
from ora_desktop.core.exchange import ImportOptions
from ora_desktop.gui.search.widgets import VALUE_ROLE
from tests.unit.exchange_support import context_memory_db

from .conftest import wait_idle
from .test_facets_follow_edits import shown_counts
from .test_memories import pages_settled


def test_session_facet_lists_one_conversation(make_window, seed_db, tmp_path, qtbot) -> None:
    path = seed_db()
    with open_store(path) as store:
        store.import_from(context_memory_db(tmp_path / "context.db"), options=ImportOptions(messages=True))
        total = store.count()
    window = make_window()
    wait_idle(qtbot, window)
    facets = window.browser.facets
    qtbot.waitUntil(lambda: shown_counts(window, "tag:session") == {"sess-auth-01": "4", "sess-cors-02": "1"},
                    timeout=30000)
    group = next(facets.topLevelItem(i) for i in range(facets.topLevelItemCount())
                 if facets.topLevelItem(i).data(0, VALUE_ROLE) == "tag:session")
    assert group.text(0) == "Session" and group.isExpanded()
    facets.item_for("tag:session", "sess-auth-01").setCheckState(0, Qt.CheckState.Checked)
    model = window.browser.model
    qtbot.waitUntil(lambda: model.rowCount() == 4 and not model.is_loading(), timeout=20000)
    wait_idle(qtbot, window)
    pages_settled(model, qtbot)
    assert all("session=sess-auth-01" in model.memory_at(r).content for r in range(4))
    assert model.rowCount() < total
