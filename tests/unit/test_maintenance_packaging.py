"""The systemd user unit and the launchd agent that `ora-desktop daemon --install-service` writes
start `ora-desktop daemon` and let a running job finish."""

from __future__ import annotations

import configparser
import plistlib

from ora_desktop.cli import build_parser
from ora_desktop.core.service_files import launchd_plist, systemd_unit

DAEMON = ["/opt/ora desktop/bin/ora-desktop", "daemon"]


def test_systemd_user_unit_runs_the_daemon_and_waits_for_the_running_job() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.read_string(systemd_unit(DAEMON))
    assert unit["Service"]["ExecStart"] == '"/opt/ora desktop/bin/ora-desktop" daemon'
    assert unit["Service"]["KillSignal"] == "SIGTERM" and int(unit["Service"]["TimeoutStopSec"]) >= 60
    assert unit["Install"]["WantedBy"] == "default.target"  # a user unit


def test_launchd_agent_runs_the_daemon_and_waits_for_the_running_job() -> None:
    plist = plistlib.loads(launchd_plist(DAEMON))
    assert plist["Label"] == "org.ora.desktop.daemon"
    assert plist["ProgramArguments"] == DAEMON
    assert plist["RunAtLoad"] and plist["ExitTimeOut"] >= 60


def test_the_daemon_command_they_start_exists() -> None:
    args = build_parser().parse_args(["daemon", "--once"])
    assert args.command == "daemon" and args.once
