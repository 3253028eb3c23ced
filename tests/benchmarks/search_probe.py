"""What the GUI thread did in each long gap while searching as you type (a probe, not a benchmark).

``python -m tests.benchmarks.search_probe [MEMORIES] [ROUNDS]`` runs the keystroke scenario of
:mod:`bench_search_keystrokes` (``ROUNDS`` times "d" … "deploy" with no gap, then cleared) and
times, on the GUI thread, the table and detail-pane paints and the model and page slots a
keystroke runs. Every heartbeat gap over 30 ms is printed with the timed pieces inside it
(nested pieces are shown indented; what is left is Qt's own work, or waiting for the GIL).
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import time
from pathlib import Path

from .bench_gui import shown_window, until
from .common import DATA, bench_file, log_jobs

T0 = time.perf_counter()
#: ORA_PROBE_FACETS=1: each keystroke waits for its facet counts, as bench_search_keystrokes does.
WAIT_FACETS = bool(os.environ.get("ORA_PROBE_FACETS"))
ARMED = [False]  # profile the next table paint (set when a page of rows arrived)
WHOLE = None  # a cProfile.Profile over the whole of each typed word (ORA_PROBE_PROFILE=all)
PROFILE = None  # a cProfile.Profile to run over the table's paints (ORA_PROBE_PROFILE=1)
spans: list[tuple[float, float, str, int]] = []  # start, end, name, depth
paint_cpu: list[tuple[float, float, float]] = []  # start, end, GUI-thread CPU of each table paint
jobs: list[tuple[str, float, float]] = []  # worker jobs: name, start, end
collections: list[tuple[float, float, int]] = []  # garbage collections: start, end, generation
_gc_started = [0.0]


def _gc(phase: str, info: dict) -> None:
    if phase == "start":
        _gc_started[0] = time.perf_counter()
    else:
        collections.append((_gc_started[0], time.perf_counter(), info["generation"]))
depth = [0]


def timed(name: str, fn):  # noqa: ANN001, ANN201
    @functools.wraps(fn)
    def run(*a, **k):  # noqa: ANN002, ANN003, ANN202
        started = time.perf_counter()
        depth[0] += 1
        try:
            return fn(*a, **k)
        finally:
            depth[0] -= 1
            spans.append((started, time.perf_counter(), name, depth[0]))
    return run


def arm(fn):  # noqa: ANN001, ANN201
    @functools.wraps(fn)
    def run(*a, **k):  # noqa: ANN002, ANN003, ANN202
        ARMED[0] = True
        return fn(*a, **k)
    return run


def patch(cls, names: list[str], prefix: str) -> None:  # noqa: ANN001
    for name in names:
        setattr(cls, name, timed(f"{prefix}.{name}", getattr(cls, name)))


async def scenario(path: Path, rounds: int, gaps: list) -> None:
    from PySide6.QtCore import QEvent, QObject, QTimer

    from ora_desktop.core.search import ensure_index

    ctx, window = await shown_window("ora-probe-home-")
    window.open_file(path)
    model = window.browser.model
    await until(lambda: model.rowCount() > 0 and not model.is_loading(), timeout=300)
    await ctx.run(ensure_index, path)
    table = window.browser.table
    editor_view = window.browser.detail.editor

    class PaintTimer(QObject):
        """Delivers the paint itself, timed (and returns True: delivered once)."""

        def __init__(self, deliver, name: str, kind: QEvent.Type = QEvent.Type.Paint) -> None:  # noqa: ANN001
            super().__init__()
            self.deliver, self.name, self.busy, self.kind = deliver, name, False, kind

        def eventFilter(self, obj, event):  # noqa: N802, ANN001
            if event.type() != self.kind or self.busy:
                return False
            self.busy = True
            started, cpu = time.perf_counter(), time.thread_time()
            depth[0] += 1
            try:
                if PROFILE is not None and self.name == "paint table" and ARMED[0]:
                    ARMED[0] = False
                    PROFILE.enable()
                    try:
                        self.deliver(event)
                    finally:
                        PROFILE.disable()
                else:
                    self.deliver(event)
            finally:
                depth[0] -= 1
                self.busy = False
                spans.append((started, time.perf_counter(), self.name, depth[0]))
                if self.name == "paint table":
                    paint_cpu.append((started, time.perf_counter(), time.thread_time() - cpu))
            return True

    filters = [PaintTimer(table.viewportEvent, "paint table"),
               # the window's backing store: every dirty widget painted, then flushed
               PaintTimer(window.event, "window update", QEvent.Type.UpdateRequest)]
    table.viewport().installEventFilter(filters[0])
    window.installEventFilter(filters[1])
    for widget in editor_view.findChildren(QObject):
        if hasattr(widget, "viewportEvent") and hasattr(widget, "viewport"):
            f = PaintTimer(widget.viewportEvent, f"paint {type(widget).__name__}")
            widget.viewport().installEventFilter(f)
            filters.append(f)

    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        if now - last[0] > 0.030:
            gaps.append((last[0], now))
        last[0] = now

    beat = QTimer(interval=5)
    beat.timeout.connect(tick)
    controller = window.browser.controller
    answers: list = []
    controller.answered.connect(answers.append)
    counted: list = []
    controller.facets_ready.connect(counted.append)

    def first_row_shown() -> bool:
        row = max(0, table.rowAt(0))
        return model.rowCount() == 0 or model.memory_at(row) is not None

    field = window.browser.search.field
    word = "deploy"
    for _ in range(rounds):
        field.blockSignals(True)
        field.setText("warmup")
        field.blockSignals(False)
        controller.set_text("warmup", immediate=True)
        await until(lambda: answers and answers[-1].request.text == "warmup" and first_row_shown(), timeout=300)
        await asyncio.sleep(1.0)
        last[0] = time.perf_counter()
        beat.start()
        if WHOLE is not None:
            WHOLE.enable()
        for i in range(1, len(word) + 1):
            text = word[:i]
            field.blockSignals(True)
            field.setText(text)
            field.blockSignals(False)
            controller.set_text(text, immediate=True)
            await until(lambda text=text: answers and answers[-1].request.text == text and first_row_shown(),
                        timeout=300)
            if WAIT_FACETS:  # as bench_search_keystrokes does: the counts shown before the next key
                await until(lambda: bool(counted), timeout=60)
                counted.clear()
        await asyncio.sleep(0.6)
        if WHOLE is not None:
            WHOLE.disable()
        beat.stop()
    window.close()
    ctx.close()


def main() -> None:
    memories = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["XDG_CACHE_HOME"] = str(DATA / "cache")
    import qasync

    import ora_desktop.gui  # noqa: F401  (PySide6 before qasync)
    from ora_desktop.core.search import ensure_index
    from ora_desktop.gui.app import make_application
    from ora_desktop.gui.detail.view import DetailPane
    from ora_desktop.gui.memories import delegates
    from ora_desktop.gui.memories.model import MemoryTableModel
    from ora_desktop.gui.memories.page import MemoryBrowser
    from ora_desktop.gui.memories.view import MemoryTable
    from ora_desktop.gui.search.controller import SearchController

    patch(MemoryTableModel, ["_replace_keys", "_finish", "_emit_rows", "show_keys"], "model")
    patch(MemoryTable, ["_data_changed", "_restore_current", "_remember_current", "_current_row_changed"], "table")
    patch(MemoryBrowser, ["_loaded", "_current_memory", "_highlight"], "page")
    patch(SearchController, ["_after_load", "apply"], "controller")
    from ora_desktop.gui.search.widgets import FacetPanel

    patch(FacetPanel, ["show_counts"], "facets")
    patch(DetailPane, ["show_memory"], "detail")
    patch(delegates.SpanCache, ["fill"], "spans")
    patch(delegates.HighlightDelegate, ["paint"], "cell.highlight")
    patch(delegates.PaddedDelegate, ["paint"], "cell.padded")
    global PROFILE, WHOLE
    log_jobs(jobs)
    import gc

    gc.callbacks.append(_gc)
    if os.environ.get("ORA_PROBE_PROFILE") == "all":
        import cProfile

        WHOLE = cProfile.Profile()
    elif os.environ.get("ORA_PROBE_PROFILE"):
        import cProfile

        PROFILE = cProfile.Profile()
    if PROFILE is not None:
        MemoryTableModel._emit_rows = arm(MemoryTableModel._emit_rows)
    path = bench_file(memories)
    ensure_index(path)
    make_application()
    gaps: list = []
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        runner.run(scenario(path, rounds, gaps))
    if os.environ.get("ORA_PROBE_PAINTS"):
        print("every table paint (s from start: wall / GUI CPU ms):")
        print("  " + ", ".join(f"{s - T0:.2f}: {1000 * (e - s):.0f}/{1000 * c:.0f}" for s, e, c in paint_cpu))
    if PROFILE is not None or WHOLE is not None:
        import pstats

        pstats.Stats(PROFILE or WHOLE).sort_stats("tottime").print_stats(35)
    for start, end in gaps:
        print(f"gap {1000 * (end - start):.1f} ms at {start - T0:.2f}s")
        inside: dict[tuple[str, int], list[float]] = {}
        for s, e, name, d in spans:
            if s >= start - 0.001 and e <= end + 0.001:
                inside.setdefault((name, d), []).append(1000 * (e - s))
        for (name, d), times in sorted(inside.items(), key=lambda kv: kv[0][1]):
            print(f"   {'  ' * d}{name}: {sum(times):.1f} ms in {len(times)}")
        for s, e, cpu in paint_cpu:
            if s >= start - 0.001 and e <= end + 0.001:
                print(f"   table paint {1000 * (e - s):.1f} ms wall, {1000 * cpu:.1f} ms GUI-thread CPU")
        for s, e, generation in collections:
            if s <= end and e >= start and e - s > 0.001:
                print(f"   gc gen{generation} {1000 * (e - s):.1f} ms")
        for name, s, e in jobs:
            if s <= end and e >= start:
                print(f"   job {name} [{s - start:+.3f}..{e - start:+.3f} s from the gap's start]")


if __name__ == "__main__":
    main()
