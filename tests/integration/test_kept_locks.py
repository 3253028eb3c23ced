"""This process keeps SQLite's locks through every operation that reads a database's bytes.

Closing any descriptor of a file drops every POSIX lock the process holds on it. If an operation
opened and closed the ``.site.db`` (or its ``-wal``) while our store had it open, the next program
that opens and closes the file believes it is the last user, checkpoints, deletes ``-wal`` and
``-shm``, and our later writes go into deleted files: they say done and never reach the disk.

Each test: a store in this process, the operation, a real second process that writes and exits,
then a write of ours, read back by a fresh process; ``/proc/self/fd`` must show no deleted file.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop import open_store
from ora_desktop.core.store import Store
from tests.conftest import raw_seed_db

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")]

AGENT = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], timeout=30)
conn.execute("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
             "VALUES (?, 'another program wrote this', 'fact', 5, datetime('now'), datetime('now'))",
             (sys.argv[2],))
conn.commit()
conn.close()
"""
READ = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
print(conn.execute("SELECT importance FROM memories WHERE id = ?", (sys.argv[2],)).fetchone()[0])
"""
ROWS = [(f"m{i}", f"memory number {i} about the harbour crane schedule", "fact", 5) for i in range(8)]


def deleted_files(db: Path) -> list[str]:
    """Descriptors of this process that point at a deleted file of ``db``'s family."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(db)) and target.endswith(" (deleted)"):
            out.append(target)
    return out


def check_later_writes_land(store: Store, db: Path) -> None:
    """Another process writes and exits; our next write must be on disk, in the live files."""
    store.update("m6", importance=6)
    subprocess.run([sys.executable, "-c", AGENT, str(db), "from-another-program"], check=True, timeout=60)
    store.update("m7", importance=9)
    assert deleted_files(db) == [], "this process writes into deleted files: its locks were dropped"
    fresh = subprocess.run([sys.executable, "-c", READ, str(db), "m7"], check=True, timeout=60,
                           capture_output=True, text=True)
    assert fresh.stdout.strip() == "9", "our write did not reach the disk"


def _purge(store: Store, db: Path, tmp: Path) -> None:
    store.delete(["m0", "m1"])
    store.purge(["m0"])


def _empty_trash(store: Store, db: Path, tmp: Path) -> None:
    from ora_desktop.core.operations.purge import empty_trash

    store.delete(["m0", "m1"])
    empty_trash(store)


def _recover(store: Store, db: Path, tmp: Path) -> None:
    from ora_desktop.core.operations.recover import recover

    recover(db, tmp / "recovered.site.db")


def _backup(store: Store, db: Path, tmp: Path) -> None:
    from ora_desktop.core.backup import create_backup

    create_backup(db)


def _restore(store: Store, db: Path, tmp: Path) -> None:
    from ora_desktop.core.backup import create_backup
    from ora_desktop.core.restore import restore_backup

    info = create_backup(db)
    restore_backup(info.path, db)


def _check(store: Store, db: Path, tmp: Path) -> None:
    from ora_desktop.core.maintenance.jobs import run_job

    assert run_job("check", db).outcome == "ok"


def _watcher_poll(store: Store, db: Path, tmp: Path) -> None:
    subprocess.run([sys.executable, "-c", AGENT, str(db), "seen-by-the-watcher"], check=True, timeout=60)
    assert store.changed_externally()


def _search_refresh(store: Store, db: Path, tmp: Path) -> None:
    assert store.search("harbour crane").total  # builds the index
    subprocess.run([sys.executable, "-c", AGENT, str(db), "read-from-the-wal"], check=True, timeout=60)
    assert store.search("another program").total  # refreshes it from the -wal's new frames


def _import_sniff(store: Store, db: Path, tmp: Path) -> None:
    from ora_desktop.core.exchange.detect import open_source

    with open_source(db) as source:
        assert source is not None


OPERATIONS: dict[str, Callable[[Store, Path, Path], None]] = {
    "purge": _purge, "empty-trash": _empty_trash, "recover": _recover, "backup": _backup,
    "restore": _restore, "check": _check, "watcher-poll": _watcher_poll, "search-refresh": _search_refresh,
    "import-sniff": _import_sniff,
}


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_our_writes_after_the_operation_reach_the_disk(operation: str, ora_home: Path, tmp_path: Path) -> None:
    db = raw_seed_db(ora_home / "sites" / "anwe-sh" / "ora.site.db", ROWS)
    with open_store(db) as store:
        store.update("m5", importance=7)  # connections open, -wal and -shm in use
        OPERATIONS[operation](store, db, tmp_path)
        check_later_writes_land(store, db)
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT 1 FROM memories WHERE id = 'from-another-program'").fetchone()
    finally:
        conn.close()
