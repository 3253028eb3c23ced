"""What the Backups panel reads and does, in worker threads (no Qt here)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ora_desktop.core import OraError, OraHome, open_store
from ora_desktop.core.backup import BackupInfo, backup_folder, list_backups
from ora_desktop.core.config import Config
from ora_desktop.core.maintenance import JobReport, run_job
from ora_desktop.core.restore import RestoreReport, restore_backup


@dataclass(frozen=True, slots=True)
class BackupList:
    """The backups of one file and where they live."""

    path: Path
    folder: Path
    backups: tuple[BackupInfo, ...]
    config_problem: str = ""


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """What a restore would do, for the confirmation: counts before and after, where the file goes."""

    backup: BackupInfo
    target: Path
    folder: Path
    current_memories: int | None  # None: the current file is missing or unreadable
    backup_memories: int | None
    backup_problem: str = ""


def _config() -> tuple[Config, str]:
    try:
        return Config.load(), ""
    except OraError as exc:
        return Config.defaults(), str(exc)


def gather(path: Path) -> BackupList:
    """The backups of ``path``, newest first."""
    config, problem = _config()
    return BackupList(path, backup_folder(path, config=config), tuple(list_backups(path, config=config)), problem)


def back_up(path: Path, home: OraHome, progress: Callable[[int, int], None] | None = None,
            cancel: threading.Event | None = None) -> JobReport:
    """"Back up now": the ``backup`` job (recorded in the history, locked against the daemon)."""
    return run_job("backup", path, progress=progress, cancel=cancel, home=home)


def _count(path: Path) -> int:
    with open_store(path, readonly=True) as store:
        return store.count(superseded="show")


def plan_restore(backup: BackupInfo, target: Path) -> RestorePlan:
    """Count the memories on both sides so the confirmation can say what will be replaced."""
    config, _problem = _config()
    try:
        current = _count(target) if target.exists() else None
    except OraError:
        current = None
    try:
        in_backup, problem = _count(backup.path), ""
    except OraError as exc:
        in_backup, problem = None, str(exc)
    return RestorePlan(backup, target, backup_folder(target, config=config), current, in_backup, problem)


def restore(backup: BackupInfo, target: Path) -> RestoreReport:
    """Restore (core holds the file's ``backup`` job lock, so a scheduled backup cannot run meanwhile)."""
    return restore_backup(backup.path, target)
