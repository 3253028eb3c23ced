"""Search as you type in the window on a large file: per keystroke, GUI-thread block, engine calls.

One offscreen Qt session drives the real ``MainWindow`` on the benchmark file (its full-text
index built first and kept in ``bench-data/cache``):

* per keystroke of "deploy" (d, de, dep, …; each applied at once, no debounce): from setting
  the text to the first rows of that keystroke's answer painted — median and worst;
* the longest GUI-thread block meanwhile (a 5 ms QTimer heartbeat, max gap);
* engine calls per keystroke (the real ``core.search.engine.search``, counted);
* facet counts for the same request arriving after the rows (median);
* typing the word at 50 ms a key (the debounce in play): engine calls for the whole word.

Baseline: raw SQLite FTS5 on the same index for the same query — the best 1,000 by BM25, and
the first 100 of them read from ``memories`` (what the table shows first).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import statistics
import time
from pathlib import Path

from .bench_gui import Heartbeat, shown_window, until
from .common import DATA, Row, bench_file, report

WORD = "deploy"


def _raw_fts(path: Path, sidecar: Path, query: str) -> float:
    conn = sqlite3.connect(f"file:{sidecar}?mode=ro", uri=True)
    conn.execute("ATTACH ? AS src", (f"file:{path}?mode=ro",))
    expr = '"' + query.replace('"', '""') + '"'
    started = time.perf_counter()
    ranked = conn.execute("SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 1000", (expr,)).fetchall()
    fids = [r[0] for r in ranked[:100]]
    if fids:
        conn.execute(f"SELECT m.* FROM docs d JOIN src.memories m ON m.id = d.mid WHERE d.fid IN "
                     f"({','.join('?' * len(fids))})", fids).fetchall()
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


async def scenario(path: Path, results: dict) -> None:
    from PySide6.QtCore import QEvent, QObject

    from ora_desktop.core.search import engine, ensure_index

    calls: list[str] = []
    real = engine.search

    def counted(target, query, *args, **kw):  # noqa: ANN001, ANN202
        calls.append(getattr(query, "text", str(query)))
        return real(target, query, *args, **kw)

    engine.search = counted
    beat = Heartbeat()
    painted: list[float] = []

    class PaintSpy(QObject):
        def eventFilter(self, obj, event):  # noqa: N802, ANN001
            if event.type() == QEvent.Type.Paint:
                painted.append(time.perf_counter())
            return False

    ctx, window = await shown_window()
    spy = PaintSpy()
    window.browser.table.viewport().installEventFilter(spy)
    window.open_file(path)
    model = window.browser.model
    await until(lambda: model.rowCount() > 0 and not model.is_loading(), timeout=300)
    await ctx.run(ensure_index, path)
    controller = window.browser.controller
    answers: list = []
    facets: list[float] = []
    controller.answered.connect(answers.append)
    controller_counts: list = []
    controller.facets_ready.connect(controller_counts.append)
    controller.facets_ready.connect(lambda _c: facets.append(time.perf_counter()))
    field = window.browser.search.field

    def first_row_shown() -> bool:
        row = max(0, window.browser.table.rowAt(0))
        return model.rowCount() == 0 or model.memory_at(row) is not None

    async def keystroke(text: str) -> tuple[float, float | None, int]:
        field.blockSignals(True)
        field.setText(text)
        field.blockSignals(False)
        answers.clear()
        facets.clear()
        before = len(calls)
        started = time.perf_counter()
        controller.set_text(text, immediate=True)
        await until(lambda: answers and answers[-1].request.text == text and first_row_shown()
                    and painted and painted[-1] > started, timeout=300)
        shown = time.perf_counter() - started
        try:
            await until(lambda: bool(facets), timeout=60)
            counted_at = facets[-1] - started
        except TimeoutError:
            counted_at = None
        return shown, counted_at, len(calls) - before

    await keystroke("warmup")  # the first search opens the index file: not a keystroke
    per_key, blocks = [], []
    beat.reset()
    for i in range(1, len(WORD) + 1):  # each keystroke's longest block, from its key to its counts
        per_key.append(await keystroke(WORD[:i]))
        blocks.append(beat.read())
        beat.reset()
    results["keys"] = per_key
    results["block"] = max(blocks)
    results["blocks"] = blocks
    await until(lambda: bool(facets), timeout=120)
    results["hits"] = sum(controller_counts[-1].groups.get("type", {}).values()) if controller_counts else 0

    # Typing the word at 50 ms a key: the debounce sends one request.
    controller.set_text("", immediate=True)
    await until(lambda: not model.is_loading(), timeout=300)
    await asyncio.sleep(0.5)
    before = len(calls)
    answers.clear()
    beat.reset()
    for i in range(1, len(WORD) + 1):
        field.setText(WORD[:i])  # textChanged -> set_text (debounced)
        await asyncio.sleep(0.05)
    await until(lambda: answers and answers[-1].request.text == WORD, timeout=300)
    results["typed_calls"] = len(calls) - before
    results["typed_block"] = beat.read()
    engine.search = real
    window.close()
    ctx.close()


def run(memories: int) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["XDG_CACHE_HOME"] = str(DATA / "cache")  # the index is built once and kept
    import qasync

    import ora_desktop.gui  # noqa: F401  (PySide6 before qasync)
    from ora_desktop.core.search import ensure_index, sidecar_path
    from ora_desktop.gui.app import make_application

    path = bench_file(memories)
    ensure_index(path)
    make_application()
    results: dict = {}
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        runner.run(scenario(path, results))
    sidecar = sidecar_path(path)
    raws = [min(_raw_fts(path, sidecar, WORD[:i]) for _ in range(3)) for i in range(1, len(WORD) + 1)]
    shown = [k[0] for k in results["keys"]]
    counted = [k[1] for k in results["keys"] if k[1] is not None]
    calls = [k[2] for k in results["keys"]]
    report(f"search per keystroke in the window ({memories:,} memories, offscreen)", [
        Row("per keystroke to first rows painted (median)", statistics.median(shown), statistics.median(raws),
            "37-50 ms"),
        Row("  worst keystroke", max(shown), max(raws), ""),
        Row("  longest GUI-thread block", results["block"], None, "< 50 ms"),
        Row("  facet counts arrive after (median)", statistics.median(counted) if counted else float("nan"),
            None, "(after the rows)"),
        Row(f"  engine calls per keystroke (max of {len(calls)})", max(calls), None, "1", unit="calls"),
        Row("typing the word at 50 ms a key: engine calls", results["typed_calls"], None, "1", unit="calls"),
        Row("  longest GUI-thread block", results["typed_block"], None, "< 50 ms"),
    ], baseline="raw fts5")
    print(f"  ({results['hits'] or 0:,} matches for '{WORD}'; per keystroke "
          + ", ".join(f"{WORD[:i + 1]} {t * 1000:.0f} ms" for i, t in enumerate(shown))
          + "; raw FTS5 best 1,000 + first 100 rows: " + ", ".join(f"{t * 1000:.0f}" for t in raws) + " ms)")
    print("  (longest GUI-thread block per keystroke, from the key to its facet counts: "
          + ", ".join(f"{WORD[:i + 1]} {b * 1000:.0f} ms" for i, b in enumerate(results["blocks"])) + ")")
