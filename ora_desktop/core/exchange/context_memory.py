"""The context-memory store (seed ``004_…``, ``~/.claude/context-memory/context.db``).

Mapping (one memory each, ids derived from the session's own unique ``session_id``):

* a session's **summary** -> ``conversation``, importance 6 (7 when the user left a note with
  ``/remember``): the brief as the first line, then the detailed text, key decisions and problems
  solved as lists, technologies, outcome, the note and the project path;
* a **code snippet** -> ``context``, importance 5: its description, ``File: path`` and the code in
  a fence carrying its language (so search sees ``language`` and ``file`` tags); related to the
  session's summary;
* the session's **topics** -> a ``Tags:`` line on each of those memories (``topic`` tags), with
  the session's ``session_id`` and ``project_path`` as ``session=`` and ``project=`` tags;
* **key messages** (only with ``messages=True``) -> ``conversation``, importance 4, ``role: text``.

Times are the rows' own ``created_at`` (sessions' ``updated_at`` for a summary's update time).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from .rows import Incoming, derived_id
from .sources import ImportOptions, join_blocks, json_list, memory, sql_time, tags_line

KIND = "context-memory"


def detect(tables: dict[str, set[str]]) -> bool:
    """sessions, summaries, topics and code_snippets with their key columns."""
    return ({"session_id", "project_path"} <= tables.get("sessions", set())
            and {"brief", "session_id"} <= tables.get("summaries", set())
            and "topic" in tables.get("topics", set())
            and "code" in tables.get("code_snippets", set()))


def count(conn: sqlite3.Connection, options: ImportOptions) -> int:
    """How many memories the file will give (for progress)."""
    total = conn.execute("SELECT (SELECT count(*) FROM summaries) + (SELECT count(*) FROM code_snippets)").fetchone()[0]
    if options.messages:
        total += conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    return total


def read(conn: sqlite3.Connection, options: ImportOptions) -> Iterator[Incoming]:
    """Memories from a context-memory database."""
    topics: dict[int, list[str]] = {}
    for session, topic in conn.execute("SELECT session_id, topic FROM topics ORDER BY id"):
        topics.setdefault(session, []).append(topic)
    sessions = {row[0]: row[1:] for row in conn.execute(
        "SELECT id, session_id, project_path, created_at, updated_at FROM sessions")}
    summary_of: dict[int, str] = {}
    for (row_id, session, brief, detailed, decisions, solved, technologies, outcome, note,
         created) in conn.execute(
            "SELECT id, session_id, brief, detailed, key_decisions, problems_solved, technologies, outcome, "
            "user_note, created_at FROM summaries ORDER BY id"):
        where = f"summaries row {row_id}"
        key, project, _, session_updated = sessions.get(session, (f"row-{session}", None, None, None))
        id_ = summary_of[session] = derived_id("cm-summary", key)
        created_at = sql_time(created)
        updated = sql_time(session_updated) if session_updated else created_at
        if not (isinstance(updated, str) and isinstance(created_at, str) and updated > created_at):
            updated = created_at
        content = join_blocks(
            brief, detailed, _bullets("Key decisions", decisions), _bullets("Problems solved", solved),
            _inline("Technologies", technologies), f"Outcome: {outcome}" if outcome else None,
            f"Note: {note}" if note else None, f"Project: {project}" if project else None,
            tags_line(_tags(sessions, topics, session)),
        )
        values = memory(id_, content, "conversation", 7 if note else 6, created_at, updated, options)
        yield Incoming(values, where)
    for row_id, session, language, code, description, file_path, created in conn.execute(
            "SELECT id, session_id, language, code, description, file_path, created_at FROM code_snippets "
            "ORDER BY id"):
        where = f"code_snippets row {row_id}"
        key = sessions.get(session, (f"row-{session}",))[0]
        fence = f"```{(language or '').strip()}\n{code}\n```"
        content = join_blocks(description or f"Code snippet ({language or 'text'})",
                              f"File: {file_path}" if file_path else None, fence,
                              tags_line(_tags(sessions, topics, session)))
        created_at = sql_time(created)
        related = [summary_of[session]] if session in summary_of else None
        yield Incoming(memory(derived_id("cm-snippet", key, row_id), content, "context", 5, created_at, None,
                              options, related), where)
    if options.messages:
        for row_id, session, role, text, sequence, created in conn.execute(
                "SELECT id, session_id, role, content, sequence, created_at FROM messages ORDER BY session_id, "
                "sequence, id"):
            where = f"messages row {row_id}"
            key = sessions.get(session, (f"row-{session}",))[0]
            content = join_blocks(f"{role}: {text}", tags_line(_tags(sessions, topics, session)))
            related = [summary_of[session]] if session in summary_of else None
            yield Incoming(memory(derived_id("cm-message", key, sequence, row_id), content, "conversation", 4,
                                  sql_time(created), None, options, related), where)


def _tags(sessions: dict, topics: dict[int, list[str]], session: int) -> list[tuple[str, str]]:
    """The session's topics, then its ``session_id`` and project path as tags."""
    key, project = sessions.get(session, (None, None))[:2]
    return ([("topic", t) for t in topics.get(session, ())]
            + [(kind, value) for kind, value in (("session", key), ("project", project)) if value])


def _bullets(title: str, text: str | None) -> str | None:
    items = json_list(text)
    return f"{title}:\n" + "\n".join(f"- {item}" for item in items) if items else None


def _inline(title: str, text: str | None) -> str | None:
    items = json_list(text)
    return f"{title}: {', '.join(items)}" if items else None
