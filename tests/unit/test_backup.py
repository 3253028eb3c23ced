"""Backups: checked 0600 copies under <dir>/<slug>/<agent>/, rotation, list, safe restore."""

from __future__ import annotations

import sqlite3
import stat
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ora_desktop.core import open_store, paths
from ora_desktop.core.backup import (
    BackupError,
    BackupInfo,
    backups_to_keep,
    check_file,
    create_backup,
    list_backups,
)
from ora_desktop.core.config import Config
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.restore import restore_backup
from tests.unit.maintenance_support import ids, make_db


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_db(ora_home / "sites" / "anwe-sh" / "ora.site.db", [{"id": f"m{i}"} for i in range(50)])


def test_backup_is_a_checked_private_copy_in_the_documented_place(db: Path) -> None:
    info = create_backup(db)
    folder = paths.data_dir() / "backups" / "anwe-sh" / "ora"
    assert info.path.parent == folder and info.path.name.endswith("Z.site.db")
    assert stat.S_IMODE(info.path.stat().st_mode) == 0o600
    assert check_file(info.path) == []
    assert ids(info.path) == ids(db)
    assert [p.name for p in folder.iterdir()] == [info.path.name]  # no temporary left behind
    conn = sqlite3.connect(info.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # one self-contained file
    conn.close()


def test_backup_dir_from_config_and_listing_newest_first(db: Path, tmp_path: Path) -> None:
    config = Config(Path("c.toml"), {"backup": {"dir": str(tmp_path / "elsewhere")}}, True)
    first = create_backup(db, config=config)
    second = create_backup(db, config=config)
    assert first.path.parent == tmp_path / "elsewhere" / "anwe-sh" / "ora"
    listed = list_backups(db, config=config)
    assert [b.path for b in listed] == [second.path, first.path]
    assert list_backups(db) == []  # nothing in the default folder


def test_rotation_keeps_last_n_plus_one_per_day_and_per_week() -> None:
    now = datetime(2026, 3, 31, 12, tzinfo=UTC)
    made = [now - timedelta(hours=6 * i) for i in range(4 * 60)]  # every 6 hours for 60 days
    backups = [BackupInfo(Path(f"/b/{t:%Y%m%dT%H%M%SZ}.site.db"), t, 1, "s", "a") for t in made]
    keep = backups_to_keep(backups, keep_last=3, keep_daily=5, keep_weekly=4, now=now)
    kept = sorted((b.created for b in backups if b.path in keep), reverse=True)
    assert kept[:3] == made[:3]  # the newest three
    days = {t.date() for t in kept if now - t < timedelta(days=5)}
    assert len(days) == 5
    assert len({t.isocalendar()[:2] for t in kept}) == 4
    assert len(kept) <= 3 + 5 + 4
    aside = BackupInfo(Path("/b/20200101T000000Z-before-restore.site.db"), datetime(2020, 1, 1, tzinfo=UTC), 1,
                       "s", "a", before_restore=True)
    assert aside.path in backups_to_keep([*backups, aside], 0, 0, 0, now=now)


def test_backup_job_rotates(db: Path) -> None:
    config = Config(Path("c.toml"), {"backup": {"keep_last": 2, "keep_daily": 0, "keep_weekly": 0}}, True)
    for _ in range(4):
        report = run_job("backup", db, config=config)
        assert report.outcome == "ok", report.message
    assert len(list_backups(db)) == 2
    assert report.counts["backups"] == 2


def test_cancelled_backup_leaves_nothing(db: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    report = run_job("backup", db, cancel=cancel)
    assert report.outcome == "cancelled"
    folder = paths.data_dir() / "backups" / "anwe-sh" / "ora"
    assert not folder.exists()  # no partial copy and no empty folder left behind


def test_restore_keeps_the_current_file_aside_and_other_connections_see_the_result(db: Path) -> None:
    info = create_backup(db)
    reader = open_store(db)  # a live connection (WAL) held open across the restore
    assert reader.count() == 50
    with open_store(db) as store:
        store.delete([f"m{i}" for i in range(40)])
        store.add("written after the backup", id="late")
    report = restore_backup(info.path, db)
    assert report.kept_aside is not None and report.kept_aside.exists()
    assert str(report.kept_aside) in report.message
    assert "late" in ids(report.kept_aside) and len(ids(report.kept_aside)) == 11
    assert ids(db) == {f"m{i}" for i in range(50)}
    assert reader.count() == 50 and reader.find("late") is None
    reader.close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # the live file stays in WAL mode
    conn.close()
    aside = [b for b in list_backups(db) if b.before_restore]
    assert [b.path for b in aside] == [report.kept_aside]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "scribbled", "not-ora"])
def test_restore_refuses_a_bad_backup_and_changes_nothing(db: Path, damage: str) -> None:
    info = create_backup(db)
    data = info.path.read_bytes()
    if damage == "garbage":
        info.path.write_bytes(b"definitely not sqlite" * 100)
    elif damage == "truncated":
        info.path.write_bytes(data[: len(data) // 2])
    elif damage == "scribbled":
        page = int.from_bytes(data[16:18], "big")
        info.path.write_bytes(data[: page * 2] + b"\x07" * page + data[page * 3:])
    else:
        info.path.unlink()
        conn = sqlite3.connect(info.path)
        conn.execute("CREATE TABLE other (x)")
        conn.commit()
        conn.close()
    with open_store(db) as store:
        store.add("current content", id="current")
    before = ids(db)
    with pytest.raises(BackupError, match="refused") as error:
        restore_backup(info.path, db)
    assert str(info.path) in str(error.value) and "nothing was changed" in str(error.value)
    assert ids(db) == before
    assert not [b for b in list_backups(db) if b.before_restore]


def test_backing_up_something_that_is_not_a_database_fails_clearly(ora_home: Path) -> None:
    bad = ora_home / "sites" / "s" / "bad.site.db"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x00" * 4096)
    report = run_job("backup", bad)
    assert report.outcome == "failed" and str(bad) in report.message
    assert list_backups(bad) == []


def test_an_unusable_backup_folder_fails_clearly(db: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the backup folder should be")
    config = Config(Path("c.toml"), {"backup": {"dir": str(blocker)}}, True)
    report = run_job("backup", db, config=config)
    assert report.outcome == "failed"
    assert str(db) in report.message and "backup folder" in report.message


def test_a_first_backup_that_fails_leaves_no_empty_folders(db: Path, tmp_path: Path) -> None:
    from ora_desktop.core.maintenance.context import Cancelled

    config = Config(Path("c.toml"), {"backup": {"dir": str(tmp_path / "backups")}}, True)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        create_backup(db, config=config, cancel=stop)
    assert not (tmp_path / "backups" / "anwe-sh").exists()  # neither the site nor the agent folder stays
    kept = create_backup(db, config=config)
    with pytest.raises(Cancelled):
        create_backup(db, config=config, cancel=stop)
    assert list_backups(db, config=config) == [kept]  # an existing folder with its backups is left alone


def test_a_copy_that_failed_its_check_while_the_file_changed_is_copied_again(db: Path, monkeypatch) -> None:
    # As an immutable copy (a folder we may not add files to) torn by an agent's checkpoint.
    from ora_desktop.core import backup

    real, calls = backup.check_file, []

    def torn_once(path: Path) -> list[str]:
        calls.append(path)
        if len(calls) == 1:
            agent = sqlite3.connect(db)
            agent.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                          "VALUES ('late', 'an agent wrote this', datetime('now'), datetime('now'))")
            agent.commit()
            agent.close()
            return ["row 3 missing from index idx_memories_type"]
        return real(path)

    monkeypatch.setattr(backup, "check_file", torn_once)
    info = create_backup(db)
    assert len(calls) == 2 and "late" in ids(info.path) and check_file(info.path) == []
    assert list_backups(db) == [info]  # the failed copy left nothing behind


def test_a_copy_that_fails_its_check_on_a_file_nobody_changes_is_refused(db: Path, monkeypatch) -> None:
    from ora_desktop.core import backup

    calls = []
    monkeypatch.setattr(backup, "check_file", lambda path: calls.append(path) or ["row 3 missing from index x"])
    with pytest.raises(BackupError, match="failed its integrity check"):
        create_backup(db)
    assert len(calls) == 1 and list_backups(db) == []
