"""Search against raw SQLite FTS5 doing the same work on the same data, in one run.

* first search: an agent's first ``store.search`` of a never-indexed copy (the library answers
  within seconds, from a plain scan if the index's words are not in place yet, and builds on);
* build: our sidecar against a raw ``INSERT INTO fts SELECT rowid, content FROM memories`` into
  an FTS5 table in a copy of the file, alternately, twice each, the best of each. "Searchable" is
  when the sidecar is in place (the words); tags and CJK text are extracted after. The tag pass
  alone is ``extract_tags`` over every text on one core, beside the same raw build.
* search p50 (one word, three words): ``search(path, q, limit=50)`` — parse, refresh check,
  BM25, blend with importance/health/recency, hide superseded, snippets and highlight spans —
  against raw ``SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 50``
  on the raw copy's index. Timings alternate ours/raw to share the machine's noise.
* incremental refresh after 100 rows changed by another connection (an agent, WAL mode as the
  seed creates files): our detection + re-index, against raw FTS5 re-indexing the same 100
  rows when told which ones (delete + insert, what a trigger would do). Reported apart: rounds
  whose changes the write-ahead log can tell, and rounds where it cannot (the last two rounds
  truncate the log with a checkpoint, as another tool might) and the table is scanned.
* context(): ``store.context(q, 2000)`` against the three raw queries it is built from
  (important, FTS match, recent) with no graph expansion, budgeting, ranking or rendering; and
  the same on a 2,000-memory file holding one 10 MB memory full of the query's words, once the
  file has settled (nobody wrote for 2 s), and right after an agent's write (the sidecars are
  brought up to date first: the write's words and vector, and the freshness checks of a file
  written in the last 2 s).
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ora_desktop.core import open_store, wallog
from ora_desktop.core.search import drop_index, ensure_index, extract_tags, index_state, search, sidecar_path
from ora_desktop.core.search.index import get_index
from ora_desktop.core.search.sidecar import SETTLE_NS

from .common import DATA, Row, bench_file, fresh_copy, p50, report

ONE_WORD = ("Kenji", "sitemap", "VACUUM", "rsync", "Postgres")
THREE_WORDS = ("flaky CI runs", "newsletter signup drop", "billing webhook TypeError", "Kenji dark mode",
               "pricing page copy")
SEARCH_TARGET = "<= 1.5x, p50 < 50 ms"
REPEAT = 7


def _raw_index(path: Path) -> float:
    conn = sqlite3.connect(path)
    started = time.perf_counter()
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(content, tokenize='porter unicode61')")
    conn.execute("INSERT INTO fts(rowid, content) SELECT rowid, content FROM memories")
    conn.commit()
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def _alternating(ours, raw, repeat: int = REPEAT) -> tuple[list[float], list[float]]:
    ours(), raw()
    a, b = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        ours()
        a.append(time.perf_counter() - started)
        started = time.perf_counter()
        raw()
        b.append(time.perf_counter() - started)
    return a, b


def _fts(query: str) -> str:
    return " ".join('"' + word.replace('"', '""') + '"' for word in query.split())


def run(memories: int) -> None:
    report(f"search ({memories:,} memories)", search_rows(memories))


def search_rows(memories: int) -> list[Row]:
    """Every row of this benchmark (see the module doc), in a scratch cache folder."""
    with cache_home(DATA / "scratch" / "search-cache"):
        return _run(bench_file(memories), memories)


@contextmanager
def cache_home(folder: Path) -> Iterator[None]:
    """``XDG_CACHE_HOME`` (where the sidecars go) set to ``folder`` meanwhile."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = previous


def _run(source: Path, memories: int) -> list[Row]:
    rows: list[Row] = []
    ours_path = fresh_copy(source, "search.site.db")
    raw_path = fresh_copy(source, "search-raw.site.db")
    with sqlite3.connect(ours_path) as conn:  # agent files are WAL, as the seed's init SQL makes them
        conn.execute("PRAGMA journal_mode = WAL")
    get_index(ours_path).close()
    drop_index(ours_path)

    # --- first search of a never-indexed file (the library: answer now, build in the background)
    first_path = fresh_copy(source, "search-first.site.db")
    drop_index(first_path)
    with open_store(first_path) as store:
        started = time.perf_counter()
        first = store.search("deploy pipeline", 20)
        first_seconds = time.perf_counter() - started
        how = "a plain scan, the index building" if first.fallback else "the index"
        while index_state(first_path).building:
            time.sleep(0.2)
    drop_index(first_path)

    # --- build: ours and raw alternately, twice each (the shared machine's noise), best of each
    sidecar = sidecar_path(ours_path)
    searchable, complete, raw_builds = [], [], []
    for attempt in range(2):
        if attempt:
            drop_index(ours_path)
            raw_path = fresh_copy(source, "search-raw.site.db")
        marks: list[float] = []
        started = time.perf_counter()

        def progress(done: int, total: int, marks: list[float] = marks, started: float = started) -> None:
            if not marks and sidecar.exists():  # in place: searches use it from now on
                marks.append(time.perf_counter() - started)

        state = ensure_index(ours_path, progress=progress)
        complete.append(time.perf_counter() - started)
        searchable.append(marks[0] if marks else complete[-1])
        assert state.built and state.rows == memories, state
        raw_builds.append(_raw_index(raw_path))
    raw_build = min(raw_builds)
    rows.append(Row(f"build: words, searchable ({memories:,})", min(searchable), raw_build, "<= 1.5x"))
    rows.append(Row("build: + tags and CJK (complete)", min(complete), raw_build, "(tags are extra)"))
    texts = [r[0] for r in sqlite3.connect(raw_path).execute("SELECT content FROM memories")]
    started = time.perf_counter()
    for text in texts:
        extract_tags(text)
    rows.append(Row("tag pass alone (extract_tags, one core)", time.perf_counter() - started, raw_build,
                    "< 3x"))
    del texts
    rows.append(Row(f"first store.search, never indexed ({how})", first_seconds, None, "<= 2 s"))

    # --- search
    raw = sqlite3.connect(raw_path)
    raw_sql = "SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 50"
    for label, queries in (("search: one word (p50)", ONE_WORD), ("search: three words (p50)", THREE_WORDS)):
        ours_all, raw_all, matched = [], [], []
        for query in queries:
            matched.append(raw.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (_fts(query),)).fetchone()[0])
            a, b = _alternating(lambda q=query: search(ours_path, q, limit=50),
                                lambda q=query: raw.execute(raw_sql, (_fts(q),)).fetchall())
            ours_all += a
            raw_all += b
        rows.append(Row(f"{label} ~{int(statistics.median(matched)):,} matches", p50(ours_all), p50(raw_all),
                        SEARCH_TARGET))

    # --- incremental refresh after 100 changed rows
    index = get_index(ours_path)
    index.refresh()
    writer = sqlite3.connect(ours_path, isolation_level=None)
    raw_writer = sqlite3.connect(raw_path, isolation_level=None)
    rng = random.Random(7)
    top = writer.execute("SELECT max(rowid) FROM memories").fetchone()[0]
    timings: dict[bool, list[float]] = {True: [], False: []}
    raw_times = []
    for round_ in range(12):
        picked = rng.sample(range(1, top + 1), 100)
        marks_ = ",".join("?" * len(picked))
        change = (f"UPDATE memories SET content = content || ' edited {round_}', updated_at = datetime('now') "
                  f"WHERE rowid IN ({marks_})")
        writer.execute(change, picked)
        if round_ >= 10:  # the last rounds: the log is truncated (a checkpoint by another tool)
            writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        # When the log cannot tell what changed (no position yet, or restarted more than once
        # by the writer's automatic checkpoints) the refresh scans the table instead.
        logged = wallog.rows_since(ours_path, wallog.Cursor.from_list(index.meta().get("wal")))
        started = time.perf_counter()
        assert index.refresh()
        timings[logged is not None].append(time.perf_counter() - started)
        raw_writer.execute(change, picked)
        started = time.perf_counter()
        raw_writer.execute("BEGIN")
        raw_writer.execute(f"DELETE FROM fts WHERE rowid IN ({marks_})", picked)
        raw_writer.execute(f"INSERT INTO fts(rowid, content) SELECT rowid, content FROM memories "
                           f"WHERE rowid IN ({marks_})", picked)
        raw_writer.execute("COMMIT")
        raw_times.append(time.perf_counter() - started)
    seen = len(search(ours_path, f"edited {round_} is:any", limit=200).hits)
    if seen < 100:  # (a known miss of the scan path after a truncated log: reported, not hidden)
        print(f"  NOTE: after the last refresh a search found {seen} of the 100 rows edited in it")
    for from_log, label in ((True, "via the log"), (False, "no usable log, scan")):
        if timings[from_log]:
            rows.append(Row(f"refresh 100 changed: {label} ({len(timings[from_log])}x)",
                            p50(timings[from_log]), p50(raw_times), "< 100 ms"))
    writer.close()
    raw_writer.close()

    # --- context
    query = "deploy pipeline TypeError"
    with open_store(ours_path, readonly=True) as store:
        bundle = store.context(query, 2000)
        assert bundle.tokens <= 2000

        def raw_context() -> None:
            raw.execute("SELECT * FROM memories WHERE importance >= 7 AND (superseded_by IS NULL OR "
                        "superseded_by = '') ORDER BY importance DESC, rowid DESC LIMIT 50").fetchall()
            raw.execute("SELECT m.* FROM (SELECT rowid AS r FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) "
                        "LIMIT 20) h JOIN memories m ON m.rowid = h.r", (_fts(query),)).fetchall()
            raw.execute("SELECT * FROM memories WHERE superseded_by IS NULL OR superseded_by = '' "
                        "ORDER BY rowid DESC LIMIT 40").fetchall()

        a, b = _alternating(lambda: store.context(query, 2000), raw_context, repeat=5)
        rows.append(Row("context(): 2,000-token budget (p50)", p50(a), p50(b), "(assembles 3 sections)"))
    raw.close()
    rows.extend(_huge_memory_context())
    return rows


def _huge_memory_context() -> list[Row]:
    """context() on a file holding one 10 MB memory full of the query's words, beside the raw
    queries it is built from (as above) on a raw FTS5 table of the same file."""
    path = DATA / "scratch" / "huge-memory.site.db"
    raw_path = DATA / "scratch" / "huge-memory-raw.site.db"
    for target in (path, raw_path):
        for suffix in ("", "-wal", "-shm"):
            Path(str(target) + suffix).unlink(missing_ok=True)
    from ora_desktop.core.demo import write_agent

    write_agent(path, memories=2000, seed=3)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO memories(id, content, type, importance, created_at, updated_at) "
                     "VALUES ('huge', ?, 'fact', 9, datetime('now'), datetime('now'))",
                     (("deploy pipeline TypeError again " * 330000)[:10_000_000],))
    shutil.copyfile(path, raw_path)
    _raw_index(raw_path)
    ensure_index(path)
    query = "deploy pipeline TypeError"
    raw = sqlite3.connect(raw_path)

    def raw_context() -> None:
        raw.execute("SELECT * FROM memories WHERE importance >= 7 AND (superseded_by IS NULL OR "
                    "superseded_by = '') ORDER BY importance DESC, rowid DESC LIMIT 50").fetchall()
        raw.execute("SELECT m.* FROM (SELECT rowid AS r FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) "
                    "LIMIT 20) h JOIN memories m ON m.rowid = h.r", (_fts(query),)).fetchall()
        raw.execute("SELECT * FROM memories WHERE superseded_by IS NULL OR superseded_by = '' "
                    "ORDER BY rowid DESC LIMIT 40").fetchall()

    writer = sqlite3.connect(path)
    written = iter(range(10**6))

    def after_a_write() -> None:  # an agent adds one memory, then asks for context
        writer.execute("INSERT INTO memories(id, content, type, importance, created_at, updated_at) VALUES "
                       "(?, 'one more deploy note', 'fact', 5, datetime('now'), datetime('now'))",
                       (f"w{next(written)}",))
        writer.commit()
        store.context(query, 2000)

    with open_store(path, readonly=True) as store:
        store.context(query, 2000)  # the first call builds the vectors of this small file
        time.sleep(SETTLE_NS / 1e9 + 0.5)  # settled: nobody has written for a while
        a, b = _alternating(lambda: store.context(query, 2000), raw_context, repeat=7)
        fresh, fresh_raw = _alternating(after_a_write, raw_context, repeat=5)
    writer.close()
    raw.close()
    return [Row("context(): one 10 MB memory (p50)", p50(a), p50(b), "<= 3x"),
            Row("  the same right after an agent's write (p50)", p50(fresh), p50(fresh_raw),
                "(sidecars brought up to date, the write included)")]
