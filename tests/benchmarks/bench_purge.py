"""Purge and recover against raw SQLite doing the bare work on the same file, in one run.

* purge of 1 and of 10,000 live memories on the benchmark file: ours (plan, secure delete of
  rows and trash copies, links kept whole, ``-wal`` truncated, byte check of the file, sidecar
  scrub, backups listed) vs a raw ``DELETE … WHERE id IN (…)`` in one ``BEGIN IMMEDIATE``
  transaction. Each timed run starts from a fresh copy of the file (not timed).
* recover of the ~1 GB file: ours (copy, table read, write of a new seed-schema file) vs the
  ``sqlite3`` command line's ``.recover`` piped into a new database — or, where ``.recover``
  fails (this machine's 3.40.1 fails on every file), ``.dump`` piped into a new database — on an
  intact file, and on a copy with two index root pages overwritten.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

from ora_desktop.core import open_store
from ora_desktop.core.operations.purge import purge
from ora_desktop.core.operations.recover import recover

from .bench_maintenance import gigabyte_file, interleaved, raw_write
from .common import DATA, Row, bench_file, fresh_copy, report

PAGE = 4096


def _ids(source: Path, count: int) -> list[str]:
    """``count`` ids spread evenly over the file (deterministic)."""
    conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        total = conn.execute("SELECT max(rowid) FROM memories").fetchone()[0]
        step = max(1, total // count)
        return [r[0] for r in conn.execute(
            "SELECT id FROM memories WHERE rowid % ? = 0 ORDER BY rowid LIMIT ?", (step, count))]
    finally:
        conn.close()


def _purge(source: Path, count: int, rows: list[Row]) -> None:
    ids = _ids(source, count)
    marks = "(SELECT value FROM json_each('" + str(ids).replace("'", '"') + "'))"

    def ours(path: Path) -> None:
        with open_store(path) as store:
            assert len(purge(store, ids).purged) == len(ids)

    def raw(path: Path) -> None:
        raw_write(path, f"DELETE FROM memories WHERE id IN {marks}")

    t = interleaved(lambda: fresh_copy(source, "purge.site.db"), {"ours": ours, "raw": raw}, repeat=3)
    rows.append(Row(f"purge {len(ids):,} (ours, everything) vs raw DELETE", t["ours"], t["raw"], "(info)", "s"))


def _damaged(big: Path) -> Path:
    target = DATA / "scratch" / "damaged-1gb.site.db"
    shutil.copyfile(big, target)
    conn = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
    roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_master"))
    conn.close()
    with open(target, "r+b") as handle:
        for name in ("idx_memories_type", "idx_memories_health"):
            handle.seek((roots[name] - 1) * PAGE)
            handle.write(b"\xa5" * PAGE)
    return target


def _recover(source: Path, memories: int, rows: list[Row]) -> None:
    big = gigabyte_file(source, memories)
    cli = shutil.which("sqlite3")
    out = DATA / "scratch" / "recovered.site.db"
    raw_out = DATA / "scratch" / "recovered-raw.site.db"

    def clear() -> None:
        for path in (out, raw_out):
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)

    def raw_salvage(path: Path, command: str) -> bool:
        dump = subprocess.Popen([cli, str(path), command], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        load = subprocess.run([cli, str(raw_out)], stdin=dump.stdout, capture_output=True)
        dump.stdout.close()
        return dump.wait() == 0 and load.returncode == 0

    size = big.stat().st_size / 1e9
    baseline = None
    if cli is not None:
        # This machine's sqlite3 3.40.1 ".recover" fails at once ("SQL logic error") even on a sound
        # 100-row file; then the raw salvage a person would try is ".dump" into a new file.
        clear()
        baseline = ".recover" if raw_salvage(source, ".recover") else ".dump"
    for label, path in (("intact", big), ("2 index roots overwritten", _damaged(big))):
        saved: list[int] = []
        variants = {"ours": lambda _p, path=path, saved=saved: saved.append(recover(path, out).memories)}
        if baseline is not None:
            variants["raw"] = lambda _p, path=path: raw_salvage(path, baseline)
        t = interleaved(clear, variants, repeat=1)  # minutes per run on a 1 GB file: once per bench run
        clear()
        name = f"recover {size:.2f} GB, {label} ({saved[0]:,} saved)"
        if "raw" in t:
            rows.append(Row(f"{name} vs {baseline} | sqlite3", t["ours"], t["raw"], "(info)", "s"))
        else:
            rows.append(Row(f"{name}; sqlite3 CLI not installed", t["ours"], None, "", "s"))


def run(memories: int) -> None:
    source = bench_file(memories)
    rows: list[Row] = []
    _purge(source, 1, rows)
    _purge(source, 10_000, rows)
    _recover(source, memories, rows)
    report(f"purge and recover on {memories:,} memories", rows)
