"""The purge-trash job: the trash keeps deleted memories [trash] keep_days days (default 30; 0 = forever)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.config import Config, ConfigError
from ora_desktop.core.history import history
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.rawsql import run_sql
from tests.unit.maintenance_support import make_db

NOW = datetime(2030, 6, 1, 12, tzinfo=UTC)


@pytest.fixture
def db(ora_home: Path) -> Path:
    path = make_db(ora_home / "sites" / "s" / "a.site.db", [{"id": i, "content": f"memory {i} text"} for i in "abcd"])
    with open_store(path) as store:
        store.delete(["a", "b", "c"])
        stamp = lambda days: (NOW - timedelta(days=days)).strftime("%Y-%m-%d %H:%M:%S")  # noqa: E731
        for memory_id, days in (("a", 45), ("b", 31), ("c", 2)):
            run_sql(store, "UPDATE ora_desktop_trash SET deleted_at = ? WHERE memory_id = ?", (stamp(days), memory_id))
    return path


def _config(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return Config.load(path)


def _trashed(path: Path) -> list[str]:
    with open_store(path, readonly=True) as store:
        return sorted(d.memory.id for d in store.trash())


def test_default_keeps_thirty_days(db: Path) -> None:
    report = run_job("purge-trash", db, now=NOW)
    assert report.ok and report.counts["purged"] == 2, report.message
    assert _trashed(db) == ["c"]
    run = history(path=db, job="purge-trash")[0]
    assert run.counts["purged"] == 2 and "memory a text" not in run.message  # no memory text in history


def test_dry_run_lists_and_changes_nothing(db: Path) -> None:
    report = run_job("purge-trash", db, now=NOW, dry_run=True)
    assert report.counts["purged"] == 2 and [i for i, _ in report.would_change] == ["a", "b"]
    assert _trashed(db) == ["a", "b", "c"]


def test_keep_days_from_config_and_zero_means_never(db: Path, tmp_path: Path) -> None:
    never = run_job("purge-trash", db, now=NOW, config=_config(tmp_path, "[trash]\nkeep_days = 0\n"))
    assert never.counts["purged"] == 0 and "keep_days = 0" in never.message and _trashed(db) == ["a", "b", "c"]
    run_job("purge-trash", db, now=NOW, config=_config(tmp_path, "[trash]\nkeep_days = 40\n"))
    assert _trashed(db) == ["b", "c"]


def test_bad_keep_days_is_a_clear_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="keep_days"):
        _config(tmp_path, "[trash]\nkeep_days = -1\n")
    with pytest.raises(ConfigError, match="unknown setting"):
        _config(tmp_path, "[trash]\nkeep = 3\n")


def test_scheduled_daily_by_default_and_listed_in_effective_settings() -> None:
    config = Config.defaults()
    assert config.schedule("purge-trash").value == 86400
    assert any(s.key == "trash.keep_days" and s.value == 30 for s in config.effective())
