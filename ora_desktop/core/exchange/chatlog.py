"""The chat-log research schema (seed ``001_…``): messages, tags, summaries, embeddings.

* each **message** -> a ``conversation`` memory, importance 4, content ``role: text``, its ``tags``
  rows as a ``Tags:`` line (``topic`` values bare, other kinds as ``kind=value``), with the
  message's ``session_id`` and ``model`` as ``session=`` and ``model=`` tags; messages with
  the same ``content_hash`` (SHA-256 of the text when the column is absent or empty) collapse
  into one memory, the first;
* each **summary** -> a ``conversation`` memory, importance 6, the summary text and the message
  range it covers, related to the (first 50) messages of that range, with their sessions as tags;
* **embeddings** are not imported (they belong to another model; Ora's search indexes the text).

``timestamp`` (ISO 8601) and ``created_at`` become SQLite's UTC format.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator

from .rows import Incoming, derived_id
from .sources import ImportOptions, join_blocks, memory, sql_time, tags_line

KIND = "chatlog"
MAX_LINKS = 50


def detect(tables: dict[str, set[str]]) -> bool:
    """``messages`` (timestamp, role, content) with a ``tags`` or ``summaries`` table of this schema."""
    return ({"timestamp", "role", "content"} <= tables.get("messages", set())
            and ({"message_id", "tag_type", "tag_value"} <= tables.get("tags", set())
                 or "summary_text" in tables.get("summaries", set())))


def count(conn: sqlite3.Connection, options: ImportOptions) -> int:
    """How many memories the file will give (before duplicates collapse)."""
    total = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    if _has(conn, "summaries"):
        total += conn.execute("SELECT count(*) FROM summaries").fetchone()[0]
    return total


def read(conn: sqlite3.Connection, options: ImportOptions) -> Iterator[Incoming]:
    """Memories from a chat-log database."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
    tags: dict[int, list[tuple[str, str]]] = {}
    if _has(conn, "tags"):
        for message, kind, value in conn.execute("SELECT message_id, tag_type, tag_value FROM tags ORDER BY id"):
            tags.setdefault(message, []).append((kind, value))
    optional = ", ".join(c if c in columns else "NULL" for c in ("content_hash", "session_id", "model"))
    memory_of: dict[int, str] = {}
    session_of: dict[int, str] = {}
    identity = ""
    for row_id, stamp, role, text, digest, session, model in conn.execute(
            f"SELECT id, timestamp, role, content, {optional} FROM messages ORDER BY id"):
        where = f"messages row {row_id}"
        identity = identity or f"{stamp}|{text}"
        digest = digest or hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()
        id_ = memory_of[row_id] = derived_id("chatlog-msg", digest)
        if session:
            session_of[row_id] = session
        kept = [("session", session), ("model", model)]
        content = join_blocks(f"{role}: {text}", tags_line([*tags.get(row_id, ()), *((k, v) for k, v in kept if v)]))
        yield Incoming(memory(id_, content, "conversation", 4, sql_time(stamp), None, options),
                       where, may_repeat=True)
    if not _has(conn, "summaries"):
        return
    for row_id, start, end, text, created in conn.execute(
            "SELECT id, start_message_id, end_message_id, summary_text, created_at FROM summaries ORDER BY id"):
        where = f"summaries row {row_id}"
        covered = [memory_of[m] for m in range(int(start or 0), int(end or 0) + 1) if m in memory_of]
        related = list(dict.fromkeys(covered))[:MAX_LINKS]
        sessions = dict.fromkeys(session_of[m] for m in range(int(start or 0), int(end or 0) + 1) if m in session_of)
        content = join_blocks(text, f"Summary of messages {start} to {end}.",
                              tags_line(("session", s) for s in sessions))
        yield Incoming(memory(derived_id("chatlog-sum", identity, row_id), content, "conversation", 6,
                              sql_time(created), None, options, related), where)


def _has(conn: sqlite3.Connection, table: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone() is not None
