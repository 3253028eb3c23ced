"""``ora-desktop undo`` and ``merge`` on seed-made files: the last operation is taken back exactly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.unit.test_cli_helpers import assert_one_line_error, cli, sql

ROWS = [
    ("a", "Deploys go out from the main branch", "fact", 8),
    ("b", "Deploys go out from main", "fact", 5),
    ("c", "User prefers short answers", "preference", 6),
]
T = ("--site", "anwe-sh", "--agent", "ora")


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    path = seed_db(ROWS)
    sql(path, """UPDATE memories SET related_to = '["c"]', sync_status = 'synced' WHERE id = 'a'""")
    return path


def rows(path: Path) -> list[tuple]:
    return sql(path, "SELECT * FROM memories ORDER BY id")


def test_undo_of_an_edit_a_delete_and_a_merge_one_after_the_other(capsys, db: Path) -> None:
    start = rows(db)
    assert cli(capsys, "edit", *T, "a", "--importance", "2").code == 0
    after_edit = rows(db)
    assert cli(capsys, "rm", *T, "c").code == 0
    after_rm = rows(db)
    merged = cli(capsys, "merge", *T, "a", "b", "--keep", "b", "--json")
    assert merged.code == 0 and merged.json()["superseded"] == ["a"]

    listed = cli(capsys, "undo", *T, "--list", "--json").json()
    assert [e["kind"] for e in listed] == ["merged", "deleted", "edited"]

    result = cli(capsys, "undo", *T)
    assert result.code == 0 and "undid “merge 2 memories into b”" in result.out
    assert rows(db) == after_rm
    result = cli(capsys, "undo", *T)
    assert result.code == 0 and "undid “delete 1 memory”" in result.out and "1 restored" in result.out
    assert rows(db) == after_edit  # c back, and a's link to c (and a's sync state) with it
    result = cli(capsys, "undo", *T, "--json")
    assert result.code == 0 and result.json()["changed"] == ["a"]
    assert rows(db) == start


def test_undo_with_nothing_to_undo_is_one_line_and_changes_nothing(capsys, db: Path) -> None:
    before = db.read_bytes()
    assert_one_line_error(cli(capsys, "undo", *T), "nothing to undo", str(db))
    assert db.read_bytes() == before
    empty = cli(capsys, "undo", *T, "--list")
    assert empty.code == 0 and "nothing to undo" in empty.out


def test_undo_is_refused_when_someone_else_edited_the_memory_since(capsys, db: Path) -> None:
    assert cli(capsys, "edit", *T, "a", "--content", "Deploys go out from release branches").code == 0
    sql(db, "UPDATE memories SET importance = 10 WHERE id = 'a'")  # an agent, underneath
    theirs = rows(db)
    refused = cli(capsys, "undo", *T)
    assert_one_line_error(refused, "cannot undo", "'a' was changed by another program", "undo --forget")
    assert rows(db) == theirs
    # --forget drops the stale step; the step before (none here) would be next
    forgot = cli(capsys, "undo", *T, "--forget")
    assert forgot.code == 0 and "forgot" in forgot.out
    assert_one_line_error(cli(capsys, "undo", *T), "nothing to undo")
    assert rows(db) == theirs


def test_undelete_and_add_and_link_and_supersede_are_undoable(capsys, db: Path) -> None:
    start = rows(db)
    assert cli(capsys, "link", *T, "b", "c").code == 0
    assert cli(capsys, "supersede", *T, "b", "a").code == 0
    assert cli(capsys, "add", *T, "Staging mirrors production").code == 0
    for _ in range(3):
        assert cli(capsys, "undo", *T).code == 0
    assert rows(db) == start
    rm = cli(capsys, "rm", *T, "b", "--json").json()
    assert cli(capsys, "undelete", *T, *map(str, rm["trash_ids"])).code == 0
    assert cli(capsys, "undo", *T).code == 0  # takes back the undelete: b is in the trash again
    assert [r[0] for r in rows(db)] == ["a", "c"]
    assert cli(capsys, "undo", *T).code == 0  # and the rm
    assert rows(db) == start


def test_merge_refuses_bad_ids_in_one_line(capsys, db: Path) -> None:
    before = rows(db)
    assert_one_line_error(cli(capsys, "merge", *T, "a", "nope"), "nope")
    assert_one_line_error(cli(capsys, "merge", *T, "a", "b", "--keep", "c"), "keep")
    assert_one_line_error(cli(capsys, "undo", *T, "--list", "--forget"), "--list or --forget")
    assert rows(db) == before


def test_merge_new_writes_a_memory_superseding_all_and_undo_trashes_it(capsys, db: Path) -> None:
    before = rows(db)
    result = cli(capsys, "merge", *T, "a", "b", "--new", "--content", "Deploys go out from main", "--json")
    assert result.code == 0, result
    new_id = result.json()["kept"]["id"]
    assert result.json()["superseded"] == ["a", "b"] and result.json()["kept"]["importance"] == 8
    assert sql(db, "SELECT superseded_by FROM memories WHERE id IN ('a', 'b')") == [(new_id,), (new_id,)]
    assert cli(capsys, "undo", *T).code == 0
    assert rows(db) == before
    assert sql(db, "SELECT memory_id FROM ora_desktop_trash") == [(new_id,)]  # recoverable
    assert_one_line_error(cli(capsys, "merge", *T, "a", "b", "--new"), "--new", "--content")


def test_redo_does_again_what_undo_took_back_and_a_new_edit_ends_it(capsys, db: Path) -> None:
    start = rows(db)
    assert cli(capsys, "edit", *T, "a", "--importance", "2").code == 0
    edited = rows(db)
    assert cli(capsys, "undo", *T).code == 0 and rows(db) == start
    listed = cli(capsys, "redo", *T, "--list", "--json").json()
    assert [e["label"] for e in listed] == ["edit importance of a"]
    result = cli(capsys, "redo", *T)
    assert result.code == 0 and "redid “edit importance of a”" in result.out and rows(db) == edited
    assert cli(capsys, "undo", *T).code == 0
    assert cli(capsys, "edit", *T, "b", "--importance", "1").code == 0  # a new step ends the redo branch
    after = rows(db)
    assert "nothing to redo" in cli(capsys, "redo", *T, "--list").out
    assert_one_line_error(cli(capsys, "redo", *T), "nothing to redo", str(db))
    assert rows(db) == after


def test_an_import_from_the_command_line_is_one_undo_step_and_redo_imports_it_again(capsys, db: Path,
                                                                                     tmp_path: Path) -> None:
    import json

    start = rows(db)
    source = tmp_path / "notes.jsonl"
    source.write_text("".join(json.dumps({"id": f"n{i}", "content": f"note {i}", "created_at": "2025-01-01 00:00:00",
                                          "updated_at": "2025-01-01 00:00:00"}) + "\n" for i in range(3)),
                      encoding="utf-8")
    imported = cli(capsys, "import", str(source), *T)
    assert imported.code == 0 and "'ora-desktop undo' takes the whole import back" in imported.out
    after = rows(db)
    result = cli(capsys, "undo", *T)
    assert "undid “import of 3 memories from notes.jsonl”" in result.out and rows(db) == start
    assert "redid “import of 3 memories from notes.jsonl”" in cli(capsys, "redo", *T).out
    assert rows(db) == after
