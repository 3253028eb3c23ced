"""Helpers for the CLI tests (no tests here): run ``ora-desktop`` in-process, fingerprint files."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ora_desktop.cli import main


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def json(self) -> Any:
        return json.loads(self.out)

    def __repr__(self) -> str:
        return f"<exit {self.code} out={self.out[:200]!r} err={self.err!r}>"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Result:
    """Run ``ora-desktop argv...`` in this process; argparse exits become exit codes."""
    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def assert_one_line_error(result: Result, *words: str) -> None:
    """Non-zero exit, exactly one line on stderr naming the problem, no traceback."""
    assert result.code != 0, result
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert "Traceback" not in result.err
    assert lines[0].startswith("ora-desktop"), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])


def content_digest(path: Path) -> str:
    """Hash of every row and schema object (what a user could see change)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        dump = "\n".join(conn.iterdump())
    finally:
        conn.close()
    return hashlib.sha256(dump.encode()).hexdigest()


def file_state(path: Path) -> tuple[bytes, list[str]]:
    """The file's bytes and its folder listing (a read-only session must not change either)."""
    return path.read_bytes(), sorted(p.name for p in path.parent.iterdir())


def sql(path: Path, query: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(query, params).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()
