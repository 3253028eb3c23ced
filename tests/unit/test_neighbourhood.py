"""A memory's neighbourhood for the graph view: links and supersession to N hops, dangling ids and
cycles marked, bounded and never looping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ora_desktop.core import NotFound, open_store
from ora_desktop.core.operations.neighbourhood import neighbourhood
from tests.unit.search_support import make_file


def row(memory_id: str, related: list[str] | None = None, superseded_by: str | None = None, **extra) -> dict:
    out = {"id": memory_id, "content": f"memory {memory_id}", **extra}
    if related is not None:
        out["related_to"] = json.dumps(related)
    if superseded_by:
        out["superseded_by"] = superseded_by
    return out


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "s" / "ora.site.db", [
        row("a", ["b", "ghost"]),           # a -> b (mutual), a -> ghost (dangling)
        row("b", ["a", "c"]),
        row("c", ["d"]),
        row("d", ["e"]),
        row("e"),
        row("old", superseded_by="a"),      # a supersedes old
        row("older", superseded_by="old"),
        row("p", ["q"]), row("q", ["r"]), row("r", ["p"]),   # a three-memory loop
        row("x", superseded_by="y"), row("y", superseded_by="x"),  # a supersession cycle
        row("lonely"),
    ])


def edges(graph) -> set[tuple[str, str, str]]:
    return {(e.source, e.target, e.kind) for e in graph.edges}


def test_one_hop_has_links_both_ways_of_supersession_and_dangling_ids(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        graph = neighbourhood(store, "a", hops=1)
    assert graph.nodes[0].id == "a" and graph.nodes[0].depth == 0
    assert {n.id: n.depth for n in graph.nodes} == {"a": 0, "b": 1, "ghost": 1, "old": 1}
    assert graph.dangling == ("ghost",)
    assert edges(graph) == {("a", "b", "related"), ("b", "a", "related"), ("a", "ghost", "related"),
                            ("old", "a", "superseded_by")}
    assert not any(e.cycle for e in graph.edges), "a mutual link is not a loop"


def test_more_hops_reach_further_and_follow_chains_back(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        two = neighbourhood(store, "a", hops=2)
        four = neighbourhood(store, "a", hops=4)
    assert {n.id for n in two.nodes} == {"a", "b", "ghost", "old", "c", "older"}
    assert ("older", "old", "superseded_by") in edges(two)
    assert {"d", "e"} <= {n.id for n in four.nodes}
    assert four.node("e").depth == 4


def test_loops_and_supersession_cycles_are_marked_and_walks_end(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        loop = neighbourhood(store, "p", hops=6)
        cycle = neighbourhood(store, "x", hops=6)
    assert {n.id for n in loop.nodes} == {"p", "q", "r"}
    assert all(e.cycle for e in loop.edges) and len(loop.edges) == 3
    assert {n.id for n in cycle.nodes} == {"x", "y"}
    assert cycle.cycles and set(cycle.cycles[0]) == {"x", "y"}
    assert {(e.source, e.target) for e in cycle.edges if e.cycle} == {("x", "y"), ("y", "x")}


def test_unknown_memory_is_named_and_a_lonely_one_stands_alone(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        with pytest.raises(NotFound, match="nope"):
            neighbourhood(store, "nope")
        graph = neighbourhood(store, "lonely", hops=3)
    assert [n.id for n in graph.nodes] == ["lonely"] and graph.edges == ()


def test_malformed_related_to_is_reported_and_the_walk_is_bounded(ora_home: Path) -> None:
    hub = row("hub", [f"s{i}" for i in range(50)])
    db = make_file(ora_home / "hub.site.db", [hub, *[row(f"s{i}") for i in range(50)],
                                              {"id": "bad", "content": "broken", "related_to": "[oops"}])
    with open_store(db, readonly=True) as store:
        graph = neighbourhood(store, "hub", hops=2, max_nodes=20)
        bad = neighbourhood(store, "bad")
    assert len(graph.nodes) == 20 and graph.truncated
    assert bad.malformed == ("bad",) and bad.edges == ()


def test_links_pointing_in_are_edges_and_two_way_links_never_make_a_loop(ora_home: Path) -> None:
    """hub lists b and c, both list it back (two-way): no loop. fan lists hub, hub does not list
    fan: an edge pointing in. broken's related_to is not JSON: it never breaks the scan."""
    path = make_file(ora_home / "sites" / "s" / "ora.site.db", [
        row("hub", ["b", "c"]), row("b", ["hub", "c"]), row("c", ["hub", "b"]),
        row("fan", ["hub"]), row("broken", related_to='["hub", oops'),
    ])
    with open_store(path, readonly=True) as store:
        graph = neighbourhood(store, "hub", hops=1)
    assert {n.id for n in graph.nodes} == {"hub", "b", "c", "fan"}
    assert ("fan", "hub", "related") in edges(graph)
    assert not any(e.cycle for e in graph.edges), "two-way links are not a loop"
