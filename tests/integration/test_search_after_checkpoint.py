"""An agent edits rows, then a checkpoint truncates the log before the next search: the log can
no longer say what changed, and the search must still never give a stale answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ora_desktop.core.search import search
from tests.unit.log_support import agent as commit
from tests.unit.log_support import checkpoint
from tests.unit.search_support import ids, make_file

EDITED = [f"m{i}" for i in range(1, 301, 3)]  # 100 rows spread over the file's pages

AGENT = """
import json, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
plan = json.loads(sys.argv[2])
conn.execute('BEGIN IMMEDIATE')
for mid in plan['ids']:
    conn.execute(plan['sql'], (plan['word'] + ' ' + mid, mid))
conn.execute('COMMIT')
if plan['truncate']:
    busy, _, _ = conn.execute('PRAGMA wal_checkpoint(TRUNCATE)').fetchone()
    assert busy == 0, 'the checkpoint was refused'
"""


def agent(path: Path, sql: str, word: str, truncate: bool) -> None:
    """Rewrite the content of every EDITED row to ``word <id>`` in one commit, from another process."""
    plan = {"ids": EDITED, "sql": sql, "word": word, "truncate": truncate}
    subprocess.run([sys.executable, "-c", AGENT, str(path), json.dumps(plan)], check=True)


@pytest.mark.parametrize("stamp", [
    "updated_at = '2030-06-01 12:00:00'",  # both edits in the same second: updated_at as it was
    "updated_at = updated_at",  # an agent that leaves updated_at alone
], ids=["same second", "updated_at untouched"])
def test_rows_edited_before_a_truncating_checkpoint_are_found_by_their_new_words(ora_home: Path, stamp: str):
    path = make_file(ora_home / "agent.site.db",
                     [{"id": f"m{i}", "content": f"memory {i} " + "padding " * 30} for i in range(1, 401)])
    assert ids(search(path, "walrus")) == []  # the index is built
    agent(path, f"UPDATE memories SET content = ?, {stamp} WHERE id = ?", "walrus", truncate=False)
    assert sorted(ids(search(path, "walrus", limit=200))) == sorted(EDITED)
    agent(path, f"UPDATE memories SET content = ?, {stamp} WHERE id = ?", "narwhal", truncate=True)
    assert Path(f"{path}-wal").stat().st_size == 0  # the log that named the pages is gone
    assert sorted(ids(search(path, "narwhal", limit=200))) == sorted(EDITED)
    assert ids(search(path, "walrus", limit=200)) == []


def test_with_the_file_open_here_the_feed_names_the_rows_and_nothing_is_compared_whole(
        ora_home: Path, monkeypatch: pytest.MonkeyPatch):
    """The window holds the file open and its watcher looked after the agent's commit, before
    another tool's checkpoint truncated the log: the feed named the memories, so the search index
    re-reads those rows, not every row's text."""
    from ora_desktop.core import open_store
    from ora_desktop.core.search import refresh

    path = make_file(ora_home / "agent.site.db",
                     [{"id": f"m{i}", "content": f"memory {i} " + "padding " * 30} for i in range(1, 401)])
    whole: list[int] = []
    real = refresh._text_differs
    monkeypatch.setattr(refresh, "_text_differs", lambda *a, **k: whole.append(1) or real(*a, **k))
    with open_store(path) as store:
        assert ids(store.search("walrus")) == []  # the index is built
        store.update("m2", content="a walrus we wrote")
        assert ids(store.search("walrus")) == ["m2"]  # a refresh: the index reads the feed from here on
        compared = len(whole)
        agent(path, "UPDATE memories SET content = ?, updated_at = updated_at WHERE id = ?", "narwhal", truncate=False)
        assert store.external_change().changed == set(EDITED)  # the window's watcher looks
        subprocess.run([sys.executable, "-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1])"
                        ".execute('PRAGMA wal_checkpoint(TRUNCATE)')", str(path)], check=True)
        assert sorted(ids(store.search("narwhal", limit=200))) == sorted(EDITED)
        assert ids(store.search("walrus", limit=200)) == ["m2"]
    assert len(whole) == compared  # the log could not vouch, the feed could


def test_a_new_memory_at_a_reused_rowid_is_found_after_the_log_was_truncated(ora_home: Path) -> None:
    """An agent deletes the two last memories and adds two with an old ``updated_at`` (they take
    the same rowids, so the row count is as it was), then a checkpoint truncates the log: the
    memory at the lower reused rowid is found, and the deleted one's words are not."""
    rows = [{"id": f"m{i}", "content": f"memory {i} " + "padding " * 20} for i in range(1, 301)]
    rows[298]["content"] = "an okapi grazes"
    path = make_file(ora_home / "agent.site.db", rows)
    assert ids(search(path, "okapi")) == ["m299"]
    insert = ("INSERT INTO memories (id, content, created_at, updated_at) "
              "VALUES (?, ?, '2001-01-01 00:00:00', '2001-01-01 00:00:00')")
    commit(path, "DELETE FROM memories WHERE id IN ('m299', 'm300')", insert, insert,
           params=[[], ["new-299", "a giraffe grazes"], ["new-300", "a zebra grazes"]])
    busy, frames, copied = checkpoint(path, "TRUNCATE")
    assert busy == 0 and frames == copied
    assert ids(search(path, "giraffe")) == ["new-299"]
    assert ids(search(path, "zebra")) == ["new-300"]
    assert ids(search(path, "okapi")) == []
