"""What every subcommand shares: target options, output, and errors as one line."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core import OraError, OraHome, Store, open_store

Handler = Callable[[argparse.Namespace], int | None]


def add_target(parser: argparse.ArgumentParser, required: bool = True, all_option: bool = False) -> None:
    """``--db PATH`` or ``--site SLUG --agent NAME`` (plus ``--home``), and ``--json``."""
    group = parser.add_argument_group("which database")
    group.add_argument("--db", metavar="PATH", help="path of a .site.db file")
    group.add_argument("--site", metavar="SLUG", help="site folder under ORA_HOME/sites")
    group.add_argument("--agent", metavar="NAME", help="agent name (the file is <agent>.site.db)")
    group.add_argument("--home", dest="target_home", metavar="DIR", help="Ora home (default $ORA_HOME or ~/.ora)")
    if all_option:
        group.add_argument("--all", action="store_true", help="every agent of every site (or of --site)")
    parser.set_defaults(_target_required=required)
    add_json(parser)


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable JSON output")


def home_of(args: argparse.Namespace) -> OraHome:
    return OraHome(getattr(args, "target_home", None) or getattr(args, "home", None))


def target_path(args: argparse.Namespace) -> Path:
    """The database a command acts on, from ``--db`` or ``--site``/``--agent``."""
    if getattr(args, "db", None):
        return Path(args.db).expanduser()
    site, agent = getattr(args, "site", None), getattr(args, "agent", None)
    if site and agent:
        return home_of(args).path_for(site, agent)
    raise OraError("say which database: --db PATH, or --site SLUG --agent NAME")


def open_target(args: argparse.Namespace, readonly: bool = False) -> Store:
    return open_store(target_path(args), readonly=readonly)


def command(sub: Any, name: str, handler: Handler, help: str, description: str | None = None,
            ) -> argparse.ArgumentParser:
    """Add a subcommand with help text (the README test checks every one has some)."""
    parser = sub.add_parser(name, help=help, description=description or help)
    parser.set_defaults(_handler=handler)
    return parser


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [to_jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


def emit_json(value: Any) -> None:
    json.dump(to_jsonable(value), sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def run(args: argparse.Namespace) -> int:
    """Run the chosen handler; ``OraError`` and friends become one line on stderr."""
    try:
        code = args._handler(args)
        return int(code or 0)
    except OraError as exc:
        print(f"ora-desktop {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"ora-desktop {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except (OSError, ValueError) as exc:
        print(f"ora-desktop {args.command}: {exc}", file=sys.stderr)
        return 2


def start_window(argv: list[str]) -> int:
    """Start the desktop window (imported lazily so the CLI never loads Qt otherwise)."""
    try:
        from ..gui.app import main as gui_main
    except ImportError as exc:
        print(f"ora-desktop: the window cannot start ({exc}); try 'ora-desktop --help'", file=sys.stderr)
        return 2
    return gui_main(argv)
