"""Where Ora Desktop keeps its own files (never inside ``ORA_HOME``): platformdirs.

* cache: rebuildable sidecars (full-text index, tags) — deleting it loses nothing;
* data: the jobs history database and default backup folder;
* config: ``config.toml`` (schedules, retention policies).
On Linux these follow ``XDG_CACHE_HOME`` / ``XDG_DATA_HOME`` / ``XDG_CONFIG_HOME``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import platformdirs

APP = "ora-desktop"


def cache_dir() -> Path:
    """Rebuildable sidecars (full-text index, tags)."""
    return Path(platformdirs.user_cache_dir(APP, appauthor=False))


def data_dir() -> Path:
    """Jobs history and default backups."""
    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def config_dir() -> Path:
    """``config.toml``."""
    return Path(platformdirs.user_config_dir(APP, appauthor=False))


def log_dir() -> Path:
    """Daemon and app logs."""
    return Path(platformdirs.user_log_dir(APP, appauthor=False))


def file_key(db_path: str | Path) -> str:
    """A stable short key for a database path (resolved), for naming its sidecar files."""
    resolved = str(Path(db_path).expanduser().resolve())
    stem = Path(resolved).name.replace(".site.db", "")
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:16]
    return f"{stem}-{digest}"
