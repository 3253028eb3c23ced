"""Logging for every face, configured in one place (:func:`logging.config.dictConfig`).

* ``window``: a rotating ``ora-desktop.log`` in the user log folder (1 MB, 3 kept);
* ``daemon``: stderr plus a rotating ``daemon.log`` (5 MB, 5 kept), debug lines with ``verbose``;
* ``quiet``: nothing (a command that prints its own failures once).

Log files are created 0600 in a 0700 folder (:class:`~ora_desktop.core.private.PrivateLogHandler`):
they name files and memories. Only the ``ora_desktop`` and ``apscheduler`` loggers are touched.
"""

from __future__ import annotations

import logging
import logging.config
from pathlib import Path
from typing import Any

from . import paths
from .errors import OraError
from .private import private_dir

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
FILE_HANDLER = "ora-desktop-file"  # the name of the file handler, to find it (and not add it twice)
#: face -> (log file name, bytes before rotating, files kept, also log to stderr)
FACES: dict[str, tuple[str | None, int, int, bool]] = {
    "window": ("ora-desktop.log", 1_000_000, 3, False),
    "daemon": ("daemon.log", 5_000_000, 5, True),
    "quiet": (None, 0, 0, False),
}


def configure(face: str, verbose: bool = False) -> logging.Handler | None:
    """Set the ``ora_desktop`` logger up for ``face``; returns its file handler (None without one:
    the ``quiet`` face, or a log folder that cannot be made, when stderr is used instead)."""
    name, size, keep, to_stderr = FACES[face]
    handlers: dict[str, dict[str, Any]] = {}
    if name is not None:
        try:
            private_dir(paths.log_dir())
            handlers[FILE_HANDLER] = {
                "()": "ora_desktop.core.private.PrivateLogHandler", "formatter": "plain",
                "filename": str(paths.log_dir() / name), "maxBytes": size, "backupCount": keep, "encoding": "utf-8",
            }
        except (OSError, OraError):
            to_stderr = True
    if to_stderr:
        handlers["stderr"] = {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stderr"}
    if not handlers:
        handlers["none"] = {"class": "logging.NullHandler"}
    logging.config.dictConfig({
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": FORMAT}},
        "handlers": handlers,
        "loggers": {
            "ora_desktop": {"level": "DEBUG" if verbose else "INFO", "handlers": list(handlers)},
            "apscheduler": {"level": "WARNING"},
        },
    })
    return file_handler()


def file_handler() -> logging.Handler | None:
    """The log file handler :func:`configure` added, if any."""
    return next((h for h in logging.getLogger("ora_desktop").handlers if h.get_name() == FILE_HANDLER), None)


def log_file() -> Path | None:
    """The file the ``ora_desktop`` logger writes to, if any."""
    handler = file_handler()
    return Path(handler.baseFilename) if isinstance(handler, logging.FileHandler) else None
