"""The MCP server's resource notices keep their own place in the file's history: another reader
of the store's change state cannot take another program's commit from them."""

from __future__ import annotations

import sqlite3
import weakref
from collections.abc import Callable
from pathlib import Path

import anyio

from ora_desktop.core import open_store
from ora_desktop.mcp.agents import Agents, base_uri
from ora_desktop.mcp.notices import Notices


class Session:
    """What the notices send to: a subscribed client's session."""

    def __init__(self) -> None:
        self.updated: list[str] = []

    async def send_resource_updated(self, uri: str) -> None:
        self.updated.append(uri)


def outside_write(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()


def test_another_programs_write_reaches_subscribers_whoever_else_asked_first(seed_db: Callable[..., Path]) -> None:
    path = seed_db([("m1", "first", "fact", 5), ("m2", "second", "fact", 5)])
    with open_store(path) as store:
        agents = Agents.one(store)
        notices = Notices()
        notices.agents = agents
        agents.on_open(notices.follow)
        first, second = Session(), Session()
        uri = f"{base_uri(path)}/memory/m1"
        notices.subscribers[uri] = weakref.WeakKeyDictionary({first: first, second: second})
        notices.remember_rows([uri])

        outside_write(path, "UPDATE memories SET content = 'changed outside' WHERE id = 'm1'")
        assert store.changed_externally()  # another reader of the store's change state looks first
        store.external_change()
        anyio.run(notices.look)
        important = f"{base_uri(path)}/important"
        assert first.updated == second.updated == [uri]  # no one subscribed to important

        anyio.run(notices.look)  # nothing new: told once
        outside_write(path, "UPDATE memories SET content = 'm2 changed' WHERE id = 'm2'")
        notices.subscribers[important] = weakref.WeakKeyDictionary({first: first})
        anyio.run(notices.look)
        assert first.updated == [uri, important] and second.updated == [uri]  # m1 did not change again
