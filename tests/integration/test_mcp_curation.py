"""Issue 29's curator features as an agent meets them over MCP: pins through ``update``, typed
links through ``link`` and ``links``, a memory's ``history`` (who changed it, when, what), a
``search`` as of a past time, and the pinned state in every answer. A real ``ora-desktop mcp``
process driven by the SDK's client."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from .mcp_support import call, file_digest, mcp_session, refused, text_of

pytestmark = pytest.mark.slow  # starts real processes

#: What ``tools/list`` may weigh (bytes of JSON), and its output schemas: a client reads (and
#: validates against) all of it on every connection.
TOOLS_LIST_BYTES = 26_000
OUTPUT_SCHEMA_BYTES = 5_000


@pytest.fixture
def agent_file(seed_db: Callable[..., Path]) -> Path:
    return seed_db([
        ("m-deploy", "The site deploys from the main branch through GitHub Actions", "fact", 8),
        ("m-tabs", "The user prefers tabs over spaces in Python", "preference", 6),
        ("m-ci", "CI runs on every push to main", "fact", 5),
    ])


def test_pins_typed_links_history_and_as_of_over_mcp(agent_file: Path) -> None:
    async def scenario() -> None:
        async with mcp_session("--db", agent_file, client="claude-code") as session:
            # Pin through update: visible in get, list and context; unpin takes it back.
            pinned = (await call(session, "update", id="m-ci", pin=True)).structured_content["memory"]
            assert pinned["pinned"] is True
            got = await call(session, "get", id="m-ci")
            assert got.structured_content["memory"]["pinned"] is True and ", pinned:" in text_of(got)
            listed = {m["id"]: m["pinned"] for m in (await call(session, "list")).structured_content["memories"]}
            assert listed == {"m-deploy": False, "m-tabs": False, "m-ci": True}
            context = await call(session, "context", query="tabs")
            sections = {s["name"]: s["ids"] for s in context.structured_content["sections"]}
            assert sections["pinned"] == ["m-ci"] and "## Pinned memories" in text_of(context)
            await call(session, "update", id="m-ci", pin=False)
            assert (await call(session, "get", id="m-ci")).structured_content["memory"]["pinned"] is False

            # Typed links: out of one memory, into the other; removed again.
            await call(session, "link", id="m-ci", other_id="m-deploy", type="Supports")
            out = (await call(session, "links", id="m-ci")).structured_content["links"]
            assert [(x["other_id"], x["type"], x["direction"]) for x in out] == [("m-deploy", "supports", "out")]
            into = await call(session, "links", id="m-deploy")
            assert [(x["other_id"], x["direction"]) for x in into.structured_content["links"]] == [("m-ci", "in")]
            assert "[m-ci] supports [m-deploy]" in text_of(into)
            await call(session, "link", id="m-ci", other_id="m-deploy", type="supports", remove=True)
            assert (await call(session, "links", id="m-ci")).structured_content["links"] == []

            # History: who changed the memory, when, and what (before -> after).
            await call(session, "update", id="m-tabs", importance=9)
            steps = (await call(session, "history", id="m-tabs")).structured_content["steps"]
            assert steps[0]["by"] == "mcp:claude-code" and steps[0]["at"]
            assert steps[0]["changes"]["importance"] == {"before": 6, "after": 9}

            # Search as of a past time: a memory remembered since is not there, and the notes say so.
            await call(session, "remember", content="The quokka deploy bot posts to the ops channel")
            assert (await call(session, "search", query="quokka")).structured_content["count"] == 1
            then = await call(session, "search", query="quokka", as_of="2001-01-01")
            assert then.structured_content["count"] == 0
            assert any(n.startswith("as of 2001-01-01 23:59:59 UTC") for n in then.structured_content["notes"])

    anyio.run(scenario)


def test_curation_arguments_are_refused_in_one_sentence_and_change_nothing(agent_file: Path) -> None:
    async def scenario() -> None:
        async with mcp_session("--db", agent_file) as session:
            before = file_digest(agent_file)
            assert (await refused(session, "search", {"query": "x", "as_of": "soonish"})
                    ) == "as_of: 'soonish' is not a date or time (2026-11-01, 2026-11-01T09:30)"
            assert "leave out mode 'semantic'" in await refused(
                session, "search", {"query": "x", "as_of": "2001-01-01", "mode": "semantic"})
            assert "one_way" in await refused(
                session, "link", {"id": "m-ci", "other_id": "m-tabs", "type": "supports", "one_way": True})
            assert (await refused(session, "link", {"id": "m-ci", "other_id": "m-tabs", "type": "a\nb"})
                    ).startswith("type: 'a\\nb': give a link type")
            assert await refused(
                session, "update", {"id": "m-ci", "pin": "yes"}) == "update: pin should be a valid boolean (got 'yes')."
            assert "no memory with id 'm-nope'" in await refused(session, "update", {"id": "m-nope", "pin": True})
            assert "no memory with id 'm-nope'" in await refused(session, "history", {"id": "m-nope"})
            assert file_digest(agent_file) == before

        async with mcp_session("--db", agent_file, "--read-only") as session:
            tools = {t.name for t in (await session.list_tools()).tools}
            assert {"links", "history"} <= tools and "update" not in tools
            assert "read-only" in await refused(session, "update", {"id": "m-ci", "pin": True})

    anyio.run(scenario)


def test_tools_list_stays_small(agent_file: Path) -> None:
    async def scenario() -> tuple[int, int]:
        async with mcp_session("--db", agent_file) as session:
            tools = (await session.list_tools()).tools
            listing = [t.model_dump(by_alias=True, exclude_none=True) for t in tools]
            return len(json.dumps(listing)), sum(len(json.dumps(t.get("outputSchema", {}))) for t in listing)

    size, schemas = anyio.run(scenario)
    assert size <= TOOLS_LIST_BYTES and schemas <= OUTPUT_SCHEMA_BYTES, (size, schemas)


def test_undelete_says_when_a_stopped_undo_was_taken_back_first(seed_db: Callable[..., Path]) -> None:
    """An undo of 300 memories whose process was killed part-way: an agent's next ``undelete``
    takes it back first, and its answer says so, in its text and in ``note``."""
    from ora_desktop.core import open_store
    from ora_desktop.core.operations import chunked_undo, edits

    from .stopped_step import leave_stopped_undo

    db = seed_db([(f"m{i:03d}", f"memory {i}", "fact", 5) for i in range(301)])
    with open_store(db) as store:
        edits.delete(store, ["m300"])
        edits.delete(store, [f"m{i:03d}" for i in range(300)])
    leave_stopped_undo(db, 300)

    async def scenario() -> None:
        async with mcp_session("--db", db) as session:
            done = await call(session, "undelete", ids=["m300"])
            note = done.structured_content["note"]
            assert "“undo delete 300 memories” had stopped part-way (its process ended)" in note
            assert text_of(done).startswith(f"Note: {note}\nRestored [m300]")
            assert [m["id"] for m in done.structured_content["memories"]] == ["m300"]
            again = await call(session, "forget", ids=["m300"])
            assert (await call(session, "undelete", ids=["m300"])).structured_content["note"] is None
            assert again.structured_content["removed"] == ["m300"]

    anyio.run(scenario)
    with open_store(db) as store:
        assert chunked_undo.stopped(store) is None and store.count() == 1  # the 300 back in the trash
