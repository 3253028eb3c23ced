"""Export to JSONL/CSV/Markdown and import back: exact round trips on files written by raw SQL."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

from ora_desktop.core import create_database, open_store
from ora_desktop.core.exchange.ownformat import EXPORT_COLUMNS, FORMAT_VERSION
from ora_desktop.core.operations.export import export_memories
from ora_desktop.core.schema import MEMORY_COLUMNS
from tests.unit.exchange_support import ODD_TEXTS, all_rows, raw_memories_db
from tests.unit.test_cli_helpers import assert_one_line_error, cli, file_state


@pytest.fixture
def source(ora_home: Path) -> Path:
    folder = ora_home / "sites" / "anwe-sh"
    folder.mkdir(parents=True)
    return raw_memories_db(folder / "ora.site.db")


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_then_import_into_a_new_file_gives_identical_rows(source: Path, tmp_path: Path, fmt: str) -> None:
    before = file_state(source)
    with open_store(source, readonly=True) as store:
        result = store.export(tmp_path / f"out.{fmt}", fmt)
    assert result.count == len(ODD_TEXTS)
    assert file_state(source) == before  # exporting only reads
    target = tmp_path / "copy.site.db"
    create_database(target)
    with open_store(target) as store:
        imported = store.import_from(tmp_path / f"out.{fmt}")
    assert imported.format == fmt and imported.added == len(ODD_TEXTS) and not imported.skipped
    assert all_rows(target) == all_rows(source)  # column for column: text, numbers, both time formats
    raw = {r[0]: r for r in all_rows(target)}
    assert raw["raw-1"][MEMORY_COLUMNS.index("created_at")] == "2025-01-14T10:30:00.000Z"
    assert raw["raw-0"][MEMORY_COLUMNS.index("created_at")] == "2025-01-14 10:30:00"
    assert raw["raw-3"][MEMORY_COLUMNS.index("health_score")] == 0.3333333333333333


def test_jsonl_names_its_format_version_and_carries_site_and_agent(source: Path, tmp_path: Path) -> None:
    with open_store(source, readonly=True) as store:
        store.export(tmp_path / "out.jsonl")
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").split("\n")
    header = json.loads(lines[0])
    assert header == {"ora_desktop_export": FORMAT_VERSION, "columns": list(EXPORT_COLUMNS)}
    first = json.loads(lines[1])
    assert (first["site"], first["agent"], first["id"]) == ("anwe-sh", "ora", "raw-0")
    assert first["last_accessed_at"] is None and isinstance(first["importance"], int)
    assert len([line for line in lines if line]) == len(ODD_TEXTS) + 1  # newlines inside text are escaped


def test_csv_is_rfc4180_utf8_with_odd_text_intact(source: Path, tmp_path: Path) -> None:
    with open_store(source, readonly=True) as store:
        store.export(tmp_path / "out.csv", "csv")
    data = (tmp_path / "out.csv").read_bytes()
    assert data.startswith(b"site,agent,id,content,") and b"\r\n" in data
    with open(tmp_path / "out.csv", encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [r["content"] for r in rows] == list(ODD_TEXTS)
    assert rows[0]["last_accessed_at"] == ""  # NULL is an empty cell


def test_markdown_review_groups_by_type_with_importance_health_sync_and_links(source: Path, tmp_path: Path) -> None:
    with open_store(source, readonly=True) as store:
        store.export(tmp_path / "review.md", "md")
    text = (tmp_path / "review.md").read_text(encoding="utf-8")
    assert text.startswith(f"# Memories ({len(ODD_TEXTS)})")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## fact (2)", "## preference (2)", "## context (2)", "## task (1)", "## conversation (1)"]
    assert "importance 1 · health 0.10 · sync pending" in text
    assert "Related: `raw-1`" in text and "Superseded by `raw-0`" in text
    assert "> line two" in text


def test_export_a_query_or_a_selection_only(source: Path, tmp_path: Path) -> None:
    with open_store(source, readonly=True) as store:
        found = store.export(tmp_path / "q.jsonl", query="emoji")
        chosen = store.export(tmp_path / "ids.jsonl", ids=["raw-4", "raw-6", "nope"])
    assert found.count == 1
    assert "👩‍💻" in (tmp_path / "q.jsonl").read_text(encoding="utf-8")
    assert chosen.count == 2  # the superseded memory raw-4 is exported too when chosen


def test_export_every_file_of_the_home_names_each_site_and_agent(source: Path, tmp_path: Path) -> None:
    other = source.parent.parent / "blog" / "writer.site.db"
    other.parent.mkdir()
    raw_memories_db(other)
    result = export_memories([source, other], tmp_path / "all.jsonl")
    lines = (tmp_path / "all.jsonl").read_text(encoding="utf-8").split("\n")[1:-1]  # U+2028 is no line break
    assert result.count == 2 * len(ODD_TEXTS)
    assert {(json.loads(x)["site"], json.loads(x)["agent"]) for x in lines} == {("anwe-sh", "ora"), ("blog", "writer")}


def test_a_cancelled_export_leaves_no_file(source: Path, tmp_path: Path) -> None:
    from ora_desktop.core import OraError

    with open_store(source, readonly=True) as store, pytest.raises(OraError, match="cancelled"):
        store.export(tmp_path / "out.jsonl", cancel=lambda: True)
    assert list(tmp_path.iterdir()) == []


def test_importing_an_ora_file_seeds_a_new_agent(source: Path, tmp_path: Path) -> None:
    target = tmp_path / "seeded.site.db"
    create_database(target)
    with open_store(target) as store:
        result = store.import_from(source)
    assert result.format == "ora" and result.added == len(ODD_TEXTS)
    assert all_rows(target) == all_rows(source)


def test_csv_with_columns_in_another_order_and_missing_ones_imports(tmp_path: Path) -> None:
    path = tmp_path / "hand-made.csv"
    path.write_text("content,id,created_at,updated_at,importance\r\n"
                    '"Hello, world",h1,2025-01-01 00:00:00,2025-01-01 00:00:00,8\r\n', encoding="utf-8")
    target = tmp_path / "t.site.db"
    create_database(target)
    with open_store(target) as store:
        store.import_from(path)
        memory = store.get("h1")
    assert (memory.content, memory.importance, memory.type) == ("Hello, world", 8, None)


def test_a_file_lacking_columns_exports_them_as_null(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "old.site.db")
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT NOT NULL, created_at TEXT NOT NULL, "
                 "updated_at TEXT NOT NULL)")
    conn.execute("INSERT INTO memories VALUES ('o1', 'old writer', '2024-01-01 00:00:00', '2024-01-01 00:00:00')")
    conn.commit()
    conn.close()
    with open_store(tmp_path / "old.site.db", readonly=True) as store:
        store.export(tmp_path / "old.jsonl")
    row = json.loads((tmp_path / "old.jsonl").read_text(encoding="utf-8").splitlines()[1])
    assert row["content"] == "old writer" and row["sync_status"] is None and row["type"] is None


def _stored_exactly(path: Path) -> list[tuple]:
    """Every column of every memory as SQLite holds it: storage class and bytes."""
    with sqlite3.connect(path) as conn:
        select = ", ".join(f"typeof({c}), hex({c})" for c in MEMORY_COLUMNS)
        rows = conn.execute(f"SELECT {select} FROM memories ORDER BY id").fetchall()
    conn.close()
    return rows


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_content_that_is_not_utf8_or_a_blob_exports_readably_and_imports_back_byte_identical(
        source: Path, tmp_path: Path, fmt: str, capsys) -> None:
    with sqlite3.connect(source) as conn:  # an agent wrote bytes that are not UTF-8, and a BLOB
        for memory_id, value in (("latin-1", "CAST(X'6361666520E920FF' AS TEXT)"), ("blob", "X'00FF6869'"),
                                 ("utf8-blob", "CAST('plain words' AS BLOB)")):
            conn.execute(f"INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                         f"VALUES ('{memory_id}', {value}, 'fact', 5, '2026-01-01 00:00:00', '2026-01-01 00:00:00')")
    conn.close()
    out = tmp_path / f"out.{fmt}"
    exported = cli(capsys, "export", "--db", source, "-o", out, "--format", fmt)
    assert exported.code == 0, exported.err
    text = out.read_text(encoding="utf-8")
    assert "cafe \N{REPLACEMENT CHARACTER} \N{REPLACEMENT CHARACTER}" in text  # readable, bad bytes shown as U+FFFD
    target = tmp_path / "copy.site.db"
    imported = cli(capsys, "import", out, "--db", target, "--create")
    assert imported.code == 0, imported.err
    assert _stored_exactly(target) == _stored_exactly(source)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_other_text_that_is_not_utf8_is_named_in_one_line_and_nothing_written(source: Path, tmp_path: Path,
                                                                            fmt: str, capsys) -> None:
    with sqlite3.connect(source) as conn:
        conn.execute("UPDATE memories SET related_to = CAST(X'5B22FF225D' AS TEXT) WHERE rowid = 2")
    conn.close()
    out = tmp_path / f"out.{fmt}"
    result = cli(capsys, "export", "--db", source, "-o", out, "--format", fmt)
    assert_one_line_error(result, str(source), "not valid UTF-8 outside its content", "check --repair")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
