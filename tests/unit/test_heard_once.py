"""Every commit of ours is heard once, as the Change its operation returns: the ids, the kind
and who asked (the store's listeners are the window, the MCP server's notices, the feed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import Change, ChangeKind, Initiator, open_store
from ora_desktop.core.operations import agent_memory, edits

ROWS = [
    ("m-deploy", "The site deploys from main through the release pipeline", "fact", 8),
    ("m-tabs", "The user prefers tabs", "preference", 6),
]


@pytest.fixture
def store(seed_db: Callable[..., Path]):  # noqa: ANN201
    with open_store(seed_db(ROWS)) as opened:
        yield opened


def listen(store) -> list[Change]:  # noqa: ANN001
    heard: list[Change] = []
    store.subscribe(heard.append)
    return heard


def test_a_persons_edit_is_heard_once_as_theirs(store):
    heard = listen(store)
    done = edits.edit(store, "m-tabs", {"importance": 9})
    assert heard == [done.change.but(columns=heard[0].columns)]
    assert heard[0].changed == {"m-tabs"} and heard[0].initiator is Initiator.USER
    assert heard[0].columns is not None and "importance" in heard[0].columns  # only that column repaints


def test_an_agents_remember_over_mcp_is_heard_once_as_the_agents(store):
    heard = listen(store)
    done = agent_memory.remember(store, "The build runs on every push", actor="mcp:test")
    assert heard == [done.change]
    assert heard[0].added == {done.memory.id} and heard[0].initiator is Initiator.EXTERNAL
    assert heard[0].kind is ChangeKind.ADDED


def test_an_agents_delete_is_heard_once_as_the_agents(store):
    heard = listen(store)
    done = edits.delete(store, ["m-deploy"], initiator=Initiator.EXTERNAL)
    assert len(heard) == 1
    assert heard[0].removed == {"m-deploy"} and heard[0].initiator is Initiator.EXTERNAL
    assert heard[0].kind is ChangeKind.DELETED and done.change.removed == {"m-deploy"}
