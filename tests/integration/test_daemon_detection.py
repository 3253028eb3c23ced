"""One answer to "is a daemon running?", asked of a real ``ora-desktop daemon`` process.

The command line, the window's scheduler and the daemon itself all use
``core.daemon_lock.running_daemon``: these tests run the real daemon and check each face's answer.
"""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from ora_desktop.core.daemon_lock import daemon_info_path, running_daemon
from tests.integration.test_backup_processes import cli
from tests.integration.test_daemon import start_daemon, stop, wait_for

pytestmark = pytest.mark.slow


def test_a_running_daemon_is_seen_by_the_library_and_the_cli_and_refuses_a_second(ora_home) -> None:
    assert running_daemon() is None
    assert "daemon: not running" in cli("jobs", "--next").stdout
    daemon = start_daemon()
    try:
        wait_for(lambda: running_daemon() is not None)
        info = running_daemon()
        assert info.pid == daemon.pid and info.host == os.uname().nodename and info.started
        assert f"daemon: running (pid {daemon.pid}" in cli("jobs", "--next").stdout
        second = cli("daemon")
        assert second.returncode != 0
        assert f"already running (pid {daemon.pid}" in second.stderr and "Traceback" not in second.stderr
    finally:
        stop(daemon)
    assert running_daemon() is None and not daemon_info_path().exists(), "a stopped daemon cleans up"


def test_a_killed_daemons_leftover_info_is_not_a_running_daemon(ora_home) -> None:
    daemon = start_daemon()
    try:
        wait_for(lambda: running_daemon() is not None)
    finally:
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(timeout=30)
    assert daemon_info_path().exists(), "SIGKILL leaves the info file behind"
    assert running_daemon() is None, "the lock died with the process"
    assert "daemon: not running" in cli("jobs", "--next").stdout
    # Its pid now names nothing, or (reused) another program: neither is a daemon.
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        daemon_info_path().write_text(f'{{"pid": {sleeper.pid}, "started": "now", "host": "x"}}')
        assert running_daemon() is None, "a live process that does not hold the lock is not a daemon"
    finally:
        sleeper.kill()
        sleeper.wait()
