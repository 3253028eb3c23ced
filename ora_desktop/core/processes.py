"""Whether a process still runs (for marks and files named after the process that wrote them)."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (one we may not signal counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner() -> dict[str, Any]:
    """Who writes a mark: this machine's name and this process's id (``host``, ``pid``)."""
    return {"host": socket.gethostname(), "pid": os.getpid()}


def owner_runs(mark: Mapping[str, Any]) -> bool:
    """Whether the process a mark names (:func:`owner`'s ``host`` and ``pid``) may still run,
    whichever OS user it runs as: a process of another machine cannot be seen from here, so it
    counts as running; this process does not (the caller knows what it runs itself); a mark
    without ``host`` is this machine's."""
    if mark.get("host", socket.gethostname()) != socket.gethostname():
        return True
    pid = mark.get("pid")
    return isinstance(pid, int) and pid > 0 and pid != os.getpid() and alive(pid)
