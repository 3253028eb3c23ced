"""The window idle while an agent writes: its CPU, the time to each new memory shown, GUI blocks.

The real window (offscreen) opens a 1,000,000-memory file whose search index is built and is
left idle; then an agent process commits one memory per second for 60 s with plain ``sqlite3``,
then ten a second. Measured in the window's process:

* CPU above idle — the process's CPU time (every thread) per second of the run, less the same
  over the idle minute before it, as a share of one core;
* the delay from each agent COMMIT to its memory in the table (the newest-first list: on top);
* the longest GUI-thread block (a 5 ms QTimer heartbeat);
* how many times every row key was read again, and why the change feed fell back to a reload.

The agent writes into its own copy of the benchmark file (``feed-N.site.db``, made once with its
index; each run adds its memories to it). ``ORA_FEED_SECONDS`` shortens the runs, and
``python -m tests.benchmarks.bench_feed --before`` runs the same with a commit by another program
heard as today's ``Change.reload()`` (no ids), for the baseline column.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .bench_gui import Heartbeat, bench_settings, until
from .common import DATA, Row, bench_file, report, use_bytecode

SECONDS = float(os.environ.get("ORA_FEED_SECONDS", "60"))
IDLE_SECONDS = float(os.environ.get("ORA_FEED_IDLE", "20"))

AGENT = """
import sqlite3, sys, time
path, rate, seconds, log = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
conn = sqlite3.connect(path, timeout=30, isolation_level=None)
out = open(log, "a", buffering=1)
start, n = time.time(), 0
while time.time() - start < seconds:
    time.sleep(max(0.0, start + n / rate - time.time()))
    mid = f"feed-bench-{int(start)}-{n}"
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                 "VALUES (?, ?, 'fact', 5, datetime('now'), datetime('now'))",
                 (mid, f"an agent noted step {n} of its deploy while working"))
    conn.execute("COMMIT")
    out.write(f"{mid} {time.time()}\\n")
    n += 1
"""


def feed_file(memories: int) -> Path:
    """The agent's file: a copy of the benchmark file with its search index built (made once)."""
    from ora_desktop.core.search import ensure_index

    target = DATA / f"feed-{memories}.site.db"
    if not target.exists():
        tmp = target.with_suffix(".tmp")
        shutil.copyfile(bench_file(memories), tmp)
        os.replace(tmp, target)
    started = time.perf_counter()
    ensure_index(target)
    print(f"  (search index of {target.name} ready in {time.perf_counter() - started:.1f} s)")
    return target


class BusyBeat(Heartbeat):
    """The heartbeat, also noting the GUI thread's own CPU time within its longest gap: on a
    busy machine a gap can be the process waiting for a core, not the window's work."""

    def reset(self) -> None:
        self.cpu = time.thread_time()
        self.worst_cpu = 0.0
        super().reset()

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        if now - self.last > self.max_gap:
            self.worst_cpu = cpu - self.cpu
        self.cpu = cpu
        super()._tick()


def cpu_seconds() -> float:
    """CPU time of this process, every thread, user and system."""
    times = os.times()
    return times.user + times.system


def heard_as_before() -> None:
    """Today's behaviour: a commit by another program is a ``Change.reload()`` (no ids)."""
    from ora_desktop.core import Change, Store

    def external_change(self: Store) -> Change | None:
        return Change.reload() if self.changed_externally() else None

    Store.external_change = external_change


async def scenario(path: Path, results: dict) -> None:
    from ora_desktop.core import open_store
    from ora_desktop.gui.app import build_window_async, parse_args
    from ora_desktop.views.first_rows import FirstRows

    beat = BusyBeat()
    home, settings = bench_settings("ora-bench-feed-")
    first_rows = FirstRows(open_store, path)
    ctx, window = await build_window_async(parse_args(["--home", str(home), str(path)]), settings, first_rows)
    window.resize(1400, 900)
    window.show()
    window.start()
    model = window.browser.model
    await until(lambda: model.rowCount() > 0 and not model.is_loading())
    await asyncio.sleep(10.0)  # the panels, facets and the rest of opening settle
    store = window.browser.store
    top = max(model.keys[:200]) if len(model.keys) else 0
    seen: dict[int, float] = {}

    async def watch(seconds: float) -> None:
        """Note when each new row (a rowid past ``top``) is first listed on top, polling the keys."""
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            now = time.time()
            for rowid in model.keys[:50]:
                if rowid > top and rowid not in seen:
                    seen[rowid] = now
            await asyncio.sleep(0.02)

    import logging

    class Reasons(logging.Handler):
        """Why the table read its keys again (the model logs each reason at DEBUG)."""

        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("reloading the row keys"):
                table_reasons.append(record.getMessage().split(": ", 1)[-1])

    table_reasons: list[str] = []
    gui_log = logging.getLogger("ora_desktop.gui")
    gui_log.addHandler(Reasons(logging.DEBUG))
    gui_log.setLevel(logging.DEBUG)
    beat.reset()
    cpu, wall = cpu_seconds(), time.perf_counter()
    await watch(IDLE_SECONDS)
    idle = (cpu_seconds() - cpu) / (time.perf_counter() - wall)
    results["idle"] = (idle, (beat.read(), beat.worst_cpu))
    for rate in (1.0, 10.0):
        log = Path(tempfile.mkstemp(prefix="ora-feed-agent-")[1])
        reads, reasons = model.key_reads, []
        table_reasons.clear()
        real_poll = store.feed.poll

        def poll(real=real_poll, reasons=reasons):  # noqa: ANN001, ANN202
            change = real()
            if change is not None and not change:
                reasons.append(store.feed.last_reason)
            return change

        store.feed.poll = poll
        # Started before the clocks: forking this process blocks its GUI thread for tens of ms.
        agent = subprocess.Popen([sys.executable, "-c", AGENT, str(path), str(rate), str(SECONDS), str(log)])
        beat.reset()
        cpu, wall = cpu_seconds(), time.perf_counter()
        await watch(SECONDS + 0.2)
        while agent.poll() is None:
            await watch(0.1)
        used = (cpu_seconds() - cpu) / (time.perf_counter() - wall)
        block = (beat.read(), beat.worst_cpu)
        await watch(3.0)  # the last commits appear
        store.feed.poll = real_poll
        committed = [line.split() for line in log.read_text().splitlines()]
        log.unlink()
        rowids = dict(await ctx.run(store._fetch_all,  # noqa: SLF001 (a benchmark reads what it checks)
                                    "SELECT id, rowid FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                                    [__import__("json").dumps([mid for mid, _ in committed])]))
        delays = [seen[rowids[mid]] - float(at) for mid, at in committed if rowids.get(mid) in seen]
        missing = sum(1 for mid, _ in committed if rowids.get(mid) not in seen)
        results[rate] = (used - idle, used, delays, missing, len(committed), block, model.key_reads - reads,
                         reasons, list(table_reasons))


def run(memories: int, before: bool = False) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    use_bytecode("ora_desktop.gui.main_window")
    import qasync

    import ora_desktop.gui  # noqa: F401  (PySide6 before qasync)
    from ora_desktop.gui.app import make_application

    path = feed_file(memories)
    if before:
        heard_as_before()
    make_application()
    results: dict = {}
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        runner.run(scenario(path, results))
    idle, idle_block = results["idle"]
    rows = [Row(f"window idle: CPU, share of a core ({IDLE_SECONDS:.0f} s)", idle * 100, None, "", unit="%"),
            Row("  longest GUI-thread block", idle_block[0], None, "< 50 ms"),
            Row("    the GUI thread's own CPU in it", idle_block[1], None, "")]
    for rate, target in ((1.0, "<= 5 %"), (10.0, "<= 15 %")):
        above, used, delays, missing, committed, block, reads, reasons, table_reasons = results[rate]
        delays.sort()
        worst = delays[-1] if delays else float("nan")
        rows += [
            Row(f"agent {rate:.0f}/s for {SECONDS:.0f} s: CPU above idle", above * 100, None, target, unit="%"),
            Row(f"  new memory shown: median ({len(delays)} of {committed})",
                delays[len(delays) // 2] if delays else float("nan"), None, ""),
            Row("  new memory shown: slowest", worst, None, "<= 1.5 s"),
            Row("  memories never shown on top", missing, None, "0", unit="memories"),
            Row("  longest GUI-thread block", block[0], None, "< 50 ms"),
            Row("    the GUI thread's own CPU in it", block[1], None, ""),
            Row("  times every row key was read again", reads, None, "", unit="reads"),
        ]
        if reasons:
            print(f"  ({rate:.0f}/s: the feed reloaded {len(reasons)} times: {sorted(set(reasons))})")
        if table_reasons:
            print(f"  ({rate:.0f}/s: the table read its keys again because: {sorted(set(table_reasons))})")
    report(f"The window while an agent writes ({memories:,} memories{', heard as before' if before else ''})", rows)


if __name__ == "__main__":
    from .common import MEMORIES

    run(int(next((a for a in sys.argv[1:] if a.isdigit()), MEMORIES)), before="--before" in sys.argv)
