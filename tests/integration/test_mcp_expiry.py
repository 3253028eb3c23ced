"""MCP ``remember``'s ``expires_at`` goes through core validation: a bare number is refused with a
hint and nothing is stored; a span from now is read as one."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import anyio

from ora_desktop.core import open_store, timestamps

from .mcp_support import call, mcp_session, refused


def rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        found = conn.execute("SELECT * FROM memories ORDER BY id").fetchall()
    conn.close()
    return found


def test_remember_refuses_bad_expiry_values_and_reads_a_span(seed_db: Callable[..., Path]) -> None:
    agent_file = seed_db([("m-deploy", "The site deploys from main", "fact", 8)])
    before = rows(agent_file)
    stored: dict[str, str] = {}

    async def scenario() -> None:
        async with mcp_session("--db", agent_file) as session:
            for value, words in (("7", "'7' is a bare number"), ("1e10", "'1e10' is a bare number"),
                                 ("1969-07-20", "out of range"), ("2300-01-01", "out of range")):
                message = await refused(session, "remember", {"content": "x", "expires_at": value})
                assert "expires_at" in message and words in message, message
                assert "7d" in message or words == "out of range"  # the hint says what to type
            assert rows(agent_file) == before
            done = await call(session, "remember", content="the freeze ends in a week", expires_at="7d")
            stored["id"] = done.structured_content["memory"]["id"]

    anyio.run(scenario)
    with open_store(agent_file, readonly=True) as store:
        expires = store.get(stored["id"]).expires_at
    assert expires is not None and abs(expires - (timestamps.now() + timedelta(days=7))) < timedelta(minutes=5)
