"""The faces hold no SQL: every statement lives in ``ora_desktop/core`` (ARCHITECTURE.md, "Layers").

import-linter checks which layer imports which (``make lint``); this checks what it cannot see,
SQL text in the CLI, the window and its view state, the MCP server and the daemon.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import ora_desktop

PACKAGE = Path(ora_desktop.__file__).parent
FACES = ("cli", "gui", "views", "mcp", "daemon.py")  # and the window's view state
#: Statements as this code base writes them (keywords in capitals, so prose does not match).
SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|VIEW)"
                 r"|PRAGMA\s+\w+)\b", re.DOTALL)


def code_strings(source: str) -> list[tuple[int, str]]:
    """String literals and f-strings of a module (docstrings left out), with their lines."""
    tree = ast.parse(source)
    skipped = set()  # docstrings, and the pieces of f-strings (read whole below)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(v) for v in node.values)
        body = getattr(node, "body", None)  # an ast node's fields are named by the grammar
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            skipped.add(id(body[0].value))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            found.append((node.lineno, text))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            found.append((node.lineno, node.value))
    return found


def face_modules() -> list[Path]:
    out = []
    for face in FACES:
        path = PACKAGE / face
        out += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return out


def test_the_scan_finds_sql_in_code_and_not_in_docstrings() -> None:
    found = code_strings('"""SELECT x FROM y in a docstring"""\nq = f"SELECT id FROM {t} WHERE a = ?"\n'
                         'm = "select the rows you want from the list"\n')
    assert [line for line, text in found if SQL.search(text)] == [2]


def test_no_sql_in_the_cli_the_window_the_mcp_server_or_the_daemon() -> None:
    offenders = []
    for path in face_modules():
        name = path.relative_to(PACKAGE).as_posix()
        offenders += [f"{name}:{line}: {text[:60]!r}" for line, text in code_strings(path.read_text())
                      if SQL.search(text)]
    assert offenders == [], "SQL belongs in ora_desktop/core (a read or write operation):\n" + "\n".join(offenders)
