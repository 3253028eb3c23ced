"""Import rules: all or nothing, --skip-bad, clear errors for bad sources, conflicts, undo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ora_desktop.core import InvalidValue, OraError, ReadOnlyDatabase, create_database, open_store
from ora_desktop.core.exchange import BadSource
from ora_desktop.core.operations.importing import ImportRefused, undo_import
from ora_desktop.core.rawsql import all_rows as store_rows
from tests.unit.exchange_support import all_rows, context_memory_db, raw_memories_db
from tests.unit.test_cli_helpers import content_digest


def _line(id_: str, content: str = "text", **extra) -> str:
    row = {"id": id_, "content": content, "type": "fact", "importance": 5, "created_at": "2025-01-01 00:00:00",
           "updated_at": "2025-01-01 00:00:00", **extra}
    return json.dumps(row, ensure_ascii=False)


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "agent.site.db"
    create_database(path)
    with open_store(path) as store:
        store.add("already here", id="keep-1")
    return path


def _write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_one_bad_row_writes_nothing_and_names_line_and_field(tmp_path: Path, target: Path) -> None:
    source = _write(tmp_path / "in.jsonl", _line("a"), _line("b", importance=11), "{not json", _line("c"))
    before = content_digest(target)
    with open_store(target) as store, pytest.raises(ImportRefused) as error:
        store.import_from(source)
    message = str(error.value)
    assert "line 2, field importance: 11 is outside the allowed range 1 to 10" in message
    assert "line 3, field json: not valid JSON" in message and "nothing was imported" in message
    assert content_digest(target) == before


def test_skip_bad_imports_the_rest_and_lists_what_was_skipped(tmp_path: Path, target: Path) -> None:
    source = _write(tmp_path / "in.jsonl", _line("a"), _line("b", type="opinion"), _line("c", content="  "),
                    _line("d", created_at="yesterday"), _line("a"), _line("e"))
    with open_store(target) as store:
        result = store.import_from(source, skip_bad=True)
        assert {m.id for m in store.list(limit=None)} == {"keep-1", "a", "e"}
    assert [(s.where, s.field) for s in result.skipped] == [
        ("line 2", "type"), ("line 3", "content"), ("line 4", "created_at"), ("line 5", "id")]
    assert "appears earlier in the source" in result.skipped[-1].problem


def test_csv_with_a_broken_record_is_refused_with_its_line(tmp_path: Path, target: Path) -> None:
    source = tmp_path / "in.csv"
    source.write_text('id,content,created_at,updated_at\r\nx1,"two\r\nlines",2025-01-01,2025-01-01\r\n'
                      "x2,short\r\nx3,fine,2025-01-01,2025-01-01\r\n", encoding="utf-8")
    with open_store(target) as store, pytest.raises(ImportRefused, match="line 4, field csv: has 2 fields"):
        store.import_from(source)
    with open_store(target) as store:
        result = store.import_from(source, skip_bad=True)
        assert store.get("x1").content == "two\r\nlines"
    assert result.added == 2


@pytest.mark.parametrize("content, expected", [
    (b"just some words\n", "none of the import formats"),
    (b"\xff\xfe\x00garbage", "neither SQLite nor UTF-8"),
    (b"", "none of the import formats"),
    (b'{"nodes": 3}', "nodes"),
])
def test_a_source_that_is_no_format_gets_a_clear_error(tmp_path: Path, target: Path, content: bytes,
                                                       expected: str) -> None:
    source = tmp_path / "mystery"
    source.write_bytes(content)
    before = content_digest(target)
    with open_store(target) as store, pytest.raises((BadSource, ImportRefused), match=expected):
        store.import_from(source)
    assert content_digest(target) == before


def test_a_sqlite_file_of_another_kind_names_what_was_expected(tmp_path: Path, target: Path) -> None:
    source = context_memory_db(tmp_path / "context.db")
    with open_store(target) as store, pytest.raises(BadSource, match="is not a zoo context database.*context-memory"):
        store.import_from(source, "zoo")


def test_auto_detects_by_content_not_by_name(tmp_path: Path, target: Path) -> None:
    jsonl_named_csv = _write(tmp_path / "looks.csv", _line("n1"))
    context_named_json = tmp_path / "looks.json"
    shutil.copyfile(context_memory_db(tmp_path / "context.db"), context_named_json)
    with open_store(target) as store:
        assert store.import_from(jsonl_named_csv).format == "jsonl"
        assert store.import_from(context_named_json).format == "context-memory"


def test_conflicts_skip_replace_and_newer(tmp_path: Path, target: Path) -> None:
    older = _write(tmp_path / "old.jsonl", _line("keep-1", "older text", updated_at="2000-01-01T00:00:00Z"))
    newer = _write(tmp_path / "new.jsonl", _line("keep-1", "newer text", updated_at="2999-01-01T00:00:00Z"))
    with open_store(target) as store:
        assert store.import_from(newer).kept == 1 and store.get("keep-1").content == "already here"
        assert store.import_from(older, on_conflict="newer").kept == 1
        assert store.get("keep-1").content == "already here"
        result = store.import_from(newer, on_conflict="newer")
        assert (result.replaced, store.get("keep-1").content) == (1, "newer text")
        store.import_from(older, on_conflict="replace")
        assert store.get("keep-1").content == "older text"
        # Replaced rows are kept in the trash first (nothing lost silently).
        assert [d.memory.content for d in store.trash()] == ["newer text", "already here"]
        with pytest.raises(InvalidValue, match="on_conflict"):
            store.import_from(older, on_conflict="merge")


def test_undo_takes_the_whole_import_back(tmp_path: Path, target: Path) -> None:
    source = _write(tmp_path / "in.jsonl", _line("keep-1", "replacement"), _line("new-1"), _line("new-2"))
    before = all_rows(target)
    with open_store(target) as store:
        result = store.import_from(source, on_conflict="replace")
        assert store.count() == 3
        change = undo_import(store, result)
    assert change.removed == {"new-1", "new-2"} and change.changed == {"keep-1"}
    assert all_rows(target) == before  # the replaced row is back exactly as it was


def test_an_import_is_one_step_of_the_file_s_undo_journal_and_redo_does_it_again(tmp_path: Path,
                                                                                   target: Path) -> None:
    from ora_desktop.core.operations import journal
    from ora_desktop.core.operations.undo import redo, undo

    source = _write(tmp_path / "in.jsonl", _line("keep-1", "replacement"), _line("new-1"), _line("new-2"))
    before = all_rows(target)
    with open_store(target) as store:
        store.import_from(source, on_conflict="replace")
        imported = all_rows(target)
        assert [e.label for e in journal.entries(store)] == ["import of 3 memories from in.jsonl"]
        assert undo(store).change.removed == {"new-1", "new-2"}
        assert all_rows(target) == before  # the replaced row is back exactly as it was
        redo(store)
        assert all_rows(target) == imported
        assert [e.label for e in journal.entries(store)] == ["import of 3 memories from in.jsonl"]


def test_dry_run_reports_without_writing_and_read_only_targets_refuse(tmp_path: Path, target: Path) -> None:
    source = raw_memories_db(tmp_path / "src.site.db")
    before = content_digest(target)
    with open_store(target, readonly=True) as store:
        preview = store.import_from(source, dry_run=True, sample=3)
        assert preview.added == 8 and len(preview.sample) == 3 and not preview.change
        with pytest.raises(ReadOnlyDatabase):
            store.import_from(source)
    assert content_digest(target) == before


def test_foreign_times_become_sqlite_format_and_sync_status_pending(tmp_path: Path, target: Path) -> None:
    source = context_memory_db(tmp_path / "context.db")
    with open_store(target) as store:
        store.import_from(source)
        rows = store_rows(store, "SELECT created_at, updated_at, sync_status FROM memories WHERE id LIKE 'imp-%'")
    assert all(len(c) == 19 and c[10] == " " and len(u) == 19 for c, u, _ in rows)
    assert {s for _, _, s in rows} == {"pending"}


def test_a_file_is_never_imported_into_itself_nor_exported_over_itself(tmp_path: Path, target: Path) -> None:
    before = content_digest(target)
    with open_store(target) as store:
        with pytest.raises(BadSource, match="is the file being imported into"):
            store.import_from(target, on_conflict="replace")
        with pytest.raises(OraError, match="is the memory file being exported"):
            store.export(target)
    assert content_digest(target) == before


def test_a_target_lacking_columns_takes_the_columns_it_has(tmp_path: Path) -> None:
    import sqlite3

    target = tmp_path / "old.site.db"
    conn = sqlite3.connect(target)
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT NOT NULL, created_at TEXT NOT NULL, "
                 "updated_at TEXT NOT NULL)")
    conn.close()
    source = _write(tmp_path / "in.jsonl", _line("a", "first"), _line("b", "second"))
    with open_store(target) as store:
        assert store.import_from(source).added == 2
    assert all_rows(target) == [("a", "first", "2025-01-01 00:00:00", "2025-01-01 00:00:00"),
                                ("b", "second", "2025-01-01 00:00:00", "2025-01-01 00:00:00")]


def test_a_locked_target_or_a_broken_sqlite_source_changes_nothing(tmp_path: Path, target: Path) -> None:
    import sqlite3

    from ora_desktop.core import DatabaseLocked, OraError

    source = _write(tmp_path / "in.jsonl", _line("a"))
    before = content_digest(target)
    holder = sqlite3.connect(target, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with open_store(target, timeout=0.2) as store, pytest.raises(DatabaseLocked, match="locked"):
            store.import_from(source)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"SQLite format 3\x00" + b"\x13" * 500)
    with open_store(target) as store, pytest.raises(OraError, match="broken.db"):
        store.import_from(broken)
    assert content_digest(target) == before
