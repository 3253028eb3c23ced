"""Desktop integration: the launcher entry, AppStream metainfo, icons and the MIME type of
``*.site.db`` files, copied from the package data into the user's XDG data folder (or a
system prefix for a .deb), and removed again. Writes only the files named by :func:`targets`."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .launchers import program

APP_ID = "org.ora.Desktop"
ICON_SIZES = (48, 64, 128, 256)


@dataclass
class DesktopReport:
    """What :func:`install_desktop` or :func:`uninstall_desktop` did, file by file."""

    data_home: Path
    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    refreshed: list[str] = field(default_factory=list)  # the caches updated (update-desktop-database, ...)


def user_data_home() -> Path:
    """``$XDG_DATA_HOME``, else ``~/.local/share``."""
    value = os.environ.get("XDG_DATA_HOME", "")
    return Path(value) if os.path.isabs(value) else Path.home() / ".local" / "share"


def targets(data_home: Path) -> dict[str, Path]:
    """Package resource (relative to ``ora_desktop/resources``) -> where it goes under ``data_home``."""
    found = {
        f"{APP_ID}.desktop": data_home / "applications" / f"{APP_ID}.desktop",
        f"{APP_ID}.metainfo.xml": data_home / "metainfo" / f"{APP_ID}.metainfo.xml",
        f"{APP_ID}.mime.xml": data_home / "mime" / "packages" / f"{APP_ID}.xml",
        "icons/ora-desktop.svg": data_home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg",
    }
    for size in ICON_SIZES:
        name = f"icons/hicolor/{size}x{size}/apps/{APP_ID}.png"
        found[name] = data_home / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
    return found


def desktop_entry(exec_path: str | Path | None = None) -> str:
    """The desktop entry, its ``Exec``/``TryExec`` pointing at ``exec_path`` (default: the real
    path of ``ora-desktop-gui``; the bare name when it cannot be found)."""
    text = (resources.files("ora_desktop.resources") / f"{APP_ID}.desktop").read_text(encoding="utf-8")
    gui = exec_path or program("ora-desktop-gui")
    if gui is None:
        return text
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("Exec=ora-desktop-gui"):
            line = line.replace("ora-desktop-gui", exec_quote(str(gui)), 1)
        elif line.startswith("TryExec=ora-desktop-gui"):
            line = line.replace("ora-desktop-gui", _escape(str(gui)), 1)  # a path, never quoted
        lines.append(line)
    return "".join(lines)


RESERVED = set(' \t\n"\'\\><~|&;$*?#()`')


def exec_quote(word: str) -> str:
    """``word`` as one argument of a desktop entry's ``Exec`` key (the Desktop Entry
    Specification's quoting, then its string escapes)."""
    word = word.replace("%", "%%")
    if RESERVED & set(word):
        word = '"' + "".join("\\" + c if c in '"`$\\' else c for c in word) + '"'
    return _escape(word)


def _escape(value: str) -> str:
    """A desktop entry string value: backslashes and line breaks escaped."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def install_desktop(data_home: Path | None = None, exec_path: str | Path | None = None,
                    refresh: bool = True) -> DesktopReport:
    """Write the launcher, metainfo, icons and MIME type under ``data_home`` (default: the user's
    data folder), then refresh the desktop caches that are installed (best effort)."""
    report = DesktopReport(data_home or user_data_home())
    package = resources.files("ora_desktop.resources")
    for name, target in targets(report.data_home).items():
        target.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".desktop"):
            target.write_text(desktop_entry(exec_path), encoding="utf-8")
        else:
            target.write_bytes((package / name).read_bytes())
        report.written.append(target)
    if refresh:
        report.refreshed = _refresh(report.data_home)
    return report


def uninstall_desktop(data_home: Path | None = None, refresh: bool = True) -> DesktopReport:
    """Remove exactly the files :func:`install_desktop` writes (nothing else, no folders)."""
    report = DesktopReport(data_home or user_data_home())
    for target in targets(report.data_home).values():
        if target.is_file():
            target.unlink()
            report.removed.append(target)
    if refresh and report.removed:
        report.refreshed = _refresh(report.data_home)
    return report


def _refresh(data_home: Path) -> list[str]:
    """Run the cache updaters found on PATH; a failing one is skipped (the files are in place)."""
    commands = {
        "update-desktop-database": [str(data_home / "applications")],
        "update-mime-database": [str(data_home / "mime")],
        "gtk-update-icon-cache": ["-q", "-t", "-f", str(data_home / "icons" / "hicolor")],
    }
    done = []
    for tool, args in commands.items():
        path = shutil.which(tool)
        if path is None or not Path(args[-1]).is_dir():
            continue
        try:
            result = subprocess.run([path, *args], capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        if result.returncode == 0:
            done.append(tool)
    return done
