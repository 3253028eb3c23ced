"""Backups that never lose data: rotation keeps the newest, damaged live files restore, read-only sources."""

from __future__ import annotations

import os
import sqlite3
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ora_desktop.core import paths
from ora_desktop.core.backup import BackupInfo, backups_to_keep, check_file, create_backup, list_backups
from ora_desktop.core.config import Config, ConfigError
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.restore import REPLACED_FILE, restore_backup
from tests.unit.maintenance_support import ids, make_db


@pytest.fixture
def db(ora_home: Path) -> Path:
    path = make_db(ora_home / "sites" / "anwe-sh" / "ora.site.db", [{"id": f"m{i}"} for i in range(300)])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    return path


def test_a_config_that_would_keep_no_backup_is_refused(tmp_path: Path) -> None:
    toml = tmp_path / "config.toml"
    toml.write_text("[backup]\nkeep_last = 0\nkeep_daily = 0\nkeep_weekly = 0\n")
    with pytest.raises(ConfigError, match="would keep no backup") as error:
        Config.load(toml)
    assert str(toml) in str(error.value)


def test_rotation_never_removes_the_newest_backup(db: Path) -> None:
    now = datetime(2026, 3, 31, 12, tzinfo=UTC)
    backups = [BackupInfo(Path(f"/b/202603{d:02d}T000000Z.site.db"), datetime(2026, 3, d, tzinfo=UTC), 1, "s", "a")
               for d in range(1, 5)]
    assert backups_to_keep(backups, 0, 0, 0, now=now) == {backups[-1].path}
    # The job, even handed such settings directly, keeps the backup it just wrote.
    config = Config(Path("c.toml"), {"backup": {"keep_last": 0, "keep_daily": 0, "keep_weekly": 0}}, True)
    report = run_job("backup", db, config=config)
    assert report.outcome == "ok" and report.counts["backups"] == 1
    (kept,) = list_backups(db)
    assert check_file(kept.path) == []


@pytest.mark.parametrize("damage", ["truncated", "garbled-header", "scribbled-pages"])
def test_restore_repairs_a_damaged_live_file_and_keeps_its_bytes(db: Path, damage: str) -> None:
    backup = create_backup(db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    data = db.read_bytes()
    if damage == "truncated":
        broken = data[: len(data) // 2]
    elif damage == "garbled-header":
        broken = b"\x13" * 100 + data[100:]
    else:
        page = int.from_bytes(data[16:18], "big")
        broken = data[: page * 2] + b"\x07" * (page * 2) + data[page * 4:]
    db.write_bytes(broken)
    report = restore_backup(backup.path, db)
    assert report.strategy == REPLACED_FILE and report.damaged
    assert report.kept_aside is not None and report.kept_aside.read_bytes() == broken
    assert str(report.kept_aside) in report.message
    assert ids(db) == {f"m{i}" for i in range(300)}
    check = sqlite3.connect(db)
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    check.close()
    assert stat.S_IMODE(report.kept_aside.stat().st_mode) == 0o600


def test_restore_into_a_file_that_is_not_an_ora_database_is_refused(db: Path, tmp_path: Path) -> None:
    backup = create_backup(db)
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE accounts (x)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    with pytest.raises(Exception, match="not an Ora memory"):
        restore_backup(backup.path, other)
    assert other.read_bytes() == before


def test_backup_of_a_read_only_source_creates_nothing_beside_it(db: Path) -> None:
    # A WAL file no writer has open: a plain read-only open would create -wal/-shm beside it,
    # which fails on a read-only file, folder or mount ("attempt to write a readonly database").
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    before = sorted(p.name for p in db.parent.iterdir())
    content = db.read_bytes()
    os.chmod(db, 0o444)
    os.chmod(db.parent, 0o555)
    try:
        info = create_backup(db)
    finally:
        os.chmod(db.parent, 0o755)
        os.chmod(db, 0o644)
    assert sorted(p.name for p in db.parent.iterdir()) == before
    assert db.read_bytes() == content
    assert ids(info.path) == ids(db)


def test_backup_of_a_file_that_is_not_ora_names_the_source(ora_home: Path) -> None:
    other = ora_home / "sites" / "s" / "other.site.db"
    other.parent.mkdir(parents=True)
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE accounts (x)")
    conn.commit()
    conn.close()
    report = run_job("backup", other)
    assert report.outcome == "failed"
    assert str(other) in report.message and ".partial" not in report.message
    assert "memories" in report.message


# ---------------------------------------------------------------------- symbolic links
def test_a_linked_backup_folder_is_refused_and_the_outside_folder_untouched(db: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.chmod(outside, 0o755)
    site = paths.data_dir() / "backups" / "anwe-sh"
    site.mkdir(parents=True)
    (site / "ora").symlink_to(outside)
    report = run_job("backup", db)
    assert report.outcome == "failed" and "symbolic link" in report.message and str(db) in report.message
    assert list(outside.iterdir()) == [] and stat.S_IMODE(outside.stat().st_mode) == 0o755
    assert list_backups(db) == []


def test_backups_list_counts_only_regular_backup_files(db: Path, tmp_path: Path) -> None:
    info = create_backup(db)
    folder = info.path.parent
    elsewhere = tmp_path / "x.site.db"
    elsewhere.write_bytes(info.path.read_bytes())
    (folder / "20200101T000000Z.site.db").symlink_to(elsewhere)
    (folder / "notes.txt").write_text("not a backup")
    (folder / "20200102T000000Z.site.db").mkdir()
    assert [b.path for b in list_backups(db)] == [info.path]


def test_restore_never_writes_through_a_link_beside_the_kept_copy(db: Path, tmp_path: Path) -> None:
    backup = create_backup(db)
    victim = tmp_path / "victim.txt"
    victim.write_text("another program's file")
    db.write_bytes(b"\x13" * 4096)  # damaged: kept aside byte for byte, with its -wal
    Path(f"{db}-wal").write_bytes(b"wal bytes")
    folder = backup.path.parent
    # Plant links at the next names a restore could use for its -wal copy.
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for name in (f"{stamp}-before-restore.site.db-wal", f"{stamp}-2-before-restore.site.db-wal"):
        (folder / name).symlink_to(victim)
    try:
        restore_backup(backup.path, db)
    except Exception as exc:  # refusing is fine; following the link is not
        assert "symbolic link" in str(exc) or "exists" in str(exc)
    assert victim.read_text() == "another program's file"


def test_a_linked_state_database_and_log_are_refused(ora_home: Path, tmp_path: Path) -> None:
    from ora_desktop.core import history
    from ora_desktop.core.private import PrivateLogHandler, UnsafePath

    other = tmp_path / "other-app.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE theirs (x)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    history._databases.clear()
    paths.data_dir().mkdir(parents=True, exist_ok=True)
    history.state_path().symlink_to(other)
    with pytest.raises(UnsafePath, match="symbolic link"):
        history.history()
    assert other.read_bytes() == before

    log = tmp_path / "their.log"
    log.write_text("theirs\n")
    paths.log_dir().mkdir(parents=True, exist_ok=True)
    (paths.log_dir() / "daemon.log").symlink_to(log)
    with pytest.raises(UnsafePath, match="symbolic link"):
        PrivateLogHandler(paths.log_dir() / "daemon.log")
    assert log.read_text() == "theirs\n"


def test_restore_makes_the_live_file_hold_exactly_the_backup(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE agent_log (memory_id TEXT)")
    conn.execute("CREATE TRIGGER log_insert AFTER INSERT ON memories BEGIN "
                 "INSERT INTO agent_log VALUES (new.id); END")
    conn.execute("INSERT INTO memories (id, content, created_at, updated_at) VALUES ('logged', 'x', 'now', 'now')")
    conn.commit()
    rowids = dict(conn.execute("SELECT id, rowid FROM memories"))
    conn.close()
    backup = create_backup(db)
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM memories WHERE id LIKE 'm1%'")
    conn.execute("CREATE TABLE newer (x)")
    conn.execute("CREATE INDEX idx_newer ON memories (content)")
    conn.commit()
    conn.close()
    restore_backup(backup.path, db)
    conn = sqlite3.connect(db)
    assert dict(conn.execute("SELECT id, rowid FROM memories")) == rowids  # rows and rowids as backed up
    assert conn.execute("SELECT count(*) FROM agent_log").fetchone()[0] == 1  # the trigger did not fire again
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "log_insert" in names and "newer" not in names and "idx_newer" not in names
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
