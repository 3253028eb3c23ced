"""Neighbouring memory stores built with their seed documents' own DDL and realistic rows.

The DDL below is copied from ``seeds/000_…`` (zoo ContextDatabase), ``seeds/001_…`` (the chat-log
research schema, its recommended "Core message storage") and ``seeds/004_…`` (context-memory);
``seeds/002_…`` (semantica) is a JSON dump of MemoryItems and graph node/edge dictionaries.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from ora_desktop.core.schema import INIT_SQL

ZOO_DDL = """
-- Main message storage
CREATE TABLE memory_messages(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    source TEXT,
    created_at INTEGER NOT NULL
);

-- Full-text search index (if FTS5 is available)
CREATE VIRTUAL TABLE memory_fts USING fts5(
    message_id UNINDEXED,
    content
);
"""

CHATLOG_DDL = """
-- Core message storage
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,           -- Groups related messages
    timestamp TEXT NOT NULL,            -- ISO 8601 format
    role TEXT NOT NULL,                 -- 'user', 'assistant', 'system'
    content TEXT NOT NULL,              -- Full message content
    content_hash TEXT,                  -- SHA-256 for deduplication

    -- AI-specific metadata
    model TEXT,                         -- Model that generated response
    tokens_input INTEGER,
    tokens_output INTEGER,
    latency_ms INTEGER,

    -- Flexible metadata
    metadata JSON                       -- Extensible JSON blob
);

-- Full-text search index
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content,
    content='messages',
    content_rowid='id',
    tokenize='porter unicode61'         -- Stemming + unicode support
);

-- Structured tags for fast filtering
CREATE TABLE tags (
    id INTEGER PRIMARY KEY,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    tag_type TEXT NOT NULL,
    tag_value TEXT NOT NULL,
    created_at TEXT DEFAULT (datetime('now'))
);
CREATE INDEX idx_tags_type_value ON tags(tag_type, tag_value);
CREATE INDEX idx_tags_message ON tags(message_id);

-- Summaries of conversation segments (for context compression)
CREATE TABLE summaries (
    id INTEGER PRIMARY KEY,
    start_message_id INTEGER NOT NULL,
    end_message_id INTEGER NOT NULL,
    summary_text TEXT NOT NULL,
    token_count INTEGER,
    created_at TEXT DEFAULT (datetime('now'))
);

-- Optional: Vector embeddings for semantic search
CREATE TABLE embeddings (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id),
    embedding BLOB,                     -- Float array as binary
    model TEXT                          -- Embedding model used
);
"""

CONTEXT_MEMORY_DDL = """
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT UNIQUE NOT NULL,     -- Unique session identifier
    project_path TEXT,                    -- Full path to project directory
    project_hash TEXT,                    -- SHA256 hash of normalized path (first 16 chars)
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    updated_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    message_count INTEGER DEFAULT 0,      -- Number of stored messages
    metadata TEXT                         -- JSON for extensibility
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL,          -- FK to sessions.id
    role TEXT NOT NULL,                   -- 'user', 'assistant', 'system'
    content TEXT NOT NULL,                -- Message content
    sequence INTEGER NOT NULL,            -- Order within session
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE TABLE summaries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER UNIQUE NOT NULL,   -- FK to sessions.id (one per session)
    brief TEXT NOT NULL,                  -- One-line summary
    detailed TEXT,                        -- Multi-paragraph detailed summary
    key_decisions TEXT,                   -- JSON array of key decisions made
    problems_solved TEXT,                 -- JSON array of problems solved
    technologies TEXT,                    -- JSON array of technologies used
    outcome TEXT,                         -- 'success', 'partial', 'abandoned'
    user_note TEXT,                       -- User-provided annotation from /remember
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE TABLE topics (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL,          -- FK to sessions.id
    topic TEXT NOT NULL,                  -- Lowercase topic string
    FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE TABLE code_snippets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL,          -- FK to sessions.id
    language TEXT,                        -- Programming language
    code TEXT NOT NULL,                   -- The code content
    description TEXT,                     -- What this code does
    file_path TEXT,                       -- Source file path (if applicable)
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE INDEX idx_sessions_project_hash ON sessions(project_hash);
CREATE INDEX idx_sessions_created_at ON sessions(created_at);
CREATE INDEX idx_sessions_updated_at ON sessions(updated_at);
CREATE INDEX idx_messages_session_id ON messages(session_id);
CREATE INDEX idx_topics_session_id ON topics(session_id);
CREATE INDEX idx_topics_topic ON topics(topic);
CREATE INDEX idx_code_snippets_session_id ON code_snippets(session_id);
CREATE INDEX idx_code_snippets_language ON code_snippets(language);
CREATE VIRTUAL TABLE summaries_fts USING fts5(
    brief,
    detailed,
    key_decisions,
    problems_solved,
    technologies,
    user_note,
    content='summaries',
    content_rowid='id',
    tokenize='porter unicode61'
);
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content,
    content='messages',
    content_rowid='id',
    tokenize='porter unicode61'
);
CREATE VIRTUAL TABLE topics_fts USING fts5(
    topic,
    content='topics',
    content_rowid='id',
    tokenize='porter unicode61'
);
CREATE TRIGGER sessions_updated AFTER UPDATE ON sessions BEGIN
    UPDATE sessions SET updated_at = CURRENT_TIMESTAMP WHERE id = NEW.id;
END;
"""

#: Odd text every exchange must carry unchanged.
ODD_TEXTS = (
    'She said "ship it", then left; commas, too',
    "line one\nline two\r\nline three\n",
    "emoji 🚀🔥 and ZWJ 👩‍💻 family",
    "עברית RTL mixed with English and العربية",
    "tab\tseparated\tand a trailing backslash \\",
    "=SUM(A1:A3) looks like a formula",
    "  leading and trailing spaces  ",
    "unicode line separator\u2028and paragraph\u2029end",
)


def context_memory_db(path: Path) -> Path:
    """A context-memory ``context.db`` with two sessions (summaries, topics, snippets, messages)."""
    conn = sqlite3.connect(path)
    conn.executescript(CONTEXT_MEMORY_DDL)
    conn.execute("INSERT INTO sessions (session_id, project_path, project_hash, created_at, updated_at, "
                 "message_count, metadata) VALUES ('sess-auth-01', '/home/ana/src/shop', 'ab12cd34ef56ab12', "
                 "'2025-01-14 10:30:00', '2025-01-14 11:45:00', 3, '{\"model\": \"claude-3-opus\"}')")
    conn.execute("INSERT INTO sessions (session_id, project_path, project_hash, created_at, updated_at, "
                 "message_count) VALUES ('sess-cors-02', '/home/ana/src/api', '99ff88ee77dd66cc', "
                 "'2025-02-03 08:00:00', '2025-02-03 08:00:00', 1)")
    conn.execute(
        "INSERT INTO summaries (session_id, brief, detailed, key_decisions, problems_solved, technologies, "
        "outcome, user_note, created_at) VALUES (1, 'Added JWT authentication to the shop API', "
        "'Replaced session cookies with JWTs.\nRefresh tokens rotate on use.', ?, ?, ?, 'success', "
        "'remember the 15-minute expiry', '2025-01-14 11:40:00')",
        (json.dumps(["Use JWT for auth", "Store tokens in httpOnly cookies", "15-minute expiry"]),
         json.dumps(["Fixed CORS issues", "Resolved token refresh race condition"]),
         json.dumps(["Node.js", "Express", "JWT", "Redis"])))
    conn.execute("INSERT INTO summaries (session_id, brief, outcome, created_at) VALUES "
                 "(2, 'Fixed the CORS preflight on /api/orders', 'partial', '2025-02-03 08:20:00')")
    for session, topic in ((1, "authentication"), (1, "jwt"), (2, "cors")):
        conn.execute("INSERT INTO topics (session_id, topic) VALUES (?, ?)", (session, topic))
    conn.execute("INSERT INTO code_snippets (session_id, language, code, description, file_path, created_at) "
                 "VALUES (1, 'typescript', 'export const sign = (u: User) => jwt.sign({sub: u.id}, SECRET);', "
                 "'Signs an access token', 'src/auth/token.ts', '2025-01-14 11:00:00')")
    for seq, (role, text) in enumerate((("user", "Why do refresh tokens race?"),
                                        ("assistant", "Two tabs refresh at once; rotate with a grace window."))):
        conn.execute("INSERT INTO messages (session_id, role, content, sequence, created_at) VALUES (1, ?, ?, ?, ?)",
                     (role, text, seq, f"2025-01-14 10:3{seq}:00"))
    conn.commit()
    conn.close()
    return path


def zoo_db(path: Path) -> Path:
    """A zoo ``memory.sqlite`` with archived, pruned messages (integer epoch ``created_at``)."""
    conn = sqlite3.connect(path)
    conn.executescript(ZOO_DDL)
    rows = (("user", "What port does the staging server listen on?", 1736850600),
            ("assistant", "Staging listens on 8443 behind the load balancer.", 1736850660),
            ("user", "And production? 🚀", 1736850720))
    for role, text, created in rows:
        cursor = conn.execute("INSERT INTO memory_messages (role, content, source, created_at) VALUES "
                              "(?, ?, 'history_archive', ?)", (role, text, created))
        conn.execute("INSERT INTO memory_fts (message_id, content) VALUES (?, ?)", (cursor.lastrowid, text))
    conn.commit()
    conn.close()
    return path


def chatlog_db(path: Path) -> Path:
    """A chat-log database: messages (one a content_hash duplicate), tags, a summary, an embedding."""
    conn = sqlite3.connect(path)
    conn.executescript(CHATLOG_DDL)
    messages = (("s1", "2025-03-01T09:00:00.000Z", "user", "npm install fails with ENOENT on src/app.ts"),
                ("s1", "2025-03-01T09:00:05.000Z", "assistant", "Run `npm install` from the repo root."),
                ("s2", "2025-03-02T12:00:00+02:00", "user", "npm install fails with ENOENT on src/app.ts"))
    for session, stamp, role, text in messages:
        digest = hashlib.sha256(text.encode()).hexdigest()
        conn.execute("INSERT INTO messages (session_id, timestamp, role, content, content_hash, model) "
                     "VALUES (?, ?, ?, ?, ?, 'gpt-4o')", (session, stamp, role, text, digest))
    conn.execute("INSERT INTO tags (message_id, tag_type, tag_value) VALUES (1, 'topic', 'build'), "
                 "(1, 'error', 'ENOENT'), (2, 'command', 'npm install')")
    conn.execute("INSERT INTO summaries (start_message_id, end_message_id, summary_text, token_count, created_at) "
                 "VALUES (1, 2, 'Install failed outside the repo root; fixed by running from the root.', 14, "
                 "'2025-03-01 09:10:00')")
    conn.execute("INSERT INTO embeddings (message_id, embedding, model) VALUES (1, ?, 'mini')", (b"\x00" * 16,))
    conn.commit()
    conn.close()
    return path


def semantica_dump(path: Path) -> Path:
    """A semantica JSON dump: two MemoryItems and a graph of three nodes and two edges."""
    data = {
        "memory_items": [
            {"content": "The user prefers Python for data work.", "timestamp": "2025-04-01T08:00:00",
             "metadata": {"user_id": "u1", "source": "chat", "tags": ["preferences"]},
             "embedding": [0.1, 0.2, 0.3], "entities": [{"id": "python", "type": "Language"}]},
            {"content": "Ada Lovelace wrote the first program.", "timestamp": "2025-04-02T09:30:00+00:00",
             "metadata": {}, "embedding": [], "entities": [{"name": "ada"}]},
        ],
        "nodes": [
            {"id": "python", "type": "concept", "properties": {"content": "Python, a programming language",
                                                               "weight": 1.0}},
            {"id": "ada", "type": "Person", "properties": {"content": "Ada Lovelace", "weight": 0.9}},
            {"id": "coding", "type": "concept", "properties": {"content": "Writing programs"}},
        ],
        "edges": [
            {"source_id": "python", "target_id": "coding", "type": "related_to", "weight": 0.8},
            {"source_id": "ada", "target_id": "coding", "type": "KNOWS", "weight": 0.5},
        ],
    }
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def raw_memories_db(path: Path) -> Path:
    """An Ora file written by raw SQL: both timestamp formats, odd text, NULLs, links, supersession."""
    conn = sqlite3.connect(path)
    conn.executescript(INIT_SQL)
    stamps = ("2025-01-14 10:30:00", "2025-01-14T10:30:00.000Z", "2025-06-01T23:59:59.123+02:00")
    for n, text in enumerate(ODD_TEXTS):
        conn.execute(
            "INSERT INTO memories (id, content, type, importance, access_count, last_accessed_at, health_score, "
            "related_to, superseded_by, created_at, updated_at, expires_at, synced_at, sync_status) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (f"raw-{n}", text, ("fact", "preference", "context", "task", "conversation")[n % 5], 1 + n % 10, n,
             stamps[(n + 1) % 3] if n % 2 else None, round(0.1 + n * 0.1, 3) if n != 3 else 0.3333333333333333,
             json.dumps([f"raw-{(n + 1) % len(ODD_TEXTS)}"]) if n % 3 == 0 else None,
             "raw-0" if n == 4 else None, stamps[n % 3], stamps[(n + 2) % 3], stamps[1] if n == 5 else None,
             stamps[0] if n % 4 == 0 else None, ("pending", "synced", "local_only")[n % 3]),
        )
    conn.commit()
    conn.close()
    return path


def all_rows(path: Path) -> list[tuple]:
    """Every row of ``memories`` by id, every column (raw SQL, no engine involved)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM memories ORDER BY id").fetchall()
    finally:
        conn.close()
