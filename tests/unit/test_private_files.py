"""Private by default: every file the app creates is 0600, every folder 0700 (checked as mode bits:
tests run as root, where permissions do not bind)."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ora_desktop.core import paths
from ora_desktop.core.config import Config
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.search import search
from tests.unit.maintenance_support import make_db


def _modes(root: Path) -> dict[str, int]:
    found = {str(root): stat.S_IMODE(os.lstat(root).st_mode)}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            found[path] = stat.S_IMODE(os.lstat(path).st_mode)
    return found


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The usual umask: files would be 644 and folders 755 unless we say otherwise."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_index_history_locks_backups_and_logs_are_private(ora_home: Path, usual_umask: None) -> None:
    db = make_db(ora_home / "sites" / "s" / "ora.site.db", [{"id": "m1", "content": "secret deploy key"}])
    assert search(db, "secret").hits  # builds the full-text sidecar (every memory's text)
    for job in ("backup", "decay", "check"):
        assert run_job(job, db).outcome == "ok"
    from ora_desktop.daemon import setup_logging

    handler = setup_logging()
    try:
        logging.getLogger("ora_desktop.daemon").info("a line naming %s", db)
    finally:
        logging.getLogger("ora_desktop").removeHandler(handler)
        handler.close()
    roots = [paths.cache_dir(), paths.data_dir(), paths.log_dir()]
    modes = {p: m for root in roots for p, m in _modes(root).items()}
    assert any(p.endswith(".fts.db") for p in modes) and any(p.endswith("state.db") for p in modes)
    assert any(p.endswith(".lock") for p in modes) and any(p.endswith("daemon.log") for p in modes)
    loose = {p: oct(m) for p, m in modes.items()
             if m != (0o700 if stat.S_ISDIR(os.lstat(p).st_mode) else 0o600)}
    assert not loose


def test_a_config_file_others_can_read_is_warned_about(tmp_path: Path) -> None:
    toml = tmp_path / "config.toml"
    toml.write_text('[schedule]\ndecay = "daily"\n')
    os.chmod(toml, 0o644)
    warning = Config.load(toml).exposure_warning
    assert warning and str(toml) in warning and "chmod 600" in warning
    os.chmod(toml, 0o600)
    assert Config.load(toml).exposure_warning is None
