"""Highlight cost on a huge memory: one 10 MB memory holding a million matches of the query word.

Before highlighting was windowed and capped, FTS5's ``highlight()`` over the whole text grew
quadratically with the matches (a search took over a minute, ``context()`` over 100 s). Ours:
``search()`` and ``context()`` of that word on a file of ``memories`` demo rows plus the huge
one; raw: the same FTS5 query and row fetch with no highlight at all (the floor).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ora_desktop.core import open_store
from ora_desktop.core.search import search
from ora_desktop.core.search.sidecar import sidecar_path

from .common import DATA, Row, bench_file, fresh_copy, p50, report, timed

WORD = "zanzibar"
HUGE_MATCHES = 1_000_000


def _huge_file(memories: int) -> Path:
    path = fresh_copy(bench_file(memories), "highlight.site.db")
    text = (f"{WORD} " * 2 * HUGE_MATCHES)[: 10 * 1024 * 1024]  # 10 MB: over a million matches
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                 "VALUES ('huge', ?, 'fact', 9, datetime('now'), datetime('now'))", (text,))
    conn.commit()
    conn.close()
    sidecar_path(path).unlink(missing_ok=True)
    return path


def run(memories: int) -> None:
    memories = min(memories, 100_000)  # the cost measured is one memory's; a smaller file builds faster
    path = _huge_file(memories)
    matches = open_store(path, readonly=True).get("huge").content.count(WORD)
    search(path, WORD)  # builds the index (not measured)
    index = sqlite3.connect(sidecar_path(path))
    index.execute(f"ATTACH DATABASE 'file:{path}?mode=ro' AS src")

    def raw() -> None:
        index.execute("SELECT m.content FROM (SELECT rowid AS r FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) "
                      "LIMIT 20) h JOIN src.memories m ON m.rowid = h.r", (WORD,)).fetchall()

    raw_times = timed(raw, repeat=5)
    hits = search(path, WORD).hits
    assert hits and hits[0].memory.id == "huge" and WORD in hits[0].snippet
    rows = [Row(f"search: 10 MB memory, {matches:,} matches (p50)", p50(timed(lambda: search(path, WORD), 5)),
                p50(raw_times), "was > 60 s")]
    with open_store(path, readonly=True) as store:
        rows.append(Row("context(): the same word, 2,000 tokens (p50)",
                        p50(timed(lambda: store.context(WORD, 2000), 5)), p50(raw_times), "was > 100 s"))
    index.close()
    report(f"highlight on a huge memory ({memories:,} memories + one of 10 MB; data in {DATA})", rows)
