"""Shared benchmark helpers: the 1,000,000-memory file, timing, and the ratio table.

Every benchmark prints the project's figure beside raw SQLite doing the same work in the
same run, and the ratio (ours / raw). Run them all with ``make bench``; one with
``make bench ARGS=search``; a smaller file with ``make bench ARGS="--memories 100000"``.
"""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("ORA_BENCH_DIR", ROOT / "bench-data"))
MEMORIES = int(os.environ.get("ORA_BENCH_MEMORIES", "1000000"))
#: Python's compiled bytecode for the benchmarked runs (a mirror of the source paths).
PYCACHE = DATA / "pycache"


def bytecode_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) for a Python that reuses the bytecode it compiled on an
    earlier run, as every installed copy does (pip compiles at install; the bundle ships it).
    Without this, a ``PYTHONDONTWRITEBYTECODE`` environment recompiles the app's ~85 modules at
    every launch (about 0.2 s at start-up, and the GIL held for each module's compile)."""
    env = dict(os.environ if env is None else env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def use_bytecode(*modules: str) -> None:
    """Compile ``modules`` and all they import in a throwaway process (:func:`bytecode_env`), and
    let this process read that bytecode for what it imports from now on."""
    subprocess.run([sys.executable, "-c", f"import {', '.join(modules)}"], cwd=ROOT, env=bytecode_env(), check=True)
    sys.pycache_prefix = str(PYCACHE)
    sys.dont_write_bytecode = False


def bench_file(memories: int = MEMORIES, name: str = "bench") -> Path:
    """A demo agent file with ``memories`` rows, generated once and reused (bench-data/)."""
    from ora_desktop.core.demo import write_agent

    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{name}-{memories}.site.db"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        if tmp.exists():
            tmp.unlink()
        started = time.perf_counter()
        write_agent(tmp, memories=memories, seed=1)
        os.replace(tmp, path)
        print(f"  (generated {path.name}: {memories:,} memories in {time.perf_counter() - started:.1f} s)")
    return path


def fresh_copy(source: Path, name: str) -> Path:
    """A scratch copy of a benchmark file for benchmarks that write."""
    target = DATA / "scratch" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    shutil.copyfile(source, target)
    return target


def timed(fn: Callable[[], object], repeat: int = 7, warmup: int = 1) -> list[float]:
    """Wall-clock seconds of ``repeat`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def p50(samples: list[float]) -> float:
    return statistics.median(samples)


@dataclass
class Row:
    name: str
    ours: float  # seconds (or a rate when ``unit`` says so)
    raw: float | None
    target: str = ""
    unit: str = "ms"

    def ratio(self) -> float | None:
        if self.raw in (None, 0):
            return None
        if self.unit.endswith("/s"):  # rates: higher is better, ratio is raw/ours
            return self.raw / self.ours if self.ours else None
        return self.ours / self.raw


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "ms":
        return f"{value * 1000:9.2f} ms"
    if unit == "s":
        return f"{value:9.2f} s"
    if unit == "%":
        return f"{value:9.1f} %"
    return f"{value:9,.0f} {unit}"


def report(title: str, rows: list[Row], baseline: str = "raw sqlite") -> None:
    """Print one benchmark's table: ours, the baseline (raw SQLite unless named), ratio, target."""
    print(f"\n## {title}")
    print(f"{'measure':44} {'ora-desktop':>14} {baseline:>14} {'ratio':>7}  target")
    for row in rows:
        ratio = row.ratio()
        print(
            f"{row.name:44} {fmt(row.ours, row.unit):>14} {fmt(row.raw, row.unit):>14} "
            f"{(f'{ratio:6.2f}x' if ratio is not None else '    - '):>7}  {row.target}"
        )


def log_jobs(into: list[tuple[str, float, float]]) -> None:
    """Record every job run on a thread pool (the window's workers) as (name, start, end) in
    ``into``, ``time.perf_counter()`` seconds (the probes print those beside each GUI-thread gap)."""
    import concurrent.futures as cf
    import functools

    submit = cf.ThreadPoolExecutor.submit

    def logged(self, fn, *args, **kw):  # noqa: ANN001, ANN202
        inner = fn
        while isinstance(inner, functools.partial):
            inner = inner.func
        name = getattr(inner, "__qualname__", repr(inner))

        def run(*a, **k):  # noqa: ANN002, ANN003, ANN202
            started = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                into.append((name, started, time.perf_counter()))
        return submit(self, run, *args, **kw)

    cf.ThreadPoolExecutor.submit = logged
