"""Issue 9's clear errors: each bad input gets one line naming the problem and the right exit code."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.unit.maintenance_support import make_db
from tests.unit.test_cli_helpers import assert_one_line_error, cli, content_digest


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_db(ora_home / "sites" / "s" / "ora.site.db", [{"id": f"m{i}"} for i in range(3)])


def test_a_limit_beyond_what_sqlite_holds_is_refused(capsys, db: Path) -> None:
    assert_one_line_error(cli(capsys, "list", "--db", db, "--limit", "9223372036854775808"), "too large")
    assert cli(capsys, "list", "--db", db, "--limit", "9223372036854775807").code == 0


def test_jobs_limit_must_not_be_negative(capsys, db: Path) -> None:
    result = cli(capsys, "jobs", "--limit", "-1")
    assert result.code == 2 and "0 or more" in result.err and "Traceback" not in result.err


def test_an_id_that_is_not_utf8_is_named_not_a_codec_error(capsys, db: Path) -> None:
    before = content_digest(db)
    result = cli(capsys, "rm", "--db", db, b"\xff".decode("utf-8", "surrogateescape"))
    assert_one_line_error(result, "not valid UTF-8", "\\xff")
    assert "codec" not in result.err
    assert content_digest(db) == before


@pytest.mark.parametrize("shape", ["no-memories", "no-columns"])
def test_search_on_a_file_of_the_wrong_shape_fails(capsys, ora_home: Path, shape: str) -> None:
    path = ora_home / "odd.site.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE other (x)" if shape == "no-memories" else "CREATE TABLE memories (x)")
    conn.commit()
    conn.close()
    assert_one_line_error(cli(capsys, "search", "anything", "--db", path), str(path), "memories")


def test_a_malformed_expect_version_is_not_called_a_conflict(capsys, db: Path) -> None:
    before = content_digest(db)
    result = cli(capsys, "edit", "--db", db, "m1", "--importance", "8", "--expect-version", "yesterday-ish")
    assert_one_line_error(result, "not a version")
    assert "changed by another program" not in result.err
    assert content_digest(db) == before
