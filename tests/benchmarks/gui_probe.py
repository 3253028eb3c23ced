"""What ran beside the GUI thread when it blocked: ``bench_gui`` with every worker job logged.

``python -m tests.benchmarks.gui_probe [MEMORIES]`` runs :mod:`bench_gui` unchanged, and
records every job run on a thread pool (the window's workers), every garbage collection over
3 ms, and each gap of over 30 ms between two ticks of the bench's heartbeat. It then prints each
gap with its phase (launch, sort, search, scroll, edits, big memory: each lasts until the next
starts, so what settles after it counts in it) and the jobs and
collections that overlapped it. A gap with nothing beside it is the GUI thread's own work (or
another process taking the core). Run it under the shared bench lock, like a benchmark.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import gc
import sys
import threading
import time

from . import bench_gui

PHASES = ("launch", "sort", "search", "scroll", "edit", "edit once indexed", "big memory", "open a file",
          "open again")
T0 = time.perf_counter()
jobs: list[tuple[str, float, float]] = []  # (name, start, end), seconds since T0
collections: list[tuple[float, float, int]] = []  # (start, end, generation) on any thread
#: (start, end, CPU time the GUI thread used in it): wall time well above the CPU is time the
#: GUI thread waited (for the GIL, or for a core another thread or process held).
gaps: list[tuple[float, float, float]] = []
gui_cpu = [0.0]  # the GUI thread's CPU time at the last heartbeat tick
phases: list[float] = []


def _name(fn: object) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(fn, "__qualname__", repr(fn))


def _submit(submit):  # noqa: ANN001, ANN202
    def logged(self, fn, *args, **kw):  # noqa: ANN001, ANN202
        name = _name(fn)

        def run(*a, **k):  # noqa: ANN002, ANN003, ANN202
            started = time.perf_counter() - T0
            try:
                return fn(*a, **k)
            finally:
                jobs.append((name, started, time.perf_counter() - T0))
        return submit(self, run, *args, **kw)
    return logged


_gc_started: dict[int, float] = {}


def _gc(phase: str, info: dict) -> None:
    if phase == "start":
        _gc_started[threading.get_ident()] = time.perf_counter() - T0
    elif (started := _gc_started.pop(threading.get_ident(), None)) is not None:
        collections.append((started, time.perf_counter() - T0, info["generation"]))


def _heartbeat() -> None:
    beat = bench_gui.Heartbeat
    reset, tick = beat.reset, beat._tick  # noqa: SLF001

    def phase_reset(self) -> None:  # noqa: ANN001
        phases.append(time.perf_counter() - T0)
        reset(self)
        gui_cpu[0] = time.thread_time()

    def gap_tick(self) -> None:  # noqa: ANN001
        now, cpu = time.perf_counter(), time.thread_time()
        if now - self.last > 0.03:
            gaps.append((self.last - T0, now - T0, cpu - gui_cpu[0]))
        gui_cpu[0] = cpu
        tick(self)

    beat.reset, beat._tick = phase_reset, gap_tick  # noqa: SLF001


def main(memories: int) -> None:
    cf.ThreadPoolExecutor.submit = _submit(cf.ThreadPoolExecutor.submit)
    gc.callbacks.append(_gc)
    _heartbeat()
    try:
        bench_gui.run(memories)
    finally:
        print("\nGUI-thread gaps over 30 ms, the GUI thread's own CPU in each, and what ran beside them "
              "(seconds from the start):")
        for start, end, cpu in gaps:
            phase = max((i for i, t in enumerate(phases) if t <= start), default=None)
            print(f"  {start:8.3f}-{end:.3f} {1000 * (end - start):6.1f} ms (GUI CPU {1000 * cpu:5.1f} ms)  "
                  f"{PHASES[phase] if phase is not None and phase < len(PHASES) else '-'}")
            for name, js, je in jobs:
                if js <= end and je >= start:
                    print(f"      job {name} [{js:.3f}-{je:.3f}]")
            for gs, ge, generation in collections:
                if gs <= end and ge >= start and ge - gs > 0.003:
                    print(f"      gc gen{generation} [{gs:.3f}-{ge:.3f}]")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
