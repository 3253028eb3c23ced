"""The Graph tab, in the real window: it follows the table's selection, draws links and supersession to
N hops with missing ids and cycles marked, and a click selects the memory in the Memories table."""

from __future__ import annotations

import json
import sqlite3

from PySide6.QtCore import QModelIndex, Qt

from ora_desktop.gui.graph.scene import NodeItem


def linked_db(filled_db):
    path = filled_db(12)
    conn = sqlite3.connect(path)
    for memory_id, related in (("m001", ["m002", "ghost-id"]), ("m002", ["m001", "m003"]), ("m003", ["m004"])):
        conn.execute("UPDATE memories SET related_to = ? WHERE id = ?", (json.dumps(related), memory_id))
    conn.execute("UPDATE memories SET superseded_by = 'm001' WHERE id = 'm005'")
    conn.execute("UPDATE memories SET superseded_by = 'm007' WHERE id = 'm006'")
    conn.execute("UPDATE memories SET superseded_by = 'm006' WHERE id = 'm007'")
    conn.commit()
    conn.close()
    return path


def graph_tab(qtbot, window):
    """The Graph tab, once the window has settled: the table selects its first row after the rows
    load, and the tab follows the table's selection (a test driving the tab must not race it)."""
    qtbot.waitUntil(lambda: "Graph" in window.panels and window.browser.detail.memory is not None, timeout=10000)
    view = window.panels["Graph"]
    window.tabs.setCurrentWidget(view)
    return view


def test_it_draws_the_neighbourhood_with_missing_ids_marked(qtbot, make_window, filled_db) -> None:
    linked_db(filled_db)
    window = make_window()
    view = graph_tab(qtbot, window)
    view.show_id("m001")
    qtbot.waitUntil(lambda: view.graph is not None and view.graph.origin == "m001", timeout=10000)
    nodes = view.scene.nodes
    assert set(nodes) == {"m001", "m002", "ghost-id", "m005", "m003"}
    assert nodes["ghost-id"].node.dangling and nodes["ghost-id"].pen().style() == Qt.PenStyle.DashLine
    assert "missing" in view.summary.text() and "ghost-id" in view.summary.text()
    drawn = {(e.source, e.target, e.kind) for e, _item in view.scene.edges}
    assert ("m005", "m001", "superseded_by") in drawn
    assert ("m001", "m002", "related") in drawn or ("m002", "m001", "related") in drawn
    assert len([e for e, _i in view.scene.edges if {e.source, e.target} == {"m001", "m002"}]) == 1, \
        "a two-way link is one line"
    view.hops.setValue(3)
    qtbot.waitUntil(lambda: "m004" in view.scene.nodes, timeout=10000)


def test_a_supersession_cycle_is_drawn_red_and_named(qtbot, make_window, filled_db) -> None:
    linked_db(filled_db)
    window = make_window()
    view = graph_tab(qtbot, window)
    view.show_id("m006")
    qtbot.waitUntil(lambda: view.graph is not None and view.graph.origin == "m006", timeout=10000)
    assert all(edge.cycle for edge, _item in view.scene.edges) and view.scene.edges
    assert all(item.pen().color().name() == "#c0392b" for _edge, item in view.scene.edges)
    assert "supersession cycle" in view.summary.text()


def test_it_follows_the_table_and_a_click_selects_in_the_table(qtbot, make_window, filled_db) -> None:
    linked_db(filled_db)
    window = make_window()
    browser = window.browser
    browser.follow("m002")
    qtbot.waitUntil(lambda: browser.detail.memory is not None and browser.detail.memory.id == "m002", timeout=10000)
    view = graph_tab(qtbot, window)
    qtbot.waitUntil(lambda: view.graph is not None and view.graph.origin == "m002", timeout=10000)
    item: NodeItem = view.scene.nodes["m003"]
    point = view.view.mapFromScene(item.sceneBoundingRect().center())
    qtbot.mouseClick(view.view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: browser.detail.memory is not None and browser.detail.memory.id == "m003", timeout=10000)
    assert browser.table.current_memory_now().id == "m003", "selected in the main table"
    assert view.graph.origin == "m002", "a click does not re-centre the graph"
    qtbot.mouseDClick(view.view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: view.graph.origin == "m003", timeout=10000)


def test_unknown_id_is_named(qtbot, make_window, filled_db) -> None:
    filled_db(5)
    window = make_window()
    view = graph_tab(qtbot, window)
    task = view.show_id("no-such-memory")
    qtbot.waitUntil(task.done, timeout=10000)
    assert "no-such-memory" in view.summary.text() and view.graph is None


def test_a_typed_id_stays_when_the_table_selects_by_itself(qtbot, make_window, filled_db) -> None:
    """A person who types an id into the Graph tab keeps that graph when the table then picks its
    first row on its own (as it does once a big file's keys are read); a row they select in the
    table afterwards is followed again."""
    linked_db(filled_db)
    window = make_window()
    browser = window.browser
    view = graph_tab(qtbot, window)
    view.memory_id.clear()
    qtbot.keyClicks(view.memory_id, "m003")
    qtbot.keyClick(view.memory_id, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: view.graph is not None and view.graph.origin == "m003", timeout=10000)

    browser.table.clearSelection()  # nothing selected: the next load selects the first row itself
    browser.table.setCurrentIndex(QModelIndex())
    browser.detail.show_memory(None, browser.store)
    browser.model.reload(keep_rows=True)  # as File > Reload does
    qtbot.waitUntil(lambda: browser.detail.memory is not None, timeout=10000)
    assert browser.detail.memory.id != "m003", "the table did select another memory"
    assert view.memory_id.text() == "m003" and view.graph.origin == "m003"

    window.tabs.setCurrentIndex(0)  # the person selects a row in the table: the graph follows it
    browser.follow("m002")
    qtbot.waitUntil(lambda: browser.detail.memory is not None and browser.detail.memory.id == "m002", timeout=10000)
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.graph is not None and view.graph.origin == "m002", timeout=10000)


def test_typed_links_are_drawn_coloured_and_labelled(qtbot, make_window, filled_db) -> None:
    from ora_desktop.core import open_store
    from ora_desktop.core.operations.links import add_link
    from ora_desktop.gui.graph.scene import TYPE_COLOURS

    path = filled_db(6)
    with open_store(path) as store:
        add_link(store, "m001", "m002", "contradicts")
        add_link(store, "m003", "m001", "supports")
    window = make_window()
    view = graph_tab(qtbot, window)
    view.show_id("m001")
    qtbot.waitUntil(lambda: view.graph is not None and view.graph.origin == "m001", timeout=10000)
    assert set(view.scene.nodes) == {"m001", "m002", "m003"}
    drawn = {(e.source, e.target, e.label): item for e, item in view.scene.edges}
    assert drawn[("m001", "m002", "contradicts")].pen().color().name() == TYPE_COLOURS["contradicts"]
    assert drawn[("m003", "m001", "supports")].pen().color().name() == TYPE_COLOURS["supports"]
    assert view.scene.labels[("m001", "m002", "contradicts")].text() == "contradicts"
    assert "contradicts" in view.legend.text()
