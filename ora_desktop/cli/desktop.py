"""The ``install-desktop`` subcommand: put the launcher, metainfo, icons and MIME type in the
user's data folder (or take them out again)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..core.desktop_files import install_desktop, uninstall_desktop
from . import common


def register(sub: Any) -> None:
    """Add the ``install-desktop`` subcommand to the ora-desktop parser."""
    p = common.command(sub, "install-desktop", cmd_install_desktop,
                       "add Ora Desktop to the applications menu (desktop entry, icons, metainfo)",
                       "Write the desktop entry (Exec: the real path of ora-desktop-gui), the AppStream "
                       "metainfo, the icons (PNG 48-256 px and SVG) and the MIME type of *.site.db files "
                       "under $XDG_DATA_HOME (~/.local/share), then refresh the desktop caches that are "
                       "installed. --uninstall removes exactly those files.")
    p.add_argument("--uninstall", action="store_true", help="remove the files install-desktop writes")
    p.add_argument("--data-home", metavar="DIR", type=Path,
                   help="write under DIR instead of $XDG_DATA_HOME (e.g. /usr/share for a package)")


def cmd_install_desktop(args: argparse.Namespace) -> int:
    if args.uninstall:
        report = uninstall_desktop(args.data_home)
        for path in report.removed:
            print(f"removed {path}")
        if not report.removed:
            print(f"nothing to remove under {report.data_home}")
    else:
        report = install_desktop(args.data_home)
        for path in report.written:
            print(f"wrote {path}")
    if report.refreshed:
        print("refreshed: " + ", ".join(report.refreshed))
    return 0
