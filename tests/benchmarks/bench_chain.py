"""The supersession chain the detail pane reads for each selected memory, beside the scan it
used to run every time (the same recursive SQL on a raw ``sqlite3`` connection).

A store scans the file once per version of the file to index its edges; later chains are
lookups. Each run opens a fresh read-only store, so its first chain includes that scan. Last,
the chain read again after another program edits the importance of a long memory (in a scratch
copy): the store's change feed tells that no edge moved, so the edges are not scanned again.
Figures are the worst of the runs (every run is printed).
"""

from __future__ import annotations

import gc
import sqlite3
import time
from collections.abc import Callable

from ora_desktop import open_store
from ora_desktop.core.graph import _CHAIN_EDGES

from .bench_core import _raw_reader
from .common import Row, bench_file, fresh_copy, report

RUNS = 3


def _seconds(fn: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _ms(samples: list[float]) -> str:
    return ", ".join(f"{s * 1000:.2f}" for s in samples) + " ms"


def _pick(raw: sqlite3.Connection, memories: int) -> tuple[str, str]:
    """A memory that no other supersedes and that supersedes nothing, and the newest memory of
    a chain (the head, where chain() walks back from)."""
    lone = raw.execute(
        "SELECT id FROM memories WHERE (superseded_by IS NULL OR superseded_by = '') AND id NOT IN "
        "(SELECT superseded_by FROM memories WHERE superseded_by IS NOT NULL) ORDER BY rowid LIMIT 1 OFFSET ?",
        (memories // 2,)).fetchone()[0]
    head = raw.execute(
        "SELECT superseded_by FROM memories WHERE superseded_by IS NOT NULL AND superseded_by != '' "
        "ORDER BY rowid LIMIT 1 OFFSET ?", (memories // 40,)).fetchone()[0]
    return lone, head


def run(memories: int) -> None:
    path = bench_file(memories)
    raw = _raw_reader(path)
    rows: list[Row] = []
    for label, memory_id in zip(("no predecessor", "head of a chain"), _pick(raw, memories), strict=True):
        first, second, base = [], [], []
        for _ in range(RUNS):
            with open_store(path, readonly=True) as store:
                first.append(_seconds(lambda store=store, memory_id=memory_id: store.chain(memory_id)))
                second.append(_seconds(lambda store=store, memory_id=memory_id: store.chain(memory_id)))
            base.append(_seconds(lambda memory_id=memory_id: raw.execute(_CHAIN_EDGES, (memory_id,)).fetchall()))
        for name, samples in (("first call", first), ("second call", second), ("raw scan", base)):
            print(f"  chain, {label}, {name}: {_ms(samples)}")
        rows.append(Row(f"chain, {label}: first (scans once)", max(first), max(base), "<= 1.5x"))
        rows.append(Row(f"chain, {label}: second (file unchanged)", max(second), max(base), "<= 0.01x"))
    head = _pick(raw, memories)[1]
    rows += _after_an_agents_edit(memories, head, "edits the importance of",
                                  "UPDATE memories SET importance = 1 + ? WHERE id = ?")
    rows += _after_an_agents_edit(memories, head, "touches", "UPDATE memories SET access_count = 5 + ?, "
                                  "last_accessed_at = datetime('now') WHERE id = ?")
    raw.close()
    report(f"supersession chain on {memories:,} memories (worst of {RUNS} runs; raw = the old scan in sqlite3)",
           rows)


def _after_an_agents_edit(memories: int, head: str, what: str, sql: str) -> list[Row]:
    """The chain read again after another program writes (``sql``, given the run and the id) a
    memory too long for its page (in a scratch copy): the edges are kept when the feed can tell
    no edge moved. An importance edit moves an index entry; a touch writes no indexed column
    and, of a long memory, only its last overflow page: the first look that meets one lists the
    file's overflow pages through SQLite's dbstat (a row of its own), later ones use that list."""
    path = fresh_copy(bench_file(memories), "chain-agent.site.db")
    agent = sqlite3.connect(path, isolation_level=None)  # (another connection: the store is not told)
    agent.execute("PRAGMA journal_mode = WAL")
    agent.execute("UPDATE memories SET content = ?, access_count = 4 WHERE id = ?", ("a long memory " * 1500, head))
    raw = _raw_reader(path)
    first, after, base = [], [], []
    with open_store(path) as store:
        store.chain(head)
        for run in range(RUNS + 1):
            agent.execute(sql, (run, head))
            (after if run else first).append(_seconds(lambda: store.chain(head)))
            base.append(_seconds(lambda: raw.execute(_CHAIN_EDGES, (head,)).fetchall()))
    print(f"  chain after an agent {what} a long memory: first {_ms(first)}, then {_ms(after)}; "
          f"raw scan: {_ms(base)}")
    raw.close()
    agent.close()
    rows = [Row(f"chain after an agent {what} a long memory", max(after), max(base), "< 1x: no scan")]
    if what == "touches":
        rows.insert(0, Row("  the first such look (lists the overflow pages)", first[0], max(base), "~1x"))
    return rows
