"""The systemd user unit and the launchd agent start `ora-desktop daemon` and let a job finish."""

from __future__ import annotations

import configparser
import plistlib
from pathlib import Path

from ora_desktop.cli import build_parser

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"


def test_systemd_user_unit_runs_the_daemon_and_waits_for_the_running_job() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.read_string((PACKAGING / "ora-desktop-daemon.service").read_text())
    assert unit["Service"]["ExecStart"].split()[-2:] == ["ora-desktop", "daemon"] or \
        unit["Service"]["ExecStart"].endswith("/ora-desktop daemon")
    assert unit["Service"]["KillSignal"] == "SIGTERM" and int(unit["Service"]["TimeoutStopSec"]) >= 60
    assert unit["Install"]["WantedBy"] == "default.target"  # a user unit


def test_launchd_agent_runs_the_daemon_and_waits_for_the_running_job() -> None:
    with (PACKAGING / "org.ora.desktop.daemon.plist").open("rb") as handle:
        plist = plistlib.load(handle)
    assert plist["Label"] == "org.ora.desktop.daemon"
    assert plist["ProgramArguments"][0].endswith("/ora-desktop") and plist["ProgramArguments"][1:] == ["daemon"]
    assert plist["RunAtLoad"] and plist["ExitTimeOut"] >= 60


def test_the_daemon_command_they_start_exists() -> None:
    args = build_parser().parse_args(["daemon", "--once"])
    assert args.command == "daemon" and args.once
