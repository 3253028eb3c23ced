"""Bad input on the command line: one line naming the problem, non-zero exit, nothing changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.unit.test_cli_helpers import assert_one_line_error, cli, content_digest, file_state, sql

ROWS = [("a", "first memory", "fact", 5), ("b", "second memory", "task", 7)]
T = ("--site", "anwe-sh", "--agent", "ora")


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    return seed_db(ROWS)


WRITES = (
    ("add", "x"), ("edit", "a", "--content", "x"), ("rm", "a"), ("touch", "a"), ("link", "a", "b"),
    ("supersede", "a", "b"), ("undelete", "1"),
)
READS = (("list",), ("show", "a"), ("recall", "fact"), ("important",), ("trash",), ("check-schema",))


@pytest.mark.parametrize("argv", READS + WRITES, ids=lambda a: a[0])
def test_missing_target_is_one_line(capsys, argv: tuple[str, ...]) -> None:
    assert_one_line_error(cli(capsys, *argv), "--db PATH", "--site SLUG --agent NAME")


@pytest.mark.parametrize("argv", READS + WRITES, ids=lambda a: a[0])
def test_not_a_database_file(capsys, tmp_path: Path, argv: tuple[str, ...]) -> None:
    bad = tmp_path / "notes.site.db"
    bad.write_text("these are my notes, not SQLite\n" * 10)
    before = file_state(bad)
    result = cli(capsys, argv[0], "--db", bad, *argv[1:])
    assert_one_line_error(result, str(bad), "not an SQLite database")
    assert file_state(bad) == before


@pytest.mark.parametrize("problem", ["empty", "truncated", "no memories table", "missing"])
def test_bad_files_name_the_file_and_problem(capsys, tmp_path: Path, db: Path, problem: str) -> None:
    path = tmp_path / "bad.site.db"
    if problem == "empty":
        path.write_bytes(b"")
        words = ["empty"]
    elif problem == "truncated":
        path.write_bytes(db.read_bytes()[:1500])
        words = ["truncated"]
    elif problem == "no memories table":
        sql(path, "CREATE TABLE notes (x)")
        words = ["no 'memories' table"]
    else:
        words = ["no such file"]
    for argv in (("list",), ("add", "x"), ("check-schema",)):
        result = cli(capsys, argv[0], "--db", path, *argv[1:])
        assert_one_line_error(result, str(path), *words)
    assert path.exists() == (problem != "missing")


@pytest.mark.parametrize("site,agent", [("../x", "ora"), ("anwe-sh", "../../etc/passwd"), (".hidden", "ora"),
                                         ("a/b", "ora")])
def test_escaping_names_are_refused(capsys, db: Path, ora_home: Path, site: str, agent: str) -> None:
    before = sorted(p.relative_to(ora_home) for p in ora_home.rglob("*"))
    for argv in (("list",), ("add", "x", "--create")):
        result = cli(capsys, argv[0], "--site", site, "--agent", agent, *argv[1:])
        assert_one_line_error(result, "must not")
    assert sorted(p.relative_to(ora_home) for p in ora_home.rglob("*")) == before


@pytest.mark.parametrize("argv,words", [
    (("add", "x", "--importance", "11"), ["importance", "1 to 10"]),
    (("add", "x", "--importance", "0"), ["importance", "1 to 10"]),
    (("add", "x", "--health", "1.5"), ["health_score", "0.0 to 1.0"]),
    (("add", "   "), ["content", "empty"]),
    (("add", "x", "--expires", "next tuesday"), ["expires_at", "not a timestamp"]),
    (("edit", "a", "--importance", "11"), ["importance", "1 to 10"]),
    (("edit", "a", "--health", "-0.1"), ["health_score"]),
    (("edit", "a", "--content", ""), ["content", "empty"]),
    (("edit", "a"), ["nothing to change"]),
    (("edit", "nope", "--importance", "3"), ["nope"]),
    (("show", "nope"), ["nope"]),
    (("rm", "a", "nope"), ["nope", "nothing changed"]),
    (("touch", "a", "nope"), ["nope"]),
    (("link", "a", "nope"), ["nope"]),
    (("link", "a", "a"), ["itself"]),
    (("supersede", "a", "nope"), ["nope"]),
    (("supersede", "a", "a"), ["itself"]),
    (("undelete", "42"), ["42"]),
    (("list", "--after", "garbage!"), ["--after"]),
    (("list", "--min-importance", "11"), ["--min-importance", "1 to 10"]),
    (("list", "--max-health", "2"), ["--max-health", "0.0 to 1.0"]),
    (("list", "--type", "opinion"), ["--type", "opinion"]),
    (("list", "--sort", "colour"), ["--sort", "colour"]),
    (("list", "--limit", "0"), ["--limit"]),
    (("list", "--limit", "ten"), ["--limit", "ten"]),
    (("recall", "opinion"), ["opinion"]),
    (("add", "x", "--sync-status", "maybe"), ["--sync-status", "maybe"]),
    (("list", "--no-such-option"), ["--no-such-option"]),
    (("list", "--dirty", "--clean"), ["--clean", "--dirty"]),
    (("list", "--after", "x", "--offset", "3"), ["--offset", "--after"]),
])
def test_bad_values_change_nothing(capsys, db: Path, argv: tuple[str, ...], words: list[str]) -> None:
    before = content_digest(db)
    result = cli(capsys, argv[0], *T, *argv[1:])
    assert_one_line_error(result, *words)
    assert content_digest(db) == before


def test_unknown_command_and_bad_demo_count(capsys, tmp_path: Path) -> None:
    assert_one_line_error(cli(capsys, "frobnicate"), "frobnicate")
    assert_one_line_error(cli(capsys, "demo", "--home", tmp_path, "--memories", "-5"), "--memories")
    assert not any(tmp_path.iterdir())


def test_unexpected_errors_are_one_line_too(capsys, db: Path, monkeypatch) -> None:
    def boom(*args, **kwargs):
        raise RuntimeError("something odd\nacross lines")

    monkeypatch.setattr("ora_desktop.core.store.Store.recall", boom)
    result = cli(capsys, "recall", *T, "fact")
    assert_one_line_error(result, "unexpected error", "RuntimeError", "something odd across lines")
