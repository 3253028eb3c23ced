"""Desktop integration a user installs with one command and removes with another: the launcher
entry, metainfo, icons and MIME type under the XDG data folder, and the daemon's service file
naming the real executable. The validators are the distributions' own (desktop-file-validate,
appstreamcli, systemd-analyze), installed by `make test`."""

from __future__ import annotations

import configparser
import plistlib
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from ora_desktop.cli import main
from ora_desktop.core import launchers
from ora_desktop.core.desktop_files import APP_ID, targets

PACKAGE = resources.files("ora_desktop.resources")


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (make test installs it: packaging/install-system-deps.sh test)")
    return path


def entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


@pytest.fixture
def fake_program(tmp_path, monkeypatch) -> Path:
    """An executable ``ora-desktop`` / ``ora-desktop-gui`` in a venv-like scripts folder."""
    scripts = tmp_path / "venv bin"
    scripts.mkdir()
    for name in ("ora-desktop", "ora-desktop-gui"):
        (scripts / name).write_text("#!/bin/sh\n")
        (scripts / name).chmod(0o755)
    monkeypatch.setattr(launchers.sysconfig, "get_path", lambda _name: str(scripts))
    return scripts


def test_install_desktop_puts_every_file_in_the_data_folder_and_uninstall_removes_them(
        isolated_dirs, fake_program, capsys):
    data = isolated_dirs / "data"
    mine = data / "applications" / "someone-else.desktop"
    mine.parent.mkdir(parents=True)
    mine.write_text("[Desktop Entry]\n")

    assert main(["install-desktop"]) == 0
    written = targets(data)
    assert all(path.is_file() for path in written.values())
    assert {f"{s}x{s}" for s in (48, 64, 128, 256)} | {"scalable"} == {
        p.parts[-3] for p in written.values() if "icons" in p.parts}
    desktop = entry(data / "applications" / f"{APP_ID}.desktop")
    assert desktop["Exec"] == f'"{fake_program / "ora-desktop-gui"}" %F'  # the real path, quoted
    assert desktop["TryExec"] == str(fake_program / "ora-desktop-gui")  # a path: launchers hide the entry without it
    assert desktop["Icon"] == APP_ID and desktop["StartupWMClass"] == APP_ID
    assert desktop["MimeType"] == "application/x-ora-site-db;"  # not every SQLite file on the machine
    assert "wrote" in capsys.readouterr().out

    assert main(["install-desktop", "--uninstall"]) == 0
    assert not any(path.exists() for path in written.values())
    assert mine.exists()


def test_the_desktop_entry_and_metainfo_pass_the_validators(isolated_dirs, fake_program):
    assert main(["install-desktop"]) == 0
    data = isolated_dirs / "data"
    installed = data / "applications" / f"{APP_ID}.desktop"
    result = subprocess.run([tool("desktop-file-validate"), str(installed)], capture_output=True, text=True)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout
    metainfo = data / "metainfo" / f"{APP_ID}.metainfo.xml"
    result = subprocess.run([tool("appstreamcli"), "validate", "--strict", "--no-net", str(metainfo)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    text = metainfo.read_text()
    assert f'<launchable type="desktop-id">{APP_ID}.desktop</launchable>' in text
    assert '<url type="homepage">' in text and "<screenshot " in text


def test_the_mime_type_claims_only_site_db_files():
    text = (PACKAGE / f"{APP_ID}.mime.xml").read_text()
    assert 'type="application/x-ora-site-db"' in text and '<glob pattern="*.site.db"' in text
    assert text.count("<glob ") == 1


def test_install_service_writes_a_systemd_unit_with_the_real_executable(isolated_dirs, fake_program, capsys):
    assert main(["daemon", "--install-service"]) == 0
    unit = isolated_dirs / "config" / "systemd" / "user" / "ora-desktop-daemon.service"
    exec_start = next(line for line in unit.read_text().splitlines() if line.startswith("ExecStart="))
    assert exec_start == f'ExecStart="{fake_program / "ora-desktop"}" daemon'
    assert "systemctl --user enable --now ora-desktop-daemon.service" in capsys.readouterr().out
    result = subprocess.run([tool("systemd-analyze"), "verify", str(unit)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr

    wants = unit.parent / "default.target.wants" / unit.name
    wants.parent.mkdir()
    wants.symlink_to(unit)  # what `systemctl --user enable` leaves
    assert main(["daemon", "--uninstall-service"]) == 0
    assert not unit.exists() and not wants.is_symlink()
    assert main(["daemon", "--uninstall-service"]) == 0
    assert "no daemon service is installed" in capsys.readouterr().out


def test_install_service_keeps_the_home_it_was_given(isolated_dirs, fake_program, tmp_path):
    assert main(["daemon", "--install-service", "--home", str(tmp_path / "agents home")]) == 0
    unit = (isolated_dirs / "config" / "systemd" / "user" / "ora-desktop-daemon.service").read_text()
    assert f'daemon --home "{tmp_path / "agents home"}"' in unit


def test_a_unit_naming_a_missing_executable_fails_verification(tmp_path):
    """The check above is real: the unit we used to ship (a guessed ~/.local/bin path) fails it."""
    from ora_desktop.core.service_files import systemd_unit

    unit = tmp_path / "ora-desktop-daemon.service"
    unit.write_text(systemd_unit([str(tmp_path / "nowhere" / "ora-desktop"), "daemon"]))
    result = subprocess.run([tool("systemd-analyze"), "verify", str(unit)], capture_output=True, text=True)
    assert result.returncode != 0 and "nowhere/ora-desktop" in result.stderr


def test_install_service_on_macos_writes_a_launchd_agent_with_the_real_executable(isolated_dirs, fake_program):
    from ora_desktop.core.service_files import install_service, uninstall_service

    target = install_service(platform="darwin")
    assert target == isolated_dirs / "Library" / "LaunchAgents" / "org.ora.desktop.daemon.plist"
    plist = plistlib.loads(target.read_bytes())
    assert plist["ProgramArguments"] == [str(fake_program / "ora-desktop"), "daemon"]
    assert plist["Label"] == "org.ora.desktop.daemon" and plist["RunAtLoad"] is True
    assert uninstall_service(platform="darwin") == target and not target.exists()


def test_without_an_installed_program_the_service_runs_this_interpreter(isolated_dirs, monkeypatch, tmp_path):
    monkeypatch.setattr(launchers.sysconfig, "get_path", lambda _name: str(tmp_path / "none"))
    monkeypatch.setattr(launchers.sys, "executable", str(tmp_path / "none" / "python"))
    monkeypatch.setattr(launchers.shutil, "which", lambda _name: None)
    assert launchers.command("ora-desktop") == [str(tmp_path / "none" / "python"), "-m", "ora_desktop"]


def test_install_service_refuses_an_unknown_platform_in_one_line():
    from ora_desktop.core import OraError
    from ora_desktop.core.service_files import install_service

    with pytest.raises(OraError, match="no service manager is supported on win32"):
        install_service(platform="win32")
    assert sys.platform != "win32"
