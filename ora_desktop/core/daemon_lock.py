"""The one-daemon lock, and the one answer to "is a maintenance daemon running?".

``ora-desktop daemon`` holds :func:`daemon_lock` while it runs and writes its pid, start time and
host beside the lock. :func:`running_daemon` is the only test of whether a daemon runs: the
command line (``jobs --next``), the window (which leaves the schedule to a running daemon) and
the daemon itself (refusing a second one) all ask it. The lock decides, not the pid: a pid can
be reused by another program after a daemon was killed, while the lock dies with its process.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import filelock

from . import paths
from .errors import OraError
from .private import open_private, private_dir, refuse_link


@dataclass(frozen=True, slots=True)
class DaemonInfo:
    """A running daemon, as it described itself when it started (fields may be ``None`` when
    its info file could not be read)."""

    pid: int | None
    started: str | None
    host: str | None


def daemon_lock_path() -> Path:
    """The lock a running daemon holds."""
    return paths.data_dir() / "daemon.lock"


def daemon_info_path() -> Path:
    """Where a running daemon keeps its pid, start time and host."""
    return paths.data_dir() / "daemon.json"


def running_daemon() -> DaemonInfo | None:
    """The daemon that holds the lock, or ``None`` if no daemon runs.

    Probes the lock only when a daemon left its info file, so polling (the window checks every
    minute) never gets in the way of a daemon starting, and a starting daemon waits a second for
    a probe to let go. An info file whose lock is free is the leftover of a killed daemon.
    """
    try:
        data = json.loads(daemon_info_path().read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        data = {}
    lock = filelock.FileLock(str(refuse_link(daemon_lock_path())), thread_local=False, mode=0o600)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        return _info(data)
    lock.release()
    return None


def _info(data: object) -> DaemonInfo:
    data = data if isinstance(data, dict) else {}
    pid = data.get("pid")
    return DaemonInfo(pid=pid if isinstance(pid, int) else None, started=data.get("started"), host=data.get("host"))


@contextlib.contextmanager
def daemon_lock() -> Iterator[DaemonInfo]:
    """Hold the one-daemon lock for the ``with`` body; raises ``OraError`` if it is taken."""
    private_dir(daemon_lock_path().parent)
    lock = filelock.FileLock(str(refuse_link(daemon_lock_path())), thread_local=False, mode=0o600)
    try:
        lock.acquire(timeout=1)  # a window probing the lock holds it for an instant
    except filelock.Timeout:
        other = running_daemon() or DaemonInfo(None, None, None)
        raise OraError(
            f"another ora-desktop daemon is already running (pid {other.pid}, started "
            f"{other.started}, lock {daemon_lock_path()}); stop it first"
        ) from None
    info = DaemonInfo(pid=os.getpid(), started=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"),
                      host=os.uname().nodename)
    with os.fdopen(open_private(daemon_info_path(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w") as handle:
        handle.write(json.dumps({"pid": info.pid, "started": info.started, "host": info.host}))
    try:
        yield info
    finally:
        with contextlib.suppress(OSError):
            daemon_info_path().unlink()
        lock.release()
