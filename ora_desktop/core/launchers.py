"""The real paths of our programs, for files that start them later (the desktop entry, the
daemon's systemd unit or launchd agent): the scripts beside the running interpreter (a venv,
pipx), the programs of a PyInstaller bundle, else the ones on ``PATH``."""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path


def program(name: str) -> Path | None:
    """The absolute path of our program ``name`` (``ora-desktop``, ``ora-desktop-gui``), or None."""
    if getattr(sys, "frozen", False):  # a PyInstaller bundle: the programs sit beside each other
        candidates = [Path(sys.executable).resolve().parent / name]
    else:
        candidates = [Path(sysconfig.get_path("scripts")) / name, Path(sys.executable).parent / name]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.absolute()
    found = shutil.which(name)
    return Path(found).absolute() if found else None


def command(name: str) -> list[str]:
    """The argv that starts ``ora-desktop`` (or ``ora-desktop-gui``): its real path, else this
    interpreter running the package (a checkout that was never installed)."""
    path = program(name)
    if path is not None:
        return [str(path)]
    return [str(Path(sys.executable).absolute()), "-m", "ora_desktop"]
