"""The neighbouring stores, built with their seeds' own DDL, imported: counts, text, times, tags,
links, idempotency, and the source left untouched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ora_desktop.core import create_database, open_store, tag_facets
from ora_desktop.core.exchange import ImportOptions
from ora_desktop.core.rawsql import all_rows
from ora_desktop.core.search import search
from tests.unit.exchange_support import chatlog_db, context_memory_db, semantica_dump, zoo_db
from tests.unit.test_cli_helpers import file_state


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "agent.site.db"
    create_database(path)
    return path


def _by_id(path: Path) -> dict:
    with open_store(path, readonly=True) as store:
        return {m.id: m for m in store.list(limit=None, superseded="show")}


def _import_twice(target: Path, source: Path, **kw):
    before = file_state(source)
    with open_store(target) as store:
        first = store.import_from(source, **kw)
        second = store.import_from(source, **kw)
    assert file_state(source) == before  # the source file (and its folder) never change
    assert second.added == 0 and second.kept == first.added  # idempotent
    return first


def test_context_memory_summaries_snippets_and_topics(tmp_path: Path, target: Path) -> None:
    source = context_memory_db(tmp_path / "context.db")
    result = _import_twice(target, source)
    assert result.format == "context-memory"
    assert result.by_type == {"context": 1, "conversation": 2}
    memories = _by_id(target)
    summary = next(m for m in memories.values() if m.title == "Added JWT authentication to the shop API")
    assert summary.type == "conversation" and summary.importance == 7  # the user's /remember note
    assert summary.created_at.strftime("%Y-%m-%d %H:%M:%S") == "2025-01-14 11:40:00"
    for text in ("Refresh tokens rotate on use.", "- Store tokens in httpOnly cookies",
                 "- Resolved token refresh race condition", "Technologies: Node.js, Express, JWT, Redis",
                 "Outcome: success", "Note: remember the 15-minute expiry", "Project: /home/ana/src/shop"):
        assert text in summary.content
    assert summary.sync_status == "pending"
    snippet = next(m for m in memories.values() if m.type == "context")
    assert "jwt.sign({sub: u.id}, SECRET)" in snippet.content and snippet.related_to == (summary.id,)
    # Topics and the snippet's language and file are tags search and facets see.
    facets = tag_facets(target)
    assert facets["topic"] == {"authentication": 2, "jwt": 2, "cors": 1}
    assert facets["language"] == {"typescript": 1} and facets["file"]["src/auth/token.ts"] == 1
    assert {h.id for h in search(target, "tag:topic=cors").hits} == {
        m.id for m in memories.values() if "CORS preflight" in m.content}


def test_context_memory_key_messages_on_request_and_local_only(tmp_path: Path, target: Path) -> None:
    source = context_memory_db(tmp_path / "context.db")
    result = _import_twice(target, source, options=ImportOptions(messages=True, sync_status="local_only"))
    assert result.by_type == {"context": 1, "conversation": 4}
    messages = [m for m in _by_id(target).values() if m.content.startswith(("user:", "assistant:"))]
    assert sorted(m.title for m in messages) == ["assistant: Two tabs refresh at once; rotate with a grace window.",
                                                 "user: Why do refresh tokens race?"]
    assert {m.sync_status for m in _by_id(target).values()} == {"local_only"}


def test_zoo_archived_messages_become_conversations_with_time_and_role(tmp_path: Path, target: Path) -> None:
    source = zoo_db(tmp_path / "memory.sqlite")
    result = _import_twice(target, source)
    assert result.format == "zoo" and result.added == 3
    memories = sorted(_by_id(target).values(), key=lambda m: m.created_at)
    assert [m.title for m in memories] == ["user: What port does the staging server listen on?",
                                           "assistant: Staging listens on 8443 behind the load balancer.",
                                           "user: And production? 🚀"]
    assert {m.type for m in memories} == {"conversation"}
    # Integer epoch seconds become SQLite's own format, in UTC.
    with open_store(target, readonly=True) as store:
        raw = all_rows(store, "SELECT created_at FROM memories ORDER BY created_at")
    assert [r[0] for r in raw] == ["2025-01-14 10:30:00", "2025-01-14 10:31:00", "2025-01-14 10:32:00"]
    assert tag_facets(target)["topic"] == {"history_archive": 3}


def test_a_moved_zoo_file_keeps_its_identity(tmp_path: Path, target: Path) -> None:
    source = zoo_db(tmp_path / "memory.sqlite")
    moved = tmp_path / "elsewhere" / "renamed.bin"
    moved.parent.mkdir()
    shutil.copyfile(source, moved)
    with open_store(target) as store:
        assert store.import_from(source).added == 3
        assert store.import_from(moved).added == 0  # detected by content, same rows, same ids


def test_chatlog_messages_tags_summaries_and_duplicates(tmp_path: Path, target: Path) -> None:
    source = chatlog_db(tmp_path / "chat.db")
    result = _import_twice(target, source)
    assert result.format == "chatlog"
    assert (result.added, result.collapsed) == (3, 1)  # the repeated content_hash collapsed into one
    memories = _by_id(target)
    first = next(m for m in memories.values() if m.title.startswith("user: npm install fails"))
    assert first.created_at.strftime("%Y-%m-%d %H:%M:%S") == "2025-03-01 09:00:00"
    summary = next(m for m in memories.values() if m.title.startswith("Install failed"))
    assert summary.importance == 6 and len(summary.related_to) == 2 and first.id in summary.related_to
    facets = tag_facets(target)
    assert facets["topic"] == {"build": 1}
    assert facets["error"]["ENOENT"] == 1 and facets["command"]["npm install"] >= 1


def test_semantica_items_nodes_and_edges_as_links(tmp_path: Path, target: Path) -> None:
    source = semantica_dump(tmp_path / "dump.json")
    result = _import_twice(target, source)
    assert result.format == "semantica" and result.by_type == {"context": 2, "fact": 3}
    memories = _by_id(target)
    nodes = {m.content.split("Node: ")[1].split(" ")[0]: m for m in memories.values() if "Node: " in m.content}
    assert set(nodes) == {"python", "ada", "coding"}
    assert set(nodes["coding"].related_to) == {nodes["python"].id, nodes["ada"].id}  # edges, both ways
    assert nodes["python"].related_to == (nodes["coding"].id,)
    item = next(m for m in memories.values() if m.title.startswith("The user prefers Python"))
    assert item.related_to == (nodes["python"].id,)  # its entity names a node
    assert item.created_at.strftime("%Y-%m-%d %H:%M:%S") == "2025-04-01 08:00:00"
    assert tag_facets(target)["topic"] == {"preferences": 1, "chat": 1}
