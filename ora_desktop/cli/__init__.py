"""The ``ora-desktop`` command line: argument parsing only; every command calls core.

Each feature module registers its subcommands (``memories``, ``search``, ``maintenance``).
With no subcommand the desktop window starts.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from .. import __version__
from . import common

#: The feature modules, each registering its subcommands; imported only to parse a command, so
#: starting the window does not pay for them (the scheduler, the exchange formats, ...).
FEATURE_MODULES = ("memories", "search", "maintenance", "purge", "exchange", "meaning", "review", "sync", "mcp",
                   "undo", "consolidate", "desktop")
#: Commands a program starts and waits on, parsed with their own module only: an MCP client
#: waits for ``ora-desktop mcp`` to answer ``initialize``, and the other features' imports
#: (the scheduler, rich, backups...) doubled that wait.
ALONE = {"mcp": "mcp"}


def features(only: Sequence[str] = FEATURE_MODULES) -> tuple[ModuleType, ...]:
    """The feature modules (``only`` these), imported."""
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in only)


def build_parser(only: Sequence[str] = FEATURE_MODULES) -> argparse.ArgumentParser:
    """The parser of every command (``only``: of those modules' commands); used by ``main`` and by
    the test that checks every command's help."""
    parser = common.Parser(
        prog="ora-desktop",
        description="See and tend Ora agents' long-term memory. With no command (or only .site.db "
        "paths and --read-only/--home), opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"ora-desktop {__version__}")
    parser.add_argument("--home", help="Ora home folder (default: $ORA_HOME or ~/.ora)")
    parser.add_argument("--read-only", action="store_true", help="open files read-only (window)")
    # Window arguments (``.site.db`` paths) are recognised by ``_wants_window`` before parsing;
    # a positional here would swallow the subcommand name ("show ID" would read as files).
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for feature in features(only):
        feature.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ora-desktop``; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")  # non-Latin memories on a non-UTF-8 terminal
    if _wants_window(argv):
        return common.start_window(argv, _read_ahead(argv))
    alone = ALONE.get(argv[0]) if argv else None
    args = build_parser((alone,) if alone else FEATURE_MODULES).parse_args(argv)
    if args.command is None:
        return common.start_window(argv)
    return common.run(args)


def _read_ahead(argv: list[str]):  # noqa: ANN202 (FirstRows | None; core imported only here)
    """Start reading the file the window will show first on a thread, before Qt and the window
    are imported (``views.first_rows``): the last ``.db`` path given, else the agent
    file the window showed last, else the home's first: the one the sidebar selects when it opens."""
    from ..core import OraError, OraHome, open_store
    from ..views.first_rows import FirstRows

    files = [arg for i, arg in enumerate(argv) if arg.endswith(".db") and (i == 0 or argv[i - 1] != "--home")]
    target = files[-1] if files else None
    if target is None:
        homes = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--home"]
        homes += [arg.split("=", 1)[1] for arg in argv if arg.startswith("--home=")]
        try:
            agents = OraHome(homes[-1] if homes else None).agents()
        except (OSError, OraError):
            agents = []
        last = _last_viewed()
        chosen = [a.path for a in agents if last is not None and str(a.path) == last]
        target = chosen[0] if chosen else agents[0].path if agents else None
    return FirstRows(open_store, target, readonly="--read-only" in argv) if target is not None else None


def _wants_window(argv: list[str]) -> bool:
    """No command: only window options (``--read-only``, ``--home DIR``) and ``.site.db`` paths."""
    if any(a in ("-h", "--help", "--version") for a in argv):
        return False
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--home" and rest:
            rest.pop(0)
        elif arg == "--read-only" or arg.startswith("--home=") or arg.endswith(".db"):
            continue
        else:
            return False
    return True


def _last_viewed() -> str | None:
    """The file the window showed last (``files/last`` in its settings, an INI file on Linux,
    read here without Qt); ``None`` when unknown. Only a hint: a wrong guess costs one read."""
    import configparser

    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read(os.path.join(base, "Ora", "Ora Desktop.conf"), encoding="utf-8")
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    value = parser.get("files", "last", fallback="").strip().strip('"')
    return value or None
