"""On a 50,000-memory file, ticking a facet in the real panel lists what typing the filter lists."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from PySide6.QtCore import Qt

from ora_desktop.core.demo import write_agent
from ora_desktop.core.search import ensure_index

from .conftest import wait_idle


@pytest.mark.slow
def test_ticking_a_facet_equals_typing_its_filter_on_50000_memories(make_window, ora_home, qtbot):
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    path.parent.mkdir(parents=True)
    write_agent(path, memories=50_000, seed=5, now=datetime(2026, 1, 1, tzinfo=UTC))
    ensure_index(path)
    window = make_window()
    browser = window.browser
    controller = browser.controller
    answers = []
    controller.answered.connect(answers.append)
    counts = []
    controller.facets_ready.connect(counts.append)

    controller.set_text("deploy", immediate=True)
    qtbot.waitUntil(lambda: bool(answers) and bool(counts) and counts[-1].total > 1000, timeout=60000)
    fact_count = counts[-1].groups["type"]["fact"]
    qtbot.waitUntil(lambda: browser.facets.item_for("type", "fact") is not None
                    and browser.facets.item_for("type", "fact").text(1) == f"{fact_count:,}", timeout=30000)
    # Tick "fact" in the panel (as a click does): the engine filters before ranking and the limit.
    answers.clear()
    browser.facets.item_for("type", "fact").setCheckState(0, Qt.CheckState.Checked)
    qtbot.waitUntil(lambda: bool(answers), timeout=60000)
    wait_idle(qtbot, window)
    ticked = list(browser.model.keys)
    assert answers[-1].query == "deploy type:fact"
    assert answers[-1].total is None or answers[-1].total == fact_count
    assert len(ticked) == min(1000, fact_count)
    assert {browser.model.memory_at(r).type for r in range(20)} == {"fact"}

    # Untick, and type the same filter instead: the same rows in the same order.
    browser.facets.item_for("type", "fact").setCheckState(0, Qt.CheckState.Unchecked)
    answers.clear()
    browser.search.field.setText("deploy type:fact")
    controller.set_text("deploy type:fact", immediate=True)
    qtbot.waitUntil(lambda: bool(answers) and answers[-1].query == "deploy type:fact", timeout=60000)
    assert list(browser.model.keys) == ticked
