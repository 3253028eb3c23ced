"""The memory subcommands on files made by the seed's own SQL: output, JSON, effects."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.unit.test_cli_helpers import cli, content_digest, file_state, sql
from tests.unit.test_versions import another_program

ROWS = [
    ("f1", "Deploys go out from the main branch\nsecond line", "fact", 8),
    ("f2", "The cache lives in src/lib/cache.py", "fact", 3),
    ("p1", "User prefers short answers", "preference", 6),
    ("c1", "Background: the site runs on one VPS", "context", 5),
    ("t1", "TODO: fix TypeError in computeTax()", "task", 9),
    ("v1", "Chat recap: 日本語 translation is late", "conversation", 4),
]
T = ("--site", "anwe-sh", "--agent", "ora")


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    return seed_db(ROWS)


@pytest.fixture(autouse=True)
def no_terminal_width(monkeypatch) -> None:
    """Tables are not cut unless a test sets $COLUMNS itself."""
    monkeypatch.delenv("COLUMNS", raising=False)


# ----------------------------------------------------------------------------- reading
def test_sites_lists_agents_with_counts(capsys, seed_db, ora_home: Path) -> None:
    seed_db(ROWS)
    seed_db(ROWS[:2], agent="writer")
    seed_db([], site="shop-eu", agent="task-9")
    broken = ora_home / "sites" / "shop-eu" / "broken.site.db"
    broken.write_text("not a database")
    result = cli(capsys, "sites")
    assert result.code == 0
    assert "anwe-sh" in result.out and "writer" in result.out and "unreadable" in result.out
    data = cli(capsys, "sites", "--json").json()
    by_name = {(a["site"], a["agent"]): a for a in data["agents"]}
    assert by_name[("anwe-sh", "ora")]["memories"] == 6
    assert by_name[("anwe-sh", "writer")]["memories"] == 2
    assert by_name[("shop-eu", "task-9")]["task_agent"] is True
    assert "not an SQLite database" in by_name[("shop-eu", "broken")]["error"]


def test_sites_on_an_empty_home_suggests_the_demo(capsys, tmp_path: Path) -> None:
    result = cli(capsys, "sites", "--home", tmp_path)
    assert result.code == 0 and "ora-desktop demo" in result.out


def test_list_prints_a_table_with_first_lines(capsys, db: Path) -> None:
    result = cli(capsys, "list", *T)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].split()[:3] == ["ID", "TYPE", "IMP"]
    assert len(lines) == 1 + len(ROWS)
    row = next(line for line in lines if line.startswith("f1 "))
    assert "Deploys go out from the main branch" in row and "second line" not in row
    assert "-- more" not in result.out


def test_list_cuts_the_content_to_the_terminal_width(capsys, db: Path, monkeypatch) -> None:
    sql(db, "UPDATE memories SET content = ? WHERE id = 'c1'", ("word " * 100,))
    monkeypatch.setenv("COLUMNS", "100")
    lines = cli(capsys, "list", *T).out.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert next(line for line in lines if line.startswith("c1 ")).endswith("…")
    monkeypatch.delenv("COLUMNS")
    piped = cli(capsys, "list", *T).out  # not a terminal: nothing is cut
    assert ("word " * 100).strip() in piped


def test_list_json_and_filters(capsys, db: Path) -> None:
    def ids(*args: str) -> set[str]:
        result = cli(capsys, "list", *T, "--json", *args)
        assert result.code == 0, result
        return {m["id"] for m in result.json()["memories"]}

    sql(db, "UPDATE memories SET health_score = 0.1 WHERE id = 'f2'")
    sql(db, "UPDATE memories SET sync_status = 'synced', synced_at = datetime('now', '+1 hour') WHERE id = 'p1'")
    sql(db, "UPDATE memories SET sync_status = 'local_only' WHERE id = 'c1'")
    sql(db, "UPDATE memories SET expires_at = '2020-01-01T00:00:00.000Z' WHERE id = 'v1'")
    sql(db, "UPDATE memories SET expires_at = datetime('now', '+2 days') WHERE id = 't1'")
    sql(db, "UPDATE memories SET superseded_by = 'f1' WHERE id = 'f2'")

    assert ids() == {"f1", "p1", "c1", "t1", "v1"}
    assert ids("--superseded", "show") == {r[0] for r in ROWS}
    assert ids("--superseded", "only") == {"f2"}
    assert ids("--type", "fact", "--type", "task") == {"f1", "t1"}
    assert ids("--min-importance", "6", "--max-importance", "8") == {"f1", "p1"}
    assert ids("--max-health", "0.5", "--superseded", "show") == {"f2"}
    assert ids("--sync", "synced") == {"p1"}
    assert ids("--expired") == {"v1"}
    assert ids("--not-expired") == {"f1", "p1", "c1", "t1"}
    assert ids("--expiring-days", "3") == {"t1"}
    assert ids("--dirty") == {"f1", "t1", "v1"}
    assert ids("--clean") == {"p1", "c1"}
    assert ids("--text", "VPS") == {"c1"}
    assert cli(capsys, "list", *T, "--count").out.strip() == "5"
    assert cli(capsys, "list", *T, "--count", "--json", "--type", "fact").json() == {"count": 1}


def test_list_sorts_and_pages_by_keyset_and_offset(capsys, db: Path) -> None:
    result = cli(capsys, "list", *T, "--json", "--sort", "importance", "--ascending")
    assert [m["importance"] for m in result.json()["memories"]] == sorted(r[3] for r in ROWS)
    first = cli(capsys, "list", *T, "--json", "--sort", "importance", "--limit", "4").json()
    assert [m["id"] for m in first["memories"]] == ["t1", "f1", "p1", "c1"]
    assert first["next_after"]
    rest = cli(capsys, "list", *T, "--json", "--sort", "importance", "--limit", "4", "--after", first["next_after"])
    assert [m["id"] for m in rest.json()["memories"]] == ["v1", "f2"]
    assert rest.json()["next_after"] is None
    table = cli(capsys, "list", *T, "--sort", "importance", "--limit", "4")
    assert f"--after {first['next_after']}" in table.out
    skipped = cli(capsys, "list", *T, "--json", "--sort", "importance", "--offset", "4").json()
    assert [m["id"] for m in skipped["memories"]] == ["v1", "f2"]
    other_order = cli(capsys, "list", *T, "--after", first["next_after"])
    assert other_order.code != 0 and "--sort importance" in other_order.err
    beyond = cli(capsys, "list", *T, "--json", "--offset", "100").json()
    assert beyond["memories"] == []


def test_list_handles_mixed_timestamp_formats_as_time(capsys, db: Path) -> None:
    sql(db, "UPDATE memories SET created_at = '2025-01-14T10:30:00.000Z' WHERE id = 'f1'")
    sql(db, "UPDATE memories SET created_at = '2025-01-14 10:29:00' WHERE id = 'f2'")
    sql(db, "UPDATE memories SET created_at = '2025-01-14 12:00:00+02:00' WHERE id = 'p1'")
    result = cli(capsys, "list", *T, "--json", "--ascending", "--limit", "3").json()
    assert [m["id"] for m in result["memories"]] == ["p1", "f2", "f1"]  # 10:00, 10:29, 10:30 UTC
    assert result["memories"][2]["created_at"] == "2025-01-14 10:30:00"


def test_show_prints_everything_and_reports_links(capsys, db: Path) -> None:
    sql(db, """UPDATE memories SET related_to = '["p1", "gone-1"]' WHERE id = 'f1'""")
    sql(db, "UPDATE memories SET superseded_by = 'f1' WHERE id = 'f2'")
    result = cli(capsys, "show", *T, "f1")
    assert result.code == 0
    assert "Deploys go out from the main branch\nsecond line" in result.out
    assert "importance:    8" in result.out
    assert "related: p1" in result.out and "gone-1 (missing" in result.out
    assert "chain (newest first, live: f1): f1 <- f2" in result.out
    data = cli(capsys, "show", *T, "f1", "--json").json()
    assert data["memory"]["id"] == "f1" and data["memory"]["related_to"] == ["p1", "gone-1"]
    assert [m["id"] for m in data["related"]] == ["p1"]
    assert data["dangling_related"] == ["gone-1"]
    assert data["chain"] == ["f1", "f2"] and data["live"] == "f1"


def test_show_reports_malformed_related_to(capsys, db: Path) -> None:
    sql(db, "UPDATE memories SET related_to = '[\"p1\", ' WHERE id = 'c1'")
    result = cli(capsys, "show", *T, "c1")
    assert result.code == 0 and "malformed" in result.out
    assert cli(capsys, "show", *T, "c1", "--json").json()["memory"]["related_malformed"] is True


def test_recall_follows_the_seed_query(capsys, db: Path, seed_db) -> None:
    sql(db, "INSERT INTO memories (id, content, type, importance, health_score, created_at, updated_at) "
            "VALUES ('f3', 'old fact', 'fact', 8, 0.9, '2024-01-01T00:00:00.000Z', '2024-01-01 00:00:00'), "
            "('f4', 'sick fact', 'fact', 10, 0.3, datetime('now'), datetime('now'))")
    result = cli(capsys, "recall", *T, "fact", "--json")
    assert [m["id"] for m in result.json()] == ["f1", "f3", "f2"]
    assert [m["id"] for m in cli(capsys, "recall", *T, "fact", "--json", "--limit", "1").json()] == ["f1"]
    table = cli(capsys, "recall", *T, "preference")
    assert "p1" in table.out and "f1" not in table.out


def test_important_follows_the_seed_query(capsys, db: Path) -> None:
    sql(db, "UPDATE memories SET health_score = 0.2 WHERE id = 'f2'")
    result = cli(capsys, "important", *T, "--json")
    assert [m["id"] for m in result.json()] == ["t1", "f1"]
    assert "t1" in cli(capsys, "important", *T).out


def test_reading_commands_change_nothing_on_disk(capsys, db: Path) -> None:
    before = file_state(db)
    for argv in (("list", *T), ("list", *T, "--json", "--dirty"), ("show", *T, "f1"), ("recall", *T, "fact"),
                 ("important", *T), ("trash", *T), ("check-schema", *T), ("sites",), ("list", "--db", db)):
        assert cli(capsys, *argv).code == 0, argv
    assert file_state(db) == before


# ----------------------------------------------------------------------------- writing
def test_add_with_fields_and_json(capsys, db: Path) -> None:
    result = cli(capsys, "add", *T, "Use pnpm, not npm", "--type", "preference", "--importance", "7",
                 "--related", "f1", "--expires", "2030-01-01T00:00:00Z", "--json")
    assert result.code == 0
    memory = result.json()
    assert memory["type"] == "preference" and memory["importance"] == 7 and memory["related_to"] == ["f1"]
    row = sql(db, "SELECT content, sync_status, expires_at, created_at = updated_at FROM memories WHERE id = ?",
              (memory["id"],))
    assert row == [("Use pnpm, not npm", "pending", "2030-01-01 00:00:00", 1)]
    plain = cli(capsys, "add", *T, "plain", "--id", "my-id")
    assert plain.code == 0 and "added my-id" in plain.out


def test_add_reads_stdin_and_can_create_the_agent(capsys, ora_home: Path, monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("from stdin\nwith two lines"))
    missing = cli(capsys, "add", "--site", "new-site", "--agent", "bot", "-")
    assert missing.code != 0 and "no such file" in missing.err and "--create" in missing.err
    monkeypatch.setattr("sys.stdin", io.StringIO("from stdin\nwith two lines"))
    result = cli(capsys, "add", "--site", "new-site", "--agent", "bot", "--create", "-", "--json")
    assert result.code == 0
    path = ora_home / "sites" / "new-site" / "bot.site.db"
    assert sql(path, "SELECT content FROM memories") == [("from stdin\nwith two lines",)]
    assert cli(capsys, "check-schema", "--db", path).out.startswith("OK")


def test_edit_follows_the_sync_rule(capsys, db: Path) -> None:
    sql(db, "UPDATE memories SET sync_status = 'synced', synced_at = updated_at, "
            "updated_at = '2020-01-01 00:00:00', synced_at = '2020-01-01 00:00:00' WHERE id IN ('f1', 'c1')")
    sql(db, "UPDATE memories SET sync_status = 'local_only' WHERE id = 'c1'")
    result = cli(capsys, "edit", *T, "f1", "--content", "Deploys go out from release branches", "--importance", "9")
    assert result.code == 0 and "sync status pending" in result.out
    row = sql(db, "SELECT content, importance, sync_status, updated_at > '2020-01-01 00:00:00' FROM memories "
                  "WHERE id = 'f1'")
    assert row == [("Deploys go out from release branches", 9, "pending", 1)]
    assert cli(capsys, "edit", *T, "c1", "--type", "fact", "--json").json()["sync_status"] == "local_only"
    cleared = cli(capsys, "edit", *T, "t1", "--expires", "2031-05-05 10:00:00", "--health", "0.25", "--json").json()
    assert cleared["expires_at"] == "2031-05-05 10:00:00" and cleared["health_score"] == 0.25
    assert cli(capsys, "edit", *T, "t1", "--expires", "", "--json").json()["expires_at"] is None


def test_edit_with_a_stale_version_is_refused(capsys, db: Path) -> None:
    shown = cli(capsys, "show", *T, "f1", "--json").json()["memory"]["version"]
    assert shown in cli(capsys, "show", *T, "f1").out  # the readable show prints the same token
    # Another program changes the row without touching updated_at (raw SQL, as agents write).
    another_program(db, "UPDATE memories SET health_score = 0.31 WHERE id = 'f1'")
    before = content_digest(db)
    result = cli(capsys, "edit", *T, "f1", "--content", "x", "--expect-version", shown)
    assert result.code != 0 and "changed by another program" in result.err and "f1" in result.err
    assert result.err.count("\n") == 1  # one line
    assert content_digest(db) == before
    fresh = cli(capsys, "show", *T, "f1", "--json").json()["memory"]["version"]
    assert fresh != shown
    edited = cli(capsys, "edit", *T, "f1", "--content", "x", "--expect-version", fresh, "--json").json()
    assert edited["content"] == "x" and edited["version"] not in (shown, fresh)


@pytest.mark.parametrize("token", ["1999-01-01 00:00:00", "abc", "A" * 40, "0" * 39])
def test_a_malformed_version_is_one_clear_line_and_changes_nothing(capsys, db: Path, token: str) -> None:
    before = content_digest(db)
    result = cli(capsys, "edit", *T, "f1", "--content", "x", "--expect-version", token)
    assert result.code == 2 and result.err.count("\n") == 1
    assert "--expect-version" in result.err and "is not a version" in result.err
    assert content_digest(db) == before


def test_rm_keeps_rows_in_the_trash_and_undelete_restores_them(capsys, db: Path) -> None:
    original = sql(db, "SELECT * FROM memories WHERE id IN ('f1', 'p1') ORDER BY id")
    result = cli(capsys, "rm", *T, "f1", "p1")
    assert result.code == 0
    assert "removed f1" in result.out and "removed p1" in result.out
    assert "ora_desktop_trash" in result.out and "ora-desktop undelete --db" in result.out
    assert sql(db, "SELECT count(*) FROM memories WHERE id IN ('f1', 'p1')") == [(0,)]
    trash = cli(capsys, "trash", *T, "--json").json()
    assert {t["memory"]["id"] for t in trash} == {"f1", "p1"}
    assert {t["reason"] for t in trash} == {"deleted from the command line"}
    table = cli(capsys, "trash", *T)
    assert "TRASH_ID" in table.out and "f1" in table.out
    trash_ids = [str(t["trash_id"]) for t in trash]
    assert result.out.strip().endswith(" ".join(sorted(trash_ids, key=int)))
    restored = cli(capsys, "undelete", *T, *trash_ids)
    assert restored.code == 0 and "restored f1" in restored.out
    assert sql(db, "SELECT * FROM memories WHERE id IN ('f1', 'p1') ORDER BY id") == original
    assert cli(capsys, "trash", *T).out.startswith("the trash of")


def test_rm_json_names_the_trash_ids(capsys, db: Path) -> None:
    data = cli(capsys, "rm", *T, "t1", "--json", "--reason", "tidy").json()
    assert [m["id"] for m in data["removed"]] == ["t1"] and len(data["trash_ids"]) == 1
    assert data["restore"].endswith(str(data["trash_ids"][0]))
    assert cli(capsys, "undelete", *T, str(data["trash_ids"][0]), "--json").json()["restored"] == ["t1"]


def test_touch_records_access(capsys, db: Path) -> None:
    sql(db, "UPDATE memories SET health_score = 0.5 WHERE id = 'f1'")
    result = cli(capsys, "touch", *T, "f1", "p1")
    assert result.code == 0 and "touched f1" in result.out
    assert sql(db, "SELECT access_count, round(health_score, 2), last_accessed_at IS NOT NULL FROM memories "
                   "WHERE id = 'f1'") == [(1, 0.6, 1)]
    again = cli(capsys, "touch", *T, "p1", "--json").json()
    assert again[0]["access_count"] == 2 and again[0]["health_score"] == 1.0


def test_link_and_unlink(capsys, db: Path) -> None:
    assert cli(capsys, "link", *T, "f1", "p1").code == 0
    assert sql(db, "SELECT id, related_to FROM memories WHERE id IN ('f1', 'p1') ORDER BY id") == [
        ("f1", '["p1"]'), ("p1", '["f1"]')]
    assert "already linked" in cli(capsys, "link", *T, "f1", "p1").out
    assert cli(capsys, "link", *T, "f1", "c1", "--one-way", "--json").json()["changed"] == ["f1"]
    assert sql(db, "SELECT related_to FROM memories WHERE id = 'c1'") == [(None,)]
    assert cli(capsys, "link", *T, "f1", "p1", "--remove").code == 0
    assert sql(db, "SELECT id, related_to FROM memories WHERE id IN ('f1', 'p1') ORDER BY id") == [
        ("f1", '["c1"]'), ("p1", None)]


def test_supersede_hides_the_old_memory_and_refuses_cycles(capsys, db: Path) -> None:
    result = cli(capsys, "supersede", *T, "f2", "f1")
    assert result.code == 0 and "f1 <- f2" in result.out
    assert sql(db, "SELECT superseded_by FROM memories WHERE id = 'f2'") == [("f1",)]
    listed = {m["id"] for m in cli(capsys, "list", *T, "--json").json()["memories"]}
    assert "f2" not in listed and "f1" in listed
    before = content_digest(db)
    cycle = cli(capsys, "supersede", *T, "f1", "f2")
    assert cycle.code != 0 and "cycle" in cycle.err
    assert content_digest(db) == before
    data = cli(capsys, "supersede", *T, "f1", "p1", "--json").json()
    assert data["chain"] == ["p1", "f1", "f2"]


# ----------------------------------------------------------------------------- schema and demo
def test_check_schema_reports_ok_warnings_and_errors(capsys, db: Path, ora_home: Path) -> None:
    result = cli(capsys, "check-schema", *T)
    assert result.code == 0 and result.out.startswith("OK") and "matches the seed schema" in result.out
    legacy = ora_home / "sites" / "old" / "legacy.site.db"
    legacy.parent.mkdir(parents=True)
    sql(legacy, "CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT NOT NULL, type TEXT, extra TEXT)")
    (ora_home / "sites" / "old" / "junk.site.db").write_bytes(b"")
    warned = cli(capsys, "check-schema", "--db", legacy)
    assert warned.code == 0 and "WARN" in warned.out and "no task_context table" in warned.out
    everything = cli(capsys, "check-schema", "--all", "--json")
    assert everything.code == 1
    by_file = {Path(e["path"]).name: e for e in everything.json()}
    assert by_file["ora.site.db"]["ok"] and not by_file["ora.site.db"]["warnings"]
    assert "empty" in by_file["junk.site.db"]["error"]
    assert any("extra columns" in w for w in by_file["legacy.site.db"]["warnings"])
    one_site = cli(capsys, "check-schema", "--all", "--site", "anwe-sh")
    assert one_site.code == 0 and "legacy" not in one_site.out


def test_demo_writes_a_home_and_refuses_to_overwrite(capsys, tmp_path: Path) -> None:
    home = tmp_path / "demo-home"
    result = cli(capsys, "demo", "--home", home, "--memories", "300")
    assert result.code == 0 and "wrote" in result.out
    sites = cli(capsys, "sites", "--home", home, "--json").json()["agents"]
    assert sum(a["memories"] for a in sites) == 300
    assert any(a["agent"] == "task-123" and a["task_agent"] for a in sites)
    before = content_digest(home / "sites" / "anwe-sh" / "ora.site.db")
    again = cli(capsys, "demo", "--home", home)
    assert again.code != 0 and "already exists" in again.err and len(again.err.strip().splitlines()) == 1
    assert content_digest(home / "sites" / "anwe-sh" / "ora.site.db") == before


def test_demo_uses_ora_home_and_json(capsys, ora_home: Path) -> None:
    data = cli(capsys, "demo", "--memories", "50", "--json").json()
    assert Path(data["home"]) == ora_home and len(data["files"]) >= 5
    assert all(Path(f).exists() for f in data["files"])


def test_json_output_of_every_memory_command_parses(capsys, db: Path, tmp_path: Path) -> None:
    for argv in (("sites",), ("list", *T), ("show", *T, "f1"), ("add", *T, "x"), ("edit", *T, "f1", "--type", "task"),
                 ("touch", *T, "f1"), ("recall", *T, "task"), ("important", *T), ("link", *T, "f1", "p1"),
                 ("supersede", *T, "f2", "f1"), ("check-schema", *T), ("rm", *T, "c1"), ("trash", *T),
                 ("demo", "--home", tmp_path / "h", "--memories", "20")):
        result = cli(capsys, *argv, "--json")
        assert result.code == 0, (argv, result)
        json.loads(result.out)


def test_cli_repair_links(capsys, seed_db) -> None:
    import sqlite3

    from ora_desktop.cli import main

    path = seed_db([("m1", "one", "fact", 5), ("m2", "two", "fact", 5)])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET related_to = 'm1,' WHERE id = 'm2'")
    assert main(["repair-links", "--db", str(path), "m2"]) == 0
    assert "kept m1" in capsys.readouterr().out
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT related_to FROM memories WHERE id = 'm2'").fetchone() == ('["m1"]',)
    assert main(["repair-links", "--db", str(path), "m2"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "nothing to repair" in err


def test_cli_tasks_lists_task_context_newest_first_and_as_json(capsys, db: Path) -> None:
    empty = cli(capsys, "tasks", "--db", db)
    assert empty.code == 0 and "no task_context rows" in empty.out
    sql(db, "INSERT INTO task_context (id, task_description, input_data, output_data, status, created_at) VALUES "
        "('t1', 'Audit the checkout', '{\"pages\": 2}', NULL, 'completed', '2025-01-10 09:00:00'), "
        "('t2', 'Write release notes', 'not json', NULL, 'active', '2025-03-01T09:00:00.000Z')")
    before = content_digest(db)
    shown = cli(capsys, "tasks", "--db", db)
    assert shown.code == 0
    lines = shown.out.splitlines()
    assert lines[0].split() == ["status", "started", "completed", "id", "task"]
    assert "Write release notes" in lines[1] and "Audit the checkout" in lines[2]  # newest first, as time
    data = cli(capsys, "tasks", "--db", db, "--json").json()
    assert [t["id"] for t in data] == ["t2", "t1"]
    assert data[1]["input_data"] == '{"pages": 2}' and data[0]["input_data"] == "not json"  # as stored
    assert data[1]["status"] == "completed" and data[1]["created_at"] == "2025-01-10 09:00:00"
    assert content_digest(db) == before  # read-only
