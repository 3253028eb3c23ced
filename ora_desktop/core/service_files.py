"""The maintenance daemon at login: a systemd user unit (Linux) or a launchd agent (macOS) that
runs ``ora-desktop daemon`` by the real path of the executable, written and removed on request."""

from __future__ import annotations

import os
import plistlib
import sys
from importlib import resources
from pathlib import Path

from .errors import OraError
from .launchers import command

SYSTEMD_UNIT = "ora-desktop-daemon.service"
LAUNCHD_LABEL = "org.ora.desktop.daemon"


def service_path(platform: str | None = None) -> Path:
    """Where the service file goes for this user on ``platform`` (default: this one)."""
    platform = platform or sys.platform
    if platform == "darwin":
        return Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    if platform.startswith("linux"):
        value = os.environ.get("XDG_CONFIG_HOME", "")
        config = Path(value) if os.path.isabs(value) else Path.home() / ".config"
        return config / "systemd" / "user" / SYSTEMD_UNIT
    raise OraError(f"no service manager is supported on {platform} (systemd on Linux, launchd on macOS)")


def systemd_unit(argv: list[str]) -> str:
    """The unit file text starting ``argv`` (each word quoted for systemd)."""
    template = (resources.files("ora_desktop.resources") / SYSTEMD_UNIT).read_text(encoding="utf-8")
    words = []
    for word in argv:
        escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
        words.append(f'"{escaped}"' if any(c.isspace() for c in word) or escaped != word else word)
    return template.replace("@EXEC_START@", " ".join(words))


def launchd_plist(argv: list[str]) -> bytes:
    """The launchd agent starting ``argv`` at login, restarted after a crash (not a clean stop)."""
    return plistlib.dumps({
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": argv,
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ExitTimeOut": 300,  # SIGTERM lets the running job finish
        "ProcessType": "Background",
        "LowPriorityIO": True,
    })


def install_service(platform: str | None = None, argv: list[str] | None = None,
                    daemon_args: list[str] | None = None) -> Path:
    """Write the service file running ``ora-desktop daemon [daemon_args]`` (``argv``: the program,
    default the real path of ``ora-desktop``); returns its path."""
    target = service_path(platform)
    argv = [*(argv or command("ora-desktop")), "daemon", *(daemon_args or [])]
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix == ".plist":
        target.write_bytes(launchd_plist(argv))
    else:
        target.write_text(systemd_unit(argv), encoding="utf-8")
    return target


def uninstall_service(platform: str | None = None) -> Path | None:
    """Remove the service file (and systemd's enable link to it, as ``systemctl disable`` would);
    returns its path, or None when there was none."""
    target = service_path(platform)
    if target.suffix == ".service":
        link = target.parent / "default.target.wants" / target.name
        if link.is_symlink():
            link.unlink()
    if not target.is_file():
        return None
    target.unlink()
    return target


def next_steps(target: Path, installed: bool) -> list[str]:
    """The commands that start (or stop) the service the file describes."""
    if target.suffix == ".plist":
        domain = f"gui/{os.getuid()}"
        if installed:
            return [f"launchctl bootstrap {domain} {target}"]
        return [f"launchctl bootout {domain}/{LAUNCHD_LABEL}"]
    if installed:
        return ["systemctl --user daemon-reload", f"systemctl --user enable --now {SYSTEMD_UNIT}"]
    return [f"systemctl --user stop {SYSTEMD_UNIT}", "systemctl --user daemon-reload"]
