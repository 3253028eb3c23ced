"""Logging is configured in one place (core/logs.py, dictConfig) for every face: the daemon logs to
stderr and daemon.log, the window to ora-desktop.log, configuring twice never doubles lines."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from ora_desktop.core import logs, paths

PACKAGE = Path(logs.__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def restore_logging():
    logger = logging.getLogger("ora_desktop")
    saved = (logger.handlers[:], logger.level)
    yield
    for handler in logger.handlers:
        if handler not in saved[0]:
            handler.close()
    logger.handlers[:], logger.level = saved


def test_the_daemon_logs_to_stderr_and_its_file_once_however_often_configured(capsys):
    logs.configure("daemon")
    logs.configure("daemon", verbose=True)
    logging.getLogger("ora_desktop.daemon").debug("decayed %s", "ora.site.db")
    logs.file_handler().flush()
    assert capsys.readouterr().err.count("decayed ora.site.db") == 1
    assert logs.log_file() == paths.log_dir() / "daemon.log"
    assert logs.log_file().read_text().count("DEBUG ora_desktop.daemon: decayed ora.site.db") == 1


def test_the_window_logs_to_its_own_file_and_not_to_the_terminal(capsys):
    logs.configure("window")
    logging.getLogger("ora_desktop.gui").warning("could not open %s", "x.site.db")
    logs.file_handler().flush()
    assert logs.log_file() == paths.log_dir() / "ora-desktop.log"
    assert "could not open x.site.db" in logs.log_file().read_text()
    assert "could not open" not in capsys.readouterr().err


def test_no_other_module_configures_logging():
    pattern = re.compile(r"basicConfig|addHandler\(|dictConfig|fileConfig|RotatingFileHandler\(")
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if p.name not in ("logs.py", "private.py") and pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
