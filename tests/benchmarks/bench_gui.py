"""The window on a 1,000,000-memory file: launch, sort, search as you type, scrolling.

Measured in one offscreen Qt session driving the real ``MainWindow``:

* launch to first rows painted — as ``ora-desktop FILE`` starts once Qt is loaded: read the file's
  first rows ahead, build the window with the file (its modules imported on a worker), first paint
  with rows;
* sort by health — click to first rows painted in the new order;
* search as you type — per keystroke of "deploy", text set to the first hits painted (no debounce),
  and to every hit listed (the rest follow the first screenful);
* peak memory (RSS) while scrolling the table from the first row to the last;
* an importance edit saved from the detail pane (on a scratch copy): Save to the row repainted
  with the new value, and how many times every row key was read meanwhile (it should be none);
* opening a never-opened copy of the file (File > Open, last, so the rows above are unchanged):
  the GUI thread's longest block until a second after its first rows are painted, and switching
  back to the file already open;
* the longest time the GUI thread was blocked during each (a 5 ms QTimer heartbeat, max gap).

Each is printed beside raw SQLite doing the same query where that is meaningful.
"""

from __future__ import annotations

import asyncio
import os
import resource
import sqlite3
import tempfile
import time
from pathlib import Path

from .common import Row, bench_file, fresh_copy, report, use_bytecode

OPEN_COPY = "gui-open.site.db"


def rss_mb() -> float:
    """Current resident set size in MB (Linux /proc; else the peak so far)."""
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def rss_peak_mb() -> float:
    """The process's peak resident set size so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


class Heartbeat:
    """A 5 ms QTimer; ``max_gap`` is the longest time between two ticks (a blocked GUI thread)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer(interval=5)
        self.timer.timeout.connect(self._tick)
        self.last = time.perf_counter()
        self.max_gap = 0.0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.max_gap = max(self.max_gap, now - self.last)
        self.last = now

    def reset(self) -> None:
        self.last = time.perf_counter()
        self.max_gap = 0.0
        self.timer.start()

    def read(self) -> float:
        self._tick()
        return self.max_gap


def bench_settings(prefix: str = "ora-bench-home-"):  # noqa: ANN201
    """A new, empty home folder and the window's settings in it (nothing of the person's)."""
    from PySide6.QtCore import QSettings

    home = Path(tempfile.mkdtemp(prefix=prefix))
    return home, QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat)


async def shown_window(prefix: str = "ora-bench-home-"):  # noqa: ANN201
    """The real window on an empty home, 1400x900, shown and started: ``(ctx, window)``."""
    from ora_desktop.gui.app import build_window_async, parse_args

    home, settings = bench_settings(prefix)
    ctx, window = await build_window_async(parse_args(["--home", str(home)]), settings)
    window.resize(1400, 900)
    window.show()
    window.start()
    return ctx, window


async def until(condition, timeout: float = 120.0, step: float = 0.002) -> None:  # noqa: ANN001
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > timeout:
            raise TimeoutError(f"the window did not get there in time ({condition.__code__.co_firstlineno})")
        await asyncio.sleep(step)


def raw_update(path: Path, memory_id: str) -> float:
    """The same importance edit as plain SQLite: one UPDATE by id, committed."""
    conn = sqlite3.connect(path)
    started = time.perf_counter()
    conn.execute("UPDATE memories SET importance = 3, updated_at = datetime('now'), sync_status = 'pending' "
                 "WHERE id = ?", (memory_id,))
    conn.commit()
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def raw_open(path: Path) -> float:
    """What opening a file must read, in plain Python: connect, and the schema check's reads
    (tables, columns, indexes, journal mode); the median of 5."""
    times = []
    for _ in range(5):
        started = time.perf_counter()
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        conn.execute("PRAGMA table_info(memories)").fetchall()
        for _seq, name, *_rest in conn.execute("PRAGMA index_list(memories)").fetchall():
            conn.execute(f'PRAGMA index_info("{name}")').fetchall()
        conn.execute("PRAGMA journal_mode").fetchone()
        conn.close()
        times.append(time.perf_counter() - started)
    return sorted(times)[len(times) // 2]


def _flushed_copy(path: Path) -> Path:
    """A fresh copy of ``path``, on disk (fsync): its writeback does not land in what is timed."""
    copy = fresh_copy(path, OPEN_COPY)
    fd = os.open(copy, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return copy


async def open_a_file(window, ctx, beat: Heartbeat, path: Path, results: dict) -> None:  # noqa: ANN001
    """File > Open of a never-opened copy of ``path`` (a store not cached yet; its search index is
    built in the background, as at any first open), then back to ``path`` (open already): the
    GUI thread's longest block in each, until a second after the file's first rows are painted."""
    from PySide6.QtCore import QEvent, QObject

    from ora_desktop.gui.context import resolved

    copy = (await ctx.run(_flushed_copy, path)).resolve()
    model = window.browser.model
    painted: list[tuple[Path, float]] = []

    class Painted(QObject):
        def eventFilter(self, obj, event):  # noqa: N802, ANN001
            store = window.browser.store
            if event.type() == QEvent.Type.Paint and store is not None and model.rowCount() \
                    and model.memory_at(max(0, window.browser.table.rowAt(0))) is not None:
                painted.append((resolved(store.path), time.perf_counter()))  # remembered: no system call
            return False

    spy = Painted()
    window.browser.table.viewport().installEventFilter(spy)

    async def open_one(target: Path) -> tuple[float, float]:
        await asyncio.sleep(1.0)  # what the previous step left settles first
        painted.clear()
        beat.reset()
        started = time.perf_counter()
        window.open_file(target)
        await until(lambda: any(p == target for p, _t in painted) and not model.is_loading())
        shown = next(t for p, t in painted if p == target) - started
        await asyncio.sleep(1.0)  # whatever follows the first paint counts as blocking too
        return shown, beat.read()

    results["open"] = await open_one(copy)
    results["open_again"] = await open_one(path.resolve())
    window.browser.table.viewport().removeEventFilter(spy)


def raw(path: Path, sql: str, params: tuple = (), many: bool = True) -> float:
    started = time.perf_counter()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = conn.execute(sql, params).fetchall() if many else conn.execute(sql, params).fetchone()
    conn.close()
    assert rows is not None
    return time.perf_counter() - started


async def scenario(path: Path, edit_path: Path, results: dict) -> None:
    from PySide6.QtCore import QEvent, QObject, Qt

    from ora_desktop.core import open_store
    from ora_desktop.gui.app import build_window_async, parse_args
    from ora_desktop.gui.memories.columns import column_index
    from ora_desktop.views.first_rows import FirstRows

    beat = Heartbeat()
    painted: list[float] = []

    class PaintSpy(QObject):
        def eventFilter(self, obj, event):  # noqa: N802, ANN001
            if event.type() == QEvent.Type.Paint and model_ref and model_ref[0].memory_at(first_row()) is not None:
                painted.append(time.perf_counter())
            return False

    model_ref: list = []

    def first_row() -> int:
        table = window.browser.table
        return max(0, table.rowAt(0))

    home, settings = bench_settings()
    beat.reset()
    started = time.perf_counter()
    # As ``gui.app.main`` starts ``ora-desktop FILE``: the file's first rows read on a thread while
    # the window's modules import, the window built with the file, shown, started.
    first_rows = FirstRows(open_store, path)
    ctx, window = await build_window_async(parse_args(["--home", str(home), str(path)]), settings, first_rows)
    window.resize(1400, 900)
    model_ref.append(window.browser.model)
    spy = PaintSpy()
    window.browser.table.viewport().installEventFilter(spy)
    window.show()
    window.start()
    await until(lambda: painted)
    results["launch"] = (painted[0] - started, beat.read())
    model = window.browser.model
    await until(lambda: not model.is_loading())
    results["rows"] = model.rowCount()

    # sort by health (descending), until the first rows are painted in the new order
    await asyncio.sleep(0.5)
    painted.clear()
    beat.reset()
    started = time.perf_counter()
    window.browser.table.sortByColumn(column_index("health"), Qt.SortOrder.DescendingOrder)
    await until(lambda: painted and painted[-1] > started and model.query.order_by == "health_score"
                and model.rowCount() and model.memory_at(first_row()) is not None
                and model.memory_at(first_row()).health_score == 1.0)
    first = time.perf_counter() - started
    await until(lambda: not model.is_loading())
    results["sort"] = (first, beat.read(), time.perf_counter() - started)

    # search as you type: the index first (built once, cached), then one keystroke at a time
    from ora_desktop.core.search import ensure_index

    await ctx.run(ensure_index, path)
    controller = window.browser.controller
    controller.set_text("warmup", immediate=True)  # the first search opens the index file: not a keystroke
    await until(lambda: not model.is_loading())
    latencies = []
    complete = []  # to every hit listed (the first screenful comes first, the rest is appended)
    loads: list[int] = []
    resets: list[float] = []
    model.loaded.connect(loads.append)
    model.modelReset.connect(lambda: resets.append(time.perf_counter()))
    beat.reset()
    for i in range(1, len("deploy") + 1):
        text = "deploy"[:i]
        window.browser.search.field.blockSignals(True)
        window.browser.search.field.setText(text)
        window.browser.search.field.blockSignals(False)
        started = time.perf_counter()
        loads.clear()
        resets.clear()
        controller.set_text(text, immediate=True)
        await until(lambda: resets and (model.memory_at(first_row()) is not None
                                        and painted and painted[-1] > resets[-1]
                                        if model.rowCount() else bool(loads)))
        latencies.append(time.perf_counter() - started)
        await until(lambda: loads and not model.is_loading()
                    and (model.rowCount() == 0 or model.memory_at(first_row()) is not None))
        complete.append(time.perf_counter() - started)
    results["search"] = (sorted(latencies)[len(latencies) // 2], beat.read(), max(latencies), model.rowCount())
    results["search_all"] = (sorted(complete)[len(complete) // 2], max(complete))
    results["keystrokes"] = latencies
    results["keystrokes_all"] = complete
    controller.set_text("", immediate=True)
    await until(lambda: not model.is_loading() and model.rowCount() == results["rows"])

    # scroll from the first row to the last, a screen at a time where it counts
    table = window.browser.table
    bar = table.verticalScrollBar()
    peak = rss_mb()
    beat.reset()
    started = time.perf_counter()
    steps = 400
    for step in range(steps + 1):
        bar.setValue(bar.maximum() * step // steps)
        await asyncio.sleep(0.01)
        peak = max(peak, rss_mb())
    await until(lambda: model.memory_at(model.rowCount() - 1) is not None)
    peak = max(peak, rss_mb())
    results["scroll"] = (peak, beat.read(), time.perf_counter() - started, len(model._pages) * model.page_size)
    # what one paint of the table costs the GUI thread (its own CPU time, rows loaded): the floor
    # under every block above, whatever the workers do meanwhile
    paints = []
    for _ in range(20):
        cpu = time.thread_time()
        table.viewport().repaint()
        paints.append(time.thread_time() - cpu)
    results["paint"] = sorted(paints)[len(paints) // 2]

    # an importance edit saved from the detail pane, on a scratch copy of the file
    window.open_file(edit_path)
    await until(lambda: window.browser.store is not None and window.browser.store.path == edit_path.resolve()
                and not model.is_loading() and model.rowCount() == results["rows"])
    await until(lambda: model.memory_at(0) is not None)
    target = model.memory_at(0)
    window.browser.follow(target.id)
    detail = window.browser.detail
    await until(lambda: detail.memory is not None and detail.memory.id == target.id)
    await asyncio.sleep(1.0)  # facets and the rest of opening settle first

    async def edit_once() -> tuple[float, float, int, int]:
        """Save a new importance from the detail pane; (Save to repainted, block, key reads, rows)."""
        current = model.memory_at(0)
        new = 1 if current.importance != 1 else 2
        reads, repainted = model.key_reads, model.rows_repainted
        painted.clear()
        beat.reset()
        started = time.perf_counter()
        detail.editor.importance.setText(str(new))
        detail.request_save()
        await until(lambda: (m := model.memory_at(0)) is not None and m.importance == new
                    and painted and painted[-1] > started)
        edit = time.perf_counter() - started
        await asyncio.sleep(1.0)  # whatever follows the repaint (facets, counts) counts as blocking too
        return edit, beat.read(), model.key_reads - reads, model.rows_repainted - repainted

    # first while the search index of this never-opened copy is still being built (as on a first
    # open), then once it is built (any file opened before): both are what a person meets
    results["edit"] = (*await edit_once(), target.id)
    from ora_desktop.core.search.build import index_state

    deadline = time.perf_counter() + 300
    while time.perf_counter() < deadline:  # (the edit left it stale: that refreshes at the next search)
        state = await ctx.run(index_state, edit_path)
        if state.built and not state.building:
            break
        await asyncio.sleep(0.5)
    await asyncio.sleep(1.0)
    results["edit_indexed"] = await edit_once()

    # select a 2.4 MB memory (a log an agent stored): the GUI thread's longest block meanwhile
    from ora_desktop.core import open_store

    big = home / "big.site.db"
    from ora_desktop.core.schema import create_database

    create_database(big)
    line = "2026-01-01 10:00:00 INFO worker processed job 12345 in 37 ms; deploy ok\n"
    with open_store(big) as store:
        small = store.add("A small memory before the big one", "fact", 5)
        large = store.add(line * (2_400_000 // len(line)), "context", 5)
    window.open_file(big)
    await until(lambda: window.browser.store is not None and window.browser.store.path == big
                and not model.is_loading() and model.rowCount() == 2)
    # The file opens with its first row selected, which may be the big one: show the small one
    # first, so that what is measured is selecting the big memory, not re-selecting it.
    text_painted: list[float] = []

    class TextPaints(QObject):
        def eventFilter(self, obj, event):  # noqa: N802, ANN001
            if event.type() == QEvent.Type.Paint:
                text_painted.append(time.perf_counter())
            return False

    text_spy = TextPaints()
    window.browser.detail.editor.content.viewport().installEventFilter(text_spy)
    window.browser.follow(small.id)
    await until(lambda: window.browser.detail.memory is not None and window.browser.detail.memory.id == small.id)
    await asyncio.sleep(0.5)
    beat.reset()
    started = time.perf_counter()
    window.browser.follow(large.id)
    await until(lambda: window.browser.detail.memory is not None and window.browser.detail.memory.id == large.id
                and text_painted and text_painted[-1] > started)
    shown = text_painted[-1] - started  # to its text painted in the detail pane
    await asyncio.sleep(0.2)  # whatever follows the paint counts as blocking too
    results["big"] = (shown, beat.read(), len(large.content))
    results["peak_rss"] = rss_peak_mb()  # of the session above (the open below reads another file)
    await open_a_file(window, ctx, beat, path, results)
    # Return right after closing: closing the last window quits the loop. Never call
    # QApplication.processEvents() inside this running task: it steps other tasks, which then fail
    # ("Cannot enter into task") and stay pending forever, and the runner's shutdown hangs on them.
    window.close()
    ctx.close()


def run(memories: int) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    use_bytecode("ora_desktop.gui.main_window")  # as installed: the launch does not time Python's compiler
    import qasync

    import ora_desktop.gui  # noqa: F401  (PySide6 before qasync)
    from ora_desktop.gui.app import make_application

    path = bench_file(memories)
    edit_path = fresh_copy(path, "gui-edit.site.db")
    where = "(superseded_by IS NULL OR superseded_by = '')"
    # Warm the OS file cache for both sides alike (another benchmark may just have evicted it).
    raw(path, f"SELECT count(*), sum(length(content)) FROM memories WHERE {where}", many=False)
    make_application()
    results: dict = {}
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        runner.run(scenario(path, edit_path, results))

    raw_first = raw(path, f"SELECT * FROM memories WHERE {where} ORDER BY julianday(created_at) DESC, rowid DESC "
                          "LIMIT 100")
    raw_sort_first = raw(path, f"SELECT * FROM memories WHERE {where} ORDER BY health_score DESC, rowid DESC "
                               "LIMIT 100")
    raw_sort = raw(path, f"SELECT rowid FROM memories WHERE {where} ORDER BY health_score DESC, rowid DESC")
    raw_search = raw(path, f"SELECT rowid FROM memories WHERE {where} AND content LIKE '%deploy%' LIMIT 2000")
    edit, edit_block, edit_reads, edit_rows, edit_id = results["edit"]
    raw_edit = raw_update(edit_path, edit_id)
    launch, launch_block = results["launch"]
    sort, sort_block, sort_all = results["sort"]
    search, search_block, search_worst, hits = results["search"]
    peak, scroll_block, scroll_time, cached = results["scroll"]
    report(f"GUI on {results['rows']:,} listed memories (offscreen)", [
        Row("launch to first rows painted", launch, raw_first, "< 1 s"),
        Row("  longest GUI-thread block", launch_block, None, "< 50 ms"),
        Row("sort by health to first rows painted", sort, raw_sort_first, ""),
        Row("  every row key in the new order", sort_all, raw_sort, ""),
        Row("  longest GUI-thread block", sort_block, None, "< 50 ms"),
        Row("search as you type, per keystroke (median)", search, raw_search, ""),
        Row(f"  worst keystroke ({hits:,} hits for 'deploy')", search_worst, None, ""),
        Row("  to every hit listed (median)", results["search_all"][0], None, ""),
        Row("  to every hit listed (worst keystroke)", results["search_all"][1], None, ""),
        Row("  longest GUI-thread block", search_block, None, "< 50 ms"),
        Row("peak RSS scrolling first row to last", peak, None, "< 400 MB", unit="MB"),
        Row(f"  rows held in the cache at the end: {cached:,}", scroll_time, None, "(time to scroll)", unit="s"),
        Row("  longest GUI-thread block", scroll_block, None, "< 50 ms"),
        Row("  one table repaint: GUI-thread CPU (median of 20)", results["paint"], None, ""),
        Row("importance edit: Save to the row repainted", edit, raw_edit, ""),
        Row("  times every row key was read again", edit_reads, None, "0", unit="reads"),
        Row(f"  longest GUI-thread block ({edit_rows} row repainted)", edit_block, None, "< 20 ms"),
        Row("  the same edit once the search index is built: Save to repainted", results["edit_indexed"][0],
            raw_edit, ""),
        Row("    times every row key was read again", results["edit_indexed"][2], None, "0", unit="reads"),
        Row("    longest GUI-thread block", results["edit_indexed"][1], None, "< 20 ms"),
        Row(f"select a {results['big'][2] / 1e6:.1f} MB memory, to its text painted", results["big"][0], None, ""),
        Row("  longest GUI-thread block", results["big"][1], None, "< 100 ms"),
        Row("peak RSS of the whole session", results["peak_rss"], None, "", unit="MB"),
        Row("open a file: GUI-thread block", results["open"][1], raw_open(path), "< 50 ms"),
        Row("  to its first rows painted", results["open"][0], None, ""),
        Row("  switching back to a file open already: GUI-thread block", results["open_again"][1], None, "< 50 ms"),
    ])
    print("  (raw sqlite: first 100 rows by created_at / by health; every rowid by health; "
          "LIKE '%deploy%' LIMIT 2000; one UPDATE of importance by id, committed; to open a file: "
          "connect and the schema check's reads, median of 5)")
    print("  (per keystroke d, de, dep, depl, deplo, deploy, to first rows painted: "
          + ", ".join(f"{t * 1000:.0f} ms" for t in results["keystrokes"]) + "; to every hit listed: "
          + ", ".join(f"{t * 1000:.0f} ms" for t in results["keystrokes_all"]) + ")")
