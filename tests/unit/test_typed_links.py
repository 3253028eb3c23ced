"""Typed links (supports, contradicts, derived-from, see-also, free text): through the library and
the CLI, both directions listed, related_to untouched, the graph's edges carry the type, and the
review desk lists contradictions between two live memories."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import InvalidValue, NotFound, open_store
from ora_desktop.core.operations.links import add_link, contradictions, links_of, remove_link
from ora_desktop.core.operations.neighbourhood import TYPED, neighbourhood
from ora_desktop.core.operations.review import review
from tests.unit.test_cli_helpers import assert_one_line_error, cli, content_digest, file_state, sql

ROWS = [
    ("a", "Deploys go out from the main branch", "fact", 8),
    ("b", "Deploys go out from the release branch", "fact", 8),
    ("c", "The CI pipeline builds the main branch", "fact", 5),
    ("d", "Old note about deploys", "fact", 3),
]
T = ("--site", "anwe-sh", "--agent", "ora")


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    path = seed_db(ROWS)
    sql(path, "UPDATE memories SET related_to = ? WHERE id = 'c'", (json.dumps(["a"]),))
    return path


def test_add_list_and_remove_typed_links(db: Path) -> None:
    with open_store(db) as store:
        before = store.get("a")
        done = add_link(store, "a", "b", "Contradicts")
        assert done.done and done.link.type == "contradicts" and done.change.changed == {"a", "b"}
        assert not add_link(store, "a", "b", "contradicts").done  # already there
        add_link(store, "c", "a", "supports")
        add_link(store, "d", "a", "superseded in spirit")  # free text
        views = {(v.other_id, v.type, v.direction) for v in links_of(store, "a")}
        assert views == {("b", "contradicts", "out"), ("c", "supports", "in"),
                         ("d", "superseded in spirit", "in"), ("c", "related", "in")}
        assert [v.describe("b") for v in links_of(store, "b")] == ["a contradicts b"]
        assert store.get("a") == before  # related_to, updated_at, sync status: untouched
        assert remove_link(store, "a", "b", "contradicts").done
        assert not remove_link(store, "a", "b", "contradicts").done
        assert ("b", "contradicts", "out") not in {(v.other_id, v.type, v.direction) for v in links_of(store, "a")}


@pytest.mark.parametrize(("source", "target", "kind", "error"), [
    ("a", "a", "supports", InvalidValue), ("a", "ghost", "supports", NotFound),
    ("a", "b", "", InvalidValue), ("a", "b", "x" * 41, InvalidValue), ("a", "b", "two\nlines", InvalidValue),
])
def test_bad_links_change_nothing(db: Path, source: str, target: str, kind: str, error: type) -> None:
    before = content_digest(db)
    with open_store(db) as store, pytest.raises(error):
        add_link(store, source, target, kind)
    assert content_digest(db) == before


def test_graph_edges_carry_the_type(db: Path) -> None:
    with open_store(db) as store:
        add_link(store, "a", "b", "contradicts")
        add_link(store, "b", "d", "derived-from")
        graph = neighbourhood(store, "a", hops=1)
        typed = {(e.source, e.target, e.label) for e in graph.edges if e.kind == TYPED}
        assert typed == {("a", "b", "contradicts")}
        assert {n.id for n in graph.nodes} == {"a", "b", "c"}
        wider = neighbourhood(store, "a", hops=2)
        assert {(e.source, e.target, e.label) for e in wider.edges if e.kind == TYPED} == {
            ("a", "b", "contradicts"), ("b", "d", "derived-from")}


def test_review_desk_lists_contradictions_between_live_memories(db: Path) -> None:
    with open_store(db) as store:
        add_link(store, "a", "b", "contradicts")
        add_link(store, "a", "d", "contradicts")
        sql(db, "UPDATE memories SET superseded_by = 'c' WHERE id = 'd'")  # d is no longer live
        assert [(x.id, y.id) for x, y in contradictions(store)] == [("a", "b")]
        desk = {item.memory.id: item for item in review(store, "alice").items}
        assert "contradiction" in desk["a"].reasons and "contradiction" in desk["b"].reasons
        assert "a contradicts b, both live" in desk["a"].describe()
        assert "contradiction" not in desk.get("d", desk["c"]).reasons


def test_cli_link_type_and_links(capsys, db: Path) -> None:
    result = cli(capsys, "link", *T, "a", "b", "--type", "contradicts")
    assert result.code == 0 and "added: a contradicts b" in result.out, result
    data = cli(capsys, "links", *T, "a", "--json").json()
    assert {(x["other"], x["type"], x["direction"]) for x in data["links"]} == {
        ("b", "contradicts", "out"), ("c", "related", "in")}
    listed = cli(capsys, "links", *T, "b").out
    assert "a contradicts b" in listed
    assert cli(capsys, "link", *T, "a", "b", "--type", "contradicts", "--remove", "--json").json()["done"] is True
    assert sql(db, "SELECT related_to FROM memories WHERE id IN ('a', 'b')") == [(None,), (None,)]


def test_cli_bad_typed_link_is_one_line(capsys, db: Path) -> None:
    before = content_digest(db)
    assert_one_line_error(cli(capsys, "link", *T, "a", "ghost", "--type", "supports"), "ghost")
    assert_one_line_error(cli(capsys, "link", *T, "a", "b", "--type", "supports", "--one-way"), "--one-way")
    assert content_digest(db) == before


def test_links_of_a_file_without_typed_links_writes_nothing(capsys, db: Path) -> None:
    before = file_state(db)
    data = cli(capsys, "links", *T, "c", "--json").json()
    assert data["links"] == [{"other": "a", "type": "related", "direction": "out", "missing": False,
                              "content": "Deploys go out from the main branch"}]
    assert file_state(db) == before
