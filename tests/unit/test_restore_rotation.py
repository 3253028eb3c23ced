"""Copies kept before restores are rotated: the newest ``[backup] keep_before_restore`` stay."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core.backup import create_backup, list_backups, rotate_backups
from ora_desktop.core.config import Config, ConfigError
from ora_desktop.core.restore import restore_backup


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    return seed_db([(f"m{i}", f"memory {i}", "fact", 5) for i in range(5)])


def _config(tmp_path: Path, **backup: int) -> Config:
    path = tmp_path / "config.toml"
    path.write_text("[backup]\n" + "".join(f"{k} = {v}\n" for k, v in backup.items()))
    return Config.load(path)


def _asides(db: Path) -> list[Path]:
    return [b.path for b in list_backups(db) if b.before_restore]


def test_each_restore_keeps_only_the_newest_copies_and_says_so(db: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, keep_before_restore=2)
    backup = create_backup(db, config=config)
    reports = [restore_backup(backup.path, db, config=config) for _ in range(4)]
    assert sorted(_asides(db)) == sorted(r.kept_aside for r in reports[-2:])  # the newest two
    assert reports[1].rotated_away == ()
    assert reports[2].rotated_away == (reports[0].kept_aside,)
    assert "keep_before_restore" in reports[3].message and "1 older copy" in reports[3].message
    assert backup.path.exists(), "regular backups are not rotated by a restore"


def test_the_default_keeps_five_and_the_backup_rotation_applies_the_setting(db: Path, tmp_path: Path) -> None:
    backup = create_backup(db, config=Config.defaults())
    for _ in range(6):
        restore_backup(backup.path, db, config=Config.defaults())
    assert len(_asides(db)) == 5
    newest = _asides(db)[0]  # list_backups: newest first
    removed = rotate_backups(db, config=_config(tmp_path, keep_before_restore=1))
    assert len(removed) == 4 and _asides(db) == [newest]


def test_a_rotated_copy_of_a_damaged_file_goes_with_its_wal(db: Path, tmp_path: Path) -> None:
    backup = create_backup(db, config=Config.defaults())
    first = restore_backup(backup.path, db, config=Config.defaults()).kept_aside
    wal = Path(f"{first}-wal")
    wal.write_bytes(b"the damaged file's log, kept beside its bytes")
    restore_backup(backup.path, db, config=_config(tmp_path, keep_before_restore=1))
    assert not first.exists() and not wal.exists()


@pytest.mark.parametrize("value", ["0", "-1", "true", '"5"'])
def test_a_bad_keep_before_restore_names_the_file_and_key(tmp_path: Path, value: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[backup]\nkeep_before_restore = {value}\n")
    with pytest.raises(ConfigError) as error:
        Config.load(path)
    assert str(path) in str(error.value) and "keep_before_restore" in str(error.value)
    assert len(str(error.value).splitlines()) == 1
