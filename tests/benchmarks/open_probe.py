"""What the GUI thread does while a file opens: heartbeat gaps and a profile of the GUI thread.

``python -m tests.benchmarks.open_probe [MEMORIES]`` starts the window on the benchmark file as
``bench_gui`` does, waits for its panels, then measures three ways of opening a file:

* ``open_file (cold)``: ``window.open_file`` of a scratch copy never opened in this session;
* ``sidebar (warm)``: selecting the first file again in the sidebar (its store is cached);
* ``sidebar (cold)``: selecting the copy in the sidebar after its cached store was dropped.

For each it prints every gap of over 30 ms between two ticks of a 5 ms heartbeat, with the GUI
thread's own CPU time in it (wall time well above it is time spent waiting for the GIL or a
core), the worker jobs that overlapped it, and where the GUI thread was: its stack sampled every
2 ms by another thread (the deepest ``ora_desktop`` frames, by how many samples they got). Then
each event-loop callback of over 5 ms. ``--ab-nice=N`` then switches files N more times with the
other threads at nice 0 and 10 alternately (``--busy``: while the copy's search index is rebuilt
beside it). With ``--profile``, the GUI thread's cProfile too (it sees
only the thread that enables it; it slows Python down about twice, so the gaps grow): the
functions of ``ora_desktop`` and the sqlite3 and Qt calls with the most cumulative time.
Run it under the shared bench lock.
"""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from .bench_gui import Heartbeat, bench_settings, until
from .common import bench_file, fresh_copy, log_jobs, use_bytecode

#: (start, end, GUI-thread CPU seconds) of each heartbeat gap over 30 ms in the current phase
gaps: list[tuple[float, float, float]] = []
#: (seconds, what) of each event-loop callback over 5 ms in the current phase
callbacks: list[tuple[float, str]] = []
#: (name, start, end) of each job run on a thread pool
jobs: list[tuple[str, float, float]] = []
#: (time, where) of each sample of the GUI thread's stack
samples: list[tuple[float, str]] = []
#: seconds of each store opened on the GUI thread (``AppContext.store_for`` → ``open_store``)
gui_opens: list[float] = []
PROFILE = "--profile" in sys.argv


def _watch_opens() -> None:
    from ora_desktop.gui import context

    opener = context.open_store

    def timed(*args, **kw):  # noqa: ANN002, ANN003, ANN202
        started = time.perf_counter()
        try:
            return opener(*args, **kw)
        finally:
            if threading.current_thread() is threading.main_thread():
                gui_opens.append(time.perf_counter() - started)

    context.open_store = timed


def _where(frame) -> str:  # noqa: ANN001
    """The three deepest frames of ``ora_desktop`` on the stack (deepest last), or the leaf."""
    ours, leaf = [], None
    while frame is not None:
        code = frame.f_code
        if leaf is None:
            leaf = f"{Path(code.co_filename).name}:{code.co_name}"
        if "ora_desktop" in code.co_filename and len(ours) < 3:
            ours.append(f"{code.co_filename.split('ora_desktop/')[-1]}:{code.co_name}")
        frame = frame.f_back
    return " < ".join(ours) + (f" [{leaf}]" if leaf else "") if ours else (leaf or "?")


def _sampler(stop: threading.Event) -> None:
    main = threading.main_thread().ident
    while not stop.wait(0.002):
        frame = sys._current_frames().get(main)  # noqa: SLF001
        if frame is not None:
            samples.append((time.perf_counter(), _where(frame)))


def _watch_gaps(beat: Heartbeat) -> None:
    tick = beat._tick  # noqa: SLF001
    cpu = [time.thread_time()]

    def gap_tick() -> None:
        now, used = time.perf_counter(), time.thread_time()
        if now - beat.last > 0.03:
            gaps.append((beat.last, now, used - cpu[0]))
        cpu[0] = used
        tick()

    beat.timer.timeout.disconnect()
    beat.timer.timeout.connect(gap_tick)


def _callback_name(handle: asyncio.Handle) -> str:
    """The coroutine a handle steps (``module:qualname``), else the handle's callback."""
    callback = handle._callback  # noqa: SLF001
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        code = getattr(coro, "cr_code", None)
        if code is not None:
            return f"task {code.co_filename.split('ora_desktop/')[-1]}:{code.co_qualname}"
    return repr(handle)[:160]


def _watch_callbacks() -> None:
    """Time every asyncio callback run on the loop (qasync runs them on the GUI thread)."""
    handle_run = asyncio.events.Handle._run  # noqa: SLF001

    def timed(self) -> None:  # noqa: ANN001
        started = time.perf_counter()
        try:
            handle_run(self)
        finally:
            took = time.perf_counter() - started
            if took > 0.005:
                callbacks.append((took, _callback_name(self)))

    asyncio.events.Handle._run = timed  # noqa: SLF001


def _renice_others(nice: int) -> None:
    """Set the nice value of every thread of this process but the GUI thread (Linux)."""
    main = threading.main_thread().native_id
    for task in os.listdir("/proc/self/task"):
        if int(task) != main:
            try:
                os.setpriority(os.PRIO_PROCESS, int(task), nice)
            except OSError:  # the thread ended meanwhile
                pass


async def _phase(name: str, beat: Heartbeat, action, done) -> tuple[float, float]:  # noqa: ANN001
    """Run ``action()``, wait for ``done()`` and 1.5 s more, profiling the GUI thread; print it."""
    await asyncio.sleep(1.0)
    gaps.clear()
    callbacks.clear()
    samples.clear()
    gui_opens.clear()
    profile = cProfile.Profile()
    stop = threading.Event()
    sampler = threading.Thread(target=_sampler, args=(stop,), daemon=True)
    sampler.start()
    beat.reset()
    started = time.perf_counter()
    if PROFILE:
        profile.enable()
    cpu = time.thread_time()
    action()
    action_cpu, action_wall = time.thread_time() - cpu, time.perf_counter() - started
    await until(done)
    shown = time.perf_counter() - started
    await asyncio.sleep(1.5)
    profile.disable()
    worst = beat.read()
    stop.set()
    sampler.join()
    print(f"\n== {name}: shown in {1000 * shown:.0f} ms; longest GUI-thread block {1000 * worst:.1f} ms; "
          f"the call itself {1000 * action_wall:.1f} ms (GUI CPU {1000 * action_cpu:.1f} ms)")
    print(f"  stores opened on the GUI thread: {len(gui_opens)}"
          + (f" ({', '.join(f'{1000 * t:.1f} ms' for t in gui_opens)})" if gui_opens else ""))
    first = Counter(w for t, w in samples if t <= started + action_wall)
    for spot, count in first.most_common(6):
        print(f"      in the call: {count:3d} x {spot}")
    for start, end, cpu in gaps:
        print(f"  gap {1000 * (start - started):7.1f} ms +{1000 * (end - start):6.1f} ms "
              f"(GUI CPU {1000 * cpu:5.1f} ms)")
        for job, js, je in jobs:
            if js <= end and je >= start:
                print(f"      job {job} [{1000 * (js - started):.0f}-{1000 * (je - started):.0f} ms]")
        where = Counter(w for t, w in samples if start <= t <= end)
        for spot, count in where.most_common(6):
            print(f"      {count:3d} x {spot}")
    for took, what in sorted(callbacks, reverse=True)[:12]:
        print(f"  callback {1000 * took:6.1f} ms  {what}")
    if not PROFILE:
        return shown, worst
    stats = pstats.Stats(profile)
    rows = []
    for (file, line, func), (_cc, calls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "ora_desktop" in file or func.startswith("<method '") and ("sqlite3" in func or "Q" in func) \
                or func.startswith("<built-in method") and "sqlite3" in func:
            where = file.split("ora_desktop/")[-1] if "ora_desktop" in file else ""
            rows.append((cumtime, tottime, calls, f"{where}:{line}({func})" if where else func))
    print("  GUI thread, cumulative ms (own ms, calls):")
    for cumtime, tottime, calls, label in sorted(rows, reverse=True)[:30]:
        if cumtime < 0.003:
            break
        print(f"    {1000 * cumtime:7.1f} ({1000 * tottime:6.1f}, {calls:5d})  {label}")
    return shown, worst


def _evict(path: Path) -> None:
    """Drop ``path``'s pages from the OS file cache (as after a reboot), that file's only."""
    for name in (str(path), f"{path}-wal", f"{path}-shm"):
        if os.path.exists(name):
            fd = os.open(name, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


async def scenario(first: Path, other: Path) -> None:

    from ora_desktop.core import open_store
    from ora_desktop.gui.app import build_window_async, parse_args
    from ora_desktop.gui.context import resolved
    from ora_desktop.views.first_rows import FirstRows

    home, settings = bench_settings("ora-open-probe-")
    ctx, window = await build_window_async(parse_args(["--home", str(home), str(first)]), settings,
                                           FirstRows(open_store, first))
    window.resize(1400, 900)
    window.show()
    await window.start()  # the panels are added once the first rows are painted
    model = window.browser.model
    await until(lambda: not model.is_loading() and model.rowCount() > 0)
    beat = Heartbeat()
    _watch_gaps(beat)
    _watch_callbacks()
    log_jobs(jobs)
    _watch_opens()

    def shown(path: Path):  # noqa: ANN202
        # resolved(): remembered, so the probe's polling makes no system call on the GUI thread
        return lambda: (window.browser.store is not None and resolved(window.browser.store.path) == path
                        and not model.is_loading() and model.rowCount() > 0 and model.memory_at(0) is not None)

    await _phase("open_file (cold)", beat, lambda: window.open_file(other), shown(other))
    await until(lambda: window.sidebar.item_for(other) is not None)
    await _phase("sidebar (warm)", beat, lambda: window.sidebar.select_path(first), shown(first))
    ctx.forget_store(other)
    await _phase("sidebar (cold)", beat, lambda: window.sidebar.select_path(other), shown(other))
    await _phase("sidebar (warm, back)", beat, lambda: window.sidebar.select_path(first), shown(first))
    ctx.forget_store(other)
    _evict(other)
    await _phase("sidebar (cold, file out of the OS cache)", beat, lambda: window.sidebar.select_path(other),
                 shown(other))
    rounds = int(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--ab-nice=")), "0"))
    worst: dict[tuple[str, int], list[float]] = {}
    build = None
    for i in range(2 * rounds):  # the other threads at nice 0 and 10, alternately
        nice = 10 * (i % 2)
        if "--busy" in sys.argv and (build is None or build.state is not None):
            from ora_desktop.core.search import BuildTask  # a rebuild of the copy's index beside it

            build = BuildTask(other, rebuild=True)
        _renice_others(nice)
        _, block = await _phase(f"sidebar (warm) [others at nice {nice}]", beat,
                                lambda: window.sidebar.select_path(first), shown(first))
        worst.setdefault(("warm", nice), []).append(block)
        ctx.forget_store(other)
        _renice_others(nice)
        _, block = await _phase(f"sidebar (cold) [others at nice {nice}]", beat,
                                lambda: window.sidebar.select_path(other), shown(other))
        worst.setdefault(("cold", nice), []).append(block)
    print()
    for (kind, nice), blocks in sorted(worst.items()):
        print(f"sidebar ({kind}), other threads at nice {nice}: longest GUI-thread block "
              + ", ".join(f"{1000 * b:.0f}" for b in blocks) + " ms")
    window.close()
    ctx.close()


def main(memories: int) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    use_bytecode("ora_desktop.gui.main_window")
    import qasync

    import ora_desktop.gui  # noqa: F401  (PySide6 before qasync)
    from ora_desktop.gui.app import make_application

    first = bench_file(memories)
    other = fresh_copy(first, "open-probe.site.db").resolve()
    make_application()
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        runner.run(scenario(first.resolve(), other))


if __name__ == "__main__":
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    main(int(numbers[0]) if numbers else 1_000_000)
