"""What every subcommand shares: target options, output, and errors as one line."""

from __future__ import annotations

import argparse
import base64
import dataclasses
import enum
import gc
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

from ..core import InvalidValue, Memory, OraError, OraHome, Store, open_store
from ..core.extras import missing
from ..core.timefilter import check_created_after, check_created_before
from ..core.validation import check_health, check_importance

Handler = Callable[[argparse.Namespace], int | None]


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (no usage dump, no traceback)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {one_line(message)} (see '{self.prog} --help')\n")


def one_line(text: object) -> str:
    """``text`` with its line breaks folded, for one-line error messages."""
    return " ".join(str(text).split("\n")).strip()


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
    """Add a subcommand with help text (a test checks every one has some)."""
    parser = sub.add_parser(name, help=help, description=description or help)
    parser.set_defaults(_handler=handler)
    return parser


def to_jsonable(value: Any) -> Any:
    if isinstance(value, Memory):  # its fields (not the stored texts it keeps) and the version to pass back
        out = {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        out["version"] = value.version
        return out
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
    if isinstance(value, enum.Enum):
        return value.value
    return value


def emit_json(value: Any) -> None:
    json.dump(to_jsonable(value), sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def run(args: argparse.Namespace) -> int:
    """Run the chosen handler; every error becomes one line on stderr and a non-zero exit.

    Set ``ORA_DEBUG=1`` to get the traceback of an unexpected error instead.
    """
    bad = _not_utf8(args)
    if bad:
        fail(args, bad)
        return 2
    try:
        code = args._handler(args)
        return int(code or 0)
    except OraError as exc:
        fail(args, str(exc))
        return 2
    except KeyboardInterrupt:
        fail(args, "interrupted")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except (OSError, ValueError) as exc:
        fail(args, str(exc))
        return 2
    except Exception as exc:
        if os.environ.get("ORA_DEBUG"):
            raise
        fail(args, f"unexpected error ({type(exc).__name__}: {exc}); set ORA_DEBUG=1 for details")
        return 1


def _not_utf8(args: argparse.Namespace) -> str | None:
    """What to say when an argument holds bytes that are not UTF-8 (Python keeps them as surrogates)."""
    for name, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    shown = item.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
                    return f"{name.lstrip('_').replace('_', '-')} {shown!r} holds bytes that are not valid UTF-8"
    return None


def fail(args: argparse.Namespace, message: str) -> None:
    """Print ``ora-desktop COMMAND: message`` as one line on stderr."""
    command = getattr(args, "command", None)
    prefix = f"ora-desktop {command}" if command else "ora-desktop"
    print(f"{prefix}: {one_line(message)}", file=sys.stderr)


def _silence_stdout() -> None:
    """After a closed pipe (``| head``), keep Python from complaining while it exits."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def terminal_width() -> int | None:
    """Columns of the terminal (``$COLUMNS`` wins); ``None`` when output is not a terminal."""
    columns = shutil.get_terminal_size((0, 0)).columns
    return columns or None


def truncate(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, with an ellipsis when cut."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], stretch: int | None = None) -> str:
    """A plain text table; column ``stretch`` (default: the last) is cut to fit the terminal
    (not cut when the output goes to a pipe or file, unless ``$COLUMNS`` is set)."""
    cells = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    stretch = len(headers) - 1 if stretch is None else stretch
    columns = terminal_width()
    if columns is not None:
        room = columns - sum(w + 2 for i, w in enumerate(widths) if i != stretch)
        widths[stretch] = max(10, min(widths[stretch], room))
    lines = ["  ".join(h.ljust(widths[i]) for i, h in enumerate(headers)).rstrip()]
    for row in cells:
        lines.append("  ".join(truncate(v, widths[i]).ljust(widths[i]) for i, v in enumerate(row)).rstrip())
    return "\n".join(lines)


def cell(value: Any) -> str:
    """One table cell: exact UTC timestamps, two-decimal floats, '-' for nothing."""
    if value is None:
        return "-"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value).replace("\n", " ")


def encode_token(value: Any) -> str:
    """A shell-safe page token for a JSON-able value (used for keyset cursors)."""
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def decode_token(token: str, what: str = "--after") -> Any:
    """The value of :func:`encode_token`; a mangled token raises ``OraError``."""
    try:
        return json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (ValueError, TypeError):
        raise OraError(f"{what}: {token!r} is not a page token printed by this command") from None


def start_window(argv: list[str], first_rows: Any = None) -> int:
    """Start the desktop window (imported lazily so the CLI never loads Qt otherwise);
    ``first_rows`` is the ``FirstRows`` read ahead for it, if any."""
    # No garbage collection while the window's modules load (about 90 young collections, ~35 ms,
    # with nothing to free): gui.app.tune_gc() turns it back on, tuned, once the window is built.
    gc.disable()
    try:
        from ..gui.app import main as gui_main
    except ImportError as exc:
        gc.enable()
        problem = missing(exc, "gui", "PySide6", "shiboken6", "qasync")
        print(f"ora-desktop: {problem or f'the window cannot start ({exc})'}; try 'ora-desktop --help'",
              file=sys.stderr)
        return 2
    return gui_main(argv, first_rows)


def window_main() -> int:
    """Entry point of ``ora-desktop-gui``: the window, or one line naming the missing extra."""
    return start_window(sys.argv[1:])


# ----------------------------------------------------------------------------- argument types
SQLITE_MAX_INT = 2**63 - 1  # the largest integer SQLite stores (a LIMIT beyond it is "datatype mismatch")


def _bounded(low: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", "").replace(",", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} must be {what}")
        if value > SQLITE_MAX_INT:
            raise argparse.ArgumentTypeError(f"{value} is too large (at most {SQLITE_MAX_INT})")
        return value

    return parse


def _checked(check: Callable[[Any], Any]) -> Callable[[str], Any]:
    """An argparse type from a core validator (the same rule, the same words)."""
    def parse(text: str) -> Any:
        try:
            return check(text)
        except InvalidValue as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = check.__name__.replace("check_", "")
    return parse


#: argparse types: a whole number of 1 or more; of 0 or more (``1_000_000`` accepted).
positive_int = _bounded(1, "1 or more")
count_int = _bounded(0, "0 or more")
#: argparse types checked by the engine's own validators (importance 1-10, health 0-1).
importance_arg = _checked(check_importance)
health_arg = _checked(check_health)
#: argparse types for time filters (a date, or an age such as 7d), checked by the engine's parser.
created_after_arg = _checked(check_created_after)
created_before_arg = _checked(check_created_before)


def text_arg(value: str) -> str:
    """A text argument where ``-`` means: read standard input."""
    return sys.stdin.read() if value == "-" else value


def quote_path(path: Path) -> str:
    """A path as a shell word (for commands we print for the user to run)."""
    return shlex.quote(str(path))


def describe(memory: Memory) -> str:
    """``id (type, importance N) 'first line'`` for one-line messages."""
    return f"{memory.id} ({memory.type}, importance {memory.importance}) {truncate(memory.title, 60)!r}"
